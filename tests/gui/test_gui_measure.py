"""File > Measure this machine…, as a user drives it: the menu opens the dialog, Measure
runs the generated C benchmarks off the GUI thread with progress and the cache curve,
the result opens as a new unsaved model, Validate plots table 4.2, and Cancel (or
closing the dialog) stops a run with nothing opened. A few parameters only: the real
measurement is the benchmark's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parasol_core.measure import MeasureOptions

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="measuring needs a C compiler")  # fmt: skip

FEW = dict(quick=True, parameters=["iga", "dgm", "modi", "ild"], cache_sizes=(10, 100, 400),
           memory_sizes=(4096, 65536, 1 << 22))  # fmt: skip


def _dialog(main_window):
    action = next(a for a in main_window.menuBar().actions()[0].menu().actions()
                  if a.text().startswith("&Measure this machine"))  # fmt: skip
    action.trigger()
    dialog = main_window.measure_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.options = lambda: MeasureOptions(**FEW)
    return dialog


def test_measure_opens_the_result_as_a_new_model_and_validate_plots_it(main_window, qtbot):
    dialog = _dialog(main_window)
    progress = []
    dialog._runner.progressed.connect(progress.append)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.running and not dialog.start_button.isEnabled()
    assert dialog.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)
    doc = main_window.document
    assert doc.path is None and doc.is_modified  # a new model, only in memory: unsaved
    timings = doc.machine.processors[0].timings
    # each parameter asked for is measured, or left out with the reason the statistics
    # gave (a busy machine can drown a cheap operation such as iga in noise: refused)
    left_out = dict(dialog.result.left_out)
    assert set(FEW["parameters"]) <= set(timings) | set(left_out), (set(timings), left_out)
    assert all(left_out[n] for n in FEW["parameters"] if n not in timings)
    assert timings and all(t.mean > 0 for t in timings.values())
    assert doc.machine.processors[0].name == dialog.result.cpu
    assert progress and any(p.cache_point for p in progress)
    assert len(dialog.cache_curve.getData()[0]) == 3  # the curve drawn as it grew
    assert any(p.memory_point for p in progress)  # and the memory curve (issue 34)
    assert len(dialog.memory_curve.getData()[0]) == 3
    sized = [lv for lv in dialog.result.memory_levels if lv.size is not None]
    assert len(dialog.level_lines) == len(sized)  # a dashed line per cache level, named
    assert all(line.label.format.startswith(lv.name + " ")
               for line, lv in zip(dialog.level_lines, sized))  # fmt: skip
    assert "Measured" in dialog.status.text() and dialog.validate_button.isEnabled()
    dialog.validation_sizes = (2000, 4000)
    dialog.validation_programs = ("branchy",)  # one held-out program of the suite
    qtbot.mouseClick(dialog.validate_button,
                     Qt.MouseButton.LeftButton)  # fmt: skip
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)
    assert dialog.plots.currentWidget() is dialog.valid_plot
    assert {r.experiment for r in dialog.rows} == {"GEB", "primes", "branchy"}
    assert "never saw" in dialog.report.toPlainText()
    assert "problem size" in dialog.report.toPlainText()
    assert f"Validated {doc.title()}" in dialog.status.text()


def test_validate_predicts_with_the_model_on_screen(main_window, qtbot, monkeypatch):
    """Issue 33, item 7: after a cancel, or with another model open, Validate validated
    the earlier measured model without a word; it predicts with the model on screen,
    and says which, or is disabled with the reason while a run is under way."""
    import parasol_core.measure.validation as validation

    seen = []

    def fake_validate(model, options, progress, cancel, sizes):
        seen.append(model)
        return []

    monkeypatch.setattr(validation, "validate_host", fake_validate)
    dialog = _dialog(main_window)
    assert dialog.result is None and dialog.validate_button.isEnabled()  # the GCel is shown
    assert "parsytec-gcel" in dialog.validate_button.toolTip()
    dialog.validate()
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)
    assert seen == [main_window.document.session.text()]
    grid = Path(__file__).resolve().parents[2] / "sample_models" / "grid4x4.machine"
    assert main_window.open_file(grid)
    assert "grid4x4" in dialog.validate_button.toolTip()
    main_window.document.session.set("pt(1).iga", "9e-7")  # edited: the edit counts
    dialog.validate()
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)
    assert seen[-1] == main_window.document.session.text() and seen[-1] != grid.read_text()
    assert "Validated grid4x4" in dialog.status.text()


def test_cancel_stops_a_measurement_and_opens_nothing(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.options = lambda: MeasureOptions(quick=True)  # long enough to be cancelled
    before = main_window.document.machine
    dialog.measure()
    qtbot.waitUntil(lambda: "Measuring" in dialog.status.text(), timeout=60_000)
    qtbot.mouseClick(dialog.cancel_button,
                     Qt.MouseButton.LeftButton)  # fmt: skip
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert "cancelled" in dialog.status.text() and dialog.result is None
    assert main_window.document.machine is before


def test_closing_the_dialog_mid_run_asks_and_keep_running_keeps_both(main_window, qtbot):
    """Ctrl+W or the title bar stopped a measurement without a word; now they ask, saying
    what runs: Keep running keeps the dialog and its run, Stop cancels and closes."""
    dialog = _dialog(main_window)
    dialog.options = lambda: MeasureOptions(quick=True)
    dialog.measure()
    qtbot.waitUntil(lambda: "Measuring" in dialog.status.text(), timeout=60_000)
    asked = []
    dialog.ask_stop_run = lambda what: asked.append(what) or False
    qtbot.keyClick(dialog, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert dialog.isVisible() and dialog.running and not dialog._cancel.is_set()
    assert len(asked) == 1 and asked[0].startswith("Measuring this machine is under way")
    dialog.ask_stop_run = lambda what: asked.append(what) or True
    dialog.close()
    assert len(asked) == 2 and not dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    QApplication.processEvents()
    assert dialog.result is None


def test_closing_the_dialog_with_nothing_running_does_not_ask(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.ask_stop_run = lambda what: pytest.fail(f"asked: {what}")
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()


def test_escape_cancels_a_run_before_it_closes_the_dialog(main_window, qtbot):
    """Esc hid the dialog and the measurement ran on unseen; now the first Esc cancels
    it (the dialog stays, saying so), the next closes the dialog."""
    dialog = _dialog(main_window)
    dialog.options = lambda: MeasureOptions(quick=True)
    before = main_window.document.machine
    dialog.measure()
    qtbot.waitUntil(lambda: "Measuring" in dialog.status.text(), timeout=60_000)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert "cancelled" in dialog.status.text() and dialog.result is None
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible() and main_window.document.machine is before
