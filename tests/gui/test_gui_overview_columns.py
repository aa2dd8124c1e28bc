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


@pytest.mark.parametrize("table", ["processors", "topologies"])
def test_a_narrow_table_keeps_the_names_whole_and_scrolls(main_window, qtbot, table):
    """In a dock narrower than the columns, "T805 Transputer" showed as "…T…": the
    names, stretched, took what the others left, which was nothing. They keep their
    width now, and the table scrolls sideways; widened again, they take the rest."""
    assert main_window.open_file(SAMPLES / "parsytec-gcel.machine")
    view = getattr(main_window.overview, table)
    view.resize(160, 200)
    view.show()
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(15)
    header = view.horizontalHeader()
    name = view.model().headers.index("Name")
    whole = max(header.sectionSizeHint(name), view.sizeHintForColumn(name))
    assert header.length() > view.viewport().width()  # narrow: the case in question
    assert header.sectionSize(name) >= whole
    assert view.horizontalScrollBar().maximum() > 0
    view.resize(1400, 200)
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(15)
    assert header.length() == view.viewport().width()
    assert header.sectionSize(name) > whole
