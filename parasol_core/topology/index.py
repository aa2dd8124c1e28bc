"""Routes through a hardware topology, from a per-topology index built once.

:func:`index_of` gives a :class:`TopologyIndex` for a topology: its shape, its links
by id, and which link joins any two processors (the lowest-id one holding both). It is
cached per topology object and rebuilt when the topology's routing-relevant content
(routing name, shape, processor count, link ids, connect lists, latencies, speeds)
differs from when it was built, so a topology edited in place is never routed from a
stale index. An index is a snapshot: hold on to one for a hot loop, ask
:func:`index_of` again after an edit (or call :func:`invalidate`).

A route (:class:`Route`) is the list of processors visited and links crossed;
:class:`RouteBatch` holds many routes as flat numpy arrays.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from parasol_core.base.words import counted
from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique, get_routing
from parasol_core.topology.shape import Layout, Shape, processor_count, shape_of
from parasol_core.topology.shortest import LinkGraph

# Links holding more processors than this (buses, Ethernets) are not expanded into
# processor pairs, which would grow with the square of their size.
BIG_LINK = 32
# Up to this many processor pairs, batch lookups use a dense pair -> link table (4 bytes
# a pair: 16 MB at the limit, about 2000 processors); above it, a binary search.
DENSE_PAIRS = 1 << 22
# A processor count is believed up to this, or up to what the topology's own entries
# (p[i] lines, connect lists) could number; beyond, it is a number written in the file
# that no input backs, and routing refuses it rather than do work in proportion to it.
FREE_COUNT = 1 << 16


@dataclass(frozen=True)
class Route:
    """The processors a message visits (both ends included) and the links it crosses."""

    processors: tuple[int, ...]
    links: tuple[int, ...]

    @property
    def source(self) -> int:
        return self.processors[0]

    @property
    def destination(self) -> int:
        return self.processors[-1]

    @property
    def hops(self) -> int:
        return len(self.links)


class RouteBatch(Sequence[Route]):
    """Many routes as flat arrays: route ``i`` visits
    ``processors[offsets[i]:offsets[i + 1]]`` and crosses
    ``links[link_offsets[i]:link_offsets[i + 1]]``."""

    def __init__(self, offsets: np.ndarray, processors: np.ndarray, links: np.ndarray) -> None:
        self.offsets = offsets
        self.processors = processors
        self.links = links
        self.link_offsets = offsets - np.arange(offsets.shape[0], dtype=np.int64)

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        a, b = self.offsets[i], self.offsets[i + 1]
        la, lb = self.link_offsets[i], self.link_offsets[i + 1]
        return Route(tuple(self.processors[a:b].tolist()), tuple(self.links[la:lb].tolist()))

    def __iter__(self) -> Iterator[Route]:
        for i in range(len(self)):
            yield self[i]

    @property
    def hops(self) -> np.ndarray:
        return np.diff(self.link_offsets)


class TopologyIndex:
    """What routing needs to know about one hardware topology, computed once."""

    def __init__(self, topology: Topology, label: str | None = None) -> None:
        # Weakly: the cache of indexes (:func:`index_of`) holds this index for as long as
        # the topology lives, and drops it when the topology goes; a strong reference
        # here would keep the topology, and so the cache entry, alive for ever. What the
        # routing needs is copied out below.
        self._topology = weakref.ref(topology)
        #: the topology's id when indexed (part of the fingerprint: the same while valid)
        self.topology_id = topology.id
        self.label = label or (
            f"topology {topology.id}" if topology.id is not None else "the topology"
        )
        self.count = processor_count(topology)
        self.shape: Shape | None = shape_of(topology)
        self.routing = topology.routing

        #: why routing through this topology is refused (a RoutingError), or None
        self.problem: RoutingError | None = None
        store = topology.links
        ids, has_id, off, procs = store.resolved()
        sizes = np.diff(off)
        n = sizes.shape[0]
        # links with no id or no processors are skipped (the validator reports them), and
        # so is a link whose id an earlier link has
        usable = has_id & (sizes > 0)
        rows = np.flatnonzero(usable)
        _, first = np.unique(ids[rows], return_index=True)
        rows = rows[np.sort(first)]
        present = len(topology.types) + int(sizes[rows].sum())
        # a link naming a processor outside 1..count is never in a lookup: its numbers
        # would stand for other pairs
        owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
        numbers = procs[off[0] : off[-1]].astype(np.int64, copy=False)
        outside_at = np.flatnonzero((numbers < 1) | (numbers > self.count))
        bad = np.zeros(n, dtype=bool)
        bad[owner[outside_at]] = True
        bad_rows = rows[bad[rows]]
        if bad_rows.shape[0]:
            row = int(bad_rows[0])
            member = numbers[off[row] - off[0] : off[row + 1] - off[0]]
            outside = int(member[(member < 1) | (member > self.count)][0])
            self.problem = RoutingError(
                f"link {int(ids[row])} of {self.label} connects processor {outside}, "
                f"which is not one of its processors (1..{self.count})"
            )
            rows = rows[~bad[rows]]
        #: link ids in slot order; ``latency[s]`` and ``speed[s]`` belong to ``link_ids[s]``
        self.link_ids = ids[rows].copy()
        self.latency = store.means("latency")[rows].copy()
        self.speed = store.means("speed")[rows].copy()
        #: processors per slot, and their processors: ``member_procs[member_offsets[s]:
        #: member_offsets[s + 1]]``
        self.sizes = sizes[rows].copy()
        self.member_offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=self.member_offsets[1:])
        keep = np.zeros(n, dtype=bool)
        keep[rows] = True
        self.member_procs = numbers[np.repeat(keep, sizes)]
        if self.count > max(FREE_COUNT, 2 * present):
            self.problem = RoutingError(
                f"{self.label} says it has {counted(self.count, 'processor', grouped=False)}, "
                f"far more than its "
                f"{len(topology.types)} p[i] lines and its links hold; correct its "
                "'processors' count"
            )

        # built lazily: only the shortest technique searches it
        self.layout = Layout(
            self.count,
            self.shape,
            self.label,
            graph=LinkGraph(
                self.count, self.sizes, self.member_offsets, self.member_procs, self.label
            ),  # fmt: skip
            network=_network(topology),
            zones=_zones(topology),
        )
        self._stride = self.count + 1
        self._pair_keys, self._pair_ids, self._big = self._pair_table()

    @property
    def topology(self) -> Topology:
        """The topology indexed, while something else holds it (the index does not)."""
        topology = self._topology()
        if topology is None:
            raise RoutingError(f"{self.label} is no longer in memory: index it again")
        return topology

    @cached_property
    def members(self) -> Members:
        """Link id -> its processors (a mapping backed by the arrays)."""
        return Members(self)

    @cached_property
    def slot_of(self) -> SlotOf:
        """Link id -> its slot (a mapping backed by the arrays)."""
        return SlotOf(self)

    def _pair_table(self) -> tuple[np.ndarray, np.ndarray, list[tuple[int, frozenset[int]]]]:
        """The processor pairs each link joins, as a sorted key array (``a * stride + b``
        with a < b) and the lowest-id link of each key; links of more than
        :data:`BIG_LINK` processors apart, as (id, members), by id."""
        stride = self._stride
        sizes, offs, procs, ids = self.sizes, self.member_offsets, self.member_procs, self.link_ids
        keys_parts: list[np.ndarray] = []
        id_parts: list[np.ndarray] = []
        two = np.flatnonzero(sizes == 2)
        if two.shape[0]:
            a, b = procs[offs[two]], procs[offs[two] + 1]
            keys_parts.append(np.minimum(a, b) * stride + np.maximum(a, b))
            id_parts.append(ids[two])
        big: list[tuple[int, frozenset[int]]] = []
        for s in np.flatnonzero((sizes > 2) | (sizes == 1)).tolist():
            member = procs[offs[s] : offs[s + 1]].tolist()
            lid = int(ids[s])
            if len(member) > BIG_LINK:
                big.append((lid, frozenset(member)))
                continue
            pairs = [(x, y) for i, x in enumerate(member) for y in member[i + 1 :]]
            if pairs:
                pa = np.asarray(pairs, dtype=np.int64)
                keys_parts.append(np.minimum(pa[:, 0], pa[:, 1]) * stride
                                  + np.maximum(pa[:, 0], pa[:, 1]))  # fmt: skip
                id_parts.append(np.full(len(pairs), lid, dtype=np.int64))
        big.sort(key=lambda item: item[0])
        if not keys_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), big
        keys = np.concatenate(keys_parts)
        lids = np.concatenate(id_parts)
        order = np.lexsort((lids, keys))  # by key, then id: the first of a key is the lowest
        keys, lids = keys[order], lids[order]
        first = np.ones(keys.shape[0], dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        return keys[first], lids[first], big

    def _pair_link(self, key: int) -> int | None:
        keys = self._pair_keys
        at = int(np.searchsorted(keys, key))
        if at < keys.shape[0] and int(keys[at]) == key:
            return int(self._pair_ids[at])
        return None

    # ------------------------------------------------------------------ lookups

    @property
    def technique(self) -> RoutingTechnique:
        # looked up each time (a dict hit): a technique re-registered later is used
        if not self.routing:
            raise RoutingError(f"{self.label} has no routing technique")
        return get_routing(self.routing)

    def link_between(self, a: int, b: int) -> int | None:
        """The lowest-id link connecting processors ``a`` and ``b``, or None."""
        if not (1 <= a <= self.count and 1 <= b <= self.count):
            return None  # outside, a key would stand for another pair
        key = a * self._stride + b if a < b else b * self._stride + a
        found = self._pair_link(key)
        for lid, procs in self._big:
            if found is not None and lid > found:
                break
            if a in procs and b in procs:
                return lid
        return found

    def check(self) -> None:
        """Raise the RoutingError that says why this topology cannot be routed, if any."""
        if self.problem is not None:
            raise RoutingError(str(self.problem))

    def links_between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """:meth:`link_between` for many pairs at once; 0 where no link connects them."""
        slots = self.slots_between(a, b)
        out = np.zeros(slots.shape[0], dtype=np.int64)
        found = slots >= 0
        out[found] = self.link_ids[slots[found]]
        return out

    def slots_between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Slots (positions in :attr:`link_ids`) of the lowest-id links joining ``a[i]``
        and ``b[i]``; -1 where none does. Exact whatever the ids' size."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        if self._stride * self._stride <= DENSE_PAIRS:
            inside = (a >= 1) & (a <= self.count) & (b >= 1) & (b <= self.count)
            if inside.all():
                return self._dense[a * self._stride + b].astype(np.int64) - 1
            out = np.full(a.shape[0], -1, dtype=np.int64)
            out[inside] = self._dense[a[inside] * self._stride + b[inside]].astype(np.int64) - 1
            return out
        return self._slots(self._sparse_links_between(a, b))

    def _slots(self, ids: np.ndarray) -> np.ndarray:
        out = np.full(ids.shape[0], -1, dtype=np.int64)
        found = ids != 0
        out[found] = self.slots(ids[found])
        return out

    def _sparse_links_between(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        keys, values = self._pair_arrays
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        inside = (lo >= 1) & (hi <= self.count)
        wanted = np.where(inside, lo, 0) * self._stride + np.where(inside, hi, 0)
        out = np.zeros(wanted.shape[0], dtype=np.int64)
        if keys.shape[0]:
            at = np.searchsorted(keys, wanted)
            at[at == keys.shape[0]] = 0
            hit = keys[at] == wanted
            hit &= inside
            out[hit] = values[at[hit]]
        if self._big:
            ids, member = self._big_arrays
            ok = (lo >= 1) & (hi <= self.count)
            lo_c, hi_c = np.where(ok, lo, 0), np.where(ok, hi, 0)
            common = member[:, lo_c] & member[:, hi_c]
            has = common.any(axis=0) & ok
            first = ids[np.argmax(common, axis=0)]
            better = has & ((out == 0) | (first < out))
            out[better] = first[better]
        return out

    @property
    def _pair_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self._pair_keys, self._pair_ids

    @cached_property
    def _dense(self) -> np.ndarray:
        """``table[a * stride + b]``: 1 + the slot of the lowest-id link joining a and b,
        or 0. Slots, not ids, so that ids of any size fit 4 bytes (slots are
        positions: fewer than the links in the file)."""
        stride = self._stride
        table = np.zeros(stride * stride, dtype=np.int32)
        keys, values = self._pair_arrays
        lo, hi = keys // stride, keys % stride
        slots = (self.slots(values) + 1).astype(np.int32)
        table[lo * stride + hi] = slots
        table[hi * stride + lo] = slots
        square = table.reshape(stride, stride)
        for lid, procs in self._big:
            at = np.ix_(sorted(procs), sorted(procs))
            block = square[at]
            current = np.where(block > 0, self.link_ids[np.maximum(block - 1, 0)], 0)
            replace = (block == 0) | (current > lid)
            square[at] = np.where(replace, self.slot_of[lid] + 1, block)
        return table

    @cached_property
    def _big_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray([lid for lid, _ in self._big], dtype=np.int64)
        member = np.zeros((len(self._big), self.count + 1), dtype=bool)  # count is checked
        for row, (_, procs) in enumerate(self._big):
            member[row, [p for p in procs if 1 <= p <= self.count]] = True
        return ids, member

    def links_of(self, p: int) -> list[int]:
        """Ids of the links processor ``p`` is on, ascending."""
        at = np.flatnonzero(self.member_procs == p)
        slots = np.searchsorted(self.member_offsets, at, side="right") - 1
        return sorted(set(self.link_ids[slots].tolist()))

    def slots(self, link_ids: np.ndarray) -> np.ndarray:
        """Positions of link ids in :attr:`link_ids` (for the latency and speed arrays)."""
        order = self._id_order
        at = np.searchsorted(self.link_ids[order], link_ids)
        return order[at]

    @cached_property
    def _id_order(self) -> np.ndarray:
        return np.argsort(self.link_ids, kind="stable")

    def coordinates(self, p: int) -> tuple[int, ...]:
        if self.shape is None:
            raise RoutingError(f"{self.label} has no grid shape")
        return self.shape.coordinates(p)

    def processor_at(self, coords: Sequence[int]) -> int:
        if self.shape is None:
            raise RoutingError(f"{self.label} has no grid shape")
        return self.shape.processor(coords)

    # ------------------------------------------------------------------ routes

    def check_processor(self, p: int) -> None:
        if not 1 <= p <= self.count:
            raise RoutingError(f"processor {p} is not in {self.label} (processors 1..{self.count})")

    def missing_link(self, a: int, b: int) -> RoutingError:
        return RoutingError(f"no link connects processor {a} and processor {b} in {self.label}")

    def route(self, src: int, dst: int) -> Route:
        """The route from ``src`` to ``dst`` by the topology's routing technique."""
        self.check()
        self.check_processor(src)
        self.check_processor(dst)
        technique = self.technique
        ranked = getattr(type(technique), "ranked_paths", None)
        if ranked is not None and ranked is not RoutingTechnique.ranked_paths:
            # it may pick among parallel links: the batch of one says which
            batch = self.routes([src], [dst])
            return batch[0]
        path = technique.path(self.layout, src, dst)
        if not path or path[0] != src or path[-1] != dst:
            raise RoutingError(
                f"the {self.routing} routing technique gave a path from {path[:1]} to "
                f"{path[-1:]} for a message from processor {src} to processor {dst}"
            )
        if min(path) < 1 or max(path) > self.count:
            raise RoutingError(
                f"the {self.routing} routing technique left {self.label} (processors "
                f"1..{self.count}) on the way from processor {src} to processor {dst}"
            )
        if self._big:
            links = [self.link_between(a, b) for a, b in zip(path, path[1:])]
        else:  # the common case: one binary search per hop
            pair, stride = self._pair_link, self._stride
            links = [
                pair(a * stride + b if a < b else b * stride + a) for a, b in zip(path, path[1:])
            ]
        if None in links:
            at = links.index(None)
            raise self.missing_link(path[at], path[at + 1])
        return Route(tuple(path), tuple(links))

    def routes(self, src: Any, dst: Any) -> RouteBatch:
        """Many routes at once (numpy): ``src[i]`` to ``dst[i]``."""
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        if src.shape != dst.shape or src.ndim != 1:
            raise ValueError("routes() needs two sequences of the same length")
        self.check()
        for ends in (src, dst):
            bad = (ends < 1) | (ends > self.count)
            if bad.any():
                self.check_processor(int(ends[np.argmax(bad)]))
        # Their size, counted before any is plotted, whatever the number of routes: a
        # few routes across a large ring are as much work as many short ones (300 routes
        # of 100,000 hops: 30,000,001 steps). Counting costs a few microseconds a batch.
        from parasol_core.base import budget
        from parasol_core.topology.steps import route_steps

        n = src.shape[0]
        steps = route_steps(self.layout, self.technique, src, dst)
        budget.check_route_steps(f"{n:,} route{'' if n == 1 else 's'}", steps,
                                 "processors visited, both ends included")  # fmt: skip
        technique = self.technique
        ranks = None
        if getattr(technique, "ranked_paths", None) is not None:
            offsets, procs, ranks = technique.ranked_paths(self.layout, src, dst)
        else:  # a plug-in that is no RoutingTechnique
            offsets, procs = technique.paths(self.layout, src, dst)
        offsets = np.asarray(offsets, dtype=np.int64)
        procs = np.asarray(procs, dtype=np.int64)
        steps = np.ones(max(procs.shape[0] - 1, 0), dtype=bool)
        steps[offsets[1:-1] - 1] = False  # the last processor of one route -> the next's first
        a, b = procs[:-1][steps], procs[1:][steps]
        slots = self.slots_between(a, b)
        if ranks is not None:
            slots = self._ranked_slots(a, b, slots, np.asarray(ranks, dtype=np.int64))
        missing = slots < 0
        if missing.any():
            i = int(np.argmax(missing))
            raise self.missing_link(int(a[i]), int(b[i]))
        return RouteBatch(offsets, procs, self.link_ids[slots])

    @cached_property
    def _parallel(self) -> tuple[np.ndarray, np.ndarray]:
        """Every two-processor link's pair key (``a * stride + b``, a < b) and id, by key
        and then id: the links joining one pair, lowest id first."""
        two = np.flatnonzero(self.sizes == 2)
        a = self.member_procs[self.member_offsets[two]]
        b = self.member_procs[self.member_offsets[two] + 1]
        keys = np.minimum(a, b) * self._stride + np.maximum(a, b)
        ids = self.link_ids[two]
        order = np.lexsort((ids, keys))
        return keys[order], ids[order]

    def _ranked_slots(self, a: np.ndarray, b: np.ndarray, slots: np.ndarray,
                      ranks: np.ndarray) -> np.ndarray:  # fmt: skip
        """``slots`` with each hop whose rank is r > 0 on the (r+1)-th lowest-id of the
        two-processor links joining its processors (-1 where there are not so many)."""
        if ranks.shape != slots.shape:
            raise RoutingError(f"the {self.routing} routing technique gave {ranks.shape[0]:,} "
                               f"link choices for {counted(slots.shape[0], 'hop')}")  # fmt: skip
        pick = np.flatnonzero(ranks > 0)
        if not pick.shape[0]:
            return slots
        keys, ids = self._parallel
        lo, hi = np.minimum(a[pick], b[pick]), np.maximum(a[pick], b[pick])
        want = lo * self._stride + hi
        at = np.searchsorted(keys, want) + ranks[pick]
        ok = at < keys.shape[0]
        ok[ok] = keys[at[ok]] == want[ok]
        out = slots.copy()
        out[pick[~ok]] = -1
        out[pick[ok]] = self.slots(ids[at[ok]])
        return out


