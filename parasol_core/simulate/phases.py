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
from parasol_core.model import Machine, VirtualTopology
from parasol_core.simulate import flow
from parasol_core.simulate.messages import (
    Message,
    MessageArrays,
    PhaseError,
    _as_arrays,
    _check,
    load_messages,
    parse_messages,
)
from parasol_core.simulate.patterns import make_pattern_arrays
from parasol_core.simulate.trace import Phase, _kernel, _Trace
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.resources import check_sharing, usage_of
from parasol_core.topology.transfer import RouteTable

__all__ = [
    "Message",
    "MessageArrays",
    "PhaseError",
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
    phase = Phase.of(table, ids, messages)
    try:
        opts = table.options
    except RoutingError as e:
        raise PhaseError(str(e)) from None
    if sharing != "max" or opts.extended:
        out = flow.run(phase, usage_of(table, ids, opts), sharing)
    else:
        trace = _Trace(phase)
        lib = _kernel()
        if trace.native_usable() and trace.run_together():
            pass  # every message started at once and ended in one event: no loop needed
        elif lib is not None and trace.native_usable():
            grouped = trace.grouped_usable(GROUPED_MIN_MESSAGES, GROUPED_MIN_LOAD)
            trace.run_native(lib, grouped=grouped)
        else:
            trace.run()
        out = trace.result()
    alone_end = _uncontended_ends(messages, out.alone, order)
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
        topology=index.topology.id,
        link_ids=index.link_ids[used],
        busy=out.busy[used],
        max_in_flight=out.max_n[used],
        events=out.events,
    )


def _uncontended_ends(
    messages: MessageArrays, alone: np.ndarray, order: np.ndarray | None
) -> np.ndarray:
    """Every message's end if each took its time alone (starts and ``after`` kept)."""
    if order is None:
        return messages.start + alone
    end = np.zeros(len(messages))
    ptr, idx = messages.after_ptr.tolist(), messages.after_idx.tolist()
    start, took = messages.start.tolist(), alone.tolist()
    out = end.tolist()
    for i in order.tolist():
        t = start[i]
        for j in idx[ptr[i] : ptr[i + 1]]:
            if out[j] > t:
                t = out[j]
        out[i] = t + took[i]
    return np.asarray(out)
