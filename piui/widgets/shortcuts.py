"""A window's own keys, given alike everywhere: Run is Ctrl+Return (and the keypad's
Ctrl+Enter), Close is Ctrl+W (the platform's Close) where the thing is a window, Esc
cancels a run under way (the dialogs' ``reject``); each key is named in the tooltip of
what it does, as the main window's menus show theirs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QWidget

RUN = ("Ctrl+Return", "Ctrl+Enter")
CLOSE = ("Ctrl+W", "Ctrl+F4")  # the platforms' Close, Ctrl+W first wherever it runs


def key_text(keys: str | QKeySequence.StandardKey) -> str:
    """A key as the platform writes it ("Ctrl+Return", "Ctrl+W")."""
    return QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText)


def with_key(text: str, keys: str | QKeySequence.StandardKey) -> str:
    """A tooltip naming its key: "Run the sweep (Ctrl+Return)"."""
    return f"{text} ({key_text(keys)})"


def bind(owner: QWidget, keys: str | QKeySequence.StandardKey | tuple[str, ...],
         slot: Callable[[], object]) -> list[QShortcut]:  # fmt: skip
    """``keys`` do ``slot`` while the keyboard is anywhere in ``owner``."""
    made = []
    for key in keys if isinstance(keys, tuple) else (keys,):
        shortcut = QShortcut(QKeySequence(key), owner)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)
        made.append(shortcut)
    return made


def key_for(button: QAbstractButton, owner: QWidget,
            keys: str | QKeySequence.StandardKey | tuple[str, ...], purpose: str) -> None:  # fmt: skip
    """``keys`` click ``button`` (when it is enabled) anywhere in ``owner``; its tooltip
    says ``purpose`` and the first key."""
    bind(owner, keys, lambda: button.click() if button.isEnabled() else None)
    button.setToolTip(with_key(purpose, keys[0] if isinstance(keys, tuple) else keys))
