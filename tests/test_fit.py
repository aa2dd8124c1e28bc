"""Data-sheet fitting (parasol_core.fit) and `parasol-model fit`, headless."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import SAMPLES

from parasol_core import load
from parasol_core.cli import main
from parasol_core.engine import Engine
from parasol_core.fit import (
    FitError,
    Form,
    Measurements,
    fit,
    forms,
    gamma_q,
    read_csv,
    read_measurements,
    read_osu,
)
from parasol_core.syntax.parser import loads

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
        ("# Size  Bandwidth (MB/s)\n1 2.0\n", "not a latency table"),
        ("hello\n", "not a procs,bytes,seconds"),
    ],
)
def test_bad_measurements_say_what_is_wrong(text, message):
    with pytest.raises(FitError, match=message):
        read_measurements(text, procs=4)


def test_too_few_points_is_an_error():
    with pytest.raises(FitError, match="too few"):
        fit(Measurements([2, 4], [8, 16], [1e-6, 2e-6], [1e-7, 1e-7]))


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
    # the new section sits before `end machine`; every original line is still there
    assert written.replace(f"    begin mpi\n        bcast = {data['expression']}\n    end mpi\n",
                           "") == original  # fmt: skip
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
