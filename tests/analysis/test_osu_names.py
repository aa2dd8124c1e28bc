"""OSU tables are named as OSU names its programs (issue 35, item 8).

Every title OSU 7.x prints (its one-sided, point-to-point and collective suites, as in
the sources of OMB 7.4: ``#define BENCHMARK "OSU MPI_Put%s Latency Test"``, the ``%s``
an accelerator: "", "-CUDA", "-ROCM", ...) maps to the program that prints it; two
different benchmarks never share a name, are never fitted together, and an ambiguous
``--table`` lists the tables it names with their lines.
"""

from __future__ import annotations

import pytest

from parasol_core.analysis.fit import (
    OsuLog,
    TableChoiceError,
    mixed_benchmarks,
    read_osu_log,
)
from parasol_core.cli import main

# (program, its title after "# OSU ", before " v7.4"), from the OMB 7.4 sources
ONE_SIDED = [
    ("osu_acc_latency", "MPI_Accumulate%s latency Test"),
    ("osu_cas_latency", "MPI_Compare_and_swap%s latency Test"),
    ("osu_fop_latency", "MPI_Fetch_and_op%s latency Test"),
    ("osu_get_acc_latency", "MPI_Get_accumulate%s latency Test"),
    ("osu_get_bw", "MPI_Get%s Bandwidth Test"),
    ("osu_get_latency", "MPI_Get%s latency Test"),
    ("osu_put_bibw", "MPI_Put%s Bi-directional Bandwidth Test"),
    ("osu_put_bw", "MPI_Put%s Bandwidth Test"),
    ("osu_put_latency", "MPI_Put%s Latency Test"),
]
PT2PT = [
    ("osu_bibw", "MPI%s Bi-Directional Bandwidth Test"),
    ("osu_bw", "MPI%s Bandwidth Test"),
    ("osu_latency", "MPI%s Latency Test"),
    ("osu_latency_mp", "MPI%s Multi-process Latency Test"),
    ("osu_latency_mt", "MPI%s Multi-threaded Latency Test"),
    ("osu_mbw_mr", "MPI Multiple Bandwidth / Message Rate Test"),
    ("osu_multi_lat", "MPI Multi Latency Test"),
    ("osu_bibw_persistent", "MPI%s Bi-Directional Bandwidth Persistent Test"),
    ("osu_bw_persistent", "MPI%s Bandwidth Persistent Test"),
    ("osu_latency_persistent", "MPI%s Latency Persistent Test"),
]
# osu_bw_fan_in and osu_bw_fan_out (7.4's congestion suite) print osu_bw's title, and
# osu_neighbor_alltoallw prints osu_alltoallw's: no reader can tell them apart.
COLLECTIVE = [
    ("osu_allgather", "MPI%s Allgather Latency Test"),
    ("osu_allgatherv", "MPI%s Allgatherv Latency Test"),
    ("osu_allreduce", "MPI%s Allreduce Latency Test"),
    ("osu_alltoall", "MPI%s All-to-All Personalized Exchange Latency Test"),
    ("osu_alltoallv", "MPI%s All-to-Allv Personalized Exchange Latency Test"),
    ("osu_alltoallw", "MPI%s All-to-Allw Personalized Exchange Latency Test"),
    ("osu_barrier", "MPI%s Barrier Latency Test"),
    ("osu_bcast", "MPI%s Broadcast Latency Test"),
    ("osu_gather", "MPI%s Gather Latency Test"),
    ("osu_gatherv", "MPI%s Gatherv Latency Test"),
    ("osu_reduce", "MPI%s Reduce Latency Test"),
    ("osu_reduce_scatter", "MPI%s Reduce_scatter Latency Test"),
    ("osu_reduce_scatter_block", "MPI%s Reduce_scatter_block Latency Test"),
    ("osu_scatter", "MPI%s Scatter Latency Test"),
    ("osu_scatterv", "MPI%s Scatterv Latency Test"),
    ("osu_ineighbor_allgather", "MPI%s Non-blocking Neighborhood Allgather Latency Test"),
    ("osu_ineighbor_allgatherv", "MPI%s Non-blocking Neighborhood Allgatherv Latency Test"),
    ("osu_ineighbor_alltoall", "MPI%s Non-blocking Neighborhood Alltoall Latency Test"),
    ("osu_ineighbor_alltoallv", "MPI%s Non-blocking Neighborhood Alltoallv Latency Test"),
    ("osu_ineighbor_alltoallw", "MPI%s Non-blocking Neighborhood Alltoallw Latency Test"),
    ("osu_neighbor_allgather", "MPI%s Neighborhood Allgather Latency Test"),
    ("osu_neighbor_allgatherv", "MPI%s Neighborhood Allgatherv Latency Test"),
    ("osu_neighbor_alltoall", "MPI%s Neighborhood Alltoall Latency Test"),
    ("osu_neighbor_alltoallv", "MPI%s Neighborhood All-to-Allv Latency Test"),
    ("osu_iallgather", "MPI%s Non-blocking Allgather Latency Test"),
    ("osu_iallgatherv", "MPI%s Non-blocking Allgatherv Latency Test"),
    ("osu_iallreduce", "MPI%s Non-blocking Allreduce Latency Test"),
    ("osu_ialltoall", "MPI%s Non-blocking All-to-All Latency Test"),
    ("osu_ialltoallv", "MPI%s Non-blocking All-to-Allv Personalized Exchange Latency Test"),
    ("osu_ialltoallw", "MPI%s Non-blocking All-to-Allw Personalized Exchange Latency Test"),
    ("osu_ibarrier", "MPI%s Non-blocking Barrier Latency Test"),
    ("osu_ibcast", "MPI%s Non-Blocking Broadcast Latency Test"),
    ("osu_igather", "MPI%s Non-blocking Gather Latency Test"),
    ("osu_igatherv", "MPI%s Non-blocking Gatherv Latency Test"),
    ("osu_ireduce", "MPI%s Non-blocking Reduce Latency Test"),
    ("osu_ireduce_scatter", "MPI%s Non-blocking Reduce_scatter Latency Test"),
    ("osu_ireduce_scatter_block", "MPI%s Non-blocking Reduce_scatter_block Latency Test"),
    ("osu_iscatter", "MPI%s Non-blocking Scatter Latency Test"),
    ("osu_iscatterv", "MPI%s Non-blocking Scatterv Latency Test"),
    ("osu_allgather_persistent", "MPI%s Allgather Persistent Latency Test"),
    ("osu_allgatherv_persistent", "MPI%s Allgatherv Persistent Latency Test"),
    ("osu_allreduce_persistent", "MPI%s Allreduce Persistent Latency Test"),
    ("osu_alltoall_persistent", "MPI%s All-to-All Personalized Exchange Persistent Latency Test"),
    (
        "osu_alltoallv_persistent",
        "MPI%s All-to-Allv Personalized Exchange Persistent Latency Test",
    ),  # fmt: skip
    (
        "osu_alltoallw_persistent",
        "MPI%s All-to-Allw Personalized Exchange Persistent Latency Test",
    ),  # fmt: skip
    ("osu_barrier_persistent", "MPI%s Barrier Persistent Latency Test"),
    ("osu_bcast_persistent", "MPI%s Broadcast Persistent Latency Test"),
    ("osu_gather_persistent", "MPI%s Gather Persistent Latency Test"),
    ("osu_gatherv_persistent", "MPI%s Gatherv Persistent Latency Test"),
    ("osu_reduce_persistent", "MPI%s Reduce Persistent Latency Test"),
    ("osu_reduce_scatter_persistent", "MPI%s Reduce_scatter Persistent Latency Test"),
    ("osu_scatter_persistent", "MPI%s Scatter Persistent Latency Test"),
    ("osu_scatterv_persistent", "MPI%s Scatterv Persistent Latency Test"),
]
EVERY = ONE_SIDED + PT2PT + COLLECTIVE
# what OMB 7.x prints for %s with -d (and the managed-memory variants)
ACCELERATORS = {"": "", "-CUDA": "CUDA", "-ROCM": "ROCM", "-OPENACC": "OPENACC",
                "-CXL": "CXL", "-CUDA MANAGED": "CUDA MANAGED", "-MANAGED": "MANAGED"}  # fmt: skip


