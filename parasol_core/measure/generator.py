"""C benchmark programs generated from one skeleton (report 4.2.3: "all the benchmark
routines ... can be generated from one main skeleton").

:func:`program` writes one C program for a group of kernels. For each kernel it has a
control loop function and a test loop function, identical but for the step templates
of :mod:`parasol_core.measure.kernels`, unrolled ``kernel.unroll`` times. ``main``
reads the run length and the number of runs from its arguments, measures the timer,
and then, kernel by kernel: calibrates the iteration count until a control run lasts at
least ``max(run seconds, min ticks x tick)``, and runs control and test alternately
``runs`` times, printing one JSON line per kernel. The Python side reads the lines as
they come (progress) and does the statistics.

How the measured operation survives the optimiser: its operands come from arrays filled
at run time by a generator seeded from a volatile (nothing to fold); its result feeds
the next step through an opaque zero read from a volatile (the operation cannot be
removed or moved out of the loop) and the last result goes to a volatile sink (the
chain is live). ``tests/test_measure_generator.py`` compiles kernels to assembly at the
chosen flags and checks that the test loop holds the operation and the control loop
does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from parasol_core.measure.kernels import Kernel

__all__ = ["NA", "program", "expand"]

NA = 1024  # operand array length: fits the first-level data cache for every type

_HEADER = r"""
#define _GNU_SOURCE
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef float _Complex cplx;
#define NA %(NA)d
#define BARRIER() __asm__ volatile("" ::: "memory")
#define EXPOSE(var) __asm__ volatile("" :: "r"(&(var)) : "memory")
#define LOOPBODY(k) __asm__ volatile("")
/* An empty asm that claims to change its operand: the value stays where it is, but the
   compiler no longer knows it (no folding of a conversion round trip, no branch on a flag). */
/* USE: the value is needed in a register (the control step loads what the test uses). */
#if defined(__x86_64__) || defined(__i386__)
#define OPQ_I(r) __asm__("" : "+r"(r))
#define OPQ_F(r) __asm__("" : "+x"(r))
#define USE_I(r) __asm__ volatile("" :: "r"(r))
#define USE_F(r) __asm__ volatile("" :: "x"(r))
#elif defined(__aarch64__)
#define OPQ_I(r) __asm__("" : "+r"(r))
#define OPQ_F(r) __asm__("" : "+w"(r))
#define USE_I(r) __asm__ volatile("" :: "r"(r))
#define USE_F(r) __asm__ volatile("" :: "w"(r))
#else
#define OPQ_I(r) __asm__("" : "+g"(r))
#define OPQ_F(r) __asm__("" : "+g"(r))
#define USE_I(r) __asm__ volatile("" :: "g"(r))
#define USE_F(r) __asm__ volatile("" :: "g"(r))
#endif
static inline float opq_f(float a) { OPQ_F(a); return a; }
#if defined(__clang__)
#define NOINLINE __attribute__((noinline, used))
#else
#define NOINLINE __attribute__((noinline, noclone, used))
#endif

static volatile int vzero_i = 0, v_one = 1, v_step = 3, v_m32 = 32, v_m64 = 64;
static volatile float vzero_f = 0.0f;
static volatile double vzero_d = 0.0;
static volatile uint64_t v_seed = 0x9E3779B97F4A7C15ull;
static volatile int sink_i;
static volatile float sink_f;
static volatile double sink_d;
static uint64_t rng_state;

static double rnd(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static int irnd(int lo, int hi) { return lo + (int)(rnd() * ((double)hi - lo + 1)); }
static cplx crnd(void) { float re = (float)(rnd() * 2 - 1); return CMPLXF(re, (float)(rnd() * 2 - 1)); }
static int nz(int i) { return i ? i : 1; }
static cplx cnz(cplx c) { return cabsf(c) < 0.1f ? CMPLXF(0.5f, 0.5f) : c; }
static inline int ipow(int base, int e) {
    unsigned r = 1, b = (unsigned)base;
    while (e > 0) { if (e & 1) r *= b; b *= b; e >>= 1; }
    return (int)r;
}
struct block256 { int w[64]; };
static void fill_block(struct block256 *b) { for (int i = 0; i < 64; i++) b->w[i] = irnd(0, 9); }
static NOINLINE int callee(int v) { __asm__ volatile("" : "+r"(v)); return v; }
static NOINLINE int callee_args(int v, struct block256 b) {
    __asm__ volatile("" : "+r"(v) : "m"(b)); return v;
}
static void sink_int(int x) { sink_i = x; }
static void sink_float(float x) { sink_f = x; }
static void sink_double(double x) { sink_d = x; }
static void sink_cplx(cplx x) { sink_f = crealf(x) + cimagf(x); }

#ifdef FAKE_TICK_NS
/* A coarse timer for tests: the clock read in whole ticks of FAKE_TICK_NS. */
static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    long long ns = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
    return (double)(ns - ns %% FAKE_TICK_NS) * 1e-9;
}
static double timer_res(void) { return FAKE_TICK_NS * 1e-9; }
#else
/* The thread's CPU time, like the report's user time (etime, 4.2.2 "Distortion by
   Parallel Activity"): while another process has the CPU, the clock stops. */
