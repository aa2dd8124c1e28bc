"""Data-sheet fitting (parasol_core.analysis.fit) and `parasol-model fit`, headless."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import OSU_LOGS, SAMPLES

from parasol_core import load
from parasol_core.analysis.fit import (
    FitError,
    Form,
    Measurements,
    TableChoiceError,
    fit,
    forms,
    gamma_q,
    read_csv,
    read_measurement_file,
    read_measurements,
    read_osu,
    read_osu_log,
)
from parasol_core.cli import main
from parasol_core.expr.engine import Engine
from parasol_core.syntax.loader import loads

PROCS = (2, 4, 8, 16, 32, 64, 128)
SIZES = tuple(2**k for k in range(3, 21, 2))
# the thesis's bcast shape: c + s * p + d * bytes * log(p), in seconds
TRUE = {"c": 1e-4, "s": 2e-6, "d": 2.5e-8}
TRUE_FORM = Form("p", "bytes*log(p)")


def truth(p, d):
    return TRUE["c"] + TRUE["s"] * p + TRUE["d"] * d * np.log(p)


def generated(seed: int, relative_noise: float = 0.01, with_errors: bool = True) -> Measurements:
    rng = np.random.default_rng(seed)
    p, d = (a.ravel().astype(float) for a in np.meshgrid(PROCS, SIZES))
    t = truth(p, d)
    sigma = relative_noise * t
    return Measurements(p, d, t + rng.normal(size=t.shape) * sigma, sigma if with_errors else None)


def csv_text(m: Measurements) -> str:
    rows = ["procs,bytes,seconds,error"]
    for p, d, t, e in zip(m.procs, m.bytes, m.seconds, m.error, strict=True):
        rows.append(f"{int(p)},{int(d)},{float(t)!r},{float(e)!r}")
    return "\n".join(rows) + "\n"


def test_every_thesis_combination_is_tried_and_ranked_by_chi2():
    candidates = fit(generated(1))
    assert len(candidates) == 12  # 3 start functions x 4 data functions
    assert {c.form for c in candidates} == set(forms())
    chi2 = [c.chi2 for c in candidates]
    assert chi2 == sorted(chi2)


def test_recovers_form_and_coefficients_within_standard_errors(tmp_path):
    path = tmp_path / "bcast.csv"
    path.write_text(csv_text(generated(7)))
    best = fit(read_csv(path.read_text()))[0]
    assert best.form == TRUE_FORM
    for name, value in TRUE.items():
        assert abs(best.coefficients[name] - value) <= 3 * best.errors[name], name
        assert best.errors[name] < 0.05 * value  # and the errors are not vacuous
    assert 0.001 < best.q <= 1  # the data fit the form as their errors say


@pytest.mark.parametrize("with_errors", [True, False])
def test_standard_errors_are_calibrated(with_errors):
    """Over many noisy data sets, about 68% of coefficients lie within one standard error
    of the truth: the errors are neither too small nor too large."""
    inside = total = 0
    for seed in range(40):
        best = next(c for c in fit(generated(seed, 0.02, with_errors)) if c.form == TRUE_FORM)
        for name, value in TRUE.items():
            inside += abs(best.coefficients[name] - value) <= best.errors[name]
            total += 1
    assert 0.55 <= inside / total <= 0.8


def test_q_is_small_for_a_wrong_form_and_the_band_brackets_the_fit():
    candidates = fit(generated(3))
    worst = candidates[-1]
    assert worst.q < 1e-6 < candidates[0].q
    best = candidates[0]
    lo, hi = best.band([4, 64], [1024, 1 << 20])
    mid = best.predict([4, 64], [1024, 1 << 20])
    assert np.all(lo < mid) and np.all(mid < hi)


def test_expression_evaluates_to_the_fit_in_the_model():
    best = fit(generated(2))[0]
    text = best.expression()
    assert "ar.procs" in text and "ar.bytes" in text and "log(ar.procs)" in text
    head, _, _ = (SAMPLES / "grid4x4.machine").read_text().rpartition("end machine")
    model = loads(f"{head}    begin mpi\n        bcast = {text}\n    end mpi\nend machine\n")
    engine = Engine(model)
    for p, d in ((4, 1000), (64, 1 << 20)):
        got = engine.sweep("mp.bcast", [{"procs": p, "bytes": d}])[0]
        assert math.isclose(got, float(best.predict(p, d)), rel_tol=1e-3)


def test_gamma_q_matches_closed_forms():
    for x in (0.1, 1.0, 3.0, 12.0, 40.0):
        assert math.isclose(gamma_q(1, x), math.exp(-x), rel_tol=1e-12)  # chi2, 2 dof
        assert math.isclose(gamma_q(0.5, x), math.erfc(math.sqrt(x)), rel_tol=1e-10)  # 1 dof


OSU_BCAST = """\
# OSU MPI Broadcast Latency Test v7.1
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       2.10
2                       2.11
4                       2.13
8                       2.15
16                      2.20
64                      2.52
256                     3.78
1024                    8.82
4096                   28.98
16384                 109.62
"""

OSU_FULL = """\
# OSU MPI Latency Test v5.8
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
1                    1.50              1.40              1.60         1000
1024                 3.50              3.30              3.70         1000
65536               80.00             78.00             82.00          100
"""


def test_osu_output_is_read_in_bytes_and_seconds():
    m = read_osu(OSU_BCAST, procs=16)
    assert len(m) == 10
    assert set(m.procs) == {16.0}
    assert m.bytes[-1] == 16384 and math.isclose(m.seconds[-1], 109.62e-6)
    assert m.error is None
    full = read_osu(OSU_FULL, procs=2)
    assert np.allclose(full.error, [0.1e-6, 0.2e-6, 2e-6])  # half the min-max range


def test_osu_fit_gives_latency_plus_per_byte_time():
    m = read_measurements(OSU_BCAST, procs=16)
    candidates = fit(m)
    best = candidates[0]
    assert best.form == Form(None, "bytes")  # one process count: no start term
    assert best.q is None  # no errors given
    # the table is ~2.1 us + 6.6 ns per byte
    assert math.isclose(best.coefficients["c"], 2.1e-6, rel_tol=0.05)
    assert math.isclose(best.coefficients["d"], 6.6e-9, rel_tol=0.05)
    assert best.expression().endswith("* ar.bytes")


@pytest.mark.parametrize(
    "text, message",
    [
        ("procs,bytes,time\n1,2,3\n", "expected the header"),
        ("procs,bytes,seconds\n1,2\n", "line 2: expected 3 values"),
        ("procs,bytes,seconds\n1,x,3\n", "line 2: not a number"),
        ("procs,bytes,seconds\n", "no measurements"),
        ("# Size  Bandwidth (MB/s)\n1 0.00\n", "line 2: a bandwidth of 0.00 MB/s"),
        ("# Size  Latency (us)\n1 2.0\n8 fast\n", "line 3: 'fast' is not a number"),
        ("# Size  Latency (us)\n1 2.0\n8\n", "line 3: no latency in '8'"),
        ("# Size  Latency (us)\n1 nan\n", "line 2: 'nan' is not a number"),
        ("# Size  Latency (us)\n-4 2.0\n", "line 2: a negative message size"),
        ("# Size  Latency (us)\n1 1e999\n", "line 2: '1e999' is not a number"),
        ("# Size  Overall(us)  Overlap(%)\n1 2.0 50\n", "no latency .* column to fit"),
        ("# Size  Latency (us)\n", "has a header and no rows"),
        ("hello\n", "not a procs,bytes,seconds"),
    ],
)
def test_bad_measurements_say_what_is_wrong(text, message):
    with pytest.raises(FitError, match=message):
        read_measurements(text, procs=4)


def test_too_few_points_is_an_error():
    with pytest.raises(FitError, match="too few"):
        fit(Measurements([2, 4], [8, 16], [1e-6, 2e-6], [1e-7, 1e-7]))


# ---------------------------------------------------------------- real OSU logs


def osu_log(name: str):
    return read_osu_log((OSU_LOGS / name).read_text())


def test_a_log_of_seven_benchmarks_is_seven_tables_never_one():
    log = osu_log("job-seven-benchmarks.log")
    assert [t.name for t in log.tables] == ["osu_latency", "osu_bw", "osu_bibw",
                                            "osu_allreduce", "osu_bcast", "osu_alltoall",
                                            "osu_barrier"]  # fmt: skip
    assert [t.kind for t in log.tables] == ["latency"] + ["bandwidth"] * 2 + ["latency"] * 4
    assert [t.rows for t in log.tables] == [23, 23, 23, 19, 21, 21, 1]
    assert log.tables[5].test == "All-to-All Personalized Exchange Latency Test"
    assert log.tables[0].line == 7  # its '# Size' header
    # no table chosen: no measurements, a list instead
    with pytest.raises(TableChoiceError, match="7 benchmark tables") as info:
        read_measurements((OSU_LOGS / "job-seven-benchmarks.log").read_text(), procs=2)
    listing = info.value.log.listing()
    assert "osu_latency" in listing and "osu_barrier" in listing and "1 row " in listing


def test_prose_launcher_and_warning_lines_are_skipped_and_counted():
    log = osu_log("job-seven-benchmarks.log")
    # 3 prose lines, 7 `+ srun` lines, a UCX warning inside the osu_bw table, "Finished"
    assert log.skipped == 12 and log.first_skipped == 1
    assert "12 lines were not part of a table" in log.skipped_note()
    bw = log.choose("osu_bw")
    assert bw.rows == 23  # the rows after the warning still belong to it
    first = osu_log("prose-first-latency.log")  # "Number of tasks = 2" on line 1
    assert len(first.tables) == 1 and first.tables[0].rows == 24  # sizes 0 to 4 MiB
    assert first.skipped == 7
    m = read_measurements((OSU_LOGS / "prose-first-latency.log").read_text(), procs=2)
    assert m.bytes[0] == 0 and len(m) == 24


@pytest.mark.parametrize(
    "name, program",
    [
        ("osu_latency", "osu_latency"),
        ("latency", "osu_latency"),
        ("Latency Test", "osu_latency"),
        ("LATENCY TEST", "osu_latency"),
        ("# OSU MPI Latency Test v7.3", "osu_latency"),
        ("Bandwidth Test", "osu_bw"),
        ("osu_bibw", "osu_bibw"),
        ("bi-directional bandwidth", "osu_bibw"),
        ("allreduce", "osu_allreduce"),
        ("Allreduce Latency Test", "osu_allreduce"),
        ("broadcast", "osu_bcast"),
        ("bcast", "osu_bcast"),
        ("all-to-all", "osu_alltoall"),
        ("4", "osu_allreduce"),
    ],
)
def test_a_table_is_chosen_by_its_benchmark_name_case_insensitively(name, program):
    assert osu_log("job-seven-benchmarks.log").choose(name).program == program


@pytest.mark.parametrize(
    "name, message",
    [
        ("bandwidth", r"'bandwidth' names 2 tables \(2, 3\)"),
        ("osu_reduce", "no table named 'osu_reduce'"),
        ("9", "no table 9: the file holds 7"),
    ],
)
def test_an_unknown_or_ambiguous_table_name_is_an_error_with_the_list(name, message):
    log = osu_log("job-seven-benchmarks.log")
    with pytest.raises(TableChoiceError, match=message) as info:
        log.choose(name)
    assert info.value.log is log  # the caller lists the tables


def test_one_table_needs_no_name_but_a_wrong_name_is_still_wrong():
    log = osu_log("osu_bw.txt")
    assert log.choose().program == "osu_bw"
    with pytest.raises(TableChoiceError, match="no table named 'latency'"):
        log.choose("latency")


def test_the_fitted_latency_is_that_of_the_chosen_table():
    """The issue's log: read as one table, seven benchmarks gave 136 rows and a latency
    well above osu_latency's; each table's own fit lies within 10% of its small-message
    times."""
    log = osu_log("job-seven-benchmarks.log")
    for table in log.tables[:6]:
        if table.kind != "latency":
            continue
        best = fit(table.measurements(2))[0]
        small = np.median(table.values[:6]) * 1e-6  # the first six sizes: latency-bound
        assert best.coefficients["c"] == pytest.approx(small, rel=0.10), table.name
    latency = fit(log.choose("osu_latency").measurements(2))[0]
    assert latency.form == Form(None, "bytes")
    assert latency.coefficients["c"] == pytest.approx(9.6e-6, rel=0.05)
    assert latency.coefficients["d"] == pytest.approx(1 / 2500e6, rel=0.05)  # 2500 MB/s


def test_a_bandwidth_table_becomes_bytes_over_bandwidth_seconds():
    """OSU's MB/s is 10^6 bytes a second: 1 MiB at 2800 MB/s takes 1048576 / 2.8e9 s."""
    log = osu_log("job-seven-benchmarks.log")
    bw = log.choose("osu_bw")
    m = bw.measurements(2)
    assert np.allclose(m.seconds, np.array(bw.sizes) / (np.array(bw.values) * 1e6))
    row = bw.sizes.index(1048576)
    assert m.seconds[row] == pytest.approx(1048576 / (bw.values[row] * 1e6))
    assert m.error is None
    # the streamed cost: a per-message gap (0.5 us) and 1 / the peak rate (2800 MB/s)
    best = fit(m)[0]
    assert best.coefficients["c"] == pytest.approx(0.5e-6, rel=0.1)
    assert best.coefficients["d"] == pytest.approx(1 / 2800e6, rel=0.05)
    assert "(throughput), not the latency" in bw.note()
    assert "both directions" in log.choose("osu_bibw").note()
    assert log.choose("osu_latency").note() == ""
    # osu_bw v7.5 with a Validation column (Pass) reads the same way
    alone = osu_log("osu_bw.txt").choose()
    assert alone.kind == "bandwidth" and alone.rows == 23
    assert fit(alone.measurements(2))[0].coefficients["d"] == pytest.approx(1 / 12000e6,
                                                                            rel=0.05)  # fmt: skip


