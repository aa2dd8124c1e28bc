"""The mapping editor over the dragonfly, as a user drives it (issue 33, item 3): Add…
a 2Dtorus on 72 processors and it routes (its shape is a field of the dialog and of the
editor, defaulting to the most square one); a shape or routing that cannot be is refused
with the reason; a duplicate mapping is refused as a short one is; the picture is large
enough to drag onto, and grows with the window."""

from __future__ import annotations

from gui_actions import shown, type_into
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from parasol_core.topology.mapping import mapping_quality
from piui.widgets.add_virtual_dialog import AddVirtualDialog
from piui.windows.mapping_editor import MIN_PICTURE, MappingEditorWindow, picture_minimum


def answer_add(monkeypatch, qtbot, seen, *, routing=None, count=None, shape=None):
    """Answer the real Add… dialog as a user would: choose, type, look, press OK if it
    lets them; ``seen`` gets what the dialog showed."""

    def run(dialog):
        if routing is not None:
            dialog.routing.setCurrentIndex(dialog.routing.findData(routing))
        if count is not None:
            dialog.count.setValue(count)
        seen["default shape"] = dialog.shape.text()
        if shape is not None:
            for text in shape:  # typed one after another, the dialog judging each
                dialog.shape.selectAll()
                dialog.shape.setFocus()
                QTest.keyClicks(dialog.shape, text)
                ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
                seen.setdefault("typed", []).append((text, dialog.note.text(), ok.isEnabled()))
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        return QDialog.DialogCode.Accepted if ok.isEnabled() else QDialog.DialogCode.Rejected

    monkeypatch.setattr(AddVirtualDialog, "exec", run)


def test_add_a_2d_torus_on_72_processors_over_the_dragonfly_and_it_routes(
    qtbot, document, monkeypatch
):
    doc = document("slingshot-dragonfly.machine")
    w = shown(qtbot, MappingEditorWindow(doc), (1100, 760))
    seen = {}
    answer_add(monkeypatch, qtbot, seen, routing="2Dtorus", count=72)
    qtbot.mouseClick(w.add_button, Qt.MouseButton.LeftButton)
    assert seen["default shape"] == "9 8"  # the most square of 72, shown before OK
    virt = doc.machine.virtuals[-1]
    assert (virt.routing, virt.processor_count, virt.shape) == ("2Dtorus", 72, (9, 8))
    assert w.virtual() is virt and w.shape_edit.text() == "9 8"
    assert "cannot route" not in w.metrics.text() and "dilation" in w.metrics.text()
    assert w.quality == mapping_quality(doc.machine, virt)
    assert not [d for d in doc.session.revalidate() if d.is_error]


def test_the_add_dialog_judges_the_shape_as_it_is_typed(qtbot, document, monkeypatch):
    doc = document("slingshot-dragonfly.machine")
    w = shown(qtbot, MappingEditorWindow(doc))
    seen = {}
    answer_add(monkeypatch, qtbot, seen, routing="3Dtorus", count=72,
               shape=["4 3 5", "2 2 2 3 3", "4 3 6"])  # fmt: skip
    qtbot.mouseClick(w.add_button, Qt.MouseButton.LeftButton)
    assert seen["default shape"] == "6 4 3"
    (t1, note1, ok1), (t2, note2, ok2), (t3, note3, ok3) = seen["typed"]
    assert not ok1 and "a 4 x 3 x 5 grid has 60 processors, not 72" in note1
    assert not ok2 and "3Dtorus routing works on grids of up to 3 dimensions" in note2
    assert ok3 and note3 == ""
    virt = doc.machine.virtuals[-1]
    assert virt.shape == (4, 3, 6) and w.shape_edit.text() == "4 3 6"
    assert w.quality is not None


def test_the_shape_and_routing_fields_of_the_editor(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    virt = doc.session.new_virtual("2Dtorus", 72)
    w = shown(qtbot, MappingEditorWindow(doc))
    assert w.shape_edit.text() == "9 8"
    type_into(qtbot, w.shape_edit, "4 3 6")
    assert virt.shape == (9, 8)
    assert w.message.text().startswith("shape not changed: ")
    assert "up to 2 dimensions" in w.message.text() and w.shape_edit.text() == "9 8"
    type_into(qtbot, w.shape_edit, "7 7")
    assert "49 processors, not 72" in w.message.text()
    type_into(qtbot, w.shape_edit, "6x12")
    assert virt.shape == (6, 12) and w.quality == mapping_quality(doc.machine, virt)
    assert doc.session.history.undo_label == f"Virtual topology {virt.id}: shape 6 x 12"
    # a routing the shape does not suit brings its own default shape, in one step
    w.routing.setCurrentIndex(w.routing.findData("XYZ"))
    w.routing.activated.emit(w.routing.currentIndex())
    assert (virt.routing, virt.shape) == ("XYZ", (6, 12))  # a 2-D shape suits XYZ
    w.routing.setCurrentIndex(w.routing.findData("hypercube"))
    w.routing.activated.emit(w.routing.currentIndex())
    assert virt.routing == "XYZ" and "power-of-two" in w.message.text()
    assert w.routing.routing() == "XYZ"  # the box shows what the model has


def test_a_typed_duplicate_mapping_is_refused_with_the_reason(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    virt = doc.session.new_virtual("2Dtorus", 72)
    before = dict(virt.mapping)
    w = shown(qtbot, MappingEditorWindow(doc))
    type_into(qtbot, w.mapping_edit, "1 2 3")
    assert "has 72 processors: give 72" in w.message.text()  # a short one, as before
    typed = "1 1 " + " ".join(str(h) for h in range(3, 73))
    type_into(qtbot, w.mapping_edit, typed)
    said = w.message.text()
    assert said.startswith("mapping not applied: virtual processors 1 and 2 would share "
                           "hardware processor 1")  # fmt: skip
    assert "72 compute processors for 72 virtual ones, each takes one of its own" in said
    assert dict(virt.mapping) == before


def test_the_picture_is_large_enough_to_drag_onto_and_grows_with_the_window(
    main_window, qtbot, sample_copy
):
    assert main_window.open_file(sample_copy("slingshot-dragonfly.machine"))
    main_window.document.session.new_virtual("2Dtorus", 72)
    main_window.resize(1280, 800)
    main_window.show_panel("mapping-editor")
    editor = main_window.panels["mapping-editor"]
    qtbot.waitUntil(editor.canvas.isVisible)
    canvas = editor.canvas
    small = canvas.size()
    assert small.width() >= MIN_PICTURE[0] and small.height() >= MIN_PICTURE[1]
    least_w, least_h = picture_minimum(108)  # the dragonfly's 108 processors
    assert least_h >= 470 and small.width() >= least_w and small.height() >= least_h
    # a drag from one terminal onto another swaps them, at this size
    virt = editor.virtual()
    h1, h2 = virt.mapping[1], virt.mapping[2]
    a, b = canvas.screen_point(h1).toPoint(), canvas.screen_point(h2).toPoint()
    assert (a - b).manhattanLength() >= 12  # two processors a finger apart
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    for t in (0.3, 0.7, 1.0):
        QTest.mouseMove(canvas, (a + (b - a) * t))
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)
    assert (virt.mapping[1], virt.mapping[2]) == (h2, h1)
    # floated and made larger, the picture takes what the window grows by
    dock = main_window.docks["mapping-editor"]
    dock.setFloating(True)
    dock.resize(1400, 900)
    qtbot.waitUntil(lambda: canvas.width() > small.width() + 300)
    assert canvas.height() > small.height()
