"""A window's "Sweep …" context menu: a parameter the window shows, offered as an axis of
File > Sweep… (the document's ``sweepRequested``; the dialog adds the axis with the
values the core suggests for it, :func:`parasol_core.sweep.analysis.suggested_values`).
The instruction and scaler-group windows build theirs the same way."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu, QWidget


def sweep_menu(parent: QWidget, document: object, change: str | None) -> QMenu:
    """One entry, "Sweep CHANGE…", asking the document to sweep ``change`` (disabled when
    there is nothing to sweep: ``None``)."""
    menu = QMenu(parent)
    action = menu.addAction(f"Sweep {change}…" if change else "Sweep…")
    action.setEnabled(bool(change))
    if change:
        action.triggered.connect(lambda: document.sweepRequested.emit(change))
    return menu


def offer_sweep(widget: QWidget | None, menu: Callable[[], QMenu]) -> None:
    """Right-clicking ``widget`` (a row's label) shows ``menu()``, made when asked (what
    it sweeps follows the window's current processor, topology or selection)."""
    if widget is None:
        return
    widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    widget.customContextMenuRequested.connect(lambda pos: menu().exec(widget.mapToGlobal(pos)))
