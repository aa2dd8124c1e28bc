"""Mappings of virtual onto hardware processors: how good one is, and ways to make one.

Quality (of the mapping in the file, or of a proposed one):

* **dilation**: hardware hops per virtual link, the maximum and the mean;
* **congestion**: the most virtual links whose hardware routes cross one hardware link.

Virtual links are counted undirected (each neighbour pair once), routed from the lower
virtual number to the higher by the hardware's routing technique, as in the usual
definition of an embedding's dilation and congestion.

Schemes (:data:`MAPPING_SCHEMES`), each ``scheme(hardware, count, shape, seed) ->
[hardware processor of virtual 1, of virtual 2, ...]``:

* ``identity``: virtual ``v`` on hardware ``v``;
* ``row-major``: virtual coordinates kept, the virtual grid in the corner of the
  hardware grid (identity when the shapes are equal or the virtual has none);
* ``snake``: virtual ``1, 2, ...`` along the hardware grid boustrophedon-wise, so
  consecutive numbers are neighbours;
* ``ring``: a ring embedding in which every virtual link ``v -> v+1`` (and ``n -> 1``)
  is one hop, where the grid has a Hamiltonian cycle (an even processor count); on an
  odd x odd grid exactly one link takes two hops, on a line every link at most two;
* ``random``: a random placement from ``seed``;
* ``gray``: reflected Gray code, for a hypercube (``2**d`` processors): a ring, or a
  grid or torus with power-of-two sizes, lands with every link one hop.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.words import counted
from parasol_core.model import Machine, Topology, VirtualTopology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import RouteBatch, TopologyIndex, index_of
from parasol_core.topology.names import processor_number
from parasol_core.topology.shape import Shape
from parasol_core.topology.virtual import (
    find_virtual,
    hardware_of,
    virtual_count,
    virtual_label,
    virtual_links,
    virtual_shape,
)

# --------------------------------------------------------------------------- quality


@dataclass(frozen=True)
class MappingQuality:
    virtual_links: int  # undirected
    dilation_max: int
    dilation_mean: float
    congestion: int
    congested_links: tuple[int, ...]  # hardware link ids carrying `congestion` virtual links
    long_links: tuple[tuple[int, int], ...]  # virtual links of `dilation_max` hops (if > 1)


def mapping_quality(
    machine: Machine,
    virtual: VirtualTopology | int,
    mapping: Mapping[int, int] | None = None,
) -> MappingQuality:
    """Dilation and congestion of the virtual topology's mapping, or of ``mapping``
    (virtual -> hardware) proposed for it."""
    virtual = find_virtual(machine, virtual)
    mapping = virtual.mapping if mapping is None else mapping
    index = index_of(hardware_of(machine))
    index.check()
    links = virtual_links(machine, virtual, directed=False)
    if not links:
        return MappingQuality(0, 0, 0.0, 0, (), ())
    batch = _mapped_routes(index, links, mapping, virtual_label(virtual))
    hops = batch.hops
    dmax = int(hops.max())
    # congestion: distinct virtual links per hardware link, counted by link slot (a
    # position, bounded by the links in the file) rather than by id (any size)
    nslots = max(index.link_ids.shape[0], 1)
    which = np.repeat(np.arange(len(links), dtype=np.int64), hops)
    pairs = unique(which * nslots + index.slots(batch.links))
    per_link = np.bincount(pairs % nslots, minlength=nslots)
    return _quality(links, hops, dmax, per_link, index.link_ids)


def _mapped_routes(
    index: TopologyIndex,
    links: Sequence[tuple[int, int]],
    mapping: Mapping[int, int],
    label: str,
) -> RouteBatch:
    """The hardware routes of virtual links under ``mapping``; a RoutingError names the
    virtual topology (``label``) and any virtual processor that is not mapped."""
    src, dst = [], []
    for v, w in links:
        for p in (v, w):
            if p not in mapping:
                raise RoutingError(
                    f"virtual processor {p} of {label} is not mapped to a hardware processor"
                )
        src.append(mapping[v])
        dst.append(mapping[w])
    try:
        return index.routes(src, dst)
    except RoutingError as e:
        raise RoutingError(f"{e} (routing {label})") from None


def _quality(
    links: Sequence[tuple[int, int]],
    hops: np.ndarray,
    dmax: int,
    per_link: np.ndarray,
    link_ids: np.ndarray,
) -> MappingQuality:
    """The figures from each virtual link's hops and each hardware slot's load."""
    congestion = int(per_link.max(initial=0))
    busiest = (
        tuple(sorted(int(link_ids[i]) for i in np.flatnonzero(per_link == congestion)))
        if congestion
        else ()
    )
    long_links = tuple(links[i] for i in np.flatnonzero(hops == dmax)) if dmax > 1 else ()
    return MappingQuality(
        virtual_links=len(links),
        dilation_max=dmax,
        dilation_mean=float(hops.mean()),
        congestion=congestion,
        congested_links=busiest,
        long_links=long_links,
    )


class MappingMetrics:
    """Dilation and congestion of one virtual topology's mapping, kept up to date move
    by move: after a swap only the virtual links touching the moved virtual processors
    change route, so only those are routed again and their hardware links' counts
    adjusted (old route out, new route in). :meth:`quality` equals
    :func:`mapping_quality` of :attr:`mapping` at every step.

    A snapshot of the hardware and the virtual links when made (like the topology
    index it holds): make a new one after the hardware, its links or the virtual
    topology's routing or size changed.
    """

    def __init__(
        self,
        machine: Machine,
        virtual: VirtualTopology | int,
        mapping: Mapping[int, int] | None = None,
    ) -> None:
        virtual = find_virtual(machine, virtual)
        self.label = virtual_label(virtual)
        self.mapping: dict[int, int] = dict(virtual.mapping if mapping is None else mapping)
        self.index = index_of(hardware_of(machine))
        self.index.check()
        self.links: list[tuple[int, int]] = virtual_links(machine, virtual, directed=False)
        n = len(self.links)
        self._nslots = max(self.index.link_ids.shape[0], 1)
        self._touching: dict[int, list[int]] = {}
        for row, (v, w) in enumerate(self.links):
            self._touching.setdefault(v, []).append(row)
            self._touching.setdefault(w, []).append(row)
        self.hops = np.zeros(n, dtype=np.int64)
        self.load = np.zeros(self._nslots, dtype=np.int64)  # virtual links per link slot
        self._slots: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * n
        if n:
            rows = np.arange(n, dtype=np.int64)
            hops, slots = self._route(rows, self.mapping)
            self._commit(rows, hops, slots)

    def _route(
        self, rows: np.ndarray, mapping: Mapping[int, int]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Hops and distinct link slots of the routes of virtual links ``rows``."""
        links = [self.links[row] for row in rows.tolist()]
        batch = _mapped_routes(self.index, links, mapping, self.label)
        hops = batch.hops
        nslots = self._nslots
        which = np.repeat(np.arange(rows.shape[0], dtype=np.int64), hops)
        pairs = unique(which * nslots + self.index.slots(batch.links))
        ends = np.searchsorted(pairs // nslots, np.arange(1, rows.shape[0]))
        return hops, np.split(pairs % nslots, ends)

    def _commit(self, rows: np.ndarray, hops: np.ndarray, slots: list[np.ndarray]) -> None:
        for row, s in zip(rows.tolist(), slots):
            self._slots[row] = s
        self.hops[rows] = hops
        if slots:
            self.load += np.bincount(np.concatenate(slots), minlength=self._nslots)

    def _rows_of(self, moves: Mapping[int, int]) -> np.ndarray:
        rows: set[int] = set()
        for v in moves:
            rows.update(self._touching.get(v, ()))
        return np.fromiter(sorted(rows), dtype=np.int64, count=len(rows))

    def update(self, moves: Mapping[int, int]) -> None:
        """Move virtual processors (virtual -> new hardware processor), as
        :func:`swap` gives. On a routing error nothing changes."""
        moves = {v: h for v, h in moves.items() if self.mapping.get(v) != h}
        if not moves:
            return
        rows = self._rows_of(moves)
        proposed = {**self.mapping, **moves} if rows.size else self.mapping
        if rows.size:
            hops, slots = self._route(rows, proposed)  # may raise: nothing changed yet
            old = [self._slots[row] for row in rows.tolist()]
            self.load -= np.bincount(np.concatenate(old), minlength=self._nslots)
            self._commit(rows, hops, slots)
        self.mapping.update(moves)

    def sync(self, mapping: Mapping[int, int]) -> None:
        """Follow ``mapping`` (the mapping now in the model, after an edit, an undo or a
        redo): only the entries that differ are moved."""
        gone = [v for v in self.mapping if v not in mapping]
        if gone:  # a virtual processor lost its place: its links cannot be routed
            raise RoutingError(
                f"virtual processor {gone[0]} of {self.label} is not mapped to a hardware processor"
            )
        self.update({v: h for v, h in mapping.items() if self.mapping.get(v) != h})

    def preview(self, moves: Mapping[int, int]) -> MappingQuality:
        """The quality if ``moves`` were made, leaving this state as it is."""
        moves = {v: h for v, h in moves.items() if self.mapping.get(v) != h}
        rows = self._rows_of(moves)
        if not rows.size:  # no virtual link touches what moves
            return self.quality()
        hops, slots = self._route(rows, {**self.mapping, **moves})
        old_hops = self.hops[rows]
        old_slots = [self._slots[row] for row in rows.tolist()]
        old_load = self.load.copy()
        self.load -= np.bincount(np.concatenate(old_slots), minlength=self._nslots)
        self._commit(rows, hops, slots)
        try:
            return self.quality()
        finally:
            self.load = old_load
            self.hops[rows] = old_hops
            for row, s in zip(rows.tolist(), old_slots):
                self._slots[row] = s

    def link_load(self) -> dict[int, int]:
        """As :func:`link_load`: virtual links per hardware link id, links crossed only."""
        at = np.flatnonzero(self.load)
        return dict(zip(self.index.link_ids[at].tolist(), self.load[at].tolist()))

    def quality(self) -> MappingQuality:
        """The same as :func:`mapping_quality` of the current :attr:`mapping`."""
        links = self.links
        if not links:
            return MappingQuality(0, 0, 0.0, 0, (), ())
        hops = self.hops
        dmax = int(hops.max())
        return _quality(links, hops, dmax, self.load, self.index.link_ids)


# --------------------------------------------------------------------------- schemes

Scheme = Callable[[TopologyIndex, int, "Shape | None", "int | None"], list[int]]


def _need_room(hw: TopologyIndex, count: int) -> None:
    if count > hw.count:
        raise RoutingError(
            f"{counted(count, 'virtual processor', grouped=False)} do not fit on the "
            f"{counted(hw.count, 'processor', grouped=False)} of {hw.label}"
        )


def _need_grid(hw: TopologyIndex, scheme: str) -> Shape:
    if hw.shape is None:
        raise RoutingError(f"the {scheme} mapping needs a grid shape, and {hw.label} has none")
    return hw.shape


def identity(hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None) -> list[int]:
    _need_room(hw, count)
    return list(range(1, count + 1))


def row_major(hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None) -> list[int]:
    _need_room(hw, count)
    if shape is None or sum(n > 1 for n in shape.dims) <= 1 or hw.shape is None:
        return list(range(1, count + 1))
    ndim = max(shape.ndim, hw.shape.ndim)
    vdims, hdims = shape.padded(ndim).dims, hw.shape.padded(ndim).dims
    if any(v > h for v, h in zip(vdims, hdims)):
        raise RoutingError(
            f"a {shape} virtual grid does not fit in the {hw.shape} grid of {hw.label}"
        )
    hgrid = Shape(hdims)
    vgrid = Shape(vdims)
    return [hgrid.processor(vgrid.coordinates(v)) for v in range(1, count + 1)]


def snake_order(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cell of a grid, each next to the one before: rows along X alternate
    direction, and rows run through Y then Z (then the further dimensions of an N-D
    grid), also alternating: the rows are the snake order of the other dimensions."""
    dims = tuple(dims) + (1,) * (3 - len(dims))
    if len(dims) == 1:
        return [(x,) for x in range(dims[0])]
    out = []
    for i, row in enumerate(snake_order(dims[1:]) if len(dims) > 3 else _rows(dims[1:])):
        xs = range(dims[0]) if i % 2 == 0 else range(dims[0] - 1, -1, -1)
        out.extend((x, *row) for x in xs)
    return out


def _rows(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The snake order of two dimensions (Y along, then Z)."""
    h, d = dims
    out = []
    for z in range(d):
        ys = range(h) if z % 2 == 0 else range(h - 1, -1, -1)
        out.extend((y, z) for y in ys)
    return out


def snake(hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None) -> list[int]:
    _need_room(hw, count)
    grid = _need_grid(hw, "snake")
    padded = grid.padded(3)
    return [padded.processor(c) for c in snake_order(grid.dims)[:count]]


def ring_order(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A closed tour of every cell of a grid, as few steps longer than one hop as
    possible: none when the cell count is even (and the grid is not a line), one
    two-hop step on an odd x odd grid, two-hop steps throughout on a line."""
    ndim = len(dims)
    active = [a for a, n in enumerate(dims) if n > 1]

    def cell(values: dict[int, int]) -> tuple[int, ...]:
        return tuple(values.get(a, 0) for a in range(ndim))

    if not active:
        return [cell({})]
    if len(active) == 1:
        (axis,) = active
        n = dims[axis]
        order = list(range(0, n, 2)) + list(range(n - 1 if n % 2 == 0 else n - 2, 0, -2))
        return [cell({axis: c}) for c in order]
    # Reduce to a 2D problem: a straight axis A across, and "rows" B that are either one
    # axis or a snake through two, consecutive rows always neighbours. B gets an even
    # size when any axis has one.
    even = [a for a in active if dims[a] % 2 == 0]
    if len(active) == 2:
        x, y = active
        across, rows_axes = (y, [x]) if dims[y] % 2 and even else (x, [y])
    else:
        b_first = even[0] if even else active[1]
        rest = [a for a in active if a != b_first]
        across, rows_axes = rest[0], [b_first, rest[1]]
    width = dims[across]
    if len(rows_axes) == 1:
        rows = [{rows_axes[0]: r} for r in range(dims[rows_axes[0]])]
    else:
        u, v = rows_axes
        rows = []
        for j in range(dims[v]):
            us = range(dims[u]) if j % 2 == 0 else range(dims[u] - 1, -1, -1)
            rows.extend({u: i, v: j} for i in us)
    height = len(rows)

    def at(a: int, r: int) -> tuple[int, ...]:
        return cell({across: a, **rows[r]})

    if height % 2 == 0:
        tour = [(a, 0) for a in range(width)]
        tour += _comb(width, 1, height)
    else:  # odd x odd: row 0 spliced into a tour of rows 1.. with one 2-hop step
        tour = [(0, 1), (0, 0)]
        for a in range(1, width, 2):
            tour += [(a, 1), (a, 0), (a + 1, 0), (a + 1, 1)]
        tour += _comb(width, 2, height)
    return [at(a, r) for a, r in tour]


def _comb(width: int, first: int, height: int) -> list[tuple[int, int]]:
    """Rows ``first..height-1`` over columns 1..width-1, alternating direction from
    the right, then column 0 back down to row ``first`` (an odd number of rows, so
    the last one ends in column 1)."""
    out = []
    for i, r in enumerate(range(first, height)):
        cols = range(width - 1, 0, -1) if i % 2 == 0 else range(1, width)
        out.extend((a, r) for a in cols)
    out.extend((0, r) for r in range(height - 1, first - 1, -1))
    return out


def _sub_grid(dims: tuple[int, ...], count: int) -> tuple[int, ...] | None:
    """A sub-grid of ``dims`` with exactly ``count`` cells, best for a ring: an even
    count with two sizes above 1 first, then the most compact."""
    best = None
    for sub in product(*(range(1, n + 1) for n in dims)):
        if int(np.prod(sub)) != count:
            continue
        big = [n for n in sub if n > 1]
        key = (not (count % 2 == 0 and len(big) >= 2), max(big, default=1) / min(big, default=1))
        if best is None or key < best[0]:
            best = (key, sub)
    return best[1] if best else None


def ring(hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None) -> list[int]:
    _need_room(hw, count)
    grid = _need_grid(hw, "ring")
    if sum(n > 1 for n in grid.dims) > 3:
        raise RoutingError(
            f"the ring mapping works on grids of up to 3 dimensions; {hw.label} is {grid} "
            "(the snake mapping works on any)"
        )
    sub = _sub_grid(grid.dims, count)
    if sub is None:  # no sub-grid of that size: a snake, closed by one long link
        return snake(hw, count, shape, seed)
    return [grid.processor(c) for c in ring_order(sub)]


def random_mapping(
    hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None
) -> list[int]:
    _need_room(hw, count)
    return random.Random(seed).sample(range(1, hw.count + 1), count)


def gray_code(i: int) -> int:
    return i ^ (i >> 1)


def gray(hw: TopologyIndex, count: int, shape: Shape | None, seed: int | None) -> list[int]:
    _need_room(hw, count)
    n = hw.count
    if n < 1 or n & (n - 1):
        raise RoutingError(
            f"the gray mapping needs a hypercube (2**d processors); {hw.label} has {n}"
        )
    sizes = shape.dims if shape is not None else (count,)
    if any(s & (s - 1) for s in sizes) or shape is None or shape.size != count:
        sizes = (count,)  # not a power-of-two grid: Gray code along the numbering
    out = []
    for v in range(1, count + 1):
        coords = Shape(sizes).coordinates(v) if len(sizes) > 1 else (v - 1,)
        code, shift = 0, 0
        for c, s in zip(coords, sizes):
            code |= gray_code(c) << shift
            shift += s.bit_length() - 1
        out.append(code + 1)
    return out


MAPPING_SCHEMES: dict[str, Scheme] = {
    "identity": identity,
    "row-major": row_major,
    "snake": snake,
    "ring": ring,
    "random": random_mapping,
    "gray": gray,
}


def mapping_schemes() -> list[str]:
    return list(MAPPING_SCHEMES)


def make_mapping(
    machine: Machine,
    virtual: VirtualTopology | int,
    scheme: str,
    *,
    seed: int | None = None,
) -> dict[int, int]:
    """A mapping (virtual -> hardware processor) for the virtual topology by a named
    scheme. The model is not changed: set ``virtual.mapping`` (through an undoable
    command in the editor) to apply it."""
    virtual = find_virtual(machine, virtual)
    func = MAPPING_SCHEMES.get(scheme)
    if func is None:
        raise RoutingError(
            f"unknown mapping scheme {scheme!r} (known: {', '.join(MAPPING_SCHEMES)})"
        )
    hardware = hardware_of(machine)
    hw = index_of(hardware)
    hw.check()
    count = virtual_count(virtual)
    from parasol_core.topology.switches import compute_processors, has_switches

    if has_switches(machine, hardware):  # onto the compute processors only, as ranks
        ranks = compute_processors(machine, hardware, hw.count)
        targets = ComputeTargets(int(ranks.shape[0]), None,
                                 f"the {counted(ranks.shape[0], 'compute processor')} of "
                                 f"{hw.label}")  # fmt: skip
        placed = func(targets, count, virtual_shape(machine, virtual), seed)  # type: ignore[arg-type]
        return {v: int(ranks[h - 1]) for v, h in zip(range(1, count + 1), placed)}
    placed = func(hw, count, virtual_shape(machine, virtual), seed)
    return {v: int(h) for v, h in zip(range(1, count + 1), placed)}


@dataclass(frozen=True)
class ComputeTargets:
    """What a scheme sees of a hardware topology with switches: its compute processors
    as ranks ``1..count`` (no grid shape: a switched network is not a grid), placed
    back on their processor numbers afterwards. So ``identity`` puts virtual ``v`` on
    the ``v``-th compute processor, ``random`` draws among compute processors, and the
    grid schemes (``snake``, ``ring``) refuse, saying why."""

    count: int
    shape: Shape | None
    label: str


# --------------------------------------------------------------------------- editing


def link_load(
    machine: Machine,
    virtual: VirtualTopology | int,
    mapping: Mapping[int, int] | None = None,
) -> dict[int, int]:
    """How many (undirected) virtual links cross each hardware link, for the links
    crossed at least once: the load the grid view draws and congestion is the maximum of."""
    virtual = find_virtual(machine, virtual)
    mapping = virtual.mapping if mapping is None else mapping
    links = virtual_links(machine, virtual, directed=False)
    if not links:
        return {}
    index = index_of(hardware_of(machine))
    batch = index.routes([mapping[v] for v, _ in links], [mapping[w] for _, w in links])
    which = np.repeat(np.arange(len(links)), batch.hops)
    pairs = np.unique(np.column_stack((which, batch.links)), axis=0)
    ids, counts = np.unique(pairs[:, 1], return_counts=True)
    return dict(zip(ids.tolist(), counts.tolist()))


def swap(mapping: Mapping[int, int], a: int, b: int) -> dict[int, int]:
    """The entries of ``mapping`` (virtual -> hardware) that change when the virtual
    processors on hardware processors ``a`` and ``b`` trade places; a virtual processor
    dragged onto a free hardware processor moves there. Empty when nothing moves."""
    if a == b:
        return {}
    on_a = [v for v, h in mapping.items() if h == a]
    on_b = [v for v, h in mapping.items() if h == b]
    out = {v: b for v in on_a}
    out.update({v: a for v in on_b})
    return out


# --------------------------------------------------------------------------- forwarding


@dataclass(frozen=True)
class ForwardingFigures:
    """What a forwarding cost (``# piui: forward``) makes of a mapping: the forwarding
    steps over all virtual links (one per processor between a link's ends) and the
    seconds per byte of the slowest virtual link alone (its slowest link's speed, plus
    the forwarding cost when it passes through another processor; the hardware's
    slowest link speed is taken, exact when the links are alike)."""

    forwarded_hops: int
    worst_per_byte: float


def forwarding_figures(machine: Machine, quality: MappingQuality) -> ForwardingFigures | None:
    """:class:`ForwardingFigures` for a mapping's quality; None when the hardware has no
    forwarding cost (a 1994 model)."""
    from parasol_core.topology.resources import options_of

    hw = hardware_of(machine)
    forward = options_of(hw).forward
    if forward is None or not quality.virtual_links:
        return None
    speeds = index_of(hw).speed
    slowest = float(np.nanmax(speeds)) if speeds.shape[0] else 0.0
    hops = round(quality.virtual_links * (quality.dilation_mean - 1))
    worst = slowest + forward if quality.dilation_max > 1 else slowest
    return ForwardingFigures(forwarded_hops=hops, worst_per_byte=worst)


#: Virtual topologies larger than this are not compared with the schemes: making the
#: six mappings of a 32,768-processor one takes about a second.
MAX_SCHEME_MATCH = 20_000


def scheme_mappings(machine: Machine, virtual: VirtualTopology | int, seed: int | None = None,
                    ) -> dict[str, dict[int, int]]:  # fmt: skip
    """The mapping each scheme makes of ``virtual`` (random only with ``seed``); empty
    past :data:`MAX_SCHEME_MATCH` processors. They depend on the topologies, not on the
    mapping: a view keeps them while only the mapping changes."""
    virtual = find_virtual(machine, virtual)
    if virtual_count(virtual) > MAX_SCHEME_MATCH:
        return {}
    out = {}
    for scheme in MAPPING_SCHEMES:
        if scheme == "random" and seed is None:
            continue
        try:
            out[scheme] = make_mapping(machine, virtual, scheme, seed=seed)
        except RoutingError:
            continue
    return out


def scheme_of(mapping: Mapping[int, int], schemes: Mapping[str, Mapping[int, int]],
              ) -> str | None:  # fmt: skip
    """The scheme of ``schemes`` (see :func:`scheme_mappings`) that ``mapping`` is, or
    None: what a list of schemes highlights, as true after a manual swap as after Apply."""
    return next((name for name, made in schemes.items() if made == mapping), None)


def mapping_text(virtual: VirtualTopology) -> str:
    """The mapping as the hardware processor of virtual processor 1, 2, ... in order
    (a permutation when one to one), '-' for one not mapped."""
    n = virtual_count(virtual)
    return " ".join(str(virtual.mapping.get(v, "-")) for v in range(1, n + 1))


def sharing_limit(count: int, compute: int) -> int:
    """How many virtual processors may share one hardware processor, for ``count``
    virtual processors on ``compute`` compute processors: one each while there are
    enough compute processors; else as many as spreading them evenly takes (the wrapped
    mapping of a new virtual topology: 72 on 64 is 2)."""
    if compute < 1:
        return max(count, 1)
    return max(1, -(-count // compute))


def crowding(mapping: Mapping[int, int], changes: Mapping[int, int], count: int,
             compute: int) -> str | None:  # fmt: skip
    """Why setting ``changes`` (virtual -> hardware) in ``mapping`` puts more virtual
    processors on one hardware processor than :func:`sharing_limit` allows, in words
    (two on one, "1 1 2 ...", when there is a processor for each); None when it does
    not. Only a hardware processor the changes put more on counts: a mapping read from
    a file that already shares stays editable."""
    if not changes:
        return None
    limit = sharing_limit(count, compute)
    after = {**mapping, **changes}
    if len(after) <= limit:
        return None
    touched = np.asarray(sorted(set(changes.values())), dtype=np.int64)
    load_after = _loads(after.values(), touched)
    load_before = _loads(mapping.values(), touched)
    over = (load_after > limit) & (load_after > load_before)
    if not over.any():
        return None
    h = int(touched[np.argmax(over)])
    sharing = sorted(v for v, w in after.items() if w == h)
    shown = ", ".join(map(str, sharing[:-1][:8])) + (", …" if len(sharing) > 9 else "")
    who = f"virtual processors {shown} and {sharing[-1]} would share hardware processor {h}"
    if limit == 1:
        return (f"{who}: with {counted(compute, 'compute processor', grouped=False)} for "
                f"{count} virtual ones, "
                "each takes one of its own")  # fmt: skip
    return (f"{who}: {count} virtual processors on {compute} compute ones take at most "
            f"{limit} to a processor")  # fmt: skip


def place(kept: Mapping[int, int], new: Sequence[int], targets: Sequence[int] | np.ndarray,
          count: int, preferred: Mapping[int, int] | None = None) -> dict[int, int]:  # fmt: skip
    """Hardware processors for the virtual processors ``new`` beside the entries
    ``kept`` (of a virtual topology of ``count`` processors), among ``targets`` (the
    compute processors): each on its ``preferred`` one while that holds fewer than
    :func:`sharing_limit` allows, else on the least used target, the lowest number
    first. So a mapping that grew or lost hardware processors never puts two virtual
    processors on one while another is free. Empty when there are no targets."""
    import heapq

    targets = [int(t) for t in np.asarray(targets, dtype=np.int64).tolist()]
    if not targets:
        return {}
    limit = sharing_limit(count, len(targets))
    allowed = set(targets)
    load = dict.fromkeys(targets, 0)
    for h in kept.values():
        if h in allowed:
            load[h] += 1
    heap = [(n, t) for t, n in load.items()]
    heapq.heapify(heap)
    out: dict[int, int] = {}
    preferred = preferred or {}
    for v in new:
        h = preferred.get(v)
        if h is None or h not in allowed or load[h] >= limit:
            while True:
                n, h = heap[0]
                if n == load[h]:
                    break
                heapq.heapreplace(heap, (load[h], h))  # stale: its load grew since
        out[v] = h
        load[h] += 1
        heapq.heappush(heap, (load[h], h))
    return out


def overload(mapping: Mapping[int, int], count: int, compute: int,
             hardware_count: int) -> tuple[int, int, int, int] | None:  # fmt: skip
    """The hardware processor a mapping puts the most virtual processors on, when that
    is more than :func:`sharing_limit` allows: (processor, how many, the limit, how
    many hardware processors are past it); None when none is. Values outside
    1..``hardware_count`` are left out (they are errors of their own)."""
    values = _int_values(mapping.values())
    values = values[(values >= 1) & (values <= hardware_count)]
    if values.size == 0:
        return None
    # counted over the values there are (memory as the mapping's, whatever the count)
    processors, loads = np.unique(values, return_counts=True)
    limit = sharing_limit(count, compute)
    worst = int(np.argmax(loads))
    if loads[worst] <= limit:
        return None
    return int(processors[worst]), int(loads[worst]), limit, int((loads > limit).sum())


def _int_values(values: Any) -> np.ndarray:
    """``values`` as int64, leaving out what is not a 64-bit whole number."""
    try:
        return np.fromiter(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.asarray([v for v in values if type(v) is int and -(2**63) <= v < 2**63],
                          dtype=np.int64)  # fmt: skip


def _loads(values: Any, at: np.ndarray) -> np.ndarray:
    """How many of ``values`` equal each of ``at`` (sorted)."""
    vals = _int_values(values)
    vals.sort()
    return np.searchsorted(vals, at, side="right") - np.searchsorted(vals, at, side="left")


def parse_mapping(text: str, virtual: VirtualTopology, hardware_count: int,
                  switches: np.ndarray | None = None,
                  hardware: Topology | None = None) -> dict[int, int]:  # fmt: skip
    """A mapping typed or pasted as the hardware processor of each virtual processor in
    order (spaces, commas, tabs or new lines between; '-' leaves one as it is), a
    number or (given the ``hardware`` topology) a name of its ``# piui: names``.
    ValueError naming the position and what is wrong; a switch (``switches[h]`` True,
    :func:`~parasol_core.topology.switches.switch_mask`) is not a target, and two
    virtual processors go onto one hardware processor only as :func:`crowding` allows
    (the session refuses the same)."""
    n = virtual_count(virtual)
    words = text.replace(",", " ").split()
    if len(words) != n:
        raise ValueError(f"virtual topology {virtual.id} has "
                         f"{counted(n, 'processor', grouped=False)}: give {n} "
                         f"hardware processor numbers, not {len(words)}")  # fmt: skip
    out: dict[int, int] = {}
    for v, word in enumerate(words, start=1):
        if word == "-":
            continue
        try:  # a number or a name, by the one rule of both (topology.names)
            h = processor_number(hardware, word, f"virtual processor {v}: hardware processor")
        except RoutingError as e:
            raise ValueError(str(e)) from None
        if not 1 <= h <= hardware_count:
            raise ValueError(f"virtual processor {v}: the hardware has processors "
                             f"1..{hardware_count}, not {h}")  # fmt: skip
        if switches is not None and switches[h]:
            raise ValueError(f"virtual processor {v}: processor {h} is a switch (switches "
                             "run no program)")  # fmt: skip
        out[v] = h
    compute = hardware_count - int(switches[1 : hardware_count + 1].sum()) if (
        switches is not None) else hardware_count  # fmt: skip
    crowded = crowding(virtual.mapping, out, n, compute)
    if crowded is not None:
        raise ValueError(crowded)
    return out
