"""The keys of File > Sweep…, File > Measure this machine…, the Estimate panel and the
History panel, pressed as a user presses them: Ctrl+Return runs, Esc cancels a run
under way (then closes), Ctrl+W closes a window, Alt+letter clicks a button, and each
button's tooltip names its key as the main window's menus show theirs."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parasol_core.measure import MeasureOptions

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def _focused(qtbot, dialog):
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)
    return dialog


def test_sweep_ctrl_return_runs_esc_cancels_ctrl_w_closes(main_window, qtbot):
    main_window.show_sweep()
    dialog = _focused(qtbot, main_window.sweep_dialog)
    dialog.add_axis("pt(1).iga", "linear 1e-7 1e-5 5000")
    dialog.pattern.setCurrentText("broadcast")
    assert "Ctrl+Return" in dialog.run_button.toolTip()
    assert "Esc" in dialog.cancel_button.toolTip()
    dialog.expressions.setFocus()
    qtbot.keyClick(dialog.expressions, Qt.Key.Key_Return, CTRL)  # from a field of the form
    assert dialog.running
    qtbot.waitUntil(lambda: len(dialog.rows) >= 1, timeout=60_000)
    qtbot.keyClick(dialog.expressions, Qt.Key.Key_Escape)
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.status.text().startswith("Cancelled:")
    qtbot.keyClick(dialog.expressions, Qt.Key.Key_W, CTRL)
    assert not dialog.isVisible()


def test_the_buttons_have_mnemonics(main_window):
    """Alt+letter: each button of the two dialogs has its own letter, none taken twice."""
    from PySide6.QtGui import QKeySequence

    main_window.show_sweep()
    main_window.show_measure()
    for dialog, buttons in (
        (main_window.sweep_dialog, ["add_button", "remove_button", "trace_button",
                                    "run_button", "cancel_button"]),
        (main_window.measure_dialog, ["start_button", "validate_button", "cancel_button",
                                      "close_button"]),
    ):  # fmt: skip
        keys = [QKeySequence.mnemonic(getattr(dialog, b).text()) for b in buttons]
        assert all(not k.isEmpty() for k in keys), [getattr(dialog, b).text() for b in buttons]
        assert len(set(keys)) == len(keys)


def test_measure_ctrl_return_measures_esc_cancels_ctrl_w_closes(main_window, qtbot):
    main_window.show_measure()
    dialog = _focused(qtbot, main_window.measure_dialog)
    dialog.options = lambda: MeasureOptions(quick=True)
    assert "Ctrl+Return" in dialog.start_button.toolTip()
    assert "Ctrl+W" in dialog.close_button.toolTip() and "Esc" in dialog.cancel_button.toolTip()
    qtbot.keyClick(dialog, Qt.Key.Key_Return, CTRL)
    assert dialog.running
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    QApplication.processEvents()
    assert dialog.result is None
    qtbot.keyClick(dialog, Qt.Key.Key_W, CTRL)
    assert not dialog.isVisible()


def test_estimate_panel_ctrl_return_in_the_counts_estimates_the_block(main_window, qtbot,
                                                                      monkeypatch):  # fmt: skip
    panel = main_window.panels["estimate"]
    main_window.show_panel("estimate")
    asked = []
    monkeypatch.setattr(panel, "ask_block", lambda: asked.append("block"))
    panel.block_button.clicked.disconnect()
    panel.block_button.clicked.connect(lambda: panel.ask_block())
    assert "Ctrl+Return" in panel.block_button.toolTip()
    assert "Return" in panel.route_button.toolTip()
    panel.counts.setFocus()
    qtbot.keyClicks(panel.counts, '{"ila": 4}')
    qtbot.keyClick(panel.counts, Qt.Key.Key_Return, CTRL)
    assert asked == ["block"]
    assert panel.counts.toPlainText() == '{"ila": 4}'  # no line end typed by the key


def test_history_return_on_a_step_undoes_to_it_and_its_tooltip_says_ctrl_h(main_window,
                                                                             qtbot):  # fmt: skip
    session = main_window.document.session
    session.set("pt(1).iga", "1e-6")
    main_window.show_panel("history")
    panel = main_window.panels["history"]
    assert "Ctrl+H" in panel.list.toolTip()
    panel.list.setFocus()
    panel.list.setCurrentRow(0)
    qtbot.keyClick(panel.list, Qt.Key.Key_Return)
    assert session.history.index == 0 and main_window.document.machine.processors[0].timings[
        "iga"].mean != 1e-6  # fmt: skip


def test_the_keys_are_in_help_keyboard_shortcuts():
    from piui.main_window import SHORTCUTS

    keys = dict(SHORTCUTS)
    assert "Ctrl+Return" in keys and "Sweep" in keys["Ctrl+Return"]


def test_ctrl_shift_i_asks_for_a_platform_to_import(main_window, qtbot):
    asked = []
    main_window.ask_platform_path = lambda saving: asked.append(saving) or ""
    main_window.activateWindow()
    qtbot.waitUntil(main_window.isActiveWindow)
    qtbot.keyClick(main_window, Qt.Key.Key_I, CTRL | Qt.KeyboardModifier.ShiftModifier)
    assert asked == [False]  # File > Import SimGrid platform…, asking which
    from piui.main_window import SHORTCUTS

    assert "Ctrl+Shift+I" in dict(SHORTCUTS)
