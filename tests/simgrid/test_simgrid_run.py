"""Exported platforms run in SimGrid itself (Debian's python3-simgrid 3.32, for the
system python3, in a subprocess: tests/simgrid/simgrid_probe.py). One message alone, CM02
network model with latency and bandwidth factors of 1, no TCP gamma limit and no
cross-traffic: SimGrid's time is then latency + bytes / narrowest bandwidth, which is
PARASOL's transfer_time of a message alone. Skipped where python3-simgrid is absent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from simgrid_support import MISSING, SYSTEM_PYTHON

from parasol_core import load
from parasol_core.simgrid import export_platform, import_text
from parasol_core.topology import generators
from parasol_core.topology.index import route
from parasol_core.topology.transfer import RouteTable

HERE = Path(__file__).resolve().parent
PROBE = HERE / "simgrid_probe.py"

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def probe(platform: Path, *args: str) -> dict:
    done = subprocess.run([SYSTEM_PYTHON, str(PROBE), str(platform), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("sample", "pairs"),
    [("grid4x4.machine", [(1, 16), (16, 1), (6, 7), (4, 13)]),
     ("torus 4 3 3", [(1, 36), (2, 35), (5, 23)])],
)  # fmt: skip
def test_a_message_takes_the_same_time_in_simgrid(tmp_path, sample, pairs):
    if sample.endswith(".machine"):
        machine = load(HERE.parents[1] / "sample_models" / sample)
    else:
        from tests.simgrid.test_simgrid import machine_of

        machine = machine_of(generators.torus([4, 3, 3], 1.5e-6, 2e-9))
    platform = tmp_path / "platform.xml"
    platform.write_text(export_platform(machine).text)
    table = RouteTable.for_machine(machine)
    for src, dst in pairs:
        for size in (1, 1_000_000):
            sim = probe(platform, "time", f"p{src}", f"p{dst}", str(size))
            parasol = table.transfer_time(table.add(src, dst), [], size)
            assert sim["time"] == pytest.approx(parasol, rel=1e-9)
            ours = [f"l{i}" for i in route(machine.hardware(), src, dst).links]
            # a zone of layers crosses a 'parasol-hop' link after each dimension
            assert [n for n in sim["links"] if not n.startswith("parasol-hop")] == ours


def test_switches_run_as_routers(tmp_path):
    # a fat-tree-like two-level star: compute 1-4, switches 5, 6, 7; links of two speeds
    topo = generators.build([(1, 5), (2, 5), (3, 6), (4, 6), (5, 7), (6, 7)], 7, 2e-6, 1e-9,
                            routing="shortest")  # fmt: skip
    topo.links[4].speed = topo.links[5].speed = type(topo.links[0].speed)(4e-9)
    for p in (5, 6, 7):
        topo.types[p] = 2
    from tests.simgrid.test_simgrid import machine_of

    machine = machine_of(topo, switch_types=(2,))
    platform = tmp_path / "star.xml"
    platform.write_text(export_platform(machine).text)
    table = RouteTable.for_machine(machine)
    sim = probe(platform, "time", "p1", "p4", "4096")
    assert sim["links"] == ["l1", "l5", "l6", "l4"]
    assert sim["time"] == pytest.approx(table.transfer_time(table.add(1, 4), [], 4096), rel=1e-9)


CLUSTERS = {
    "torus": 'topology="TORUS" topo_parameters="3,4,2" radical="0-23"',
    "fattree": 'topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2" radical="0-15"',
    "kary": 'topology="FAT_TREE" topo_parameters="3;2,2,2;1,2,2;1,1,1" radical="0-7"',
    "dragonfly": 'topology="DRAGONFLY" topo_parameters="3,1;1,1;4,1;2" radical="0-23"',
    "dragonfly-chassis": 'topology="DRAGONFLY" topo_parameters="3,1;2,1;3,1;2" radical="0-35"',
    "flat": 'radical="0-5"',
    "backbone": 'radical="0-5" bb_bw="2GBps" bb_lat="3us"',
}


@pytest.mark.parametrize("kind", sorted(CLUSTERS))
def test_imported_clusters_route_as_simgrid_does(tmp_path, kind):
    """Every pair's route: the same number of links and the same summed latency (links of
    a dragonfly's levels differ in bandwidth: the narrowest link is compared too).

    Except where SimGrid 3.32's dragonfly routing is not a path: within a group, from a
    router outside chassis 0 it crosses the green link of its own chassis, then routes on
    as if it were in chassis 0 (a black hop too few or too many); PARASOL's routes are
    chains of links."""
    text = (f'<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            f'<platform version="4.1"><zone id="w" routing="Full">'
            f'<cluster id="c" prefix="h" suffix="" speed="1Gf" bw="125MBps" lat="50us" '
            f'{CLUSTERS[kind]}/></zone></platform>')  # fmt: skip
    platform = tmp_path / f"{kind}.xml"
    platform.write_text(text)
    machine = import_text(text).machine
    hw = machine.hardware()
    hosts = [f"h{i}" for i in range(len([p for p in hw.types if hw.types[p] == 1]))]
    pairs = [(a, b) for a in range(len(hosts)) for b in range(len(hosts)) if a != b]
    skipped = 0
    sim = probe(platform, "routes", *(f"{hosts[a]}:{hosts[b]}" for a, b in pairs))
    for a, b in pairs:
        r = route(hw, a + 1, b + 1)
        got = sim[f"{hosts[a]}:{hosts[b]}"]
        if kind == "dragonfly-chassis" and abs(len(got["links"]) - r.hops) == 1:
            assert got["links"][1].startswith("green")
            skipped += 1
            continue
        assert len(got["links"]) == r.hops, (kind, a, b, got["links"], r)
        latency = sum(hw.link_by_id(i).latency.mean for i in r.links)
        assert got["latency"] == pytest.approx(latency, rel=1e-9)
        slowest = max(hw.link_by_id(i).speed.mean for i in r.links)
        assert 1 / got["bandwidth"] == pytest.approx(slowest, rel=1e-9)
    if kind == "dragonfly-chassis":
        assert 0 < skipped < len(pairs) // 4  # the quirk is real, and rare
    else:
        assert skipped == 0


EXAMPLE_DIRS = [Path("/usr/share/doc/simgrid/examples/platforms"),
                Path("/usr/share/simgrid/examples/platforms"),
                Path("/usr/share/doc/simgrid-examples/platforms")]  # fmt: skip


@pytest.mark.parametrize("name", ["small_platform.xml", "cluster_fat_tree.xml",
                                  "cluster_dragonfly.xml", "cluster_torus.xml"])  # fmt: skip
def test_simgrids_own_example_platforms_import(name):
    found = next((d / name for d in EXAMPLE_DIRS if (d / name).is_file()), None)
    if found is None:
        pytest.skip(f"{name}: the installed SimGrid packages ship no example platforms "
                    f"(looked in {', '.join(map(str, EXAMPLE_DIRS))})")  # fmt: skip
    from parasol_core.analysis.validate import validate
    from parasol_core.simgrid import import_platform

    imported = import_platform(found)
    assert imported.machine.hardware().processor_count > 0
    assert not [d for d in validate(imported.machine) if d.is_error]


HEAD = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n')  # fmt: skip
ZONES = {
    # two clusters (one with a backbone) joined by a zone route between their routers
    "clusters": """<zone id="world" routing="Full">
  <cluster id="A" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"
           router_id="ra"/>
  <cluster id="B" prefix="b" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="10us"
           bb_bw="2GBps" bb_lat="5us" router_id="rb"/>
  <link id="wan" bandwidth="10MBps" latency="20ms"/>
  <zoneRoute src="A" dst="B" gw_src="ra" gw_dst="rb"><link_ctn id="wan"/></zoneRoute>
