"""Fat trees and dragonflies (issue 21): generators, up/down, dragonfly minimal and
Valiant routing, and shortest paths over them (property tests against a plain
breadth-first search)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_topology_nd import PROPS, all_pairs_sample, bfs_distances, check_route, check_shortest

from parasol_core import loads
from parasol_core.base import budget
from parasol_core.syntax.writer import canonical_lines
from parasol_core.topology import generators
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import generate
from parasol_core.topology.index import index_of
from parasol_core.topology.routing import available_routings, get_routing
from parasol_core.topology.switches import network_of

fat_trees = st.one_of(
    st.tuples(st.just("fattree"), st.tuples(st.integers(1, 4), st.integers(1, 4))),
    st.tuples(st.just("fattree2"), st.tuples(*[st.integers(1, 5)] * 3)),
    st.tuples(st.just("fattree3"), st.tuples(*[st.integers(1, 3)] * 5)),
).filter(lambda kd: kd[0] != "fattree" or kd[1][0] ** kd[1][1] <= 100)


@st.composite
def dragonflies(draw):
    a, h = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    g = draw(st.integers(1, a * h + 1))
    return "dragonfly", (g, a, draw(st.integers(1, 3)), h)


def make(kind, dims):
    return generate(kind, list(dims), 1e-6, 1e-9)


def compute_pairs(n, data):
    k = data.draw(st.integers(1, 40))
    return [(data.draw(st.integers(1, n)), data.draw(st.integers(1, n))) for _ in range(k)]


def compute_count(topology):
    return sum(1 for t in topology.types.values() if t == 1)


def test_a_2_ary_3_tree_is_numbered_as_documented():
    t = make("fattree", (2, 3))
    assert (t.processor_count, len(t.links), t.network, t.routing) == (20, 24, "fattree 2 3",
                                                                       "updown")  # fmt: skip
    assert [p for p, ty in t.types.items() if ty == 2] == list(range(9, 21))
    pairs = [tuple(lk.connect) for lk in t.links]
    assert pairs[:8] == [(1, 9), (2, 9), (3, 10), (4, 10), (5, 11), (6, 11), (7, 12), (8, 12)]
    assert pairs[8:12] == [(9, 13), (9, 14), (10, 13), (10, 14)]  # leaf 9's two up ports
    # up to the root level and down: the up ports the destination's digits pick
    r = index_of(t).route(1, 8)
    assert r.processors == (1, 9, 14, 20, 16, 12, 8)
    assert index_of(t).route(1, 2).processors == (1, 9, 2)


def test_two_and_three_level_fat_trees_have_the_port_counts_given():
    t = make("fattree2", (16, 8, 32))  # 32 leaves of 16 down / 8 up, 8 spines of 32 down
    compute = 16 * 32
    assert t.processor_count == compute + 32 + 8
    degree = np.bincount([p for lk in t.links for p in lk.connect], minlength=t.processor_count + 1)
    assert set(degree[1 : compute + 1]) == {1}
    assert set(degree[compute + 1 : compute + 33]) == {16 + 8}  # leaves: down + up
    assert set(degree[compute + 33 :]) == {32}  # spines: down only
    t3 = make("fattree3", (4, 2, 4, 2, 4))
    assert t3.processor_count == 64 + 16 + 8 + 4
    degree = np.bincount([p for lk in t3.links for p in lk.connect])
    assert list(degree[65:]) == [6] * 16 + [6] * 8 + [4] * 4


def test_the_balanced_dragonfly_joins_every_pair_of_groups_once():
    t = make("dragonfly", (9, 4, 2, 2))
    assert t.processor_count == 72 + 36 and t.network == "dragonfly 9 4 2 2"
    assert t.routing == "dragonfly-minimal"
    routers = {p for p, ty in t.types.items() if ty == 2}
    assert routers == set(range(73, 109))
    glob = [lk.connect for lk in t.links if all(p in routers for p in lk.connect)
            and (lk.connect[0] - 73) // 4 != (lk.connect[1] - 73) // 4]  # fmt: skip
    groups = sorted(tuple(sorted(((a - 73) // 4, (b - 73) // 4))) for a, b in glob)
    assert groups == sorted((i, j) for i in range(9) for j in range(i + 1, 9))
    per_router = np.bincount([p - 73 for c in glob for p in c], minlength=36)
    assert set(per_router) == {2}  # h global links each


def test_generated_networks_write_and_read_back_with_their_annotation():
    for kind, dims in (("fattree", (3, 2)), ("fattree3", (2, 2, 2, 1, 2)),
                       ("dragonfly", (5, 2, 2, 2))):  # fmt: skip
        t = make(kind, dims)
        text = "\n".join(canonical_lines(t))
        assert f"# piui: network = {kind} {' '.join(map(str, dims))}" in text
        model = loads(MODEL.replace("TOPOLOGY", text))
        hw = model.hardware()
        assert network_of(hw) == (kind, dict(zip(network_of(t)[1], dims)))
        assert [lk.connect for lk in hw.links] == [lk.connect for lk in t.links]
        assert index_of(hw).route(1, compute_count(t)).hops >= 2


MODEL = """\
begin machine
    id = 1
    name = "net"
    processors = 2
    topologies = 1
    begin processor
        id = 1
        name = "cpu"
        begin timings
            iga = 1e-09
        end timings
    end processor
    begin processor
        # piui: role = switch
        id = 2
        name = "switch"
    end processor
