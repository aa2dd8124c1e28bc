"""FAT_TREE and DRAGONFLY clusters inside a larger SimGrid platform route and share as
SimGrid 3.32 routes and shares them (issue 36): each cluster by its own routing, between
zones from the source to its cluster's gateway (the host the zone routes name), over the
zone route, and from the other gateway to the destination. The import says so in a
``# piui: zones`` line (topology/zoned.py). SimGrid gives every ordered pair's route
(tests/simgrid/simgrid_probe.py) and runs the platform file itself for the phases
(tests/simgrid/test_simgrid_platform_flows.py); PARASOL's routes cross exactly SimGrid's
links, and every message ends within 1e-6 of SimGrid's under ``sharing="cm02"``.
Skipped where python3-simgrid is absent."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_simgrid_platform_flows import agree, alltoall, incast, random_phase, shift
from test_simgrid_run import MISSING, probe

from parasol_core import loads
from parasol_core.simgrid import import_text
from parasol_core.simulate.messages import MessageArrays
from parasol_core.simulate.phases import simulate_phase
from parasol_core.syntax.annotations import parse_zones
from parasol_core.syntax.writer import dumps
from parasol_core.topology.index import index_of
from parasol_core.topology.switches import compute_processors

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

HEAD = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n')  # fmt: skip

# A fat tree with parallel links (SimGrid's xgft quirks included), a dragonfly and a
# zone of one host, joined by three WAN links of their own bandwidths and latencies.
MIXED = (
    HEAD
    + """<zone id="world" routing="{routing}">
  <cluster id="A" prefix="a-" suffix="" radical="0-15" speed="1Gf" bw="1GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2"/>
  <cluster id="B" prefix="b-" suffix="" radical="0-23" speed="1Gf" bw="2GBps" lat="2us"
           topology="DRAGONFLY" topo_parameters="3,1;1,1;4,1;2"/>
  <zone id="C" routing="Full">
    <host id="solo" speed="1Gf"/>
    <router id="gwC"/>
    <link id="solo-link" bandwidth="500MBps" latency="10us"/>
    <route src="solo" dst="gwC"><link_ctn id="solo-link"/></route>
  </zone>
  <link id="wan1" bandwidth="100MBps" latency="1ms"/>
  <link id="wan2" bandwidth="200MBps" latency="2ms"/>
  <link id="wan3" bandwidth="300MBps" latency="500us" sharing_policy="SHARED"/>
  <zoneRoute src="A" dst="B" gw_src="a-5" gw_dst="b-7"><link_ctn id="wan1"/></zoneRoute>
  <zoneRoute src="A" dst="C" gw_src="a-5" gw_dst="gwC"><link_ctn id="wan2"/></zoneRoute>
  <zoneRoute src="B" dst="C" gw_src="b-7" gw_dst="gwC"><link_ctn id="wan3"/></zoneRoute>
</zone>
</platform>
"""
)
NAMED = ["solo-link", "wan1", "wan2", "wan3"]  # the file's own links, after the clusters'

# Two fat trees of parallel links joined by a WAN link between two of their hosts.
TWO_FAT_TREES = (
    HEAD
    + """<zone id="world" routing="Full">
  <cluster id="A" prefix="a-" suffix="" radical="0-15" speed="1Gf" bw="1GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2"/>
  <cluster id="B" prefix="b-" suffix="" radical="0-11" speed="1Gf" bw="1GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;4,3;1,2;1,1"/>
  <link id="wan" bandwidth="{wan_bw}" latency="100us" sharing_policy="{wan}"/>
  <zoneRoute src="A" dst="B" gw_src="a-9" gw_dst="b-2"><link_ctn id="wan"/></zoneRoute>
</zone>
</platform>
"""
)

# A 4 x 3 x 2 torus and a fat tree joined by a WAN link between two of their hosts.
TORUS_AND_FAT_TREE = (
    HEAD
    + """<zone id="world" routing="Full">
  <cluster id="T" prefix="t-" suffix="" radical="0-23" speed="1Gf" bw="1GBps" lat="1us"
           topology="TORUS" topo_parameters="4,3,2"/>
  <cluster id="A" prefix="a-" suffix="" radical="0-15" speed="1Gf" bw="2GBps" lat="2us"
           topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2"/>
  <link id="wan" bandwidth="300MBps" latency="100us"/>
  <zoneRoute src="T" dst="A" gw_src="t-13" gw_dst="a-5"><link_ctn id="wan"/></zoneRoute>
