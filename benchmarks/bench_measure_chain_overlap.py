"""Why the chain bound over-predicts matmul on some cores (issue 34; docs/measure.md,
"The AMD EPYC sample").

    .venv/bin/python benchmarks/bench_measure_chain_overlap.py [--flags -O2]

The suite's matmul (``s = s + M1[i][k] * M2[k][j]``, the k loop innermost) is bound, in
the model, by its loop-carried chain: n**3 dependent double additions at their latency
(``suite._matmul_chains``). Each (i, j) starts a new chain, ``s = 0``: the chains of
consecutive j are independent, and an out-of-order core can run the start of the next
while the last finishes. Whether it does depends on the core's window against the
inner loop's length, and the chain bound counts none of it.

This compiles, with the flags the model states, and times in one process (thread CPU
time, the best of 5 rounds):

* a dependent chain of double additions alone (``s = s + y``): the latency;
* a dot product of 1,024 (one chain, the k loop never restarted): the latency again;
* matmul at n = 16, 32, 64 as the suite writes it (independent chains, one per (i, j));
* the same matmul with each chain started from the last one's end (``s = prev * 0.0``,
  which the compiler may not fold): the chains can no longer overlap.

Each figure is in ns per inner iteration and as a multiple of the first (the same-run
baseline). Where *matmul* is well below 1.0x and *chained* is at 1.0x, consecutive
chains overlap, and the model's chain bound over-predicts by their ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from parasol_core.measure import toolchain

SOURCE = r"""
#include <stdio.h>
#include <time.h>
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
double M1[64][64], M2[64][64], M3[64][64], A[1024], B[1024], R[4096], OUT[4096];
__attribute__((noinline)) double chain(long n, double x, double y) {
    double s = x;
    for (long i = 0; i < n; i++) { s = s + y; __asm__("" : "+x"(s)); }
    return s;
}
__attribute__((noinline)) double dot(long reps) {
    double s = 0;
    for (long r = 0; r < reps; r++) for (int k = 0; k < 1024; k++) s = s + A[k] * B[k];
    return s;
}
__attribute__((noinline)) double mm(int n) {
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) {
        double s = 0;
        for (int k = 0; k < n; k++) s = s + M1[i][k] * M2[k][j];
        M3[i][j] = s;
    }
    return M3[n / 2][n / 3];
}
__attribute__((noinline)) double chained(int n) {
    double prev = 0;
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) {
        double s = prev * 0.0;
        for (int k = 0; k < n; k++) s = s + M1[i][k] * M2[k][j];
        M3[i][j] = s; prev = s;
    }
    return M3[n / 2][n / 3];
}
/* 4,096 / L dot products of length L, each a chain started afresh (s = 0): the
   restarted chains of the suite's matmul, their length L free */
