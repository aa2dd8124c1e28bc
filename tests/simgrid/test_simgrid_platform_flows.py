"""SimGrid platforms imported into PARASOL simulate as SimGrid simulates them (issue 36):
SimGrid 3.32 runs the platform FILE itself (its own clusters, its own routing, its own
link policies) through tests/simgrid_flow_probe.py, and PARASOL runs the model the import
makes under ``sharing="cm02"``; every message ends within 1e-6 of SimGrid's. Skipped
where python3-simgrid is absent (tests/simgrid/test_flow_simgrid.py says why the runs
use SimGrid's Full update mode and a finer timing precision)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from test_flow_simgrid import EXACT, MISSING, PROBE, SYSTEM_PYTHON

from parasol_core.simgrid import import_text
from parasol_core.simulate.messages import MessageArrays
from parasol_core.simulate.phases import simulate_phase
from parasol_core.topology.switches import compute_processors

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

HEAD = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n')  # fmt: skip


def run_simgrid(path, names: dict[int, str], msgs: MessageArrays) -> np.ndarray:
    """SimGrid's end of each message, run on the platform file itself."""
    messages = path.parent / "messages.json"
    rows = [[names[a], names[b], int(n), float(t)] for a, b, n, t in
            zip(msgs.src.tolist(), msgs.dst.tolist(), msgs.nbytes.tolist(), msgs.start.tolist())]  # fmt: skip
    messages.write_text(json.dumps(rows))
    done = subprocess.run([SYSTEM_PYTHON, str(PROBE), str(path), str(messages), *EXACT],
                          capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return np.asarray(json.loads(done.stdout.strip().splitlines()[-1])["ends"])


def agree(tmp_path, text: str, phase, sharing: str = "cm02"):
    """Import ``text``, make the phase ``phase(hosts)`` over its compute processors, and
    check PARASOL's ends against SimGrid's on the file; both returned."""
    path = tmp_path / "platform.xml"
    path.write_text(text)
    imported = import_text(text)
    machine = imported.machine
    hosts = compute_processors(machine, machine.hardware())
    msgs = phase(hosts)
    ours = simulate_phase(machine, msgs, sharing=sharing).end
    theirs = run_simgrid(path, imported.names, msgs)
    assert ours == pytest.approx(theirs, rel=1e-6)
    return ours, theirs


def random_phase(hosts: np.ndarray, n: int, seed: int, window: float = 0.0) -> MessageArrays:
    rng = np.random.default_rng(seed)
    c = hosts.shape[0]
    a = rng.integers(0, c, n)
    b = (a + rng.integers(1, c, n)) % c
    start = rng.uniform(0, window, n) if window else None
    return MessageArrays(hosts[a], hosts[b], rng.integers(1, 1 << 20, n).astype(float), start)


def alltoall(hosts: np.ndarray, nbytes: float = 65536.0) -> MessageArrays:
    a, b = np.meshgrid(hosts, hosts, indexing="ij")
    keep = a != b
    return MessageArrays(a[keep], b[keep], nbytes)


def incast(hosts: np.ndarray, nbytes: float = 65536.0) -> MessageArrays:
    return MessageArrays(hosts[1:], np.full(hosts.shape[0] - 1, hosts[0]), nbytes)


# --------------------------------------------------------------------------- link policies

TWO_CLUSTERS = (
    HEAD
    + """<zone id="world" routing="Full">
  <cluster id="A" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"
           router_id="ra"/>
  <cluster id="B" prefix="b" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"
           router_id="rb"/>
  <link id="wan" bandwidth="{wan_bw}" latency="1ms" sharing_policy="{wan}"/>
  <zoneRoute src="A" dst="B" gw_src="ra" gw_dst="rb"><link_ctn id="wan"{way}/></zoneRoute>
</zone>
</platform>
"""
)


def test_split_duplex_clusters_joined_by_a_shared_wan_keep_both_policies(tmp_path):
    """Issue 36: the clusters' links stay split duplex beside the shared WAN link, so
    two opposite flows a0 -> b0 and b0 -> a0 share the WAN (each at half of it) and
    nothing else: SimGrid's 13.4 ms, not the 26.9 ms of every link read as shared."""
    text = TWO_CLUSTERS.format(wan="SHARED", wan_bw="10MBps", way="")
    hw = import_text(text).machine.hardware()
    assert hw.duplex == 0.0 and hw.shared is not None and hw.fatpipe is None
    ours, _ = agree(tmp_path, text, lambda h: MessageArrays([h[0], h[4]], [h[4], h[0]], 65536.0))
    # alone: 1.1 ms of latency and 6.55 ms on the WAN; together the WAN takes twice that
    assert ours.tolist() == pytest.approx([1.1e-3 + 2 * 65536 / 1e7] * 2, rel=1e-12)


@pytest.mark.parametrize("wan", ["SHARED", "SPLITDUPLEX", "FATPIPE"])
def test_every_wan_policy_shares_as_in_simgrid(tmp_path, wan):
    text = way = ' direction="UP"' if wan == "SPLITDUPLEX" else ""
    text = TWO_CLUSTERS.format(wan=wan, wan_bw="100MBps", way=way)
    hw = import_text(text).machine.hardware()
    assert (hw.fatpipe is not None) == (wan == "FATPIPE")
    assert (hw.shared is not None) == (wan == "SHARED")
    agree(tmp_path, text, lambda h: random_phase(h, 60, 11, 1e-3))


@pytest.mark.parametrize("bb", ["SHARED", "FATPIPE"])
def test_a_flat_cluster_backbone_keeps_its_policy(tmp_path, bb):
    text = (
        HEAD
        + f"""<cluster id="c" prefix="h" suffix="" radical="0-7" speed="1Gf"
      bw="1GBps" lat="1us" bb_bw="2GBps" bb_lat="10us" bb_sharing_policy="{bb}"/>
</platform>
"""
    )
    hw = import_text(text).machine.hardware()
    assert (hw.fatpipe is not None) == (bb == "FATPIPE")
    ours, _ = agree(tmp_path, text, alltoall)
    agree(tmp_path, text, incast)


def test_an_imported_full_zone_shares_as_simgrid_does(tmp_path):
    """Explicit routes (a star around r1, each route two links, every link of its own
    bandwidth and latency): the routes PARASOL finds are the file's, and the phases end
    as SimGrid ends them on the file."""
    from tests.simulate.test_flow_engine import EXPLICIT

    notes = "\n".join(import_text(EXPLICIT).notes)
    assert "differ" not in notes  # every explicit route is PARASOL's
    agree(tmp_path, EXPLICIT, lambda h: random_phase(h, 120, 12, 2e-5))
    agree(tmp_path, EXPLICIT, alltoall)
    agree(tmp_path, EXPLICIT, incast)


# --------------------------------------------------------------------------- clusters


def cluster(topology: str, params: str, hosts: int, policy: str = "SPLITDUPLEX") -> str:
    return HEAD + (f'<cluster id="c" prefix="n" suffix="" radical="0-{hosts - 1}" speed="1Gf" '
                   f'bw="1GBps" lat="1us" topology="{topology}" topo_parameters="{params}" '
                   f'sharing_policy="{policy}"/>\n</platform>\n')  # fmt: skip


def halo(machine, nbytes: float = 65536.0) -> MessageArrays:
    from parasol_core.simulate.patterns import make_pattern_arrays

    msgs = make_pattern_arrays(machine, "halo", nbytes)
    keep = msgs.src != msgs.dst
    return MessageArrays(msgs.src[keep], msgs.dst[keep], msgs.nbytes[keep])


def shift(hosts: np.ndarray, by: int, nbytes: float = 65536.0) -> MessageArrays:
    return MessageArrays(hosts, np.roll(hosts, -by), nbytes)


CLUSTER_CASES = {
    "torus 4x4x4 random": (("TORUS", "4,4,4", 64), lambda h: random_phase(h, 300, 1, 2e-4)),
    "torus 4x4x4 shift by half": (("TORUS", "4,4,4", 64), lambda h: shift(h, 2)),
    "torus 6x4 alltoall": (("TORUS", "6,4", 24), alltoall),
    "torus 4x4x4 incast": (("TORUS", "4,4,4", 64), incast),
    # a halo on split-duplex links shares none: on shared ones each link carries two
    "shared torus 4x4x4 halo": (("TORUS", "4,4,4", 64, "SHARED"), "halo"),
    "shared torus 8x4 halo": (("TORUS", "8,4", 32, "SHARED"), "halo"),
    "shared fat tree 2;4,4;1,2;1,2 random": (
        ("FAT_TREE", "2;4,4;1,2;1,2", 16, "SHARED"), lambda h: random_phase(h, 100, 5)),
    # issue 36's: 'shortest' sent all inter-leaf traffic over spine 0's first link
    "fat tree 2;4,4;1,2;1,2 shift between leaves": (
        ("FAT_TREE", "2;4,4;1,2;1,2", 16), lambda h: shift(h, 4)),
    "fat tree 2;4,4;1,2;1,2 alltoall": (("FAT_TREE", "2;4,4;1,2;1,2", 16), alltoall),
    "fat tree 2;4,4;1,4;1,1 random": (
        ("FAT_TREE", "2;4,4;1,4;1,1", 16), lambda h: random_phase(h, 200, 2, 1e-4)),
    "fat tree 3;2,2,3;1,2,1;1,2,3 alltoall": (("FAT_TREE", "3;2,2,3;1,2,1;1,2,3", 12), alltoall),
    "fat tree 2;2,3;2,2;2,1 incast": (("FAT_TREE", "2;2,3;2,2;2,1", 6), incast),
    "dragonfly 3,1;1,1;4,1;2 random": (
        ("DRAGONFLY", "3,1;1,1;4,1;2", 24), lambda h: random_phase(h, 200, 4, 1e-4)),
    "dragonfly 4,1;1,1;4,1;1 alltoall": (("DRAGONFLY", "4,1;1,1;4,1;1", 16), alltoall),
    "dragonfly 3,2;1,1;3,2;2 incast": (("DRAGONFLY", "3,2;1,1;3,2;2", 18), incast),
    "fat tree 2-ary 3-tree random": (
        ("FAT_TREE", "3;2,2,2;1,2,2;1,1,1", 8), lambda h: random_phase(h, 100, 3)),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CLUSTER_CASES))
