"""`measure --network` (parasol_core.measure.mpi_network): the pieces without MPI (the
ping-pong fit, the topology rule, the OSU files and their fit into the mpi section), then
the whole measurement under `mpiexec -n 2` with the MPI of the `mpi` extra (which
`make test` installs): a quick run, and cancelling by SIGINT and by SIGTERM."""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from parasol_core import load, loads
from parasol_core.analysis.fit import Form, read_osu_log
from parasol_core.analysis.validate import errors, validate
from parasol_core.cli import main
from parasol_core.expr.engine import Engine
from parasol_core.measure.mpi_bench import COLLECTIVES, OsuRow, PingPong, Plan, plan_for
from parasol_core.measure.mpi_network import (
    Figures,
    fit_collective,
    measured_pairs,
    model_text,
    network_topology,
    osu_collective_log,
    osu_directory,
    osu_latency_table,
    pair_figures,
    process_counts,
)
from parasol_core.topology.index import route

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- without MPI

SIZES = [4**k for k in range(12)]


def test_ping_pong_figures_are_the_intercept_and_slope_of_half_the_round_trip():
    t = [2e-6 + 1e-10 * s for s in SIZES]
    f = pair_figures(SIZES, t)
    assert math.isclose(f.latency, 2e-6, rel_tol=1e-9)
    assert math.isclose(f.per_byte, 1e-10, rel_tol=1e-9)
    assert f.worst < 1e-9
    # weighted 1/t^2: a 20% bump at 1 byte moves the latency, not the per-byte time much
    bumped = pair_figures(SIZES, [t[0] * 1.2, *t[1:]])
    assert bumped.latency > 2e-6 and math.isclose(bumped.per_byte, 1e-10, rel_tol=0.01)


