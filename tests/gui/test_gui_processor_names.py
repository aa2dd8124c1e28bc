"""The windows name a processor where the topology keeps its name (issue 36): on a
SimGrid platform imported with its hosts' names, the grid view's route readout, the
Estimate panel's processor boxes and route answer, and the mapping editor's hover line
and typed mapping show and take ``Fafard`` for processor 3."""

from __future__ import annotations

from named_platform import named_model_text
from PySide6.QtCore import Qt

from parasol_core.estimator.methods import METHODS, Service, model_push
from parasol_core.estimator.store import ModelStore


def _open_named(main_window, tmp_path):
    path = tmp_path / "named.machine"
    path.write_text(named_model_text(virtual=True))
    assert main_window.open_file(path)
    return main_window.document.machine


def _answer_in_process(panel, tmp_path) -> None:
    """The estimator's own route.plot, called in this process on the model on screen
    (the method a server runs; no server needed here)."""
    svc = Service(ModelStore(tmp_path / "store"))
    model = model_push(svc, panel.document.session.text())["model"]

    class InProcess:
        def plot(self, _model, src, dst, virtual=None):
            return METHODS["route.plot"].func(svc, model, src, dst, virtual)

    panel._with_model = lambda ask: ask(model)
    panel.exporter.call = lambda ask, done: done(ask(InProcess()), None)


def test_the_estimate_panel_shows_and_takes_names(main_window, qtbot, tmp_path) -> None:
    _open_named(main_window, tmp_path)
    panel = main_window.estimate
    panel.src.setValue(1)
    assert panel.src.text() == "1 (Tremblay)"
    panel.dst.lineEdit().selectAll()
    qtbot.keyClicks(panel.dst.lineEdit(), "Fafard")
    qtbot.keyClick(panel.dst.lineEdit(), Qt.Key.Key_Return)
    assert panel.dst.value() == 3 and panel.dst.text() == "3 (Fafard)"
    _answer_in_process(panel, tmp_path)
    panel.ask_route()
    assert panel.route_text.text() == "2 links: 1 (Tremblay) → 4 (R) → 3 (Fafard)"
    # between virtual processors: numbers only
    panel.between.setCurrentIndex(1)
    assert panel.src.text() == "1"
    # a model without names: numbers, as before
    main_window.new_blank()
    assert panel.src.text() == "1"


def test_the_grid_view_route_readout_names_the_processors(main_window, tmp_path) -> None:
    _open_named(main_window, tmp_path)
    main_window.show_panel("grid-view")
    grid = main_window.panels["grid-view"]
    grid._clicked(1, None)
    grid._clicked(3, None)
    assert grid.info.text().startswith("Route 1 (Tremblay) → 3 (Fafard) (")
    assert "1 (Tremblay) → 4 (R) → 3 (Fafard), 2 hops" in grid.info.text()


def test_the_mapping_editor_names_and_takes_names(main_window, qtbot, tmp_path) -> None:
    machine = _open_named(main_window, tmp_path)
    main_window.show_panel("mapping-editor")
    editor = main_window.panels["mapping-editor"]
    assert editor.virtual().id == 2
    editor.canvas.hovered.emit("processor", 2)
    assert editor.hover_info.text() == "hardware 2 (Jupiter): virtual 2"
    editor.canvas.hovered.emit("processor", 3)
    assert editor.hover_info.text() == "hardware 3 (Fafard): no virtual processor"
    editor.mapping_edit.setText("Fafard Tremblay")
    assert editor.type_mapping()
    assert dict(machine.virtual(2).mapping) == {1: 3, 2: 1}
    assert editor.mapping_edit.text() == "3 1"  # written back as the file holds it
    editor.mapping_edit.setText("Fafard Saturn")
    assert not editor.type_mapping()
    assert "'Saturn'" in editor.message.text()
    assert dict(machine.virtual(2).mapping) == {1: 3, 2: 1}  # nothing changed
    main_window.new_blank()
    assert editor.hover_info.text() == ""


def test_the_topology_editor_adds_a_link_between_processors_given_by_name(
    main_window, qtbot, tmp_path
) -> None:
    machine = _open_named(main_window, tmp_path)
    main_window.show_panel("topology-editor")
    editor = main_window.panels["topology-editor"]
    assert editor.link_a.text() == "1 (Tremblay)"
    for box, name in ((editor.link_a, "Jupiter"), (editor.link_b, "Fafard")):
        box.lineEdit().selectAll()
        qtbot.keyClicks(box.lineEdit(), name)
        qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    link = editor.add_link(editor.link_a.value(), editor.link_b.value())
    assert link is not None and sorted(link.connect) == [2, 3]
    assert len(machine.hardware().links) == 4
    assert editor.message.text() == f"link {link.id} added between 2 (Jupiter) and 3 (Fafard)"
