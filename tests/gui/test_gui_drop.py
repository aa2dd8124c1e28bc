"""A file dropped on the main window opens as File > Open, File > Import SimGrid
platform or File > Open program trace would open it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from parasol_core.simgrid import export_platform
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def drop(window, *paths: Path) -> bool:
    """Drag ``paths`` over the window and drop them; whether the window took them."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    point = QPointF(window.width() / 2, window.height() / 2)
    action, button = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
    enter = QDragEnterEvent(point.toPoint(), action, mime, button, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    event = QDropEvent(point, action, mime, button, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    return event.isAccepted()


def test_a_dropped_model_opens(main_window, qtbot, tmp_path):
    copy = tmp_path / "grid.machine"
    copy.write_text((SAMPLES / "grid4x4.machine").read_text())
    assert drop(main_window, copy)
    qtbot.waitUntil(lambda: main_window.document.path == copy)
    assert main_window.document.machine.hardware().name == "4 x 4 grid"


def test_a_dropped_model_asks_to_save_the_changes_first(main_window, qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    before = main_window.document.path
    main_window.document.session.set_value("ma.name", "changed")
    asked = []
    main_window.ask_save_changes = lambda: asked.append(1) or QMessageBox.StandardButton.Cancel
    assert drop(main_window, SAMPLES / "grid4x4.machine")
    qtbot.waitUntil(lambda: asked == [1])
    assert main_window.document.path == before  # cancelled: nothing lost
    assert main_window.document.machine.name == "changed"


def test_a_dropped_platform_is_imported(main_window, qtbot, tmp_path):
    xml = tmp_path / "grid.xml"
    xml.write_text(export_platform(load(SAMPLES / "grid4x4.machine")).text)
    assert drop(main_window, xml)
    qtbot.waitUntil(lambda: main_window.document.path is None)  # new: Save as to keep it
    assert len(main_window.document.machine.hardware().links) == 24  # the grid's


def test_a_dropped_trace_opens_in_the_program_window(main_window, qtbot):
    assert drop(main_window, SAMPLES / "traces" / "stencil.txt")
    qtbot.waitUntil(lambda: main_window.panels.get("program") is not None
                    and main_window.panels["program"].program is not None, timeout=10000)  # fmt: skip
    assert "stencil" in main_window.panels["program"].program.title


def test_two_files_or_a_web_address_are_not_taken(main_window):
    assert not drop(main_window, SAMPLES / "grid4x4.machine", SAMPLES / "fwi-csys.machine")
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.org/x.machine")])
    enter = QDragEnterEvent(main_window.rect().center(), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)  # fmt: skip
    QApplication.sendEvent(main_window, enter)
    assert not enter.isAccepted()
