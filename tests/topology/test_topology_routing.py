"""Routing techniques: the report's examples, the torus rules, broadcast, errors,
batch routes, the per-topology index and plug-ins."""

import itertools
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from parasol_core import load
from parasol_core.analysis.validate import validate
from parasol_core.model import Machine, Processor
from parasol_core.topology import routing as registry
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import bus, grid, hypercube, ring, torus
from parasol_core.topology.index import index_of, invalidate, route, routes
from parasol_core.topology.routing import (
    BUILTIN_ROUTINGS,
    RoutingTechnique,
    available_routings,
    get_routing,
    refresh_routings,
    register_routing,
    unregister_routing,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

# Figure 2.1, 4 x 4 grid numbered p = 1 + x + 4*y: A in a corner, B at the far end of
# A's row, C above B in the opposite corner, D at the far end of A's column.
A, B, C, D = 1, 4, 16, 13


@pytest.fixture
def grid4():
    return load(SAMPLES / "grid4x4.machine").hardware()


def test_xy_route_from_a_to_c_goes_straight_to_b_then_up(grid4):
    r = route(grid4, A, C)
    assert r.processors == (1, 2, 3, 4, 8, 12, 16)
    assert r.processors.index(B) == 3  # along the row first, B reached before any Y step
    assert r.links == (1, 2, 3, 16, 20, 24)
    assert (r.source, r.destination, r.hops) == (A, C, 6)


def test_yx_route_goes_the_other_way_round(grid4):
    grid4.routing = "YX"
    r = route(grid4, A, C)
    assert r.processors == (1, 5, 9, 13, 14, 15, 16)
    assert B not in r.processors and D in r.processors
    assert r.links == (13, 17, 21, 10, 11, 12)


def test_route_to_oneself_is_empty(grid4):
    r = route(grid4, 6, 6)
    assert r.processors == (6,) and r.links == ()


@pytest.mark.parametrize("order", ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"])
def test_xyz_permutations_move_in_the_order_of_their_letters(order):
    cube = grid([3, 4, 5], 1e-5, 1e-6)
    cube.routing = order
    src, dst = 1, 60  # (0,0,0) -> (2,3,4)
    r = route(cube, src, dst)
    index = index_of(cube)
    coords = [index.coordinates(p) for p in r.processors]
    axes = []
    for a, b in itertools.pairwise(coords):
        moved = [i for i in range(3) if a[i] != b[i]]
        assert len(moved) == 1 and abs(a[moved[0]] - b[moved[0]]) == 1
        if not axes or axes[-1] != moved[0]:
            axes.append(moved[0])
    assert "".join("XYZ"[i] for i in axes) == order
    assert r.hops == 2 + 3 + 4


def test_1d_torus_takes_the_shorter_way_and_ties_go_positive():
    r8 = ring(8, 1e-5, 1e-6)
    assert route(r8, 1, 4).processors == (1, 2, 3, 4)
    assert route(r8, 1, 6).processors == (1, 8, 7, 6)  # backwards over the wrap link
    assert route(r8, 1, 6).links == (8, 7, 6)  # link 8 is 1-8
    assert route(r8, 1, 5).processors == (1, 2, 3, 4, 5)  # tie: positive
    assert route(r8, 5, 1).processors == (5, 6, 7, 8, 1)  # tie: positive, wrapping
    assert route(r8, 7, 2).processors == (7, 8, 1, 2)


def test_2d_torus_takes_the_shorter_way_in_each_dimension_x_first():
    t = torus([4, 4], 1e-5, 1e-6)
    # (0,0) -> (3,3): one step back in X (wrap), one back in Y (wrap)
    assert route(t, 1, 16).processors == (1, 4, 16)
    # (0,0) -> (2,2): ties in both dimensions go the positive way
    assert route(t, 1, 11).processors == (1, 2, 3, 7, 11)
    # (2,2) -> (0,0): ties again positive, wrapping round
    assert route(t, 11, 1).processors == (11, 12, 9, 13, 1)
    # (1,0) -> (2,3): X forward one, Y back one
    assert route(t, 2, 15).processors == (2, 3, 15)


def test_3d_torus_takes_the_shorter_way_in_x_then_y_then_z():
    t = torus([4, 4, 4], 1e-5, 1e-6)
    index = index_of(t)
    src, dst = index.processor_at((0, 0, 0)), index.processor_at((3, 2, 3))
    coords = [index.coordinates(p) for p in route(t, src, dst).processors]
    assert coords == [(0, 0, 0), (3, 0, 0), (3, 1, 0), (3, 2, 0), (3, 2, 3)]


def test_torus_routes_never_exceed_half_of_each_dimension():
    t = torus([5, 4, 3], 1e-5, 1e-6)
    n = 60
    src, dst = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1))
    batch = routes(t, src.ravel(), dst.ravel())
    assert batch.hops.max() == 2 + 2 + 1


