"""Any virtual topology can be routed on any hardware (issue 33, item 3).

A virtual topology's shape (1 to 6 sizes) is the grid its routing lays the virtual
processors on. The core gives every processor count a default shape, the most square
factorisation; the session checks a shape (its product is the count, 1 to 6 sizes of 1
or more, one the routing can use) wherever one is set; and two virtual processors share
a hardware processor only when there are more virtual processors than compute ones.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core.model import VirtualTopology
from parasol_core.session import Session, SessionError
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import generate_over, switch_type_to_add
from parasol_core.topology.mapping import (
    crowding,
    mapping_quality,
    parse_mapping,
    sharing_limit,
)
from parasol_core.topology.routing import get_routing
from parasol_core.topology.shape import MAX_DIMS, parse_shape, shape_problem, square_shape
from parasol_core.topology.switches import compute_count, compute_processors, switch_mask
from parasol_core.topology.virtual import (
    default_shape,
    virtual_links,
    virtual_problem,
    virtual_routes,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

#: every built-in routing that says which virtual links a virtual topology has
VIRTUAL_ROUTINGS = ("XY", "YX", "XYZ", "ZYX", "YZX", "1Dtorus", "2Dtorus", "3Dtorus", "NDmesh",
                    "NDtorus", "broadcast", "hypercube")  # fmt: skip


def factorisations(n: int, k: int, cap: int | None = None):
    """Every way of writing n as k sizes, largest first (sizes of 1 included)."""
    cap = n if cap is None else cap
    if k == 1:
        if n <= cap:
            yield (n,)
        return
    for m in range(min(n, cap), 0, -1):
        if n % m == 0:
            for rest in factorisations(n // m, k - 1, m):
                yield (m, *rest)


def squarest_by_search(n: int, k: int) -> tuple[int, ...]:
    best = min(factorisations(n, k))  # tuples compare largest size first
    return tuple(d for d in best if d > 1) or (1,)


# --------------------------------------------------------------------------- default shapes


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4096), st.integers(1, MAX_DIMS))
def test_every_count_has_a_most_square_shape(count, ndim):
    shape = square_shape(count, ndim)
    assert math.prod(shape) == count
    assert 1 <= len(shape) <= min(ndim, MAX_DIMS) and all(d >= 1 for d in shape)
    assert list(shape) == sorted(shape, reverse=True)
    assert shape == squarest_by_search(count, ndim)  # no factorisation is squarer
    assert shape_problem(shape, count) is None


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4096), st.sampled_from(VIRTUAL_ROUTINGS))
def test_every_count_has_a_default_shape_its_routing_can_use(count, routing):
    shape = default_shape(count, routing)
    assert math.prod(shape) == count and 1 <= len(shape) <= MAX_DIMS
    assert min(shape) >= 1
    dims = get_routing(routing).grid_dims
    assert shape == square_shape(count, min(dims or 2, 3))
    problem = virtual_problem(routing, count, shape)
    if routing == "hypercube" and count & (count - 1):
        assert "power-of-two" in problem
    else:
        assert problem is None


def test_the_default_shapes_of_72():
    assert default_shape(72, "2Dtorus") == (9, 8)
    assert default_shape(72, "3Dtorus") == default_shape(72, "NDtorus") == (6, 4, 3)
    assert default_shape(72, "1Dtorus") == (72,)
    assert default_shape(71, "2Dtorus") == (71,)  # a prime: one size
    assert default_shape(1, "XY") == (1,)


@pytest.mark.parametrize(("text", "shape"), [("9 8", (9, 8)), ("4x3x6", (4, 3, 6)),
                                             ("4, 3", (4, 3)), (" 72 ", (72,))])  # fmt: skip
def test_a_shape_as_typed(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(("text", "says"), [("", "1 to 6 sizes"), ("9 a", "'a' is not a size"),
                                            ("2.5 4", "'2.5' is not a size")])  # fmt: skip
def test_a_shape_that_cannot_be_read_says_why(text, says):
    with pytest.raises(ValueError, match=says):
        parse_shape(text)


@pytest.mark.parametrize(("shape", "says"), [
    ((4, 3, 5), "a 4 x 3 x 5 grid has 60 processors, not 72"),
    ((2, 2, 2, 3, 3, 1, 1), "1 to 6 sizes, not 7"),
    ((), "1 to 6 sizes, not 0"),
    ((72, 0), "whole numbers of 1 or more, not 0"),
    ((-8, -9), "whole numbers of 1 or more, not -8"),
])  # fmt: skip
def test_what_is_wrong_with_a_shape(shape, says):
    assert says in shape_problem(shape, 72)


# --------------------------------------------------------------------------- the session


@pytest.fixture
def dragonfly():
    return Session.open(SAMPLES / "slingshot-dragonfly.machine")


def test_a_2d_torus_on_72_processors_routes_over_the_dragonfly(dragonfly):
    """The instance of the issue: Add… 2Dtorus on 72 processors over the dragonfly said
    'cannot route the mapping: 2Dtorus routing needs a grid shape'."""
    virt = dragonfly.new_virtual("2Dtorus", 72)
    assert virt.shape == (9, 8)
    q = mapping_quality(dragonfly.machine, virt)
    assert q.virtual_links == 144 and q.dilation_max >= 1
    assert not [d for d in dragonfly.revalidate() if d.is_error]


def test_a_shape_is_checked_by_every_operation_that_sets_one(dragonfly):
    s = dragonfly
    with pytest.raises(SessionError, match="60 processors, not 72"):
        s.new_virtual("2Dtorus", 72, shape=(4, 3, 5))
    with pytest.raises(SessionError, match="up to 2 dimensions; virtual topology 1 is 4 x 3 x 6"):
        s.new_virtual("2Dtorus", 72, shape=(4, 3, 6))
    with pytest.raises(SessionError, match="power-of-two processor count"):
        s.new_virtual("hypercube", 72)
    with pytest.raises(SessionError, match="does not define virtual links"):
        s.new_virtual("updown", 72)
    with pytest.raises(SessionError, match="needs a grid shape"):  # not even the hardware's
        s.add_virtual(VirtualTopology(id=7, name="t", routing="2Dtorus", processor_count=4,
                                      mapping={1: 1, 2: 2, 3: 3, 4: 4}))  # fmt: skip
    assert not s.machine.virtuals and not s.history.can_undo

    virt = s.new_virtual("NDtorus", 72)
    assert virt.shape == (6, 4, 3)
    s.set_virtual_shape(virt.id, (2, 2, 2, 3, 3))
    assert virt.shape == (2, 2, 2, 3, 3)
    assert s.history.undo_label == f"Virtual topology {virt.id}: shape 2 x 2 x 2 x 3 x 3"
    for bad, says in (((2, 2, 2, 3, 3, 1, 1), "1 to 6 sizes, not 7"),
                      ((9, 9), "81 processors, not 72"), ((72, 0), "not 0")):  # fmt: skip
        with pytest.raises(SessionError, match=says):
            s.set_virtual_shape(virt.id, bad)
    assert virt.shape == (2, 2, 2, 3, 3)
    mapping_quality(s.machine, virt)
    s.undo()
    assert virt.shape == (6, 4, 3)


def test_a_new_routing_brings_a_shape_it_can_use_or_is_refused(dragonfly):
    s = dragonfly
    virt = s.new_virtual("3Dtorus", 72, shape=(4, 3, 6))
    s.set_virtual_routing(virt.id, "2Dtorus")  # a 3-D shape will not do: the default
    assert (virt.routing, virt.shape, virt.name) == ("2Dtorus", (9, 8), "2Dtorus on 72")
    mapping_quality(s.machine, virt)
    s.undo()  # one step: routing, shape and name
    assert (virt.routing, virt.shape, virt.name) == ("3Dtorus", (4, 3, 6), "3Dtorus on 72")
    with pytest.raises(SessionError, match="power-of-two"):
        s.set_virtual_routing(virt.id, "hypercube")
    with pytest.raises(SessionError, match="not a routing technique"):
        s.set_virtual_routing(virt.id, "evil")
    assert virt.routing == "3Dtorus"


def test_a_resized_virtual_topology_gets_a_shape_of_its_new_count(dragonfly):
    s = dragonfly
    virt = s.new_virtual("2Dtorus", 72)
    s.resize_virtual(virt.id, 50)
    assert virt.shape == (10, 5) and math.prod(virt.shape) == virt.processor_count
    mapping_quality(s.machine, virt)
    s.resize_virtual(virt.id, 100)  # more than the 72 compute processors: two share
    assert virt.shape == (10, 10) and mapping_quality(s.machine, virt).virtual_links == 200
    on = [h for h in virt.mapping.values()]
    assert max(on.count(h) for h in set(on)) == 2
    virt = s.new_virtual("hypercube", 64)
    with pytest.raises(SessionError, match="power-of-two"):
        s.resize_virtual(virt.id, 72)
    assert virt.processor_count == 64


# --------------------------------------------------------------------------- any hardware

HARDWARE = st.sampled_from([
    ("grid", (4, 4)), ("grid", (3, 2, 2)), ("torus", (5, 3)), ("torus", (2, 3, 2, 2)),
    ("ring", (7,)), ("hypercube", (3,)), ("bus", (6,)), ("clique", (5,)),
    ("fattree", (2, 3)), ("fattree2", (4, 2, 3)), ("dragonfly", (5, 2, 2, 2)),
])  # fmt: skip


def hardware_session(kind, sizes):
    """The grid sample with its hardware replaced by ``kind sizes`` and no virtual
    topologies."""
    s = Session.open(SAMPLES / "grid4x4.machine")
    for virt in list(s.machine.virtuals):
        s.remove_virtual(virt.id)
    m = s.machine
    new = generate_over(m.hardware(), kind, sizes, 1e-6, 1e-9, machine=m)
    switch = switch_type_to_add(m, new)
    s.replace_topology(1, new, add_processors=[switch] if switch else [])
    return s


@st.composite
def some_shape(draw, count):
    """None (the default), or sizes of 1 to 6 whose product is ``count``."""
    if draw(st.booleans()):
        return None
    ndim = draw(st.integers(1, MAX_DIMS))
    return draw(st.sampled_from(list(factorisations(count, ndim))))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HARDWARE, st.sampled_from(VIRTUAL_ROUTINGS), st.data())
def test_any_virtual_topology_with_a_shape_routes_on_any_hardware(hardware, routing, data):
    s = hardware_session(*hardware)
    m = s.machine
    compute = compute_count(m, m.hardware())
    count = data.draw(st.integers(1, 3 * compute), label="count")
    shape = data.draw(some_shape(count), label="shape")
    given_shape = shape if shape is not None else default_shape(count, routing)
    problem = virtual_problem(routing, count, given_shape, "virtual topology 1")
    if problem is not None:  # refused, saying why (a 3-D shape for a 2Dtorus, ...)
        with pytest.raises(SessionError) as refused:
            s.new_virtual(routing, count, shape=shape)
        assert str(refused.value) == problem and not m.virtuals
        assert shape is not None or routing == "hypercube"  # the default always fits
        return
    virt = s.new_virtual(routing, count, shape=shape)
    assert math.prod(virt.shape) == count
    # every virtual link routes through the hardware
    links = virtual_links(m, virt, directed=False)
    if links:
        src, dst = zip(*links)
        batch = virtual_routes(m, virt, list(src), list(dst))
        assert batch.hops.shape[0] == len(links)
    mapping_quality(m, virt)
    # onto compute processors only, none shared while each can have its own
    targets = set(compute_processors(m, m.hardware()).tolist())
    assert set(virt.mapping.values()) <= targets
    on = list(virt.mapping.values())
    assert max(on.count(h) for h in set(on)) <= sharing_limit(count, compute)
    assert not [d for d in s.revalidate() if d.is_error]


# --------------------------------------------------------------------------- two on one


def test_a_duplicate_mapping_is_refused_with_the_reason_as_a_short_one_is():
    s = Session.open(SAMPLES / "grid4x4.machine")
    virt = s.machine.virtual(3)
    hw = s.machine.hardware()
    mask = switch_mask(s.machine, hw)
    with pytest.raises(ValueError, match="has 16 processors: give 16"):  # short: as before
        parse_mapping("1 2 3", virt, 16, mask)
    typed = "1 1 " + " ".join(str(h) for h in range(3, 17))
    with pytest.raises(ValueError) as refused:
        parse_mapping(typed, virt, 16, mask)
    said = str(refused.value)
    assert said.startswith("virtual processors ") and "would share hardware processor 1" in said
    assert "16 compute processors for 16 virtual ones, each takes one of its own" in said
    before = dict(virt.mapping)
    on_one = {v: 1 for v in (1, 2)}
    with pytest.raises(SessionError, match="would share hardware processor 1"):
        s.set_mapping(virt.id, on_one)
    assert dict(virt.mapping) == before and not s.history.can_undo
    a, b = virt.mapping[1], virt.mapping[2]
    s.set_mapping(virt.id, {1: b, 2: a})  # a swap shares nothing
    with pytest.raises(SessionError, match="would share"):
        s.add_virtual(VirtualTopology(id=9, name="two on one", routing="1Dtorus",
                                      processor_count=2, mapping={1: 5, 2: 5}))  # fmt: skip


def test_more_virtual_processors_than_compute_ones_share_evenly():
    assert sharing_limit(16, 16) == 1 and sharing_limit(17, 16) == 2
    assert sharing_limit(72, 64) == 2 and sharing_limit(1, 0) == 1
    mapping = {v: (v - 1) % 4 + 1 for v in range(1, 9)}  # 8 on 4: two each
    assert crowding(mapping, {1: 2}, 8, 4) is not None  # three on 2
    assert "take at most 2 to a processor" in crowding(mapping, {1: 2}, 8, 4)
    assert crowding(mapping, {1: 2, 2: 1}, 8, 4) is None  # a swap
    # a mapping read from a file that already crowds stays editable elsewhere
    crowded = {1: 1, 2: 1, 3: 2, 4: 3}
    assert crowding(crowded, {3: 3, 4: 2}, 4, 4) is None


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.data())
def test_a_resize_never_crowds_a_processor_while_another_is_free(start, end, data):
    s = Session.open(SAMPLES / "grid4x4.machine")
    virt = s.new_virtual("1Dtorus", start)
    moves = data.draw(st.lists(st.tuples(st.integers(1, 16), st.integers(1, 16)), max_size=4))
    for a, b in moves:  # some drags on the canvas first
        from parasol_core.topology.mapping import swap

        s.set_mapping(virt.id, swap(virt.mapping, a, b))
    s.resize_virtual(virt.id, end)
    on = list(virt.mapping.values())
    assert sorted(virt.mapping) == list(range(1, end + 1))
    assert max(on.count(h) for h in set(on)) <= sharing_limit(end, 16)


def test_a_virtual_topology_from_a_file_without_a_shape_says_how_to_give_it_one(dragonfly):
    s = dragonfly
    virt = s.new_virtual("1Dtorus", 72)
    virt.routing, virt.shape = "2Dtorus", None  # as a hand-written file may have it
    with pytest.raises(RoutingError, match="Shape in the mapping editor"):
        mapping_quality(s.machine, virt)
    virt.routing = "1Dtorus"
    s.set_virtual_routing(virt.id, "2Dtorus")  # the mapping editor's way: a shape comes
    assert virt.shape == (9, 8)
    mapping_quality(s.machine, virt)
