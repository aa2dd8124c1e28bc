"""The application's rule for dialog titles: a dialog is wide enough for its title to
be read in full in the window manager's title bar.

A message box is as wide as its text needs, and a short text ("Wrote grid4x4.xml.")
made the SimGrid export's box narrower than its title ("Exported to SimGrid" was cut
off, beside the title bar's icon and buttons). One filter on the application does it
for every dialog (message boxes, file dialogs, PIUI's own), those to come included: when
a dialog is shown, it is given the width of its title, in the title bar's bold font, and
of the title bar's icon and buttons (:data:`TITLE_BAR_EXTRA`), within the screen. A
message box, which sizes itself as it is shown, gets that width as a spacer in its
layout (before it sizes itself: the filter sees the show event first).

:func:`install` is idempotent; the main window calls it once it has been painted, as it
does the wheel's rule (a filter on the application costs start-up time before).
:func:`make_room` applies the rule to one dialog, for a dialog shown before that.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFont, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QGridLayout,
    QMessageBox,
    QSizePolicy,
    QSpacerItem,
    QWidget,
)

# The title bar around its text: the window-menu icon on the left, minimise, maximise
# and close on the right, and their margins (openbox, GNOME, KDE: 100-130 pixels)
TITLE_BAR_EXTRA = 140
_SHOW = QEvent.Type.Show


def title_width(title: str) -> int:
    """The width a window needs to show ``title`` in full in its title bar."""
    font = QFont(QApplication.font())
    font.setBold(True)  # title bars draw their text bold, mostly
    return QFontMetrics(font).horizontalAdvance(title) + TITLE_BAR_EXTRA


def _screen_width(widget: QWidget) -> int:
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry().width() - 40 if screen is not None else 10_000


def make_room(dialog: QWidget) -> None:
    """Give ``dialog`` the width of its title (the module's rule)."""
    need = min(title_width(dialog.windowTitle()), _screen_width(dialog))
    if isinstance(dialog, QMessageBox):
        layout = dialog.layout()
        if not isinstance(layout, QGridLayout):
            return
        margins = layout.contentsMargins()
        width = max(0, need - margins.left() - margins.right())
        spacer = getattr(dialog, "_piui_title_spacer", None)
        if spacer is None:
            spacer = QSpacerItem(width, 0, QSizePolicy.Policy.Minimum,
                                 QSizePolicy.Policy.Minimum)  # fmt: skip
            layout.addItem(spacer, layout.rowCount(), 0, 1, layout.columnCount())
            dialog._piui_title_spacer = spacer  # type: ignore[attr-defined]
        else:  # its title changed since it was last shown
            spacer.changeSize(width, 0, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Minimum)
            layout.invalidate()
        return
    if dialog.width() < need:
        dialog.resize(need, dialog.height())


class TitleRoom(QObject):
    """The application-wide event filter of the rule."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == _SHOW and isinstance(watched, QDialog) and watched.isWindow():
            make_room(watched)
        return False


def install(app: QApplication | None = None) -> TitleRoom:
    """Apply the rule to the whole application (once)."""
    app = app or QApplication.instance()
    room = app.findChild(TitleRoom, "piui-title-room")
    if room is None:
        room = TitleRoom(app)
        room.setObjectName("piui-title-room")
        app.installEventFilter(room)
    return room
