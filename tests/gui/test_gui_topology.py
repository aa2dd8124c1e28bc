"""The topology windows, driven through their real widgets (offscreen): the grid view,
the mapping editor (drag and drop), link groups and the topology editor."""

from __future__ import annotations

import pytest
from gui_actions import shown
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QScrollArea

from parasol_core.base.words import counted
from parasol_core.model import Timing
from parasol_core.session import Session
from parasol_core.syntax.loader import load
from parasol_core.topology import generate
from parasol_core.topology.mapping import make_mapping, mapping_quality, mapping_schemes
from parasol_core.topology.virtual import virtual_route
from piui.widgets.topology_selection import selection_of
from piui.windows.grid_view import WIDTH_BY, GridViewWindow
from piui.windows.link_groups import LinkGroupsWindow
from piui.windows.mapping_editor import MappingEditorWindow

TORUS = 3  # the 2D torus of grid4x4.machine


def at(canvas, p: int) -> QPoint:
    return canvas.screen_point(p).toPoint()


def random_mapping_editor(qtbot, doc, seed: int) -> MappingEditorWindow:
    """The mapping editor shown on the 2D torus, mapped at random with ``seed``."""
    w = shown(qtbot, MappingEditorWindow(doc))
    w.select_virtual(TORUS)
    w.seed.setValue(seed)
    w.apply_scheme("random")
    return w


def drag(canvas, src: int, dst: int) -> None:
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     at(canvas, src))  # fmt: skip
    a, b = canvas.screen_point(src), canvas.screen_point(dst)
    for t in (0.3, 0.7, 1.0):
        QTest.mouseMove(canvas, (a + (b - a) * t).toPoint())
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       at(canvas, dst))  # fmt: skip


def test_the_drag_preview_names_the_hardware_target_and_the_virtual_on_it(qtbot, document):
    doc = document()
    w = random_mapping_editor(qtbot, doc, seed=3)
    mapping = doc.machine.virtual(TORUS).mapping
    v_src, v_dst = sorted(mapping)[:2]
    src, dst = mapping[v_src], mapping[v_dst]
    previews = []
    w.canvas.dragMoved.connect(lambda a, b: previews.append(w.preview.text()))
    drag(w.canvas, src, dst)
    assert any(f"if dropped on hardware {dst} (virtual {v_dst})" in t for t in previews)
    assert doc.machine.virtual(TORUS).mapping[v_src] == dst


def test_draw_the_torus_onto_the_grid_by_drag_and_drop(qtbot, document):
    doc = document()
    w = random_mapping_editor(qtbot, doc, seed=7)
    start = dict(doc.machine.virtual(TORUS).mapping)
    assert start == make_mapping(doc.machine, TORUS, "random", seed=7)
    target = make_mapping(doc.machine, TORUS, "row-major")  # the torus laid on the grid
    assert start != target
    previews = []
    w.canvas.dragMoved.connect(lambda a, b: previews.append(w.preview.text()))
    steps = 0
    for v in sorted(target):
        here = doc.machine.virtual(TORUS).mapping[v]
        if here != target[v]:
            drag(w.canvas, here, target[v])
            steps += 1
            assert doc.machine.virtual(TORUS).mapping[v] == target[v]
    assert steps > 0
    assert doc.machine.virtual(TORUS).mapping == target
    core = mapping_quality(doc.machine, TORUS)
    assert w.quality == core
    assert f"max {core.dilation_max}" in w.metrics.text()
    assert f"<b>congestion</b> {core.congestion}" in w.metrics.text()
    # while dragging, the figures for the mapping under the cursor were shown
    assert any("if dropped on" in text and "dilation" in text for text in previews)
    # the processors show the virtual numbers now on them
    assert w.canvas.labels[target[5] - 1] == "5"
    # each drop is one undo step
    for _ in range(steps):
        doc.session.undo()
    assert doc.machine.virtual(TORUS).mapping == start