def test_pairs_and_process_counts():
    assert measured_pairs(["a"] * 4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    hosts = [h for h in "abcd" for _ in range(4)]  # 16 ranks, 120 pairs: a sample
    pairs = measured_pairs(hosts)
    assert len(pairs) <= 28
    for host in "abcd":  # each host's own pair
        first = hosts.index(host)
        assert (first, first + 1) in pairs
    for h1, h2 in [("a", "b"), ("a", "d"), ("c", "d")]:  # each host pair
        assert (hosts.index(h1), hosts.index(h2)) in pairs
    assert process_counts(2, quick=False) == [2]
    assert process_counts(4, quick=False) == [2, 3, 4]
    assert process_counts(4, quick=True) == [2, 4]
    assert process_counts(12, quick=False) == [2, 4, 8, 12]


def topology_model(topology):
    text = "\n".join(
        ["begin machine", "id = 1", 'name = "t"', "processors = 1", "topologies = 1",
         "begin processor", "id = 1", "end processor"]
    )  # fmt: skip
    from parasol_core.syntax.writer import canonical_lines

    return loads(text + "\n" + "\n".join(canonical_lines(topology)) + "\nend machine\n")


def test_pairs_that_measure_alike_make_one_bus():
    hosts = ["n1", "n1", "n1"]
    figures = {
        (0, 1): Figures(1.0e-6, 1.0e-10),
        (0, 2): Figures(1.1e-6, 1.1e-10),
        (1, 2): Figures(0.9e-6, 0.95e-10),
    }
    topo, notes = network_topology(hosts, figures)
    assert topo.routing == "broadcast" and topo.processor_count == 3
    assert [lk.connect for lk in topo.links] == [[1, 2, 3]]
    assert topo.links[0].latency.mean == 1.0e-6  # the median
    assert topo.links[0].speed.mean == 1.0e-10
    assert "alike" in notes[0]
    assert not errors(validate(topology_model(topo)))


def test_hosts_that_differ_get_a_bus_each_and_a_link_per_host_pair():
    hosts = ["a", "a", "b", "b", "c"]
    near, far = Figures(1e-6, 1e-10), Figures(20e-6, 1e-9)
    figures = {(i, j): (near if hosts[i] == hosts[j] else far)
               for i in range(5) for j in range(i + 1, 5)}  # fmt: skip
    topo, notes = network_topology(hosts, figures)
    connects = [lk.connect for lk in topo.links]
    # host a's bus, host b's bus (c has one rank: no bus), then a-b, a-c, b-c
    assert connects == [[1, 2], [3, 4], [1, 2, 3, 4], [1, 2, 5], [3, 4, 5]]
    assert [lk.latency.mean for lk in topo.links] == [1e-6, 1e-6, 20e-6, 20e-6, 20e-6]
    assert [lk.speed.mean for lk in topo.links] == [1e-10, 1e-10, 1e-9, 1e-9, 1e-9]
    assert len(notes) == 6 and "one bus per host" in notes[0]
    machine = topology_model(topo)
    assert not errors(validate(machine))
    hw = machine.hardware()
    assert route(hw, 1, 2).links == (1,)  # inside host a: its bus
    assert route(hw, 3, 4).links == (2,)
    assert route(hw, 2, 3).links == (3,)  # a to b: the a-b link
    assert route(hw, 5, 1).links == (4,)
    assert route(hw, 4, 5).links == (5,)


def rows(c, s, d, sizes, procs, spread=0.05):
    """Rows of a collective whose time is c + s*p + d*bytes*log(p) (seconds)."""
    out = []
    for size in sizes:
        t = c + s * procs + d * (size or 0) * math.log(procs)
        out.append(OsuRow(size, t, t * (1 - spread), t * (1 + spread), 100))
    return out


def tables_at(procs):
    return {name: rows(2e-6, 1e-6 if name != "barrier" else 2e-6, 1e-10 if name != "barrier" else 0,
                       [None] if name == "barrier" else [4**k for k in range(1, 11)], procs)
            for name in COLLECTIVES}  # fmt: skip


def test_osu_logs_read_back_one_table_per_collective():
    log = read_osu_log(osu_collective_log(tables_at(2), 2))
    assert [t.program for t in log.tables] == [f"osu_{c}" for c in COLLECTIVES]
    assert log.skipped == 0
    bcast = log.choose("bcast").measurements(2)
    assert len(bcast) == 10 and bcast.error is not None
    assert np.allclose(bcast.seconds, [2e-6 + 2e-6 + 1e-10 * 4**k * math.log(2)
                                       for k in range(1, 11)], rtol=1e-3)  # fmt: skip
    barrier = log.choose("barrier").measurements(2)
    assert barrier.bytes.tolist() == [0.0]
    pp = PingPong(0, 1, [1, 4], [1.5e-6, 1.6e-6], [1e-8, 1e-8], [10, 10])
    latency = read_osu_log(osu_latency_table(pp, ["h", "h"])).choose()
    assert latency.program == "osu_latency" and latency.values == [1.5, 1.6]


def test_one_process_count_fits_c_plus_d_bytes_with_q():
    fitted = fit_collective("bcast", {2: osu_collective_log(tables_at(2), 2)})
    c = fitted.candidate
    assert c.form == Form(None, "bytes")  # the start term cannot be told from c
    assert c.q is not None and c.q > 0.99  # the line fits within the 5% spread
    assert math.isclose(c.coefficients["c"], 4e-6, rel_tol=1e-3)
    assert math.isclose(c.coefficients["d"], 1e-10 * math.log(2), rel_tol=1e-3)
    assert fitted.comment().startswith("Q 1;") and "10 times at 2 processes" in fitted.comment()
    barrier = fit_collective("barrier", {2: osu_collective_log(tables_at(2), 2)})
    assert barrier.candidate.form == Form(None, None)
    assert barrier.comment().startswith("exactly determined")


def test_rows_without_spread_leave_the_median_spread_and_q():
    tables = tables_at(2)
    row = tables["alltoall"][0]
    tables["alltoall"][0] = OsuRow(row.size, row.avg, row.avg, row.avg, 100)  # Min = Max
    fitted = fit_collective("alltoall", {2: osu_collective_log(tables, 2)})
    assert fitted.candidate.q is not None
    flat = {n: [OsuRow(r.size, r.avg, r.avg, r.avg, 100) for r in rs] for n, rs in tables.items()}
    fitted = fit_collective("alltoall", {2: osu_collective_log(flat, 2)})
    assert fitted.candidate.q is None and fitted.comment().startswith("Q not defined")


def test_several_process_counts_fit_the_start_term():
    logs = {p: osu_collective_log(tables_at(p), p) for p in (2, 3, 4, 6, 8)}
    bcast = fit_collective("bcast", logs).candidate
    assert bcast.form == Form("p", "bytes*log(p)")
    assert math.isclose(bcast.coefficients["s"], 1e-6, rel_tol=1e-3)
    barrier = fit_collective("barrier", logs).candidate
    assert barrier.form == Form("p", None) and "ar.bytes" not in barrier.expression()


def test_the_model_validates_and_carries_q_in_comments():
    hosts = ["h", "h"]
    pp = PingPong(0, 1, SIZES, [2e-6 + 1e-10 * s for s in SIZES], [0.0] * 12, [10] * 12)
    topo, notes = network_topology(hosts, {(0, 1): pair_figures(pp.sizes, pp.seconds)})
    logs = {2: osu_collective_log(tables_at(2), 2)}
    fits = [fit_collective(name, logs) for name in COLLECTIVES]
    text = model_text(hosts, [pp], topo, notes, fits, ["measured", ""])
    machine = loads(text)
    assert not errors(validate(machine))
    assert list(machine.mpi.entries) == list(COLLECTIVES)
    for name in COLLECTIVES:
        assert re.search(rf"^\s+{name} = .*  # (Q [\d.e-]+|exactly determined)", text, re.M)
    bcast = Engine(machine).sweep("mp.bcast", [{"bytes": 1024, "procs": 2}])[0]
    assert math.isclose(bcast, 4e-6 + 1e-10 * 1024 * math.log(2), rel_tol=1e-3)


def test_plans():
    full, quick = plan_for(False), plan_for(True)
    assert full.pingpong_sizes[0] == 1 and full.pingpong_sizes[-1] == 4 * 1024 * 1024
    assert quick.pingpong_sizes[-1] == 4 * 1024 * 1024  # quick still reaches 4 MiB
    assert full.sizes_of("reduce")[0] == 4 and full.sizes_of("barrier") == (None,)
    assert isinstance(quick, Plan) and quick.iterations(1.0) == 5
    assert osu_directory("out/net.machine") == Path("out/net.osu")
    assert osu_directory(None) is None


# --------------------------------------------------------------------------- under mpiexec


def find_mpiexec():
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


MPIEXEC = find_mpiexec()
needs_mpi = pytest.mark.skipif(
    MPIEXEC is None,
    reason="no mpiexec: install the mpi extra (pip install -e '.[mpi]'; `make test` does)",
)


def command(*args):
    """`parasol-model measure --network` under mpiexec (its progress lines come from the
    command: parasol_core.cli.progress)."""
    return [MPIEXEC, "-n", "2", sys.executable, "-m", "parasol_core.cli", "measure",
            "--network", *args]  # fmt: skip


def environment():
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(ROOT))
    return env


