"""Issue 33, item 6: every plot's tick labels can be read, at 1100 px and at 600 px.

The rule is one axis, :class:`piui.widgets.plot_axes.ReadableAxis`, which every plot
uses: these tests find every plot of the windows and dialogs that draw one, size the
window as a user would, and compute each axis's tick label rectangles from the axis,
as it paints them. No two overlap, and the ticks the rule chose need no help from the
last guard (the labels pyqtgraph's own axis would draw for those ticks do not overlap
either)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from parasol_core.measure.validation import ValidationRow
from piui.widgets.plot_axes import (
    ReadableAxis,
    label_rects,
    log_label,
    overlapping,
    readable_axes,
)

WIDTHS = (1100, 600)


def unguarded_rects(axis: ReadableAxis) -> list:
    """The labels of the ticks the axis chose, as pyqtgraph's own axis draws them (no
    label dropped by the last guard)."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = pg.AxisItem.generateDrawSpecs(axis, painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _flags, text in specs[2]]


def settle(qtbot, widget: QWidget, width: int, height: int) -> None:
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    for _ in range(3):  # the plot's layout settles over a few passes
        QApplication.processEvents()
        qtbot.wait(10)


def check_plots(widget: QWidget, where: str, expect: int) -> None:
    plots = [p for p in [widget, *widget.findChildren(pg.PlotWidget)]
             if isinstance(p, pg.PlotWidget) and p.isVisible()]  # fmt: skip
    assert len(plots) >= expect, (where, plots)
    for plot in plots:
        item = plot.getPlotItem()
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            name = f"{where}: {item.titleLabel.text or type(plot).__name__}, {side} axis"
            assert isinstance(axis, ReadableAxis), name
            rects = label_rects(axis)
            assert len(rects) >= 2, (name, rects)
            assert not overlapping(rects), (name, overlapping(rects))
            if axis.categories:  # names: every one drawn, none thinned out
                assert sorted(t for _, t in rects) == sorted(axis.categories), name
            if item.getAxis(side)._tickLevels is None:  # ticks the rule chose
                assert not overlapping(unguarded_rects(axis)), name
            length = axis.size().height() if side == "left" else axis.size().width()
            for rect, text in rects:  # on the axis, not past its ends
                low, high = (rect.top(), rect.bottom()) if side == "left" else (
                    rect.left(), rect.right())  # fmt: skip
                assert -1 <= low and high <= length + 1, (name, text, rect, length)
            if axis.labelText:
                assert axis.label_fits, name  # its title along it, not sticking out
        # nothing drawn on the plot's last row of pixels: a tick label's descenders were
        # cut there ("pt(1).iga" under the sweep's What dominates, which has no title)
        assert ink_on_last_row(plot) == 0, f"{where}: labels cut at the bottom edge"


def ink_on_last_row(plot: pg.PlotWidget) -> int:
    """How many pixels of ``plot``'s bottom row differ from its bottom-left corner's."""
    image = plot.grab().toImage()
    y = image.height() - 1
    corner = image.pixel(0, y)
    return sum(image.pixel(x, y) != corner for x in range(image.width()))


@pytest.mark.parametrize("log_x, low, high", [
    (True, 9, 2000), (True, 50, 300), (True, 1e-7, 10), (True, 1, 4e6), (False, -3e-3, 4e-3),
    (False, 0, 2.6)])  # fmt: skip
@pytest.mark.parametrize("width", WIDTHS)
def test_a_readable_axis_over_any_range(qtbot, width, log_x, low, high):
    plot = pg.PlotWidget(background="w", axisItems=readable_axes())
    qtbot.addWidget(plot)
    plot.setLogMode(x=log_x, y=log_x)
    xs = np.geomspace(low, high, 12) if log_x else np.linspace(low, high, 12)
    plot.plot(xs, xs, pen=None, symbol="o")
    plot.getPlotItem().setLabel("bottom", "message size (bytes)")
    plot.getPlotItem().setLabel("left", "time (s)")
    settle(qtbot, plot, width, 330)
    check_plots(plot, f"{low}..{high} at {width} px", 1)


def test_log_labels_are_short_and_exact():
    assert [log_label(v) for v in (-6, -5 + math.log10(2), -3, -1, 0, 2, 3, 4, 6)] == [
        "1e-6", "2e-5", "0.001", "0.1", "1", "100", "1000", "1e4", "1e6"]  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
