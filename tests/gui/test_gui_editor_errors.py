"""Every editor says a refused edit the same way: on its message line, in the refusal's
red, naming what was not done (where) and the core's reason (why); a field whose input
was refused is marked pink with the reason at it. The mapping editor said its errors in
plain black text, most of them without naming what they were about, and a refused swap
or scheme only in the preview line under the metrics; the topology editor's own field
edits and new links, the link groups and the history did the same (those two now call
``show_refusal`` too). Driven as a user
does: typing into the fields and pressing Enter."""

from __future__ import annotations

import pytest
from gui_actions import shown as _shown
from gui_actions import type_into

from parasol_core.topology.switches import switch_mask
from piui.widgets.status_messages import REFUSAL_STYLE
from piui.windows.mapping_editor import MappingEditorWindow
from piui.windows.topology_editor import TopologyEditorWindow


def shown(qtbot, widget, size=(700, 800)):
    return _shown(qtbot, widget, size)


def refused(label, starts: str, why: str) -> None:
    """``label`` says a refusal as every editor says one."""
    assert label.styleSheet() == REFUSAL_STYLE, f"{label.text()!r} is not shown as a refusal"
    assert label.text().startswith(starts), label.text()
    assert why in label.text(), label.text()


@pytest.fixture
def mapping(qtbot, document):
    doc = document()  # the 4 x 4 grid: virtual topology 2 is a ring of 16
    editor = shown(qtbot, MappingEditorWindow(doc))
    editor.select_virtual(2)
    return doc, editor


def test_a_typed_mapping_is_refused_where_and_why_and_kept_to_correct(mapping, qtbot):
    doc, w = mapping
    before = dict(doc.machine.virtual(2).mapping)
    typed = "1 2 99 " + " ".join(str(h) for h in range(4, 17))
    type_into(qtbot, w.mapping_edit, typed)
    refused(w.message, "mapping not applied: virtual processor 3:",
            "the hardware has processors 1..16, not 99")  # fmt: skip
    assert w.mapping_edit.is_refused() and w.mapping_edit.toolTip() == w.message.text()
    assert w.mapping_edit.text() == typed  # kept, to be corrected at the place named
    assert dict(doc.machine.virtual(2).mapping) == before
    type_into(qtbot, w.mapping_edit, "1 2 3")
    refused(w.message, "mapping not applied: ", "has 16 processors: give 16")


def test_the_shape_and_name_fields_are_marked_and_keep_the_models_value(mapping, qtbot):
    doc, w = mapping
    virt = doc.machine.virtual(2)
    shape, name = w.shape_edit.text(), virt.name
    type_into(qtbot, w.shape_edit, "5 5")
    refused(w.message, "shape not changed: ", "25 processors, not 16")
    assert w.shape_edit.is_refused() and w.shape_edit.text() == shape
    w.name_edit.setFocus()
    w.name_edit.setText("bell\x07")  # a control character: refused by the core
    w.name_edit.editingFinished.emit()
    refused(w.message, "name not changed: ", "control character")
    assert w.name_edit.is_refused() and w.name_edit.text() == name and virt.name == name


def test_an_id_refusal_names_what_was_not_changed(mapping, qtbot):
    doc, w = mapping
    w.id_edit.setValue(3)  # virtual topology 3's id
    w.id_edit.editingFinished.emit()
    refused(w.message, "id not changed: ", "3")
    assert w.id_edit.value() == 2 and doc.machine.virtual(2) is not None


def test_a_swap_onto_a_switch_is_refused_on_the_message_line(qtbot, document):
    doc = document("slingshot-dragonfly.machine")
    virt = doc.session.new_virtual("2Dtorus", 72)
    w = shown(qtbot, MappingEditorWindow(doc))
    w.select_virtual(virt.id)
    switches = switch_mask(doc.machine, doc.machine.hardware())
    switch = next(p for p in range(1, len(switches)) if switches[p])
    before = dict(virt.mapping)
    w.swap(virt.mapping[1], switch)
    refused(w.message, "processors not swapped: ", "switch")
    assert dict(virt.mapping) == before


def test_the_topology_editor_says_its_refusals_alike(qtbot, document):
    doc = document()
    w = shown(qtbot, TopologyEditorWindow(doc))
    hw = doc.machine.hardware()
    w.name_edit.setText("bell\x07")
    w.name_edit.editingFinished.emit()
    refused(w.message, "Topology name not changed: ", "control character")
    assert hw.name != "bell\x07"
    assert w.add_link(1, 99) is None
    refused(w.message, "link not added: ", "99")
