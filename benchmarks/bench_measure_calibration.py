"""Which timing a sum over operation counts needs: latency, throughput, or the
calibrated mix (issue 34; the table in docs/measure.md, "Which value is written").

    .venv/bin/python benchmarks/bench_measure_calibration.py MODEL.machine

MODEL is a model written by `parasol-model measure` (its comments hold each operation's
latency and reciprocal throughput). The suite's eleven programs are run here at their
three sizes, and each program's mean ratio predicted / measured is printed for:

* the sum of latencies, as written before issue 34 (no fitting);
* the sum of reciprocal throughputs (no fitting);
* latency x one factor, and throughput x one factor, each fitted (least squares,
  relative) on the calibration programs: the best a single correction can do;
* the per-class mix `measure` writes, fitted on the same programs.

For each: the held-out programs' spread (largest mean ratio / smallest) and range. The
machine's load (/proc/loadavg) is printed before and after: the figures are ratios of
times measured in the same run, the programs' times as a full `measure` times them (the
minimum of 5 runs in each of 4 passes).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from bench_measure_programs import loadavg, measured

from parasol_core.measure import MeasureOptions, calibrate, suite, toolchain
from parasol_core.measure.host import suite_need_of, suite_passes_of, suite_runs_of


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    lat, thr, _ = measured(Path(sys.argv[1]).read_text())
    if not lat:
        print("the model's comments give no latencies: not written by measure (issue 34)")
        return 2
    print(f"load before: {loadavg()}")
    full = MeasureOptions()  # the suite timed as a full measurement times it
    runs = suite.run_suite(toolchain.find_compiler(), ["-O2"], runs=suite_runs_of(full),
                           need=suite_need_of(full), passes=suite_passes_of(full))  # fmt: skip
    print(f"load after:  {loadavg()}")
    cal_runs = [(r.program, r.counts, r.seconds, r.chains) for r in runs
                if r.program in suite.CALIBRATION]  # fmt: skip

    def sums(r, values):
        return sum(n * values.get(op, lat[op]) for op, n in r.counts.items())

    def scale(values):
        a, _ = calibrate.nnls([[sums(r, values) / r.seconds] for r in runs
                               if r.program in suite.CALIBRATION], [1.0] * len(cal_runs))  # fmt: skip
        return a[0]

    plain = calibrate.calibrate([c[:3] for c in cal_runs], lat, thr)
    mix = calibrate.calibrate(cal_runs, lat, thr)  # with the chains, as measure fits it
    plain_values = {op: plain.value(op, lat[op], thr.get(op)) for op in lat}
    mixed = {op: mix.value(op, lat[op], thr.get(op)) for op in lat}
    f_lat, f_thr = scale(lat), scale({**lat, **thr})
    ways = {
        "sum of latencies": lambda r: sums(r, lat),
        "sum of throughputs": lambda r: sums(r, {**lat, **thr}),
        "latency x one factor": lambda r: f_lat * sums(r, lat),
        "throughput x one factor": lambda r: f_thr * sums(r, {**lat, **thr}),
        "per-class mix, no chains": lambda r: sums(r, plain_values),
        "mix, max with chains (written)": lambda r: max(
            sums(r, mixed), calibrate.chain_time(r.chains, lat)),
    }  # fmt: skip
    print(f"the mix without chains: {plain.describe()}")
    print(f"the mix with chains (written): {mix.describe()}")
    names = list(suite.PROGRAMS)
    print(f"{'':31}" + "".join(f"{n[:9]:>10}" for n in names) + "   held-out spread, range")
    for label, predict in ways.items():
        means = {n: statistics.fmean(predict(r) / r.seconds for r in runs if r.program == n)
                 for n in names}  # fmt: skip
        held = [predict(r) / r.seconds for r in runs if r.program in suite.VALIDATION]
        hm = [means[n] for n in suite.VALIDATION]
        cells = "".join(f"{means[n]:>9.2f}{'*' if n in suite.CALIBRATION else ' '}"
                        for n in names)  # fmt: skip
        print(f"{label:31}{cells}   {max(hm) / min(hm):.2f}x, {min(held):.2f} .. {max(held):.2f}")
    print(f"(* calibration program; factors: latency {f_lat:.3g}, throughput {f_thr:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
