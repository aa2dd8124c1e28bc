"""From timed runs of a control and a test loop to a timing, or to a refusal.

Each run r times the control loop (c_r seconds) and the test loop (t_r seconds) over
the same number of iterations, in which the test loop executes ``ops`` more
operations. One run's estimate is ``(t_r - c_r) / ops / divide``; the timing is the
mean of those estimates with their sample standard deviation (Saavedra-Barrera 1988,
4.5: independent observations, mean and variance), and the median is kept for
comparing two measurements. Runs far from the others are set aside first (outliers:
more than 3.5 robust standard deviations, 1.4826 x the median absolute deviation, from
the median): a run another process disturbed.

Why the mean of paired differences, and not the least test run less the least control
run (tried in issue 34): the control and test runs alternate, so a slow stretch of the
machine slows both runs of a pair and their difference keeps little of it, while the
two minima come from different runs. Six invocations of the same throughput kernels
under load 4-5 agreed within 10 % (largest over smallest) for 13 of 16 kernels with
this mean, 12 with the plain mean, 13 with the median, and 3 with the minima
(docs/measure.md).

A value is refused when it cannot be told from zero:

* the difference per run is smaller than ``min_diff_ticks`` ticks of the timer, either
  way: the timer cannot resolve it at this run length;
* the test loop is not slower than the control loop (mean or median not positive);
* the runs do not tell it from zero: the mean is less than two standard errors.

A refused value is still a measurement of something small (``host.measure_host``): a
refused *throughput* is written as the runs gave it (:attr:`Refusal.seen`, at least 0),
since the core overlaps the operation with the rest; a refused *latency* is written the
same way when it is small by :meth:`Refusal.small_estimate`. That is when the runs
resolved the difference and found it too small to tell from zero, or when the timer
could not resolve it but its ticks are a small share of a run
(:data:`SMALL_TICK_SHARE`): then the operation costs at most :attr:`Refusal.bound`
seconds, far below anything the model times, and is written as measured, no
lower than 0 and no higher than the bound. Only a latency a coarse timer cannot resolve
(its ticks a large share of a run: the timer says nothing of the operation's size) is
left out, with the reason.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from parasol_core.base.words import counted

__all__ = ["Estimate", "Refusal", "MIN_DIFF_TICKS", "SMALL_TICK_SHARE", "summarise"]

MIN_DIFF_TICKS = 10
"""A run's test-minus-control difference must span at least this many timer ticks."""

SMALL_TICK_SHARE = 1e-2
"""A difference the timer cannot resolve bounds the operation's cost when the
:data:`MIN_DIFF_TICKS` ticks it fell within are at most this share of a control run:
then the operation adds at most that share to the time per operation of the loop it was
timed in (10 ticks / operations against a control run / operations), too little for
any sum of the model's timings to see. The thread CPU clock's seen tick here is 0.6 us:
10 ticks are 0.03 % of a full measurement's 20 ms run and 0.4 % of a 1.3 ms control run
of the tests; a 1 ms clock's are half of a 20 ms run, and bound nothing."""


@dataclass(frozen=True)
class Estimate:
    """Seconds per operation."""

    mean: float
    sd: float
    median: float
    runs: int
    run_seconds: float  # mean length of one control run
    per_op_resolution: float  # the tick, per operation, at this run length
    rejected: int = 0  # runs set aside as outliers before the mean and sd


