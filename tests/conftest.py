"""Shared test setup: GUI tests run offscreen with their own settings file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_models"
OSU_LOGS = ROOT / "tests" / "data" / "osu"  # OSU benchmark logs (see generate.py there)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """No test reads or writes the user's real PIUI settings."""
    monkeypatch.setenv("PIUI_SETTINGS", str(tmp_path / "piui-settings.ini"))


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch):
    """A modal dialog would block an offscreen test forever: answer them, and record
    what was asked (``modal_dialogs`` fixture)."""
    asked: list[tuple[str, str]] = []
    try:
        from PySide6.QtWidgets import QMessageBox
    except ImportError:  # pragma: no cover - the core tests run without Qt too
        yield asked
        return

    def answer(default):
        def dialog(parent, title, text="", *args, **kwargs):
            asked.append((title, text))
            return default

        return staticmethod(dialog)

    B = QMessageBox.StandardButton
    monkeypatch.setattr(QMessageBox, "question", answer(B.Discard))
    monkeypatch.setattr(QMessageBox, "critical", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "warning", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "information", answer(B.Ok))
    monkeypatch.setattr(QMessageBox, "about", answer(None))

    def box_exec(self):  # QMessageBox instances (confirmations, error boxes): "Go on"/OK
        asked.append((self.windowTitle(), self.text()))
        return B.Ok

    monkeypatch.setattr(QMessageBox, "exec", box_exec)
    yield asked


@pytest.fixture
def modal_dialogs(_no_modal_dialogs):
    return _no_modal_dialogs


@pytest.fixture
def sample_copy(tmp_path):
    """A writable copy of a sample model: sample_copy("parsytec-gcel.machine")."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copy(SAMPLES / name, target)
        return target

    return copy


@pytest.fixture
def main_window(qtbot, sample_copy):
    """The main window with a copy of the GCel sample open; dialogs answered by tests."""
    from PySide6.QtWidgets import QMessageBox

    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    # A modal question would block an offscreen test forever: closing at teardown
    # discards unsaved changes unless a test says otherwise.
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.errors = []
    window.show_error = lambda title, text, source="": window.errors.append((title, text))
    window.confirm = lambda title, text, details: True  # "Go on"
    assert window.open_file(sample_copy("parsytec-gcel.machine"))
    window.show()
    return window


@pytest.fixture
def document(sample_copy):
    """``document(name)``: a PIUI document open on a copy of a sample (default: the 4 x 4
    grid)."""
    from piui.document import Document

    def make(name: str = "grid4x4.machine") -> Document:
        doc = Document()
        doc.open(sample_copy(name))
        return doc

    return make
