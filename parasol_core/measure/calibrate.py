"""From two timings per operation to the one a sum over operation counts needs.

Each data operation is measured twice (:mod:`parasol_core.measure.generator`): as the
*latency* of a dependent chain (the next operation needs its result) and as the
*reciprocal throughput* of independent chains (the core overlaps them). A compiled
loop lies between the two: its critical path runs at latency, the rest in its shadow.
The model has one value per operation, and a block's estimate is the sum of count x
value (:func:`parasol_core.analysis.block_time.estimate_block`). The value written is

    value(op) = w_c * throughput(op)     (c: the class of op; flow control: w * its cost)

with the weights ``>= 0`` fitted by non-negative least squares of the predicted time against
the measured time of the calibration programs of :mod:`parasol_core.measure.suite`, in
relative terms (each program and size one equation divided by its measured time, so a
long program does not outweigh a short one). The classes (:data:`CLASSES`: flow
control, array references, stores, arithmetic and the rest) have weights of their own
(:data:`TERMS`).

Chains (docs/measure.md, "Chains"). A loop whose iterations wait on each other (a sum,
a pointer chased, a recurrence) cannot run faster than its loop-carried chain: the
operations on it, each at its measured *latency* (weight 1: the latency is the time of
exactly that). The prediction of a program is the larger of the two bounds,

    max(sum of count x value(op), longest chain's sum of count x latency(op))

(a chain begun afresh, ``starts`` among its counts, divided by the runs of it the core
overlaps, ``1 + window / length``: the window is fitted first, by :func:`fit_window`, on
the programs whose chains restart; docs/measure.md, "Restarted chains"),
and the weights are fitted to it: an equation whose chain bound is above its throughput
sum does not depend on the weights, so it is left out of the least squares, and the
fit is repeated until the set of chain-bound equations no longer changes (at most
:data:`MAX_ROUNDS` rounds; the round with the least rms error over every equation is
kept).

:func:`nnls` is a small exact solver (every subset of the columns, the best feasible
unconstrained fit): the problems here have two or three unknowns.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from parasol_core.analysis.block_time import CHAIN_STARTS, chain_overlap, chain_runs

__all__ = [
    "CLASSES",
    "MAX_ROUNDS",
    "TERMS",
    "Calibration",
    "calibrate",
    "chain_time",
    "class_of",
    "fit_window",
    "nnls",
    "predict",
]

MAX_ROUNDS = 10


def nnls(a: Sequence[Sequence[float]], y: Sequence[float]) -> tuple[list[float], float]:
    """``x >= 0`` minimising ``|A x - y|``, and that residual norm. Exact for the few
    columns used here (every subset of columns; the optimum's support is one of them).
    ValueError for an empty or mismatched system or more than 12 columns."""
    A = np.asarray(a, dtype=float)
    b = np.asarray(y, dtype=float)
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[0] != b.shape[0]:
        raise ValueError("nnls needs a non-empty matrix with one row per value")
    k = A.shape[1]
    if not 1 <= k <= 12:
        raise ValueError(f"nnls here solves 1 to 12 unknowns, not {k}")
    best = (np.zeros(k), float(np.linalg.norm(b)))
    for size in range(1, k + 1):
        for cols in itertools.combinations(range(k), size):
            sub = A[:, cols]
            sol, *_ = np.linalg.lstsq(sub, b, rcond=None)
            if np.any(sol < 0):
                continue
            x = np.zeros(k)
            x[list(cols)] = sol
            r = float(np.linalg.norm(A @ x - b))
            if r < best[1] - 1e-15 * max(1.0, best[1]):
                best = (x, r)
    return [float(v) for v in best[0]], best[1]


CLASSES: dict[str, str] = {
    "loopi1": "flow", "loopin": "flow", "loopoh1": "flow", "loopohn": "flow",
    "goto": "flow", "gcom": "flow", "pcall": "flow", "argld": "flow",
    **{f"arr{k}": "array" for k in range(1, 8)},
    **{f"{t}{w}s": "store" for t in "irdcl" for w in "lg"},
    **{f"{t}{w}t": "store" for t in "irdcl" for w in "lg"},
}  # fmt: skip
"""The class of an operation (every other one is ``arith``): each class has its own
weights, because a compiled loop overlaps them differently (a store to a scalar is a
register move, a loop's own increment and branch run beside its body)."""

TERMS: tuple[tuple[str, str], ...] = (
    ("flow", "latency"),
    ("array", "throughput"),
    ("store", "throughput"),
    ("arith", "throughput"),
)
"""The fitted weights: (class, measurement). Flow control has one measurement (its
cost per execution). Latency terms for the other classes were tried (docs/measure.md):
they fitted the calibration programs no better, and the split between an arithmetic
operation's latency and its throughput, which the programs hardly tell apart, moved
from one run to the next (0.115 / 0.136 in one, 0.365 / 0.053 in another), and every
written value with it; without them the weights repeat within a few per cent."""


def class_of(op: str) -> str:
    return CLASSES.get(op, "arith")


@dataclass(frozen=True)
class Calibration:
    """``value(op) = sum over its class's terms of weight x measurement``."""

    weights: dict[tuple[str, str], float]
    programs: tuple[str, ...]  # the programs fitted
    equations: int  # programs x sizes
    rms_relative: float  # root mean square of (predicted - measured) / measured
    chain_bound: tuple[str, ...] = ()  # "program@size" of the equations their chain bounds
    # the core's window over restarted chains (iterations ahead; fit_window) and the
    # "program@L" it was fitted on; None: no calibration program restarts a chain
    window: float | None = None
    window_from: tuple[str, ...] = ()

    def value(self, op: str, latency: float, throughput: float | None) -> float:
        c = class_of(op)
        t = latency if throughput is None else throughput
        return (self.weights.get((c, "throughput"), 0.0) * t
                + self.weights.get((c, "latency"), 0.0) * latency)  # fmt: skip

    def weight(self, op: str, kind: str) -> float:
        return self.weights.get((class_of(op), kind), 0.0)

    def describe(self) -> str:
        terms = [f"{w:.3g} x {kind} ({c})" for (c, kind), w in self.weights.items() if w]
        chains = len(self.chain_bound)
        return (" + ".join(terms) or "0") + (
            f", fitted by non-negative least squares on {', '.join(self.programs)} "
            f"({self.equations} program sizes, {chains} of them bound by their loop-carried "
            f"chain at latency and left out; rms error of the larger bound "
            f"{self.rms_relative * 100:.0f} %)"
        )

    def window_words(self) -> str | None:
        """Where the window was fitted, in words; None without one."""
        if self.window is None:
            return None
        lengths = sorted({lb.split("@")[1] for lb in self.window_from}, key=float)
        programs = ", ".join(dict.fromkeys(lb.split("@")[0] for lb in self.window_from))
        return (f"fitted on {programs}: chains begun afresh every {', '.join(lengths)} "
                "iterations, the latency of their operations over the time measured "
                "against 1 + window / length")  # fmt: skip


def _terms(counts: Mapping[str, float], latency: Mapping[str, float],
           throughput: Mapping[str, float]) -> list[float]:  # fmt: skip
    """Sum of count x measurement per term of :data:`TERMS`; KeyError naming an
    operation without a latency."""
    out = dict.fromkeys(TERMS, 0.0)
    for op, n in counts.items():
        if not n:
            continue
        if op not in latency:
            raise KeyError(op)
        c = class_of(op)
        for kind in ("throughput", "latency"):
            if (c, kind) in out:
                v = throughput.get(op, latency[op]) if kind == "throughput" else latency[op]
                out[(c, kind)] += n * v
    return [out[t] for t in TERMS]


def _chain_latency(chain: Mapping[str, float], latency: Mapping[str, float]) -> float:
    """A chain's sum of count x latency, its restarts not counted; KeyError naming an
    operation without a latency."""
    t = 0.0
    for op, n in chain.items():
        if n and op != CHAIN_STARTS:
            if op not in latency:
                raise KeyError(op)
            t += n * latency[op]
    return t


def chain_time(chains: Sequence[Mapping[str, float]], latency: Mapping[str, float],
               window: float | None = None) -> float:  # fmt: skip
    """The longest chain's sum of count x latency, a restarted chain's divided by the
    runs of it the core overlaps (:func:`~parasol_core.analysis.block_time.chain_overlap`
    with ``window``); 0 without chains. KeyError naming an operation without a
    latency."""
    best = 0.0
    for chain in chains:
        best = max(best, _chain_latency(chain, latency) / chain_overlap(*chain_runs(chain), window))
    return best


def fit_window(
    runs: Sequence[tuple], latency: Mapping[str, float]
) -> tuple[float, tuple[str, ...]] | None:
    """The core's window (iterations it runs ahead of a chain's end) fitted to the runs
    whose chain begins afresh (``starts``): each run's chains at once c = its chain's
    latencies / its measured time, against ``c = 1 + A / L`` (L the run's length), by
    least squares through the origin; at least 0. ``runs`` as :func:`calibrate` takes
    them; the window and the "program@L" fitted, or None where no run restarts a chain.
    KeyError naming an operation without a latency."""
    num = den = 0.0
    used = []
    for run in runs:
        program, seconds = run[0], run[2]
        chains = run[3] if len(run) > 3 else ()
        if not seconds > 0:
            continue
        for chain in chains:
            iterations, starts = chain_runs(chain)
            if not (starts and iterations):
                continue
            length = iterations / starts
            at_once = _chain_latency(chain, latency) / seconds
            num += (at_once - 1.0) / length
            den += 1.0 / length**2
            used.append(f"{program}@{length:g}")
    if not den:
        return None
    return max(0.0, num / den), tuple(used)


def calibrate(
    runs: Sequence[tuple],
    latency: Mapping[str, float],
    throughput: Mapping[str, float],
) -> Calibration:
    """Fit the weights to ``runs``: (program, counts, measured seconds[, chains]) each,
    the prediction being the larger of the throughput sum and the chain bound (module
    doc), restarted chains overlapped by the window :func:`fit_window` finds on them.
    ValueError when a run counts an operation that has no latency (it could not be
    predicted) or none has a positive time."""
    try:
        fitted = fit_window(runs, latency)
    except KeyError as e:
        raise ValueError(f"a calibration program's chain holds {e.args[0]}, which was not "
                         "measured") from None  # fmt: skip
    window, window_from = fitted if fitted is not None else (None, ())
    rows, chain_t, names, labels = [], [], [], []
    for run in runs:
        program, counts, seconds = run[0], run[1], run[2]
        chains = run[3] if len(run) > 3 else ()
        if not seconds > 0:
            continue
        try:
            terms = _terms(counts, latency, throughput)
            chain = chain_time(chains, latency, window)
        except KeyError as e:
            raise ValueError(f"calibration program {program} counts {e.args[0]}, which was "
                             "not measured") from None  # fmt: skip
        rows.append([t / seconds for t in terms])
        chain_t.append(chain / seconds)
        names.append(program)
        labels.append(f"{program}@{len([n for n in names if n == program])}")
    if not rows:
        raise ValueError("no calibration program has a measured time")
    A = np.asarray(rows)
    C = np.asarray(chain_t)

    def rms(x: Sequence[float]) -> float:
        pred = np.maximum(A @ np.asarray(x), C)
        return float(np.sqrt(np.mean((pred - 1.0) ** 2)))

    active = np.ones(len(rows), dtype=bool)
    best: tuple[float, list[float], np.ndarray] | None = None
    seen: set[bytes] = set()
    for _ in range(MAX_ROUNDS):
        if not active.any():  # every equation is bound by its chain: fit them all
            active = np.ones(len(rows), dtype=bool)
        key = active.tobytes()
        if key in seen:
            break
        seen.add(key)
        x, _ = nnls(A[active].tolist(), [1.0] * int(active.sum()))
        err = rms(x)
        bound = C > A @ np.asarray(x)
        if best is None or err < best[0] - 1e-15:
            best = (err, x, bound)
        active = ~bound
    assert best is not None
    err, x, bound = best
    return Calibration(dict(zip(TERMS, x)), tuple(dict.fromkeys(names)), len(rows), err,
                       tuple(lb for lb, b in zip(labels, bound) if b), window,
                       window_from)  # fmt: skip


def predict(counts: Mapping[str, float], values: Mapping[str, float]) -> float:
    """Sum of count x value: the block estimate without its deviation."""
    return math.fsum(n * values[op] for op, n in counts.items() if n)
