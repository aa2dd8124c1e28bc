"""The flow engine: the event trace of a phase over *resources* (link directions and
forwarders, :mod:`parasol_core.topology.resources`), fatpipe links and a sharing rule
(``max``, ``maxmin``, ``cm02``; docs/topology.md, "Which model answers what").

:func:`run` runs it: in C (``parasol_core/native/flow.c``, :func:`run_native`), or, when
that kernel was not built, ``PARASOL_PURE_PYTHON=1`` is set or a number is not finite,
in Python (:func:`run_flow`). The Python trace is the kernel's executable specification,
written to be read: at every event it recomputes every rate from scratch (its state is
a :class:`FlowState`), so it costs about events x resource uses; the kernel solves
max-min incrementally. Neither refuses work: a phase's size is held to the memory
budget, or to the estimator's counts, before its routes are plotted
(:mod:`parasol_core.base.budget`); an estimator request's deadline, or the cancel event
of :func:`~parasol_core.base.budget.cancelled_by` (a window's newer request), stops
either part-way (:func:`~parasol_core.base.budget.check_deadline`, every 256 events in
Python; through the kernel's callback every 8,192 units of its work: an event, a message
starting or ending, a heap item or a list entry its solve looks at, so that a stop lands
within about a millisecond however many messages each event moves).
"""

from __future__ import annotations

import ctypes
import dataclasses
import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parasol_core import native
from parasol_core.base.budget import Cancelled, TimeBudgetError, check_deadline
from parasol_core.simulate.trace import Phase, TraceResult
from parasol_core.topology.resources import Usage

# Rates within this relative distance are one level of the progressive filling, and
# predicted ends within it one event.
RTOL = 1e-12


def fair_rates(
    usage: Usage, moving: np.ndarray, penalty: np.ndarray, cap: np.ndarray
) -> np.ndarray:
    """Max-min fair rates (bytes per second) of the messages flagged in ``moving``, by
    progressive filling: every message not yet held moves at ``level / penalty``, the
    level rising until a resource is full (its messages are held there) or a message
    reaches its cap (``1 / cap`` bytes a second; ``cap`` 0: none). Resources give one
    second of work a second. inf for a message with nothing that has a cost."""
    n, owner, res, weight, nres = usage.n, usage.owner, usage.res, usage.weight, usage.nres
    rate = np.zeros(n)
    free = moving.copy()
    entry_free = free[owner] & (weight > 0)
    costly = (np.bincount(owner[entry_free], minlength=n) > 0) | (cap > 0)
    rate[free & ~costly] = np.inf
    free &= costly
    with np.errstate(divide="ignore"):
        cap_level = np.where(cap > 0, penalty / np.where(cap > 0, cap, 1.0), np.inf)
    share = weight / penalty[owner]  # an entry's work per unit of level
    costs = weight > 0  # (an entry of no weight neither takes nor is held by its resource)
    used = np.zeros(nres)
    while free.any():
        on = free[owner] & costs
        demand = np.bincount(res[on], weights=share[on], minlength=nres)
        has = demand > 0
        level = np.full(nres, np.inf)
        level[has] = np.maximum(1.0 - used[has], 0.0) / demand[has]
        lowest = min(float(level.min()), float(cap_level[free].min()))
        full = level <= lowest * (1 + RTOL)
        hit = np.zeros(n, dtype=bool)
        hit[owner[on & full[res]]] = True
        capped = free & (cap_level <= lowest * (1 + RTOL))
        hit |= capped
        hit &= free
        rate[hit] = lowest / penalty[hit]
        rate[capped] = np.minimum(rate[capped], 1.0 / cap[capped])
        sel = hit[owner]
        used += np.bincount(res[sel], weights=weight[sel] * rate[owner[sel]], minlength=nres)
        free &= ~hit
    return rate


def rule_arrays(phase: Phase, usage: Usage, sharing: str) -> tuple[np.ndarray, np.ndarray]:
    """Per message, its penalty and its cap (the least seconds a byte it may take, 0 for
    none) under ``sharing``: CM02 weighs a message by its route's latency (1 when that
    is 0, as SimGrid's CM02 does) and caps it at its route's slowest link; the others
    weigh all alike, and only fatpipe links cap."""
    if sharing == "cm02":
        penalty = np.where(phase.latency > 0, phase.latency, 1.0)
        return penalty, np.maximum(usage.floor, usage.slowest)
    return np.ones(phase.m), usage.floor