def test_older_and_other_table_layouts():
    log = osu_log("mixed-versions.log")
    assert [(t.name, t.kind) for t in log.tables] == [
        ("osu_bibw", "bandwidth"),  # v3.3: "Bi-Bandwidth (MB/s)"
        ("osu_mbw_mr", "bandwidth"),  # "MB/s  Messages/s"
        ("osu_allreduce", "latency"),  # -f: Min, Max, Iterations
        ("osu_iallreduce", "other"),  # Overall(us) Compute(us) Pure Comm.(us) Overlap(%)
    ]
    full = log.choose("allreduce").measurements(8)
    assert full.error is not None and set(full.procs) == {8.0}
    assert np.allclose(full.error, 0.05 * full.seconds, rtol=0.05)  # half the min-max range
    with pytest.raises(FitError, match="osu_iallreduce .* no latency .* column to fit"):
        log.choose("iallreduce").measurements(8)
    barrier = osu_log("job-seven-benchmarks.log").choose("barrier")  # no Size column
    assert barrier.measurements(2).bytes.tolist() == [0.0]


def test_measurement_files_are_capped_and_must_be_text(tmp_path, monkeypatch):
    import parasol_core.analysis.fit as fit_module

    path = tmp_path / "osu.log"
    path.write_bytes(b"\xef\xbb\xbf# Size  Latency (us)\n1 2.0\n")
    assert read_measurement_file(path).startswith("# Size")  # the BOM is dropped
    path.write_bytes(b"# Size  Latency (us)\n1 2.0\n\x89PNG\n")
    with pytest.raises(FitError, match="line 3: not UTF-8 text"):
        read_measurement_file(path)
    monkeypatch.setattr(fit_module, "MAX_MEASUREMENT_BYTES", 16)
    path.write_text("# Size  Latency (us)\n1 2.0\n")
    with pytest.raises(FitError, match="larger than"):
        read_measurement_file(path)


