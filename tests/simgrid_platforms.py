"""A machine's hardware topology as a SimGrid platform with PARASOL's own routes (one Full
zone, an explicit route for every pair a phase uses), so that SimGrid shares the links
along exactly the routes PARASOL plots: what tests/test_flow_simgrid.py and
benchmarks/bench_flow.py compare is the sharing, not the routing (the SimGrid importer
and exporter, parasol_core/simgrid, are tested on their own).

Compute processor ``p`` is host ``p{p}``; link ``i`` is ``l{i}``, bandwidth ``1 / speed``
bytes a second, its latency; its policy from the topology: ``FATPIPE`` when listed so,
``SPLITDUPLEX`` on a duplex topology (two processors, not listed shared; a route from
the lower-numbered processor to the higher takes it ``UP``), else ``SHARED``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from parasol_core.model import Machine
from parasol_core.simulate.messages import MessageArrays
from parasol_core.topology.resources import options_of
from parasol_core.topology.switches import compute_processors
from parasol_core.topology.transfer import RouteTable

HEAD = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="world" routing="Full">
"""


def platform_xml(machine: Machine, src: np.ndarray, dst: np.ndarray) -> str:
    """The platform, with a route for every distinct pair ``(src[i], dst[i])``, i != j."""
    hw = machine.hardware()
    table = RouteTable.for_machine(machine)
    index = table.index
    opts = options_of(hw)
    shared, fat = opts.policy_masks(index.link_ids)
    split = (index.sizes == 2) & ~shared & ~fat & (opts.duplex is not None)
    out = [HEAD]
    out += [f'  <host id="p{p}" speed="1Gf"/>\n' for p in compute_processors(machine, hw).tolist()]
    for s, lid in enumerate(index.link_ids.tolist()):
        policy = "FATPIPE" if fat[s] else "SPLITDUPLEX" if split[s] else "SHARED"
        out.append(f'  <link id="l{lid}" bandwidth="{1 / float(index.speed[s])!r}Bps" '
                   f'latency="{float(index.latency[s])!r}s" sharing_policy="{policy}"/>\n')  # fmt: skip
    pairs = np.unique(np.stack([src, dst], axis=1)[src != dst], axis=0)
    if pairs.shape[0]:
        ids = table.add_many(pairs[:, 0], pairs[:, 1])
        slots, ends, _, _ = table.arrays()
        procs, proc_ends = table.processor_arrays()
        link_ids = index.link_ids.tolist()
        for (a, b), rid in zip(pairs.tolist(), ids.tolist()):
            hops = slots[ends[rid - 1] : ends[rid]].tolist()
            visit = procs[proc_ends[rid - 1] : proc_ends[rid]].tolist()
            parts = []
            for k, s in enumerate(hops):
                way = ""
                if split[s]:
                    way = ' direction="UP"' if visit[k] < visit[k + 1] else ' direction="DOWN"'
                parts.append(f'<link_ctn id="l{link_ids[s]}"{way}/>')
            out.append(
                f'  <route src="p{a}" dst="p{b}" symmetrical="NO">{"".join(parts)}</route>\n'
            )
    out.append("</zone>\n</platform>\n")
    return "".join(out)


def write_phase(machine: Machine, msgs: MessageArrays, directory: Path) -> tuple[Path, Path]:
    """The platform and the message file of the probe (tests/simgrid_flow_probe.py); the
    messages to themselves are left out by the caller (SimGrid sends them over a
    loopback link; PARASOL takes no time)."""
    platform = directory / "platform.xml"
    platform.write_text(platform_xml(machine, msgs.src, msgs.dst))
    messages = directory / "messages.json"
    rows = [[f"p{a}", f"p{b}", int(n), float(t)] for a, b, n, t in
            zip(msgs.src.tolist(), msgs.dst.tolist(), msgs.nbytes.tolist(), msgs.start.tolist())]  # fmt: skip
    messages.write_text(json.dumps(rows))
    return platform, messages
