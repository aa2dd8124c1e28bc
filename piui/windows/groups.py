"""The "Instructions" window of the report (section 3.2.1): one scaler per group of
timings, so that, say, every addition can be made slower with one slider.

The arithmetic is :mod:`parasol_core.session.scalers` and the factors of each processor type are
the session's (``session.scaler``, ``move_scaler``, ``accept_scalers``,
``cancel_scalers``), kept with its undo steps, so undo and redo bring the factors back
with the timings. A drag is one undo step. OK accepts the scaling done since the last OK
and puts every factor back to 1.0 on the new values; Cancel leaves the model as it was at
the last OK, its undo history and saved state included.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.params import GROUPS
from parasol_core.base.words import counted
from parasol_core.model import Processor
from parasol_core.session import Change
from parasol_core.session.scalers import ScalerState
from piui.document import Document
from piui.widgets.labels import processor_title, title_changed
from piui.widgets.number_controls import FactorSlider
from piui.widgets.scrolling import in_scroll_area
from piui.widgets.status_messages import forget_on_change, heading_label, message_label

log = logging.getLogger("piui")

# The scalers' groups (docs/decisions.md, "Group scalers"), in sections, in display order.
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Overall", ("all", "global", "local")),
    ("Arithmetic operations", ("arithmetic", "addition", "multiplication", "division",
                               "simple_power", "complex_power", "store", "memory_transfer")),
    ("Numeric types", ("integer", "real", "double", "complex")),
    ("Other instructions", ("logic", "flow", "array", "intrinsic")),
)  # fmt: skip


class _Row:
    """One group: its name, the factor slider, a 1x button and how many timings it has."""

    def __init__(self, group: str) -> None:
        self.group = group
        info = GROUPS[group]
        self.label = QLabel(info.label)
        self.label.setToolTip(f"{info.label}: {counted(len(info.members), 'timing parameter')}")
        self.slider = FactorSlider()
        self.slider.slider.setMinimumWidth(100)
        self.slider.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.slider.slider.setTickInterval(FactorSlider.STEPS // 2)  # 0.1x, 1x, 10x
        self.slider.label.setFixedWidth(48)
        self.slider.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.slider.setToolTip(f"Scale every {info.label.lower()} timing (mean and standard "
                               "deviation) by 0.1× to 10×; double-click for 1×")  # fmt: skip
        self.reset = QPushButton("1×")
        self.reset.setToolTip(f"Put the {info.label.lower()} scaler back to 1×")
        self.reset.setFixedWidth(34)
        self.count = QLabel()
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.count.setStyleSheet("color: palette(dark);")
        self.defined = -1

    def show_count(self, defined: int) -> None:
        total = len(GROUPS[self.group].members)
        self.defined = defined
        self.count.setText(f"{defined}/{total}")
        self.count.setToolTip(f"{defined} of the {counted(total, 'timing', grouped=False)} of "
                              f"this group are defined "
                              "for this processor type; the others are left alone")  # fmt: skip


class InstructionGroupsWindow(QWidget):
    """A scaler per instruction group, for the document's current processor type."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._defined: frozenset[str] | None = None

        self.title = heading_label()
        hint = QLabel("Each scaler multiplies every timing of its group, mean and standard "
                      "deviation, by its factor. Scalers compose by multiplication.")  # fmt: skip
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(dark);")

        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(4)
        grid.setColumnStretch(1, 1)
        self.rows: dict[str, _Row] = {}
        scale = QHBoxLayout()
        scale.setContentsMargins(0, 0, 0, 0)
        for text, align in (("0.1×", Qt.AlignmentFlag.AlignLeft),
                            ("1×", Qt.AlignmentFlag.AlignHCenter),
                            ("10×", Qt.AlignmentFlag.AlignRight)):  # fmt: skip
            mark = QLabel(text)
            mark.setStyleSheet("color: palette(dark);")
            scale.addWidget(mark, 1, align)
        scale.setContentsMargins(0, 0, 48 + 6, 0)  # the slider's part of a FactorSlider
        scale_widget = QWidget()
        scale_widget.setLayout(scale)
        grid.addWidget(scale_widget, 0, 1)
        count_head = QLabel("defined")
        count_head.setStyleSheet("color: palette(dark);")
        count_head.setToolTip("how many of the group's timings this processor type defines")
        grid.addWidget(count_head, 0, 3, Qt.AlignmentFlag.AlignRight)
        r = 1
        for heading, groups in SECTIONS:
            head = QLabel(heading)
            head.setStyleSheet("font-weight: bold; padding-top: 6px;")
            grid.addWidget(head, r, 0, 1, 4)
            line = QFrame()
            line.setFrameShape(QFrame.Shape.HLine)
            line.setFrameShadow(QFrame.Shadow.Sunken)
            grid.addWidget(line, r + 1, 0, 1, 4)
            r += 2
            for group in groups:
                row = _Row(group)
                self.rows[group] = row
                grid.addWidget(row.label, r, 0)
                grid.addWidget(row.slider, r, 1)
                grid.addWidget(row.reset, r, 2)
                grid.addWidget(row.count, r, 3)
                row.slider.valueEdited.connect(
                    lambda f, key, g=group: self._factor_edited(g, f, key)
                )
                row.reset.clicked.connect(lambda _=False, g=group: self.reset_group(g))
                row.slider.slider.installEventFilter(self)
                row.label.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
                row.label.customContextMenuRequested.connect(  # what-if: File > Sweep…
                    lambda pos, g=group, w=row.label: self.sweep_menu(g).exec(w.mapToGlobal(pos))
                )
                r += 1
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(8, 0, 8, 8)
        body_layout.addLayout(grid)
        body_layout.addStretch(1)
        scroll = in_scroll_area(body)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # never narrower than the rows: a clipped count or button would mislead
        bar = scroll.verticalScrollBar().sizeHint().width()
        scroll.setMinimumWidth(body.minimumSizeHint().width() + bar)

        self.message = message_label()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button.setToolTip("Keep the scaled timings and start again from 1× on them")
        self.cancel_button.setToolTip("Put the timings and factors back as they were at the "
                                      "last OK (one undo step)")  # fmt: skip
        self.ok_button.clicked.connect(self.accept)
        self.cancel_button.clicked.connect(self.cancel)
        # the keys of OK and Cancel, as in a dialog: Enter keeps, Esc cancels, while the
        # keyboard is in the window (on a scaler, say); a button with the focus answers
        # Enter itself (autoDefault), so Enter on Cancel cancels
        for button in (self.ok_button, self.cancel_button):
            button.setAutoDefault(True)
            button.setToolTip(
                f"{button.toolTip()} ({'Enter' if button is self.ok_button else 'Esc'})"
            )

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QVBoxLayout()
        top.setContentsMargins(8, 4, 8, 0)
        top.addWidget(self.title)
        top.addWidget(hint)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)

        document.modelReset.connect(self._model_reset)
        document.structureChanged.connect(self.refresh)
        document.currentProcessorChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        document.scalersChanged.connect(self._show_factors)
        forget_on_change(document, self, self.message)
        self.refresh()

    # ---- showing

    def sweep_menu(self, group: str) -> QMenu:
        """The context menu of a group's row: sweep its scaler on the current processor
        type (File > Sweep…, added as an axis)."""
        menu = QMenu(self)
        proc = self.document.current_processor()
        action = menu.addAction(f"Sweep scale {group}" + (f" pr({proc.id})…" if proc else "…"))
        action.setEnabled(proc is not None)
        if proc is not None:
            action.triggered.connect(
                lambda: self.document.sweepRequested.emit(f"scale {group} pr({proc.id})")
            )
        return menu

    def refresh(self, *_: object) -> None:
        proc = self.document.current_processor()
        self._defined = None
        self.title.setText(processor_title(proc))
        self._show_counts(proc)
        self._show_factors()

    def _model_reset(self) -> None:
        self.message.clear()
        self.refresh()

    def _show_counts(self, proc: Processor | None) -> None:
        defined = frozenset(proc.timings) if proc is not None else frozenset()
        if defined == self._defined:
            return
        self._defined = defined
        for row in self.rows.values():
            row.show_count(len(defined.intersection(GROUPS[row.group].members)))
        self._enable(proc)

    def _show_factors(self) -> None:
        proc = self.document.current_processor()
        state = self._state(proc)
        for group, row in self.rows.items():
            factor = state.factor(group)
            if row.slider.value() != factor:  # not the slider being dragged
                row.slider.setValue(factor)
            row.reset.setEnabled(proc is not None and factor != 1.0)
            if row.label.font().bold() != (factor != 1.0):  # a scaled group stands out
                font = row.label.font()
                font.setBold(factor != 1.0)
                row.label.setFont(font)
        self._enable(proc)

    def _enable(self, proc: Processor | None) -> None:
        state = self._state(proc)
        for group, row in self.rows.items():
            # a group with nothing to scale stays usable while it holds a factor
            row.slider.setEnabled(proc is not None and (row.defined > 0
                                                        or state.factor(group) != 1.0))  # fmt: skip
        self.ok_button.setEnabled(not state.is_neutral)
        self.cancel_button.setEnabled(not state.is_neutral)

    def _state(self, proc: Processor | None) -> ScalerState:
        return self.document.session.scaler(proc) if proc is not None else ScalerState()

    def _values_changed(self, change: Change) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        if title_changed(change, proc):
            self.title.setText(processor_title(proc))
        if change.touches(proc, "timings"):
            self._show_counts(proc)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.MouseButtonDblClick:
            for group, row in self.rows.items():
                if watched is row.slider.slider:
                    self.reset_group(group)
                    return True
        return super().eventFilter(watched, event)

    # ---- editing

    def _factor_edited(self, group: str, factor: float, merge_key: object) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        self.message.clear()
        self.document.session.move_scaler(proc.id, group, factor, merge=merge_key)

    def reset_group(self, group: str) -> None:
        """Put one group's scaler back to 1x (one undo step)."""
        proc = self.document.current_processor()
        if proc is None or self._state(proc).factor(group) == 1.0:
            return
        self.document.session.move_scaler(proc.id, group, 1.0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter is OK, Esc is Cancel (the keys a scaler does not take itself)."""
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.ok_button.isEnabled():
            self.ok_button.click()
        elif key == Qt.Key.Key_Escape and self.cancel_button.isEnabled():
            self.cancel_button.click()
        else:
            super().keyPressEvent(event)

    def accept(self) -> None:
        """OK: keep the scaled timings; every factor starts again from 1x on them."""
        proc = self.document.current_processor()
        if proc is None:
            return
        self.document.session.accept_scalers(proc.id)
        self.message.setText("Scaled timings kept; the scalers start again from 1×.")
        log.info("instruction group scaling of processor %s accepted", proc.id)
        self._show_factors()

    def cancel(self) -> None:
        """Cancel: the timings and factors as they were at the last OK; the scaling steps
        since are undone and forgotten (the title and Edit menu as before them)."""
        proc = self.document.current_processor()
        if proc is None or self._state(proc).is_neutral:
            return
        self.document.session.cancel_scalers(proc.id)
        self.message.setText("Scaling since the last OK cancelled.")
