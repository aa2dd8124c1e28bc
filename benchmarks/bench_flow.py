"""Issue 36: the flow engine (``parasol_core/simulate/flow.py``, ``native/flow.c``) against
SimGrid 3.32 on the same workloads in the same run, its growth with the number of
messages, and its memory against the ``--max-memory`` estimate.

Every case runs in a fresh process: the machine is built (a torus, 1 us and 1 GB/s
links, ``# piui: duplex = 0`` unless said), the phase's messages made, freed memory
given back (``malloc_trim``) and the peak resident size reset; then ``simulate()`` runs
the phase end to end (routes plotted inside). A case's figures: process wall and CPU
seconds of that call, its events, the peak resident size above the size before it
(``VmHWM``) and the memory budget's estimate of the phase (``budget.phase_memory``).

SimGrid (Debian's python3-simgrid for the system python3, ``tests/simgrid_flow_probe.py``)
runs CM02 with the settings of issue 36, its default update mode (Lazy) and precision,
on a platform with PARASOL's routes: an explicit route per pair in a Full zone
(``tests/simgrid_platforms.py``), or, for the 32^3 halo (a Full zone of 32,768 hosts
would need a 10^9-entry routing table), SimGrid's own TORUS cluster, whose routes
between neighbours are PARASOL's. Its figure is the process's wall time (loading the
platform included) and ``Engine.run()``'s alone; a run past ``--simgrid-limit`` seconds
is stopped and reported as "> limit". Agreement: the largest relative difference
between SimGrid's ends and PARASOL's under cm02; with ``--simgrid-exact`` SimGrid runs
once more in its Full update mode with a timing precision of 1e-15 s, whose ends are
the max-min answer (its default Lazy mode misses some constraints; see
tests/test_flow_simgrid.py).

    .venv/bin/python benchmarks/bench_flow.py [--only NAME ...] [--simgrid-limit S]
                                              [--no-simgrid] [--simgrid-exact]
                                              [--growth M ...] [--window S]

NAME: ``halo32``, ``random16``, ``growth``, ``halo100``. Linux only (``/proc``); the
100^3 halo and 10^6 messages on 64^3 take several GB.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "simgrid_flow_probe.py"
SYSTEM_PYTHON = "/usr/bin/python3"
# SimGrid's own numerics made exact (tests/test_flow_simgrid.py says why)
EXACT = ("--cfg=network/optim:Full", "--cfg=surf/precision:1e-15")
LATENCY, SPEED, KIB64 = 1e-6, 1e-9, 65536.0


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


# --------------------------------------------------------------------------- workloads


def machine(side: int, duplex: float | None):
    from parasol_core.model import Machine
    from parasol_core.topology.generators import torus

    topology = torus([side] * 3, LATENCY, SPEED)
    topology.duplex = duplex
    return Machine(topologies=[topology])


def random_messages(side: int, count: int, window: float, seed: int = 1):
    """``count`` random 64 KiB messages (never to oneself), starting uniformly over
    ``window`` seconds (0: all at once)."""
    from parasol_core.simulate.messages import MessageArrays

    rng = np.random.default_rng(seed)
    n = side**3
    src = rng.integers(1, n + 1, count)
    dst = rng.integers(1, n, count)
    dst[dst >= src] += 1
    start = rng.uniform(0, window, count) if window else None
    return MessageArrays(src, dst, KIB64, start)


def phase_of(spec: dict):
    """The machine and messages of a case: ``{"side", "duplex", "what": "halo" |
    "random", "count", "window"}``."""
    from parasol_core.simulate.patterns import make_pattern_arrays

    m = machine(spec["side"], spec["duplex"])
    if spec["what"] == "halo":
        return m, make_pattern_arrays(m, "halo", 1024.0)
    return m, random_messages(spec["side"], spec["count"], spec.get("window", 0.0))


# --------------------------------------------------------------------------- one case


def one(spec: dict) -> dict:
    """Run a case in this process; its figures (and, with ``ends``, the ends saved)."""
    from parasol_core.base import budget
    from parasol_core.simulate.phases import simulate
    from parasol_core.topology.index import index_of
    from parasol_core.topology.steps import route_steps
    from parasol_core.topology.virtual import hardware_of

    with budget.limits(memory=1 << 40):  # measured here, not refused
        m, msgs = phase_of(spec)
    index = index_of(hardware_of(m))
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    with budget.limits(memory=1 << 40):  # measured here, not refused
        result = simulate(m, messages=msgs, sharing=spec["sharing"])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = _status("VmHWM") - before
    steps = route_steps(index.layout, index.technique, result.src, result.dst)
    flow = spec["sharing"] != "max" or spec["duplex"] is not None
    estimate = budget.phase_memory(len(result.src), steps, flow, index.link_ids.shape[0])
    if spec.get("ends"):
        np.save(spec["ends"], result.end)
    return {"messages": len(result.src), "steps": steps, "wall": wall, "cpu": cpu,
            "events": result.events, "peak": peak, "estimate": estimate,
            "makespan": result.makespan}  # fmt: skip


def run_case(spec: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec)],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


# --------------------------------------------------------------------------- SimGrid


def torus_cluster(side: int) -> str:
    n = side**3
    return ("<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f'<cluster id="c" prefix="p" radical="1-{n}" suffix="" speed="1Gf" bw="1GBps" '
            f'lat="1us" topology="TORUS" topo_parameters="{side},{side},{side}"/>\n'
            "</platform>\n")  # fmt: skip


def simgrid(spec: dict, directory: Path, limit: float, cluster: bool,
            extra: tuple[str, ...] = ()) -> dict:  # fmt: skip
    """SimGrid on a case; its wall time, run time and ends (None past ``limit``)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from simgrid_platforms import write_phase

    m, msgs = phase_of(spec)
    platform, messages = write_phase(m, msgs, directory)
    if cluster:
        platform.write_text(torus_cluster(spec["side"]))
    began = time.perf_counter()
    try:
        done = subprocess.run([SYSTEM_PYTHON, str(PROBE), str(platform), str(messages), *extra],
                              capture_output=True, text=True, timeout=limit)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"wall": None, "limit": limit}
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall": wall, "run": got["seconds"], "ends": np.asarray(got["ends"])}


