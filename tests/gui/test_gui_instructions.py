"""Individual instructions: the category chooser and the category windows, driven through
the real sliders and fields."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from PySide6.QtCore import Qt

from parasol_core.base.numeric import join, split
from parasol_core.base.params import PARAMS, Kind
from parasol_core.model import Timing
from piui.document import Document
from piui.windows.groups import InstructionGroupsWindow
from piui.windows.instructions import CATEGORIES, CategoryWindow, InstructionsWindow

LINK_SPEED = 9.1e-07  # tl(1)(1).speed of the GCel and FWI samples


@pytest.fixture
def chooser(qtbot, sample_copy):
    def make(name: str = "parsytec-gcel.machine") -> InstructionsWindow:
        document = Document()
        document.open(sample_copy(name))
        w = InstructionsWindow(document)
        qtbot.addWidget(w)
        w.show()
        return w

    return make


def category(w: InstructionsWindow, slug: str) -> CategoryWindow:
    win = w.open_category(slug)
    assert win.isVisible()
    return win


def type_into(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def proc_timings(w) -> dict[str, Timing]:
    return dict(w.document.current_processor().timings)


# ---------------------------------------------------------------------- categories


def test_every_parameter_is_in_exactly_one_category():
    counts = Counter(n for c in CATEGORIES for n in c.names)
    assert set(counts) == {p.name for p in PARAMS}
    assert set(counts.values()) == {1}
    sizes = {c.slug: len(c.names) for c in CATEGORIES}
    assert sizes == {"integer-arithmetic": 14, "real-arithmetic": 14, "double-arithmetic": 14,
                     "complex-arithmetic": 14, "logic-compare": 10, "flow-control": 8,
                     "array-indexing": 7, "intrinsic-functions": 69}  # fmt: skip
    by_name = {p.name: p for p in PARAMS}
    for c in CATEGORIES[:4]:
        assert {by_name[n].kind for n in c.names} == {Kind.ARITHMETIC}
        assert {by_name[n].numeric_type.value for n in c.names} == {c.slug.split("-")[0]}


def test_every_category_window_shows_every_parameter_of_it(chooser):
    w = chooser()
    windows = w.extra_windows()
    assert [name for name, _ in windows] == [f"instructions-{c.slug}" for c in CATEGORIES]
    rows = [name for _, win in windows for name in win.rows]
    assert sorted(rows) == sorted(p.name for p in PARAMS)  # all 150 reachable
    win = dict(windows)["instructions-integer-arithmetic"]
    win.show()
    iga = win.rows["iga"]
    assert iga.mnemonic.text() == "iga"
    assert iga.description.text() == "integer global addition"
    assert iga.mean.field.text() == "7.37e-07"
    assert iga.mean.exponent.value() == -7
    assert iga.mean.mantissa.value() == 737
    assert iga.sd.text() == ""
    assert win.windowTitle() == "Integer arithmetic — T805 Transputer"


def test_the_chooser_reuses_one_window_per_category(chooser):
    w = chooser()
    first = category(w, "flow-control")
    first.hide()
    again = w.open_category("flow-control")
    assert again is first and again.isVisible()
    assert w.counts["integer-arithmetic"].text() == "2 of 14 set"
    assert w.counts["intrinsic-functions"].text() == "1 of 69 set"


# ---------------------------------------------------------------------- sliders


def test_dragging_a_mantissa_slider_changes_the_timing_and_every_dependent_ratio(chooser):
    w = chooser()
    doc = w.document
    win = category(w, "integer-arithmetic")
    row = win.rows["iga"]
    before = doc.engine.values()
    row.mean.mantissa.setSliderDown(True)
    for m in (750, 800, 850):
        row.mean.mantissa.setSliderPosition(m)
        iga = doc.current_processor().timings["iga"].mean
        assert iga == join(m / 100, -7)
        assert doc.engine.value("po(1).ia_spd") == pytest.approx(iga / LINK_SPEED)  # live
    row.mean.mantissa.setSliderDown(False)
    assert row.mean.field.text() == "8.5e-07"
    changed = {k for k, v in doc.engine.values().items() if v != before[k]}
    assert changed == {"po(1).ia_spd"}  # the one ratio over iga, and nothing else
    assert doc.undo_stack.count() == 1

    doc.undo_stack.undo()
    assert doc.current_processor().timings["iga"] == Timing(7.37e-07)
    assert doc.engine.value("po(1).ia_spd") == before["po(1).ia_spd"]
    assert row.mean.field.text() == "7.37e-07"
    assert row.mean.mantissa.value() == 737
    doc.undo_stack.redo()
    assert doc.current_processor().timings["iga"] == Timing(8.5e-07)
    assert row.mean.mantissa.value() == 850


def test_dragging_an_exponent_slider_moves_the_value_by_powers_of_ten(chooser):
    w = chooser()
    doc = w.document
    win = category(w, "double-arithmetic")
    row = win.rows["dgm"]
    dm_spd = doc.engine.value("po(1).dm_spd")
    row.mean.exponent.setSliderDown(True)
    row.mean.exponent.setSliderPosition(-5)
    row.mean.exponent.setSliderDown(False)
    assert doc.current_processor().timings["dgm"].mean == pytest.approx(1.5e-05)
    assert doc.engine.value("po(1).dm_spd") == pytest.approx(10 * dm_spd)
    assert row.mean.exponent_label.text() == "×10^-5"


def test_a_timing_keeps_its_standard_deviation_when_its_mean_moves(chooser, qtbot):
    w = chooser("vax-11-785.machine")
    win = category(w, "real-arithmetic")
    row = win.rows["rla"]
    assert row.sd.text() == "5.45e-08"
    type_into(qtbot, row.mean.field, "2e-6")
    assert proc_timings(w)["rla"] == Timing(2e-06, 5.45e-08)


# ---------------------------------------------------------------------- typing


def test_typing_an_exact_value(chooser, qtbot):
    w = chooser()
    row = category(w, "integer-arithmetic").rows["iga"]
    type_into(qtbot, row.mean.field, "1.234567e-6")
    assert proc_timings(w)["iga"] == Timing(1.234567e-06)
    assert w.document.engine.value("po(1).ia_spd") == pytest.approx(1.234567e-06 / LINK_SPEED)
    assert row.mean.exponent.value() == -6


@pytest.mark.parametrize("text", ["abc", "-3e-7", "0", "1e999", "nan"])
def test_an_invalid_value_is_rejected_with_a_message_and_the_old_value_stays(
    chooser, qtbot, caplog, text
):
    w = chooser()
    win = category(w, "integer-arithmetic")
    row = win.rows["iga"]
    with caplog.at_level(logging.WARNING, logger="piui"):
        type_into(qtbot, row.mean.field, text)
    assert proc_timings(w)["iga"] == Timing(7.37e-07)
    assert w.document.undo_stack.count() == 0
    assert row.mean.field.text() == "7.37e-07"
    assert win.message.text()  # said in the window
    assert win.message.text() == f"iga: {row.mean.field.toolTip()}"
    assert any("input rejected" in r.getMessage() for r in caplog.records)  # and logged
    type_into(qtbot, row.mean.field, "8e-7")  # a good value clears the message
    assert win.message.text() == ""
    assert proc_timings(w)["iga"] == Timing(8e-07)


def test_the_standard_deviation_field(chooser, qtbot):
    w = chooser()
    win = category(w, "integer-arithmetic")
    row = win.rows["iga"]
    type_into(qtbot, row.sd, "2e-8")
    assert proc_timings(w)["iga"] == Timing(7.37e-07, 2e-08)
    type_into(qtbot, row.sd, "0")
    assert proc_timings(w)["iga"] == Timing(7.37e-07, 0.0)
    for bad in ("-1e-8", "wide", "inf"):
        type_into(qtbot, row.sd, bad)
        assert proc_timings(w)["iga"] == Timing(7.37e-07, 0.0)
        assert row.sd.text() == "0.0"
        assert win.message.text()
    type_into(qtbot, row.sd, "0e0")  # the same value: no edit
    assert w.document.undo_stack.count() == 2
    row.sd.setFocus()
    row.sd.clear()
    qtbot.keyClick(row.sd, Qt.Key.Key_Return)  # empty: no standard deviation
    assert proc_timings(w)["iga"] == Timing(7.37e-07)
    assert w.document.undo_stack.count() == 3


def test_a_timing_the_model_does_not_define_can_be_added_and_undo_removes_it(chooser, qtbot):
    w = chooser()
    win = category(w, "integer-arithmetic")
    row = win.rows["ila"]
    assert row.mean.field.text() == ""
    assert row.mean.field.placeholderText() == "not set"
    assert not row.remove.isEnabled()
    type_into(qtbot, row.sd, "1e-8")  # no mean yet: refused
    assert "ila" not in proc_timings(w)
    assert "give it a mean first" in win.message.text()
    type_into(qtbot, row.mean.field, "6e-7")
    assert proc_timings(w)["ila"] == Timing(6e-07)
    assert w.counts["integer-arithmetic"].text() == "3 of 14 set"
    w.document.undo_stack.undo()
    assert "ila" not in proc_timings(w)
    assert row.mean.field.text() == ""
    assert w.counts["integer-arithmetic"].text() == "2 of 14 set"


def test_dragging_an_unset_timing_adds_it_in_one_step(chooser):
    w = chooser()
    row = category(w, "array-indexing").rows["arr2"]
    row.mean.mantissa.setSliderDown(True)
    row.mean.mantissa.setSliderPosition(300)
    row.mean.mantissa.setSliderPosition(420)
    row.mean.mantissa.setSliderDown(False)
    m, e = split(proc_timings(w)["arr2"].mean)
    assert (round(m, 2), e) == (4.2, -7)
    w.document.undo_stack.undo()
    assert "arr2" not in proc_timings(w)


def test_removing_a_timing_and_undoing_it(chooser):
    w = chooser()
    win = category(w, "intrinsic-functions")
    win.rows["sind"].remove.click()
    assert "sind" not in proc_timings(w)
    assert win.rows["sind"].mean.field.text() == ""
    err = w.document.engine.value("po(1).ds_spd")
    assert not isinstance(err, float)  # sind is gone: the ratio is an error now
    w.document.undo_stack.undo()
    assert proc_timings(w)["sind"] == Timing(3e-05)
    assert w.document.engine.value("po(1).ds_spd") == pytest.approx(3e-05 / LINK_SPEED)


# ---------------------------------------------------------------------- following


def test_the_windows_follow_the_current_processor(chooser):
    w = chooser("fwi-csys.machine")
    doc = w.document
    win = category(w, "integer-arithmetic")
    hidden = w.category_window("double-arithmetic")
    assert not hidden.isVisible()
    lx = doc.machine.processor(1).timings["iga"].mean
    ss2 = doc.machine.processor(2).timings["iga"].mean
    assert lx != ss2
    assert win.rows["iga"].mean.value() == lx
    doc.set_current_processor(2)
    assert win.rows["iga"].mean.value() == ss2
    assert win.processor.text() == "Processor 2: SPARCstation 2"
    assert "SPARCstation 2" in win.windowTitle()
    assert w.title.text() == "Processor 2: SPARCstation 2"
    hidden.show()  # brought up to date when shown
    assert hidden.rows["dgm"].mean.value() == doc.machine.processor(2).timings["dgm"].mean


def test_the_rows_follow_the_group_scalers(chooser):
    w = chooser()
    win = category(w, "double-arithmetic")
    groups = InstructionGroupsWindow(w.document)
    slider = groups.rows["double"].slider.slider
    slider.setSliderDown(True)
    slider.setSliderPosition(slider.maximum())  # x10
    slider.setSliderDown(False)
    assert win.rows["dga"].mean.field.text() == "1.2e-05"
    w.document.undo_stack.undo()
    assert win.rows["dga"].mean.field.text() == "1.2e-06"
    groups.deleteLater()


def test_in_the_main_window_rejected_input_reaches_the_terminal(main_window, qtbot):
    chooser = main_window.panels["instructions"]
    names = [name for name, _ in main_window.extra_windows()]
    assert [f"instructions-{c.slug}" for c in CATEGORIES] == [
        n for n in names if n.startswith("instructions-")
    ]
    row = chooser.open_category("flow-control").rows["goto"]
    type_into(qtbot, row.mean.field, "soon")
    assert "goto" not in main_window.document.current_processor().timings
    assert any("input rejected" in line and "soon" in line
               for line in main_window.terminal.lines())  # fmt: skip


@pytest.mark.parametrize(
    "text, reason",
    [("1e-400", "stored as 0.0"), ("1.2345678e-318", "stored with lost digits")],
)
def test_a_value_that_underflows_is_refused_at_the_field(chooser, qtbot, text, reason):
    """Issue 26: a nonzero number that would be stored as 0.0 ("not detected") or as a
    subnormal that lost digits is refused with the reason, and nothing changes."""
    w = chooser()
    win = category(w, "integer-arithmetic")
    row = win.rows["iga"]
    type_into(qtbot, row.mean.field, text)
    assert proc_timings(w)["iga"] == Timing(7.37e-07)
    assert w.document.undo_stack.count() == 0
    assert row.mean.field.text() == "7.37e-07"
    assert "too small to represent" in win.message.text() and reason in win.message.text()


def test_a_switch_types_windows_say_its_timings_are_unused(qtbot, document):
    """Switches run no program (docs/decisions.md, "Switches"): the windows that edit a
    processor type's timings and cache say so in their heading, and follow the type's
    role as it is set, unset and undone."""
    from piui.windows.cache import CacheWindow
    from piui.windows.groups import InstructionGroupsWindow

    doc = document("hdr-fat-tree.machine")
    switch = next(p for p in doc.machine.processors if p.is_switch)
    doc.set_current_processor(switch.id)
    windows = [InstructionsWindow(doc), InstructionGroupsWindow(doc), CacheWindow(doc)]
    for w in windows:
        qtbot.addWidget(w)
    instructions = windows[0]
    category_window = instructions.category_window("integer-arithmetic")
    labels = [w.title for w in windows] + [category_window.processor]
    assert all("(a switch: runs no program, timings unused)" in t.text() for t in labels)
    doc.session.set_value(f"pr({switch.id}).role", None)  # the processor master's box off
    assert [t.text() for t in labels] == [f"Processor {switch.id}: {switch.name}"] * 4
    doc.session.undo()
    assert all("a switch" in t.text() for t in labels)
    widths = [w.minimumSizeHint().width() for w in windows]
    compute = next(p for p in doc.machine.processors if not p.is_switch)
    doc.set_current_processor(compute.id)
    assert not any("switch" in t.text() for t in labels)
    # the longer heading wraps: it never widens the dock the window sits in
    assert [w.minimumSizeHint().width() for w in windows] == widths


def test_a_category_window_closes_from_the_keyboard(chooser, qtbot):
    """Ctrl+W closes a category window as its title bar's button does; Esc closes it
    too, but first backs out of a value being typed, which is then not applied."""
    w = chooser()
    win = category(w, "integer-arithmetic")
    qtbot.waitExposed(win)
    before = proc_timings(w)["iga"]
    row = win.rows["iga"]
    row.mean.field.setFocus()
    row.mean.field.selectAll()
    qtbot.keyClicks(row.mean.field, "9e-6")
    qtbot.keyClick(row.mean.field, Qt.Key.Key_Escape)
    assert win.isVisible()
    assert row.mean.field.text() == "7.37e-07"
    assert proc_timings(w)["iga"] == before
    qtbot.keyClick(row.mean.field, Qt.Key.Key_Escape)
    assert not win.isVisible()
    assert proc_timings(w)["iga"] == before  # closing applied nothing typed
    win = category(w, "integer-arithmetic")
    qtbot.waitExposed(win)
    win.rows["iga"].sd.setFocus()
    qtbot.keyClick(win.rows["iga"].sd, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not win.isVisible()
