"""Work that waits until a window is on screen: run a callable once the top-level window
of a widget has been painted for the first time (at once, on the next turn of the event
loop, if it has been already).

PIUI's start-up paints the main window first and then does what nobody sees in that
first picture: the symbolic sensitivity (sympy) below the fold of the combinations
window, the charts (pyqtgraph) behind a tab. Such work calls :func:`after_first_paint`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    """Watches one window for its first paint event, then runs what waited for it."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.waiting: list[Callable[[], None]] = []
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            self.setObjectName("")  # done: a later call finds the window painted
            waiting, self.waiting = self.waiting, []
            for fn in waiting:
                # after the paint in progress (and its children's) has finished
                QTimer.singleShot(0, fn)
            self.deleteLater()
        return False


def has_painted(widget: QWidget) -> bool:
    """Whether the window holding ``widget`` is on screen: exposed, which Qt answers by
    painting it at once (so it has been painted, or is being painted now)."""
    handle = widget.window().windowHandle()
    return handle is not None and handle.isExposed()


_docks: weakref.WeakSet = weakref.WeakSet()


def watch_dock(dock: QWidget) -> None:
    """Let :func:`on_screen` know ``dock`` (the main window calls it for each dock)."""
    _docks.add(dock)


def on_screen(widget: QWidget) -> bool:
    """Whether ``widget`` is shown where it can be seen: shown, and its dock (if it is in
    one) not behind another dock's tab. Qt keeps a tabbed dock "visible" behind its tab,
    with an empty visible region; the dock's region is asked, not the widget's, since a
    widget scrolled out of its dock's view is still on show. A window that refreshes
    only on screen refreshes again in ``dock_shown``, which the main window calls when
    its dock's tab is chosen, and in ``showEvent``."""
    if not widget.isVisible():
        return False
    for dock in list(_docks):
        if shiboken6.isValid(dock) and dock.isAncestorOf(widget):
            return not dock.visibleRegion().isEmpty()
    return True


def after_first_paint(widget: QWidget, fn: Callable[[], None]) -> None:
    """Call ``fn`` once the window holding ``widget`` has been painted; while ``widget``
    lives (a callable of a widget deleted meanwhile is dropped)."""
    ref = weakref.ref(widget)

    def run() -> None:
        w = ref()
        if w is not None and _alive(w):
            fn()

    window = widget.window()
    if has_painted(window):
        QTimer.singleShot(0, run)
        return
    watcher = window.findChild(_FirstPaint, "piui-first-paint",
                               Qt.FindChildOption.FindDirectChildrenOnly)  # fmt: skip
    if watcher is None:
        watcher = _FirstPaint(window)
        watcher.setObjectName("piui-first-paint")
    watcher.waiting.append(run)


def _alive(widget: QWidget) -> bool:
    return shiboken6.isValid(widget)
