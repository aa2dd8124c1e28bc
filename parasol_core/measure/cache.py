"""The instruction cache: the report's growing unrolled loop (4.2.1, figure 4.1).

A loop whose body is the local double multiplication (the `dln` kernel's test step)
written out ``x`` times, for x = 10, 50, 100, 500, 1000, 2000, 5000. Each size is its own C program;
each prints the time per multiplication over several runs. Small bodies fit the
instruction cache, large ones do not: the *knee* is the last size still at the
in-cache time, and the small loop speedup is the out-of-cache time over the in-cache
time. A modern core fetches ahead and overlaps fetch with a dependent chain; where the
curve has no knee (no size more than :data:`KNEE_RISE` above the in-cache level and
staying there) the speedup is 1.0 and the size is the largest body measured.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from parasol_core.base.words import counted
from parasol_core.measure.generator import NA

__all__ = ["KNEE_RISE", "CacheResult", "analyse", "program"]

# The operands are 16 random values held in automatic variables: local operands, as in
# the report, and a body gcc compiles in seconds (with a distinct array element per
# statement, 10000 statements take minutes and gigabytes at -O2).
_OPERANDS = 16

KNEE_RISE = 1.15
"""A point this many times the in-cache level (and every point after it) is a knee."""

_SOURCE = r"""
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define NA %(NA)d
static volatile double vzero_d = 0.0;
static volatile uint64_t v_seed = 0x9E3779B97F4A7C15ull;
static volatile double sink_d;
static double A[NA], B[NA];
static uint64_t s;
static double rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }
static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
__attribute__((noinline)) static double body(long n) {
    const double zd = vzero_d;
    double x = 0, v;
%(operands)s
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
%(body)s
    }
    double t1 = now_s();
    sink_d = x;
    return t1 - t0;
}
int main(int argc, char **argv) {
    double need = atof(argv[1]);
    int runs = atoi(argv[2]);
    s = v_seed;
    for (int i = 0; i < NA; i++) { A[i] = 0.5 + rnd(); B[i] = 0.5 + rnd(); }
    long n = 1;
    for (;;) { double t = body(n); if (t >= need || n > (1L << 40)) break; n *= t > need / 16 ? 2 : 16; }
    printf("{\"x\": %(x)d, \"per_op\": [");
    for (int r = 0; r < runs; r++) printf("%%s%%.9g", r ? ", " : "", body(n) / ((double)n * %(x)d));
    printf("]}\n");
    return 0;
}
"""


def program(x: int) -> str:
    """A C program timing a loop whose body is ``x`` dependent double multiplications."""
    body = "\n".join(
        f"        v = a{j % _OPERANDS} + x * zd; x = v * b{(j * 7) % _OPERANDS};" for j in range(x)
    )
    operands = "\n".join(
        f"    const double a{i} = A[{i}], b{i} = B[{i}];" for i in range(_OPERANDS)
    )
    return _SOURCE % {"NA": NA, "body": body, "x": x, "operands": operands}


@dataclass(frozen=True)
class CacheResult:
    size: int  # the last body size (operations) still at the in-cache time
    speedup: float  # out-of-cache time / in-cache time; 1.0 without a knee
    knee: bool
    note: str


def analyse(curve: Sequence[tuple[int, float]]) -> CacheResult:
    """Read the knee and the speedup from ``(x, seconds per operation)`` points."""
    pts = sorted(curve)
    if not pts:
        raise ValueError("no points on the cache curve")
    times = [t for _, t in pts]
    inside = min(times[: max(1, min(3, len(times)))])
    for i in range(1, len(pts)):
        if all(t > KNEE_RISE * inside for t in times[i:]):
            within = statistics.fmean(times[:i])
            beyond = statistics.fmean(times[i:])
            speed = beyond / within
            if speed > 1.0:
                return CacheResult(
                    pts[i - 1][0], speed, True,
                    f"knee after {counted(pts[i - 1][0], 'operation', grouped=False)}: "
                    f"{within:.3g} s in cache, "
                    f"{beyond:.3g} s beyond",
                )  # fmt: skip
    spread = max(times) / inside
    return CacheResult(
        pts[-1][0], 1.0, False,
        f"no knee up to {counted(pts[-1][0], 'operation', grouped=False)} (slowest point "
        f"{spread:.2f} x the "
        "fastest): this CPU runs the loop as fast out of the instruction cache as in it",
    )  # fmt: skip
