"""Fugaku's 6-D torus (issue 21): generate, load, validate and route it, against json.

Fugaku's Tofu interconnect is a 24 x 23 x 24 x 2 x 3 x 2 torus: 158,976 processors and
794,880 links (``parasol-model generate torus 24 23 24 2 3 2``). This times

* ``generate``: ``generate("torus", [24, 23, 24, 2, 3, 2], ...)`` (the model objects);
* ``dumps``: the generated machine written as text (about 4.9 million lines);
* ``load``: ``parasol_core.loads(text)``; ``validate``: ``validate(machine)``;
* ``json.loads``: the baseline, ``json.loads`` of ``json.dumps(to_data(machine))``, the
  same model as JSON, in the same run, and the ratio of load + validate to it
  (target: within 2x);
* ``index``: ``index_of(topology)``, built once per topology (shape, link arrays,
  processor pair -> link lookup);
* ``100k routes``: ``index.routes(src, dst)`` of 100,000 random pairs by ``NDtorus``
  (dimension order, shorter way round): processors and links (target: under 1 s);
* ``shortest, one source``: the breadth-first search of one source over the 794,880
  links (``shortest``), and ``100 routes`` from one source.

Each timed step runs ``--repeat`` times (the median is printed; load, validate and
json.loads take turns).

    .venv/bin/python benchmarks/bench_nd_torus.py [--repeat N] [--pairs N] [--dims ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from parasol_core import loads
from parasol_core.analysis.validate import validate
from parasol_core.model import Machine, Processor
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import generate
from parasol_core.topology.index import TopologyIndex

FUGAKU = [24, 23, 24, 2, 3, 2]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def load_validate_json(text: str, data: str, repeat: int) -> tuple[float, float, float, Any]:
    """Median seconds of loading ``text``, validating it and ``json.loads`` of ``data``
    (its JSON dump), taking turns ``repeat`` times, and the model loaded; a model with
    errors stops the benchmark."""
    load_t, val_t, json_t = [], [], []
    loaded, diags = None, []
    for _ in range(repeat):  # taking turns
        t, loaded = timed(lambda: loads(text))
        load_t.append(t)
        t, diags = timed(lambda m=loaded: validate(m))
        val_t.append(t)
        t, _ = timed(lambda: json.loads(data))
        json_t.append(t)
    assert not [d for d in diags if d.is_error], diags[:3]
    t_load, t_val, t_json = (statistics.median(x) for x in (load_t, val_t, json_t))
    return t_load, t_val, t_json, loaded


def median(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t, out = timed(fn)
        times.append(t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--dims", type=int, nargs="+", default=FUGAKU)
    args = ap.parse_args()
    dims = args.dims

    t_gen, topo = median(lambda: generate("torus", dims, 2.85e-05, 9.1e-07), args.repeat)
    machine = Machine(id=1, name="Fugaku (Tofu 6-D torus)", processor_count=1,
                      topology_count=1, processors=[Processor(id=1, name="A64FX")],
                      topologies=[topo])  # fmt: skip
    t_dump, text = median(lambda: dumps(machine), 1)
    data = json.dumps(to_data(machine))
    print(f"torus {' x '.join(map(str, dims))}: {topo.processor_count:,} processors, "
          f"{len(topo.links):,} links, routing {topo.routing}; text {len(text) / 1e6:.1f} MB "
          f"({text.count(chr(10)):,} lines), JSON {len(data) / 1e6:.1f} MB")  # fmt: skip

    t_load, t_val, t_json, loaded = load_validate_json(text, data, args.repeat)
    assert loaded.hardware().shape == tuple(dims)

    hw = loaded.hardware()
    t_index, index = median(lambda: TopologyIndex(hw), args.repeat)
    rng = np.random.default_rng(21)
    n = index.count
    src = rng.integers(1, n + 1, args.pairs)
    dst = rng.integers(1, n + 1, args.pairs)
    index.routes(src[:10], dst[:10])  # warm the lazy lookup arrays
    t_routes, batch = median(lambda: index.routes(src, dst), args.repeat)
    hops = batch.hops

    hw.routing = "shortest"
    short = TopologyIndex(hw)
    t_bfs, _ = timed(lambda: short.layout.graph.tree(1))  # includes building the adjacency
    t_bfs2, _ = median(lambda: short.layout.graph._search(2), args.repeat)
    t_100, b100 = median(lambda: short.routes(np.full(100, 2), dst[:100]), args.repeat)
    assert np.array_equal(b100.hops, index.routes(np.full(100, 2), dst[:100]).hops)

    rows = [
        ("generate", t_gen, ""),
        ("dumps", t_dump, ""),
        ("load", t_load, f"{t_load / t_json:.2f} x json.loads"),
        ("validate", t_val, ""),
        ("load + validate", t_load + t_val, f"{(t_load + t_val) / t_json:.2f} x json.loads"),
        ("json.loads", t_json, "1.00"),
        ("index", t_index, ""),
        (f"{args.pairs:,} routes", t_routes,
         f"{hops.mean():.2f} hops mean, {hops.max()} max, "
         f"{args.pairs / t_routes / 1e6:.2f} M routes/s"),
        ("shortest: adjacency + 1 BFS", t_bfs, ""),
        ("shortest: 1 BFS", t_bfs2, ""),
        ("shortest: 100 routes, 1 source", t_100, "equal hops to NDtorus"),
    ]  # fmt: skip
    for name, t, note in rows:
        print(f"  {name:32s} {t * 1000:10.1f} ms  {note}")
    ratio = (t_load + t_val) / t_json
    print("targets (issue 21):")
    print(f"  load + validate within 2x json.loads: {ratio:.2f}x -> "
          f"{'met' if ratio <= 2 else 'NOT met'} (load alone {t_load / t_json:.2f}x)")  # fmt: skip
    print(f"  {args.pairs:,} routes under 1 s: {t_routes:.3f} s -> "
          f"{'met' if t_routes < 1 else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    main()