def test_an_imported_cluster_shares_as_simgrid_does(tmp_path, case):
    shape, phase = CLUSTER_CASES[case]
    text = cluster(*shape)
    if phase == "halo":  # the pattern on the imported torus: its neighbours by its routing
        phase = lambda h: halo(import_text(text).machine)  # noqa: E731
    ours, _ = agree(tmp_path, text, phase)
    machine = import_text(text).machine
    msgs = phase(compute_processors(machine, machine.hardware()))
    alone = simulate_phase(machine, msgs, sharing="cm02").alone
    assert (ours - msgs.start > alone * 1.05).any()  # there was contention to share


# --------------------------------------------------------------------------- exports


def exported(kind: str, dims, duplex=0.0):
    """A generated model (switches of type 2), as the export writes it."""
    from parasol_core.model import Machine, Processor
    from parasol_core.simgrid import export_platform
    from parasol_core.topology.generators import generate

    topology = generate(kind, list(dims), 1e-6, 1e-9)
    topology.duplex = duplex
    procs = [Processor(id=1, name="node")]
    if any(t == 2 for t in topology.types.values()):
        procs.append(Processor(id=2, name="switch", role="switch"))
    machine = Machine(id=1, name="x", processor_count=len(procs), topology_count=1,
                      processors=procs, topologies=[topology])  # fmt: skip
    return machine, export_platform(machine).text