def test_broadcast_on_the_ethernet_sample_is_one_hop_over_link_1():
    hw = load(SAMPLES / "fwi-csys.machine").hardware()
    assert hw.routing == "broadcast"
    pairs = [(a, b) for a in range(1, 43) for b in range(1, 43) if a != b]
    for a, b in pairs[::97]:
        r = route(hw, a, b)
        assert r.processors == (a, b) and r.links == (1,)
    batch = routes(hw, [a for a, _ in pairs], [b for _, b in pairs])
    assert len(batch) == 42 * 41
    assert (batch.hops == 1).all() and (batch.links == 1).all()


def test_broadcast_takes_the_lowest_id_link_holding_both_ends():
    t = bus(40, 1e-3, 1e-6)  # one big link (id 1)...
    extra = [lnk for lnk in grid([40], 1e-5, 1e-7).links]
    for i, link in enumerate(extra, start=2):
        link.id = i
    t.links = extra + t.links  # ...listed last, still the lowest id
    t.link_count = len(t.links)
    assert route(t, 3, 4).links == (1,)
    assert routes(t, [3, 40], [4, 1]).links.tolist() == [1, 1]
    t.links[-1].id = 99  # now the point-to-point link 3-4 (id 4) is lower
    assert route(t, 3, 4).links == (4,)
    assert routes(t, [3, 40], [4, 1]).links.tolist() == [4, 99]


def test_a_missing_link_names_the_two_processors(grid4):
    assert route(grid4, 1, 4).links == (1, 2, 3)
    grid4.links = [link for link in grid4.links if link.connect != [3, 4]]
    with pytest.raises(
        RoutingError, match="no link connects processor 3 and processor 4 in topology 1"
    ):
        route(grid4, 1, 4)
    with pytest.raises(RoutingError, match="processor 3 and processor 4"):
        routes(grid4, [1, 5], [8, 4])


def test_a_processor_out_of_range_is_a_routing_error(grid4):
    with pytest.raises(
        RoutingError, match=r"processor 17 is not in topology 1 \(processors 1..16\)"
    ):
        route(grid4, 1, 17)
    with pytest.raises(RoutingError, match="processor 0 is not in topology 1"):
        routes(grid4, [1, 0], [2, 3])


def test_a_mesh_technique_needs_a_shape():
    t = bus(6, 1, 1)
    t.routing = "XY"
    with pytest.raises(RoutingError, match="XY routing needs a grid shape"):
        route(t, 1, 2)
    cube = grid([2, 2, 2], 1, 1)
    cube.routing = "XY"
    with pytest.raises(RoutingError, match="up to 2 dimensions"):
        route(cube, 1, 8)


def test_unknown_or_missing_routing_names(grid4):
    grid4.routing = "zigzag"
    with pytest.raises(RoutingError, match="unknown routing technique 'zigzag'.*XY"):
        route(grid4, 1, 2)
    grid4.routing = None
    with pytest.raises(RoutingError, match="topology 1 has no routing technique"):
        route(grid4, 1, 2)


def test_hypercube_routing_fixes_the_lowest_differing_bit_first():
    h = hypercube(4, 1e-5, 1e-6)
    # 0b0000 -> 0b1011: bits 0, 1, 3
    assert route(h, 1, 12).processors == (1, 2, 4, 12)
    n = 16
    src, dst = np.meshgrid(np.arange(1, n + 1), np.arange(1, n + 1))
    batch = routes(h, src.ravel(), dst.ravel())
    expected = [bin((a - 1) ^ (b - 1)).count("1") for a, b in zip(src.ravel(), dst.ravel())]
    assert batch.hops.tolist() == expected


@pytest.mark.parametrize(
    "make, routing",
    [(lambda: grid([16, 32], 1, 1), "XY"), (lambda: grid([16, 32], 1, 1), "YX"),
     (lambda: grid([3, 4, 5], 1, 1), "ZXY"), (lambda: torus([5, 6], 1, 1), "2Dtorus"),
     (lambda: torus([3, 4, 5], 1, 1), "3Dtorus"), (lambda: ring(11, 1, 1), "1Dtorus"),
     (lambda: hypercube(5, 1, 1), "hypercube"), (lambda: bus(50, 1, 1), "broadcast")],
)  # fmt: skip
def test_batch_routes_equal_single_routes(make, routing):
    t = make()
    t.routing = routing
    n = t.processor_count
    rng = np.random.default_rng(7)
    src, dst = rng.integers(1, n + 1, 3000), rng.integers(1, n + 1, 3000)
    batch = routes(t, src, dst)
    assert len(batch) == 3000
    for i in range(0, 3000, 7):
        assert batch[i] == route(t, int(src[i]), int(dst[i]))
    assert list(batch[-2:]) == [route(t, int(src[j]), int(dst[j])) for j in (-2, -1)]


def test_gcel_routes_by_the_sample_shape():
    hw = load(SAMPLES / "parsytec-gcel.machine").hardware()
    r = route(hw, 1, 512)  # (0,0) -> (15,31): 15 along X, then 31 along Y
    assert r.hops == 46
    assert r.processors[15] == 16 and r.processors[-2] == 496


