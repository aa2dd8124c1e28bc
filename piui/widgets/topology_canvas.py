"""A hardware topology drawn by its shape: processors, hardware links (solid), virtual
links (dotted), highlights, zoom, pan, rubber-band selection and drag-to-swap.

Custom painting over numpy arrays, not one ``QGraphicsItem`` per processor: positions
come from :func:`parasol_core.topology.layout.placement`; only what is in the viewport is
drawn (the processors in it found through the placement's tiles, their links through a
processor -> segments table, lines cut to the view), and when more than
:data:`DETAIL_LIMIT` processors are visible (a 32 x 32 x 32 torus zoomed out), or more
than :data:`DETAIL_SMALL` at under :data:`MIN_DETAIL_SCALE` pixels a grid unit, the
processors are one cached image, a pixel per grid unit or the mean colour of several
(at most :data:`OVERVIEW_SIDE` pixels a side), scaled to the view, and the links are
left out but for a fat tree's or a dragonfly's, drawn into the image (level of detail).
Switches are discs in a darker colour of their type, processors rounded boxes; links
between the blocks of a nested grid (dimensions 3 to 6) bowed, in a lighter blue.

Speed (one frame, 16 ms, is the budget of a pan, a zoom or a swap): nothing is drawn
item by item through Python where a batch will do. Hardware links are one
``QPainterPath`` per pen, built from numpy arrays in one go (:func:`path_from_arrays`);
dotted virtual links are one path drawn with a one-pixel dotted pen (Qt's cosmetic
stroker dashes it without a per-link dash computation; more than
:data:`VIRTUAL_AA_LIMIT` in view are drawn without antialiasing) or, with a wider pen
when zoomed in on a few, their curves flattened into line segments drawn in one
``drawLines`` call (Qt's fast dashed-line rasteriser); processors are pre-drawn sprites
(one per type colour and selection state at the current size) blitted in place, and
their numbers cached ``QStaticText``. A repaint of an unchanged view (a swap, a hover, a
drag preview) takes the plain links and the boxes from two cached layers.

Mouse: wheel zooms about the cursor; the middle or right button drags to pan; the left
button clicks a processor (Ctrl adds to the selection), drags a rubber band over
processors and links from an empty place, or, in swap mode, drags a processor onto
another (``swapRequested``). Keys: Ctrl+= / Ctrl+- zoom, Ctrl+0 fits, arrows pan.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QByteArray,
    QDataStream,
    QLineF,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPixmap,
    QStaticText,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QRubberBand, QSizePolicy, QWidget

from parasol_core.base.words import counted
from parasol_core.model import Topology
from parasol_core.model.inttable import int_columns
from parasol_core.topology.layout import (
    Placement,
    link_classes,
    link_pairs,
    placement,
    segments,
)

DETAIL_LIMIT = 3000  # visible processors above which the overview image is drawn
# processors in the tiles a view touches above which it is drawn as the overview
# without counting exactly which are in view (a huge model zoomed out)
OVERVIEW_CAP = 20 * DETAIL_LIMIT
OVERVIEW_SIDE = 2048  # pixels of the overview image's longer side, at most
MIN_DETAIL_SCALE = 3.0  # pixels a grid unit below which processors are aggregated ...
DETAIL_SMALL = 500  # ... when more than this many are in view
# links drawn into the overview image (a fat tree's or a dragonfly's structure), at most;
# a grid's links are not (they would fill it)
OVERVIEW_LINKS = 2_000_000
MAX_SCALE = 400.0  # pixels per grid unit, at most
MIN_LABEL_PX = 7  # the smallest number written in a box (pixels)
TYPE_COLOURS = ["#7fb3e6", "#f2b36b", "#8fd18f", "#e68fae", "#b79be6", "#e6d86b",
                "#6bd3d3", "#c9a27e"]  # fmt: skip
VIRTUAL_BOW = 0.12  # how far a dotted virtual link bows out, relative to its length
# how far a link between blocks of a nested grid (dimensions 3 to 6) bows out, so that it
# does not lie over the links of the blocks it crosses
LINK_BOW = 0.18
BOW_COLOUR = QColor("#6d9fb8")  # links between blocks, lighter (opaque: blending is slow)
BOW_STEPS = 8  # straight pieces a bowed link is drawn as
# pixels of links (length x width) in one pen above which they are drawn without
# antialiasing (a frame's worth of antialiased strokes on a 2-core machine)
LINK_AA_INK = 100_000
WRAP_ARC_STEPS = 4  # straight pieces the arc at the end of a wrap-around stub is drawn as
LINK_COLOUR = QColor("#555555")
BAR_WIDTH = 3.0  # a bus's bar, as wide as this many of its links
VIRTUAL_COLOUR = QColor("#1f5fbf")
ROUTE_COLOUR = QColor("#e0301e")
SELECT_COLOUR = QColor("#ff9900")
HOT_COLOUR = QColor("#c000c0")


def _distinct(values: np.ndarray) -> list:
    """The distinct values of a small-valued array, sorted: the groups a paint draws
    with one pen each. Not ``np.unique``: numpy 2 imports ``numpy.ma`` on its first call,
    some 30 ms of PIUI's start-up, for arrays of a few thousand values at most."""
    return sorted(set(values.tolist()))


VIRTUAL_AA_LIMIT = 256  # visible virtual links above which they are drawn thin, aliased
CURVE_STEPS = 12  # line segments per dotted curve (wide pen), at most
TEXT_CACHE = 20000  # laid-out processor numbers kept
STATIC_TEXTS_PER_FRAME = 32  # numbers laid out as QStaticText in one paint, at most
SPRITE_MARGIN = 3  # pixels around a processor's sprite for its outline


# switches (processor types marked '# piui: role = switch') in darker colours, as circles
SWITCH_COLOURS = ["#4d6d8c", "#8c5a3c", "#4d7f4d", "#7f4d66", "#5f4d8c", "#7f7640"]


def type_colour(type_id: int | None, switch: bool = False) -> QColor:
    if type_id is None or type_id < 1:
        return QColor("#888888" if switch else "#dddddd")
    palette = SWITCH_COLOURS if switch else TYPE_COLOURS
    return QColor(palette[(type_id - 1) % len(palette)])


class ScreenXY:
    """Processors' widget positions at the current view, computed for the processors
    asked for (``xy[indices]``, ``xy[i]``), not for all of them each frame: a view of a
    1,000,000-processor torus draws a few thousand."""

    __slots__ = ("xy", "scale", "offset")

    def __init__(self, xy: np.ndarray, scale: float, offset: np.ndarray) -> None:
        self.xy, self.scale, self.offset = xy, scale, offset

    def __getitem__(self, index: Any) -> np.ndarray:
        return self.xy[index] * self.scale + self.offset

    @property
    def shape(self) -> tuple[int, ...]:
        return self.xy.shape


# QPainterPath element types, as QDataStream writes them
_MOVE, _LINE, _CURVE, _CURVE_DATA = 0, 1, 2, 3
_ELEMENT = np.dtype([("type", ">i4"), ("x", ">f8"), ("y", ">f8")])


def path_from_arrays(types: np.ndarray, points: np.ndarray) -> QPainterPath:
    """A ``QPainterPath`` of many elements at once: element types (0 move, 1 line, 2 and
    3 a cubic's control and data points) and their points, read through ``QDataStream``
    instead of one Python call per element."""
    n = int(types.shape[0])
    if not n:
        return QPainterPath()
    rows = np.empty(n, dtype=_ELEMENT)
    rows["type"] = types
    rows["x"] = points[:, 0]
    rows["y"] = points[:, 1]
    data = struct.pack(">i", n) + rows.tobytes() + struct.pack(">ii", 0, 0)
    path = QPainterPath()
    stream = QDataStream(QByteArray(data))
    stream >> path  # QDataStream's operator>> reads into path
    return path


def lines_path(a: np.ndarray, b: np.ndarray) -> QPainterPath:
    """Straight segments a[i] - b[i] as one path."""
    pts = np.empty((2 * a.shape[0], 2))
    pts[0::2], pts[1::2] = a, b
    return path_from_arrays(np.tile(np.array([_MOVE, _LINE]), a.shape[0]), pts)


