"""Machines for the replay tests, the same networks as SimGrid's (tests/simgrid/
test_flow_simgrid.py builds them alike): a flat cluster with a backbone, a torus and a
fat tree, with a processor type whose flop takes 1 ns (SimGrid's host speed 1Gf), and
their SimGrid platforms with PARASOL's routes (tests/simgrid_platforms.py)."""

from __future__ import annotations

import numpy as np
from simgrid_platforms import platform_xml

from parasol_core.model import Machine, Processor, Timing
from parasol_core.topology.generators import build, generate, torus
from parasol_core.topology.switches import compute_processors

FLOP = 1e-9  # seconds a flop: SimGrid's hosts of speed 1Gf


def machine_of(topology, switches: bool = False) -> Machine:
    node = Processor(id=1, name="node")
    node.timings["dla"] = Timing(FLOP)
    node.timings["dln"] = Timing(FLOP)
    procs = [node]
    if switches:
        procs.append(Processor(id=2, name="switch", role="switch"))
    return Machine(id=1, name="replay", processor_count=len(procs), topology_count=1,
                   processors=procs, topologies=[topology])  # fmt: skip


def flat_cluster(n: int = 16) -> Machine:
    """SimGrid's flat cluster with a backbone: host i - port i (split duplex, 1 GB/s,
    1 us), all ports and the router on one shared backbone link (10 us, 4 GB/s)."""
    pairs = [(i, n + i) for i in range(1, n + 1)] + [tuple(range(n + 1, 2 * n + 2))]
    topology = build(pairs, 2 * n + 1, 1e-6, 1e-9, routing="shortest", compute=n)
    backbone = topology.links[n]
    backbone.latency = Timing(1e-5)
    backbone.speed = Timing(2.5e-10)
    topology.duplex = 0.0
    return machine_of(topology, switches=True)


def torus_machine(dims=(4, 4)) -> Machine:
    topology = torus(list(dims), 1e-6, 1e-9)  # 1 us, 1 GB/s, split duplex
    topology.duplex = 0.0
    return machine_of(topology)


def fat_tree_machine() -> Machine:
    topology = generate("fattree", [4, 2], 1e-6, 1e-9)  # 16 compute, 8 switches
    topology.duplex = 0.0
    for link in topology.links[16:]:
        link.speed = Timing(5e-10)
    return machine_of(topology, switches=True)


MACHINES = {"cluster": flat_cluster, "torus": torus_machine, "fattree": fat_tree_machine}


def simgrid_platform(machine: Machine) -> tuple[str, str]:
    """The platform XML (a route for every pair of compute processors) and a hostfile
    putting rank r on the r-th compute processor."""
    computes = compute_processors(machine, machine.hardware())
    a, b = np.meshgrid(computes, computes)
    hostfile = "".join(f"p{p}\n" for p in computes.tolist())
    return platform_xml(machine, a.ravel(), b.ravel()), hostfile