def simgrid_available() -> bool:
    try:
        done = subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                              timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


# --------------------------------------------------------------------------- sections


def row(label: str, r: dict, base: dict | None = None) -> None:
    ratio = f"  {r['wall'] / base['wall']:6.2f}x the baseline" if base else ""
    print(f"  {label:34} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU {r['events']:>9,} "
          f"events  peak {r['peak'] / 1e6:8.1f} MB ({r['peak'] / r['estimate']:.2f}x its "
          f"estimate){ratio}", flush=True)  # fmt: skip


def versus_simgrid(title: str, spec: dict, args: argparse.Namespace, cluster: bool) -> None:
    print(f"{title}", flush=True)
    base = run_case({**spec, "duplex": None, "sharing": "max"})
    row("default rule, no annotations", base)
    ours = {}
    with tempfile.TemporaryDirectory() as tmp:
        for sharing in ("max", "maxmin", "cm02"):
            ends = str(Path(tmp) / f"{sharing}.npy")
            ours[sharing] = run_case({**spec, "sharing": sharing, "ends": ends})
            ours[sharing]["end"] = np.load(ends)
            row(f"{sharing}, duplex links", ours[sharing], base)
        print(
            f"  messages {base['messages']:,}; makespans: default {base['makespan']:.6g} s, "
            + ", ".join(f"{k} {v['makespan']:.6g} s" for k, v in ours.items()),
            flush=True,
        )
        if args.no_simgrid or not simgrid_available():
            print("  SimGrid: not run")
            return
        sg = simgrid(spec, Path(tmp), args.simgrid_limit, cluster)
        exact = None
        if args.simgrid_exact:
            exact = simgrid(spec, Path(tmp), args.simgrid_limit, cluster, EXACT)
    if exact is not None and exact["wall"] is not None:
        diff = np.abs(exact["ends"] - ours["cm02"]["end"]) / ours["cm02"]["end"]
        print(f"  SimGrid 3.32 (CM02) in its Full update mode, timing precision 1e-15 s: "
              f"{exact['wall']:.1f} s wall; PARASOL cm02's ends within {diff.max():.2g} of "
              f"its (median {np.median(diff):.2g}; {int((diff > 1e-6).sum())} over 1e-6)",
              flush=True)  # fmt: skip
    elif exact is not None:
        print(f"  SimGrid 3.32 in its Full update mode: stopped after {exact['limit']:.0f} s")
    if sg["wall"] is None:
        print(f"  SimGrid 3.32 (CM02): stopped after {sg['limit']:.0f} s; PARASOL cm02 is "
              f"> {sg['limit'] / ours['cm02']['wall']:.0f}x faster, maxmin "
              f"> {sg['limit'] / ours['maxmin']['wall']:.0f}x")  # fmt: skip
        return
    diff = np.abs(sg["ends"] - ours["cm02"]["end"]) / ours["cm02"]["end"]
    print(f"  SimGrid 3.32 (CM02): {sg['wall']:.1f} s wall ({sg['run']:.1f} s in run()); "
          f"makespan {sg['ends'].max():.6g} s; PARASOL cm02 {sg['wall'] / ours['cm02']['wall']:.0f}x "
          f"faster, maxmin {sg['wall'] / ours['maxmin']['wall']:.0f}x; per-message ends within "
          f"{diff.max():.2g} of SimGrid's (median {np.median(diff):.2g}; "
          f"{int((diff > 1e-6).sum())} over 1e-6)", flush=True)  # fmt: skip


