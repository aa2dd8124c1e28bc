"""Messages that describe a state go when the state does.

A window's message line ("iga removed (Undo brings it back)", a rejected value) and the
pink of a field whose input was refused speak of the model as it was at that moment.
:func:`forget_on_change` clears them when the model changes under them: another model
is opened, an undo or redo, or any later edit (an edit that wants to say something sets
its message after it is done, so it is not cleared by its own change record).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from parasol_core.session import EDIT, OPEN, REDO, UNDO, Change
from piui.document import Document
from piui.widgets.number_controls import REFUSED
from piui.widgets.scrolling import scroll_areas

_STALE_AFTER = (EDIT, UNDO, REDO, OPEN)


class _Forgetter(QObject):
    """Lives as a child of the window it serves, so that the connection goes with it."""

    def __init__(self, owner: QWidget, label: QLabel | None) -> None:
        super().__init__(owner)
        self.owner = owner
        self.label = label

    def changed(self, change: Change) -> None:
        if change.reason not in _STALE_AFTER:
            return
        label = self.label
        if label is not None and label.text():
            label.clear()
            label.setStyleSheet("")
        for field in list(REFUSED):
            if shiboken6.isValid(field) and self.owner.isAncestorOf(field):
                field.accept_input()


def forget_on_change(document: Document, owner: QWidget, label: QLabel | None) -> None:
    """Clear ``label`` and every refused-input highlight among ``owner``'s fields
    whenever the model changes."""
    forgetter = _Forgetter(owner, label)
    document.changed.connect(forgetter.changed)


class MessageLine(QLabel):
    """A window's message line: a refusal, an error, a state, of any length. It shows
    its whole text at any width of its dock: it wraps, never widens its window, and
    inside a scroll area whose panel is wider than what is seen of it (a dock made
    narrower than the panel) it wraps within the part seen, not past its right edge,
    where the end of the message was cut off. Make one with :func:`message_label`."""

    MARGIN = 6  # pixels kept free at the right edge of what is seen

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        from PySide6.QtWidgets import QSizePolicy

        self.setWordWrap(True)
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored)  # never widens its window
        self.setSizePolicy(policy)
        self._views: list = []  # the scroll areas it sits in, watched for their widths
        self._room: int | None = None  # the width seen of it; None: all of it

    def heightForWidth(self, width: int) -> int:
        # a layout asks the height for its column's width: the lines wrap at the room seen
        return super().heightForWidth(min(width, self._room or width))

    def event(self, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Show, QEvent.Type.ParentChange):
            self._watch()
        if event.type() in (QEvent.Type.Show, QEvent.Type.Move):
            self._fit()
        return super().event(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def resizeEvent(self, event: QEvent) -> None:
        super().resizeEvent(event)
        self._keep_lines()

    def setText(self, text: str) -> None:
        super().setText(text)
        self._keep_lines()

    def clear(self) -> None:
        super().clear()
        self._keep_lines()

    def _keep_lines(self) -> None:
        """At least the height its lines take at its width: a splitter, a tab or a dock
        gives a widget its minimum height, not the height its width asks for, and the
        line's second line was drawn over the table above it (the Run-time systems
        window at 300 pixels). An empty line keeps one line's height, as it has before
        its first message: a message that comes and goes does not move what is around
        it (the sweep dialog's form jumped when its error line was cleared)."""
        line = self.fontMetrics().lineSpacing()
        need = max(line, self.heightForWidth(self.width())) if self.text() else line
        if need != self.minimumHeight():
            self.setMinimumHeight(need)

    def _watch(self) -> None:
        views = scroll_areas(self)
        for view in self._views:
            if shiboken6.isValid(view) and view not in views:
                view.viewport().removeEventFilter(self)
        for view in views:
            if view not in self._views:
                view.viewport().installEventFilter(self)
        self._views = views

    def _fit(self) -> None:
        """The room seen of the line: the narrowest of its scroll areas' viewports, from
        where the line starts in the panel (scrolled fully left) to the right edge."""
        from PySide6.QtCore import QPoint

        room = None
        for view in self._views:
            if not shiboken6.isValid(view) or view.widget() is None:
                continue
            left = self.mapTo(view.widget(), QPoint(0, 0)).x()
            seen = view.viewport().width() - left - self.MARGIN
            room = seen if room is None else min(room, seen)
        room = None if room is None else max(room, 4 * self.MARGIN)
        if room != self._room:
            self._room = room
            self.setMaximumWidth(room if room is not None else QWIDGETSIZE_MAX)
            self.updateGeometry()  # its height for the new width


QWIDGETSIZE_MAX = (1 << 24) - 1


def message_label(text: str = "") -> MessageLine:
    """A message line under a form (:class:`MessageLine`): wraps within what is seen of
    its window, never widens it."""
    return MessageLine(text)


def heading_label(style: str = "font-weight: bold;") -> QLabel:
    """The heading of a window that edits one processor type (processor_title): it
    wraps, so a long name or a switch's note never widens the dock it sits in."""
    from PySide6.QtWidgets import QSizePolicy

    label = QLabel()
    label.setStyleSheet(style)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label


# how every window's message line says an edit was refused: what was not done, and why
REFUSAL_STYLE = "color: #b00020;"


def show_refusal(label: QLabel, message: str) -> None:
    """Say on a message line that an edit was refused: ``message`` names what was not
    done (the field or the operation: where) and the core's reason (why)."""
    label.setText(message)
    label.setStyleSheet(REFUSAL_STYLE)


def confirm(parent: QWidget, title: str, text: str, details: list[str] | None = None) -> bool:
    """Ask before an edit that breaks something: say what, offer to go on. True: go on."""
    from PySide6.QtWidgets import QMessageBox

    box = QMessageBox(QMessageBox.Icon.Warning, title, text,
                      QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel,
                      parent)  # fmt: skip
    box.button(QMessageBox.StandardButton.Ok).setText("Go on")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    if details:
        shown = details[:12] + ([f"… and {len(details) - 12} more"] if len(details) > 12 else [])
        box.setInformativeText("\n".join(shown))
    return box.exec() == QMessageBox.StandardButton.Ok


def error_box(parent: QWidget | None, title: str, text: str, source: str = "") -> QMessageBox:
    """An error message; ``source`` (a line of the file and a caret under the column)
    is shown in a monospaced font, so that the caret stands under the right character."""
    import html

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    box = QMessageBox(QMessageBox.Icon.Critical, title, "", QMessageBox.StandardButton.Ok,
                      parent)  # fmt: skip
    box.setTextFormat(Qt.TextFormat.RichText)
    body = "".join(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n"))
    body = body.replace("\n", "<br>")
    if source:
        body += ('<pre style="font-family: monospace; white-space: pre;">'
                 f"{html.escape(source)}</pre>")  # fmt: skip
    box.setText(body)
    from piui.widgets.window_titles import make_room

    make_room(box)  # an error can come before the main window's rule is installed
    return box


def place_on_screen(window: QWidget) -> None:
    """Move a window that would open off every screen (a monitor gone since it was
    saved) onto the primary screen."""
    from PySide6.QtGui import QGuiApplication

    frame = window.frameGeometry()
    screens = QGuiApplication.screens()
    if any(s.availableGeometry().intersects(frame) for s in screens) or not screens:
        return
    area = QGuiApplication.primaryScreen().availableGeometry()
    width, height = min(frame.width(), area.width()), min(frame.height(), area.height())
    window.setGeometry(area.x() + (area.width() - width) // 2,
                       area.y() + (area.height() - height) // 2, width, height)  # fmt: skip
