"""Fat trees, dragonflies, switches and N-D tori in the grid view (issue 21): the layout
the core gives them (no Qt) and what the grid view shows of them (offscreen, real
widgets). The networks are written by hand (tests/handmade_networks.py), numbered as
the generators number them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from handmade_networks import dragonfly_pairs, dragonfly_text, fattree_pairs, fattree_text
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from test_gui_topology import shown

from parasol_core import loads
from parasol_core.topology import generate
from parasol_core.topology.index import index_of
from parasol_core.topology.layout import hop_levels, placement
from parasol_core.topology.switches import switch_mask
from piui.document import Document
from piui.widgets.topology_canvas import type_colour
from piui.widgets.topology_selection import selection_of
from piui.windows.grid_view import GridViewWindow


def laid_out(text: str):
    machine = loads(text)
    hw = machine.hardware()
    return machine, hw, placement(hw, switches=switch_mask(machine, hw))


# ------------------------------------------------------------------ layout (core)


@pytest.mark.parametrize("k, n", [(2, 3), (4, 2), (3, 3)])
def test_a_fat_tree_is_drawn_in_layers_compute_at_the_bottom(k, n):
    compute, switches, _ = fattree_pairs(k, n)
    for say in (True, False):
        _, _, where = laid_out(fattree_text(k, n, say_network=say))
        assert where.kind == ("fattree" if say else "levels")
        # the levels: the numbering's, or found from the links: the same
        expected = np.concatenate(([0] * compute, 1 + np.arange(switches) // k ** (n - 1)))
        assert where.levels.tolist() == expected.tolist()
        y = where.xy[:, 1]
        for level in range(1, n + 1):  # one row per level of switches, higher ones higher up
            row = y[where.levels == level]
            assert np.all(row == row[0])
            assert row[0] < y[where.levels == level - 1].min()
        # compute processors below their leaf switch (issue 33: in a block under it, not
        # one long row), in number order (rows of the block left to right, top down)
        leaf = compute + np.arange(compute) // k  # 0-based row of each one's leaf switch
        assert (y[:compute] > y[leaf]).all()
        for first in range(0, compute, k):
            block = where.xy[first : first + k]
            order = np.lexsort((block[:, 0], block[:, 1]))
            assert order.tolist() == list(range(k))
        assert len({tuple(p) for p in where.xy.tolist()}) == where.count


@pytest.mark.parametrize("g, a, p, h", [(5, 4, 2, 1), (9, 4, 2, 2), (3, 2, 3, 1)])
def test_a_dragonfly_is_groups_on_a_circle(g, a, p, h):
    terminals, routers, _ = dragonfly_pairs(g, a, p, h)
    _, _, where = laid_out(dragonfly_text(g, a, p, h))
    assert where.kind == "dragonfly"
    assert where.levels.tolist() == [0] * terminals + [1] * routers
    router_xy = where.xy[terminals:]
    centres = router_xy.reshape(g, a, 2).mean(axis=1)  # each group's routers' centre
    middle = centres.mean(axis=0)
    radius = np.hypot(*(centres - middle).T)
    assert np.allclose(radius, radius[0])  # on one circle
    angle = np.unwrap(np.arctan2(*(centres - middle).T[::-1]))
    assert np.all(np.diff(angle) > 0)  # group by group, in order round it
    # a router is nearer its own group's centre than any other; a terminal nearer its
    # own router than any other
    d = np.hypot(*(router_xy[:, None, :] - centres[None, :, :]).transpose(2, 0, 1))
    assert (d.argmin(axis=1) == np.arange(routers) // a).all()
    t = where.xy[:terminals]
    d = np.hypot(*(t[:, None, :] - router_xy[None, :, :]).transpose(2, 0, 1))
    assert (d.argmin(axis=1) == np.arange(terminals) // p).all()


def test_hop_levels_are_breadth_first_distances_from_compute_processors():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        a, b = rng.integers(0, n, (2, int(rng.integers(1, 3 * n))))
        compute = rng.random(n) < 0.3
        level = hop_levels(n, a, b, compute)
        # the reference: one processor at a time
        ref = {i: 0 for i in np.flatnonzero(compute).tolist()}
        frontier = list(ref)
        while frontier:
            nxt = []
            for i in frontier:
                for x, y in zip(a.tolist(), b.tolist()):
                    for u, v in ((x, y), (y, x)):
                        if u == i and v not in ref:
                            ref[v] = ref[i] + 1
                            nxt.append(v)
            frontier = nxt
        top = max(ref.values(), default=0) + 1
        assert level.tolist() == [ref.get(i, top) for i in range(n)]


def test_a_wrong_network_word_falls_back_to_the_links():
    # a fat tree that says it is a dragonfly of another size: levels from the links
    text = fattree_text(2, 3).replace("network = fattree 2 3", "network = dragonfly 9 4 2 2")
    _, _, where = laid_out(text)
    assert where.kind == "levels"


# ------------------------------------------------------------------ the grid view


def view_of(qtbot, text: str, size=(900, 700)) -> GridViewWindow:
    doc = Document()
    doc.new_from_text(text)
    return shown(qtbot, GridViewWindow(doc), size)


def colour_at(canvas, p: int) -> QColor:
    """The colour of processor p's box, below its number."""
    image: QImage = canvas.grab().toImage()
    pos = canvas.screen_point(p).toPoint() + QPoint(0, int(canvas.radius() * 0.75))
    return QColor(image.pixel(pos.x(), pos.y()))


