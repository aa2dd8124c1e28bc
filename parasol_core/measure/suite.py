"""A suite of small C programs of different character, for calibrating and validating a
measured model on code it did not measure (issue 34; docs/measure.md, "The program
suite").

Each program is one C function of a problem size ``n`` whose statements charge the
PARASOL operations they perform through ``C(op)`` (``CN(op, k)``: k of them), as the
report's validation programs do (:mod:`parasol_core.measure.validation`): built with
``-DCOUNT`` the program prints its counts (the instrumented build), built without it
the macro is empty and the program is timed. :data:`PROGRAMS` gives, for each, its
three problem sizes, the bytes of data it touches at a size (its working set) and its
counts as a closed formula, which ``tests/measure/test_suite.py`` checks against the
instrumented build.

How statements are charged (the convention of validation.py, report 3.1.9): an
assignment to a scalar is a store (``ils``, ``dls``); each array element referenced
(read or written) is an array index (``arr1``, ``arr2``) and an element written is a
store as well; each arithmetic operator its operation (integer ``^``, ``>>``, ``&``,
which Fortran 77 has not, as integer additions, the operation of the same unit and
cost); an ``if`` its compare; a loop ``loopi1`` on entry and ``loopoh1`` per iteration;
a call of ``sqrt``/``exp`` its intrinsic.

Chains (docs/measure.md, "Chains"): each program also declares its loop-carried
dependence chains, the operations whose result the next iteration of the loop needs
(``CH(k, op)``: one more ``op`` on chain k; the instrumented build prints them), as
``Program.chains`` gives them in closed form. The convention: a chain is counted in a
loop that runs at least :data:`CHAIN_MIN_TRIP` iterations each time it is entered (the
core overlaps the successive runs of a shorter loop, whose chain then hides in the
shadow of the next one's work); the loop's own counter is flow control, not a chain;
a block takes the longest of its chains.

A chain begun afresh (``s = 0`` before each dot product of matmul and rows) also says
how often (``CHS(k)``: chain k starts once more; ``"starts"`` among its counts): the
core runs the next runs of it beside the last, by its window, which ``measure`` fits on
the rows program (docs/measure.md, "Restarted chains").

Timing: each size is repeated until one timed run lasts the run length, and a
placement's figure is the minimum over the runs (the least disturbed run: on a shared
machine another process only ever adds time; the thread's CPU clock leaves most of it
out already); the program's time is the mean over the placements of its code
(:data:`PLACEMENTS`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field

from parasol_core.base import filelock, signals
from parasol_core.measure import toolchain

__all__ = [
    "CALIBRATION",
    "OPS_OF",
    "PLACEMENTS",
    "PROGRAMS",
    "VALIDATION",
    "Program",
    "SuiteRun",
    "run_suite",
    "source",
]


def _hash(i: int) -> int:
    """The data of the branchy program: a multiplicative hash of the index, 0..1023 (as
    the C ``H(i)``)."""
    return ((i * 2654435761) & 0xFFFFFFFF) >> 16 & 1023


def _count(**kw: float) -> dict[str, int]:
    return {k: int(v) for k, v in kw.items() if v}


CHAIN_MIN_TRIP = 16
"""A loop's chain counts when the loop runs at least this many iterations each time it
is entered (the convention of :mod:`suite`; docs/measure.md, "Chains")."""


def _none(n: int) -> list[dict[str, int]]:
    return []


def _matmul_chains(n: int) -> list[dict[str, int]]:
    # s = s + ..., the k loop, begun afresh (s = 0) for each of the n * n (i, j)
    return [_count(dla=n**3, starts=n * n)] if n >= CHAIN_MIN_TRIP else []


ROWS_TOTAL = 4096  # the rows program's inner iterations: 4096 / n dot products of n


def _rows_chains(n: int) -> list[dict[str, int]]:
    m = ROWS_TOTAL // n  # s = s + ..., begun afresh (s = 0) for each row
    return [_count(dla=m * n, starts=m)] if n >= CHAIN_MIN_TRIP else []


def _reduction_chains(n: int) -> list[dict[str, int]]:
    return [_count(dla=n)]  # s = s + x[i] * y[i]: the add waits for the add before


def _int_sum_chains(n: int) -> list[dict[str, int]]:
    return [_count(ila=n)]  # s = s + k (divide), s = s +- ... (branchy)


def _chase_chains(n: int) -> list[dict[str, int]]:
    return [_count(arr1=_CHASE_STEPS * n)]  # p = next[p]: each load's index is the last load


def _recurrence_chains(n: int) -> list[dict[str, int]]:
    return [_count(dln=n, dla=n), _count(ilm=n, ila=n)]  # x = x * c + d; k = k * a + b


def _triad(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, arr1=3 * n, dln=n, dla=n, dls=n)


def _matmul(n: int) -> dict[str, int]:
    return _count(loopi1=1 + n + n * n, loopoh1=n + n * n + n**3, dls=n * n + n**3 + n * n,
                  arr2=2 * n**3 + n * n, dln=n**3, dla=n**3)  # fmt: skip


def _rows(n: int) -> dict[str, int]:
    m = ROWS_TOTAL // n
    return _count(loopi1=1 + m, loopoh1=m + m * n, dls=m + m * n + m, arr1=2 * m * n + m,
                  dln=m * n, dla=m * n)  # fmt: skip


_SWEEPS = 4  # the stencil's sweeps (two there-and-back pairs)


def _stencil(n: int) -> dict[str, int]:
    it = _SWEEPS * (n - 2)
    return _count(loopi1=1 + _SWEEPS, loopoh1=_SWEEPS // 2 + it, arr1=4 * it, dla=2 * it,
                  dln=it, dls=it)  # fmt: skip


def _reduction(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, arr1=2 * n, dln=n, dla=n, dls=n + 1)


def _intbits(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, arr1=3 * n, ila=3 * n, ilm=n, ils=3 * n)


def _divide(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, arr1=5 * n, dld=n, dls=n, modi=n, ila=n,
                  ils=2 * n + 1)  # fmt: skip


_THRESHOLD = 512  # branchy: half the data is above it


def _branchy(n: int) -> dict[str, int]:
    taken = sum(1 for i in range(n) if _hash(i) > _THRESHOLD)
    return _count(loopi1=1, loopoh1=n, arr1=n + taken, llic=n, ila=n, ils=n + 1)


_CHASE_STEPS = 8  # steps of the pointer chase per element


def _chase(n: int) -> dict[str, int]:
    s = _CHASE_STEPS * n
    return _count(loopi1=1, loopoh1=s, arr1=s, ils=s + 1)


def _intrinsics(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, arr1=2 * n, sqrtd=n, expd=n, dln=n, dla=n, dls=n + 1)


def _recurrence(n: int) -> dict[str, int]:
    return _count(loopi1=1, loopoh1=n, dln=n, dla=n, dls=n + 2, ilm=n, ila=n, ils=n + 1)


_DEGREE = 8  # the polynomial's degree


def _poly(n: int) -> dict[str, int]:
    inner = _DEGREE * n
    return _count(loopi1=1 + n, loopoh1=n + inner, arr1=3 * n + inner, dls=3 * n + inner,
                  dln=inner, dla=inner)  # fmt: skip


@dataclass(frozen=True)
class Program:
    """One program of the suite."""

    name: str
    character: str  # what kind of code it stands for
    sizes: tuple[int, int, int]
    counts: Callable[[int], dict[str, int]]  # size -> operation -> executions
    working_set: Callable[[int], int]  # size -> bytes of data it touches
    statement: str  # its loop, as a reader would summarise it
    chains: Callable[[int], list[dict[str, int]]] = _none  # size -> its loop-carried chains


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("triad", "streaming", (2000, 8000, 32000), _triad, lambda n: 24 * n,
            "a[i] = b[i] + s * c[i]"),
    Program("matmul", "dense linear algebra", (16, 32, 64), _matmul, lambda n: 24 * n * n,
            "C = A B, n x n doubles, inner product loop", _matmul_chains),
    Program("rows", "restarted chains (short dot products)", (32, 64, 128), _rows,
            lambda n: 8 * (ROWS_TOTAL + n + ROWS_TOTAL // n),
            "s = s + A[r * n + k] * B[k], 4096 / n rows of n", _rows_chains),
    Program("stencil", "stencil", (1000, 4000, 16000), _stencil, lambda n: 16 * n,
            "b[i] = (a[i-1] + a[i] + a[i+1]) * c, four sweeps"),
    Program("reduction", "reduction", (2000, 8000, 32000), _reduction, lambda n: 16 * n,
            "s = s + x[i] * y[i]", _reduction_chains),
    Program("intbits", "integer and bit work", (2000, 8000, 32000), _intbits,
            lambda n: 8 * n, "x = a[i] ^ (a[i] >> 5); x = x * 2654435761; c[i] = x >> 16"),
    Program("divide", "division-heavy", (2000, 8000, 32000), _divide, lambda n: 32 * n,
            "c[i] = a[i] / b[i]; k = p[i] % q[i]; s = s + k", _int_sum_chains),
    Program("branchy", "branchy (data-dependent branch)", (2000, 8000, 32000), _branchy,
            lambda n: 4 * n, "if (a[i] > t) s = s + a[i]; else s = s - 1", _int_sum_chains),
    Program("chase", "pointer chasing", (512, 2048, 8192), _chase, lambda n: 4 * n,
            "p = next[p], a random cycle", _chase_chains),
    Program("intrinsics", "intrinsics", (1000, 4000, 16000), _intrinsics, lambda n: 16 * n,
            "s = s + sqrt(a[i]) * exp(b[i])", _reduction_chains),
    Program("recurrence", "dependent recurrences", (2000, 8000, 32000), _recurrence,
            lambda n: 0, "x = x * c + d; k = k * 1103515245 + 12345", _recurrence_chains),
    Program("poly", "polynomial evaluation (Horner)", (1000, 4000, 16000), _poly,
            lambda n: 16 * n + 8 * (_DEGREE + 1), "p = p * x[i] + c[k], degree 8, each x[i]"),
)}  # fmt: skip
"""The suite, by name."""

OPS_OF: dict[str, frozenset[str]] = {
    n: frozenset(p.counts(p.sizes[0])) for n, p in PROGRAMS.items()
}
"""The operations each program counts (a program is run only when all are measured)."""

CALIBRATION: tuple[str, ...] = ("triad", "reduction", "recurrence", "intrinsics", "chase",
                                 "intbits", "rows")  # fmt: skip
"""The programs `measure` calibrates on (docs/measure.md says why these)."""
VALIDATION: tuple[str, ...] = tuple(n for n in PROGRAMS if n not in CALIBRATION)
"""The programs `measure --validate` predicts: none was used to calibrate."""

OPS = ("loopi1", "loopoh1", "arr1", "arr2", "dla", "dln", "dld", "dls", "ila", "ilm",
       "ils", "modi", "llic", "sqrtd", "expd")  # fmt: skip

_MAXN = 64  # matmul's largest n
_MAX = 32000  # the longest array

_SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { %(enum)s, NOPS };
static const char *names[NOPS] = { %(names)s };
#define NCHAINS 2
#define CHAIN_MIN %(chain_min)d
#ifdef COUNT
static long long cnt[NOPS], chn[NCHAINS][NOPS], chs[NCHAINS];
#define C(op) (cnt[op]++)
#define CN(op, k) (cnt[op] += (k))
#define CH(k, op) (chn[k][op]++)
#define CHS(k) (chs[k]++)
#else
#define C(op) ((void)0)
#define CN(op, k) ((void)0)
#define CH(k, op) ((void)0)
#define CHS(k) ((void)0)
#endif
/* Placement (PLACEMENTS): each program starts on a 64-byte boundary and then skips
   PLACE_AT bytes of no-operations, so that the timed builds put its loops at each of
   the four places a 16-byte aligned loop can start in a 64-byte block of code. */
#ifndef PLACE_AT
#define PLACE_AT 0
#endif
#define PLACE_STR2(x) #x
#define PLACE_STR(x) PLACE_STR2(x)
#if PLACE_AT == 0
#define PLACE() ((void)0)
#elif defined(__x86_64__) || defined(__i386__)
#define PLACE() __asm__ volatile(".nops " PLACE_STR(PLACE_AT))
#else
#error "placements other than 0 are built on x86 only"
#endif
#define NOINLINE __attribute__((noinline, aligned(64)))
#define MAXN %(maxn)d
#define MAX %(max)d
#define H(i) ((((uint32_t)(i) * 2654435761u) >> 16) & 1023u)

static double A[MAX], B[MAX], Cc[MAX];
static int IA[MAX], IB[MAX], IC[MAX];
static unsigned UA[MAX], UC[MAX];
static double M1[MAXN][MAXN], M2[MAXN][MAXN], M3[MAXN][MAXN];
static double POLY[%(degree)d + 1];
static volatile double vs = 0.5, vd = 0.25, vthird = 1.0 / 3.0;
static volatile double sink_d;
static volatile long sink_l;
static volatile int vsize;

static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (double)(rs >> 11) / 9007199254740992.0; }

/* streaming */
NOINLINE static double triad(int n) {
    PLACE();
    double s = vs;
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        A[i] = B[i] + s * Cc[i]; CN(ARR1, 3); C(DLN); C(DLA); C(DLS);
    }
    return A[n / 2];
}

/* dense */
NOINLINE static double matmul(int n) {
    PLACE();
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1); C(LOOPI1);
        for (int j = 0; j < n; j++) {
            C(LOOPOH1);
            double s = 0; C(DLS);
            if (n >= CHAIN_MIN) CHS(0);
            C(LOOPI1);
            for (int k = 0; k < n; k++) {
                C(LOOPOH1);
                s = s + M1[i][k] * M2[k][j]; CN(ARR2, 2); C(DLN); C(DLA); C(DLS);
                if (n >= CHAIN_MIN) CH(0, DLA);
            }
            M3[i][j] = s; C(ARR2); C(DLS);
        }
    }
    return M3[n / 2][n / 3];
}

/* restarted chains: 4096 / n dot products of n, each chain begun afresh */
NOINLINE static double rows(int n) {
    PLACE();
    const int m = %(rows_total)d / n;
    C(LOOPI1);
    for (int r = 0; r < m; r++) {
        C(LOOPOH1);
        double s = 0; C(DLS);
        if (n >= CHAIN_MIN) CHS(0);
        C(LOOPI1);
        for (int k = 0; k < n; k++) {
            C(LOOPOH1);
            s = s + A[r * n + k] * B[k]; CN(ARR1, 2); C(DLN); C(DLA); C(DLS);
            if (n >= CHAIN_MIN) CH(0, DLA);
        }
        Cc[r] = s; C(ARR1); C(DLS);
    }
    return Cc[m / 2];
}

/* stencil: there and back, SWEEPS / 2 times */
NOINLINE static double stencil(int n) {
    PLACE();
    const double c = vthird; /* an average: the values stay where they are (no denormals) */
    C(LOOPI1);
    for (int t = 0; t < %(sweeps)d / 2; t++) {
        C(LOOPOH1); C(LOOPI1);
        for (int i = 1; i < n - 1; i++) {
            C(LOOPOH1);
            B[i] = (A[i - 1] + A[i] + A[i + 1]) * c; CN(ARR1, 4); CN(DLA, 2); C(DLN); C(DLS);
        }
        C(LOOPI1);
        for (int i = 1; i < n - 1; i++) {
            C(LOOPOH1);
            A[i] = (B[i - 1] + B[i] + B[i + 1]) * c; CN(ARR1, 4); CN(DLA, 2); C(DLN); C(DLS);
        }
    }
    return A[n / 2];
}

/* reduction */
NOINLINE static double reduction(int n) {
    PLACE();
    double s = 0; C(DLS);
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        s = s + A[i] * B[i]; CN(ARR1, 2); C(DLN); C(DLA); C(DLS); CH(0, DLA);
    }
    return s;
}

/* integer and bit work */
NOINLINE static double intbits(int n) {
    PLACE();
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        unsigned x = UA[i] ^ (UA[i] >> 5); CN(ARR1, 2); CN(ILA, 2); C(ILS);
        x = x * 2654435761u; C(ILM); C(ILS);
        UC[i] = x >> 16; C(ARR1); C(ILA); C(ILS);
    }
    return (double)UC[n / 2];
}

/* division-heavy */
NOINLINE static double divide(int n) {
    PLACE();
    int s = 0; C(ILS);
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        Cc[i] = A[i] / B[i]; CN(ARR1, 3); C(DLD); C(DLS);
        int k = IA[i] %% IB[i]; CN(ARR1, 2); C(MODI); C(ILS);
        s = s + k; C(ILA); C(ILS); CH(0, ILA);
    }
    return Cc[n / 2] + s;
}

/* branchy: IC[i] = H(i), half above the threshold in no pattern a predictor learns */
NOINLINE static double branchy(int n) {
    PLACE();
    int s = 0; C(ILS);
    const int t = %(threshold)d;
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        C(ARR1); C(LLIC);
        if (IC[i] > t) { s = s + IC[i]; C(ARR1); C(ILA); C(ILS); CH(0, ILA); }
        else { s = s - 1; C(ILA); C(ILS); CH(0, ILA); }
    }
    return s;
}

/* pointer chasing: IB holds one random cycle through 0..n-1 */
NOINLINE static double chase(int n) {
    PLACE();
    int p = 0; C(ILS);
    long steps = (long)%(chase)d * n;
    C(LOOPI1);
    for (long i = 0; i < steps; i++) {
        C(LOOPOH1);
        p = IB[p]; C(ARR1); C(ILS); CH(0, ARR1);
    }
    return p;
}

/* intrinsics */
NOINLINE static double intrinsics(int n) {
    PLACE();
    double s = 0; C(DLS);
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        s = s + sqrt(A[i]) * exp(B[i]); CN(ARR1, 2); C(SQRTD); C(EXPD); C(DLN); C(DLA); C(DLS);
        CH(0, DLA);
    }
    return s;
}

/* dependent recurrences */
NOINLINE static double recurrence(int n) {
    PLACE();
    double x = vs, c = vd; CN(DLS, 2);
    unsigned k = (unsigned)n; C(ILS);
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        x = x * c + 0.5; C(DLN); C(DLA); C(DLS); CH(0, DLN); CH(0, DLA);
        k = k * 1103515245u + 12345u; C(ILM); C(ILA); C(ILS); CH(1, ILM); CH(1, ILA);
    }
    return x + k;
}

/* polynomial evaluation */
NOINLINE static double poly(int n) {
    PLACE();
    C(LOOPI1);
    for (int i = 0; i < n; i++) {
        C(LOOPOH1);
        double x = A[i]; C(ARR1); C(DLS);
        double p = POLY[%(degree)d]; C(ARR1); C(DLS);
        C(LOOPI1);
        /* p's chain runs %(degree)d iterations, fewer than CHAIN_MIN: not counted (the
           core overlaps the polynomials of successive x[i]) */
        for (int k = %(degree)d - 1; k >= 0; k--) {
            C(LOOPOH1);
            p = p * x + POLY[k]; C(ARR1); C(DLN); C(DLA); C(DLS);
        }
        B[i] = p; C(ARR1); C(DLS);
    }
    return B[n / 2];
}

typedef double (*prog_fn)(int);
static const struct { const char *name; prog_fn f; } progs[] = {
%(table)s
};

static void fill(void) {
    for (int i = 0; i < MAX; i++) {
        A[i] = 0.5 + rnd(); B[i] = 0.5 + rnd(); Cc[i] = rnd();
        IA[i] = (int)(rnd() * 2e9 - 1e9); IB[i] = 1 + (int)(rnd() * 40000);
        IC[i] = (int)H(i); UA[i] = (unsigned)(rnd() * 4294967295.0);
    }
    for (int i = 0; i < MAXN; i++)
        for (int j = 0; j < MAXN; j++) { M1[i][j] = rnd(); M2[i][j] = rnd(); }
    for (int k = 0; k <= %(degree)d; k++) POLY[k] = rnd() - 0.5;
}

/* IB as one random cycle of length n (Sattolo), for the chase; IB is refilled for
   divide afterwards (1..40000) */
static void cycle(int n) {
    for (int i = 0; i < n; i++) IB[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd() * i); int t = IB[i]; IB[i] = IB[j]; IB[j] = t;
    }
}

int main(int argc, char **argv) {
    /* argv: PROGRAM RUNS NEED_SECONDS SIZE... */
    if (argc < 5) { fprintf(stderr, "usage: %%s PROGRAM RUNS SECONDS SIZE...\n", argv[0]); return 2; }
    prog_fn f = 0;
    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++)
        if (strcmp(progs[p].name, argv[1]) == 0) f = progs[p].f;
    if (!f) { fprintf(stderr, "no program %%s\n", argv[1]); return 2; }
    int runs = atoi(argv[2]);
    double need = atof(argv[3]);
    fill();
    for (int a = 4; a < argc; a++) {
        int size = atoi(argv[a]);
        if (size < 3 || size > (f == matmul ? MAXN : MAX)) { fprintf(stderr, "size %%d out of range\n", size); return 2; }
        if (f == chase) cycle(size);
#ifdef COUNT
        memset(cnt, 0, sizeof cnt);
        memset(chn, 0, sizeof chn);
        memset(chs, 0, sizeof chs);
        sink_d = f(size);
        printf("{\"size\": %%d, \"counts\": {", size);
        for (int i = 0; i < NOPS; i++) printf("%%s\"%%s\": %%lld", i ? ", " : "", names[i], cnt[i]);
        printf("}, \"chains\": [");
        for (int k = 0; k < NCHAINS; k++) {
            printf("%%s{", k ? ", " : "");
            for (int i = 0; i < NOPS; i++) printf("%%s\"%%s\": %%lld", i ? ", " : "", names[i], chn[k][i]);
            printf(", \"starts\": %%lld}", chs[k]);
        }
        printf("]}\n");
#else
        long reps = 1;
        for (;;) {
            double t0 = now_s();
            for (long k = 0; k < reps; k++) { vsize = size; sink_d = f(vsize); }
            if (now_s() - t0 >= need || reps > (1L << 30)) break;
            reps *= 2;
        }
        printf("{\"size\": %%d, \"repeats\": %%ld, \"seconds\": [", size, reps);
        for (int r = 0; r < runs; r++) {
            double t0 = now_s();
            for (long k = 0; k < reps; k++) { vsize = size; sink_d = f(vsize); }
            printf("%%s%%.9g", r ? ", " : "", (now_s() - t0) / reps);
        }
        printf("]}\n");
#endif
        fflush(stdout);
    }
    return 0;
}
"""


