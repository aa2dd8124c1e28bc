"""Issue 31: the memory of a replay, measured against what the budget charges for it.

For Jacobi traces (benchmarks/bench_replay.py's) of growing length on a square torus,
each replay runs in a process of its own and reports its peak resident memory (VmHWM):

* ``once``: ``parasol-model replay MODEL TRACE --sharing cm02`` (a one-shot replay:
  each stage let go once the next has it, per-rank figures only; docs/replay.md,
  "Memory");
* ``kept``: ``replay(machine, load_trace(TRACE))`` as the Program window and the
  estimator run it (the trace, its program and every operation kept).

Printed per trace: its actions, each peak, each peak's growth over the same command on
a one-iteration trace of the same ranks (Python, numpy and the model: measured in the
same run) in bytes an action, and that growth as a fraction of what the budget charges
(``parasol_core.replay.tifile.replay_memory``: at most 1 when the charge holds).

    .venv/bin/python benchmarks/bench_replay_memory.py [--ranks 1024]
        [--iterations 10,97] [--modes once,kept]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "replay"), str(ROOT / "benchmarks")]

PEAK = "[w for w in open('/proc/self/status') if w.startswith('VmHWM:')][0].split()[1]"
ONCE = (
    "import contextlib, io, sys\n"
    "from parasol_core.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    status = main(sys.argv[1:])\n"
    f"print(status, int({PEAK}) * 1024)\n"
)
KEPT = (
    "import sys\n"
    "from parasol_core.base import budget\n"
    "from parasol_core.replay import ReplayOptions, load_trace, replay\n"
    "from parasol_core.syntax.loader import load\n"
    "machine = load(sys.argv[2])\n"
    "with budget.limits(memory=budget.default_memory()[0]):  # as the command line's\n"
    "    result = replay(machine, load_trace(sys.argv[3]), ReplayOptions(sharing='cm02'))\n"
    f"print(0, int({PEAK}) * 1024)\n"
)


def peak(script: str, model: Path, trace: Path) -> int:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script, "replay", str(model), str(trace),
                           "--sharing", "cm02"], capture_output=True, text=True, env=env,
                          timeout=3600)  # fmt: skip
    words = done.stdout.split()
    if done.returncode != 0 or not words or words[0] != "0":
        raise RuntimeError(done.stderr or done.stdout)
    return int(words[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=1024, help="a square")
    ap.add_argument("--iterations", default="10,97", help="comma-separated")
    ap.add_argument("--modes", default="once,kept", help="once, kept or both")
    args = ap.parse_args()
    side = int(round(args.ranks**0.5))
    from bench_replay import jacobi_trace
    from replay_platforms import torus_machine

    from parasol_core.replay.tifile import replay_memory
    from parasol_core.syntax.writer import dumps

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        model = d / "torus.machine"
        model.write_text(dumps(torus_machine((side, side))))
        base, _ = jacobi_trace(d / "base", side, 1, 8192)
        modes = args.modes.split(",")
        kinds = [k for k in (("once", ONCE, True), ("kept", KEPT, False)) if k[0] in modes]
        floor = {name: peak(script, model, base) for name, script, _ in kinds}
        for its in [int(w) for w in args.iterations.split(",")]:
            trace, actions = jacobi_trace(d / f"t{its}", side, its, 8192)
            for name, script, once in kinds:
                top = peak(script, model, trace)
                grown = top - floor[name]
                charged = replay_memory(actions, once=once, ranks=side * side)
                print(f"{name}: {actions:,} actions on {args.ranks} ranks: peak "
                      f"{top / 2**20:,.0f} MiB, grown {grown / actions:.0f} bytes an action, "
                      f"{grown / charged:.2f} of the charge")  # fmt: skip
            (trace.parent / "jacobi_files").exists() and subprocess.run(
                ["rm", "-rf", str(trace.parent)], check=True)  # fmt: skip


if __name__ == "__main__":
    main()
