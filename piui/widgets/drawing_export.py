"""Export a topology drawing as PNG or SVG at a chosen size: the whole topology
fitted, or the view as shown, enlarged (the canvas draws it:
:meth:`~piui.widgets.topology_canvas.TopologyCanvas.render_image` and
:meth:`~piui.widgets.topology_canvas.TopologyCanvas.export_svg`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from piui.widgets.file_dialogs import ask_path
from piui.widgets.topology_canvas import TopologyCanvas

FORMATS = ("PNG", "SVG")
WHAT = ("the whole topology", "the view as shown")
#: Widths offered, besides the view's own (pixels); the height follows the drawing.
WIDTHS = (1920, 3840, 7680)
MAX_SIDE = 16384  # pixels of a side, at most (a 16k PNG is some 1 GB in memory)


class ExportDialog(QDialog):
    """The format, what to draw and its size in pixels; the height follows the width
    (the drawing's proportions) until it is typed."""

    def __init__(self, canvas: TopologyCanvas, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export the drawing")
        self.canvas = canvas
        self.format_box = QComboBox()
        self.format_box.addItems(FORMATS)
        self.what_box = QComboBox()
        self.what_box.addItems(WHAT)
        self.size_box = QComboBox()
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box in (self.width_box, self.height_box):
            box.setRange(16, MAX_SIDE)
            box.setSuffix(" px")
        self._typed_height = False
        self.note = QLabel()
        self.note.setWordWrap(True)
        sizes = QHBoxLayout()
        sizes.addWidget(self.width_box)
        sizes.addWidget(QLabel("×"))
        sizes.addWidget(self.height_box)
        form = QFormLayout(self)
        form.addRow("Format:", self.format_box)
        form.addRow("Draw:", self.what_box)
        form.addRow("Size:", self.size_box)
        form.addRow("Pixels:", sizes)
        form.addRow(self.note)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.what_box.currentIndexChanged.connect(self._offer_sizes)
        self.size_box.currentIndexChanged.connect(self._size_chosen)
        self.width_box.valueChanged.connect(self._width_typed)
        self.height_box.valueChanged.connect(self._height_typed)
        self.format_box.currentIndexChanged.connect(self._say)
        self._offer_sizes()

    @property
    def whole(self) -> bool:
        return self.what_box.currentIndex() == 0

    @property
    def kind(self) -> str:
        return FORMATS[self.format_box.currentIndex()].lower()

    def size(self) -> tuple[int, int]:  # type: ignore[override]
        return self.width_box.value(), self.height_box.value()

    def _offer_sizes(self) -> None:
        view = self.canvas.width()
        self.size_box.blockSignals(True)
        self.size_box.clear()
        for label, width in [(f"as on screen ({view} px wide)", view),
                             (f"twice the screen ({2 * view} px wide)", 2 * view),
                             *((f"{w} px wide", w) for w in WIDTHS)]:  # fmt: skip
            self.size_box.addItem(label, width)
        self.size_box.addItem("other (type it)", None)
        self.size_box.blockSignals(False)
        self._typed_height = False
        self.size_box.setCurrentIndex(1)
        self._size_chosen()

    def _size_chosen(self) -> None:
        width = self.size_box.currentData()
        if width is not None:
            self._typed_height = False
            self._set_width(int(width))

    def _set_width(self, width: int) -> None:
        width, height = self.canvas.export_size(width, self.whole)
        if height > MAX_SIDE:  # a tall drawing: as high as may be
            width, height = max(16, round(width * MAX_SIDE / height)), MAX_SIDE
        for box, value in ((self.width_box, width), (self.height_box, height)):
            box.blockSignals(True)
            box.setValue(min(max(value, 16), MAX_SIDE))
            box.blockSignals(False)
        self._say()

    def _width_typed(self) -> None:
        self.size_box.blockSignals(True)
        self.size_box.setCurrentIndex(self.size_box.count() - 1)
        self.size_box.blockSignals(False)
        if not self._typed_height:
            self._set_width(self.width_box.value())
        self._say()

    def _height_typed(self) -> None:
        self._typed_height = True
        self.size_box.blockSignals(True)
        self.size_box.setCurrentIndex(self.size_box.count() - 1)
        self.size_box.blockSignals(False)
        self._say()

    def _say(self) -> None:
        w, h = self.size()
        what = "scaled to fit" if self.whole else "the view enlarged"
        if self.kind == "svg":
            self.note.setText(f"SVG: shapes and text, {w} × {h} as its nominal size, {what}.")
        else:
            self.note.setText(f"PNG of {w} × {h} pixels ({w * h * 4 / 1e6:.0f} MB while "
                              f"drawn), {what}.")  # fmt: skip

    def save(self, path: str | Path) -> bool:
        """Write the drawing as chosen to ``path``."""
        w, h = self.size()
        if self.kind == "svg":
            self.canvas.export_svg(str(path), w, h, whole=self.whole)
            return Path(path).is_file()
        return self.canvas.export_png(str(path), w, h, whole=self.whole)


def export_drawing(canvas: TopologyCanvas, parent: QWidget | None = None,
                   start: str | Path = "topology") -> str | None:  # fmt: skip
    """Ask what to export and where (``start``: the suggested path, its suffix
    replaced by the format's), and write it; the path written, or None."""
    from PySide6.QtWidgets import QMessageBox  # on first use: its enums cost start-up

    dialog = ExportDialog(canvas, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    kind = dialog.kind
    path = ask_path(parent, f"Export the drawing as {kind.upper()}",
                    str(Path(start).with_suffix(f".{kind}")), True,
                    f"{kind.upper()} images (*.{kind});;All files (*)", kind)  # fmt: skip
    if not path:
        return None
    if not path.lower().endswith(f".{kind}"):
        path += f".{kind}"
    if not dialog.save(path):
        QMessageBox.warning(parent, "Export", f"Could not write {path}.")
        return None
    return path
