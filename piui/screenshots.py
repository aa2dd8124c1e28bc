"""Render every window to PNG, without a display (`piui --screenshots DIR`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication


def _settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def render_all(window, directory: Path) -> list[Path]:  # noqa: ANN001
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    window.setAnimated(False)  # no dock mid-animation in a picture
    window.show()
    _settle()

    def save(widget, name: str) -> None:  # noqa: ANN001
        _settle()
        path = directory / f"{name}.png"
        if not widget.grab().save(str(path)):
            raise OSError(f"cannot write {path}")
        written.append(path)

    save(window, "main-window")
    for key, dock in window.docks.items():
        dock.show()
        dock.raise_()
        panel = window.panels[key]
        save(panel, key)
        tabs = getattr(panel, "tabs", None)  # panels with pages: one picture each
        if tabs is not None:
            for i in range(1, tabs.count()):
                tabs.setCurrentIndex(i)
                save(panel, f"{key}-{i + 1}")
            tabs.setCurrentIndex(0)
    for name, widget in getattr(window, "extra_windows", lambda: [])():
        widget.show()
        save(widget, name)
        widget.hide()
    return written
