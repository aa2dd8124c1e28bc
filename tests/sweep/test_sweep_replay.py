"""Sweeps answered by a program replay (parasol_core.replay): each row is the replay of
the edited model, and the trace is read once a worker, not once a variant."""

from __future__ import annotations

from pathlib import Path

import pytest

import parasol_core.replay as replay_package
from parasol_core.replay import ReplayOptions, load_trace, replay
from parasol_core.session import Session
from parasol_core.sweep import SweepError, loads_spec, run_sweep
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
STENCIL = ROOT / "sample_models" / "traces" / "stencil.txt"

SWEEP = f"""
model = "{GCEL}"

[[axis]]
set = "tl(1)(*).speed"
log = [9.1e-8, 9.1e-6, 3]

[[axis]]
set = "pt(1).dga"
values = [1.2e-6, 2.4e-6]

[[answer]]
replay = {{trace = "{STENCIL}", flop = "pt(T).dga"}}
name = "stencil"
"""


def test_each_row_is_the_replay_of_its_variant_and_the_trace_is_read_once(monkeypatch):
    reads = []
    real = replay_package.load_trace

    def counted(*args, **kw):
        reads.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(replay_package, "load_trace", counted)
    spec = loads_spec(SWEEP)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert len(rows) == 6 and not any(r.error for r in rows)
    assert len(reads) == 1  # one worker: one read for the six variants
    for row in rows:
        speed, dga = (float(x) for x in row.values)
        session = Session(load(str(GCEL)))
        session.set_links(1, [link.id for link in session.machine.topology(1).links],
                          speed=type(session.machine.topology(1).links[0].speed)(speed, None))  # fmt: skip
        session.set("pt(1).dga", repr(dga))
        alone = replay(session.machine, load_trace(STENCIL), ReplayOptions(flop="pt(T).dga"))
        assert row.answers[0] == pytest.approx(alone.makespan, rel=1e-12)
    # slower links and slower flops both lengthen the program
    by = {r.values: r.answers[0] for r in rows}
    assert by[("9.1e-06", "1.2e-06")] > by[("9.1e-08", "1.2e-06")]
    assert by[("9.1e-08", "2.4e-06")] > by[("9.1e-08", "1.2e-06")]


def test_a_replay_the_model_cannot_run_is_each_rows_error():
    spec = loads_spec(SWEEP.replace(', flop = "pt(T).dga"', ""))  # the default flop: dla
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert all("processor 1 has no timing 'dla'" in r.error for r in rows)
    assert all(r.answers == (None,) for r in rows)
    with pytest.raises(SweepError, match="answer 1: replay: trace 'nothing.txt': no such file"):
        loads_spec(SWEEP.replace(str(STENCIL), "nothing.txt"), base=ROOT)
    with pytest.raises(SweepError, match="names a file"):
        loads_spec(SWEEP.replace(f'model = "{GCEL}"', ""), model_text=GCEL.read_text(),
                   files=False)  # fmt: skip