class Members(Mapping):
    """Link id -> the tuple of its processors, for the links an index routes over: a
    mapping read from the index's arrays (no dictionary of tuples for a million links)."""

    def __init__(self, index: TopologyIndex) -> None:
        self._index = index

    def __getitem__(self, lid: Any) -> tuple[int, ...]:
        s = self._index.slot_of.get(lid)
        if s is None:
            raise KeyError(lid)
        offs = self._index.member_offsets
        return tuple(self._index.member_procs[offs[s] : offs[s + 1]].tolist())

    def __iter__(self) -> Iterator[int]:
        return iter(self._index.link_ids.tolist())

    def __len__(self) -> int:
        return int(self._index.link_ids.shape[0])

    def values(self) -> Any:
        offs = self._index.member_offsets.tolist()
        procs = self._index.member_procs.tolist()
        return [tuple(procs[a:b]) for a, b in zip(offs, offs[1:])]

    def items(self) -> Any:
        return list(zip(self._index.link_ids.tolist(), self.values()))


class SlotOf(Mapping):
    """Link id -> slot (its position in the index's arrays)."""

    def __init__(self, index: TopologyIndex) -> None:
        self._index = index
        ids = index.link_ids
        n = ids.shape[0]
        self._range = bool(n and ids[0] == 1 and ids[-1] == n and (np.diff(ids) == 1).all())

    def __getitem__(self, lid: Any) -> int:
        if type(lid) is not int:
            if isinstance(lid, (np.integer,)):
                lid = int(lid)
            else:
                raise KeyError(lid)
        ids = self._index.link_ids
        if self._range:
            if 1 <= lid <= ids.shape[0]:
                return lid - 1
            raise KeyError(lid)
        order = self._index._id_order
        at = int(np.searchsorted(ids[order], lid))
        if at < ids.shape[0] and int(ids[order[at]]) == lid:
            return int(order[at])
        raise KeyError(lid)

    def __iter__(self) -> Iterator[int]:
        return iter(self._index.link_ids.tolist())

    def __len__(self) -> int:
        return int(self._index.link_ids.shape[0])


