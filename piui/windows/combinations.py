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
import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from parasol_core import params
from parasol_core.edit import Slot
from parasol_core.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.expr.tree import Expression
from parasol_core.model import COMBINATION_NAMES, EXPR, MachineCombinations, Processor
from piui.commands import SetValues
from piui.widgets.expression_edit import Check, ExpressionEdit
from piui.windows.overview import value_text

log = logging.getLogger("piui")

MAXTOTALSPD = "maxtotalspd"
MACHINE_KEY = "mc.maxtotalspd"

# Each ratio is the time of an operation over the send time per byte (report section
# 2.2.1); the table says the operation, its tooltip the whole ratio.
OPERATIONS: dict[str, str] = {
    "ia_spd": "integer addition",
    "im_spd": "integer multiplication",
    "da_spd": "double addition",
    "dm_spd": "double multiplication",
    "dd_spd": "double division",
    "ds_spd": "double sine",
    "dp_spd": "double power (**)",
    MAXTOTALSPD: "total link throughput, bytes/s",
}
DESCRIPTIONS: dict[str, str] = {
    **{name: f"{op} / send time per byte" for name, op in OPERATIONS.items()},
    MAXTOTALSPD: "the sum of the maximum transfer rates of all the processors, in bytes/s",
}
# Qualitative colours, one per processor type (Tableau 10), easy to tell apart.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip

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


def _mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    return font


def parameter_meaning(key: str) -> str:
    """A parameter key in words: ``pt(1).iga`` -> ``integer global addition``."""
    if key.startswith("pt(") and "." in key:
        p = params.BY_NAME.get(key.rsplit(".", 1)[1])
        return p.description if p else ""
    if key.startswith("tl("):
        field = key.rsplit(".", 1)[1]
        return {"speed": "link send time per byte", "latency": "link latency",
                "connect(0)": "processors on the link"}.get(field, "link " + field)  # fmt: skip
    if key.startswith("to(") and key.endswith(".links"):
        return "links in the topology"
    if key.startswith("to(") and key.endswith(".processors"):
        return "processors in the topology"
    if key.startswith("pc("):
        return "cache " + key.rsplit(".", 1)[1]
    return ""


def _signed(x: float | None) -> str:
    if x is None:
        return "—"
    if abs(x) < 5e-13:
        x = 0.0  # d ln f / d ln x = 0.9999999999999999 reads better as +1
    return f"{x:+.4g}"


@dataclass
class _Row:
    name: str
    edit: ExpressionEdit
    value: QTableWidgetItem


