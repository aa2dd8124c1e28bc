"""Communication phases: the estimator's event trace (report section 2.2.2, steps III-V;
docs/decisions.md, "Communication phases").

A phase is a list of messages, each from ``src`` to ``dst`` (hardware processors, or
virtual ones when a virtual topology is named) with ``bytes``, an optional ``start``
(seconds, default 0) and ``after`` (indices of messages that must end first; it starts
at the later of ``start`` and their last end). Every message takes its hardware route.
It is in flight from its start to its end and counts in ``n(l)`` on every link ``l`` of
its route all that time. It first spends its route's summed latency, then moves its
bytes at ``1 / max(speed(l) * n(l) for l in route)`` bytes per second, ``n`` being the
messages in flight at that moment. A message to itself takes no time.

The trace visits only the moments when a message starts or ends, the only moments a
rate can change. At each, the link loads change on the routes of the messages that
started or ended; only the messages in flight on those links are looked at again, and
only those whose rate did change are brought up to date (bytes moved so far, new
predicted end). Messages whose rates never differ end at the same computed time and are
taken out together, so k equal messages starting together make two events, not 2k.

This module is the API and chooses the trace. The 1994 model (default sharing, no
annotations) runs in :mod:`.trace`: in C (``parasol_core/native/phases.c``, one call for
the whole trace) when that optional kernel was built, taking the same steps with the same
arithmetic (its results are bit-identical); in Python (:class:`_Trace`) when it was not,
when ``PARASOL_PURE_PYTHON=1``, or when a route has an infinite latency or speed. From
:data:`GROUPED_MIN_MESSAGES` messages on the kernel traces by bottleneck groups
(``native/phase_groups.c``: a load change re-rates no one; equal to rounding), and a
phase that is two events (all start at once and end together, as a torus's halo) is
computed in bulk with no loop (:meth:`_Trace.run_together`, bit-equal). Other sharing
rules, forwarding and duplex links run in the flow engine, :mod:`.flow`.

:func:`simulate_phase` is the entry point; :func:`simulate` also takes a pattern name
(:mod:`.patterns`); :func:`simulate_routes` runs on routes already plotted in a
:class:`~parasol_core.topology.transfer.RouteTable`. Bad input raises :class:`PhaseError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.base import budget
from parasol_core.base.numeric import SMALLEST_NORMAL
from parasol_core.base.words import counted
from parasol_core.model import Machine, VirtualTopology
from parasol_core.simulate import flow
from parasol_core.simulate.messages import (
    Message,
    MessageArrays,
    PhaseError,
    PhaseOverflowError,
    _as_arrays,
    _check,
    load_messages,
    parse_messages,
)
from parasol_core.simulate.patterns import make_pattern_arrays
from parasol_core.simulate.trace import Phase, _kernel, _Trace
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.overflow import (
    RANGE,
    TimeOverflowError,
    check_transfer,
    latency_cause,
    per_byte_cause,
)
from parasol_core.topology.ragged import segment_reduce
from parasol_core.topology.resources import check_sharing, usage_of
from parasol_core.topology.transfer import RouteTable

__all__ = [
    "Message",
    "MessageArrays",
    "PhaseError",
    "PhaseOverflowError",
    "PhaseResult",
    "load_messages",
    "parse_messages",
    "simulate",
    "simulate_phase",
    "simulate_routes",
]

# From this many messages on, the kernel traces by bottleneck groups
# (native/phase_groups.c): its cost grows with the messages that change bottleneck, not
# with every message in flight on a link whose load changed.
GROUPED_MIN_MESSAGES = 4096
GROUPED_MIN_LOAD = 1.5


def _topological_order(arrays: MessageArrays) -> np.ndarray:
    """An order in which every message comes after those it waits for; PhaseError
    naming a cycle if there is none."""
    n = len(arrays)
    ptr, idx = arrays.after_ptr, arrays.after_idx
    waiting = np.diff(ptr)
    who = np.repeat(np.arange(n), waiting)  # who[k] waits for idx[k]
    order_by_dep = np.argsort(idx, kind="stable")
    dep_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(idx, minlength=n), out=dep_ptr[1:])
    dependents = who[order_by_dep].tolist()
    dp = dep_ptr.tolist()
    count = waiting.tolist()
    ready = [i for i in range(n) if count[i] == 0]
    out = []
    while ready:
        i = ready.pop()
        out.append(i)
        for j in dependents[dp[i] : dp[i + 1]]:
            count[j] -= 1
            if count[j] == 0:
                ready.append(j)
    if len(out) < n:
        raise PhaseError(f"'after' has a cycle: {_a_cycle(arrays, count)}")
    return np.asarray(out, dtype=np.int64)


def _a_cycle(arrays: MessageArrays, count: list[int]) -> str:
    """One cycle among the messages left waiting, as 'message a waits for b ...'."""
    left = {i for i, c in enumerate(count) if c > 0}
    i = min(left)
    seen: dict[int, int] = {}
    path = []
    while i not in seen:
        seen[i] = len(path)
        path.append(i)
        i = next(a for a in arrays.after_of(i) if a in left)
    cycle = path[seen[i] :] + [i]
    return " waits for ".join(f"message {j}" for j in cycle)


# --------------------------------------------------------------------------- result


@dataclass
class PhaseResult:
    """What a phase took. Per message (input order): ``start``, ``end``; per link
    crossed (``link_ids``, ascending): ``busy`` (seconds with at least one message in
    flight on it) and ``max_in_flight`` (its largest ``n(l)``)."""

    makespan: float
    uncontended: float
    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    start: np.ndarray
    end: np.ndarray
    alone: np.ndarray  # each message's time alone on the network
    topology: int | None
    link_ids: np.ndarray
    busy: np.ndarray
    max_in_flight: np.ndarray
    events: int = 0

    @property
    def ratio(self) -> float:
        """Makespan over the uncontended makespan (1 when there was no contention)."""
        if self.uncontended > 0:
            return self.makespan / self.uncontended
        return 1.0 if self.makespan == 0 else math.inf

    def busiest(self, count: int = 5) -> list[tuple[int, float, int]]:
        """``(link id, busy, max_in_flight)`` of the busiest links, busiest first."""
        order = np.lexsort((self.link_ids, -self.max_in_flight, -self.busy))[:count]
        return [
            (int(self.link_ids[i]), float(self.busy[i]), int(self.max_in_flight[i])) for i in order
        ]

    def to_json(self) -> dict[str, Any]:
        """``{"makespan", "uncontended", "messages": [{"src", "dst", "bytes", "start",
        "end"}...], "links": [{"topology", "link", "busy", "max_in_flight"}...]}``."""
        src, dst = self.src.tolist(), self.dst.tolist()
        nbytes, start, end = self.nbytes.tolist(), self.start.tolist(), self.end.tolist()
        messages = [
            {"src": s, "dst": d, "bytes": b, "start": t0, "end": t1}
            for s, d, b, t0, t1 in zip(src, dst, nbytes, start, end)
        ]
        links = [
            {"topology": self.topology, "link": lid, "busy": busy, "max_in_flight": n}
            for lid, busy, n in zip(
                self.link_ids.tolist(), self.busy.tolist(), self.max_in_flight.tolist()
            )
        ]
        return {
            "makespan": self.makespan,
            "uncontended": self.uncontended,
            "messages": messages,
            "links": links,
        }


# --------------------------------------------------------------------------- entry points


def simulate_phase(
    machine: Machine,
    messages: Sequence[Message] | Sequence[Mapping[str, Any]] | MessageArrays | str,
    virtual: VirtualTopology | int | None = None,
    sharing: str = "max",
) -> PhaseResult:
    """Run the event trace of a phase on the machine's hardware topology.

    ``messages``: :class:`Message` objects, decoded JSON objects, JSON text or
    :class:`MessageArrays`; with ``virtual`` (a virtual topology or its id), ``src`` and
    ``dst`` are its virtual processors. ``sharing``: ``"max"`` (PARASOL's, the default)
    or ``"maxmin"`` (max-min fair, :mod:`parasol_core.topology.resources`). Raises :class:`PhaseError` on bad
    input; :class:`~parasol_core.base.budget.BudgetError` past the limits in force
    (:mod:`parasol_core.base.budget`: under a memory budget, its messages and their exact
    route steps are checked before any route is plotted).
    """
    _sharing(sharing)
    arrays = _as_arrays(messages)
    _check(arrays)
    try:
        table = RouteTable.for_machine(machine, virtual)
        if budget.current().memory is not None and len(arrays):  # the exact route steps
            budget.check_phase("the phase", len(arrays), table.steps(arrays.src, arrays.dst),
                               flow=_runs_flow(table, sharing),
                               links=table.index.link_ids.shape[0])  # fmt: skip
        ids = table.add_many(arrays.src, arrays.dst) if len(arrays) else np.zeros(0, np.int64)
    except RoutingError as e:
        raise PhaseError(_which_message(str(e), arrays, table_or_none(machine, virtual))) from None
    return simulate_routes(table, ids, arrays, sharing)


def _runs_flow(table: RouteTable, sharing: str) -> bool:
    """Whether the flow engine (not the 1994 trace) will run a phase on these routes."""
    try:
        return sharing != "max" or table.options.extended
    except RoutingError:
        return False  # reported when the trace asks for them


def _sharing(sharing: str) -> None:
    try:
        check_sharing(sharing)
    except ValueError as e:
        raise PhaseError(str(e)) from None


def table_or_none(machine: Machine, virtual: VirtualTopology | int | None) -> RouteTable | None:
    try:
        return RouteTable.for_machine(machine, virtual)
    except RoutingError:
        return None


def _which_message(error: str, arrays: MessageArrays, table: RouteTable | None) -> str:
    """The routing error, prefixed with the first message it concerns."""
    if table is None:
        return error
    for i in range(len(arrays)):
        try:
            table.add(int(arrays.src[i]), int(arrays.dst[i]))
        except RoutingError as e:
            return f"message {i} ({arrays.src[i]} -> {arrays.dst[i]}): {e}"
    return error


def simulate(
    machine: Machine,
    *,
    messages: Any = None,
    pattern: str | None = None,
    bytes: float | None = None,
    dim: int | str | None = None,
    root: int | None = None,
    virtual: VirtualTopology | int | None = None,
    sharing: str = "max",
) -> PhaseResult:
    """A phase given either as ``messages`` or as a ``pattern`` name with ``bytes``
    (and ``dim`` for ``shift``, ``root`` for the broadcasts): what the command line and
    the estimator's ``estimate.phase`` call. ``sharing``: see :func:`simulate_phase`."""
    _sharing(sharing)
    if messages is None and pattern is None:
        raise PhaseError("give the messages or a pattern (neither was given)")
    if messages is not None and pattern is not None:
        raise PhaseError("give either messages or a pattern, not both")
    if pattern is not None:
        if bytes is None:
            raise PhaseError(f"the {pattern} pattern needs a message size (bytes)")
        messages = make_pattern_arrays(machine, pattern, bytes, dim=dim, root=root, virtual=virtual)
    return simulate_phase(machine, messages, virtual, sharing)


# --------------------------------------------------------------------------- the trace


def simulate_routes(
    table: RouteTable, route_ids: Any, messages: MessageArrays, sharing: str = "max"
) -> PhaseResult:
    """The event trace on routes already plotted: message ``i`` takes route
    ``route_ids[i]`` of ``table``. With ``maxmin`` or ``cm02`` sharing, or on a topology
    with a forwarding cost, duplex or fatpipe links, the flow engine (:mod:`.flow`) runs;
    otherwise the 1994 trace (:mod:`.trace`). Nothing is refused here: the phase's size
    was held to the limits in force (:mod:`parasol_core.base.budget`) before its routes
    were plotted."""
    _sharing(sharing)
    _check(messages)
    ids = np.asarray(route_ids, dtype=np.int64)
    m = len(messages)
    if ids.shape != (m,):
        raise PhaseError("one route id per message")
    order = _topological_order(messages) if messages.after_ptr is not None else None
    with np.errstate(all="ignore"):  # a time past a double is refused below, named
        phase = Phase.of(table, ids, messages)
    try:
        opts = table.options
    except RoutingError as e:
        raise PhaseError(str(e)) from None
    with np.errstate(all="ignore"):
        flows = sharing != "max" or opts.extended or messages.delay is not None
        usage = usage_of(table, ids, opts) if flows else None
    guard = _Guard(phase, table, ids, opts, usage)
    guard.check_alone()  # each message alone: refused where it is set up, named
    try:
        with np.errstate(all="ignore"):
            # the C kernels are not made for inf or NaN (they can loop on one): where a
            # time could pass a double, the Python trace runs, which stops on a NaN
            python_only = guard.may_overflow()
            if usage is not None:
                if python_only:
                    out = flow.run_flow(phase, usage, sharing)
                else:
                    out = flow.run(phase, usage, sharing)
            else:
                trace = _Trace(phase)
                lib = _kernel()
                if python_only:
                    trace.run()
                elif trace.native_usable() and trace.run_together():
                    pass  # every message started at once and ended in one event: no loop
                elif lib is not None and trace.native_usable():
                    grouped = trace.grouped_usable(GROUPED_MIN_MESSAGES, GROUPED_MIN_LOAD)
                    trace.run_native(lib, grouped=grouped)
                else:
                    trace.run()
                out = trace.result()
            alone_end = _uncontended_ends(messages, out.alone, order)
    except RuntimeError:  # a predicted end lost to NaN: inf - inf, if times overflowed
        guard.overflowed()
        raise
    guard.check_results(out, alone_end)
    index = table.index
    used = np.flatnonzero(out.max_n[:-1] > 0)
    return PhaseResult(
        makespan=float(out.end.max()) if m else 0.0,
        uncontended=float(alone_end.max()) if m else 0.0,
        src=messages.src,
        dst=messages.dst,
        nbytes=messages.nbytes,
        start=out.t0,
        end=out.end,
        alone=out.alone,
        topology=index.topology_id,
        link_ids=index.link_ids[used],
        busy=out.busy[used],
        max_in_flight=out.max_n[used],
        events=out.events,
    )


class _Guard:
    """No result of a phase is NaN or infinite: each message's time alone is checked
    before the trace (:meth:`check_alone`), every result after it
    (:meth:`check_results`), and a trace that lost a predicted end to overflow says
    so (:meth:`overflowed`). Each raises :class:`PhaseOverflowError` naming the message
    and what made its time overflow: the links' latencies, a link's speed, the
    forwarding annotation, a start, the load of the messages sharing a link."""

    def __init__(self, phase: Phase, table: RouteTable, ids: np.ndarray, opts: Any,
                 usage: Any) -> None:  # fmt: skip
        self.trace, self.table, self.ids, self.messages = phase, table, ids, phase.messages
        self.forward = opts.forward
        # each message's time a byte alone: its slowest link, or a forwarder's
        # speed + forward when that is more (resources.Usage.alone)
        with np.errstate(all="ignore"):
            self.per_byte = (
                usage.alone()
                if usage is not None
                else segment_reduce(
                    np.maximum, phase.speed[phase.u_flat], phase.u_start, phase.u_hops
                )  # fmt: skip
            )

    def _what(self, i: int) -> str:
        src, dst = int(self.messages.src[i]), int(self.messages.dst[i])
        return f"message {i} ({src} -> {dst})"

    def _slots(self, i: int) -> np.ndarray:
        slots, ends, _, _ = self.table.arrays()
        pos = int(self.ids[i]) - 1
        return slots[ends[pos] : ends[pos + 1]]

    def check_alone(self) -> None:
        """Refuse a message whose time alone (its route's latencies, then its bytes at
        its time a byte) passes a double, or whose bytes' time underflows to 0."""
        trace, nbytes, per = self.trace, self.messages.nbytes, self.per_byte
        with np.errstate(all="ignore"):
            moving = nbytes * per
            alone = trace.latency + moving
        bad = (trace.u_hops > 0) & (
            ~np.isfinite(alone) | ((nbytes > 0) & (per > 0) & (moving < SMALLEST_NORMAL))
        )
        if not bad.any():
            return
        i = int(np.argmax(bad))
        try:
            check_transfer(self.table.index, self._slots(i), float(nbytes[i]), float(per[i]),
                           float(trace.latency[i]), self._what(i), self.forward)  # fmt: skip
        except TimeOverflowError as e:
            raise PhaseOverflowError(str(e)) from None
        raise AssertionError("check_transfer passed a time check_alone refused")  # pragma: no cover

    def may_overflow(self) -> bool:
        """Whether a time of the trace could pass a double, or be NaN (0 bytes at a time
        a byte that overflows under load): a bound from each message's start, latencies
        and bytes at its time a byte times the most messages crossing any one link, all
        of them added up when messages wait for others. Cheap (one bincount); false for
        every model whose timings ``check`` does not warn about."""
        trace, msgs = self.trace, self.messages
        if not trace.u_flat.shape[0]:
            return False
        most = float(np.bincount(trace.u_flat).max())
        with np.errstate(all="ignore"):
            rate = self.per_byte * most
            each = trace.latency + msgs.nbytes * rate
            if msgs.delay is not None:
                each = each + msgs.delay
            spans = each.sum() if msgs.after_ptr is not None else each.max()
            bound = float(msgs.start.max()) + float(spans)
        return not (math.isfinite(bound) and np.isfinite(rate).all())

    def _sharing(self) -> np.ndarray:
        """For each message, the most messages of the phase crossing one of its links
        (a bound of the load it can meet)."""
        trace = self.trace
        crossing = np.bincount(trace.u_flat, minlength=trace.nlinks + 1)
        most = np.zeros(trace.m, dtype=np.int64)
        if trace.u_flat.shape[0]:
            np.maximum.at(most, trace.u_which, crossing[trace.u_flat])
        return most

    def _bounds(self) -> np.ndarray:
        """For each message, a bound of its end if nothing waited: its start, its
        latencies, its bytes at its time a byte times the most messages sharing a link."""
        msgs = self.messages
        with np.errstate(all="ignore"):
            return msgs.start + self.trace.latency + msgs.nbytes * self.per_byte * self._sharing()

    def overflowed(self) -> None:
        """After the trace lost a predicted end (a NaN): PhaseOverflowError if times
        could overflow, naming the message most likely to; else nothing (a bug, which
        the caller re-raises)."""
        bounds = self._bounds()
        with np.errstate(all="ignore"):
            rate = self.per_byte * self._sharing()  # a time a byte under load: 0 bytes
            total = (
                float(bounds.max(initial=0.0))
                + float(  # at an infinite one is NaN
                    (self.trace.latency + self.messages.nbytes * rate).sum()
                )
                + float(rate.max(initial=0.0))
            )
        if math.isfinite(total):
            return
        # the trace stopped without its state: the message with the largest bound
        self._refuse(int(np.argmax(np.where(np.isnan(bounds), np.inf, bounds))), None)

    def check_results(self, out: Any, alone_end: np.ndarray) -> None:
        """Refuse results (``out``, a :class:`.trace.TraceResult`) holding a NaN or an
        infinity, naming the first message whose own time overflowed (it started at a
        finite time), else the first one."""
        ok = np.isfinite(out.end) & np.isfinite(out.t0) & np.isfinite(alone_end)
        if ok.all() and np.isfinite(out.busy).all():
            return
        started = ~ok & np.isfinite(out.t0)
        if started.any():
            self._refuse(int(np.argmax(started)), out)
        if not ok.all():
            self._refuse(int(np.argmax(~ok)), out)
        self._refuse(int(np.argmax(self._bounds())), out)

    def _refuse(self, i: int, out: Any) -> None:
        msgs, trace = self.messages, self.trace
        start = float(msgs.start[i])
        t0 = float(out.t0[i]) if out is not None else start
        alone = float(trace.latency[i] + msgs.nbytes[i] * self.per_byte[i])
        head = f"{self._what(i)} would end past {RANGE} s"
        slots = self._slots(i)
        _, cause = per_byte_cause(self.table.index, slots, self.forward)
        moving = float(msgs.nbytes[i] * self.per_byte[i])
        took = latency_cause(self.table.index, slots) if trace.latency[i] >= moving else cause
        if not math.isfinite(start + alone):
            raise PhaseOverflowError(f"{head}: it starts at {start:g} s and takes {alone:g} s "
                                     f"alone ({took})")  # fmt: skip
        if msgs.after_ptr is not None and msgs.after_of(i) and not math.isfinite(t0 + alone):
            raise PhaseOverflowError(f"{head}: it waits ('after') for messages "
                                     f"{', '.join(map(str, msgs.after_of(i)[:5]))}, which end too "
                                     f"late, and takes {alone:g} s alone ({took})")  # fmt: skip
        n = int(self._sharing()[i])
        if not math.isfinite(float(self.per_byte[i]) * n):
            raise PhaseOverflowError(f"{self._what(i)}: its time a byte, {self.per_byte[i]:g} "
                                     f"s, shared by the messages on its links (up to {n} on "
                                     f"one) is past {RANGE}: {cause}")  # fmt: skip
        raise PhaseOverflowError(f"{head}: its {counted(msgs.nbytes[i], 'byte', spec='g')} at "
                                 f"{self.per_byte[i]:g} "
                                 f"s a byte take longer than that with the other messages "
                                 f"on its links (up to {n} on one): {cause}")  # fmt: skip


def _uncontended_ends(
    messages: MessageArrays, alone: np.ndarray, order: np.ndarray | None
) -> np.ndarray:
    """Every message's end if each took its time alone (starts and ``after`` kept)."""
    delay = messages.delay
    if order is None:
        return messages.start + alone + (0.0 if delay is None else delay)
    end = np.zeros(len(messages))
    ptr, idx = messages.after_ptr.tolist(), messages.after_idx.tolist()
    start, took = messages.start.tolist(), alone.tolist()
    wait = [0.0] * len(messages) if delay is None else delay.tolist()
    out = end.tolist()
    for i in order.tolist():
        t = start[i]
        for j in idx[ptr[i] : ptr[i + 1]]:
            if out[j] > t:
                t = out[j]
        out[i] = t + wait[i] + took[i]
    return np.asarray(out)