def growth(args: argparse.Namespace) -> None:
    side, delta = 64, args.window
    print(f"growth: random 64 KiB messages on a {side}^3 torus, duplex, maxmin, a start every "
          f"{delta * 1e9:g} ns on average (the window grows with the count)", flush=True)  # fmt: skip
    rows = []
    for count in args.growth:
        r = run_case({"side": side, "duplex": 0.0, "what": "random", "count": count,
                      "window": count * delta, "sharing": "maxmin"})  # fmt: skip
        rows.append(r)
        row(f"{count:,} messages", r)
        if len(rows) > 1:
            a, b = rows[-2], rows[-1]
            k = np.log(b["wall"] / a["wall"]) / np.log(b["messages"] / a["messages"])
            kc = np.log(b["cpu"] / a["cpu"]) / np.log(b["messages"] / a["messages"])
            print(f"    time ~ M^{k:.2f} wall, M^{kc:.2f} CPU since the last", flush=True)
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        k = np.log(b["wall"] / a["wall"]) / np.log(b["messages"] / a["messages"])
        kc = np.log(b["cpu"] / a["cpu"]) / np.log(b["messages"] / a["messages"])
        print(f"  from {a['messages']:,} to {b['messages']:,}: time ~ M^{k:.2f} wall, "
              f"M^{kc:.2f} CPU; {b['peak'] / b['messages']:.0f} bytes a message at the largest "
              f"({b['steps'] / b['messages']:.1f} route steps a message)", flush=True)  # fmt: skip


def halo100() -> None:
    print("halo on the 100^3 torus (6,000,000 messages of 1 KiB)", flush=True)
    spec = {"side": 100, "what": "halo"}
    base = run_case({**spec, "duplex": None, "sharing": "max"})
    row("default rule, no annotations", base)
    for sharing in ("max", "maxmin"):
        row(f"{sharing}, duplex links", run_case({**spec, "duplex": 0.0, "sharing": sharing}), base)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", nargs="+", choices=["halo32", "random16", "growth", "halo100"])
    p.add_argument("--simgrid-limit", type=float, default=1800.0, metavar="S")
    p.add_argument("--no-simgrid", action="store_true")
    p.add_argument(
        "--simgrid-exact",
        action="store_true",
        help="SimGrid once more in its Full update mode, for the agreement",
    )
    p.add_argument("--growth", type=int, nargs="+", metavar="M",
                   default=[10_000, 30_000, 100_000, 300_000, 1_000_000])  # fmt: skip
    p.add_argument(
        "--window",
        type=float,
        default=1e-7,
        metavar="S",
        help="seconds between starts on average in the growth runs",
    )
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one))))
        return
    only = args.only or ["halo32", "random16", "growth", "halo100"]
    if "halo32" in only:
        versus_simgrid("halo on a 32^3 torus (196,608 messages of 1 KiB)",
                       {"side": 32, "duplex": 0.0, "what": "halo"}, args, cluster=True)  # fmt: skip
    if "random16" in only:
        versus_simgrid("10,000 random 64 KiB messages at once on a 16^3 torus",
                       {"side": 16, "duplex": 0.0, "what": "random", "count": 10_000}, args,
                       cluster=False)  # fmt: skip
    if "growth" in only:
        growth(args)
    if "halo100" in only:
        halo100()


if __name__ == "__main__":
    main()
