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


def test_the_wheel_scrolls_the_topology_editor_past_its_kind_box(main_window, qtbot):
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
