"""N-D meshes and tori, and shortest-path routing (issue 21): property tests.

On every generated kind and on random connected link lists, the ``shortest`` route's hop
count is the breadth-first distance; dimension-order routes on N-D meshes and tori are
minimal in every dimension; every route starts and ends where asked and each hop
crosses a link holding both processors.
"""

from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core.base import budget
from parasol_core.model import Link, Timing, Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import generate, grid, torus
from parasol_core.topology.index import index_of
from parasol_core.topology.routing import available_routings, get_routing
from parasol_core.topology.shape import Shape
from parasol_core.topology.virtual import virtual_layout  # noqa: F401  (import check)

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def bfs_distances(topology, src):
    """Plain breadth-first distances over the connect lists (the reference)."""
    near = {}
    for link in topology.links:
        for p in link.connect:
            near.setdefault(p, set()).update(q for q in link.connect if q != p)
    dist = {src: 0}
    todo = deque([src])
    while todo:
        p = todo.popleft()
        for q in near.get(p, ()):
            if q not in dist:
                dist[q] = dist[p] + 1
                todo.append(q)
    return dist


def check_route(topology, r, src, dst):
    assert r.processors[0] == src and r.processors[-1] == dst
    assert len(r.links) == len(r.processors) - 1
    members = {link.id: set(link.connect) for link in topology.links}
    for a, b, lid in zip(r.processors, r.processors[1:], r.links):
        assert {a, b} <= members[lid]
        assert lid == min(i for i, m in members.items() if {a, b} <= m)  # lowest id


def with_routing(topology, routing):
    topology.routing = routing
    return topology


dims_st = st.lists(st.integers(1, 4), min_size=1, max_size=6).filter(
    lambda d: 2 <= int(np.prod(d)) <= 300
)


@st.composite
def generated(draw):
    kind = draw(st.sampled_from(["grid", "torus", "ring", "hypercube", "clique", "bus"]))
    if kind in ("grid", "torus"):
        dims = draw(dims_st)
    elif kind == "hypercube":
        dims = [draw(st.integers(1, 6))]
    else:
        dims = [draw(st.integers(2, 12))]
    return generate(kind, dims, 1e-6, 1e-9)


@st.composite
def connected_links(draw):
    """A random connected link list: a random spanning tree plus extra links, some of
    them buses, shuffled ids."""
    n = draw(st.integers(2, 40))
    order = draw(st.permutations(range(1, n + 1)))
    links = [[order[i], order[draw(st.integers(0, i - 1))]] for i in range(1, n)]  # a spanning tree
    for _ in range(draw(st.integers(0, 2 * n))):
        size = draw(st.sampled_from([2, 2, 2, 3, 34]))
        members = draw(st.lists(st.integers(1, n), min_size=2, max_size=size, unique=True))
        links.append(members)
    ids = draw(st.permutations(range(1, len(links) + 1)))
    t = Timing(1e-6)
    return Topology(
        id=1, routing="shortest", processor_count=n, link_count=len(links),
        types=dict.fromkeys(range(1, n + 1), 1),
        links=[Link(id=i, latency=t, speed=t, connect=c) for i, c in zip(ids, links)],
    )  # fmt: skip


def check_shortest(topology, pairs):
    with_routing(topology, "shortest")
    index = index_of(topology)
    src = np.asarray([a for a, _ in pairs])
    dst = np.asarray([b for _, b in pairs])
    batch = index.routes(src, dst)
    for (a, b), r in zip(pairs, batch):
        dist = bfs_distances(topology, a)
        assert r.hops == dist[b]
        check_route(topology, r, a, b)
        assert index.route(a, b) == r  # one route and the batch agree


def all_pairs_sample(n, data):
    k = data.draw(st.integers(1, 30))
    return [(data.draw(st.integers(1, n)), data.draw(st.integers(1, n))) for _ in range(k)]


@PROPS
@given(generated(), st.data())
def test_shortest_routes_on_every_generated_kind_are_bfs_distances(topology, data):
    check_shortest(topology, all_pairs_sample(topology.processor_count, data))


@PROPS
@given(connected_links(), st.data())
def test_shortest_routes_on_random_connected_links_are_bfs_distances(topology, data):
    check_shortest(topology, all_pairs_sample(topology.processor_count, data))


def test_shortest_tie_break_is_the_lowest_numbered_predecessor():
    ring = with_routing(generate("ring", [6], 1, 1), "shortest")
    assert index_of(ring).route(1, 4).processors == (1, 2, 3, 4)  # 3 < 5
    assert index_of(ring).route(4, 1).processors == (4, 3, 2, 1)  # 2 < 6
    t = with_routing(torus([4, 4], 1, 1), "shortest")
    # 11 = (2, 2): of 7 = (2, 1) and 10 = (1, 2), both 3 hops from 1, 7 is lower
    assert index_of(t).route(1, 11).processors == (1, 2, 3, 7, 11)


