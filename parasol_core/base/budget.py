"""Budgets: work is estimated from its formula before it is done, and refused past a limit.

Every entry point (the command line, a session, the estimator) builds message sets,
topologies and route batches through the core. Before the core builds one it counts
what it would build, from the sizes alone, here; past the limit it raises
:class:`BudgetError`, whose message names the estimate and the limit, and nothing is
built. The estimator answers it -32602, the command line exits 2.

========================== ============================================ ==================
work                        estimate (before building)                  limit (default)
========================== ============================================ ==================
a pattern's messages        :func:`pattern_messages` (its formula)      1,000,000 messages
                                                                        (*)
a phase's messages          the length of the list                      1,000,000 messages
                                                                        (*)
a generated topology        ``topology.generators.generator_size``:     4,000,000 lines
                            processors + link lines (+ a bus's connect
                            entries)
a SimGrid import            hosts, routers and links, a cluster's       1,000,000
                            counted from its parameters before it is    processors and
                            made (``simgrid.importer``)                 links
a SimGrid import's names    the characters of the names it makes        67,108,864
                            (a cluster's: hosts x (prefix + digits +    characters
                            suffix), links and switches x its id), from (64 MiB)
                            the lengths before any is made
a route batch               its pairs                                   1,000,000 pairs
a route batch (or a         :func:`~parasol_core.topology.steps.        10,000,000 steps
phase's routes)             route_steps`: processors visited            (*)
``shortest`` routes         distinct sources x processors               12,500,000 entries
a phase, under a memory     messages x 240 + route steps x 120 bytes    the budget, bytes
budget (the command line)   (:data:`BYTES_PER_MESSAGE`,                 (``--max-memory``)
                            :data:`BYTES_PER_STEP`)
========================== ============================================ ==================

(*) the estimator's fixed counts; under a memory budget (below) these three give way to
the last row.

**The limits in force.** The table gives the defaults, the module's constants; they are
the estimator's (a shared server: one client must not take its memory or every worker,
``docs/estimator.md``). Work runs under other limits within :func:`limits` (a context
manager, per thread, like :func:`deadline`); every check reads :func:`current`, never a
constant captured at import. A thread that never entered :func:`limits` has the
defaults, and the estimator runs every request under :func:`fixed` (the defaults,
whatever the thread).

**A memory budget.** Within ``limits(memory=BYTES)`` (the command line's ``simulate``
and ``mapping``, ``--max-memory``), a phase's messages and its route steps are not
limited by count but by the memory they would take, estimated before anything is built:

    messages x :data:`BYTES_PER_MESSAGE` + route steps x :data:`BYTES_PER_STEP`

(route steps counted by :func:`~parasol_core.topology.steps.route_steps`, or from the
pattern's formula; before a phase's routes are known, 1 a message, a lower bound).
Past it, :class:`MemoryBudgetError` names the estimate and the budget in bytes. A route
batch alone (a mapping's) is held to route steps x :data:`BYTES_PER_STEP`. The other
limits (generated lines, route pairs, ``shortest`` tables) are not changed by it.

The two figures were measured with ``benchmarks/bench_phase_memory.py``: each case in
a fresh process, the peak resident size (``/proc/self/status`` VmHWM, reset just
before) less the resident size before ``simulate()`` ran the phase end to end
(pattern, routes, trace, result), over the halo on 20^3 to 50^3 tori (2 steps a
message; 324 to 356 bytes a message), ``shift`` on 50^3, ``alltoall`` on an 8^3 torus
(7 steps a message) and a 24 x 24 grid (17), and 300,000 random messages with
staggered starts on that grid (the event-loop kernel); peaks of 17 MB to 566 MB. A
least-squares fit gave 148 bytes a message + 92 bytes a step (the worst case 1.21x
over it); the constants, 240 and 120, put every case measured 1.19x (``shift``,
``alltoall`` on the torus) to 1.49x (the smallest halo) under its estimate. The halo on the
million-processor torus (6,000,000 messages, 12,000,000 steps) is estimated at
2.9 GB (2.7 GiB) and took 1.8 GB (one run). The estimate is of the phase alone: the
model, already loaded when it is made, is not in it (that torus's: 1.0 GB resident,
2.5 GB at the peak of its loading).

The estimator adds budgets per request (time) and per batch (the sum of its members'
estimates): ``parasol_core.estimator.server``, ``docs/estimator.md``.

**Stopping work part-way.** Long loops (the flow engine's, in Python and through its C
kernel's callback; the replay's compiler) poll :func:`check_deadline`. It raises
:class:`TimeBudgetError` past the thread's :func:`deadline`, and :class:`Cancelled` once
an event of the thread's :func:`cancelled_by` is set by another thread: how PIUI's
Program window stops the replay of an edit a newer one replaced
(``parasol_core.replay.replay``'s ``cancel``; docs/replay.md).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from parasol_core.base.limits import MAX_PHASE_MESSAGES
from parasol_core.base.numeric import ValueRangeError, read_float, why_not_number
from parasol_core.base.words import counted

__all__ = [
    "BYTES_PER_MESSAGE",
    "BYTES_PER_STEP",
    "FLOW_BYTES_PER_LINK",
    "FLOW_BYTES_PER_MESSAGE",
    "FLOW_BYTES_PER_STEP",
    "MAX_GENERATED",
    "MAX_IMPORTED",
    "MAX_IMPORT_NAMES",
    "MAX_PHASE_MESSAGES",
    "MAX_ROUTE_PAIRS",
    "MAX_ROUTE_STEPS",
    "MAX_SHORTEST_TABLE",
    "BudgetError",
    "Cancelled",
    "Limits",
    "MemoryBudgetError",
    "TimeBudgetError",
    "cancelled_by",
    "check",
    "check_deadline",
    "check_phase",
    "check_route_steps",
    "current",
    "deadline",
    "default_memory",
    "fixed",
    "format_size",
    "limits",
    "parse_size",
    "pattern_messages",
    "remaining",
]

MAX_GENERATED = 4_000_000
"""The most lines (processors + links) a generator makes: the 100 x 100 x 100 torus
(1,000,000 processors, 3,000,000 links), built as columns (parasol_core/model/linkstore.py)
and written from them in a few seconds, its text about 570 MB."""
MAX_IMPORTED = 1_000_000
"""The most processors and links (hosts, routers, links, a cluster's included) a SimGrid
import makes. Lower than :data:`MAX_GENERATED`: an import holds each as Python objects
(names, ends, notes) before the model's columns are made, about 1.1 KB an element at the
peak: a TORUS cluster of 62 x 62 x 62 (953,312 elements) peaked at 1,080 MB and took 21
to 27 s on a busy shared machine; the 4,000,000 of a 100 x 100 x 100 torus ran 172 s into
MemoryError."""
MAX_IMPORT_NAMES = 64 * 1024 * 1024
"""The most characters of names a SimGrid import makes (a cluster's hosts, switches and
links; the implicit switches between links), counted from the lengths of what they are
made of before any is made: as much text as the largest platform file
(``simgrid.xmlread.MAX_PLATFORM_BYTES``). A cluster of 30,000 hosts whose prefix is
100,000 characters long (a 100 KB file) would make 3,000,000,000 of them."""
MAX_ROUTE_PAIRS = 1_000_000
"""The most routes one batch plots (``route.plot_many``)."""
MAX_SHORTEST_TABLE = 12_500_000
"""The most breadth-first table entries (processors x sources) the ``shortest`` routing
keeps, and the most one batch of routes may need: a predecessor and a distance each, 8
bytes, so 100 MB (twice that while a batch stacks them); 78 sources on Fugaku's 158,976
processors, 12,195 on the GCel's 1,024."""
MAX_ROUTE_STEPS = 10_000_000
"""The most processors a batch of routes may visit, all routes together (about 0.5 GB
of arrays while they are plotted): 212,000 corner-to-corner routes on the GCel's
16 x 32 grid, about 590,000 random ones."""


_local = threading.local()  # this thread's limits (limits()), deadline (deadline()) and
# cancel events (cancelled_by())


class BudgetError(ValueError):
    """Work refused before it starts: its estimate is past its limit (the message says
    both). ``estimate`` and ``limit`` are in ``unit``."""

    def __init__(self, what: str, estimate: int, limit: int, unit: str, hint: str = "") -> None:
        self.what, self.estimate, self.limit, self.unit = what, estimate, limit, unit
        message = (
            f"{what} would need {estimate:,} {unit}, over the limit of {limit:,} {unit}; "
            "refused before any work"
        )
        super().__init__(message + (f" ({hint})" if hint else ""))


class TimeBudgetError(RuntimeError):
    """Work that went past its deadline (see :func:`deadline`)."""


class Cancelled(Exception):
    """Work stopped part-way because the caller set its cancel event (see
    :func:`cancelled_by`): nothing went wrong, and the work's answer is not wanted."""


class MemoryBudgetError(BudgetError):
    """Work refused before it starts because its memory estimate is past the memory
    budget (:func:`limits` ``memory``): ``estimate`` and ``limit`` are in bytes, and the
    message says both, readably ("about 5.2 GiB, over the memory budget of 2.0 GiB")."""

    def __init__(self, what: str, estimate: int, limit: int, source: str = "") -> None:
        self.what, self.estimate, self.limit, self.unit = what, estimate, limit, "bytes"
        where = f" ({source})" if source else ""
        ValueError.__init__(self, f"{what} would need about {format_size(estimate)}, over the "
                            f"memory budget of {format_size(limit)}{where}; refused before "
                            "any work")  # fmt: skip


def check(what: str, estimate: int, limit: int, unit: str, hint: str = "") -> int:
    """``estimate`` if it is within ``limit``, else :class:`BudgetError`."""
    if estimate > limit:
        raise BudgetError(what, estimate, limit, unit, hint)
    return estimate


# --------------------------------------------------------------------------- the limits in force

BYTES_PER_MESSAGE = 240
"""Memory a phase takes per message, beyond its route steps (module docstring: fitted
149 bytes, with headroom)."""
BYTES_PER_STEP = 120
"""Memory a phase takes per route step (a processor a route visits; fitted 92 bytes,
with headroom). Also what a route batch alone is charged per step."""
FLOW_BYTES_PER_MESSAGE = 400
"""The same for a phase the flow engine runs (``simulate/flow.py``: max-min or CM02
sharing, or a topology with forwarding, duplex or fatpipe links), per message: its
resource uses and its kernel's state come on top (``benchmarks/bench_flow.py
--memory``)."""
FLOW_BYTES_PER_STEP = 200
"""The flow engine's figure per route step (see :data:`FLOW_BYTES_PER_MESSAGE`)."""
FLOW_BYTES_PER_LINK = 80
"""And per link of the topology (the two directions' state, each link's load, busy
time and largest load): a few thousand messages on a 64^3 torus's 786,432 links take
more for the links than for themselves."""


@dataclass(frozen=True)
class Limits:
    """The limits work runs under (see the module's table). ``memory`` (bytes), when
    set, replaces the counts ``phase_messages`` and ``route_steps`` by the memory
    estimate of a phase or a route batch; ``source`` is what set it, for the message
    (``--max-memory``)."""

    phase_messages: int
    route_steps: int
    route_pairs: int
    generated: int
    shortest_table: int
    imported: int = MAX_IMPORTED
    import_names: int = MAX_IMPORT_NAMES
    memory: int | None = None
    source: str = ""

    @property
    def message_limit(self) -> int:
        """The most messages a phase may have: its count limit, or under a memory budget
        the most that fit it (each visiting at least one processor)."""
        if self.memory is None:
            return self.phase_messages
        return self.memory // (BYTES_PER_MESSAGE + BYTES_PER_STEP)

    @property
    def step_limit(self) -> int:
        """The most route steps a batch may take: its count, or what fits the memory."""
        if self.memory is None:
            return self.route_steps
        return self.memory // BYTES_PER_STEP

    def describe_messages(self) -> str:
        """The phase's message limit in words, for messages."""
        if self.memory is None:
            return f"{counted(self.phase_messages, 'message')}"
        return f"as many messages as fit the memory budget of {format_size(self.memory)}"


def _defaults() -> Limits:
    # read at each call, so that a test's monkeypatch of a constant holds
    return Limits(MAX_PHASE_MESSAGES, MAX_ROUTE_STEPS, MAX_ROUTE_PAIRS, MAX_GENERATED,
                  MAX_SHORTEST_TABLE, MAX_IMPORTED, MAX_IMPORT_NAMES)  # fmt: skip


def current() -> Limits:
    """The limits in force on this thread: those of the innermost :func:`limits`, or
    the defaults (the module's constants, the estimator's)."""
    found = getattr(_local, "limits", None)
    return found if found is not None else _defaults()


@contextmanager
def limits(**changes: int | str | None) -> Iterator[Limits]:
    """Within this block on this thread, the limits in force are the current ones with
    ``changes`` (fields of :class:`Limits`: ``memory=2 << 30, source="--max-memory"``,
    ``phase_messages=10``, ...). Nests; the limits before come back at its end."""
    before = getattr(_local, "limits", None)
    _local.limits = dataclasses.replace(current(), **changes)
    try:
        yield _local.limits
    finally:
        _local.limits = before


@contextmanager
def fixed() -> Iterator[Limits]:
    """Within this block on this thread, the defaults (the module's constants), whatever
    :func:`limits` the thread is in: what the estimator's work runs under."""
    before = getattr(_local, "limits", None)
    _local.limits = None
    try:
        yield current()
    finally:
        _local.limits = before


def phase_memory(messages: int, steps: int, flow: bool = False, links: int = 0) -> int:
    """The memory a phase of ``messages`` messages visiting ``steps`` processors along
    their routes is estimated to take, in bytes (``flow``: run by the flow engine on a
    topology of ``links`` links)."""
    if flow:
        return (messages * FLOW_BYTES_PER_MESSAGE + steps * FLOW_BYTES_PER_STEP
                + links * FLOW_BYTES_PER_LINK)  # fmt: skip
    return messages * BYTES_PER_MESSAGE + steps * BYTES_PER_STEP


def check_phase(what: str, messages: int, steps: int | None = None, hint: str = "",
                exact: bool = True, flow: bool = False, links: int = 0) -> int:  # fmt: skip
    """A phase of ``messages`` messages (whose routes visit ``steps`` processors, when
    known) against the limits in force: its count limit (``steps`` is then left to the
    route batch's own check), or under a memory budget its memory estimate (``steps``
    unknown: 1 a message, the least a route visits; ``exact`` False: ``steps`` is a
    lower bound; ``flow``: the flow engine's figures, on ``links`` links). Returns
    ``messages``; past the
    limit :class:`BudgetError` (:class:`MemoryBudgetError`), before any work."""
    lim = current()
    if lim.memory is None:
        return check(what, messages, lim.phase_messages, "messages", hint)
    if steps is None:
        steps, exact = messages, False
    need = phase_memory(messages, steps, flow, links)
    if need > lim.memory:
        least = "" if exact else "at least "
        told = f"{what} ({counted(messages, 'message')}, {least}{counted(steps, 'route step')}"
        told += f"; {hint})" if hint else ")"
        raise MemoryBudgetError(told, need, lim.memory, lim.source)
    return messages


def check_route_steps(what: str, steps: int, hint: str = "") -> int:
    """A route batch visiting ``steps`` processors against the limits in force (its
    count, or under a memory budget ``steps`` x :data:`BYTES_PER_STEP`)."""
    lim = current()
    if lim.memory is None:
        return check(what, steps, lim.route_steps, "route steps", hint)
    need = steps * BYTES_PER_STEP
    if need > lim.memory:
        raise MemoryBudgetError(
            f"{what} ({counted(steps, 'route step')})", need, lim.memory, lim.source
        )
    return steps


# --------------------------------------------------------------------------- sizes

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
# ASCII digits and blanks, as every number read (base.numeric): '٢G' is no size
_SIZE = re.compile(
    r"[ \t]*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)[ \t]*([kmgt]?)(i?b?)[ \t]*", re.IGNORECASE
)


def parse_size(text: str) -> int:
    """Bytes from a size's text: plain bytes (``1500000000``), or a number with ``K``,
    ``M``, ``G`` or ``T`` (powers of 1024, as ``KiB`` ... ``TiB``; ``KB`` ... ``TB`` are
    powers of 1000), case not minded: ``2G``, ``500M``, ``1.5GiB``, ``2GB``. ValueError
    saying what is accepted, for anything else or for no bytes at all."""
    m = _SIZE.fullmatch(text)
    if m is None or (m.group(3) and not m.group(2) and m.group(3).lower() != "b"):
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with K, M, G or "
                         "T (KiB ... TiB, powers of 1024; KB ... TB, powers of 1000), e.g. "
                         f"2G, 500M, 1.5GiB{why_not_number(text)}")  # fmt: skip
    number, prefix, suffix = m.group(1), m.group(2).lower(), m.group(3).lower()
    scale = 1000 ** ("kmgt".index(prefix) + 1) if prefix and suffix == "b" else _UNITS[prefix]
    try:
        value = read_float(number) * scale
    except ValueRangeError:  # 1e400 digits: past any machine
        value = math.inf
    if value > 1 << 62:  # a thousand-digit number: no machine has it
        raise ValueError(f"{text[:40]!r} is more memory than any machine has")
    size = int(value)
    if size <= 0:
        raise ValueError(f"{text!r} is no memory at all: give more than 0 bytes")
    return size