# ---------------------------------------------------------------- the CLI


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def measured(tmp_path):
    path = tmp_path / "bcast.csv"
    path.write_text(csv_text(generated(11)))
    return path


def test_cli_prints_ranked_candidates_and_the_chosen_expression(capsys, measured):
    model = SAMPLES / "grid4x4.machine"
    before = model.read_bytes()
    status, out, err = run(capsys, "fit", model, "mpi.bcast", measured)
    assert status == 0, err
    lines = out.splitlines()
    assert len([ln for ln in lines if ln.strip()[:2].strip().isdigit()]) == 12
    assert "c + s*p + d*bytes*log(p)" in lines[1]
    assert lines[-1].startswith("mp.bcast = ")
    assert model.read_bytes() == before  # without -o / -i nothing is written


def test_cli_json_and_output_file_keep_the_rest_of_the_model(capsys, measured, tmp_path):
    model = SAMPLES / "grid4x4.machine"
    out_path = tmp_path / "fitted.machine"
    status, out, err = run(capsys, "fit", model, "mpi.bcast", measured, "-o", out_path, "--json")
    assert status == 0, err
    data = json.loads(out)
    assert set(data["candidates"][0]) == {"form", "coefficients", "errors", "chi2", "q"}
    written = out_path.read_text()
    original = model.read_text()
    # the new section sits before `end machine`; every original line is still there; the
    # fit's line says what it was fitted to
    fitted = next(line for line in written.splitlines() if "bcast = " in line)
    assert fitted.startswith(f"        bcast = {data['expression']}  # fitted to 63 times")
    assert written.replace(f"    begin mpi\n{fitted}\n    end mpi\n", "") == original
    assert load(out_path).mpi.entries["bcast"].text == data["expression"]


