"""How long the network measurement takes: `measure --network` of 2 ranks on one host,
collectives included, under `mpiexec -n 2` (the MPI of the `mpi` extra), full and quick.

Prints the wall time of each run (mpiexec's start-up included), the measured latency and
seconds per byte of the rank pair, and the fitted mpi expressions with their Q. The
target: the full run under 2 minutes.

    .venv/bin/python benchmarks/bench_measure_network.py [--quick-only]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parasol_core import loads

TARGET_SECONDS = 120


def measure_command(python: str) -> list[str]:
    """`parasol-model measure --network` when the command is there, else the module."""
    script = Path(python).parent / "parasol-model"
    if importlib.util.find_spec("parasol_core.cli.measure_commands") and script.exists():
        return [str(script), "measure", "--network"]
    return [python, "-m", "parasol_core.measure.mpi_network"]


def run(mpiexec: str, quick: bool) -> tuple[float, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "net.machine"
        cmd = [mpiexec, "-n", "2", *measure_command(sys.executable), "-o", str(out)]
        if quick:
            cmd.append("--quick")
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        took = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
        return took, out.read_text(), " ".join(cmd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick-only", action="store_true")
    args = parser.parse_args()
    here = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(here) if here.exists() else shutil.which("mpiexec")
    if mpiexec is None:
        print("skipped: no mpiexec (pip install -e '.[mpi]')")
        return
    for quick in (True,) if args.quick_only else (True, False):
        took, text, cmd = run(mpiexec, quick)
        machine = loads(text)
        link = machine.hardware().links[0]
        print(f"{cmd.replace(str(Path(sys.executable).parent) + '/', '')}")
        print(f"  {'quick' if quick else 'full'} run: {took:.1f} s wall")
        print(f"  latency {link.latency.mean:.3g} s, {link.speed.mean:.3g} s/byte")
        mpi = text[text.index("begin mpi") : text.index("end mpi")].splitlines()[1:]
        print("\n".join(f"  mp.{line.strip()}" for line in mpi if line.strip()))
        if not quick and took > TARGET_SECONDS:
            sys.exit(f"the full run took {took:.0f} s, over the {TARGET_SECONDS} s target")


if __name__ == "__main__":
    main()
