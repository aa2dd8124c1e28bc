"""Communication patterns: the message lists of common phases, on a virtual topology
(its virtual processors and the links its routing name implies) or on the hardware.

=================== =========================================================================
name                messages (``bytes`` each)
=================== =========================================================================
``shift``           every processor to its neighbour one step up dimension ``dim`` (0, 1, 2
                    or x, y, z); on a torus or ring the last wraps to the first, on a mesh the
                    last sends nothing (as MPI_Cart_shift)
``halo``            every processor to each of its neighbours (the topology's links)
``alltoall``        every processor to every other
``broadcast``       ``root`` (default 1) to every other processor, all at once
``broadcast-tree``  the same as a binomial tree: in step k every rank r < 2**k that holds
                    the data sends to rank r + 2**k (ranks counted from ``root``), after
                    receiving it and after its own previous send
``ring-allgather``  p - 1 steps around the ring of processor numbers 1, 2, ..., p, 1: in
                    step k each processor sends its neighbour the block it received in step
                    k - 1, after receiving it and after its own previous send
=================== =========================================================================

Messages come ordered by source, then destination (by step for the last two).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parasol_core.base import budget
from parasol_core.base.words import counted
from parasol_core.model import Machine, VirtualTopology
from parasol_core.simulate.messages import Message, MessageArrays, PhaseError
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import index_of
from parasol_core.topology.routing import RoutingTechnique, get_routing
from parasol_core.topology.shape import Layout, Shape
from parasol_core.topology.steps import grid_of
from parasol_core.topology.techniques import HypercubeRouting, MeshRouting, NDRouting, TorusRouting
from parasol_core.topology.virtual import find_virtual, hardware_of, virtual_layout

_GRIDS = (TorusRouting, HypercubeRouting, MeshRouting, NDRouting)
PATTERNS = ("shift", "halo", "alltoall", "broadcast", "broadcast-tree", "ring-allgather")
_AXES = {"x": 0, "y": 1, "z": 2}


def make_pattern(
    machine: Machine,
    name: str,
    bytes: float,
    dim: int | str | None = None,
    root: int | None = None,
    virtual: VirtualTopology | int | None = None,
) -> list[Message]:
    """The messages of a named pattern (see :data:`PATTERNS`), between virtual
    processors of ``virtual`` or, without one, hardware processors."""
    return make_pattern_arrays(machine, name, bytes, dim, root, virtual).to_messages()


def make_pattern_arrays(
    machine: Machine,
    name: str,
    bytes: float,
    dim: int | str | None = None,
    root: int | None = None,
    virtual: VirtualTopology | int | None = None,
) -> MessageArrays:
    """:func:`make_pattern` as numpy arrays (fast for large patterns)."""
    if name not in PATTERNS:
        raise PhaseError(f"unknown pattern {name!r} (known: {', '.join(PATTERNS)})")
    try:
        size = float(bytes)
    except (TypeError, ValueError):
        raise PhaseError(f"bytes must be a number, got {bytes!r}") from None
    if not np.isfinite(size) or size < 0:
        raise PhaseError(f"bytes must be zero or positive, got {bytes!r}")
    if dim is not None and name != "shift":
        raise PhaseError(f"the {name} pattern takes no dimension")
    if root is not None and name not in ("broadcast", "broadcast-tree"):
        raise PhaseError(f"the {name} pattern takes no root")
    try:
        layout, technique, ranks = _pattern_processors(machine, virtual)
        if ranks is not None:
            root = _rank_of(root, ranks, layout)
        n = layout.count
        _check_count(name, layout, technique)
        if name == "shift":
            src, dst = _shift(layout, technique, _axis(dim))
        elif name == "halo":
            src, dst = _halo(layout, technique)
        elif name == "alltoall":
            p = np.arange(1, n + 1, dtype=np.int64)
            src, dst = np.repeat(p, n), np.tile(p, n)
            src, dst = src[src != dst], dst[src != dst]
        elif name == "broadcast":
            r = _root(root, n)
            dst = np.asarray([p for p in range(1, n + 1) if p != r], dtype=np.int64)
            src = np.full(dst.shape[0], r, dtype=np.int64)
        elif name == "broadcast-tree":
            return _on_hardware(_binomial(_root(root, n), n, size), ranks)
        else:
            return _on_hardware(_ring_allgather(n, size), ranks)
    except RoutingError as e:
        raise PhaseError(str(e)) from None
    return _on_hardware(MessageArrays(src, dst, size), ranks)


def _check_count(name: str, layout: Layout, technique: RoutingTechnique) -> None:
    """Count the pattern's messages from its formula before building any
    (:mod:`parasol_core.base.budget`); past the limit in force, BudgetError naming both.
    Under a memory budget its routes count 2 steps a message (exact for ``halo`` and
    ``shift`` on a grid, at least that for the others: every message goes to another
    processor; the phase's exact steps are checked again before its routes are
    plotted)."""
    count, hint = _estimate(name, layout, technique)
    exact = name in ("halo", "shift") and isinstance(technique, _GRIDS)
    budget.check_phase(f"the {name} pattern on {counted(layout.count, 'processor')}", count,
                       2 * count, hint, exact)  # fmt: skip


def _estimate(name: str, layout: Layout, technique: RoutingTechnique) -> tuple[int, str]:
    """The pattern's message count (at most it, for shift) without building it, and
    how it was found when that is not the formula."""
    if name != "halo" or isinstance(
        technique, (TorusRouting, HypercubeRouting, MeshRouting, NDRouting)
    ):
        grid: tuple[int, ...] | None = None
        wraps = False
        if name == "halo":
            shape, wraps = grid_of(layout, technique)
            grid = shape.dims
        return budget.pattern_messages(name, layout.count, grid, wraps), ""
    total = 0  # another technique: its neighbours one by one, stopping past the limit
    limit = budget.current().message_limit
    for v in range(1, layout.count + 1):
        total += len(technique.neighbours(layout, v))
        if total > limit and v < layout.count:
            return (
                total * layout.count // v,
                f"extrapolated from the first {counted(v, 'processor')}",
            )
    return total, ""


def pattern_cost(machine: Machine, name: str, virtual: VirtualTopology | int | None = None) -> int:
    """The messages pattern ``name`` would have, from its formula (0 if it cannot be
    made): what the estimator charges a batch for it before it runs."""
    if name not in PATTERNS:
        return 0
    try:
        layout, technique, _ = _pattern_processors(machine, virtual)
        return _estimate(name, layout, technique)[0]
    except (RoutingError, PhaseError, ValueError, LookupError):
        return 0


def _processors(
    machine: Machine, virtual: VirtualTopology | int | None
) -> tuple[Layout, RoutingTechnique]:
    if virtual is None:
        index = index_of(hardware_of(machine))
        return index.layout, index.technique
    virt = find_virtual(machine, virtual)
    if not virt.routing:
        raise RoutingError(f"virtual topology {virt.id} has no routing technique")
    return virtual_layout(machine, virt), get_routing(virt.routing)


# --------------------------------------------------------------------------- switches
# A hardware topology with switches (docs/decisions.md, "Switches"): switches run no
# program, so a pattern is made over its compute processors alone, as ranks 1..C in
# processor-number order arranged in a ring (shift along dimension 0 and halo move
# along it), then each rank is put back as its compute processor's number.


def _pattern_processors(
    machine: Machine, virtual: VirtualTopology | int | None
) -> tuple[Layout, RoutingTechnique, np.ndarray | None]:
    """:func:`_processors`, or, on hardware with switches, the ring of its compute
    processors' ranks and their processor numbers (``ranks[r - 1]``)."""
    layout, technique = _processors(machine, virtual)
    if virtual is not None:
        return layout, technique, None
    from parasol_core.topology.switches import compute_processors, has_switches
    from parasol_core.topology.techniques import TORUS_1D

    hw = hardware_of(machine)
    if not has_switches(machine, hw):
        return layout, technique, None
    ranks = compute_processors(machine, hw, layout.count)
    if not ranks.shape[0]:
        raise RoutingError(f"{layout.label} has no compute processors, only switches")
    label = f"the {counted(ranks.shape[0], 'compute processor')} of {layout.label}"
    return Layout(int(ranks.shape[0]), Shape((int(ranks.shape[0]),)), label), TORUS_1D, ranks


