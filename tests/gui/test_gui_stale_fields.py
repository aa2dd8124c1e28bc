"""What a window derived from one model state goes with it (issue 33, item 7): the
mapping editor's disabled fields showed the previous model's virtual topology after
Open; the topology editor's "applied" survived an undo."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def test_the_mapping_editor_shows_nothing_of_a_model_no_longer_open(main_window) -> None:
    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    editor = main_window.panels["mapping-editor"]
    assert editor.virtual() is not None and editor.id_edit.text() and editor.name_edit.text()
    main_window.new_blank()  # a model with no virtual topology
    assert editor.virtual() is None
    for field in (editor.id_edit, editor.count_edit):
        assert not field.isEnabled() and field.text() == "", field.text()
    assert editor.name_edit.text() == editor.shape_edit.text() == editor.mapping_edit.text() == ""
    assert main_window.open_file(SAMPLES / "grid4x4.machine")  # and back: shown again
    virt = editor.virtual()
    assert editor.id_edit.text() == str(virt.id)
    assert editor.count_edit.text() == str(virt.processor_count)


def test_the_topology_editor_forgets_applied_after_an_undo(main_window) -> None:
    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    editor = main_window.panels["topology-editor"]
    editor.kind.setCurrentText("torus")
    editor.sizes.setText("4 4")
    editor.preview()
    editor.apply()
    assert "applied" in editor.preview_text.toPlainText()
    main_window.document.session.undo()
    assert editor.preview_text.toPlainText() == ""
