"""Issue 31: replaying an MPI trace, ``parasol-model replay`` against SimGrid's own
``smpirun -replay`` on the same trace and platform, in the same run.

The trace is a 2-D Jacobi iteration on a periodic grid of ranks (written here in
SimGrid's time-independent format, as ``smpirun -trace-ti`` writes it: an index file
and one action file per rank): each iteration every rank posts four ``irecv`` and four
``isend`` of its halo to its neighbours, waits for all of them and computes; every
10th iteration an ``allreduce`` of one double. 256 ranks and 80 iterations make
207,104 actions. The platform is a 16 x 16 torus of 1 us, 1 GB/s split-duplex links,
written for SimGrid with PARASOL's routes (an explicit route for every pair in a Full
zone, tests/simgrid_platforms.py) and hosts of 1 Gflop/s; the model's flop takes 1 ns.

Each side runs as its own process, its wall time measured from outside, reading the
trace included: ``parasol-model replay MODEL TRACE --sharing cm02`` (Python's start
and imports included; its bytecode compiled once beforehand, in a cache of the
benchmark's own, as an installed package's is: this machine's environment sets
PYTHONDONTWRITEBYTECODE, which would make every start compile some 100 modules again)
and ``smpirun -np P -platform ... -replay TRACE smpireplaymain`` under issue 31's
settings (tests/replay/smpi_replay.py), without its per-action log. Reported: both
walls and their ratio, both processes' CPU seconds (user + system; on a machine shared
with other work the CPU figures move less than the walls) and their ratio, both
makespans and their difference, and our process's peak memory (its VmHWM).

    .venv/bin/python benchmarks/bench_replay.py [--ranks 256] [--iterations 80]
        [--halo BYTES] [--no-simgrid] [--repeat N]

At scale (issue 31: 10^7 actions on 4,096 ranks; SimGrid is not run: its platform of
explicit routes for every pair is past the route budget at that size):

    .venv/bin/python benchmarks/bench_replay.py --ranks 4096 --iterations 242 --no-simgrid
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "replay")]


def jacobi_trace(directory: Path, side: int, iterations: int, halo: int) -> tuple[Path, int]:
    """A 2-D Jacobi trace on a side x side periodic grid of ranks; its index, actions."""
    ranks = side * side
    files = directory / "jacobi_files"
    files.mkdir(parents=True, exist_ok=True)
    index = []
    actions = 0
    count = halo // 8  # doubles (datatype 0)
    for r in range(ranks):
        x, y = r % side, r // side
        near = [((x + 1) % side) + y * side, ((x - 1) % side) + y * side,
                x + ((y + 1) % side) * side, x + ((y - 1) % side) * side]  # fmt: skip
        lines = [f"{r} init"]
        for it in range(iterations):
            for k, n in enumerate(near):
                lines.append(f"{r} irecv {n} {k ^ 1} {count} 0")
            for k, n in enumerate(near):
                lines.append(f"{r} isend {n} {k} {count} 0")
            lines.append(f"{r} waitall 8")
            lines.append(f"{r} compute {2e5 * (1 + (r + it) % 3):.0f}")
            if it % 10 == 9:
                lines.append(f"{r} allreduce 1 1 0")
        lines.append(f"{r} finalize")
        actions += len(lines)
        path = files / f"rank-{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        index.append(f"jacobi_files/rank-{r}.txt")
    out = directory / "jacobi.txt"
    out.write_text("\n".join(index) + "\n")
    return out, actions


# parasol-model replay, its peak memory (VmHWM: this process's own) said on stderr at exit
OURS = (
    "import atexit, sys\n"
    "atexit.register(lambda: print([w for w in open('/proc/self/status')\n"
    "                               if w.startswith('VmHWM:')][0], file=sys.stderr))\n"
    "from parasol_core.cli import main\n"
    "sys.exit(main())\n"
)


def children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def ours(model: Path, trace: Path, cache: Path) -> tuple[float, float, float, int]:
    """Our replay in a process of its own: its wall, CPU seconds, makespan, peak bytes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=str(cache))
    cpu = children_cpu()
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", OURS, "replay", str(model), str(trace),
                           "--sharing", "cm02"], capture_output=True, text=True, env=env,
                          timeout=3600)  # fmt: skip
    wall = time.perf_counter() - began
    cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    makespan = float(done.stdout.split("makespan: ")[1].split()[0])
    hwm = [w for w in done.stderr.splitlines() if w.startswith("VmHWM:")]
    peak = int(hwm[0].split()[1]) * 1024 if hwm else 0
    return wall, cpu, makespan, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=256, help="a square: 16, 64, 256, 1024...")
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--halo", type=int, default=8192, help="bytes of each halo message")
    ap.add_argument("--no-simgrid", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side (best kept)")
    args = ap.parse_args()
    side = int(round(args.ranks**0.5))
    if side * side != args.ranks:
        ap.error("--ranks must be a square")

    from replay_platforms import torus_machine
    from smpi_replay import AVAILABLE, WHY, smpi_replay, write_platform

    from parasol_core.syntax.writer import dumps

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        trace, actions = jacobi_trace(d, side, args.iterations, args.halo)
        machine = torus_machine((side, side))
        model = d / "torus.machine"
        model.write_text(dumps(machine))
        print(f"trace: {actions:,} actions on {args.ranks} ranks ({args.iterations} iterations, "
              f"{args.halo:,}-byte halos); platform: {side} x {side} torus")  # fmt: skip
        cache = d / "pycache"
        warm, _ = jacobi_trace(d / "warm", side, 1, args.halo)
        ours(model, warm, cache)  # the bytecode compiled, as an installed package's is
        wall, cpu, makespan, peak = min(ours(model, trace, cache) for _ in range(args.repeat))
        print(f"parasol-model replay: {wall:.2f} s wall, {cpu:.2f} s CPU, makespan "
              f"{makespan:.6e} s, peak memory {peak / 2**20:,.0f} MiB "
              f"({peak / actions:.0f} bytes an action)")  # fmt: skip
        if args.no_simgrid:
            return
        if not AVAILABLE:
            print(f"SimGrid: skipped ({WHY})")
            return
        platform, hostfile = write_platform(machine, d)
        best = None
        for _ in range(args.repeat):
            before = children_cpu()
            total, _, sg_wall = smpi_replay(platform, hostfile, trace, args.ranks, log=False)
            run = (sg_wall, children_cpu() - before)
            best = run if best is None else min(best, run)
        print(f"smpirun -replay: {best[0]:.2f} s wall, {best[1]:.2f} s CPU, makespan "
              f"{total:.6e} s")  # fmt: skip
        print(f"ratio: {best[0] / wall:.1f}x faster (wall), {best[1] / cpu:.1f}x (CPU); "
              f"makespans differ by {abs(makespan - total) / total:.2e} (relative)")  # fmt: skip


if __name__ == "__main__":
    main()