def _rank_of(root: int | None, ranks: np.ndarray, layout: Layout) -> int | None:
    """The rank of the compute processor ``root`` names; PhaseError for a switch."""
    if root is None:
        return None
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise PhaseError(f"the root must be a compute processor, got {root!r}")
    at = int(np.searchsorted(ranks, root))
    if at == ranks.shape[0] or ranks[at] != root:
        raise PhaseError(f"the root must be one of {layout.label} (switches run no program), "
                         f"got {root!r}")  # fmt: skip
    return at + 1


def _on_hardware(messages: MessageArrays, ranks: np.ndarray | None) -> MessageArrays:
    """Ranks back to processor numbers (nothing to do without switches)."""
    if ranks is not None:
        messages.src = ranks[messages.src - 1]
        messages.dst = ranks[messages.dst - 1]
    return messages


def _axis(dim: int | str | None) -> int:
    if dim is None:
        return 0
    if isinstance(dim, str):
        key = dim.strip().lower()
        if key in _AXES:
            return _AXES[key]
        if key not in ("0", "1", "2"):  # ASCII digits: '٢' is no dimension
            raise PhaseError(f"a dimension is 0, 1, 2 or x, y, z; got {dim!r}")
        dim = int(key)
    if isinstance(dim, bool) or not 0 <= dim <= 2:
        raise PhaseError(f"a dimension is 0, 1, 2 or x, y, z; got {dim!r}")
    return int(dim)


