"""A value a model may hold but no plot can draw (a cost of 1e308 s typed into an
expression: finite and legal) is left out of every plot, which says so and keeps
redrawing; pyqtgraph's own range padding overflowed near 1e308 and every later redraw of
the window failed ("Cannot set range [-inf, inf]"). And a plot with nothing to draw shows
no range of curves that are gone."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from piui.document import Document
from piui.widgets.expression_edit import ExpressionEdit


def retype(qtbot, edit: ExpressionEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def shown(qtbot, window, size=(900, 800)):
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window


@pytest.mark.parametrize("huge", ["1e308", "-1e308", "1.7e308"])
def test_a_cost_too_large_to_draw_is_left_out_said_and_the_plots_go_on(qtbot, sample_copy,
                                                                         huge):  # fmt: skip
    from piui.windows.runtime import RuntimeSystemsWindow

    document = Document()
    document.open(sample_copy("parsytec-gcel.machine"))
    window = shown(qtbot, RuntimeSystemsWindow(document))
    page = window.pages["mpi"]
    page.select("send")
    row = page.rows["send"]
    old = row.edit.text()
    retype(qtbot, row.edit, huge)
    assert document.machine.mpi.entries["send"].text == huge  # legal: applied
    window._redraw_timer.stop()
    window.redraw()  # raised "Cannot set range [-inf, inf]" before
    window.resize(600, 800)  # a dock of the main window: the plots side by side, narrow
    qtbot.wait(50)
    for plot in (page.bytes_plot, page.procs_plot):
        assert "not drawn" in plot.note, plot.note
        title = plot.getPlotItem().titleLabel
        assert title.isVisible() and title.text == plot.note  # said over the plot, whole:
        assert title.item.boundingRect().width() <= plot.width(), (plot.width(), plot.note)
        low, high = plot.getPlotItem().vb.viewRange()[1]
        assert np.isfinite(low) and np.isfinite(high)
    # and the window goes on drawing what it can: the old cost back, drawn, no note
    retype(qtbot, row.edit, old)
    window._redraw_timer.stop()
    window.redraw()
    for plot in (page.bytes_plot, page.procs_plot):
        assert plot.note == ""
        (series,) = [s for s in plot.series if s.label == "mp.send"]
        curve = plot._items[0].getOriginalDataset()[1]
        assert np.isfinite(curve).all() and np.allclose(curve, series.y)


def test_a_ratio_too_large_to_draw_has_no_bar_and_the_chart_says_why(qtbot, sample_copy):
    from piui.windows.combinations import CombinationsWindow

    document = Document()
    document.open(sample_copy("fwi-csys.machine"))
    window = shown(qtbot, CombinationsWindow(document), (760, 900))
    chart = window.chart
    chart.log_scale.setChecked(False)
    document.set_current_processor(3)
    retype(qtbot, window.rows["dd_spd"].edit, "1e308")
    window.redraw_chart()
    assert [len(bar.opts["x"]) for bar in chart.bars] == [7, 7, 6]
    assert "1 value past" in chart.note.text() and "not drawn" in chart.note.text()
    low, high = chart.plot.getPlotItem().vb.viewRange()[1]
    assert np.isfinite(low) and high < 1e301
    chart.log_scale.setChecked(True)
    assert [len(bar.opts["x"]) for bar in chart.bars] == [7, 7, 6]


def test_a_plot_with_nothing_to_draw_keeps_no_range_of_curves_gone(qtbot, sample_copy):
    """Opening a model whose run-time systems are not defined left the plots with the
    axes of the last model's curves (0 to 512 processes, 0 to 0.0008 s), a scale of
    nothing on screen. A plot with nothing to draw has the axes of a new plot, as the
    window built on that model from the start has."""
    from piui.windows.runtime import RuntimeSystemsWindow

    def window_on(name: str) -> RuntimeSystemsWindow:
        document = Document()
        document.open(sample_copy(name))
        return shown(qtbot, RuntimeSystemsWindow(document))

    fresh = window_on("grid4x4.machine")  # no costs of its own to draw
    window = window_on("parsytec-gcel.machine")
    page = window.pages["mpi"]
    page.select("send")
    window._redraw_timer.stop()
    window.redraw()
    assert page.procs_plot.getPlotItem().vb.viewRange()[0][1] > 100  # 512 processes
    window.document.open(sample_copy("grid4x4.machine"))
    window._redraw_timer.stop()
    window.redraw()
    fresh._redraw_timer.stop()
    fresh.redraw()
    for key in ("pvm", "express", "mpi"):
        for name in ("bytes_plot", "procs_plot"):
            got = getattr(window.pages[key], name).getPlotItem().vb.viewRange()
            want = getattr(fresh.pages[key], name).getPlotItem().vb.viewRange()
            assert np.allclose(got, want), (key, name, got, want)
