"""The "Processor Combinations" window (report sections 2.2.1, 3.1.3, 3.1.4 and 3.2.1).

The seven ratios of the current processor type — a computation time over the send time
per byte — and the machine's ``maxtotalspd``: each with its expression, editable and
checked as it is typed, and its value, which the engine keeps live (it moves while a
slider in another window is dragged; the 1994 PIUI refreshed it only on save). Below
them, for the selected row, the expression in symbolic form and its sensitivity to each
stored parameter it uses; and a bar chart of the ratios of every processor type side by
side, the comparison the report suggests the ratios are for.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.frontend.meanings import DESCRIPTIONS, MAXTOTALSPD, OPERATIONS
from parasol_core.model import COMBINATION_NAMES, Processor
from parasol_core.model.tree import Expression
from parasol_core.session import Change
from piui.document import Document
from piui.widgets.expression_edit import Check, ExpressionEdit
from piui.widgets.labels import value_text
from piui.widgets.ratio_chart import RatioChart
from piui.widgets.sensitivity import SensitivityPanel, compact_rows, fit_height, mono
from piui.widgets.status_messages import message_label

log = logging.getLogger("piui")

MACHINE_KEY = "mc.maxtotalspd"

NAME, DESCRIPTION, EXPRESSION, VALUE = range(4)
# A light selection, so that the expression editors sitting in a selected row stay legible.
TABLE_STYLE = """
QTableWidget { gridline-color: #e2e2e2; }
QTableWidget::item:selected { background: #dce9f7; color: palette(text); }
QTableWidget QLineEdit { background: transparent; }
"""
HEADER_ROW = len(COMBINATION_NAMES)  # the "Machine" row between the ratios and maxtotalspd
MACHINE_ROW = HEADER_ROW + 1
ERROR_COLOR = QColor("#b00020")
HINT = "Select a ratio for its sensitivity. Edit an expression: Enter applies, Esc reverts."
MIN_EXPRESSION_WIDTH = 260  # pixels; below it the meaning column is hidden
CHART_INTERVAL_MS = 40  # at most ~25 chart redraws a second while a slider is dragged
SENSITIVITY_INTERVAL_MS = 120


_NOTHING = object()


@dataclass
class _Row:
    name: str
    edit: ExpressionEdit
    value: QTableWidgetItem


class CombinationsWindow(QWidget):
    """See the module docstring. Follows the document's current processor type."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setObjectName("CombinationsWindow")
        self._selected: str | None = None  # a COMBINATION_NAMES entry or MAXTOTALSPD
        self._selected_inputs: set[str] = set()
        self._active: str | None = None  # the row whose editor the message line speaks of

        # ---- the processor and its ratios
        self.processor_box = QComboBox()
        self.processor_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.processor_box.setToolTip("The processor type whose ratios are shown and edited")
        head = QHBoxLayout()
        head.addWidget(QLabel("Processor type:"))
        head.addWidget(self.processor_box)
        head.addStretch(1)

        self.table = QTableWidget(len(COMBINATION_NAMES) + 2, 4)
        self.table.setHorizontalHeaderLabels(
            ["Ratio", "Time of … / send time per byte", "Expression", "Value"]
        )
        self.table.horizontalHeaderItem(DESCRIPTION).setToolTip(
            "Each ratio is the time of an operation over the send time for one byte: "
            "lower means more computing power per unit of communication"
        )
        self.table.verticalHeader().hide()
        self.table.setStyleSheet(TABLE_STYLE)
        compact_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table (the editors take it)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(DESCRIPTION, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(EXPRESSION, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.Interactive)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.rows: dict[str, _Row] = {}
        for r, name in enumerate([*COMBINATION_NAMES, MAXTOTALSPD]):
            self._make_row(MACHINE_ROW if name == MAXTOTALSPD else r, name)
        section = QTableWidgetItem("Machine combination")
        section.setFlags(Qt.ItemFlag.NoItemFlags)
        bold = section.font()
        bold.setBold(True)
        section.setFont(bold)
        section.setForeground(self.palette().color(QPalette.ColorRole.WindowText))
        section.setBackground(self.palette().color(QPalette.ColorRole.Window))
        self.table.setItem(HEADER_ROW, 0, section)
        self.table.setSpan(HEADER_ROW, 0, 1, 4)
        self.table.resizeColumnToContents(DESCRIPTION)
        self._description_width = self.table.columnWidth(DESCRIPTION)
        self.table.setColumnWidth(VALUE, self.fontMetrics().horizontalAdvance("0") * 14)
        self._fit_table_height()

        self.message = message_label()
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message.setText(HINT)

        ratios = QWidget()
        ratios_layout = QVBoxLayout(ratios)
        ratios_layout.setContentsMargins(0, 0, 0, 0)
        ratios_layout.addLayout(head)
        ratios_layout.addWidget(self.table)
        ratios_layout.addWidget(self.message)

        # ---- sensitivity of the selected row
        self.sensitivity_page = SensitivityPanel()
        self.sensitivity_title = self.sensitivity_page.title
        self.symbolic = self.sensitivity_page.symbolic
        self.sensitivity = self.sensitivity_page.table
        self.sensitivity_note = self.sensitivity_page.note

        # ---- every processor type side by side
        self.chart = RatioChart()
        chart_page = QWidget()
        QVBoxLayout(chart_page).addWidget(self.chart)

        # A dock is seldom tall enough for the table, the sensitivity and the chart one
        # above the other: the latter two share the space below the table as tabs. In a
        # very short dock the whole window scrolls rather than squeezing the table.
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.sensitivity_page, "Sensitivity")
        self.tabs.addTab(chart_page, "All processor types")
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(ratios, 0)
        body_layout.addWidget(self.tabs, 1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(body)
        # the window is as wide as its dock: long texts wrap or scroll in their place
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.scroll)

        self._chart_timer = QTimer(self)
        self._chart_timer.setSingleShot(True)
        self._chart_timer.setInterval(CHART_INTERVAL_MS)
        self._chart_timer.timeout.connect(self.redraw_chart)
        self._sensitivity_timer = QTimer(self)
        self._sensitivity_timer.setSingleShot(True)
        self._sensitivity_timer.setInterval(SENSITIVITY_INTERVAL_MS)
        self._sensitivity_timer.timeout.connect(self.refresh_sensitivity)

        self.processor_box.activated.connect(self._processor_chosen)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        # another model or processor type: an edit in progress was for other expressions
        self._reset_for: object = _NOTHING  # the processor a model reset has just shown
        document.modelReset.connect(self._model_reset)
        document.currentProcessorChanged.connect(self._processor_changed)
        document.structureChanged.connect(self.refresh)
        document.derivedChanged.connect(self._derived_changed)
        document.valuesChanged.connect(self._values_changed)
        self.refresh()
        self.select(COMBINATION_NAMES[0])

    # ------------------------------------------------------------------ building

    def _make_row(self, r: int, name: str) -> None:
        item = QTableWidgetItem(name)
        item.setFont(mono())
        item.setData(Qt.ItemDataRole.UserRole, name)
        item.setToolTip(DESCRIPTIONS[name])
        self.table.setItem(r, NAME, item)
        desc = QTableWidgetItem(OPERATIONS[name])
        desc.setToolTip(DESCRIPTIONS[name])
        desc.setForeground(QColor("#555"))
        desc.setData(Qt.ItemDataRole.UserRole, name)
        self.table.setItem(r, DESCRIPTION, desc)
        holder = QTableWidgetItem()
        holder.setData(Qt.ItemDataRole.UserRole, name)
        self.table.setItem(r, EXPRESSION, holder)
        edit = ExpressionEdit(self.document)
        edit.setFrame(False)
        edit.setObjectName(f"expression-{name}")
        edit.committed.connect(lambda expr, n=name: self.apply(n, expr))
        edit.checked.connect(lambda check, n=name: self._show_check(n, check))
        edit.focusReceived.connect(lambda n=name: self._activate(n))
        edit.textEdited.connect(lambda _, n=name: setattr(self, "_active", n))
        self.table.setCellWidget(r, EXPRESSION, edit)
        value = QTableWidgetItem()
        value.setFont(mono())
        value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        value.setData(Qt.ItemDataRole.UserRole, name)
        self.table.setItem(r, VALUE, value)
        self.rows[name] = _Row(name, edit, value)

    def dock_shown(self) -> None:
        """Its dock's tab was chosen (the main window says): a sensitivity that waited
        behind it is worked out."""
        self.sensitivity_page.dock_shown()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """In a narrow dock the expressions matter more than the words beside them (which
        the ratio's tooltip repeats): the meaning column goes before an expression is cut."""
        table = self.table
        others = table.columnWidth(NAME) + table.columnWidth(VALUE) + 2 * table.frameWidth()
        # the viewport's width, from sizes: table.viewport() returns a bare QWidget, and
        # PySide's first look for the Python class of one loads every widget class of
        # QtWidgets (some 40 enum classes made, ~15 ms of PIUI's start-up)
        width = table.maximumViewportSize().width()
        bar = table.verticalScrollBar()
        if bar.isVisible():
            width -= bar.width()
        room = width + 2 * table.frameWidth() - others
        table.setColumnHidden(DESCRIPTION, room - self._description_width < MIN_EXPRESSION_WIDTH)

    def _fit_table_height(self) -> None:
        fit_height(self.table)

    # ------------------------------------------------------------------ reading the model

    def processor(self) -> Processor | None:
        return self.document.current_processor()

    def key(self, name: str) -> str | None:
        """The engine key of a row: ``po(1).ia_spd`` or ``mc.maxtotalspd``."""
        if name == MAXTOTALSPD:
            return MACHINE_KEY
        proc = self.processor()
        if proc is None or proc.id is None:
            return None
        return f"po({proc.id}).{name}"

    def expression(self, name: str) -> Expression | None:
        """The expression a row shows, as the model holds it (None: not defined)."""
        if name == MAXTOTALSPD:
            section = self.document.machine.combinations
            return None if section is None else section.entries.get(MAXTOTALSPD)
        proc = self.processor()
        return None if proc is None else proc.combinations.get(name)

    def refresh(self, keep_edits: bool = True) -> None:
        """Redraw everything from the model (a new processor, expression or model)."""
        self._reset_for = _NOTHING
        self.sensitivity_page.forget()
        self._fill_processor_box()
        proc = self.processor()
        for name, row in self.rows.items():
            expr = self.expression(name)
            row.edit.own_key = self.key(name)
            row.edit.setEnabled(name == MAXTOTALSPD or proc is not None)
            row.edit.setPlaceholderText("not defined — type an expression to add it")
            row.edit.set_model_text("" if expr is None else expr.text, keep_edits)
            self._show_value(name)
        self._update_inputs()
        self.redraw_chart()
        self.refresh_sensitivity()

    def _model_reset(self) -> None:
        self.refresh(keep_edits=False)
        self._reset_for = self.document.current_processor_id

    def _processor_changed(self, proc_id: int | None) -> None:
        shown, self._reset_for = self._reset_for, _NOTHING
        if proc_id == shown:
            return  # the document announces the current processor of a model it has
            # just opened: the refresh of that model reset showed it already
        self.refresh(keep_edits=False)

    def _fill_processor_box(self) -> None:
        box = self.processor_box
        box.blockSignals(True)
        box.clear()
        for p in self.document.machine.processors:
            box.addItem(f"{p.id} — {p.name}" if p.name else str(p.id), p.id)
        index = box.findData(self.document.current_processor_id)
        box.setCurrentIndex(index)
        box.setEnabled(box.count() > 0)
        box.blockSignals(False)

    def _show_value(self, name: str) -> None:
        row = self.rows[name]
        key = self.key(name)
        if key is None or self.expression(name) is None:
            row.value.setText("—")
            row.value.setForeground(QColor("#888"))
            row.value.setToolTip("not defined")
            return
        value = self.document.engine.value(key)
        text = value_text(value)
        if name == MAXTOTALSPD and isinstance(value, (int, float)):
            row.value.setToolTip(f"{text} bytes/s")
        else:
            row.value.setToolTip(text)
        row.value.setText(text)
        color = ERROR_COLOR if isinstance(value, EvalError) else self.palette().color(
            QPalette.ColorRole.Text)  # fmt: skip
        row.value.setForeground(color)

    # ------------------------------------------------------------------ live updates

    def _derived_changed(self, values: dict) -> None:
        wanted = {self.key(name): name for name in self.rows}
        chart = False
        for key in values:
            name = wanted.get(key)
            if name is not None:
                self._show_value(name)
            if key.startswith("po("):
                chart = True
        if chart and not self._chart_timer.isActive():
            self._chart_timer.start()
        if self._selected is not None and self.key(self._selected) in values:
            self._schedule_sensitivity()

    def _values_changed(self, change: Change) -> None:
        if self._selected_inputs & change.keys:
            self._schedule_sensitivity()

    def _schedule_sensitivity(self) -> None:
        if not self._sensitivity_timer.isActive():
            self._sensitivity_timer.start()

    def redraw_chart(self) -> None:
        self._chart_timer.stop()
        engine: Engine = self.document.engine
        series = []
        current = None
        for t, p in enumerate(self.document.machine.processors):
            values = []
            for name in COMBINATION_NAMES:
                if p.id is None or name not in p.combinations:
                    values.append(None)
                else:
                    values.append(engine.value(f"po({p.id}).{name}"))
            label = f"{p.id}: {p.name}" if p.name else f"processor {p.id}"
            series.append((label, values))
            if p.id == self.document.current_processor_id:
                current = t
        selected = (COMBINATION_NAMES.index(self._selected)
                    if self._selected in COMBINATION_NAMES else None)  # fmt: skip
        self.chart.set_data(series, current, selected)

    # ------------------------------------------------------------------ selection

    def select(self, name: str) -> None:
        """Select a row (a ratio name or ``maxtotalspd``) and show its sensitivity."""
        row = MACHINE_ROW if name == MAXTOTALSPD else COMBINATION_NAMES.index(name)
        if self.table.currentRow() != row:
            self.table.selectRow(row)
        if name != self._selected:
            self._selected = name
            self._update_inputs()
            self.refresh_sensitivity()
            self.redraw_chart()

    def selected(self) -> str | None:
        return self._selected

    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            item = self.table.item(rows[0].row(), NAME)
            if item is not None and item.data(Qt.ItemDataRole.UserRole):
                self.select(item.data(Qt.ItemDataRole.UserRole))

    def _update_inputs(self) -> None:
        key = self.key(self._selected) if self._selected else None
        engine: Engine = self.document.engine
        self._selected_inputs = (
            set(engine.dependencies(key)) if key and engine.knows(key) else set()
        )

    def _processor_chosen(self, index: int) -> None:
        self.document.set_current_processor(self.processor_box.itemData(index))

    # ------------------------------------------------------------------ sensitivity

    def refresh_sensitivity(self) -> None:
        self._sensitivity_timer.stop()
        name = self._selected
        key = self.key(name) if name else None
        expr = self.expression(name) if name else None
        self.sensitivity_page.show_for(key, expr, self.document.engine)

    # ------------------------------------------------------------------ editing

    def _activate(self, name: str) -> None:
        self._active = name
        self.select(name)

    def _show_check(self, name: str, check: Check) -> None:
        row = self.rows[name]
        label = self.key(name) or name
        if name != self._active and (check.ok or self._active is not None):
            return  # a refresh re-checking every row; the message is about the active one
        if not check.ok:
            self.message.setStyleSheet(f"color: {ERROR_COLOR.name()};")
            self.message.setText(f"{label}: {check.describe()} — not applied")
            return
        self.message.setStyleSheet("")
        if row.edit.text().strip() == row.edit.model_text().strip():
            self.message.setText(HINT)
            return
        if check.expression is None:
            self.message.setText(f"{label}: Enter removes this expression.")
            return
        preview = value_text(check.value) if check.value is not None else "?"
        self.message.setText(f"{label} would be {preview} — Enter applies, Esc reverts.")

    def apply(self, name: str, expr: Expression | None) -> None:
        """Set (or, with None, remove) a row's expression: one undoable step. A
        ``maxtotalspd`` with no machine combinations section adds the section; removing
        the section's last expression removes it."""
        old = self.expression(name)
        if old is None and expr is None:
            return
        verb = "Remove" if expr is None else ("Add" if old is None else "Edit")
        key = self.key(name)
        if key is None:
            return
        self.document.session.set_expression(key, expr, label=f"{verb} {key}")
