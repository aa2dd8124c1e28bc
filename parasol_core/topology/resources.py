"""The network model with its extensions: per-hop forwarding, full-duplex links and
max-min fair sharing (docs/topology.md, "Which model answers what"; docs/decisions.md,
"Per-hop forwarding and duplex links").

A message uses *resources*, each of which can give one second of work per second:

* a **link direction**. A link is one resource, used both ways (1994's links). On a
  topology annotated ``# piui: duplex = A``, a link between two processors is two, one
  per direction; a message uses its own direction for ``speed`` seconds a byte and the
  other for ``A * speed`` (its acknowledgements: 2 bits per 11-bit datum on the T800).
* a **forwarder**: on a topology annotated ``# piui: forward = F``, a processor that
  passes a message on (neither its sender nor its receiver) is busy
  ``speed(l) + F`` seconds a byte, ``l`` the link the message came in by (PAMELA's
  service f: it takes the packet off the link, then spends ``F`` storing and sending it
  on).

**Max sharing** (PARASOL's, the default; docs/decisions.md "Network state and transfer time"):
every message in flight moves ``1 / max(L(r) for r it uses)`` bytes a second, where
``L(r)`` is the work per byte all messages in flight put on ``r``. Without the
annotations ``L(l) = speed(l) * n(l)``: the 1994 formula, unchanged. With a forwarding
cost, a link into a processor also counts the time it stands blocked: after a packet
for the forwarder crosses it, the forwarder is busy ``F`` more and cannot take the
next packet for forwarding; only a packet for the processor itself may cross
meanwhile, one packet a gap (packets are not split). With ``f`` messages forwarded and
``d`` ending there, ``L(l) = speed(l) * (f + d) + F * max(0, f - d)
+ max(0, F - speed(l)) * min(f, d)``. This reproduces all eight rows of PAMELA's
table 4.1.

**Max-min sharing** (SimGrid's flow model, ``sharing="maxmin"``): rates by progressive
filling. All messages moving bytes speed up together until a resource is full; those
using it keep that rate, the others go on, until every message is held by a full
resource. Capacity nobody can use is passed on. A message in its latency holds no
share. The blocked-link term above is not part of it (a fluid model has no packets).

The trace here is Python and recomputes every rate at every event: the cost is about
(events x resource uses), bounded by :data:`MAX_FLOW_WORK` before it starts.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.base.budget import check_deadline, current
from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.ragged import gather

SHARING = ("max", "maxmin")
#: what each sharing model is, for help texts
SHARING_HELP = {
    "max": "PARASOL's: a message moves at 1 / max(load x speed) over its route (default)",
    "maxmin": "max-min fair (progressive filling, SimGrid's flow model): unused "
    "capacity passes on to others",
}
# The Python trace's budget: events times resource uses (a use: one message on one link
# direction or forwarder). About a minute of numpy work at the limit.
MAX_FLOW_WORK = 200_000_000
# Rates within this relative distance are one level of the progressive filling, and
# predicted ends within it one event.
RTOL = 1e-12


class FlowLimitError(ValueError):
    """A phase too big for the Python trace; the message names the limits."""


@dataclass(frozen=True)
class NetOptions:
    """The extensions a topology asks for (None: as in 1994)."""

    forward: float | None = None
    duplex: float | None = None

    @property
    def extended(self) -> bool:
        return self.forward is not None or self.duplex is not None


def options_of(topology: Topology) -> NetOptions:
    """The topology's forwarding cost and duplex overhead; RoutingError on a value set
    by a program that the file could not hold (negative, not a number)."""
    from parasol_core.syntax.annotations import check_annotation

    values = {}
    for key in ("forward", "duplex"):
        try:
            values[key] = check_annotation(key, getattr(topology, key, None))
        except ValueError as e:
            raise RoutingError(f"topology {topology.id}: {e}") from None
    return NetOptions(**values)


def check_sharing(sharing: str) -> str:
    if sharing not in SHARING:
        raise ValueError(f"sharing must be one of {', '.join(SHARING)}, not {sharing!r}")
    return sharing


# --------------------------------------------------------------------------- resources


class Usage:
    """What the messages on some routes use, flat: entry ``k`` says message
    ``owner[k]`` puts ``weight[k]`` seconds a byte on resource ``res[k]``. ``gap_res`` /
    ``gap_owner`` / ``gap_ends``: the link directions a message crosses into a processor,
    and whether it ends there (else that processor forwards it)."""

    def __init__(self, index: Any, procs: np.ndarray, proc_ends: np.ndarray,
                 slots: np.ndarray, ends: np.ndarray, opts: NetOptions) -> None:  # fmt: skip
        n = ends.shape[0] - 1
        nslots = index.link_ids.shape[0]
        self.n = n
        self.nslots = nslots
        self.nres = 2 * nslots + index.count + 1
        self.forward = opts.forward or 0.0
        hops = np.diff(ends)
        owner = np.repeat(np.arange(n, dtype=np.int64), hops)
        k = np.arange(slots.shape[0], dtype=np.int64) - ends[:-1][owner]  # hop number
        # hop k of route i goes from procs[proc_ends[i] + k] to the next one
        at = proc_ends[:-1][owner] + k
        a, b = procs[at], procs[at + 1]
        speed = index.speed[slots]
        last = k == hops[owner] - 1
        two = (index.sizes == 2)[slots]  # two-processor links, by slot
        duplex = opts.duplex is not None
        direction = (duplex & two & (a > b)).astype(np.int64)
        link_res = 2 * slots + direction
        res = [link_res]
        weight = [speed]
        who = [owner]
        if duplex and opts.duplex:
            back = two
            res.append(2 * slots[back] + 1 - direction[back])
            weight.append(opts.duplex * speed[back])
            who.append(owner[back])
        if opts.forward is not None:
            through = ~last
            res.append(2 * nslots + b[through])
            weight.append(speed[through] + self.forward)
            who.append(owner[through])
        res_all = np.concatenate(res)
        w_all = np.concatenate(weight).astype(np.float64)
        own_all = np.concatenate(who)
        # a route uses a resource once (as it counts once per link in 1994's formula)
        key = own_all * self.nres + res_all
        order = np.lexsort((w_all, key))
        key, w_all = key[order], w_all[order]
        keep = np.ones(key.shape[0], dtype=bool)
        keep[:-1] = key[1:] != key[:-1]  # the last of equal keys holds the largest weight
        key, w_all = key[keep], w_all[keep]
        self.owner = key // self.nres
        self.res = key % self.nres
        self.weight = w_all
        self.start = np.searchsorted(self.owner, np.arange(n + 1))
        if self.forward > 0:
            self.gap_res = link_res
            self.gap_owner = owner
            self.gap_ends = last
            self.gap_speed = np.zeros(self.nres)
            self.gap_speed[link_res] = speed
        else:
            self.gap_res = None
        self.link_slot = slots
        self.link_owner = owner

    def loads(self, active: np.ndarray) -> np.ndarray:
        """Max sharing: the work per byte on every resource with ``active`` (a count per
        message) in flight, blocked-link time included."""
        load = np.bincount(self.res, weights=self.weight * active[self.owner],
                           minlength=self.nres)  # fmt: skip
        if self.gap_res is not None:
            times = active[self.gap_owner]
            ending = np.bincount(self.gap_res, weights=times * self.gap_ends, minlength=self.nres)
            passing = np.bincount(self.gap_res, weights=times * ~self.gap_ends,
                                  minlength=self.nres)  # fmt: skip
            f = self.forward
            load += f * np.maximum(passing - ending, 0.0)
            load += np.maximum(f - self.gap_speed, 0.0) * np.minimum(passing, ending)
        return load

    def per_byte(self, load: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
        """Max sharing: each message's seconds per byte (the largest load it meets)."""
        seg = load[self.res]
        out = np.zeros(self.n)
        full = np.diff(self.start) > 0
        if seg.shape[0]:
            out[full] = np.maximum.reduceat(seg, self.start[:-1][full])
        return out if which is None else out[which]

    def alone(self) -> np.ndarray:
        """Each message's seconds per byte alone on the network (both sharing models:
        the largest weight it puts anywhere, plus the blocked-link time of a forwarded
        message when there is a forwarding cost)."""
        # (alone, a forwarded message blocks its link speed + F a byte, which is what
        # it puts on its forwarder too: the largest weight already holds it)
        w = self.weight
        out = np.zeros(self.n)
        full = np.diff(self.start) > 0
        if w.shape[0]:
            out[full] = np.maximum.reduceat(w, self.start[:-1][full])
        return out

    def maxmin(self, moving: np.ndarray, budget: list[int]) -> np.ndarray:
        """Max-min fair rates (bytes per second) of the messages flagged in ``moving``;
        inf for one that uses nothing with a cost."""
        rate = np.zeros(self.n)
        free = moving.copy()
        entry_free = free[self.owner] & (self.weight > 0)
        costly = np.bincount(self.owner[entry_free], minlength=self.n) > 0
        rate[free & ~costly] = np.inf
        free &= costly
        used = np.zeros(self.nres)
        while free.any():
            on = free[self.owner]
            budget[0] -= int(on.sum())
            if budget[0] < 0:
                raise FlowLimitError(
                    "max-min sharing needed more progressive-filling steps than its "
                    f"budget of {MAX_FLOW_WORK:,} resource uses allows; stopped"
                )
            demand = np.bincount(self.res[on], weights=self.weight[on], minlength=self.nres)
            has = demand > 0
            level = np.full(self.nres, np.inf)
            level[has] = np.maximum(1.0 - used[has], 0.0) / demand[has]
            lowest = float(level.min())
            full = level <= lowest * (1 + RTOL)
            hit = np.zeros(self.n, dtype=bool)
            hit[self.owner[on & full[self.res]]] = True
            hit &= free
            rate[hit] = lowest
            sel = hit[self.owner]
            used += np.bincount(self.res[sel], weights=self.weight[sel] * lowest,
                                minlength=self.nres)  # fmt: skip
            free &= ~hit
        return rate


