"""Individual instructions (report section 3.2.1): all 150 timing parameters, in eight
categories, each category in a window of its own.

The panel is the chooser; a category window lists every parameter of its category with
its mnemonic, its meaning, the mean as mantissa and exponent sliders with an exact
field, and the standard deviation. A timing the processor does not define shows "not
set"; giving it a value adds it to the model (undo removes it again).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QFontDatabase, QKeyEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.numeric import parse_sd
from parasol_core.base.params import BY_NAME
from parasol_core.frontend.categories import CATEGORIES, Category
from parasol_core.model import Processor, Timing
from parasol_core.model.tree import format_number
from parasol_core.session import Change
from piui.document import Document
from piui.widgets.labels import processor_title, title_changed
from piui.widgets.number_controls import MantissaExponentEdit, ValueField
from piui.widgets.status_messages import confirm, forget_on_change, heading_label, message_label


def sd_text(timing: Timing | None) -> str:
    return "" if timing is None or timing.sd is None else format_number(timing.sd)


# --------------------------------------------------------------------------- one row


class _Row:
    """The widgets of one parameter."""

    def __init__(self, name: str, mono) -> None:  # noqa: ANN001
        self.name = name
        param = BY_NAME[name]
        self.mnemonic = QLabel(name)
        self.mnemonic.setFont(mono)
        self.mnemonic.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.description = QLabel(param.description)
        self.description.setToolTip(f"{name}: {param.description}")
        self.mean = MantissaExponentEdit()
        self.mean.setToolTip(f"mean time of {name} in seconds")
        self.mean.field.setMinimumWidth(96)
        self.mean.exponent_label.setMinimumWidth(56)
        self.sd = ValueField()
        self.sd.setPlaceholderText("none")
        self.sd.setToolTip(f"standard deviation of {name} in seconds (empty for none)")
        self.sd.setFixedWidth(90)
        self.remove = QToolButton()
        self.remove.setText("✕")
        self.remove.setAutoRaise(True)
        self.remove.setToolTip(f"Remove {name} from this processor type")
        self.timing: object = ()  # what is shown; () before the first show
        self.shown_unset = False

    def show(self, timing: Timing | None, enabled: bool) -> None:
        for w in (self.mean, self.sd):
            w.setEnabled(enabled)
        self.remove.setEnabled(enabled and timing is not None)
        if timing == self.timing:
            return
        first = self.timing == ()
        self.timing = timing
        mean = None if timing is None else timing.mean
        if first or self.mean.value() != mean:  # not while its own slider is dragged
            self.mean.setValue(mean)
        self.sd.setText(sd_text(timing))
        self.sd.accept_input()
        self.sd.setPlaceholderText("none" if timing is not None else "")
        unset = timing is None
        if first or unset != (self.shown_unset):  # restyling is dear: only on a change
            self.shown_unset = unset
            self.mnemonic.setStyleSheet("color: palette(dark);" if unset else "font-weight: bold;")
            self.description.setStyleSheet("color: palette(dark);" if unset else "")


# --------------------------------------------------------------------------- a category


class CategoryWindow(QWidget):
    """Every parameter of one category, for the document's current processor type."""

    def __init__(self, document: Document, category: Category, parent: QWidget | None = None,
                 ) -> None:  # fmt: skip
        # a tool window stays above the main window instead of being buried by a click
        super().__init__(parent, Qt.WindowType.Tool)
        self.document = document
        self.category = category
        self.setObjectName(f"instructions-{category.slug}")
        self._stale = True

        self.heading = QLabel(category.title)
        font = self.heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.heading.setFont(font)
        self.processor = heading_label("color: palette(dark);")

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(3)
        grid.setColumnStretch(2, 1)
        for c, text in enumerate(["Mnemonic", "Description",
                                  "Mean: mantissa  ×  10^exponent, exact value (s)",
                                  "Std. dev. (s)"]):  # fmt: skip
            head = QLabel(text)
            head.setStyleSheet("font-weight: bold;")
            grid.addWidget(head, 0, c)
        self.rows: dict[str, _Row] = {}
        r = 1
        for heading, names in category.sections:
            if heading:
                sub = QLabel(heading)
                sub.setStyleSheet("font-weight: bold; color: palette(dark); padding-top: 6px;")
                grid.addWidget(sub, r, 0, 1, 5)
                r += 1
            line = QFrame()
            line.setFrameShape(QFrame.Shape.HLine)
            line.setFrameShadow(QFrame.Shadow.Sunken)
            grid.addWidget(line, r, 0, 1, 5)
            r += 1
            for name in names:
                row = _Row(name, mono)
                self.rows[name] = row
                grid.addWidget(row.mnemonic, r, 0)
                grid.addWidget(row.description, r, 1)
                grid.addWidget(row.mean, r, 2)
                grid.addWidget(row.sd, r, 3)
                grid.addWidget(row.remove, r, 4)
                row.mean.valueEdited.connect(lambda v, key, n=name: self._mean_edited(n, v, key))
                row.mean.rejected.connect(lambda m, n=name: self._rejected(f"{n}: {m}"))
                row.sd.editingFinished.connect(lambda n=name: self._sd_edited(n))
                row.sd.rejected.connect(lambda m, n=name: self._rejected(f"{n}: {m}"))
                for field in (row.mean.field, row.sd):  # Esc backed out of typing
                    field.reverted.connect(lambda: self.message.clear())
                row.remove.clicked.connect(lambda _=False, n=name: self.remove_timing(n))
                for label in (row.mnemonic, row.description):  # what-if: File > Sweep…
                    label.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
                    label.customContextMenuRequested.connect(
                        lambda pos, n=name, w=label: self.sweep_menu(n).exec(w.mapToGlobal(pos))
                    )
                r += 1
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(10, 6, 10, 10)
        body_layout.addLayout(grid)
        body_layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(body)

        self.message = message_label()
        layout = QVBoxLayout(self)
        top = QVBoxLayout()
        top.setSpacing(2)
        top.addWidget(self.heading)
        top.addWidget(self.processor)
        layout.addLayout(top)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.message)

        # as tall as the rows need, up to a comfortable screenful
        chrome = layout.sizeHint().height() - self.scroll.sizeHint().height()
        height = min(body.sizeHint().height() + chrome + 8, 760)
        self.resize(max(980, body.sizeHint().width() + 40), height)

        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.currentProcessorChanged.connect(self.refresh)
        # asked before an edit that breaks something; replaceable so tests can answer
        self.confirm: Callable[[str, str, list[str]], bool] = lambda title, text, details: confirm(
            self, title, text, details
        )
        forget_on_change(document, self, self.message)
        document.valuesChanged.connect(self._values_changed)
        self.refresh()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """The keys that close a window: Ctrl+W (the platform's Close) as its title bar's
        button does; Esc closes it (a field being typed in backs out of the value first,
        not applied: ValueField)."""
        if event.matches(QKeySequence.StandardKey.Close) or (
            event.key() == Qt.Key.Key_Escape and event.modifiers() == Qt.KeyboardModifier.NoModifier
        ):
            self.close()
        else:
            super().keyPressEvent(event)

    def sweep_menu(self, name: str) -> QMenu:
        """The context menu of a parameter's row: sweep its timing (File > Sweep…, the
        timing of the current processor type added as an axis)."""
        menu = QMenu(self)
        proc = self.document.current_processor()
        action = menu.addAction(f"Sweep pt({proc.id if proc else '?'}).{name}…")
        action.setEnabled(proc is not None and name in proc.timings)
        if proc is not None:
            action.triggered.connect(
                lambda: self.document.sweepRequested.emit(f"pt({proc.id}).{name}")
            )
        return menu

    # ---- showing

    def refresh(self, *_: object) -> None:
        """Show the current processor's values (later, if the window is hidden)."""
        if not self.isVisible():
            self._stale = True
            self._show_title()
            return
        self._stale = False
        proc = self.document.current_processor()
        self._show_title()
        for name, row in self.rows.items():
            row.show(None if proc is None else proc.timings.get(name), proc is not None)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.message.clear()
        super().closeEvent(event)

    def _show_title(self) -> None:
        proc = self.document.current_processor()
        self.processor.setText(processor_title(proc))
        name = f" — {proc.name}" if proc is not None and proc.name else ""
        self.setWindowTitle(f"{self.category.title}{name}")

    def _values_changed(self, change: Change) -> None:
        if not self.isVisible():
            self._stale = True
            return
        proc = self.document.current_processor()
        if proc is None:
            return
        if title_changed(change, proc):
            self._show_title()
        for name in change.entries(proc, "timings"):
            row = self.rows.get(name)
            if row is not None:
                row.show(proc.timings.get(row.name), True)

    def _rejected(self, message: str) -> None:
        self.message.setText(message)
        self.message.setStyleSheet("color: #b00020;")

    def _done(self, text: str = "") -> None:
        self.message.setText(text)
        self.message.setStyleSheet("")

    # ---- editing

    def _push(self, proc: Processor, name: str, timing: Timing | None, text: str,
              merge_key: object = None) -> None:  # fmt: skip
        self.document.session.set_value(f"pt({proc.id}).{name}", timing, label=text,
                                        merge=merge_key)  # fmt: skip

    def _mean_edited(self, name: str, value: float, merge_key: object) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        old = proc.timings.get(name)
        new = Timing(value, None if old is None else old.sd)
        self._push(proc, name, new, f"Set {name}" if old else f"Add {name}", merge_key)
        self._done()

    def _sd_edited(self, name: str) -> None:
        proc = self.document.current_processor()
        row = self.rows[name]
        if proc is None:
            return
        old = proc.timings.get(name)
        good = sd_text(old)
        text = row.sd.text().strip()
        if text == good:
            return
        if old is None:
            row.sd.reject_input("no mean yet: give it a mean first", good)
            return
        try:
            sd = parse_sd(text)
        except ValueError as e:
            row.sd.reject_input(str(e), good)
            return
        row.sd.accept_input()
        if sd == old.sd:  # the same number written differently
            row.sd.setText(good)
            return
        self._push(proc, name, Timing(old.mean, sd), f"Set standard deviation of {name}")
        self._done()

    def remove_timing(self, name: str) -> None:
        proc = self.document.current_processor()
        if proc is None or name not in proc.timings:
            return
        engine = self.document.engine
        key = f"pt({proc.id}).{name}"
        users = [k for k in engine.dependents(key) if engine.entry(k) is not None]
        if users and not self.confirm(
            f"Remove {name}",
            f"{name} of processor {proc.id} is used; removing it leaves these without a value:",
            [f"{k} = {engine.entry(k).expr.text}" for k in users],
        ):
            return
        self._push(proc, name, None, f"Remove {name}")
        self._done(f"{name} removed (Undo brings it back).")


