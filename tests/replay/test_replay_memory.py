"""The memory a replay's trace is charged for (``--max-memory``: tifile's
BYTES_PER_ACTION an action, refused before any work past the budget) is what a replay
takes: ``parasol-model replay`` is run in a process of its own on a Jacobi trace of
about 100,000 actions, and its peak resident memory, less that of the same command on a
one-iteration trace (Python, numpy and the model: measured in the same test), is held
within the charge for the actions it read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from replay_platforms import torus_machine

from parasol_core.replay.tifile import BYTES_PER_ACTION
from parasol_core.syntax.writer import dumps

# the process's own peak (VmHWM: its memory's, from its exec on; ru_maxrss may carry
# the peak of the process it was forked from)
PEAK = (
    "import contextlib, io, sys\n"
    "from parasol_core.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    status = main(sys.argv[1:])\n"
    "hwm = [w for w in open('/proc/self/status') if w.startswith('VmHWM:')][0].split()\n"
    "print(status, int(hwm[1]) * 1024)\n"
)


def jacobi(folder: Path, side: int, iterations: int) -> tuple[Path, int]:
    """A 2-D Jacobi trace (as benchmarks/bench_replay.py's): its index and actions."""
    folder.mkdir()
    names, actions = [], 0
    for r in range(side * side):
        x, y = r % side, r // side
        near = [(x + 1) % side + y * side, (x - 1) % side + y * side,
                x + (y + 1) % side * side, x + (y - 1) % side * side]  # fmt: skip
        lines = [f"{r} init"]
        for it in range(iterations):
            lines += [f"{r} irecv {n} {k ^ 1} 1024 0" for k, n in enumerate(near)]
            lines += [f"{r} isend {n} {k} 1024 0" for k, n in enumerate(near)]
            lines += [f"{r} waitall 8", f"{r} compute {200000 * (1 + (r + it) % 3)}"]
            if it % 10 == 9:
                lines.append(f"{r} allreduce 1 1 0")
        lines.append(f"{r} finalize")
        actions += len(lines)
        (folder / f"rank-{r}.txt").write_text("\n".join(lines) + "\n")
        names.append(f"rank-{r}.txt")
    index = folder / "index.txt"
    index.write_text("\n".join(names) + "\n")
    return index, actions


def peak_bytes(model: Path, trace: Path) -> int:
    done = subprocess.run([sys.executable, "-c", PEAK, "replay", str(model), str(trace),
                           "--sharing", "cm02"], capture_output=True, text=True, timeout=600)  # fmt: skip
    status, peak = done.stdout.split()
    assert status == "0", done.stderr
    return int(peak)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc (Linux's)")
def test_a_replay_takes_no_more_memory_than_its_actions_are_charged(tmp_path):
    model = tmp_path / "torus.machine"
    model.write_text(dumps(torus_machine((8, 8))))
    small, _ = jacobi(tmp_path / "small", 8, 1)
    big, actions = jacobi(tmp_path / "big", 8, 150)
    assert actions > 90_000
    grown = peak_bytes(model, big) - peak_bytes(model, small)
    assert 0 < grown <= actions * BYTES_PER_ACTION, (grown, actions * BYTES_PER_ACTION)
