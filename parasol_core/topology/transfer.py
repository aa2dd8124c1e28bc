"""Network states and message transfer times (docs/decisions.md, "Network state and
transfer time"; the report's steps I-V in section 2.2.2).

The estimator plots each message's route once and keeps its integer id
(:class:`RouteTable`, steps I-II). At each point of its event trace it names the routes
that are active (a :class:`NetworkState`, a multiset of route ids, step IV) and asks
how long one of them takes. For a message of ``b`` bytes on route ``R`` in state ``S``
(``R`` itself counted in ``S``)::

    t = sum(latency(l) for l in R) + b * max(speed(l) * n_S(l) for l in R)

where ``n_S(l)`` is how many routes in ``S`` cross link ``l`` (a route counts once per
link, however often it crosses it). A route of no links (a message to oneself) takes no
time. Topology setup times are not part of it.

A topology with a forwarding cost or duplex links (``# piui: forward``, ``# piui:
duplex``) has its loads from :mod:`.resources` instead: the same max over the resources a
route uses, with forwarders and link directions among them.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from parasol_core.base.numeric import SMALLEST_NORMAL
from parasol_core.model import Machine, Topology, VirtualTopology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import FREE_COUNT, Route, TopologyIndex, index_of
from parasol_core.topology.overflow import check_transfer
from parasol_core.topology.ragged import gather, segment_reduce
from parasol_core.topology.resources import NetOptions, options_of, state_per_byte
from parasol_core.topology.virtual import find_virtual, hardware_of, virtual_label


class RouteTable:
    """Routes plotted once and named by integer ids (1, 2, 3, ...).

    Built on a hardware topology; with ``mapping`` (virtual -> hardware processor),
    :meth:`add` takes virtual processor numbers. The table keeps the index it was built
    with, so the routes and timings stay those of the topology as it was then.
    """

    def __init__(
        self,
        topology: Topology,
        mapping: Mapping[int, int] | None = None,
        label: str | None = None,
    ) -> None:
        self.index: TopologyIndex = index_of(topology)
        self.topology = topology  # the index holds it weakly; the table's options read it
        self.mapping = dict(mapping) if mapping is not None else None
        self.label = label or self.index.label
        # every route end to end: its processors, its link slots (positions in
        # index.link_ids), and its link slots without repeats (for the link loads)
        self._procs = array("q")
        self._proc_ends = array("q", [0])
        self._slots = array("q")
        self._ends = array("q", [0])
        self._unique = array("q")
        self._unique_ends = array("q", [0])
        self._arrays: tuple[np.ndarray, ...] | None = None

    @classmethod
    def for_machine(
        cls, machine: Machine, virtual: VirtualTopology | int | None = None
    ) -> RouteTable:
        """Routes through the machine's hardware topology, between hardware processors or,
        given a virtual topology, between its virtual processors."""
        hw = hardware_of(machine)
        if virtual is None:
            return cls(hw)
        virt = find_virtual(machine, virtual)
        return cls(hw, virt.mapping, virtual_label(virt))

    def __len__(self) -> int:
        return len(self._ends) - 1

    @property
    def kept_steps(self) -> int:
        """The processors the routes kept visit, all together (what the table holds)."""
        return len(self._procs)

    def __getitem__(self, route_id: int) -> Route:
        """The route with this id."""
        i = self._position(route_id)
        procs = self._procs[self._proc_ends[i] : self._proc_ends[i + 1]]
        slots = self._slots[self._ends[i] : self._ends[i + 1]]
        ids = self.index.link_ids
        return Route(tuple(procs), tuple(int(ids[s]) for s in slots))

    def _position(self, route_id: int) -> int:
        if not 1 <= route_id <= len(self):
            raise KeyError(f"there is no route with id {route_id}")
        return route_id - 1

    def _hardware(self, p: int) -> int:
        if self.mapping is None:
            return p
        h = self.mapping.get(p)
        if h is None:
            raise RoutingError(
                f"virtual processor {p} of {self.label} is not mapped to a hardware processor"
            )
        return h

    def add(self, src: int, dst: int) -> int:
        """Plot the route of a message from ``src`` to ``dst``; its id."""
        a, b = self._hardware(src), self._hardware(dst)
        try:
            route = self.index.route(a, b)
        except RoutingError as e:
            if self.mapping is None:
                raise
            raise RoutingError(
                f"{e} (from virtual processor {src} to {dst} of {self.label})"
            ) from None
        return self.add_route(route)

    def add_route(self, route: Route) -> int:
        """Keep an already plotted (hardware) route; its id."""
        slot_of = self.index.slot_of
        try:
            slots = [slot_of[lid] for lid in route.links]
        except KeyError as e:
            raise RoutingError(f"link {e.args[0]} is not in {self.index.label}") from None
        self._procs.extend(route.processors)
        self._proc_ends.append(len(self._procs))
        self._slots.extend(slots)
        self._ends.append(len(self._slots))
        self._unique.extend(dict.fromkeys(slots))
        self._unique_ends.append(len(self._unique))
        self._arrays = None
        return len(self)

    def add_many(self, src: Any, dst: Any) -> np.ndarray:
        """Plot many routes at once (numpy); their ids, in order."""
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        if self.mapping is not None:
            table = mapping_table(self.mapping)
            for ends in (src, dst):
                bad = (ends < 1) | (ends >= table.shape[0])
                bad[~bad] = table[ends[~bad]] == 0
                if bad.any():
                    self._hardware(int(ends[np.argmax(bad)]))
            src, dst = table[src], table[dst]
        batch = self.index.routes(src, dst)
        first = len(self) + 1
        slots = self.index.slots(batch.links)
        _append(self._procs, self._proc_ends, batch.processors, batch.offsets)
        _append(self._slots, self._ends, slots, batch.link_offsets)
        # distinct links per route: sorting (route, slot) keys groups them by route
        nslots = self.index.link_ids.shape[0] + 1
        which = np.repeat(np.arange(len(batch), dtype=np.int64), batch.hops)
        keys = np.sort(which * nslots + slots)
        if keys.shape[0] > 1:
            keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        counts = np.bincount(keys // nslots, minlength=len(batch))
        offsets = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        _append(self._unique, self._unique_ends, keys % nslots, offsets)
        self._arrays = None
        return np.arange(first, first + len(batch), dtype=np.int64)

    def steps(self, src: Any, dst: Any) -> int:
        """The processors the routes ``src[i] -> dst[i]`` would visit, all together
        (:func:`~parasol_core.topology.steps.route_steps`), counted before any is
        plotted; ends that are not processors (which :meth:`add_many` reports) count
        nothing."""
        from parasol_core.topology.steps import route_steps

        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        if self.mapping is not None:
            table = mapping_table(self.mapping)
            ok = (src >= 1) & (src < table.shape[0]) & (dst >= 1) & (dst < table.shape[0])
            src, dst = table[src[ok]], table[dst[ok]]
        index = self.index
        return route_steps(index.layout, index.technique, src, dst)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(slots, ends, unique_slots, unique_ends)``: route ``i`` (id ``i + 1``) crosses
        link slots ``slots[ends[i]:ends[i + 1]]``."""
        if self._arrays is None:
            self._arrays = (
                np.array(self._slots, dtype=np.int64),
                np.array(self._ends, dtype=np.int64),
                np.array(self._unique, dtype=np.int64),
                np.array(self._unique_ends, dtype=np.int64),
            )
        return self._arrays

    def processor_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(processors, ends)``: route ``i`` (id ``i + 1``) visits
        ``processors[ends[i]:ends[i + 1]]``."""
        return np.array(self._procs, dtype=np.int64), np.array(self._proc_ends, dtype=np.int64)

    @property
    def options(self) -> NetOptions:
        """The topology's extensions (forwarding cost, duplex links), as when indexed."""
        return options_of(self.topology)

    def state(self, route_ids: Iterable[int] = ()) -> NetworkState:
        """A network state of this table's routes."""
        return NetworkState(self, route_ids)

    def transfer_time(self, route_id: int, others: Iterable[int], nbytes: float) -> float:
        """The transfer time of ``nbytes`` on route ``route_id`` while the messages on
        the routes ``others`` are under way (the state is ``others`` plus this one)."""
        state = self.state(others)
        state.add(route_id)
        return state.transfer_time(route_id, nbytes)


