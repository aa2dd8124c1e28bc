"""A flop's time when none is given is the model's, at every entry point (found by
trying PIUI: the Program window replayed the GCel, but a sweep of the same model and
trace gave an error on every row, and so did `parasol-model replay` and
`estimate.program`, because only the window knew that a 1994 sample times only global
variables). The rule lives in the replay (``flop_for``); each caller passes no flop."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core.cli import main
from parasol_core.replay import (
    DEFAULT_FLOP,
    GLOBAL_FLOP,
    FlopError,
    ReplayOptions,
    flop_for,
    load_trace,
    replay,
)
from parasol_core.sweep import loads_spec, run_sweep
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
STENCIL = SAMPLES / "traces" / "stencil.txt"
GLOBAL_ONLY = SAMPLES / "parsytec-gcel.machine"  # dga, dgm: no local timings
WITH_LOCAL = SAMPLES / "hdr-fat-tree.machine"  # dla, dln


def _makespan(path: Path, flop: str | None) -> float:
    return replay(load(path), load_trace(STENCIL), ReplayOptions(flop=flop)).makespan


@pytest.mark.parametrize(("path", "expected"), [(GLOBAL_ONLY, GLOBAL_FLOP),
                                                (WITH_LOCAL, DEFAULT_FLOP)])  # fmt: skip
def test_no_flop_given_is_the_models_at_every_entry_point(path, expected, tmp_path, capsys):
    assert flop_for(load(path)) == expected
    want = _makespan(path, expected)
    assert _makespan(path, None) == want  # the core

    assert main(["replay", str(path), str(STENCIL)]) == 0  # the command, which says it
    out = capsys.readouterr().out
    assert f"a flop takes {expected} seconds (the model's" in out
    assert float(out.split("makespan: ")[1].split()[0]) == pytest.approx(want, rel=1e-5)
    assert main(["replay", str(path), str(STENCIL), "--flop", "1e-9"]) == 0
    assert "a flop takes" not in capsys.readouterr().out  # given: not repeated

    spec = loads_spec(f"""
model = "{path}"
[[axis]]
scale = "global"
values = [1, 2]
[[answer]]
replay = {{trace = "{STENCIL}"}}
""")
    rows = []
    run_sweep(spec, rows.append, executor="serial")  # a sweep: the base model's
    assert [r.error for r in rows] == ["", ""]
    assert next(r for r in rows if r.values == ("1",)).answers[0] == want


def test_a_sweep_keeps_the_base_models_flop_when_a_variant_adds_local_timings():
    spec = loads_spec(f"""
model = "{GLOBAL_ONLY}"
[[axis]]
set = "pt(1).dla"
values = [1e-9]
[[axis]]
set = "pt(1).dln"
values = [1e-9]
[[answer]]
replay = {{trace = "{STENCIL}"}}
""")
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    # the variant times dla and dln, but every row computes as the base model does
    assert rows[0].error == "" and rows[0].answers[0] == _makespan(GLOBAL_ONLY, GLOBAL_FLOP)


def test_the_traced_machine_must_time_the_default_too():
    local, only_global = load(WITH_LOCAL), load(GLOBAL_ONLY)
    assert flop_for(local, None) == DEFAULT_FLOP
    assert flop_for(local, only_global) == GLOBAL_FLOP  # the one both can evaluate
    assert flop_for(only_global, local) == GLOBAL_FLOP


def test_a_model_that_times_neither_is_told_what_is_missing():
    machine = load(GLOBAL_ONLY)
    for p in machine.processors:
        p.timings.pop("dga", None)
    assert flop_for(machine) == DEFAULT_FLOP
    with pytest.raises(FlopError, match=r"processor 1 has no timing 'dla'"):
        replay(machine, load_trace(STENCIL), ReplayOptions())
