"""The built-in routing techniques (docs/decisions.md, "Routing"; report 3.1.6).

* ``XY``, ``YX`` and every permutation of ``XYZ``: dimension order on a mesh, in the
  order the letters give, never wrapping around.
* ``1Dtorus``, ``2Dtorus``, ``3Dtorus``: dimension order X, Y, Z, each dimension the
  shorter way round, a tie going the positive way. ``1Dtorus`` is a ring over the
  processor numbers (folded over the processor count), whatever the shape.
* ``NDmesh``, ``NDtorus`` (extensions): the same on grids of up to 6 dimensions,
  dimension 0 first (the 6-D torus of Fugaku's Tofu network).
* ``simgrid-torus`` (an extension): ``NDtorus`` with SimGrid's tie-break (its
  ``TorusZone``): a step of half an even ring goes the positive way, except from
  coordinate ``n / 2``, which goes the negative way (to 0 over the wrap-around link on
  the other side). The SimGrid import routes its TORUS clusters so.
* ``broadcast``: one hop from sender to receiver (the link is the lowest-id one that
  connects both).
* ``hypercube`` (an extension): e-cube routing on ``2**d`` processors, correcting the
  differing bits of ``p - 1`` from the lowest up. On 2, 4 or 8 processors it is the
  same as ``XYZ`` on a 2 x 2 x 2 shape.

Each is a :class:`~parasol_core.topology.routing.RoutingTechnique`; the batch form
:meth:`paths` is numpy throughout.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique
from parasol_core.topology.shape import Layout, Shape

AXES = {"X": 0, "Y": 1, "Z": 2}


# --------------------------------------------------------------------------- dimension order


def dimension_order_path(
    shape: Shape, axes: tuple[int, ...], src: int, dst: int, wrap: bool, simgrid: bool = False
) -> list[int]:
    """Processors visited moving along ``axes`` in turn until each coordinate matches;
    with ``wrap``, each axis the shorter way round (a tie goes the positive way; with
    ``simgrid``, the negative way from coordinate ``n / 2``, as SimGrid's torus does)."""
    strides, dims = shape.strides, shape.dims
    for p in (src, dst):
        if not 1 <= p <= shape.size:
            raise RoutingError(f"processor {p} is outside the {shape} grid")
    cs, cd = [], []
    a, b = src - 1, dst - 1
    for n in dims:
        a, ca = divmod(a, n)
        b, cb = divmod(b, n)
        cs.append(ca)
        cd.append(cb)
    p, out = src, [src]
    for axis in axes:
        n, stride, c = dims[axis], strides[axis], cs[axis]
        delta = cd[axis] - c
        if wrap:
            forward = delta % n
            if forward == 0:
                continue
            ahead = forward < n - forward or (
                forward == n - forward and not (simgrid and c == n // 2)
            )
            step, count = (1, forward) if ahead else (-1, n - forward)
            for _ in range(count):
                nxt = (c + step) % n
                p += (nxt - c) * stride
                c = nxt
                out.append(p)
        else:
            step = stride if delta > 0 else -stride
            for _ in range(abs(delta)):
                p += step
                out.append(p)
    return out


def dimension_order_paths(
    shape: Shape,
    axes: tuple[int, ...],
    src: np.ndarray,
    dst: np.ndarray,
    wrap: bool,
    simgrid: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`dimension_order_path` for many pairs at once, as ``(offsets, processors)``.

    All paths are laid end to end as one sequence of processor-number increments (a
    route's first entry jumps from the previous route's destination to its source,
    each step adds +-stride, a wrap-around step adds -+ size*stride), and one cumulative
    sum turns that into processor numbers: no Python loop over routes or steps.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    cs, cd = shape.coordinates_array(src), shape.coordinates_array(dst)
    k, naxes = src.shape[0], len(axes)
    steps = np.empty((k, naxes), dtype=np.int64)
    for j, axis in enumerate(axes):
        delta = cd[:, axis] - cs[:, axis]
        if wrap:
            n = shape.dims[axis]
            forward = delta % n
            backward = (n - forward) % n
            ahead = forward <= backward
            if simgrid:  # a tie from coordinate n / 2 goes the negative way
                ahead &= (forward < backward) | (cs[:, axis] != n // 2)
            steps[:, j] = np.where(ahead, forward, -backward)
        else:
            steps[:, j] = delta
    # Segments per route: its first processor, then one run of steps per axis.
    counts = np.empty((k, naxes + 1), dtype=np.int64)
    values = np.empty((k, naxes + 1), dtype=np.int64)
    counts[:, 0] = 1
    values[:, 0] = src
    values[1:, 0] -= dst[:-1]
    strides = shape.strides
    for j, axis in enumerate(axes):
        counts[:, j + 1] = np.abs(steps[:, j])
        values[:, j + 1] = np.sign(steps[:, j]) * strides[axis]
    flat_counts = counts.ravel()
    increments = np.repeat(values.ravel(), flat_counts)
    if wrap:
        seg_start = np.zeros(flat_counts.shape[0], dtype=np.int64)
        np.cumsum(flat_counts[:-1], out=seg_start[1:])
        seg_start = seg_start.reshape(k, naxes + 1)
        for j, axis in enumerate(axes):
            n, c, step = shape.dims[axis], cs[:, axis], steps[:, j]
            # the step (1-based) that crosses from n-1 to 0 or from 0 to n-1
            at = np.where(step > 0, n - c, c + 1)
            crosses = (step != 0) & (at <= np.abs(step))
            where = seg_start[crosses, j + 1] + at[crosses] - 1
            increments[where] -= np.sign(step[crosses]) * n * strides[axis]
    offsets = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=1), out=offsets[1:])
    return offsets, np.cumsum(increments)


def grid_neighbours(shape: Shape, p: int, axes: tuple[int, ...], wrap: bool) -> list[int]:
    """The processors one step from ``p`` along ``axes`` (with wrap-around if ``wrap``)."""
    coords = list(shape.coordinates(p))
    out = set()
    for axis in axes:
        n = shape.dims[axis]
        for step in (-1, 1):
            c = coords[axis] + step
            if wrap:
                c %= n
            elif not 0 <= c < n:
                continue
            moved = coords.copy()
            moved[axis] = c
            out.add(shape.processor(moved))
    out.discard(p)
    return sorted(out)


# --------------------------------------------------------------------------- techniques


class MeshRouting(RoutingTechnique):
    """Dimension-order routing on a mesh, in the order of the letters of its name."""

    def __init__(self, order: str) -> None:
        self.name = order
        self.axes = tuple(AXES[c] for c in order)
        self.ndim = self.grid_dims = len(order)
        dims = " then ".join(order)
        self.description = f"mesh, dimension order {dims}, no wrap-around"

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return dimension_order_path(layout.grid(self.name, self.ndim), self.axes, src, dst, False)

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        shape = layout.grid(self.name, self.ndim)
        return dimension_order_paths(shape, self.axes, src, dst, False)

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        return grid_neighbours(layout.grid(self.name, self.ndim), p, self.axes, False)


class TorusRouting(RoutingTechnique):
    """Dimension order X, Y, Z on a torus, each dimension the shorter way round."""

    def __init__(self, ndim: int) -> None:
        self.name = f"{ndim}Dtorus"
        self.ndim = self.grid_dims = ndim
        self.axes = tuple(range(ndim))
        self.description = f"{ndim}D torus, dimension order, shorter way round (ties positive)"

    def _shape(self, layout: Layout) -> Shape:
        if self.ndim == 1:  # a ring over the processor numbers, whatever the grid shape
            return Shape((max(layout.count, 1),))
        return layout.grid(self.name, self.ndim)

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return dimension_order_path(self._shape(layout), self.axes, src, dst, True)

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return dimension_order_paths(self._shape(layout), self.axes, src, dst, True)

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        return grid_neighbours(self._shape(layout), p, self.axes, True)


class NDRouting(RoutingTechnique):
    """Dimension order on a grid of up to 6 dimensions, dimension 0 first: ``NDmesh``
    (no wrap-around) or ``NDtorus`` (each dimension the shorter way round, a tie going
    the positive way). On 1 to 3 dimensions ``NDmesh`` is ``XYZ`` and ``NDtorus`` is
    ``2Dtorus``/``3Dtorus`` (and, on a ring shape, ``1Dtorus``)."""

    MAX_DIMS = 6

    def __init__(self, wrap: bool) -> None:
        self.wrap = wrap
        self.name = "NDtorus" if wrap else "NDmesh"
        self.grid_dims = self.MAX_DIMS
        self.axes = tuple(range(self.MAX_DIMS))
        self.description = (
            "N-D torus (up to 6 dimensions), dimension order 0, 1, 2, ..., each the shorter "
            "way round (ties positive)"
            if wrap
            else "N-D mesh (up to 6 dimensions), dimension order 0, 1, 2, ..., no wrap-around"
        )

    def _shape(self, layout: Layout) -> Shape:
        return layout.grid(self.name, self.MAX_DIMS)

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return dimension_order_path(self._shape(layout), self.axes, src, dst, self.wrap)

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return dimension_order_paths(self._shape(layout), self.axes, src, dst, self.wrap)

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        return grid_neighbours(self._shape(layout), p, self.axes, self.wrap)


class SimGridTorusRouting(NDRouting):
    """``NDtorus`` with SimGrid's tie-break: a step of half an even ring from coordinate
    ``n / 2`` goes the negative way (SimGrid 3.32's ``TorusZone::get_local_route``)."""

    def __init__(self) -> None:
        super().__init__(wrap=True)
        self.name = "simgrid-torus"
        self.description = (
            "N-D torus (up to 6 dimensions) as SimGrid routes it: dimension order 0, 1, "
            "2, ..., each the shorter way round; a tie goes the positive way, except from "
            "coordinate n/2, which goes the negative way"
        )

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return dimension_order_path(self._shape(layout), self.axes, src, dst, True, True)

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return dimension_order_paths(self._shape(layout), self.axes, src, dst, True, True)


class BroadcastRouting(RoutingTechnique):
    """One hop over a link that holds both ends (a bus, an Ethernet, a clique)."""

    name = "broadcast"
    description = "one hop over the lowest-id link connecting sender and receiver"

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return [src] if src == dst else [src, dst]

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        counts = 1 + (src != dst)
        offsets = np.zeros(src.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        procs = np.empty(offsets[-1], dtype=np.int64)
        procs[offsets[:-1]] = src
        two = counts == 2
        procs[offsets[:-1][two] + 1] = dst[two]
        return offsets, procs

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        return [q for q in range(1, layout.count + 1) if q != p]


class HypercubeRouting(RoutingTechnique):
    """E-cube routing on ``2**d`` processors: fix the differing bits of ``p - 1``,
    lowest first."""

    name = "hypercube"
    description = "hypercube (e-cube): correct differing address bits, lowest first"

    def _shape(self, layout: Layout) -> Shape:
        n = layout.count
        if n < 1 or n & (n - 1):
            raise RoutingError(
                f"hypercube routing needs a power-of-two processor count; {layout.label} has {n}"
            )
        d = n.bit_length() - 1
        return Shape((2,) * d) if d else Shape((1,))

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        shape = self._shape(layout)
        return dimension_order_path(shape, tuple(range(shape.ndim)), src, dst, False)

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        shape = self._shape(layout)
        return dimension_order_paths(shape, tuple(range(shape.ndim)), src, dst, False)

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        shape = self._shape(layout)
        return grid_neighbours(shape, p, tuple(range(shape.ndim)), False)


XY = MeshRouting("XY")
YX = MeshRouting("YX")
XYZ, XZY, YXZ, YZX, ZXY, ZYX = (MeshRouting("".join(p)) for p in permutations("XYZ"))
TORUS_1D = TorusRouting(1)
TORUS_2D = TorusRouting(2)
TORUS_3D = TorusRouting(3)
ND_MESH = NDRouting(wrap=False)
ND_TORUS = NDRouting(wrap=True)
SIMGRID_TORUS = SimGridTorusRouting()
BROADCAST = BroadcastRouting()
HYPERCUBE = HypercubeRouting()
