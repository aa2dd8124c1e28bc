"""The estimator's speed over loopback, against baselines measured in the same run.

Starts a real ``parasol-estimator serve`` on a free 127.0.0.1 port with a temporary
store, pushes the Parsytec GCel sample (16 x 32 grid, 976 links) and measures, with one
client (``parasol_core.estimator.Client``, one kept-alive connection):

* **one at a time**: requests per second for ``route.plot`` (random pairs) against
  ``server.ping``, the no-op method (the cost of a request itself), and against
  :meth:`TopologyIndex.route` called directly in this process;
* **in a batch**: ``route.plot_many`` of 10,000 random pairs (the whole round trip:
  encoding the pairs, HTTP, routing, encoding the answer, decoding it into what the
  client returns) in every form (``encoding`` json, base64 and binary with every
  column, and binary with ``fields=["routes", "hops"]``), each against the core's batch
  call :meth:`TopologyIndex.routes` on the same pairs, directly in this process (numpy
  arrays, nothing encoded), the same turned into Python lists (what a client of the
  JSON form ends up holding), and a ``server.ping`` round trip.

The workloads take turns within each round, so that a busy machine slows them alike.
Each figure is the best of ``--repeat`` runs; every answer is checked against the core.

    .venv/bin/python benchmarks/bench_estimator.py [--repeat N] [--calls N] [--pairs N]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from parasol_core.estimator import Client, EstimatorError
from parasol_core.syntax.loader import load
from parasol_core.topology.index import index_of

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_models" / "parsytec-gcel.machine"
# route.plot_many's forms: (encoding, fields); every column unless fields say otherwise
FORMS: list[tuple[str, list[str] | None]] = [
    ("json", None),
    ("base64", None),
    ("binary", None),
    ("binary", ["routes", "hops"]),
]


def interleaved(fns: list[Callable[[], object]], repeat: int) -> list[list[float]]:
    """The times of each function over ``repeat`` rounds, each round running all of
    them in turn."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return times


def start_server(store: Path, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "parasol_core.estimator.server", "serve", "--port", str(port),
           "--store", str(store)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))  # noqa: SIM115
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with Client(url, timeout=2) as c:
                c.ping()
            return proc, url
        except EstimatorError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the estimator did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="rounds; each figure is the best")
    ap.add_argument("--calls", type=int, default=2000, help="requests per one-at-a-time run")
    ap.add_argument("--pairs", type=int, default=10_000, help="pairs per route.plot_many")
    ap.add_argument("--batch-repeat", type=int, default=40,
                    help="rounds of the batch workloads (short: more rounds, steadier bests)")  # fmt: skip
    args = ap.parse_args()

    machine = load(SAMPLE)
    index = index_of(machine.hardware())
    rng = np.random.default_rng(1994)
    pairs = rng.integers(1, index.count + 1, size=(args.pairs, 2))
    singles = [tuple(map(int, p)) for p in rng.integers(1, index.count + 1, size=(args.calls, 2))]

    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "store", Path(tmp) / "server.log")
        try:
            client = Client(url, timeout=120)
            mid = client.push(SAMPLE.read_text())["model"]

            # answers checked against the core first
            for src, dst in singles[:50]:
                assert client.plot(mid, src, dst)["links"] == list(index.route(src, dst).links)
            batch = index.routes(pairs[:, 0], pairs[:, 1])
            result = client.plot_many(mid, pairs)
            assert result["links"] == batch.links.tolist()
            assert result["offsets"] == batch.offsets.tolist()
            for encoding, _fields in FORMS[1:]:
                answer = client.plot_many(mid, pairs, encoding=encoding, fields=_fields)
                for key in ("offsets", "processors", "link_offsets", "links"):
                    if key in answer:
                        assert np.array_equal(answer[key], getattr(batch, key)), (encoding, key)

            def core_lists() -> object:  # the same answer as Python lists, as a client gets
                b = index.routes(pairs[:, 0], pairs[:, 1])
                return (b.offsets.tolist(), b.processors.tolist(), b.link_offsets.tolist(),
                        b.links.tolist())  # fmt: skip

            def form(encoding: str, fields: list[str] | None) -> Callable[[], object]:
                return lambda: client.plot_many(mid, pairs, encoding=encoding, fields=fields)

            # the workloads take turns, so that a busy machine slows them alike
            ping, plot, core_one = (min(t) for t in interleaved(
                [
                    lambda: [client.ping() for _ in singles],
                    lambda: [client.plot(mid, s, d) for s, d in singles],
                    lambda: [index.route(s, d) for s, d in singles],
                ],
                args.repeat,
            ))  # fmt: skip
            batch_times = interleaved(
                [
                    lambda: index.routes(pairs[:, 0], pairs[:, 1]),
                    core_lists,
                    lambda: client.ping(),
                    *(form(encoding, fields) for encoding, fields in FORMS),
                ],
                args.batch_repeat,
            )
            client.close()
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    n = len(singles)
    print(f"Parsytec GCel: {index.count} processors, {len(index.link_ids)} links; "
          f"{os.cpu_count()} CPUs; best of {args.repeat} rounds one at a time, "
          f"{args.batch_repeat} in a batch")  # fmt: skip
    print()
    print(f"one at a time ({n} requests, one client, keep-alive):")
    print(f"  server.ping (no-op)     {n / ping:10,.0f} requests/s")
    print(f"  route.plot              {n / plot:10,.0f} requests/s   "
          f"{plot / ping:.2f}x the no-op's time per request")  # fmt: skip
    print(f"  core index.route()      {n / core_one:10,.0f} routes/s     "
          f"(route.plot takes {plot / core_one:.0f}x as long)")  # fmt: skip
    print()
    print(f"in a batch ({args.pairs:,} pairs; time per call, against the core's "
          "index.routes() in this process):")  # fmt: skip
    names = ["core index.routes()", "core, as Python lists", "no-op round trip (ping)"]
    for encoding, fields in FORMS:
        names.append(f"route.plot_many {encoding}" + (f" ({','.join(fields)})" if fields else ""))
    best = [min(t) for t in batch_times]
    med = [float(np.median(t)) for t in batch_times]
    print(f"  {'':42} {'best':>8} {'routes/s':>11} {'/ core':>7}   {'median':>8} {'/ core':>7}")
    for i, name in enumerate(names):
        print(f"  {name:42} {best[i] * 1000:5.2f} ms {args.pairs / best[i]:11,.0f} "
              f"{best[i] / best[0]:6.2f}x   {med[i] * 1000:5.2f} ms {med[i] / med[0]:6.2f}x")  # fmt: skip
    full = range(3, 3 + len(FORMS) - 1)  # the forms with every column: the target's
    fastest = min(full, key=lambda i: best[i])
    print()
    print(f"  fastest form with every column ({names[fastest]}) / core: "
          f"{best[fastest] / best[0]:.2f}x best against best, "
          f"{med[fastest] / med[0]:.2f}x median against median (target: within 2x)")  # fmt: skip
    print(f"  route.plot_many json / core as lists: {best[3] / best[1]:.2f}x")
    print(f"  route.plot_many json vs route.plot one at a time: "
          f"{(plot / n) / (best[3] / args.pairs):.0f}x the routes per second")  # fmt: skip


if __name__ == "__main__":
    main()