def test_cli_in_place_into_an_existing_section_and_osu_input(capsys, tmp_path):
    model = tmp_path / "gcel.machine"
    model.write_text((SAMPLES / "parsytec-gcel.machine").read_text())
    osu = tmp_path / "osu_latency.txt"
    osu.write_text(OSU_FULL)
    status, out, err = run(capsys, "fit", model, "mpi.send", osu, "--procs", "2", "-i")
    assert status == 0, err
    machine = load(model)
    assert machine.mpi.entries["send"].text == out.splitlines()[-1].split(" = ", 1)[1]
    assert "receive" in machine.mpi.entries


def test_cli_errors(capsys, measured, tmp_path):
    model = SAMPLES / "grid4x4.machine"
    status, _, err = run(capsys, "fit", model, "mpi.scan", measured)
    assert status == 1 and "scan" in err
    status, _, err = run(capsys, "fit", model, "bcast", measured)
    assert status == 2 and "SECTION.PRIMITIVE" in err
    osu = tmp_path / "osu.txt"
    osu.write_text(OSU_BCAST)
    status, _, err = run(capsys, "fit", model, "mpi.bcast", osu)
    assert status == 1 and "number of processes" in err


# ---------------------------------------------------------------- the CLI on OSU logs


def test_cli_several_tables_and_no_table_is_a_usage_error_listing_them(capsys):
    model = SAMPLES / "grid4x4.machine"
    log = OSU_LOGS / "job-seven-benchmarks.log"
    status, out, err = run(capsys, "fit", model, "mpi.send", log, "--procs", "2")
    assert status == 2 and out == ""
    assert "7 benchmark tables in this file: choose one" in err
    assert "osu_allreduce  Allreduce Latency Test" in err
    assert "--table osu_latency" in err  # how to choose
    status, _, err = run(capsys, "fit", model, "mpi.send", log, "--table", "osu_reduce")
    assert status == 2 and "no table named 'osu_reduce'" in err and "osu_bcast" in err


