"""No window draws one control over another at a narrow width of its dock.

The Run-time systems window at 300 pixels drew its message line's second line over the
last row of its table: a splitter, a tab or a dock gives a widget its minimum height,
not the height its width asks for, and a wrapped line needs more as its dock narrows.
The rule, for every window: at a narrow width, what is seen of each control is seen of
no other (controls scrolled out of view are not seen)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QWidget
from widget_overlap import overlapping


def _name(w: QWidget) -> str:
    text = w.text() if hasattr(w, "text") and callable(w.text) else ""
    return f"{type(w).__name__} {str(text)[:40]!r}"


@pytest.mark.parametrize("width", [240, 300])
def test_no_control_is_drawn_over_another_at_a_narrow_width(main_window, qtbot, width):
    from conftest import SAMPLES

    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    main_window.resize(1600, 1000)
    found = []
    for key in main_window.docks:
        main_window.show_panel(key)
        dock = main_window.docks[key]
        dock.setFloating(True)
        dock.resize(max(width, dock.minimumSizeHint().width()), 700)
        for _ in range(4):
            QApplication.processEvents()
        panel = main_window.panels[key]
        found += [f"{key}: {_name(a)} and {_name(b)}" for a, b in overlapping(panel)]
        dock.setFloating(False)
    assert not found, found
