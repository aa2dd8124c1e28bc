"""The bar chart of the combinations window: the seven ratios (x) of every processor
type side by side (one colour each), on a log scale, with a read-out on hover."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QShowEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QToolTip, QVBoxLayout, QWidget

from parasol_core.model import COMBINATION_NAMES
from piui.widgets.labels import value_text
from piui.widgets.plot_limits import drawable, too_large, too_large_note
from piui.widgets.status_messages import message_label

if TYPE_CHECKING:
    import pyqtgraph as pg

# Qualitative colours, one per processor type (Tableau 10), easy to tell apart.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip


def _plot_widget() -> pg.PlotWidget:
    """A plot that asks for a modest height and takes whatever is left over."""
    import pyqtgraph as pg

    from piui.widgets.plot_axes import readable_axes

    class _PlotWidget(pg.PlotWidget):
        def sizeHint(self) -> QSize:
            return QSize(480, 180)

    return _PlotWidget(background="w", axisItems=readable_axes())


class RatioChart(QWidget):
    """Grouped bars: the seven ratios (x) of every processor type (one colour each).

    The plot itself (pyqtgraph, half a second to import) is built when the chart is
    first shown, or when ``plot`` or ``bars`` is first asked for; until then the chart
    keeps its data, its legend and its note."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._plot: pg.PlotWidget | None = None
        self._bars: list[pg.BarGraphItem] = []
        self._band: pg.LinearRegionItem | None = None
        self.log_scale = QCheckBox("Logarithmic scale")
        self.log_scale.setChecked(True)
        self.log_scale.setToolTip("The ratios differ by orders of magnitude; a log axis shows "
                                  "them all. Ratios ≤ 0 or in error have no bar then.")  # fmt: skip
        self.log_scale.toggled.connect(lambda _: self.redraw())
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.note = message_label()
        self.note.setStyleSheet("color: #666;")
        top = QHBoxLayout()
        top.addWidget(self.legend, 1)
        top.addWidget(self.log_scale, 0, Qt.AlignmentFlag.AlignTop)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addLayout(top)
        # the plot's place until it is built: as tall as the plot will be
        self._room = QWidget()
        self._room.setMinimumHeight(140)
        self._layout.addWidget(self._room, 1)
        self._layout.addWidget(self.note)
        self._data: list[tuple[str, list]] = []  # (processor label, values) per type
        self._geometry: list[tuple[float, float, int, int]] = []  # x0, x1, type, ratio
        self.current: int | None = None  # the index of the processor type shown above
        self._selected: int | None = None  # the index of the selected ratio

    # ---- the plot, built when first needed

    @property
    def plot(self) -> pg.PlotWidget:
        self._build_plot()
        return self._plot

    @property
    def bars(self) -> list[pg.BarGraphItem]:
        self._build_plot()
        return self._bars

    def is_built(self) -> bool:
        """Whether the plot has been built (and pyqtgraph imported)."""
        return self._plot is not None

    def showEvent(self, event: QShowEvent) -> None:
        self._build_plot()
        super().showEvent(event)

    def _build_plot(self) -> None:
        if self._plot is not None:
            return
        import pyqtgraph as pg

        from piui.widgets.plot_axes import show_categories

        plot = self._plot = _plot_widget()
        plot.setMinimumHeight(140)
        item = plot.getPlotItem()
        item.showGrid(x=False, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        item.hideButtons()
        plot.setMouseEnabled(x=False, y=False)
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen("#555"))
            axis.setTextPen(pg.mkPen("#222"))
        show_categories(plot, "bottom", COMBINATION_NAMES, padding=0)
        item.setLabel("left", "ratio")
        self._band = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(0, 0, 0, 18),
                                         pen=pg.mkPen(None))  # fmt: skip
        self._band.setZValue(-10)
        item.addItem(self._band)
        plot.scene().sigMouseMoved.connect(self._hover)
        self._layout.replaceWidget(self._room, plot)
        self._room.deleteLater()
        self._room = None
        self.redraw()

    def set_data(self, series: list[tuple[str, list]], current: int | None,
                 selected: int | None) -> None:  # fmt: skip
        """``series``: per processor type its label and its seven values (or errors)."""
        self._data = series
        self.current = current
        self._selected = selected
        self.redraw()

    def redraw(self) -> None:
        """The legend, the note and the bars' places from the data; the bars themselves
        too once the plot is built."""
        self._geometry = []
        log_scale = self.log_scale.isChecked()
        n = max(len(self._data), 1)
        width = 0.8 / n
        numbers = [v for _, values in self._data for v in values if _plottable(v, log_scale)]
        if log_scale:
            logs = [math.log10(v) for v in numbers]
            low = math.floor(min(logs)) if logs else 0
            high = math.ceil(max(logs)) if logs else 1
            if high <= low:
                high = low + 1
            base = low - 0.04 * (high - low)
        else:
            low = min([0.0, *numbers])
            high = max([0.0, *numbers]) or 1.0
            base = 0.0
        missing = 0
        huge = 0  # finite, but past what a plot draws
        legend = []
        shapes = []  # per processor type: its colour, xs, bottoms, heights, emphasis
        for t, (label, values) in enumerate(self._data):
            color = QColor(PALETTE[t % len(PALETTE)])
            xs, heights, bottoms = [], [], []
            for r, v in enumerate(values):
                if not _plottable(v, log_scale):
                    if too_large(v):
                        huge += 1
                    else:
                        missing += v is not None
                    continue
                x = r - 0.4 + width * (t + 0.5)
                top = math.log10(v) if log_scale else v
                xs.append(x)
                bottoms.append(min(base, top))
                heights.append(abs(top - base))
                self._geometry.append((x - width / 2, x + width / 2, t, r))
            emphasis = t == self.current
            shapes.append((color, xs, bottoms, heights, emphasis))
            swatch = f"<span style='color:{color.name()}; font-size:14px'>■</span>"
            text = f"<b>{label}</b>" if emphasis else label
            legend.append(f"<span style='white-space:nowrap'>{swatch}&nbsp;{text}</span>")
        self.legend.setText("&nbsp;&nbsp; ".join(legend))
        notes = []
        if missing:
            what = "≤ 0 or in error" if log_scale else "in error"
            notes.append(f"{missing} value{'s' if missing != 1 else ''} {what}: no bar")
        if huge:
            notes.append(too_large_note(huge))
        self.note.setText("; ".join(notes))
        self.note.setVisible(bool(notes))
        if self._plot is not None:
            self._draw_bars(shapes, width, low, high, log_scale)

    def _draw_bars(self, shapes: list[tuple], width: float, low: float, high: float,
                   log_scale: bool) -> None:  # fmt: skip
        import pyqtgraph as pg

        item = self._plot.getPlotItem()
        if len(self._bars) != len(shapes):  # else the bar items are reused: cheaper
            for bar in self._bars:
                item.removeItem(bar)
            self._bars = []
        for t, (color, xs, bottoms, heights, emphasis) in enumerate(shapes):
            pen = pg.mkPen(color.darker(170), width=1.5 if emphasis else 0.8)
            opts = dict(x=xs, y0=bottoms, height=heights, width=width * 0.92,
                        brush=pg.mkBrush(color), pen=pen)  # fmt: skip
            if t < len(self._bars):
                self._bars[t].setOpts(**opts)
            else:
                bar = pg.BarGraphItem(**opts)
                item.addItem(bar)
                self._bars.append(bar)
        item.setLogMode(False, log_scale)
        item.getAxis("left").setLogMode(False, log_scale)
        pad = 0.04 * (high - low)
        item.setYRange(low - (pad if log_scale else 0), high + pad, padding=0)
        item.setXRange(-0.55, len(COMBINATION_NAMES) - 0.45, padding=0)
        selected = self._selected
        self._band.setVisible(selected is not None)
        if selected is not None:
            self._band.setRegion((selected - 0.48, selected + 0.48))

    def bar_count(self) -> int:
        return len(self._geometry)

    def _hover(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return
        point = vb.mapSceneToView(pos)
        for x0, x1, t, r in self._geometry:
            if x0 <= point.x() <= x1:
                label, values = self._data[t]
                text = f"{label}\n{COMBINATION_NAMES[r]} = {value_text(values[r])}"
                QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(pos)), text)
                return
        QToolTip.hideText()


def _plottable(v: object, log_scale: bool) -> bool:
    return drawable(v, log_scale)