def test_the_drag_preview_is_the_core_quality_of_the_swapped_mapping(qtbot, document):
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    w.select_virtual(TORUS)
    mapping = dict(doc.machine.virtual(TORUS).mapping)
    QTest.mousePress(w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     at(w.canvas, 1))  # fmt: skip
    QTest.mouseMove(w.canvas, at(w.canvas, 16))
    swapped = dict(mapping)
    v1 = next(v for v, h in mapping.items() if h == 1)
    v16 = next(v for v, h in mapping.items() if h == 16)
    swapped[v1], swapped[v16] = 16, 1
    q = mapping_quality(doc.machine, TORUS, swapped)
    assert f"max {q.dilation_max}, mean {q.dilation_mean:.3g}" in w.preview.text()
    QTest.mouseRelease(w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                       at(w.canvas, 16))  # fmt: skip
    assert doc.machine.virtual(TORUS).mapping == swapped
    assert w.quality == q
    if q.congestion > 1:
        assert w.canvas.hot_links == set(q.congested_links)


def test_every_mapping_scheme_applies(qtbot, document):
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    w.select_virtual(TORUS)
    for row in range(w.schemes.count()):
        name = w.schemes.item(row).data(Qt.ItemDataRole.UserRole)
        w.schemes.setCurrentRow(row)
        w.apply_scheme()
        expected = make_mapping(doc.machine, TORUS, name, seed=w.seed.value())
        assert doc.machine.virtual(TORUS).mapping == expected, name
        assert w.quality == mapping_quality(doc.machine, TORUS)
    assert [w.schemes.item(r).data(Qt.ItemDataRole.UserRole)
            for r in range(w.schemes.count())] == mapping_schemes()  # fmt: skip


def _answer_add_dialog(monkeypatch, **choices):
    """The Add… dialog, answered as a user would: pick what ``choices`` say, press OK."""
    from PySide6.QtWidgets import QDialog

    from piui.widgets.add_virtual_dialog import AddVirtualDialog

    def accept(dialog):
        if "routing" in choices:
            dialog.routing.setCurrentIndex(dialog.routing.findData(choices["routing"]))
        if "count" in choices:
            dialog.count.setValue(choices["count"])
        if "name" in choices:
            dialog.name.setText(choices["name"])
            dialog.name.textEdited.emit(choices["name"])
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(AddVirtualDialog, "exec", accept)


def test_add_by_the_button_makes_a_valid_savable_virtual_topology(qtbot, document, tmp_path,
                                                                  monkeypatch):  # fmt: skip
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    before = len(doc.machine.virtuals)
    errors = sum(d.is_error for d in doc.session.revalidate())
    _answer_add_dialog(monkeypatch, routing="2Dtorus")
    qtbot.mouseClick(w.add_button, Qt.MouseButton.LeftButton)
    assert len(doc.machine.virtuals) == before + 1
    virt = doc.machine.virtuals[-1]
    assert (virt.routing, virt.name, virt.processor_count) == ("2Dtorus", "2Dtorus on 16", 16)
    assert virt.mapping == {p: p for p in range(1, 17)}
    assert virt.id == max(v.id for v in doc.machine.virtuals[:-1]) + 1  # virtual ids only
    assert w.virtual() is virt and w.quality == mapping_quality(doc.machine, virt.id)
    assert sum(d.is_error for d in doc.session.revalidate()) == errors
    doc.save(tmp_path / "added.machine")  # nothing the GUI creates is unsavable
    assert load(tmp_path / "added.machine").virtual(virt.id).routing == "2Dtorus"
    w.remove_virtual()
    assert len(doc.machine.virtuals) == before
    doc.session.undo()
    assert doc.machine.virtual(virt.id) is not None


def test_a_virtual_topologys_name_id_and_count_are_editable(qtbot, document, monkeypatch):
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    _answer_add_dialog(monkeypatch, routing="1Dtorus", count=8)
    qtbot.mouseClick(w.add_button, Qt.MouseButton.LeftButton)
    virt = doc.machine.virtuals[-1]
    assert virt.name == "1Dtorus on 8" and len(virt.mapping) == 8
    w.count_edit.setValue(12)
    w.count_edit.editingFinished.emit()
    assert virt.processor_count == 12 and virt.name == "1Dtorus on 12"
    assert sorted(virt.mapping) == list(range(1, 13))
    w.name_edit.setText("ring of twelve")
    w.name_edit.editingFinished.emit()
    w.id_edit.setValue(40)
    w.id_edit.editingFinished.emit()
    assert (virt.id, virt.name) == (40, "ring of twelve")
    assert w.virtual() is virt
    taken = doc.machine.virtuals[0].id
    w.id_edit.setValue(taken)
    w.id_edit.editingFinished.emit()
    assert virt.id == 40 and "already" in w.message.text()
    assert not [d for d in doc.session.revalidate() if d.is_error]