def usage_of(table: Any, route_ids: np.ndarray, opts: NetOptions) -> Usage:
    """The resources the routes ``route_ids`` of a RouteTable use."""

    slots, ends, _, _ = table.arrays()
    procs, proc_ends = table.processor_arrays()
    pos = np.asarray(route_ids, dtype=np.int64) - 1
    flat, which = gather(slots, ends, pos)
    pflat, _ = gather(procs, proc_ends, pos)
    hops = ends[pos + 1] - ends[pos]
    new_ends = np.zeros(pos.shape[0] + 1, dtype=np.int64)
    np.cumsum(hops, out=new_ends[1:])
    plen = proc_ends[pos + 1] - proc_ends[pos]
    new_pends = np.zeros(pos.shape[0] + 1, dtype=np.int64)
    np.cumsum(plen, out=new_pends[1:])
    return Usage(table.index, pflat, new_pends, flat, new_ends, opts)


def state_per_byte(table: Any, counts: dict[int, int], route_ids: np.ndarray,
                   opts: NetOptions) -> np.ndarray:  # fmt: skip
    """Max sharing in a network state (route id -> copies in flight): seconds per byte
    of each of ``route_ids`` (all in the state)."""
    ids = np.asarray(sorted(counts), dtype=np.int64)
    usage = usage_of(table, ids, opts)
    active = np.asarray([counts[int(i)] for i in ids], dtype=np.float64)
    per = usage.per_byte(usage.loads(active))
    return per[np.searchsorted(ids, np.asarray(route_ids, dtype=np.int64))]


