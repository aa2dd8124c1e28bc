"""Hands and keys (issue 22): the wheel goes to a control only when it has the focus;
the View keys reach a floating dock; a scaler's arrow step shows."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QScrollArea


def wheel(widget, notches: int = -1) -> None:
    """One turn of the mouse wheel over the middle of ``widget``, as the window system
    delivers it (negative: towards the user, which scrolls down and moves a combo box to
    its next item)."""
    window = widget.window()
    QTest.wheelEvent(window.windowHandle(), QPointF(widget.mapTo(window, widget.rect().center())),
                     QPoint(0, 120 * notches))  # fmt: skip
    QApplication.processEvents()


def scroll_area_of(widget) -> QScrollArea:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    assert parent is not None, "the panel does not scroll"
    return parent


def _guarded(qtbot) -> None:
    """The rule is installed once the main window has painted."""
    from piui.widgets.wheel_guard import WheelGuard

    app = QApplication.instance()
    qtbot.waitUntil(lambda: app.findChild(WheelGuard, "piui-wheel-guard") is not None)


def test_the_wheel_scrolls_the_topology_editor_past_its_kind_box(main_window, qtbot):
    _guarded(qtbot)
    main_window.resize(1280, 600)  # short enough for the editor's panel to scroll
    main_window.show_panel("topology-editor")
    editor = main_window.panels["topology-editor"]
    kind = editor.kind
    qtbot.waitUntil(kind.isVisible)
    assert kind.focusPolicy() == Qt.FocusPolicy.StrongFocus  # the wheel does not focus it
    scroll = scroll_area_of(kind)
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0
    scroll.ensureWidgetVisible(kind)
    QApplication.processEvents()
    main_window.overview.setFocus()
    before, at = kind.currentText(), bar.value()
    notches = 1 if at == bar.maximum() else -1  # a way the panel can scroll
    wheel(kind, notches)
    assert kind.currentText() == before  # "grid" stays grid
    assert bar.value() != at  # the panel scrolled instead
    assert not kind.hasFocus()  # and the wheel did not focus the box
    scroll.ensureWidgetVisible(kind)
    QApplication.processEvents()
    kind.setFocus()
    wheel(kind, -1 if kind.currentIndex() == 0 else 1)
    assert kind.currentText() != before  # a focused combo box takes the wheel


def test_the_wheel_rule_covers_spin_boxes_and_sliders_built_later(qtbot):
    """Controls built after the rule was installed (a lazily built panel, a dialog) follow
    it too; a scroll bar keeps the wheel."""
    from PySide6.QtWidgets import QSlider, QSpinBox, QVBoxLayout, QWidget

    from piui.widgets import wheel_guard

    wheel_guard.install()
    scroll = QScrollArea()
    qtbot.addWidget(scroll)
    body = QWidget()
    column = QVBoxLayout(body)
    spin, slider = QSpinBox(), QSlider(Qt.Orientation.Horizontal)
    spin.setRange(0, 100)
    slider.setRange(0, 100)
    column.addWidget(spin)
    column.addWidget(slider)
    column.addSpacing(2000)
    scroll.setWidget(body)
    scroll.resize(300, 200)
    scroll.show()
    qtbot.waitExposed(scroll)
    bar = scroll.verticalScrollBar()
    for control in (spin, slider):
        control.setValue(50)
        scroll.setFocus()
        bar.setValue(0)
        wheel(control, -1)
        assert control.value() == 50 and bar.value() > 0
        bar.setValue(0)
        control.setFocus()
        wheel(control, -1)
        assert control.value() < 50


def view_action(main_window, key: str):
    """The View-menu entry of a dock."""
    title = main_window.docks[key].windowTitle()
    (action,) = [a for a in main_window.view_menu.actions() if a.text() == title]
    return action


def press_view_key(main_window, key: str) -> None:
    """Press the View-menu key of a dock (Ctrl+1 … Ctrl+9) where the keyboard is."""
    sequence = view_action(main_window, key).shortcut()
    assert not sequence.isEmpty()
    combo = sequence[0]
    target = QApplication.focusWidget() or main_window
    QTest.keyClick(target, combo.key(), combo.keyboardModifiers())
    QApplication.processEvents()


def test_a_view_key_reaches_a_floating_dock_and_hides_it_when_pressed_in_it(main_window, qtbot):
    qtbot.waitExposed(main_window)
    dock = main_window.docks["cache"]
    main_window.show_panel("cache")
    dock.setFloating(True)
    qtbot.waitUntil(dock.isVisible)
    main_window.activateWindow()
    main_window.overview.id_field.setFocus()
    qtbot.waitUntil(lambda: main_window.overview.id_field.hasFocus())
    assert not main_window.panel_has_focus("cache")

    press_view_key(main_window, "cache")  # visible, not focused: reach it, do not hide it
    qtbot.waitUntil(lambda: main_window.panel_has_focus("cache"))
    assert dock.isVisible() and dock.isFloating() and dock.isActiveWindow()
    assert dock.isAncestorOf(QApplication.focusWidget())
    assert view_action(main_window, "cache").isChecked()

    press_view_key(main_window, "cache")  # focused: hide it
    qtbot.waitUntil(lambda: not dock.isVisible())
    assert not view_action(main_window, "cache").isChecked()

    main_window.activateWindow()
    main_window.overview.id_field.setFocus()
    press_view_key(main_window, "cache")  # hidden: show it and put the keyboard in it
    qtbot.waitUntil(lambda: main_window.panel_has_focus("cache"))
    assert dock.isVisible() and view_action(main_window, "cache").isChecked()


def test_a_view_key_brings_a_dock_behind_a_tab_to_the_front(main_window, qtbot):
    qtbot.waitExposed(main_window)
    main_window.show_panel("combinations")  # in front of the cache's tab
    assert main_window.docks["cache"].visibleRegion().isEmpty()
    press_view_key(main_window, "cache")
    qtbot.waitUntil(lambda: main_window.panel_has_focus("cache"))
    assert not main_window.docks["cache"].visibleRegion().isEmpty()


# ---------------------------------------------------------------------- New blank model


def test_ctrl_alt_n_makes_a_blank_valid_model_after_asking_to_save(main_window, qtbot):
    from PySide6.QtWidgets import QMessageBox

    from parasol_core.model import Timing

    doc = main_window.document
    doc.session.set_value("pt(1).iga", Timing(1e-6))
    asked = []
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard]
    main_window.ask_save_changes = lambda: asked.append(1) or answers[len(asked) - 1]
    before = doc.machine
    QTest.keyClick(main_window, Qt.Key.Key_N,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)  # fmt: skip
    assert asked == [1] and doc.machine is before  # Cancel: the model stays
    QTest.keyClick(main_window, Qt.Key.Key_N,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)  # fmt: skip
    assert asked == [1, 1] and doc.machine is not before
    assert len(doc.machine.processors) == 1 and doc.machine.hardware().processor_count == 1
    assert doc.diagnostics == [] and doc.path is None and not doc.is_modified
    assert main_window.windowTitle() == "untitled[*] — PIUI"
    assert main_window.diagnostics.summary.text() == "No problems found."
    assert main_window.overview.processors.model().rowCount() == 1
    assert not doc.session.can_undo


# ---------------------------------------------------------------------- Edit > History


def test_the_history_lists_the_steps_and_a_click_goes_back_to_one(main_window, qtbot):
    from parasol_core.model import Timing
    from piui.windows.history import OPENED

    doc = main_window.document
    QTest.keyClick(main_window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)  # Edit > History
    panel = main_window.panels["history"]
    qtbot.waitUntil(lambda: main_window.panel_has_focus("history"))
    for value in (1e-6, 2e-6, 3e-6):
        doc.session.set_value("pt(1).iga", Timing(value), label=f"Set iga {value:g}")
    QApplication.processEvents()
    items = [panel.list.item(i).text() for i in range(panel.list.count())]
    assert items == [OPENED, "Set iga 1e-06", "Set iga 2e-06", "Set iga 3e-06"]
    assert panel.list.currentRow() == 3 and panel.list.item(3).font().bold()

    def click(row: int) -> None:
        rect = panel.list.visualItemRect(panel.list.item(row))
        QTest.mouseClick(panel.list.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.NoModifier, rect.center())  # fmt: skip
        QApplication.processEvents()

    click(1)  # undo to just after the first step
    assert doc.machine.processor(1).timings["iga"] == Timing(1e-6)
    assert panel.list.currentRow() == 1 and doc.session.history.index == 1
    assert panel.note.text() == "1 of 3 steps done; 2 to redo"
    click(3)  # redo to the end
    assert doc.machine.processor(1).timings["iga"] == Timing(3e-6)
    click(0)  # back to the model as opened
    assert not doc.is_modified
    main_window.document.new_blank()  # another model: the list starts afresh
    QApplication.processEvents()
    assert [panel.list.item(i).text() for i in range(panel.list.count())] == [OPENED]
