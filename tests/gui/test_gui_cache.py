"""The cache window: size on a logarithmic slider, speed, small loop speedup."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtCore import Qt

from parasol_core.base.numeric import log_position
from parasol_core.model import Cache, Processor, Timing
from piui.document import Document
from piui.widgets.number_controls import LogIntEdit
from piui.windows.cache import CacheWindow


@pytest.fixture
def window(qtbot, sample_copy):
    def make(name: str = "parsytec-gcel.machine", text: str | None = None) -> CacheWindow:
        path = sample_copy(name)
        if text is not None:
            path.write_text(text(path.read_text()))
        document = Document()
        document.open(path)
        w = CacheWindow(document)
        qtbot.addWidget(w)
        w.show()
        return w

    return make


def type_into(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def cache(w: CacheWindow) -> Cache:
    return w.document.current_processor().cache


def size_position(size: int) -> int:
    return log_position(size, 1, 10**7, LogIntEdit.STEPS)


def test_the_window_shows_the_cache_of_the_current_processor(window):
    w = window("fwi-csys.machine")
    assert w.title.text() == "Processor 1: SPARCstation LX"
    assert w.size_edit.field.text() == "100"
    assert w.size_edit.slider.value() == size_position(100)
    assert w.speed_edit.field.text() == "2e-08"
    assert w.speedup_edit.field.text() == "1.62"
    assert not w.no_cache.isVisibleTo(w)
    w.document.set_current_processor(2)
    assert w.size_edit.field.text() == "500"
    assert w.speedup_edit.field.text() == "1.5"


def test_dragging_the_cache_size_on_the_log_slider_is_one_undo_step(window):
    w = window()
    slider = w.size_edit.slider
    assert slider.value() == size_position(1) == 0
    slider.setSliderDown(True)
    for size in (10, 100, 1000):
        slider.setSliderPosition(size_position(size))
        assert cache(w).size == size  # live
    slider.setSliderDown(False)
    assert w.size_edit.field.text() == "1000"
    assert w.document.undo_stack.count() == 1
    w.document.undo_stack.undo()
    assert cache(w).size == 1
    assert w.size_edit.field.text() == "1"
    assert slider.value() == 0
    w.document.undo_stack.redo()
    assert cache(w).size == 1000
    assert slider.value() == size_position(1000)


def test_the_log_slider_covers_one_to_ten_million(window):
    w = window()
    slider = w.size_edit.slider
    slider.setValue(slider.maximum())
    assert cache(w).size == 10**7
    slider.setValue(slider.maximum() // 2)
    assert cache(w).size == pytest.approx(10**3.5, rel=0.01)


def test_typing_a_cache_size(window, qtbot):
    w = window()
    type_into(qtbot, w.size_edit.field, "4096")
    assert cache(w).size == 4096
    assert w.size_edit.slider.value() == size_position(4096)


def test_an_invalid_cache_size_is_rejected_and_the_old_one_stays(window, qtbot, caplog):
    w = window("fwi-csys.machine")
    with caplog.at_level(logging.WARNING, logger="piui"):
        type_into(qtbot, w.size_edit.field, "0")
    assert cache(w).size == 100
    assert w.size_edit.field.text() == "100"
    assert "positive whole number" in w.message.text()
    assert any("input rejected" in r.getMessage() for r in caplog.records)
    assert w.document.undo_stack.count() == 0


def test_a_size_of_zero_is_shown_as_one_and_left_alone_until_edited(window, qtbot, tmp_path):
    w = window(text=lambda t: t.replace("size = 1  #", "size = 0  #"))
    assert cache(w).size == 0
    assert w.size_edit.field.text() == "1"
    assert w.size_edit.slider.value() == 0
    type_into(qtbot, w.size_edit.field, "1")  # what is shown: not an edit
    assert cache(w).size == 0
    assert w.document.undo_stack.count() == 0
    original = w.document.path.read_text()
    w.document.save(tmp_path / "same.machine")
    assert (tmp_path / "same.machine").read_text() == original
    type_into(qtbot, w.size_edit.field, "64")
    assert cache(w).size == 64


def test_dragging_the_cache_speed_keeps_its_standard_deviation(window):
    w = window(text=lambda t: t.replace("speed = 3.3e-08  #", "speed = 3.3e-08 4e-09  #"))
    mantissa = w.speed_edit.mantissa
    mantissa.setSliderDown(True)
    mantissa.setSliderPosition(500)
    mantissa.setSliderDown(False)
    assert cache(w).speed == Timing(5e-08, 4e-09)
    assert w.document.undo_stack.count() == 1
    w.document.undo_stack.undo()
    assert cache(w).speed == Timing(3.3e-08, 4e-09)
    assert w.speed_edit.field.text() == "3.3e-08"


def test_the_small_loop_speedup_may_go_below_one(window, qtbot):
    w = window()
    assert "1.0 for no gain" in w.speedup_note.text()
    type_into(qtbot, w.speedup_edit.field, "0.5")
    assert cache(w).smallloopspeedup == Timing(0.5)
    assert "slower than normal memory" in w.speedup_note.text()
    assert w.speedup_edit.exponent.value() == -1
    w.speedup_edit.exponent.setValue(0)  # back to 5.0, from the exponent slider
    assert cache(w).smallloopspeedup == Timing(5.0)
    assert "1.0 for no gain" in w.speedup_note.text()
    type_into(qtbot, w.speedup_edit.field, "-2")
    assert cache(w).smallloopspeedup == Timing(5.0)
    assert "not a positive number" in w.message.text()


def test_a_processor_without_a_cache_shows_empty_controls_and_editing_adds_one(window, qtbot):
    w = window()
    doc = w.document
    doc.session.add_processor(Processor(2, "bare", {"iga": Timing(1e-6)}, None))
    assert doc.current_processor_id == 2
    assert w.title.text() == "Processor 2: bare"
    assert w.no_cache.isVisibleTo(w)
    assert w.size_edit.field.text() == ""
    assert w.speed_edit.field.text() == ""
    assert w.speedup_edit.field.text() == ""
    count = doc.undo_stack.count()
    type_into(qtbot, w.speed_edit.field, "1e-8")
    assert cache(w) == Cache(None, Timing(1e-08), None)
    assert not w.no_cache.isVisibleTo(w)
    doc.undo_stack.undo()  # one step removes the new section again
    assert cache(w) is None
    assert w.speed_edit.field.text() == ""
    assert w.no_cache.isVisibleTo(w)
    assert doc.undo_stack.count() == count + 1
    doc.undo_stack.redo()
    assert cache(w).speed == Timing(1e-08)


def test_a_drag_on_a_processor_without_a_cache_adds_it_and_undoes_in_one_step(window):
    w = window()
    doc = w.document
    doc.session.add_processor(Processor(2, "bare", {}, None))
    slider = w.size_edit.slider
    slider.setSliderDown(True)
    for size in (10, 100, 1000):
        slider.setSliderPosition(size_position(size))
    slider.setSliderDown(False)
    assert cache(w) == Cache(1000, None, None)
    doc.undo_stack.undo()
    assert cache(w) is None
    assert doc.current_processor().id == 2


@pytest.mark.parametrize(
    ("typed", "stored"), [("1e3", 1000), ("4096", 4096), ("0x100", 256), ("1e8", 10**8)]
)
def test_a_typed_cache_size_is_taken_as_the_user_meant_it(window, qtbot, typed, stored):
    w = window("fwi-csys.machine")
    type_into(qtbot, w.size_edit.field, typed)
    assert cache(w).size == stored
    assert w.message.text() == ""


@pytest.mark.parametrize(
    ("typed", "reason"),
    [("1.5", "not a cache size"), ("-3", "not a positive whole number"),
     ("abc", "not a number"), ("1e400", "too large to represent")],
)  # fmt: skip
def test_a_cache_size_that_is_not_a_whole_number_is_refused_with_its_reason(
    window, qtbot, typed, reason
):
    w = window("fwi-csys.machine")
    type_into(qtbot, w.size_edit.field, typed)
    assert cache(w).size == 100  # kept
    assert w.size_edit.field.text() == "100"
    assert reason in w.message.text()
    # the cache size counts Fortran instructions (report, section 2.2.1), as its label
    # and tooltip say: its refusal names the same unit
    assert "instructions" in w.message.text() and "bytes" not in w.message.text()
    assert w.document.undo_stack.count() == 0
