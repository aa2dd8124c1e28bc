"""PARASOL dragonflies (``dragonfly-minimal``) exported as zones of groups (one global
link between two groups) or as one weighted DijkstraCache zone of their links (any
other number: parasol_core/simgrid/weighted.py) (issue 36, docs/simgrid.md "Export"):
SimGrid 3.32's route between two hosts (``Host.route_to``,
tests/simgrid/simgrid_probe.py) crosses PARASOL's links in PARASOL's order, and
dragonflies of 1,088 compute processors (which the Full zone of explicit routes
refused) and of 1,600 routers (which the zones of routers refused) export, growing
with their links, and read back as the same topology. Skipped where python3-simgrid is
absent."""

from __future__ import annotations

import numpy as np
import pytest
from test_simgrid_run import MISSING, probe

from parasol_core import load
from parasol_core.base import budget
from parasol_core.simgrid import export_platform, import_text
from parasol_core.topology.generators import generate_over
from parasol_core.topology.index import index_of
from parasol_core.topology.switches import compute_processors

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

SAMPLE = "slingshot-dragonfly.machine"


def dragonfly(dims, duplex=None):
    """The Slingshot sample with its hardware topology regenerated as ``dragonfly dims``."""
    from pathlib import Path

    machine = load(Path(__file__).resolve().parents[2] / "sample_models" / SAMPLE)
    hw = machine.hardware()
    new = generate_over(hw, "dragonfly", list(dims), 3.5e-7, 4e-11)
    new.duplex = duplex
    machine.topologies[machine.topologies.index(hw)] = new
    return machine


def want_links(hw, route) -> list[str]:
    """SimGrid's names of the links a PARASOL route crosses: ``l3``, or ``l3_UP`` for a
    split-duplex link crossed from the first processor it connects."""
    out = []
    for k, lid in enumerate(route.links):
        name = f"l{lid}"
        if hw.duplex is not None:
            up = route.processors[k] == hw.link_by_id(lid).connect[0]
            name += "_UP" if up else "_DOWN"
        out.append(name)
    return out


def check_routes(tmp_path, machine, text: str, pairs) -> None:
    path = tmp_path / "fly.xml"
    path.write_text(text)
    hw = machine.hardware()
    sim = probe(path, "routes", *(f"p{a}:p{b}" for a, b in pairs))
    batch = index_of(hw).routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), ours in zip(pairs, batch):
        # a weighted zone's pad links bound no flow and add no time (simgrid/weighted.py)
        got = [n for n in sim[f"p{a}:p{b}"]["links"] if not n.startswith("parasol-pad-")]
        assert got == want_links(hw, ours), (a, b)


@pytest.mark.parametrize(
    ("dims", "duplex", "groups"),
    [((3, 2, 2, 1), 0.0, True),  # one global link a pair of groups, split-duplex
     ((3, 2, 2, 2), None, False),  # two a pair: the route's link depends on both routers
     ((4, 3, 1, 2), 0.0, False),  # one processor a router
     ((5, 2, 3, 2), None, True),  # balanced: G = A*H + 1
     ((9, 4, 2, 2), 0.0, True),  # balanced, four routers a group
     ((5, 4, 2, 2), 0.0, False),  # two a pair, split-duplex
     ((3, 4, 1, 3), None, False),  # six a pair, two of them between the same routers
     ((7, 6, 1, 4), 0.0, False),  # four a pair
     ((1, 4, 2, 1), None, False)],  # one group: no global link
)  # fmt: skip
def test_every_route_of_an_exported_dragonfly_is_parasols(tmp_path, dims, duplex, groups):
    """Zones of groups where two groups share one global link, else one weighted
    DijkstraCache zone of the links (issue 36): every ordered pair crosses PARASOL's
    links in PARASOL's order in SimGrid, and the file reads back as the topology."""
    machine = dragonfly(dims, duplex)
    text = export_platform(machine).text
    assert ('zone id="parasol-group-' in text) == groups
    assert ('routing="DijkstraCache"' in text and "parasol-pad-" in text) == (not groups)
    assert ("<zoneRoute " in text) == groups
    hw = machine.hardware()
    if not groups:  # a route a link (of those between two routers, the lowest k)
        assert text.count("<route ") == len({tuple(sorted(lk.connect)) for lk in hw.links})
    again = import_text(text)
    assert again.machine.hardware() == hw
    assert not again.notes  # the explicit routes between hosts are PARASOL's
    hosts = compute_processors(machine, hw).tolist()
    check_routes(tmp_path, machine, text, [(a, b) for a in hosts for b in hosts if a != b])


