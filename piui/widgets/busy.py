"""A wait cursor and a status message while the window works on its own thread.

Opening, reloading or saving a model of a million processors takes seconds (a 570 MB
text is read or written), as can reading or writing a large SimGrid platform, during
which the window cannot repaint. :func:`busy` says so first: the
status bar names the work and the file, the cursor waits, and both are put back however
the work ends (an error dialog then shows over a normal cursor).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEventLoop, Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication, QMainWindow


@contextmanager
def busy(window: QMainWindow, message: str) -> Iterator[None]:
    """Within this block: ``message`` in ``window``'s status bar and a wait cursor,
    painted before the block runs (no input is handled meanwhile)."""
    bar = window.statusBar()
    before = bar.currentMessage()
    bar.showMessage(message)
    QApplication.setOverrideCursor(QCursor(Qt.CursorShape.WaitCursor))
    try:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
        yield
    finally:
        QApplication.restoreOverrideCursor()
        if bar.currentMessage() == message:
            bar.showMessage(before) if before else bar.clearMessage()