def format_size(size: int) -> str:
    """Bytes, readably: ``512 bytes``, ``3.4 MiB``, ``5.2 GiB``."""
    if size < 1024:
        return f"{counted(size, 'byte')}"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size / 1024:.1f} KiB"


def default_memory() -> tuple[int, str]:
    """The command line's memory budget when none is given: half the machine's
    physical memory, or the memory available now (``MemAvailable`` of
    ``/proc/meminfo``) if that is lower; and which it is, in words."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        physical = 8 << 30
    best, how = physical // 2, f"half the physical memory ({format_size(physical)})"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    if available < best:
                        best, how = available, "the memory available now (MemAvailable)"
                    break
    except (OSError, ValueError, IndexError):
        pass  # not Linux: half the physical memory
    return best, how


# --------------------------------------------------------------------------- patterns


def pattern_messages(
    name: str, count: int, grid: Sequence[int] | None = None, wraps: bool = False
) -> int:
    """The number of messages of pattern ``name`` on ``count`` processors, from its
    formula (:mod:`parasol_core.simulate.patterns`); ``grid`` and ``wraps`` (the grid
    the routing moves on) for ``halo``, which on another technique is bounded by
    ``count * (count - 1)``."""
    n = count
    if name in ("alltoall", "ring-allgather"):
        return n * (n - 1)
    if name in ("broadcast", "broadcast-tree"):
        return max(n - 1, 0)
    if name == "shift":
        return n
    if name == "halo":
        if grid is None:
            return n * (n - 1)
        size = 1
        for d in grid:
            size *= d
        total = 0
        for d in grid:
            lines = size // d
            if d == 1:
                continue
            if wraps:
                total += size if d == 2 else 2 * size
            else:
                total += lines * 2 * (d - 1)
        return total
    return 0


def check_pattern(name: str, count: int, grid: Sequence[int] | None = None,
                  wraps: bool = False, limit: int | None = None) -> int:  # fmt: skip
    """:func:`pattern_messages`, refused past ``limit`` (default: the phase's message
    limit in force, :func:`current`)."""
    return check(f"the {name} pattern on {counted(count, 'processor')}", pattern_messages(
        name, count, grid, wraps), current().message_limit if limit is None else limit,
        "messages")  # fmt: skip


# --------------------------------------------------------------------------- generators


# --------------------------------------------------------------------------- time


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within this block on this thread, :func:`check_deadline` raises
    :class:`TimeBudgetError` once ``seconds`` have passed (None: no deadline)."""
    before = getattr(_local, "deadline", None)
    _local.deadline = None if seconds is None else time.monotonic() + seconds
    _local.seconds = seconds
    try:
        yield
    finally:
        _local.deadline = before


