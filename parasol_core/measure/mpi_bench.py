"""The MPI side of `parasol-model measure --network`: ping-pong between two ranks and the
eight collectives, timed as the OSU micro-benchmarks time them.

Every function here runs on every rank of the communicator, in the same order: a rank
with nothing to do in a step waits for the others. After each measured point the ranks
agree (one ``MPI_Allreduce`` of two numbers): on the time of one operation, which sets
how many repetitions the point gets, and on whether a SIGINT, SIGTERM or SIGHUP reached
any rank (:mod:`parasol_core.base.signals`, whose signals are only noted while MPI
runs). So a signal on any one rank stops every rank at the same point, within one
point's time (at most about a tenth of a second in the full run), and nothing is left
blocked in a send whose partner has gone.

mpi4py is imported when a function runs, never with this module: importing it does not
start MPI (the layering test imports every core module).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parasol_core.base import signals
from parasol_core.measure.host import Progress

__all__ = [
    "COLLECTIVES",
    "Cancelled",
    "Agreement",
    "Plan",
    "PingPong",
    "OsuRow",
    "plan_for",
    "pingpong",
    "collectives",
    "human_size",
]

# The eight collectives of the MPI data sheets, in the order they are measured and written.
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
               "alltoall")  # fmt: skip
# Reductions are of 4-byte floats, as OSU's (so their sizes start at 4 bytes).
REDUCTIONS = ("reduce", "allreduce")
BATCHES = 5  # a ping-pong point is timed in this many batches, for its standard error
KiB, MiB = 1024, 1024 * 1024


def human_size(n: int) -> str:
    """1 -> "1 B", 4096 -> "4 KiB", 4194304 -> "4 MiB"."""
    for unit, scale in (("MiB", MiB), ("KiB", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Plan:
    """What a run measures and how long it spends on each point."""

    quick: bool
    pingpong_sizes: tuple[int, ...]  # bytes
    collective_sizes: tuple[int, ...]  # bytes per process (per peer for alltoall)
    target: float  # seconds of repetitions a point aims at (after its warm-up)
    warmup: int  # untimed repetitions before a point, which also estimate its time
    min_iterations: int
    max_iterations: int

    def sizes_of(self, collective: str) -> tuple[int | None, ...]:
        """The message sizes a collective is measured at (None: the barrier's one point)."""
        if collective == "barrier":
            return (None,)
        if collective in REDUCTIONS:
            return tuple(s for s in self.collective_sizes if s >= 4)
        return self.collective_sizes

    def points(self, pairs: int, procs: int) -> int:
        """How many points a run of ``pairs`` ping-pong pairs and ``procs`` process counts
        measures (each point one agreement)."""
        per_count = sum(len(self.sizes_of(c)) for c in COLLECTIVES)
        return pairs * len(self.pingpong_sizes) + procs * per_count

    def iterations(self, seconds_each: float) -> int:
        """The repetitions that fill ``target`` at ``seconds_each`` an operation (a multiple
        of BATCHES, within the plan's bounds)."""
        if seconds_each > 0 and math.isfinite(seconds_each):
            n = math.ceil(self.target / seconds_each)
        else:
            n = self.max_iterations
        n = min(max(n, self.min_iterations), self.max_iterations)
        return BATCHES * math.ceil(n / BATCHES)


def plan_for(quick: bool) -> Plan:
    """The full run: ping-pong at every power of 2 from 1 B to 4 MiB, collectives at every
    power of 2 from 1 B to 1 MiB (OSU's default range), 0.1 s of repetitions a point.
    ``quick`` (the tests): ping-pong at powers of 4 to 4 MiB, collectives at powers of 16
    to 64 KiB, a few milliseconds a point."""
    if quick:
        return Plan(True, tuple(4**k for k in range(12)), tuple(16**k for k in range(5)),
                    target=0.004, warmup=2, min_iterations=5, max_iterations=200)  # fmt: skip
    return Plan(False, tuple(2**k for k in range(23)), tuple(2**k for k in range(21)),
                target=0.1, warmup=5, min_iterations=10, max_iterations=100_000)  # fmt: skip


class Cancelled(Exception):
    """A signal reached some rank; every rank raises this at the same point."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum


class Agreement:
    """The ranks' agreement after each point on the signal this rank received.

    The signals are caught, and only noted, by :mod:`parasol_core.base.signals` (the
    caller runs in its ``handled()`` and ``deferred()``, from before MPI starts, so a
    signal during start-up is caught too). :meth:`agree` shares this rank's (and a time)
    with every rank and raises :class:`Cancelled` on all of them when any has one. On
    rank 0 each step is reported to ``progress`` (the command's progress display,
    :mod:`parasol_core.cli.progress`) as a :class:`Progress`, with the time left
    estimated from the points done so far; without one nothing is shown."""

    def __init__(self, progress: Callable[[Progress], None] | None = None) -> None:
        self.comm: Any = None
        self.total = 1
        self.done = 0
        self.started = time.monotonic()
        self.progress = progress

    @property
    def signum(self) -> int:
        """The signal this rank received (0: none)."""
        return signals.received()

    def start(self, comm: Any, total_points: int) -> None:
        self.comm = comm
        self.total = max(1, total_points)
        self.done = 0
        self.started = time.monotonic()

    def agree(self, value: float = 0.0) -> float:
        """The largest ``value`` over the ranks; Cancelled if a signal reached any."""
        signum, value = self.share(value)
        if signum:
            raise Cancelled(signum)
        return value

    def share(self, value: float = 0.0) -> tuple[int, float]:
        """(the largest signal, the largest ``value``) over the ranks."""
        from mpi4py import MPI

        buf = np.array([float(self.signum), float(value)])
        self.comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.MAX)
        return int(buf[0]), float(buf[1])

    def gather(self, poll: float = 0.005) -> None:
        """Wait until every rank is here, taking signals meanwhile: a rank waiting for
        rank 0 to finish its work (the fits, the files) polls a non-blocking barrier
        instead of blocking in MPI, so a signal that reaches it then is noted before its
        next :meth:`agree`, not after it."""
        request = self.comm.Ibarrier()
        while not request.Test():
            time.sleep(poll)

    def point_done(self) -> None:
        self.done += 1

    def step(self, what: str) -> None:
        """Report a step on rank 0: how far, what is measured now, the time left."""
        if self.progress is None or self.comm is None or self.comm.rank != 0:
            return
        elapsed = time.monotonic() - self.started
        fraction = self.done / self.total
        left = elapsed * (self.total - self.done) / self.done if self.done else None
        self.progress(Progress(fraction, what, left))


# --------------------------------------------------------------------------- ping-pong


@dataclass
class PingPong:
    """Half the round-trip time between ranks ``a`` and ``b`` at each size (seconds):
    the mean over every timed repetition, and its standard error over BATCHES batches."""

    a: int
    b: int
    sizes: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    error: list[float] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)


def _round_trips(comm: Any, rank: int, a: int, b: int, buf: np.ndarray, n: int) -> float:
    """``n`` round trips of ``buf`` from a to b and back; the seconds they took (on a)."""
    from mpi4py import MPI

    t0 = MPI.Wtime()
    if rank == a:
        for _ in range(n):
            comm.Send(buf, dest=b, tag=17)
            comm.Recv(buf, source=b, tag=17)
    elif rank == b:
        for _ in range(n):
            comm.Recv(buf, source=a, tag=17)
            comm.Send(buf, dest=a, tag=17)
    return MPI.Wtime() - t0


def pingpong(comm: Any, agreement: Agreement, plan: Plan, a: int, b: int) -> PingPong | None:
    """Ping-pong between ranks ``a`` and ``b`` at every size of the plan (the other ranks
    wait); the result on rank 0, None elsewhere."""
    rank = comm.rank
    buf = np.zeros(max(plan.pingpong_sizes), dtype=np.uint8)
    mine = PingPong(a, b)
    if rank in (a, b):  # the pair's first messages set up its channel: untimed
        _round_trips(comm, rank, a, b, buf[:1], 50 * plan.warmup)
        _round_trips(comm, rank, a, b, buf, 1)
    for size in plan.pingpong_sizes:
        view = buf[:size]
        each = 0.0
        if rank in (a, b):
            each = _round_trips(comm, rank, a, b, view, plan.warmup) / plan.warmup
        n = plan.iterations(agreement.agree(each))
        if rank in (a, b):
            per = n // BATCHES
            halves = [_round_trips(comm, rank, a, b, view, per) / per / 2
                      for _ in range(BATCHES)]  # fmt: skip
            mine.sizes.append(size)
            mine.seconds.append(float(np.mean(halves)))
            mine.error.append(float(np.std(halves, ddof=1) / math.sqrt(BATCHES)))
            mine.iterations.append(n)
        agreement.point_done()
    found = comm.gather(mine if rank == a else None, root=0)
    return found[a] if rank == 0 else None


# --------------------------------------------------------------------------- collectives


@dataclass
class OsuRow:
    """One row of an OSU collective table with ``-f``: the mean, least and greatest over
    the ranks of each rank's average time of one operation (seconds), and the repetitions.
    ``size`` is None for the barrier."""

    size: int | None
    avg: float
    min: float
    max: float
    iterations: int


def _operation(name: str, sub: Any, size: int | None, bufs: dict[str, np.ndarray]
               ) -> Callable[[], None]:  # fmt: skip
    from mpi4py import MPI

    p = sub.size
    s, r = bufs["send"], bufs["recv"]
    if name == "barrier":
        return sub.Barrier
    assert size is not None
    if name == "bcast":
        return lambda: sub.Bcast(s[:size], root=0)
    if name in REDUCTIONS:
        n = size // 4
        fs, fr = bufs["fsend"][:n], bufs["frecv"][:n]
        if name == "reduce":
            return lambda: sub.Reduce(fs, fr, op=MPI.SUM, root=0)
        return lambda: sub.Allreduce(fs, fr, op=MPI.SUM)
    if name == "gather":
        return lambda: sub.Gather(s[:size], r[: size * p], root=0)
    if name == "scatter":
        return lambda: sub.Scatter(s[: size * p], r[:size], root=0)
    if name == "allgather":
        return lambda: sub.Allgather(s[:size], r[: size * p])
    if name == "alltoall":
        return lambda: sub.Alltoall(s[: size * p], r[: size * p])
    raise ValueError(f"unknown collective {name!r}")


def _time(sub: Any, op: Callable[[], None], n: int) -> float:
    """The mean seconds of one ``op`` over ``n`` repetitions, a barrier between them (not
    timed), as OSU times collectives."""
    from mpi4py import MPI

    total = 0.0
    for _ in range(n):
        t0 = MPI.Wtime()
        op()
        total += MPI.Wtime() - t0
        sub.Barrier()
    return total / n


def collectives(comm: Any, agreement: Agreement, plan: Plan, procs: int
                ) -> dict[str, list[OsuRow]] | None:  # fmt: skip
    """Every collective at every size of the plan over ranks ``0..procs-1`` (the others
    wait): the rows of each one's table on rank 0, None elsewhere."""
    from mpi4py import MPI

    rank = comm.rank
    sub = comm.Split(0 if rank < procs else MPI.UNDEFINED, rank)
    inside = sub != MPI.COMM_NULL
    biggest = max(plan.collective_sizes)
    bufs: dict[str, np.ndarray] = {}
    if inside:
        bufs = {"send": np.ones(biggest * procs, dtype=np.uint8),
                "recv": np.zeros(biggest * procs, dtype=np.uint8),
                "fsend": np.ones(biggest // 4 + 1, dtype=np.float32),
                "frecv": np.zeros(biggest // 4 + 1, dtype=np.float32)}  # fmt: skip
    tables: dict[str, list[OsuRow]] = {}
    if inside:  # the new communicator's first operations set it up: untimed
        for _ in range(50 * plan.warmup):
            sub.Barrier()
        _operation("alltoall", sub, biggest, bufs)()
    try:
        for name in COLLECTIVES:
            sizes = plan.sizes_of(name)
            given = [s for s in sizes if s is not None]
            shown = f", {human_size(given[0])}..{human_size(given[-1])}" if given else ""
            agreement.step(f"{name} on {procs} processes{shown}")
            rows = tables.setdefault(name, [])
            for size in sizes:
                op = _operation(name, sub, size, bufs) if inside else None
                each = _time(sub, op, plan.warmup) if op is not None else 0.0
                n = plan.iterations(agreement.agree(each))
                if op is not None:
                    times = sub.gather(_time(sub, op, n), root=0)
                    if sub.rank == 0:
                        rows.append(OsuRow(size, float(np.mean(times)), float(min(times)),
                                           float(max(times)), n))  # fmt: skip
                agreement.point_done()
    finally:
        if inside:
            sub.Free()
    return tables if rank == 0 else None
