"""The estimator's speed over loopback, against baselines measured in the same run.

Starts a real ``parasol-estimator serve`` on a free 127.0.0.1 port with a temporary
store, pushes the Parsytec GCel sample (16 x 32 grid, 976 links) and measures, with one
client (``parasol_core.estimator.Client``, one kept-alive connection):

* **one at a time**: requests per second for ``route.plot`` (random pairs) against
  ``server.ping``, the no-op method (the cost of a request itself), and against
  :meth:`TopologyIndex.route` called directly in this process;
* **in a batch**: routes per second through ``route.plot_many`` (10,000 random pairs,
  the whole round trip: encoding, HTTP, routing, decoding the answer) against the
  core's batch call :meth:`TopologyIndex.routes` on the same pairs, directly in this
  process (numpy arrays, nothing encoded), the same turned into Python lists (what a
  client of the estimator ends up holding), against the core's one-route call in a loop,
  and against a ``server.ping`` round trip.

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
from parasol_core.syntax.parser import load
from parasol_core.topology.index import index_of

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_models" / "parsytec-gcel.machine"


def interleaved(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """The best time of each function over ``repeat`` rounds, each round running all of
    them in turn."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [min(t) for t in times]


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
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000, help="requests per one-at-a-time run")
    ap.add_argument("--pairs", type=int, default=10_000, help="pairs per route.plot_many")
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
            result = client.plot_many(mid, pairs)
            batch = index.routes(pairs[:, 0], pairs[:, 1])
            assert result["links"] == batch.links.tolist()
            assert result["offsets"] == batch.offsets.tolist()

            def core_lists() -> object:  # the same answer as Python lists, as a client gets
                b = index.routes(pairs[:, 0], pairs[:, 1])
                return (b.offsets.tolist(), b.processors.tolist(), b.link_offsets.tolist(),
                        b.links.tolist())  # fmt: skip

            # the workloads take turns, so that a busy machine slows them alike
            compact_answer = client.plot_many(mid, pairs, compact=True)
            assert compact_answer["links"].tolist() == batch.links.tolist()
            ping, plot, core_one, many, core_many, core_many_lists, compact = interleaved(
                [
                    lambda: [client.ping() for _ in singles],
                    lambda: [client.plot(mid, s, d) for s, d in singles],
                    lambda: [index.route(s, d) for s, d in singles],
                    lambda: client.plot_many(mid, pairs),
                    lambda: index.routes(pairs[:, 0], pairs[:, 1]),
                    core_lists,
                    lambda: client.plot_many(mid, pairs, compact=True),
                ],
                args.repeat,
            )
            ping_one = ping / len(singles)
            client.close()
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    n = len(singles)
    print(f"Parsytec GCel: {index.count} processors, {len(index.link_ids)} links; "
          f"{os.cpu_count()} CPUs; best of {args.repeat}")  # fmt: skip
    print()
    print(f"one at a time ({n} requests, one client, keep-alive):")
    print(f"  server.ping (no-op)     {n / ping:10,.0f} requests/s")
    print(f"  route.plot              {n / plot:10,.0f} requests/s   "
          f"{plot / ping:.2f}x the no-op's time per request")  # fmt: skip
    print(f"  core index.route()      {n / core_one:10,.0f} routes/s     "
          f"(route.plot takes {plot / core_one:.0f}x as long)")  # fmt: skip
    print()
    print(f"in a batch ({args.pairs:,} pairs):")
    print(f"  route.plot_many         {args.pairs / many:10,.0f} routes/s    "
          f"{many * 1000:.1f} ms per call")  # fmt: skip
    print(f"  core index.routes()     {args.pairs / core_many:10,.0f} routes/s    "
          f"{core_many * 1000:.1f} ms per call")  # fmt: skip
    print(f"  core, as Python lists   {args.pairs / core_many_lists:10,.0f} routes/s    "
          f"{core_many_lists * 1000:.1f} ms per call")  # fmt: skip
    print(f"  no-op round trip        {ping_one * 1000:10.2f} ms")
    print(f"  route.plot_many, compact {args.pairs / compact:10,.0f} routes/s    "
          f"{compact * 1000:.1f} ms per call (base64 columns, numpy arrays back)")  # fmt: skip
    print(
        f"  route.plot_many compact / core: {compact / core_many:.2f}x the time (target: within 2x)"
    )
    print(f"  route.plot_many / core: {many / core_many:.2f}x the time (JSON lists); "
          f"/ core as lists: {many / core_many_lists:.2f}x")  # fmt: skip
    print(f"  route.plot_many vs the core's index.route() in a loop: "
          f"{(core_one / n) / (many / args.pairs):.2f}x the routes per second")  # fmt: skip
    print(f"  route.plot_many vs route.plot one at a time: {(plot / n) / (many / args.pairs):.0f}x "
          "the routes per second")  # fmt: skip


if __name__ == "__main__":
    main()