def source() -> str:
    """The suite's C source (one program; the first argument names the kernel)."""
    return _SOURCE % {
        "enum": ", ".join(op.upper() for op in OPS),
        "names": ", ".join(f'"{op}"' for op in OPS),
        "maxn": _MAXN,
        "max": _MAX,
        "degree": _DEGREE,
        "sweeps": _SWEEPS,
        "threshold": _THRESHOLD,
        "chase": _CHASE_STEPS,
        "chain_min": CHAIN_MIN_TRIP,
        "rows_total": ROWS_TOTAL,
        "table": ",\n".join(f'    {{"{n}", {n}}}' for n in PROGRAMS),
    }


PLACEMENTS: tuple[int, ...] = (0, 16, 32, 48)
"""Where the timed builds place the programs' code: bytes of no-operations after each
program's 64-byte aligned start (``PLACE_AT``). gcc aligns a loop to 16 bytes at -O2, so
a loop starts at one of four places in a 64-byte block of code, and which one the
compiler and linker happen to give changes the time of a tight loop by up to 1.6x on
the AMD EPYC of docs/measure.md ("Where a loop lands"): one build times one arbitrary
place. A program's time is the mean over the four (the time of the program wherever its
code lands), each the least of its runs there. On a processor other than x86 the builds
other than 0 are not made (the no-operations are x86's) and the time is that of one."""


