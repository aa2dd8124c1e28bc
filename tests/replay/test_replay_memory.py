"""The memory a replay is charged for (``--max-memory``: tifile.replay_memory, refused
before any work past the budget) is what it takes: ``parasol-model replay`` (a one-shot
replay) and a replay that keeps its trace, program and operations (the Program
window's) each run in a process of its own on a Jacobi trace of about 100,000 actions,
and each one's peak resident memory, less that of the same command on a one-iteration
trace (Python, numpy and the model: measured in the same test), is held within its
charge; and the one-shot replay grows by well under what the kept one does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from replay_platforms import torus_machine

from parasol_core.replay.tifile import replay_memory
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


KEPT = (
    "import sys\n"
    "from parasol_core.replay import ReplayOptions, load_trace, replay\n"
    "from parasol_core.syntax.loader import load\n"
    "result = replay(load(sys.argv[2]), load_trace(sys.argv[3]), ReplayOptions(sharing='cm02'))\n"
    "assert result.end.shape[0] > 0\n"
    "hwm = [w for w in open('/proc/self/status') if w.startswith('VmHWM:')][0].split()\n"
    "print(0, int(hwm[1]) * 1024)\n"
)


def peak_bytes(model: Path, trace: Path, script: str = PEAK) -> int:
    done = subprocess.run([sys.executable, "-c", script, "replay", str(model), str(trace),
                           "--sharing", "cm02"], capture_output=True, text=True, timeout=600)  # fmt: skip
    status, peak = done.stdout.split()
    assert status == "0", done.stderr
    return int(peak)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc (Linux's)")
@pytest.mark.parametrize("side, iterations", [(8, 150), (32, 10)])
def test_a_replay_takes_no_more_memory_than_its_actions_are_charged(tmp_path, side, iterations):
    # 64 ranks of many actions each, 1,024 ranks of few (what a rank costs whatever
    # its actions weighs most: tifile.BYTES_PER_RANK)
    ranks = side * side
    model = tmp_path / "torus.machine"
    model.write_text(dumps(torus_machine((side, side))))
    small, _ = jacobi(tmp_path / "small", side, 1)
    big, actions = jacobi(tmp_path / "big", side, iterations)
    assert actions > 90_000
    once = peak_bytes(model, big) - peak_bytes(model, small)
    charged = replay_memory(actions, once=True, ranks=ranks)
    assert 0 < once <= charged, (once, charged)
    kept = peak_bytes(model, big, KEPT) - peak_bytes(model, small, KEPT)
    charged = replay_memory(actions, ranks=ranks)
    assert 0 < kept <= charged, (kept, charged)
    # the one-shot replay lets the trace, the program's nodes and the operations go:
    # measured 0.63-0.72 of the kept replay's growth (bench_replay_memory.py, 10^5-10^6
    # actions); since the trace goes as the compiler takes it, 0.50
    assert once < 0.65 * kept, (once, kept)