</zone>
</platform>
"""
)
TORUS_LINK = re.compile(r"T_link_from_(\d+)_to_(\d+)_(?:UP|DOWN)")

FAT_TREE_LINK = re.compile(r"link_from_\d+_\d+_(\d+)_(?:UP|DOWN)")
DRAGONFLY_LINK = re.compile(r"(?:local|green|black|blue)_link_.*_(\d+)(?:_UP|_DOWN)?")


def all_pairs(tmp_path, text: str):
    path = tmp_path / "platform.xml"
    path.write_text(text)
    imported = import_text(text)
    machine = imported.machine
    hw = machine.hardware()
    hosts = compute_processors(machine, hw).tolist()
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    names = imported.names
    sim = probe(path, "routes", *(f"{names[a]}:{names[b]}" for a, b in pairs))
    return imported, pairs, {(a, b): sim[f"{names[a]}:{names[b]}"]["links"] for a, b in pairs}


def zone_links(hw, zone) -> int:
    """How many of the topology's links lie inside the zone."""
    inside = set(zone.processors())
    return sum(all(p in inside for p in link.connect) for link in hw.links)


@pytest.mark.parametrize("routing", ["Full", "Floyd", "Dijkstra"])
def test_clusters_in_a_larger_platform_cross_simgrids_links(tmp_path, routing):
    """Every ordered pair of the 41 hosts (1,640 routes: within the fat tree, within the
    dragonfly, between them and to the lone host both ways) crosses SimGrid's links in
    SimGrid's order. SimGrid names a fat tree's links ``link_from_C_P_K`` and a
    dragonfly's ``..._K``, K counting them as it makes them, in the import's order."""
    imported, pairs, sim = all_pairs(tmp_path, MIXED.format(routing=routing))
    hw = imported.machine.hardware()
    assert hw.routing == "zones"
    zones, why = parse_zones(hw.zones)
    assert why is None and [z.routing for z in zones] == ["updown", "simgrid-dragonfly"]
    names = imported.names
    assert [names[z.gateway] for z in zones] == ["a-5", "b-7"]
    first_fly = zone_links(hw, zones[0]) + 1  # the dragonfly's links follow the fat tree's
    named = {n: hw.link_count - len(NAMED) + 1 + i for i, n in enumerate(NAMED)}
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    crossings = 0
    for (a, b), ours in zip(pairs, batch):
        want = []
        for name in sim[(a, b)]:
            if (m := FAT_TREE_LINK.fullmatch(name)) is not None:
                want.append(int(m.group(1)) + 1)
            elif (m := DRAGONFLY_LINK.fullmatch(name)) is not None:
                want.append(first_fly + int(m.group(1)))
            else:
                want.append(named[name])
        assert list(ours.links) == want, (names[a], names[b])
        assert index_of(hw).route(a, b) == ours  # one route as in a batch
        crossings += names[a][0] != names[b][0]
    assert crossings == 2 * (16 * 24 + 16 + 24)  # every pair between two zones was tried


def test_the_zones_line_survives_the_model_file():
    machine = import_text(MIXED.format(routing="Full")).machine
    text = dumps(machine)
    assert "# piui: zones = 1-16,42-47 updown xgft 2 4 4 1 2 1 2 via 6; " in text
    again = loads(text)
    assert again.hardware().zones == machine.hardware().zones
    hw = again.hardware()
    src, dst = [1, 17, 41, 6], [40, 2, 3, 24]
    assert [tuple(r.links) for r in index_of(hw).routes(src, dst)] == [
        tuple(r.links) for r in index_of(machine.hardware()).routes(src, dst)
    ]


