"""Generated topologies: link lists, routing names, shape comments, replacement reports."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parasol_core import load, loads
from parasol_core.analysis.validate import validate
from parasol_core.model import Machine, Processor, Timing
from parasol_core.syntax.writer import canonical_lines, dumps
from parasol_core.topology import generators
from parasol_core.topology.compare import compare_topologies
from parasol_core.topology.generators import (
    bus,
    clique,
    generate,
    grid,
    grid_pairs,
    hypercube,
    ring,
    torus,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def connects(topology):
    return [link.connect for link in topology.links]


@pytest.mark.parametrize("sample, dims", [("parsytec-gcel", [16, 32]), ("grid4x4", [4, 4])])
def test_grid_generator_reproduces_the_sample_link_lists(sample, dims):
    hw = load(SAMPLES / f"{sample}.machine").hardware()
    made = grid(dims, 2.85e-05, 9.1e-07)
    assert connects(made) == connects(hw)
    assert [link.id for link in made.links] == [link.id for link in hw.links]
    assert made.shape == hw.shape
    assert made.routing == hw.routing == "XY"
    assert made.processor_count == hw.processor_count
    assert made.link_count == len(made.links) == hw.link_count
    assert made.links[0].latency == Timing(2.85e-05)
    assert made.links[0].speed == Timing(9.1e-07)


def test_3d_grid_lists_x_then_y_then_z():
    made = grid([2, 2, 2], 1e-5, 1e-6)
    assert made.routing == "XYZ"
    assert made.shape == (2, 2, 2)
    assert connects(made) == [
        [1, 2], [3, 4], [5, 6], [7, 8],  # X
        [1, 3], [2, 4], [5, 7], [6, 8],  # Y
        [1, 5], [2, 6], [3, 7], [4, 8],  # Z
    ]  # fmt: skip


def test_torus_lists_each_dimension_wrap_around_after_its_plain_links():
    made = torus([4, 3], 1e-5, 1e-6)
    assert made.routing == "2Dtorus"
    assert made.shape == (4, 3)
    assert connects(made) == [
        [1, 2], [2, 3], [3, 4], [5, 6], [6, 7], [7, 8], [9, 10], [10, 11], [11, 12],
        [1, 4], [5, 8], [9, 12],  # X wrap-around
        [1, 5], [2, 6], [3, 7], [4, 8], [5, 9], [6, 10], [7, 11], [8, 12],
        [1, 9], [2, 10], [3, 11], [4, 12],  # Y wrap-around
    ]  # fmt: skip


def test_torus_of_size_two_has_no_duplicate_wrap_link():
    made = torus([2, 3], 1e-5, 1e-6)
    pairs = [tuple(c) for c in connects(made)]
    assert len(pairs) == len(set(pairs)) == 3 + 4 + 2  # X: 3 rows; Y: 2 plain + 1 wrap, x2
    assert torus([3, 3, 3], 1, 1).link_count == 3 * 27


def test_ring():
    made = ring(5, 1e-5, 1e-6)
    assert made.routing == "1Dtorus"
    assert made.shape == (5,)
    assert connects(made) == [[1, 2], [2, 3], [3, 4], [4, 5], [1, 5]]


def test_hypercube_links_join_numbers_one_bit_apart():
    made = hypercube(4, 1e-5, 1e-6)
    assert made.processor_count == 16
    assert made.link_count == 32
    assert made.routing == "hypercube"
    assert made.shape is None  # four dimensions do not fit a shape comment
    for a, b in connects(made):
        diff = (a - 1) ^ (b - 1)
        assert diff and diff & (diff - 1) == 0
    assert len({tuple(c) for c in connects(made)}) == 32
    assert hypercube(3, 1, 1).shape == (2, 2, 2)


def test_bus_and_clique():
    b = bus(42, 0.03, 8.6e-07)
    assert b.routing == "broadcast"
    assert connects(b) == [list(range(1, 43))]
    assert b.shape is None
    c = clique(4, 1e-5, 1e-6)
    assert c.routing == "broadcast"
    assert connects(c) == [[1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4]]


def test_every_processor_gets_the_processor_type():
    made = grid([3, 3], 1, 1, processor_type=7, id=4, name="small", setup=0.5)
    assert made.types == dict.fromkeys(range(1, 10), 7)
    assert (made.id, made.name, made.setup) == (4, "small", Timing(0.5))


@pytest.mark.parametrize(
    "kind, dims",
    [("grid", [3, 4]), ("grid", [2, 3, 2]), ("ring", [6]), ("torus", [4, 4]), ("torus", [3, 3, 3]),
     ("hypercube", [3]), ("bus", [5]), ("clique", [5]), ("torus", [5]), ("grid", [2, 3, 2, 2]),
     ("torus", [3, 2, 4, 3, 2]), ("torus", [2, 3, 2, 3, 2, 3]), ("grid", [1, 2, 1, 3, 1, 2])],
)  # fmt: skip
def test_generated_topologies_write_and_read_back_as_valid_models(kind, dims):
    topology = generate(kind, dims, 2.85e-05, 9.1e-07)
    machine = Machine(
        id=1,
        name="generated",
        processor_count=1,
        topology_count=1,
        processors=[Processor(id=1, name="T805")],
        topologies=[topology],
    )
    text = dumps(machine)
    again = loads(text)
    assert [d for d in validate(again) if d.is_error] == []
    assert again.topologies[0] == topology
    section = "\n".join(canonical_lines(topology))
    if topology.shape:
        assert f"# piui: shape = {' '.join(map(str, topology.shape))}" in section
    assert f'routing = "{topology.routing}"' in section


@pytest.mark.parametrize(
    "kind, dims, message",
    [("grid", [2, 2, 2, 2, 2, 2, 2], "1 to 6 sizes"), ("torus", [], "1 to 6 sizes"), ("grid", [0, 3], "positive"),
     ("ring", [3, 3], "one size"), ("bus", [1], "at least 2"), ("nonsense", [3], "unknown")],
)  # fmt: skip
def test_bad_requests_are_value_errors(kind, dims, message):
    with pytest.raises(ValueError, match=message):
        generate(kind, dims, 1e-5, 1e-6)
    with pytest.raises(ValueError, match="zero or positive"):
        grid([2, 2], -1.0, 1e-6)


def test_grid_pairs_counts():
    assert len(grid_pairs((16, 32))) == 976
    assert len(grid_pairs((16, 32), wrap=True)) == 2 * 512


def test_replacing_a_grid_by_a_torus_adds_the_wrap_around_links():
    old = load(SAMPLES / "grid4x4.machine").hardware()
    new = torus([4, 4], 2.85e-05, 9.1e-07)
    change = compare_topologies(old, new)
    assert sorted(sorted(link.connect) for link in change.added) == [
        [1, 4], [1, 13], [2, 14], [3, 15], [4, 16], [5, 8], [9, 12], [13, 16],
    ]  # fmt: skip
    assert change.removed == [] and change.changed == []
    assert change.unchanged == 24
    assert change.routing == ("XY", "2Dtorus")
    lines = change.summary()
    assert lines[0] == "routing: XY -> 2Dtorus"
    assert lines[1].startswith("adds 8 links: 1-4, 5-8, 9-12, 13-16, 1-13")
    assert not change.is_empty


def test_replacing_reports_removed_and_changed_links():
    old = torus([4, 4], 1e-5, 1e-6)
    new = grid([4, 4], 1e-5, 2e-6)
    change = compare_topologies(old, new)
    assert len(change.removed) == 8 and change.added == []
    assert len(change.changed) == 24 and change.unchanged == 0
    before, after = change.changed[0]
    assert before.connect == after.connect == [1, 2]
    assert (before.speed, after.speed) == (Timing(1e-6), Timing(2e-6))
    assert compare_topologies(old, torus([4, 4], 1e-5, 1e-6)).is_empty
    bigger = compare_topologies(grid([4, 4], 1, 1), grid([4, 5], 1, 1))
    assert bigger.processors == (16, 20) and len(bigger.added) == 3 + 4 and not bigger.removed
    assert "processors: 16 -> 20" in bigger.summary()


def _reference_pairs(dims, wrap):
    """The link order spelled out with loops: per dimension, plain links by ascending
    processor, then wrap-arounds (size 3 or more) by ascending first processor."""
    from itertools import product
    from math import prod

    strides = [prod(dims[:i]) for i in range(len(dims))]
    out = []
    for axis, n in enumerate(dims):
        procs = [
            1 + sum(c * s for c, s in zip(coords, strides))
            for coords in (tuple(reversed(r)) for r in product(*(range(d) for d in reversed(dims))))
        ]
        assert procs == sorted(procs)
        coord = [(p - 1) // strides[axis] % n for p in procs]
        out += [(p, p + strides[axis]) for p, c in zip(procs, coord) if c < n - 1]
        if wrap and n >= 3:
            out += [(p, p + (n - 1) * strides[axis]) for p, c in zip(procs, coord) if c == 0]
    return out


@pytest.mark.parametrize(
    "dims", [[5], [4, 3], [3, 4, 2], [2, 3, 4], [3, 3, 3], [2, 2], [3, 2, 3, 2], [2, 3, 1, 4, 2],
             [3, 2, 2, 3, 2, 3], [1, 1, 1, 1, 1, 1]],
)  # fmt: skip
def test_nd_link_order_extends_the_3d_one(dims):
    for wrap in (False, True):
        assert grid_pairs(dims, wrap) == _reference_pairs(dims, wrap)


def test_nd_generators_name_their_routing_and_shape():
    g4 = grid([2, 3, 2, 2], 1e-5, 1e-6)
    assert (g4.routing, g4.shape, g4.processor_count) == ("NDmesh", (2, 3, 2, 2), 24)
    t6 = generate("torus", [3, 2, 4, 3, 2, 3], 1e-5, 1e-6)
    assert (t6.routing, t6.shape, t6.processor_count) == ("NDtorus", (3, 2, 4, 3, 2, 3), 432)
    # size 3 and 4 dimensions: one link a processor; size 2: half a link
    assert t6.link_count == 432 * 4 + 432 // 2 * 2
    # 1 to 3 dimensions keep their names
    assert [torus(d, 1, 1).routing for d in ([5], [4, 3], [3, 3, 3])] == [
        "1Dtorus", "2Dtorus", "3Dtorus"]  # fmt: skip
    assert [grid(d, 1, 1).routing for d in ([5], [4, 3], [3, 3, 3])] == ["XY", "XY", "XYZ"]


def test_fugaku_torus_is_within_the_generator_budget():
    from parasol_core.base import budget

    size = generators.generator_size("torus", [24, 23, 24, 2, 3, 2])
    assert size == 158_976 + 5 * 158_976 == 953_856  # processors + links
    assert size <= budget.MAX_GENERATED


def test_nd_numbering_is_row_major():
    from parasol_core.topology.shape import Shape

    shape = Shape((3, 2, 4, 3, 2, 3))
    assert shape.processor((1, 1, 2, 1, 1, 2)) == 1 + 1 + 3 + 6 * 2 + 24 + 72 + 144 * 2
    assert shape.coordinates(432) == (2, 1, 3, 2, 1, 2)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_comparing_in_bulk_is_comparing_link_by_link(data):
    """The columns' comparison (two-processor links) gives what the matching by
    processor sets gives, duplicates of a pair and missing timings included."""
    import pytest as _pytest

    from parasol_core.model import Link, Timing, Topology
    from parasol_core.topology import compare

    def links(draw_pairs):
        out = []
        for i, (a, b, lat, spd) in enumerate(draw_pairs, start=1):
            out.append(Link(id=i, latency=None if lat is None else Timing(lat),
                            speed=Timing(spd), connect=[a, b]))  # fmt: skip
        return out

    pair = st.tuples(st.integers(1, 5), st.integers(1, 5), st.sampled_from([None, 1.0, 2.0]),
                     st.sampled_from([1.0, 3.0]))  # fmt: skip
    old = Topology(processor_count=5, routing="shortest",
                   links=links(data.draw(st.lists(pair, max_size=12))))  # fmt: skip
    new = Topology(processor_count=5, routing="shortest",
                   links=links(data.draw(st.lists(pair, max_size=12))))  # fmt: skip
    bulk = compare.compare_topologies(old, new)
    with _pytest.MonkeyPatch.context() as mp:
        mp.setattr(compare, "_compare_in_bulk", lambda o, n: None)
        ref = compare.compare_topologies(old, new)

    def key(link):
        lat = None if link.latency is None else link.latency.mean
        return (tuple(link.connect), lat is None, lat or 0.0, link.speed.mean)

    assert bulk.unchanged == ref.unchanged
    assert sorted(map(key, bulk.added)) == sorted(map(key, ref.added))
    assert sorted(map(key, bulk.removed)) == sorted(map(key, ref.removed))
    assert sorted((key(a), key(b)) for a, b in bulk.changed) == sorted(
        (key(a), key(b)) for a, b in ref.changed
    )
    assert bulk.summary()[-1] == ref.summary()[-1]