def test_the_mapping_as_text_typed_and_pasted(qtbot, document):
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    v = w.virtual()
    assert w.mapping_edit.text() == " ".join(str(v.mapping[k]) for k in range(1, 17))
    reverse = " ".join(str(h) for h in range(16, 0, -1))
    w.mapping_edit.setFocus()
    w.mapping_edit.selectAll()
    qtbot.keyClicks(w.mapping_edit, reverse)
    qtbot.keyClick(w.mapping_edit, Qt.Key.Key_Return)
    assert v.mapping == {k: 17 - k for k in range(1, 17)}
    assert doc.session.history.undo_label.startswith("Type the mapping")
    w.mapping_edit.setText("1 2 3")
    qtbot.keyClick(w.mapping_edit, Qt.Key.Key_Return)
    assert "16 processors" in w.message.text() and v.mapping[1] == 16
    w.mapping_edit.setText(" ".join(["99"] + [str(h) for h in range(2, 17)]))
    qtbot.keyClick(w.mapping_edit, Qt.Key.Key_Return)
    assert "virtual processor 1" in w.message.text() and "not 99" in w.message.text()


def test_the_scheme_list_shows_what_the_mapping_is(qtbot, document):
    doc = document()
    w = shown(qtbot, MappingEditorWindow(doc))
    w.apply_scheme("identity")
    assert w.schemes.currentItem().data(Qt.ItemDataRole.UserRole) == "identity"
    w.swap(1, 2)  # a manual swap: no scheme any more
    assert w.schemes.currentItem() is None and not w.apply_scheme_button.isEnabled()
    doc.session.undo()
    assert w.schemes.currentItem().data(Qt.ItemDataRole.UserRole) == "identity"


def test_the_grid_view_and_the_mapping_editor_share_the_virtual_topology(qtbot, document,
                                                                         monkeypatch):  # fmt: skip
    doc = document()
    grid = shown(qtbot, GridViewWindow(doc))
    w = shown(qtbot, MappingEditorWindow(doc))
    _answer_add_dialog(monkeypatch, routing="1Dtorus")
    qtbot.mouseClick(w.add_button, Qt.MouseButton.LeftButton)
    added = doc.machine.virtuals[-1].id
    assert grid.virtual_box.currentData() == added  # the editor's choice, drawn
    first = doc.machine.virtuals[0].id
    grid.virtual_box.setCurrentIndex(grid.virtual_box.findData(first))
    assert w.virtual().id == first
    w.remove_virtual()  # the chosen one goes: both fall back to the first left
    left = doc.machine.virtuals[0].id
    assert left != first
    assert grid.virtual_box.currentData() == w.virtual().id == left


def test_arrow_steps_on_the_all_links_slider_are_one_bulk_undo_step(qtbot, document):
    """Issue 22: the 'all links' slider applies a step to every link in one bulk
    operation of the session (one SetMany, no SetField per link); a run of steps is one
    undo step that puts every link's own speed back."""
    from parasol_core.session.history import SetField, SetMany

    doc = document("parsytec-gcel.machine")
    hw = doc.machine.hardware()
    assert len(hw.links) > Session.BULK
    speeds = [lk.speed for lk in hw.links]
    w = shown(qtbot, LinkGroupsWindow(doc))
    w.set_group("all")
    w.speed.mantissa.setFocus()
    for _ in range(3):
        qtbot.keyClick(w.speed.mantissa, Qt.Key.Key_Right)
    [step] = doc.session.history.steps
    assert [type(m) for m in step.mutations] == [SetMany]
    assert not any(isinstance(m, SetField) for m in step.mutations)
    assert list(step.mutations[0].links) == list(hw.links)
    shown_value = w.speed.value()
    assert all(lk.speed.mean == shown_value for lk in hw.links)
    assert w.note.text() == f"{counted(len(hw.links), 'link')}. "
    doc.session.undo()
    assert [lk.speed for lk in hw.links] == speeds
    assert w.speed.value() == speeds[0].mean


