"""Progress that tells the truth (issue 33, item 7): "about 11 s" was announced and 15-32 s
taken, the bar sat at 0 % through 10 s of compiling, and the time left rose from 20 s to
29 s. The time left is the estimated work left at the pace measured so far; compiling is
a step that moves the bar; the dialog announces the pace of the last run."""

from __future__ import annotations

import threading

import pytest

from parasol_core.measure import host
from parasol_core.measure.host import Progress, _compile_all, _Tracker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("slowness", [0.5, 1.0, 2.0, 3.0])
def test_the_time_left_is_the_work_left_at_the_measured_pace(slowness) -> None:
    """A machine ``slowness`` times as slow as the estimate, every stage alike: once a
    stage has finished, the time left is the truth (within rounding), the fraction never
    goes back, and the time left never rises."""
    weights = [3.0, 1.0, 1.0, 2.0, 0.5, 4.0, 1.0]
    clock, seen = Clock(), []
    tracker = _Tracker(sum(weights), seen.append, clock)
    total_time = slowness * sum(weights)
    for i, w in enumerate(weights):
        tracker.stage(f"stage {i}", w)
        for step in range(4):
            clock.now += slowness * w / 4
            if step < 3:
                tracker.report()
                if i > 0:  # the pace is known: the time left is the truth
                    assert seen[-1].seconds_left == pytest.approx(total_time - clock.now, rel=1e-6)
    tracker.finish()
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    lefts = [p.seconds_left for p in seen if p.parameter != "stage 0"]
    assert all(b <= a + 1e-9 for a, b in zip(lefts, lefts[1:])), lefts


def test_a_stage_running_over_says_the_machine_is_slower_and_the_bar_still_moves() -> None:
    clock, seen = Clock(), []
    tracker = _Tracker(10.0, seen.append, clock)
    tracker.stage("compiling the benchmarks", 2.0)
    for _ in range(10):  # five times the estimate
        clock.now += 1.0
        tracker.report()
    # the pace counts the stage as if it ended now: 10 s for 2 estimated, 8 s of work left
    assert seen[-1].seconds_left == pytest.approx(8.0 * 10.0 / 2.0)
    assert seen[1].fraction > seen[0].fraction  # it moved while compiling


def test_compiling_ticks_while_it_runs(monkeypatch, tmp_path) -> None:
    """The compile step reports while the compilers run, not only when they end."""
    ticks = []
    enough = threading.Event()

    def slow_compile(cc, src, out, flags, cancel) -> None:
        assert enough.wait(30), "no tick arrived while compiling"

    def tick() -> None:
        ticks.append(1)
        if len(ticks) >= 2:
            enough.set()

    monkeypatch.setattr(host.toolchain, "compile_c", slow_compile)
    jobs = [(tmp_path / f"{g}.c", tmp_path / g, []) for g in ("a", "b", "c")]
    _compile_all(["cc"], jobs, 2, None, tick)
    assert len(ticks) >= 2


def test_the_dialog_announces_the_pace_of_the_last_run(qtbot, tmp_path, monkeypatch) -> None:
    from piui.widgets.measure_dialog import MeasureDialog

    monkeypatch.setenv("PIUI_SETTINGS", str(tmp_path / "settings.ini"))
    dialog = MeasureDialog()
    qtbot.addWidget(dialog)
    assert "idle machine" in dialog.estimate.text()
    estimated = host.estimate_seconds(dialog.options())

    class Result:
        seconds = 3 * estimated
        cpu, text, timings, left_out, cache_curve = "cpu", "", {}, [], []

    dialog._remember_pace(Result())
    assert "pace of the last run" in dialog.estimate.text()
    assert f"{round(3 * estimated)}" in dialog.estimate.text() or "min" in dialog.estimate.text()
    progress = Progress(0.1, "compiling the benchmarks", 12.0)
    dialog._progressed(progress)
    assert dialog.status.text().startswith("Compiling the benchmarks — about 12 s left")
    dialog._progressed(Progress(0.5, "dln", 5.0))
    assert dialog.status.text().startswith("Measuring dln")
