"""A drag in the Program window runs no stale replay to its end: an edit made while the
prediction of the one before is under way stops that replay part-way (the core's
``Cancelled``), and the answer shown is the last edit's, the one before kept on screen
until it is ready.

The replays run in Python (``PARASOL_PURE_PYTHON=1``): one of this trace takes a good
part of a second there, hundreds of times what the GUI thread takes to make the next
edit, so the second edit comes while the first's replay runs."""

from __future__ import annotations

import copy

from program_traces import write_stencil

from parasol_core import native
from parasol_core.frontend import program as core
from parasol_core.replay import replay


def test_an_edit_while_a_prediction_runs_stops_it_and_the_last_edit_is_shown(
    main_window, qtbot, tmp_path, monkeypatch
):
    monkeypatch.setenv(native.PURE_ENV, "1")
    path = write_stencil(tmp_path, ranks=64, iterations=12)
    window = main_window.panels["program"]
    window.ask_trace_path = lambda: str(path)
    with qtbot.waitSignal(window.predictionShown, timeout=60_000):
        main_window.open_trace_action.trigger()
    before = window.after.makespan
    shown: list[tuple[float | None, float]] = []
    window.predictionShown.connect(lambda b, a: shown.append((b, a)))
    live = window.live
    started, stopped = live.started, live.stopped
    session = main_window.document.session

    session.scale_group("double", 0.5)  # the first edit: its replay starts
    assert live.started == started + 1 and live.busy
    session.scale_group("double", 0.5)  # the second, while the first's replay runs
    assert window.prediction.text() == f"Predicted time: {core.seconds_text(before)}"
    with qtbot.waitSignal(live.busyChanged, timeout=60_000,
                          check_params_cb=lambda busy: not busy):  # fmt: skip
        pass

    assert live.stopped == stopped + 1  # the first edit's replay raised Cancelled part-way
    assert live.started == started + 2  # and the second's ran
    machine = copy.deepcopy(main_window.document.machine)
    program = window.program
    after = replay(machine, program.trace, program.options_for(machine)).makespan
    assert after < before  # double precision 4x faster: the stencil computes in it
    assert shown == [(before, after)]  # only the last edit's answer was shown
    assert window.prediction.text() == core.before_after_text(before, after)
