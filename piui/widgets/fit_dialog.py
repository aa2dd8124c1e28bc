"""Fit a run-time primitive's cost to measured times (the data-sheet method).

The user adds measurement files (a ``procs,bytes,seconds[,error]`` CSV, or the output of
an OSU micro-benchmark with the number of processes it ran on); every form of the thesis
is fitted (:func:`parasol_core.fit.fit`) and listed with chi-squared, Q and the
coefficients with their standard errors, best first. The plot shows the measurements
against the chosen fit and its min/max band. "Write" puts the chosen expression into the
primitive as one undoable edit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core import runtime
from parasol_core.edit import EditError
from parasol_core.fit import Candidate, FitError, Measurements, fit, read_measurements
from parasol_core.session import SessionError
from piui.widgets.cost_plot import PALETTE, CostPlot, Series

MAX_PROCESS_SERIES = 6  # more process counts than this: plot a spread of them

PREFIX_SECTION = {"pv": "pvm", "ex": "express", "mp": "mpi"}


def _mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    return font


class FitDialog(QDialog):
    def __init__(self, document, ref: str, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.document = document
        self.ref = ref
        self.setWindowTitle(f"Fit {ref} from measurements")
        self.sources: list[tuple[str, Measurements]] = []
        self.candidates: list[Candidate] = []
        self.measurements: Measurements | None = None

        self.source_list = QListWidget()
        self.source_list.setMaximumHeight(3 * self.source_list.fontMetrics().height() + 8)
        add = QPushButton("Add CSV or OSU file…")
        add.clicked.connect(self._browse)
        self.procs_box = QSpinBox()
        self.procs_box.setRange(1, 1 << 20)
        self.procs_box.setValue(2)
        self.procs_box.setToolTip("The number of processes an OSU benchmark ran on (its "
                                  "output does not say); a CSV gives its own")  # fmt: skip
        clear = QPushButton("Clear")
        clear.clicked.connect(self.clear)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(QLabel("OSU processes"))
        buttons.addWidget(self.procs_box)
        buttons.addStretch(1)
        buttons.addWidget(clear)

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
        self.plot.getPlotItem().setTitle(
            "measured (points) and fitted (lines, shaded: min/max)", color="#444", size="9pt"
        )
        self.readout = QLabel(" ")
        self.readout.setFont(_mono())
        self.plot.hovered.connect(lambda t: self.readout.setText(t or " "))

        self.expression = QLabel()
        self.expression.setFont(_mono())
        self.expression.setWordWrap(True)
        self.expression.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel("Add measured times: a CSV with the header "
                             "procs,bytes,seconds[,error], or OSU benchmark output.")  # fmt: skip
        self.status.setWordWrap(True)
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
        plot_layout.addWidget(self.plot, 1)
        plot_layout.addWidget(self.readout)
        split.addWidget(plot_box)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.source_list)
        layout.addWidget(split, 1)
        layout.addWidget(self.expression)
        layout.addLayout(bottom)
        self.resize(820, 720)

    # ---- sources

    def _browse(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Measured times", "",
                                                "Measurements (*.csv *.txt *.out);;All files (*)")  # fmt: skip
        for path in paths:
            self.add_file(path)

    def add_file(self, path: str | Path, procs: int | None = None) -> bool:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except OSError as e:
            self._error(f"{path}: {e.strerror or e}")
            return False
        return self.add_text(text, Path(path).name, procs)

    def add_text(self, text: str, label: str, procs: int | None = None) -> bool:
        """Measurements from a CSV or OSU output (``procs``: the OSU run's processes,
        else the dialog's)."""
        procs = self.procs_box.value() if procs is None else procs
        try:
            m = read_measurements(text, procs)
        except FitError as e:
            self._error(f"{label}: {e}")
            return False
        osu = not any(ln.strip().lower().startswith("procs") for ln in text.splitlines())
        self.sources.append((f"{label}" + (f" ({procs} processes)" if osu else ""), m))
        self.source_list.addItem(f"{self.sources[-1][0]}: {len(m)} measurements")
        self.refit()
        return True

    def load_beside_model(self) -> bool:
        """Measurements kept beside the model as ``measurements/STEM.SECTION.NAME.csv``."""
        path = self.document.path
        if path is None:
            return False
        prefix, _, name = self.ref.partition(".")
        candidate = (
            path.parent / "measurements" / f"{path.stem}.{PREFIX_SECTION[prefix]}.{name}.csv"
        )
        return candidate.exists() and self.add_file(candidate)

    def clear(self) -> None:
        self.sources.clear()
        self.source_list.clear()
        self.refit()

    # ---- fitting

    def refit(self) -> None:
        self.candidates = []
        self.measurements = None
        self.table.setRowCount(0)
        if self.sources:
            try:
                self.measurements = Measurements.concat([m for _, m in self.sources])
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
        if self.candidates:
            self.table.selectRow(0)
            note = "" if self.candidates[0].q is not None else (
                " No error column: equal relative errors assumed, so Q is not given.")  # fmt: skip
            self.status.setStyleSheet("")
            self.status.setText(f"{len(self.measurements)} measurements, "
                                f"{len(self.candidates)} forms; best first.{note}")  # fmt: skip
        self._chosen_changed()

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

    def _plot(self, c: Candidate | None) -> None:
        m = self.measurements
        if m is None:
            self.plot.set_series([])
            return
        counts = sorted(set(m.procs.tolist()))
        if len(counts) > MAX_PROCESS_SERIES:
            idx = np.linspace(0, len(counts) - 1, MAX_PROCESS_SERIES).round().astype(int)
            counts = [counts[i] for i in sorted(set(idx.tolist()))]
        sizes = np.array(runtime.message_sizes(max(int(m.bytes.max()), 2)), dtype=float)
        sizes = sizes[sizes >= max(m.bytes.min(), 1)]
        series: list[Series] = []
        bands = []
        for i, p in enumerate(counts):
            color = PALETTE[i % len(PALETTE)]
            sel = m.procs == p
            series.append(Series(f"{int(p)} processes", m.bytes[sel], m.seconds[sel], color,
                                 points=True))  # fmt: skip
            if c is not None:
                series.append(Series(f"fit {int(p)}", sizes, c.predict(p, sizes), color,
                                     in_legend=False))  # fmt: skip
                bands.append((sizes, *c.band(p, sizes), color))
        self.plot.set_series(series)
        for x, lo, hi, color in bands:
            self.plot.add_band(x, lo, hi, color)

    # ---- writing

    def write(self) -> bool:
        """The chosen expression into the primitive: one undoable edit."""
        c = self.chosen()
        if c is None:
            return False
        try:
            self.document.session.set_expression(self.ref, c.expression(), label=f"Fit {self.ref}")
        except (EditError, SessionError) as e:
            self._error(str(e))
            return False
        self.status.setStyleSheet("color: #1a5c1a;")
        self.status.setText(f"Written into {self.ref} (Edit > Undo takes it back).")
        return True

    def _error(self, message: str) -> None:
        self.status.setStyleSheet("color: #b00020;")
        self.status.setText(message)