@dataclass
class FlowState:
    """The state of :func:`run_flow` at time ``t``, per message: ``count`` 1 while it is
    in flight, ``rem`` its bytes left, ``tx`` when its bytes start to move, ``c`` its
    pace (seconds per byte under max, bytes per second under max-min), ``pred`` its
    predicted end; per link slot: ``link_load`` (messages in flight on it), ``busy``
    and ``max_n`` so far. ``ready``, ``left`` and ``heap``: the messages waiting for
    others (when each may start, how many it still waits for, those released);
    ``qpos``: the next of the phase's start queue; ``t0`` and ``end``: each message's
    start and end once known."""

    m: int
    nlinks: int
    nbytes: np.ndarray
    ready: np.ndarray
    left: np.ndarray | None
    t: float = 0.0
    events: int = 0
    polls: int = 0
    qpos: int = 0
    heap: list[tuple[float, int]] = field(default_factory=list)
    count: np.ndarray = field(init=False)
    rem: np.ndarray = field(init=False)
    tx: np.ndarray = field(init=False)
    c: np.ndarray = field(init=False)
    pred: np.ndarray = field(init=False)
    t0: np.ndarray = field(init=False)
    end: np.ndarray = field(init=False)
    busy: np.ndarray = field(init=False)
    max_n: np.ndarray = field(init=False)
    link_load: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        m, size = self.m, self.nlinks + 1
        self.count = np.zeros(m)
        self.rem = self.nbytes.astype(np.float64).copy()
        self.tx = np.full(m, np.inf)
        self.c = np.zeros(m)
        self.pred = np.full(m, np.inf)
        self.t0 = np.full(m, np.nan)
        self.end = np.full(m, np.nan)
        self.busy = np.zeros(size)
        self.max_n = np.zeros(size, dtype=np.int64)
        self.link_load = np.zeros(size, dtype=np.int64)


def alone_and_instant(phase: Phase, usage: Usage) -> tuple[np.ndarray, np.ndarray]:
    """Per message, its time alone on the network, and whether it takes no time at all
    (no link, or no latency and nothing that costs)."""
    nbytes, latency = phase.messages.nbytes, phase.latency
    alone_c = usage.alone()
    alone = np.where(phase.u_hops > 0, latency + nbytes * alone_c, 0.0)
    instant = (phase.u_hops == 0) | ((latency == 0) & ((nbytes == 0) | (alone_c == 0)))
    return alone, instant


def run(phase: Phase, usage: Usage, sharing: str, consume: bool = False,
        crit: bool = False) -> TraceResult:  # fmt: skip
    """The flow trace: in C (``native/flow.c``) when it was built and the phase's numbers
    are finite, else :func:`run_flow` in Python. ``consume``: ``usage`` is the caller's
    no longer: the kernel's inputs are made from it and its per-entry and per-message
    arrays let go on the way (set to None), and the result's ``alone`` is not made
    (empty): what a one-shot replay does not read (docs/replay.md, "Memory").
    ``crit``: the result's ``crit`` is made (each message's critical predecessor)."""
    lib = _kernel()
    if lib is not None and native_usable(phase, usage):
        return run_native(lib, phase, usage, sharing, consume, crit=crit)
    out = run_flow(phase, usage, sharing, crit=crit)
    if consume:
        out.alone = np.zeros(0)
    return out


