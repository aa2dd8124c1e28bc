"""The main window: opening, saving, closing, undo, diagnostics, the Terminal."""

from __future__ import annotations

import difflib
import logging
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from parasol_core.model import Timing
from piui.main_window import MainWindow

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_models").glob("*.machine"))


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def set_value(window, ref, value):
    doc = window.document
    doc.session.set_value(ref, value, label=f"Set {ref}")


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_open_each_sample(qtbot, path):
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.open_file(path)
    doc = window.document
    assert window.windowTitle() == f"{path.name}[*] — PIUI" and not window.isWindowModified()
    assert window.diagnostics.summary.text() == "No problems found."
    procs = window.overview.processors
    assert procs.model().rowCount() == len(doc.machine.processors)
    assert procs.model().index(0, 1).data() == (doc.machine.processors[0].name or "")
    assert window.processor_master.list.count() == len(doc.machine.processors)
    assert window.overview.topologies.model().rowCount() == len(doc.machine.topologies) + len(
        doc.machine.virtuals
    )


def test_a_syntax_error_says_where_and_keeps_the_current_model(main_window, tmp_path):
    bad = tmp_path / "bad.machine"
    bad.write_text("begin machine\n  id = 1\n  begin processor\n    id = x\n")
    before = main_window.document.machine
    assert not main_window.open_file(bad)
    assert main_window.document.machine is before
    [(title, text)] = main_window.errors
    assert f"{bad}:4:10: error: unexpected 'x'" in text
    assert any("bad.machine:4:10" in line for line in main_window.terminal.lines())


def test_a_model_with_semantic_errors_opens_with_its_diagnostics(main_window, tmp_path):
    text = (Path(__file__).parents[2] / "sample_models" / "grid4x4.machine").read_text()
    path = tmp_path / "broken.machine"
    path.write_text(text.replace("processors = 1", "processors = 3", 1))
    assert main_window.open_file(path)
    panel = main_window.diagnostics
    assert panel.summary.text() == "1 error, 0 warnings"
    assert "'processors = 3' but 1 processor section(s)" in panel.diagnostic_at(0).message


def test_clicking_a_diagnostic_goes_to_the_processor_it_names(main_window, tmp_path):
    text = (Path(__file__).parents[2] / "sample_models" / "fwi-csys.machine").read_text()
    path = tmp_path / "fwi.machine"
    path.write_text(text.replace("begin timings", "begin timings\n            xyz = 1", 1))
    assert main_window.open_file(path)
    doc = main_window.document
    doc.set_current_processor(doc.machine.processors[-1].id)
    d = main_window.diagnostics.diagnostic_at(0)
    assert "unknown timing parameter 'xyz'" in d.message
    main_window.diagnostics.tree.itemActivated.emit(main_window.diagnostics.tree.topLevelItem(0), 0)
    assert doc.current_processor_id == doc.machine.processors[0].id


def test_edit_marks_the_title_and_undo_clears_it(main_window):
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    assert main_window.isWindowModified()
    main_window.document.undo_stack.undo()
    assert not main_window.isWindowModified()
    assert main_window.document.machine.processors[0].timings["iga"] == Timing(7.37e-07)


def test_save_after_an_edit_changes_only_that_value(main_window):
    path = main_window.document.path
    before = path.read_text()
    set_value(main_window, "tl(1)(5).speed", Timing(1e-06))
    assert main_window.save()
    assert not main_window.isWindowModified()
    assert changed_lines(before, path.read_text()) == [
        "-                speed = 9.1e-07",
        "+                speed = 1e-06",
    ]


def test_a_failed_save_says_so_and_keeps_the_document_unsaved(main_window, tmp_path, monkeypatch):
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    path = main_window.document.path
    before = path.read_text()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    assert not main_window.save()
    assert main_window.isWindowModified() and path.read_text() == before
    assert "No space left on device" in main_window.errors[-1][1]
    assert list(tmp_path.glob(".*.tmp")) == []


