"""Dragonflies and fat trees (issue 21): generate, load, validate and route, against json.

The dragonfly is ``dragonfly 99 14 7 7`` by default: 99 groups of 14 routers, 7
terminals and 7 global links a router (balanced as Kim et al. 2008 have it, a = 2p =
2h, g = a*h + 1): 9,702 terminals, 1,386 routers, 23,562 links. The fat tree is
``fattree 24 3`` (a 24-ary 3-tree: 13,824 compute processors, 1,728 switches of 48
ports). For each this times

* ``generate``: ``generate(kind, sizes, ...)`` (the model objects);
* ``load``: ``parasol_core.loads(text)`` of the machine written as text (with its switch
  processor type); ``validate``: ``validate(machine)``;
* ``json.loads``: the baseline, ``json.loads`` of ``json.dumps(to_data(machine))``, the
  same model as JSON, in the same run, and the ratio of generate, of load and of load +
  validate to it (target: within 2x);
* ``index``: ``index_of(topology)``, once per topology;
* ``100k routes``: ``index.routes(src, dst)`` of 100,000 random pairs of compute
  processors (switches run no program, so no route starts or ends at one) by the
  topology's technique: ``dragonfly-minimal``, then ``dragonfly-valiant``; ``updown``
  (target: under 1 s), and ``shortest`` on a batch of 50 sources for comparison.

Each timed step runs ``--repeat`` times (the median is printed; load, validate and
json.loads take turns).

    .venv/bin/python benchmarks/bench_networks.py [--repeat N] [--pairs N]
        [--dragonfly G A P H] [--fattree K N]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from bench_nd_torus import load_validate_json, median, timed  # the torus bench's timing

from parasol_core.model import Machine, Processor, Timing
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import generate
from parasol_core.topology.index import TopologyIndex
from parasol_core.topology.switches import compute_count


def bench(kind: str, sizes: list[int], routings: list[str], args: argparse.Namespace) -> bool:
    t_gen, topo = median(lambda: generate(kind, sizes, 1.0e-07, 4.0e-11), args.repeat)
    cpu = Processor(id=1, name="compute", timings={"iga": Timing(1e-9)})
    switch = Processor(id=2, name="switch", role="switch")
    machine = Machine(id=1, name=f"{kind} {' '.join(map(str, sizes))}", processor_count=2,
                      topology_count=1, processors=[cpu, switch], topologies=[topo])  # fmt: skip
    text = dumps(machine)
    data = json.dumps(to_data(machine))
    t_load, t_val, t_json, loaded = load_validate_json(text, data, args.repeat)
    hw = loaded.hardware()
    compute = compute_count(loaded, hw)
    print(f"{kind} {' '.join(map(str, sizes))}: {compute:,} compute processors, "
          f"{hw.processor_count - compute:,} switches, {len(hw.links):,} links; text "
          f"{len(text) / 1e6:.1f} MB ({text.count(chr(10)):,} lines), JSON "
          f"{len(data) / 1e6:.1f} MB")  # fmt: skip
    rows = [
        ("generate", t_gen, f"{t_gen / t_json:.2f} x json.loads"),
        ("load", t_load, f"{t_load / t_json:.2f} x json.loads"),
        ("validate", t_val, ""),
        ("load + validate", t_load + t_val, f"{(t_load + t_val) / t_json:.2f} x json.loads"),
        ("json.loads", t_json, "1.00"),
    ]
    t_index, index = median(lambda: TopologyIndex(hw), args.repeat)
    rows.append(("index", t_index, ""))
    rng = np.random.default_rng(21)
    src = rng.integers(1, compute + 1, args.pairs)
    dst = rng.integers(1, compute + 1, args.pairs)
    route_times = {}
    for routing in routings:
        hw.routing = routing
        index = TopologyIndex(hw)
        index.routes(src[:10], dst[:10])  # warm the lazy lookup arrays
        t, batch = median(lambda i=index: i.routes(src, dst), args.repeat)
        hops = batch.hops
        route_times[routing] = t
        rows.append((f"{args.pairs:,} routes {routing}", t,
                     f"{hops.mean():.2f} hops mean, {hops.max()} max, "
                     f"{args.pairs / t / 1e6:.2f} M routes/s"))  # fmt: skip
    hw.routing = "shortest"
    short = TopologyIndex(hw)
    few = rng.integers(1, compute + 1, 50)
    pick = np.repeat(few, 20)
    t_short, sb = timed(lambda: short.routes(pick, dst[: pick.shape[0]]))
    rows.append((f"{pick.shape[0]:,} routes shortest, 50 sources", t_short,
                 f"{sb.hops.mean():.2f} hops mean (adjacency and 50 BFS included)"))  # fmt: skip
    for name, t, note in rows:
        print(f"  {name:36s} {t * 1000:10.1f} ms  {note}")
    ratio = (t_load + t_val) / t_json
    ok = ratio <= 2 and t_gen / t_json <= 2 and all(t < 1 for t in route_times.values())
    print(f"  targets: generate {t_gen / t_json:.2f}x, load + validate {ratio:.2f}x json.loads "
          f"(within 2x); routes {', '.join(f'{k} {v:.3f} s' for k, v in route_times.items())} "
          f"(under 1 s) -> {'met' if ok else 'NOT met'}")  # fmt: skip
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--dragonfly", type=int, nargs=4, default=[99, 14, 7, 7])
    ap.add_argument("--fattree", type=int, nargs=2, default=[24, 3])
    args = ap.parse_args()
    bench("dragonfly", args.dragonfly, ["dragonfly-minimal", "dragonfly-valiant"], args)
    bench("fattree", args.fattree, ["updown"], args)


if __name__ == "__main__":
    main()