@dataclass(frozen=True)
class SuiteRun:
    """One program at one size: its counts and its measured time (seconds per run of
    the program: the mean over the placements of the least run at each, and every
    run)."""

    program: str
    size: int
    counts: dict[str, int]
    seconds: float
    runs: tuple[float, ...] = field(default=(), compare=False)
    chains: tuple[dict[str, int], ...] = ()  # its loop-carried chains (instrumented)
    # the least run at each placement timed (PLACEMENTS), in their order
    placed: tuple[float, ...] = field(default=(), compare=False)


def run_suite(
    cc: Sequence[str],
    flags: Sequence[str],
    programs: Sequence[str] = tuple(PROGRAMS),
    runs: int = 5,
    need: float = 0.02,
    cancel: threading.Event | None = None,
    on_step: Callable[[str], None] | None = None,
    sizes: Mapping[str, Sequence[int]] | None = None,
    on_idle: Callable[[], None] | None = None,
    passes: int = 1,
    placements: Sequence[int] = PLACEMENTS,
) -> list[SuiteRun]:
    """Build the suite (counted, and timed once per placement of its code) with
    ``flags`` and run ``programs`` at their three sizes (or ``sizes[name]``): one
    :class:`SuiteRun` per program and size.

    ``placements`` (:data:`PLACEMENTS`): each program is timed in a build that places
    its code there, a process of its own for each; a size's time is the mean over the
    placements of the least run at each (where the builds other than 0 cannot be made,
    off x86, placement 0 alone). ``passes``: every placement that many times over; each
    (pass, placement) is a pass over the programs (every program once, then the next
    placement), so a program's processes lie apart in time, and the least run at a
    placement is taken over every pass. A process has an address layout and a state of
    the predictors of its own, and a few seconds of a shared machine can be slow for
    every process at once: two measurements a minute apart timed one pass each differed
    by up to 14 % in a program, and a validation whose four placements of a program ran
    one after the other found it 1.7x slower (docs/measure.md, "The program suite",
    "Where a loop lands")."""
    if passes < 1:
        raise ValueError(f"passes: at least 1, not {passes}")
    if not placements or any(not 0 <= p <= 4096 for p in placements):
        raise ValueError(f"placements: from 0 to 4096 bytes, at least one, not {placements!r}")
    out: list[SuiteRun] = []
    held = build = None
    try:
        with signals.deferred():  # made and known as one step: a signal never leaks it
            held, build = filelock.temporary_directory("parasol-suite-")
        src = build / "suite.c"
        src.write_text(source())
        if on_step is not None:
            on_step("compiling the program suite")
        toolchain.compile_c(cc, src, build / "counted", [*flags, "-DCOUNT"], cancel)
        built = []
        for at in dict.fromkeys(placements):
            try:
                toolchain.compile_c(cc, src, build / f"timed{at}", [*flags, f"-DPLACE_AT={at}"],
                                    cancel)  # fmt: skip
            except RuntimeError:
                if at == 0:
                    raise
                continue  # not x86: the no-operations that place the code are x86's
            built.append(at)
        if not built:
            toolchain.compile_c(cc, src, build / "timed0", list(flags), cancel)
            built = [0]
        counts: dict[tuple[str, int], dict[str, int]] = {}
        chains: dict[tuple[str, int], tuple[dict[str, int], ...]] = {}
        # in the programs' and sizes' order: every run, and the least at each placement
        timed: dict[tuple[str, int], list[float]] = {}
        least: dict[tuple[str, int], dict[int, float]] = {}
        sizes_of = {name: [str(s) for s in (sizes or {}).get(name, PROGRAMS[name].sizes)]
                    for name in programs}  # fmt: skip
        for name in programs:
            argv = [str(build / "counted"), name, "1", "0", *sizes_of[name]]
            with closing(toolchain.run_lines(argv, cancel, on_idle)) as lines:
                for line in lines:
                    d = json.loads(line)
                    key = (name, d["size"])
                    counts[key] = {k: v for k, v in d["counts"].items() if v}
                    chains[key] = tuple(c for c in ({k: v for k, v in ch.items() if v}
                                                    for ch in d["chains"]) if c)  # fmt: skip
                    timed[key] = []
                    least[key] = {}
        rounds = [at for _ in range(passes) for at in built]  # each pass, each placement
        for k, at in enumerate(rounds):
            for name in programs:
                if on_step is not None:
                    again = f", pass {k + 1} of {len(rounds)}" if len(rounds) > 1 else ""
                    on_step(f"program suite: {name} ({PROGRAMS[name].character}{again})")
                argv = [str(build / f"timed{at}"), name, str(runs), repr(need), *sizes_of[name]]
                with closing(toolchain.run_lines(argv, cancel, on_idle)) as lines:
                    for line in lines:
                        d = json.loads(line)
                        key = (name, d["size"])
                        secs = [float(s) for s in d["seconds"]]
                        timed[key].extend(secs)
                        least[key][at] = min([least[key].get(at, math.inf), *secs])
        for (name, size), secs in timed.items():
            placed = tuple(least[(name, size)][at] for at in built)
            out.append(SuiteRun(name, size, counts[(name, size)], math.fsum(placed) / len(placed),
                                tuple(secs), chains[(name, size)], placed))  # fmt: skip
    finally:
        if build is not None:
            shutil.rmtree(build, ignore_errors=True)
        if held is not None:
            os.close(held)
    return out