def _root(root: int | None, n: int) -> int:
    r = 1 if root is None else root
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= n:
        raise PhaseError(f"the root must be a processor 1..{n}, got {root!r}")
    return int(r)


def _shift(layout: Layout, technique: RoutingTechnique, axis: int) -> tuple[np.ndarray, ...]:
    shape, wraps = grid_of(layout, technique)
    if axis >= shape.ndim:
        raise PhaseError(f"dimension {axis} is not in the {shape} grid of {layout.label}")
    p = np.arange(1, shape.size + 1, dtype=np.int64)
    coords = shape.coordinates_array(p)
    n = shape.dims[axis]
    moved = coords[:, axis] + 1
    if wraps:
        moved %= n
    keep = moved < n
    coords = coords[keep]
    coords[:, axis] = moved[keep]
    dst = shape.processors_array(coords)
    src = p[keep]
    return src[src != dst], dst[src != dst]


def _halo(layout: Layout, technique: RoutingTechnique) -> tuple[np.ndarray, ...]:
    if isinstance(technique, (TorusRouting, HypercubeRouting, MeshRouting, NDRouting)):
        shape, wraps = grid_of(layout, technique)
        p = np.arange(1, shape.size + 1, dtype=np.int64)
        coords = shape.coordinates_array(p)
        srcs, dsts = [], []
        for axis, n in enumerate(shape.dims):
            for step in (-1, 1):
                moved = coords[:, axis] + step
                if wraps:
                    moved %= n
                keep = (moved >= 0) & (moved < n)
                other = coords[keep]
                other[:, axis] = moved[keep]
                srcs.append(p[keep])
                dsts.append(shape.processors_array(other))
        src, dst = np.concatenate(srcs), np.concatenate(dsts)
        key = np.sort(src * (shape.size + 1) + dst)  # each pair once (a side of 1 or 2)
        if key.shape[0] > 1:  # (not np.unique: its hash table is 20x slower here)
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        src, dst = key // (shape.size + 1), key % (shape.size + 1)
        return src[src != dst], dst[src != dst]
    pairs = [(v, w) for v in range(1, layout.count + 1) for w in technique.neighbours(layout, v)]
    src = np.asarray([v for v, _ in pairs], dtype=np.int64)
    dst = np.asarray([w for _, w in pairs], dtype=np.int64)
    return src, dst


def _binomial(root: int, n: int, size: float) -> MessageArrays:
    src, dst, after = [], [], []
    received: dict[int, int] = {}  # rank -> the message that brought it the data
    last_send: dict[int, int] = {}
    step = 1
    while step < n:
        for r in range(step):
            if r + step >= n:
                break
            deps = [d for d in (received.get(r), last_send.get(r)) if d is not None]
            k = len(src)
            src.append((root - 1 + r) % n + 1)
            dst.append((root - 1 + r + step) % n + 1)
            after.append(deps)
            received[r + step] = k
            last_send[r] = k
        step *= 2
    return _with_after(src, dst, size, after)


def _ring_allgather(n: int, size: float) -> MessageArrays:
    src, dst, after = [], [], []
    for k in range(n - 1):
        for r in range(n):
            src.append(r + 1)
            dst.append((r + 1) % n + 1)
            # forward what r received in step k-1 (from r-1), after r's own send then
            after.append([] if k == 0 else [(k - 1) * n + (r - 1) % n, (k - 1) * n + r])
    return _with_after(src, dst, size, after)


def _with_after(src: list[int], dst: list[int], size: float, after: list[list[int]]) -> Any:
    ptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in after], out=ptr[1:])
    idx = np.asarray([d for a in after for d in a], dtype=np.int64)
    if not idx.shape[0]:
        return MessageArrays(src, dst, size)
    return MessageArrays(src, dst, size, None, ptr, idx)
