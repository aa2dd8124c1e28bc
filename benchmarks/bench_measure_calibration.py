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
times measured in the same run, the programs' times the minimum of 5 runs.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from parasol_core.measure import calibrate, suite, toolchain

_PAIR = re.compile(
    r"^\s*(?P<op>\w+) = \S+ \S+\s+# latency (?P<lat>[0-9.e+-]+)"
    r"(?:, reciprocal throughput (?P<thr>[0-9.e+-]+))?",
    re.M,
)


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    text = Path(sys.argv[1]).read_text()
    lat, thr = {}, {}
    for m in _PAIR.finditer(text):
        lat[m["op"]] = float(m["lat"])
        if m["thr"]:
            thr[m["op"]] = float(m["thr"])
    if not lat:
        print("the model's comments give no latencies: not written by measure (issue 34)")
        return 2
    print(f"load before: {_loadavg()}")
    runs = suite.run_suite(toolchain.find_compiler(), ["-O2"], runs=5, need=0.02)
    print(f"load after:  {_loadavg()}")
    cal_runs = [(r.program, r.counts, r.seconds) for r in runs if r.program in suite.CALIBRATION]

    def sums(r, values):
        return sum(n * values.get(op, lat[op]) for op, n in r.counts.items())

    def scale(values):
        a, _ = calibrate.nnls([[sums(r, values) / r.seconds] for r in runs
                               if r.program in suite.CALIBRATION], [1.0] * len(cal_runs))  # fmt: skip
        return a[0]

    mix = calibrate.calibrate(cal_runs, lat, thr)
    mixed = {op: mix.value(op, lat[op], thr.get(op)) for op in lat}
    ways = {
        "sum of latencies": (lat, 1.0),
        "sum of throughputs": ({**lat, **thr}, 1.0),
        "latency x one factor": (lat, scale(lat)),
        "throughput x one factor": ({**lat, **thr}, scale({**lat, **thr})),
        "per-class mix (written)": (mixed, 1.0),
    }
    print(f"the mix: {mix.describe()}")
    names = list(suite.PROGRAMS)
    print(f"{'':26}" + "".join(f"{n[:9]:>10}" for n in names) + "   held-out spread, range")
    for label, (values, factor) in ways.items():
        means = {n: statistics.fmean(factor * sums(r, values) / r.seconds
                                     for r in runs if r.program == n) for n in names}  # fmt: skip
        held = [factor * sums(r, values) / r.seconds for r in runs
                if r.program in suite.VALIDATION]  # fmt: skip
        hm = [means[n] for n in suite.VALIDATION]
        cells = "".join(f"{means[n]:>9.2f}{'*' if n in suite.CALIBRATION else ' '}"
                        for n in names)  # fmt: skip
        print(f"{label:26}{cells}   {max(hm) / min(hm):.2f}x, {min(held):.2f} .. {max(held):.2f}")
    print(
        "(* calibration program; factors: latency "
        f"{scale(lat):.3g}, throughput {scale({**lat, **thr}):.3g})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
