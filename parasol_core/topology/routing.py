"""Routing techniques by name: the built-in ones, plug-ins and in-process registrations.

A topology's ``routing = "XY"`` names a technique. Techniques are found, in this order:

1. registered in this process with :func:`register_routing` (this may replace a
   built-in, on purpose: ``replace=True``);
2. the built-in table below. ``pyproject.toml`` declares the same names as entry points,
   but the table is what counts, so the built-ins work even when the installed metadata
   is stale (an editable checkout whose ``pyproject.toml`` changed since ``pip install``),
   and an installed plug-in cannot silently redefine ``XY``;
3. Python entry points in the group ``parasol_core.routing`` declared by any installed
   distribution: how a plug-in adds a technique without touching the core.

An entry point may name a :class:`RoutingTechnique` instance, a class to instantiate
without arguments, or a plain function ``path(layout, src, dst) -> list[int]``.

This module imports nothing heavy: the validator asks it for the known names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from parasol_core.topology.errors import RoutingError

if TYPE_CHECKING:
    import numpy as np

    from parasol_core.topology.shape import Layout

ENTRY_POINT_GROUP = "parasol_core.routing"

_T = "parasol_core.topology.techniques:"
BUILTIN_ROUTINGS: dict[str, str] = {
    "XY": _T + "XY",
    "YX": _T + "YX",
    "XYZ": _T + "XYZ",
    "XZY": _T + "XZY",
    "YXZ": _T + "YXZ",
    "YZX": _T + "YZX",
    "ZXY": _T + "ZXY",
    "ZYX": _T + "ZYX",
    "1Dtorus": _T + "TORUS_1D",
    "2Dtorus": _T + "TORUS_2D",
    "3Dtorus": _T + "TORUS_3D",
    "NDmesh": _T + "ND_MESH",
    "NDtorus": _T + "ND_TORUS",
    "simgrid-torus": _T + "SIMGRID_TORUS",
    "broadcast": _T + "BROADCAST",
    "hypercube": _T + "HYPERCUBE",
    "shortest": "parasol_core.topology.shortest:SHORTEST",
    "updown": "parasol_core.topology.switched:UPDOWN",
    "dragonfly-minimal": "parasol_core.topology.switched:DRAGONFLY_MINIMAL",
    "dragonfly-valiant": "parasol_core.topology.switched:DRAGONFLY_VALIANT",
    "simgrid-dragonfly": "parasol_core.topology.switched:SIMGRID_DRAGONFLY",
    "zones": "parasol_core.topology.zoned:ZONES",
}


class RoutingTechnique:
    """How messages travel through a topology, and which links a virtual topology of
    this name has.

    Subclasses implement :meth:`path`. :meth:`paths` (many routes at once) defaults to
    calling :meth:`path` in a loop; override it with numpy code where that pays.
    :meth:`neighbours` says which virtual links the name implies; a technique without
    it can route hardware topologies but not define virtual ones.
    """

    name: str = ""
    description: str = ""
    #: the most sizes of the grid it routes on (``XY``: 2, ``NDtorus``: 6); None when it
    #: needs no grid shape. A virtual topology's default shape has this many sizes, up
    #: to 3 (2 when None): :func:`parasol_core.topology.virtual.default_shape`.
    grid_dims: int | None = None

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        """The processors a message from ``src`` to ``dst`` visits, both ends included.
        Consecutive processors must share a link (the route then crosses the lowest-id
        one)."""
        raise NotImplementedError

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Many paths at once, as ``(offsets, processors)``: path ``i`` is
        ``processors[offsets[i]:offsets[i + 1]]``."""
        import numpy as np

        offsets = [0]
        flat: list[int] = []
        for s, d in zip(src.tolist(), dst.tolist()):
            flat.extend(self.path(layout, s, d))
            offsets.append(len(flat))
        return np.asarray(offsets, dtype=np.int64), np.asarray(flat, dtype=np.int64)

    def ranked_paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`paths`, and which of the links joining each hop's two processors the
        route crosses, per hop in route order: 0 the lowest-id one, 1 the next, ...
        (parallel links, as a SimGrid fat tree has); None: always the lowest-id one.
        Override it where a route picks among parallel links."""
        offsets, procs = self.paths(layout, src, dst)
        return offsets, procs, None

    def neighbours(self, layout: Layout, p: int) -> list[int]:
        """The processors ``p`` has a virtual link to, ascending."""
        raise RoutingError(f"the {self.name} routing technique does not define virtual links")

    def __repr__(self) -> str:
        return f"<routing technique {self.name!r}>"


class FunctionRouting(RoutingTechnique):
    """A technique made from a plain ``path(layout, src, dst)`` function."""

    def __init__(self, name: str, func: Callable[[Layout, int, int], list[int]]) -> None:
        self.name = name
        self.description = (func.__doc__ or "").strip()
        self._func = func

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        return list(self._func(layout, src, dst))


_registered: dict[str, RoutingTechnique] = {}
_loaded: dict[str, RoutingTechnique] = {}


def register_routing(name: str, technique: Any, *, replace: bool = False) -> RoutingTechnique:
    """Make ``technique`` available as ``name`` in this process (it wins over entry
    points and built-ins). ``technique``: an instance, a class or a path function."""
    if not name or any(c.isspace() or c in '"=' for c in name):
        raise ValueError(f"not a usable routing name: {name!r}")
    if (name in _registered or name in BUILTIN_ROUTINGS) and not replace:
        raise ValueError(f"a routing technique named {name!r} already exists (replace=True?)")
    tech = _as_technique(name, technique)
    _registered[name] = tech
    return tech


def unregister_routing(name: str) -> None:
    """Forget a technique registered with :func:`register_routing`."""
    _registered.pop(name, None)


def refresh_routings() -> None:
    """Read the installed entry points again (after installing a plug-in)."""
    _entry_points.cache_clear()
    _loaded.clear()


def available_routings() -> list[str]:
    """Every routing name that resolves: registered, entry points and built-ins, sorted."""
    names = set(BUILTIN_ROUTINGS) | set(_entry_points()) | set(_registered)
    return sorted(names, key=lambda s: (s.lower(), s))


class RoutingNames(Collection[str]):
    """Every routing name that resolves, as :func:`available_routings` lists them; a
    membership test reads the installed plug-ins only for a name that is neither built
    in nor registered, so checking a model that uses built-in routings does not."""

    def __contains__(self, name: object) -> bool:
        return (
            name in BUILTIN_ROUTINGS
            or name in _registered
            or (isinstance(name, str) and name in _entry_points())
        )

    def __iter__(self) -> Iterator[str]:
        return iter(available_routings())

    def __len__(self) -> int:
        return len(available_routings())


def routing_names() -> RoutingNames:
    """The routing names, for membership tests (see :class:`RoutingNames`)."""
    return RoutingNames()


def get_routing(name: str) -> RoutingTechnique:
    """The technique called ``name``; a RoutingError lists the known names if none is."""
    if name in _registered:
        return _registered[name]
    if name in _loaded:
        return _loaded[name]
    target = BUILTIN_ROUTINGS.get(name) or _entry_points().get(name)
    if target is None:
        raise RoutingError(
            f"unknown routing technique {name!r} (known: {', '.join(available_routings())})"
        )
    try:
        tech = _as_technique(name, _load(target))
    except Exception as e:  # a broken plug-in must not take the editor down
        raise RoutingError(f"the routing plug-in {name!r} ({target}) cannot be loaded: {e}") from e
    _loaded[name] = tech
    return tech


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, str]:
    """name -> ``module:attr`` of the installed entry points other than the built-ins
    (the first distribution found wins a name two of them declare)."""
    from importlib import metadata  # tens of milliseconds: only when a name needs it

    out: dict[str, str] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in BUILTIN_ROUTINGS:
            out.setdefault(ep.name, ep.value)
    return out


def _load(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in attr.strip().split(".") if attr.strip() else ():
        obj = getattr(obj, part)
    return obj


def _as_technique(name: str, obj: Any) -> RoutingTechnique:
    if isinstance(obj, type):
        obj = obj()
    if hasattr(obj, "path"):
        if not getattr(obj, "name", ""):
            try:
                obj.name = name
            except AttributeError:
                pass
        return obj
    if callable(obj):
        return FunctionRouting(name, obj)
    raise TypeError(f"routing technique {name!r}: {obj!r} has no path() and is not callable")