class _PlotWidget(pg.PlotWidget):
    """A plot that asks for a modest height and takes whatever is left over."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(480, 180)


class RatioChart(QWidget):
    """Grouped bars: the seven ratios (x) of every processor type (one colour each)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = _PlotWidget(background="w")
        self.plot.setMinimumHeight(140)
        item = self.plot.getPlotItem()
        item.showGrid(x=False, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen("#555"))
            axis.setTextPen(pg.mkPen("#222"))
        item.getAxis("bottom").setTicks([list(enumerate(COMBINATION_NAMES))])
        item.setLabel("left", "ratio")
        self.log_scale = QCheckBox("Logarithmic scale")
        self.log_scale.setChecked(True)
        self.log_scale.setToolTip("The ratios differ by orders of magnitude; a log axis shows "
                                  "them all. Ratios ≤ 0 or in error have no bar then.")  # fmt: skip
        self.log_scale.toggled.connect(lambda _: self.redraw())
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.note = QLabel()
        self.note.setStyleSheet("color: #666;")
        self.note.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.legend, 1)
        top.addWidget(self.log_scale, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.note)
        self.bars: list[pg.BarGraphItem] = []
        self._band = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(0, 0, 0, 18),
                                         pen=pg.mkPen(None))  # fmt: skip
        self._band.setZValue(-10)
        item.addItem(self._band)
        self._data: list[tuple[str, list]] = []  # (processor label, values) per type
        self._geometry: list[tuple[float, float, int, int]] = []  # x0, x1, type, ratio
        self.current: int | None = None  # the index of the processor type shown above
        self._selected: int | None = None  # the index of the selected ratio
        self.plot.scene().sigMouseMoved.connect(self._hover)

    def set_data(self, series: list[tuple[str, list]], current: int | None,
                 selected: int | None) -> None:  # fmt: skip
        """``series``: per processor type its label and its seven values (or errors)."""
        self._data = series
        self.current = current
        self._selected = selected
        self.redraw()

    def redraw(self) -> None:
        item = self.plot.getPlotItem()
        if len(self.bars) != len(self._data):  # else the bar items are reused: cheaper
            for bar in self.bars:
                item.removeItem(bar)
            self.bars = []
        self._geometry = []
        log_scale = self.log_scale.isChecked()
        n = max(len(self._data), 1)
        width = 0.8 / n
        numbers = [v for _, values in self._data for v in values if _plottable(v, log_scale)]
        if log_scale:
            logs = [math.log10(v) for v in numbers]
            low = math.floor(min(logs)) if logs else 0
            high = math.ceil(max(logs)) if logs else 1
            if high <= low:
                high = low + 1
            base = low - 0.04 * (high - low)
        else:
            low = min([0.0, *numbers])
            high = max([0.0, *numbers]) or 1.0
            base = 0.0
        missing = 0
        legend = []
        for t, (label, values) in enumerate(self._data):
            color = QColor(PALETTE[t % len(PALETTE)])
            xs, heights, bottoms = [], [], []
            for r, v in enumerate(values):
                if not _plottable(v, log_scale):
                    missing += v is not None
                    continue
                x = r - 0.4 + width * (t + 0.5)
                top = math.log10(v) if log_scale else v
                xs.append(x)
                bottoms.append(min(base, top))
                heights.append(abs(top - base))
                self._geometry.append((x - width / 2, x + width / 2, t, r))
            emphasis = t == self.current
            pen = pg.mkPen(color.darker(170), width=1.5 if emphasis else 0.8)
            opts = dict(x=xs, y0=bottoms, height=heights, width=width * 0.92,
                        brush=pg.mkBrush(color), pen=pen)  # fmt: skip
            if t < len(self.bars):
                self.bars[t].setOpts(**opts)
            else:
                bar = pg.BarGraphItem(**opts)
                item.addItem(bar)
                self.bars.append(bar)
            swatch = f"<span style='color:{color.name()}; font-size:14px'>■</span>"
            text = f"<b>{label}</b>" if emphasis else label
            legend.append(f"<span style='white-space:nowrap'>{swatch}&nbsp;{text}</span>")
        self.legend.setText("&nbsp;&nbsp; ".join(legend))
        item.setLogMode(False, log_scale)
        item.getAxis("left").setLogMode(False, log_scale)
        pad = 0.04 * (high - low)
        item.setYRange(low - (pad if log_scale else 0), high + pad, padding=0)
        item.setXRange(-0.55, len(COMBINATION_NAMES) - 0.45, padding=0)
        selected = self._selected
        self._band.setVisible(selected is not None)
        if selected is not None:
            self._band.setRegion((selected - 0.48, selected + 0.48))
        notes = []
        if missing:
            what = "≤ 0 or in error" if log_scale else "in error"
            notes.append(f"{missing} value{'s' if missing != 1 else ''} {what}: no bar")
        self.note.setText("; ".join(notes))
        self.note.setVisible(bool(notes))

    def bar_count(self) -> int:
        return len(self._geometry)

    def _hover(self, pos: QPointF) -> None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return
        point = vb.mapSceneToView(pos)
        for x0, x1, t, r in self._geometry:
            if x0 <= point.x() <= x1:
                label, values = self._data[t]
                text = f"{label}\n{COMBINATION_NAMES[r]} = {value_text(values[r])}"
                QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(pos)), text)
                return
        QToolTip.hideText()


def _plottable(v: object, log_scale: bool) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return False
    return v > 0 if log_scale else True