def plain(title: str) -> str:
    """The title on the host (no accelerator)."""
    return title.replace("%s", "")


def table(title: str, version: str = "v7.4", latency: bool = True, base: float = 1.0,
          datatype: str | None = "MPI_CHAR") -> list[str]:  # fmt: skip
    """One benchmark's output as OSU prints it: title, datatype, header, four rows."""
    lines = [f"# OSU {title} {version}".rstrip()]
    if datatype:
        lines.append(f"# Datatype: {datatype}.")
    lines.append("# Size          Latency (us)" if latency else "# Size      Bandwidth (MB/s)")
    lines += [f"{size:<10d}{base + size / 1000:>18.2f}" for size in (1, 8, 64, 512)]
    return lines


def launcher_log(titles: list[str]) -> str:
    """A job's log running each benchmark after a launcher line."""
    out = ["Number of tasks = 2"]
    for i, title in enumerate(titles):
        out += [f"+ srun -n 2 ./bench{i}", *table(title, latency="Bandwidth" not in title)]
    return "\n".join(out) + "\n"


def log_of(titles: list[str]) -> OsuLog:
    return read_osu_log(launcher_log(titles))


@pytest.mark.parametrize("program, title", EVERY, ids=[p for p, _ in EVERY])
@pytest.mark.parametrize("accel", list(ACCELERATORS), ids=lambda a: a or "host")
def test_every_osu7_title_names_its_program(program, title, accel):
    if "%s" not in title and accel:
        pytest.skip("this benchmark runs on the host only")
    shown = title.replace("%s", accel)
    log = read_osu_log("\n".join(table(shown)))
    [t] = log.tables
    assert t.program == program
    assert t.name == program
    assert t.accelerator == ACCELERATORS[accel]
    # the whole title line, as a user may paste it, finds it
    assert log.find(f"# OSU {shown} v7.4") is t


