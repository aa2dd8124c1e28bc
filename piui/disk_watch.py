"""Notices when another program changes, replaces, deletes or moves the open model file.

The session knows what it read or last wrote (``Session.disk_status``); this object
only decides when to ask: when the file system says the file or its folder changed
(editors and ``set -i`` replace the file by a rename, which ends a watch on the file
itself, so its folder is watched too), and whenever the application becomes active
again (file systems that send no notices, such as some network ones). A burst of
notices (an editor writing in steps) is looked at once, 150 ms after the last.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from parasol_core.session import disk
from piui.document import Document

SETTLE_MS = 150


class DiskWatcher(QObject):
    """Emits ``statusChanged(status)`` ("changed", "missing" or "unchanged") when the
    open file's state on disk changes, and again for each further change by another
    program while it stays changed."""

    statusChanged = Signal(str)

    def __init__(self, document: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.status = disk.UNCHANGED
        self._seen: tuple | None = None  # the file's stat when last looked at
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._poke)
        self._watcher.directoryChanged.connect(self._poke)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SETTLE_MS)
        self._timer.timeout.connect(self.check)
        document.pathChanged.connect(self.rewatch)
        document.modelReset.connect(self.rewatch)
        app = QGuiApplication.instance()
        if app is not None:
            app.applicationStateChanged.connect(self._application_state)
        self.rewatch()

    def rewatch(self, *_: object) -> None:
        """Watch the document's file (after open, reload, save, save as), and take what
        is on disk now as seen: the session has just read or written it."""
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
        self._seen = None
        path = self.document.path
        if path is not None:
            self._watch(str(path))
        self.check()

    def _watch(self, path: str) -> None:
        wanted = [p for p in (path, os.path.dirname(os.path.abspath(path)))
                  if os.path.exists(p)]  # fmt: skip
        missing = [
            p for p in wanted if p not in self._watcher.files() + self._watcher.directories()
        ]
        if missing:
            self._watcher.addPaths(missing)

    def _poke(self, *_: object) -> None:
        self._timer.start()

    def _application_state(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.check()

    def check(self) -> str:
        """Look at the file now; emit when what is there differs from the last look."""
        path = self.document.path
        if path is None:
            return self._set(disk.UNCHANGED, None)
        self._watch(str(path))  # a replaced file is a new one to watch
        try:
            st = os.stat(path)
            seen: tuple | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            seen = None
        if seen == self._seen and self._seen is not None:
            return self.status
        status = self.document.session.disk_status()
        if status == disk.UNKNOWN:
            status = disk.UNCHANGED
        return self._set(status, seen)

    def _set(self, status: str, seen: tuple | None) -> str:
        again = status == disk.CHANGED and seen != self._seen  # a further change
        self._seen = seen
        if status != self.status or again:
            self.status = status
            self.statusChanged.emit(status)
        return status