def quads_path(a: np.ndarray, c: np.ndarray, b: np.ndarray) -> QPainterPath:
    """Quadratic curves a[i] -(c[i])- b[i] as one path (each the cubic QPainterPath.quadTo
    makes of it)."""
    pts = np.empty((4 * a.shape[0], 2))
    pts[0::4], pts[3::4] = a, b
    pts[1::4] = a + (c - a) * (2.0 / 3.0)
    pts[2::4] = b + (c - b) * (2.0 / 3.0)
    kinds = np.tile(np.array([_MOVE, _CURVE, _CURVE_DATA, _CURVE_DATA]), a.shape[0])
    return path_from_arrays(kinds, pts)


def clip_segments(seg: np.ndarray, left: float, top: float, right: float,
                  bottom: float) -> np.ndarray:  # fmt: skip
    """Segments (rows x1, y1, x2, y2) cut to a rectangle (Liang-Barsky), those outside
    it dropped."""
    p, d = seg[:, :2], seg[:, 2:] - seg[:, :2]
    t0, t1 = np.zeros(seg.shape[0]), np.ones(seg.shape[0])
    keep = np.ones(seg.shape[0], dtype=bool)
    for axis, lo, hi in ((0, left, right), (1, top, bottom)):
        dd, pp = d[:, axis], p[:, axis]
        still = dd == 0
        keep &= ~still | ((pp >= lo) & (pp <= hi))
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (lo - pp) / dd, (hi - pp) / dd
        enter, leave = np.minimum(a, b), np.maximum(a, b)
        t0 = np.where(still, t0, np.maximum(t0, enter))
        t1 = np.where(still, t1, np.minimum(t1, leave))
    keep &= t0 <= t1
    p, d, t0, t1 = p[keep], d[keep], t0[keep, None], t1[keep, None]
    return np.hstack((p + d * t0, p + d * t1))


def flattened_quads(a: np.ndarray, c: np.ndarray, b: np.ndarray, steps: int) -> np.ndarray:
    """Quadratic curves as ``steps`` straight segments each: rows (x1, y1, x2, y2)."""
    t = np.linspace(0.0, 1.0, steps + 1)[None, :, None]
    pts = (1 - t) ** 2 * a[:, None, :] + 2 * (1 - t) * t * c[:, None, :] + t**2 * b[:, None, :]
    return np.concatenate((pts[:, :-1], pts[:, 1:]), axis=2).reshape(-1, 4)