def test_shortest_refuses_unreachable_and_virtual_and_too_many_sources(monkeypatch):
    t = Timing(1e-6)
    split = Topology(id=3, routing="shortest", processor_count=4, link_count=2,
                     types=dict.fromkeys(range(1, 5), 1),
                     links=[Link(id=1, latency=t, speed=t, connect=[1, 2]),
                            Link(id=2, latency=t, speed=t, connect=[3, 4])])  # fmt: skip
    with pytest.raises(RoutingError, match="no route from processor 1 to processor 3"):
        index_of(split).route(1, 3)
    with pytest.raises(RoutingError, match="no route from processor 2 to processor 4"):
        index_of(split).routes([1, 2], [2, 4])
    from parasol_core.topology.shape import Layout

    with pytest.raises(RoutingError, match="needs the links of a hardware topology"):
        get_routing("shortest").path(Layout(4, None, "virtual topology 2"), 1, 2)
    monkeypatch.setattr(budget, "MAX_SHORTEST_TABLE", 150)
    big = with_routing(grid([10, 10], 1, 1), "shortest")
    with pytest.raises(budget.BudgetError) as e:
        index_of(big).routes([1, 2], [100, 100])
    assert "202 table entries" in str(e.value) and "limit of 150" in str(e.value)
    assert "2 sources on 100 processors" in str(e.value)
    assert index_of(big).routes([1, 1], [100, 50]).hops.tolist() == [18, 13]


def test_shortest_keeps_its_tables_within_the_budget(monkeypatch):
    monkeypatch.setattr(budget, "MAX_SHORTEST_TABLE", 505)  # 5 sources of 101 entries
    g = with_routing(grid([10, 10], 1, 1), "shortest")
    index = index_of(g)
    for s in range(1, 30):
        index.route(s, 100)
    assert len(index.layout.graph._trees) == 5


# --------------------------------------------------------------------------- N-D routing


@PROPS
@given(dims_st, st.booleans(), st.data())
def test_dimension_order_routes_on_nd_grids_are_minimal_per_dimension(dims, wrap, data):
    topology = (torus if wrap else grid)(dims, 1e-6, 1e-9)
    topology.routing = "NDtorus" if wrap else "NDmesh"
    shape = Shape(tuple(dims))
    index = index_of(topology)
    pairs = all_pairs_sample(shape.size, data)
    batch = index.routes([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), r in zip(pairs, batch):
        check_route(topology, r, a, b)
        assert index.route(a, b) == r
        ca, cb = shape.coordinates(a), shape.coordinates(b)
        expect = 0
        for x, y, n in zip(ca, cb, dims):
            d = abs(x - y)
            expect += min(d, n - d) if wrap else d
        assert r.hops == expect
        # dimension order: the dimension that moves never goes back to a lower one
        moved = [
            next(i for i, (x, y) in enumerate(zip(shape.coordinates(p), shape.coordinates(q)))
                 if x != y)
            for p, q in zip(r.processors, r.processors[1:])
        ]  # fmt: skip
        assert moved == sorted(moved)


@pytest.mark.parametrize(
    "dims, old",
    [([7], "1Dtorus"), ([5, 4], "2Dtorus"), ([4, 3, 5], "3Dtorus"), ([2, 3], "2Dtorus"),
     ([5, 4], "XY"), ([4, 1], "XY"), ([4, 3, 5], "XYZ"), ([3, 2, 2], "XYZ")],
)  # fmt: skip
def test_nd_techniques_give_the_1_to_3_d_routes_unchanged(dims, old):
    wrap = old.endswith("torus")
    topology = (torus if wrap else grid)(dims, 1e-6, 1e-9)
    n = topology.processor_count
    src, dst = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1))
    src, dst = src.ravel(), dst.ravel()
    topology.routing = old
    before = index_of(topology).routes(src, dst)
    topology.routing = "NDtorus" if wrap else "NDmesh"
    after = index_of(topology).routes(src, dst)
    assert np.array_equal(before.offsets, after.offsets)
    assert np.array_equal(before.processors, after.processors)
    assert np.array_equal(before.links, after.links)