def test_two_fat_trees_joined_by_a_wan_cross_simgrids_links(tmp_path):
    """SimGrid counts fat-tree links across its FAT_TREE clusters: link K is the
    model's K + 1 in both trees."""
    imported, pairs, sim = all_pairs(tmp_path, TWO_FAT_TREES.format(wan="SHARED", wan_bw="1GBps"))
    hw = imported.machine.hardware()
    assert hw.routing == "zones"
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        want = [hw.link_count if n == "wan" else int(FAT_TREE_LINK.fullmatch(n).group(1)) + 1
                for n in sim[(a, b)]]  # fmt: skip
        assert list(ours.links) == want, (a, b)


def test_a_torus_beside_a_fat_tree_crosses_simgrids_links(tmp_path):
    """A TORUS cluster in a larger platform routes by SimGrid's torus routing (its
    tie-break) inside, and through its gateway host out: every ordered pair of the 40
    hosts. SimGrid names a torus link by the two hosts it joins."""
    imported, pairs, sim = all_pairs(tmp_path, TORUS_AND_FAT_TREE)
    hw = imported.machine.hardware()
    assert hw.routing == "zones"
    assert hw.zones.startswith("1-24 simgrid-torus shape 4 3 2 via 14; ")
    index = index_of(hw)
    first_tree = zone_links(hw, parse_zones(hw.zones)[0][0])  # the fat tree's follow
    batch = index.routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        want = []
        for name in sim[(a, b)]:
            if (m := TORUS_LINK.fullmatch(name)) is not None:
                want.append(index.link_between(int(m.group(1)) + 1, int(m.group(2)) + 1))
            elif (m := FAT_TREE_LINK.fullmatch(name)) is not None:
                want.append(first_tree + int(m.group(1)) + 1)
            else:
                want.append(hw.link_count)  # the WAN, the file's last link
        assert list(ours.links) == want, (a, b)


def across(hosts: np.ndarray, nbytes: float = 65536.0) -> MessageArrays:
    """Every host of the first 16 (cluster A) to a host of the others, and back."""
    a, b = hosts[:16], hosts[16:]
    dst = b[np.arange(16) % b.shape[0]]
    return MessageArrays(np.concatenate([a, dst]), np.concatenate([dst, a]), nbytes)