def test_cli_fits_the_named_table_and_notes_what_it_skipped(capsys):
    model = SAMPLES / "grid4x4.machine"
    log = OSU_LOGS / "job-seven-benchmarks.log"
    status, out, err = run(capsys, "fit", model, "mpi.send", log, "--procs", "2",
                           "--table", "Latency Test", "--json")  # fmt: skip
    assert status == 0, err
    data = json.loads(out)
    assert data["table"] == {"name": "osu_latency", "test": "Latency Test",
                             "kind": "latency", "rows": 23, "line": 7}  # fmt: skip
    assert data["candidates"][0]["coefficients"]["c"] == pytest.approx(9.6e-6, rel=0.05)
    assert "note: " in err and "12 lines were not part of a table and skipped" in err
    status, out, err = run(capsys, "fit", model, "mpi.bcast", log, "--procs", "2",
                           "--table", "bcast")  # fmt: skip
    assert status == 0, err
    assert out.splitlines()[-1].startswith("mp.bcast = 6.0")  # the 6 us broadcast


def test_cli_fits_a_bandwidth_table_with_a_note_on_what_it_means(capsys):
    model = SAMPLES / "grid4x4.machine"
    status, out, err = run(capsys, "fit", model, "mpi.send", OSU_LOGS / "osu_bw.txt",
                           "--procs", "2", "--json")  # fmt: skip
    assert status == 0, err
    assert json.loads(out)["table"]["kind"] == "bandwidth"
    assert "bytes / bandwidth" in err and "not the latency of one message" in err
    assert "skipped" not in err  # nothing was


