"""Standard hardware topologies, generated over the link specification.

Each generator returns a :class:`~parasol_core.model.Topology` with every processor of
one type, links ``1..L`` of one latency and speed, the matching routing name and, for
grids, tori and small hypercubes, the ``# piui: shape`` comment. Processors are
numbered row-major, ``p = 1 + x0 + W0*x1 + W0*W1*x2 + ...`` (``1 + x + W*y + W*H*z``
in 3D).

Link order (the sample files use it): all X-direction links (for z, for y, for
``x < W-1``: ``p, p+1``), then Y (for z, for ``y < H-1``, for x: ``p, p+W``), then Z.
A torus lists each dimension's wrap-around links right after its plain ones (X plain,
X wrap, Y plain, Y wrap, ...), each as ``first, last`` of its row, column or pillar; a
dimension of size 2 gets no wrap-around link (it would join the same two processors).

========== ======================= ================================================
kind        sizes                   routing
========== ======================= ================================================
grid        1 to 6 sizes W H D ...  ``XY`` (1D or 2D), ``XYZ`` (3D), ``NDmesh`` (4-6D)
ring        N                       ``1Dtorus``
torus       1 to 6 sizes            ``1Dtorus``, ``2Dtorus``, ``3Dtorus``, ``NDtorus``
hypercube   d (2**d processors)     ``hypercube`` (shape 2 x 2 x 2 up to d = 3)
bus         N                       ``broadcast``: one link connecting all
clique      N                       ``broadcast``: one link per pair
========== ======================= ================================================

Each counts what it would make before making it: past :data:`parasol_core.base.budget.MAX_GENERATED`
lines (processors and links) it raises :class:`~parasol_core.base.budget.BudgetError` (a
ValueError) naming the count and the limit, at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.base import budget
from parasol_core.model import Link, Machine, Processor, Timing, Topology
from parasol_core.model.inttable import IntTable
from parasol_core.model.linkstore import links_from_arrays
from parasol_core.topology.shape import MAX_DIMS, Shape
from parasol_core.topology.switched import network_structure

Seconds = float | Timing

MAX_PROCESSORS = 1_000_000


def _timing(value: Seconds) -> Timing:
    t = value if isinstance(value, Timing) else Timing(float(value))
    if not t.mean >= 0:
        raise ValueError(f"a link time must be zero or positive, got {t.mean!r}")
    return t


def _check_count(n: int) -> None:
    if not 1 <= n <= MAX_PROCESSORS:
        raise ValueError(f"a topology needs 1 to {MAX_PROCESSORS:,} processors, got {n:,}")


def build(
    pairs: Sequence[Sequence[int]],
    count: int,
    latency: Seconds,
    speed: Seconds,
    *,
    routing: str,
    shape: tuple[int, ...] | None = None,
    processor_type: int = 1,
    id: int = 1,
    name: str | None = None,
    setup: Seconds | None = None,
    compute: int | None = None,
    switch_type: int | None = None,
    network: str | None = None,
) -> Topology:
    """A topology of ``count`` processors with one link per entry of ``pairs``; with
    ``compute``, processors past it are switches of ``switch_type``."""
    lat, spd = _timing(latency), _timing(speed)
    links: Any
    if isinstance(pairs, np.ndarray) and pairs.ndim == 2 and pairs.shape[1] == 2:
        # columns straight from the arrays (parasol_core.model.linkstore): no Link objects
        ids = np.arange(1, pairs.shape[0] + 1, dtype=np.int64)
        links = links_from_arrays(ids, pairs[:, 0], pairs[:, 1], lat.mean, spd.mean,
                                  lat.sd, spd.sd)  # fmt: skip
    else:
        links = [
            Link(id=i, latency=lat, speed=spd, connect=list(procs))
            for i, procs in enumerate(pairs, start=1)
        ]
    return Topology(
        shape=shape,
        id=id,
        name=name,
        setup=None if setup is None else _timing(setup),
        routing=routing,
        processor_count=count,
        link_count=len(links),
        types=_types(count, processor_type, compute, switch_type),
        links=links,
        network=network,
    )


def _types(count: int, processor_type: int, compute: int | None,
           switch_type: int | None) -> IntTable:  # fmt: skip
    """The `procid` table, as columns (a million processors: no dict of a million
    entries to build, and the writer reads the columns in bulk)."""
    values = np.full(count, processor_type, dtype=np.int64)
    if compute is not None and compute < count:
        values[compute:] = processor_type + 1 if switch_type is None else switch_type
    return IntTable.from_columns(np.arange(1, count + 1, dtype=np.int64), values)


def grid_pairs(dims: Sequence[int], wrap: bool = False) -> list[tuple[int, int]]:
    """The links of a grid (or, with ``wrap``, a torus) in the documented order: for
    each dimension in turn (0 first), its plain links ``p, p + stride`` by ascending
    ``p``, then (torus, size 3 or more) its wrap-around links ``first, last`` of each
    line along it, by ascending ``first``. For 1 to 3 dimensions this is the order of
    the sample files (X, then Y, then Z, each by z, then y, then x)."""
    return [(int(a), int(b)) for a, b in grid_pair_array(dims, wrap)]


def grid_pair_array(dims: Sequence[int], wrap: bool = False) -> np.ndarray:
    """:func:`grid_pairs` as an ``(L, 2)`` int64 array, built with numpy (no Python
    loop over processors: the 6-D Fugaku torus's 794,880 links in tens of ms)."""
    shape = Shape(tuple(dims))
    p = np.arange(1, shape.size + 1, dtype=np.int64)
    parts = []
    for n, stride in zip(shape.dims, shape.strides):
        coord = (p - 1) // stride % n
        plain = p[coord < n - 1]
        parts.append(np.column_stack((plain, plain + stride)))
        if wrap and n >= 3:
            first = p[coord == 0]
            parts.append(np.column_stack((first, first + (n - 1) * stride)))
    if not parts:
        return np.empty((0, 2), dtype=np.int64)
    return np.concatenate(parts)


def _name(kind: str, dims: Sequence[int]) -> str:
    return f"{' x '.join(map(str, dims))} {kind}"


def grid(dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """A mesh of 1 to 6 dimensions with dimension-order routing: ``XY`` (1D, 2D),
    ``XYZ`` (3D), ``NDmesh`` (4D to 6D)."""
    shape = _shape(dims, "grid")
    routing = "XY" if shape.ndim <= 2 else "XYZ" if shape.ndim == 3 else "NDmesh"
    kw.setdefault("name", _name("grid", shape.dims))
    return build(
        grid_pair_array(shape.dims),
        shape.size,
        latency,
        speed,
        routing=routing,
        shape=shape.dims,
        **kw,
    )


def torus(dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """A ring or a torus of up to 6 dimensions with wrap-around links: ``1Dtorus``,
    ``2Dtorus``, ``3Dtorus`` routing, ``NDtorus`` from 4D up."""
    shape = _shape(dims, "torus")
    kw.setdefault(
        "name", _name("torus", shape.dims) if shape.ndim > 1 else f"{shape.size}-processor ring"
    )
    return build(
        grid_pair_array(shape.dims, wrap=True),
        shape.size,
        latency,
        speed,
        routing=f"{shape.ndim}Dtorus" if shape.ndim <= 3 else "NDtorus",
        shape=shape.dims,
        **kw,
    )


def ring(n: int, latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """``n`` processors in a ring: ``1-2, 2-3, ..., (n-1)-n`` then ``1-n``."""
    return torus([n], latency, speed, **kw)


def hypercube(dimension: int, latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """``2**dimension`` processors, ``p - 1`` and ``q - 1`` linked when they differ in
    one bit; links by bit (lowest first), then by processor."""
    if not 0 <= dimension <= 20:
        raise ValueError(f"a hypercube dimension must be 0 to 20, got {dimension}")
    check_generator("hypercube", [dimension])
    n = 1 << dimension
    p = np.arange(n, dtype=np.int64)
    pairs = np.concatenate(
        [np.column_stack((p[(p >> bit & 1) == 0] + 1, (p[(p >> bit & 1) == 0] | 1 << bit) + 1))
         for bit in range(dimension)] or [np.empty((0, 2), dtype=np.int64)]
    )  # fmt: skip
    shape = (2,) * dimension if 1 <= dimension <= 3 else None
    kw.setdefault("name", f"{dimension}-dimensional hypercube")
    return build(pairs, n, latency, speed, routing="hypercube", shape=shape, **kw)


def bus(n: int, latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """``n`` processors on one shared link (an Ethernet, say)."""
    _check_count(n)
    if n < 2:
        raise ValueError("a bus needs at least 2 processors")
    check_generator("bus", [n])
    kw.setdefault("name", f"{n}-processor bus")
    return build([list(range(1, n + 1))], n, latency, speed, routing="broadcast", **kw)


def clique(n: int, latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """``n`` processors, one link per pair (``1-2, 1-3, ..., (n-1)-n``)."""
    _check_count(n)
    check_generator("clique", [n])
    kw.setdefault("name", f"{n}-processor clique")
    a, b = np.triu_indices(n, k=1)
    pairs = np.column_stack((a + 1, b + 1)).astype(np.int64)
    return build(pairs, n, latency, speed, routing="broadcast", **kw)


def fat_tree(kind: str, dims: Sequence[int], latency: Seconds, speed: Seconds,
             **kw: Any) -> Topology:  # fmt: skip
    """A fat tree (:mod:`.switched`): ``fattree K N`` (k-ary n-tree), ``fattree2 D1 U1
    D2`` or ``fattree3 D1 U1 D2 U2 D3`` (port counts down and up by level). Compute
    processors first, then switches level by level from the leaves (``switch_type``,
    by default ``processor_type + 1``); ``updown`` routing."""
    from parasol_core.topology.switched import FatTree

    tree = FatTree.of(kind, dims)
    _check_count(tree.count)
    check_generator(kind, dims)
    shown = " ".join(str(int(d)) for d in dims)
    if kind == "fattree":
        kw.setdefault("name", f"{dims[0]}-ary {dims[1]}-tree")
    else:
        kw.setdefault("name", f"{tree.levels}-level fat tree {shown}")
    return build(tree.pairs(), tree.count, latency, speed, routing="updown",
                 compute=tree.compute, network=f"{kind} {shown}", **kw)  # fmt: skip


def dragonfly(dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
    """A dragonfly ``G A P H`` (:mod:`.switched`): terminals first, then routers group
    by group (``switch_type``, by default ``processor_type + 1``);
    ``dragonfly-minimal`` routing."""
    from parasol_core.topology.switched import Dragonfly

    fly = Dragonfly.of(dims)
    _check_count(fly.count)
    check_generator("dragonfly", dims)
    shown = " ".join(str(int(d)) for d in dims)
    kw.setdefault("name", f"dragonfly {shown}")
    return build(fly.pairs(), fly.count, latency, speed, routing="dragonfly-minimal",
                 compute=fly.terminals, network=f"dragonfly {shown}", **kw)  # fmt: skip


def _network_kind(kind: str) -> Callable[..., Topology]:
    def gen(dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
        return fat_tree(kind, dims, latency, speed, **kw)

    return gen


def _shape(dims: Sequence[int], kind: str) -> Shape:
    if not 1 <= len(dims) <= MAX_DIMS:
        raise ValueError(f"a {kind} has 1 to {MAX_DIMS} sizes, got {len(dims)}")
    if any(int(n) < 1 for n in dims):
        raise ValueError(f"the sizes of a {kind} must be positive, got {tuple(dims)}")
    shape = Shape(tuple(int(n) for n in dims))
    _check_count(shape.size)
    check_generator(kind, shape.dims)
    return shape


def _single(func: Callable[..., Topology], what: str) -> Callable[..., Topology]:
    def gen(dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any) -> Topology:
        if len(dims) != 1:
            raise ValueError(f"expected one size ({what}), got {len(dims)}")
        return func(int(dims[0]), latency, speed, **kw)

    return gen


GENERATORS: dict[str, Callable[..., Topology]] = {
    "grid": grid,
    "ring": _single(ring, "the processor count"),
    "torus": torus,
    "hypercube": _single(hypercube, "the dimension"),
    "bus": _single(bus, "the processor count"),
    "clique": _single(clique, "the processor count"),
    "fattree": _network_kind("fattree"),
    "fattree2": _network_kind("fattree2"),
    "fattree3": _network_kind("fattree3"),
    "dragonfly": dragonfly,
}

#: the kinds whose topologies have switches (and say so in '# piui: network')
NETWORKS = ("fattree", "fattree2", "fattree3", "dragonfly")


def generate(
    kind: str, dims: Sequence[int], latency: Seconds, speed: Seconds, **kw: Any
) -> Topology:
    """A topology by kind name (see :data:`GENERATORS`) and sizes."""
    func = GENERATORS.get(kind)
    if func is None:
        raise ValueError(f"unknown topology kind {kind!r} (known: {', '.join(GENERATORS)})")
    return func(dims, latency, speed, **kw)


@dataclass(frozen=True)
class GeneratorDefaults:
    """What the generator offers for a topology: its own kind, sizes and link timings,
    so that regenerating it unchanged is the starting point."""

    kind: str
    sizes: tuple[int, ...]
    latency: float | None
    speed: float | None


def defaults_for(topology: Topology) -> GeneratorDefaults:
    """The kind, sizes and link timings that describe ``topology`` (the kind from its
    routing and shape; the timings of its first timed link, None when it has none)."""
    from parasol_core.topology.shape import processor_count, shape_of

    n = processor_count(topology)
    shape = shape_of(topology)
    routing = topology.routing or ""
    first = next((lk for lk in topology.links if lk.latency and lk.speed), None)
    from parasol_core.topology.switches import network_of

    said = network_of(topology)  # read as the annotation is: ASCII whole numbers
    if said is not None and said[0] in GENERATORS:  # a generated fat tree or dragonfly
        kind, sizes = said[0], tuple(said[1].values())
    elif routing.endswith("torus") and shape is not None:
        kind, sizes = ("ring", (n,)) if shape.ndim == 1 else ("torus", shape.dims)
    elif routing == "hypercube" and n > 1 and n & (n - 1) == 0:
        kind, sizes = "hypercube", (n.bit_length() - 1,)
    elif routing == "broadcast":
        kind, sizes = ("bus" if len(topology.links) == 1 else "clique"), (n,)
    elif shape is not None:
        kind, sizes = "grid", shape.dims
    else:
        kind, sizes = "grid", (max(n, 1),)
    return GeneratorDefaults(kind, tuple(sizes),
                             first.latency.mean if first else None,
                             first.speed.mean if first else None)  # fmt: skip


def switch_type_for(
    machine: Machine | None, processor_type: int = 1
) -> tuple[int, Processor | None]:
    """The processor type a generated network's switches take: the model's first switch
    type (``# piui: role = switch``) and None; else a new one to add, the next free id
    after every type (``processor_type`` + 1 without a model), named "switch", marked as
    a switch, with no timings (a switch runs no program)."""
    if machine is not None:
        for proc in machine.processors:
            if proc.is_switch and isinstance(proc.id, int):
                return proc.id, None
        ids = [p.id for p in machine.processors if isinstance(p.id, int)]
        new_id = max([*ids, processor_type, 0]) + 1
    else:
        new_id = processor_type + 1
    return new_id, Processor(id=new_id, name="switch", role="switch")


def switch_type_to_add(machine: Machine, topology: Topology) -> Processor | None:
    """The switch processor type to add with a generated network (``topology.network``
    set) whose switch type the model lacks: the one :func:`switch_type_for` names;
    None when nothing needs adding."""
    if not topology.network:
        return None
    type_id, new = switch_type_for(machine)
    if new is None or type_id not in set(topology.types.values()):
        return None
    return new


def generate_over(old: Topology, kind: str, sizes: Sequence[int], latency: Seconds,
                  speed: Seconds, machine: Machine | None = None,
                  keep_switches: bool = True) -> Topology:  # fmt: skip
    """A generated topology to put in place of ``old``: its id, setup time, forwarding
    cost and duplex note, and the processor types of ``old`` where it had the
    processor, else its most common type
    (1 when it had none); without ``keep_switches``, a processor that was a switch
    takes that type too (a torus over a dragonfly: the routers' numbers become torus
    processors). A fat tree or dragonfly: its compute processors so, its switches of
    the model's switch type (:func:`switch_type_for`; add the new one it names, as the
    topology editor does, when the model has none).

    What putting it in place does to the rest of the model (mappings onto what becomes
    a switch, ...): :func:`parasol_core.topology.replacement.plan_generation`."""
    from parasol_core.model.inttable import int_columns
    from parasol_core.topology.shape import processor_count

    types = list(old.types.values())
    switches: set[int] = set()
    if machine is not None:  # the compute processors keep a compute type
        switches = {p.id for p in machine.processors if p.is_switch}
        types = [t for t in types if t not in switches]
    default = max(set(types), key=types.count, default=1)
    switch_type, _ = switch_type_for(machine, default)
    new = generate(kind, sizes, latency, speed, id=old.id, processor_type=default,
                   switch_type=switch_type,
                   setup=old.setup.mean if old.setup is not None else None)  # fmt: skip
    # what the links are made of stays: the forwarding cost and the duplex note are the
    # network technology's, not the old link set's (the per-link notes, `shared`,
    # `fatpipe`, and the processors' `names` name links and processors that change)
    new.forward, new.duplex = old.forward, old.duplex
    if kind in NETWORKS:
        return new
    n = processor_count(new)
    values = np.full(n, default, dtype=np.int64)
    found = int_columns(old.types)
    if found is not None:
        numbers, olds = found
        inside = (numbers >= 1) & (numbers <= n)
        values[numbers[inside] - 1] = olds[inside]
    else:
        for p in range(1, n + 1):
            values[p - 1] = old.types.get(p, default)
    if not keep_switches and switches:
        values[np.isin(values, list(switches))] = default
    new.types = IntTable.from_columns(np.arange(1, n + 1, dtype=np.int64), values)
    return new


# --------------------------------------------------------------------------- budgets


def generator_size(kind: str, dims: Sequence[int]) -> int:
    """The lines a generator (:mod:`parasol_core.topology.generators`) would write for
    ``kind`` and ``dims``: a processor type line each, a link line each (a bus: one
    link whose connect list names every processor). 0 for an unknown kind."""
    dims = [int(d) for d in dims]
    if kind in ("grid", "torus"):
        size = 1
        for d in dims:
            size *= max(d, 0)
        links = 0
        for d in dims:
            if d >= 1:
                links += (d - 1) * (size // d)
                if kind == "torus" and d >= 3:
                    links += size // d
        return size + links
    if kind in ("fattree", "fattree2", "fattree3", "dragonfly"):
        if any(d < 1 or d > 10**6 for d in dims):
            return 0  # the generator says what it takes
        try:
            net = network_structure(kind, dims)
        except ValueError:
            return 0
        return net.count + net.links
    if len(dims) != 1:
        return 0
    n = dims[0]
    if kind == "hypercube":
        if n < 0 or n > 64:
            return 0  # the generator says what it takes
        return (1 << n) + n * (1 << max(n - 1, 0))
    if kind == "ring":
        return 2 * n
    if kind == "bus":
        return 2 * n
    if kind == "clique":
        return n + n * (n - 1) // 2
    return 0


def check_generator(kind: str, dims: Sequence[int], limit: int | None = None) -> int:
    shown = " ".join(str(int(d)) for d in dims)
    return budget.check(f"generating {kind} {shown}", generator_size(kind, dims),
                        budget.current().generated if limit is None else limit, "lines",
                        "a line per processor and per link")  # fmt: skip