def agree_exported(tmp_path, machine, text: str, phase) -> np.ndarray:
    path = tmp_path / "exported.xml"
    path.write_text(text)
    hosts = compute_processors(machine, machine.hardware())
    msgs = phase(hosts)
    ours = simulate_phase(machine, msgs, sharing="cm02")
    theirs = run_simgrid(path, {int(p): f"p{p}" for p in hosts.tolist()}, msgs)
    assert ours.end == pytest.approx(theirs, rel=1e-6)
    assert (ours.end - ours.start > ours.alone * 1.05).any()  # they shared links
    return ours.end


EXPORT_CASES = {
    # zones of layers: PARASOL's dimension-order routing, ties included
    "3Dtorus 4x4x4 random": (("torus", (4, 4, 4)), "DijkstraCache",
                             lambda h: random_phase(h, 300, 21, 2e-4)),
    "3Dtorus 4x4x4 shift by half": (("torus", (4, 4, 4)), "DijkstraCache", lambda h: shift(h, 2)),
    "XY mesh 6x4 alltoall": (("grid", (6, 4)), "DijkstraCache", alltoall),
    "XYZ mesh 3x3x2 incast": (("grid", (3, 3, 2)), "DijkstraCache", incast),
    "hypercube 4 random": (("hypercube", (4,)), "DijkstraCache",
                           lambda h: random_phase(h, 150, 22)),
    "ring 9 shared random": (("ring", (9,)), "<cluster", lambda h: random_phase(h, 60, 23)),
    # clusters
    "3Dtorus 3x3x3 random": (("torus", (3, 3, 3)), "<cluster", lambda h: random_phase(h, 200, 24)),
    "fattree 4 2 random": (("fattree", (4, 2)), "<cluster", lambda h: random_phase(h, 200, 25)),
    "fattree2 4 2 4 alltoall": (("fattree2", (4, 2, 4)), "<cluster", alltoall),
    "fattree3 2 2 2 2 2 alltoall": (("fattree3", (2, 2, 2, 2, 2)), "<cluster", alltoall),
    # zones of groups (one global link a pair of groups): dragonfly-minimal's routes
    "dragonfly 3 2 2 1 random": (("dragonfly", (3, 2, 2, 1)), "parasol-router-",
                                 lambda h: random_phase(h, 150, 26, 1e-4)),
    "dragonfly 5 2 3 2 shared random": (("dragonfly", (5, 2, 3, 2)), "parasol-router-",
                                        lambda h: random_phase(h, 300, 31, 1e-4)),
    # two or more: one DijkstraCache zone of the links, weighted by pad links
    "dragonfly 3 2 2 2 alltoall": (("dragonfly", (3, 2, 2, 2)), "parasol-pad-", alltoall),
    "dragonfly 4 3 1 2 incast": (("dragonfly", (4, 3, 1, 2)), "parasol-pad-", incast),
    "dragonfly 5 4 2 2 shared random": (("dragonfly", (5, 4, 2, 2)), "parasol-pad-",
                                        lambda h: random_phase(h, 300, 32, 1e-4)),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(EXPORT_CASES))