def run_flow(phase: Phase, usage: Usage, sharing: str, crit: bool = False) -> TraceResult:
    """The event trace with the extended resources and ``sharing``, in Python: the
    executable specification of ``native/flow.c``. ``crit``: each message's critical
    predecessor made (:class:`~parasol_core.simulate.trace.TraceResult`)."""
    m = phase.m
    nbytes = phase.messages.nbytes
    latency = phase.latency
    alone, instant = alone_and_instant(phase, usage)
    maxmin = sharing != "max"
    penalty, cap = rule_arrays(phase, usage, sharing)
    delay = phase.delay
    first = phase.messages.start if delay is None else phase.messages.start + delay
    s = FlowState(m, phase.nlinks, nbytes, first.copy(),
                  None if phase.waits is None else phase.waits.copy())  # fmt: skip
    queue, qtimes = phase.queue.tolist(), phase.queue_times.tolist()
    nq = len(queue)
    heap = s.heap
    after = phase.waits is not None

    critical = np.full(m, -1, dtype=np.int32) if crit else None

    def release(done: list[int], at: float) -> None:
        if not after:
            return
        ptr, deps = phase.dep_ptr, phase.dependents
        for i in done:
            for j in deps[ptr[i] : ptr[i + 1]].tolist():
                # ready: the later of its start and this end, plus its delay
                a = at if delay is None else at + delay[j]
                if critical is not None and (a > s.ready[j] or (
                        a == s.ready[j] and 0 <= critical[j] < i)):  # fmt: skip
                    critical[j] = i  # the latest, the highest numbered among equals
                s.ready[j] = max(s.ready[j], a)
                s.left[j] -= 1
                if s.left[j] == 0:
                    heapq.heappush(heap, (float(s.ready[j]), j))

    while True:
        t_start = qtimes[s.qpos] if s.qpos < nq else math.inf
        if heap and heap[0][0] < t_start:
            t_start = heap[0][0]
        t_end = float(s.pred.min()) if m else math.inf
        t_go = math.inf
        if maxmin:
            waiting = (s.count > 0) & (s.tx > s.t)
            if waiting.any():
                t_go = float(s.tx[waiting].min())
        t_next = min(t_start, t_end, t_go)
        if t_next == math.inf:
            break
        s.events += 1
        if not s.events & 255:
            s.polls += 1
            check_deadline()  # a time budget (an estimator request's) or a cancel, if any
        # bytes moved since t
        flying = s.count > 0
        if flying.any():
            go = np.maximum(s.tx, s.t)
            span = np.where(flying, np.maximum(t_next - go, 0.0), 0.0)
            started = t_next >= go
            c = s.c
            if maxmin:
                with np.errstate(invalid="ignore"):  # inf x 0: taken from the other branch
                    moved = np.where(np.isinf(c), np.where(started, s.rem, 0.0), c * span)
            else:
                free = np.where(started, s.rem, 0.0)  # no cost: all at once
                moved = np.where(c > 0, span / np.where(c > 0, c, 1.0), free)
            s.rem = np.maximum(s.rem - np.where(flying, moved, 0.0), 0.0)
        s.busy[s.link_load > 0] += t_next - s.t
        s.t = t = t_next
        changed = False
        # ends
        limit = t + RTOL * abs(t)
        ending = np.flatnonzero(s.pred <= limit)
        if ending.shape[0]:
            s.end[ending] = s.pred[ending]
            s.count[ending] = 0
            s.rem[ending] = 0.0
            s.pred[ending] = np.inf
            np.subtract.at(s.link_load, phase.u_flat[np.isin(phase.u_which, ending)], 1)
            release(ending.tolist(), t)
            changed = True
        # starts (messages that take no time end at once, which may release others)
        while True:
            batch = []
            while s.qpos < nq and qtimes[s.qpos] <= t:
                batch.append(queue[s.qpos])
                s.qpos += 1
            while heap and heap[0][0] <= t:
                batch.append(heapq.heappop(heap)[1])
            if not batch:
                break
            b = np.asarray(batch, dtype=np.int64)
            s.t0[b] = t
            now = b[instant[b]]
            if now.shape[0]:
                s.end[now] = t
                release(now.tolist(), t)
            b = b[~instant[b]]
            if b.shape[0]:
                s.count[b] = 1
                s.tx[b] = t + latency[b]
                s.c[b] = np.nan
                np.add.at(s.link_load, phase.u_flat[np.isin(phase.u_which, b)], 1)
                changed = True
        np.maximum(s.max_n, s.link_load, out=s.max_n)
        if maxmin and (s.tx == t).any():
            changed = True
        if not changed:
            continue
        # rates
        flying = s.count > 0
        if maxmin:
            moving = flying & (s.tx <= t)
            rate = fair_rates(usage, moving, penalty, cap)
            s.c = np.where(flying, rate, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                left = np.where(np.isinf(rate), 0.0, s.rem / np.where(rate > 0, rate, 1.0))
            left = np.where((rate == 0) & (s.rem > 0), np.inf, left)
            pred = np.where(moving, t + left, np.inf)
            s.pred = np.where(moving & (s.rem <= 0), t, pred)
        else:
            per = usage.per_byte(usage.loads(s.count))
            s.c = np.where(flying, per, 0.0)
            s.pred = np.where(flying, np.maximum(s.tx, t) + s.rem * s.c, np.inf)
    return TraceResult(s.t0, s.end, alone, s.events, s.busy, s.max_n, s.polls, critical)


# --------------------------------------------------------------------------- the kernel

_CHECK = ctypes.CFUNCTYPE(ctypes.c_int)
_P, _N, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_double
_SIGNATURE = (_N, _N, _N, _N, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P,
              _D, _P, _N, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _CHECK, _P)  # fmt: skip
RULES = {"max": 0, "maxmin": 1, "cm02": 2}


def _kernel() -> object | None:
    """The C flow engine, its signature set; None when it was not built or
    ``PARASOL_PURE_PYTHON=1``."""
    return native.function("_flow", "parasol_flow_trace", _SIGNATURE)


def native_usable(phase: Phase, usage: Usage) -> bool:
    """Whether the C engine takes this phase: finite latencies and weights (an infinite
    one is left to the Python trace, NaNs and all), and messages and resource uses that
    32-bit indices can number (the entries' offsets, the dependents' too)."""
    deps = 0 if phase.dependents is None else phase.dependents.shape[0]
    return bool(
        max(phase.m, usage.res.shape[0], usage.nres, deps) < 2**31 - 1
        and (phase.delay is None or np.isfinite(phase.delay).all())
        and np.isfinite(phase.latency).all()
        and np.isfinite(usage.weight).all()
        and np.isfinite(usage.floor).all()
        and np.isfinite(usage.slowest).all()
    )


def lighten(phase: Phase, usage: Usage) -> Phase:
    """For :func:`run` with ``consume``: the phase without what the kernel will not read
    of it, when the kernel will run it: its route ids (a placeholder of their shape),
    and, when the resource uses name the links (``usage.links_only``), its link slots
    (None: the kernel takes each message's from its entries), and the count each
    message waits for (the kernel counts them in the dependents); and its dependents and
    their offsets made 32-bit, as the kernel reads them (half the bytes: the phase's own
    are let go when the caller drops the phase it lightened)."""
    if _kernel() is None or not native_usable(phase, usage):
        return phase
    none = np.broadcast_to(np.zeros(1, dtype=np.int64), phase.route_ids.shape)
    light: dict[str, Any] = {"route_ids": none}
    if usage.links_only:
        light.update(u_flat=None, u_start=None, u_hops=None)
    if phase.dep_ptr is not None:  # the kernel counts each message's waits itself
        light["waits"] = None
        light["dep_ptr"] = phase.dep_ptr.astype(np.int32)
        light["dependents"] = phase.dependents.astype(np.int32)
    return dataclasses.replace(phase, **light)


def _caps(usage: Usage, sharing: str) -> np.ndarray:
    """Per message, its cap as the kernel takes it (:func:`rule_arrays`'s, 0 where it
    cannot bind: a cap no larger than a weight the message puts on a resource never
    binds, that resource alone holds it there, and the kernel is spared its events)."""
    cap = np.maximum(usage.floor, usage.slowest) if sharing == "cm02" else usage.floor
    if sharing == "max":
        return cap
    heaviest = np.zeros(usage.n)
    full = np.diff(usage.start) > 0
    if usage.weight.shape[0]:
        heaviest[full] = np.maximum.reduceat(usage.weight, usage.start[:-1][full])
    return np.where(cap > heaviest, cap, 0.0)


def run_native(lib: object, phase: Phase, usage: Usage, sharing: str, consume: bool = False,
               renumber: bool | None = None, crit: bool = False) -> TraceResult:  # fmt: skip
    """The whole trace in one call of ``parasol_core/native/flow.c`` (``consume``: as
    :func:`run`'s; ``renumber``: the resources the phase uses numbered 0, 1, ... for the
    kernel, None: when they are fewer than the topology's, which gives the same answer
    and spares the kernel the others' state). Only the kernel's inputs that are not the phase's own are made: its
    penalties are the kernel's (:func:`rule_arrays`'s rule, from the latencies), the
    messages' starts are their delays when every start is 0, and each message's time
    alone is made after the kernel has let go of its state."""
    m, size = phase.m, phase.nlinks + 1
    i64, i32, f64 = np.int64, np.int32, np.float64

    def arr(a: np.ndarray | None, dtype: type = i64) -> np.ndarray | None:
        return None if a is None else np.ascontiguousarray(a, dtype=dtype)

    alone_c = usage.alone()
    nbytes, latency = phase.messages.nbytes, phase.latency
    u_flat, u_start, u_hops = phase.u_flat, phase.u_start, phase.u_hops
    if u_flat is None:  # (lighten) the links' slots are the entries' resources // 2
        u_hops = np.diff(usage.start)
    instant = (u_hops == 0) | ((latency == 0) & ((nbytes == 0) | (alone_c == 0)))
    if consume:
        del alone_c
    cap = _caps(usage, sharing)
    forwarding = sharing == "max" and usage.gap_res is not None
    if consume:  # what the kernel does not read
        usage.owner = usage.floor = usage.slowest = None  # type: ignore[assignment]
        if not forwarding:
            usage.gap_res = usage.gap_owner = usage.gap_ends = None
    # the resources the phase uses, numbered 0, 1, ... when the topology has more than the
    # phase has entries (a 64^3 torus has 1.8 million resources; a phase of 10,000
    # messages uses a fraction of them; a replay's 10^7 entries a few thousand, which a
    # renumbering would copy); the kernel's answer is the same either way (the numbering
    # keeps the resources' order, and only the order matters to it)
    res, nres = usage.res, usage.nres
    gap_res = usage.gap_res if forwarding else None
    gap_speed = usage.gap_speed if forwarding else None
    if renumber or (renumber is None and usage.nres > usage.res.shape[0]):
        if u_flat is None:  # the slots from the resources, before they are renumbered
            u_flat, u_start = usage.res // 2, usage.start[:-1]
        used = np.zeros(usage.nres, dtype=bool)
        used[usage.res] = True
        if forwarding:
            used[usage.gap_res] = True
        number = np.cumsum(used) - 1
        nres = int(number[-1]) + 1 if number.shape[0] else 0
        res = number[usage.res]
        if consume:
            usage.res = None  # type: ignore[assignment]
        if forwarding:
            gap_res, gap_speed = number[usage.gap_res], usage.gap_speed[used]
        del used, number
    if u_flat is None:
        u_hops = None  # the kernel takes each message's slots from its entries
    links = (arr(u_start), arr(u_hops), arr(u_flat)) if u_flat is not None else (None,) * 3
    if not cap.any():  # no message has a cap that can bind: the kernel is told none
        cap = None
    # the entries' offsets and resources 32-bit, as the kernel reads them (consume: the
    # usage's own let go, one at a time, before the kernel allocates its state)
    keep = [arr(usage.start, i32)]
    hops = None if consume or phase.u_hops is not None else np.diff(usage.start)
    if consume:
        usage.start = None  # type: ignore[assignment]
    keep.append(arr(res, i32))
    if consume:
        res = usage.res = None  # type: ignore[assignment]
    keep += [arr(usage.weight, f64), arr(phase.latency, f64), arr(phase.messages.nbytes, f64),
             None, arr(cap, f64), arr(instant, np.uint8), *links]  # fmt: skip
    del res, cap, instant, links
    gaps: list[np.ndarray | None] = [None, None, None, None]
    if forwarding:
        g_start = np.searchsorted(usage.gap_owner, np.arange(m + 1))
        gaps = [arr(g_start), arr(gap_res), arr(usage.gap_ends, np.uint8),
                arr(gap_speed, f64)]  # fmt: skip
    del gap_res, gap_speed
    delay = None if phase.delay is None else arr(phase.delay, f64)
    given = phase.messages.start
    if delay is not None and not given.any() and not np.signbit(delay).any():
        start = delay  # 0 + delay, the same doubles
    else:
        start = arr(given if delay is None else given + delay, f64)
    queue = arr(phase.queue)
    after = [arr(phase.waits), arr(phase.dep_ptr, i32), arr(phase.dependents, i32)]
    t0, end = np.full(m, np.nan), np.full(m, np.nan)
    critical = np.empty(m, dtype=np.int32) if crit else None  # the kernel fills it
    busy, max_n = np.zeros(size), np.zeros(size, dtype=i64)
    events = np.zeros(2, dtype=i64)  # the events, the polls of ``check``

    def ptr(a: np.ndarray | None) -> int | None:
        return None if a is None else a.ctypes.data

    stopped = []

    def check() -> int:
        try:
            check_deadline()
        except (TimeBudgetError, Cancelled) as e:  # the kernel stops; raised below
            stopped.append(e)
            return 1
        return 0

    callback = _CHECK(check)
    rc = lib(  # type: ignore[operator]
        RULES[sharing], m, nres, phase.nlinks, *map(ptr, keep), *map(ptr, gaps),
        usage.forward, ptr(start), queue.shape[0], ptr(queue), *map(ptr, after), ptr(t0),
        ptr(end), ptr(busy), ptr(max_n), ptr(events), ptr(delay), callback, ptr(critical),
    )  # fmt: skip
    if rc == -4 and stopped:
        raise stopped[0]
    if rc == -2:
        raise MemoryError("the flow engine's kernel could not allocate its state")
    if rc == -5:
        raise RuntimeError("the flow engine's kernel left a message without a rate")
    if rc != 0:
        raise RuntimeError(f"the flow engine's kernel failed ({rc})")
    del keep, gaps, start, after, u_flat, u_start
    if consume:
        alone = np.zeros(0)
    else:
        hops = hops if phase.u_hops is None else phase.u_hops
        alone = np.where(hops > 0, latency + nbytes * alone_c, 0.0)
    return TraceResult(t0, end, alone, int(events[0]), busy, max_n, int(events[1]), critical)
