"""The sensitivity of a derived value to the stored parameters it uses: its symbolic
form (sympy's pretty printer) and, for each parameter x, the partial derivative and
d ln f / d ln x, strongest first. Sympy's own words (zoo, nan, trunc) never reach the
user: a value with no value has no sensitivity, and says why."""

from __future__ import annotations

import logging
import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.frontend.meanings import parameter_meaning
from parasol_core.model.tree import Expression
from piui.widgets.deferred import after_first_paint, has_painted, on_screen
from piui.widgets.labels import value_text
from piui.widgets.status_messages import message_label

log = logging.getLogger("piui")

# Words of sympy's that must not reach the user (complex infinity, not-a-number, ...).
_SYMPY_ONLY = re.compile(r"\b(zoo|nan|oo)\b|\btrunc\(|[∞]")
TABLE_STYLE = """
QTableWidget { gridline-color: #e2e2e2; }
QTableWidget::item:selected { background: #dce9f7; color: palette(text); }
"""


def mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    return font


def _signed(x: float | None) -> str:
    if x is None:
        return "—"
    if abs(x) < 5e-13:
        x = 0.0  # d ln f / d ln x = 0.9999999999999999 reads better as +1
    return f"{x:+.4g}"


def compact_rows(table: QTableWidget) -> None:
    height = table.fontMetrics().height() + 8
    table.verticalHeader().setDefaultSectionSize(height)
    table.verticalHeader().setMinimumSectionSize(height)


def fit_height(table: QTableWidget, min_rows: int = 0) -> None:
    """Make a table exactly as high as its header and rows (at least ``min_rows``)."""
    rows = table.rowCount()
    height = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth()
    height += sum(table.rowHeight(r) for r in range(rows))
    height += max(0, min_rows - rows) * table.verticalHeader().defaultSectionSize()
    if table.horizontalScrollBar().isVisible():
        height += table.horizontalScrollBar().sizeHint().height()
    table.setFixedHeight(height)


def label_pretty(key: str, pretty: str) -> str:
    """``key = `` in front of a (possibly multi-line) pretty print, on its middle line."""
    lines = pretty.split("\n")
    middle = (len(lines) - 1) // 2
    if len(lines) >= 3:
        # the fraction bar of a fraction: the line of box-drawing characters
        bars = [i for i, line in enumerate(lines) if line.strip() and set(line.strip()) <= {"─"}]
        if bars:
            middle = bars[0]
    prefix = f"{key} = "
    pad = " " * len(prefix)
    return "\n".join((prefix if i == middle else pad) + line for i, line in enumerate(lines))


