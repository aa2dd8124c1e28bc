"""The application's rule for the mouse wheel: a combo box, a spin box or a slider takes
the wheel only when it has the keyboard focus (a click or Tab gives it). Over one that
has not, the wheel scrolls what holds it, as it does everywhere else in a panel.

Without the rule, scrolling a panel changed whatever control came under the cursor (the
topology editor's Kind went from grid to clique). One filter on the application does it
for every such control, those of panels built later and of dialogs among them:

* on its first polish, a control that Qt would give the focus to on a wheel event
  (``Qt.WheelFocus``: combo and spin boxes) gets ``Qt.StrongFocus`` instead, so that the
  wheel never focuses a control it then changes;
* a wheel event on such a control without the focus is passed on, untouched, to its
  parent (a scroll area scrolls).

Scroll bars and views keep the wheel, of course. :func:`install` is idempotent; the main
window calls it once it has been painted: a filter on the application sees every event
of every object, and PySide6 then makes Python wrappers of Qt's internal widgets, which
loads every widget class of QtWidgets with its enums (55 ms of start-up, measured with
``benchmarks/bench_gui.py --startup-only``). The controls made before it are brought
under the rule when it is installed.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollBar,
    QWidget,
)

_WHEEL = QEvent.Type.Wheel
_POLISH = QEvent.Type.Polish
_CONTROLS = (QComboBox, QAbstractSpinBox, QAbstractSlider)
_WHEEL_FOCUS = Qt.FocusPolicy.WheelFocus
_STRONG_FOCUS = Qt.FocusPolicy.StrongFocus


def is_guarded(widget: QObject) -> bool:
    """Whether ``widget`` is a control the rule applies to."""
    return isinstance(widget, _CONTROLS) and not isinstance(widget, QScrollBar)


def has_focus(widget: QWidget) -> bool:
    """Whether the control or a part of it (a spin box's or an editable combo box's text
    field) has the keyboard focus."""
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


class WheelGuard(QObject):
    """The application-wide event filter of the rule (see the module's text)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == _WHEEL:
            if is_guarded(watched) and not has_focus(watched):
                event.ignore()  # Qt offers an ignored wheel event to the parent
                return True
        elif kind == _POLISH and is_guarded(watched) and watched.focusPolicy() == _WHEEL_FOCUS:
            watched.setFocusPolicy(_STRONG_FOCUS)
        return False


def install(app: QApplication | None = None) -> WheelGuard:
    """Apply the rule to the whole application (once)."""
    app = app or QApplication.instance()
    guard = app.findChild(WheelGuard, "piui-wheel-guard")
    if guard is None:
        guard = WheelGuard(app)
        guard.setObjectName("piui-wheel-guard")
        app.installEventFilter(guard)
        for top in app.topLevelWidgets():  # polished before the filter was there
            for kind in _CONTROLS:
                for control in top.findChildren(kind):
                    if is_guarded(control) and control.focusPolicy() == _WHEEL_FOCUS:
                        control.setFocusPolicy(_STRONG_FOCUS)
    return guard
