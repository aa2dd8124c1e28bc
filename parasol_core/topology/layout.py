"""Where to draw a topology's processors and how to group its links (no drawing here).

:func:`placement` gives every processor a position in grid units (x to the right, y
downward), by the topology's shape:

* a 2D grid or torus: ``(x, y)`` of its row-major numbering;
* a grid or torus of 3 to 6 dimensions: nested 2-D grids (:func:`nested_grid`): blocks
  of dimensions 0 (across) and 1 (down), and each further dimension, innermost first,
  lays the blocks so far out across, down, or folded into a grid of blocks (a
  100 x 100 x 100 torus: 10 x 10 blocks of 100 x 100), whichever keeps the whole
  picture nearest a landscape page (:data:`ASPECT`);
* a fat tree (``# piui: network = fattree K N``, ``fattree2 ...``, ``fattree3 ...``):
  compute processors in a row at the bottom, each level of switches in a row above
  (:func:`~parasol_core.topology.graph_layout.layered`), each switch's compute
  processors in a block below it; a dragonfly
  (``# piui: network = dragonfly G A P H``): its groups on a circle, each group's routers
  in a row along it and their terminals outside (:func:`dragonfly`); any other
  topology with switches or buses: a graph drawing
  (:mod:`~parasol_core.topology.graph_layout`): in layers by hop distance from the
  compute processors when the switches make a hierarchy, force-directed (networkx)
  otherwise, buses as bars;
* a ring (a 1D shape with a wrap-around link, or ``1Dtorus`` routing): a circle;
* a line (a 1D shape without wrap-around): a row;
* a hypercube (``hypercube`` routing, ``2**d`` processors): the low half of the bits
  across, the high half down, each half in Gray-code order so that neighbours sit
  side by side;
* a bus (a link joining more than two processors): a bar with its processors in a row
  below it (:attr:`Placement.bars`);
* anything else (a link list with no shape): force-directed (networkx, seeded), or,
  past its budget, a circle, :attr:`Placement.note` saying so.

Everything but the force-directed layout (whose work is bounded) is numpy, so 32,768
processors lay out in milliseconds.

:func:`link_classes` says for every two-processor link of a grid which axis it runs
along (X, Y, Z) and whether it wraps around; :func:`link_groups` turns that into the
named groups the link-group editor offers.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from parasol_core.model import Link, Topology
from parasol_core.topology.graph_layout import (
    Bars,
    Bends,
    GraphDrawing,
    circle,
    draw,
    hop_levels,
)
from parasol_core.topology.shape import Shape, declared_shape, processor_count, shape_of

__all__ = ["Bars", "Bends", "Placement", "circle", "hop_levels", "placement"]

AXES = ("X", "Y", "Z")
#: The width / height a nested grid, a fat tree or a tree of levels is laid out to
#: come near (a landscape window).
ASPECT = 1.5
#: What a fold of blocks that leaves places empty costs against the aspect of the
#: picture (the log of its ratio to :data:`ASPECT`): 4 x 4 x 4 as 2 x 2 blocks, not 3 + 1.
EMPTY_PLACES = 2.0
#: Processors per tile of :class:`Tiles`, on average over the tiles that hold any.
TILE_FILL = 32


@dataclass(frozen=True)
class Placement:
    """Positions of processors ``1..count``: ``xy[p - 1]`` in grid units.

    ``levels`` (fat trees, dragonflies, trees of levels; else None) gives each
    processor's level: 0 for a compute processor, 1, 2, ... for the switches above it.
    ``bars``: the buses drawn as bars (their links are not segments), or None;
    ``note``: what the layout did not do and why (a fallback past a budget), or None;
    ``bends``: links drawn with bends (a block of terminals under its switch), or None.
    """

    kind: str  # grid, layers, ring, line, hypercube, bus, force, circle, fattree,
    #            dragonfly, levels
    xy: np.ndarray  # (count, 2) float64
    shape: Shape | None
    levels: np.ndarray | None = None
    bars: Bars | None = None
    note: str | None = None
    bends: Bends | None = None

    @property
    def count(self) -> int:
        return int(self.xy.shape[0])

    # cached_property writes the instance dict directly, which a frozen dataclass allows
    @cached_property
    def tiles(self) -> Tiles:
        """The processors bucketed by where they sit (made on first use)."""
        return Tiles.of(self.xy)

    def bounds(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of the processors, or a unit square when empty."""
        if not self.count:
            return (0.0, 0.0, 1.0, 1.0)
        lo, hi = self.xy.min(axis=0), self.xy.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


