"""Write the OSU log fixtures: SYNTHETIC numbers in the OSU micro-benchmarks' real format.

The headers, column layouts and interleaved job lines are those of real OMB output
(v5.8 to v7.5: ``# OSU MPI Latency Test v7.3``, ``# Datatype: MPI_CHAR.``,
``# Size          Latency (us)``, ``Bi-Bandwidth (MB/s)``, ``Validation`` columns,
``-f`` Min/Max/Iterations columns, osu_barrier's size-less table, osu_mbw_mr's window
line); the times come from simple link models with 2% noise (fixed seed), so the tests
know what a fit should find. Run ``python generate.py`` to rebuild them.

* ``job-seven-benchmarks.log``: a Slurm job running seven benchmarks on 2 tasks one
  after another (prose, ``+ srun`` lines and a UCX warning between and inside tables).
  Its osu_latency table is 9.6 us + bytes / 2500 MB/s; osu_bw streams at
  bytes / (0.5 us + bytes / 2800 MB/s).
* ``prose-first-latency.log``: "Number of tasks = 2" and friends, then one osu_latency
  (v5.8, from size 0) table.
* ``osu_bw.txt``: the output of osu_bw v7.5 alone (a ``Validation`` column).
* ``mixed-versions.log``: osu_bibw v3.3 (``Bi-Bandwidth``), osu_mbw_mr, osu_allreduce with
  ``-f`` and a non-blocking osu_iallreduce (no latency or bandwidth column).
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).parent
rng = random.Random(2025)


def noisy(value: float) -> float:
    return value * (1 + rng.gauss(0, 0.02))


def sizes(first: int, last: int) -> list[int]:
    out = [first]
    while out[-1] < last:
        out.append(max(1, out[-1] * 2))
    return out


def row(size: int, *values: float | str) -> str:
    cells = "".join(f"{v:>18.2f}" if isinstance(v, float) else f"{v:>18}" for v in values)
    return f"{size:<10d}{cells}"


def latency(us0: float, mbs: float, first: int = 1, last: int = 4194304) -> list[str]:
    return [row(d, noisy(us0 + d / mbs)) for d in sizes(first, last)]


def bandwidth(gap_us: float, mbs: float, last: int = 4194304, extra: str = "") -> list[str]:
    rows = []
    for d in sizes(1, last):
        bw = noisy(d / (gap_us + d / mbs))
        rows.append(row(d, bw, extra) if extra else row(d, bw))
    return rows


def seven() -> str:
    out = ["Number of tasks = 2", "Nodes: node[017-018]", "Started Tue Mar 11 10:02:41 CET 2025",
           "+ srun -n 2 ./osu_latency",
           "# OSU MPI Latency Test v7.3", "# Datatype: MPI_CHAR.",
           "# Size          Latency (us)"]  # fmt: skip
    out += latency(9.6, 2500.0, first=1)
    out += ["+ srun -n 2 ./osu_bw", "# OSU MPI Bandwidth Test v7.3", "# Datatype: MPI_CHAR.",
            "# Size      Bandwidth (MB/s)"]  # fmt: skip
    bw = bandwidth(0.5, 2800.0)
    out += bw[:9] + ["[1741683790.112233] [node018:40211:0]  ucp_context.c:1157 UCX  WARN"
                     "  transport 'rc_mlx5' is not available"] + bw[9:]  # fmt: skip
    out += ["+ srun -n 2 ./osu_bibw", "# OSU MPI Bi-Directional Bandwidth Test v7.3",
            "# Datatype: MPI_CHAR.", "# Size      Bandwidth (MB/s)"]  # fmt: skip
    out += bandwidth(0.6, 5200.0)
    out += ["+ srun -n 2 ./osu_allreduce", "", "# OSU MPI Allreduce Latency Test v7.3",
            "# Datatype: MPI_INT.", "# Size       Avg Latency(us)"]  # fmt: skip
    out += latency(11.0, 1200.0, first=4, last=1048576)
    out += ["+ srun -n 2 ./osu_bcast", "", "# OSU MPI Broadcast Latency Test v7.3",
            "# Datatype: MPI_CHAR.", "# Size       Avg Latency(us)"]  # fmt: skip
    out += latency(6.0, 2000.0, last=1048576)
    out += ["+ srun -n 2 ./osu_alltoall", "",
            "# OSU MPI All-to-All Personalized Exchange Latency Test v7.3",
            "# Datatype: MPI_CHAR.", "# Size       Avg Latency(us)"]  # fmt: skip
    out += latency(12.0, 1500.0, last=1048576)
    out += ["+ srun -n 2 ./osu_barrier", "", "# OSU MPI Barrier Latency Test v7.3",
            "# Avg Latency(us)", f"{noisy(10.2):>18.2f}",
            "Finished Tue Mar 11 10:04:12 CET 2025"]  # fmt: skip
    return "\n".join(out) + "\n"


def prose_first() -> str:
    out = ["Number of tasks = 2", "Running on hosts: cn041 cn042",
           "mpirun -np 2 --map-by node ./osu_latency",
           "# OSU MPI Latency Test v5.8", "# Size          Latency (us)"]  # fmt: skip
    rows = latency(1.7, 11000.0, first=0)
    rows[0] = row(0, noisy(1.65))
    out += rows[:12] + [
        "--------------------------------------------------------------------------",
        "WARNING: There was an error initializing an OpenFabrics device.",
        "--------------------------------------------------------------------------",
    ]
    out += rows[12:] + ["Job finished with exit code 0"]  # fmt: skip
    return "\n".join(out) + "\n"


def bw_alone() -> str:
    out = ["", "# OSU MPI Bandwidth Test v7.5", "# Datatype: MPI_CHAR.",
           "# Size      Bandwidth (MB/s)        Validation"]  # fmt: skip
    out += bandwidth(0.25, 12000.0, extra="Pass")
    return "\n".join(out) + "\n"


def mixed_versions() -> str:
    out = ["# OSU MPI Bi-Directional Bandwidth Test v3.3", "# Size     Bi-Bandwidth (MB/s)"]
    out += bandwidth(0.9, 3300.0)
    out += ["", "# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2",
            "# [ pairs: 1 ] [ window size: 64 ]",
            "# Size                  MB/s        Messages/s"]  # fmt: skip
    for d in sizes(1, 4194304):
        bw = noisy(d / (0.4 + d / 3100.0))
        out.append(row(d, bw, bw * 1e6 / d))
    out += [
        "",
        "# OSU MPI Allreduce Latency Test v5.8",
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations",
    ]
    for d in sizes(4, 1048576):
        avg = noisy(3.0 + d / 900.0)
        spread = avg * 0.05
        out.append(row(d, avg, avg - spread, avg + spread, "1000" if d < 8192 else "100"))
    out += [
        "",
        "# OSU MPI Non-blocking Allreduce Latency Test v5.8",
        "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait",
        "# Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)",
    ]
    for d in sizes(4, 65536):
        comm = noisy(3.5 + d / 800.0)
        out.append(row(d, comm * 2.1, comm * 1.1, comm, 9.5))
    return "\n".join(out) + "\n"


def main() -> None:
    (HERE / "job-seven-benchmarks.log").write_text(seven())
    (HERE / "prose-first-latency.log").write_text(prose_first())
    (HERE / "osu_bw.txt").write_text(bw_alone())
    (HERE / "mixed-versions.log").write_text(mixed_versions())


if __name__ == "__main__":
    main()