def test_the_measure_dialogs_plots_at(width, main_window, qtbot, monkeypatch):
    """The cache curve (log x) and the Validate plot (log x and y), after a validation
    of table 4.2's sizes: measured times from microseconds to seconds."""
    import parasol_core.measure.validation as validation

    rows = []
    for name, scale in (("GEB", 2.1e-7), ("primes", 3.3e-8)):
        for size in (100, 1000, 10_000, 100_000, 1_000_000, 10_000_000):
            measured = scale * size * (1 + 0.1 * math.sin(size))
            rows.append(ValidationRow(name, size, measured * 1.3, measured, 1.3))
    for size in (2000, 8000, 32000):  # a held-out program its loop-carried chain bounds
        rows.append(ValidationRow("reduction", size, 9e-7 * size, 1e-6 * size, 0.9,
                                  bound="chain"))  # fmt: skip
    for size, bound in ((16, "throughput"), (32, "chain"), (64, "chain")):  # at two sizes
        rows.append(ValidationRow("matmul", size, 8e-9 * size**3, 1e-8 * size**3, 0.8,
                                  bound=bound))  # fmt: skip
    monkeypatch.setattr(validation, "validate_host", lambda *a, **k: rows)
    main_window.show_measure()
    dialog = main_window.measure_dialog
    qtbot.addWidget(dialog)
    # a Quick run's loop bodies: 9 to 2000 operations, two and a bit decades (pyqtgraph's
    # own log axis labelled 2·10¹ … 9·10² there, one over the other)
    dialog._points = [(n, 2.2 + 0.2 * (n > 1000)) for n in (9, 50, 100, 500, 1000, 2000)]
    dialog._show_cache_curve()
    settle(qtbot, dialog, width, 700)
    check_plots(dialog, f"measure dialog at {width} px, cache", 1)
    dialog.validate()
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)
    assert dialog.plots.currentWidget() is dialog.valid_plot
    settle(qtbot, dialog, width, 700)
    check_plots(dialog, f"measure dialog at {width} px, validation", 1)
    legend = [label.text for _, label in dialog.valid_plot.plotItem.legend.items]
    assert "reduction (chain)" in legend and "GEB" in legend
    assert "matmul (chain at 2 of 3 sizes)" in legend
    # each point marked by its own bound: matmul's throughput-bound n = 16 is a disc
    measured = {1e-8 * n**3 for n in (16, 32, 64)}
    marks = sorted((x, item.opts["symbol"]) for item in dialog.valid_plot.plotItem.listDataItems()
                   for x in item.xData if x in measured)  # fmt: skip
    assert [m for _, m in marks] == ["o", "t", "t"]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_fit_dialogs_plots_at(width, main_window, qtbot, tmp_path):
    main_window.show_panel("runtime")
    window = main_window.panels["runtime"]
    page = window.pages["mpi"]
    window.tabs.setCurrentWidget(page)
    page.select("bcast")
    dialog = page.open_fit_dialog()
    qtbot.addWidget(dialog)
    rows = ["procs,bytes,seconds"]
    rng = np.random.default_rng(3)
    for p in (2, 4, 8, 16, 32, 64):
        for k in range(0, 23):
            t = 4e-6 * math.log2(p) + 2.5e-9 * 2**k
            rows.append(f"{p},{2**k},{t * (1 + 0.04 * rng.normal())!r}")
    csv = tmp_path / "bcast.csv"
    csv.write_text("\n".join(rows) + "\n")
    assert dialog.add_file(csv)
    settle(qtbot, dialog, width, 760)
    check_plots(dialog, f"fit dialog at {width} px", 2)
    # every residual inside the plot: none cut by the frame
    view = dialog.residuals.getPlotItem().getViewBox()
    (y0, y1) = view.viewRange()[1]
    ys = np.concatenate([s.y for s in dialog.residuals.series])
    margin = 0.03 * (y1 - y0)
    assert y0 + margin <= ys.min() and ys.max() <= y1 - margin


@pytest.mark.parametrize("width", WIDTHS)
def test_the_runtime_windows_plots_at(width, main_window, qtbot):
    main_window.show_panel("runtime")
    window = main_window.panels["runtime"]
    dock = main_window.docks["runtime"]
    dock.setFloating(True)  # a window of its own, sized as a user sizes it
    settle(qtbot, dock, width, 760)
    check_plots(window, f"run-time systems at {width} px", 2)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_combinations_chart_at(width, main_window, qtbot):
    main_window.show_panel("combinations")
    dock = main_window.docks["combinations"]
    dock.setFloating(True)
    settle(qtbot, dock, width, 900)
    window = main_window.panels["combinations"]
    window.tabs.setCurrentIndex(1)  # "All processor types", as a user clicks it
    settle(qtbot, dock, width, 900)
    assert window.chart.is_built()
    check_plots(dock, f"combinations at {width} px", 1)


def test_the_sweep_dialogs_plots_at(main_window, qtbot):
    """Two axes: the heat map, and What dominates, whose names have no title below them."""
    dialog = next(a for a in main_window.menuBar().actions()[0].menu().actions()
                  if a.text() == "S&weep…")  # fmt: skip
    dialog.trigger()
    dialog = main_window.sweep_dialog
    dialog.add_axis("pt(1).iga", "log 1e-7 1e-5 4")
    dialog.add_axis("tl(1)(*).speed", "log 1e-7 1e-5 4")
    dialog.expressions.setText("po(1).ia_spd")
    settle(qtbot, dialog, 1100, 760)
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    settle(qtbot, dialog, 1100, 760)
    check_plots(dialog, "sweep dialog, two axes", 2)
