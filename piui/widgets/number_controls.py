"""Number controls the report's Tk interface had to build by hand: a real number as
mantissa and exponent sliders, an integer on a logarithmic slider, a scale factor.

Each emits ``valueEdited(value, merge_key)`` only for the user's own changes. During a
slider drag every step carries the same merge key, so the document's undo stack folds
the drag into one step; a typed value carries None. ``setValue`` never emits.
"""

from __future__ import annotations

import logging
import math
import weakref

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QSlider, QToolTip, QWidget

from parasol_core.base.numeric import (
    cache_size_shown,
    join,
    log_position,
    log_value,
    parse_positive,
    parse_whole,
    split,
)
from parasol_core.model.tree import format_number

_INVALID_STYLE = "QLineEdit { background: #ffd6d6; }"


class KeyRun:
    """The merge key of keyboard and wheel steps on one control: steps less than
    ``merge_window`` seconds apart merge into one undo step, as a drag does (the
    session reads the window from the key)."""

    merge_window = 1.0


class _DragKeys:
    """A fresh merge key per slider drag; one :class:`KeyRun` per control for its
    keyboard and wheel steps."""

    def __init__(self, *sliders: QSlider) -> None:
        self._drag: object | None = None
        self._keys = KeyRun()
        for s in sliders:
            s.sliderPressed.connect(self._start)
            s.sliderReleased.connect(self._end)

    @property
    def key(self) -> object:
        return self._drag if self._drag is not None else self._keys

    def _start(self) -> None:
        self._drag = object()

    def _end(self) -> None:
        self._drag = None


class _TipGoesWithItsPlace(QObject):
    """Hides a refusal's tooltip when the window under it moves, is resized, hidden or
    left: shown at a screen position, it would otherwise stay there on the desktop."""

    _ENDS = (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Hide,
             QEvent.Type.WindowDeactivate, QEvent.Type.Close)  # fmt: skip

    @classmethod
    def watch(cls, field: QWidget) -> None:
        window = field.window()
        if window.findChild(cls, options=Qt.FindChildOption.FindDirectChildrenOnly) is None:
            window.installEventFilter(cls(window))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() in self._ENDS:
            QToolTip.hideText()
            obj.removeEventFilter(self)
            self.deleteLater()
        return False


REFUSED: weakref.WeakSet[ValueField] = weakref.WeakSet()
"""The fields that show a refusal now (so that clearing them costs nothing when none do)."""