CASES = {
    "mixed random": (MIXED.format(routing="Full"), lambda h: random_phase(h, 300, 7, 2e-4)),
    "mixed alltoall": (MIXED.format(routing="Full"), lambda h: alltoall(h, 16384.0)),
    "mixed incast on the lone host": (MIXED.format(routing="Full"), lambda h: incast(h[::-1])),
    "mixed across": (MIXED.format(routing="Floyd"), across),
    "two fat trees shift": (TWO_FAT_TREES.format(wan="SHARED", wan_bw="1GBps"),
                            lambda h: shift(h, 10)),
    "two fat trees across a split-duplex wan": (
        TWO_FAT_TREES.format(wan="SPLITDUPLEX", wan_bw="2GBps"), across),
    "two fat trees across a fatpipe wan": (
        TWO_FAT_TREES.format(wan="FATPIPE", wan_bw="500MBps"), across),
    "two fat trees random": (TWO_FAT_TREES.format(wan="SHARED", wan_bw="1GBps"),
                             lambda h: random_phase(h, 200, 3, 1e-4)),
    "torus and fat tree random": (TORUS_AND_FAT_TREE, lambda h: random_phase(h, 300, 5, 2e-4)),
    "torus and fat tree across": (TORUS_AND_FAT_TREE, across),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_clusters_in_a_larger_platform_share_as_simgrid_does(tmp_path, case):
    text, phase = CASES[case]
    if "SPLITDUPLEX" in text:
        text = text.replace('<link_ctn id="wan"/>', '<link_ctn id="wan" direction="UP"/>')
    ours, _ = agree(tmp_path, text, phase)
    machine = import_text(text).machine
    msgs = phase(compute_processors(machine, machine.hardware()))
    alone = simulate_phase(machine, msgs, sharing="cm02").alone
    assert (ours - msgs.start > alone * 1.05).any()  # there was contention to share


def test_an_export_of_zones_reads_back_the_same_and_shares_as_in_simgrid(tmp_path):
    """The model's zones go out as a ``parasol:zones`` property beside SimGrid's explicit
    routes (PARASOL's), and come back: the same topology; SimGrid on the exported file
    ends every message as PARASOL does."""
    from parasol_core.simgrid import export_platform

    machine = import_text(MIXED.format(routing="Full")).machine
    text = export_platform(machine).text
    assert 'id="parasol:zones"' in text
    again = import_text(text).machine
    assert again.hardware() == machine.hardware()
    agree(tmp_path, text, lambda h: random_phase(h, 200, 9, 1e-4))


FAT_TREES = [("2;4,4;1,2;1,2", 16), ("3;2,2,2;1,2,2;1,1,1", 8), ("2;2,3;2,2;2,1", 6)]
# one chassis a group: with more, SimGrid 3.32's route within a group from a chassis other
# than 0 is no chain of links (docs/simgrid.md; PARASOL takes the chain), in a cluster alone
# as in a larger platform
DRAGONFLIES = [("3,1;1,1;4,1;2", 24), ("3,2;1,1;3,2;2", 18), ("4,1;1,1;4,1;1", 16)]
TORI = [("4,3,2", 24), ("6,3", 18), ("8", 8)]


def random_platform(seed: int) -> str:
    """A torus, a fat tree and a dragonfly of drawn shapes, bandwidths and latencies,
    each gateway a drawn host, joined two by two by WAN links of drawn values."""
    rng = np.random.default_rng(seed)
    parts, gateways = [], {}
    for cid, topology, choices in (("T", "TORUS", TORI), ("F", "FAT_TREE", FAT_TREES),
                                   ("D", "DRAGONFLY", DRAGONFLIES)):  # fmt: skip
        params, hosts = choices[int(rng.integers(len(choices)))]
        bw, lat = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        parts.append(f'<cluster id="{cid}" prefix="{cid.lower()}-" suffix="" '
                     f'radical="0-{hosts - 1}" speed="1Gf" bw="{bw}GBps" lat="{lat}us" '
                     f'topology="{topology}" topo_parameters="{params}"/>')  # fmt: skip
        gateways[cid] = f"{cid.lower()}-{int(rng.integers(hosts))}"
    joins = (("T", "F"), ("T", "D"), ("F", "D"))
    for i in range(len(joins)):  # SimGrid's DTD: the links before the routes
        bw, lat = int(rng.integers(50, 500)), int(rng.integers(10, 1000))
        parts.append(f'<link id="wan{i}" bandwidth="{bw}MBps" latency="{lat}us"/>')
    for i, (x, y) in enumerate(joins):
        parts.append(f'<zoneRoute src="{x}" dst="{y}" gw_src="{gateways[x]}" '
                     f'gw_dst="{gateways[y]}"><link_ctn id="wan{i}"/></zoneRoute>')  # fmt: skip
    return (
        HEAD + '<zone id="world" routing="Full">\n' + "\n".join(parts) + "\n</zone>\n</platform>\n"
    )


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_platforms_of_three_clusters_route_as_simgrid_does(tmp_path, seed):
    """Every ordered pair: as many links as SimGrid's route, the same summed latency and
    narrowest bandwidth, and the WAN links at the same places."""
    text = random_platform(seed)
    path = tmp_path / "platform.xml"
    path.write_text(text)
    imported = import_text(text)
    hw = imported.machine.hardware()
    assert hw.routing == "zones" and len(parse_zones(hw.zones)[0]) == 3
    hosts = compute_processors(imported.machine, hw).tolist()
    names = imported.names
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    sim = probe(path, "routes", *(f"{names[a]}:{names[b]}" for a, b in pairs))
    wan = set(range(hw.link_count - 2, hw.link_count + 1))  # the file's three last links
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        theirs = sim[f"{names[a]}:{names[b]}"]
        links = [hw.link_by_id(k) for k in ours.links]
        assert len(links) == len(theirs["links"]), (names[a], names[b])
        assert sum(k.latency.mean for k in links) == pytest.approx(theirs["latency"], rel=1e-12)
        assert min(1 / k.speed.mean for k in links) == pytest.approx(theirs["bandwidth"], rel=1e-12)
        assert [k in wan for k in ours.links] == [n.startswith("wan") for n in theirs["links"]]