def test_cli_bad_osu_input_says_where_and_why(capsys, tmp_path, measured):
    model = SAMPLES / "grid4x4.machine"
    bad = tmp_path / "osu.log"
    bad.write_text("Number of tasks = 2\n# OSU MPI Latency Test v7.3\n"
                   "# Size          Latency (us)\n1  1.5\n2  1.6e\n")  # fmt: skip
    status, _, err = run(capsys, "fit", model, "mpi.send", bad, "--procs", "2")
    assert status == 1 and "line 5: '1.6e' is not a number" in err
    status, _, err = run(capsys, "fit", model, "mpi.bcast", measured, "--table", "bcast")
    assert status == 2 and "a procs,bytes,seconds CSV has one" in err
    binary = tmp_path / "osu.bin"
    binary.write_bytes(b"\x00\xff\xfe garbage")
    status, _, err = run(capsys, "fit", model, "mpi.send", binary, "--procs", "2")
    assert status == 1 and "not UTF-8 text" in err and "Traceback" not in err
    status, _, err = run(capsys, "fit", model, "mpi.send", OSU_LOGS / "mixed-versions.log",
                         "--procs", "2", "--table", "iallreduce")  # fmt: skip
    assert status == 1 and "no latency (us) or bandwidth (MB/s) column" in err


def test_tables_of_different_benchmarks_are_not_fitted_together():
    from parasol_core.analysis.fit import mixed_benchmarks

    log = osu_log("job-seven-benchmarks.log")
    latency, bw = log.choose("osu_latency"), log.choose("osu_bw")
    other = osu_log("prose-first-latency.log").choose()
    assert mixed_benchmarks([("a.log", latency), ("b.log", other)]) is None  # same benchmark
    message = mixed_benchmarks([("a.log", latency), ("a.log", bw)])
    assert message.startswith("Not fitted") and "osu_latency (a.log), osu_bw (a.log)" in message
    assert mixed_benchmarks([("a", log.choose("bcast")), ("b", log.choose("allreduce"))])


@pytest.mark.parametrize(
    "header, row",
    [
        (
            "# Size       Avg Latency(us)   P50 Tail Lat(us)   P90 Tail Lat(us)",
            "8  2.50  2.40  3.10",
        ),
        (
            "# Size          Latency (us)   P50 Tail Lat(us)   P99 Tail Lat(us)",
            "8  2.50  2.40  3.90",
        ),
        ("# Size          Latency (us)        Validation", "8  2.50  Pass"),
    ],
)
def test_omb7_extra_columns_are_ignored(header, row):
    table = read_osu_log(f"# OSU MPI Latency Test v7.4\n{header}\n{row}\n").choose()
    assert table.kind == "latency" and table.values == [2.5]


def test_a_table_without_message_sizes_fits_start_forms_or_a_constant():
    # osu_barrier's table has no Size column: every size is 0 and a data term would be a
    # column of zeros, so the forms are c + s*startfn(p), or c alone at one process count
    assert forms(single_procs=True, sizeless=True) == [Form(None, None)]
    one = fit(osu_log("job-seven-benchmarks.log").choose("barrier").measurements(2))
    assert [str(c.form) for c in one] == ["c"]
    assert one[0].expression() == "1.03e-05"
    p = np.array([2.0, 3.0, 4.0, 6.0, 8.0])
    t = 1e-6 + 2e-6 * np.log(p)
    best = fit(Measurements(p, np.zeros(5), t, 0.01 * t))[0]
    assert best.form == Form("log(p)", None) and best.q is not None and best.q > 0.99
    assert best.expression().endswith("* log(ar.procs)") and "ar.bytes" not in best.expression()
    assert math.isclose(float(best.predict(5, 0)), 1e-6 + 2e-6 * math.log(5), rel_tol=1e-9)
