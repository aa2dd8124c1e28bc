"""A timeline of ranks (pyqtgraph): time across, one lane a rank down, each operation
coloured by its kind (computation, sending, receiving, waiting). Wheel and drag zoom
and pan; the mouse over an operation names it.

Drawn in bulk, whatever the number of operations: one image item, whose pixels are
:meth:`parasol_core.frontend.timeline.Timeline.raster` of the view. While the view moves
(a drag, the wheel) pyqtgraph moves and stretches the picture on show, which costs one
image draw a frame; once the view has stood still for :data:`SETTLE_MS` the picture is
made again at the new range, sharp. No item is made per operation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from parasol_core.frontend.timeline import KINDS, Timeline
from piui.widgets.plot_axes import readable_axes

# Kinds' colours, in code order (0: nothing); Tableau's blue, orange, green and a grey
COLOURS = {
    "computation": "#4e79a7",
    "sending": "#f28e2b",
    "receiving": "#59a14f",
    "waiting": "#bab0ac",
}
SETTLE_MS = 40  # the view this long still: the picture is made again at its range
LANE_GAP = 0.15  # of a lane's height, left blank under it (when lanes are 4 px or more)


def _lut() -> np.ndarray:
    lut = np.zeros((len(KINDS) + 1, 4), np.uint8)  # code 0: transparent
    for code, kind in enumerate(KINDS, start=1):
        c = QColor(COLOURS[kind])
        lut[code] = (c.red(), c.green(), c.blue(), 255)
    return lut


class TimelinePlot(QWidget):
    """``set_timeline(timeline, describe)``: ``describe(index)`` is the hover's words
    for the operation of that index (the caller's order). ``hovered`` carries them
    (empty when the mouse is over nothing)."""

    hovered = Signal(str)
    drawn = Signal()  # the picture was made again (tests and benchmarks wait for it)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.describe: Callable[[int], str] = str
        self.rasters = 0  # pictures made (tests count them)
        self.moved = False  # the user zoomed or panned since the view was fitted
        self.plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "time (s)")
        item.setLabel("left", "rank")
        item.hideButtons()
        item.setMenuEnabled(False)
        for name in ("bottom", "left"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen("#555"))
            axis.setTextPen(pg.mkPen("#222"))
        self.view = item.getViewBox()
        self.view.invertY(True)  # rank 0 on top
        self.image = pg.ImageItem(axisOrder="row-major")
        self.view.addItem(self.image)
        self._lut = _lut()
        self.hover_label = QLabel(" ")
        self.hover_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hover_label.setStyleSheet("color: #333;")
        # a long file name never widens the window: its folder is cut from the left
        # (fitted_hover), the tooltip has it all
        self.hover_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        legend = QHBoxLayout()
        legend.setContentsMargins(0, 0, 0, 0)
        for kind in KINDS:
            swatch = QLabel(f"<span style='color:{COLOURS[kind]}'>■</span> {kind}")
            legend.addWidget(swatch)
        legend.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.plot, 1)
        column.addLayout(legend)
        column.addWidget(self.hover_label)  # a line of its own: the whole width
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self.redraw)
        self._empty_view()
        self.view.sigRangeChanged.connect(lambda *_: self._settle.start())
        self.view.sigRangeChangedManually.connect(lambda *_: setattr(self, "moved", True))
        self.view.sigResized.connect(lambda *_: self._settle.start())
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)

    # ---- data

    def set_timeline(self, timeline: Timeline | None,
                     describe: Callable[[int], str] | None = None,
                     keep_view: bool = False) -> None:  # fmt: skip
        """Show ``timeline`` (None: nothing). ``keep_view``: the same program predicted
        again, the view stays where the user put it."""
        self.timeline = timeline
        self.describe = describe or str
        if timeline is None or not len(timeline):
            self.image.clear()
            self.hover_label.setText(" ")
            self._empty_view()
            return
        t_end = timeline.t_end if timeline.t_end > 0 else 1.0
        self.view.setLimits(xMin=-0.02 * t_end, xMax=1.1 * t_end, yMin=-0.5,
                            yMax=timeline.ranks + 0.5, minXRange=t_end * 1e-9,
                            minYRange=min(1.0, timeline.ranks))  # fmt: skip
        # the same program again: the view stays where the user put it; one they have
        # not moved follows the run's new length
        if not keep_view or not self.moved:
            self.view.setRange(xRange=(0, t_end), yRange=(0, timeline.ranks), padding=0.02)
            self.moved = False
        self.redraw()

    def _empty_view(self) -> None:
        """Nothing to show: time and rank from 0 (pyqtgraph's empty view ran from -0.5,
        a negative time and rank under "No program trace open"), no limits left from
        the last program."""
        self.view.setLimits(xMin=None, xMax=None, yMin=None, yMax=None, minXRange=None,
                            minYRange=None)  # fmt: skip
        self.view.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.moved = False

    def view_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        (x0, x1), (y0, y1) = self.view.viewRange()
        return (x0, x1), (y0, y1)

    # ---- drawing

    def redraw(self) -> None:
        """Make the picture of the view as it is now."""
        self._settle.stop()
        timeline = self.timeline
        if timeline is None or not len(timeline):
            return
        (x0, x1), (y0, y1) = self.view.viewRange()
        x0, x1 = max(x0, 0.0), min(x1, timeline.t_end)
        rect = self.view.sceneBoundingRect()
        width = max(int(rect.width()), 1)
        height = max(int(rect.height()), 1)
        r0 = max(int(np.floor(y0)), 0)
        r1 = min(int(np.ceil(y1)), timeline.ranks)
        if x1 <= x0 or r1 <= r0:
            self.image.clear()
            return
        # pixels across the part of the view that has time in it
        (v0, v1), _ = self.view.viewRange()
        width = max(int(width * (x1 - x0) / (v1 - v0)), 1)
        lanes_px = max(int(height * (r1 - r0) / max(y1 - y0, 1e-9)), 1)
        raster = timeline.raster(x0, x1, width, r0, r1, lanes_px)
        codes = raster.codes
        rows = codes.shape[0]
        # lanes of 4 pixels or more get a blank line under them (lanes told apart)
        sub = min(max(lanes_px // max(rows, 1), 1), 16)
        if sub >= 4:
            gap = max(int(round(sub * LANE_GAP)), 1)
            codes = np.repeat(codes, sub, axis=0)
            codes.reshape(rows, sub, -1)[:, sub - gap :, :] = 0
        self.image.setImage(self._lut[codes], autoLevels=False)
        self.image.setRect(QRectF(raster.t0, raster.first, raster.t1 - raster.t0,
                                  rows * raster.per_row))  # fmt: skip
        self.rasters += 1
        self.drawn.emit()

    # ---- hover

    def _mouse_moved(self, pos: QPointF) -> None:
        if self.timeline is None or not self.view.sceneBoundingRect().contains(pos):
            self._hover("")
            return
        point = self.view.mapSceneToView(pos)
        self._hover(self.text_at(point.x(), point.y()))

    def text_at(self, t: float, y: float) -> str:
        """The hover's words for the point (t seconds, y in lanes) of the view."""
        if self.timeline is None:
            return ""
        index = self.timeline.at(t, int(np.floor(y)))
        return "" if index is None else self.describe(index)

    def _hover(self, text: str) -> None:
        self.hover_label.setText(fitted_hover(text, self.hover_label) or " ")
        self.hover_label.setToolTip(text)
        self.plot.setToolTip(text)
        self.hovered.emit(text)

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        super().resizeEvent(event)
        text = self.hover_label.toolTip()  # the whole of what is hovered
        if text:
            self.hover_label.setText(fitted_hover(text, self.hover_label))


def fitted_hover(text: str, label: QLabel) -> str:
    """The hover's words as they fit ``label``: the operation, its times and the end of
    where the trace says it (``…/rank-92.txt:1234``: the file's name and line, which say
    where, are kept; a long folder is cut from the left). The whole is the tooltip."""
    from PySide6.QtGui import QFontMetrics

    metrics = QFontMetrics(label.font())
    room = label.width() - 4
    if room <= 0 or metrics.horizontalAdvance(text) <= room:
        return text
    head, sep, where = text.rpartition(", ")
    if not sep:
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
    left = room - metrics.horizontalAdvance(head + sep)
    if left < metrics.horizontalAdvance("…" + where[-12:]):  # not even the file's end
        return metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
    return head + sep + metrics.elidedText(where, Qt.TextElideMode.ElideLeft, left)
