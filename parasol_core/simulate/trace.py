"""The 1994 model's event trace of a communication phase (docs/topology.md, "How the
trace works, and what it costs"): every message at ``1 / max(speed(l) * n(l))`` over its
route, on a topology without forwarding, duplex or link policies.

:class:`Phase` is a phase made ready for any trace (what every engine reads: per message
its route's link slots, summed latency, the order of starts and who waits for whom);
:class:`_Trace` runs the 1994 model on it, in Python (:meth:`_Trace.run`) or in one call
of the C kernels ``parasol_core/native/phases.c`` (the reference) and
``phase_groups.c`` (by bottleneck groups), or in bulk when the phase is two events
(:meth:`_Trace.run_together`). The other sharing rules and resources run in
:mod:`.flow`. :mod:`.phases` chooses among them and is the API.
"""

from __future__ import annotations

import ctypes
import heapq
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from parasol_core import native
from parasol_core.base.arrays import unique
from parasol_core.simulate.messages import MessageArrays, PhaseError
from parasol_core.topology.ragged import gather, segment_reduce
from parasol_core.topology.transfer import RouteTable

# Ends predicted within this relative distance of the earliest one are one event: they
# differ by rounding only, and taking them out together keeps the event count down.
END_RTOL = 1e-12
DBL_MAX = float(np.finfo(np.float64).max)  # a tolerance past it is the largest double, not inf
# Events with at most this many messages starting or ending go one message at a time.
SMALL_EVENT = 8
# Predicted ends per block of the blocked minimum (a power of 2).
BLOCK = 64


@dataclass(frozen=True)
class Phase:
    """A phase ready for a trace: message ``i`` of ``messages`` crosses the distinct link
    slots ``u_flat[u_start[i]:u_start[i] + u_hops[i]]`` (positions in the topology
    index's ``link_ids``; ``u_which`` gives each crossing's message) after spending
    ``latency[i]`` (its route's latencies, summed over every crossing). ``speed`` is per
    link slot, with one more slot of speed 0 at ``nlinks`` (a sentinel that pads rows).
    The messages that wait for nobody start in the order of ``queue`` (by start time,
    ``queue_times``); when some wait, message ``i`` waits for ``waits[i]`` others and
    releases ``dependents[dep_ptr[i]:dep_ptr[i + 1]]`` when it ends (all three None when
    nobody waits). ``delay`` (None: none) is the messages' ``delay``: ``queue_times``
    include it; a released message starts ``delay`` after the last it waited for ends
    (the flow engine only: :mod:`.phases` sends every phase with a delay there). A phase
    lightened for the flow kernel (:func:`parasol_core.simulate.flow.lighten`, a
    one-shot replay's) has a placeholder for ``route_ids``, may have None for
    ``u_flat``, ``u_start`` and ``u_hops`` (its resource uses name its links) and for
    ``waits`` (the kernel counts them in ``dependents``): only the kernel reads it."""

    messages: MessageArrays
    route_ids: np.ndarray
    nlinks: int
    speed: np.ndarray
    latency: np.ndarray
    u_flat: np.ndarray
    u_start: np.ndarray
    u_hops: np.ndarray
    queue: np.ndarray
    queue_times: np.ndarray
    waits: np.ndarray | None = None
    dep_ptr: np.ndarray | None = None
    dependents: np.ndarray | None = None
    delay: np.ndarray | None = None

    @property
    def m(self) -> int:
        return int(self.route_ids.shape[0])

    @cached_property
    def u_which(self) -> np.ndarray:
        """Each crossing's message (made when a Python trace asks: the kernels do
        without)."""
        return np.repeat(np.arange(self.m, dtype=np.int64), self.u_hops)

    @classmethod
    def of(cls, table: RouteTable, ids: np.ndarray, messages: MessageArrays) -> Phase:
        """Message ``i`` of ``messages`` on route ``ids[i]`` of ``table``; PhaseError on
        a link of the routes without a usable latency or speed."""
        m = ids.shape[0]
        index = table.index
        nlinks = index.link_ids.shape[0]
        slots, ends, uslots, uends = table.arrays()
        pos = ids - 1
        latency = _latencies(table, slots, ends, pos)
        u_flat, _ = gather(uslots, uends, pos, which=False)
        u_hops = uends[pos + 1] - uends[pos]
        u_start = np.zeros(m, dtype=np.int64)
        np.cumsum(u_hops[:-1], out=u_start[1:])
        # the messages that wait for nobody start in order of their start times; the
        # others when the last one they wait for ends
        after = messages.after_ptr is not None
        waits = np.diff(messages.after_ptr) if after else np.zeros(m, np.int64)
        free = np.flatnonzero(waits == 0)
        first = messages.start if messages.delay is None else messages.start + messages.delay
        queue = free[np.argsort(first[free], kind="stable")]
        extra: dict[str, Any] = {"delay": messages.delay}
        if after:
            who = np.repeat(np.arange(m), waits)
            by = np.argsort(messages.after_idx, kind="stable")
            dep_ptr = np.zeros(m + 1, dtype=np.int64)
            np.cumsum(np.bincount(messages.after_idx, minlength=m), out=dep_ptr[1:])
            extra.update(waits=waits, dep_ptr=dep_ptr, dependents=who[by])
        return cls(messages, ids, nlinks, np.append(index.speed, 0.0), latency, u_flat, u_start,
                   u_hops, queue, first[queue], **extra)  # fmt: skip


