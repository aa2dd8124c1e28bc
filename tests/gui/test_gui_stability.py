"""A long editing session must not wear the process down.

PySide6 6.12.0 loses one reference to Python's None on most calls; after about a
thousand slider steps the count reaches zero and Python aborts ("none_dealloc"). The
project pins a PySide6 without the bug; this test drags a real slider long enough to
notice if that ever comes back.
"""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication


def test_a_long_slider_drag_keeps_the_reference_count_of_none(main_window):
    panel = main_window.panels["instructions"]
    window = panel.open_category("integer-arithmetic")
    main_window.show_panel("combinations")
    row = window.rows["iga"]
    slider = row.mean.mantissa
    doc = main_window.document
    before_value = doc.engine.value("po(1).ia_spd")
    QApplication.processEvents()
    start = sys.getrefcount(None)
    steps = 400
    slider.sliderPressed.emit()
    for i in range(steps):
        slider.setValue(150 + (i % 600))
        QApplication.processEvents()
    slider.sliderReleased.emit()
    lost = start - sys.getrefcount(None)
    # a healthy binding leaves the count where it was, give or take a few objects
    assert lost < steps // 4, f"{lost} references to None lost in {steps} slider steps"
    assert doc.engine.value("po(1).ia_spd") != before_value
    assert doc.undo_stack.count() == 1  # the whole drag is one undo step
