"""A hardware topology drawn by its shape: processors, hardware links (solid), virtual
links (dotted), highlights, zoom, pan, rubber-band selection and drag-to-swap.

Custom painting over numpy arrays, not one ``QGraphicsItem`` per processor: positions
come from :func:`parasol_core.topology.layout.placement`; only what is in the viewport is
drawn, and when more than :data:`DETAIL_LIMIT` processors are visible (a 32 x 32 x 32
torus zoomed out) the processors are one cached image, one pixel per processor, scaled
to the view, and the links are left out (level of detail).

Mouse: wheel zooms about the cursor; the middle or right button drags to pan; the left
button clicks a processor (Ctrl adds to the selection), drags a rubber band over
processors and links from an empty place, or, in swap mode, drags a processor onto
another (``swapRequested``). Keys: Ctrl+= / Ctrl+- zoom, Ctrl+0 fits, arrows pan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import QRubberBand, QSizePolicy, QWidget

from parasol_core.model import Topology
from parasol_core.topology.layout import Placement, link_classes, placement, segments

DETAIL_LIMIT = 3000  # visible processors above which the overview image is drawn
LABEL_SCALE = 16.0  # pixels per grid unit from which processor numbers are written
TYPE_COLOURS = ["#7fb3e6", "#f2b36b", "#8fd18f", "#e68fae", "#b79be6", "#e6d86b",
                "#6bd3d3", "#c9a27e"]  # fmt: skip
VIRTUAL_BOW = 0.12  # how far a dotted virtual link bows out, relative to its length
LINK_COLOUR = QColor("#555555")
VIRTUAL_COLOUR = QColor("#1f5fbf")
ROUTE_COLOUR = QColor("#e0301e")
SELECT_COLOUR = QColor("#ff9900")
HOT_COLOUR = QColor("#c000c0")


def type_colour(type_id: int | None) -> QColor:
    if type_id is None or type_id < 1:
        return QColor("#dddddd")
    return QColor(TYPE_COLOURS[(type_id - 1) % len(TYPE_COLOURS)])


class TopologyCanvas(QWidget):
    hovered = Signal(
        str, object
    )  # ("processor", p) | ("link", id) | ("virtual", (v, w)) | ("", None)
    processorClicked = Signal(int, object)  # processor, Qt.KeyboardModifiers
    selectionChanged = Signal()
    swapRequested = Signal(int, int)  # hardware processor dragged, dropped on
    dragMoved = Signal(int, int)  # hardware processor dragged, under the cursor (0: none)
    viewChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 160)
        self.setAutoFillBackground(True)
        self.swap_mode = False
        self.topology: Topology | None = None
        self.place: Placement = Placement("grid", np.zeros((0, 2)), None)
        self.types = np.zeros(0, dtype=np.int64)
        self.seg_ids = self.seg_a = self.seg_b = np.zeros(0, dtype=np.int64)
        self.seg_wrap = np.zeros(0, dtype=bool)
        self.labels: list[str] | None = None  # text per processor (default: its number)
        self.virtual_a = self.virtual_b = np.zeros(0, dtype=np.int64)  # 0-based hardware
        self.virtual_pairs: list[tuple[int, int]] = []
        self.link_width: dict[int, float] = {}  # link id -> extra width 0..1
        self.hot_links: set[int] = set()
        self.route_links: set[int] = set()
        self.route_processors: set[int] = set()
        self.selected = np.zeros(0, dtype=bool)
        self.selected_links: set[int] = set()
        self.scale = 40.0  # pixels per grid unit
        self.offset = QPointF(20, 20)
        self._overview: QImage | None = None
        self._press: QPointF | None = None
        self._press_button = Qt.MouseButton.NoButton
        self._drag_from: int | None = None
        self._drag_to: int | None = None
        self._band: QRubberBand | None = None
        self._hover: tuple[str, object] = ("", None)
        self._fitted = False

    # ------------------------------------------------------------------ model

    def set_topology(self, topology: Topology | None) -> None:
        """Lay out and draw a topology (None: nothing). Keeps the view when the
        processor count is unchanged."""
        old_count = self.place.count
        self.topology = topology
        if topology is None:
            self.place = Placement("grid", np.zeros((0, 2)), None)
            self.types = np.zeros(0, dtype=np.int64)
            self.seg_ids = self.seg_a = self.seg_b = np.zeros(0, dtype=np.int64)
            self.seg_wrap = np.zeros(0, dtype=bool)
        else:
            self.place = placement(topology)
            n = self.place.count
            self.types = np.zeros(n, dtype=np.int64)
            for p, t in topology.types.items():
                if 1 <= p <= n and isinstance(t, int):
                    self.types[p - 1] = t
            self.refresh_links()
        if self.selected.shape[0] != self.place.count:
            self.selected = np.zeros(self.place.count, dtype=bool)
        self._overview = None
        if old_count != self.place.count or not self._fitted:
            self.fit()
        self.update()

    def refresh_links(self) -> None:
        """Re-read the links (after links were added or removed)."""
        if self.topology is None:
            return
        self.seg_ids, self.seg_a, self.seg_b = segments(self.topology, self.place)
        self.seg_wrap = np.zeros(self.seg_ids.shape[0], dtype=bool)
        if self.place.kind in ("grid", "layers") and self.seg_ids.shape[0]:
            classes = link_classes(self.topology, self.place.shape)
            wrapped = classes.ids[classes.wrap]
            self.seg_wrap = np.isin(self.seg_ids, wrapped)
        self.update()

    def refresh_types(self) -> None:
        if self.topology is None:
            return
        self.types[:] = 0
        for p, t in self.topology.types.items():
            if 1 <= p <= self.place.count and isinstance(t, int):
                self.types[p - 1] = t
        self._overview = None
        self.update()

    def set_virtual(self, pairs: list[tuple[int, int]], hardware: Mapping[int, int]) -> None:
        """Virtual links (virtual processor pairs) and where their ends are mapped."""
        self.virtual_pairs = list(pairs)
        a, b = [], []
        for v, w in pairs:
            a.append(hardware.get(v, 0) - 1)
            b.append(hardware.get(w, 0) - 1)
        self.virtual_a = np.asarray(a, dtype=np.int64)
        self.virtual_b = np.asarray(b, dtype=np.int64)
        self.update()

    def set_labels(self, labels: list[str] | None) -> None:
        self.labels = labels
        self.update()

    def set_route(self, processors: list[int] | tuple[int, ...], links: list[int] | tuple[int, ...],
                  ) -> None:  # fmt: skip
        self.route_processors = set(processors)
        self.route_links = set(links)
        self.update()

    def set_hot_links(self, links: set[int] | list[int] | tuple[int, ...]) -> None:
        self.hot_links = set(links)
        self.update()

    def set_link_widths(self, values: Mapping[int, float] | None) -> None:
        """Per link id a value whose relative size sets the line width (speed, latency,
        load); None: all alike."""
        if not values:
            self.link_width = {}
        else:
            vals = np.asarray([v for v in values.values() if v is not None and v > 0], float)
            if vals.size == 0 or vals.max() == vals.min():
                self.link_width = {k: 0.5 for k in values}
            else:
                lo, hi = math.log(vals.min()), math.log(vals.max())
                self.link_width = {
                    k: (math.log(v) - lo) / (hi - lo) if v and v > 0 else 0.0
                    for k, v in values.items()
                }
        self.update()

    # ------------------------------------------------------------------ selection

    def selected_processors(self) -> list[int]:
        return (np.flatnonzero(self.selected) + 1).tolist()

    def select(self, processors: list[int] | tuple[int, ...], links: list[int] | tuple[int, ...] = (),
               add: bool = False) -> None:  # fmt: skip
        if not add:
            self.selected[:] = False
            self.selected_links = set()
        for p in processors:
            if 1 <= p <= self.selected.shape[0]:
                self.selected[p - 1] = True
        self.selected_links |= set(links)
        self.update()
        self.selectionChanged.emit()

    def select_rect(self, rect: QRectF, add: bool = False) -> None:
        """Select the processors inside a rectangle (widget pixels) and the links whose
        ends both are."""
        xy = self.screen_xy()
        inside = ((xy[:, 0] >= rect.left()) & (xy[:, 0] <= rect.right())
                  & (xy[:, 1] >= rect.top()) & (xy[:, 1] <= rect.bottom()))  # fmt: skip
        both = inside[self.seg_a] & inside[self.seg_b] if self.seg_ids.size else np.zeros(0, bool)
        self.select((np.flatnonzero(inside) + 1).tolist(),
                    sorted(set(self.seg_ids[both].tolist())), add)  # fmt: skip

    # ------------------------------------------------------------------ geometry

    def screen_xy(self) -> np.ndarray:
        return self.place.xy * self.scale + np.array([self.offset.x(), self.offset.y()])

    def screen_point(self, p: int) -> QPointF:
        x, y = self.place.xy[p - 1]
        return QPointF(x * self.scale + self.offset.x(), y * self.scale + self.offset.y())

    def radius(self) -> float:
        return max(1.0, min(self.scale * 0.3, 22.0))

    def fit(self) -> None:
        left, top, right, bottom = self.place.bounds()
        w = max(right - left, 1e-9) + 1.0
        h = max(bottom - top, 1e-9) + 1.0
        size = self.size()
        sw, sh = max(size.width(), 50), max(size.height(), 50)
        self.scale = max(min(sw / w, sh / h), 1e-3)
        self.offset = QPointF((sw - (right - left) * self.scale) / 2 - left * self.scale,
                              (sh - (bottom - top) * self.scale) / 2 - top * self.scale)  # fmt: skip
        self._fitted = True
        self.update()
        self.viewChanged.emit()

    def zoom(self, factor: float, anchor: QPointF | None = None) -> None:
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
        new = min(max(self.scale * factor, 1e-3), 400.0)
        f = new / self.scale
        self.offset = QPointF(anchor.x() - (anchor.x() - self.offset.x()) * f,
                              anchor.y() - (anchor.y() - self.offset.y()) * f)  # fmt: skip
        self.scale = new
        self.update()
        self.viewChanged.emit()

    def pan(self, dx: float, dy: float) -> None:
        self.offset = QPointF(self.offset.x() + dx, self.offset.y() + dy)
        self.update()
        self.viewChanged.emit()

    def processor_at(self, pos: QPointF) -> int | None:
        if not self.place.count:
            return None
        xy = self.screen_xy()
        d2 = (xy[:, 0] - pos.x()) ** 2 + (xy[:, 1] - pos.y()) ** 2
        i = int(np.argmin(d2))
        return i + 1 if d2[i] <= (self.radius() + 3) ** 2 else None

    @staticmethod
    def _nearest_segment(xy: np.ndarray, a: np.ndarray, b: np.ndarray, pos: QPointF,
                         tolerance: float) -> int | None:  # fmt: skip
        ok = (a >= 0) & (b >= 0)
        if not ok.any():
            return None
        p = np.array([pos.x(), pos.y()])
        pa, pb = xy[np.where(ok, a, 0)], xy[np.where(ok, b, 0)]
        d = pb - pa
        length2 = (d**2).sum(axis=1)
        t = np.clip(((p - pa) * d).sum(axis=1) / np.where(length2 > 0, length2, 1), 0, 1)
        dist2 = ((pa + d * t[:, None] - p) ** 2).sum(axis=1)
        dist2[~ok] = np.inf
        i = int(np.argmin(dist2))
        return i if dist2[i] <= tolerance**2 else None

    def _virtual_bends(self, xy: np.ndarray) -> np.ndarray:
        """The middle of each dotted virtual link's curve (it bows to one side so that it
        does not hide the hardware link under it)."""
        pa, pb = xy[np.maximum(self.virtual_a, 0)], xy[np.maximum(self.virtual_b, 0)]
        d = pb - pa
        return (pa + pb) / 2 + np.column_stack((-d[:, 1], d[:, 0])) * (VIRTUAL_BOW / 2)

    def virtual_link_at(self, pos: QPointF) -> tuple[int, int] | None:
        if not self.virtual_pairs:
            return None
        xy = self.screen_xy()
        bends = self._virtual_bends(xy)
        n = len(self.virtual_pairs)
        # each curve as two straight halves: end a - middle, middle - end b
        pts = np.vstack((xy, bends))
        mid = np.arange(n) + xy.shape[0]
        a = np.concatenate((self.virtual_a, mid))
        b = np.concatenate((np.where(self.virtual_a >= 0, mid, -1),
                            np.where(self.virtual_b >= 0, self.virtual_b, -1)))  # fmt: skip
        a = np.where(np.concatenate((self.virtual_a >= 0, self.virtual_b >= 0)), a, -1)
        i = self._nearest_segment(pts, a, b, pos, 4)
        return self.virtual_pairs[i % n] if i is not None else None

    def link_at(self, pos: QPointF) -> int | None:
        if not self.seg_ids.size:
            return None
        plain = ~self.seg_wrap
        a, b = np.where(plain, self.seg_a, -1), np.where(plain, self.seg_b, -1)
        i = self._nearest_segment(self.screen_xy(), a, b, pos, 4)
        return int(self.seg_ids[i]) if i is not None else None

    def virtual_midpoint(self, pair: tuple[int, int]) -> QPointF:
        """The middle of a virtual link's dotted curve, in widget pixels."""
        i = self.virtual_pairs.index(pair)
        m = self._virtual_bends(self.screen_xy())[i]
        return QPointF(float(m[0]), float(m[1]))

    def link_midpoint(self, link_id: int) -> QPointF:
        i = int(np.flatnonzero(self.seg_ids == link_id)[0])
        xy = self.screen_xy()
        m = (xy[self.seg_a[i]] + xy[self.seg_b[i]]) / 2
        return QPointF(float(m[0]), float(m[1]))

    # ------------------------------------------------------------------ painting

    def sizeHint(self) -> QSize:
        return QSize(520, 420)

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        super().resizeEvent(event)
        if not self._fitted or self.place.count:
            self.fit()

    def visible_mask(self) -> np.ndarray:
        xy = self.screen_xy()
        m = self.scale
        return ((xy[:, 0] >= -m) & (xy[:, 0] <= self.width() + m)
                & (xy[:, 1] >= -m) & (xy[:, 1] <= self.height() + m))  # fmt: skip

    def is_overview(self) -> bool:
        return int(self.visible_mask().sum()) > DETAIL_LIMIT

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), self.palette().base())
            self.paint(painter)
        finally:
            painter.end()

    def paint(self, painter: QPainter) -> None:
        if not self.place.count:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no topology")
            return
        xy = self.screen_xy()
        visible = self.visible_mask()
        overview = int(visible.sum()) > DETAIL_LIMIT
        if overview:
            self._paint_overview(painter)
        else:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self._paint_links(painter, xy, visible)
            self._paint_virtual(painter, xy, visible)
            self._paint_route(painter, xy)
            self._paint_processors(painter, xy, visible)
        self._paint_route(painter, xy, rings_only=not overview)
        if self._drag_from is not None:
            self._paint_drag(painter, xy)

    def _overview_image(self) -> QImage:
        if self._overview is None:
            ij = np.rint(self.place.xy - self.place.xy.min(axis=0)).astype(np.int64)
            w, h = int(ij[:, 0].max()) + 1, int(ij[:, 1].max()) + 1
            rgba = np.zeros((h, w, 4), dtype=np.uint8)
            colours = np.array([[*type_colour(int(t)).getRgb()[:3], 255]
                                for t in range(0, int(self.types.max(initial=0)) + 1)],
                               dtype=np.uint8)  # fmt: skip
            rgba[ij[:, 1], ij[:, 0]] = colours[np.clip(self.types, 0, None)]
            image = QImage(rgba.tobytes(), w, h, 4 * w, QImage.Format.Format_RGBA8888)
            self._overview = image.copy()
        return self._overview

    def _paint_overview(self, painter: QPainter) -> None:
        image = self._overview_image()
        lo = self.place.xy.min(axis=0)
        target = QRectF((lo[0] - 0.5) * self.scale + self.offset.x(),
                        (lo[1] - 0.5) * self.scale + self.offset.y(),
                        image.width() * self.scale, image.height() * self.scale)  # fmt: skip
        painter.drawImage(target, image)
        painter.setPen(QColor("#333333"))
        painter.drawText(
            QRect(6, 4, self.width() - 12, 20),
            Qt.AlignmentFlag.AlignRight,
            f"{self.place.count} processors — zoom in for links and numbers",
        )

    def _paint_links(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        if not self.seg_ids.size:
            return
        show = visible[self.seg_a] | visible[self.seg_b]
        base = max(1.0, min(self.scale / 25, 3.0))
        idx = np.flatnonzero(show)
        pens: dict[tuple, list] = {}
        for i in idx.tolist():
            lid = int(self.seg_ids[i])
            colour = LINK_COLOUR
            width = base * (1 + 2.5 * self.link_width.get(lid, 0.0)) if self.link_width else base
            if lid in self.hot_links:
                colour, width = HOT_COLOUR, width + 2
            if lid in self.selected_links:
                colour, width = SELECT_COLOUR, width + 2
            pens.setdefault((colour.name(), round(width, 1), bool(self.seg_wrap[i])), []).append(i)
        for (colour, width, wrap), rows in pens.items():
            pen = QPen(QColor(colour), width)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            if not wrap:
                painter.drawLines([QLineF(*xy[self.seg_a[i]], *xy[self.seg_b[i]]) for i in rows])
            else:
                for i in rows:
                    self._paint_wrap(painter, xy[self.seg_a[i]], xy[self.seg_b[i]])

    def _paint_wrap(self, painter: QPainter, a: np.ndarray, b: np.ndarray) -> None:
        """A wrap-around link: a stub out of each end, away from the other, ending in a
        small arc, so that it reads as leaving the grid and coming back on the far side."""
        d = a - b
        n = float(np.hypot(*d)) or 1.0
        out = d / n * self.scale * 0.42
        for end, direction in ((a, out), (b, -out)):
            tip = end + direction
            painter.drawLine(QPointF(*end), QPointF(*tip))
            r = self.scale * 0.08
            normal = np.array([-direction[1], direction[0]]) / (np.hypot(*direction) or 1) * r
            path = QPainterPath(QPointF(*(tip + normal)))
            path.quadTo(QPointF(*(tip + direction * 0.35)), QPointF(*(tip - normal)))
            painter.drawPath(path)

    def _paint_virtual(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        if not self.virtual_pairs:
            return
        pen = QPen(VIRTUAL_COLOUR, max(1.0, min(self.scale / 30, 2.0)))
        pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        ok = (self.virtual_a >= 0) & (self.virtual_b >= 0)
        lines = []
        for i in np.flatnonzero(ok).tolist():
            a, b = int(self.virtual_a[i]), int(self.virtual_b[i])
            if not (visible[a] or visible[b]) or a == b:
                continue
            pa, pb = xy[a], xy[b]
            # bow the dotted line a little so that it does not hide the hardware link
            mid = (pa + pb) / 2
            d = pb - pa
            normal = np.array([-d[1], d[0]]) * VIRTUAL_BOW
            lines.append((pa, mid + normal, pb))
        for pa, ctrl, pb in lines:
            path = QPainterPath(QPointF(*pa))
            path.quadTo(QPointF(*ctrl), QPointF(*pb))
            painter.drawPath(path)

    def _paint_processors(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        r = self.radius()
        font = QFont(painter.font())
        font.setPixelSize(int(max(8, min(r * 0.9, 14))))
        longest = (
            max((len(t) for t in self.labels), default=1)
            if self.labels
            else len(str(self.place.count))
        )
        labels = self.scale >= LABEL_SCALE and 2 * r >= longest * font.pixelSize() * 0.62
        painter.setFont(font)
        for i in np.flatnonzero(visible).tolist():
            x, y = xy[i]
            colour = type_colour(int(self.types[i]))
            selected = bool(self.selected[i])
            painter.setPen(QPen(SELECT_COLOUR if selected else QColor("#333333"),
                                3 if selected else 1))  # fmt: skip
            painter.setBrush(colour)
            rect = QRectF(x - r, y - r, 2 * r, 2 * r)
            if r < 3:
                painter.fillRect(rect, colour)
                continue
            painter.drawRoundedRect(rect, r * 0.3, r * 0.3)
            if labels:
                text = self.labels[i] if self.labels is not None else str(i + 1)
                painter.setPen(QColor("#000000"))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def _paint_route(self, painter: QPainter, xy: np.ndarray, rings_only: bool = False) -> None:
        """The highlighted route: its links under the processors, rings around them on top."""
        if not (self.route_links or self.route_processors):
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        pen = QPen(ROUTE_COLOUR, max(2.5, min(self.scale / 10, 6)))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        rows = np.flatnonzero(np.isin(self.seg_ids, list(self.route_links)))
        for i in [] if rings_only else rows.tolist():
            a, b = xy[self.seg_a[i]], xy[self.seg_b[i]]
            if self.seg_wrap[i]:
                self._paint_wrap(painter, a, b)
            else:
                painter.drawLine(QPointF(*a), QPointF(*b))
        r = self.radius() + 2
        painter.setPen(QPen(ROUTE_COLOUR, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for p in self.route_processors if rings_only else ():
            if 1 <= p <= self.place.count:
                x, y = xy[p - 1]
                painter.drawRoundedRect(QRectF(x - r, y - r, 2 * r, 2 * r), r * 0.3, r * 0.3)

    def _paint_drag(self, painter: QPainter, xy: np.ndarray) -> None:
        pen = QPen(SELECT_COLOUR, 3)
        painter.setPen(pen)
        r = self.radius() + 4
        for p in (self._drag_from, self._drag_to):
            if p:
                x, y = xy[p - 1]
                painter.drawRect(QRectF(x - r, y - r, 2 * r, 2 * r))

    def export_png(self, path: str) -> bool:
        return self.grab().save(path)

    def export_svg(self, path: str) -> None:
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(path)
        gen.setSize(self.size())
        gen.setViewBox(QRect(0, 0, self.width(), self.height()))
        gen.setTitle("PIUI topology")
        painter = QPainter(gen)
        try:
            painter.fillRect(QRect(0, 0, self.width(), self.height()), QColor("white"))
            self.paint(painter)
        finally:
            painter.end()

    # ------------------------------------------------------------------ input

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom(1.25**steps, event.position())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        step = 40
        if ctrl and key in (Qt.Key.Key_Equal, Qt.Key.Key_Plus):
            self.zoom(1.25)
        elif ctrl and key == Qt.Key.Key_Minus:
            self.zoom(0.8)
        elif ctrl and key == Qt.Key.Key_0:
            self.fit()
        elif key == Qt.Key.Key_Left:
            self.pan(step, 0)
        elif key == Qt.Key.Key_Right:
            self.pan(-step, 0)
        elif key == Qt.Key.Key_Up:
            self.pan(0, step)
        elif key == Qt.Key.Key_Down:
            self.pan(0, -step)
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.setFocus()
        self._press = event.position()
        self._press_button = event.button()
        if event.button() == Qt.MouseButton.LeftButton:
            p = self.processor_at(event.position())
            if self.swap_mode and p is not None:
                self._drag_from, self._drag_to = p, None
                self.update()
            elif p is None:
                self._band = QRubberBand(QRubberBand.Shape.Rectangle, self)
                self._band.setGeometry(QRect(event.position().toPoint(), QSize()))
                self._band.show()
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        if self._press is not None and self._press_button in (
            Qt.MouseButton.MiddleButton,
            Qt.MouseButton.RightButton,
        ):
            d = pos - self._press
            self._press = pos
            self.pan(d.x(), d.y())
            return
        if self._drag_from is not None:
            target = self.processor_at(pos)
            if target != self._drag_to:
                self._drag_to = target
                self.dragMoved.emit(self._drag_from, target or 0)
                self.update()
            return
        if self._band is not None and self._press is not None:
            self._band.setGeometry(QRect(self._press.toPoint(), pos.toPoint()).normalized())
            return
        self._update_hover(pos)

    def _update_hover(self, pos: QPointF) -> None:
        hover: tuple[str, object] = ("", None)
        p = self.processor_at(pos)
        if p is not None:
            hover = ("processor", p)
        else:
            v = self.virtual_link_at(pos) if not self.is_overview() else None
            if v is not None:
                hover = ("virtual", v)
            else:
                lid = self.link_at(pos) if not self.is_overview() else None
                if lid is not None:
                    hover = ("link", lid)
        if hover != self._hover:
            self._hover = hover
            self.hovered.emit(*hover)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        add = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if self._drag_from is not None:
            src, target = self._drag_from, self.processor_at(pos)
            self._drag_from = self._drag_to = None
            self.update()
            if target is not None and target != src:
                self.swapRequested.emit(src, target)
            elif target == src:
                self.processorClicked.emit(src, event.modifiers())
        elif self._band is not None:
            rect = QRectF(self._band.geometry())
            self._band.hide()
            self._band.deleteLater()
            self._band = None
            if rect.width() > 3 or rect.height() > 3:
                self.select_rect(rect, add)
            else:
                lid = self.link_at(pos)
                self.select([], [lid] if lid is not None else [], add)
        elif event.button() == Qt.MouseButton.LeftButton:
            p = self.processor_at(pos)
            if p is not None:
                self.select([p], [], add)
                self.processorClicked.emit(p, event.modifiers())
        self._press = None
        self._press_button = Qt.MouseButton.NoButton
        event.accept()

    def leaveEvent(self, event) -> None:  # noqa: ANN001
        if self._hover != ("", None):
            self._hover = ("", None)
            self.hovered.emit("", None)
        super().leaveEvent(event)
