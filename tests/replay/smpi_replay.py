"""Running SimGrid's own replay (``smpirun -replay``, Debian's libsimgrid-dev 3.32) on a
machine's platform, for the agreement tests and benchmarks/bench_replay.py: the
settings of issue 31 (CM02 with no factors, no overheads, SMPI's 65,536-byte eager
thresholds, fixed collective algorithms), each rank's finish read from the replay's
own log of every action."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
from replay_platforms import simgrid_platform

from parasol_core.model import Machine

SMPIRUN = shutil.which("smpirun")
SMPICC = shutil.which("smpicc")
REPLAYER = next((p for p in ("/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain",
                             "/usr/lib/simgrid/smpireplaymain") if Path(p).exists()), None)  # fmt: skip
AVAILABLE = bool(SMPIRUN and SMPICC and REPLAYER)
WHY = "SimGrid's smpirun, smpicc and smpireplaymain are not installed (make simgrid)"

SETTINGS = [
    "--cfg=network/model:CM02", "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1", "--cfg=network/weight-S:0",
    "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:1e30",
    "--cfg=smpi/async-small-thresh:65536", "--cfg=smpi/send-is-detached-thresh:65536",
    "--cfg=smpi/os:0:0:0:0:0", "--cfg=smpi/or:0:0:0:0:0", "--cfg=smpi/ois:0:0:0:0:0",
    "--cfg=smpi/bcast:binomial_tree", "--cfg=smpi/allreduce:rdb", "--cfg=smpi/alltoall:pair",
    "--cfg=smpi/reduce:binomial", "--cfg=smpi/barrier:ompi_basic_linear",
    "--cfg=smpi/allgather:ring", "--cfg=smpi/gather:ompi_basic_linear",
    "--cfg=smpi/scatter:ompi_basic_linear", "--cfg=smpi/alltoallv:ring",
    "--cfg=smpi/allgatherv:ring", "--cfg=smpi/reduce_scatter:mpich_pair",
]  # fmt: skip
"""Issue 31's settings, and the algorithms of the collectives it does not fix as
parasol_core.replay decomposes them (ring allgather, linear gather and scatter, ring
alltoallv and allgatherv, pairwise reduce_scatter)."""

_ACTION = re.compile(r"^\[[^:\]]+:(\d+):\(\d+\) ([0-9.e+-]+)\] .*\[smpi_replay/VERBOSE\]")
_TOTAL = re.compile(r"Simulation time ([0-9.e+-]+)")


def write_platform(machine: Machine, directory: Path) -> tuple[Path, Path]:
    xml, hosts = simgrid_platform(machine)
    platform, hostfile = directory / "platform.xml", directory / "hostfile"
    platform.write_text(xml)
    hostfile.write_text(hosts)
    return platform, hostfile


def smpi_replay(platform: Path, hostfile: Path, index: Path, ranks: int, extra: tuple = (),
                log: bool = True) -> tuple[float, np.ndarray | None, float]:  # fmt: skip
    """SimGrid's replay of the trace ``index`` (run in its folder): the simulated time,
    each rank's finish (its last action's end; None without ``log``) and the process's
    wall seconds."""
    cmd = [SMPIRUN, "-np", str(ranks), "-platform", str(platform), "-hostfile", str(hostfile),
           *SETTINGS, *extra, "--log=root.thres:critical", "--log=smpi_replay.thres:info"]  # fmt: skip
    if log:
        cmd.append("--log=smpi_replay.thres:verbose")
    cmd += ["-replay", index.name, REPLAYER]
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=index.parent, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - began
    text = done.stdout + done.stderr
    if done.returncode != 0 or _TOTAL.search(text) is None:
        raise RuntimeError(f"smpirun -replay failed ({done.returncode}): {text[-2000:]}")
    total = float(_TOTAL.search(text).group(1))
    if not log:
        return total, None, wall
    finish = np.zeros(ranks)
    for line in text.splitlines():
        m = _ACTION.match(line)
        if m:
            r, t = int(m.group(1)), float(m.group(2))
            finish[r] = max(finish[r], t)
    return total, finish, wall


def for_simgrid_replay(index: Path) -> Path:
    """The trace ``index`` as SimGrid 3.32's own replay reads a receive from any source:
    its tracing writes the source of an ``MPI_ANY_SOURCE`` receive as -333
    (``MPI_UNDEFINED``: the world rank of no process), which its replay takes for a
    rank and waits on forever, and a wait on such an irecv as ``wait -333 D T``, which
    finds no request (the replay files it under source -556, ``MPI_ANY_SOURCE`` - 1)
    and returns at once. The copy (beside the original, ``sg-`` before its names) says
    -555 and -556 instead, so SimGrid replays what the program did; the index itself
    when it has no such line."""
    files = [index.parent / f for f in index.read_text().split()]
    texts = [f.read_text() for f in files]
    fixed = [re.sub(r"^(\d+ wait) -333 ", r"\1 -556 ",
                    re.sub(r"^(\d+ i?recv) -333 ", r"\1 -555 ", t, flags=re.M), flags=re.M)
             for t in texts]  # fmt: skip
    if fixed == texts:
        return index
    names = []
    for f, text in zip(files, fixed):
        out = f.with_name("sg-" + f.name)
        out.write_text(text)
        names.append(str(out.relative_to(index.parent)))
    copy = index.with_name("sg-" + index.name)
    copy.write_text("\n".join(names) + "\n")
    return copy


def trace_program(source: Path, ranks: int, directory: Path, name: str) -> Path:
    """Compile an MPI program with smpicc and trace it (``smpirun -trace-ti``) on a flat
    cluster; the index file. ``smpi_execute_flops`` calls are its computation (the time
    between calls is not benchmarked: ``smpi/simulate-computation:no``)."""
    exe = directory / name
    subprocess.run([SMPICC, "-O1", str(source), "-o", str(exe)], check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    hosts = "".join(f"h{i}\n" for i in range(ranks))
    (directory / "trace-hosts").write_text(hosts)
    (directory / "trace-platform.xml").write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        '<platform version="4.1">\n<cluster id="c" prefix="h" suffix="" '
        f'radical="0-{ranks - 1}" speed="1Gf" bw="1GBps" lat="1us"/>\n</platform>\n')  # fmt: skip
    done = subprocess.run(
        [SMPIRUN, "-np", str(ranks), "-platform", "trace-platform.xml", "-hostfile", "trace-hosts",
         "-trace-ti", f"--cfg=tracing/filename:{name}.txt", "--cfg=smpi/simulate-computation:no",
         "--log=root.thres:critical", f"./{name}"],
        cwd=directory, capture_output=True, text=True, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"smpirun -trace-ti {name} failed: {done.stderr[-2000:]}")
    return directory / f"{name}.txt"
