"""Virtual topologies: the links their routing name implies, and routes through the
hardware for messages between virtual processors (docs/decisions.md, "Routing").

A virtual topology's routing name does not route: it says which virtual links exist
(a ``2Dtorus`` on 16 processors has 64 directed neighbour links). A message between
two virtual processors takes the hardware route between the hardware processors they
are mapped to; the hardware is ``machine.hardware()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parasol_core.base.words import counted
from parasol_core.model import Machine, Topology, VirtualTopology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import FREE_COUNT, Route, RouteBatch, TopologyIndex, index_of
from parasol_core.topology.routing import get_routing
from parasol_core.topology.shape import (
    Layout,
    Shape,
    processor_count,
    shape_of,
    shape_problem,
    square_shape,
)


def find_virtual(machine: Machine, virtual: VirtualTopology | int) -> VirtualTopology:
    """A virtual topology given itself or its id."""
    if isinstance(virtual, VirtualTopology):
        return virtual
    found = machine.virtual(virtual)
    if found is None:
        known = ", ".join(str(v.id) for v in machine.virtuals) or "none"
        raise RoutingError(f"there is no virtual topology with id {virtual} (ids: {known})")
    return found


def hardware_of(machine: Machine) -> Topology:
    """The hardware topology virtual ones map onto (the one with the lowest id)."""
    hw = machine.hardware()
    if hw is None:
        raise RoutingError("the machine has no hardware topology")
    return hw


def virtual_label(virtual: VirtualTopology) -> str:
    return f"virtual topology {virtual.id}" if virtual.id is not None else "the virtual topology"


def virtual_count(virtual: VirtualTopology) -> int:
    if virtual.processor_count is not None:
        return virtual.processor_count
    return max(virtual.mapping, default=0)


def virtual_shape(machine: Machine, virtual: VirtualTopology | int) -> Shape | None:
    """The virtual topology's shape comment when it agrees with its processor count,
    else the hardware's shape when the processor counts agree, else None."""
    virtual = find_virtual(machine, virtual)
    count = virtual_count(virtual)
    if virtual.shape:
        try:
            shape = Shape(tuple(virtual.shape))
        except ValueError:
            shape = None
        if shape is not None and shape.size == count:
            return shape
    hw = machine.hardware()
    if hw is not None and processor_count(hw) == count:
        return shape_of(hw)
    return None


def default_shape(count: int, routing: str | None = None) -> tuple[int, ...]:
    """The shape a virtual topology of ``count`` processors and ``routing`` starts with:
    the most square factorisation of the count (:func:`~.shape.square_shape`) into as
    many sizes as the routing's grid has, up to 3 (a ring: one; ``XY`` and ``2Dtorus``:
    two; ``XYZ``, ``3Dtorus``, ``NDmesh`` and ``NDtorus``: three; a routing that needs no
    grid, or an unknown one: two)."""
    dims = None
    if routing:
        try:
            dims = get_routing(routing).grid_dims
        except RoutingError:
            dims = None
    return square_shape(count, min(dims or 2, 3))


def default_virtual_shape(machine: Machine, routing: str | None, count: int,
                          ) -> tuple[int, ...]:  # fmt: skip
    """The shape a new virtual topology is offered: the hardware's when it has as many
    compute processors as the virtual topology has processors, a grid shape, and the
    routing can use that shape; else :func:`default_shape`."""
    hw = machine.hardware()
    if hw is not None and processor_count(hw) == count:
        shape = shape_of(hw)
        if shape is not None and virtual_problem(routing, count, shape.dims) is None:
            return shape.dims
    return default_shape(count, routing)


def virtual_problem(routing: str | None, count: int, shape: tuple[int, ...] | None,
                    label: str = "the virtual topology") -> str | None:  # fmt: skip
    """Why a virtual topology of ``count`` processors with ``routing`` and ``shape``
    cannot have its virtual links (so cannot be routed on any hardware), in words; None
    when it can. The shape is checked first (:func:`~.shape.shape_problem`), then the
    routing is asked for the neighbours of processor 1 (a ``2Dtorus`` on a 4 x 3 x 6
    shape, a ``hypercube`` on 72 processors, ``updown``, which defines no virtual
    links: each says why)."""
    problem = shape_problem(shape, count)
    if problem is not None:
        return problem
    if not routing:
        return f"{label} has no routing technique"
    try:
        technique = get_routing(routing)
        layout = Layout(count, Shape(tuple(shape)) if shape else None, label)
        technique.neighbours(layout, 1)
    except RoutingError as e:
        return str(e)
    return None