@pytest.mark.parametrize("fails", [False, True])
def test_opening_and_saving_show_a_wait_cursor_and_say_what_they_do(main_window, sample_copy,
                                                                     monkeypatch, fails):  # fmt: skip
    """A million-processor model takes seconds to open or save: meanwhile the cursor
    waits and the status bar names the work; both are put back however it ends, before
    an error is shown."""
    seen = []
    doc = main_window.document

    def watch(real):
        def run(*args, **kwargs):
            cursor = QApplication.overrideCursor()
            seen.append((cursor.shape() if cursor else None,
                         main_window.statusBar().currentMessage()))  # fmt: skip
            if fails:
                raise OSError(28, "No space left on device")
            return real(*args, **kwargs)

        return run

    monkeypatch.setattr(doc, "save", watch(doc.save))
    monkeypatch.setattr(doc, "open", watch(doc.open))
    monkeypatch.setattr(doc, "reload", watch(doc.reload))
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    main_window.statusBar().showMessage("before")
    assert main_window.save() is not fails
    other = sample_copy("grid4x4.machine")
    main_window.document.session.history.saved = main_window.document.session.history.index
    assert main_window.open_file(other) is not fails
    title = main_window.document.title()
    assert main_window.reload_from_disk() is not fails
    wait = Qt.CursorShape.WaitCursor
    assert seen[0] == (wait, "Saving parsytec-gcel.machine…")
    assert seen[1] == (wait, f"Opening {other.name}…")
    assert seen[2] == (wait, f"Reloading {title}…")
    assert QApplication.overrideCursor() is None
    if fails:
        assert len(main_window.errors) == 3
        assert main_window.statusBar().currentMessage() == "before"


def test_a_simgrid_import_shows_a_wait_cursor(main_window, monkeypatch):
    """Reading a large SimGrid platform takes seconds too: the cursor waits meanwhile,
    and is back after the refusal of a file that is not a platform."""
    from parasol_core import simgrid

    seen = []

    def refuse(path):
        cursor = QApplication.overrideCursor()
        seen.append((cursor.shape() if cursor else None,
                     main_window.statusBar().currentMessage()))  # fmt: skip
        raise simgrid.PlatformError(f"{path}: not a platform")

    monkeypatch.setattr(simgrid, "import_platform", refuse)
    main_window.ask_platform_path = lambda save: "/tmp/big.xml"
    assert not main_window.import_simgrid()
    assert seen == [(Qt.CursorShape.WaitCursor, "Importing big.xml…")]
    assert QApplication.overrideCursor() is None
    assert "not a platform" in main_window.errors[-1][1]


def test_save_as_to_a_missing_folder_fails_cleanly(main_window, tmp_path):
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    main_window.ask_save_path = lambda: str(tmp_path / "no" / "such" / "dir" / "m.machine")
    assert not main_window.save_as()
    assert main_window.isWindowModified() and main_window.errors


@pytest.mark.parametrize(
    "answer,closes,saved",
    [
        (QMessageBox.StandardButton.Cancel, False, False),
        (QMessageBox.StandardButton.Discard, True, False),
        (QMessageBox.StandardButton.Save, True, True),
    ],
)
def test_closing_with_unsaved_changes_asks(main_window, answer, closes, saved):
    path = main_window.document.path
    before = path.read_text()
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    asked = []
    main_window.ask_save_changes = lambda: asked.append(1) or answer
    assert main_window.close() is closes
    assert asked == [1]
    assert (path.read_text() != before) is saved


def test_closing_a_clean_model_does_not_ask(main_window):
    main_window.ask_save_changes = lambda: pytest.fail("asked")
    assert main_window.close()


def test_opening_another_file_with_unsaved_changes_asks(main_window, sample_copy):
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Cancel
    assert not main_window.open_file(sample_copy("grid4x4.machine"))
    assert main_window.document.machine.name == "Parsytec GCel"


def test_recent_files_and_layout_persist(qtbot, main_window, sample_copy):
    first = main_window.document.path
    other = sample_copy("grid4x4.machine")
    assert main_window.open_file(other)
    main_window.docks["terminal"].hide()
    assert main_window.close()
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.recent_files()[0] == str(other.resolve())
    assert [a.text() for a in window.recent_menu.actions()][:2] == [
        str(other.resolve()),
        str(first.resolve()),
    ]
    assert window.docks["terminal"].isHidden()


def test_processor_types_can_be_added_duplicated_and_removed_with_undo(main_window):
    doc = main_window.document
    master = main_window.processor_master
    master.duplicate_button.click()
    assert [p.id for p in doc.machine.processors] == [1, 2]
    copy = doc.machine.processors[1]
    assert copy.timings == doc.machine.processors[0].timings
    assert copy.combinations["ia_spd"].text == "pt(2).iga / tl(1)(1).speed"
    assert doc.current_processor_id == 2 and doc.machine.processor_count == 2
    assert main_window.diagnostics.summary.text() == "No problems found."
    master.remove_button.click()
    assert [p.id for p in doc.machine.processors] == [1]
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert [p.id for p in doc.machine.processors] == [1]
    doc.undo_stack.redo()
    assert [p.id for p in doc.machine.processors] == [1, 2]
    master.add_button.click()
    assert [p.id for p in doc.machine.processors] == [1, 2, 3]


