"""The bar above the overview that says the open file changed on disk, and what can be
done about it. It asks without stopping the user: a what-if study goes on while it is
shown, and the next save asks again if the file still differs."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout

from parasol_core.session import disk

# what each state offers: (button text, signal name)
_RELOAD = ("&Reload", "reloadRequested")
_DISCARD_RELOAD = ("&Reload, discarding my changes", "reloadRequested")
_KEEP = ("&Keep mine", "dismissed")
_IGNORE = ("&Ignore", "dismissed")
_DIFF = ("Show &difference", "diffRequested")
_SAVE = ("&Save it again", "saveRequested")


class FileChangedBar(QFrame):
    reloadRequested = Signal()
    diffRequested = Signal()
    saveRequested = Signal()
    dismissed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("file-changed-bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("#file-changed-bar { background: #fff4ce; border: 1px solid #e0c060; }")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        column = QVBoxLayout(self)  # the message above its buttons: the bar is narrow
        column.setContentsMargins(8, 6, 8, 6)
        column.addWidget(self.label)
        self._layout = QHBoxLayout()
        self._layout.addStretch(1)
        column.addLayout(self._layout)
        self.buttons: dict[str, QPushButton] = {}
        self.hide()

    def show_status(self, status: str, name: str, modified: bool) -> None:
        """Say what happened to the file ``name``; hide when it is as PIUI knows it."""
        if status == disk.CHANGED and modified:
            text = (f"<b>{name}</b> was changed on disk by another program, and you have "
                    "unsaved changes here. Saving will ask before it overwrites the file.")  # fmt: skip
            offers = [_DISCARD_RELOAD, _KEEP, _DIFF]
        elif status == disk.CHANGED:
            text = f"<b>{name}</b> was changed on disk by another program."
            offers = [_RELOAD, _IGNORE, _DIFF]
        elif status == disk.MISSING:
            text = (f"<b>{name}</b> was deleted or moved away. The model is still here; "
                    "Save writes it back.")  # fmt: skip
            offers = [_SAVE, _IGNORE]
        else:
            self.hide()
            return
        self.label.setText(text)
        for button in self.buttons.values():
            self._layout.removeWidget(button)
            button.deleteLater()
        self.buttons = {}
        for caption, signal in offers:
            button = QPushButton(caption)
            button.clicked.connect(getattr(self, signal))
            if signal != "diffRequested":  # the difference is shown beside the bar
                button.clicked.connect(self.hide)
            self._layout.addWidget(button)
            self.buttons[caption.replace("&", "")] = button
        self.show()
