"""SimGrid clusters imported into PARASOL route as SimGrid routes them (issue 36): for
every ordered pair of hosts, the processors PARASOL's route visits are the nodes
SimGrid's route (``Host.route_to``, tests/simgrid/simgrid_probe.py) goes through, read
from the names SimGrid gives its cluster links. Skipped where python3-simgrid is
absent."""

from __future__ import annotations

import re

import pytest
from test_simgrid_run import MISSING, probe

from parasol_core.simgrid import import_text
from parasol_core.topology.index import index_of
from parasol_core.topology.switches import compute_processors

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

HEAD = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n')  # fmt: skip


def cluster(topology: str, params: str, hosts: int, policy: str = "SPLITDUPLEX") -> str:
    return HEAD + (f'<cluster id="c" prefix="n" suffix="" radical="0-{hosts - 1}" speed="1Gf" '
                   f'bw="1GBps" lat="1us" topology="{topology}" topo_parameters="{params}" '
                   f'sharing_policy="{policy}"/>\n</platform>\n')  # fmt: skip


def all_routes(tmp_path, text: str):
    """The imported model, its names, and SimGrid's route (link names) of every pair."""
    path = tmp_path / "cluster.xml"
    path.write_text(text)
    imported = import_text(text)
    machine = imported.machine
    hosts = compute_processors(machine, machine.hardware()).tolist()
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    names = imported.names
    sim = probe(path, "routes", *(f"{names[a]}:{names[b]}" for a, b in pairs))
    return imported, pairs, {(a, b): sim[f"{names[a]}:{names[b]}"]["links"] for a, b in pairs}


TORUS_LINK = re.compile(r"c_link_from_(\d+)_to_(\d+)_(UP|DOWN)")


@pytest.mark.parametrize("dims", ["4,4,4", "6,3,2", "8", "2,4"])
def test_an_imported_torus_visits_simgrids_nodes(tmp_path, dims):
    """Issue 36: 721 of the 4,032 pairs of a 4 x 4 x 4 torus took other nodes when the
    import routed by ``3Dtorus`` (a tie going the positive way from coordinate 2 too)."""
    size = 1
    for d in dims.split(","):
        size *= int(d)
    imported, pairs, sim = all_routes(tmp_path, cluster("TORUS", dims, size))
    hw = imported.machine.hardware()
    assert hw.routing == "simgrid-torus"
    index = index_of(hw)
    batch = index.routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        visit = [a]
        for name in sim[(a, b)]:
            x, y, way = TORUS_LINK.fullmatch(name).groups()
            visit.append(int(y) + 1 if way == "UP" else int(x) + 1)  # host k is processor k+1
        assert list(ours.processors) == visit, (a, b)


FAT_TREE_LINK = re.compile(r"link_from_(\d+)_(\d+)_(\d+)_(UP|DOWN)")


@pytest.mark.parametrize(
    ("params", "hosts"),
    [("2;4,4;1,2;1,2", 16),  # issue 36's: two spines, two links from each leaf to each
     ("2;4,4;1,4;1,1", 16),  # leaves with four up links: 4x SimGrid's time by 'shortest'
     ("3;2,2,2;1,2,2;1,1,1", 8),  # the 2-ary 3-tree: 'fattree 2 3', d-mod-k
     ("2;2,3;2,2;2,1", 6),  # hosts with two leaves, two links to each
     ("3;2,2,3;1,2,1;1,2,3", 12)],  # parallel links at every level above the hosts
)  # fmt: skip
def test_an_imported_fat_tree_crosses_simgrids_links(tmp_path, params, hosts):
    """Every pair's route crosses the links SimGrid's does, parallel links included.
    SimGrid names a fat tree's links ``link_from_CHILD_PARENT_K`` with K counting the
    links as it makes them, in the order the import makes them too (by level, lower
    node, parent, then parallel link): link K is the model's link K + 1."""
    imported, pairs, sim = all_routes(tmp_path, cluster("FAT_TREE", params, hosts))
    hw = imported.machine.hardware()
    assert hw.routing == "updown" and hw.network is not None
    assert not [n for n in imported.notes if "fat tree" in n]
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        want = [int(FAT_TREE_LINK.fullmatch(name).group(3)) + 1 for name in sim[(a, b)]]
        assert list(ours.links) == want, (a, b)
        assert index_of(hw).route(a, b) == ours  # one route as in a batch


