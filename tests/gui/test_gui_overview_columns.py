"""The main window's tables of processor types and topologies, in a wide dock: the
width left over goes to the names, every other column as wide as its contents (the
Program layout, Ctrl+Alt+4, widens the left dock; the last column, "Small loop
speedup" or "Shape", used to take it all, far from the values beside it)."""

from __future__ import annotations

import pytest
from conftest import SAMPLES
from PySide6.QtWidgets import QApplication


@pytest.mark.parametrize("table", ["processors", "topologies"])
def test_a_wide_table_gives_its_width_to_the_names(main_window, qtbot, table):
    assert main_window.open_file(SAMPLES / "parsytec-gcel.machine")
    main_window.resize(1920, 1080)
    main_window.apply_layout("program")
    for _ in range(4):
        QApplication.processEvents()
        qtbot.wait(15)
    view = getattr(main_window.overview, table)
    header = view.horizontalHeader()
    name = view.model().headers.index("Name")
    others = [c for c in range(header.count()) if c != name]
    assert view.viewport().width() > 800  # wide: the case in question
    for c in others:  # as wide as the header's words or the widest value, no wider
        assert header.sectionSize(c) == max(header.sectionSizeHint(c), view.sizeHintForColumn(c))
    # the names take what is left: the table is filled, none of it past the names
    assert header.length() == view.viewport().width()
    assert header.sectionSize(name) > sum(header.sectionSize(c) for c in others)
