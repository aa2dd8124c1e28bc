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
double M1[64][64], M2[64][64], M3[64][64], A[1024], B[1024];
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
int main(void) {
    for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) {
        M1[i][j] = 1e-3 * (i + j); M2[i][j] = 1e-3 * (i - j);
    }
    for (int i = 0; i < 1024; i++) { A[i] = 1e-3 * i; B[i] = 1e-3 * (1024 - i); }
    volatile double sink;
    double best[8];
    for (int b = 0; b < 8; b++) best[b] = 1e30;
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
    }
    for (int b = 0; b < 8; b++) printf("%.6g\n", best[b] * 1e9);
    (void)sink;
    return 0;
}
"""

NAMES = ["add chain (latency)", "dot product, one chain", "matmul n=16", "  chained",
         "matmul n=32", "  chained", "matmul n=64", "  chained"]  # fmt: skip


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
    for name, t in zip(NAMES, ns, strict=True):
        print(f"  {name:26} {t:7.3f} ns an iteration   {t / ns[0]:5.2f}x the latency")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