def test_a_dragonfly_of_1088_processors_exports_as_its_links(tmp_path):
    """17 x 8 x 8 x 4 (K = 2 global links a pair of groups): refused as a Full zone of
    1,182,656 explicit routes, and 9,180 zone routes and 4,896 routes as the zones of
    routers that came before; as one weighted DijkstraCache zone a route a link
    (1,088 + 476 + 272 = 1,836), the same topology when read back, and SimGrid's route of
    sampled pairs (same router, same group, any) PARASOL's."""
    from parasol_core.simgrid.exporter import _as_full

    machine = dragonfly((17, 8, 8, 4), 0.0)
    hw = machine.hardware()
    hosts = compute_processors(machine, hw)
    assert hosts.shape[0] == 1088
    from parasol_core.topology.shape import processor_count
    from parasol_core.topology.switches import switch_mask

    count = processor_count(hw)
    with pytest.raises(budget.BudgetError, match="1,182,656 routes"):
        _as_full(machine, hw, count, switch_mask(machine, hw, count), hosts.tolist())
    made = export_platform(machine)
    text = made.text
    assert text.count("<route ") == hw.link_count == 1088 + 17 * 8 * 7 // 2 + 2 * 17 * 16 // 2
    assert "<zoneRoute " not in text and text.count("<zone ") == 1
    assert any("1,836 routes, one a link" in note for note in made.notes)
    assert import_text(text).machine.hardware() == hw
    rng = np.random.default_rng(36)
    a = rng.choice(hosts, 300)
    b = (a - 1 + rng.integers(1, 1088, 300)) % 1088 + 1
    near = [(int(x), int(x) + 1 - 2 * ((int(x) - 1) % 8 == 7)) for x in a[:20]]  # one router
    group = [(int(x), (int(x) - 1) // 64 * 64 + 1 + (int(x) + 9) % 64) for x in a[20:40]]
    pairs = near + [(x, y) for x, y in group if x != y] + list(zip(a.tolist(), b.tolist()))
    check_routes(tmp_path, machine, text, pairs)


def test_the_export_grows_with_the_links_not_the_routers_squared(tmp_path):
    """A 100 x 16 x 1 x 16 dragonfly (1,600 routers, two global links a pair of groups)
    was refused as zones of routers (1,279,200 zone routes, over the 1,000,000 limit);
    as one weighted zone it is a route a link (23,500), SimGrid's routes of sampled
    pairs are PARASOL's, and four times the processors a router add routes for their
    own links only."""
    machine = dragonfly((100, 16, 1, 16), 0.0)
    hw = machine.hardware()
    text = export_platform(machine).text
    assert text.count("<route ") == hw.link_count == 1600 + 100 * 120 + 2 * 100 * 99 // 2
    hosts = compute_processors(machine, hw)
    rng = np.random.default_rng(100)
    a = rng.choice(hosts, 200)
    b = (a - 1 + rng.integers(1, hosts.shape[0], 200)) % hosts.shape[0] + 1
    check_routes(tmp_path, machine, text, list(zip(a.tolist(), b.tolist())))
    counts = {}
    for p in (2, 8):
        made = export_platform(dragonfly((5, 4, p, 2))).text
        counts[p] = made.count("<route ")
    assert counts[8] - counts[2] == 5 * 4 * (8 - 2)  # a route more per compute processor


def test_a_dragonfly_with_one_link_between_two_groups_grows_with_its_groups(tmp_path):
    """Zones of groups (G = A*H + 1: one global link between two groups): zone routes
    between every two groups and between the routers of each group, G (G - 1) / 2 +
    G A (A - 1) / 2, not (G A)^2 / 2: a 65 x 16 x 4 x 4 dragonfly (4,160 compute
    processors, 1,040 routers) is 2,080 + 7,800 zone routes, not 540,280, and the
    import gives back the same topology (the links in their ids' order)."""
    machine = dragonfly((65, 16, 4, 4))
    made = export_platform(machine)
    text = made.text
    assert text.count("<zoneRoute ") == 65 * 64 // 2 + 65 * 16 * 15 // 2
    assert text.count('<zone id="parasol-group-') == 65
    assert text.count("<route ") == 1040 * (4 + 4 * 3 // 2)
    assert any("65 zones, one a group" in note for note in made.notes)
    back = import_text(text)
    assert back.machine.hardware() == machine.hardware()
    assert not back.notes
    rng = np.random.default_rng(65)
    a = rng.integers(1, 4161, 300)
    b = (a - 1 + rng.integers(1, 4160, 300)) % 4160 + 1
    near = [(int(x), (int(x) - 1) // 64 * 64 + 1 + (int(x) + 6) % 64) for x in a[:50]]  # a group
    check_routes(tmp_path, machine, text, near + list(zip(a.tolist(), b.tolist())))


def test_the_pad_links_leave_simgrids_default_update_exact(tmp_path):
    """The weighted zone's pad links (one a link, crossed only by the flows that cross
    the link) do not make SimGrid's default lazy update miss a rate, as one link every
    flow crossed would (tests/simgrid/test_flow_simgrid.py): a phase of 300 staggered
    messages on 17 x 8 x 8 x 4, with contention, ends within 1e-6 of PARASOL's ``cm02``
    without SimGrid's Full update mode."""
    import json
    import subprocess

    from test_flow_simgrid import PROBE, SYSTEM_PYTHON

    from parasol_core.simulate.messages import MessageArrays
    from parasol_core.simulate.phases import simulate_phase

    machine = dragonfly((17, 8, 8, 4), 0.0)
    text = export_platform(machine).text
    assert "parasol-pad-" in text
    path = tmp_path / "fly.xml"
    path.write_text(text)
    rng = np.random.default_rng(5)
    a = rng.integers(1, 1089, 300)
    b = (a - 1 + rng.integers(1, 1088, 300)) % 1088 + 1
    msgs = MessageArrays(a, b, rng.integers(1, 1 << 20, 300).astype(float),
                         rng.uniform(0, 2e-5, 300))  # fmt: skip
    ours = simulate_phase(machine, msgs, sharing="cm02")
    rows = [[f"p{x}", f"p{y}", int(n), float(t)] for x, y, n, t in
            zip(a.tolist(), b.tolist(), msgs.nbytes.tolist(), msgs.start.tolist())]  # fmt: skip
    (tmp_path / "messages.json").write_text(json.dumps(rows))
    done = subprocess.run([SYSTEM_PYTHON, str(PROBE), str(path), str(tmp_path / "messages.json"),
                           "--cfg=surf/precision:1e-15"], capture_output=True, text=True,
                          timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = np.asarray(json.loads(done.stdout.strip().splitlines()[-1])["ends"])
    assert ours.end == pytest.approx(theirs, rel=1e-6)
    assert (ours.end - ours.start > ours.alone * 1.05).sum() > 100  # they shared links