def virtual_layout(machine: Machine, virtual: VirtualTopology | int) -> Layout:
    virtual = find_virtual(machine, virtual)
    return Layout(virtual_count(virtual), virtual_shape(machine, virtual), virtual_label(virtual))


def virtual_links(
    machine: Machine, virtual: VirtualTopology | int, directed: bool = True
) -> list[tuple[int, int]]:
    """The virtual links the routing name implies, as (from, to) virtual processors.

    Directed: every neighbour relation once in each direction (64 for a ``2Dtorus`` on
    a 4 x 4 grid). Undirected: each pair once, lower number first (32 there).
    """
    virtual = find_virtual(machine, virtual)
    if not virtual.routing:
        raise RoutingError(f"{virtual_label(virtual)} has no routing technique")
    technique = get_routing(virtual.routing)
    layout = virtual_layout(machine, virtual)
    if layout.count > max(FREE_COUNT, 2 * len(virtual.mapping)):
        raise RoutingError(
            f"{virtual_label(virtual)} says it has "
            f"{counted(layout.count, 'processor', grouped=False)}, far more "
            "than its mapping holds; correct its 'processors' count"
        )
    out = []
    for v in range(1, layout.count + 1):
        for w in technique.neighbours(layout, v):
            if directed or v < w:
                out.append((v, w))
    return out


def hardware_processor(virtual: VirtualTopology, v: int) -> int:
    """The hardware processor virtual processor ``v`` is mapped to."""
    h = virtual.mapping.get(v)
    if h is None:
        raise RoutingError(
            f"virtual processor {v} of {virtual_label(virtual)} is not mapped to a hardware "
            "processor"
        )
    return h


def _hardware_index(machine: Machine) -> TopologyIndex:
    return index_of(hardware_of(machine))


def virtual_route(machine: Machine, virtual: VirtualTopology | int, src: int, dst: int) -> Route:
    """The hardware route a message from virtual processor ``src`` to ``dst`` takes."""
    virtual = find_virtual(machine, virtual)
    a, b = hardware_processor(virtual, src), hardware_processor(virtual, dst)
    try:
        return _hardware_index(machine).route(a, b)
    except RoutingError as e:
        raise RoutingError(
            f"{e} (from virtual processor {src} to {dst} of {virtual_label(virtual)})"
        ) from None


def virtual_routes(
    machine: Machine, virtual: VirtualTopology | int, src: Any, dst: Any
) -> RouteBatch:
    """Many virtual-to-virtual routes at once, through the hardware."""
    virtual = find_virtual(machine, virtual)
    table = mapping_array(virtual)
    src = np.atleast_1d(np.asarray(src, dtype=np.int64))
    dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
    for ends in (src, dst):
        bad = (ends < 1) | (ends >= table.shape[0])
        bad[~bad] = table[ends[~bad]] == 0
        if bad.any():
            hardware_processor(virtual, int(ends[np.argmax(bad)]))
    try:
        return _hardware_index(machine).routes(table[src], table[dst])
    except RoutingError as e:
        raise RoutingError(f"{e} (routing {virtual_label(virtual)})") from None


def mapping_array(virtual: VirtualTopology) -> np.ndarray:
    """``table[v]`` is the hardware processor of virtual processor ``v`` (0: unmapped)."""
    # numbers beyond what the mapping could hold are not looked up (no table as long as
    # a number written in the file)
    limit = max(FREE_COUNT, 2 * len(virtual.mapping))
    size = max([v for v in [virtual_count(virtual), *virtual.mapping] if v <= limit], default=0)
    size += 1
    table = np.zeros(size, dtype=np.int64)
    for v, h in virtual.mapping.items():
        if 0 <= v < size:
            table[v] = h
    return table


def added_links(machine: Machine, virtual: VirtualTopology | int) -> list[tuple[int, int]]:
    """Undirected virtual links whose two hardware processors share no hardware link:
    the links the virtual topology adds to the hardware (the dotted lines of report
    figure 2.1)."""
    virtual = find_virtual(machine, virtual)
    index = _hardware_index(machine)
    out = []
    for v, w in virtual_links(machine, virtual, directed=False):
        a, b = hardware_processor(virtual, v), hardware_processor(virtual, w)
        if a != b and index.link_between(a, b) is None:
            out.append((v, w))
    return out
