"""How long a cost curve of the run-time systems window takes, and one data-sheet fit.

For each MPI primitive of the Cray T3D sample, the curve against message size (100
sizes, 1 B to 64 MiB) at 128 processes is computed two ways in the same run:

* ``sweep``: ``Engine.sweep`` (compiled once; per point only the expressions between the
  arguments and the primitive are evaluated);
* ``evaluate_text``: ``Engine.evaluate_text(key, args=...)`` per point, which parses and
  compiles the reference again and re-evaluates with the new arguments: what a window
  would do without ``sweep``.

It also times ``parasol_core.analysis.fit.fit`` on the sample's 35 synthetic bcast measurements
(12 forms). Prints milliseconds and the ratio to ``sweep``.

    .venv/bin/python benchmarks/bench_runtime.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from parasol_core.analysis.fit import fit, read_csv
from parasol_core.expr.engine import Engine
from parasol_core.frontend.runtime import message_sizes
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[1] / "sample_models"


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    engine = Engine(load(SAMPLES / "cray-t3d.machine"))
    sizes = message_sizes()
    points = [{"bytes": b, "procs": 128} for b in sizes]
    keys = [k for k in engine.values() if k.startswith("mp.")]
    total_sweep = total_text = 0.0
    for key in keys:
        assert engine.sweep(key, points) == [
            engine.evaluate_text(key, runtime=True, args=p) for p in points
        ]
        total_sweep += best_of(args.repeat, lambda key=key: engine.sweep(key, points))
        total_text += best_of(args.repeat, lambda key=key: [
            engine.evaluate_text(key, runtime=True, args=p) for p in points])  # fmt: skip
    n = len(keys)
    print(f"{n} MPI curves x {len(sizes)} points (best of {args.repeat})")
    print(f"  sweep          {1e3 * total_sweep / n:8.3f} ms per curve   1.0x")
    print(f"  evaluate_text  {1e3 * total_text / n:8.3f} ms per curve   "
          f"{total_text / total_sweep:.1f}x")  # fmt: skip
    data = read_csv((SAMPLES / "measurements" / "cray-t3d.mpi.bcast.csv").read_text())
    t = best_of(args.repeat, lambda: fit(data))
    print(f"fit of {len(data)} measurements, 12 forms: {1e3 * t:.2f} ms")


if __name__ == "__main__":
    main()
