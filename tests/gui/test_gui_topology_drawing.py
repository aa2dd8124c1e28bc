"""The fast drawing of the topology canvas (offscreen, real widgets): what the screen
shows (a repaint of an unchanged view comes from cached layers) equals drawing every
shape afresh, after pans, swaps, hovers and selections; paths built from numpy arrays
equal those built call by call; a swap in the mapping editor follows the mapping
incrementally and still equals the core."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QImage, QPainter, QPainterPath
from PySide6.QtTest import QTest
from test_gui_topology import TORUS, shown

from parasol_core.topology import generate
from parasol_core.topology.mapping import make_mapping, mapping_quality
from piui.widgets.topology_canvas import (
    VIRTUAL_AA_LIMIT,
    clip_segments,
    lines_path,
    quads_path,
)
from piui.windows.grid_view import GridViewWindow
from piui.windows.mapping_editor import MappingEditorWindow


def drag(canvas, src: int, dst: int) -> None:
    at = canvas.screen_point
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     at(src).toPoint())  # fmt: skip
    for t in (0.3, 0.7, 1.0):
        QTest.mouseMove(canvas, (at(src) + (at(dst) - at(src)) * t).toPoint())
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       at(dst).toPoint())  # fmt: skip


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1)
    return data[:, : image.width() * 4].reshape(image.height(), image.width(), 4).astype(np.int16)


def on_screen(canvas) -> np.ndarray:
    """What the canvas shows: its paintEvent; painted twice, so that the second paint
    of the unchanged view comes from the cached layers."""
    canvas.grab()
    return pixels(canvas.grab().toImage())


def drawn_afresh(canvas) -> np.ndarray:
    """Every shape drawn now, no cache (as the SVG export draws)."""
    image = QImage(canvas.size(), QImage.Format.Format_RGB32)
    image.fill(canvas.palette().base().color())
    painter = QPainter(image)
    painter.setFont(canvas.font())
    canvas.paint(painter)
    painter.end()
    return pixels(image)


def assert_same_picture(canvas) -> None:
    a, b = on_screen(canvas), drawn_afresh(canvas)
    assert a.shape == b.shape
    differ = np.abs(a - b).max(axis=2) > 40
    # the same picture: at most a few antialiased edge pixels differ
    assert differ.mean() < 0.002, f"{differ.sum()} pixels differ"


def test_paths_from_arrays_equal_paths_built_call_by_call():
    rng = np.random.default_rng(3)
    a, c, b = rng.uniform(0, 300, (3, 7, 2))
    slow = QPainterPath()
    for i in range(7):
        slow.moveTo(QPointF(*a[i]))
        slow.quadTo(QPointF(*c[i]), QPointF(*b[i]))
    fast = quads_path(a, c, b)
    assert fast.elementCount() == slow.elementCount()
    for i in range(fast.elementCount()):
        e, f = slow.elementAt(i), fast.elementAt(i)
        assert (e.type, e.x, e.y) == pytest.approx((f.type, f.x, f.y))
    lines = lines_path(a, b)
    assert lines.elementCount() == 14
    assert (lines.elementAt(3).x, lines.elementAt(3).y) == pytest.approx(tuple(b[1]))
    assert quads_path(a[:0], c[:0], b[:0]).isEmpty()


def test_clipped_segments_keep_exactly_the_part_inside():
    rng = np.random.default_rng(5)
    seg = rng.uniform(-50, 150, (400, 4))
    seg[:20, 2:] = seg[:20, :2]  # points
    seg[20:40, 2] = seg[20:40, 0]  # vertical
    cut = clip_segments(seg, 0, 10, 100, 90)
    inside = (cut[:, [0, 2]] >= -1e-9).all() & (cut[:, [0, 2]] <= 100 + 1e-9).all()
    assert inside and (cut[:, [1, 3]] >= 10 - 1e-9).all() and (cut[:, [1, 3]] <= 90 + 1e-9).all()
    # a segment is kept when some point of it is inside, and its kept length is the
    # length of that part (sampled)
    t = np.linspace(0, 1, 2001)[None, :, None]
    pts = seg[:, None, :2] + (seg[:, None, 2:] - seg[:, None, :2]) * t
    ok = (pts[..., 0] >= 0) & (pts[..., 0] <= 100) & (pts[..., 1] >= 10) & (pts[..., 1] <= 90)
    hit = ok.any(axis=1)
    assert cut.shape[0] == int(hit.sum())
    full = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])[hit]
    sampled = ok[hit].mean(axis=1) * full
    kept = np.hypot(cut[:, 2] - cut[:, 0], cut[:, 3] - cut[:, 1])
    assert kept == pytest.approx(sampled, abs=0.2)


def test_the_screen_equals_a_fresh_drawing_through_pans_swaps_and_highlights(qtbot, document):
    doc = document()
    grid = shown(qtbot, GridViewWindow(doc))
    grid.virtual_box.setCurrentIndex(grid.virtual_box.findData(TORUS))
    editor = shown(qtbot, MappingEditorWindow(doc))
    editor.select_virtual(TORUS)
    editor.seed.setValue(3)
    editor.apply_scheme("random")
    for canvas in (grid.canvas, editor.canvas):
        assert_same_picture(canvas)
    before = on_screen(grid.canvas)
    # pans, each followed by paints of the unchanged view (layers)
    for dx, dy in ((7, 5), (-3, 11), (150, 0), (400, -300), (2.5, 0.5)):
        grid.canvas.pan(dx, dy)
        assert_same_picture(grid.canvas)
    grid.canvas.fit()
    assert np.array_equal(on_screen(grid.canvas), before)
    # a swap moves the dotted links and the numbers in both views
    editor.swap(1, 16)
    for canvas in (grid.canvas, editor.canvas):
        assert_same_picture(canvas)
    assert not np.array_equal(on_screen(grid.canvas), before)
    # highlights: a route, a selection, the busiest links, a zoom
    grid.show_virtual_route(1, 2)
    grid.canvas.select([6, 7], [int(grid.canvas.seg_ids[0])])
    assert_same_picture(grid.canvas)
    grid.canvas.zoom(1.7, QPointF(100, 120))
    assert_same_picture(grid.canvas)
    # an undo brings the first picture back
    grid.canvas.select([])
    grid.canvas.set_route((), ())
    grid.hover_route = None
    doc.session.undo()
    grid.canvas.fit()
    assert np.array_equal(on_screen(grid.canvas), before)


def test_wrap_links_and_dense_virtual_links_equal_a_fresh_drawing(qtbot, document):
    doc = document()
    hw = doc.machine.hardware()
    doc.session.replace_topology(hw.id, generate("torus", (4, 4), 1e-5, 1e-7, id=hw.id))
    grid = shown(qtbot, GridViewWindow(doc))
    assert grid.canvas.seg_wrap.any()
    assert_same_picture(grid.canvas)
    gcel = document("parsytec-gcel.machine")
    editor = shown(qtbot, MappingEditorWindow(gcel))
    editor.select_virtual(gcel.session.new_virtual("2Dtorus").id)
    editor.apply_scheme("random")
    assert len(editor.canvas.virtual_pairs) > VIRTUAL_AA_LIMIT  # drawn thin and aliased
    assert_same_picture(editor.canvas)
    editor.swap(3, 300)
    assert_same_picture(editor.canvas)


def test_drags_on_gcel_give_the_core_mapping_and_figures(qtbot, document):
    """Drag and drop on a big model: the incrementally kept figures are the core's."""
    doc = document("parsytec-gcel.machine")
    w = shown(qtbot, MappingEditorWindow(doc), size=(900, 900))
    virt = doc.session.new_virtual("2Dtorus")
    w.select_virtual(virt.id)
    w.seed.setValue(11)
    w.apply_scheme("random")
    assert doc.machine.virtual(virt.id).mapping == make_mapping(doc.machine, virt.id, "random",
                                                                seed=11)  # fmt: skip
    for src, dst in ((1, 512), (17, 18), (200, 40), (18, 17)):
        expected = dict(doc.machine.virtual(virt.id).mapping)
        on_src = [v for v, h in expected.items() if h == src]
        on_dst = [v for v, h in expected.items() if h == dst]
        expected.update({v: dst for v in on_src})
        expected.update({v: src for v in on_dst})
        drag(w.canvas, src, dst)
        assert doc.machine.virtual(virt.id).mapping == expected
        assert w.quality == mapping_quality(doc.machine, virt.id)
    for _ in range(4):
        doc.session.undo()
    assert w.quality == mapping_quality(doc.machine, virt.id)
    # a change to more than the mapping (the routing) rebuilds the figures
    doc.session.set_value(f"vt({virt.id}).routing", "XY", label="routing")
    assert w.quality == mapping_quality(doc.machine, virt.id)


def test_the_svg_export_draws_shapes_not_sprites(qtbot, document, tmp_path):
    doc = document()
    grid = shown(qtbot, GridViewWindow(doc))
    grid.canvas.grab()
    grid.canvas.export_svg(str(tmp_path / "view.svg"))
    text = (tmp_path / "view.svg").read_text()
    assert "<image" not in text  # the processors' boxes as vector shapes
    assert all(f">{p}</text>" in text for p in range(1, 17))  # their numbers as text
