"""Fit a run-time primitive's cost to measured times (the data-sheet method).

The user adds measurement files (a ``procs,bytes,seconds[,error]`` CSV, or the output of
OSU micro-benchmarks with the number of processes they ran on). A log holding several
benchmarks shows its tables in a list (name and rows): the user picks one, and nothing is
fitted until then; tables of different benchmarks are never fitted together
(:func:`parasol_core.analysis.fit.mixed_benchmarks`). Every form of the thesis is fitted
(:func:`parasol_core.analysis.fit.fit`) and listed with chi-squared, Q and the coefficients with
their standard errors, best first. The plot shows the measurements against the chosen fit
and its min/max band (each coefficient one standard error down / up, shaded and edged
with dotted lines; its width is written above the plot, since a tight fit's band is
thinner than its line); below it, the residuals (measured - fitted). A list of the
process counts picks the series both plots show: every one at first, up to
:data:`MAX_PROCESS_SERIES` (a spread of them beyond, which the list says). "Write"
puts the chosen expression into the primitive as one undoable edit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.analysis.fit import (
    Candidate,
    FitError,
    Measurements,
    OsuLog,
    OsuTable,
    fit,
    fit_comment,
    mixed_benchmarks,
    read_measurement_file,
    read_source,
)
from parasol_core.base.words import counted
from parasol_core.frontend import runtime
from parasol_core.session import SessionError
from parasol_core.session.edit import EditError
from piui.widgets.cost_plot import PALETTE, CostPlot, Series

HINT = ("Add measured times: a CSV with the header procs,bytes,seconds[,error], or OSU "
        "benchmark output.")  # fmt: skip
MAX_PROCESS_SERIES = len(PALETTE)  # shown at first; beyond, a spread (one colour each)


def _skipped(source: Source) -> str:
    note = source.log.skipped_note() if source.log is not None else ""
    return f" {note}." if note else ""


def _mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    return font


@dataclass
class Source:
    """One added file: a CSV's measurements, or an OSU log and the table chosen of it."""

    label: str
    measurements: Measurements | None = None  # a CSV's, or the chosen table's
    log: OsuLog | None = None
    procs: int = 1  # the OSU run's processes
    table: OsuTable | None = None
    error: str = ""  # why the chosen table cannot be fitted

    def choose(self, table: OsuTable) -> None:
        self.table, self.measurements, self.error = table, None, ""
        try:
            self.measurements = table.measurements(self.procs)
        except FitError as e:
            self.error = f"{self.label}: {e}"

    def text(self) -> str:
        """The line in the list of sources."""
        if self.log is None:
            return f"{self.label}: {counted(len(self.measurements), 'measurement')}"
        head = f"{self.label} ({counted(self.procs, 'process')})"
        if self.table is None:
            return f"{head}: {counted(len(self.log.tables), 'table')}; choose one"
        m = self.measurements
        count = counted(len(m), "measurement") if m is not None else "not fitted"
        return f"{head}: {self.table.name}, {count}"


def table_text(table: OsuTable) -> str:
    """A table as the table list shows it: name, test, rows (and kind if not latency)."""
    test = f" — {table.test}" if table.test else ""
    kind = f", {table.kind}" if table.kind != "latency" else ""
    rows = f"{table.rows} row" + ("" if table.rows == 1 else "s")
    return f"{table.name}{test} ({rows}{kind})"


