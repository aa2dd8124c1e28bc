"""How much work routes are before they are plotted: the grid a technique moves on and
the processors a batch of routes visits (:func:`route_steps`, the budget of a route
batch and of a phase's routes, ``parasol_core/base/budget.py``).

Below both the index, which checks a batch against the budget, and the communication
patterns, which build their messages on the same grid.
"""

from __future__ import annotations

import numpy as np

from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique
from parasol_core.topology.shape import Layout, Shape
from parasol_core.topology.shortest import ShortestRouting
from parasol_core.topology.switched import (
    DragonflyRouting,
    SimGridDragonflyRouting,
    UpDownRouting,
)
from parasol_core.topology.techniques import (
    BroadcastRouting,
    HypercubeRouting,
    MeshRouting,
    NDRouting,
    TorusRouting,
)
from parasol_core.topology.zoned import ZonedRouting


def grid_of(layout: Layout, technique: RoutingTechnique) -> tuple[Shape, bool]:
    """The grid the technique moves on, and whether it wraps around."""
    if isinstance(technique, TorusRouting):
        return technique._shape(layout), True
    if isinstance(technique, HypercubeRouting):
        return technique._shape(layout), False
    if isinstance(technique, MeshRouting):
        return layout.grid(technique.name, technique.ndim), False
    if isinstance(technique, NDRouting):
        return technique._shape(layout), technique.wrap
    # another technique: the layout's grid, wrapping when the last processor along X is
    # a neighbour of the first (a bus, a clique)
    shape = layout.shape or Shape((max(layout.count, 1),))
    n = shape.dims[0]
    try:
        wraps = n >= 2 and shape.processor((n - 1,)) in technique.neighbours(layout, 1)
    except RoutingError:
        wraps = False
    return shape, wraps


def route_steps(layout: Layout, technique: RoutingTechnique, src: np.ndarray,
                dst: np.ndarray) -> int:  # fmt: skip
    """The processors the routes ``src[i] -> dst[i]`` visit, all together, from the
    grid's coordinates, before any is plotted: exact for dimension-order routing
    (mesh, torus, hypercube), broadcast links and ``shortest`` (from its breadth-first
    tables, which it keeps for the routes), at most for ``updown`` (up to the top and
    down: ``2 * levels + 1`` a route) and the dragonfly routings (6 processors a
    minimal route, 8 a Valiant one), and for another
    technique (a plug-in's) 2 a route too, its paths being unknown until plotted."""
    pairs = int(src.shape[0])
    if isinstance(technique, BroadcastRouting):
        return pairs + int(np.count_nonzero(src != dst))
    if isinstance(technique, ShortestRouting):  # its searches, within their own budget
        inside = (src >= 1) & (src <= layout.count) & (dst >= 1) & (dst <= layout.count)
        return technique.steps(layout, src[inside], dst[inside])
    if isinstance(technique, ZonedRouting):  # each zone's own count, shortest between
        return technique.steps(layout, src, dst, route_steps)
    if isinstance(technique, (UpDownRouting, DragonflyRouting, SimGridDragonflyRouting)):
        return technique.steps(layout, src, dst)  # at most: up and down, or 6 / 8 a route
    if not isinstance(technique, (TorusRouting, HypercubeRouting, MeshRouting, NDRouting)):
        return 2 * pairs
    try:
        shape, wraps = grid_of(layout, technique)
    except RoutingError:
        return 2 * pairs
    inside = (src >= 1) & (src <= shape.size) & (dst >= 1) & (dst <= shape.size)
    if not inside.all():  # the index reports the processor that does not exist
        src, dst = src[inside], dst[inside]
    total = 0
    for lo in range(0, src.shape[0], 1 << 18):  # bounded temporaries
        a = shape.coordinates_array(src[lo : lo + (1 << 18)])
        b = shape.coordinates_array(dst[lo : lo + (1 << 18)])
        delta = np.abs(a - b)
        if wraps:
            delta = np.minimum(delta, np.asarray(shape.dims, dtype=np.int64) - delta)
        total += int(delta.sum())
    return total + pairs
