"""The instruction groups window: one scaler per group, driven through the real sliders."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSlider

from parasol_core.base.numeric import log_position
from parasol_core.base.params import GROUPS
from parasol_core.model import Timing
from piui.document import Document
from piui.widgets.number_controls import FactorSlider
from piui.windows.groups import SECTIONS, InstructionGroupsWindow

LINK_SPEED = 9.1e-07  # tl(1)(1).speed of the GCel and FWI samples


def position(factor: float) -> int:
    return log_position(factor, 0.1, 10.0, FactorSlider.STEPS)


def drag(control: FactorSlider, *factors: float) -> None:
    """Press the slider, move it through ``factors``, let go: one drag."""
    slider = control.slider
    slider.setSliderDown(True)
    for f in factors:
        slider.setSliderPosition(position(f))
    slider.setSliderDown(False)


@pytest.fixture
def open_document(qtbot, sample_copy):
    def make(name: str = "parsytec-gcel.machine") -> Document:
        document = Document()
        document.open(sample_copy(name))
        return document

    return make


@pytest.fixture
def window(qtbot, open_document):
    def make(name: str = "parsytec-gcel.machine") -> InstructionGroupsWindow:
        w = InstructionGroupsWindow(open_document(name))
        qtbot.addWidget(w)
        w.resize(460, 760)
        w.show()
        return w

    return make


def timings(w: InstructionGroupsWindow) -> dict[str, Timing]:
    return dict(w.document.current_processor().timings)


def test_one_scaler_per_group_of_design_md(window):
    w = window()
    assert list(w.rows) == list(GROUPS)
    assert [g for _, groups in SECTIONS for g in groups] == list(GROUPS)
    for group, row in w.rows.items():
        assert row.label.text() == GROUPS[group].label
        assert row.slider.label.text() == "×1"
    # the GCel defines 7 timings: 6 global arithmetic ones and sind
    assert w.rows["all"].count.text() == "7/150"
    assert w.rows["global"].count.text() == "6/33"
    assert w.rows["local"].count.text() == "0/33"
    assert w.rows["global"].slider.isEnabled()
    assert not w.rows["local"].slider.isEnabled()  # nothing to scale
    assert not w.ok_button.isEnabled() and not w.cancel_button.isEnabled()


def test_scaling_the_global_group_scales_every_global_timing_and_its_ratios(window):
    w = window()
    doc = w.document
    before = timings(w)
    ratios = doc.engine.values()
    drag(w.rows["global"].slider, 1.3, 1.7, 2.0)
    after = timings(w)
    global_names = set(GROUPS["global"].members) & set(before)
    assert global_names == {"iga", "igm", "dga", "dgm", "dgd", "dgx"}
    for name in global_names:
        assert after[name] == before[name].scaled(2.0)
    assert after["sind"] == before["sind"]  # an intrinsic: no locality
    assert w.rows["global"].slider.label.text() == "×2"
    # every ratio over a global timing doubled, live; ds_spd (sind) did not move
    for key in ("ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "dp_spd"):
        assert doc.engine.value(f"po(1).{key}") == pytest.approx(2 * ratios[f"po(1).{key}"])
    assert doc.engine.value("po(1).ds_spd") == ratios["po(1).ds_spd"]
    assert doc.engine.value("po(1).ia_spd") == pytest.approx(after["iga"].mean / LINK_SPEED)
    assert w.ok_button.isEnabled() and w.cancel_button.isEnabled()


def test_a_drag_is_one_undo_step_and_undo_redo_bring_the_factor_back(window):
    w = window()
    doc = w.document
    before = timings(w)
    ia_spd = doc.engine.value("po(1).ia_spd")
    drag(w.rows["global"].slider, 1.2, 1.5, 2.0)
    scaled = timings(w)
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert timings(w) == before
    assert doc.engine.value("po(1).ia_spd") == ia_spd
    assert w.rows["global"].slider.value() == 1.0
    assert w.rows["global"].slider.label.text() == "×1"
    doc.undo_stack.redo()
    assert timings(w) == scaled
    assert w.rows["global"].slider.value() == 2.0
    assert w.rows["global"].slider.label.text() == "×2"


def test_a_drag_back_to_its_start_restores_the_exact_values(window):
    w = window()
    before = timings(w)
    drag(w.rows["all"].slider, 1.37, 7.3, 0.13, 2.9, 1.0)
    assert timings(w) == before  # exactly: no float drift from the steps
    drag(w.rows["all"].slider, 3.3)
    drag(w.rows["all"].slider, 0.77, 1.0)  # a second drag, back to 1x
    assert timings(w) == before


def test_composing_two_scalers_multiplies_their_factors(window):
    w = window("vax-11-785.machine")  # defines global and local additions, some with sd
    t0 = timings(w)
    drag(w.rows["global"].slider, 2.0)
    drag(w.rows["addition"].slider, 0.7, 0.5)
    t = timings(w)
    assert t["iga"] == t0["iga"] and t["rga"] == t0["rga"]  # global additions: x2 x0.5
    assert t["rla"] == Timing(t0["rla"].mean * 0.5, t0["rla"].sd * 0.5)  # local: halved, sd too
    assert t["ila"] == t0["ila"].scaled(0.5)
    assert t["dla"] == t0["dla"].scaled(0.5)
    assert t["dgm"] == t0["dgm"].scaled(2.0)  # global multiplication: doubled
    assert t["rlm"] == t0["rlm"]  # local multiplication: untouched
    assert w.document.undo_stack.count() == 2
    # either scaler back to 1x gives the other one's effect alone
    drag(w.rows["global"].slider, 1.0)
    assert timings(w)["rga"] == t0["rga"].scaled(0.5)
    assert timings(w)["dgm"] == t0["dgm"]


def test_cancel_leaves_the_model_as_it_was_undo_stack_and_title_included(window):
    w = window("vax-11-785.machine")
    doc = w.document
    t0 = timings(w)
    drag(w.rows["global"].slider, 2.0)
    drag(w.rows["addition"].slider, 0.5)
    assert doc.is_modified and doc.undo_stack.count() == 2
    w.cancel_button.click()
    assert timings(w) == t0
    assert all(row.slider.value() == 1.0 for row in w.rows.values())
    assert not w.cancel_button.isEnabled()
    assert not doc.is_modified  # the title loses its '*'
    assert doc.undo_stack.count() == 0 and not doc.undo_stack.canUndo()
    assert not doc.undo_stack.canRedo()  # nothing to bring back: it was cancelled


def test_cancel_after_an_edit_keeps_that_edit_and_its_undo_step(window):
    w = window("vax-11-785.machine")
    doc = w.document
    doc.session.set(f"pt({doc.current_processor_id}).iga", "3e-6")
    edited = timings(w)
    drag(w.rows["global"].slider, 2.0)
    w.cancel_button.click()
    assert timings(w) == edited
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText().startswith("Set")


def test_ok_keeps_the_values_and_starts_the_factors_again_from_one(window):
    w = window()
    t0 = timings(w)
    drag(w.rows["global"].slider, 2.0)
    w.ok_button.click()
    kept = timings(w)
    assert kept["iga"] == t0["iga"].scaled(2.0)
    assert w.rows["global"].slider.value() == 1.0
    assert not w.cancel_button.isEnabled()
    drag(w.rows["global"].slider, 0.5)  # relative to the values at OK
    assert timings(w)["iga"] == kept["iga"].scaled(0.5)
    w.cancel_button.click()  # back to the OK, not to the file
    assert timings(w) == kept


def test_the_reset_button_and_a_double_click_put_a_scaler_back_to_one(window, qtbot):
    w = window()
    t0 = timings(w)
    drag(w.rows["double"].slider, 3.0)
    assert w.rows["double"].reset.isEnabled()
    w.rows["double"].reset.click()
    assert timings(w) == t0
    assert w.rows["double"].slider.label.text() == "×1"
    drag(w.rows["integer"].slider, 3.0)
    qtbot.mouseDClick(w.rows["integer"].slider.slider, Qt.MouseButton.LeftButton)
    assert timings(w) == t0
    assert w.document.undo_stack.count() == 4


def test_a_keyboard_step_scales_too(window, qtbot):
    w = window()
    t0 = timings(w)
    w.rows["multiplication"].slider.slider.triggerAction(
        QAbstractSlider.SliderAction.SliderPageStepAdd
    )
    factor = w.rows["multiplication"].slider.value()
    assert factor > 1.2
    assert timings(w)["igm"].mean == pytest.approx(t0["igm"].mean * factor)
    assert timings(w)["iga"] == t0["iga"]


def test_the_window_follows_the_current_processor(window):
    w = window("fwi-csys.machine")
    doc = w.document
    lx, ss2 = doc.machine.processor(1), doc.machine.processor(2)
    ss2_before = dict(ss2.timings)
    drag(w.rows["global"].slider, 2.0)
    doc.set_current_processor(2)
    assert w.title.text() == "Processor 2: SPARCstation 2"
    assert w.rows["global"].slider.value() == 1.0
    assert ss2.timings == ss2_before
    drag(w.rows["global"].slider, 0.5)
    doc.set_current_processor(1)
    assert w.rows["global"].slider.value() == 2.0
    # undo of processor 2's drag works from here and leaves processor 1 alone
    lx_scaled = dict(lx.timings)
    doc.undo_stack.undo()
    assert ss2.timings == ss2_before
    assert lx.timings == lx_scaled
    assert w.rows["global"].slider.value() == 2.0


def test_opening_another_model_forgets_the_factors(window, sample_copy):
    w = window()
    drag(w.rows["global"].slider, 2.0)
    w.document.open(sample_copy("fwi-csys.machine"))
    assert w.rows["global"].slider.value() == 1.0
    assert w.title.text() == "Processor 1: SPARCstation LX"


def test_a_drag_with_every_window_open_is_one_edit(window):
    """A drag of the scaler across 80 positions, with the instruction categories and
    the cache window open and following it, is one undoable edit that scales every
    timing. (How long a step takes against a frame is a figure of
    benchmarks/bench_gui.py, which drags this slider with these windows open: a time
    compared with a constant here failed on busy machines.)"""
    from piui.windows.cache import CacheWindow
    from piui.windows.instructions import InstructionsWindow

    w = window()
    others = [InstructionsWindow(w.document), CacheWindow(w.document)]
    for cat in others[0].extra_windows():
        cat[1].show()
    before = w.document.session.text()
    slider = w.rows["all"].slider.slider
    slider.setSliderDown(True)
    steps = list(range(position(1.0), position(9.0), 10))
    for p in steps:
        slider.setSliderPosition(p)
    slider.setSliderDown(False)
    for o in others:
        o.deleteLater()
    assert len(steps) >= 50
    assert w.document.undo_stack.count() == 1
    assert w.document.session.text() != before
    w.document.undo_stack.undo()
    assert w.document.session.text() == before


def test_in_the_main_window_a_drag_is_undone_from_the_edit_menu(main_window):
    w = main_window.panels["groups"]
    assert isinstance(w, InstructionGroupsWindow)
    doc = main_window.document
    before = dict(doc.current_processor().timings)
    drag(w.rows["arithmetic"].slider, 1.5, 3.0)
    assert main_window.isWindowModified()
    factor = w.rows["arithmetic"].slider.value()
    assert factor == pytest.approx(3.0, rel=1e-3)  # the slider's nearest step to 3
    assert doc.current_processor().timings["dgx"] == before["dgx"].scaled(factor)
    assert w.rows["arithmetic"].label.font().bold()
    main_window.undo_action.trigger()
    assert dict(doc.current_processor().timings) == before
    assert w.rows["arithmetic"].slider.label.text() == "×1"
    assert not w.rows["arithmetic"].label.font().bold()


def test_an_arrow_press_on_a_scaler_shows_in_its_factor(window):
    """Issue 22: five arrow presses moved a scaler x1.01, shown as x1. One press is now
    x10^(1/25) (about x1.1) and five are x10^(1/5) (about x1.58), on the timings too."""
    w = window()
    row = w.rows["all"]
    before = timings(w)
    row.slider.slider.setFocus()
    shown = [row.slider.label.text()]
    for _ in range(5):
        qtbot_key(row.slider.slider, Qt.Key.Key_Right)
        shown.append(row.slider.label.text())
    assert shown[:2] == ["×1", "×1.1"]
    assert len(set(shown)) == 6  # every press changed the factor shown
    factor = w.document.session.scaler(w.document.current_processor()).factor("all")
    assert factor == pytest.approx(10 ** (5 * 40 / 1000), rel=1e-3)  # x1.585
    assert shown[-1] == "×1.58"
    after = timings(w)
    name = next(iter(before))
    assert after[name].mean == pytest.approx(before[name].mean * factor)
    qtbot_key(row.slider.slider, Qt.Key.Key_PageUp)
    factor_page = w.document.session.scaler(w.document.current_processor()).factor("all")
    assert factor_page / factor == pytest.approx(10**0.25, rel=1e-3)


def qtbot_key(widget, key) -> None:
    from PySide6.QtTest import QTest

    QTest.keyClick(widget, key)


def test_a_key_step_right_after_ok_is_a_step_of_its_own(window, qtbot):
    """OK then an arrow key on the same scaler within a second: the key's step merged
    into the step before OK (a key run merges presses close together), so Cancel took
    back the scaling OK had kept, and one Undo both. OK is a boundary no step crosses."""
    w = window()
    doc = w.document
    t0 = timings(w)
    slider = w.rows["global"].slider.slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    w.ok_button.click()
    kept = timings(w)
    assert kept != t0
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)  # at once: within any merge window
    assert doc.undo_stack.count() == 2  # a step of its own
    w.cancel_button.click()
    assert timings(w) == kept  # back to the OK, not to the file
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert timings(w) == t0


def test_esc_cancels_and_enter_keeps_from_the_keyboard(window, qtbot):
    """The scalers by keyboard alone: a step on a scaler, then Esc cancels it (as the
    Cancel button does) and Enter keeps it (as OK does); Enter on a focused Cancel
    button cancels."""
    w = window()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    doc = w.document
    t0 = timings(w)
    slider = w.rows["global"].slider.slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    assert timings(w) != t0 and doc.is_modified
    qtbot.keyClick(slider, Qt.Key.Key_Escape)
    assert timings(w) == t0 and not doc.is_modified  # cancelled
    assert doc.undo_stack.count() == 0 and w.rows["global"].slider.value() == 1.0

    qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    factor = w.rows["global"].slider.value()
    qtbot.keyClick(slider, Qt.Key.Key_Return)
    kept = timings(w)
    assert kept["iga"].mean == pytest.approx(t0["iga"].mean * factor)  # kept ...
    assert w.rows["global"].slider.value() == 1.0  # ... and the scalers start from 1x
    assert not w.cancel_button.isEnabled()

    qtbot.keyClick(slider, Qt.Key.Key_PageUp)
    w.cancel_button.setFocus()
    qtbot.keyClick(w.cancel_button, Qt.Key.Key_Return)  # Enter on Cancel: Cancel
    assert timings(w) == kept