# --------------------------------------------------------------------------- the cache


def fingerprint(topology: Topology) -> tuple:
    """What an index depends on, cheap to compare: change any of it and the index is
    rebuilt. The links are their store and its version, which every write changes."""
    return (
        topology.id,
        topology.routing,
        topology.network,
        getattr(topology, "zones", None),
        tuple(topology.shape) if topology.shape else None,
        processor_count(topology),
        id(topology.links),
        topology.links.version,
    )


def _network(topology: Topology) -> tuple | None:
    """``(kind, numbers)`` of the topology's ``# piui: network`` line, or None."""
    from parasol_core.topology.switches import network_of

    found = network_of(topology)
    return None if found is None else (found[0], tuple(found[1].values()))


def _zones(topology: Topology) -> tuple | None:
    """The zones of the topology's ``# piui: zones`` line, or None."""
    from parasol_core.syntax.annotations import parse_zones

    text = getattr(topology, "zones", None)
    if not text:
        return None
    zones, why = parse_zones(text)
    return None if why is not None else tuple(zones)


_cache: dict[int, tuple[weakref.ref, tuple, TopologyIndex]] = {}


def index_of(topology: Topology) -> TopologyIndex:
    """The index of a topology, rebuilt if the topology changed since it was built."""
    key = id(topology)
    fp = fingerprint(topology)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is topology and hit[1] == fp:
        return hit[2]
    index = TopologyIndex(topology)
    try:
        ref = weakref.ref(topology, lambda _r, key=key: _forget(key, _r))
    except TypeError:  # pragma: no cover - model objects are weak-referenceable
        return index
    _cache[key] = (ref, fp, index)
    return index


def _forget(key: int, ref: weakref.ref) -> None:
    cache = _cache
    if cache is None:  # the interpreter is shutting down and module globals are gone
        return
    hit = cache.get(key)
    if hit is not None and hit[0] is ref:
        del cache[key]


def invalidate(topology: Topology | None = None) -> None:
    """Drop the cached index of one topology (or of all)."""
    if topology is None:
        _cache.clear()
    else:
        _cache.pop(id(topology), None)


def route(topology: Topology, src: int, dst: int) -> Route:
    """The route from processor ``src`` to ``dst`` through a hardware topology."""
    return index_of(topology).route(src, dst)


def routes(topology: Topology, src: Any, dst: Any) -> RouteBatch:
    """Many routes through a hardware topology at once."""
    return index_of(topology).routes(src, dst)
