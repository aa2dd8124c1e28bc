"""Processor positions, link groups, link load and swaps (parasol_core, no Qt)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parasol_core.syntax.loader import load
from parasol_core.topology import generate
from parasol_core.topology.layout import (
    Tiles,
    link_classes,
    link_groups,
    nested_arrangement,
    nested_grid,
    placement,
    segments,
)
from parasol_core.topology.mapping import link_load, make_mapping, mapping_quality, swap
from parasol_core.topology.shape import Shape

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.mark.parametrize("dims", [(4, 4), (3, 5), (4, 3, 2), (8, 4, 4), (3, 2, 4, 2, 3, 2)])
@pytest.mark.parametrize("kind", ["grid", "torus"])
def test_grid_positions_are_nested_blocks_of_the_row_major_numbering(kind, dims):
    """Dimensions 0 and 1 make a block (x across, y down); every block is the same
    picture moved, and blocks do not overlap."""
    topo = generate(kind, dims, 1e-5, 1e-6)
    where = placement(topo)
    shape = Shape(dims)
    w, h = dims[0], dims[1]
    coords = shape.coordinates_array(np.arange(1, shape.size + 1))
    block = np.zeros(shape.size, dtype=np.int64)  # which block: the outer coordinates
    for axis in range(2, len(dims)):
        block = block * dims[axis] + coords[:, axis]
    corner = {}
    for p in range(1, shape.size + 1):
        x, y = where.xy[p - 1]
        c = coords[p - 1]
        cx, cy = corner.setdefault(int(block[p - 1]), (x - c[0], y - c[1]))
        assert (x - cx, y - cy) == (c[0], c[1])
    boxes = sorted(corner.values())
    for i, (x1, y1) in enumerate(boxes):  # blocks are w x h and at least a unit apart
        for x2, y2 in boxes[i + 1 :]:
            assert abs(x1 - x2) >= w + 1 or abs(y1 - y2) >= h + 1
    assert where.kind == ("layers" if len(dims) > 2 else "grid")
    assert len({tuple(r) for r in where.xy.tolist()}) == shape.size


@pytest.mark.parametrize("dims", [(8, 4, 4), (32, 32, 32), (64, 64, 64), (100, 100, 100),
                                  (24, 23, 24, 2, 3, 2), (4, 4, 4, 4, 4, 4), (2, 2, 2, 2, 2, 2),
                                  (5, 7, 23)])  # fmt: skip
def test_outer_dimensions_make_a_grid_of_blocks_not_a_strip(dims):
    """The Cray T3D's 8 x 4 x 4 was four blocks in a row, 35 x 4; a million-processor
    torus would have been 10,099 x 100. Laid out now nearer a landscape page."""
    xy = nested_grid(Shape(dims))
    w, h = np.ptp(xy, axis=0) + 1
    assert 0.75 <= w / h <= 3.0, (dims, w, h)
    if dims == (8, 4, 4):
        assert nested_arrangement(dims) == [(2, 2)]  # 2 x 2 blocks
    if dims == (100, 100, 100):
        assert nested_arrangement(dims) == [(10, 10)]


def test_tiles_find_exactly_what_a_rectangle_holds():
    rng = np.random.default_rng(5)
    for xy in (rng.uniform(0, 300, (5000, 2)), nested_grid(Shape((24, 23, 6))),
               np.zeros((1, 2))):  # fmt: skip
        tiles = Tiles.of(xy)
        for _ in range(30):
            x0, y0 = rng.uniform(-20, 300, 2)
            x1, y1 = x0 + rng.uniform(0, 120), y0 + rng.uniform(0, 120)
            got = tiles.indices(x0, y0, x1, y1)
            assert tiles.count(x0, y0, x1, y1) == got.size
            inside = np.flatnonzero((xy[:, 0] >= x0) & (xy[:, 0] <= x1)
                                    & (xy[:, 1] >= y0) & (xy[:, 1] <= y1))  # fmt: skip
            assert set(inside.tolist()) <= set(got.tolist())
            assert len(set(got.tolist())) == got.size
            # no more than the tiles around the rectangle
            s = tiles.size
            near = ((xy[:, 0] >= x0 - s) & (xy[:, 0] <= x1 + s)
                    & (xy[:, 1] >= y0 - s) & (xy[:, 1] <= y1 + s))  # fmt: skip
            assert near[got].all()


def test_ring_hypercube_bus_and_shapeless_layouts():
    ring = placement(generate("ring", (8,), 1e-5, 1e-6))
    assert ring.kind == "ring"
    # on a circle: every processor at the same distance from the centre
    centre = ring.xy.mean(axis=0)
    r = np.hypot(*(ring.xy - centre).T)
    assert np.allclose(r, r[0])
    cube = generate("hypercube", (4,), 1e-5, 1e-6)
    where = placement(cube)
    assert where.kind == "hypercube"
    assert len({tuple(p) for p in where.xy.tolist()}) == 16
    # Gray-code order: processors one low bit apart are one unit apart along x
    assert abs(where.xy[0, 0] - where.xy[1, 0]) == 1
    assert placement(generate("bus", (6,), 1e-5, 1e-6)).kind == "bus"
    clique = placement(generate("clique", (6,), 1e-5, 1e-6))
    assert clique.kind == "force"
    assert np.isfinite(clique.xy).all()
    assert len({tuple(np.round(p, 6)) for p in clique.xy.tolist()}) == 6


def test_link_groups_by_dimension_and_wrap_around():
    dims = (4, 3, 2)
    topo = generate("torus", dims, 1e-5, 1e-6)
    groups = link_groups(topo)
    shape = Shape(dims)
    by_id = {lk.id: lk.connect for lk in topo.links}
    for axis, name in enumerate("XYZ"):
        for lid in groups[name]:
            a, b = (shape.coordinates(p) for p in by_id[lid])
            differ = [i for i in range(3) if a[i] != b[i]]
            assert differ == [axis]
    assert sorted(groups["X"] + groups["Y"] + groups["Z"]) == groups["all"]
    for lid in groups["wrap-around"]:
        a, b = (shape.coordinates(p) for p in by_id[lid])
        assert max(abs(i - j) for i, j in zip(a, b)) > 1
    # a 4-wide ring wraps; the sizes 3 and 2 only wrap where size >= 3
    assert len(groups["wrap-around"]) == (3 * 2) + (4 * 2)
    assert "wrap-around" not in link_groups(generate("grid", dims, 1e-5, 1e-6))


def test_link_groups_of_a_6d_torus_name_every_dimension():
    dims = (3, 2, 4, 2, 3, 2)
    topo = generate("torus", dims, 1e-5, 1e-6)
    groups = link_groups(topo)
    names = ["X", "Y", "Z", "dimension 4", "dimension 5", "dimension 6"]
    assert [g for g in groups if g in names] == names
    shape = Shape(dims)
    by_id = {lk.id: lk.connect for lk in topo.links}
    for axis, name in enumerate(names):
        for lid in groups[name]:
            a, b = (shape.coordinates(p) for p in by_id[lid])
            assert [i for i in range(6) if a[i] != b[i]] == [axis]
    assert sorted(sum((groups[n] for n in names), [])) == groups["all"]


def test_links_of_a_bus_are_other_and_drawn_as_a_bar():
    bus = generate("bus", (5,), 1e-5, 1e-6)
    assert link_groups(bus) == {"all": [1], "other": [1]}
    where = placement(bus)
    ids, a, b = segments(bus, where)
    assert ids.tolist() == []  # no chain: a bar (tests/test_network_drawings.py)
    assert where.bars.ids.tolist() == [1] and where.bars.members_of(0).tolist() == [0, 1, 2, 3, 4]


def test_link_classes_without_a_shape():
    clique = generate("clique", (5,), 1e-5, 1e-6)
    classes = link_classes(clique)
    assert (classes.axis == -1).all() and not classes.wrap.any()


def test_link_load_agrees_with_congestion():
    machine = load(SAMPLES / "grid4x4.machine")
    for scheme in ("identity", "snake", "random"):
        mapping = make_mapping(machine, 3, scheme, seed=3)
        loads = link_load(machine, 3, mapping)
        q = mapping_quality(machine, 3, mapping)
        assert max(loads.values()) == q.congestion
        assert sorted(k for k, v in loads.items() if v == q.congestion) == list(q.congested_links)


def test_swap_trades_or_moves():
    mapping = {1: 5, 2: 6, 3: 7}
    assert swap(mapping, 5, 6) == {1: 6, 2: 5}
    assert swap(mapping, 5, 9) == {1: 9}  # onto a free hardware processor: a move
    assert swap(mapping, 9, 5) == {1: 9}
    assert swap(mapping, 5, 5) == {}
    assert swap(mapping, 8, 9) == {}


def test_32768_processors_lay_out():
    topo = generate("torus", (32, 32, 32), 1e-5, 1e-6)
    where = placement(topo)
    assert where.count == 32768
    # 8 x 4 blocks of 32 x 32, 3 units apart
    assert where.bounds() == (0.0, 0.0, 8 * 32 + 7 * 3 - 1, 4 * 32 + 3 * 3 - 1)
    assert int(link_classes(topo).wrap.sum()) == 3 * 32 * 32


def test_link_pairs_in_one_pass_and_the_rest_as_they_are():
    """The usual case (every link has an id and two processors) is read at C speed; a
    model with buses, links without an id or processors goes link by link; both give
    the two-processor links as arrays and the rest as the links themselves."""
    from parasol_core.model import Link
    from parasol_core.topology.layout import _link_pairs, link_pairs

    topo = generate("torus", (4, 4), 1e-5, 1e-6)
    fast, slow = link_pairs(topo), _link_pairs(topo.links)
    for x, y in zip(fast[:3], slow[:3], strict=True):
        assert x.dtype == y.dtype == np.int64 and x.tolist() == y.tolist()
    assert fast.others == slow.others == []
    bus, loose, no_id = (
        Link(90, connect=[1, 2, 3]),
        Link(91, connect=None),
        Link(None, connect=[1, 2]),
    )
    topo.links += [bus, loose, no_id]
    ids, a, b, others = link_pairs(topo)
    assert ids.tolist() == slow.ids.tolist() and a.tolist() == slow.a.tolist()
    assert others == [bus, loose]
    assert 90 in link_classes(topo, Shape((4, 4))).other


def _classes_by_coordinates(shape, a, b):
    """The reference: both ends' coordinates, one dimension moved by one step (or
    size - 1 of a size of 3 or more)."""
    import numpy as np

    grid = shape.padded(3)
    axis = np.full(a.shape[0], -1, dtype=np.int64)
    wrap = np.zeros(a.shape[0], dtype=bool)
    for i, (p, q) in enumerate(zip(a.tolist(), b.tolist())):
        if not (1 <= p <= grid.size and 1 <= q <= grid.size):
            continue
        cp, cq = grid.coordinates(p), grid.coordinates(q)
        moved = [k for k in range(grid.ndim) if cp[k] != cq[k]]
        if len(moved) != 1:
            continue
        k = moved[0]
        step, size = abs(cp[k] - cq[k]), grid.dims[k]
        if step == 1:
            axis[i] = k
        elif step == size - 1 and size >= 3:
            axis[i], wrap[i] = k, True
    return axis, wrap


@settings(max_examples=200, deadline=None)
@given(dims=st.lists(st.integers(1, 5), min_size=1, max_size=6), data=st.data())
def test_link_classes_agree_with_the_coordinates_of_both_ends(dims, data):
    import numpy as np

    from parasol_core.topology.layout import link_classes
    from parasol_core.topology.shape import Shape

    shape = Shape(tuple(dims))
    n = shape.size
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n + 1), st.integers(0, n + 1)),
                               min_size=1, max_size=40))  # fmt: skip
    a = np.asarray([p for p, _ in pairs], dtype=np.int64)
    b = np.asarray([q for _, q in pairs], dtype=np.int64)
    ids = np.arange(1, a.shape[0] + 1, dtype=np.int64)
    got = link_classes(None, shape, (ids, a, b, []))
    axis, wrap = _classes_by_coordinates(shape, a, b)
    assert got.axis.tolist() == axis.tolist()
    assert got.wrap.tolist() == wrap.tolist()