def test_the_x_link_group_moves_maxtotalspd(qtbot, document):
    doc = document()
    w = shown(qtbot, LinkGroupsWindow(doc))
    hw = doc.machine.hardware()
    w.set_group("X")
    x_ids = w.group_ids()
    old = doc.engine.value("mc.maxtotalspd")
    y_speeds = {lk.id: lk.speed for lk in hw.links if lk.id not in x_ids}
    w.speed.field.setFocus()
    w.speed.field.selectAll()
    qtbot.keyClicks(w.speed.field, "4e-07")
    qtbot.keyClick(w.speed.field, Qt.Key.Key_Return)
    assert all(lk.speed.mean == 4e-07 for lk in hw.links if lk.id in x_ids)
    assert {lk.id: lk.speed for lk in hw.links if lk.id not in x_ids} == y_speeds
    new = doc.engine.value("mc.maxtotalspd")
    assert new != old
    assert new == Session.from_text(doc.session.text()).engine.value("mc.maxtotalspd")
    assert f"{new:.6g}" in w.maxtotalspd.text()
    # a slider drag is one undo step
    w.latency.mantissa.sliderPressed.emit()
    for v in (300, 400, 500):
        w.latency.mantissa.setValue(v)
    w.latency.mantissa.sliderReleased.emit()
    assert all(lk.latency.mean == pytest.approx(5e-05) for lk in hw.links if lk.id in x_ids)
    doc.session.undo()
    assert all(lk.latency.mean == 2.85e-05 for lk in hw.links if lk.id in x_ids)


