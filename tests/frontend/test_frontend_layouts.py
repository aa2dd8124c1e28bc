"""The named layouts of the main window (parasol_core.frontend.layouts): every window has
one place in each; the fractions leave the centre its room; the sizes follow the window."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parasol_core.frontend.layouts import (
    DEFAULT,
    LAYOUTS,
    WINDOWS,
    Column,
    Layout,
    Stack,
    layout,
    pixels,
)


def test_each_layout_places_every_window_once():
    for named in LAYOUTS:
        assert named.problems() == [], named.key
        assert sorted(named.shown() + named.hidden()) == sorted(WINDOWS)


def test_the_three_jobs_have_their_windows_in_front():
    assert DEFAULT is layout("what-if")
    assert {"groups", "combinations"} <= set(layout("what-if").front())
    assert {"grid-view", "topology-editor", "mapping-editor"} <= set(layout("topology").front())
    assert {"estimate", "grid-view", "runtime"} <= set(layout("estimating").front())
    shortcuts = [named.shortcut for named in LAYOUTS]
    assert len(set(shortcuts)) == len(LAYOUTS) and all(s.startswith("Ctrl+Alt+") for s in shortcuts)


def test_problems_are_named():
    bad = Layout("bad", "&Bad", "Ctrl+Alt+9", "",
                 right=(Column((Stack(("groups", "groups")),), 0.5),
                        Column((Stack(("nothing",), share=0.4),), 0.4)))  # fmt: skip
    found = "\n".join(bad.problems())
    assert "groups has 2 places" in found and "no such window nothing" in found
    assert "no place for processors" in found and "90%" in found and "share 0.4" in found


@pytest.mark.parametrize("size", [(1280, 760), (1920, 1040), (3840, 2100)])
def test_the_sizes_follow_the_window_and_leave_the_centre_its_room(size):
    width, height = size
    for named in LAYOUTS:
        sizes = pixels(named, width, height, centre=330)
        columns = sum(n for _, n in sizes["columns"])
        assert columns <= width - 330 or all(
            c.least for c in (*named.left, *named.right) if c.shown
        ), named.key
        for column in (*named.left, *named.right):
            if column.shown:
                front = next(s.front for s in column.stacks if s.windows)
                got = dict(sizes["columns"])[front]
                assert got >= column.least
        for rows in sizes["rows"]:
            assert abs(sum(n for _, n in rows) - height) <= len(rows)


def test_a_column_with_a_least_width_keeps_it_and_the_others_give_way():
    named = layout("topology")
    sizes = dict(pixels(named, 1280, 760, centre=330)["columns"])
    assert sizes["topology-editor"] == 560  # the editors' fields need it
    assert sizes["grid-view"] == 1280 - 330 - 560  # the grid view gives way
    wide = dict(pixels(named, 1920, 1040, centre=330)["columns"])
    assert wide["grid-view"] == round(0.42 * 1920) and wide["topology-editor"] == round(
        0.32 * 1920)  # fmt: skip


@given(width=st.integers(1, 6000), height=st.integers(1, 4000), centre=st.integers(0, 1200))
def test_every_size_asked_of_the_window_system_is_at_least_a_pixel(width, height, centre):
    """Qt refuses a call to size docks with any size below 1 and applies none of them:
    on an 800 x 600 screen the topology layout asked 0 pixels for the grid view, and the
    editors beside it did not get their least width either."""
    for named in LAYOUTS:
        sizes = pixels(named, width, height, centre)
        asked = [*sizes["columns"], *sizes["bottom"], *sizes["bottom_row"],
                 *(pair for rows in sizes["rows"] for pair in rows)]  # fmt: skip
        assert all(n >= 1 for _, n in asked), (named.key, sizes)