@pytest.mark.parametrize("model", ["grid4x4", "pamela-t800", "torus 4 4 4",
                                   "hypercube 3", "ring 6", "mesh 3 2 2"])  # fmt: skip
def test_an_exported_zone_of_layers_routes_as_parasol_does(tmp_path, model):
    """A dimension-order routing exported as a DijkstraCache zone of layers: SimGrid's
    route of every pair crosses PARASOL's links in PARASOL's order, and a
    'parasol-hop' link after each dimension."""
    from pathlib import Path

    from parasol_core import load
    from parasol_core.model import Machine, Processor
    from parasol_core.simgrid import export_platform
    from parasol_core.topology.generators import generate

    if " " in model:
        kind, *dims = model.split()
        kind = {"mesh": "grid"}.get(kind, kind)
        machine = Machine(id=1, name="x", processor_count=1, topology_count=1,
                          processors=[Processor(id=1, name="node")],
                          topologies=[generate(kind, [int(x) for x in dims], 1e-6, 1e-9)])  # fmt: skip
    else:
        machine = load(Path(__file__).resolve().parents[2] / "sample_models" / f"{model}.machine")
    hw = machine.hardware()
    text = export_platform(machine).text
    assert "DijkstraCache" in text
    path = tmp_path / "layers.xml"
    path.write_text(text)
    hosts = compute_processors(machine, hw).tolist()
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    sim = probe(path, "routes", *(f"p{a}:p{b}" for a, b in pairs))
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    layers = text.count('<router id="parasol-via-') // len(hosts) + 1
    split = hw.duplex is not None  # SimGrid names a way of a split-duplex link: l1_UP
    for (a, b), ours in zip(pairs, batch):
        got = sim[f"p{a}:p{b}"]["links"]
        want = []
        for k, lid in enumerate(ours.links):
            up = ours.processors[k] == hw.link_by_id(lid).connect[0]
            want.append(f"l{lid}" + (("_UP" if up else "_DOWN") if split else ""))
        assert [n for n in got if not n.startswith("parasol-hop")] == want
        assert len(got) - len(ours.links) == layers


DRAGONFLY_LINK = re.compile(r".*_(\d+)(_UP|_DOWN)?")


@pytest.mark.parametrize(
    ("params", "hosts"),
    [("3,1;1,1;4,1;2", 24),  # one chassis a group
     ("3,2;2,1;3,2;1", 18),  # two chassis: SimGrid's one route that is no chain
     ("4,1;1,1;4,1;1", 16),  # as many groups as blades
     ("2,1;3,1;2,1;2", 24)],  # three chassis of two blades
)  # fmt: skip
def test_an_imported_dragonfly_crosses_simgrids_links(tmp_path, params, hosts):
    """Every pair's route crosses the links SimGrid's does (SimGrid numbers its dragonfly
    links as it makes them, in the import's order), but where SimGrid 3.32's route is no
    chain of links: within a group, from a chassis other than 0 to another blade."""
    imported, pairs, sim = all_routes(tmp_path, cluster("DRAGONFLY", params, hosts))
    hw = imported.machine.hardware()
    assert hw.routing == "simgrid-dragonfly" and hw.network.startswith("simgrid-dragonfly")
    (g, _), (c, _), (b, _), n = (x.split(",") for x in params.split(";"))
    per_group, nodes = int(c) * int(b), int(n[0])
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    quirks = 0
    for (a, z), ours in zip(pairs, batch):
        want = [int(DRAGONFLY_LINK.fullmatch(name).group(1)) + 1 for name in sim[(a, z)]]
        ra, rz = (a - 1) // nodes, (z - 1) // nodes
        if (ra // per_group == rz // per_group and (ra % per_group) // int(b) != 0
                and ra % int(b) != rz % int(b)):  # fmt: skip
            quirks += 1
            assert want[:2] == list(ours.links[:2])  # the same first green hop
            continue
        assert list(ours.links) == want, (a, z)
    assert (quirks > 0) == (int(c) > 1)
