"""Where to draw a topology's processors and how to group its links (no drawing here).

:func:`placement` gives every processor a position in grid units (x to the right, y
downward), by the topology's shape:

* a 2D grid or torus: ``(x, y)`` of its row-major numbering;
* a 3D shape: its ``z`` layers side by side, one column of space between them;
* a ring (a 1D shape with a wrap-around link, or ``1Dtorus`` routing): a circle;
* a line (a 1D shape without wrap-around): a row;
* a hypercube (``hypercube`` routing, ``2**d`` processors): the low half of the bits
  across, the high half down, each half in Gray-code order so that neighbours sit
  side by side;
* a bus (a link joining more than two processors): a row;
* anything else (a link list with no shape): a force-directed layout up to
  :data:`FORCE_LIMIT` processors, a circle above.

Everything is numpy, so 32,768 processors lay out in milliseconds.

:func:`link_classes` says for every two-processor link of a grid which axis it runs
along (X, Y, Z) and whether it wraps around; :func:`link_groups` turns that into the
named groups the link-group editor offers.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from parasol_core.model import Link, Topology
from parasol_core.topology.shape import Shape, processor_count, shape_of

#: Link lists without a shape up to this many processors get a force-directed layout.
FORCE_LIMIT = 400
AXES = ("X", "Y", "Z")


@dataclass(frozen=True)
class Placement:
    """Positions of processors ``1..count``: ``xy[p - 1]`` in grid units."""

    kind: str  # grid, layers, ring, line, hypercube, bus, force, circle
    xy: np.ndarray  # (count, 2) float64
    shape: Shape | None

    @property
    def count(self) -> int:
        return int(self.xy.shape[0])

    def bounds(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of the processors, or a unit square when empty."""
        if not self.count:
            return (0.0, 0.0, 1.0, 1.0)
        lo, hi = self.xy.min(axis=0), self.xy.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


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


def _is_bus(topology: Topology) -> bool:
    _, _, off, _ = topology.links.resolved()
    return bool((np.diff(off) > 2).any())


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


def circle(count: int) -> np.ndarray:
    """Processors on a circle, 1 at the top, clockwise, about one unit apart."""
    if count == 1:
        return np.zeros((1, 2))
    radius = max(count / (2 * math.pi), 1.0)
    angle = 2 * math.pi * np.arange(count) / count - math.pi / 2
    return np.column_stack((radius * (1 + np.cos(angle)), radius * (1 + np.sin(angle))))


def force_directed(count: int, a: np.ndarray, b: np.ndarray, iterations: int = 200,
                   seed: int = 1) -> np.ndarray:  # fmt: skip
    """A Fruchterman-Reingold layout of processors ``1..count`` joined by ``a[i]-b[i]``
    (1-based), deterministic, scaled so that linked processors sit about one unit apart."""
    if count <= 2:
        return circle(count)
    rng = np.random.default_rng(seed)
    pos = circle(count) + rng.normal(scale=0.05, size=(count, 2))
    ia, ib = a - 1, b - 1
    k = 1.0
    temp = max(count / (2 * math.pi), 1.0) / 4
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt((delta**2).sum(axis=2)) + 1e-9
        np.fill_diagonal(dist, np.inf)
        force = (delta * (k * k / dist**2)[:, :, None]).sum(axis=1)  # repulsion
        d = pos[ia] - pos[ib]
        length = np.sqrt((d**2).sum(axis=1)) + 1e-9
        pull = d * (length / k)[:, None]
        np.add.at(force, ia, -pull)
        np.add.at(force, ib, pull)
        size = np.sqrt((force**2).sum(axis=1)) + 1e-9
        pos += force / size[:, None] * np.minimum(size, temp)[:, None]
        temp *= 0.97
    pos -= pos.min(axis=0)
    if len(ia):
        mean = float(np.sqrt(((pos[ia] - pos[ib]) ** 2).sum(axis=1)).mean())
        if mean > 0:
            pos /= mean
    return pos


