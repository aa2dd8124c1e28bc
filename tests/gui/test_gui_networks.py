"""Fat trees and dragonflies in the windows (issue 21): the topology editor generates
one with a preview that counts compute processors and switches apart, applying it adds
the switch processor type in the same undo step, and the counts the user sees (the
editor, the overview's topology table, the mapping editor's new virtual topology) are
compute processors."""

from __future__ import annotations

from gui_actions import shown

from parasol_core.topology.switches import compute_processors


def test_generate_a_dragonfly_in_the_editor_adds_the_switch_type_and_counts_compute(
    qtbot, document, tmp_path
):
    from piui.windows.topology_editor import TopologyEditorWindow

    doc = document()
    original = doc.path.read_bytes()
    w = shown(qtbot, TopologyEditorWindow(doc))
    assert w.count_label.text() == "16"
    w.kind.setCurrentText("dragonfly")
    assert "G A P H" in w.sizes.placeholderText()
    w.sizes.setText("5 2 2 2")
    change = w.preview()
    text = w.preview_text.toPlainText()
    assert change is not None and w.apply_button.isEnabled()
    assert "dragonfly 5 2 2 2: 20 compute processors + 10 switches" in text
    assert 'adds processor type 2 "switch" (a switch: no timings)' in text
    w.apply_button.click()
    m = doc.machine
    hw = m.hardware()
    assert hw.routing == "dragonfly-minimal" and hw.network == "dragonfly 5 2 2 2"
    assert [(p.id, p.is_switch) for p in m.processors] == [(1, False), (2, True)]
    assert w.count_label.text() == "20 compute + 10 switches"
    assert w.routing.findData("dragonfly-valiant") >= 0 and w.routing.findData("updown") >= 0
    assert compute_processors(m, hw).tolist() == list(range(1, 21))
    # generating again (a fat tree) reuses the switch type: nothing more is added
    w.kind.setCurrentText("fattree")
    w.sizes.setText("2 3")
    w.preview()
    assert "adds processor type" not in w.preview_text.toPlainText()
    w.apply_button.click()
    assert len(m.processors) == 2 and m.hardware().routing == "updown"
    assert w.count_label.text() == "8 compute + 12 switches"
    doc.session.undo()
    doc.session.undo()  # one step each: the dragonfly went with its switch type
    assert [p.id for p in m.processors] == [1] and m.hardware().network is None
    out = tmp_path / "saved.machine"
    doc.save(out)
    assert out.read_bytes() == original


def test_overview_and_new_virtual_topologies_count_compute_processors(qtbot, document):
    from parasol_core.topology.generators import generate_over, switch_type_to_add
    from piui.windows.mapping_editor import MappingEditorWindow
    from piui.windows.overview import MachineOverview

    doc = document()
    m = doc.machine
    new = generate_over(m.hardware(), "fattree2", [4, 2, 3], 1e-7, 1e-10, machine=m)
    doc.session.replace_topology(1, new, add_processors=[switch_type_to_add(m, new)])
    overview = shown(qtbot, MachineOverview(doc))
    model = overview.topology_model
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == "hardware")
    assert model.index(row, 4).data() == "12 compute + 5 switches"
    editor = shown(qtbot, MappingEditorWindow(doc))
    dialog = editor.add_dialog(12, "1Dtorus")
    assert dialog.count.value() == 12 and "12 compute processors" in dialog.count.toolTip()
    virt = doc.session.new_virtual("1Dtorus")
    assert virt.processor_count == 12 and sorted(virt.mapping.values()) == list(range(1, 13))
