"""Plot axes whose tick labels can be read, whatever the plot's size: the one rule for the
axes of every plot PIUI draws (the run-time systems, the fit dialog, the measure dialog,
the combinations chart).

The rule: a tick label never overlaps its neighbour. The labelled ticks are chosen from
the axis's length in pixels and the size of their labels, in regular steps — on a log
axis every decade, or every 2nd, 5th, 10th … decade (with 2 and 5 between decades when
fewer than two decades show and there is room); on a linear axis every major tick, or
every 2nd, 5th … — and the ticks left unlabelled are drawn as minor ticks. As a last
guard (fixed ticks, such as the values under a heat map), a label that would overlap the
one before it is not drawn. :func:`label_rects` gives the rectangles of the labels an
axis draws, which is what the tests check.

Names are not thinned: an axis of categories (the bars of "what dominates", the axes
of a parallel-coordinates plot, the ratios under the combinations chart) draws every
name, or a bar nobody can name is drawn. :func:`show_categories` sets the names and
gives the plot the length they need along that axis as its minimum size, so that a
plot in a small dock scrolls (in :func:`piui.widgets.scrolling.in_scroll_area`) instead of dropping names.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter
from PySide6.QtWidgets import QApplication

# Steps between labelled ticks, in units of the major tick spacing (or of decades)
STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
# Room between two labels: a fraction of a label's height (vertical axes), or pixels
# (horizontal axes, where a label is wider than it is tall)
GAP_VERTICAL = 0.35
GAP_HORIZONTAL = 8.0


def log_label(exponent: float) -> str:
    """The label of a tick at 10**exponent: plain from 0.001 to 1000, else 1e-5."""
    x = 10.0**exponent
    mantissa = round(x / 10 ** math.floor(round(exponent, 9)), 6)
    if 1e-3 <= x < 1e4:
        return f"{float(f'{x:.3g}'):g}"
    return f"{mantissa:g}e{math.floor(round(exponent, 9))}"


BELOW = 4
"""Pixels a bottom axis keeps below its lowest text (:meth:`ReadableAxis._updateHeight`)."""


class ReadableAxis(pg.AxisItem):
    """A pyqtgraph axis whose tick labels do not overlap (the module's rule)."""

    label_fits = True  # whether its label (title) is drawn: it fits along the axis
    categories: tuple[str, ...] = ()  # names at ticks 0, 1, 2 ...: every one is drawn

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.setStyle(maxTextLevel=0)  # labels on the first level only: the chosen ticks
        self.enableAutoSIPrefix(False)  # seconds stay seconds; read-outs scale

    # ---- which ticks carry labels

    def _font(self) -> QFont:
        return self.style.get("tickFont") or QApplication.font()

    def _room(self, strings: list[str]) -> float:
        """Pixels along the axis one label needs, with the gap to the next."""
        metrics = QFontMetricsF(self._font())
        if self.orientation in ("left", "right"):
            return metrics.height() * (1.0 + GAP_VERTICAL)
        widest = max((metrics.horizontalAdvance(s) for s in strings), default=0.0)
        return widest + GAP_HORIZONTAL

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        levels = super().tickValues(minVal, maxVal, size)
        if self.logMode or not levels or not levels[0][1]:
            return levels
        spacing, majors = levels[0]
        lo, hi = sorted((minVal, maxVal))
        per_unit = size / max(hi - lo, 1e-300)
        strings = self.tickStrings(majors, self.autoSIPrefixScale * self.scale, spacing)
        room = self._room(strings)
        step = next((k for k in STEPS if k * spacing * per_unit >= room), STEPS[-1])
        if step == 1:
            return levels
        labelled = [v for v in majors if round(v / spacing) % step == 0]
        rest = sorted([v for v in majors if v not in labelled] + [
            v for _, values in levels[1:] for v in values])  # fmt: skip
        return [(spacing * step, labelled), (spacing, rest)]

    def logTickValues(self, minVal: float, maxVal: float, size: float, stdTicks: list) -> list:
        lo, hi = sorted((minVal, maxVal))
        inside = lambda v: lo <= v <= hi  # noqa: E731
        decades = [float(v) for v in range(math.floor(lo), math.ceil(hi) + 1) if inside(v)]
        between = [v + math.log10(m) for v in range(math.floor(lo), math.ceil(hi) + 1)
                   for m in range(2, 10)]  # fmt: skip
        between = [v for v in between if inside(v)]
        per_decade = size / max(hi - lo, 1e-300)
        labelled = decades
        if len(decades) < 2:  # 2 and 5 between the decades, when they fit
            with_25 = sorted(decades + [v for v in between if round(10 ** (v % 1)) in (2, 5)])
            room = self._room(self.logTickStrings(with_25, 1.0, 1.0))
            if with_25 and math.log10(2) * per_decade >= room:
                labelled = with_25
            elif not decades:  # no decade inside: the one mantissa that fits best
                labelled = with_25[:1] or between[:1]
        else:
            room = self._room(self.logTickStrings(decades, 1.0, 1.0))
            step = next((k for k in STEPS if k * per_decade >= room), STEPS[-1])
            if step > 1:
                labelled = [v for v in decades if round(v) % step == 0] or decades[:1]
        rest = sorted(v for v in decades + between if v not in labelled)
        return [(1.0, labelled), (None, rest)]

    def logTickStrings(self, values: list, scale: float, spacing: float) -> list[str]:
        return [log_label(v) for v in values]

    # ---- room below the lowest text

    def _updateHeight(self) -> None:
        """pyqtgraph's height and :data:`BELOW` pixels more under a bottom axis: its
        lowest text, the tick labels or the title, reached the plot's last row of pixels,
        where descenders were cut ("pt(1).iga" under the sweep's What dominates, the
        parentheses of "message size (bytes)"). The title keeps its place (resizeEvent)."""
        super()._updateHeight()
        if self.orientation == "bottom" and self.isVisible() and self.fixedHeight is None:
            h = self.maximumHeight() + BELOW
            self.setMaximumHeight(h)
            self.setMinimumHeight(h)

    # ---- the axis's own label (its title) stays on the axis

    def resizeEvent(self, ev: object = None) -> None:
        super().resizeEvent(ev)
        label = getattr(self, "label", None)
        if self.orientation == "bottom" and label is not None and self.fixedHeight is None:
            label.setY(label.y() - BELOW)  # where pyqtgraph puts it, the room below it
        self._fit_label()

    def setLabel(self, *args: object, **kwargs: object) -> None:
        super().setLabel(*args, **kwargs)
        self._fit_label()

    def _fit_label(self) -> None:
        """A label longer than the axis would stick out past the plot, over what is
        beside it: it is not drawn then (its room is kept, so nothing moves)."""
        label = getattr(self, "label", None)
        if label is None:
            return
        length = self.size().height() if self.orientation in ("left", "right") else (
            self.size().width())  # fmt: skip
        self.label_fits = label.boundingRect().width() <= length
        label.setOpacity(1.0 if self.label_fits else 0.0)

    # ---- the last guard

    def generateDrawSpecs(self, p: QPainter):  # noqa: ANN201
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return specs
        axis, ticks, texts = specs
        return axis, ticks, self._without_overlaps(texts)

    def _on_the_axis(self, texts: list) -> list:
        """A label at a tick at the very end of the axis (the 0 of a range from zero)
        is moved along the axis to within its ends, beside its tick still, instead of
        reaching into the corner where the other axis's labels are."""
        vertical = self.orientation in ("left", "right")
        length = self.size().height() if vertical else self.size().width()
        out = []
        for rect, flags, text in texts:
            rect = QRectF(rect)
            low, high = (rect.top(), rect.bottom()) if vertical else (rect.left(), rect.right())
            shift = -low if low < 0 else (length - high if high > length else 0.0)
            if shift and abs(shift) <= (rect.height() if vertical else rect.width()) / 2 + 1:
                rect.translate(0.0, shift) if vertical else rect.translate(shift, 0.0)
            elif shift:
                continue  # more than half of it past the end: not drawn
            out.append((rect, flags, text))
        return out

    def _without_overlaps(self, texts: list) -> list:
        texts = self._on_the_axis(texts)
        vertical = self.orientation in ("left", "right")
        along = (lambda r: r.center().y()) if vertical else (lambda r: r.center().x())
        kept: list = []
        last: QRectF | None = None
        for spec in sorted(texts, key=lambda t: along(t[0])):
            rect = spec[0]
            if last is not None:
                if vertical:
                    gap = rect.top() - last.bottom()
                    need = GAP_VERTICAL * 0.5 * rect.height()
                else:
                    gap = rect.left() - last.right()
                    need = GAP_HORIZONTAL * 0.5
                if gap < need:
                    continue
            kept.append(spec)
            last = rect
        return kept


def category_length(axis: ReadableAxis, count: int, padding: float = 0.05) -> float:
    """Pixels along ``axis`` that ``count`` names at ticks one unit apart need, each with
    the room of the widest (:meth:`ReadableAxis._room`), in a view from -0.5 to
    ``count`` - 0.5 padded by ``padding`` of that at each end."""
    return count * (1.0 + 2.0 * padding) * axis._room(list(axis.categories)) + 2.0


def show_categories(plot: pg.PlotWidget, side: str, names: list[str] | tuple[str, ...],
                    padding: float = 0.05) -> None:  # fmt: skip
    """Names at ticks 0, 1, 2 ... of ``plot``'s ``side`` axis (a :class:`ReadableAxis`),
    every one drawn: the plot's minimum size along that axis becomes what the names need
    (:func:`category_length`) plus the rest of the plot (its other axis, title and
    margins), so a layout gives it that much or a scroll area around it scrolls. The
    view's range along the axis is to be -0.5 .. len(names) - 0.5 with ``padding``."""
    axis = plot.getPlotItem().getAxis(side)
    axis.categories = tuple(names)
    axis.setTicks([list(enumerate(names))])
    need = category_length(axis, len(names), padding)
    vertical = side in ("left", "right")
    metrics = QFontMetricsF(axis._font())
    # the plot beside the axis: the other axis's labels and title, the title, margins
    frame = 4.0 * metrics.height() + 24.0
    if vertical:
        plot.setMinimumHeight(int(math.ceil(need + frame)))
    else:
        other = plot.getPlotItem().getAxis("left")
        plot.setMinimumWidth(int(math.ceil(need + max(other.width(), 3 * metrics.height())
                                             + 24.0)))  # fmt: skip


def readable_axes() -> dict[str, ReadableAxis]:
    """The ``axisItems`` of a plot: a readable bottom and left axis."""
    return {"bottom": ReadableAxis("bottom"), "left": ReadableAxis("left")}


def label_rects(axis: pg.AxisItem) -> list[tuple[QRectF, str]]:
    """The tick labels ``axis`` draws at its present size, as (rectangle, text), in the
    axis's coordinates: what it paints, computed as it paints it."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        font = axis.style.get("tickFont")
        if font:
            painter.setFont(font)
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    if specs is None:
        return []
    return [(QRectF(rect), text) for rect, _flags, text in specs[2]]


def overlapping(rects: list[tuple[QRectF, str]]) -> list[tuple[str, str]]:
    """The pairs of labels whose rectangles overlap."""
    out = []
    for i, (a, ta) in enumerate(rects):
        for b, tb in rects[i + 1 :]:
            if a.intersects(b):
                out.append((ta, tb))
    return out