class FitDialog(QDialog):
    def __init__(self, document, ref: str, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.document = document
        self.ref = ref
        self.setWindowTitle(f"Fit {ref} from measurements")
        # made for this model: another one opened (or this one reloaded) closes it, and
        # nothing it holds is ever written into another
        self._machine = document.machine
        document.modelReset.connect(self.close)
        self.sources: list[Source] = []
        self.candidates: list[Candidate] = []
        self.measurements: Measurements | None = None

        self.source_list = QListWidget()
        self.source_list.setMaximumHeight(3 * self.source_list.fontMetrics().height() + 8)
        self.source_list.currentRowChanged.connect(self._show_tables)
        add = QPushButton("Add CSV or OSU file…")
        add.clicked.connect(self._browse)
        self.procs_box = QSpinBox()
        self.procs_box.setRange(1, 1 << 20)
        self.procs_box.setValue(2)
        self.procs_box.setToolTip("The number of processes an OSU benchmark ran on (its "
                                  "output does not say); a CSV gives its own")  # fmt: skip
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected file's measurements")
        self.remove_button.clicked.connect(self.remove_current)
        self.remove_button.setEnabled(False)
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(QLabel("OSU processes"))
        buttons.addWidget(self.procs_box)
        buttons.addStretch(1)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(clear)

        # the tables of the selected source, when its log holds several benchmarks
        self.table_label = QLabel("Table")
        self.table_box = QComboBox()
        self.table_box.setPlaceholderText("Choose a table…")
        self.table_box.setToolTip("The benchmark to fit: a log of several benchmarks is "
                                  "fitted one table at a time")  # fmt: skip
        self.table_box.currentIndexChanged.connect(self._table_chosen)
        table_row = QHBoxLayout()
        table_row.addWidget(self.table_label)
        table_row.addWidget(self.table_box, 1)
        self.table_row = QWidget()
        self.table_row.setLayout(table_row)
        table_row.setContentsMargins(0, 0, 0, 0)
        self.table_row.hide()
        # what was read from OSU logs: the table fitted, lines skipped, what it means
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("color: #555;")
        self.notes.hide()

        self.table = QTableWidget(0, 6)
        self.table.setHorizontalHeaderLabels(["Form", "χ²", "Q", "c (s)", "s (s)", "d (s/byte)"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setMinimumSectionSize(self.table.fontMetrics().horizontalAdvance("0.0001"))
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.itemSelectionChanged.connect(self._chosen_changed)

        self.plot = CostPlot("message size (bytes)", log_x=True, log_y=True,
                             x_text=runtime.size_text, y_text=runtime.time_text)  # fmt: skip
        self.plot.setMinimumHeight(220)
        self.plot.setToolTip("Points: the measured times. Lines: the chosen fit. Shaded: "
                             "the fit with each coefficient one standard error down (min) "
                             "and up (max); the title says how far apart they are.")  # fmt: skip
        self.plot.getPlotItem().setTitle(
            "measured (points) and fitted (lines, shaded: min/max)", color="#444", size="9pt"
        )
        self.residuals = CostPlot("message size (bytes)", log_x=True, log_y=False,
                                  x_text=runtime.size_text, y_text=runtime.time_text)  # fmt: skip
        self.residuals.getPlotItem().setLabel("left", "residual (s)")
        self.residuals.getPlotItem().setTitle("residuals: measured − fitted", color="#444",
                                              size="9pt")  # fmt: skip
        self.residuals.legend.hide()
        self.residuals.setMinimumHeight(150)  # room for its axis label and three ticks
        self.residuals.getPlotItem().addItem(
            pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#888")), ignoreBounds=True
        )
        self.series_list = QListWidget()  # the process counts to show
        self.series_list.setFlow(QListWidget.Flow.LeftToRight)
        self.series_list.setWrapping(True)
        # laid out again at every width (else the entries keep the places of the first
        # width, cut off or under their neighbours), a little room between them
        self.series_list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.series_list.setSpacing(2)
        self.series_list.setMaximumHeight(self.fontMetrics().height() * 3 + 8)
        self.series_list.setToolTip("The process counts the plots show: tick or untick one "
                                    "(Space toggles the current one)")  # fmt: skip
        self.series_list.itemChanged.connect(lambda _item: self._plot(self.chosen()))
        self.series_note = QLabel()
        self.series_note.setStyleSheet("color: #555;")
        self.readout = QLabel(" ")
        self.readout.setFont(_mono())
        for plot in (self.plot, self.residuals):
            plot.hovered.connect(lambda t: self.readout.setText(t or " "))

        self.expression = QLabel()
        self.expression.setFont(_mono())
        self.expression.setWordWrap(True)
        self.expression.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel(HINT)
        self.status.setWordWrap(True)
        # wrapped labels keep the height of their lines; the splitter gives way instead
        for label in (self.notes, self.status):
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.write_button = QPushButton(f"Write into {ref}")
        self.write_button.setEnabled(False)
        self.write_button.clicked.connect(self.write)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.write_button)
        bottom.addWidget(close)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        picker = QHBoxLayout()
        show = QLabel("Show:")
        show.setBuddy(self.series_list)
        # beside the list's first row, not its middle: a label of its own, never under
        # an entry
        show.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        show.setContentsMargins(0, 4, 0, 0)
        picker.addWidget(show, 0, Qt.AlignmentFlag.AlignTop)
        picker.addWidget(self.series_list, 1)
        plot_layout.addLayout(picker)
        plot_layout.addWidget(self.series_note)
        plot_layout.addWidget(self.plot, 3)
        plot_layout.addWidget(self.residuals, 2)
        plot_layout.addWidget(self.readout)
        split.addWidget(plot_box)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.source_list)
        layout.addWidget(self.table_row)
        layout.addWidget(self.notes)
        layout.addWidget(split, 1)
        layout.addWidget(self.expression)
        layout.addLayout(bottom)
        self.resize(820, 720)

    # ---- sources

    def _browse(self) -> None:
        from piui.widgets.file_dialogs import MEASUREMENT_FILTER, ask_paths, start_folder

        # beside the model, where measurements_file() keeps them too
        paths = ask_paths(self, "Measured times", str(start_folder(self.document)),
                          MEASUREMENT_FILTER)  # fmt: skip
        for path in paths:
            self.add_file(path)

    def add_file(self, path: str | Path, procs: int | None = None) -> bool:
        try:
            text = read_measurement_file(path)
        except OSError as e:
            self._error(f"{path}: {e.strerror or e}")
            return False
        except FitError as e:
            self._error(f"{Path(path).name}: {e}")
            return False
        return self.add_text(text, Path(path).name, procs)

    def add_text(self, text: str, label: str, procs: int | None = None) -> bool:
        """Measurements from a CSV or OSU output (``procs``: the OSU run's processes,
        else the dialog's). A log of several tables is added with none chosen."""
        procs = self.procs_box.value() if procs is None else procs
        try:
            found = read_source(text)
        except FitError as e:
            self._error(f"{label}: {e}")
            return False
        if isinstance(found, Measurements):
            source = Source(label, measurements=found)
        else:
            source = Source(label, log=found, procs=procs)
            if len(found.tables) == 1:
                source.choose(found.tables[0])
        self.sources.append(source)
        self.source_list.addItem(source.text())
        self.source_list.setCurrentRow(len(self.sources) - 1)
        self.refit()
        return True

    def choose_table(self, name: str | int, source: int = -1) -> bool:
        """Choose a table of a source's log by name or number (as the list does)."""
        if not self.sources:
            return False
        chosen = self.sources[source]
        if chosen.log is None:
            return False
        try:
            table = chosen.log.find(str(name))
        except FitError as e:
            self._error(str(e))
            return False
        self.source_list.setCurrentRow(self.sources.index(chosen))
        self.table_box.setCurrentIndex(table.number - 1)
        return True

    def _show_tables(self, row: int) -> None:
        """The table list of the selected source (shown for a log of several tables)."""
        source = self.sources[row] if 0 <= row < len(self.sources) else None
        tables = source.log.tables if source is not None and source.log is not None else []
        self.table_box.blockSignals(True)
        self.table_box.clear()
        for table in tables:
            self.table_box.addItem(table_text(table))
        self.table_box.setCurrentIndex(source.table.number - 1 if source and source.table else -1)
        self.table_box.blockSignals(False)
        self.table_label.setText(f"Table of {source.label}" if source else "Table")
        self.table_row.setVisible(len(tables) > 1)
        self.remove_button.setEnabled(source is not None)

    def _table_chosen(self, index: int) -> None:
        row = self.source_list.currentRow()
        if index < 0 or not 0 <= row < len(self.sources) or self.sources[row].log is None:
            return
        source = self.sources[row]
        source.choose(source.log.tables[index])
        self.source_list.item(row).setText(source.text())
        self.refit()

    def remove_current(self) -> None:
        row = self.source_list.currentRow()
        if 0 <= row < len(self.sources):
            del self.sources[row]
            self.source_list.takeItem(row)
            self._show_tables(self.source_list.currentRow())
            self.refit()

    def load_beside_model(self) -> bool:
        """Measurements kept beside the model, where
        :func:`parasol_core.measure.files.measurements_file` says."""
        from parasol_core.measure.files import measurements_file

        path = self.document.path
        if path is None:
            return False
        candidate = measurements_file(path, self.ref)
        return candidate.exists() and self.add_file(candidate)

    def clear(self) -> None:
        self.sources.clear()
        self.source_list.clear()
        self._show_tables(-1)
        self.refit()

    # ---- fitting

    def refit(self) -> None:
        self.candidates = []
        self.measurements = None
        self.table.setRowCount(0)
        problem = self._problem()
        if problem:
            self._error(problem)
        elif not self.sources:
            self.status.setStyleSheet("")
            self.status.setText(HINT)
        else:
            try:
                self.measurements = Measurements.concat([s.measurements for s in self.sources])
                self.candidates = fit(self.measurements)
            except FitError as e:
                self._error(str(e))
        self.table.setRowCount(len(self.candidates))
        for r, c in enumerate(self.candidates):
            cells = [str(c.form), f"{c.chi2:.4g}", "—" if c.q is None else f"{c.q:.3g}"]
            for name in ("c", "s", "d"):
                if name in c.coefficients:
                    cells.append(f"{c.coefficients[name]:.4g} ± {c.errors[name]:.2g}")
                else:
                    cells.append("")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col:
                    item.setFont(_mono())
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if r == 0:
                    item.setForeground(QColor("#1a5c1a"))
                self.table.setItem(r, col, item)
        self._fill_series_list()
        if self.candidates:
            self.table.selectRow(0)
            note = "" if self.candidates[0].q is not None else (
                " No error column: equal relative errors assumed, so Q is not given.")  # fmt: skip
            self.status.setStyleSheet("")
            self.status.setText(f"{counted(len(self.measurements), 'measurement')}, "
                                f"{counted(len(self.candidates), 'form')}; best first.{note}")  # fmt: skip
        notes = self._notes()
        self.notes.setText(notes)
        self.notes.setVisible(bool(notes))
        self._chosen_changed()

    def _problem(self) -> str:
        """Why the sources cannot be fitted now ("" if they can)."""
        for source in self.sources:
            if source.log is not None and source.table is None:
                return (f"{source.label} holds {counted(len(source.log.tables), 'benchmark table')}: "
                        "choose one under Table.")  # fmt: skip
            if source.error:
                return source.error
        tables = [(s.label, s.table) for s in self.sources if s.table is not None]
        return mixed_benchmarks(tables) or ""

    def _notes(self) -> str:
        """What was read from OSU logs: the table fitted (or to choose), the lines
        skipped, and what a bandwidth table's times mean; one line a file."""
        lines = []
        for source in self.sources:
            if source.log is None:
                continue
            fitted = f"table {source.table.name}." if source.table else "no table chosen."
            note = source.table.note() if source.table else ""
            lines.append(f"{source.label}: {fitted}{_skipped(source)}"
                         + (f" {note}." if note else ""))  # fmt: skip
        return "\n".join(lines)

    def chosen(self) -> Candidate | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or not self.candidates:
            return None
        return self.candidates[rows[0].row()]

    def choose(self, row: int) -> None:
        self.table.selectRow(row)

    def _chosen_changed(self) -> None:
        c = self.chosen()
        self.write_button.setEnabled(c is not None)
        self.expression.setText(f"{self.ref} = {c.expression()}" if c else "")
        self._plot(c)

    def _fill_series_list(self) -> None:
        """One entry per process count of the measurements, each with its colour; the
        first :data:`MAX_PROCESS_SERIES` (a spread of them when there are more) ticked."""
        m = self.measurements
        counts = sorted(set(m.procs.tolist())) if m is not None else []
        shown = set(counts)
        if len(counts) > MAX_PROCESS_SERIES:
            idx = np.linspace(0, len(counts) - 1, MAX_PROCESS_SERIES).round().astype(int)
            shown = {counts[i] for i in idx.tolist()}
        self.series_list.blockSignals(True)
        self.series_list.clear()
        for i, p in enumerate(counts):
            item = QListWidgetItem(counted(int(p), "process"))
            item.setData(Qt.ItemDataRole.UserRole, p)
            item.setForeground(QColor(PALETTE[i % len(PALETTE)]))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if p in shown else Qt.CheckState.Unchecked)
            self.series_list.addItem(item)
        self.series_list.blockSignals(False)

    def shown_counts(self) -> list[float]:
        """The process counts ticked in the list."""
        items = [self.series_list.item(i) for i in range(self.series_list.count())]
        return [it.data(Qt.ItemDataRole.UserRole) for it in items
                if it.checkState() == Qt.CheckState.Checked]  # fmt: skip

    def _plot(self, c: Candidate | None) -> None:
        m = self.measurements
        if m is None:
            self.plot.set_series([])
            self.residuals.set_series([])
            self.series_note.setText("")
            return
        all_counts = sorted(set(m.procs.tolist()))
        shown = self.shown_counts()
        hidden = [int(p) for p in all_counts if p not in shown]
        self.series_note.setText(
            f"{len(shown)} of {counted(len(all_counts), 'process count')} shown; hidden: "
            + ", ".join(map(str, hidden)) + " (tick them above)" if hidden
            else f"All {counted(len(all_counts), 'process count')} shown."
        )  # fmt: skip
        sizes = np.array(runtime.message_sizes(max(int(m.bytes.max()), 2)), dtype=float)
        sizes = sizes[sizes >= max(m.bytes.min(), 1)]
        series: list[Series] = []
        residuals: list[Series] = []
        bands = []
        widest = 0.0
        for i, p in enumerate(all_counts):
            if p not in shown:
                continue
            color = PALETTE[i % len(PALETTE)]
            sel = m.procs == p
            series.append(Series(counted(int(p), "process"), m.bytes[sel], m.seconds[sel], color,
                                 points=True))  # fmt: skip
            if c is not None:
                fitted = c.predict(p, sizes)
                series.append(Series(f"fit {int(p)}", sizes, fitted, color, in_legend=False,
                                     at=lambda x, c=c, p=p: float(c.predict(p, x))))  # fmt: skip
                low, high = c.band(p, sizes)
                bands.append((sizes, low, high, color))
                with np.errstate(divide="ignore", invalid="ignore"):
                    spread = np.nanmax(np.abs(high - low) / 2 / np.abs(fitted))
                if np.isfinite(spread):
                    widest = max(widest, float(spread))
                measured = m.seconds[sel] - c.predict(p, m.bytes[sel])
                residuals.append(Series(counted(int(p), "process"), m.bytes[sel], measured, color,
                                        points=True))  # fmt: skip
        self.plot.set_series(series)
        for x, lo, hi, color in bands:
            self.plot.add_band(x, lo, hi, color, edges=True)
        self.residuals.set_series(residuals)
        # short enough for the plot's width (a title is not wrapped); what the band is,
        # in words, is the plot's tooltip
        band = f"; shaded: within ±{widest:.2%}" if c is not None else ""
        self.plot.getPlotItem().setTitle(f"measured (points), fitted (lines{band})",
                                         color="#444", size="9pt")  # fmt: skip

    # ---- writing

    def write(self) -> bool:
        """The chosen expression into the primitive: one undoable edit."""
        c = self.chosen()
        if c is None:
            return False
        if self.document.machine is not self._machine:
            self._error("another model is open: this fit was made for the one before")
            return False
        sources = [s.label + (f", {s.table.name}" if s.table is not None else "")
                   for s in self.sources]  # fmt: skip
        comment = fit_comment(c, self.measurements, sources)
        try:
            self.document.session.set_expression(self.ref, c.expression(), label=f"Fit {self.ref}",
                                                 comment=comment)  # fmt: skip
        except (EditError, SessionError) as e:
            self._error(str(e))
            return False
        self.status.setStyleSheet("color: #1a5c1a;")
        self.status.setText(f"Written into {self.ref} (Edit > Undo takes it back).")
        return True

    def _error(self, message: str) -> None:
        self.status.setStyleSheet("color: #b00020;")
        self.status.setText(message)