def near(c: QColor, d: QColor) -> bool:
    return max(abs(c.red() - d.red()), abs(c.green() - d.green()), abs(c.blue() - d.blue())) < 30


def test_switches_are_drawn_apart_and_named_in_the_legend(qtbot):
    w = view_of(qtbot, fattree_text(2, 3))
    c = w.canvas
    assert c.place.kind == "fattree"
    assert "8 processors and 12 switches" in w.title.text()
    assert "switches:" in w.legend.text() and "2: switch" in w.legend.text()
    compute, switch = type_colour(1), type_colour(2, switch=True)
    assert near(colour_at(c, 1), compute) and not near(colour_at(c, 1), switch)
    assert near(colour_at(c, 9), switch)  # the first level-1 switch
    # a switch is a disc: the corner of its square is not filled, a processor's box is
    image = c.grab().toImage()
    r = c.radius() * 0.75
    for p, colour, filled in ((1, compute, True), (9, switch, False)):
        pos = (c.screen_point(p) + QPointF(-r, r)).toPoint()
        assert near(QColor(image.pixel(pos.x(), pos.y())), colour) == filled


def test_a_switch_is_selected_and_routed_like_a_processor(qtbot):
    w = view_of(qtbot, fattree_text(2, 3))
    c, sel = w.canvas, selection_of(w.document)
    QTest.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     c.screen_point(17).toPoint())  # fmt: skip
    assert sel.processors == (17,)  # a top-level switch, in the session's selection
    w._hovered("processor", 17)
    assert w.info.text().startswith("Switch 17 — type 2 (switch)")
    w._hovered("processor", 1)
    assert w.info.text().startswith("Processor 1 — type 1 (compute node)")
    QTest.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     c.screen_point(1).toPoint())  # fmt: skip
    route = index_of(w.hardware).route(17, 1)
    assert w.click_route == (route.processors, route.links)
    assert "Route 17 → 1" in w.info.text()
    # the route is drawn: its links in the route colour between the two
    mid = (c.screen_point(route.processors[1]) + c.screen_point(route.processors[2])) / 2
    image = c.grab().toImage()
    assert near(QColor(image.pixel(mid.toPoint())), QColor("#e0301e"))


def test_a_dragonfly_opens_as_groups_on_a_circle_with_its_global_links(qtbot):
    w = view_of(qtbot, dragonfly_text(9, 4, 2, 2))
    c = w.canvas
    assert c.place.kind == "dragonfly"
    assert "dragonfly" in w.title.text() and "72 processors and 36 switches" in w.title.text()
    # a global link (routers of two groups) is drawn: hover its middle and it is named
    _, _, pairs = dragonfly_pairs(9, 4, 2, 2)
    terminals = 72
    first_global = next(
        i for i, (x, y) in enumerate(pairs, start=1)
        if x > terminals and (x - terminals - 1) // 4 != (y - terminals - 1) // 4
    )  # fmt: skip
    x, y = pairs[first_global - 1]
    mid = (c.screen_point(x) * 0.4 + c.screen_point(y) * 0.6).toPoint()
    assert c.link_at(mid) == first_global


def test_a_six_dimensional_torus_is_nested_blocks_with_links_between_them(qtbot):
    text = generated_text(generate("torus", (4, 3, 2, 2, 3, 2), 1e-5, 1e-6))
    w = view_of(qtbot, text)
    c = w.canvas
    assert c.place.kind == "layers"
    assert c.seg_bow.any() and c.seg_wrap.any()
    assert "between blocks" in w.legend.text() and "wrap-around" in w.legend.text()
    # a link along dimension 2 (between blocks) is found where it is drawn, bowed
    hw = w.hardware
    stride = 4 * 3
    link = next(lk for lk in hw.links if abs(lk.connect[0] - lk.connect[1]) == stride)
    i = int(np.flatnonzero(c.seg_ids == link.id)[0])
    assert c.seg_bow[i]
    assert c.link_at(c.link_midpoint(link.id)) == link.id