def test_processor_name_and_id_fields(main_window, qtbot):
    master = main_window.processor_master
    master.name_field.clear()
    qtbot.keyClicks(master.name_field, "IMS T805-30")
    master.name_field.editingFinished.emit()
    assert main_window.document.machine.processors[0].name == "IMS T805-30"
    assert master.list.item(0).text() == "1: IMS T805-30"
    master.id_field.setText("x")
    master.id_field.editingFinished.emit()
    assert main_window.document.machine.processors[0].id == 1
    assert master.id_field.text() == "1" and "cannot read 'x'" in master.id_field.toolTip()


def test_exceptions_in_slots_reach_the_terminal(main_window, qtbot):
    from piui.app import install_exception_hook

    install_exception_hook()

    def boom():
        raise RuntimeError("slot failed")

    with qtbot.capture_exceptions() as caught:
        QTimer.singleShot(0, boom)
        qtbot.wait(20)
    assert caught
    import sys

    sys.excepthook(*caught[0])
    assert any("RuntimeError: slot failed" in line for line in main_window.terminal.lines())


def test_terminal_level_filter(main_window):
    log = logging.getLogger("piui")
    log.info("an info line")
    log.error("an error line")
    term = main_window.terminal
    assert any("an info line" in line for line in term.lines())
    term.set_threshold(logging.ERROR)
    assert not any("an info line" in line for line in term.lines())
    assert any("an error line" in line for line in term.lines())


def test_new_from_sample_is_untitled_and_asks_for_a_name_on_save(main_window, tmp_path):
    samples = Path(__file__).parents[2] / "sample_models"
    main_window.new_from(samples / "fwi-csys.machine")
    doc = main_window.document
    assert doc.path is None and doc.machine.name
    set_value(main_window, "pt(1).iga", Timing(8e-07))
    target = tmp_path / "mine.machine"
    main_window.ask_save_path = lambda: str(target)
    assert main_window.save()
    assert doc.path == target and "iga = 8e-07" in target.read_text()


def test_screenshots_render_every_window(tmp_path):
    from piui.app import main

    out = tmp_path / "shots"
    assert main(["--screenshots", str(out)]) == 0
    names = {p.stem for p in out.glob("*.png")}
    assert {"main-window", "processors", "groups", "instructions", "cache", "combinations",
            "diagnostics", "terminal"} <= names  # fmt: skip
    assert any(n.startswith("instructions-") for n in names)
    assert all(p.stat().st_size > 2000 for p in out.glob("*.png"))
    QApplication.processEvents()


def test_the_overview_counts_timings_as_they_are_added_and_removed(main_window):
    table = main_window.overview.processors
    told: list[tuple[int, int]] = []  # the columns the view is told to repaint
    table.model().dataChanged.connect(lambda a, b, *_: told.append((a.column(), b.column())))
    assert table.model().index(0, 2).data() == "7"
    set_value(main_window, "pt(1).cga", Timing(1e-06))
    assert table.model().index(0, 2).data() == "8" and told == [(2, 2)]
    set_value(main_window, "pt(1).iga", Timing(9e-07))  # a value step: nothing to repaint
    assert table.model().index(0, 2).data() == "8" and told == [(2, 2)]
    main_window.document.undo_stack.undo()
    main_window.document.undo_stack.undo()
    assert table.model().index(0, 2).data() == "7" and told == [(2, 2), (2, 2)]
    set_value(main_window, "pc(1).size", 4096)
    assert table.model().index(0, 3).data() == "4096"


def test_a_processor_type_is_marked_a_switch_from_the_processor_master(main_window, qtbot):
    """The checkbox marks the selected type as a switch (one undo step, the line in
    the saved file), the list says so, and undo takes the mark back."""
    doc = main_window.document
    master = main_window.processor_master
    proc = doc.machine.processors[0]
    assert not master.switch_box.isChecked()
    master.switch_box.setChecked(True)
    assert proc.is_switch and master.list.item(0).text().endswith("(switch)")
    assert "# piui: role = switch" in doc.session.text()
    doc.session.undo()
    assert not proc.is_switch and not master.switch_box.isChecked()
    assert not master.list.item(0).text().endswith("(switch)")
    assert "piui: role" not in doc.session.text()
    doc.session.redo()
    assert master.switch_box.isChecked()