TOPOLOGY
end machine
"""


def test_generators_refuse_what_they_cannot_make_before_making_it():
    with pytest.raises(ValueError, match="at most A\\*H \\+ 1 = 9 groups"):
        make("dragonfly", (10, 4, 2, 2))
    with pytest.raises(ValueError, match="D1 U1 D2"):
        make("fattree2", (4, 4))
    too_big = (100, 400, 2, 4)
    assert generators.generator_size("dragonfly", list(too_big)) > budget.MAX_GENERATED
    with pytest.raises(budget.BudgetError, match="generating dragonfly 100 400 2 4"):
        make("dragonfly", too_big)
    assert generators.generator_size("fattree", [2, 3]) == 20 + 24


@PROPS
@given(st.one_of(fat_trees, dragonflies()), st.data())
def test_shortest_routes_on_fat_trees_and_dragonflies_are_bfs_distances(kd, data):
    t = make(*kd)
    check_shortest(t, all_pairs_sample(t.processor_count, data))


@PROPS
@given(fat_trees, st.data())
def test_updown_routes_are_shortest_and_within_twice_the_levels(kd, data):
    kind, dims = kd
    t = make(kind, dims)
    levels = {"fattree": dims[-1] if kind == "fattree" else 0, "fattree2": 2, "fattree3": 3}[kind]
    n = compute_count(t)
    pairs = compute_pairs(n, data)
    index = index_of(t)
    batch = index.routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), r in zip(pairs, batch):
        check_route(t, r, a, b)
        assert r.hops == bfs_distances(t, a)[b] <= 2 * levels
        assert r.hops % 2 == 0
        assert index.route(a, b) == r
        # up, then down: levels rise strictly, then fall strictly
        inner = r.processors[1:-1]
        if inner:
            top = inner.index(max(inner))
            assert list(inner[: top + 1]) == sorted(inner[: top + 1])
            assert list(inner[top:]) == sorted(inner[top:], reverse=True)


@PROPS
@given(dragonflies(), st.data())
def test_dragonfly_minimal_and_valiant_routes_are_valid_and_bounded(kd, data):
    t = make(*kd)
    g, a, p, h = kd[1]
    n = g * a * p
    pairs = compute_pairs(n, data)
    src, dst = [x for x, _ in pairs], [y for _, y in pairs]
    for routing, bound, globals_ in (("dragonfly-minimal", 5, 1), ("dragonfly-valiant", 7, 2)):
        t.routing = routing
        index = index_of(t)
        batch = index.routes(src, dst)
        for (s, d), r in zip(pairs, batch):
            check_route(t, r, s, d)
            assert r.hops <= bound
            assert len(set(r.processors)) == len(r.processors)  # no processor twice
            group = [(q - n - 1) // a for q in r.processors[1:-1]]
            changes = sum(x != y for x, y in zip(group, group[1:]))
            gs, gd = (s - 1) // p // a, (d - 1) // p // a
            if gs == gd:
                assert changes == 0 and r.hops == bfs_distances(t, s)[d]
            else:
                assert changes == (globals_ if g >= 3 and routing.endswith("valiant") else 1)
            assert index.route(s, d) == r  # one at a time, the same: fixed per pair


def test_valiant_is_fixed_per_pair_and_spreads_over_intermediate_groups():
    t = make("dragonfly", (9, 4, 2, 2))
    t.routing = "dragonfly-valiant"
    index = index_of(t)
    src = np.full(64, 1)
    dst = np.arange(9, 73)  # every terminal of the other groups
    first = index.routes(src, dst)
    again = index_of(make_valiant()).routes(src, dst)  # another topology object, same routes
    assert np.array_equal(first.processors, again.processors)
    middle = set()
    for r in first:
        groups = [(q - 73) // 4 for q in r.processors[1:-1]]
        via = next(g for g in groups if g != 0)
        assert via != (r.destination - 1) // 8  # through a third group
        middle.add(via)
    assert len(middle) >= 5  # the detours go through many groups, not one


def make_valiant():
    t = make("dragonfly", (9, 4, 2, 2))
    t.routing = "dragonfly-valiant"
    return t


def test_network_routings_refuse_switch_ends_and_topologies_that_are_not_theirs():
    t = make("fattree", (2, 2))
    with pytest.raises(RoutingError, match="processor 5 is a switch of topology 1; routes run"):
        index_of(t).route(5, 1)
    t.network = None
    with pytest.raises(RoutingError, match="updown routing needs a fat tree"):
        index_of(t).route(1, 2)
    d = make("dragonfly", (3, 2, 1, 1))
    d.routing = "updown"
    with pytest.raises(RoutingError, match="needs a fat tree"):
        index_of(d).route(1, 2)
    assert {"updown", "dragonfly-minimal", "dragonfly-valiant"} <= set(available_routings())
    for name in ("updown", "dragonfly-minimal", "dragonfly-valiant"):
        assert get_routing(name).name == name and get_routing(name).description


def test_cli_generates_a_network_with_its_switch_type_that_loads_and_routes(capsys, tmp_path):
    from parasol_core.analysis.validate import validate
    from parasol_core.cli import main

    status = main(["generate", "dragonfly", "5", "2", "2", "2", "--latency", "1e-7",
                   "--speed", "1e-10"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert out.startswith("begin processor\n    # piui: role = switch\n    id = 2\n")
    head = MODEL[: MODEL.index("    begin processor\n        # piui")]
    model = loads(head + "\n".join("    " + ln for ln in out.splitlines()) + "\nend machine\n")
    assert [d for d in validate(model) if d.is_error] == []
    assert model.processor(2).is_switch
    path = tmp_path / "fly.machine"
    path.write_text(head + out + "end machine\n")
    assert main(["route", str(path), "1", "20"]) == 0
    printed = capsys.readouterr().out.splitlines()[0].split()[1:]
    assert printed[0] == "1" and printed[-1] == "20" and len(printed) <= 6
    status = main(["generate", "fattree", "2", "2", "--latency", "1", "--speed", "1",
                   "--no-switch-section", "--switch-type", "7"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0 and out.startswith("begin topology") and "p[5] = 7" in out


def test_generating_over_a_model_without_a_switch_type_adds_one_in_the_same_undo_step():
    from parasol_core.session import Session
    from parasol_core.topology.generators import generate_over, switch_type_to_add

    text = MODEL.replace(MODEL[MODEL.index("    begin processor\n        # piui"):
                               MODEL.index("TOPOLOGY")], "")  # fmt: skip
    text = text.replace("processors = 2", "processors = 1")
    grid = "\n".join(canonical_lines(generate("grid", [2, 2], 1e-6, 1e-9)))
    session = Session.from_text(text.replace("TOPOLOGY", grid))
    machine = session.machine
    new = generate_over(machine.hardware(), "fattree", [2, 2], 1e-6, 1e-9, machine=machine)
    extra = switch_type_to_add(machine, new)
    assert (extra.id, extra.role, extra.timings) == (2, "switch", {})
    session.replace_topology(1, new, add_processors=[extra])
    assert [p.id for p in machine.processors] == [1, 2] and machine.processor_count == 2
    assert machine.hardware().network == "fattree 2 2"
    assert sum(t == 2 for t in machine.hardware().types.values()) == 4  # 2 leaves, 2 roots
    again = loads(session.text())
    assert again.processor(2).is_switch and again.hardware().network == "fattree 2 2"
    session.undo()
    assert [p.id for p in machine.processors] == [1] and machine.hardware().network is None
    # a model with a switch type: its switches take it, nothing is added
    session.redo()
    other = generate_over(machine.hardware(), "dragonfly", [3, 2, 1, 1], 1, 1, machine=machine)
    assert switch_type_to_add(machine, other) is None
    assert set(other.types.values()) == {1, 2}


def switched_machine(kind="fattree", dims=(2, 3)):
    """A machine of one compute type and one switch type on a generated network."""
    text = "\n".join(canonical_lines(make(kind, dims)))
    return loads(MODEL.replace("TOPOLOGY", text))


def test_patterns_and_phases_leave_the_switches_out():
    from parasol_core.simulate.patterns import make_pattern_arrays, pattern_cost
    from parasol_core.simulate.phases import PhaseError, simulate

    m = switched_machine()  # 8 compute processors, 12 switches
    every = make_pattern_arrays(m, "alltoall", 1e3)
    assert len(every) == 8 * 7 and pattern_cost(m, "alltoall") == 56
    assert set(every.src) == set(every.dst) == set(range(1, 9))
    shift = make_pattern_arrays(m, "shift", 1e3)
    assert list(zip(shift.src, shift.dst)) == [(p, p % 8 + 1) for p in range(1, 9)]
    halo = make_pattern_arrays(m, "halo", 1e3)
    assert sorted(zip(halo.src.tolist(), halo.dst.tolist())) == sorted(
        {(p, q) for p in range(1, 9) for q in ((p % 8) + 1, (p - 2) % 8 + 1)}
    )
    tree = make_pattern_arrays(m, "broadcast-tree", 1e3, root=3)
    assert tree.src[0] == 3 and set(tree.dst) == set(range(1, 9)) - {3}
    ring = make_pattern_arrays(m, "ring-allgather", 1e3)
    assert len(ring) == 8 * 7 and ring.src.max() == 8
    with pytest.raises(PhaseError, match="the root must be one of the 8 compute processors"):
        make_pattern_arrays(m, "broadcast", 1e3, root=9)
    result = simulate(m, pattern="alltoall", bytes=1e4)
    assert result.makespan > result.uncontended > 0
    one = simulate(m, pattern="broadcast", bytes=0.0, root=1)
    assert one.alone.max() == pytest.approx(6 * 1e-6)  # to the far half: 6 links


def test_mappings_go_onto_compute_processors_only():
    from parasol_core.model import VirtualTopology
    from parasol_core.session import Session, SessionError
    from parasol_core.topology.mapping import make_mapping, mapping_quality, parse_mapping
    from parasol_core.topology.switches import switch_mask

    m = switched_machine("dragonfly", (3, 2, 2, 1))  # 12 terminals, 6 routers
    ring = VirtualTopology(id=1, name="ring", routing="1Dtorus", processor_count=12,
                           mapping={v: v for v in range(1, 13)})  # fmt: skip
    m.virtuals.append(ring)
    m.topology_count = 2
    assert make_mapping(m, ring, "identity") == {v: v for v in range(1, 13)}
    assert set(make_mapping(m, ring, "random", seed=3).values()) == set(range(1, 13))
    with pytest.raises(RoutingError, match="the 12 compute processors of topology 1 has none"):
        make_mapping(m, ring, "snake")
    with pytest.raises(RoutingError, match="do not fit on the 12 processors"):
        ring.processor_count = 13
        make_mapping(m, ring, "identity")
    ring.processor_count = 12
    assert mapping_quality(m, ring).dilation_max == 5  # terminal to terminal over the net
    mask = switch_mask(m, m.hardware())
    with pytest.raises(ValueError, match="processor 13 is a switch"):
        parse_mapping(" ".join(["13"] + ["1"] * 11), ring, 18, mask)
    session = Session.from_text(canonical(m))
    with pytest.raises(SessionError, match="mapped onto 14, a switch"):
        session.add_virtual(VirtualTopology(id=5, name="x", routing="1Dtorus",
                                            processor_count=1, mapping={1: 14}))  # fmt: skip
    virt = session.new_virtual("1Dtorus")
    assert virt.processor_count == 12 and max(virt.mapping.values()) == 12
    session.resize_virtual(virt.id, 14)
    assert virt.mapping[13] == 1 and virt.mapping[14] == 2  # wrapping round the compute ones


def canonical(machine):
    from parasol_core.syntax.writer import dumps_canonical

    return dumps_canonical(machine)


def test_show_counts_compute_processors_and_switches(capsys, tmp_path):
    from parasol_core.cli import main

    path = tmp_path / "tree.machine"
    path.write_text(canonical(switched_machine()))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "    2: switch  (switch, 0 timings)" in out
    assert "8 compute processors + 12 switches, 24 links, shape -, network fattree 2 3" in out


def test_d_mod_k_spreads_a_leafs_traffic_evenly_over_its_up_links():
    """All-to-all on a 2:1 two-level tree: every leaf-spine link carries the same
    number of routes (the destinations of one leaf take different spines)."""
    t = make("fattree2", (24, 12, 8))
    n = 192
    src, dst = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1))
    keep = src != dst
    batch = index_of(t).routes(src[keep], dst[keep])
    load = np.bincount(batch.links, minlength=len(t.links) + 1)
    up = load[n + 1 :]  # links n+1.. join leaves and spines
    assert up.shape[0] == 8 * 12 and up.min() == up.max() == 2 * 24 * 168 // 12


def test_the_network_samples_load_route_and_simulate():
    from pathlib import Path

    from parasol_core import load
    from parasol_core.analysis.validate import validate
    from parasol_core.simulate.phases import simulate

    samples = Path(__file__).resolve().parents[2] / "sample_models"
    for name, network, compute in (("hdr-fat-tree.machine", "fattree2 24 12 8", 192),
                                   ("slingshot-dragonfly.machine", "dragonfly 9 4 2 2", 72)):  # fmt: skip
        m = load(samples / name)
        assert validate(m) == []
        hw = m.hardware()
        assert hw.network == network and m.processor(2).is_switch
        assert not m.processor(1).is_switch and len(m.processor(1).timings) > 100
        result = simulate(m, pattern="alltoall", bytes=65536.0)
        assert len(result.src) == compute * (compute - 1) and result.src.max() == compute
        assert result.makespan > result.uncontended > 0


def test_a_mapping_edit_onto_a_switch_is_refused():
    from parasol_core.model import VirtualTopology
    from parasol_core.session import Session, SessionError

    session = Session.from_text(canonical(switched_machine()))
    virt = session.add_virtual(VirtualTopology(id=3, name="ring", routing="1Dtorus",
                                               processor_count=2, mapping={1: 1, 2: 2}))  # fmt: skip
    with pytest.raises(SessionError, match="processor 9: it is a switch"):
        session.set_mapping(virt.id, {2: 9})
    session.set_mapping(virt.id, {2: 8})
    assert virt.mapping == {1: 1, 2: 8}