def remaining() -> float | None:
    """Seconds left before this thread's :func:`deadline` (0 once past it), or None when
    it has none: work that sets a shorter deadline of its own inside it (a sweep's
    variant) keeps the outer one when that comes first."""
    end = getattr(_local, "deadline", None)
    return None if end is None else max(end - time.monotonic(), 0.0)


def check_deadline() -> None:
    """Called by long loops (the flow engine's, in Python and through its C kernel's
    callback; the replay's compiler): raise :class:`Cancelled` once an event of
    :func:`cancelled_by` is set, :class:`TimeBudgetError` past the deadline of
    :func:`deadline`, if any, on this thread."""
    events = getattr(_local, "cancel", ())
    if events and any(e.is_set() for e in events):
        raise Cancelled("the work was cancelled part-way (a newer request replaced it)")
    end = getattr(_local, "deadline", None)
    if end is not None and time.monotonic() > end:
        raise TimeBudgetError(f"the work went past its time budget of {_local.seconds:g} s")


@contextmanager
def cancelled_by(event: threading.Event | None) -> Iterator[None]:
    """Within this block on this thread, :func:`check_deadline` raises
    :class:`Cancelled` once ``event`` is set (from any thread): the one way long work
    is stopped part-way, beside its deadline, so that every loop that polls for the
    deadline stops for a cancel too. None: nothing added. Nests: an event of an outer
    block still stops the work."""
    before = getattr(_local, "cancel", ())
    if event is not None:
        _local.cancel = (*before, event)
    try:
        yield
    finally:
        _local.cancel = before