def test_select_four_links_in_the_grid_view_and_edit_one(qtbot, document):
    doc = document()
    grid = shown(qtbot, GridViewWindow(doc))
    groups = shown(qtbot, LinkGroupsWindow(doc))
    c = grid.canvas
    # a rubber band around processors 1, 2, 5 and 6 takes the four links between them
    a, b = c.screen_point(1), c.screen_point(6)
    r = c.radius() + 6
    start, end = QPointF(a.x() - r, a.y() - r).toPoint(), QPointF(b.x() + r, b.y() + r).toPoint()
    QTest.mousePress(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(c, end)
    QTest.mouseRelease(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    hw = doc.machine.hardware()
    inside = {1, 2, 5, 6}
    expected = sorted(lk.id for lk in hw.links if set(lk.connect) <= inside)
    assert len(expected) == 4
    assert list(selection_of(doc).links) == expected
    assert c.selected_processors() == sorted(inside)
    assert groups.group_box.currentData() == "selected"
    assert groups.group_ids() == expected
    assert sorted(groups.single_edits) == expected
    one = expected[2]
    field = groups.single_edits[one][1].field
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, "2e-06")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    speeds = {lk.id: lk.speed.mean for lk in hw.links}
    assert speeds[one] == 2e-06
    assert all(speeds[i] == 9.1e-07 for i in speeds if i != one)


def hover(widget, point: QPoint) -> None:
    from PySide6.QtCore import QEvent, QPointF
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    pos = QPointF(point)
    event = QMouseEvent(QEvent.Type.MouseMove, pos, widget.mapToGlobal(pos),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier)  # fmt: skip
    QApplication.sendEvent(widget, event)


def test_hover_a_virtual_link_shows_its_route(qtbot, document):
    doc = document()
    w = shown(qtbot, GridViewWindow(doc))
    w.virtual_box.setCurrentIndex(w.virtual_box.findData(TORUS))
    pair = (1, 4)  # a wrap-around link of the virtual torus: three hops on the XY grid
    # a mouse move event straight to the view: QTest.mouseMove sends none when the
    # (shared, offscreen) cursor is already at that spot from an earlier test
    hover(w.canvas, w.canvas.virtual_midpoint(pair).toPoint())
    r = virtual_route(doc.machine, TORUS, *pair)
    assert set(w.canvas.route_links) == set(r.links)
    assert "Virtual link 1–4" in w.info.text()
    assert " → ".join(map(str, r.processors)) in w.info.text()
    # hovering a processor names its type and its virtual processors
    hover(w.canvas, at(w.canvas, 6))
    assert w.info.text().startswith("Processor 6 — type 1")
    assert "virtual topology 3: 6" in w.info.text()


def test_click_two_processors_shows_the_route(qtbot, document):
    doc = document()
    w = shown(qtbot, GridViewWindow(doc))
    for p in (1, 16):
        QTest.mouseClick(w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         at(w.canvas, p))  # fmt: skip
    from parasol_core.topology.index import route

    r = route(doc.machine.hardware(), 1, 16)
    assert w.canvas.route_links == set(r.links)
    assert w.canvas.route_processors == set(r.processors)


def test_zoom_pan_and_fit(qtbot, document):
    doc = document()
    w = shown(qtbot, GridViewWindow(doc))
    c = w.canvas
    scale = c.scale
    p = at(c, 6)
    QTest.keyClick(c, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert c.scale == pytest.approx(scale * 1.25)
    QTest.keyClick(c, Qt.Key.Key_Left)
    assert at(c, 6) != p
    QTest.keyClick(c, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert c.scale == pytest.approx(scale)
    assert at(c, 6) == p


def test_open_gcel_and_a_32_cubed_torus(qtbot, document, tmp_path):
    doc = document("parsytec-gcel.machine")
    w = shown(qtbot, GridViewWindow(doc))
    assert w.canvas.place.count == 512
    assert w.canvas.place.kind == "grid"
    assert not w.grab().isNull()
    hw = doc.machine.hardware()
    doc.session.replace_topology(hw.id, generate("torus", (32, 32, 32), 1e-5, 1e-6, id=hw.id))
    assert w.canvas.place.count == 32768
    assert w.canvas.place.kind == "layers"
    assert w.canvas.is_overview()
    assert not w.canvas.grab().isNull()
    w.canvas.zoom(60.0, QPointF(5, 5))
    assert not w.canvas.is_overview()
    assert not w.canvas.grab().isNull()
    assert int(w.canvas.seg_wrap.sum()) == 3 * 32 * 32
    w.canvas.export_svg(str(tmp_path / "view.svg"))
    assert (tmp_path / "view.svg").read_text().lstrip().startswith("<?xml")


def test_generate_a_torus_over_the_grid_preview_apply_undo(qtbot, document, tmp_path):
    from parasol_core.topology.compare import compare_topologies
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    original = doc.path.read_bytes()
    w = shown(qtbot, TopologyEditorWindow(doc))
    old = doc.machine.hardware()
    w.kind.setCurrentText("torus")
    w.sizes.setText("4 4")
    change = w.preview()
    expected = compare_topologies(old, generate("torus", (4, 4), float(w.gen_latency.text()),
                                                float(w.gen_speed.text())))  # fmt: skip
    assert [lk.connect for lk in change.added] == [lk.connect for lk in expected.added]
    assert change.removed == expected.removed == []
    assert len(change.added) == 8  # the wrap-around links of a 4 x 4 torus
    assert "adds 8 links" in w.preview_text.toPlainText()
    assert w.apply_button.isEnabled()
    w.apply_button.click()
    hw = doc.machine.hardware()
    assert hw is not old and hw.routing == "2Dtorus" and len(hw.links) == 32
    assert hw.types == old.types
    shown_text = w.preview_text.toPlainText()  # what was applied, not a stale preview
    assert "adds 8 links" in shown_text and shown_text.endswith("Undo takes it back)")
    assert "changed since the preview" not in shown_text
    doc.session.undo()
    assert doc.machine.hardware() is old
    out = tmp_path / "saved.machine"
    doc.save(out)
    assert out.read_bytes() == original


def test_a_preview_survives_a_rename_and_not_a_changed_link(qtbot, document):
    """Issue 37: the preview was voided by renaming the topology (the editor compared a
    tuple it built afresh by identity); the session's topology version decides now."""
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    old = doc.machine.hardware()
    w.kind.setCurrentText("torus")
    w.sizes.setText("4 4")
    assert w.preview() is not None and w.apply_button.isEnabled()
    w.name_edit.setText("renamed after the preview")
    w.name_edit.editingFinished.emit()
    assert old.name == "renamed after the preview"
    assert w.apply_button.isEnabled()
    assert "changed since the preview" not in w.preview_text.toPlainText()
    w.apply_button.click()
    hw = doc.machine.hardware()
    assert hw is not old and hw.routing == "2Dtorus" and len(hw.links) == 32

    doc.session.undo()
    assert doc.machine.hardware() is old
    assert w.preview() is not None and w.apply_button.isEnabled()
    doc.session.set_links(old.id, [1], latency=Timing(1e-3))  # a link changed
    assert not w.apply_button.isEnabled()
    assert w.preview_text.toPlainText() == ("The topology changed since the preview: "
                                            "Preview again.")  # fmt: skip
    w.apply()  # refused: nothing pending
    assert doc.machine.hardware() is old and old.links[0].latency == Timing(1e-3)


def test_topology_fields_types_and_single_links(qtbot, document):
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    hw = doc.machine.hardware()
    w.routing.setCurrentIndex(w.routing.findData("YX"))
    w.routing.activated.emit(w.routing.currentIndex())
    assert hw.routing == "YX"
    selection_of(doc).set(hw.id, [3, 4], [])
    doc.session.add_processor()
    new_type = doc.machine.processors[-1].id
    w.type_box.setCurrentIndex(w.type_box.findData(new_type))
    w.set_type.click()
    assert hw.types[3] == hw.types[4] == new_type and hw.types[5] == 1
    doc.session.undo()
    assert hw.types[3] == 1
    n = len(hw.links)
    link = w.add_link(1, 16)
    assert len(hw.links) == n + 1 and hw.links[-1].connect == [1, 16]
    selection_of(doc).set(hw.id, [], [link.id, 1])
    w.remove_links.click()
    assert len(hw.links) == n - 1 and all(lk.id not in (1, link.id) for lk in hw.links)
    doc.session.undo()
    assert len(hw.links) == n + 1


def test_main_window_goes_to_links_and_mappings(qtbot, sample_copy):
    from parasol_core.base.diagnostics import Diagnostic
    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.document.open(sample_copy("grid4x4.machine"))
    grid = window.panels["grid-view"]
    window.go_to(Diagnostic("error", "x", target=("topology", 1, "link", 7)))
    assert grid.canvas.selected_links == {7}
    window.go_to(Diagnostic("error", "x", target=("virtual", TORUS)))
    assert grid.virtual_box.currentData() == TORUS
    window.overview.topologyActivated.emit("virtual", 2)
    assert window.panels["mapping-editor"].virtual().id == 2


def test_the_mapping_editor_shows_forwarding_figures_on_hardware_with_a_cost(
    qtbot, document, tmp_path
):
    from parasol_core.topology.mapping import forwarding_figures

    doc = document()
    w = random_mapping_editor(qtbot, doc, seed=7)
    assert "forwarding" not in w.metrics.text()  # a 1994 model: as before
    doc.machine.hardware().forward = 6.083333333333333e-07  # PAMELA's T800, per byte
    w.refresh_quality_only()
    core = mapping_quality(doc.machine, TORUS)
    figures = forwarding_figures(doc.machine, core)
    assert figures.forwarded_hops == round(core.virtual_links * (core.dilation_mean - 1)) > 0
    assert figures.worst_per_byte == pytest.approx(9.1e-07 + 6.083333333333333e-07)
    assert (
        f"<b>forwarding</b> {counted(figures.forwarded_hops, 'hop')} forwarded" in w.metrics.text()
    )
    assert "1.518e-06 s/byte" in w.metrics.text()
    qtbot.wait(50)  # the label re-laid out (docs/screenshots/mapping-forwarding.png)
    assert w.grab().save(str(tmp_path / "mapping-forwarding.png"))


def test_generate_a_4d_torus_in_the_editor_and_show_it(qtbot, document):
    """Issue 21: the sizes field takes 4 to 6 sizes; the N-D torus applies, routes by
    NDtorus, and the grid view and link groups still open on it."""
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("torus")
    # the field says how many sizes it takes (it said "W [H [D]]")
    assert "1 to 6" in w.sizes.placeholderText() and "1 to 6" in w.sizes.toolTip()
    w.sizes.setText("3 2 2 3")
    change = w.preview()
    assert change is not None and w.apply_button.isEnabled()
    w.apply_button.click()
    hw = doc.machine.hardware()
    assert hw.routing == "NDtorus" and hw.shape == (3, 2, 2, 3) and len(hw.links) == 108
    assert w.routing.findData("NDtorus") >= 0 and w.routing.findData("shortest") >= 0
    view = shown(qtbot, GridViewWindow(doc))
    assert not view.canvas.grab().isNull()
    groups = shown(qtbot, LinkGroupsWindow(doc))
    assert groups is not None


def test_hovering_a_link_and_widths_by_speed_read_the_link_store(qtbot, document):
    """A hovered link is found by id (not by a walk over every link) and says its
    timings; widths by speed come from the store's columns, the edited link's too."""
    doc = document()
    w = shown(qtbot, GridViewWindow(doc))
    hw = doc.machine.hardware()
    link = hw.links[5]
    hover(w.canvas, w.canvas.link_midpoint(link.id).toPoint())
    assert w.info.text().startswith(f"Link {link.id}: connects ")
    assert f"{link.speed.mean:g} s per byte" in w.info.text()
    doc.session.set_value(f"tl({hw.id})({link.id}).speed", link.speed.scaled(4))
    w.width_box.setCurrentIndex(WIDTH_BY.index("speed"))
    widths = w.canvas.link_width
    assert set(widths) == {lk.id for lk in hw.links}
    assert widths[link.id] == 1.0  # the slowest link now: the widest
    assert all(v < 1.0 for k, v in widths.items() if k != link.id)


@pytest.mark.parametrize(
    "sizes, latency, speed, says",
    [
        ("abc", "2.85e-05", "9.1e-07", "'abc' is not a number: a size is needed"),
        ("4 0", "2.85e-05", "9.1e-07", "'0' is not a positive whole number"),
        ("4 2.5", "2.85e-05", "9.1e-07", "'2.5' is not a size"),
        ("4 4", "fast", "9.1e-07", "'fast' is not a number: a link latency in seconds"),
        ("4 4", "2.85e-05", "", "empty: a link speed in seconds per byte is needed"),
        ("4 4", "1e400", "9.1e-07", "too large"),
        ("4 4", "-1", "9.1e-07", "must be zero or positive"),
        ("1000 1000 1000", "2.85e-05", "9.1e-07", "1 to 1,000,000 processors"),
    ],
)
def test_the_generator_says_what_is_wrong_with_its_fields(qtbot, document, sizes, latency,
                                                          speed, says):  # fmt: skip
    """Typed into the generator: each bad field is named with what it needs (not a
    Python conversion error), Apply stays off and the model is unchanged."""
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    old = doc.machine.hardware()
    w.sizes.setText(sizes)
    w.gen_latency.setText(latency)
    w.gen_speed.setText(speed)
    assert w.preview() is None
    text = w.preview_text.toPlainText()
    assert text.startswith("cannot generate: ") and says in text
    assert "int()" not in text and "convert" not in text
    assert not w.apply_button.isEnabled() and doc.machine.hardware() is old


def test_return_in_a_generator_field_previews(qtbot, document):
    """Return in the generator's sizes, latency or speed does what Preview does, as a
    form's default button: typing '4 4' and Return showed nothing before."""
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("torus")
    for field in (w.sizes, w.gen_latency, w.gen_speed):
        w.preview_text.clear()
        w.sizes.setText("4 4")
        field.setFocus()
        qtbot.keyClick(field, Qt.Key.Key_Return)
        assert "adds 8 links" in w.preview_text.toPlainText(), field
        assert w.apply_button.isEnabled()
    assert len(doc.machine.hardware().links) == 24  # previewed, never applied


def test_the_preview_is_brought_into_view_in_a_short_panel(main_window, qtbot):
    """On a 1600 x 1000 screen in the Topology layout the generator's answer (a refusal
    of 10^9 processors) was below the fold of the editor's panel, cut in half: Preview
    now scrolls the panel to it."""
    main_window.resize(1280, 700)
    main_window.layout_actions["topology"].trigger()
    qtbot.wait(50)
    w = main_window.panels["topology-editor"]
    area = w.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    assert area is not None
    area.verticalScrollBar().setValue(0)
    qtbot.wait(20)
    assert area.verticalScrollBar().maximum() > 0  # the panel is taller than its dock
    w.sizes.setText("1000 1000 1000")
    qtbot.mouseClick(w.preview_button, Qt.MouseButton.LeftButton)
    assert "cannot generate" in w.preview_text.toPlainText()

    def shown_whole() -> bool:
        top = w.preview_text.mapTo(area.viewport(), w.preview_text.rect().topLeft())
        return 0 <= top.y() and top.y() + w.preview_text.height() <= area.viewport().height()

    qtbot.waitUntil(shown_whole, timeout=5_000)
