"""Memory levels: the time of an array reference against the size of the data it
touches (the growing-array curve), and the time at each cache level and memory.

The program chases a pointer through an array of ``bytes`` bytes, one element per
64-byte line in a random cyclic order (each load's address comes from the previous
load: the latency of a reference, which a prefetcher cannot guess), and prints the
seconds per reference over several runs; the figure of a size is the minimum (the
least disturbed run). The sizes of the cache levels come from the operating system
(``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}``: data and unified
caches); where it gives none, they are read from the curve (a level ends where the time
per reference rises by more than :data:`STEP_RISE` from one size to the next).

A level's time is the curve's point at the largest size that is at most half the
level's size and larger than the level below (the data fits the level, not the one
below it); memory is the point at the largest size past four times the last level, if
the curve reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from parasol_core.base.words import counted

__all__ = [
    "CACHE_DIR",
    "FULL_SIZES",
    "QUICK_SIZES",
    "Level",
    "cache_levels",
    "levels_from_curve",
    "program",
]

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
LINE = 64
STEP_RISE = 1.4
FULL_SIZES = tuple(1 << k for k in range(12, 27))  # 4 KiB .. 64 MiB
QUICK_SIZES = tuple(1 << k for k in range(12, 25, 2))  # 4 KiB .. 16 MiB, every 4x


@dataclass(frozen=True)
class Level:
    """A cache level or memory: its size in bytes (None for memory) and the seconds of
    one array reference with the working set in it (None where the curve did not
    reach it)."""

    name: str  # "L1", "L2", ..., "memory"
    size: int | None
    seconds: float | None
    curve_bytes: int | None = None  # the curve point the time comes from


def _parse_size(text: str) -> int | None:
    m = re.fullmatch(r"\s*([0-9]+)\s*([KMG]?)\s*B?\s*", text, re.I)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]


def cache_levels(directory: Path = CACHE_DIR) -> list[tuple[str, int]]:
    """(name, bytes) of the data and unified caches the OS describes, by level; [] where
    it describes none (no such directory, another OS)."""
    out: dict[int, int] = {}
    try:
        entries = sorted(directory.glob("index*"))
    except OSError:
        return []
    for d in entries:
        try:
            kind = (d / "type").read_text().strip()
            level = int((d / "level").read_text().strip())
            size = _parse_size((d / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size:
            out[level] = max(out.get(level, 0), size)
    return [(f"L{lv}", out[lv]) for lv in sorted(out)]


def _knees(curve: Sequence[tuple[int, float]]) -> list[tuple[str, int]]:
    """Levels read from the curve where the OS gives none: a level ends at the last size
    before a rise of more than STEP_RISE."""
    pts = sorted(curve)
    out = []
    for (b0, t0), (_b1, t1) in zip(pts, pts[1:]):
        if t0 > 0 and t1 / t0 > STEP_RISE:
            out.append((f"L{len(out) + 1}", b0 * 2))  # the point fits in half the level
    return out


def levels_from_curve(
    curve: Sequence[tuple[int, float]], caches: Sequence[tuple[str, int]] | None = None
) -> tuple[list[Level], str]:
    """The time of a reference at each level (and memory) from ``curve`` (bytes,
    seconds per reference); ``caches`` (name, bytes) from the OS, or None to read them
    from the curve. Returns the levels and a sentence saying where the sizes came from."""
    pts = sorted(curve)
    if not pts:
        raise ValueError("no points on the memory curve")
    if caches:
        source = "cache sizes from " + str(CACHE_DIR)
    else:
        caches = _knees(pts)
        source = f"cache sizes read from the curve (rises of more than {STEP_RISE}x)"
    levels = []
    below = 0
    for name, size in caches:
        fit = [(b, t) for b, t in pts if below < b <= size // 2]
        if fit:
            b, t = fit[-1]
            levels.append(Level(name, size, t, b))
        else:
            levels.append(Level(name, size, None))
        below = size
    beyond = [(b, t) for b, t in pts if b > 4 * below]
    if beyond:
        levels.append(Level("memory", None, beyond[-1][1], beyond[-1][0]))
    else:
        levels.append(Level("memory", None, None))
    return levels, source


_SOURCE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define LINE %(line)d
static volatile uint64_t v_seed = 0x9E3779B97F4A7C15ull;
static volatile long sink;
static uint64_t s;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
/* argv: RUN_SECONDS RUNS BYTES... ; one JSON line per size */
int main(int argc, char **argv) {
    double need = atof(argv[1]);
    int runs = atoi(argv[2]);
    s = v_seed;
    for (int a = 3; a < argc; a++) {
        long bytes = atol(argv[a]);
        long n = bytes / LINE;
        if (n < 2) n = 2;
        char *buf = aligned_alloc(LINE, (size_t)n * LINE);
        long *order = malloc(sizeof(long) * (size_t)n);
        if (!buf || !order) { fprintf(stderr, "cannot allocate %%ld bytes\n", bytes); return 2; }
        for (long i = 0; i < n; i++) order[i] = i;
        for (long i = n - 1; i > 0; i--) { long j = (long)(rnd() %% (uint64_t)i); long t = order[i]; order[i] = order[j]; order[j] = t; }
        for (long i = 0; i < n; i++) *(char **)(buf + order[i] * LINE) = buf + order[(i + 1) %% n] * LINE;
        free(order);
        char **p = (char **)buf;
        long steps = n > 1024 ? n : 1024;
        for (;;) {  /* warm the level, and find a run of at least NEED seconds */
            double t0 = now_s();
            for (long i = 0; i < steps; i++) p = (char **)*p;
            if (now_s() - t0 >= need || steps > (1L << 36)) break;
            steps *= 2;
        }
        printf("{\"bytes\": %%ld, \"per_ref\": [", bytes);
        for (int r = 0; r < runs; r++) {
            double t0 = now_s();
            for (long i = 0; i < steps; i++) p = (char **)*p;
            printf("%%s%%.9g", r ? ", " : "", (now_s() - t0) / (double)steps);
        }
        printf("]}\n");
        fflush(stdout);
        sink = (long)p;
        free(buf);
    }
    return 0;
}
"""


def program() -> str:
    """The C source of the growing-array curve (sizes on its command line)."""
    return _SOURCE % {"line": LINE}


def annotation(level: Level, source: str) -> str:
    """The model file's comment line for ``level``, in the form
    :func:`parasol_core.analysis.block_time.read_memory_levels` reads back."""
    size = (
        f"{counted(level.size, 'byte', grouped=False)}"
        if level.size is not None
        else "beyond the caches"
    )
    t = f"{level.seconds:.4g} s" if level.seconds is not None else "not measured"
    point = counted(level.curve_bytes, "byte", grouped=False)
    where = f" (curve point {point}; {source})" if level.curve_bytes else f" ({source})"
    return f"memory level {level.name}: {size}, {t} per array reference{where}"
