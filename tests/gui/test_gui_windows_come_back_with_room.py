"""A window the View menu brings back gets room to be used.

A user on the first-run layout pressed View > Topology editor and got a sliver of 80
pixels under the combinations, its id field and nothing else in view: the topology
windows' place in that layout is a stack with nothing on show, and Qt gave the dock
shown there only its minimum height. The rule: a window shown into a place where
nothing was on show gets its share of its column (``layouts.RETURNING_SHARE``), in every
layout, for every window whose place is such a stack."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parasol_core.frontend import layouts


def settle(qtbot) -> None:
    for _ in range(4):
        QApplication.processEvents()
        qtbot.wait(15)


def column_height(window, key: str) -> int:
    """The height of the docks in ``key``'s column, on show (``key`` among them)."""
    dock = window.docks[key]
    g = dock.geometry()
    area = window.dockWidgetArea(dock)
    return sum(d.height() for d in window.docks.values()
               if d.isVisible() and not d.isFloating() and window.dockWidgetArea(d) == area
               and not d.visibleRegion().isEmpty()
               and d.geometry().left() < g.right() and g.left() < d.geometry().right())  # fmt: skip


def returning(layout: layouts.Layout) -> list[str]:
    """The windows of ``layout`` whose place is a side stack with nothing on show, in a
    column with something on show."""
    out = []
    for column in (*layout.left, *layout.right):
        if not column.shown:
            continue
        for stack in column.stacks:
            if not stack.windows:
                out.extend(stack.hidden)
    return out


CASES = [(named.key, key) for named in layouts.LAYOUTS for key in returning(named)]


@pytest.mark.parametrize(("layout_key", "key"), CASES)
def test_a_window_shown_into_an_empty_place_gets_its_share_of_the_column(main_window, qtbot,
                                                                         layout_key, key):  # fmt: skip
    main_window.resize(1600, 1000)
    main_window.layout_actions[layout_key].trigger()
    settle(qtbot)
    assert not main_window.docks[key].isVisible()
    main_window.view_actions[key].trigger()  # View > the window, as a user picks it
    settle(qtbot)
    dock = main_window.docks[key]
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    share = dock.height() / column_height(main_window, key)
    assert share >= layouts.RETURNING_SHARE - 0.03, (key, dock.height(), share)


def test_a_window_shown_behind_a_tab_on_show_takes_its_place_as_it_is(main_window, qtbot):
    """Brought back into a stack on show, a window takes that stack's place: the column's
    proportions are not changed."""
    main_window.resize(1600, 1000)
    main_window.layout_actions["what-if"].trigger()
    settle(qtbot)
    main_window.view_actions["grid-view"].trigger()
    settle(qtbot)
    above = main_window.docks["combinations"]
    before = above.height()
    main_window.view_actions["topology-editor"].trigger()  # into the grid view's stack
    settle(qtbot)
    assert main_window.docks["topology-editor"].geometry().top() > above.geometry().bottom()
    assert abs(above.height() - before) <= 2
    assert main_window.docks["grid-view"].visibleRegion().isEmpty()  # behind it now


def in_empty_columns(layout: layouts.Layout) -> list[str]:
    """The windows of ``layout`` whose place is a side column with nothing on show."""
    return [key for column in (*layout.left, *layout.right) if not column.shown
            for stack in column.stacks for key in stack.all()]  # fmt: skip


COLUMN_CASES = [(named.key, key) for named in layouts.LAYOUTS for key in in_empty_columns(named)]


@pytest.mark.parametrize(("layout_key", "key"), COLUMN_CASES)
def test_a_window_shown_into_an_empty_column_gets_the_width_it_asks_for(main_window, qtbot,
                                                                        layout_key, key):  # fmt: skip
    """View > Processor master on the first-run layout made a column of 180 pixels:
    its Remove button and its fields cut off. A window shown into a column where
    nothing was on show gets the width its window asks for (up to a third of the main
    window's, and to a fair share of the side columns' room)."""
    main_window.resize(1600, 1000)
    main_window.layout_actions[layout_key].trigger()
    settle(qtbot)
    dock = main_window.docks[key]
    assert not dock.isVisible()
    main_window.view_actions[key].trigger()
    settle(qtbot)
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    # its fair share of the side columns' room, at most: the others stay usable
    sides = {(main_window.dockWidgetArea(d), d.geometry().left()): d.width()
             for d in main_window.docks.values()
             if d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()
             and main_window.dockWidgetArea(d) in (Qt.DockWidgetArea.LeftDockWidgetArea,
                                                   Qt.DockWidgetArea.RightDockWidgetArea)}  # fmt: skip
    fair = sum(sides.values()) // len(sides)
    wanted = min(dock.sizeHint().width(), main_window.width() // 3, fair)
    assert dock.width() >= wanted - 2, (key, dock.width(), wanted)


@pytest.mark.parametrize("layout_key", [named.key for named in layouts.LAYOUTS])
def test_the_estimate_panel_brought_into_the_bottom_row_has_its_questions_in_view(
        main_window, qtbot, layout_key):  # fmt: skip
    """View > Estimate on the what-if layout put the panel into the bottom-left stack at
    385 x 122 px, its three question boxes side by side wanting 1,092 x 140: scrolled both
    ways, the first box cut. Now the boxes stack where they do not fit side by side, and
    a bottom row lower than its panel asks is raised, up to a third of the window."""
    from PySide6.QtWidgets import QBoxLayout

    main_window.resize(1400, 900)
    main_window.layout_actions[layout_key].trigger()
    settle(qtbot)
    if not main_window.docks["estimate"].isVisible():
        main_window.view_actions["estimate"].trigger()
        settle(qtbot)
    dock, panel = main_window.docks["estimate"], main_window.panels["estimate"]
    if main_window.dockWidgetArea(dock) != Qt.DockWidgetArea.BottomDockWidgetArea:
        pytest.skip(f"{layout_key}: the Estimate panel is not in the bottom row")
    side_by_side = panel.questions.direction() == QBoxLayout.Direction.LeftToRight
    assert side_by_side == (panel.width() >= panel.side_by_side_width())
    # the row's height (its tab bar's 30 px among it) is as the panel asks, up to a third
    assert dock.height() >= min(panel.sizeHint().height(), main_window.height() // 3) - 30
    if layout_key == "what-if":
        assert dock.height() > 200  # was 122
