"""The time of a basic block of Fortran code on one processor type (SAD level 1).

A basic block is summarised by how often it executes each timed instruction. Its
time is the sum of count x timing over the instructions (report 3.1.9, and the
validation in 4.5.1), divided by the processor's small loop speedup when the block
fits in the instruction cache. Its standard deviation follows Saavedra-Barrera (1988,
section 6.1): the measurements are independent, so the variance is
``sum(count**2 * sd**2)``; a timing without a standard deviation adds nothing. The
speedup divides the standard deviation as it divides the mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from parasol_core.base import params
from parasol_core.model import Machine

__all__ = ["BlockEstimate", "estimate_block"]


@dataclass(frozen=True)
class BlockEstimate:
    """Seconds: the expected time of the block and its standard deviation."""

    mean: float
    sd: float


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def estimate_block(
    machine: Machine,
    processor_id: int,
    counts: Mapping[str, float],
    cached: bool = False,
) -> BlockEstimate:
    """Estimate a block on processor type ``processor_id`` (its ``id``, as references
    use) from ``counts``: timing mnemonic (aliases such as ``sqrti`` accepted) -> how
    many times it executes. ``cached`` divides by the small loop speedup.

    Raises ValueError for an unknown processor or mnemonic, a count that is not a
    finite non-negative number, a timing the processor does not define (for a non-zero
    count), or, with ``cached``, a missing or non-positive small loop speedup.
    """
    proc = machine.processor(processor_id)
    if proc is None:
        known = ", ".join(str(p.id) for p in machine.processors) or "none"
        raise ValueError(f"there is no processor with id {processor_id} (ids: {known})")
    label = f"processor {processor_id}" + (f" ({proc.name})" if proc.name else "")
    merged: dict[str, float] = {}
    unknown = []
    for name, count in counts.items():
        canonical, _ = params.resolve_name(name)
        if canonical is None:
            unknown.append(name)
            continue
        if isinstance(count, bool) or not isinstance(count, (int, float)):
            raise ValueError(f"the count for '{name}' must be a number, not {count!r}")
        try:
            count = float(count)  # a 400-digit integer does not fit a float
        except OverflowError:
            count = math.inf
        if not math.isfinite(count) or count < 0:
            raise ValueError(f"the count for '{name}' must be finite and non-negative, "
                             f"not {_shown(counts[name])}")  # fmt: skip
        merged[canonical] = merged.get(canonical, 0) + count
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise ValueError(f"unknown timing parameter{'s' if len(unknown) > 1 else ''}: {names}")
    missing = [n for n, c in merged.items() if c and n not in proc.timings]
    if missing:
        raise ValueError(f"{label} has no timing for {', '.join(missing)}")
    terms = []
    spreads = []
    for name, count in merged.items():
        if not count:
            continue
        timing = proc.timings[name]
        terms.append(count * timing.mean)
        if timing.sd:
            spreads.append(count * timing.sd)
    try:
        mean = math.fsum(terms)
    except OverflowError:  # fsum raises where a plain sum would give inf
        mean = math.inf
    sd = math.hypot(*spreads)  # sqrt(sum of squares) without overflowing the squares
    if cached:
        speedup = proc.cache.smallloopspeedup if proc.cache is not None else None
        if speedup is None:
            raise ValueError(f"{label} has no small loop speedup for a cached block")
        if not speedup.mean > 0:
            raise ValueError(f"the small loop speedup of {label} must be positive, "
                             f"not {speedup.mean!r}")  # fmt: skip
        mean /= speedup.mean
        sd /= speedup.mean
    if not (math.isfinite(mean) and math.isfinite(sd)):
        raise ValueError(f"the estimate for {label} is too large for a floating-point "
                         "number (the counts or timings overflow)")  # fmt: skip
    return BlockEstimate(mean, sd)
