"""Which statistic of the paired runs repeats best on a loaded machine (issue 34; the
figures in docs/measure.md, "Runs and statistics").

    .venv/bin/python benchmarks/bench_measure_estimators.py [INVOCATIONS]

Builds the arithmetic kernels (latency and independent chains) and the intrinsic
kernels' independent chains, as `measure` does, for 16 operations; then runs each
binary INVOCATIONS times (default 6), 20 runs of 10 ms, and for each kernel and each
statistic prints how far apart its INVOCATIONS figures are (largest / smallest - 1):

* mean: the mean of the per-run differences (test - control);
* median: their median;
* minmin: the least test run less the least control run;
* kept_mean: the mean after runs beyond 3.5 robust sd of the median are set aside
  (what `measure` writes);
* lowq: the lower quartile of the test runs less that of the control runs.

Then a second part: the kept mean at 15 x 20 ms, 30 x 10 ms and 60 x 5 ms (four
invocations each). The figures are ratios of times measured in the same run; the load
average is printed.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from parasol_core.measure import MeasureOptions, measure_host

OPS = ["dga", "dgm", "ige", "dln", "ila", "dla", "iga", "ils", "absr", "modi"]
BINS = {"arith_tp": OPS[:8], "intrinsic_tp": OPS[8:], "arith": ["dga", "dgm", "ige", "dln", "iga", "ils"]}  # fmt: skip


def _stats(d: dict) -> dict[str, float]:
    ops = d["iterations"] * d["per_iter"]
    c, t = d["ctl"], d["test"]
    diffs = [y - x for x, y in zip(c, t)]
    med = statistics.median(diffs)
    mad = statistics.median(abs(x - med) for x in diffs) * 1.4826
    kept = [x for x in diffs if abs(x - med) <= 3.5 * mad] or diffs
    return {
        "mean": statistics.fmean(diffs) / ops,
        "median": med / ops,
        "minmin": (min(t) - min(c)) / ops,
        "kept_mean": statistics.fmean(kept) / ops,
        "lowq": (sorted(t)[len(t) // 4] - sorted(c)[len(c) // 4]) / ops,
    }


def _run(build: Path, binary: str, names: list[str], run_s: str, runs: str) -> list[dict]:
    out = subprocess.run([str(build / binary), run_s, runs, "100", *names],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return [d for d in map(json.loads, out.splitlines()) if "name" in d]


def _agree(res: dict) -> None:
    names = list(next(iter(res.values())))
    within = dict.fromkeys(names, 0)
    for key, e in res.items():
        cells = []
        for k in names:
            v = e[k]
            spread = max(v) / min(v) - 1 if min(v) > 0 else float("inf")
            within[k] += spread <= 0.10
            cells.append(f"{k} {spread * 100:6.1f} %")
        print(f"{key[0]:>13} {key[1]:<6} " + "  ".join(cells))
    print(f"kernels whose figures agree within 10 %, of {len(res)}: "
          + ", ".join(f"{k} {n}" for k, n in within.items()))  # fmt: skip


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp) / "build"
        measure_host(MeasureOptions(parameters=OPS, cache=False, link=False, memory=False,
                                    calibrate=False, keep_build=build))  # fmt: skip
        print("load before:", Path("/proc/loadavg").read_text().strip())
        res: dict = {}
        for _ in range(n):
            for b, names in BINS.items():
                for d in _run(build, b, names, "0.01", "20"):
                    for k, v in _stats(d).items():
                        res.setdefault((b, d["name"]), {}).setdefault(k, []).append(v)
        _agree(res)
        lengths = {"15 x 20 ms": ("0.02", "15"), "30 x 10 ms": ("0.01", "30"), "60 x 5 ms": ("0.005", "60")}  # fmt: skip
        res = {}
        for _ in range(4):
            for label, (run_s, runs) in lengths.items():
                for d in _run(build, "arith_tp", BINS["arith_tp"], run_s, runs):
                    res.setdefault(("arith_tp " + d["name"], label), {}).setdefault(
                        "kept_mean", []).append(_stats(d)["kept_mean"])  # fmt: skip
        for label in lengths:
            sp = [
                max(v["kept_mean"]) / min(v["kept_mean"]) - 1
                for (_, lb), v in res.items()
                if lb == label
            ]
            print(f"{label}: {sum(s <= 0.10 for s in sp)} of {len(sp)} within 10 %, "
                  f"median spread {statistics.median(sp) * 100:.1f} %")  # fmt: skip
        print("load after:", Path("/proc/loadavg").read_text().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
