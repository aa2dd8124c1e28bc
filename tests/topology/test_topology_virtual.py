"""Virtual topologies: their links, routes through the mapping, mapping quality and
mapping schemes."""

from pathlib import Path

import pytest

from parasol_core import load
from parasol_core.model import Machine, Processor, VirtualTopology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import grid, hypercube, torus
from parasol_core.topology.mapping import (
    gray_code,
    make_mapping,
    mapping_quality,
    mapping_schemes,
)
from parasol_core.topology.shape import Shape
from parasol_core.topology.virtual import (
    added_links,
    virtual_links,
    virtual_route,
    virtual_routes,
    virtual_shape,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
RING, TORUS = 2, 3  # the virtual topologies of grid4x4.machine


@pytest.fixture
def grid4():
    return load(SAMPLES / "grid4x4.machine")


def machine_with(hardware, *virtuals):
    return Machine(
        id=1,
        name="m",
        processor_count=1,
        topology_count=1 + len(virtuals),
        processors=[Processor(id=1, name="p")],
        topologies=[hardware],
        virtuals=list(virtuals),
    )


def virtual(vid, routing, count, mapping=None, shape=None):
    mapping = mapping if mapping is not None else {v: v for v in range(1, count + 1)}
    return VirtualTopology(
        id=vid, routing=routing, processor_count=count, mapping=mapping, shape=shape
    )


# --------------------------------------------------------------------------- figure 2.1


def test_2d_torus_on_the_4x4_grid_has_64_directed_virtual_links(grid4):
    directed = virtual_links(grid4, TORUS)
    assert len(directed) == 64 == len(set(directed))
    assert all((b, a) in directed for a, b in directed)
    assert len(virtual_links(grid4, TORUS, directed=False)) == 32


def test_eight_of_them_need_wrap_around_links_the_dotted_lines(grid4):
    dotted = added_links(grid4, TORUS)
    assert sorted(dotted) == [
        (1, 4), (1, 13), (2, 14), (3, 15), (4, 16), (5, 8), (9, 12), (13, 16),
    ]  # fmt: skip
    a, b, d = 1, 4, 13  # node A becomes virtually connected with nodes B and D
    assert (a, b) in dotted and (a, d) in dotted


def test_virtual_shapes(grid4):
    assert virtual_shape(grid4, TORUS) == Shape((4, 4))  # its own comment
    assert virtual_shape(grid4, RING) == Shape((4, 4))  # the hardware's: counts agree
    small = virtual(5, "2Dtorus", 8)
    grid4.virtuals.append(small)
    assert virtual_shape(grid4, small) is None
    with pytest.raises(RoutingError, match="2Dtorus routing needs a grid shape"):
        virtual_links(grid4, small)
    small.shape = (4, 2)
    assert len(virtual_links(grid4, small)) == 8 * 3  # X: 4-rings, Y: size 2, one neighbour


def test_ring_virtual_links_follow_the_numbers(grid4):
    links = virtual_links(grid4, RING, directed=False)
    assert sorted(links) == sorted([(v, v + 1) for v in range(1, 16)] + [(1, 16)])


def test_a_virtual_message_takes_the_hardware_route_between_the_mapped_processors(grid4):
    # ring: virtual 4 -> 5 is hardware 4 -> 8, one link
    r = virtual_route(grid4, RING, 4, 5)
    assert r.processors == (4, 8) and r.links == (16,)
    # and across the ring: virtual 1 -> 11 is hardware 1 -> 16, by XY
    assert virtual_route(grid4, RING, 1, 11).processors == (1, 2, 3, 4, 8, 12, 16)
    batch = virtual_routes(grid4, RING, [4, 1], [5, 11])
    assert list(batch) == [virtual_route(grid4, RING, 4, 5), virtual_route(grid4, RING, 1, 11)]


def test_virtual_route_errors_name_the_virtual_processors(grid4):
    ring = grid4.virtual(RING)
    del ring.mapping[7]
    with pytest.raises(
        RoutingError, match="virtual processor 7 of virtual topology 2 is not mapped"
    ):
        virtual_route(grid4, RING, 7, 1)
    with pytest.raises(RoutingError, match="virtual processor 7"):
        virtual_routes(grid4, RING, [1, 7], [2, 1])
    grid4.hardware().links.pop(0)  # 1-2
    with pytest.raises(RoutingError, match="processor 1 and processor 2 in topology 1.*virtual"):
        virtual_route(grid4, RING, 1, 2)
    with pytest.raises(RoutingError, match="no virtual topology with id 9"):
        virtual_route(grid4, 9, 1, 2)


# --------------------------------------------------------------------------- quality


def test_the_optimal_ring_mapping_of_figure_2_2_has_dilation_1(grid4):
    q = mapping_quality(grid4, RING)
    assert q.virtual_links == 16
    assert q.dilation_max == 1 and q.dilation_mean == 1.0
    assert q.congestion == 1
    assert q.long_links == ()


def test_the_one_to_one_torus_mapping_on_the_mesh_has_dilation_3(grid4):
    q = mapping_quality(grid4, TORUS)
    assert q.dilation_max == 3
    assert q.dilation_mean == pytest.approx((24 * 1 + 8 * 3) / 32)
    # each row link carries its own virtual link and the row's wrap-around one
    assert q.congestion == 2
    assert set(q.congested_links) == {link.id for link in grid4.hardware().links}
    assert sorted(q.long_links) == sorted(added_links(grid4, TORUS))


def test_quality_of_a_proposed_mapping_leaves_the_model_alone(grid4):
    identity = {v: v for v in range(1, 17)}
    q = mapping_quality(grid4, RING, identity)  # rows end-to-end: 4 -> 5 is 4 hops
    assert q.dilation_max == 6  # 16 -> 1 closes the ring corner to corner
    assert grid4.virtual(RING).mapping[5] == 8


def test_congestion_counts_virtual_links_sharing_a_hardware_link():
    hw = grid([4], 1e-5, 1e-6)  # a line 1-2-3-4
    m = machine_with(hw, virtual(2, "broadcast", 4))  # a clique of 4 on it
    q = mapping_quality(m, 2)
    # the middle link 2-3 carries 1-3, 1-4, 2-3, 2-4
    assert q.congestion == 4 and q.congested_links == (2,)
    assert q.dilation_max == 3 and q.virtual_links == 6


# --------------------------------------------------------------------------- schemes


def test_scheme_names():
    assert mapping_schemes() == ["identity", "row-major", "snake", "ring", "random", "gray"]
    with pytest.raises(RoutingError, match="unknown mapping scheme"):
        make_mapping(load(SAMPLES / "grid4x4.machine"), RING, "spiral")


@pytest.mark.parametrize(
    "dims, worst",
    [((4, 4), 1), ((3, 4), 1), ((4, 3), 1), ((16, 32), 1), ((2, 3, 4), 1), ((3, 5, 2), 1),
     ((3, 3), 2), ((5, 7), 2), ((3, 3, 3), 2), ((8,), 2), ((2,), 1)],
)  # fmt: skip
def test_ring_scheme_is_one_hop_wherever_the_grid_allows_it(dims, worst):
    hw = grid(list(dims), 1e-5, 1e-6)
    n = hw.processor_count
    m = machine_with(hw, virtual(2, "1Dtorus", n))
    mapping = make_mapping(m, 2, "ring")
    assert sorted(mapping.values()) == list(range(1, n + 1))
    q = mapping_quality(m, 2, mapping)
    assert q.dilation_max == worst
    if worst == 2 and len([d for d in dims if d > 1]) > 1:  # odd x odd: one long link only
        assert len(q.long_links) == 1


def test_ring_scheme_on_part_of_a_grid():
    hw = grid([4, 4], 1e-5, 1e-6)
    m = machine_with(hw, virtual(2, "1Dtorus", 6), virtual(3, "1Dtorus", 7))
    assert mapping_quality(m, 2, make_mapping(m, 2, "ring")).dilation_max == 1  # a 2 x 3 block
    seven = make_mapping(m, 3, "ring")  # 7 fits no block: a snake, one long link
    assert len(set(seven.values())) == 7
    assert len(mapping_quality(m, 3, seven).long_links) == 1


def test_identity_snake_and_row_major():
    hw = grid([4, 4], 1e-5, 1e-6)
    m = machine_with(hw, virtual(2, "1Dtorus", 16), virtual(3, "XY", 8, shape=(2, 4)))
    assert make_mapping(m, 2, "identity") == {v: v for v in range(1, 17)}
    assert list(make_mapping(m, 2, "snake").values()) == [
        1, 2, 3, 4, 8, 7, 6, 5, 9, 10, 11, 12, 16, 15, 14, 13,
    ]  # fmt: skip
    snake_q = mapping_quality(m, 2, make_mapping(m, 2, "snake"))
    assert snake_q.dilation_max == 3 and len(snake_q.long_links) == 1  # only 13 -> 1 is long
    # a 2 x 4 virtual grid keeps its coordinates: (x, y) -> hardware (x, y)
    assert list(make_mapping(m, 3, "row-major").values()) == [1, 2, 5, 6, 9, 10, 13, 14]
    assert mapping_quality(m, 3, make_mapping(m, 3, "row-major")).dilation_max == 1
    assert make_mapping(m, 2, "row-major") == make_mapping(m, 2, "identity")


def test_random_scheme_is_a_seeded_placement():
    hw = grid([4, 4], 1e-5, 1e-6)
    m = machine_with(hw, virtual(2, "1Dtorus", 10))
    a = make_mapping(m, 2, "random", seed=1)
    assert a == make_mapping(m, 2, "random", seed=1)
    assert a != make_mapping(m, 2, "random", seed=2)
    assert len(set(a.values())) == 10 and set(a.values()) <= set(range(1, 17))


def test_gray_code_embeds_rings_and_tori_in_a_hypercube():
    assert [gray_code(i) for i in range(8)] == [0, 1, 3, 2, 6, 7, 5, 4]
    hw = hypercube(4, 1e-5, 1e-6)
    m = machine_with(
        hw,
        virtual(2, "1Dtorus", 16),
        virtual(3, "2Dtorus", 16, shape=(4, 4)),
        virtual(4, "1Dtorus", 8),
    )
    for vid in (2, 3, 4):
        mapping = make_mapping(m, vid, "gray")
        assert len(set(mapping.values())) == len(mapping)
        assert mapping_quality(m, vid, mapping).dilation_max == 1
    assert mapping_quality(m, 2, make_mapping(m, 2, "identity")).dilation_max == 4


def test_schemes_refuse_what_does_not_fit():
    hw = grid([3, 3], 1e-5, 1e-6)
    m = machine_with(hw, virtual(2, "1Dtorus", 10), virtual(3, "1Dtorus", 4))
    with pytest.raises(RoutingError, match="10 virtual processors do not fit"):
        make_mapping(m, 2, "identity")
    with pytest.raises(RoutingError, match="gray mapping needs a hypercube"):
        make_mapping(m, 3, "gray")
    t = torus([3, 3], 1, 1)
    t.shape = None
    t.links.append(t.links[0].__class__(id=19, connect=list(range(1, 10))))
    m2 = machine_with(t, virtual(2, "1Dtorus", 4))
    with pytest.raises(RoutingError, match="snake mapping needs a grid shape"):
        make_mapping(m2, 2, "snake")
