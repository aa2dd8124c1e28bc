"""Run by the system ``python3`` with Debian's ``python3-simgrid``, never imported by the
suite (tests/simgrid/test_simgrid_run.py starts it in a subprocess).

``simgrid_probe.py PLATFORM time SRC DST BYTES``: the simulated time of one message of
BYTES from host SRC to host DST, alone on the platform, printed as JSON with SimGrid's
route (link names) and its summed latency. The network model is CM02 (constant rates,
max-min sharing, no TCP slow-start) with latency and bandwidth factors of 1, TCP gamma
out of the way and no cross-traffic: SimGrid then gives latency + bytes / bandwidth of
the route's narrowest link, as PARASOL's ``transfer_time`` does for a message alone.

``simgrid_probe.py PLATFORM routes SRC:DST ...``: the routes only (no simulation).

``simgrid_probe.py PLATFORM phase SRC:DST:BYTES ...``: messages all sent at time 0, each
on its own mailbox; the time each one ends, in order (SimGrid shares links max-min).
"""

import json
import sys

from simgrid import Actor, Engine, Host, Mailbox

CONFIG = [
    "--cfg=network/model:CM02",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/weight-S:0",
    "--cfg=network/TCP-gamma:1e300",
    "--cfg=network/crosstraffic:0",
    "--log=root.thres:critical",
]


def route(src, dst):
    links, latency = Host.by_name(src).route_to(Host.by_name(dst))
    return {
        "links": [link.name for link in links],
        "latency": latency,
        "bandwidth": min((link.bandwidth for link in links), default=None),
    }


def main():
    platform, mode = sys.argv[1], sys.argv[2]
    engine = Engine(["probe", *CONFIG])
    engine.load_platform(platform)
    if mode == "routes":
        engine.run()  # nothing to simulate: seals the platform (Floyd computes its tables)
        out = {}
        for pair in sys.argv[3:]:
            src, dst = pair.split(":")
            out[pair] = route(src, dst)
        print(json.dumps(out))
        return
    if mode == "phase":
        ends = {}
        for k, spec in enumerate(sys.argv[3:]):
            src, dst, size = spec.split(":")

            def send(box=f"m{k}", size=int(size)):
                Mailbox.by_name(box).put("message", size)

            def receive(box=f"m{k}", k=k):
                Mailbox.by_name(box).get()
                ends[k] = Engine.clock

            Actor.create(f"s{k}", Host.by_name(src), send)
            Actor.create(f"r{k}", Host.by_name(dst), receive)
        engine.run()
        print(json.dumps([ends[k] for k in range(len(sys.argv) - 3)]))
        return
    src, dst, size = sys.argv[3], sys.argv[4], int(sys.argv[5])
    done = {}

    def sender():
        Mailbox.by_name("probe").put("message", size)

    def receiver():
        Mailbox.by_name("probe").get()
        done["time"] = Engine.clock

    Actor.create("sender", Host.by_name(src), sender)
    Actor.create("receiver", Host.by_name(dst), receiver)
    engine.run()
    print(json.dumps({"time": done["time"], **route(src, dst)}))


if __name__ == "__main__":
    main()