@dataclass(frozen=True)
class Tiles:
    """Processors bucketed into square tiles of ``size`` grid units, so that what a
    view shows is found without a pass over every processor: the processors of a row of
    tiles are one slice of ``order``, so a rectangle costs one slice per row of tiles
    it covers (a 1,000,000-processor torus zoomed out: some 200 slices, not a million
    comparisons)."""

    left: float
    top: float
    size: float
    cols: int
    rows: int
    order: np.ndarray  # 0-based processor indices, tile by tile (row-major), stable
    starts: np.ndarray  # order[starts[t]:starts[t + 1]] are the processors of tile t

    @staticmethod
    def of(xy: np.ndarray) -> Tiles:
        n = int(xy.shape[0])
        if not n:
            return Tiles(0.0, 0.0, 1.0, 1, 1, np.zeros(0, np.int64), np.zeros(2, np.int64))
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        w, h = float(hi[0] - lo[0]) + 1.0, float(hi[1] - lo[1]) + 1.0
        size = max(1.0, math.sqrt(w * h * TILE_FILL / n))
        cols, rows = int(w // size) + 1, int(h // size) + 1
        tx = ((xy[:, 0] - lo[0]) // size).astype(np.int64)
        ty = ((xy[:, 1] - lo[1]) // size).astype(np.int64)
        key = ty * cols + tx
        order = np.argsort(key, kind="stable")
        starts = np.zeros(cols * rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=cols * rows), out=starts[1:])
        return Tiles(float(lo[0]), float(lo[1]), size, cols, rows, order, starts)

    def _ranges(self, left: float, top: float, right: float,
                bottom: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Start and end in ``order`` of each row of tiles the rectangle (grid units)
        touches."""
        x0 = max(int((left - self.left) // self.size), 0)
        x1 = min(int((right - self.left) // self.size), self.cols - 1)
        y0 = max(int((top - self.top) // self.size), 0)
        y1 = min(int((bottom - self.top) // self.size), self.rows - 1)
        if x1 < x0 or y1 < y0:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        row = np.arange(y0, y1 + 1, dtype=np.int64) * self.cols
        return self.starts[row + x0], self.starts[row + x1 + 1]

    def count(self, left: float, top: float, right: float, bottom: float) -> int:
        """How many processors sit in the tiles the rectangle touches (at least as many
        as in the rectangle itself)."""
        a, b = self._ranges(left, top, right, bottom)
        return int((b - a).sum())

    def indices(self, left: float, top: float, right: float, bottom: float) -> np.ndarray:
        """The 0-based indices of the processors in the tiles the rectangle touches,
        ascending tile by tile (a superset of those inside it)."""
        a, b = self._ranges(left, top, right, bottom)
        keep = b > a
        a, b = a[keep], b[keep]
        if not a.size:
            return np.zeros(0, dtype=np.int64)
        # one gather for all the slices: position i of row r is a[r] + i
        lengths = b - a
        first = np.repeat(a - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        return self.order[first + np.arange(int(lengths.sum()), dtype=np.int64)]


class Pairs(NamedTuple):
    """A topology's links in one pass: the ids and the two processors (``a``, ``b``) of
    its two-processor links, as arrays, and the other links that have an id (buses,
    links without processors), as they are. A caller drawing a big topology makes it
    once and hands it to :func:`link_classes` and :func:`segments`."""

    ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    others: list[Link]


_ID_AND_CONNECT = operator.attrgetter("id", "connect")
_ID = operator.attrgetter("id")
_CONNECT = operator.attrgetter("connect")


def link_pairs(topology: Topology) -> Pairs:
    links = topology.links
    if not links.odd_rows().shape[0]:  # the columns of the link store, no Link made
        off, procs = links.connect_csr()
        if (np.diff(off) == 2).all():
            ends = procs[off[0] : off[-1]].astype(np.int64)
            return Pairs(links.ids.copy(), ends[0::2].copy(), ends[1::2].copy(), [])
    # The usual case, at C speed (a 98,304-link torus in a few ms): every link has an id
    # and joins two processors
    ids, connects = list(map(_ID, links)), list(map(_CONNECT, links))
    if None not in ids and None not in connects and set(map(len, connects)) <= {2}:
        ends = np.fromiter(itertools.chain.from_iterable(connects), np.int64, 2 * len(links))
        return Pairs(np.array(ids, dtype=np.int64), ends[0::2].copy(), ends[1::2].copy(), [])
    return _link_pairs(links)


def _link_pairs(links: list[Link]) -> Pairs:
    ids: list[int] = []
    a: list[int] = []
    b: list[int] = []
    others: list[Link] = []
    for link, (lid, connect) in zip(links, map(_ID_AND_CONNECT, links)):
        if lid is None:
            continue
        if connect and len(connect) == 2:
            ids.append(lid)
            a.append(connect[0])
            b.append(connect[1])
        else:
            others.append(link)
    return Pairs(
        np.array(ids, dtype=np.int64), np.array(a, dtype=np.int64), np.array(b, dtype=np.int64),
        others,
    )  # fmt: skip


def gray_positions(bits: int, count: int) -> np.ndarray:
    """Position along one axis of each value ``0..count-1`` when the axis is laid out in
    reflected Gray-code order (so values one bit apart in the low bits sit close)."""
    values = np.arange(count, dtype=np.int64)
    # inverse Gray code: position k holds gray(k); value v sits at inverse_gray(v)
    pos = values.copy()
    shift = 1
    while shift < max(bits, 1) * 2:
        pos ^= pos >> shift
        shift <<= 1
    return pos


# --------------------------------------------------------------------------- nested grids


def _arrangements(n: int) -> list[tuple[int, int]]:
    """How ``n`` blocks may be laid out, as (across, down): in a row, in a column, and
    for 4 or more, folded into a grid of blocks: the six numbers of blocks across
    nearest the square root among its divisors and the square root's neighbours (a
    prime leaves a few places of the last row empty)."""
    if n <= 1:
        return [(1, 1)]
    out = [(n, 1), (1, n)]
    if n >= 4:
        root = math.sqrt(n)
        near = {d for d in range(2, n // 2 + 1) if n % d == 0}
        near |= {c for c in (math.floor(root), math.ceil(root), math.ceil(root) + 1)
                 if 2 <= c < n}  # fmt: skip
        for cols in sorted(near, key=lambda c: (abs(math.log(c / root)), c))[:6]:
            out.append((cols, math.ceil(n / cols)))
    return out


def block_gap(width: int, height: int, level: int = 1) -> int:
    """The space, in grid units, left between blocks of ``width`` x ``height`` units
    laid out by the ``level``-th dimension past the first two: a tenth of the block's
    shorter side, and at least ``level`` units, so that the gaps of an outer dimension
    are wider than those of the one inside it."""
    return max(level, round(0.1 * min(width, height)))


def nested_arrangement(dims: tuple[int, ...]) -> list[tuple[int, int]]:
    """For each dimension from the third on, how its blocks are laid out (across,
    down): of every choice of row, column or fold per dimension, the one whose whole
    picture comes nearest :data:`ASPECT`, a fold costing a little and a fold that leaves
    places empty (an L of blocks: 4 blocks as 3 + 1) much more (:data:`EMPTY_PLACES`),
    so that only a prime number of blocks too many for a row is folded so."""
    inner = (dims[0], dims[1] if len(dims) > 1 else 1)
    outer = dims[2:]
    best: tuple[float, list[tuple[int, int]]] | None = None
    for choice in itertools.product(*(_arrangements(n) for n in outer)):
        w, h = inner
        penalty = 0.0
        for level, ((cols, rows), n) in enumerate(zip(choice, outer), start=1):
            g = block_gap(w, h, level)
            w, h = cols * w + (cols - 1) * g, rows * h + (rows - 1) * g
            penalty += 0.1 * (cols > 1 and rows > 1) + EMPTY_PLACES * (cols * rows > n)
        score = abs(math.log(w / h / ASPECT)) + penalty
        if best is None or score < best[0] - 1e-12:
            best = (score, list(choice))
    return best[1] if best is not None else []


def nested_grid(shape: Shape) -> np.ndarray:
    """Positions of a grid or torus of any dimensions as nested 2-D grids: processor
    ``p`` (row-major numbering) at ``(x, y)``: dimension 0 across and 1 down within a
    block, each further dimension placing the blocks so far as
    :func:`nested_arrangement` chose, with :func:`block_gap` between them. A folded
    dimension runs as a snake (left to right, then right to left on the next row), so
    that blocks one apart along it are always side by side or one above the other."""
    dims = shape.dims
    coords = shape.coordinates_array(np.arange(1, shape.size + 1, dtype=np.int64))
    x = coords[:, 0].astype(np.float64)
    y = coords[:, 1].astype(np.float64) if shape.ndim > 1 else np.zeros(shape.size)
    w, h = dims[0], dims[1] if shape.ndim > 1 else 1
    for k, (cols, rows) in enumerate(nested_arrangement(dims), start=2):
        g = block_gap(w, h, k - 1)
        c = coords[:, k]
        row, col = c // cols, c % cols
        col = np.where(row % 2 == 1, cols - 1 - col, col)  # folded as a snake
        x += col * (w + g)
        y += row * (h + g)
        w, h = cols * w + (cols - 1) * g, rows * h + (rows - 1) * g
    return np.column_stack((x, y))


# --------------------------------------------------------------------------- levels


def fattree_levels(count: int, kind: str, params: dict[str, int]) -> np.ndarray | None:
    """Levels of a fat tree numbered as generated (docs/decisions.md, "Switches"):
    its compute processors, then its levels of switches, the lowest first (a k-ary
    n-tree: ``k**n`` compute processors and ``n`` levels of ``k**(n-1)`` switches; a
    ``fattree2``/``fattree3``: the level sizes its port counts give); None when the
    count is not that."""
    from parasol_core.topology.switched import FatTree

    try:
        tree = FatTree.of(kind, tuple(params.values()))
    except ValueError:
        return None
    if count != tree.count:
        return None
    level = np.zeros(count, dtype=np.int64)
    level[tree.compute :] = np.repeat(np.arange(1, tree.levels + 1), tree.level_sizes)
    return level


def dragonfly_xy(count: int, g: int, a: int, p: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Positions and levels (0 terminal, 1 router) of a dragonfly numbered as generated:
    ``g*a*p`` terminals, then ``g*a`` routers, router ``r`` (0-based) in group
    ``r // a``, terminal ``t`` on router ``t // p``. The groups sit on a circle, the
    first at the top and on clockwise; a group's routers on a small circle of their
    own (so that its all-to-all local links are chords, not overlapping lines), each
    router's terminals in a short spoke outward from it. None when the count is not
    that."""
    routers, terminals = g * a, g * a * p
    if min(g, a) < 1 or p < 0 or count != routers + terminals:
        return None
    r = np.arange(routers)
    group, j = r // a, r % a
    small = max(a / math.pi, 1.0) if a > 1 else 0.0  # routers about 2 units apart
    reach = small + p + 1.5  # from a group's centre to its outermost terminal
    big = max(g * 2 * reach / (2 * math.pi), reach) if g > 1 else 0.0
    theta = 2 * math.pi * group / g - math.pi / 2
    phi = theta + 2 * math.pi * j / a  # the first router of a group faces outward
    centre = big * np.column_stack((np.cos(theta), np.sin(theta)))
    out = np.column_stack((np.cos(phi), np.sin(phi)))
    router_xy = centre + small * out
    t = np.arange(terminals)
    home, k = t // p if p else t, t % p if p else t
    terminal_xy = router_xy[home] + (1.5 + k)[:, None] * out[home]
    xy = np.vstack((terminal_xy, router_xy))
    xy -= xy.min(axis=0)
    level = np.concatenate((np.zeros(terminals, np.int64), np.ones(routers, np.int64)))
    return xy, level


def _buses(others: list[Link]) -> list[tuple[int, np.ndarray]]:
    """The buses among a topology's other links: (link id, 0-based processors)."""
    return [(link.id, np.asarray(link.connect, dtype=np.int64) - 1) for link in others
            if link.id is not None and link.connect and len(link.connect) > 2]  # fmt: skip


def _placed(drawn: GraphDrawing, kind: str | None = None) -> Placement:
    bars = drawn.bars if len(drawn.bars) else None
    return Placement(kind or drawn.kind, drawn.xy, None, drawn.levels, bars, drawn.note,
                     drawn.bends)  # fmt: skip


def network_placement(topology: Topology, count: int,
                      switches: np.ndarray | None) -> Placement | None:  # fmt: skip
    """The layout of a topology that says it is a fat tree or a dragonfly (numbered
    as generated), or, given ``switches`` (some of them True), the graph drawing of
    :mod:`~parasol_core.topology.graph_layout` (layers or force-directed); None
    otherwise."""
    from parasol_core.topology.switches import network_of

    said = network_of(topology)
    _, a, b, others = link_pairs(topology)
    ok = (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    a, b = a[ok] - 1, b[ok] - 1
    if said is not None and (said[0].startswith("fattree") or said[0] == "xgft"):
        level = fattree_levels(count, said[0], said[1])
        if level is not None:
            return _placed(draw(count, a, b, levels=level, ordered=True), "fattree")
    if said is not None and said[0] == "dragonfly":
        q = said[1]
        made = dragonfly_xy(count, q["g"], q["a"], q["p"])
        if made is not None:
            return Placement("dragonfly", made[0], None, made[1])
    if switches is None or not switches[1 : count + 1].any():
        return None
    return _placed(draw(count, a, b, _buses(others), switches[1 : count + 1]))


def placement(topology: Topology, shape: Shape | None = None,
              switches: np.ndarray | None = None) -> Placement:  # fmt: skip
    """Positions of the topology's processors (see the module docstring).
    ``switches`` (:func:`~parasol_core.topology.switches.switch_mask`: indexed by
    processor number, True for a switch) lets a topology with switches and no network
    word be laid out as a tree of levels."""
    count = processor_count(topology)
    if count and topology.network:  # a fat tree or a dragonfly, if it says so rightly
        made = network_placement(topology, count, None)
        if made is not None:
            return made
    declared = shape is not None or declared_shape(topology) is not None
    shape = shape if shape is not None else shape_of(topology)
    if count and switches is not None and switches[1 : count + 1].any():
        # switches: a tree of levels, unless the topology is a grid by its shape
        # comment or by links of two or more dimensions (a line or a ring is weak
        # evidence: a star of three is one)
        grid = shape is not None and shape.size == count
        if not (grid and (declared or sum(n > 1 for n in shape.dims) >= 2)):
            made = network_placement(topology, count, switches)
            if made is not None:
                return made
    routing = (topology.routing or "").lower()
    p = np.arange(1, count + 1, dtype=np.int64)
    if count == 0:
        return Placement("grid", np.zeros((0, 2)), shape)
    if (
        routing == "hypercube"
        and count & (count - 1) == 0
        # a hypercube's links also make a 2 x 2 x ... x 2 mesh
        and (shape is None or max(shape.dims) <= 2 or sum(n > 1 for n in shape.dims) <= 1)
    ):
        bits = count.bit_length() - 1
        low = (bits + 1) // 2
        width = 1 << low
        x = gray_positions(low, width)[(p - 1) % width]
        y = gray_positions(bits - low, count // width)[(p - 1) // width]
        return Placement("hypercube", np.column_stack((x, y)).astype(np.float64), shape)
    if shape is not None and shape.size == count:
        active = [n for n in shape.dims if n > 1]
        if len(active) <= 1:
            _, a, b, _ = link_pairs(topology)
            wraps = np.any(np.abs(a - b) == count - 1) if count > 2 else False
            if wraps or routing == "1dtorus":
                return Placement("ring", circle(count), shape)
            return Placement("line", np.column_stack((p - 1, np.zeros(count))).astype(float),
                             shape)  # fmt: skip
        kind = "layers" if not shape.fits(2) else "grid"
        return Placement(kind, nested_grid(shape), shape)
    _, a, b, others = link_pairs(topology)
    ok = (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    buses = _buses(others)
    if not ok.any() and not buses:
        return Placement("circle", circle(count), None)
    return _placed(draw(count, a[ok] - 1, b[ok] - 1, buses))


# --------------------------------------------------------------------------- link groups


@dataclass(frozen=True)
class LinkClasses:
    """For each two-processor link: the axis it runs along (0, 1, 2; -1 when it does not
    join grid neighbours or there is no shape) and whether it wraps around."""

    ids: np.ndarray
    axis: np.ndarray
    wrap: np.ndarray
    other: tuple[int, ...]  # links of more (or fewer) than two processors


def link_classes(
    topology: Topology, shape: Shape | None = None, pairs: Pairs | None = None
) -> LinkClasses:
    shape = shape if shape is not None else shape_of(topology)
    ids, a, b, other_links = pairs if pairs is not None else link_pairs(topology)
    others = tuple(link.id for link in other_links)
    axis = np.full(ids.shape[0], -1, dtype=np.int64)
    wrap = np.zeros(ids.shape[0], dtype=bool)
    if shape is None or not ids.shape[0]:
        return LinkClasses(ids, axis, wrap, others)
    grid = shape.padded(3)
    inside = (a >= 1) & (a <= grid.size) & (b >= 1) & (b <= grid.size)
    # In row-major numbering a link along dimension k joins lo and lo + stride_k where
    # lo's coordinate k is not the last (no carry), and a wrap-around one lo and
    # lo + (size_k - 1) * stride_k where it is the first: one coordinate of one end,
    # for the links of that distance only (3,000,000 links: a fraction of a second).
    lo = np.minimum(a, b)
    d = np.where(inside, np.abs(a - b), 0)
    stride = 1
    for k, n in enumerate(grid.dims):
        if n >= 2:
            at = np.flatnonzero(d == stride)
            plain = at[((lo[at] - 1) // stride) % n < n - 1]
            axis[plain] = k
            if n >= 3:
                at = np.flatnonzero(d == (n - 1) * stride)
                wrapped = at[((lo[at] - 1) // stride) % n == 0]
                axis[wrapped] = k
                wrap[wrapped] = True
        stride *= n
    return LinkClasses(ids, axis, wrap, others)


def link_groups(topology: Topology, shape: Shape | None = None) -> dict[str, list[int]]:
    """Named groups of link ids, in menu order, empty ones left out: ``all``, ``X``,
    ``Y``, ``Z``, ``dimension 4`` to ``dimension 6`` (every link along the axis,
    wrap-around ones included),
    ``wrap-around``, ``other`` (links not between grid neighbours, buses)."""
    classes = link_classes(topology, shape)
    links = topology.links
    groups: dict[str, list[int]] = {
        "all": links.ids.tolist()
        if not links.odd_rows().shape[0]
        else [link.id for link in links if link.id is not None]
    }
    for n in range(6):
        name = AXES[n] if n < len(AXES) else f"dimension {n + 1}"
        groups[name] = classes.ids[classes.axis == n].tolist()
    groups["wrap-around"] = classes.ids[classes.wrap].tolist()
    groups["other"] = sorted(classes.ids[classes.axis < 0].tolist() + list(classes.other))
    return {k: v for k, v in groups.items() if v}


def segments(
    topology: Topology, where: Placement, pairs: Pairs | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What to draw for each link: ``(link ids, a, b)`` as 0-based processor indices, one
    row per segment. A two-processor link is one segment; a link of more processors
    (a bus) is drawn as its bar (:attr:`Placement.bars`), or, where the placement has
    none for it, as the chain through them in order of position."""
    count = where.count
    ids, a, b, others = pairs if pairs is not None else link_pairs(topology)
    ok = (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    ids, a, b = [ids[ok]], [a[ok] - 1], [b[ok] - 1]
    barred = set(where.bars.ids.tolist()) if where.bars is not None else set()
    for link in others:
        if not link.connect or len(link.connect) <= 2 or link.id in barred:  # not a bus
            continue
        members = sorted({p for p in link.connect if 1 <= p <= count},
                         key=lambda p: (where.xy[p - 1, 0], where.xy[p - 1, 1]))  # fmt: skip
        ids.append(np.full(max(len(members) - 1, 0), link.id, dtype=np.int64))
        a.append(np.asarray(members[:-1], dtype=np.int64) - 1)
        b.append(np.asarray(members[1:], dtype=np.int64) - 1)
    return np.concatenate(ids), np.concatenate(a), np.concatenate(b)