class ValueField(QLineEdit):
    """A text field that reports rejected input and puts the last good text back.

    The pink of a refusal marks the field until the user comes back to it (focuses it
    or types in it: it then holds the old, valid value) or the model changes
    (:func:`piui.widgets.status_messages.forget_on_change`); the window's message line keeps
    the reason."""

    rejected = Signal(str)
    reverted = Signal()  # Esc backed out of typing: the text last taken is back

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self._entered = self.text()  # the text the window last took (entered or shown)
        self.textEdited.connect(lambda _text: self.accept_input())
        self.editingFinished.connect(self._took)

    def _took(self) -> None:
        self._entered = self.text()

    def setText(self, text: str) -> None:
        """Show ``text`` from its beginning, as a reader starts: a value longer than the
        field (a model's name in a narrow panel) would otherwise show its end, the
        cursor's place. Not while the user is in the field: the cursor stays theirs."""
        super().setText(text)
        self._entered = text
        if not self.hasFocus():
            self.setCursorPosition(0)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc backs out of typing not yet entered: the text the window last took comes
        back and the key goes no further (a second Esc closes the window or dialog, as
        it does with nothing typed). The field's own Ctrl+Z / Ctrl+Shift+Z: a field's
        error (and what the window made of its text) describes the text it shows.
        Undoing an entry the window took (typed, then Return) enters the text it brings
        back, as Return would: the window applies it and says what follows from it, the
        error of the undone entry gone. Undoing typing not yet entered only takes the
        refusal's pink away."""
        if (event.key() == Qt.Key.Key_Escape and not event.modifiers()
                and self.isModified() and self.text() != self._entered):  # fmt: skip
            self.setText(self._entered)
            self.accept_input()
            self.reverted.emit()
            event.accept()
            return
        undo = event.matches(QKeySequence.StandardKey.Undo) or event.matches(
            QKeySequence.StandardKey.Redo) or QKeySequence(event.keyCombination()) in (
            QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y"))  # fmt: skip
        before = self.text()
        super().keyPressEvent(event)
        if not undo or self.text() == before:
            return
        self.accept_input()
        if before == self._entered:
            self.editingFinished.emit()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        # the user comes back to the field: not a window switch, nor a menu or a popup
        # closing (File, a context menu) that gives the focus back where it was
        if event.reason() not in (Qt.FocusReason.ActiveWindowFocusReason,
                                  Qt.FocusReason.PopupFocusReason):  # fmt: skip
            self.accept_input()

    def reject_input(self, message: str, good_text: str) -> None:
        """Refuse what was typed: say why at the field (a tooltip shown at once, and
        the ``rejected`` signal for the window's message line), keep the old value."""
        self._mark_refused(message)
        self.setText(good_text)
        self._say_refused(message)

    def mark_refused(self, message: str) -> None:
        """Mark the text the field shows as refused, keeping it: a value the window took
        and then found it cannot use (the Program window's flop expression, refused by
        the prediction it asked), marked and said as :meth:`reject_input` does, until
        the user comes back to the field or the window accepts its text again."""
        self._mark_refused(message)
        self._say_refused(message)

    def _mark_refused(self, message: str) -> None:
        logging.getLogger("piui").warning("input rejected: %s", message)
        if not self.is_refused():  # the field's own tooltip, given back on acceptance
            self._own_tip = self.toolTip()
        self._refused = True
        REFUSED.add(self)
        self.setToolTip(message)
        self.setStyleSheet(_INVALID_STYLE)

    def _say_refused(self, message: str) -> None:
        if self.isVisible():
            QToolTip.showText(self.mapToGlobal(self.rect().bottomLeft()), message, self)
            _TipGoesWithItsPlace.watch(self)
        self.rejected.emit(message)

    def accept_input(self) -> None:
        if not getattr(self, "_refused", False):
            return  # nothing to undo (and setStyleSheet is dear: a slider step calls this)
        self._refused = False
        REFUSED.discard(self)
        self.setToolTip(getattr(self, "_own_tip", ""))
        self.setStyleSheet("")

    def is_refused(self) -> bool:
        """Whether the field shows a refusal (its input was rejected since last accepted)."""
        return getattr(self, "_refused", False)


class MantissaExponentEdit(QWidget):
    """A timing as mantissa [1, 10) x 10^exponent: two sliders and an exact field."""

    valueEdited = Signal(float, object)
    rejected = Signal(str)

    MANTISSA_STEPS = 100  # mantissa resolution 0.01

    def __init__(self, exponent_range: tuple[int, int] = (-12, 1), parent: QWidget | None = None,
                 ) -> None:  # fmt: skip
        super().__init__(parent)
        self._value: float | None = None
        self.mantissa = QSlider(Qt.Orientation.Horizontal)
        self.mantissa.setRange(self.MANTISSA_STEPS, 10 * self.MANTISSA_STEPS - 1)
        self.mantissa.setMinimumWidth(120)
        self.mantissa.setToolTip("mantissa (1 to 10)")
        self.exponent = QSlider(Qt.Orientation.Horizontal)
        self.exponent.setRange(*exponent_range)
        self.exponent.setMinimumWidth(80)
        self.exponent.setToolTip("exponent (power of ten)")
        self.exponent.setPageStep(1)
        self.exponent_label = QLabel()
        self._fit_exponent_label()
        self.field = ValueField()
        self.field.setMaximumWidth(110)
        self.field.setToolTip("exact value in seconds")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.mantissa, 3)
        layout.addWidget(self.exponent_label)
        layout.addWidget(self.exponent, 2)
        layout.addWidget(self.field)
        self._drag = _DragKeys(self.mantissa, self.exponent)
        self.mantissa.valueChanged.connect(self._slid)
        self.exponent.valueChanged.connect(self._slid)
        self.field.editingFinished.connect(self._typed)
        self.field.rejected.connect(self.rejected)
        self._show(None)

    def value(self) -> float | None:
        return self._value

    def _fit_exponent_label(self) -> None:
        """The power of ten is read whole at any exponent the slider reaches: its label
        is never squeezed below the widest of them (a narrow dock cut '×10^-7' to
        '×10^-')."""
        metrics = self.exponent_label.fontMetrics()
        widest = max(metrics.horizontalAdvance(f"×10^{e}")
                     for e in (self.exponent.minimum(), self.exponent.maximum()))  # fmt: skip
        self.exponent_label.setMinimumWidth(widest + 2)

    def setValue(self, value: float | None) -> None:
        self._value = value
        self._show(value)

    def _show(self, value: float | None) -> None:
        for w in (self.mantissa, self.exponent):
            w.blockSignals(True)
        if value is None or value == 0:
            self.mantissa.setValue(self.MANTISSA_STEPS)
            low, high = self.exponent.minimum(), self.exponent.maximum()
            self.exponent.setValue(max(low, min(high, -7)))
            self.field.setText("" if value is None else "0")
            self.field.setPlaceholderText("not set")
        else:
            m, e = split(value)
            if e < self.exponent.minimum() or e > self.exponent.maximum():
                self.exponent.setRange(min(e, self.exponent.minimum()),
                                       max(e, self.exponent.maximum()))  # fmt: skip
                self._fit_exponent_label()
            self.mantissa.setValue(round(m * self.MANTISSA_STEPS))
            self.exponent.setValue(e)
            self.field.setText(format_number(float(value)))
        self.exponent_label.setText(f"×10^{self.exponent.value()}")
        for w in (self.mantissa, self.exponent):
            w.blockSignals(False)
        self.field.accept_input()

    def _slid(self) -> None:
        m = min(self.mantissa.value(), 10 * self.MANTISSA_STEPS - 1) / self.MANTISSA_STEPS
        value = join(m, self.exponent.value())
        self._value = value
        self.exponent_label.setText(f"×10^{self.exponent.value()}")
        self.field.setText(format_number(value))
        self.valueEdited.emit(value, self._drag.key)

    def _typed(self) -> None:
        text = self.field.text()
        good = "" if self._value is None else format_number(float(self._value))
        if text.strip() == good or (not text.strip() and self._value is None):
            return
        try:
            value = parse_positive(text)
        except ValueError as e:
            self.field.reject_input(str(e), good)
            return
        self.setValue(value)
        self.valueEdited.emit(value, None)