__attribute__((noinline)) double rows(int L) {
    int n = 4096 / L;
    for (int r = 0; r < n; r++) {
        double s = 0; const double *a = R + (long)r * L;
        for (int k = 0; k < L; k++) s = s + a[k] * B[k];
        OUT[r] = s;
    }
    return OUT[n / 2];
}
int main(void) {
    for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) {
        M1[i][j] = 1e-3 * (i + j); M2[i][j] = 1e-3 * (i - j);
    }
    for (int i = 0; i < 1024; i++) { A[i] = 1e-3 * i; B[i] = 1e-3 * (1024 - i); }
    for (int i = 0; i < 4096; i++) R[i] = 1e-3 * (i % 97);
    volatile double sink;
    double best[8 + 10];
    for (int b = 0; b < 18; b++) best[b] = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now(); sink = chain(50000000L, 1.0, 1e-9);
        double t = (now() - t0) / 5e7; if (t < best[0]) best[0] = t;
        t0 = now(); sink = dot(50000);
        t = (now() - t0) / (50000.0 * 1024); if (t < best[1]) best[1] = t;
        int b = 2;
        for (int n = 16; n <= 64; n *= 2, b += 2) {
            long reps = 40000000L / ((long)n * n * n), it = reps * (long)n * n * n;
            t0 = now(); for (long q = 0; q < reps; q++) sink = mm(n);
            t = (now() - t0) / it; if (t < best[b]) best[b] = t;
            t0 = now(); for (long q = 0; q < reps; q++) sink = chained(n);
            t = (now() - t0) / it; if (t < best[b + 1]) best[b + 1] = t;
        }
        for (int L = 2, q = 8; L <= 1024; L *= 2, q++) {
            long reps = 10000;
            t0 = now(); for (long z = 0; z < reps; z++) sink = rows(L);
            t = (now() - t0) / (reps * 4096.0); if (t < best[q]) best[q] = t;
        }
    }
    for (int b = 0; b < 18; b++) printf("%.6g\n", best[b] * 1e9);
    (void)sink;
    return 0;
}
"""

NAMES = ["add chain (latency)", "dot product, one chain", "matmul n=16", "  chained",
         "matmul n=32", "  chained", "matmul n=64", "  chained"]  # fmt: skip
LENGTHS = [2**k for k in range(1, 11)]  # the restarted chains' lengths L of rows(L)
# fitted from here: below, the loop runs at its issue rate, not its chains' (the least
# time an iteration, 0.37 ns at L = 16 on the AMD EPYC of docs/measure.md, is a bound of
# its own: 2.5 chains at once at most, however short they are)
FIT_FROM = 32


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flags", default="-O2", help="compiler flags (the model's: -O2)")
    args = ap.parse_args()
    cc = toolchain.find_compiler()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "overlap.c", Path(tmp) / "overlap"
        src.write_text(SOURCE)
        toolchain.compile_c(cc, src, exe, args.flags.split())
        load = Path("/proc/loadavg").read_text().split()[:3]
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    ns = [float(x) for x in out.split()]
    print(f"{' '.join(cc)} {args.flags}; load average {' '.join(load)}; best of 5 rounds")
    for name, t in zip(NAMES, ns[: len(NAMES)], strict=True):
        print(f"  {name:26} {t:7.3f} ns an iteration   {t / ns[0]:5.2f}x the latency")
    # restarted chains of length L: how many run at once, c = latency / time an
    # iteration, against the window model c = 1 + A / L (A: the iterations the core
    # runs ahead of a chain's end), A fitted by least squares through the origin over
    # L >= FIT_FROM
    rows = dict(zip(LENGTHS, ns[len(NAMES) :], strict=True))
    c = {L: ns[0] / t for L, t in rows.items()}
    fit = [L for L in LENGTHS if L >= FIT_FROM]
    floor = min(rows.values())
    print(f"  rows(L): the least time an iteration {floor:.3g} ns (at L = "
          f"{min(rows, key=rows.get)}): at most {ns[0] / floor:.2f} chains at once")  # fmt: skip
    ahead = sum((c[L] - 1) / L for L in fit) / sum(1 / L**2 for L in fit)
    print(f"  restarted chains of length L (4,096 iterations a pass): fitted A = {ahead:.1f} "
          f"iterations ahead, over L >= {FIT_FROM}")  # fmt: skip
    for L, t in rows.items():
        model = min(1 + ahead / L, ns[0] / floor)
        print(f"    L = {L:5}  {t:7.3f} ns an iteration   {c[L]:5.2f} chains at once   "
              f"model {model:5.2f}{'' if L >= FIT_FROM else '  (not fitted)'}")  # fmt: skip
    for k, n in enumerate((16, 32, 64)):
        measured = ns[0] / ns[2 + 2 * k]
        print(f"  matmul n = {n:2}: {measured:5.2f} chains at once measured, the model "
              f"{min(1 + ahead / n, ns[0] / floor):5.2f} (rows' A; not fitted to it)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
