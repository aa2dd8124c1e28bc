"""Run by the system ``python3`` with Debian's ``python3-simgrid``, never imported by the
suite (tests/test_flow_simgrid.py and benchmarks/bench_flow.py start it in a subprocess).

``simgrid_flow_probe.py PLATFORM MESSAGES [--cfg=...]...``: MESSAGES is a JSON list of
``[src host, dst host, bytes, start]``; each message is sent at its start from host to
host (``Comm.sendto_async``, no actors or mailboxes in its way). Prints, as JSON, every
message's end (``finish_time``) in order and the seconds SimGrid's ``run()`` took.

The network model is CM02 with the settings of issue 36 (and tests/simgrid_probe.py):
latency and bandwidth factors 1, weight-S 0 (a flow's weight is 1 / its route's
latency), TCP gamma out of the way, no cross-traffic. Extra ``--cfg`` arguments are
passed on (the tests add ``network/optim:Full`` and ``surf/precision:1e-15``; see
tests/test_flow_simgrid.py for why).
"""

import json
import sys
import time

from simgrid import Actor, Comm, Engine, Host, this_actor

CONFIG = [
    "--cfg=network/model:CM02",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/weight-S:0",
    "--cfg=network/TCP-gamma:1e300",
    "--cfg=network/crosstraffic:0",
    "--log=root.thres:critical",
]


def main():
    platform, path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(path) as f:
        messages = json.load(f)
    engine = Engine(["probe", *CONFIG, *extra])
    engine.load_platform(platform)
    comms = [None] * len(messages)
    order = sorted(range(len(messages)), key=lambda k: messages[k][3])

    def driver():
        for k in order:
            src, dst, size, start = messages[k]
            if start > Engine.clock:
                this_actor.sleep_until(start)
            comms[k] = Comm.sendto_async(Host.by_name(src), Host.by_name(dst), int(size))
        for comm in comms:
            comm.wait()

    Actor.create("driver", engine.all_hosts[0], driver)
    began = time.perf_counter()
    engine.run()
    took = time.perf_counter() - began
    print(json.dumps({"ends": [c.finish_time for c in comms], "seconds": took}))


if __name__ == "__main__":
    main()