class CombinationsWindow(QWidget):
    """See the module docstring. Follows the document's current processor type."""

    def __init__(self, document, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.document = document
        self.setObjectName("CombinationsWindow")
        self._pretty_cache: dict[tuple[str, str], str] = {}
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
        _compact_rows(self.table)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setWordWrap(False)
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

        self.message = QLabel()
        self.message.setWordWrap(True)
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
        self.sensitivity_title = QLabel()
        title_font = self.sensitivity_title.font()
        title_font.setBold(True)
        self.sensitivity_title.setFont(title_font)
        self.symbolic = QLabel()
        self.symbolic.setFont(_mono())
        self.symbolic.setTextFormat(Qt.TextFormat.PlainText)
        self.symbolic.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.symbolic.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.sensitivity_note = QLabel()
        self.sensitivity_note.setWordWrap(True)
        self.sensitivity_note.setStyleSheet("color: #555;")
        self.sensitivity = QTableWidget(0, 5)
        self.sensitivity.setHorizontalHeaderLabels(
            ["Parameter x", "Meaning", "Value", "∂f/∂x", "d ln f / d ln x"]
        )
        tips = ["A stored value the expression uses", "", "Its current value",
                "The partial derivative of the ratio f with respect to x",
                "Relative sensitivity: the % change of f for a 1 % change of x"]  # fmt: skip
        for c, tip in enumerate(tips):
            self.sensitivity.horizontalHeaderItem(c).setToolTip(tip)
        self.sensitivity.verticalHeader().hide()
        self.sensitivity.setStyleSheet(TABLE_STYLE)
        self.sensitivity.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        _compact_rows(self.sensitivity)
        self.sensitivity.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.sensitivity.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.sensitivity.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.sensitivity.setWordWrap(False)
        sheader = self.sensitivity.horizontalHeader()
        sheader.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        sheader.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        sheader.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.sensitivity_page = QWidget()
        sens_layout = QVBoxLayout(self.sensitivity_page)
        sens_layout.addWidget(self.sensitivity_title)
        sens_layout.addWidget(self.symbolic)
        sens_layout.addWidget(self.sensitivity)
        sens_layout.addWidget(self.sensitivity_note)
        sens_layout.addStretch(1)

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
        document.modelReset.connect(lambda: self.refresh(keep_edits=False))
        document.currentProcessorChanged.connect(lambda _: self.refresh(keep_edits=False))
        document.structureChanged.connect(self.refresh)
        document.derivedChanged.connect(self._derived_changed)
        document.valuesChanged.connect(self._values_changed)
        self.refresh()
        self.select(COMBINATION_NAMES[0])

    # ------------------------------------------------------------------ building

    def _make_row(self, r: int, name: str) -> None:
        item = QTableWidgetItem(name)
        item.setFont(_mono())
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
        value.setFont(_mono())
        value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        value.setData(Qt.ItemDataRole.UserRole, name)
        self.table.setItem(r, VALUE, value)
        self.rows[name] = _Row(name, edit, value)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """In a narrow dock the expressions matter more than the words beside them (which
        the ratio's tooltip repeats): the meaning column goes before an expression is cut."""
        table = self.table
        others = table.columnWidth(NAME) + table.columnWidth(VALUE) + 2 * table.frameWidth()
        room = table.viewport().width() + 2 * table.frameWidth() - others
        table.setColumnHidden(DESCRIPTION, room - self._description_width < MIN_EXPRESSION_WIDTH)

    def _fit_table_height(self) -> None:
        _fit_height(self.table)

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
        self._pretty_cache.clear()
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

    def _values_changed(self, keys: set) -> None:
        if self._selected_inputs & set(keys):
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
        self.sensitivity.setRowCount(0)
        self.sensitivity.hide()
        self.symbolic.hide()
        if name is None or key is None:
            self.sensitivity_title.setText("Sensitivity")
            self.symbolic.setText("")
            self.sensitivity_note.setText("Select a ratio to see how it responds to "
                                          "the parameters it uses.")  # fmt: skip
            return
        self.sensitivity_title.setText(f"Sensitivity of {key} to the parameters it uses")
        expr = self.expression(name)
        if expr is None:
            self.symbolic.setText("")
            self.sensitivity_note.setText(f"{key} is not defined: type an expression for it.")
            return
        engine: Engine = self.document.engine
        self.symbolic.setText(self._pretty(key, expr))
        self.symbolic.show()
        from parasol_core.expr import symbolic  # sympy: imported when first needed

        try:
            found = symbolic.sensitivities(engine, key)
        except symbolic.SymbolicError as e:
            self.sensitivity_note.setText(f"No sensitivity here: {e}")
            return
        except Exception as e:  # noqa: BLE001 - sympy may fail in ways of its own
            log.warning("sensitivity of %s: %s", key, e)
            self.sensitivity_note.setText(f"No sensitivity here: {e}")
            return
        # strongest first; 0.9999999999999999 and 1.0 count as equal
        ordered = sorted(found.values(),
                         key=lambda s: (-round(abs(s.relative or 0), 9), s.parameter))  # fmt: skip
        self.sensitivity.setRowCount(len(ordered))
        for r, s in enumerate(ordered):
            cells = [s.parameter, parameter_meaning(s.parameter), f"{s.value:.6g}",
                     f"{s.partial:.4g}", _signed(s.relative)]  # fmt: skip
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 2, 3, 4):
                    item.setFont(_mono())
                if c >= 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if c == 1:
                    item.setForeground(QColor("#555"))
                self.sensitivity.setItem(r, c, item)
            if s.relative is not None:
                rel = self.sensitivity.item(r, 4)
                rel.setToolTip(f"1 % more {s.parameter} changes {key} by {s.relative:+.3g} %")
                rel.setForeground(QColor("#1b5e20") if s.relative > 0 else QColor("#8e1b1b"))
        _fit_height(self.sensitivity)
        self.sensitivity.setVisible(bool(ordered))
        value = engine.value(key)
        if not ordered:
            self.sensitivity_note.setText(f"{key} uses no stored parameters: it is a constant.")
        elif isinstance(value, EvalError):
            self.sensitivity_note.setText(f"{key} has no value: {value}")
        else:
            self.sensitivity_note.setText(
                f"f = {key} = {value_text(value)}. A relative sensitivity of +1 means f grows "
                "in proportion to x; −1, in inverse proportion."
            )

    def _pretty(self, key: str, expr: Expression) -> str:
        """The expression in symbolic form (sympy's pretty printer), cached per text."""
        cache_key = (key, expr.text)
        text = self._pretty_cache.get(cache_key)
        if text is None:
            from parasol_core.expr import symbolic  # sympy: imported when first needed

            try:
                text = _label_pretty(key, symbolic.pretty(key, self.document.engine))
            except Exception as e:  # noqa: BLE001 - a display nicety must never break the window
                text = f"{key} = {expr.text}    ({e})"
            self._pretty_cache[cache_key] = text
        return text

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
        """Set (or, with None, remove) a row's expression: one undoable step."""
        doc = self.document
        old = self.expression(name)
        if old is None and expr is None:
            return
        verb = "Remove" if expr is None else ("Add" if old is None else "Edit")
        if name == MAXTOTALSPD:
            command = self._machine_command(expr, f"{verb} maxtotalspd")
        else:
            proc = self.processor()
            if proc is None:
                return
            label = f"po({proc.id}).{name}"
            s = Slot(proc, "combinations", EXPR, name, label)
            command = SetValues(doc, [(s, expr)], f"{verb} {label}")
        if command is not None:
            doc.push(command)

    def _machine_command(self, expr: Expression | None, text: str) -> SetValues | None:
        """maxtotalspd lives in a machine combinations section, which may not exist yet:
        adding the expression adds the section, removing the last one removes it."""
        machine = self.document.machine
        section = machine.combinations
        attached = section is not None
        if section is None:
            section = MachineCombinations()
        s = Slot(section, "entries", EXPR, MAXTOTALSPD, MACHINE_KEY)
        command = SetValues(self.document, [(s, expr)], text)
        if not attached:
            command.extra_redo.append(lambda: setattr(machine, "combinations", section))
            command.extra_undo.append(lambda: setattr(machine, "combinations", None))
        elif expr is None and set(section.entries) <= {MAXTOTALSPD}:
            command.extra_redo.append(lambda: setattr(machine, "combinations", None))
            command.extra_undo.append(lambda: setattr(machine, "combinations", section))
        return command


def _compact_rows(table: QTableWidget) -> None:
    height = table.fontMetrics().height() + 8
    table.verticalHeader().setDefaultSectionSize(height)
    table.verticalHeader().setMinimumSectionSize(height)


def _fit_height(table: QTableWidget, min_rows: int = 0) -> None:
    """Make a table exactly as high as its header and rows (at least ``min_rows``)."""
    rows = table.rowCount()
    height = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth()
    height += sum(table.rowHeight(r) for r in range(rows))
    height += max(0, min_rows - rows) * table.verticalHeader().defaultSectionSize()
    if table.horizontalScrollBar().isVisible():
        height += table.horizontalScrollBar().sizeHint().height()
    table.setFixedHeight(height)


def _label_pretty(key: str, pretty: str) -> str:
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