#define CLOCK CLOCK_THREAD_CPUTIME_ID
static double now_s(void) {
    struct timespec t; clock_gettime(CLOCK, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double timer_res(void) {
    struct timespec r; clock_getres(CLOCK, &r);
    return (double)r.tv_sec + (double)r.tv_nsec * 1e-9;
}
#endif

/* The smallest non-zero step between two readings of the clock: the tick as a program
   sees it (the reported resolution, or the cost of reading the clock if larger). */
static double timer_tick(void) {
    double best = 1.0, start = now_s();
    for (int i = 0; i < 2000 && (i < 20 || now_s() - start < 0.05); i++) {
        double a = now_s(), b;
        do b = now_s(); while (b == a);
        if (b - a < best) best = b - a;
    }
    double res = timer_res();
    return best > res ? best : res;
}

typedef double (*loop_fn)(long);
struct kernel { const char *name; loop_fn ctl, test; long per_iter; };
"""

_FUNCTION = r"""
static NOINLINE double k_%(id)s_%(which)s(long n) {
    const int zi = vzero_i; const float zf = vzero_f; const double zd = vzero_d;
    const int one = v_one, step = v_step, m32 = v_m32, m64 = v_m64;
    (void)zi; (void)zf; (void)zd; (void)one; (void)step; (void)m32; (void)m64;
%(chain)s%(locals)s
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        const long b = (i * %(unroll)d) & (NA - 1);
        (void)b;
%(body)s
    }
    double t1 = now_s();
%(sink)s
    return t1 - t0;
}
"""

_MAIN = r"""
static void fill(void) {
    rng_state = v_seed;
%(fills)s
}

static const struct kernel kernels[] = {
%(table)s
};

static int wanted(const char *name, int argc, char **argv) {
    if (argc <= 4) return 1;
    for (int i = 4; i < argc; i++) if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %%s RUN_SECONDS RUNS MIN_TICKS [KERNEL...]\n", argv[0]); return 2; }
    double run_s = atof(argv[1]);
    int runs = atoi(argv[2]);
    double min_ticks = atof(argv[3]);
    fill();
    double tick = timer_tick();
    printf("{\"timer\": {\"clock\": \"CLOCK_THREAD_CPUTIME_ID\", \"resolution\": %%.9g, \"tick\": %%.9g}}\n",
           timer_res(), tick);
    fflush(stdout);
    double need = run_s > min_ticks * tick ? run_s : min_ticks * tick;
    printf("{\"need\": %%.9g}\n", need);
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        const struct kernel *K = &kernels[k];
        if (!wanted(K->name, argc, argv)) continue;
        printf("{\"start\": \"%%s\"}\n", K->name);
        fflush(stdout);
        /* The test loop (the longer) lasts the run length, the control loop at least
           MIN_TICKS ticks. */
        long n = 16;
        for (;;) {
            double t = K->test(n);
            if ((t >= need && K->ctl(n) >= min_ticks * tick) || n > (1L << 40)) break;
            n *= (t > need / 16) ? 2 : 16;
        }
        printf("{\"name\": \"%%s\", \"iterations\": %%ld, \"per_iter\": %%ld, \"ctl\": [",
               K->name, n, K->per_iter);
        double *c = malloc(sizeof(double) * runs), *t = malloc(sizeof(double) * runs);
        for (int r = 0; r < runs; r++) {
            if (r & 1) { t[r] = K->test(n); c[r] = K->ctl(n); }
            else { c[r] = K->ctl(n); t[r] = K->test(n); }
        }
        for (int r = 0; r < runs; r++) printf("%%s%%.9g", r ? ", " : "", c[r]);
        printf("], \"test\": [");
        for (int r = 0; r < runs; r++) printf("%%s%%.9g", r ? ", " : "", t[r]);
        printf("]}\n");
        fflush(stdout);
        free(c); free(t);
    }
    printf("{\"done\": true}\n");
    return 0;
}
"""

_ARRAY_TOKEN = re.compile(r"\$(A|B|K|I[0-9])(?![A-Za-z0-9_])")


def _ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def expand(template: str, kernel: Kernel, j: int) -> str:
    """One step of ``kernel``: the template with its tokens replaced for step ``j``."""
    kid = _ident(kernel.name)
    text = _ARRAY_TOKEN.sub(lambda m: f"k{m.group(1)}_{kid}[b + {j}]", template)
    text = text.replace("$G", f"g_{kid}_").replace("$L", "l_")
    return text.replace("$j", str(j))


def _declarations(kernel: Kernel) -> str:
    kid = _ident(kernel.name)
    out = [f"static {ctype} k{tok}_{kid}[NA];" for tok, ctype, _ in kernel.arrays]
    if kernel.globals_:
        g = expand(kernel.globals_, kernel, 0)
        out.append(g if g.startswith("static") else g)
    return "\n".join(out)


def _fills(kernel: Kernel) -> str:
    kid = _ident(kernel.name)
    lines = [
        f"    for (int i = 0; i < NA; i++) k{tok}_{kid}[i] = ({ctype})({fill});"
        for tok, ctype, fill in kernel.arrays
    ]
    fg = kernel.extra.get("fill_global")
    if fg:
        var, ctype, fill, count = fg
        var = expand(var, kernel, 0)
        lines.append(
            f"    {{ {ctype} *p = ({ctype} *){var}; "
            f"for (int i = 0; i < {count}; i++) p[i] = ({ctype})({fill}); }}"
        )
    if kernel.globals_ and not fg:
        pass
    return "\n".join(lines)


_CHAIN_VAR = re.compile(r"(?<![A-Za-z0-9_$])([xv])(?![A-Za-z0-9_])")


def _on_chain(step: str, c: int) -> str:
    """``step`` with its chain variables ``x`` and ``v`` renamed to chain ``c``'s."""
    return _CHAIN_VAR.sub(lambda m: f"{m.group(1)}{c}", step)


