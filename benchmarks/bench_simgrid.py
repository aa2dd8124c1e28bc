"""SimGrid platforms (issue 21): export and import, against writing and reading the same
model as a PARASOL file in the same run.

* ``export``: ``export_platform`` of a torus model (a zone of layers since issue 36: its
  routes grow as processors x (W + H); explicit routes grew with the square of the
  processors), against ``dumps`` of the model (baseline);
* ``import (export)``: ``import_text`` of that platform (routes compared with PARASOL's
  included), against ``xml.etree.ElementTree.fromstring`` of the same XML (parsing
  alone, no guards) and ``loads`` of the model's own text;
* ``export (dragonfly)``: ``export_platform`` of a ``dragonfly G A P H`` model routed
  ``dragonfly-minimal`` (K = 2 global links a pair of groups by default: one weighted
  DijkstraCache zone, a route a link, since issue 36; before it zones of routers, a zone
  route between every two routers, and the Full zone of explicit routes, refused past
  1,000,000 routes), against
  ``dumps`` of the model, and ``import_text`` of it against ElementTree;
* ``import (fat tree)``: ``import_text`` of a FAT_TREE cluster of k-ary 3-tree
  parameters (expanded as SimGrid builds it), against ``loads`` of the resulting
  model's text.

Each step runs ``--repeat`` times; the median is printed.

    .venv/bin/python benchmarks/bench_simgrid.py [--repeat N] [--torus W H] [--k K]
        [--dragonfly G A P H]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from parasol_core import loads
from parasol_core.model import Machine, Processor
from parasol_core.simgrid import export_platform, import_text
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import dragonfly, torus


def timed(func: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--torus", type=int, nargs=2, default=[16, 16])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--dragonfly", type=int, nargs=4, default=[17, 8, 8, 4])
    args = ap.parse_args()
    w, h = args.torus
    topo = torus([w, h], 2.85e-5, 9.1e-7)
    machine = Machine(id=1, name="torus", processor_count=1, topology_count=1,
                      processors=[Processor(1, "node")], topologies=[topo])  # fmt: skip
    t_dumps, text = timed(lambda: dumps(machine), args.repeat)
    t_export, exported = timed(lambda: export_platform(machine), args.repeat)
    n = w * h
    print(f"torus {w} x {h}: {n} processors, {n * (n - 1):,} ordered pairs, "
          f"{len(exported.text) / 1e6:.1f} MB of XML")  # fmt: skip
    print(f"  dumps (baseline)   {t_dumps * 1e3:9.1f} ms")
    print(f"  export             {t_export * 1e3:9.1f} ms   {t_export / t_dumps:7.1f}x dumps")
    import xml.etree.ElementTree as ET

    data = exported.text.encode()
    t_loads, _ = timed(lambda: loads(text), args.repeat)
    t_etree, _ = timed(lambda: ET.fromstring(data), args.repeat)
    t_import, imported = timed(lambda: import_text(data), args.repeat)
    assert imported.machine.hardware() == topo
    print(f"  loads (baseline)   {t_loads * 1e3:9.1f} ms")
    print(f"  ElementTree        {t_etree * 1e3:9.1f} ms   (baseline: parsing the XML alone)")
    print(f"  import             {t_import * 1e3:9.1f} ms   {t_import / t_etree:7.2f}x ElementTree")
    fly = dragonfly(args.dragonfly, 3.5e-7, 4e-11)
    fly_model = Machine(id=1, name="dragonfly", processor_count=2, topology_count=1,
                        processors=[Processor(1, "node"), Processor(2, "router", role="switch")],
                        topologies=[fly])  # fmt: skip
    c = sum(1 for t in fly.types.values() if t != 2)
    routers = fly.processor_count - c
    t_fly_dumps, _ = timed(lambda: dumps(fly_model), args.repeat)
    t_fly, fly_out = timed(lambda: export_platform(fly_model), args.repeat)
    fly_data = fly_out.text.encode()
    print(f"dragonfly {' '.join(map(str, args.dragonfly))}: {c:,} compute processors, "
          f"{routers} routers, {c * (c - 1):,} ordered pairs; {fly_out.text.count('<zoneRoute '):,} "
          f"zone routes, {fly_out.text.count('<route '):,} routes, "
          f"{len(fly_data) / 1e6:.1f} MB of XML")  # fmt: skip
    print(f"  dumps (baseline)   {t_fly_dumps * 1e3:9.1f} ms")
    print(f"  export             {t_fly * 1e3:9.1f} ms   {t_fly / t_fly_dumps:7.1f}x dumps")
    t_fly_etree, _ = timed(lambda: ET.fromstring(fly_data), args.repeat)
    t_fly_import, back = timed(lambda: import_text(fly_data), args.repeat)
    assert back.machine.hardware() == fly
    print(f"  ElementTree        {t_fly_etree * 1e3:9.1f} ms   (baseline: parsing the XML alone)")
    print(f"  import             {t_fly_import * 1e3:9.1f} ms   "
          f"{t_fly_import / t_fly_etree:7.2f}x ElementTree")  # fmt: skip
    k = args.k
    xml = (f'<platform version="4.1"><zone id="w" routing="Full"><cluster id="f" prefix="h" '
           f'suffix="" radical="0-{k**3 - 1}" speed="1Gf" bw="125MBps" lat="50us" '
           f'topology="FAT_TREE" topo_parameters="3;{k},{k},{k};1,{k},{k};1,1,1"/>'
           f"</zone></platform>")  # fmt: skip
    t_tree, tree = timed(lambda: import_text(xml), args.repeat)
    hw = tree.machine.hardware()
    tree_text = dumps(tree.machine)
    t_tree_loads, _ = timed(lambda: loads(tree_text), args.repeat)
    print(f"fat tree {k}-ary 3-tree: {hw.processor_count:,} processors, {len(hw.links):,} links")
    print(f"  loads (baseline)   {t_tree_loads * 1e3:9.1f} ms")
    print(f"  import             {t_tree * 1e3:9.1f} ms   {t_tree / t_tree_loads:7.1f}x loads")


if __name__ == "__main__":
    main()