@needs_mpi
def test_a_quick_run_of_two_ranks_writes_a_valid_model(tmp_path, capsys):
    out = tmp_path / "net.machine"
    # (how long it takes is a figure of benchmarks/bench_measure_network.py)
    done = subprocess.run(command("--quick", "-o", str(out)), capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=environment())  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"\[\s*\d+%\] ping-pong ranks 0-1 .*(left|estimating)", done.stderr)
    machine = load(out)
    assert not errors(validate(machine))
    hw = machine.hardware()
    assert hw.processor_count == 2 and len(hw.links) == 1 and hw.links[0].connect == [1, 2]
    assert hw.links[0].latency.mean > 0 and hw.links[0].speed.mean > 0
    assert list(machine.mpi.entries) == list(COLLECTIVES)
    text = out.read_text()
    assert text.count("  # Q ") + text.count("  # exactly determined") == len(COLLECTIVES)
    osu = tmp_path / "net.osu"
    assert sorted(p.name for p in osu.iterdir()) == ["osu-collectives-np2.txt",
                                                     "osu_latency-ranks0-1.txt"]  # fmt: skip
    log = read_osu_log((osu / "osu-collectives-np2.txt").read_text())
    assert len(log.tables) == len(COLLECTIVES)
    # and `parasol-model fit` reads them (its own weights: each row's spread, see the module)
    assert main(["fit", str(out), "mpi.gather", str(osu / "osu-collectives-np2.txt"),
                 "--procs", "2", "--table", "gather"]) == 0  # fmt: skip
    assert "mp.gather =" in capsys.readouterr().out


def rank_pids(marker: str) -> list[int]:
    """The ranks' processes (python -m parasol_core.cli measure --network ... marker)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in args]
        if words and "python" in Path(words[0]).name and marker in words and "-m" in words:
            pids.append(int(entry.name))
    return pids


def start_full_run(tmp_path):
    out = tmp_path / "net.machine"
    proc = subprocess.Popen(command("-o", str(out)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=environment(), start_new_session=True)  # fmt: skip
    first = proc.stderr.readline()  # the plan line: MPI is up on every rank
    assert "measure --network" in first, first
    line = proc.stderr.readline()
    assert "ping-pong" in line, line
    time.sleep(0.3)  # in the middle of the ping-pong
    return proc, out


def finish(proc, limit=120):
    """The measurement's stderr once it has stopped; ``limit`` only stops a test whose
    measurement does not (it then fails). Whether it stopped because of the signal is
    what its exit status and last words say, not how long it took."""
    try:
        _, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the measurement did not stop")
    return err


def nothing_written(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir()) == []


@needs_mpi
def test_sigint_to_the_process_group_stops_every_rank_and_writes_nothing(tmp_path):
    proc, out = start_full_run(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal
    err = finish(proc)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert "cancelled (signal 2): nothing written" in err
    assert "Traceback" not in err
    assert nothing_written(tmp_path) and not out.exists()


@needs_mpi
def test_sigterm_to_one_rank_stops_them_all(tmp_path):
    proc, out = start_full_run(tmp_path)
    pids = rank_pids(str(out))
    assert len(pids) == 2, pids
    os.kill(max(pids), signal.SIGTERM)  # one rank only, not mpiexec
    err = finish(proc)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert nothing_written(tmp_path)
    assert rank_pids(str(out)) == []


@needs_mpi
def test_one_process_is_refused_with_the_command_to_run(tmp_path):
    done = subprocess.run([sys.executable, "-m", "parasol_core.measure.mpi_network", "--quick"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env=environment())  # fmt: skip
    assert done.returncode == 2
    assert "mpiexec -n 2" in done.stderr and "Traceback" not in done.stderr


@needs_mpi
def test_an_unwritable_output_is_refused_before_measuring(tmp_path):
    bad = tmp_path / "no" / "such" / "net.machine"
    done = subprocess.run(command("--quick", "-o", str(bad)), capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=environment())  # fmt: skip
    assert done.returncode == 2
    assert "no such directory" in done.stderr and "ping-pong" not in done.stderr
