"""The topology editor's generator, as a user drives it (issue 33, item 2): the preview
names every consequence of the replacement (switch roles kept or dropped, processor
types added, mappings that no longer fit and what happens to them), offers the choices
it leaves, says what Apply would leave wrong, and Apply does what the preview said."""

from __future__ import annotations

from gui_actions import shown as _shown
from PySide6.QtCore import Qt

from parasol_core.syntax.writer import dumps
from piui.windows.topology_editor import TopologyEditorWindow


def shown(qtbot, widget, size=(760, 900)):
    return _shown(qtbot, widget, size)


def _preview_button(w):
    from PySide6.QtWidgets import QPushButton

    return next(b for b in w.findChildren(QPushButton) if b.text() == "Preview")


def press_preview(qtbot, w):
    qtbot.mouseClick(_preview_button(w), Qt.MouseButton.LeftButton)


def choose(w, key, value):
    """Answer one of the preview's choices in its combo box, as a user does."""
    box = w.option_boxes[key]
    box.setCurrentIndex(box.findData(value))
    box.activated.emit(box.currentIndex())


def errors(doc):
    return [d for d in doc.session.revalidate() if d.is_error]


def test_a_torus_over_the_dragonfly_has_the_count_the_preview_said(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("torus")
    w.sizes.setText("4 3 2 2 3 2")
    press_preview(qtbot, w)
    said = w.preview_text.toPlainText()
    assert said.splitlines()[0] == "4 x 3 x 2 x 2 x 3 x 2 torus: 288 processors"
    assert ('processors 73..108 were switches (type 2 "Rosetta switch"): they become compute '
            'processors (type 1 "AMD EPYC")') in said  # fmt: skip
    box = w.option_boxes["switches"]
    assert box.isVisible() and box.currentData() == "drop"
    assert not w.warning.isVisible()
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert w.count_label.text() == "288"  # what the preview said
    assert not errors(doc)
    doc.session.undo()

    # keeping the routers as switches: the preview says so, and Apply does that
    press_preview(qtbot, w)
    choose(w, "switches", "keep")
    said = w.preview_text.toPlainText()
    assert (
        said.splitlines()[0] == "4 x 3 x 2 x 2 x 3 x 2 torus: 252 compute processors + 36 switches"
    )
    assert "processors 73..108 stay switches" in said
    assert w.option_boxes["switches"].currentData() == "keep"
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert w.count_label.text() == "252 compute + 36 switches"


def test_a_fat_tree_under_a_virtual_topology_names_and_fixes_the_mappings(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    original = dumps(doc.machine)
    virt = doc.session.new_virtual("1Dtorus", 72)
    with_virtual = dumps(doc.machine)
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("fattree")
    w.sizes.setText("4 3")
    press_preview(qtbot, w)
    said = w.preview_text.toPlainText()
    assert said.splitlines()[0] == "4-ary 3-tree: 64 compute processors + 48 switches"
    assert ('virtual topology 1 "1Dtorus on 72": map[65..72] would be on switches (65..72): '
            "moved onto 1..8") in said  # fmt: skip
    assert w.option_boxes["mappings"].currentData() == "remap"
    assert not w.warning.isVisible()
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert not errors(doc)  # it was 8 errors "map[v] ... is a switch"
    assert [virt.mapping[v] for v in range(65, 73)] == list(range(1, 9))
    doc.session.undo()  # one step: the topology and the mapping
    assert dumps(doc.machine) == with_virtual

    # "leave them": the preview says which errors Apply leaves, and it leaves those
    press_preview(qtbot, w)
    choose(w, "mappings", "leave")
    warning = w.warning.text()
    assert w.warning.isVisible() and warning.startswith("Apply would leave the model with errors")
    assert (
        "map[65..72] would be on switches (65..72): left there, the model has 8 errors" in warning
    )
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert len(errors(doc)) == 8
    doc.session.undo()

    # "remove": the virtual topology goes, in the same step
    press_preview(qtbot, w)
    choose(w, "mappings", "remove")
    assert "the virtual topology is removed" in w.preview_text.toPlainText()
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert doc.machine.virtual(virt.id) is None and not errors(doc)
    doc.session.undo()
    doc.session.undo()
    assert dumps(doc.machine) == original


def test_a_generated_network_adds_its_switch_type_in_the_preview_and_in_apply(qtbot, document):
    doc = document("grid4x4.machine")
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("fattree")
    w.sizes.setText("2 3")  # 8 compute processors under the grid's 16-processor mappings
    press_preview(qtbot, w)
    said = w.preview_text.toPlainText()
    assert 'adds processor type 2 "switch" (a switch: no timings)' in said
    assert "processors 9..16 (type 1" in said and "become switches" in said
    assert "would be on switches (9..16): moved onto" in said
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert [p.id for p in doc.machine.processors] == [1, 2] and not errors(doc)


def test_an_edit_of_a_mapping_after_the_preview_makes_it_stale(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    virt = doc.session.new_virtual("1Dtorus", 72)
    w = shown(qtbot, TopologyEditorWindow(doc))
    w.kind.setCurrentText("fattree")
    w.sizes.setText("4 3")
    press_preview(qtbot, w)
    assert w.apply_button.isEnabled()
    doc.session.set_mapping(virt.id, {1: virt.mapping[2], 2: virt.mapping[1]})
    assert not w.apply_button.isEnabled()
    assert "changed since the preview" in w.preview_text.toPlainText()
    assert not w.option_boxes and not w.warning.isVisible()
    hw = doc.machine.hardware()
    w.apply()
    assert doc.machine.hardware() is hw


def test_in_the_main_window_the_diagnostics_stay_empty(main_window, qtbot, sample_copy):
    assert main_window.open_file(sample_copy("slingshot-dragonfly.machine"))
    main_window.document.session.new_virtual("1Dtorus", 72)
    main_window.show_panel("topology-editor")
    w = main_window.panels["topology-editor"]
    qtbot.waitUntil(w.kind.isVisible)
    w.kind.setCurrentText("fattree")
    w.sizes.setText("4 3")
    press_preview(qtbot, w)
    qtbot.mouseClick(w.apply_button, Qt.MouseButton.LeftButton)
    assert not errors(main_window.document)
    assert main_window.document.session.history.undo_label == "Replace topology 1"