def test_the_names_of_every_title_are_all_different():
    programs = [read_osu_log("\n".join(table(plain(t)))).tables[0].program for _, t in EVERY]
    assert len(set(programs)) == len(EVERY)


def test_a_launcher_log_of_every_benchmark_finds_each_by_its_program_and_its_title():
    titles = [plain(t) for _, t in EVERY]
    log = log_of(titles)
    assert [t.name for t in log.tables] == [p for p, _ in EVERY]
    for (program, title), t in zip(EVERY, log.tables, strict=True):
        assert log.find(program) is t
        assert log.find(f"# OSU {plain(title)} v7.4") is t  # the whole title line
        assert log.find(t.test) is t  # the test name as the listing shows it


def test_one_sided_tests_keep_their_call():
    log = log_of(["MPI Latency Test", "MPI_Put Latency Test", "MPI_Get latency Test"])
    plain, put, get = log.tables
    assert (plain.test, put.test, get.test) == (
        "Latency Test", "MPI_Put Latency Test", "MPI_Get latency Test")  # fmt: skip
    # osu_latency is the two-sided one only: no longer ambiguous on such a log
    assert log.find("osu_latency") is plain and log.find("latency") is plain
    assert log.find("osu_put_latency") is put and log.find("put_latency") is put
    assert log.find("OSU MPI_Get latency Test v7.4") is get


def test_two_different_benchmarks_are_never_fitted_together():
    titles = [plain(t) for _, t in EVERY if "Bandwidth" not in t]
    log = log_of(titles)
    for a in log.tables:
        for b in log.tables:
            merged = mixed_benchmarks([("a.log", a), ("b.log", b)])
            assert (merged is None) == (a is b), (a.name, b.name)


def test_the_same_benchmark_on_another_accelerator_is_another_benchmark():
    host, cuda = log_of(["MPI Latency Test", "MPI-CUDA Latency Test"]).tables
    assert host.name == cuda.name == "osu_latency"
    message = mixed_benchmarks([("h.log", host), ("c.log", cuda)])
    assert message and "osu_latency (h.log), osu_latency (CUDA) (c.log)" in message


def test_datatypes_under_one_title_are_tables_of_that_benchmark():
    """OSU 7 runs each datatype of -T under one title: a header per datatype."""
    text = "\n".join(["# OSU MPI Allreduce Latency Test v7.4", "# Datatype: MPI_INT.",
                      "# Size       Avg Latency(us)", "4  1.5", "8  1.6",
                      "# Datatype: MPI_FLOAT.", "# Size       Avg Latency(us)", "4  1.7",
                      "8  1.8"])  # fmt: skip
    ints, floats = read_osu_log(text).tables
    assert ints.name == floats.name == "osu_allreduce"
    assert (ints.datatype, floats.datatype) == ("MPI_INT", "MPI_FLOAT")
    message = mixed_benchmarks([("a", ints), ("a", floats)])
    assert message and "different datatypes" in message and "MPI_FLOAT" in message
    # a table that states no datatype (OSU 5) goes with either
    [old] = read_osu_log("\n".join(table("MPI Allreduce Latency Test", "v5.8",
                                         datatype=None))).tables  # fmt: skip
    assert mixed_benchmarks([("a", ints), ("b", old)]) is None


def test_an_ambiguous_table_lists_the_tables_it_names_with_their_lines():
    log = log_of(["MPI Latency Test", "MPI_Put Latency Test", "MPI Latency Test"])
    with pytest.raises(TableChoiceError, match=r"'osu_latency' names 2 tables \(1, 3\)") as e:
        log.find("osu_latency")
    assert [t.number for t in e.value.candidates] == [1, 3]
    listing = log.listing(e.value.candidates)
    assert f"line {log.tables[0].line}" in listing and f"line {log.tables[2].line}" in listing
    assert "osu_put_latency" not in listing


def test_cli_ambiguous_table_lists_the_candidates_with_their_lines(tmp_path, capsys):
    from conftest import SAMPLES

    log = tmp_path / "job.log"
    log.write_text(launcher_log(["MPI Latency Test", "MPI_Put Latency Test",
                                 "MPI Latency Test"]))  # fmt: skip
    model = SAMPLES / "cray-t3d.machine"
    args = ["fit", str(model), "mpi.send", str(log), "--procs", "2", "--table"]
    assert main([*args, "osu_latency"]) == 2
    err = capsys.readouterr().err
    assert "'osu_latency' names 2 tables (1, 3)" in err and "the tables it names:" in err
    listed = [line for line in err.splitlines() if "  line " in line]
    assert len(listed) == 2 and all("osu_latency" in line for line in listed), err
    assert "e.g. --table osu_put_latency" in err  # the example names one table
    # the one-sided table is found by its own name
    assert main([*args, "osu_put_latency"]) == 0
    assert "fitting osu_put_latency (MPI_Put Latency Test)" in capsys.readouterr().err
