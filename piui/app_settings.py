"""Where PIUI keeps what it remembers between runs (layout, recent files, the
estimator, each model's push name)."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings


def settings() -> QSettings:
    """Settings persist window layout and recent files. PIUI_SETTINGS names an INI file
    to use instead of the platform's store (the tests use a temporary one)."""
    path = os.environ.get("PIUI_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings("PIUI", "PIUI")


def recent_files() -> list[str]:
    """The files opened or saved last, newest first (File > Open recent)."""
    value = settings().value("recentFiles", [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in (value or [])]
