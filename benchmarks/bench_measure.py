"""How long measuring the host takes, and how repeatable it is.

    .venv/bin/python benchmarks/bench_measure.py           # two --quick runs (~1 min)
    .venv/bin/python benchmarks/bench_measure.py --full    # two full runs + validation
    .venv/bin/python benchmarks/bench_measure.py --compare A.machine B.machine

Prints each run's wall time and its estimate (the baseline the command prints before
starting), the number of timings written and left out, and the repeatability of the two
runs: the share of timings whose medians are within 10 % of each other, and of the
rest, how many differ by less than the two runs' standard deviations added. With
--full it then validates the second model (report table 4.2). Targets (issue 20): full
under 10 minutes, quick under 1 minute on a 2-core machine; >= 90 % of medians within
10 %, the deviations covering the rest.

--compare reads two models written by `parasol-model measure` and counts, of the timings
both wrote, how many written values (issue 34's target: every one), latencies and
reciprocal throughputs (from the values' comments) are within 10 % of each other, and
lists the rest.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from parasol_core.measure import MeasureOptions, estimate_seconds, measure_host
from parasol_core.measure.validation import format_validation_table, validate_host


def repeatability(a, b) -> tuple[int, int, int, list[str]]:
    common = sorted(set(a.timings) & set(b.timings))
    close, covered, outside = 0, 0, []
    for name in common:
        x, y = a.timings[name], b.timings[name]
        if abs(x.median - y.median) <= 0.10 * max(x.median, y.median):
            close += 1
        elif abs(x.mean - y.mean) <= x.sd + y.sd:
            covered += 1
        else:
            outside.append(f"{name} ({x.median:.3g} vs {y.median:.3g})")
    return len(common), close, covered, outside


_PAIR = re.compile(
    r"^\s*(?P<op>\w+) = (?P<val>\S+) (?P<sd>\S+)\s+# latency (?P<lat>[0-9.e+-]+)"
    r"(?:, reciprocal throughput (?P<thr>[0-9.e+-]+))?",
    re.M,
)


def _figures(path: str) -> dict[str, dict[str, float]]:
    """written value, latency and throughput of each timing in a measured model file."""
    out: dict[str, dict[str, float]] = {"written": {}, "sd": {}, "latency": {},
                                        "throughput": {}}  # fmt: skip
    for m in _PAIR.finditer(Path(path).read_text()):
        out["written"][m["op"]] = float(m["val"])
        out["sd"][m["op"]] = float(m["sd"])
        out["latency"][m["op"]] = float(m["lat"])
        if m["thr"]:
            out["throughput"][m["op"]] = float(m["thr"])
    return out


def compare(a_path: str, b_path: str) -> int:
    a, b = _figures(a_path), _figures(b_path)
    for kind in ("written", "latency", "throughput"):
        x, y = a[kind], b[kind]
        common = sorted(op for op in set(x) & set(y) if x[op] > 0 or y[op] > 0)
        far = []
        for op in common:
            d = abs(x[op] - y[op]) / max(x[op], y[op])
            if d > 0.10:
                far.append((d, op))
        far.sort(reverse=True)
        print(f"{kind}: {len(common) - len(far)} of {len(common)} within 10 %"
              + (" (zero in both left out)" if kind == "written" else "")
              + ("; the rest: " + ", ".join(f"{op} {d * 100:.0f} %" for d, op in far)
                 if far else ""))  # fmt: skip
        if kind == "written" and far:
            # issue 20's second test: the rest told apart or not by the runs' deviations
            sa, sb = a["sd"], b["sd"]
            covered = [op for _, op in far if abs(x[op] - y[op]) <= sa[op] + sb[op]]
            print(f"  of the rest, {len(covered)} within the two runs' standard deviations "
                  "added (the runs cannot tell them apart)"
                  + (": " + ", ".join(covered) if covered else ""))  # fmt: skip
    return 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    ap.add_argument("-o", "--output", help="write the second run's model here")
    args = ap.parse_args()
    options = MeasureOptions(quick=not args.full)
    kind = "full" if args.full else "quick"
    models = []
    for i in (1, 2):
        est = estimate_seconds(options)
        t0 = time.monotonic()
        m = measure_host(options)
        wall = time.monotonic() - t0
        models.append(m)
        print(f"{kind} run {i}: {wall:.1f} s (estimate {est:.0f} s, ratio {wall / est:.2f}); "
              f"{len(m.timings)} timings written, {len(m.left_out)} left out")  # fmt: skip
    if args.output:
        models[1].write(args.output)
    n, close, covered, outside = repeatability(*models)
    print(f"repeatability: {close}/{n} medians within 10 % ({100 * close / n:.1f} %); "
          f"of the rest {covered} covered by the deviations, {len(outside)} not")  # fmt: skip
    if outside:
        print("  not covered: " + ", ".join(outside))
    if args.full:
        t0 = time.monotonic()
        rows = validate_host(models[1].text, options)
        print(f"validation: {time.monotonic() - t0:.1f} s")
        print(format_validation_table(rows, models[1].text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
