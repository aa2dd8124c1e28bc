"""Issue 33, item 6: a dialog's title can be read in full. The SimGrid export's box
("Exported to SimGrid", over a one-line text) was narrower than its title bar needs;
the rule (widgets.window_titles) gives every dialog the width of its title."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

from piui.widgets.window_titles import TitleRoom, title_width


@pytest.fixture
def ruled(main_window, qtbot):
    """The main window, painted: the rule installed on the application."""
    qtbot.waitExposed(main_window)
    app = QApplication.instance()
    qtbot.waitUntil(lambda: app.findChild(TitleRoom, "piui-title-room") is not None)
    return main_window


def _shown(qtbot, dialog) -> None:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()


def test_the_simgrid_exports_box_shows_its_title(ruled, sample_copy, tmp_path, qtbot):
    assert ruled.open_file(sample_copy("grid4x4.machine"))
    ruled.ask_platform_path = lambda saving: str(tmp_path / "g.xml")
    assert ruled.export_simgrid()
    box = ruled.carry_notes
    qtbot.waitExposed(box)
    assert box.windowTitle() == "Exported to SimGrid"
    assert box.width() >= title_width(box.windowTitle())


@pytest.mark.parametrize("text", ["OK.", "Wrote a.xml.", "A longer text than its title, "
                                   "which sets the width itself as it did before."])  # fmt: skip
def test_every_message_box_is_as_wide_as_its_title(ruled, qtbot, text):
    box = QMessageBox(QMessageBox.Icon.Information, "A title longer than its text is wide",
                      text, parent=ruled)  # fmt: skip
    box.setModal(False)
    _shown(qtbot, box)
    assert box.width() >= title_width(box.windowTitle())
    assert box.width() < title_width(box.windowTitle()) + 400 or len(text) > 60  # not huge


def test_every_dialog_is_as_wide_as_its_title(ruled, qtbot):
    from piui.widgets.file_dialogs import file_dialog

    plain = QDialog(ruled)
    plain.setWindowTitle("Export a SimGrid platform of the hardware topology, and more")
    plain.resize(120, 80)
    _shown(qtbot, plain)
    assert plain.width() >= title_width(plain.windowTitle())
    files = file_dialog(ruled, "Export a SimGrid platform " * 4, "/", True)
    _shown(qtbot, files)
    assert files.width() >= min(title_width(files.windowTitle()),
                                files.screen().availableGeometry().width() - 40)  # fmt: skip


def test_an_error_before_the_rule_is_installed_is_wide_enough(qtbot):
    from piui.widgets.status_messages import error_box

    box = error_box(None, "Cannot open the model at all, for a reason", "x: no such file")
    box.setModal(False)
    _shown(qtbot, box)
    assert box.width() >= title_width(box.windowTitle())