def placement(topology: Topology, shape: Shape | None = None) -> Placement:
    """Positions of the topology's processors (see the module docstring)."""
    count = processor_count(topology)
    shape = shape if shape is not None else shape_of(topology)
    routing = (topology.routing or "").lower()
    p = np.arange(1, count + 1, dtype=np.int64)
    if count == 0:
        return Placement("grid", np.zeros((0, 2)), shape)
    if (
        routing == "hypercube"
        and count & (count - 1) == 0
        and (shape is None or sum(n > 1 for n in shape.dims) <= 1)
    ):
        bits = count.bit_length() - 1
        low = (bits + 1) // 2
        width = 1 << low
        x = gray_positions(low, width)[(p - 1) % width]
        y = gray_positions(bits - low, count // width)[(p - 1) // width]
        return Placement("hypercube", np.column_stack((x, y)).astype(np.float64), shape)
    if shape is not None and shape.size == count:
        active = [n for n in shape.dims if n > 1]
        coords = shape.padded(3).coordinates_array(p)
        if len(active) <= 1:
            _, a, b, _ = link_pairs(topology)
            wraps = np.any(np.abs(a - b) == count - 1) if count > 2 else False
            if wraps or routing == "1dtorus":
                return Placement("ring", circle(count), shape)
            return Placement("line", np.column_stack((p - 1, np.zeros(count))).astype(float),
                             shape)  # fmt: skip
        w, d = shape.padded(3).dims[0], shape.padded(3).dims[2]
        x = coords[:, 0] + coords[:, 2] * (w + 1)
        kind = "layers" if d > 1 else "grid"
        return Placement(kind, np.column_stack((x, coords[:, 1])).astype(np.float64), shape)
    if _is_bus(topology):
        return Placement("bus", np.column_stack((p - 1, np.zeros(count))).astype(float), None)
    _, a, b, _ = link_pairs(topology)
    ok = (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    if count <= FORCE_LIMIT and ok.any():
        return Placement("force", force_directed(count, a[ok], b[ok]), None)
    return Placement("circle", circle(count), None)


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
    ca = np.zeros((ids.shape[0], grid.ndim), dtype=np.int64)  # 3, or 4 to 6 (N-D)
    cb = np.zeros_like(ca)
    ca[inside] = grid.coordinates_array(a[inside])
    cb[inside] = grid.coordinates_array(b[inside])
    diff = np.abs(ca - cb)
    moved = diff != 0
    single = inside & (moved.sum(axis=1) == 1)
    along = np.argmax(moved, axis=1)
    step = diff.sum(axis=1)
    size = np.asarray(grid.dims)[along]
    plain = single & (step == 1)
    wrapped = single & (step == size - 1) & (size >= 3)
    axis[plain | wrapped] = along[plain | wrapped]
    wrap[wrapped] = True
    return LinkClasses(ids, axis, wrap, others)


def link_groups(topology: Topology, shape: Shape | None = None) -> dict[str, list[int]]:
    """Named groups of link ids, in menu order, empty ones left out: ``all``, ``X``,
    ``Y``, ``Z`` (every link along the axis, wrap-around ones included),
    ``wrap-around``, ``other`` (links not between grid neighbours, buses)."""
    classes = link_classes(topology, shape)
    links = topology.links
    groups: dict[str, list[int]] = {
        "all": links.ids.tolist()
        if not links.odd_rows().shape[0]
        else [link.id for link in links if link.id is not None]
    }
    for n, name in enumerate(AXES):
        groups[name] = classes.ids[classes.axis == n].tolist()
    groups["wrap-around"] = classes.ids[classes.wrap].tolist()
    groups["other"] = sorted(classes.ids[classes.axis < 0].tolist() + list(classes.other))
    return {k: v for k, v in groups.items() if v}


def segments(
    topology: Topology, where: Placement, pairs: Pairs | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What to draw for each link: ``(link ids, a, b)`` as 0-based processor indices, one
    row per segment. A two-processor link is one segment; a link of more processors
    (a bus) is the chain through them in order of position."""
    count = where.count
    ids, a, b, others = pairs if pairs is not None else link_pairs(topology)
    ok = (a >= 1) & (a <= count) & (b >= 1) & (b <= count)
    ids, a, b = [ids[ok]], [a[ok] - 1], [b[ok] - 1]
    for link in others:
        if not link.connect or len(link.connect) <= 2:  # not a bus
            continue
        members = sorted({p for p in link.connect if 1 <= p <= count},
                         key=lambda p: (where.xy[p - 1, 0], where.xy[p - 1, 1]))  # fmt: skip
        ids.append(np.full(max(len(members) - 1, 0), link.id, dtype=np.int64))
        a.append(np.asarray(members[:-1], dtype=np.int64) - 1)
        b.append(np.asarray(members[1:], dtype=np.int64) - 1)
    return np.concatenate(ids), np.concatenate(a), np.concatenate(b)