def generated_text(topology) -> str:
    from parasol_core.syntax.loader import load
    from parasol_core.syntax.writer import dumps_canonical

    machine = load(Path(__file__).resolve().parents[2] / "sample_models" / "grid4x4.machine")
    topology.id = machine.hardware().id
    machine.topologies = [topology]
    machine.virtuals = []
    machine.topology_count = 1
    return dumps_canonical(machine)


def test_the_view_finds_what_it_shows_through_its_tiles(qtbot):
    """What is drawn and what is under the mouse come from the placement's tiles, not
    from every processor: the same answers as a look at every processor."""
    w = view_of(qtbot, generated_text(generate("torus", (12, 10, 8), 1e-5, 1e-6)))
    c = w.canvas
    rng = np.random.default_rng(4)
    for _ in range(12):
        c.zoom(float(rng.uniform(0.5, 2.5)), QPointF(*rng.uniform(0, 600, 2)))
        c.pan(*rng.uniform(-200, 200, 2))
        xy, m = c.screen_xy(), c.scale
        every = np.flatnonzero((xy[:, 0] >= -m) & (xy[:, 0] <= c.width() + m)
                               & (xy[:, 1] >= -m) & (xy[:, 1] <= c.height() + m))  # fmt: skip
        assert c.visible_indices().tolist() == every.tolist()
        for p in rng.choice(every + 1, size=min(5, every.size), replace=False).tolist():
            if c.radius() >= 2:
                assert c.processor_at(c.screen_point(p)) == p


def test_a_huge_model_zoomed_out_is_aggregated_and_zoomed_in_drawn_one_by_one(qtbot,
                                                                              monkeypatch):  # fmt: skip
    import piui.widgets.topology_canvas as canvas_module

    monkeypatch.setattr(canvas_module, "OVERVIEW_SIDE", 40)  # several units a pixel
    w = view_of(qtbot, generated_text(generate("torus", (30, 30, 9), 1e-5, 1e-6)))
    c = w.canvas
    assert c.is_overview()
    image, units, _ = c._overview_image()
    assert max(image.width(), image.height()) <= 41 and units > 1
    shot = c.grab().toImage()
    assert shot.width() > 0
    # a processor of the overview covers less than two pixels; zoomed in, boxes
    c.zoom(30.0 / c.scale, c.screen_point(1))
    assert not c.is_overview()
    assert near(colour_at(c, 1), type_colour(1))


def test_a_grid_with_switches_in_it_stays_a_grid():
    """Switches make a tree of levels only where nothing better is known: a torus by
    its shape comment (or links of two dimensions) is drawn as a grid, its switches
    apart; a star of three (a 'line' by its links) is a tree."""
    topo = generate("torus", (4, 4), 1e-5, 1e-6)
    mask = np.zeros(17, dtype=bool)
    mask[[6, 11]] = True
    assert placement(topo, switches=mask).kind == "grid"
    topo.shape = None  # inferred from the links: still two dimensions
    assert placement(topo, switches=mask).kind == "grid"
    machine, hw, where = laid_out(
        fattree_text(2, 1).replace("fattree 2 1", "fattree 9 9")  # a wrong word
    )
    assert where.kind == "levels" and where.levels.tolist() == [0, 0, 1]


def test_marking_a_type_as_a_switch_redraws_its_processors_as_switches(qtbot):
    w = view_of(qtbot, fattree_text(2, 3))
    session = w.document.session
    session.set_value("pr(2).role", None)  # the switches are processors now
    assert not w.canvas.switches.any() and "switches:" not in w.legend.text()
    assert w.canvas.place.kind == "fattree"  # the network word still says what it is
    session.undo()
    assert w.canvas.switches.sum() == 12 and "switches:" in w.legend.text()


@pytest.mark.parametrize("kind, dims", [("fattree", (3, 3)), ("fattree2", (24, 12, 8)),
                                        ("fattree3", (4, 2, 4, 2, 3))])  # fmt: skip
def test_every_generated_fat_tree_is_drawn_in_layers_by_its_numbering(kind, dims):
    """Each fat tree the generator makes (k-ary n-tree, two and three levels with port
    counts) is laid out from its network word, compute processors at the bottom and each
    level of switches in its own row, in the generator's numbering."""
    from parasol_core.topology.switched import FatTree

    topo = generate(kind, dims, 1e-6, 1e-9)
    where = placement(topo)
    tree = FatTree.of(kind, dims)
    assert where.kind == "fattree"
    expected = np.repeat(np.arange(tree.levels + 1), (tree.compute, *tree.level_sizes))
    assert where.levels.tolist() == expected.tolist()
    rows = [where.xy[where.levels == lv, 1] for lv in range(tree.levels + 1)]
    assert all(np.all(r == r[0]) for r in rows[1:])  # compute processors: blocks, below
    assert all(rows[lv][0] < rows[lv - 1].min() for lv in range(1, len(rows)))
