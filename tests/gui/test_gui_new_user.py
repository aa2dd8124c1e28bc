"""What a new user met on a real display (issue "PIUI as a new user meets it"), each as
the rule it broke: driven through the real widgets, offscreen."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QFileInfo, Qt
from PySide6.QtWidgets import QFileDialog, QFileIconProvider

from parasol_core.expr.evaluate import EvalError
from parasol_core.model import Timing
from piui.widgets.file_dialogs import NameOnlyIconProvider, file_dialog
from piui.widgets.number_controls import KeyRun
from piui.widgets.status_messages import error_box

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def type_into(qtbot, field, text: str) -> None:
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


# ---------------------------------------------------------------------- 1. no dialog blocks


def test_the_file_dialogs_name_types_without_reading_files(tmp_path):
    # A file whose name says nothing: a type guessed from its contents means the dialog
    # read it, which blocks forever on a device file such as /proc/kmsg.
    sniffed = tmp_path / "report"
    sniffed.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    info = QFileInfo(str(sniffed))
    assert "PDF" in QFileIconProvider().type(info)  # the default provider reads it
    assert NameOnlyIconProvider().type(info) == "File"
    assert NameOnlyIconProvider().type(QFileInfo(str(tmp_path / "a.machine"))) == "MACHINE file"
    assert NameOnlyIconProvider().type(QFileInfo(str(tmp_path))) == "Folder"


@pytest.mark.parametrize("saving", [True, False])
def test_piuis_file_dialogs_use_the_name_only_provider(qtbot, saving):
    dialog = file_dialog(None, "t", str(SAMPLES), saving)
    qtbot.addWidget(dialog)
    assert isinstance(dialog.iconProvider(), NameOnlyIconProvider)
    assert dialog.testOption(QFileDialog.Option.DontUseNativeDialog)


def test_saving_where_nothing_can_be_written_says_so_and_keeps_the_edit(main_window):
    doc = main_window.document
    doc.session.set("pt(1).iga", "1e-6")
    main_window.ask_save_path = lambda: "/proc/test.machine"
    assert not main_window.save_as()
    title, text = main_window.errors[-1]
    assert title == "Cannot save the model" and "/proc/test.machine" in text
    # why, in words (it said "No such file or directory" of /proc, which is there)
    assert "'/proc' takes no new files (a file system of the system's own" in text, text
    assert doc.is_modified and doc.machine.processor(1).timings["iga"] == Timing(1e-6)


# ---------------------------------------------------------------------- 2. shortcuts


def test_every_action_of_the_main_window_works_in_every_window(main_window):
    actions = [a for a in main_window.findChildren(type(main_window.undo_action))
               if not a.shortcut().isEmpty()]  # fmt: skip
    assert len(actions) >= 10
    for action in actions:
        assert action.shortcutContext() == Qt.ShortcutContext.ApplicationShortcut, action.text()


def test_ctrl_z_in_a_category_window_undoes(main_window, qtbot):
    doc = main_window.document
    panel = main_window.panels["instructions"]
    win = panel.open_category("intrinsic-functions")
    type_into(qtbot, win.rows["sind"].mean.field, "4e-5")
    assert doc.machine.processor(1).timings["sind"] == Timing(4e-5)
    win.activateWindow()
    qtbot.waitUntil(lambda: win.isActiveWindow(), timeout=60_000)
    win.rows["sind"].mean.mantissa.setFocus()
    qtbot.keyClick(
        win.rows["sind"].mean.mantissa, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
    )
    assert doc.machine.processor(1).timings["sind"] == Timing(3e-5)


def test_ctrl_z_in_a_field_undoes_its_typing_first_then_the_model(main_window, qtbot):
    """Found on a real display: with the cursor in any text field, Ctrl+Z never reached
    the model's Undo, because the field claimed the key even with nothing to undo."""
    doc = main_window.document
    field = main_window.processor_master.id_field
    type_into(qtbot, field, "5")  # committed: processor 1 is now 5
    assert doc.machine.processors[0].id == 5
    qtbot.keyClicks(field, "9")  # typing not yet committed
    ctrl_z = (Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(field, *ctrl_z)
    assert field.text() == "5" and doc.machine.processors[0].id == 5
    qtbot.keyClick(field, *ctrl_z)  # nothing left to undo in the field: the model's turn
    assert doc.machine.processors[0].id == 1 and field.text() == "1"
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    assert doc.machine.processors[0].id == 5
    qtbot.keyClick(field, *ctrl_z)
    qtbot.keyClick(field, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert doc.machine.processors[0].id == 5


# ---------------------------------------------------------------------- 4, 10. processor ids


def test_changing_a_processor_id_repoints_its_ratios_in_one_undo_step(main_window, qtbot):
    doc = main_window.document
    master = main_window.processor_master
    type_into(qtbot, master.id_field, "5")
    assert doc.machine.processors[0].id == 5 and doc.current_processor_id == 5
    values = [doc.engine.value(f"po(5).{n}") for n in ("ia_spd", "im_spd", "dd_spd")]
    assert not any(isinstance(v, EvalError) for v in values)
    assert not [d for d in doc.diagnostics if d.is_error]
    assert doc.undo_stack.count() == 1
    doc.undo_stack.undo()
    assert doc.machine.processors[0].id == 1 and doc.current_processor_id == 1


@pytest.mark.parametrize(
    ("typed", "words"),
    [("0", "between 1 and 2147483647"), ("99999999999", "between 1 and 2147483647"),
     ("abc", "is not a number"), ("1.5", "is not a whole number")],
)  # fmt: skip
def test_a_bad_processor_id_is_refused_in_words_at_the_field(main_window, qtbot, typed, words):
    master = main_window.processor_master
    type_into(qtbot, master.id_field, typed)
    assert master.id_field.text() == "1"
    assert words in master.message.text() and "invalid literal" not in master.message.text()
    assert words in master.id_field.toolTip()
    assert main_window.document.undo_stack.count() == 0


# ---------------------------------------------------------------------- 5, 17. modified marks


def test_a_new_model_from_a_sample_is_unmodified_and_says_it_is_a_copy(main_window):
    main_window.new_from(SAMPLES / "parsytec-gcel.machine")
    assert not main_window.document.is_modified and not main_window.isWindowModified()
    assert "copy of parsytec-gcel.machine" in main_window.windowTitle()
    assert "Save as to keep it" in main_window.statusBar().currentMessage()


@pytest.mark.parametrize("argv", [[""], ["--screenshots", ""]])
def test_piui_refuses_an_empty_file_name_as_the_commands_do(capsys, argv):
    # "" was taken as no file (the sample opened instead), --screenshots "" as no folder
    import piui.app

    with pytest.raises(SystemExit) as e:
        piui.app.main(argv)
    assert e.value.code == 2
    assert ": an empty file name (a path of no characters would be taken as the current " \
        "folder)" in capsys.readouterr().err  # fmt: skip


def test_piui_started_without_a_file_is_unmodified(qtbot, monkeypatch):
    import piui.app
    from piui.main_window import MainWindow

    made = []
    monkeypatch.setattr(MainWindow, "show", lambda self: made.append(self))
    monkeypatch.setattr("PySide6.QtWidgets.QApplication.exec", lambda self: 0)
    assert piui.app.main([]) == 0
    (window,) = made
    qtbot.addWidget(window)
    assert not window.document.is_modified and not window.isWindowModified()
    assert "copy of parsytec-gcel.machine" in window.windowTitle()


def test_piui_started_on_a_file_it_cannot_open_starts_on_a_blank_model(qtbot, monkeypatch,
                                                                        tmp_path):  # fmt: skip
    """`piui broken.machine` (a syntax error) said why in a dialog, then showed an empty
    "untitled" model whose every field was an error (no id, no name, no processors): it
    starts on a valid blank model, and the status bar says what happened."""
    import piui.app
    from piui.main_window import MainWindow

    broken = tmp_path / "broken.machine"
    broken.write_text((SAMPLES / "grid4x4.machine").read_text().replace(
        "maxtotalspd =", "maxtotalspd = pt(1).iga + some.thing.bad +", 1))  # fmt: skip
    made, said = [], []
    monkeypatch.setattr(MainWindow, "show", lambda self: made.append(self))
    monkeypatch.setattr(MainWindow, "_show_error", lambda self, *a: said.append(a[0]))
    monkeypatch.setattr("PySide6.QtWidgets.QApplication.exec", lambda self: 0)
    assert piui.app.main([str(broken)]) == 0
    (window,) = made
    qtbot.addWidget(window)
    assert said == ["Cannot open the model"]
    assert not [d for d in window.document.diagnostics if d.is_error]
    assert window.document.machine.processors and not window.document.is_modified
    assert f"{broken} could not be opened" in window.statusBar().currentMessage()


def test_a_model_with_semantic_errors_opens_unmodified(main_window, tmp_path):
    path = tmp_path / "broken.machine"
    path.write_text((SAMPLES / "grid4x4.machine").read_text().replace("processors = 1",
                                                                      "processors = 3", 1))  # fmt: skip
    assert main_window.open_file(path)
    assert [d for d in main_window.document.diagnostics if d.is_error]
    assert not main_window.document.is_modified and not main_window.isWindowModified()


# ---------------------------------------------------------------------- 6. say what breaks


def test_removing_a_used_processor_type_asks_first_and_cancel_keeps_it(main_window):
    asked = []
    master = main_window.processor_master
    master.confirm = lambda title, text, details: asked.append(details) or False
    master.remove_button.click()
    assert main_window.document.machine.processor(1) is not None
    assert any("ia_spd" in line for line in asked[0])
    assert any("topology 1" in line for line in asked[0])
    master.confirm = lambda *a: True
    master.remove_button.click()
    assert main_window.document.machine.processor(1) is None


def test_removing_a_used_timing_asks_first(main_window):
    panel = main_window.panels["instructions"]
    win = panel.open_category("intrinsic-functions")
    asked = []
    win.confirm = lambda title, text, details: asked.append(details) or False
    win.rows["sind"].remove.click()
    assert "sind" in main_window.document.machine.processor(1).timings
    assert asked == [["po(1).ds_spd = pt(1).sind / tl(1)(1).speed"]]


def test_saving_a_model_with_errors_asks_first(main_window, tmp_path):
    doc = main_window.document
    doc.session.set_expression("po(1).ia_spd", "pt(7).iga")  # no processor 7: an error
    doc.revalidate()
    asked = []
    main_window.confirm = lambda title, text, details: asked.append((text, details)) or False
    before = doc.path.read_text()
    assert not main_window.save()
    assert doc.path.read_text() == before and doc.is_modified
    assert "1 error" in asked[0][0] and "pt(7)" in asked[0][1][0]


def test_saving_a_new_model_with_errors_names_the_file_saved_not_the_sample(main_window,
                                                                            tmp_path):  # fmt: skip
    from piui.main_window import SAMPLES_DIR

    main_window.new_from(SAMPLES_DIR / "grid4x4.machine")
    doc = main_window.document
    doc.session.set_expression("po(1).ia_spd", "pt(7).iga")
    doc.revalidate()
    asked = []
    main_window.confirm = lambda title, text, details: asked.append(details) or False
    target = tmp_path / "mine.machine"
    main_window.ask_save_path = lambda: str(target)
    assert not main_window.save()
    assert asked[0][0].startswith(f"{target}:") and "grid4x4" not in asked[0][0]
    assert all("grid4x4" not in d.format() for d in doc.diagnostics)


# ---------------------------------------------------------------------- 7, 9. windows


def test_category_windows_stay_above_the_main_window(main_window):
    win = main_window.panels["instructions"].open_category("flow-control")
    assert win.windowFlags() & Qt.WindowType.Tool == Qt.WindowType.Tool
    assert win.parentWidget() is not None


def test_a_floating_dock_saved_off_screen_comes_back_on_screen(qtbot, main_window):
    from piui.main_window import MainWindow

    dock = main_window.docks["cache"]
    dock.setFloating(True)
    dock.setGeometry(-9000, -9000, 400, 300)
    main_window.ask_save_changes = lambda: None
    main_window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    restored = again.docks["cache"]
    assert restored.isFloating()
    screen = again.screen().availableGeometry()
    assert screen.intersects(restored.frameGeometry())


def test_tab_leaves_the_processor_types_table(main_window, qtbot):
    table = main_window.overview.processors
    assert not table.tabKeyNavigation()
    assert not main_window.overview.topologies.tabKeyNavigation()
    assert not main_window.panels["combinations"].table.tabKeyNavigation()


# ---------------------------------------------------------------------- 11. no sympy words


def test_a_ratio_with_no_value_shows_no_sympy_internals(main_window):
    win = main_window.panels["combinations"]
    main_window.document.session.set_expression("po(1).dd_spd", "pt(1).dgd / 0")
    win.select("dd_spd")
    win.refresh_sensitivity()
    shown = win.symbolic.text() + " " + win.sensitivity_note.text()
    for word in ("zoo", "trunc(", "nan", "oo "):
        assert word not in shown
    assert "division by zero" in win.sensitivity_note.text()


# ---------------------------------------------------------------------- 12. stale messages


def test_a_message_goes_when_the_state_it_describes_goes(main_window, sample_copy):
    panel = main_window.panels["instructions"]
    win = panel.open_category("intrinsic-functions")
    win.rows["sind"].remove.click()  # asks (the dialog is answered "Go on")
    assert "sind removed" in win.message.text()
    main_window.open_file(sample_copy("fwi-csys.machine"))
    assert win.message.text() == ""


def test_the_cancel_message_goes_with_the_next_change(main_window, qtbot):
    groups = main_window.panels["groups"]
    doc = main_window.document
    doc.session.move_scaler(1, "global", 2.0)
    groups.cancel()
    assert "cancelled" in groups.message.text()
    doc.session.set("pt(1).iga", "3e-6")
    assert groups.message.text() == ""


def test_a_refused_field_stops_being_pink_after_a_later_good_edit(main_window, qtbot):
    master = main_window.processor_master
    type_into(qtbot, master.id_field, "abc")
    assert master.id_field.is_refused() and master.message.text()
    type_into(qtbot, master.name_field, "renamed")
    assert main_window.document.machine.processor(1).name == "renamed"
    assert not master.id_field.is_refused() and master.id_field.styleSheet() == ""
    assert master.message.text() == ""


# ---------------------------------------------------------------------- 13, 14. messages


def test_the_syntax_error_box_shows_source_and_caret_in_a_monospaced_font(qtbot):
    box = error_box(None, "Cannot open the model", "x:4:10: error: unexpected 'x'",
                    "    id = x\n         ^")  # fmt: skip
    qtbot.addWidget(box)
    assert "<pre" in box.text() and "monospace" in box.text()
    assert "    id = x\n         ^" in box.text()


def test_a_number_too_small_to_represent_says_so(main_window, qtbot):
    win = main_window.panels["instructions"].open_category("intrinsic-functions")
    type_into(qtbot, win.rows["sind"].mean.field, "1e-400")
    assert "too small to represent" in win.message.text()
    assert main_window.document.machine.processor(1).timings["sind"] == Timing(3e-5)


# ---------------------------------------------------------------------- 16. key runs


def test_a_run_of_key_presses_on_a_scaler_is_one_undo_step(main_window, qtbot, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("parasol_core.session.history.time.monotonic", lambda: clock[0])
    groups = main_window.panels["groups"]
    slider = groups.rows["global"].slider.slider
    slider.setFocus()
    for _ in range(5):
        qtbot.keyClick(slider, Qt.Key.Key_Right)
        clock[0] += 0.3
    doc = main_window.document
    assert doc.undo_stack.count() == 1
    clock[0] += KeyRun.merge_window + 0.5
    qtbot.keyClick(slider, Qt.Key.Key_Right)
    assert doc.undo_stack.count() == 2
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.session.scaler(1).is_neutral
    assert time.monotonic() > 0  # the real clock is untouched


# ---------------------------------------------------------------------- setup, furniture


def test_the_xcb_libraries_a_desktop_may_lack_are_named_by_package():
    from piui.app import missing_platform_packages

    x11 = {"DISPLAY": ":0"}
    none = missing_platform_packages(x11, find=lambda lib: None)
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"} <= set(none)
    assert missing_platform_packages(x11, find=lambda lib: f"lib{lib}.so") == []
    only_cursor = missing_platform_packages(
        x11, find=lambda lib: None if lib == "xcb-cursor" else "x"
    )
    assert only_cursor == ["libxcb-cursor0"]
    # not using xcb: nothing to check
    assert missing_platform_packages({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"},
                                     find=lambda lib: None) == []  # fmt: skip
    assert missing_platform_packages({}, find=lambda lib: None) == []


def test_piui_says_which_packages_to_install_instead_of_aborting(monkeypatch, capsys):
    import piui.app

    monkeypatch.setattr("PySide6.QtWidgets.QApplication.instance", staticmethod(lambda: None))
    monkeypatch.setattr(piui.app, "missing_platform_packages", lambda: ["libxcb-cursor0"])
    assert piui.app.main([]) == 1
    err = capsys.readouterr().err
    assert "sudo apt-get install libxcb-cursor0" in err


def test_the_window_has_the_icon_and_the_desktop_entry_installs(main_window, tmp_path):
    from piui.app import install_desktop
    from piui.resources import DESKTOP_ENTRY, ICON

    assert not main_window.windowIcon().isNull()
    assert ICON.is_file() and "Icon=piui" in DESKTOP_ENTRY.read_text()
    entry, icon = install_desktop(tmp_path)
    assert entry == tmp_path / "applications" / "piui.desktop" and icon.is_file()
    text = entry.read_text()
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert Path(exec_line.split()[0].removeprefix("Exec=")).is_absolute()


# ---------------------------------------------------------------------- 8, 15. layout


def test_a_long_error_never_pushes_the_values_out_of_sight(main_window, qtbot):
    win = main_window.panels["combinations"]
    main_window.show_panel("combinations")
    long = " + ".join(["pt(1).dgd"] * 12)
    main_window.document.session.set_expression("po(1).dd_spd", f"pt(1).dgd / 0 + {long}")
    win.select("dd_spd")
    win.refresh_sensitivity()
    qtbot.wait(50)
    table = win.table
    value_right = table.columnViewportPosition(3) + table.columnWidth(3)
    assert value_right <= table.viewport().width() + 1
    assert win.width() <= main_window.docks["combinations"].width()


def test_side_docks_get_their_width_back_when_the_window_grows(main_window, qtbot):
    from piui.main_window import RIGHT_DOCK_WIDTH

    main_window.resize(1280, 820)
    main_window.show_panel("combinations")
    qtbot.wait(20)
    dock = main_window.docks["combinations"]
    main_window.resize(main_window.minimumSizeHint())
    qtbot.wait(20)
    narrow = dock.width()
    main_window.resize(1280, 820)
    qtbot.waitUntil(lambda: dock.width() > narrow)
    assert dock.width() >= min(RIGHT_DOCK_WIDTH, 1280 // 3)


def test_the_main_window_fits_a_1280_by_800_screen(main_window, qtbot):
    qtbot.wait(20)
    hint = main_window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 800, hint


def test_a_layout_saved_with_other_docks_is_not_restored(qtbot, main_window):
    from piui.main_window import MainWindow, settings

    main_window.close()
    s = settings()
    state = s.value("windowState")
    assert state is not None
    # the same state, as an older PIUI with other docks would have written it
    from PySide6.QtCore import QByteArray

    again = MainWindow()
    qtbot.addWidget(again)
    assert again.restoreState(QByteArray(state), again.layout_version())
    assert not again.restoreState(QByteArray(state), again.layout_version() + 1)


def test_no_stale_dock_tab_bar_is_left_on_screen(main_window, qtbot):
    from PySide6.QtWidgets import QTabBar

    def bars() -> list[set[str]]:  # those a user sees: Qt keeps a spare one outside the window
        return [{b.tabText(i) for i in range(b.count())} for b in main_window.findChildren(QTabBar)
                if b.parent() is main_window and b.isVisible()
                and b.geometry().intersects(main_window.rect())]  # fmt: skip

    qtbot.waitUntil(lambda: not any(a < b for a in bars() for b in bars()), timeout=60_000)
    shown = bars()
    # the first-run layout (processors: what-if); tests/test_gui_layouts.py has them all
    assert {"Instruction groups", "Individual instructions", "Cache"} in shown
    assert {"Combinations", "Run-time systems"} in shown
    assert len(shown) == len({frozenset(tabs) for tabs in shown})  # one bar a group
