"""Where a sum over operation counts goes wrong, program by program (issue 34; the table
in docs/measure.md, "Why the held-out spread stays above 1.6x").

    .venv/bin/python benchmarks/bench_measure_programs.py MODEL.machine

MODEL is a model written by `parasol-model measure` (its values, and in their comments
each operation's latency and reciprocal throughput). The suite's eleven programs are
run here at their three sizes (minimum of 10 runs of at least 10 ms), and for each
program and size it prints:

* the time of one iteration of the innermost loop (the program's `loopoh1` count), in ns
  and as a multiple of the reduction's at the same size (the same-run baseline: one
  dependent double addition per iteration);
* how much that time changes from the smallest size to the largest (the working set
  grows 16 times: does the memory level matter?);
* the prediction / measured ratio with the model's values, and the prediction per
  iteration split by class of operation (flow control, arithmetic, array, store) for
  the values written, the latencies and the throughputs.

The machine's load (/proc/loadavg) is printed before and after.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from parasol_core.measure import calibrate, suite, toolchain

_PAIR = re.compile(
    r"^\s*(?P<op>\w+) = (?P<val>\S+) \S+\s+# latency (?P<lat>[0-9.e+-]+)"
    r"(?:, reciprocal throughput (?P<thr>[0-9.e+-]+))?",
    re.M,
)


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def measured(text: str) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """A model ``measure`` wrote: each operation's latency, reciprocal throughput (where
    measured) and written value, from the value's comment (also read by
    bench_measure_calibration.py)."""
    lat, thr, val = {}, {}, {}
    for m in _PAIR.finditer(text):
        lat[m["op"]], val[m["op"]] = float(m["lat"]), float(m["val"])
        if m["thr"]:
            thr[m["op"]] = float(m["thr"])
    return lat, thr, val


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    lat, thr, val = measured(Path(sys.argv[1]).read_text())
    if not lat:
        print("the model's comments give no latencies: not written by measure (issue 34)")
        return 2
    print(f"load before: {loadavg()}")
    runs = suite.run_suite(toolchain.find_compiler(), ["-O2"], runs=10, need=0.01)
    print(f"load after:  {loadavg()}")
    per_it = {(r.program, r.size): r.seconds / r.counts["loopoh1"] for r in runs}
    base = {i: per_it[("reduction", s)] for i, s in enumerate(suite.PROGRAMS["reduction"].sizes)}
    print(
        f"{'program':11} {'size':>6} {'ns/it':>6} {'x red.':>6} {'ratio':>6}  "
        "per iteration (ns) written / latency / throughput, by class"
    )
    for name, prog in suite.PROGRAMS.items():
        mine = [r for r in runs if r.program == name]
        for i, r in enumerate(mine):
            it = r.counts["loopoh1"]
            by: dict[str, list[float]] = {}
            for op, n in r.counts.items():
                v = by.setdefault(calibrate.class_of(op), [0.0, 0.0, 0.0])
                v[0] += n * val[op]
                v[1] += n * lat[op]
                v[2] += n * thr.get(op, lat[op])
            pred = sum(v[0] for v in by.values())
            cells = "  ".join(f"{c} {v[0] / it * 1e9:.2f}/{v[1] / it * 1e9:.2f}/{v[2] / it * 1e9:.2f}"
                              for c, v in sorted(by.items()))  # fmt: skip
            mark = "*" if name in suite.CALIBRATION else " "
            print(
                f"{name + mark:11} {r.size:>6} {per_it[(name, r.size)] * 1e9:6.3f} "
                f"{per_it[(name, r.size)] / base[i]:6.2f} {pred / r.seconds:6.2f}  {cells}"
            )
        first, last = per_it[(name, prog.sizes[0])], per_it[(name, prog.sizes[-1])]
        print(
            f"{'':11} working set {prog.working_set(prog.sizes[0])} .. "
            f"{prog.working_set(prog.sizes[-1])} bytes: time per iteration x {last / first:.2f}"
        )
    print("(* calibration program)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
