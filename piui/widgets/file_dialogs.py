"""File dialogs that never block on what they list.

Qt's own file dialog asks its icon provider for each listed file's type, and the
default provider guesses a type from the file's contents when its name does not say;
on a device file such as ``/proc/kmsg`` that read never returns and the window freezes
for good. These dialogs use a provider that decides from the name and the file's kind
(folder, file, link) only, and they are always Qt's own dialog, so that this holds on
every desktop.

Every dialog that asks for a file is one of these, and opens where
:func:`parasol_core.frontend.folders.dialog_folder` says, for the model on screen
(:func:`start_folder`, :func:`start_file`): the model's folder, not the process's
working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileInfo
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QFileDialog, QFileIconProvider, QHeaderView, QTreeView, QWidget

from parasol_core.frontend.folders import dialog_folder, file_name
from piui.app_settings import recent_files

if TYPE_CHECKING:
    from piui.document import Document

FILE_FILTER = "Machine models (*.machine);;All files (*)"
PLATFORM_FILTER = "SimGrid platforms (*.xml);;All files (*)"
MEASUREMENT_FILTER = "Measurements (*.csv *.txt *.out *.log);;All files (*)"


def start_folder(document: Document, fallback: str | Path | None = None) -> Path:
    """The folder a file dialog about ``document``'s model opens in (the module's rule;
    ``fallback`` when neither the model nor a recent file has one)."""
    return dialog_folder(document.path, recent_files(), fallback)


def start_file(document: Document, suffix: str, extra: str = "") -> str:
    """The file a save or export dialog proposes for something made from the model:
    named after it (``extra`` and ``suffix`` added), in :func:`start_folder`."""
    return str(start_folder(document) / file_name(document.path, document.machine.name or "",
                                                  suffix, extra))  # fmt: skip


class NameOnlyIconProvider(QFileIconProvider):
    """Icons and type names from a file's name and kind, never from its contents."""

    def icon(self, what: object) -> QIcon:  # type: ignore[override]
        if isinstance(what, QFileInfo):
            kind = QFileIconProvider.IconType.Folder if what.isDir() else (
                QFileIconProvider.IconType.File)  # fmt: skip
            return super().icon(kind)
        return super().icon(what)

    def type(self, info: QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        if info.isSymLink():
            return "Link"
        suffix = info.suffix()
        return f"{suffix.upper()} file" if suffix else "File"


def file_dialog(parent: QWidget | None, title: str, start: str, saving: bool,
                file_filter: str = FILE_FILTER, suffix: str = "machine") -> QFileDialog:  # fmt: skip
    dialog = QFileDialog(parent, title, start, file_filter)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    dialog.setOption(QFileDialog.Option.DontUseCustomDirectoryIcons, True)
    dialog.setIconProvider(NameOnlyIconProvider())
    # room for the names, sizes and dates in full (Qt's own size elides them: "MAC…ile",
    # "28 11 2…6"), within the screen
    screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
    area = screen.availableGeometry() if screen is not None else None
    width, height = 860, 540
    if area is not None:
        width, height = min(width, area.width() - 40), min(height, area.height() - 60)
    dialog.resize(width, height)
    view = dialog.findChild(QTreeView, "treeView")  # the detail view of Qt's own dialog
    if view is not None:  # the name takes what the size, type and date leave
        header = view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, header.count()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    if saving:
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setDefaultSuffix(suffix)
    else:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    return dialog


def ask_paths(parent: QWidget | None, title: str, start: str,
              file_filter: str = FILE_FILTER) -> list[str]:  # fmt: skip
    """Existing files the user chose (several at once), or [] when cancelled."""
    dialog = file_dialog(parent, title, start, False, file_filter)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
    if dialog.exec() != QFileDialog.DialogCode.Accepted:
        return []
    return list(dialog.selectedFiles())


def ask_path(parent: QWidget | None, title: str, start: str, saving: bool,
             file_filter: str = FILE_FILTER, suffix: str = "machine") -> str:  # fmt: skip
    """The path the user chose, or "" when cancelled."""
    dialog = file_dialog(parent, title, start, saving, file_filter, suffix)
    if dialog.exec() != QFileDialog.DialogCode.Accepted:
        return ""
    files = dialog.selectedFiles()
    return files[0] if files else ""