class SensitivityPanel(QWidget):
    """See the module docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pretty_cache: dict[tuple[str, str], str] = {}
        self._request: tuple[str | None, Expression | None, Engine] | None = None
        self._pending = False
        self.title = QLabel()
        title_font = self.title.font()
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.symbolic = QLabel()
        self.symbolic.setFont(mono())
        self.symbolic.setTextFormat(Qt.TextFormat.PlainText)
        self.symbolic.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.symbolic.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.note = message_label()
        self.note.setStyleSheet("color: #555;")
        self.table = QTableWidget(0, 5)
        self.table.setTabKeyNavigation(False)
        self.table.setHorizontalHeaderLabels(
            ["Parameter x", "Meaning", "Value", "∂f/∂x", "d ln f / d ln x"]
        )
        tips = ["A stored value the expression uses", "", "Its current value",
                "The partial derivative of the ratio f with respect to x",
                "Relative sensitivity: the % change of f for a 1 % change of x"]  # fmt: skip
        for c, tip in enumerate(tips):
            self.table.horizontalHeaderItem(c).setToolTip(tip)
        self.table.verticalHeader().hide()
        self.table.setStyleSheet(TABLE_STYLE)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        compact_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setWordWrap(False)
        sheader = self.table.horizontalHeader()
        sheader.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        sheader.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        sheader.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        sens_layout = QVBoxLayout(self)
        sens_layout.addWidget(self.title)
        # A long formula scrolls in its own strip: it never widens the window, which
        # would push the Value column out of sight.
        self.symbolic_scroll = QScrollArea()
        self.symbolic_scroll.setWidget(self.symbolic)
        self.symbolic_scroll.setWidgetResizable(True)
        self.symbolic_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.symbolic_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.symbolic_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.symbolic_scroll.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        sens_layout.addWidget(self.symbolic_scroll)
        sens_layout.addWidget(self.table)
        sens_layout.addWidget(self.note)
        sens_layout.addStretch(1)

    def forget(self) -> None:
        """Drop the cached symbolic forms (another model or processor type)."""
        self._pretty_cache.clear()

    def show_for(self, key: str | None, expr: Expression | None, engine: Engine) -> None:
        """Show the sensitivity of the expression ``key`` (None: nothing selected).

        Working it out takes sympy (a second to import): it is done when the panel is on
        screen. While the panel is hidden (a tab or dock behind another: see
        widgets.deferred.on_screen) or its window has not been painted yet, the request
        waits, the latest one replacing any earlier, and is done when the panel is shown
        (or its dock brought forward), or just after the first paint."""
        self._request = (key, expr, engine)
        if on_screen(self) and has_painted(self):
            self._show_request()
            return
        self._pending = True
        self.table.setRowCount(0)
        self.table.hide()
        self.symbolic_scroll.hide()
        self.symbolic.setText("")
        self.title.setText(
            "Sensitivity" if key is None else f"Sensitivity of {key} to the parameters it uses"
        )
        self.note.setText("Working out the sensitivity…")
        if self.isVisible():
            after_first_paint(self, self._show_pending)

    def is_pending(self) -> bool:
        """Whether a sensitivity waits for the panel to be shown (or painted)."""
        return self._pending

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._pending:
            return
        if has_painted(self):
            self._show_pending()  # a tab brought forward: filled before it is painted
        else:
            after_first_paint(self, self._show_pending)

    def dock_shown(self) -> None:
        """The dock holding it was brought forward (Qt sends no showEvent for that)."""
        if self._pending and has_painted(self):
            self._show_pending()

    def _show_pending(self) -> None:
        if self._pending and on_screen(self):
            self._show_request()

    def _show_request(self) -> None:
        self._pending = False
        if self._request is not None:
            self._show(*self._request)

    def _show(self, key: str | None, expr: Expression | None, engine: Engine) -> None:
        from parasol_core.analysis import symbolic  # sympy: loaded when first needed

        self.table.setRowCount(0)
        self.table.hide()
        self.symbolic_scroll.hide()
        if key is None:
            self.title.setText("Sensitivity")
            self.symbolic.setText("")
            self.note.setText("Select a ratio to see how it responds to "
                                          "the parameters it uses.")  # fmt: skip
            return
        self.title.setText(f"Sensitivity of {key} to the parameters it uses")
        if expr is None:
            self.symbolic.setText("")
            self.note.setText(f"{key} is not defined: type an expression for it.")
            return
        value = engine.value(key)
        if isinstance(value, EvalError):
            # no value, no slope: and sympy's forms of it (zoo, nan) mean nothing to a user
            self._show_symbolic(f"{key} = {expr.text}")
            self.note.setText(f"{key} has no value ({value.message}), so it has "
                                          "no sensitivity either.")  # fmt: skip
            return
        self._show_symbolic(self._pretty(key, expr, engine))
        try:
            found = symbolic.sensitivities(engine, key)
        except symbolic.SymbolicError as e:
            self.note.setText(f"No sensitivity here: {e}")
            return
        except Exception as e:
            log.warning("sensitivity of %s: %s", key, e)
            self.note.setText(
                "No sensitivity here: the expression cannot be differentiated symbolically."
            )
            return
        # strongest first; 0.9999999999999999 and 1.0 count as equal
        ordered = sorted(found.values(),
                         key=lambda s: (-round(abs(s.relative or 0), 9), s.parameter))  # fmt: skip
        self.table.setRowCount(len(ordered))
        for r, s in enumerate(ordered):
            cells = [s.parameter, parameter_meaning(s.parameter), f"{s.value:.6g}",
                     f"{s.partial:.4g}", _signed(s.relative)]  # fmt: skip
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 2, 3, 4):
                    item.setFont(mono())
                if c >= 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if c == 1:
                    item.setForeground(QColor("#555"))
                self.table.setItem(r, c, item)
            if s.relative is not None:
                rel = self.table.item(r, 4)
                rel.setToolTip(f"1 % more {s.parameter} changes {key} by {s.relative:+.3g} %")
                rel.setForeground(QColor("#1b5e20") if s.relative > 0 else QColor("#8e1b1b"))
        fit_height(self.table)
        self.table.setVisible(bool(ordered))
        value = engine.value(key)
        if not ordered:
            self.note.setText(f"{key} uses no stored parameters: it is a constant.")
        elif isinstance(value, EvalError):
            self.note.setText(f"{key} has no value: {value}")
        else:
            self.note.setText(
                f"f = {key} = {value_text(value)}. A relative sensitivity of +1 means f grows "
                "in proportion to x; −1, in inverse proportion."
            )

    def _show_symbolic(self, text: str) -> None:
        self.symbolic.setText(text)
        self.symbolic.adjustSize()
        bar = self.symbolic_scroll.horizontalScrollBar().sizeHint().height()
        self.symbolic_scroll.setFixedHeight(self.symbolic.sizeHint().height() + bar + 2)
        self.symbolic_scroll.show()

    def _pretty(self, key: str, expr: Expression, engine: Engine) -> str:
        """The expression in symbolic form (sympy's pretty printer), cached per text."""
        from parasol_core.analysis import symbolic

        cache_key = (key, expr.text)
        text = self._pretty_cache.get(cache_key)
        if text is None:
            try:
                text = label_pretty(key, symbolic.pretty(key, engine))
            except Exception as e:
                log.info("no symbolic form of %s: %s", key, e)
                text = f"{key} = {expr.text}"
            if _SYMPY_ONLY.search(text):
                text = f"{key} = {expr.text}"  # sympy's infinities are no help to a user
            self._pretty_cache[cache_key] = text
        return text