# --------------------------------------------------------------------------- the chooser


class InstructionsWindow(QWidget):
    """The chooser: one button per category, each opening its category window."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.windows: dict[str, CategoryWindow] = {}
        self.title = heading_label()
        hint = QLabel("All 150 timing parameters, by category; each category opens a "
                      "window of its own.")  # fmt: skip
        hint.setWordWrap(True)
        hint.setStyleSheet("color: palette(dark);")
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setColumnStretch(0, 1)
        self.buttons: dict[str, QPushButton] = {}
        self.counts: dict[str, QLabel] = {}
        for r, category in enumerate(CATEGORIES):
            button = QPushButton(category.title + "…")
            button.setStyleSheet("text-align: left; padding: 4px 10px;")
            button.clicked.connect(lambda _=False, s=category.slug: self.open_category(s))
            count = QLabel()
            count.setStyleSheet("color: palette(dark);")
            count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            grid.addWidget(button, r, 0)
            grid.addWidget(count, r, 1)
            self.buttons[category.slug] = button
            self.counts[category.slug] = count
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addWidget(self.title)
        layout.addWidget(hint)
        layout.addSpacing(6)
        layout.addLayout(grid)
        layout.addStretch(1)
        self._defined: frozenset[str] | None = None
        document.modelReset.connect(self.refresh)
        document.structureChanged.connect(self.refresh)
        document.currentProcessorChanged.connect(self.refresh)
        document.valuesChanged.connect(self._values_changed)
        self.refresh()

    def refresh(self, *_: object) -> None:
        proc = self.document.current_processor()
        self.title.setText(processor_title(proc))
        for button in self.buttons.values():
            button.setEnabled(proc is not None)
        self._defined = None
        self._show_counts(proc)

    def _show_counts(self, proc: Processor | None) -> None:
        defined = frozenset(proc.timings) if proc is not None else frozenset()
        if defined == self._defined:
            return
        self._defined = defined
        for category in CATEGORIES:
            n = len(defined.intersection(category.names))
            label = self.counts[category.slug]
            label.setText(f"{n} of {len(category.names)} set")
            label.setToolTip(f"{n} of the {len(category.names)} {category.title.lower()} "
                             "timings are defined for this processor type")  # fmt: skip

    def _values_changed(self, change: Change) -> None:
        proc = self.document.current_processor()
        if proc is None:
            return
        if title_changed(change, proc):
            self.title.setText(processor_title(proc))
        if change.touches(proc, "timings"):
            self._show_counts(proc)

    def category_window(self, slug: str) -> CategoryWindow:
        """The window of category ``slug``, made the first time it is asked for."""
        win = self.windows.get(slug)
        if win is None:
            category = next(c for c in CATEGORIES if c.slug == slug)
            win = CategoryWindow(self.document, category, self)
            self.windows[slug] = win
        return win

    def open_category(self, slug: str) -> CategoryWindow:
        win = self.category_window(slug)
        win.show()
        win.raise_()
        win.activateWindow()
        return win

    def extra_windows(self) -> list[tuple[str, QWidget]]:
        return [(f"instructions-{c.slug}", self.category_window(c.slug)) for c in CATEGORIES]