class LogIntEdit(QWidget):
    """A positive integer on a logarithmic slider (1 to 10^7) with an exact field."""

    valueEdited = Signal(int, object)
    rejected = Signal(str)

    STEPS = 700

    def __init__(self, low: int = 1, high: int = 10**7, parent: QWidget | None = None,
                 what: str = "a whole number") -> None:  # fmt: skip
        super().__init__(parent)
        self.low, self.high = low, high
        self.what = what
        self._value: int | None = None
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.STEPS)
        self.slider.setMinimumWidth(200)
        self.field = ValueField()
        self.field.setMaximumWidth(110)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.field)
        self._drag = _DragKeys(self.slider)
        self.slider.valueChanged.connect(self._slid)
        self.field.editingFinished.connect(self._typed)
        self.field.rejected.connect(self.rejected)

    def value(self) -> int | None:
        return self._value

    def setValue(self, value: int | None) -> None:
        self._value = value
        self.slider.blockSignals(True)
        shown = cache_size_shown(value)
        self.slider.setValue(log_position(shown, self.low, self.high, self.STEPS))
        self.slider.blockSignals(False)
        self.field.setText("" if value is None else str(shown))
        self.field.accept_input()

    def _slid(self, position: int) -> None:
        value = round(log_value(position, self.low, self.high, self.STEPS))
        if value == self._value:
            return
        self._value = value
        self.field.setText(str(value))
        self.valueEdited.emit(value, self._drag.key)

    def _typed(self) -> None:
        text = self.field.text().strip()
        good = "" if self._value is None else str(cache_size_shown(self._value))
        if text == good:
            return
        try:
            # typed values may go beyond the slider's range: the slider shows its end
            value = parse_whole(text, self.low, 2**63 - 1, self.what)
        except ValueError as e:
            self.field.reject_input(str(e), good)
            return
        self.setValue(value)
        self.valueEdited.emit(value, None)


class FactorSlider(QWidget):
    """A scale factor from 0.1x to 10x on a logarithmic slider.

    A drag moves in fine steps (1000 a decade). An arrow key moves one
    :attr:`ARROW_STEP`: x10^(1/25), about x1.1, so every press shows in the factor
    written beside the slider (five presses make x10^(1/5), about x1.58; 25 make x10);
    Page Up/Down move x10^(1/4), about x1.78 (four pages a decade)."""

    valueEdited = Signal(float, object)

    STEPS = 2000  # positions from 0.1x to 10x
    ARROW_STEP = 40  # positions: a factor of 10 ** (40 / 1000)
    PAGE_STEP = 250  # positions: a factor of 10 ** (250 / 1000)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._value = 1.0
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.STEPS)
        self.slider.setSingleStep(self.ARROW_STEP)
        self.slider.setPageStep(self.PAGE_STEP)
        self.slider.setMinimumWidth(200)
        self.label = QLabel()
        self.label.setMinimumWidth(56)
        self.label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.label)
        self._drag = _DragKeys(self.slider)
        self.slider.valueChanged.connect(self._slid)
        self.setValue(1.0)

    def value(self) -> float:
        return self._value

    def setValue(self, factor: float) -> None:
        self._value = factor
        self.slider.blockSignals(True)
        self.slider.setValue(log_position(factor, 0.1, 10.0, self.STEPS))
        self.slider.blockSignals(False)
        self.label.setText(_factor_text(factor))

    def _slid(self, position: int) -> None:
        factor = log_value(position, 0.1, 10.0, self.STEPS)
        # snap to 1 near the middle so a scaler can be put back exactly
        if abs(math.log10(factor)) < 0.5 / (self.STEPS / 2):
            factor = 1.0
        factor = float(f"{factor:.4g}")
        self._value = factor
        self.label.setText(_factor_text(factor))
        self.valueEdited.emit(factor, self._drag.key)


def _factor_text(factor: float) -> str:
    return f"×{factor:.3g}"