# --------------------------------------------------------------------------- the trace


def flow_work(usage: Usage, m: int, sharing: str) -> int:
    """The work the trace is estimated to take: events times resource uses."""
    events = (3 if sharing == "maxmin" else 2) * m + 1
    return events * max(int(usage.res.shape[0]), 1)


def check_flow_work(usage: Usage, m: int, sharing: str, why: str) -> int:
    work = flow_work(usage, m, sharing)
    if work > MAX_FLOW_WORK:
        raise FlowLimitError(
            f"{why} runs in the Python trace, which takes at most {MAX_FLOW_WORK:,} "
            f"message-resource updates; this phase needs about {work:,} ({m:,} messages "
            f"using {int(usage.res.shape[0]):,} link directions and forwarders). The C "
            f"trace of 1994's model takes up to {current().describe_messages()}; use "
            "fewer messages or the default sharing on a topology without annotations"
        )
    return work


def run_flow(trace: Any, usage: Usage, sharing: str, work: int) -> None:
    """The event trace with the extended resources: fills ``trace.t0``, ``trace.end``,
    ``trace.alone``, ``trace.events`` and ``trace.native`` (link busy times and largest
    loads) of a :class:`~parasol_core.simulate.phases._Trace` made for these messages."""
    m = trace.m
    nbytes = trace.messages.nbytes
    latency = trace.latency
    alone_c = usage.alone()
    trace.alone = np.where(trace.u_hops > 0, latency + nbytes * alone_c, 0.0)
    instant = (trace.u_hops == 0) | ((latency == 0) & ((nbytes == 0) | (alone_c == 0)))
    maxmin = sharing == "maxmin"
    nlinks = trace.nlinks
    budget = [work]

    count = np.zeros(m)  # 1 while in flight
    rem = nbytes.astype(np.float64).copy()  # bytes left
    tx = np.full(m, np.inf)  # when its bytes start to move
    c = np.zeros(m)  # seconds per byte (max) or bytes per second (maxmin)
    pred = np.full(m, np.inf)
    busy = np.zeros(nlinks + 1)
    max_n = np.zeros(nlinks + 1, dtype=np.int64)
    link_load = np.zeros(nlinks + 1, dtype=np.int64)
    queue, qtimes = trace.queue.tolist(), trace.queue_times.tolist()
    qpos, nq = 0, len(queue)
    heap = trace.heap
    after = trace.messages.after_ptr is not None
    t = 0.0
    events = 0

    def release(done: list[int], at: float) -> None:
        if not after:
            return
        ptr, deps = trace.dep_ptr, trace.dependents
        for i in done:
            for j in deps[ptr[i] : ptr[i + 1]].tolist():
                trace.ready[j] = max(trace.ready[j], at)
                trace.left[j] -= 1
                if trace.left[j] == 0:
                    heapq.heappush(heap, (float(trace.ready[j]), j))

    while True:
        t_start = qtimes[qpos] if qpos < nq else math.inf
        if heap and heap[0][0] < t_start:
            t_start = heap[0][0]
        t_end = float(pred.min()) if m else math.inf
        t_go = math.inf
        if maxmin:
            waiting = (count > 0) & (tx > t)
            if waiting.any():
                t_go = float(tx[waiting].min())
        t_next = min(t_start, t_end, t_go)
        if t_next == math.inf:
            break
        events += 1
        if not events & 255:
            check_deadline()  # an estimator request's time budget, if any
        budget[0] -= int(usage.res.shape[0])
        if budget[0] < 0:
            raise FlowLimitError(f"the Python trace went past its budget of {MAX_FLOW_WORK:,} "
                                 "message-resource updates; stopped")  # fmt: skip
        # bytes moved since t
        flying = count > 0
        if flying.any():
            go = np.maximum(tx, t)
            span = np.where(flying, np.maximum(t_next - go, 0.0), 0.0)
            started = t_next >= go
            if maxmin:
                moved = np.where(np.isinf(c), np.where(started, rem, 0.0), c * span)
            else:
                free = np.where(started, rem, 0.0)  # no cost: all at once
                moved = np.where(c > 0, span / np.where(c > 0, c, 1.0), free)
            rem = np.maximum(rem - np.where(flying, moved, 0.0), 0.0)
        busy[link_load > 0] += t_next - t
        t = t_next
        changed = False
        # ends
        limit = t + RTOL * abs(t)
        ending = np.flatnonzero(pred <= limit)
        if ending.shape[0]:
            trace.end[ending] = pred[ending]
            count[ending] = 0
            rem[ending] = 0.0
            pred[ending] = np.inf
            np.subtract.at(link_load, trace.u_flat[np.isin(trace.u_which, ending)], 1)
            release(ending.tolist(), t)
            changed = True
        # starts (messages that take no time end at once, which may release others)
        while True:
            batch = []
            while qpos < nq and qtimes[qpos] <= t:
                batch.append(queue[qpos])
                qpos += 1
            while heap and heap[0][0] <= t:
                batch.append(heapq.heappop(heap)[1])
            if not batch:
                break
            b = np.asarray(batch, dtype=np.int64)
            trace.t0[b] = t
            now = b[instant[b]]
            if now.shape[0]:
                trace.end[now] = t
                release(now.tolist(), t)
            b = b[~instant[b]]
            if b.shape[0]:
                count[b] = 1
                tx[b] = t + latency[b]
                c[b] = np.nan
                np.add.at(link_load, trace.u_flat[np.isin(trace.u_which, b)], 1)
                changed = True
        np.maximum(max_n, link_load, out=max_n)
        if maxmin and (tx == t).any():
            changed = True
        if not changed:
            continue
        # rates
        flying = count > 0
        if maxmin:
            moving = flying & (tx <= t)
            rate = usage.maxmin(moving, budget)
            c = np.where(flying, rate, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                left = np.where(np.isinf(rate), 0.0, rem / np.where(rate > 0, rate, 1.0))
            left = np.where((rate == 0) & (rem > 0), np.inf, left)
            pred = np.where(moving, t + left, np.inf)
            pred = np.where(moving & (rem <= 0), t, pred)
        else:
            per = usage.per_byte(usage.loads(count))
            c = np.where(flying, per, 0.0)
            pred = np.where(flying, np.maximum(tx, t) + rem * c, np.inf)
    trace.events = events
    trace.native = (busy, max_n)


# --------------------------------------------------------------------------- one route


def route_per_byte(index: Any, route: Any, opts: NetOptions) -> float:
    """Seconds per byte of a message alone on ``route`` (a :class:`~.index.Route`):
    the slowest link's speed, or a forwarder's ``speed + forward`` where larger."""
    if not route.links:
        return 0.0
    slots = [index.slot_of[lid] for lid in route.links]
    worst = max(float(index.speed[s]) for s in slots)
    if opts.forward is not None:
        for s in slots[:-1]:
            worst = max(worst, float(index.speed[s]) + opts.forward)
    if not math.isfinite(worst):  # a speed and the forwarding cost add up past a double
        from parasol_core.topology.overflow import RANGE, TimeOverflowError, per_byte_cause

        _, cause = per_byte_cause(index, np.asarray(slots), opts.forward)
        raise TimeOverflowError(f"the time a byte of the route from processor "
                                f"{route.processors[0]} to {route.processors[-1]} is past "
                                f"{RANGE}: {cause}")  # fmt: skip
    return worst


def forwarders(route: Any) -> list[int]:
    """The processors that pass a message on (all but its two ends)."""
    return list(route.processors[1:-1])
