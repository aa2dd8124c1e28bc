"""The memory a communication phase takes, per message and per route step: the figures
behind the command line's memory budget (``parasol_core.base.budget``, ``--max-memory``).

Each case runs in a fresh subprocess: the machine is built and its index made (one
message simulated), freed memory is given back to the system (``malloc_trim``) and
the peak resident size is reset (``/proc/self/clear_refs``, 5),
then :func:`~parasol_core.simulate.phases.simulate` runs the phase end to end (the
pattern's messages, their routes, the trace, the result); the case's figure is the peak
resident size (``VmHWM``) less the resident size before it. Messages and route steps
(processors visited, :func:`~parasol_core.topology.steps.route_steps`) are counted as
the budget counts them; a least-squares fit of ``peak = a * messages + b * steps`` over
the cases gives bytes per message and per route step.

The cases (each well within the estimator's fixed limits, so they run under today's
budgets): the halo on 20^3 to 50^3 tori (bulk path, 2 steps a message), ``shift`` on
the 50^3 torus, ``alltoall`` on an 8^3 torus (7 steps a message) and on a 24 x 24 grid
(17 steps a message), and a random phase of 300,000 messages with staggered starts on
the 24 x 24 grid (the event-loop kernel).

    .venv/bin/python benchmarks/bench_phase_memory.py [--quick]

Linux only (``/proc``). Peak memory goes up to about 1.5 GB.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import subprocess
import sys

import numpy as np

CASES = [
    ("halo", "torus", [20, 20, 20]),
    ("halo", "torus", [30, 30, 30]),
    ("halo", "torus", [40, 40, 40]),
    ("halo", "torus", [50, 50, 50]),
    ("shift", "torus", [50, 50, 50]),
    ("alltoall", "torus", [8, 8, 8]),
    ("alltoall", "grid", [24, 24]),
    ("random", "grid", [24, 24]),
]
QUICK = [CASES[0], CASES[2], CASES[5], CASES[6]]
LATENCY, SPEED = 2.85e-05, 9.1e-07


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def one(pattern: str, kind: str, dims: list[int]) -> dict:
    """Run one case in this process; its figures."""
    from parasol_core.model import Machine
    from parasol_core.simulate.phases import MessageArrays, simulate
    from parasol_core.topology.generators import generate
    from parasol_core.topology.index import index_of
    from parasol_core.topology.steps import route_steps
    from parasol_core.topology.virtual import hardware_of

    machine = Machine(topologies=[generate(kind, dims, LATENCY, SPEED)])
    simulate(machine, messages=[{"src": 1, "dst": 2, "bytes": 1}])  # the index, once
    index = index_of(hardware_of(machine))
    messages = None
    if pattern == "random":
        rng = np.random.default_rng(1)
        n, count = index.count, 300_000
        src = rng.integers(1, n + 1, count)
        dst = rng.integers(1, n, count)
        dst[dst >= src] += 1
        messages = MessageArrays(src, dst, rng.uniform(1024, 65536, count),
                                 rng.uniform(0, count * 1e-4, count))  # fmt: skip
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed memory back to the system first
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status("VmRSS")
    if messages is None:
        result = simulate(machine, pattern=pattern, bytes=1024)
    else:
        result = simulate(machine, messages=messages)
    peak = _status("VmHWM") - before
    steps = route_steps(index.layout, index.technique, result.src, result.dst)
    return {"case": f"{pattern} on {kind} {'x'.join(map(str, dims))}",
            "messages": len(result.src), "steps": steps, "peak": peak,
            "events": result.events}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="four cases only")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        pattern, kind, dims = json.loads(args.one)
        print(json.dumps(one(pattern, kind, dims)))
        return
    rows = []
    for case in QUICK if args.quick else CASES:
        out = subprocess.run([sys.executable, __file__, "--one", json.dumps(case)],
                             check=True, capture_output=True, text=True).stdout  # fmt: skip
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['case']:28} {row['messages']:>10,} messages {row['steps']:>11,} steps "
              f"peak {row['peak'] / 1e6:8.1f} MB  ({row['peak'] / row['messages']:6.0f} B "
              f"a message)", flush=True)  # fmt: skip
    a = np.array([[r["messages"], r["steps"]] for r in rows], dtype=float)
    y = np.array([r["peak"] for r in rows], dtype=float)
    (per_message, per_step), *_ = np.linalg.lstsq(a, y, rcond=None)
    print(f"fit: {per_message:.0f} bytes a message + {per_step:.0f} bytes a route step")
    worst = max(y / (a @ [per_message, per_step]))
    print(f"largest case over the fit: {worst:.2f}x")
    from parasol_core.base import budget

    if not hasattr(budget, "BYTES_PER_MESSAGE"):
        return
    bm, bs = budget.BYTES_PER_MESSAGE, budget.BYTES_PER_STEP
    over = y / (a @ [bm, bs])
    print(f"budget.py's figures ({bm} B a message, {bs} B a step): each case's peak is "
          f"{over.min():.2f}x to {over.max():.2f}x their estimate")  # fmt: skip


if __name__ == "__main__":
    main()
