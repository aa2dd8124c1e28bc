"""Budgets: work is estimated from its formula before it is done, and refused past a limit.

Every entry point (the command line, a session, the estimator) builds message sets,
topologies and route batches through the core. Before the core builds one it counts
what it would build, from the sizes alone, here; past the limit it raises
:class:`BudgetError`, whose message names the estimate and the limit, and nothing is
built. The estimator answers it -32602, the command line exits 2.

========================== ============================================ =================
work                        estimate (before building)                  limit
========================== ============================================ =================
a pattern's messages        :func:`pattern_messages` (its formula)      1,000,000 messages
a phase's messages          the length of the list                      1,000,000 messages
a generated topology        ``topology.generators.generator_size``:     4,000,000 lines
                            processors + link lines (+ a bus's connect
                            entries)
a route batch               its pairs                                   1,000,000 pairs
a route batch (or a         :func:`~parasol_core.topology.steps.        10,000,000 steps
phase's routes)             route_steps`: processors visited
``shortest`` routes         distinct sources x processors               12,500,000 entries
========================== ============================================ =================

The estimator adds budgets per request (time) and per batch (the sum of its members'
estimates): ``parasol_core.estimator.server``, ``docs/estimator.md``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from parasol_core.limits import MAX_PHASE_MESSAGES

__all__ = [
    "MAX_GENERATED",
    "MAX_PHASE_MESSAGES",
    "MAX_ROUTE_PAIRS",
    "MAX_ROUTE_STEPS",
    "MAX_SHORTEST_TABLE",
    "BudgetError",
    "TimeBudgetError",
    "check",
    "check_deadline",
    "deadline",
    "pattern_messages",
]

MAX_GENERATED = 4_000_000
"""The most lines (processors + links) a generator makes: the 100 x 100 x 100 torus
(1,000,000 processors, 3,000,000 links), built as columns (parasol_core/linkstore.py)
and written from them in a few seconds, its text about 570 MB."""
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


def check(what: str, estimate: int, limit: int, unit: str, hint: str = "") -> int:
    """``estimate`` if it is within ``limit``, else :class:`BudgetError`."""
    if estimate > limit:
        raise BudgetError(what, estimate, limit, unit, hint)
    return estimate


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
                  wraps: bool = False, limit: int = MAX_PHASE_MESSAGES) -> int:  # fmt: skip
    """:func:`pattern_messages`, refused past ``limit``."""
    return check(f"the {name} pattern on {count:,} processors", pattern_messages(
        name, count, grid, wraps), limit, "messages")  # fmt: skip


# --------------------------------------------------------------------------- generators


# --------------------------------------------------------------------------- time


_local = threading.local()


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


def check_deadline() -> None:
    """Called by long Python loops: raise :class:`TimeBudgetError` past the deadline
    of :func:`deadline`, if any, on this thread."""
    end = getattr(_local, "deadline", None)
    if end is not None and time.monotonic() > end:
        raise TimeBudgetError(f"the work went past its time budget of {_local.seconds:g} s")