@dataclass(frozen=True)
class Refusal:
    reason: str
    # what the runs gave, when they ran: a value too small to tell from zero is still a
    # measurement (a throughput of an operation the core overlaps with the rest is that)
    seen: Estimate | None = None
    # seconds per operation the difference stayed within, when the timer could not
    # resolve it (None: it did, and found the value too small to tell from zero)
    bound: float | None = None
    # the share of a control run those ticks are (None when the timer resolved it)
    ticks_of_run: float | None = None

    @property
    def resolved(self) -> bool:
        """Whether the timer resolved the difference (a refusal without a bound)."""
        return self.bound is None

    def at_least_zero(self) -> Estimate | None:
        """:attr:`seen` with its mean and median no lower than 0 (None if none)."""
        return self._clipped(math.inf)

    def small_estimate(self, tick_share: float = SMALL_TICK_SHARE) -> Estimate | None:
        """What the runs gave, as a measurement of something small, or None when they
        say nothing of the operation's size: when the runs resolved the difference,
        :meth:`at_least_zero`; when the timer could not, the same no higher than
        :attr:`bound`, provided the ticks it fell within are at most ``tick_share`` of a
        control run (a coarse timer's are not)."""
        bound = self.bound
        if bound is None:  # the timer resolved it
            return self.at_least_zero()
        if self.ticks_of_run is None or self.ticks_of_run > tick_share:
            return None
        return self._clipped(bound)

    def _clipped(self, top: float) -> Estimate | None:
        e = self.seen
        if e is None:
            return None
        return Estimate(min(top, max(0.0, e.mean)), e.sd, min(top, max(0.0, e.median)),
                        e.runs, e.run_seconds, e.per_op_resolution, e.rejected)  # fmt: skip


def summarise(
    ctl: Sequence[float],
    test: Sequence[float],
    ops: float,
    tick: float,
    divide: float = 1.0,
    min_diff_ticks: float = MIN_DIFF_TICKS,
) -> Estimate | Refusal:
    """The timing per operation from paired runs, or why there is none."""
    if len(ctl) != len(test) or not ctl:
        raise ValueError("control and test runs must pair up, at least one of each")
    if ops <= 0 or divide <= 0 or tick <= 0:
        raise ValueError("ops, divide and tick must be positive")
    diffs = [t - c for c, t in zip(ctl, test)]
    diffs, rejected = _without_outliers(diffs)
    per_op = [d / ops / divide for d in diffs]
    mean = statistics.fmean(per_op)
    median = statistics.median(per_op)
    sd = statistics.stdev(per_op) if len(per_op) > 1 else 0.0
    run_seconds = statistics.fmean(ctl)
    resolution = tick / ops / divide
    seen = Estimate(mean, sd, median, len(per_op), run_seconds, resolution, rejected)
    median_diff = statistics.median(diffs)
    # a difference within the timer's ticks either way is the timer's to resolve, not
    # the operation's sign (a 1 ms clock gave ila's runs a median of 0 or -1 tick)
    if abs(median_diff) < min_diff_ticks * tick:
        return Refusal(
            f"the difference per run, {median_diff:.3g} s, is below {min_diff_ticks:g} "
            f"ticks of the timer ({tick:.3g} s): the timer cannot resolve it", seen,
            min_diff_ticks * resolution,
            min_diff_ticks * tick / run_seconds if run_seconds > 0 else math.inf,
        )  # fmt: skip
    if not (mean > 0 and median > 0):
        return Refusal(
            f"the test loop was not slower than the control loop (difference "
            f"{mean:.3g} s per operation over {counted(len(diffs), 'run')} of {run_seconds:.3g} s): "
            "the operation costs nothing this method can see", seen
        )  # fmt: skip
    if len(per_op) > 1 and mean < 2 * sd / math.sqrt(len(per_op)):
        return Refusal(
            f"the mean, {mean:.3g} s, is less than two standard errors "
            f"({2 * sd / math.sqrt(len(per_op)):.3g} s) from zero over {counted(len(per_op), 'run')}", seen
        )  # fmt: skip
    return seen


OUTLIER_SDS = 3.5
"""A run further than this many robust standard deviations from the median is set aside."""


def _without_outliers(diffs: Sequence[float]) -> tuple[list[float], int]:
    """``diffs`` without the runs more than :data:`OUTLIER_SDS` robust standard
    deviations (1.4826 x the median absolute deviation) from their median, and how many
    were set aside; all of them when fewer than 5 or the deviation is 0."""
    if len(diffs) < 5:
        return list(diffs), 0
    med = statistics.median(diffs)
    mad = statistics.median(abs(d - med) for d in diffs) * 1.4826
    if mad <= 0:
        return list(diffs), 0
    kept = [d for d in diffs if abs(d - med) <= OUTLIER_SDS * mad]
    return kept, len(diffs) - len(kept)
