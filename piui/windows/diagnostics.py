"""The diagnostics panel: every error and warning of the model; activating one goes to
the thing it names."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.diagnostics import Diagnostic
from parasol_core.base.words import counted
from piui.document import Document

MESSAGE = 2  # the column of the messages


class _WrappedMessages(QStyledItemDelegate):
    """Each message on as many lines as its column's width needs: a row's height is its
    message's wrapped at that width (Qt's tree sizes a row for one line otherwise)."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self.tree = tree

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if index.column() != MESSAGE:
            return size
        width = max(40, self.tree.header().sectionSize(MESSAGE) - 8)
        text = str(index.data() or "")
        flags = Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextWrapAnywhere
        rect = option.fontMetrics.boundingRect(QRect(0, 0, width, 1 << 20), flags, text)
        return QSize(size.width(), max(size.height(), rect.height() + 4))


class DiagnosticsPanel(QWidget):
    activated = Signal(object)  # Diagnostic

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.summary = QLabel()
        self.tree = QTreeWidget()
        self.tree.setRootIsDecorated(False)
        self.tree.setHeaderLabels(["", "Line", "Message"])
        self.tree.header().setSectionResizeMode(MESSAGE, QHeaderView.ResizeMode.Stretch)
        self.tree.setColumnWidth(0, 70)
        self.tree.setColumnWidth(1, 60)
        # a message is read whole, on as many lines as the panel's width needs (cut to
        # one line, its reason was past the edge); laid out again as the panel resizes
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setItemDelegate(_WrappedMessages(self.tree))
        self.tree.header().sectionResized.connect(lambda *_: self.tree.doItemsLayout())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)
        self.tree.itemActivated.connect(self._activated)
        document.diagnosticsChanged.connect(self.show_diagnostics)
        self.show_diagnostics(document.diagnostics)

    def show_external(self, source: str, diagnostics: list[Diagnostic]) -> None:
        """Show another program's diagnostics of the model (the estimator's, when it
        refuses an export) under the model's own, until the model changes."""
        self._external = [Diagnostic(d.severity, f"{source}: {d.message}", d.line, d.column,
                                     d.file, d.target) for d in diagnostics]  # fmt: skip
        self._show(self.document.diagnostics)

    def show_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        self._external = []
        self._show(diagnostics)

    def _show(self, diagnostics: list[Diagnostic]) -> None:
        diagnostics = list(diagnostics) + list(getattr(self, "_external", []))
        self.tree.clear()
        for d in diagnostics:
            item = QTreeWidgetItem([d.severity, "" if d.line is None else str(d.line), d.message])
            item.setData(0, Qt.ItemDataRole.UserRole, d)
            item.setToolTip(MESSAGE, d.message)
            for column in range(MESSAGE + 1):  # beside a message's first line
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft
                )
            color = Qt.GlobalColor.darkRed if d.is_error else Qt.GlobalColor.darkYellow
            item.setForeground(0, color)
            self.tree.addTopLevelItem(item)
        n_err = sum(d.is_error for d in diagnostics)
        n_warn = len(diagnostics) - n_err
        self.summary.setText(
            "No problems found."
            if not diagnostics
            else f"{counted(n_err, 'error')}, {counted(n_warn, 'warning')}"
        )

    def diagnostic_at(self, row: int) -> Diagnostic:
        return self.tree.topLevelItem(row).data(0, Qt.ItemDataRole.UserRole)

    def _activated(self, item: QTreeWidgetItem) -> None:
        self.activated.emit(item.data(0, Qt.ItemDataRole.UserRole))
