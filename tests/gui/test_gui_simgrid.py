"""File > Import SimGrid platform… and File > Export > SimGrid platform… (pytest-qt,
offscreen): the menus, the new unsaved model, and the window saying what did not carry
over."""

from __future__ import annotations

from parasol_core import load
from parasol_core.simgrid import import_platform
from parasol_core.topology.switches import compute_count
from tests.simgrid.test_simgrid import SMALL


def menu_action(window, *titles: str):
    menu = window.menuBar()
    for title in titles:
        found = next(a for a in menu.actions() if a.text().replace("&", "") == title)
        menu = found.menu() if found.menu() is not None else found
    return menu


def test_import_opens_the_platform_as_a_new_unsaved_model(main_window, tmp_path):
    xml = tmp_path / "small.xml"
    xml.write_text(SMALL)
    main_window.ask_platform_path = lambda saving: "" if saving else str(xml)
    menu_action(main_window, "File", "Import SimGrid platform…").trigger()
    doc = main_window.document
    hw = doc.machine.hardware()
    assert doc.path is None and hw.processor_count == 4
    assert compute_count(doc.machine, hw) == 3 and hw.routing == "shortest"
    box = main_window.carry_notes
    assert box is not None and box.isVisible() and not box.isModal()
    assert "small.xml is open as a new model" in box.text()
    assert "multi-core hosts" in box.informativeText()
    assert "host properties" in box.informativeText()
    assert main_window.errors == []


def test_a_platform_that_cannot_be_read_says_where_and_keeps_the_model(main_window, tmp_path):
    before = main_window.document.machine
    xml = tmp_path / "bad.xml"
    xml.write_text('<platform version="4.1">\n<zone id="z" routing="Full">\n</platform>')
    main_window.ask_platform_path = lambda saving: str(xml)
    assert not main_window.import_simgrid()
    assert main_window.document.machine is before
    assert main_window.errors and "bad.xml:3: not well-formed XML" in main_window.errors[0][1]


def test_export_writes_a_platform_that_imports_as_the_same_topology(main_window, sample_copy,
                                                                     tmp_path):  # fmt: skip
    assert main_window.open_file(sample_copy("grid4x4.machine"))
    target = tmp_path / "grid.xml"
    main_window.ask_platform_path = lambda saving: str(target) if saving else ""
    menu_action(main_window, "File", "Export", "SimGrid platform…").trigger()
    back = import_platform(target).machine
    assert back.hardware() == load(tmp_path / "grid4x4.machine").hardware()
    assert "processor timings" in main_window.carry_notes.informativeText()
    assert main_window.errors == []


def test_a_refused_export_shows_its_size_and_limit(main_window, tmp_path, monkeypatch):
    from parasol_core.simgrid import exporter

    monkeypatch.setattr(exporter, "MAX_ROUTES", 1000)  # the GCel's mesh: 24,576 routes
    target = tmp_path / "gcel.xml"
    main_window.ask_platform_path = lambda saving: str(target)
    assert not main_window.export_simgrid()
    assert not target.exists()
    title, text = main_window.errors[0]
    assert "24,576 routes, over the limit of 1,000 routes" in text


def test_the_topology_window_names_an_imported_platforms_processors(qtbot, tmp_path):
    """Issue 36: a SimGrid platform's host names, kept in '# piui: names', are shown
    where the topology window names a processor or a link's processors."""
    from test_gui_topology import shown

    from parasol_core.simgrid import import_text
    from parasol_core.syntax.writer import dumps
    from piui.document import Document
    from piui.windows.grid_view import GridViewWindow

    doc = Document()
    doc.new_from_text(dumps(import_text(SMALL, "small.xml").machine))
    w = shown(qtbot, GridViewWindow(doc), (900, 700))
    w._hovered("processor", 1)
    assert w.info.text().startswith("Processor 1 (Tremblay) — ")
    w._hovered("processor", 4)
    assert w.info.text().startswith("Switch 4 (R) — ")
    w._hovered("link", 3)
    assert w.info.text().startswith("Link 3: connects 3 (Fafard), 4 (R)")
    assert not w.grab().isNull()


def test_what_did_not_carry_over_goes_when_another_model_opens(main_window, sample_copy, tmp_path):
    """The notes of an import stayed on screen over the next model opened, about a model
    no longer shown: a window holds nothing that outlives the model it shows."""
    xml = tmp_path / "small.xml"
    xml.write_text(SMALL)
    main_window.ask_platform_path = lambda saving: str(xml)
    assert main_window.import_simgrid()
    first = main_window.carry_notes
    assert first is not None and first.isVisible()
    assert main_window.import_simgrid()  # a second import: its own notes, one box
    second = main_window.carry_notes
    assert second is not first and second.isVisible() and not first.isVisible()
    assert main_window.open_file(sample_copy("grid4x4.machine"))
    assert main_window.carry_notes is None and not second.isVisible()
