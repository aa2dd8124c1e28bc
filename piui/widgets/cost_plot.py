"""A plot of run-time costs against one argument, with a marker at the current value and
a crosshair whose read-out names every curve's value under the mouse.

Shared by the run-time systems window and the fit dialog. Curves are given as
(label, x, y, colour, style); ``y`` may hold NaN (a gap: the cost could not be evaluated
there). On a log axis values that are not positive are left out too, and so is a value
past what a plot can draw (:mod:`piui.widgets.plot_limits`); the plot's title says how many.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import QWidget

from piui.widgets.plot_axes import readable_axes
from piui.widgets.plot_limits import DRAWABLE, too_large_note

# Tableau 10, as the combinations chart
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip


LEGEND_ROWS = 4  # legend entries a column, at most


@dataclass
class Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    color: str
    dashed: bool = False
    points: bool = False  # markers only (measurements)
    in_legend: bool = True
    # the value at any x (the cost expression evaluated there), for the read-out; None:
    # the read-out takes the nearest sample
    at: Callable[[float], float] | None = None


class CostPlot(pg.PlotWidget):
    """A white plot with labelled axes, a legend, a current-value marker and a crosshair.

    ``hovered`` carries the read-out text (empty when the mouse leaves)."""

    hovered = Signal(str)

    def __init__(self, x_label: str, log_x: bool, log_y: bool, x_text=None,  # noqa: ANN001
                 y_text=None, legend_corner: str = "top left",  # noqa: ANN001
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(
            parent=parent,
            background="w",
            axisItems=readable_axes(),  # tick labels that never overlap
        )
        self.log_x, self.log_y = log_x, log_y
        self.x_text = x_text or (lambda x: f"{x:.4g}")
        self.y_text = y_text or (lambda y: f"{y:.4g}")
        item = self.getPlotItem()
        item.setLogMode(x=log_x, y=log_y)
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setLabel("bottom", x_label)
        item.setLabel("left", "time (s)")
        for name in ("bottom", "left"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen("#555"))
            axis.setTextPen(pg.mkPen("#222"))
        self.setMouseEnabled(x=False, y=False)
        item.hideButtons()
        item.setMenuEnabled(False)
        offset = (8 if "left" in legend_corner else -8, 8 if "top" in legend_corner else -8)
        self.legend = item.addLegend(offset=offset, labelTextColor="#222",
                                     brush=pg.mkBrush(255, 255, 255, 220))  # fmt: skip
        self.series: list[Series] = []
        self.note = ""  # what was left out for its size, as the title says it
        self._items: list[pg.GraphicsObject] = []
        self.marker = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen("#888", width=1, style=Qt.PenStyle.DashLine))  # fmt: skip
        self.crosshair = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#c04040", width=1))
        self.crosshair.setZValue(20)
        item.addItem(self.marker, ignoreBounds=True)
        item.addItem(self.crosshair, ignoreBounds=True)
        self.crosshair.hide()
        self.marker.hide()
        self.readout = ""
        self.snap_x: Callable[[float], float] | None = None  # the x a read-out is for
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # ---- data

    def _view_x(self, x: float) -> float:
        return math.log10(x) if self.log_x else x

    def set_marker(self, x: float | None) -> None:
        """The dashed line at the current argument (None: none)."""
        self.marker.setVisible(x is not None)
        if x is not None:
            self.marker.setPos(self._view_x(x))

    def set_series(self, series: list[Series]) -> None:
        item = self.getPlotItem()
        for old in self._items:
            item.removeItem(old)
        self._items = []
        self.legend.clear()
        self.series = series
        huge = 0
        drawn = 0  # points drawn, of every curve
        for s in series:
            y = np.array(s.y, dtype=float)
            x = np.array(s.x, dtype=float)
            keep = np.isfinite(y) & np.isfinite(x)
            beyond = keep & ((np.abs(y) > DRAWABLE) | (np.abs(x) > DRAWABLE))
            huge += int(beyond.sum())
            keep &= ~beyond
            if self.log_y:
                keep &= y > 0
            if self.log_x:
                keep &= x > 0
            drawn += int(keep.sum())
            if s.points:
                plotted = pg.PlotDataItem(x[keep], y[keep], pen=None, symbol="o", symbolSize=6,
                                          symbolBrush=pg.mkBrush(s.color),
                                          symbolPen=pg.mkPen("w", width=0.5),
                                          name=s.label if s.in_legend else None)  # fmt: skip
            else:
                pen = pg.mkPen(s.color, width=2,
                               style=Qt.PenStyle.DashLine if s.dashed else Qt.PenStyle.SolidLine)  # fmt: skip
                # gaps stay gaps: NaN where a point is left out, connected finitely
                yy = np.where(keep, y, np.nan)
                plotted = pg.PlotDataItem(
                    x, yy, pen=pen, connect="finite", name=s.label if s.in_legend else None
                )
            item.addItem(plotted)
            self._items.append(plotted)
        # a legend of many entries in columns: one taller than the plot loses its last
        entries = sum(1 for s in series if s.in_legend)
        self.legend.setColumnCount(max(1, math.ceil(entries / LEGEND_ROWS)))
        item.enableAutoRange()
        if not self.log_y:  # a linear time axis starts at zero: a flat cost reads as flat
            ys = np.concatenate([np.asarray(s.y, dtype=float) for s in series] or [np.zeros(0)])
            ys = ys[np.isfinite(ys) & (np.abs(ys) <= DRAWABLE)]
            if len(ys):
                lo, hi = min(0.0, float(ys.min())), max(0.0, float(ys.max()))
                if hi == lo:
                    hi = lo + 1.0
                # room beyond the extreme values on the sides they reach (residuals go
                # below zero): a point is drawn whole, never cut by the frame
                pad = 0.08 * (hi - lo)
                item.setYRange(lo - (pad if lo < 0 else 0.0), hi + pad, padding=0)
        if not drawn:
            # nothing to draw (a cost not defined, another model opened): the axes of a
            # new plot, not the range of the curves drawn before, which are gone
            item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.note = too_large_note(huge)
        # small: the title is one line over a plot that may be narrow (a split dock)
        item.setTitle(self.note or None, size="8pt", color="#a02020")

    def add_band(self, x: np.ndarray, low: np.ndarray, high: np.ndarray, color: str,
                 edges: bool = False) -> None:  # fmt: skip
        """A shaded band between two curves (the fit's minimum and maximum); with
        ``edges``, each bound drawn as a thin dotted line too (a narrow band shows)."""
        item = self.getPlotItem()
        ok = np.isfinite(low) & np.isfinite(high)
        ok &= (np.abs(low) <= DRAWABLE) & (np.abs(high) <= DRAWABLE)
        if self.log_y:
            ok &= (low > 0) & (high > 0)
        pen = (pg.mkPen(color, width=1, style=Qt.PenStyle.DotLine) if edges
               else pg.mkPen(None))  # fmt: skip
        lo = pg.PlotDataItem(x[ok], low[ok], pen=pen)
        hi = pg.PlotDataItem(x[ok], high[ok], pen=pen)
        for it in (lo, hi):  # in the plot first: it puts them on its log scale
            item.addItem(it)
            self._items.append(it)
        band = pg.FillBetweenItem(lo, hi, brush=pg.mkBrush(QColorWithAlpha(color, 80)))
        item.addItem(band)
        self._items.append(band)

    # ---- the crosshair

    def readout_at(self, x: float) -> str:
        """What the crosshair shows at ``x`` (data units): each curve's value there, by
        its ``at`` (evaluated at ``snap_x(x)`` when the plot snaps, say to whole bytes);
        a curve without one, its nearest sample."""
        if self.snap_x is not None:
            x = self.snap_x(x)
        parts = [self.x_text(x)]
        for s in self.series:
            if s.points or len(s.x) == 0:
                continue
            if s.at is not None:
                y = s.at(x)
                parts.append(f"{s.label} {self.y_text(y) if math.isfinite(y) else 'error'}")
                continue
            xs = np.asarray(s.x, dtype=float)
            dist = np.abs(np.log(xs) - math.log(x)) if self.log_x and x > 0 else np.abs(xs - x)
            i = int(np.argmin(dist))
            y = float(s.y[i])
            parts.append(f"{s.label} {self.y_text(y) if math.isfinite(y) else 'error'}")
        return "   ".join(parts)

    def _mouse_moved(self, pos: QPointF) -> None:
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos) or not self.series:
            self.crosshair.hide()
            if self.readout:
                self.readout = ""
                self.hovered.emit("")
            return
        vx = vb.mapSceneToView(pos).x()
        x = 10**vx if self.log_x else vx
        self.crosshair.setPos(vx)
        self.crosshair.show()
        self.readout = self.readout_at(x)
        self.hovered.emit(self.readout)


def QColorWithAlpha(color: str, alpha: int):  # noqa: ANN201 - a QColor factory
    from PySide6.QtGui import QColor

    c = QColor(color)
    c.setAlpha(alpha)
    return c