</zone>""",
    # a Floyd zone: one-hop routes only, SimGrid finds the rest (a tree: no ties)
    "floyd": """<zone id="f" routing="Floyd">
  <host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/><host id="h3" speed="1Gf"/>
  <host id="h4" speed="1Gf"/><router id="r1"/><router id="r2"/>
  <link id="l1" bandwidth="1GBps" latency="1us"/><link id="l2" bandwidth="2GBps" latency="2us"/>
  <link id="l3" bandwidth="3GBps" latency="3us"/><link id="l4" bandwidth="4GBps" latency="4us"/>
  <link id="l5" bandwidth="500MBps" latency="1ms"/>
  <route src="h1" dst="r1"><link_ctn id="l1"/></route>
  <route src="h2" dst="r1"><link_ctn id="l2"/></route>
  <route src="h3" dst="r2"><link_ctn id="l3"/></route>
  <route src="h4" dst="r2"><link_ctn id="l4"/></route>
  <route src="r1" dst="r2"><link_ctn id="l5"/></route>
</zone>""",
}


@pytest.mark.parametrize("kind", sorted(ZONES))
def test_zones_and_zone_routes_route_as_simgrid_does(tmp_path, kind):
    text = HEAD + ZONES[kind] + "\n</platform>\n"
    platform = tmp_path / f"{kind}.xml"
    platform.write_text(text)
    machine = import_text(text).machine
    hw = machine.hardware()
    from parasol_core.topology.switches import compute_processors

    if kind == "clusters":
        hosts = ["a0", "a1", "a2", "a3", "b0", "b1", "b2"]
    else:
        hosts = ["h1", "h2", "h3", "h4"]
    assert compute_processors(machine, hw).tolist() == list(range(1, len(hosts) + 1))
    pairs = [(a, b) for a in range(len(hosts)) for b in range(len(hosts)) if a != b]
    sim = probe(platform, "routes", *(f"{hosts[a]}:{hosts[b]}" for a, b in pairs))
    for a, b in pairs:
        r = route(hw, a + 1, b + 1)
        got = sim[f"{hosts[a]}:{hosts[b]}"]
        assert len(got["links"]) == r.hops, (kind, a, b, got["links"], r)
        assert got["latency"] == pytest.approx(sum(hw.link_by_id(i).latency.mean
                                                   for i in r.links), rel=1e-9)  # fmt: skip
        slowest = max(hw.link_by_id(i).speed.mean for i in r.links)
        assert 1 / got["bandwidth"] == pytest.approx(slowest, rel=1e-9)


def test_messages_sharing_links_end_as_parasols_max_min_trace(tmp_path):
    """Several messages at once: SimGrid shares links max-min, as PARASOL's phase trace
    with sharing="maxmin" does (docs/topology.md, "Which model answers what"). CM02
    weighs each flow by its route's latency (TCP's RTT unfairness; weight-S 0 leaves
    just that), so the messages here all cross three links of one latency: equal
    weights, plain max-min."""
    from parasol_core.simulate.phases import Message, simulate_phase

    machine = load(HERE.parents[1] / "sample_models" / "grid4x4.machine")
    platform = tmp_path / "grid.xml"
    platform.write_text(export_platform(machine).text)
    messages = [Message(1, 4, 1e6), Message(2, 8, 5e5), Message(5, 8, 2e6),
                Message(3, 15, 1e6), Message(9, 12, 3e5), Message(4, 16, 7e5)]  # fmt: skip
    hw = machine.hardware()
    assert {route(hw, m.src, m.dst).hops for m in messages} == {3}
    ends = probe(platform, "phase", *(f"p{m.src}:p{m.dst}:{int(m.bytes)}" for m in messages))
    result = simulate_phase(machine, messages, sharing="maxmin")
    assert ends == pytest.approx(result.end.tolist(), rel=1e-9)
    assert (result.end - result.start > result.alone * 1.2).any()  # they did share links
