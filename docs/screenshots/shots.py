"""What the screenshot scripts of this folder share: PIUI's settings kept out of the
user's, the event loop run for a while or until something is done, and the main window
on a model."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PIUI_SETTINGS", str(Path(tempfile.mkdtemp()) / "piui.ini"))

from PySide6.QtWidgets import QApplication  # noqa: E402


def settle(seconds: float = 0.6) -> None:
    """Run the event loop for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.02)


def until(done: Callable[[], bool], limit: float, what: str) -> None:
    """Run the event loop until ``done()``; TimeoutError naming ``what`` after ``limit``
    seconds."""
    end = time.monotonic() + limit
    while not done():
        if time.monotonic() > end:
            raise TimeoutError(f"{what} did not end in {limit:g} s")
        QApplication.processEvents()
        time.sleep(0.02)


def main_window(model: Path):  # noqa: ANN201 (a MainWindow: PIUI imported here, late)
    """The main window on ``model``, shown at 1600 x 1000 (the application made first)."""
    QApplication.instance() or QApplication([])
    from piui.main_window import MainWindow

    window = MainWindow()
    window.setAnimated(False)
    window.ask_save_changes = lambda: 0
    # a copy of unsaved edits beside the sample (a PIUI ended while it had some) is kept
    # for its owner: the shot opens the file as it is, not a modal question nobody answers
    from parasol_core.session import recovery

    window._ask_restore = lambda copy: recovery.KEEP
    window.open_file(model)
    window.setGeometry(0, 0, 1600, 1000)
    window.show()
    settle(1.0)
    return window
