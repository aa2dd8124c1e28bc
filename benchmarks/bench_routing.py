"""Routing and transfer-time speed on the Parsytec GCel sample (16 x 32 grid, 976 links).

Two workloads, each against a plain-Python baseline measured in the same run:

* **routes**: 100,000 XY routes between random processor pairs.
  - ``baseline``: a self-contained plain-Python router, the obvious way: a dict from
    processor pair to link id built from the links, then per message a loop stepping
    along X and then Y, looking up each link;
  - ``route()``: :meth:`TopologyIndex.route` called once per message (the same kind of
    loop, through the plug-in interface);
  - ``routes()``: :meth:`TopologyIndex.routes`, all 100,000 at once (numpy).
* **transfer**: a network state of 10,000 active routes, and the transfer time of every
  one of them in that state (t = sum of latencies + bytes * max(speed * routes sharing
  the link)).
  - ``baseline``: plain Python over the routes' link lists: count routes per link with
    a dict, then a loop per route;
  - ``transfer_time()``: :meth:`NetworkState.transfer_time` once per route;
  - ``transfer_times()``: :meth:`NetworkState.transfer_times`, all at once (numpy).

Each figure is the best of ``--repeat`` runs; ratios are baseline time / time, so
above 1 is faster than the baseline. Results are checked against the baseline's.

    .venv/bin/python benchmarks/bench_routing.py [--repeat N] [--routes N] [--active N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from parasol_core.syntax.loader import load
from parasol_core.topology.index import TopologyIndex, index_of
from parasol_core.topology.transfer import RouteTable

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_models" / "parsytec-gcel.machine"
NBYTES = 4096.0


def best(func: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


# --------------------------------------------------------------------------- baselines


def baseline_routes(topology, pairs: list[tuple[int, int]]) -> list[tuple[list[int], list[int]]]:
    """XY routing in plain Python, from the model objects."""
    width, _height = topology.shape
    link_of: dict[tuple[int, int], int] = {}
    for link in sorted(topology.links, key=lambda lk: lk.id):
        procs = link.connect
        for i, a in enumerate(procs):
            for b in procs[i + 1 :]:
                link_of.setdefault((min(a, b), max(a, b)), link.id)
    out = []
    for src, dst in pairs:
        x, y = (src - 1) % width, (src - 1) // width
        tx, ty = (dst - 1) % width, (dst - 1) // width
        p, procs, links = src, [src], []
        while x != tx:
            step = 1 if tx > x else -1
            q = p + step
            links.append(link_of[(min(p, q), max(p, q))])
            x, p = x + step, q
            procs.append(p)
        while y != ty:
            step = width if ty > y else -width
            q = p + step
            links.append(link_of[(min(p, q), max(p, q))])
            y, p = y + (1 if step > 0 else -1), q
            procs.append(p)
        out.append((procs, links))
    return out


def baseline_transfer(topology, routes: list[list[int]], nbytes: float) -> list[float]:
    """The transfer-time formula in plain Python over link-id lists."""
    latency = {link.id: link.latency.mean for link in topology.links}
    speed = {link.id: link.speed.mean for link in topology.links}
    load: dict[int, int] = {}
    for links in routes:
        for lid in set(links):
            load[lid] = load.get(lid, 0) + 1
    out = []
    for links in routes:
        lat = sum(latency[lid] for lid in links)
        worst = max((speed[lid] * load[lid] for lid in links), default=0.0)
        out.append(lat + nbytes * worst)
    return out


# --------------------------------------------------------------------------- runs


def bench_routes(hw, index: TopologyIndex, n: int, repeat: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(1994)
    src = rng.integers(1, index.count + 1, n)
    dst = rng.integers(1, index.count + 1, n)
    pairs = list(zip(src.tolist(), dst.tolist()))

    t_base, base = best(lambda: baseline_routes(hw, pairs), repeat)
    t_loop, loop = best(lambda: [index.route(a, b) for a, b in pairs], repeat)
    t_batch, batch = best(lambda: index.routes(src, dst), repeat)

    for i in range(0, n, max(1, n // 1000)):
        procs, links = base[i]
        assert loop[i].processors == tuple(procs) and loop[i].links == tuple(links)
        assert batch[i] == loop[i]
    hops = int(batch.hops.sum())
    print(f"{n:,} XY routes on the GCel, {hops:,} hops in all")
    return [("baseline (plain Python)", t_base), ("route() per message", t_loop),
            ("routes() batch", t_batch)]  # fmt: skip


def bench_transfer(machine, n: int, repeat: int) -> list[tuple[str, float]]:
    hw = machine.hardware()
    rng = np.random.default_rng(4)
    src = rng.integers(1, 513, n)
    dst = rng.integers(1, 513, n)
    t_plot, (table, ids) = best(lambda: _plotted(machine, src, dst), 1)
    state = table.state(ids.tolist())
    routes = [list(table[int(i)].links) for i in ids]

    t_base, base = best(lambda: baseline_transfer(hw, routes, NBYTES), repeat)

    def one_by_one() -> list[float]:
        fresh = table.state(ids.tolist())  # the link loads are part of the work
        return [fresh.transfer_time(int(i), NBYTES) for i in ids]

    def all_at_once() -> np.ndarray:
        fresh = table.state(ids.tolist())
        return fresh.transfer_times(ids, NBYTES)

    t_loop, loop = best(one_by_one, repeat)
    t_batch, batch = best(all_at_once, repeat)
    assert np.allclose(loop, base, rtol=1e-12, atol=0)
    assert np.allclose(batch, base, rtol=1e-12, atol=0)
    print(f"a state of {len(state):,} active routes (plotted with add_many in "
          f"{t_plot * 1e3:.1f} ms); transfer time of each")  # fmt: skip
    return [("baseline (plain Python)", t_base), ("transfer_time() per route", t_loop),
            ("transfer_times() batch", t_batch)]  # fmt: skip


def _plotted(machine, src, dst) -> tuple[RouteTable, np.ndarray]:
    table = RouteTable.for_machine(machine)
    return table, table.add_many(src, dst)


def report(rows: list[tuple[str, float]]) -> None:
    base = rows[0][1]
    for name, seconds in rows:
        print(f"  {name:28s} {seconds * 1e3:10.1f} ms   x{base / seconds:7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--routes", type=int, default=100_000)
    parser.add_argument("--active", type=int, default=10_000)
    args = parser.parse_args()

    machine = load(SAMPLE)
    hw = machine.hardware()
    start = time.perf_counter()
    index = index_of(hw)
    index.routes([1], [512])  # builds the pair table too
    print(f"index of the GCel topology built in {(time.perf_counter() - start) * 1e3:.1f} ms")
    report(bench_routes(hw, index, args.routes, args.repeat))
    report(bench_transfer(machine, args.active, args.repeat))


if __name__ == "__main__":
    main()