def test_nd_torus_ties_go_the_positive_way_and_size_two_uses_its_one_link():
    t = torus([4, 2, 3, 2], 1e-6, 1e-9)
    assert t.routing == "NDtorus"
    index = index_of(t)
    # x: 0 -> 2 is a tie on 4: the positive way (1, 2, 3); then y 0 -> 1 on size 2
    assert index.route(1, 7).processors == (1, 2, 3, 7)
    # z: 0 -> 2 on 3 is one hop back round (wrap-around link)
    assert index.route(1, 17).processors == (1, 17)


def test_new_routing_names_are_described_and_resolve():
    names = set(available_routings())
    assert {"NDmesh", "NDtorus", "shortest", "XY", "3Dtorus"} <= names
    for name in ("NDmesh", "NDtorus", "shortest"):
        assert get_routing(name).name == name and get_routing(name).description


def test_nd_virtual_topology_neighbours():
    from parasol_core.topology.shape import Layout

    layout = Layout(24, Shape((2, 3, 2, 2)), "virtual topology 1")
    assert get_routing("NDtorus").neighbours(layout, 1) == [2, 3, 5, 7, 13]
    assert get_routing("NDmesh").neighbours(layout, 1) == [2, 3, 7, 13]


def test_shortest_in_phases_mapping_metrics_and_the_estimator_paths():
    """On the 4 x 4 mesh sample, shortest routes are as short as XY's: a phase's
    uncontended time and the mappings' dilations agree; it runs through the phase
    trace, the mapping metrics and the batch route path the estimator uses."""
    from pathlib import Path

    from parasol_core import load
    from parasol_core.simulate.phases import simulate
    from parasol_core.topology.mapping import mapping_quality

    sample = Path(__file__).resolve().parents[2] / "sample_models" / "grid4x4.machine"
    xy, short = load(sample), load(sample)
    short.hardware().routing = "shortest"
    for pattern, dim in (("alltoall", None), ("shift", 0)):
        a = simulate(xy, pattern=pattern, bytes=1e4, dim=dim)
        b = simulate(short, pattern=pattern, bytes=1e4, dim=dim)
        assert np.allclose(a.alone, b.alone)
        assert b.makespan > 0
    for virtual in xy.virtuals:
        qa = mapping_quality(xy, virtual)
        qb = mapping_quality(short, short.virtual(virtual.id))
        assert (qa.dilation_max, qa.dilation_mean) == (qb.dilation_max, qb.dilation_mean)
    n = 16
    src, dst = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1))
    src, dst = np.repeat(src.ravel(), 5), np.repeat(dst.ravel(), 5)  # over 1,000 pairs
    hops = index_of(short.hardware()).routes(src, dst).hops
    assert np.array_equal(hops, index_of(xy.hardware()).routes(src, dst).hops)


def test_route_steps_of_shortest_are_exact():
    from parasol_core.topology.steps import route_steps

    t = with_routing(torus([5, 4, 3], 1, 1), "shortest")
    index = index_of(t)
    src, dst = np.arange(1, 61), np.arange(60, 0, -1)
    batch = index.routes(src, dst)
    assert route_steps(index.layout, index.technique, src, dst) == batch.processors.shape[0]


def test_mapping_schemes_on_a_4d_torus_answer_or_refuse_cleanly():
    """snake goes through every cell of an N-D grid, one hop each; ring (a 1-3-D
    construction) refuses a 4-D grid rather than return a partial mapping."""
    from parasol_core.model import Machine, Processor, VirtualTopology
    from parasol_core.topology.mapping import make_mapping, mapping_quality, snake_order

    for dims in [(3, 4, 2), (3, 2, 2, 3), (2, 3, 2, 2, 3, 2)]:
        order = snake_order(dims)
        assert sorted(order) == sorted(set(order)) and len(order) == int(np.prod(dims))
        assert all(sum(abs(a - b) for a, b in zip(p, q)) == 1 for p, q in zip(order, order[1:]))
    hw = torus([3, 2, 2, 3], 1e-6, 1e-9)
    ring = VirtualTopology(id=1, name="ring", routing="1Dtorus", processor_count=36,
                           mapping={v: v for v in range(1, 37)})  # fmt: skip
    machine = Machine(id=1, name="4-D", processor_count=1, topology_count=2,
                      processors=[Processor(id=1, name="p")], topologies=[hw],
                      virtuals=[ring])  # fmt: skip
    mapping = make_mapping(machine, ring, "snake")
    assert sorted(mapping.values()) == list(range(1, 37))
    quality = mapping_quality(machine, ring, mapping)
    assert quality.dilation_mean == (35 * 1 + quality.dilation_max) / 36
    with pytest.raises(RoutingError, match="up to 3 dimensions; topology 1 is 3 x 2 x 2 x 3"):
        make_mapping(machine, ring, "ring")