def chains_of(kernel: Kernel, chains: int) -> int:
    """How many independent chains ``kernel`` runs with when ``chains`` are asked for:
    1 for a kernel without a chain (flow control), else ``chains`` (at most its unroll)."""
    return 1 if not kernel.ctype else max(1, min(chains, kernel.unroll))


def _function(kernel: Kernel, which: str, steps: Sequence[str], chains: int = 1) -> str:
    kid = _ident(kernel.name)
    variants = steps
    n = chains_of(kernel, chains)
    body = "\n".join(
        "        " + (_on_chain(expand(variants[j % len(variants)], kernel, j), j % n) if n > 1
                      else expand(variants[j % len(variants)], kernel, j))
        for j in range(kernel.unroll)
    )  # fmt: skip
    if kernel.ctype and n > 1:
        xs = ", ".join(f"x{c} = 0, v{c} = 0" for c in range(n))
        voids = " ".join(f"(void)v{c};" for c in range(n))
        chain = f"    {kernel.ctype} {xs};\n    {voids}\n"
        sink = "\n".join(f"    sink_{kernel.ctype}(x{c});" for c in range(n))
    elif kernel.ctype:
        chain = f"    {kernel.ctype} x = 0, v = 0;\n    (void)v;\n"
        sink = f"    sink_{kernel.ctype}(x);"
    else:
        chain, sink = "", ""
    locals_ = "    " + expand(kernel.locals_, kernel, 0) if kernel.locals_ else ""
    return _FUNCTION % {
        "id": kid,
        "which": which,
        "chain": chain,
        "locals": locals_,
        "unroll": kernel.unroll,
        "body": body,
        "sink": sink,
    }


def program(kernels: Sequence[Kernel], chains: int = 1) -> str:
    """The C source of one benchmark program measuring ``kernels`` in turn.

    ``chains`` 1: every step needs the previous step's result (one dependent chain: the
    operation's *latency*). ``chains`` > 1: the unrolled steps take turns over that many
    independent chains (step j on chain j mod chains), so the core can overlap them
    and the difference per operation is its *reciprocal throughput*."""
    parts = [_HEADER % {"NA": NA}]
    for k in kernels:
        parts.append(_declarations(k))
    for k in kernels:
        parts.append(_function(k, "ctl", k.ctl.split("\n"), chains))
        parts.append(_function(k, "test", k.test.split("\n"), chains))
    table = ",\n".join(
        f'    {{"{k.name}", k_{_ident(k.name)}_ctl, k_{_ident(k.name)}_test, {k.ops * k.unroll}L}}'
        for k in kernels
    )
    fills = "\n".join(_fills(k) for k in kernels)
    parts.append(_MAIN % {"fills": fills, "table": table})
    return "\n".join(parts)