class TopologyCanvas(QWidget):
    hovered = Signal(
        str, object
    )  # ("processor", p) | ("link", id) | ("virtual", (v, w)) | ("", None)
    processorClicked = Signal(int, object)  # processor, Qt.KeyboardModifiers
    selectionChanged = Signal()
    swapRequested = Signal(int, int)  # hardware processor dragged, dropped on
    dragMoved = Signal(int, int)  # hardware processor dragged, under the cursor (0: none)
    viewChanged = Signal()
    exportRequested = Signal()  # "Export the drawing…" on the right-click menu

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 160)
        # paintEvent fills every pixel: Qt need not paint the widgets underneath first
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.swap_mode = False
        self.topology: Topology | None = None
        self.place: Placement = Placement("grid", np.zeros((0, 2)), None)
        self.types = np.zeros(0, dtype=np.int64)
        self.switches = np.zeros(0, dtype=bool)  # per processor (0-based): a switch
        self.seg_ids = self.seg_a = self.seg_b = np.zeros(0, dtype=np.int64)
        self.seg_wrap = np.zeros(0, dtype=bool)
        self.seg_bow = np.zeros(0, dtype=bool)  # drawn bowed: links between blocks
        # drawn with bends (a block of terminals wired as an org chart): the row of the
        # placement's bends, -1 for a straight segment
        self.seg_bend = np.zeros(0, dtype=np.int64)
        self._seg_csr: tuple[np.ndarray, np.ndarray] | None = None
        # buses drawn as bars (grid units): link id per bar, the bars (x0, y0, x1, y1),
        # and the stubs from each processor on a bus to its bar, with their bar's row
        # and the processor (0-based)
        self.bus_ids = np.zeros(0, dtype=np.int64)
        self.bus_bars = np.zeros((0, 4))
        self.stubs = np.zeros((0, 4))
        self.stub_bus = self.stub_member = np.zeros(0, dtype=np.int64)
        self.labels: list[str] | None = None  # text per processor (default: its number)
        self.virtual_a = self.virtual_b = np.zeros(0, dtype=np.int64)  # 0-based hardware
        self.virtual_pairs: list[tuple[int, int]] = []
        self._pairs_source: object = None
        self._pair_array = np.zeros((0, 2), dtype=np.int64)
        self._sprites: dict[tuple, QPixmap] = {}
        self._layers: dict[str, tuple[tuple, QPixmap]] = {}
        self._static_version = 0  # of what the links and boxes layers show
        self._painted_view: tuple = ()
        self._sprite_radius: tuple[float, float] = (-1.0, 1.0)
        # (pixel size, text) -> [half its width, its QStaticText or None];
        # (pixel size, character, None) -> the character's advance
        self._texts: dict[tuple, Any] = {}
        self.link_width: dict[int, float] = {}  # link id -> extra width 0..1
        self.hot_links: set[int] = set()
        self.route_links: set[int] = set()
        self.route_processors: set[int] = set()
        self.selected = np.zeros(0, dtype=bool)
        self.selected_links: set[int] = set()
        self.scale = 40.0  # pixels per grid unit
        self.offset = QPointF(20, 20)
        self._overview: tuple[QImage, float, np.ndarray] | None = None
        self._press: QPointF | None = None
        self._press_at: QPointF | None = None  # where the button went down
        self._press_button = Qt.MouseButton.NoButton
        self._drag_from: int | None = None
        self._drag_to: int | None = None
        self._band: QRubberBand | None = None
        self._hover: tuple[str, object] = ("", None)
        self._fitted = False
        self._moved = False  # zoomed or panned since the last fit
        self._size: tuple[float, float] | None = None  # an export's size, drawing
        self._shapes = False  # boxes drawn as shapes, not sprites (an export)
        self.labels_drawn = 0  # processor numbers written by the last paint

    # ------------------------------------------------------------------ model

    def set_topology(self, topology: Topology | None,
                     switches: np.ndarray | None = None) -> None:  # fmt: skip
        """Lay out and draw a topology (None: nothing); ``switches`` (indexed by
        processor number, :func:`~parasol_core.topology.switches.switch_mask`) says
        which processors are switches, drawn apart. Keeps the view when the processor
        count is unchanged."""
        old_count = self.place.count
        self.topology = topology
        if topology is None:
            self.place = Placement("grid", np.zeros((0, 2)), None)
            self.types = np.zeros(0, dtype=np.int64)
            self.switches = np.zeros(0, dtype=bool)
            self.seg_ids = self.seg_a = self.seg_b = np.zeros(0, dtype=np.int64)
            self.seg_wrap = np.zeros(0, dtype=bool)
            self.seg_bow = np.zeros(0, dtype=bool)
            self._seg_csr = None
            self._read_bars()
            self._read_bends()
        else:
            self.place = placement(topology, switches=switches)
            n = self.place.count
            self.switches = np.zeros(n, dtype=bool)
            if switches is not None:
                self.switches[: min(n, switches.shape[0] - 1)] = switches[1 : n + 1]
            self.types = self._type_array(topology, n)
            self.refresh_links()
        if self.selected.shape[0] != self.place.count:
            self.selected = np.zeros(self.place.count, dtype=bool)
        self._overview = None
        if old_count != self.place.count or not self._fitted:
            self.fit()
        self._changed()

    def refresh_links(self) -> None:
        """Re-read the links (after links were added or removed)."""
        if self.topology is None:
            return
        pairs = link_pairs(self.topology)  # one pass over the links for both
        self.seg_ids, self.seg_a, self.seg_b = segments(self.topology, self.place, pairs)
        self._read_bars()
        self._read_bends()
        self.seg_wrap = np.zeros(self.seg_ids.shape[0], dtype=bool)
        self.seg_bow = np.zeros(self.seg_ids.shape[0], dtype=bool)
        self._seg_csr = None
        if self.place.kind in ("grid", "layers") and self.seg_ids.shape[0]:
            classes = link_classes(self.topology, self.place.shape, pairs)
            if not pairs.others and classes.ids.shape[0] == self.seg_ids.shape[0]:
                # segments are the pairs, row for row
                self.seg_wrap = classes.wrap.copy()
                self.seg_bow = (classes.axis >= 2) & ~classes.wrap
            else:
                self.seg_wrap = np.isin(self.seg_ids, classes.ids[classes.wrap])
                self.seg_bow = np.isin(self.seg_ids, classes.ids[classes.axis >= 2]) & ~(
                    self.seg_wrap)  # fmt: skip
        self._changed()

    def _read_bars(self) -> None:
        """The buses the placement draws as bars, and a stub from each of their
        processors to the nearest point of its bar (grid units)."""
        bars = self.place.bars
        if bars is None or not len(bars):
            self.bus_ids = np.zeros(0, dtype=np.int64)
            self.bus_bars = np.zeros((0, 4))
            self.stubs = np.zeros((0, 4))
            self.stub_bus = self.stub_member = np.zeros(0, dtype=np.int64)
            return
        self.bus_ids, self.bus_bars = bars.ids.copy(), bars.ends.copy()
        stubs, owner, member = [], [], []
        for k in range(len(bars)):
            m = bars.members_of(k)
            m = m[m < self.place.count]
            xy = self.place.xy[m]
            stubs.append(np.hstack((xy, bars.foot(k, xy))))
            owner.append(np.full(m.size, k, dtype=np.int64))
            member.append(m)
        self.stubs = np.vstack(stubs)
        self.stub_bus, self.stub_member = np.concatenate(owner), np.concatenate(member)

    def _read_bends(self) -> None:
        """Which drawn segments the placement bends (:attr:`Placement.bends`)."""
        self.seg_bend = np.full(self.seg_ids.shape[0], -1, dtype=np.int64)
        bends = self.place.bends
        if bends is None or not self.seg_ids.size:
            return
        # a bent link is known by its two ends, (terminal, switch), either way round; a
        # terminal has one link, so its row of the bends is found from it (in bulk: a
        # fat tree has one per compute processor)
        row = np.full(self.place.count, -1, dtype=np.int64)
        row[bends.ends[:, 0]] = np.arange(bends.ends.shape[0])
        for t, h in ((self.seg_a, self.seg_b), (self.seg_b, self.seg_a)):
            at = row[t]
            hit = (at >= 0) & (bends.ends[np.maximum(at, 0), 1] == h)
            self.seg_bend[hit] = at[hit]

    def _bent_pieces(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The straight pieces (widget pixels, rows x1, y1, x2, y2) of the bent
        segments ``rows``, from the terminal through the bends to the switch, and the
        row of ``rows`` each belongs to."""
        bends = self.place.bends
        if bends is None or not rows.size:
            return np.zeros((0, 4)), np.zeros(0, dtype=np.int64)
        at = self.seg_bend[rows]
        terminal = bends.ends[at, 0]
        o = np.array([self.offset.x(), self.offset.y()])
        pts = np.concatenate((self.place.xy[terminal][:, None, :], bends.points[at],
                              self.place.xy[bends.ends[at, 1]][:, None, :]), axis=1)  # fmt: skip
        pts = pts * self.scale + o
        pieces = np.concatenate((pts[:, :-1], pts[:, 1:]), axis=2).reshape(-1, 4)
        return pieces, np.repeat(np.arange(rows.shape[0]), pts.shape[1] - 1)

    def bus_midpoint(self, link_id: int) -> QPointF | None:
        """The middle of a bus's bar, in widget pixels (None: no bar for it)."""
        at = np.flatnonzero(self.bus_ids == link_id)
        if not at.size:
            return None
        x0, y0, x1, y1 = self.bus_bars[int(at[0])]
        return QPointF((x0 + x1) / 2 * self.scale + self.offset.x(),
                       (y0 + y1) / 2 * self.scale + self.offset.y())  # fmt: skip

    def _bus_pieces(self, ids: set[int] | None = None,
                    members: set[int] | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """The bars and the stubs (widget pixels, rows x1, y1, x2, y2) of the buses
        ``ids`` (all: None), the stubs only of the processors ``members`` (1-based;
        all: None)."""
        o = np.array([self.offset.x(), self.offset.y()] * 2)
        keep = (np.isin(self.bus_ids, np.fromiter(ids, np.int64)) if ids is not None
                else np.ones(self.bus_ids.shape[0], dtype=bool))  # fmt: skip
        stub = keep[self.stub_bus]
        if members is not None:
            stub &= np.isin(self.stub_member + 1, np.fromiter(members, np.int64))
        return self.bus_bars[keep] * self.scale + o, self.stubs[stub] * self.scale + o

    @staticmethod
    def _type_array(topology: Topology, n: int) -> np.ndarray:
        """Each processor's type id (0: none), from the procid table in bulk."""
        types = np.zeros(n, dtype=np.int64)
        if not topology.types:
            return types
        found = int_columns(topology.types)  # a table read in bulk: its own columns
        if found is not None:
            numbers, values = found
        else:  # a value that is not a whole number: type 0 (none)
            numbers = np.fromiter(topology.types.keys(), np.int64, len(topology.types))
            values = np.fromiter(((t if isinstance(t, int) else 0)
                                  for t in topology.types.values()),
                                 np.int64, len(topology.types))  # fmt: skip
        ok = (numbers >= 1) & (numbers <= n)
        types[numbers[ok] - 1] = values[ok]
        return types

    def refresh_types(self, switches: np.ndarray | None = None) -> None:
        if self.topology is None:
            return
        self.types = self._type_array(self.topology, self.place.count)
        if switches is not None:
            n = self.place.count
            self.switches = np.zeros(n, dtype=bool)
            self.switches[: min(n, switches.shape[0] - 1)] = switches[1 : n + 1]
        self._overview = None
        self._changed()

    def segment_rows(self, processors: np.ndarray) -> np.ndarray:
        """The rows of the drawn segments that touch any of the given processors
        (0-based), ascending: from a processor -> segments table made on first use, so
        that a view draws the links of what it shows without a pass over them all."""
        if self._seg_csr is None:
            n = self.place.count
            ends = np.concatenate((self.seg_a, self.seg_b))
            rows = np.tile(np.arange(self.seg_ids.shape[0], dtype=np.int64), 2)
            order = np.argsort(ends, kind="stable")
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(ends, minlength=n), out=ptr[1:])
            self._seg_csr = (ptr, rows[order])
        ptr, rows = self._seg_csr
        processors = np.asarray(processors, dtype=np.int64)
        lengths = ptr[processors + 1] - ptr[processors]
        total = int(lengths.sum())
        if not total:
            return np.zeros(0, dtype=np.int64)
        first = np.repeat(ptr[processors] - np.concatenate(([0], np.cumsum(lengths)[:-1])),
                          lengths)  # fmt: skip
        found = np.sort(rows[first + np.arange(total, dtype=np.int64)])
        # distinct by hand: np.unique imports numpy.ma on its first call (start-up)
        return found[np.concatenate(([True], found[1:] != found[:-1]))]

    def set_virtual(self, pairs: Sequence[tuple[int, int]], hardware: Mapping[int, int]) -> None:
        """Virtual links (virtual processor pairs) and where their ends are mapped. The
        same pairs again (after a swap) only move their ends."""
        if pairs is not self._pairs_source or len(pairs) != len(self.virtual_pairs):
            self._pairs_source = pairs
            self.virtual_pairs = list(pairs)
            self._pair_array = np.asarray(self.virtual_pairs, dtype=np.int64).reshape(-1, 2)
        ends = self._pair_array
        top = int(ends.max(initial=0))
        lookup = np.zeros(top + 1, dtype=np.int64)  # virtual -> hardware (0: unmapped)
        count = self.place.count
        for v, h in hardware.items():
            if 0 < v <= top and isinstance(h, int) and 0 < h <= count:
                lookup[v] = h
        self.virtual_a = lookup[ends[:, 0]] - 1
        self.virtual_b = lookup[ends[:, 1]] - 1
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
        self._changed()

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
        self._changed()
        self.selectionChanged.emit()

    def select_rect(self, rect: QRectF, add: bool = False) -> None:
        """Select the processors inside a rectangle (widget pixels) and the links whose
        ends both are."""
        xy = self.screen_xy()
        inside = ((xy[:, 0] >= rect.left()) & (xy[:, 0] <= rect.right())
                  & (xy[:, 1] >= rect.top()) & (xy[:, 1] <= rect.bottom()))  # fmt: skip
        both = inside[self.seg_a] & inside[self.seg_b] if self.seg_ids.size else np.zeros(0, bool)
        links = set(self.seg_ids[both].tolist())
        if self.bus_ids.size:  # a bus whose processors all are
            out = np.bincount(self.stub_bus[~inside[self.stub_member]],
                              minlength=self.bus_ids.shape[0])  # fmt: skip
            links |= set(self.bus_ids[out == 0].tolist())
        self.select((np.flatnonzero(inside) + 1).tolist(), sorted(links), add)

    # ------------------------------------------------------------------ geometry

    def screen_xy(self) -> np.ndarray:
        return self.place.xy * self.scale + np.array([self.offset.x(), self.offset.y()])

    def lazy_xy(self) -> ScreenXY:
        """Widget positions computed only for the processors asked for."""
        return ScreenXY(self.place.xy, self.scale, np.array([self.offset.x(), self.offset.y()]))

    def _units(self, left: float, top: float, right: float, bottom: float) -> tuple:
        """A rectangle of widget pixels in grid units."""
        s, ox, oy = self.scale, self.offset.x(), self.offset.y()
        return ((left - ox) / s, (top - oy) / s, (right - ox) / s, (bottom - oy) / s)

    def _near(self, left: float, top: float, right: float, bottom: float) -> np.ndarray:
        """0-based indices of the processors inside a rectangle of widget pixels,
        ascending (found through the placement's tiles)."""
        cand = self.place.tiles.indices(*self._units(left, top, right, bottom))
        xy = self.place.xy[cand] * self.scale + np.array([self.offset.x(), self.offset.y()])
        keep = ((xy[:, 0] >= left) & (xy[:, 0] <= right)
                & (xy[:, 1] >= top) & (xy[:, 1] <= bottom))  # fmt: skip
        return np.sort(cand[keep])

    def screen_point(self, p: int) -> QPointF:
        x, y = self.place.xy[p - 1]
        return QPointF(x * self.scale + self.offset.x(), y * self.scale + self.offset.y())

    def radius(self) -> float:
        return max(1.0, min(self.scale * 0.3, 22.0))

    def _w(self) -> float:
        """The width of what is drawn: the widget's, or an export's."""
        return self._size[0] if self._size is not None else self.width()

    def _h(self) -> float:
        return self._size[1] if self._size is not None else self.height()

    def _fitted_view(self, width: float, height: float) -> tuple[float, QPointF]:
        """The scale and offset that show the whole drawing in ``width`` x ``height``
        pixels, half a grid unit of margin around it."""
        left, top, right, bottom = self.place.bounds()
        w = max(right - left, 1e-9) + 1.0
        h = max(bottom - top, 1e-9) + 1.0
        sw, sh = max(width, 50), max(height, 50)
        scale = max(min(sw / w, sh / h), 1e-3)
        return scale, QPointF((sw - (right - left) * scale) / 2 - left * scale,
                              (sh - (bottom - top) * scale) / 2 - top * scale)  # fmt: skip

    def shown_rect(self) -> QRect:
        """The part of the canvas on screen: all of it, or what a scroll area or a dock
        too short for it leaves in view (the whole canvas while it is not shown)."""
        region = self.visibleRegion()
        return self.rect() if region.isEmpty() else region.boundingRect() & self.rect()

    def fit(self) -> None:
        """The whole topology in what is visible of the canvas (not in the part of it a
        scroll area hides)."""
        area = self.shown_rect()
        self.scale, offset = self._fitted_view(area.width(), area.height())
        self.offset = offset + QPointF(area.x(), area.y())
        self._fitted = True
        self._moved = False
        self.update()
        self.viewChanged.emit()

    def zoom(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom by ``factor`` about ``anchor`` (widget pixels; the centre when None):
        the point of the drawing under it stays under it."""
        anchor = anchor if anchor is not None else QPointF(self.width() / 2, self.height() / 2)
        new = min(max(self.scale * factor, 1e-3), MAX_SCALE)
        f = new / self.scale
        self.offset = QPointF(anchor.x() - (anchor.x() - self.offset.x()) * f,
                              anchor.y() - (anchor.y() - self.offset.y()) * f)  # fmt: skip
        self.scale = new
        self._moved = True
        self.update()
        self.viewChanged.emit()

    def pan(self, dx: float, dy: float) -> None:
        self.offset = QPointF(self.offset.x() + dx, self.offset.y() + dy)
        self._moved = True
        self.update()
        self.viewChanged.emit()

    def processor_at(self, pos: QPointF) -> int | None:
        if not self.place.count:
            return None
        r = self.radius() + 3
        near = self._near(pos.x() - r, pos.y() - r, pos.x() + r, pos.y() + r)
        if not near.size:
            return None
        xy = self.place.xy[near] * self.scale + np.array([self.offset.x(), self.offset.y()])
        d2 = (xy[:, 0] - pos.x()) ** 2 + (xy[:, 1] - pos.y()) ** 2
        i = int(np.argmin(d2))  # the lowest-numbered of the nearest
        return int(near[i]) + 1 if d2[i] <= r**2 else None

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
        """The link drawn under ``pos`` (within 4 pixels): a straight link, or a
        bowed one (between blocks of a nested grid) taken as its two halves; the links
        of the processors in view only; a bus by its bar or a stub."""
        bus = self._bus_at(pos)
        if bus is not None:
            return bus
        if not self.seg_ids.size:
            return None
        rows = self.segment_rows(self.visible_indices())
        rows = rows[~self.seg_wrap[rows]]
        if not rows.size:
            return None
        xy = self.lazy_xy()
        pa, pb = xy[self.seg_a[rows]], xy[self.seg_b[rows]]
        bow = self.seg_bow[rows]
        bent = self.seg_bend[rows] >= 0 if self.seg_bend.size else np.zeros(rows.size, bool)
        bow &= ~bent
        straight = np.flatnonzero(~bow & ~bent)
        # a bowed link: the pieces drawn of it; a bent one: its stub first (the pieces
        # up the spine and along the rail are its block's, shared)
        curved, owner = self._bowed_pieces(pa[bow], pb[bow])
        stubs, by = self._bent_pieces(rows[bent])
        first = np.concatenate(([True], by[1:] != by[:-1])) if by.size else by.astype(bool)
        stubs, by = (
            np.vstack((stubs[first], stubs[~first])),
            np.concatenate((by[first], by[~first])),
        )
        pieces = np.vstack((np.hstack((pa[straight], pb[straight])), curved, stubs))
        which = np.concatenate((straight, np.flatnonzero(bow)[owner], np.flatnonzero(bent)[by]))
        k = pieces.shape[0]
        pts = np.vstack((pieces[:, :2], pieces[:, 2:]))
        i = self._nearest_segment(pts, np.arange(k), np.arange(k) + k, pos, 4)
        return int(self.seg_ids[rows[which[i]]]) if i is not None else None

    def _bus_at(self, pos: QPointF) -> int | None:
        """The bus whose bar (within its half width and 4 pixels) or stub (4 pixels)
        is under ``pos``."""
        if not self.bus_ids.size:
            return None
        bars, stubs = self._bus_pieces()
        half = max(1.0, min(self.scale / 25, 3.0)) * BAR_WIDTH / 2
        for pieces, owner, tolerance in ((bars, np.arange(bars.shape[0]), 4 + half),
                                         (stubs, self.stub_bus, 4.0)):  # fmt: skip
            k = pieces.shape[0]
            if not k:
                continue
            pts = np.vstack((pieces[:, :2], pieces[:, 2:]))
            i = self._nearest_segment(pts, np.arange(k), np.arange(k) + k, pos, tolerance)
            if i is not None:
                return int(self.bus_ids[owner[i]])
        return None

    def _bowed_pieces(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What is drawn of bowed links a[i]-b[i] (widget pixels): straight pieces
        (rows x1, y1, x2, y2) and the link (row of a, b) each belongs to. A link with
        both ends in view is its curve in :data:`BOW_STEPS` pieces; one that leaves the
        view (a close-up of a huge torus: links to blocks elsewhere) a stub out of each
        end towards where it goes, as long as a wrap-around link's (it is drawn whole
        on a route)."""
        inside = [(p[:, 0] >= 0) & (p[:, 0] <= self._w()) & (p[:, 1] >= 0)
                  & (p[:, 1] <= self._h()) for p in (a, b)]  # fmt: skip
        long = ~(inside[0] & inside[1])
        ctrl = self._bend(a, b) * 2 - (a + b) / 2
        short = np.flatnonzero(~long)
        pieces = [flattened_quads(a[short], ctrl[short], b[short], BOW_STEPS)]
        owner = [np.repeat(short, BOW_STEPS)]
        far = np.flatnonzero(long)
        if far.size:
            ends = np.vstack((a[far], b[far]))
            towards = np.vstack((ctrl[far] - a[far], ctrl[far] - b[far]))
            n = np.hypot(towards[:, 0], towards[:, 1])
            tips = ends + towards / np.where(n > 0, n, 1.0)[:, None] * (self.scale * 0.42)
            pieces.append(np.hstack((ends, tips)))
            owner.append(np.concatenate((far, far)))
        return np.vstack(pieces), np.concatenate(owner)

    @staticmethod
    def _bend(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
        """The middle of a bowed link's curve (its control point is twice as far out)."""
        d = pb - pa
        return (pa + pb) / 2 + np.column_stack((-d[:, 1], d[:, 0])) * (LINK_BOW / 2)

    def virtual_midpoint(self, pair: tuple[int, int]) -> QPointF:
        """The middle of a virtual link's dotted curve, in widget pixels."""
        i = self.virtual_pairs.index(pair)
        m = self._virtual_bends(self.screen_xy())[i]
        return QPointF(float(m[0]), float(m[1]))

    def link_midpoint(self, link_id: int) -> QPointF:
        bar = self.bus_midpoint(link_id)
        if bar is not None:
            return bar
        i = int(np.flatnonzero(self.seg_ids == link_id)[0])
        if self.seg_bend.size and self.seg_bend[i] >= 0:  # the middle of its stub
            x1, y1, x2, y2 = self._bent_pieces(np.array([i]))[0][0]
            return QPointF((x1 + x2) / 2, (y1 + y2) / 2)
        xy = self.lazy_xy()
        pa, pb = xy[self.seg_a[i : i + 1]], xy[self.seg_b[i : i + 1]]
        m = self._bend(pa, pb)[0] if self.seg_bow[i] else ((pa + pb) / 2)[0]
        return QPointF(float(m[0]), float(m[1]))

    # ------------------------------------------------------------------ painting

    def sizeHint(self) -> QSize:
        return QSize(520, 420)

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        """A new size fits the drawing again, unless the view was zoomed or panned
        since the last fit: then the point at the middle stays there (a line of
        text below the view that grows on a hover must not undo a zoom)."""
        super().resizeEvent(event)
        old = event.oldSize()
        if self._moved and self._fitted and old.width() > 0 and old.height() > 0:
            d = QPointF((event.size().width() - old.width()) / 2,
                        (event.size().height() - old.height()) / 2)  # fmt: skip
            self.offset = self.offset + d
            self.update()
            self.viewChanged.emit()
        elif not self._fitted or self.place.count:
            self.fit()

    def _view_margin(self) -> tuple[float, float, float, float]:
        m = self.scale
        return (-m, -m, self._w() + m, self._h() + m)

    def visible_indices(self) -> np.ndarray:
        """0-based indices of the processors in view (a margin of one grid unit
        around), ascending."""
        return self._near(*self._view_margin())

    def visible_mask(self) -> np.ndarray:
        mask = np.zeros(self.place.count, dtype=bool)
        mask[self.visible_indices()] = True
        return mask

    def _detail(self) -> np.ndarray | None:
        """The processors in view when few enough to draw one by one, else None (the
        overview): counted from the tiles first, so that a huge model zoomed out is
        never looked at processor by processor."""
        if self.place.tiles.count(*self._units(*self._view_margin())) > OVERVIEW_CAP:
            return None
        idx = self.visible_indices()
        # processors of a pixel or two are drawn as the overview's pixels, unless few
        tiny = self.scale < MIN_DETAIL_SCALE and idx.size > DETAIL_SMALL
        return idx if idx.size <= DETAIL_LIMIT and not tiny else None

    def is_overview(self) -> bool:
        return self._detail() is None

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), self.palette().base())
            self.paint(painter, layers=True)
        finally:
            painter.end()

    def _changed(self) -> None:
        """Something the cached layers show changed (links, widths, types, selection)."""
        self._static_version += 1
        self.update()

    def _view_key(self) -> tuple:
        return (self.width(), self.height(), self.devicePixelRatioF(), self.scale,
                self.offset.x(), self.offset.y(), self._static_version)  # fmt: skip

    def _layer(self, name: str, key: tuple,
               draw: Callable[[QPainter, np.ndarray, np.ndarray], None]) -> QPixmap:  # fmt: skip
        """A transparent picture of the view drawn by ``draw(painter, xy, visible)``,
        kept while the view and what the layer shows (``key``) stay the same."""
        hit = self._layers.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        dpr = self.devicePixelRatioF()
        size = QSize(max(1, round(self.width() * dpr)), max(1, round(self.height() * dpr)))
        layer = hit[1] if hit is not None and hit[1].size() == size else QPixmap(size)
        layer.setDevicePixelRatio(dpr)
        layer.fill(Qt.GlobalColor.transparent)
        p = QPainter(layer)
        try:
            p.setFont(self.font())
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            draw(p, self.lazy_xy(), self.visible_mask())
        finally:
            p.end()
        self._layers[name] = (key, layer)
        return layer

    def paint(self, painter: QPainter, layers: bool = False) -> None:
        """Draw the view. With ``layers`` (the screen), a repaint of an unchanged view
        (a swap, a hover, a drag preview: the second paint at the same size, scale and
        offset onwards) takes the plain hardware links and the processors' boxes from
        cached layers and draws only the rest; a paint for a new view (a pan, a zoom)
        draws everything directly, as does the SVG export."""
        if not self.place.count:
            painter.drawText(QRectF(0, 0, self._w(), self._h()), Qt.AlignmentFlag.AlignCenter,
                             "no topology")  # fmt: skip
            return
        xy = self.lazy_xy()
        shown = self._detail()
        overview = shown is None
        visible = np.zeros(self.place.count, dtype=bool)
        if shown is not None:
            visible[shown] = True
        key = self._view_key()
        cached = layers and key == self._painted_view
        if layers:
            self._painted_view = key
        if overview:
            self._paint_overview(painter)
        else:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            if cached:

                def plain(p: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
                    self._paint_links(p, xy, visible, "plain")

                painter.drawPixmap(0, 0, self._layer("links", key, plain))
                # the hot and selected links over the plain ones (wider: they cover them)
                self._paint_links(painter, xy, visible, "marked")
            else:
                self._paint_links(painter, xy, visible)
            self._paint_virtual(painter, xy, visible)
            self._paint_route(painter, xy)
            if cached:
                painter.drawPixmap(0, 0, self._layer("boxes", key, self._paint_boxes))
            else:
                self._paint_boxes(painter, xy, visible)
            self._paint_labels(painter, xy, visible)
        self._paint_route(painter, xy, rings_only=not overview)
        if self._drag_from is not None:
            self._paint_drag(painter, xy)

    def _overview_image(self) -> tuple[QImage, float, np.ndarray]:
        """The whole topology as an image: one pixel per grid unit, or, where that
        would be more than :data:`OVERVIEW_SIDE` pixels across, several units to a
        pixel (``units`` per pixel, returned with the placement's top left corner),
        each pixel the mean colour of the processors in it (an aggregate: the share of
        switches, of each type)."""
        if self._overview is None:
            lo = self.place.xy.min(axis=0)
            extent = float((self.place.xy.max(axis=0) - lo).max()) + 1.0
            units = max(1.0, extent / OVERVIEW_SIDE)
            ij = np.floor((self.place.xy - lo) / units + 0.5).astype(np.int64)
            w, h = int(ij[:, 0].max()) + 1, int(ij[:, 1].max()) + 1
            top = int(self.types.max(initial=0)) + 1
            palette = np.array([[*type_colour(t % top, t >= top).getRgb()[:3]]
                                for t in range(2 * top)], dtype=np.float64)  # fmt: skip
            colour = palette[np.clip(self.types, 0, None) + top * self.switches]
            cell = ij[:, 1] * w + ij[:, 0]
            hits = np.bincount(cell, minlength=w * h)
            rgba = np.zeros((h * w, 4), dtype=np.uint8)
            for c in range(3):
                total = np.bincount(cell, weights=colour[:, c], minlength=w * h)
                rgba[:, c] = np.rint(total / np.maximum(hits, 1)).astype(np.uint8)
            rgba[:, 3] = np.where(hits > 0, 255, 0)
            image = QImage(rgba.tobytes(), w, h, 4 * w, QImage.Format.Format_RGBA8888)
            # the raster engine's own format: drawn without a conversion each paint
            image = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
            if self.place.kind not in ("grid", "layers") and (
                0 < self.seg_ids.shape[0] + self.bus_ids.shape[0] <= OVERVIEW_LINKS
            ):
                image = self._overview_links(image, lo, units)
            self._overview = (image, units, lo)
        return self._overview

    def _overview_links(self, dots: QImage, lo: np.ndarray, units: float) -> QImage:
        """The overview with the links under the processors, one pixel wide, light."""
        image = QImage(dots.size(), QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        p = QPainter(image)
        try:
            pen = QPen(QColor(85, 85, 85, 110), 0)  # cosmetic: one pixel
            p.setPen(pen)
            ends = (self.place.xy - lo) / units
            p.drawPath(lines_path(ends[self.seg_a], ends[self.seg_b]))
            if self.bus_ids.size:  # buses: their bars and stubs
                shift = np.tile(lo, 2)
                for pieces in ((self.bus_bars - shift) / units, (self.stubs - shift) / units):
                    p.drawPath(lines_path(pieces[:, :2], pieces[:, 2:]))
            p.drawImage(0, 0, dots)
        finally:
            p.end()
        return image

    def _paint_overview(self, painter: QPainter) -> None:
        image, units, lo = self._overview_image()
        step = units * self.scale  # pixels of the view per pixel of the image
        target = QRectF((lo[0] - 0.5 * units) * self.scale + self.offset.x(),
                        (lo[1] - 0.5 * units) * self.scale + self.offset.y(),
                        image.width() * step, image.height() * step)  # fmt: skip
        # only the part of the image in view is scaled (a zoomed-in overview of a
        # million processors would otherwise scale the whole image up)
        view = QRectF(0, 0, self._w(), self._h()).intersected(target)
        if view.isEmpty():
            return
        source = QRectF((view.left() - target.left()) / step, (view.top() - target.top()) / step,
                        view.width() / step, view.height() / step)  # fmt: skip
        painter.drawImage(view, image, source)
        painter.setPen(QColor("#333333"))
        painter.drawText(
            QRectF(6, 4, self._w() - 12, 20),
            Qt.AlignmentFlag.AlignRight,
            f"{counted(self.place.count, 'processor', grouped=False)} — zoom in for links and "
            f"numbers",
        )

    def _paint_links(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray,
                     which: str = "all") -> None:  # fmt: skip
        """The hardware links in view: ``all``, only ``plain`` (every link as if neither
        hot nor selected) or only the ``marked`` (hot or selected) ones."""
        self._paint_buses(painter, which)
        if not self.seg_ids.size:
            return
        rows = self.segment_rows(np.flatnonzero(visible))
        if which == "marked":
            if not (self.hot_links or self.selected_links):
                return
            marked = np.fromiter(self.hot_links | self.selected_links, np.int64)
            rows = rows[np.isin(self.seg_ids[rows], marked)]
        if not rows.size:
            return
        ids = self.seg_ids[rows]
        base = max(1.0, min(self.scale / 25, 3.0))
        if self.link_width:
            extra = np.fromiter((self.link_width.get(i, 0.0) for i in ids.tolist()), float,
                                count=ids.shape[0])  # fmt: skip
            width = base * (1 + 2.5 * extra)
        else:
            width = np.full(ids.shape[0], base)
        colour = np.zeros(ids.shape[0], dtype=np.int64)  # 0 plain, 1 hot, 2 selected
        if self.hot_links and which != "plain":
            hot = np.isin(ids, np.fromiter(self.hot_links, np.int64))
            colour[hot], width[hot] = 1, width[hot] + 2
        if self.selected_links and which != "plain":
            sel = np.isin(ids, np.fromiter(self.selected_links, np.int64))
            colour[sel], width[sel] = 2, width[sel] + 2
        tenths = np.rint(width * 10).astype(np.int64)
        # 0 straight, 1 wrap-around (stubs), 2 bowed (between blocks), 3 bent (a block
        # of terminals)
        form = self.seg_wrap[rows].astype(np.int64) + 2 * self.seg_bow[rows]
        if self.place.bends is not None:
            form = np.where(self.seg_bend[rows] >= 0, 3, form)
        key = (colour * 100000 + tenths) * 4 + form
        colours = (LINK_COLOUR, HOT_COLOUR, SELECT_COLOUR)
        for k in _distinct(key):
            group = rows[key == k]
            w, kind = (k // 4) % 100000 / 10, k % 4
            c = colours[k // 400000]
            pen = QPen(BOW_COLOUR if kind == 2 and c is LINK_COLOUR else c, w)
            a, b = xy[self.seg_a[group]], xy[self.seg_b[group]]
            if kind == 1:
                pen.setCapStyle(Qt.PenCapStyle.FlatCap)
                painter.setPen(pen)
                painter.drawPath(self._wrap_path(a, b))
            else:
                # flat caps: the ends are under the processors, and Qt strokes a path of
                # flat-capped segments several times faster than round-capped ones
                pen.setCapStyle(Qt.PenCapStyle.FlatCap)
                painter.setPen(pen)
                # a bowed link as a few straight pieces, or stubs; a bent one by its bends
                if kind == 3:
                    pieces = self._bent_pieces(group)[0]
                elif kind == 2:
                    pieces = self._bowed_pieces(a, b)[0]
                else:
                    pieces = np.hstack((a, b))
                # cut to the view: a close-up of a huge torus has links thousands of
                # pixels long leaving it, which Qt would stroke whole
                pad = 4 * w
                pieces = clip_segments(pieces, -pad, -pad, self._w() + pad,
                                       self._h() + pad)  # fmt: skip
                # many long lines in view (a dragonfly's global links, zoomed out a
                # little): drawn without antialiasing, several times faster
                ink = float(np.hypot(*(pieces[:, 2:] - pieces[:, :2]).T).sum()) * w
                dense = ink > LINK_AA_INK
                if dense:
                    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
                    if w <= 1.5:  # a cosmetic pen: Qt's line rasteriser, no stroker
                        pen.setWidth(0)
                        painter.setPen(pen)
                painter.drawPath(lines_path(pieces[:, :2], pieces[:, 2:]))
                if dense:
                    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)

    def _paint_buses(self, painter: QPainter, which: str = "all") -> None:
        """Buses: a bar (:data:`BAR_WIDTH` times a link's width) and a stub from each
        of its processors to it; hot and selected ones in their colours."""
        if not self.bus_ids.size:
            return
        base = max(1.0, min(self.scale / 25, 3.0))
        marked = self.hot_links | self.selected_links
        for lid in self.bus_ids.tolist():
            hot, sel = lid in self.hot_links, lid in self.selected_links
            if which == "marked" and not (hot or sel):
                continue
            colour = LINK_COLOUR
            w = base * (1 + 2.5 * self.link_width.get(lid, 0.0)) if self.link_width else base
            if which != "plain" and lid in marked:
                colour = SELECT_COLOUR if sel else HOT_COLOUR
                w += 2
            bars, stubs = self._bus_pieces({lid})
            pen = QPen(colour, w)
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
            painter.setPen(pen)
            painter.drawPath(lines_path(stubs[:, :2], stubs[:, 2:]))
            pen = QPen(colour, w * BAR_WIDTH)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.drawPath(lines_path(bars[:, :2], bars[:, 2:]))

    def _wrap_path(self, a: np.ndarray, b: np.ndarray) -> QPainterPath:
        """Wrap-around links: a stub out of each end, away from the other, ending in a
        small arc, so that each reads as leaving the grid and coming back on the far
        side."""
        d = a - b
        n = np.hypot(d[:, 0], d[:, 1])
        out = d / np.where(n > 0, n, 1.0)[:, None] * (self.scale * 0.42)
        ends = np.vstack((a, b))
        direction = np.vstack((out, -out))
        # only the ends in view (the other end of a wrap-around link of a huge torus is
        # far away, and Qt would stroke its stub all the same)
        pad = self.scale
        near = ((ends[:, 0] >= -pad) & (ends[:, 0] <= self._w() + pad)
                & (ends[:, 1] >= -pad) & (ends[:, 1] <= self._h() + pad))  # fmt: skip
        ends, direction = ends[near], direction[near]
        tip = ends + direction
        r = self.scale * 0.08
        dn = np.hypot(direction[:, 0], direction[:, 1])
        normal = np.column_stack((-direction[:, 1], direction[:, 0]))
        normal = normal / np.where(dn > 0, dn, 1.0)[:, None] * r
        arc_a, arc_c, arc_b = tip + normal, tip + direction * 0.35, tip - normal
        # per end: the stub, then its arc as a few straight pieces: Qt strokes straight
        # flat-capped pieces with antialiasing tens of times faster than curves (a
        # close-up of a 6-D torus has hundreds of these in view)
        arcs = flattened_quads(arc_a, arc_c, arc_b, WRAP_ARC_STEPS).reshape(-1, WRAP_ARC_STEPS, 4)
        pieces = np.concatenate((np.hstack((ends, tip))[:, None, :], arcs), axis=1)
        pieces = pieces.reshape(-1, 4)
        return lines_path(pieces[:, :2], pieces[:, 2:])

    def _paint_wrap(self, painter: QPainter, a: np.ndarray, b: np.ndarray) -> None:
        """One wrap-around link (see :meth:`_wrap_path`)."""
        painter.drawPath(self._wrap_path(np.atleast_2d(a), np.atleast_2d(b)))

    def _paint_virtual(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        if not self.virtual_pairs:
            return
        a, b = self.virtual_a, self.virtual_b
        ok = (a >= 0) & (b >= 0) & (a != b)
        ok[ok] &= visible[a[ok]] | visible[b[ok]]
        if not ok.any():
            return
        pa, pb = xy[a[ok]], xy[b[ok]]
        dense = pa.shape[0] > VIRTUAL_AA_LIMIT
        # many of them (a large model zoomed out, or a torus over GCel zoomed in a
        # little): one pixel wide without antialiasing, four times faster, and dots of one
        # pixel read the same
        width = 1.0 if dense else max(1.0, min(self.scale / 30, 2.0))
        pen = QPen(VIRTUAL_COLOUR, width)
        pen.setStyle(Qt.PenStyle.DotLine)
        painter.setPen(pen)
        # bow the dotted line a little so that it does not hide the hardware link
        d = pb - pa
        ctrl = (pa + pb) / 2 + np.column_stack((-d[:, 1], d[:, 0])) * VIRTUAL_BOW
        if width <= 1.0:
            # one path: a one-pixel pen goes to Qt's cosmetic stroker, which dashes as it
            # draws (no dash pattern computed per link)
            if dense:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.drawPath(quads_path(pa, ctrl, pb))
            if dense:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        else:
            # a wider dotted pen would be dashed segment by segment by QDashStroker, one
            # path at a time; line segments in one drawLines call go to the fast dashed
            # line rasteriser instead
            # as few segments as keep each within half a pixel of its curve: a curve
            # bows out by VIRTUAL_BOW / 2 of its length, a chord of 1/k of it by 1/k**2 of that
            length = np.hypot(d[:, 0], d[:, 1])
            steps = np.clip(np.ceil(np.sqrt(VIRTUAL_BOW * length)), 2, CURVE_STEPS)
            steps = steps.astype(np.int64)
            segments = np.vstack([flattened_quads(pa[steps == k], ctrl[steps == k],
                                                  pb[steps == k], k)
                                  for k in _distinct(steps)])  # fmt: skip
            # only what is in view: the rasteriser walks a dashed line's whole length,
            # and a long virtual link of a zoomed-in view is mostly outside it
            pad = 4 * width
            segments = clip_segments(segments, -pad, -pad, self._w() + pad,
                                     self._h() + pad)  # fmt: skip
            painter.drawLines([QLineF(*row) for row in segments.tolist()])

    def _sprite(self, type_id: int, selected: bool, r: float, switch: bool = False) -> QPixmap:
        """A processor's box (type colour, outline), a switch's disc (a darker colour
        of its type), drawn once per size and state."""
        dpr = self.devicePixelRatioF()
        if (r, dpr) != self._sprite_radius:
            self._sprites.clear()
            self._sprite_radius = (r, dpr)
        key = (type_id, selected, switch)
        sprite = self._sprites.get(key)
        if sprite is None:
            m = SPRITE_MARGIN
            side = int(math.ceil(2 * r + 2 * m))
            sprite = QPixmap(max(1, round(side * dpr)), max(1, round(side * dpr)))
            sprite.setDevicePixelRatio(dpr)  # sharp on a high-density screen
            sprite.fill(Qt.GlobalColor.transparent)
            p = QPainter(sprite)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            colour = type_colour(type_id, switch)
            rect = QRectF(m, m, 2 * r, 2 * r)
            self._draw_box(p, rect, colour, selected, switch, r)
            p.end()
            self._sprites[key] = sprite
        return sprite

    def _paint_processors(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        self._paint_boxes(painter, xy, visible)
        self._paint_labels(painter, xy, visible)

    def _paint_boxes(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        """Each processor's box: sprites blitted at whole pixels (a box's centre is off
        by at most half a pixel); into an SVG file, shapes."""
        r = self.radius()
        idx = np.flatnonzero(visible)
        engine = painter.paintEngine()
        if self._shapes or (engine is not None and engine.type() == QPaintEngine.Type.SVG):
            self._paint_box_shapes(painter, xy, idx, r)
            return
        state = (self.types[idx] * 4 + self.switches[idx] * 2
                 + (self.selected[idx] if r >= 3 else 0))  # fmt: skip
        if r < 3:  # plain squares of a few pixels: one filled path per colour
            centre = np.rint(xy[idx])
            hint = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            for key in _distinct(state):
                c = centre[state == key]
                corners = np.stack((c + (-r, -r), c + (r, -r), c + (r, r), c + (-r, r)), axis=1)
                kinds = np.tile(np.array([_MOVE, _LINE, _LINE, _LINE]), c.shape[0])
                square = path_from_arrays(kinds, corners.reshape(-1, 2))
                painter.fillPath(square, type_colour(key // 4, bool(key % 4 // 2)))
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, hint)
            return
        corner = np.rint(xy[idx] - (r + SPRITE_MARGIN)).astype(np.int64)
        for key in _distinct(state):
            sprite = self._sprite(key // 4, bool(key % 2), r, bool(key % 4 // 2))
            for x, y in corner[state == key].tolist():
                painter.drawPixmap(x, y, sprite)

    def _paint_box_shapes(self, painter: QPainter, xy: np.ndarray, idx: np.ndarray,
                          r: float) -> None:  # fmt: skip
        for i in idx.tolist():
            x, y = xy[i]
            switch = bool(self.switches[i])
            colour = type_colour(int(self.types[i]), switch)
            rect = QRectF(x - r, y - r, 2 * r, 2 * r)
            self._draw_box(painter, rect, colour, bool(self.selected[i]), switch, r)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    @staticmethod
    def _draw_box(painter: QPainter, rect: QRectF, colour: QColor, selected: bool,
                  switch: bool, r: float) -> None:  # fmt: skip
        """A processor: a rounded box; a switch: a disc. Below 3 pixels a plain square."""
        if r < 3:
            painter.fillRect(rect, colour)
            return
        painter.setPen(QPen(SELECT_COLOUR if selected else QColor("#333333"),
                            3 if selected else 1))  # fmt: skip
        painter.setBrush(colour)
        if switch:
            painter.drawEllipse(rect)
        else:
            painter.drawRoundedRect(rect, r * 0.3, r * 0.3)

    def _paint_labels(self, painter: QPainter, xy: np.ndarray, visible: np.ndarray) -> None:
        """The processors' numbers (or labels), whenever the longest fits in a box at
        :data:`MIN_LABEL_PX` pixels or more (as large as fits, up to 14)."""
        self.labels_drawn = 0
        r = self.radius()
        if r < 3:
            return
        font = QFont(painter.font())
        px = int(max(MIN_LABEL_PX, min(r * 0.9, 14)))
        font.setPixelSize(px)
        longest = (max(self.labels, key=len, default="0") if self.labels
                   else "8" * len(str(self.place.count)))  # fmt: skip
        room = 2 * r * 0.9  # inside the box (a switch's disc: its middle)
        wide = QFontMetricsF(font).horizontalAdvance(longest)
        if wide > room:  # a smaller font, if one still readable fits
            px = int(px * room / wide)
            if px < MIN_LABEL_PX:
                return
            font.setPixelSize(px)
        idx = np.flatnonzero(visible)
        self.labels_drawn = int(idx.size)
        painter.setFont(font)
        painter.setPen(QColor("#000000"))
        px = font.pixelSize()
        metrics = QFontMetricsF(font)
        baseline = (metrics.ascent() - metrics.descent()) / 2  # centre -> baseline
        top = (metrics.ascent() + metrics.descent()) / 2  # centre -> top of the line
        texts, cache = self.labels, self._texts
        if len(cache) > TEXT_CACHE:
            cache.clear()
        # A number is drawn as a QStaticText (laid out once, drawn twice as fast as
        # drawText) once made; making one costs three draws, so a frame makes at most
        # STATIC_TEXTS_PER_FRAME and draws the rest with drawText: a zoom to a new font
        # size stays within its frame, and the next frames at that size catch up.
        budget = STATIC_TEXTS_PER_FRAME
        for i, (x, y) in zip(idx.tolist(), xy[idx].tolist()):
            text = texts[i] if texts is not None else str(i + 1)
            entry = cache.get((px, text))
            if entry is None:  # its width from the characters' (numbers: no kerning)
                width = 0.0
                for ch in text:
                    advance = cache.get((px, ch, None))
                    if advance is None:
                        advance = cache[(px, ch, None)] = metrics.horizontalAdvance(ch)
                    width += advance
                entry = cache[(px, text)] = [width / 2, None]
            if entry[1] is None and budget > 0:
                budget -= 1
                st = QStaticText(text)
                st.setTextFormat(Qt.TextFormat.PlainText)
                st.prepare(QTransform(), font)
                entry[1] = st
            if entry[1] is not None:  # the same place as drawText's
                painter.drawStaticText(QPointF(x - entry[0], y - top), entry[1])
            else:
                painter.drawText(QPointF(x - entry[0], y + baseline), text)

    def _paint_route(self, painter: QPainter, xy: np.ndarray, rings_only: bool = False) -> None:
        """The highlighted route: its links under the processors, rings around them on top."""
        if not (self.route_links or self.route_processors):
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        pen = QPen(ROUTE_COLOUR, max(2.5, min(self.scale / 10, 6)))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        if rings_only or not self.route_links:
            rows = np.zeros(0, dtype=np.int64)
        elif self.route_processors:  # the segments of the route's processors, not all
            ends = [p - 1 for p in self.route_processors if 1 <= p <= self.place.count]
            rows = self.segment_rows(np.asarray(ends, dtype=np.int64))
            rows = rows[np.isin(self.seg_ids[rows], list(self.route_links))]
        else:
            rows = np.flatnonzero(np.isin(self.seg_ids, list(self.route_links)))
        buses = self.route_links & set(self.bus_ids.tolist()) if not rings_only else set()
        if buses:  # a bus on the route: its bar, and the stubs of the route's processors
            bars, stubs = self._bus_pieces(buses, self.route_processors or None)
            painter.drawPath(lines_path(stubs[:, :2], stubs[:, 2:]))
            painter.drawPath(lines_path(bars[:, :2], bars[:, 2:]))
        for i in rows.tolist():
            a, b = xy[self.seg_a[i]], xy[self.seg_b[i]]
            if self.seg_wrap[i]:
                self._paint_wrap(painter, a, b)
            elif self.seg_bend.size and self.seg_bend[i] >= 0:
                pieces = self._bent_pieces(np.array([i]))[0]
                painter.drawPath(lines_path(pieces[:, :2], pieces[:, 2:]))
            elif self.seg_bow[i]:
                c = self._bend(a[None, :], b[None, :])[0] * 2 - (a + b) / 2
                painter.drawPath(quads_path(a[None, :], c[None, :], b[None, :]))
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

    def export_size(self, width: int, whole: bool = True) -> tuple[int, int]:
        """The height that goes with ``width`` for an export: the view's proportions
        (the view as shown), or the whole drawing's with its margin."""
        if whole and self.place.count:
            left, top, right, bottom = self.place.bounds()
            w, h = right - left + 1.0, bottom - top + 1.0
        else:
            w, h = max(self.width(), 1), max(self.height(), 1)
        return width, max(1, round(width * h / w))

    def _export_view(self, width: int, height: int,
                     whole: bool) -> tuple[float, float, float, float, QPointF]:  # fmt: skip
        """How an export of ``width`` x ``height`` pixels is drawn: at the density that
        makes it the screen's drawing enlarged (``ratio`` pixels to one of the
        screen's, at least 1 for the whole drawing), so that boxes, numbers and lines
        keep their proportions; the size drawn in those units, and the scale and offset
        there: the whole drawing fitted, or the view as shown."""
        if whole:
            ratio = max(1.0, min(width / max(self.width(), 1), height / max(self.height(), 1)))
            lw, lh = width / ratio, height / ratio
            return (ratio, lw, lh, *self._fitted_view(lw, lh))
        ratio = max(width / max(self.width(), 1), 1e-3)
        lw, lh = width / ratio, height / ratio
        # the view's middle stays in the middle when the proportions differ
        dx, dy = (lw - self.width()) / 2, (lh - self.height()) / 2
        return ratio, lw, lh, self.scale, QPointF(self.offset.x() + dx, self.offset.y() + dy)

    def _paint_export(self, painter: QPainter, width: int, height: int, whole: bool,
                      background: QColor) -> None:  # fmt: skip
        ratio, lw, lh, scale, offset = self._export_view(width, height, whole)
        saved = (self.scale, QPointF(self.offset), self._size, self._shapes)
        self.scale, self.offset, self._size, self._shapes = scale, offset, (lw, lh), True
        try:
            painter.scale(ratio, ratio)
            painter.fillRect(QRectF(0, 0, lw, lh), background)
            painter.setFont(self.font())
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            self.paint(painter)
        finally:
            self.scale, self.offset, self._size, self._shapes = saved

    def render_image(self, width: int, height: int, whole: bool = True) -> QImage:
        """The drawing as an image of ``width`` x ``height`` pixels: the whole
        topology fitted (``whole``) or the view as shown, enlarged."""
        image = QImage(max(1, int(width)), max(1, int(height)), QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        try:
            self._paint_export(painter, image.width(), image.height(), whole, QColor("white"))
        finally:
            painter.end()
        return image

    def export_png(self, path: str, width: int | None = None, height: int | None = None,
                   whole: bool = False) -> bool:  # fmt: skip
        """Save the drawing as PNG (or any format Qt writes by the file's suffix):
        ``width`` x ``height`` pixels (the view's size when not given)."""
        if width is None:
            width, height = self.width(), self.height()
        elif height is None:
            width, height = self.export_size(width, whole)
        return self.render_image(width, height, whole).save(path)

    def export_svg(self, path: str, width: int | None = None, height: int | None = None,
                   whole: bool = False) -> None:  # fmt: skip
        """Save the drawing as SVG, shapes and text (no images but an overview of a
        huge model): ``width`` x ``height`` (the view's size when not given)."""
        from PySide6.QtSvg import QSvgGenerator

        if width is None:
            width, height = self.width(), self.height()
        elif height is None:
            width, height = self.export_size(width, whole)
        gen = QSvgGenerator()
        gen.setFileName(path)
        gen.setSize(QSize(int(width), int(height)))
        gen.setViewBox(QRect(0, 0, int(width), int(height)))
        gen.setTitle("PIUI topology")
        painter = QPainter(gen)
        try:
            self._paint_export(painter, int(width), int(height), whole, QColor("white"))
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
        self._press = self._press_at = event.position()
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
        elif (
            event.button() == Qt.MouseButton.RightButton
            and self._press_at is not None
            and (pos - self._press_at).manhattanLength() < 4
        ):  # a click, not a pan
            self._context_menu(event.globalPosition().toPoint())
        self._press = None
        self._press_button = Qt.MouseButton.NoButton
        event.accept()

    def _context_menu(self, at: QPoint) -> None:
        from PySide6.QtWidgets import QMenu

        menu = QMenu(self)
        menu.addAction("Fit the whole topology (Ctrl+0)", self.fit)
        menu.addAction("Export the drawing…", self.exportRequested.emit)
        menu.popup(at)

    def leaveEvent(self, event) -> None:  # noqa: ANN001
        if self._hover != ("", None):
            self._hover = ("", None)
            self.hovered.emit("", None)
        super().leaveEvent(event)
