"""Every window's message line (a refusal, an error, a state of any length) shows its
whole text at any width of its dock. The Estimate panel's was cut off in a narrow dock:
it wrapped, but at the width of its panel, which scrolls sideways in a dock narrower
than it, so the end of every line lay past the dock's right edge. The same held for the
cache window, the topology and mapping editors and the link groups: every message line
is now a ``MessageLine`` (piui/widgets/status_messages.py), which wraps within what is
seen. Checked as a user sees it: each dock floated narrow, a long message set, and the
whole of it inside what is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QLabel, QWidget

from piui.widgets.status_messages import MessageLine, show_refusal

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
GRID = SAMPLES / "grid4x4.machine"
NARROW = 300  # pixels: a dock squeezed beside others on a laptop's screen
LONG = ("cannot reach the estimator at http://localhost:8765/rpc: connection refused (is "
        "parasol-estimator serve running? Edit > Preferences says where PIUI pushes)")  # fmt: skip
# what the windows call the labels that show what happened: refusals, errors, states
MESSAGE_NAMES = ("message", "status", "note")
# (the instruction categories' message lines are in windows of their own, not docks)
DOCKS = ["processors", "groups", "cache", "combinations", "runtime",
         "link-groups", "topology-editor", "mapping-editor", "estimate", "history"]  # fmt: skip


def message_lines(panel: QWidget) -> dict[str, QLabel]:
    """The labels a panel (and the widgets in it) keeps as its message lines."""
    found = {}
    for widget in [panel, *panel.findChildren(QWidget)]:
        for name in MESSAGE_NAMES:
            label = vars(widget).get(name) if hasattr(widget, "__dict__") else None
            if isinstance(label, QLabel):
                found[f"{type(widget).__name__}.{name}"] = label
    return found


def cut(label: QLabel) -> str:
    """How the label's text is cut off on screen; '' when all of it is shown."""
    left = label.mapToGlobal(QPoint(0, 0)).x()
    right = left + label.width()
    parent = label.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            view = parent.viewport()
            shown = view.mapToGlobal(QPoint(0, 0)).x()
            if left < shown or right > shown + view.width():
                return (f"its lines end at x={right}, past the edge of what is shown "
                        f"(x={shown + view.width()})")  # fmt: skip
        parent = parent.parentWidget()
    if not label.wordWrap():
        if label.fontMetrics().horizontalAdvance(label.text()) > label.contentsRect().width():
            return "not wrapped, wider than shown"
    elif label.heightForWidth(label.width()) > label.height():
        return f"wrapped into {label.heightForWidth(label.width())} px, {label.height()} shown"
    return ""


@pytest.mark.parametrize("key", DOCKS)
def test_a_long_message_is_shown_whole_in_a_narrow_dock(main_window, qtbot, key) -> None:
    assert main_window.open_file(GRID)
    main_window.show_panel(key)
    dock = main_window.docks[key]
    dock.setFloating(True)
    dock.resize(NARROW, 460)
    panel = main_window.panels[key]
    lines = message_lines(panel)
    assert lines, f"the {key} window has no message line"
    for label in lines.values():
        show_refusal(label, LONG)
    for _ in range(5):
        QApplication.processEvents()
    shown = {name: label for name, label in lines.items() if label.isVisible()}
    assert shown, f"no message line of the {key} window is on show"
    for name, label in shown.items():
        assert isinstance(label, MessageLine), f"{name} is a plain QLabel"
        assert label.text() == LONG
        assert not cut(label), f"{key}: {name} is cut off: {cut(label)}"
    # wide again, the lines use the room: as few lines as before the squeeze allows
    dock.resize(1400, 460)
    for _ in range(5):
        QApplication.processEvents()
    for name, label in shown.items():
        assert not cut(label), f"{key}: {name} is cut off when wide: {cut(label)}"
        assert label.width() > NARROW, f"{name} stayed narrow in a wide dock"