def test_an_exported_model_shares_in_simgrid_as_in_parasol(tmp_path, case):
    (kind, dims), form, phase = EXPORT_CASES[case]
    machine, text = exported(kind, dims, duplex=None if "shared" in case else 0.0)
    assert form in text
    assert "<route " not in text or form in ("DijkstraCache", "parasol-router-", "parasol-pad-")
    agree_exported(tmp_path, machine, text, phase)


def test_an_imported_dragonfly_exports_as_a_dragonfly_cluster(tmp_path):
    from parasol_core.simgrid import export_platform

    machine = import_text(cluster("DRAGONFLY", "3,1;1,1;4,1;2", 24)).machine
    text = export_platform(machine).text
    assert 'topology="DRAGONFLY" topo_parameters="3,1;1,1;4,1;2"' in text
    assert import_text(text).machine.hardware() == machine.hardware()
    agree_exported(tmp_path, machine, text, lambda h: random_phase(h, 150, 29, 1e-4))


@pytest.mark.parametrize("bb", ["SHARED", "FATPIPE"])
def test_a_cluster_with_a_backbone_exports_as_one(tmp_path, bb):
    from test_flow_simgrid import flat_cluster

    from parasol_core.simgrid import export_platform

    machine = flat_cluster(backbone=bb)  # host i - port i, one backbone over the ports
    text = export_platform(machine).text
    assert f'bb_sharing_policy="{bb}"' in text and "<route" not in text
    agree_exported(tmp_path, machine, text, alltoall)
    agree_exported(tmp_path, machine, text, lambda h: random_phase(h, 100, 30, 1e-5))


def test_a_star_exports_as_a_flat_cluster_and_shares_as_in_simgrid(tmp_path):
    from parasol_core.model import Machine, Processor
    from parasol_core.simgrid import export_platform
    from parasol_core.topology.generators import build

    topology = build([(p, 9) for p in range(1, 9)], 9, 2e-6, 1e-9, routing="shortest")
    topology.types[9] = 2
    topology.duplex = 0.0
    machine = Machine(id=1, name="star", processor_count=2, topology_count=1,
                      processors=[Processor(id=1, name="node"),
                                  Processor(id=2, name="switch", role="switch")],
                      topologies=[topology])  # fmt: skip
    text = export_platform(machine).text
    assert 'router_id="p9"' in text
    agree_exported(tmp_path, machine, text, incast)
    agree_exported(tmp_path, machine, text, lambda h: random_phase(h, 80, 27, 1e-5))


def test_the_gcel_sample_exported_shares_in_simgrid_as_in_parasol(tmp_path):
    """The 16 x 32 mesh (XY) that exported 130 MB of explicit routes: a zone of two
    layers of 9 MB, and SimGrid's answer PARASOL's."""
    from pathlib import Path

    from parasol_core import load
    from parasol_core.simgrid import export_platform

    machine = load(Path(__file__).resolve().parents[2] / "sample_models" / "parsytec-gcel.machine")
    text = export_platform(machine).text
    assert "DijkstraCache" in text and len(text) < 16 * 1024 * 1024
    agree_exported(tmp_path, machine, text, lambda h: random_phase(h, 400, 28, 1e-3))