def _latencies(table: RouteTable, slots: np.ndarray, ends: np.ndarray,
               pos: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each message's latency, its route's (at ``pos`` of the table) summed over every
    crossing; PhaseError on a link of the routes without a usable latency or speed.
    When the table holds fewer routes than there are messages (a replay: 10^6 messages
    on a few thousand routes) each route is summed once and the sums handed out: the
    same additions in the same order, so the same doubles."""
    m = pos.shape[0]
    index = table.index
    nroutes = ends.shape[0] - 1
    if 0 < nroutes < m and ends[0] == 0:
        flat = slots[: ends[-1]]
        lat, spd = index.latency[flat], index.speed[flat]
        hops = np.diff(ends)
        bad = ~(lat >= 0) | ~(spd >= 0)  # NaN: no value; the validator reports < 0
        if not bad.any() or not segment_reduce(np.add, bad.astype(np.float64), ends[:-1],
                                                hops)[pos].any():  # fmt: skip
            return segment_reduce(np.add, lat, ends[:-1], hops)[pos]
    flat, which = gather(slots, ends, pos)
    hops = ends[pos + 1] - ends[pos]
    lat, spd = index.latency[flat], index.speed[flat]
    bad = ~(lat >= 0) | ~(spd >= 0)  # NaN: no value; the validator reports < 0
    if bad.any():
        k = int(np.argmax(bad))
        what = "latency" if not lat[k] >= 0 else "speed"
        raise PhaseError(
            f"message {int(which[k])}: link {int(index.link_ids[flat[k]])} of "
            f"{index.label} has no usable {what} ({lat[k] if what == 'latency' else spd[k]})"
        )
    starts = np.zeros(m, dtype=np.int64)
    np.cumsum(hops[:-1], out=starts[1:])
    return segment_reduce(np.add, lat, starts, hops)


@dataclass
class TraceResult:
    """What a trace gives: per message its start ``t0``, its ``end`` and its time
    ``alone`` on the network; per link slot (the sentinel last) ``busy``, the seconds it
    had a message in flight, and ``max_n``, its largest load; the number of events and
    of the polls for a stop (:func:`~parasol_core.base.budget.check_deadline`) it made.
    ``crit`` (the flow engine's, when asked): per message, the one whose end released it,
    the latest of those it waits for (the highest numbered among equals), -1 when none
    ended after its own start."""

    t0: np.ndarray
    end: np.ndarray
    alone: np.ndarray
    events: int
    busy: np.ndarray
    max_n: np.ndarray
    polls: int = 0
    crit: np.ndarray | None = None


def _kernel() -> ctypes.CDLL | None:
    """The C kernel of the trace, its signature set; None when it was not built or
    ``PARASOL_PURE_PYTHON=1`` (then the trace runs in Python, with the same results)."""
    lib = native.load("_phases")
    if lib is not None and lib.parasol_phase_trace.restype is not ctypes.c_int64:
        p, n = ctypes.c_void_p, ctypes.c_int64
        lib.parasol_phase_trace.argtypes = [n, n, p, p, p, p, p, p, p, p, n, p, p, p, p]
        lib.parasol_phase_trace.argtypes += [p, p, p, p, p]
        lib.parasol_phase_trace.restype = n
        lib.parasol_phase_trace_groups.argtypes = lib.parasol_phase_trace.argtypes
        lib.parasol_phase_trace_groups.restype = n
    return lib


class _Trace:
    """The state of one event trace: arrays over messages and over link slots (the
    extra last slot is a sentinel with no load and no speed, padding route rows).

    The messages in flight are those flagged in ``inflight`` (``count`` of them), their
    predicted ends ``cpred`` (infinite for a message not in flight). Each keeps its seconds per byte ``c``; when it changes at ``t`` the bytes left are
    ``(end - max(t, tx)) / c`` (``tx``: when its bytes start to move), so the new end is
    ``max(t, tx) + (end - max(t, tx)) * c_new / c``. ``c`` is infinite for a message not
    in flight (and for the sentinel message ``m``), so no test below ever picks one.

    The smallest predicted end is a blocked minimum: ``bmin[b]`` is at most the smallest
    of ``cpred[b * BLOCK:(b + 1) * BLOCK]`` (an end moving earlier lowers it at once; one
    moving later, or a message ending, leaves it low), and the loop makes the smallest
    ``bmin`` exact before it uses it.

    Every link slot ``l`` lists the messages in flight on it, ``flights[first[l]:first[l]
    + load[l]]`` (its room, from ``first[l]``, holds every message of the phase whose
    route crosses it). A message starting goes at the end of each list of its route; one
    ending is replaced by the last of each. After a large batch of starts or ends the
    lists are rebuilt when next needed (``lists_ok``).
    """

    def __init__(self, phase: Phase) -> None:
        self.phase = phase
        m = phase.m
        self.m = m
        self.messages = messages = phase.messages
        self.nlinks = phase.nlinks
        self.latency = phase.latency
        self.u_flat, self.u_which = phase.u_flat, phase.u_which
        self.u_hops, self.u_start = phase.u_hops, phase.u_start
        self.speed = phase.speed
        self.smax = segment_reduce(np.maximum, self.speed[self.u_flat], self.u_start, self.u_hops)
        nbytes = messages.nbytes
        self.alone = np.where(self.u_hops > 0, self.latency + nbytes * self.smax, 0.0)
        self.instant = (self.u_hops == 0) | (
            (self.latency == 0) & ((nbytes == 0) | (self.smax == 0))
        )
        self._rows: np.ndarray | None = None
        self.t0 = np.full(m, np.nan)
        self.end = np.full(m, np.nan)
        self.events = 0
        self.native: tuple[np.ndarray, np.ndarray] | None = None  # busy, max_n

        # the messages that wait for nobody start in order of their start times; the
        # others go on a heap when the last one they wait for ends
        self.ready = messages.start.copy()
        self.queue, self.queue_times = phase.queue, phase.queue_times
        self.qpos = 0
        self.heap: list[tuple[float, int]] = []
        if phase.waits is not None:
            self.dep_ptr, self.dependents = phase.dep_ptr, phase.dependents
            self.left = phase.waits.copy()

    def _python_state(self) -> None:
        """The state of the loop in Python (:meth:`run`): loads, per-link lists, predicted
        ends."""
        m, nlinks = self.m, self.nlinks
        nbytes = self.messages.nbytes
        self._bounds = (self.u_start.tolist(), (self.u_start + self.u_hops).tolist())
        self.mean_hops = self.u_flat.shape[0] / max(m, 1)
        self._latency, self._nbytes = self.latency.tolist(), nbytes.tolist()
        self._msg_mark = np.zeros(m, dtype=np.int64)

        self.load = np.zeros(nlinks + 1, dtype=np.int64)
        self.w = np.zeros(nlinks + 1)  # speed * load
        # every change of the link loads, in time order: (links, +-1 or deltas, t)
        self.log_links: list[np.ndarray] = []
        self.log_delta: list[Any] = []
        self.log_t: list[float] = []
        self._acc = np.zeros(nlinks + 1, dtype=np.int64)
        self._mark = np.zeros(nlinks + 1, dtype=np.int64)

        # per link slot, the messages in flight on it (see the class docstring)
        room = np.bincount(self.u_flat, minlength=nlinks + 1)
        widest = int(room.max(initial=0))
        if (nlinks + 1) * widest <= 4 * self.u_flat.shape[0] + (1 << 20):
            # as much room for every link: the lists are the rows of one matrix
            self.first = np.arange(nlinks + 1, dtype=np.int64) * widest
            self.flights = np.full((nlinks + 1) * widest, m, dtype=np.int64)
            self.matrix: np.ndarray | None = self.flights.reshape(nlinks + 1, widest)
        else:
            self.first = np.zeros(nlinks + 1, dtype=np.int64)
            np.cumsum(room[:-1], out=self.first[1:])
            self.flights = np.full(self.u_flat.shape[0], m, dtype=np.int64)
            self.matrix = None
        self.lists_ok = True
        self.hops_in_flight = 0
        self.hop_first = self.first[self.u_flat]  # per crossing, its link's list
        self.hop_speed = self.speed[self.u_flat]
        self._columns = np.arange(int(room.max(initial=0)) + 1)
        # a link of speed 0 sets nobody's rate but that of messages moving at no cost
        self._speed0 = bool((self.hop_speed == 0).any())
        self._gone = np.zeros(m + 1, dtype=bool)

        # the messages in flight and their predicted ends (by message; the sentinel's,
        # and those past it to a whole block, infinite)
        self.inflight = np.zeros(m, dtype=bool)
        blocks = m // BLOCK + 1
        self.cpred = np.full(blocks * BLOCK, np.inf)
        self.cblocks = self.cpred.reshape(blocks, BLOCK)
        self.bmin = np.full(blocks, np.inf)
        self.count = 0
        self.tx = np.zeros(m)
        self.c = np.full(m + 1, np.inf)  # the last: the sentinel message

    # ------------------------------------------------------------------ helpers

    def rows(self) -> np.ndarray:
        """Each message's distinct link slots as one padded row (sentinel-filled)."""
        if self._rows is None:
            width = int(self.u_hops.max(initial=0))
            rows = np.full((self.m, max(width, 1)), self.nlinks, dtype=np.int64)
            col = np.arange(self.u_flat.shape[0]) - self.u_start[self.u_which]
            rows[self.u_which, col] = self.u_flat
            self._rows = rows
        return self._rows

    def links_of(self, msgs: np.ndarray) -> np.ndarray:
        if msgs.shape[0] == self.m:
            return self.u_flat
        rows = self.rows()[msgs].ravel()
        return rows[rows != self.nlinks]

    def crossings(self, msgs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The link slots of these messages' routes, and for each the message."""
        links, which = _segments(self.u_flat, self.u_start[msgs], self.u_hops[msgs])
        return links, msgs[which]

    def rebuild_lists(self, extra: np.ndarray | None = None) -> None:
        """The per-link lists from scratch: the messages in flight, and ``extra`` (ended
        already but still counted in the loads)."""
        msgs = np.flatnonzero(self.inflight)
        if extra is not None:
            msgs = np.concatenate((msgs, extra))
        links, msgs = self.crossings(msgs)
        order = np.argsort(links, kind="stable")
        links = links[order]
        rank = np.arange(links.shape[0]) - np.searchsorted(links, links)
        self.flights.fill(self.m)
        self.flights[self.first[links] + rank] = msgs[order]
        self.lists_ok = True

    def update_lists(self, starting: np.ndarray, ending: np.ndarray, down: np.ndarray) -> None:
        """Take ``ending`` out of the per-link lists and put ``starting`` in, updating
        ``load`` on the way (a batch; :meth:`one` does one message)."""
        flights, load = self.flights, self.load
        if ending.shape[0]:
            links = unique(down)
            had = load[links]
            at, which = _spans(self.first[links], had)
            msgs = flights[at]
            gone = self._gone
            gone[ending] = True
            out = gone[msgs]
            gone[ending] = False
            msgs = msgs[np.lexsort((out, which))]  # per list, those staying first
            kept = had - np.bincount(which, weights=out, minlength=links.shape[0]).astype(np.int64)
            msgs[at - self.first[links][which] >= kept[which]] = self.m
            flights[at] = msgs
            load[links] = kept
        if starting.shape[0]:
            links, msgs = self.crossings(starting)
            order = np.argsort(links, kind="stable")
            links = links[order]
            rank = np.arange(links.shape[0]) - np.searchsorted(links, links)
            flights[self.first[links] + load[links] + rank] = msgs[order]
            np.add.at(load, links, 1)

    def refresh(self, at: np.ndarray) -> None:
        """The block minima after ``cpred`` changed for messages ``at``."""
        if at.shape[0] * BLOCK > self.cpred.shape[0]:
            self.bmin[:] = self.cblocks.min(axis=1)
        elif at.shape[0]:
            blocks = at // BLOCK
            self.bmin[blocks] = self.cblocks[blocks].min(axis=1)

    def result(self) -> TraceResult:
        busy, max_n = self.link_statistics()
        return TraceResult(self.t0, self.end, self.alone, self.events, busy, max_n)

    def link_statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """Per link slot, the seconds it had a message in flight and its largest load,
        from the log of load changes (kept in time order, so a stable sort by link
        gives every link's history; each link's changes sum to 0, so one running sum
        gives every link's load)."""
        if self.native is not None:
            return self.native
        size = self.nlinks + 1
        if not self.log_links:
            return np.zeros(size), np.zeros(size, dtype=np.int64)
        lengths = np.fromiter(map(len, self.log_links), dtype=np.int64, count=len(self.log_links))
        links = np.concatenate(self.log_links)
        signs = [d if isinstance(d, int) else 0 for d in self.log_delta]
        delta = np.repeat(np.asarray(signs, dtype=np.int64), lengths)
        at = 0
        for d, k in zip(self.log_delta, lengths.tolist()):
            if not isinstance(d, int):  # a batch: its own deltas
                delta[at : at + k] = d
            at += k
        times = np.repeat(np.asarray(self.log_t), lengths)
        order = np.argsort(links, kind="stable")
        links, delta, times = links[order], delta[order], times[order]
        load = np.cumsum(delta)
        max_n = np.zeros(size, dtype=np.int64)
        np.maximum.at(max_n, links, load)
        held = (load[:-1] > 0) & (links[1:] == links[:-1])
        busy = np.bincount(
            links[:-1], weights=np.where(held, times[1:] - times[:-1], 0.0), minlength=size
        )
        return busy, max_n

    # ------------------------------------------------------------------ the loop

    def native_usable(self) -> bool:
        """Whether the C kernel takes this trace: finite latencies and speeds on every
        route (an infinite one is left to the Python path, NaNs and all), and messages,
        links and crossings that 32-bit indices can number."""
        small = max(self.m, self.nlinks + 1, self.u_flat.shape[0]) < 2**31 - 1
        return bool(
            small and np.isfinite(self.latency).all() and np.isfinite(self.speed[self.u_flat]).all()
        )

    def run_together(self) -> bool:
        """The whole trace in bulk when it is two events: every message starts at one
        time (none waits for another) and, rated with every one of them in flight, all
        would end within ``END_RTOL`` of the earliest (the halo of a torus: each link
        carries the same messages all the time). The same formulas as the loops', so
        the same numbers; False (nothing done) when the phase is not like that."""
        m = self.m
        if self.messages.after_ptr is not None or not m:
            return False
        start = self.messages.start
        t = start[0]
        if not (start == t).all():
            return False
        moving = ~self.instant
        if not moving.any():
            return False
        nlinks = self.nlinks
        flat = self.u_flat if moving.all() else self.u_flat[np.repeat(moving, self.u_hops)]
        load = np.bincount(flat, minlength=nlinks + 1)
        load[nlinks] = 0
        w = self.speed * load
        rate = segment_reduce(np.maximum, w[self.u_flat], self.u_start, self.u_hops)
        end = (t + self.latency) + self.messages.nbytes * rate
        first = float(end[moving].min())
        if not (end[moving] <= first + END_RTOL * abs(first)).all():
            return False
        self.t0[:] = t
        self.end[:] = np.where(moving, end, t)
        busy = np.where(load > 0, first - t, 0.0)
        self.native = (busy, load.astype(np.int64))
        self.events = 2
        return True

    def grouped_usable(self, min_messages: int, min_load: float) -> bool:
        """Whether the kernel by bottleneck groups (``native/phase_groups.c``) takes this
        trace: at least ``min_messages`` messages (``phases.GROUPED_MIN_MESSAGES``), no
        link of speed 0 on a route (a group of weight 0 would move at no cost), and a busy
        network (``min_load``, ``phases.GROUPED_MIN_LOAD``)."""
        if not (
            self.m >= min_messages and self.u_flat.shape[0] and (self.speed[self.u_flat] > 0).all()
        ):
            return False
        # and a busy network: on its busiest link the phase's bytes take at least
        # min_load times the phase's span (starts, plus the longest message
        # alone). In a light phase (the random GCel phase at a start every 1 ms: 1.0,
        # makespan 1.07-1.13x uncontended) the reference kernel's lists are short and
        # it is the faster (1.5-2.5x); from about 2 (makespan 2x) on, at 40,000
        # messages, the kernel by groups is 4.5x faster, and more with more messages.
        per_byte = np.repeat(self.messages.nbytes, self.u_hops) * self.speed[self.u_flat]
        work = np.bincount(self.u_flat, weights=per_byte, minlength=self.nlinks + 1)
        start = self.messages.start
        span = float(start.max() - start.min() + self.alone.max())
        return bool(work.max() >= min_load * span)

    def run_native(self, lib: ctypes.CDLL, grouped: bool = False) -> None:
        """The whole trace in one call of the C kernel (``parasol_core/native/phases.c``),
        which takes the same steps as :meth:`run` with the same arithmetic; ``grouped``:
        by bottleneck groups (``native/phase_groups.c``), equal to rounding."""
        m, size = self.m, self.nlinks + 1
        i64 = np.int64
        u_start = np.ascontiguousarray(self.u_start, dtype=i64)
        u_hops = np.ascontiguousarray(self.u_hops, dtype=i64)
        u_flat = np.ascontiguousarray(self.u_flat, dtype=i64)
        speed = np.ascontiguousarray(self.speed, dtype=np.float64)
        latency = np.ascontiguousarray(self.latency, dtype=np.float64)
        nbytes = np.ascontiguousarray(self.messages.nbytes, dtype=np.float64)
        start = np.ascontiguousarray(self.messages.start, dtype=np.float64)
        instant = np.ascontiguousarray(self.instant, dtype=np.uint8)
        queue = np.ascontiguousarray(self.queue, dtype=i64)
        if self.messages.after_ptr is not None:
            waits = np.ascontiguousarray(self.left, dtype=i64)
            dep_ptr = np.ascontiguousarray(self.dep_ptr, dtype=i64)
            dependents = np.ascontiguousarray(self.dependents, dtype=i64)
        else:
            waits = dep_ptr = dependents = None
        busy = np.zeros(size)
        max_n = np.zeros(size, dtype=i64)
        events = np.zeros(1, dtype=i64)

        def ptr(a: np.ndarray | None) -> int | None:
            return None if a is None else a.ctypes.data

        kernel = lib.parasol_phase_trace_groups if grouped else lib.parasol_phase_trace
        rc = kernel(
            m, self.nlinks, ptr(u_start), ptr(u_hops), ptr(u_flat), ptr(speed), ptr(latency),
            ptr(nbytes), ptr(start), ptr(instant), queue.shape[0], ptr(queue), ptr(waits),
            ptr(dep_ptr), ptr(dependents), ptr(self.t0), ptr(self.end), ptr(busy),
            ptr(max_n), ptr(events),
        )  # fmt: skip
        if rc == -3 and grouped:  # past 2**31 (link, group) pairs: the reference kernel
            self.t0.fill(np.nan)
            self.end.fill(np.nan)
            return self.run_native(lib, grouped=False)
        if rc == -2:
            raise MemoryError("the event trace's kernel could not allocate its state")
        if rc != 0:
            raise RuntimeError("the event trace lost a message's predicted end")
        self.events = int(events[0])
        self.native = (busy, max_n)

    def run(self) -> None:
        self._python_state()
        inf = math.inf
        queue_times, nqueue = self.queue_times.tolist(), self.queue.shape[0]
        heap = self.heap
        cpred, cblocks, bmin = self.cpred, self.cblocks, self.bmin
        queue, instant = self.queue.tolist(), self.instant.tolist()
        while True:
            t_start = queue_times[self.qpos] if self.qpos < nqueue else inf
            if heap and heap[0][0] < t_start:
                t_start = heap[0][0]
            t_end = inf
            if self.count:
                b = int(bmin.argmin())
                t_end = float(bmin[b])
                row = cblocks[b]
                k = int(row.argmin())
                if row[k] != t_end:  # a block minimum left low: make it exact
                    if row[k] != row[k]:
                        raise RuntimeError("the event trace lost a message's predicted end")
                    bmin[b] = row[k]
                    continue
            if t_end == inf and t_start == inf:
                break
            if t_end != t_end:  # NaN: a bug, not bad input; never loop on it
                raise RuntimeError("the event trace lost a message's predicted end")
            self.events += 1
            ending = None
            if t_end <= t_start:
                t = t_end
                # near the largest double the tolerance overflows: inf would take the
                # padding past the last message (an index out of the arrays) as ends
                limit = min(t_end + END_RTOL * abs(t_end), DBL_MAX)
                blocks = (bmin <= limit).nonzero()[0]
                if blocks.shape[0] == 1:
                    ending = (cblocks[b] <= limit).nonzero()[0] + b * BLOCK
                else:
                    ending = (cpred <= limit).nonzero()[0]
                self.finish(ending, cpred[ending])
                if (
                    ending.shape[0] == 1
                    and self.count > 64
                    and (self.qpos == nqueue or queue_times[self.qpos] > t)
                    and not (heap and heap[0][0] <= t)
                ):  # the common event: one message ends, and nothing starts
                    if not self.lists_ok:
                        self.rebuild_lists(extra=ending)
                    self.one(t, int(ending[0]), False)
                    continue
            else:
                t = t_start
                q = self.qpos
                if (
                    self.count >= 64
                    and q < nqueue
                    and queue_times[q] == t
                    and (q + 1 == nqueue or queue_times[q + 1] > t)
                    and not (heap and heap[0][0] <= t)
                    and not instant[queue[q]]
                ):  # the common event: one message starts, alone
                    self.qpos = q + 1
                    if not self.lists_ok:
                        self.rebuild_lists()
                    self.one(t, queue[q], True)
                    continue
            # the messages that wait for nobody, in order of their start times
            lo = hi = self.qpos
            while hi < nqueue and queue_times[hi] <= t:
                hi += 1
            self.qpos = hi
            starting = self.take_starts(t, self.queue[lo:hi])
            if ending is None:
                ending = starting[:0]
            if self.count > 64 and ending.shape[0] + starting.shape[0] <= SMALL_EVENT:
                # a few at once: one by one, the ends first (no state in between lasts)
                if not self.lists_ok:
                    self.rebuild_lists(extra=ending)
                for i in ending.tolist():
                    self.one(t, i, False)
                for i in starting.tolist():
                    self.one(t, i, True)
                continue
            self.change(t, starting, ending)

    def take_starts(self, t: float, batch: np.ndarray) -> np.ndarray:
        """``batch`` and the messages released to start at ``t`` start (those that take
        no time end there too, which may release others at ``t``)."""
        found = []
        heap = self.heap
        while True:
            if heap and heap[0][0] <= t:
                more = []
                while heap and heap[0][0] <= t:
                    more.append(heapq.heappop(heap)[1])
                batch = np.concatenate((batch, np.asarray(more, dtype=np.int64)))
            if not batch.shape[0]:
                break
            self.t0[batch] = t
            instant = self.instant[batch]
            if instant.any():
                done = batch[instant]
                self.finish(done, np.full(done.shape[0], t), in_flight=False)
                batch = batch[~instant]
            found.append(batch)
            batch = batch[:0]
            if not (heap and heap[0][0] <= t):
                break
        if not found:
            return np.zeros(0, dtype=np.int64)
        return found[0] if len(found) == 1 else np.concatenate(found)

    def finish(self, msgs: np.ndarray, at: np.ndarray, in_flight: bool = True) -> None:
        """Messages end (at their own predicted times); release those waiting for them."""
        self.end[msgs] = at
        if in_flight:
            self.c[msgs] = np.inf
            self.cpred[msgs] = np.inf
            self.inflight[msgs] = False
            self.count -= msgs.shape[0]
            if msgs.shape[0] > 1:
                self.refresh(msgs)
        if self.messages.after_ptr is None:
            return
        ptr = self.dep_ptr
        if not (ptr[msgs + 1] - ptr[msgs]).any():
            return
        waiting, which = gather(self.dependents, ptr, msgs)
        np.maximum.at(self.ready, waiting, at[which])
        np.subtract.at(self.left, waiting, 1)
        released = unique(waiting[self.left[waiting] == 0])
        for j, when in zip(released.tolist(), self.ready[released].tolist()):
            heapq.heappush(self.heap, (when, j))

    def one(self, t: float, i: int, starts: bool) -> None:
        """:meth:`change` for the common event: one message starts (it waits for
        nobody and takes time) or ends (:meth:`finish` has taken it out of the messages
        in flight), while more than a few are in flight. Needs the per-link lists."""
        a, b = self._bounds[0][i], self._bounds[1][i]
        links = self.u_flat[a:b]
        first = self.hop_first[a:b]
        old = self.load[links]
        if starts:
            new = old + 1
            self.flights[first + old] = i  # at the end of each list
            self.hops_in_flight += b - a
            last = old
        else:
            new = old - 1
            self.hops_in_flight -= b - a
            last = new
        self.load[links] = new
        w_old = self.w[links]
        w_new = self.hop_speed[a:b] * new
        self.w[links] = w_new
        self.log_links.append(links)
        self.log_delta.append(1 if starts else -1)
        self.log_t.append(t)
        # the lists of the route's links, one row each (a short list ends in the
        # sentinel message or repeats its last)
        width = int(last[last.argmax()]) + 1
        if self.matrix is not None:
            block = self.matrix[links, :width]
        else:
            columns = np.minimum(self._columns[:width], last[:, None])
            block = self.flights[first[:, None] + columns]
        c = self.c[block]
        cpred, bmin = self.cpred, self.bmin
        if starts:
            # who may change pace: on a link that got busier, those it now outweighs
            # (their rate, the busiest link of their route, is that link's new weight,
            # the largest of them where several of these links outweigh it)
            row, col = (c < w_new[:, None]).nonzero()
            if row.shape[0]:
                look = block[row, col]
                c_old = c[row, col]
                np.maximum.at(self.c, look, w_new[row])
                go = self.tx[look]
                np.maximum(go, t, out=go)
                before = cpred[look]
                cpred[look] = go + (before - go) * (self.c[look] / c_old)
                # ends only moved later: the block minima stay at most the smallest
            # the new one, at the pace of its busiest link
            tx = t + self._latency[i]
            self.t0[i] = t
            self.tx[i] = tx
            self.inflight[i] = True
            rate = float(w_new[w_new.argmax()])
            self.c[i] = rate
            end = tx + self._nbytes[i] * rate
            cpred[i] = end
            if end < bmin[i // BLOCK]:
                bmin[i // BLOCK] = end
            self.count += 1
            return
        # take it out of its lists: the last of each list takes its place
        where = first + (block == i).argmax(axis=1)
        tail = first + new
        self.flights[where] = self.flights[tail]
        self.flights[tail] = self.m
        # who may change pace: on a link that got quieter, those whose rate it set
        if self._speed0:
            w_old = np.where(w_old > 0, w_old, -1.0)
        look = block[c == w_old[:, None]]
        if look.shape[0] > 32:  # drop repeats (a message tied on several of these links)
            where = np.arange(look.shape[0])
            self._msg_mark[look] = where
            look = look[self._msg_mark[look] == where]
        if look.shape[0]:
            rate = np.maximum.reduce(self.w[self.rows()[look]], axis=1)
            go = self.tx[look]
            np.maximum(go, t, out=go)
            before = cpred[look]
            # (the minimum: a rate that did not change leaves its end as it was)
            after = np.minimum(go + (before - go) * (rate / self.c[look]), before)
            cpred[look] = after
            self.c[look] = rate
            np.minimum.at(bmin, look // BLOCK, after)  # ends only moved earlier

    def change(self, t: float, starting: np.ndarray, ending: np.ndarray) -> None:
        """Loads and rates after ``starting`` and ``ending`` at ``t``."""
        if starting.shape[0]:
            self.tx[starting] = t + self.latency[starting]
            self.c[starting] = np.nan  # not rated yet
            self.inflight[starting] = True
            self.count += starting.shape[0]
        up, down = self.links_of(starting), self.links_of(ending)
        big = up.shape[0] + down.shape[0] > self.nlinks // 8
        if big:
            delta = np.bincount(up, minlength=self.nlinks + 1) - np.bincount(
                down, minlength=self.nlinks + 1
            )
            changed = np.flatnonzero(delta)
            delta = delta[changed]
        else:  # a few links: no pass over all of them, no sort
            both = np.concatenate((up, down))
            acc, mark = self._acc, self._mark
            np.add.at(acc, up, 1)
            np.subtract.at(acc, down, 1)
            order = np.arange(both.shape[0])
            mark[both] = order
            links = both[mark[both] == order]
            delta = acc[links]
            acc[links] = 0
            keep = delta != 0
            changed, delta = links[keep], delta[keep]
        old = self.load[changed]
        new = old + delta
        # the per-link lists: brought up to date, or after a batch as large as what
        # stays in flight, rebuilt when next needed
        crossings = up.shape[0] + down.shape[0]
        self.hops_in_flight += up.shape[0] - down.shape[0]
        if self.lists_ok:
            if 4 * crossings > self.hops_in_flight:
                self.lists_ok = False
            else:
                self.update_lists(starting, ending, down)
        self.load[changed] = new
        w_old = self.w[changed]
        w_new = self.speed[changed] * new
        self.w[changed] = w_new
        self.log_links.append(changed)
        self.log_delta.append(delta)
        self.log_t.append(t)
        if not self.count:
            return
        # only those whose rate a changed link may set: one that got busier and now
        # outweighs the message's rate, or one that got quieter and set it (the rate is
        # a max over the route, so nothing else moves it), unless that means looking at
        # more link crossings than those of everyone in flight
        if self.count > 64 and int(new.sum()) < self.count * self.mean_hops:
            if not self.lists_ok:
                self.rebuild_lists()
            cand, which = _segments(self.flights, self.first[changed], new)
            c = self.c[cand]
            w_old = np.where(w_old > 0, w_old, -1.0)  # see one()
            need = np.where((delta > 0)[which], c < w_new[which], c == w_old[which])
            look = np.concatenate((cand[need], starting))
        else:
            look = np.flatnonzero(self.inflight)
        self.rate(t, look)

    def rate(self, t: float, look: np.ndarray) -> None:
        """Rate these messages (in flight; repeats allowed) again at ``t``."""
        if look.shape[0] == self.m and self.count == self.m:
            rate = segment_reduce(np.maximum, self.w[self.u_flat], self.u_start, self.u_hops)
            look = np.arange(self.m)
        else:
            if look.shape[0] > 1024:  # drop repeats (of a message on several links)
                mark = self._msg_mark
                order = np.arange(look.shape[0])
                mark[look] = order
                look = look[mark[look] == order]
            if look.shape[0] > 1024 and self.rows().shape[1] > 2 * self.mean_hops:
                flat, _ = _segments(self.u_flat, self.u_start[look], self.u_hops[look])
                starts = np.zeros(look.shape[0], dtype=np.int64)
                np.cumsum(self.u_hops[look][:-1], out=starts[1:])
                rate = segment_reduce(np.maximum, self.w[flat], starts, self.u_hops[look])
            else:
                rate = self.w[self.rows()[look]].max(axis=1)
        c = self.c[look]
        moved = rate != c
        if not moved.all():
            look, rate, c = look[moved], rate[moved], c[moved]
        tx = self.tx[look]
        go = np.maximum(tx, t)
        new = go + (self.cpred[look] - go) * (rate / c)
        fresh = np.isnan(c)
        if fresh.any():
            new[fresh] = tx[fresh] + self.messages.nbytes[look[fresh]] * rate[fresh]
        self.cpred[look] = new
        self.c[look] = rate
        self.refresh(look)


def _spans(first: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``first[k]:first[k] + lengths[k]`` for every k, end to end, and for
    every position its k."""
    which = np.repeat(np.arange(first.shape[0]), lengths)
    starts = np.zeros(first.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return np.arange(which.shape[0], dtype=np.int64) - starts[which] + first[which], which


def _segments(
    flat: np.ndarray, first: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``flat[first[k]:first[k] + lengths[k]]`` for every k, end to end, and for every
    element its k."""
    at, which = _spans(first, lengths)
    return flat[at], which
