"""Estimating a basic block from instruction counts (SAD level 1)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from parasol_core import loads
from parasol_core.analysis.block_time import BlockEstimate, estimate_block
from parasol_core.cli import main
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

MODEL = """\
begin machine
    id = 1
    name = "blocks"
    processors = 2
    topologies = 1
    begin processor
        id = 3
        name = "T805"
        begin timings
            ila = 5e-07 2e-08
            ils = 2e-07 1e-08
            goto = 1e-07
            sqrtr = 4e-06 3e-07
        end timings
        begin cache
            size = 64
            smallloopspeedup = 1.6
        end cache
    end processor
    begin processor
        id = 1
        name = "no cache"
        begin timings
            ila = 1e-06
        end timings
    end processor
    begin topology
        id = 1
        name = "one"
        routing = "broadcast"
        processors = 1
        links = 0
        begin procid
            p[1] = 3
        end procid
    end topology
end machine
"""


@pytest.fixture
def machine():
    return loads(MODEL)


def test_the_time_is_the_sum_of_count_times_timing(machine):
    est = estimate_block(machine, 3, {"ila": 4, "ils": 2, "goto": 1})
    assert est.mean == pytest.approx(4 * 5e-07 + 2 * 2e-07 + 1e-07, rel=1e-15)
    # Saavedra-Barrera's variance: sum(count^2 sd^2); goto has no sd and adds nothing
    assert est.sd == pytest.approx(math.sqrt((4 * 2e-08) ** 2 + (2 * 1e-08) ** 2), rel=1e-15)


def test_a_cached_block_is_divided_by_the_small_loop_speedup(machine):
    plain = estimate_block(machine, 3, {"ila": 4, "ils": 2, "goto": 1})
    cached = estimate_block(machine, 3, {"ila": 4, "ils": 2, "goto": 1}, cached=True)
    assert cached.mean == pytest.approx(plain.mean / 1.6, rel=1e-15)
    assert cached.sd == pytest.approx(plain.sd / 1.6, rel=1e-15)


def test_processors_are_named_by_id_and_aliases_are_accepted(machine):
    assert estimate_block(machine, 1, {"ila": 3}) == BlockEstimate(3e-06, 0.0)
    # sqrti is read as sqrtr; both spellings add up
    est = estimate_block(machine, 3, {"sqrti": 1, "sqrtr": 1.5})
    assert est.mean == pytest.approx(2.5 * 4e-06)
    assert est.sd == pytest.approx(2.5 * 3e-07)


def test_fractional_and_zero_counts(machine):
    assert estimate_block(machine, 3, {"ila": 0.5}).mean == pytest.approx(2.5e-07)
    # a zero count needs no timing
    assert estimate_block(machine, 1, {"ila": 1, "goto": 0}).mean == pytest.approx(1e-06)
    assert estimate_block(machine, 3, {}) == BlockEstimate(0.0, 0.0)


@pytest.mark.parametrize(
    ("proc", "counts", "cached", "words"),
    [
        (3, {"ila": 1, "foo": 2, "bar": 1}, False, "unknown timing parameters: 'foo', 'bar'"),
        (1, {"ila": 1, "goto": 2}, False, "processor 1 (no cache) has no timing for goto"),
        (9, {"ila": 1}, False, "there is no processor with id 9"),
        (3, {"ila": -1}, False, "finite and non-negative"),
        (3, {"ila": float("nan")}, False, "finite and non-negative"),
        (3, {"ila": "4"}, False, "must be a number"),
        (1, {"ila": 1}, True, "has no small loop speedup"),
    ],
)
def test_bad_input_raises_a_clear_value_error(machine, proc, counts, cached, words):
    with pytest.raises(ValueError) as info:
        estimate_block(machine, proc, counts, cached)
    assert words in str(info.value)


def test_saavedra_barreras_mandelbrot_prediction_on_the_vax():
    # Saavedra-Barrera (1988) figure 6.1: the Mandelbrot program on a VAX-11/785, with the
    # operation counts of the figure. He predicts 12.814481 s with a standard deviation
    # of 0.663125 s; the model's timings are his table values, rounded to whole ns.
    vax = load(SAMPLES / "vax-11-785.machine")
    counts = {
        "rls": 2328726, "rla": 2348726, "rlm": 2308524, "rld": 2, "rlt": 80207,
        "ils": 577131, "ila": 577133, "ilt": 20002, "lla": 597131, "llrc": 597131,
        "llic": 597131, "pcall": 2, "goto": 597131, "loopi1": 201, "loopoh1": 20200,
    }  # fmt: skip
    est = estimate_block(vax, 1, counts)
    assert est.mean == pytest.approx(12.814481, rel=1e-3)
    assert est.sd == pytest.approx(0.663125, rel=1e-3)


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(MODEL)
    return path


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_block_prints_mean_and_sd(capsys, model_file, tmp_path):
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"ila": 4, "ils": 2, "goto": 1}))
    status, out, err = run(capsys, "block", model_file, "--processor", "3", counts)
    assert status == 0 and err == ""
    est = estimate_block(loads(MODEL), 3, {"ila": 4, "ils": 2, "goto": 1})
    assert out.startswith(f"mean: {est.mean!r}\nsd: {est.sd!r}\ninterval: ")  # issue 34
    assert "records no validation" in out.splitlines()[2]
    assert float(out.split()[1]) == est.mean  # shortest form that reads back the same


def test_cli_block_cached_from_stdin(capsys, model_file, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"ila": 4, "ils": 2, "goto": 1}'))
    status, out, _ = run(capsys, "block", model_file, "--processor", "3", "-", "--cached")
    assert status == 0
    mean = float(out.splitlines()[0].removeprefix("mean: "))
    assert mean == pytest.approx((4 * 5e-07 + 2 * 2e-07 + 1e-07) / 1.6, rel=1e-15)
    assert out.splitlines()[1].startswith("sd: ")


def test_cli_block_takes_counts_written_as_chains_are(capsys, model_file, tmp_path,
                                                      monkeypatch):  # fmt: skip
    # OP=N,... as --chain takes them: 'dla=3' said "cannot read: No such file" before
    status, out, err = run(capsys, "block", model_file, "--processor", "3", "ila=4,ils=2, goto=1")
    assert status == 0 and err == ""
    est = estimate_block(loads(MODEL), 3, {"ila": 4, "ils": 2, "goto": 1})
    assert out.startswith(f"mean: {est.mean!r}\nsd: {est.sd!r}\n")
    for text, said in (("ila=abc", "COUNTS ila=abc: ila: 'abc' is not a number"),
                       ("ila=4,", "COUNTS ila=4,: expected OP=N,... (e.g. dla=1000), not ''"),
                       ("ila=1e400", "COUNTS ila=1e400: ila: '1e400' is too large")):  # fmt: skip
        status, out, err = run(capsys, "block", model_file, "--processor", "3", text)
        assert status == 2 and out == "" and err.startswith(said), err
    status, _, err = run(capsys, "block", model_file, "--processor", "3", "ila=-3")
    assert status == 1 and "the count for 'ila' must be finite and non-negative" in err
    # a file of that name is still read as a file
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ila=4").write_text('{"ila": 1}')
    status, out, _ = run(capsys, "block", model_file, "--processor", "3", "ila=4")
    assert status == 0
    assert float(out.split()[1]) == estimate_block(loads(MODEL), 3, {"ila": 1}).mean


def test_cli_block_errors(capsys, model_file, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"ila": 1, "xyz": 2}'))
    status, out, err = run(capsys, "block", model_file, "--processor", "3", "-")
    assert status == 1 and out == ""
    assert err == "error: unknown timing parameter: 'xyz'\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("{not json"))
    status, _, err = run(capsys, "block", model_file, "--processor", "3", "-")
    assert status == 2 and "not JSON" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("[1, 2]"))
    status, _, err = run(capsys, "block", model_file, "--processor", "3", "-")
    assert status == 2 and "expected a JSON object" in err
    status, _, err = run(capsys, "block", model_file, "--processor", "3", tmp_path / "none")
    assert status == 2 and "cannot read" in err
    monkeypatch.setattr("sys.stdin", io.StringIO('{"ila": 1}'))
    status, _, err = run(capsys, "block", model_file, "--processor", "1", "-", "--cached")
    assert status == 1 and err.startswith("error: ") and "small loop speedup" in err


# --- loop-carried chains (issue 34; docs/measure.md, "Chains") --------------------------

LATENCY_LINES = """\
# latency of a dependent operation, processor 3: ila = 2e-06 +- 1e-07, ils = 3e-06 +- 0
# latency of a dependent operation, processor 1: ila = 9e-06 +- 0
"""


def test_a_chain_longer_than_the_sum_bounds_the_block():
    """The estimate is the larger of the throughput sum and the longest chain at the
    measured latencies (the model's header), with that bound's deviation."""
    from parasol_core.analysis.block_time import read_latencies

    machine = loads(LATENCY_LINES + MODEL)
    lat = read_latencies(machine.src.text, 3)
    assert lat == {"ila": (2e-06, 1e-07), "ils": (3e-06, 0.0)}
    counts = {"ila": 4, "ils": 2}  # throughput sum 2.4e-06
    short = estimate_block(machine, 3, counts, chains=[{"ila": 1}], latencies=lat)
    assert short.bound == "throughput" and short.mean == pytest.approx(2.4e-06)
    assert short.chain_bound == pytest.approx(2e-06)
    long = estimate_block(machine, 3, counts, chains=[{"ila": 1}, {"ila": 4}], latencies=lat)
    assert long.bound == "chain" and long.mean == pytest.approx(8e-06)
    assert long.sd == pytest.approx(4e-07) and long.throughput_bound == pytest.approx(2.4e-06)
    assert long.chain_source == "latency"
    cached = estimate_block(machine, 3, counts, cached=True, chains=[{"ila": 4}], latencies=lat)
    assert cached.mean == pytest.approx(8e-06 / 1.6)
    # a model without latencies: the chain at its timings (the report's latencies)
    plain = estimate_block(machine, 3, counts, chains=[{"ila": 4}])
    assert plain.chain_source == "timing" and plain.mean == pytest.approx(2.4e-06)
    with pytest.raises(ValueError, match="in the chain: 'xyz'"):
        estimate_block(machine, 3, counts, chains=[{"xyz": 1}])
    with pytest.raises(ValueError, match="has no timing for sqrtd"):
        estimate_block(machine, 3, counts, chains=[{"sqrtd": 1}], latencies=lat)


WINDOW_LINE = "# chain window, processor 3: 8 iterations ahead of a chain's end (...)\n"


def test_a_chain_begun_afresh_is_divided_by_the_runs_the_core_overlaps():
    """A chain of 64 additions begun 16 times (runs of 4) on a core whose window is 8
    iterations: 1 + 8 / 4 = 3 runs at once, the chain's time and deviation / 3; without
    the window, or run through once, nothing is divided; 'starts' is checked."""
    from parasol_core.analysis.block_time import answer_block, read_chain_windows

    machine = loads(LATENCY_LINES + WINDOW_LINE + MODEL)
    assert read_chain_windows(machine.src.text) == {"3": 8.0}
    lat = {"ila": (2e-06, 1e-07)}
    chain = {"ila": 64, "starts": 16}
    est = estimate_block(machine, 3, {"ila": 1}, chains=[chain], latencies=lat, window=8)
    assert est.chain_at_once == pytest.approx(3.0) and est.bound == "chain"
    assert est.mean == pytest.approx(64 * 2e-06 / 3) and est.sd == pytest.approx(64e-07 / 3)
    once = estimate_block(machine, 3, {"ila": 1}, chains=[{"ila": 64}], latencies=lat,
                          window=8)  # fmt: skip
    assert once.chain_at_once == 1.0 and once.mean == pytest.approx(64 * 2e-06)
    assert estimate_block(machine, 3, {"ila": 1}, chains=[chain],
                          latencies=lat).mean == pytest.approx(64 * 2e-06)  # fmt: skip
    # answer_block reads the window of the processor asked about from the model's text
    answer = answer_block(machine, 3, {"ila": 1}, chains=[chain])
    assert answer.estimate.chain_at_once == pytest.approx(3.0)
    assert answer_block(machine, 1, {"ila": 1}, chains=[chain]).estimate.chain_at_once == 1.0
    for bad in (65, -1, True, "4", float("nan")):
        with pytest.raises(ValueError, match="'starts' in the chain"):
            estimate_block(machine, 3, {"ila": 1}, chains=[{"ila": 64, "starts": bad}])


def test_cli_block_says_how_many_runs_of_a_restarted_chain_overlap(capsys, tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(LATENCY_LINES + WINDOW_LINE + MODEL)
    status, out, err = run(capsys, "block", path, "--processor", "3", "ila=1",
                           "--chain", "ila=64,starts=16")  # fmt: skip
    assert status == 0 and err == ""
    assert float(out.splitlines()[0].removeprefix("mean: ")) == pytest.approx(64 * 2e-06 / 3)
    assert "3 of its runs at once (the model's chain window)" in out
    status, out, err = run(capsys, "block", path, "--processor", "3", "ila=1",
                           "--chain", "ila=4,starts=5")  # fmt: skip
    assert status == 1 and "'starts' in the chain must be from 0 to the chain's iterations" in err


def test_a_models_notes_read_once_answer_each_processors_blocks():
    """answer_block with the model's notes read once (the estimator keeps them for each
    stored model: each is a scan of the whole text) answers as reading them each time."""
    from parasol_core.analysis.block_time import BlockNotes, answer_block, read_latencies

    machine = loads(LATENCY_LINES + MODEL)
    notes = BlockNotes.of(machine)
    for proc in (1, 3):
        assert notes.latencies.get(str(proc), {}) == read_latencies(machine.src.text, proc)
    chains = [{"ila": 4}]
    for proc in (1, 3):
        kept = answer_block(machine, proc, {"ila": 1}, chains=chains, notes=notes)
        assert kept == answer_block(machine, proc, {"ila": 1}, chains=chains)
    assert answer_block(machine, 3, {"ila": 1}, chains=chains).estimate.mean == \
        pytest.approx(8e-06)  # the latency of processor 3, not 1's  # fmt: skip


def test_cli_block_takes_chains_and_says_which_bound_holds(capsys, tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(LATENCY_LINES + MODEL)
    counts = '{"ila": 4, "ils": 2}'
    status, out, err = run(capsys, "block", path, "--processor", "3", counts,
                           "--chain", "ila=1", "--chain", "ila=2,ils=1")  # fmt: skip
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert float(lines[0].removeprefix("mean: ")) == pytest.approx(7e-06)
    assert lines[2].startswith("bound: chain (throughput sum 2.4e-06 s, longest chain 7e-06 s "
                               "at the model's measured latencies")  # fmt: skip
    assert lines[3].startswith("interval: ")
    status, out, _ = run(capsys, "block", path, "--processor", "3", counts, "--chain", "ila=1")
    assert status == 0 and "bound: throughput" in out
    status, out, err = run(capsys, "block", path, "--processor", "3", counts, "--chain", "ila")
    assert status == 2 and "expected OP=N" in err
    status, out, err = run(capsys, "block", path, "--processor", "3", counts,
                           "--chain", "ila=٣")  # fmt: skip
    assert status == 2 and err.startswith("--chain ila=٣: ila:")
    status, out, err = run(capsys, "block", path, "--processor", "3", counts,
                           "--chain", "ila=-1")  # fmt: skip
    assert status == 1 and "non-negative" in err