def test_the_index_notices_edits_in_place(grid4):
    first = index_of(grid4)
    assert index_of(grid4) is first
    assert route(grid4, 1, 2).links == (1,)
    grid4.links[0].id = 99  # renumber the link 1-2
    assert route(grid4, 1, 2).links == (99,)
    grid4.links[0].connect = [1, 3]  # and now it joins something else
    with pytest.raises(RoutingError, match="processor 1 and processor 2"):
        route(grid4, 1, 2)
    grid4.routing = "YX"
    assert index_of(grid4) is not first
    held = index_of(grid4)
    invalidate(grid4)
    assert index_of(grid4) is not held


# --------------------------------------------------------------------------- registry


def test_builtins_are_available_and_declared_as_entry_points():
    names = available_routings()
    expected = {"XY", "YX", "1Dtorus", "2Dtorus", "3Dtorus", "broadcast"}
    expected |= {"".join(p) for p in itertools.permutations("XYZ")}
    assert expected <= set(names)
    declared = {ep.name for ep in metadata.entry_points(group=registry.ENTRY_POINT_GROUP)}
    assert set(BUILTIN_ROUTINGS) <= declared
    for name in expected:
        assert get_routing(name).name == name


def test_builtins_work_when_the_installed_metadata_is_stale(monkeypatch):
    monkeypatch.setattr(metadata, "entry_points", lambda **kw: [])
    refresh_routings()
    try:
        assert "2Dtorus" in available_routings()
        assert get_routing("2Dtorus").name == "2Dtorus"
    finally:
        monkeypatch.undo()
        refresh_routings()


class Snake(RoutingTechnique):
    """Test technique: along the processor numbers, one at a time."""

    def path(self, layout, src, dst):
        step = 1 if dst >= src else -1
        return list(range(src, dst + step, step))

    def neighbours(self, layout, p):
        return [q for q in (p - 1, p + 1) if 1 <= q <= layout.count]


def test_a_technique_registered_in_process_is_found_by_name():
    register_routing("test-snake", Snake)
    try:
        assert "test-snake" in available_routings()
        assert isinstance(get_routing("test-snake"), Snake)
        t = grid([6], 1, 1)
        t.routing = "test-snake"
        assert route(t, 5, 2).processors == (5, 4, 3, 2)
        machine = Machine(
            id=1,
            name="m",
            processor_count=1,
            topology_count=1,
            processors=[Processor(id=1, name="p")],
            topologies=[t],
        )
        assert not [d for d in validate(machine) if "routing" in d.message]
        with pytest.raises(ValueError, match="already exists"):
            register_routing("test-snake", Snake)
        with pytest.raises(ValueError, match="already exists"):
            register_routing("XY", Snake)
    finally:
        unregister_routing("test-snake")
    assert "test-snake" not in available_routings()


@pytest.fixture
def plugin_distribution(tmp_path, monkeypatch):
    """An installed-looking distribution declaring a routing entry point."""
    (tmp_path / "piui_test_plugin.py").write_text(
        textwrap.dedent(
            '''
            def reverse_xy(layout, src, dst):
                """YX by another name, as a plain function."""
                from parasol_core.topology.techniques import YX
                return YX.path(layout, src, dst)


            class Unloadable:
                def __init__(self):
                    raise RuntimeError("broken on purpose")
            '''
        )
    )
    info = tmp_path / "piui_test_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: piui-test-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[parasol_core.routing]\n"
        "reverseXY = piui_test_plugin:reverse_xy\n"
        "broken = piui_test_plugin:Unloadable\n"
        "XY = piui_test_plugin:reverse_xy\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    refresh_routings()
    yield
    monkeypatch.undo()
    sys.modules.pop("piui_test_plugin", None)
    refresh_routings()


def test_an_entry_point_plugin_is_found_by_name(plugin_distribution, grid4):
    assert "reverseXY" in available_routings()
    grid4.routing = "reverseXY"
    assert route(grid4, A, C).processors == (1, 5, 9, 13, 14, 15, 16)
    with pytest.raises(RoutingError, match="does not define virtual links"):
        get_routing("reverseXY").neighbours(index_of(grid4).layout, 1)


def test_a_plugin_cannot_redefine_a_builtin_or_break_the_others(plugin_distribution, grid4):
    assert route(grid4, A, C).processors == (1, 2, 3, 4, 8, 12, 16)  # XY is still XY
    assert "broken" in available_routings()
    with pytest.raises(RoutingError, match="'broken'.*cannot be loaded.*broken on purpose"):
        get_routing("broken")


def test_validating_built_in_routings_reads_no_plug_in_metadata():
    """importlib.metadata costs tens of milliseconds at start-up: a model whose routings
    are built in is checked without it; an unknown name still lists the plug-ins."""
    code = (
        "import sys\n"
        "from parasol_core.syntax.loader import load\n"
        "from parasol_core.analysis.validate import validate\n"
        "m = load(sys.argv[1])\n"
        "assert not validate(m)\n"
        "print('importlib.metadata' in sys.modules)\n"
        "m.topologies[0].routing = 'nosuch'\n"
        "print(any('unknown routing technique' in d.message for d in validate(m)))\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    gcel = Path(__file__).resolve().parents[2] / "sample_models" / "parsytec-gcel.machine"
    out = subprocess.run([sys.executable, "-c", code, str(gcel)], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]