def _append(flat: array, ends: array, values: np.ndarray, offsets: np.ndarray) -> None:
    """Append segments given as (values, offsets from 0) to an (array, ends) pair."""
    base = len(flat)
    flat.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    ends.frombytes(np.ascontiguousarray(offsets[1:] + base, dtype=np.int64).tobytes())


def mapping_table(mapping: Mapping[int, int]) -> np.ndarray:
    """``table[v]`` = ``mapping[v]`` for array lookups (0 where unmapped)."""
    limit = max(FREE_COUNT, 2 * len(mapping))  # no table as long as a number in the file
    size = max((v for v in mapping if 0 <= v <= limit), default=0) + 1
    table = np.zeros(size, dtype=np.int64)
    for v, h in mapping.items():
        if 0 <= v < size:
            table[v] = h
    return table


class NetworkState:
    """A multiset of active routes of one :class:`RouteTable`, and the load it puts on
    every link."""

    def __init__(self, table: RouteTable, route_ids: Iterable[int] = ()) -> None:
        self.table = table
        self.counts: Counter[int] = Counter()
        self._load: np.ndarray | None = None
        ids = route_ids.tolist() if isinstance(route_ids, np.ndarray) else list(route_ids)
        if ids and not (1 <= min(ids) and max(ids) <= len(table)):
            bad = next(rid for rid in ids if not 1 <= rid <= len(table))
            table._position(bad)
        self.counts.update(ids)

    def __contains__(self, route_id: object) -> bool:
        return self.counts.get(route_id, 0) > 0  # type: ignore[arg-type]

    def __len__(self) -> int:
        return sum(self.counts.values())

    def add(self, route_id: int, times: int = 1) -> None:
        """One more active copy (or ``times`` more) of a route."""
        self.table._position(route_id)
        self.counts[route_id] += times
        if self._load is not None:
            self._load[self._unique_slots(route_id)] += times

    def remove(self, route_id: int, times: int = 1) -> None:
        """One copy (or ``times``) of a route fewer; KeyError if it is not that active."""
        if self.counts.get(route_id, 0) < times:
            raise KeyError(f"route {route_id} is not active {times} time(s)")
        self.counts[route_id] -= times
        if not self.counts[route_id]:
            del self.counts[route_id]
        if self._load is not None:
            self._load[self._unique_slots(route_id)] -= times

    def _unique_slots(self, route_id: int) -> np.ndarray:
        _, _, uslots, uends = self.table.arrays()
        i = route_id - 1
        return uslots[uends[i] : uends[i + 1]]

    @property
    def loads(self) -> np.ndarray:
        """``n_S`` per link slot (see ``table.index.link_ids``)."""
        if self._load is None:
            _, _, uslots, uends = self.table.arrays()
            nlinks = self.table.index.link_ids.shape[0]
            if not self.counts:
                self._load = np.zeros(nlinks, dtype=np.int64)
            else:
                ids = np.fromiter(self.counts.keys(), dtype=np.int64, count=len(self.counts))
                times = np.fromiter(self.counts.values(), dtype=np.int64, count=len(self.counts))
                flat, which = gather(uslots, uends, ids - 1)
                self._load = np.bincount(flat, weights=times[which], minlength=nlinks).astype(
                    np.int64
                )
        return self._load

    def load(self, link_id: int) -> int:
        """How many active routes cross link ``link_id``."""
        slot = self.table.index.slot_of.get(link_id)
        if slot is None:
            raise KeyError(f"link {link_id} is not in {self.table.index.label}")
        return int(self.loads[slot])

    def transfer_time(self, route_id: int, nbytes: float) -> float:
        """Seconds to send ``nbytes`` over an active route in this state."""
        if route_id not in self:
            raise ValueError(
                f"route {route_id} is not in the network state (a message's own route "
                "counts in the state it is sent in)"
            )
        slots, ends, _, _ = self.table.arrays()
        mine = slots[ends[route_id - 1] : ends[route_id]]
        if mine.shape[0] == 0:
            return 0.0
        index = self.table.index
        lat, spd = index.latency[mine], index.speed[mine]
        _check_timings(index, mine, lat, spd)
        opts = self.table.options
        with np.errstate(all="ignore"):  # a time past a double is refused below, named
            latency = float(lat.sum())
            if opts.extended:  # forwarding cost or duplex links (resources.py)
                per = float(state_per_byte(self.table, self.counts, np.asarray([route_id]),
                                           opts)[0])  # fmt: skip
            else:
                per = float((spd * self.loads[mine]).max())
            seconds = latency + nbytes * per
        if not math.isfinite(seconds) or (
            nbytes > 0 and per > 0 and nbytes * per < SMALLEST_NORMAL
        ):
            self._refuse(route_id, mine, nbytes, per, latency)
        return seconds

    def _refuse(self, route_id: int, slots: np.ndarray, nbytes: float, per: float,
                latency: float) -> None:  # fmt: skip
        """Raise TimeOverflowError for route ``route_id``'s time, naming its cause."""
        route = self.table[route_id]
        what = f"a message from processor {route.processors[0]} to {route.processors[-1]}"
        sharing = float(self.loads[slots].max()) if slots.shape[0] else 1.0
        check_transfer(self.table.index, slots, nbytes, per, latency, what,
                       self.table.options.forward, sharing)  # fmt: skip

    def transfer_times(self, route_ids: Any = None, nbytes: Any = 1.0) -> np.ndarray:
        """Transfer times of many messages in this state at once (numpy).

        ``route_ids``: the routes asked about (all must be active); None means every
        distinct active route, in ascending id order. ``nbytes``: one size for all or
        one per route.
        """
        if route_ids is None:
            ids = np.asarray(sorted(self.counts), dtype=np.int64)
        else:
            ids = np.atleast_1d(np.asarray(route_ids, dtype=np.int64))
            active = np.fromiter(self.counts, dtype=np.int64, count=len(self.counts))
            inactive = ~np.isin(ids, active)
            if inactive.any():
                raise ValueError(f"route {ids[np.argmax(inactive)]} is not in the network state")
        slots, ends, _, _ = self.table.arrays()
        flat, which = gather(slots, ends, ids - 1)
        index = self.table.index
        lat, spd = index.latency[flat], index.speed[flat]
        _check_timings(index, flat, lat, spd)
        with np.errstate(all="ignore"):  # a time past a double is refused below, named
            per_byte = spd * self.loads[flat]
            hops = ends[ids] - ends[ids - 1]
            starts = np.zeros(ids.shape[0], dtype=np.int64)
            np.cumsum(hops[:-1], out=starts[1:])
            latency = segment_reduce(np.add, lat, starts, hops)
            worst = segment_reduce(np.maximum, per_byte, starts, hops)
            opts = self.table.options
            if opts.extended:  # forwarding cost or duplex links (resources.py)
                worst = np.where(hops > 0, state_per_byte(self.table, self.counts, ids, opts), 0.0)
            sizes = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), ids.shape)
            moving = sizes * worst
            out = latency + moving
        bad = ~np.isfinite(out) | ((sizes > 0) & (worst > 0) & (moving < SMALLEST_NORMAL))
        if bad.any():
            i = int(np.argmax(bad))
            rid = int(ids[i])
            self._refuse(rid, slots[ends[rid - 1] : ends[rid]], float(sizes[i]), float(worst[i]),
                         float(latency[i]))  # fmt: skip
        return out


def _check_timings(
    index: TopologyIndex, slots: np.ndarray, lat: np.ndarray, spd: np.ndarray
) -> None:
    bad = np.isnan(lat) | np.isnan(spd)
    if bad.any():
        i = int(np.argmax(bad))
        what = "latency" if np.isnan(lat[i]) else "speed"
        lid = int(index.link_ids[slots[i]])
        raise RoutingError(f"link {lid} of {index.label} has no {what}")


def transfer_time(
    topology: Topology, route: Route, others: Iterable[Route], nbytes: float
) -> float:
    """The formula on plain routes: ``nbytes`` over ``route`` while messages on the
    routes ``others`` are under way (the state is ``others`` plus ``route``)."""
    table = RouteTable(topology)
    rid = table.add_route(route)
    state = table.state([rid])
    for other in others:
        state.add(table.add_route(other))
    return state.transfer_time(rid, nbytes)
