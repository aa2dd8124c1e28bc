"""The "Processor Cache Parameters" window (report section 3.2.1): the cache size on a
logarithmic scale, the cache speed as mantissa and exponent, and the small loop speedup.

A size of 0 in a file is shown as 1 and stays 0 in the file until it is edited
(docs/decisions.md, "Number controls"). A processor type without a cache section shows empty
controls; setting any of them adds the section, in the same undo step.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QMenu,
    QSpacerItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.model import TIMING, Timing, reference_fields
from parasol_core.session import Change
from piui.document import Document
from piui.widgets.labels import processor_title
from piui.widgets.number_controls import LogIntEdit, MantissaExponentEdit
from piui.widgets.status_messages import forget_on_change, heading_label, message_label
from piui.widgets.sweep_menu import offer_sweep, sweep_menu

_FIELDS = {name: f.kind for name, f in reference_fields("pc").items()}
_LABELS = {"size": "cache size", "speed": "cache speed", "smallloopspeedup": "small loop speedup"}


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(dark);")
    return label


class CacheWindow(QWidget):
    """The cache of the document's current processor type."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.title = heading_label()

        self.size_edit = LogIntEdit(what="a cache size (a whole number of instructions)")
        self.size_edit.setToolTip("Fortran instructions that fit in the cache (1 to 10^7)")
        self.speed_edit = MantissaExponentEdit()
        self.speed_edit.setToolTip("time of one cache access in seconds")
        self.speedup_edit = MantissaExponentEdit(exponent_range=(-1, 1))
        self.speedup_edit.setToolTip("how much faster a loop that fits in the cache runs")
        self.speedup_edit.field.setToolTip("exact small loop speedup (a ratio, > 0)")
        for edit in (self.speed_edit, self.speedup_edit):
            edit.field.setMinimumWidth(90)
            edit.exponent_label.setMinimumWidth(56)
        self.size_edit.field.setMinimumWidth(90)

        box = QGroupBox("Processor cache parameters")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        form.setVerticalSpacing(4)
        form.addRow("Cache size (instructions):", self.size_edit)
        form.addRow(_note("The number of Fortran instructions that fit in the cache."))
        form.addItem(QSpacerItem(0, 8))
        form.addRow("Cache speed (seconds per access):", self.speed_edit)
        form.addItem(QSpacerItem(0, 8))
        form.addRow("Small loop speedup (ratio to normal memory):", self.speedup_edit)
        self.speedup_note = _note("")
        form.addRow(self.speedup_note)
        for attr, edit in (
            ("size", self.size_edit),
            ("speed", self.speed_edit),
            ("smallloopspeedup", self.speedup_edit),
        ):  # what-if: File > Sweep…
            offer_sweep(form.labelForField(edit), lambda a=attr: self.sweep_menu(a))

        self.no_cache = _note("This processor type has no cache section: setting a value "
                              "adds one.")  # fmt: skip
        self.message = message_label()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(box)
        layout.addWidget(self.no_cache)
        layout.addWidget(self.message)
        layout.addStretch(1)

        self.size_edit.valueEdited.connect(lambda v, key: self._edited("size", int(v), key))
        self.speed_edit.valueEdited.connect(lambda v, key: self._edited("speed", v, key))
        self.speedup_edit.valueEdited.connect(
            lambda v, key: self._edited("smallloopspeedup", v, key)
        )
        for w in (self.size_edit, self.speed_edit, self.speedup_edit):
            w.rejected.connect(self._rejected)
        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.currentProcessorChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        forget_on_change(document, self, self.message)
        self._first = True
        self.refresh()

    # ---- showing

    def refresh(self, *_: object) -> None:
        proc = self.document.current_processor()
        self.title.setText(processor_title(proc))
        cache = proc.cache if proc is not None else None
        for w in (self.size_edit, self.speed_edit, self.speedup_edit):
            w.setEnabled(proc is not None)
        self.no_cache.setVisible(proc is not None and cache is None)
        size = cache.size if cache is not None else None
        speed = _mean(cache.speed) if cache is not None else None
        speedup = _mean(cache.smallloopspeedup) if cache is not None else None
        # a control keeps what it shows while its own slider is dragged
        if self._first or self.size_edit.value() != size:
            self.size_edit.setValue(size)
        if self._first or self.speed_edit.value() != speed:
            self.speed_edit.setValue(speed)
        if self._first or self.speedup_edit.value() != speedup:
            self.speedup_edit.setValue(speedup)
        self._first = False
        self._show_speedup_note(speedup)

    def _show_speedup_note(self, speedup: float | None) -> None:
        if speedup is not None and speedup < 1:
            self.speedup_note.setText("Below 1.0: the cache is slower than normal memory "
                                      "(unlikely, but may be experimented with).")  # fmt: skip
            self.speedup_note.setStyleSheet("color: #9a6700;")
        else:
            self.speedup_note.setText("How much faster a loop runs when it fits in the cache; "
                                      "1.0 for no gain.")  # fmt: skip
            self.speedup_note.setStyleSheet("color: palette(dark);")

    def sweep_menu(self, attr: str) -> QMenu:
        """The context menu of a cache parameter: sweep it on the current processor type
        (File > Sweep…); none without a cache section to change."""
        proc = self.document.current_processor()
        ok = proc is not None and proc.cache is not None
        return sweep_menu(self, self.document, f"pc({proc.id}).{attr}" if ok else None)

    def _values_changed(self, change: Change) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        if change.touches(proc) or (proc.cache is not None and change.touches(proc.cache)):
            self.refresh()

    def _rejected(self, message: str) -> None:
        self.message.setText(message)
        self.message.setStyleSheet("color: #b00020;")

    # ---- editing

    def _edited(self, attr: str, value: Any, merge_key: object) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        self.message.clear()
        cache = proc.cache
        if _FIELDS[attr] == TIMING:
            old = getattr(cache, attr) if cache is not None else None
            value = Timing(value, None if old is None else old.sd)
        label = _LABELS[attr]
        # a missing cache section is created by the same undo step
        verb = "Add cache with" if cache is None else "Set"
        self.document.session.set_value(f"pc({proc.id}).{attr}", value, label=f"{verb} {label}",
                                        merge=merge_key)  # fmt: skip


def _mean(timing: Timing | None) -> float | None:
    return None if timing is None else timing.mean
