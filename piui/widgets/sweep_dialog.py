"""File > Sweep…: a what-if sweep of the open model (docs/sweeps.md), built in a table,
run in the background, its results drawn as they come.

The axes are rows of a table (what changes, written as ``parasol-model set`` writes it,
and its values); **Add axis** offers what the model can change. The answers are the
expressions to evaluate (the model's combination ratios to start with) and, if chosen,
a communication phase and a program's trace to replay. **Run** reads the sweep as the command line reads a sweep file
(the open model's text is its base: the sweep is of the model as it is now) and runs
its variants (unless the sweep is smaller than a pool's start-up,
:func:`parasol_core.sweep.cost.small`) on a process pool of this machine's cores, the command line's
(:func:`parasol_core.sweep.run_sweep`), driven from a thread of its own so the window
never waits; rows come back to the GUI thread as their batch (at most a few variants,
one when a variant is slow) finishes and the plots are redrawn a few times a second. The pool's processes are spawned, not
forked: this process has Qt's threads. **Cancel** ends the pool's processes at once (the
rows already made stay; the variants under way are dropped) and leaves none behind.

The results, for the answer chosen: a line for one axis, a heat map for two, parallel
coordinates for more, and "What dominates": each axis's effect on the answer
(:func:`parasol_core.sweep.analysis.effects`). Clicking a point of the line, a cell of
the heat map, a line of the parallel coordinates or a row of the results table opens that
variant as a new unsaved model.
Everything computed is the core's; this module draws.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.words import counted
from parasol_core.frontend.program import placement_entries
from parasol_core.sweep import analysis
from parasol_core.sweep.spec import SweepError, SweepSpec, loads_spec
from parasol_core.sweep.worker import Row
from piui.widgets.labels import value_text
from piui.widgets.placement import (
    ask_hostfile,
    fill_placements,
    placement_controls,
    placement_of,
)
from piui.widgets.plot_axes import readable_axes, show_categories
from piui.widgets.plot_limits import DRAWABLE, drawable, too_large, too_large_note
from piui.widgets.scrolling import in_scroll_area
from piui.widgets.shortcuts import CLOSE, RUN, CancelsItsRunFirst, bind, key_for, with_key
from piui.widgets.status_messages import message_label

EMPTY_BEFORE = "Run the sweep: its results are drawn here as they come."
EMPTY_NO_AXIS = ("No axis: one variant, the model as it is; its answers are in the table "
                 "below. Add an axis to see how they change.")  # fmt: skip
REDRAW_MS = 150
PATTERNS = ("none", "halo", "shift", "broadcast", "broadcast-tree", "alltoall", "ring-allgather")


def _short(value: Any) -> str:
    """An axis value as a tick label: numbers to 4 significant digits."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.4g}"
    return str(value)


BATCH = 4  # variants sent to a worker at once: rows come back soon after they are made


def _hundredfold(values: np.ndarray) -> bool:
    """Whether positive values span a hundredfold: drawn (or coloured) on a log scale."""
    return bool(values.size > 0 and values.min() > 0 and values.max() >= 100 * values.min())


def _logarithmic(values: np.ndarray) -> bool:
    """Whether an axis's values are drawn on a log scale: positive, and spanning a
    hundredfold or in a constant ratio (a ``log`` range: 0.25 to 4 in five steps was
    drawn on a linear axis, its points bunched at the left)."""
    if values.size < 2 or not np.isfinite(values).all() or values.min() <= 0:
        return False
    if _hundredfold(values):
        return True
    steps = np.diff(np.log(np.sort(values)))
    return values.size >= 3 and steps.min() > 0 and np.allclose(steps, steps[0], rtol=1e-6)


class _Runner(QObject):
    """Runs a sweep on a process pool driven from a thread of its own; rows and the end
    come back as signals. ``workers``: the pool's processes (None: one a core)."""

    workers: int | None = None

    row = Signal(object)  # Row
    ended = Signal(object)  # None, or the exception that stopped it

    def start(self, spec: SweepSpec, cancel: threading.Event, machine: Any = None) -> None:
        from parasol_core.sweep.cost import small
        from parasol_core.sweep.runner import run_sweep

        # a sweep smaller than a pool's start-up runs on this thread alone
        here = machine is not None and self.workers is None and small(spec, machine)
        self.executor = "serial" if here else "local"

        def run() -> None:
            try:
                run_sweep(spec, self.row.emit, executor=self.executor, workers=self.workers,
                          cancel=cancel, start="spawn", abandon=True, largest=BATCH)  # fmt: skip
                error = None
            except BaseException as e:  # delivered to the GUI thread, never lost
                error = e
            self.ended.emit(error)

        threading.Thread(target=run, name="piui-sweep", daemon=True).start()


EFFECTS_LEFT_LEAST = 400
"""The least width :meth:`SweepDialog._room_for_effects` leaves the chart of results."""


class SweepDialog(CancelsItsRunFirst, QDialog):
    """See the module. ``opened(text, title)``: the user asked for a variant's model."""

    opened = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, document: Any = None,
                 program: Callable[[], Any] | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.document = document
        # the Program window's open program (parasol_core.frontend.program.Program), if any
        self._program = program or (lambda: None)
        self.setWindowTitle("Sweep")
        self.resize(1100, 760)
        self.spec: SweepSpec | None = None
        self.rows: list[Row] = []
        self._cancel: threading.Event | None = None
        self._started = 0.0
        self._runner = _Runner()
        self._runner.row.connect(self._took)
        self._runner.ended.connect(self._ended)
        self._redraw = QTimer(self, singleShot=True, interval=REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self.redraws = 0  # how many times the results were drawn (tests)
        self.too_large = 0  # answers past what a plot draws, left out of the last drawing
        self._opening = False  # a variant of this sweep is being opened as the model
        self._dropped = False  # the run under way was of a model no longer open
        # where the replay's ranks run: (virtual topology, hostfile), as the Program
        # window's chooser says them; about the open model's processors
        self._virtual: int | None = None
        self._hostfile: Path | None = None
        self._placements: list = []
        # the form's row of each [[answer]] and its kind (sweep_text)
        self._answer_rows: list[tuple[str, str]] = []
        self.ask_hostfile_path = lambda: ask_hostfile(self, self.document)
        if document is not None:
            document.modelReset.connect(self._model_reset)
            document.changed.connect(self._model_changed)

        # ---- the sweep
        self.axes = QTableWidget(0, 2)
        self.axes.setHorizontalHeaderLabels(["Change", "Values"])
        self.axes.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.axes.horizontalHeader().setStretchLastSection(True)
        self.axes.setColumnWidth(0, 200)
        self.axes.verticalHeader().setVisible(False)
        self.axes.setMinimumHeight(110)
        self.add_button = QPushButton("&Add axis")
        self.add_menu = QMenu(self)
        self.add_button.setMenu(self.add_menu)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.remove_button = QPushButton("Re&move axis")
        self.remove_button.clicked.connect(self._remove_axis)
        self.expressions = QLineEdit()
        self.expressions.setToolTip("Expressions to evaluate for each variant, separated by commas")
        self.pattern = QComboBox()
        self.pattern.addItems(PATTERNS)
        self.pattern_bytes = QSpinBox(minimum=0, maximum=1 << 30, value=4096)
        self.trace = QLineEdit()
        self.trace.setPlaceholderText("a SimGrid time-independent trace (its index file)")
        self.trace_button = QPushButton("C&hoose…")
        self.trace_button.clicked.connect(self._choose_trace)
        self.program_button = QPushButton("&Program window's")
        self.program_button.setToolTip("Replay the trace open in the Program window, with its flop")
        self.program_button.clicked.connect(self.use_program)
        self.flop = QLineEdit()
        self.flop.setPlaceholderText("seconds a flop (default: the model's)")
        self.placement, self.hostfile_button = placement_controls(self._placement_chosen,
                                                                  self.choose_hostfile)  # fmt: skip
        self.method = QComboBox()
        self.method.addItems(["grid", "random", "latin"])
        self.count = QSpinBox(minimum=1, maximum=1_000_000, value=100)
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1, value=0)
        self.method.currentTextChanged.connect(lambda m: self.count.setEnabled(m != "grid"))
        self.count.setEnabled(False)

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        phase = QHBoxLayout()
        phase.addWidget(self.pattern)
        phase.addWidget(QLabel("bytes"))
        phase.addWidget(self.pattern_bytes)
        phase.addStretch(1)
        sample = QHBoxLayout()
        sample.addWidget(self.method)
        sample.addWidget(QLabel("variants"))
        sample.addWidget(self.count)
        sample.addWidget(QLabel("seed"))
        sample.addWidget(self.seed)
        sample.addStretch(1)
        form = QFormLayout()
        form.addRow("Answers (eval)", self.expressions)
        form.addRow("Phase (simulate)", phase)
        program = QHBoxLayout()
        program.addWidget(self.trace, 3)
        program.addWidget(self.trace_button)
        program.addWidget(self.program_button)
        program.addWidget(QLabel("flop"))
        program.addWidget(self.flop, 2)
        form.addRow("Program (replay)", program)
        place = QHBoxLayout()
        place.addWidget(self.placement, 1)
        place.addWidget(self.hostfile_button)
        form.addRow("Ranks run", place)
        form.addRow("Sample", sample)

        self.run_button = QPushButton("&Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        key_for(self.run_button, self, RUN, "Run the sweep: its variants on this machine's cores")
        self.cancel_button = QPushButton("&Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setToolTip(with_key("Stop the sweep; the rows made stay", "Esc"))
        bind(self, CLOSE, self.close)  # Ctrl+W: as the title bar's button (asks if a run goes on)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.status = message_label()
        self.message = message_label()
        running = QHBoxLayout()
        running.addWidget(self.run_button)
        running.addWidget(self.cancel_button)
        running.addWidget(self.bar, 1)
        running.addWidget(self.status, 2)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.axes)
        top_layout.addLayout(buttons)
        top_layout.addLayout(form)
        top_layout.addLayout(running)
        top_layout.addWidget(self.message)

        # ---- the results
        self.answer = QComboBox()
        self.answer.currentIndexChanged.connect(lambda _: self.redraw())
        self.plots = QStackedWidget()
        self.line_plot = self._plot("")
        self.line = pg.PlotDataItem([], [], pen=pg.mkPen("#2060c0", width=2), symbol="o",
                                    symbolSize=7, symbolBrush="#2060c0")  # fmt: skip
        self.line.sigPointsClicked.connect(self._point_clicked)
        self.line_plot.addItem(self.line)
        self.heat_plot = self._plot("")
        self.heat = pg.ImageItem()
        self.heat.setColorMap(pg.colormap.get("viridis"))
        self.heat_plot.addItem(self.heat)
        self.heat_bar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False,
                                        width=14)  # fmt: skip
        self.heat_bar.setImageItem(self.heat, insert_in=self.heat_plot.getPlotItem())
        self.heat_plot.scene().sigMouseClicked.connect(self._heat_clicked)
        self.parallel_plot = self._plot("")
        self.parallel_lines: list[pg.PlotDataItem] = []
        self.empty = QLabel(EMPTY_BEFORE)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        for w in (self.empty, self.line_plot, self.heat_plot, self.parallel_plot):
            self.plots.addWidget(w)
        self.effects_plot = self._plot("")
        self.effects_plot.setLabel("left", "effect (max - min of the means)")
        self.effects_plot.setTitle("What dominates")
        self.effect_bars: pg.BarGraphItem | None = None
        self.table = QTableWidget(0, 0)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellDoubleClicked.connect(lambda r, _c: self._open_row(r))
        self.table.setToolTip("Double-click a row to open that variant as a new model")

        charts = self.charts = QSplitter(Qt.Orientation.Horizontal)
        # the plots name their axes and the effects' bars: narrow, they scroll sideways
        # rather than drop a name (plot_axes.show_categories)
        charts.addWidget(in_scroll_area(self.plots))
        charts.addWidget(in_scroll_area(self.effects_plot))
        charts.setSizes([700, 350])
        results = QWidget()
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Answer"))
        pick.addWidget(self.answer, 1)
        results_layout.addLayout(pick)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(charts)
        split.addWidget(self.table)
        split.setSizes([380, 140])
        results_layout.addWidget(split)

        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(results)
        outer.setSizes([270, 490])
        layout = QVBoxLayout(self)
        layout.addWidget(outer)
        self.start_from_model()

    @staticmethod
    def _plot(left: str) -> pg.PlotWidget:
        plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(pg.mkPen("#555"))
            axis.setTextPen(pg.mkPen("#222"))
        if left:
            plot.setLabel("bottom", left)
        return plot

    # ------------------------------------------------------------------ building

    def start_from_model(self) -> None:
        """A first sweep of the open model: its combination ratios as the answers, and
        no axis yet."""
        m = self.document.machine if self.document is not None else None
        names = []
        if m is not None:
            for proc in m.processors:
                names += [f"po({proc.id}).{n}" for n in proc.combinations]
            if m.combinations is not None:
                names += [f"mc.{n}" for n in m.combinations.entries]
        self.expressions.setText(", ".join(names))
        self._show_placement()
        self._name_base()

    def _name_base(self) -> None:
        """The title names the model the sweep is of (its results, once run)."""
        self.setWindowTitle(f"Sweep of {self.document.title()}" if self.document else "Sweep")

    def _model_reset(self) -> None:
        """Another model was opened: nothing of the last one stays (its axes' values,
        answers, results, and a variant to open from them). A run under way is
        cancelled and its rows dropped. A variant of this sweep opened from its results
        keeps the sweep, to open another."""
        if self._opening:
            return
        if self.running:
            self._dropped = True
            self.cancel()
        self.axes.setRowCount(0)
        self.spec, self.rows = None, []
        self._virtual = self._hostfile = None  # about the last model's processors
        self.answer.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.bar.setValue(0)
        self.status.clear()
        self.message.clear()
        self.redraw()
        self.start_from_model()

    def add_axis(self, change: str, values: str) -> None:
        row = self.axes.rowCount()
        self.axes.insertRow(row)
        self.axes.setItem(row, 0, QTableWidgetItem(change))
        self.axes.setItem(row, 1, QTableWidgetItem(values))

    def add_suggested(self, change: str) -> None:
        """An axis for ``change`` with the values the model suggests for it (a window's
        "Sweep …" menu). An axis the sweep has already is chosen, not added twice."""
        for row in range(self.axes.rowCount()):
            item = self.axes.item(row, 0)
            if item is not None and item.text().strip() == change:
                self.axes.setCurrentCell(row, 1)
                return
        values = (analysis.suggested_values(self.document.machine, change, self.document.engine)
                  if self.document is not None else "")  # fmt: skip
        self.add_axis(change, values)

    def _remove_axis(self) -> None:
        row = self.axes.currentRow()
        if row >= 0:
            self.axes.removeRow(row)

    def _fill_add_menu(self) -> None:
        self.add_menu.clear()
        if self.document is None:
            return
        groups: dict[str, QMenu] = {}
        for change, values in analysis.suggestions(self.document.machine):
            title = ("Links and topologies" if change.startswith(("tl(", "topology"))
                     else "Scaler groups" if change.startswith("scale")
                     else "Timings" if change.startswith("pt(") else "Run-time systems")  # fmt: skip
            menu = groups.get(title)
            if menu is None:
                menu = groups[title] = self.add_menu.addMenu(title)
            menu.addAction(change, lambda c=change, v=values: self.add_axis(c, v))

    def _choose_trace(self) -> None:
        from piui.widgets.file_dialogs import ask_path

        path = ask_path(self, "A program's trace to replay", self.trace.text() or "", False,
                        "Traces (*.txt *.trace);;All files (*)")  # fmt: skip
        if path:
            self.trace.setText(path)

    def use_program(self) -> None:
        """The trace open in the Program window, and its flop (empty: the model's, as
        there), as the sweep's replay answer."""
        program = self._program()
        if program is None:
            self.message.setText("No program is open: File > Open program trace… opens one "
                                 "in the Program window.")  # fmt: skip
            return
        self.trace.setText(str(program.path))
        self.flop.setText(program.flop or "")
        self.set_placement(program.virtual, program.hostfile)
        self.message.clear()

    # ------------------------------------------------------------------ where ranks run

    def _show_placement(self) -> None:
        """The chooser as the model open now is: in order, its virtual topologies, the
        hostfile chosen (if any)."""
        machine = self.document.machine if self.document is not None else None
        if machine is None:
            return
        entries, chosen = placement_entries(machine, self._virtual, self._hostfile)
        self._placements = fill_placements(self.placement, entries, chosen)

    def _placement_chosen(self, index: int) -> None:
        self.set_placement(*placement_of(self._placements[index]))

    def set_placement(self, virtual: int | None, hostfile: str | Path | None = None) -> None:
        """Run the replay's ranks by virtual topology ``virtual``, or as ``hostfile`` says,
        or (both None) in order."""
        self._virtual = virtual
        self._hostfile = Path(hostfile) if hostfile is not None else None
        self._show_placement()

    def choose_hostfile(self) -> bool:
        path = self.ask_hostfile_path()
        if not path:
            return False
        self.set_placement(None, path)
        return True

    def _model_changed(self, change: Any) -> None:
        if getattr(change, "structure", False):
            self._show_placement()  # a virtual topology added or removed

    def sweep_text(self) -> str:
        """The sweep the form says, as a sweep file (ValueError saying what is wrong)."""
        axes = []
        for row in range(self.axes.rowCount()):
            change = self.axes.item(row, 0).text() if self.axes.item(row, 0) else ""
            values = self.axes.item(row, 1).text() if self.axes.item(row, 1) else ""
            try:
                axes.append(analysis.axis_from_form(change, values))
            except ValueError as e:
                raise ValueError(f"axis {row + 1}: {e}") from None
        answers: list[dict] = []
        # the form's row of each [[answer]], so that an error names the row, not a number
        self._answer_rows: list[tuple[str, str]] = []
        exprs = [e.strip() for e in self.expressions.text().split(",") if e.strip()]
        if exprs:
            answers.append({"eval": exprs})
            self._answer_rows.append(("Answers (eval)", "eval"))
        if self.pattern.currentText() != "none":
            answers.append({"simulate": {"pattern": self.pattern.currentText(),
                                         "bytes": self.pattern_bytes.value()}})  # fmt: skip
            self._answer_rows.append(("Phase (simulate)", "simulate"))
        if self.trace.text().strip():
            self._answer_rows.append(("Program (replay)", "replay"))
            program = {"trace": self.trace.text().strip()}
            if self.flop.text().strip():
                program["flop"] = self.flop.text().strip()
            if self._hostfile is not None:
                program["hostfile"] = str(self._hostfile)
            elif self._virtual is not None:
                program["virtual"] = self._virtual
            answers.append({"replay": program})
        sample = None
        if self.method.currentText() != "grid":
            sample = {"method": self.method.currentText(), "count": self.count.value(),
                      "seed": self.seed.value()}  # fmt: skip
        return analysis.sweep_text(axes, answers, sample)

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def run(self) -> None:
        if self.running or self.document is None:
            return
        self.document.commit_pending()
        try:
            here = self.document.path.parent if self.document.path is not None else None
            spec = loads_spec(self.sweep_text(), model_text=self.document.session.text(),
                              base=here, source="the sweep")  # fmt: skip
        except (ValueError, SweepError) as e:
            self.message.setText(self._in_form_words(e))
            return
        self.message.clear()
        self._name_base()  # a sweep of the model open now, maybe a variant of the last
        self.spec, self.rows = spec, []
        self.answer.blockSignals(True)
        self.answer.clear()
        self.answer.addItems([a.name for a in spec.answers])
        self.answer.blockSignals(False)
        self.table.setRowCount(0)
        self.table.setColumnCount(len(spec.columns()) - 1)
        self.table.setHorizontalHeaderLabels(spec.columns()[:-2] + ["error"])
        # each column as wide as its name (no row yet), and no narrower than the default
        self.table.resizeColumnsToContents()
        least = self.table.horizontalHeader().defaultSectionSize()
        for c in range(self.table.columnCount()):
            self.table.setColumnWidth(c, max(least, self.table.columnWidth(c)))
        self._cancel = threading.Event()
        self._started = time.monotonic()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.bar.setValue(0)
        self.status.setText(f"0 of {counted(spec.size, 'variant')}")
        self.redraw()
        self._runner.start(spec, self._cancel, self.document.machine)

    def _in_form_words(self, error: ValueError) -> str:
        """A sweep's error as the form says it: "Program (replay): ..." where the reader
        said "the sweep: answer 3: replay: ...", the file's numbering (the form's axes
        are the file's, in order: "axis 2: ...")."""
        part = getattr(error, "part", None)
        rows = self._answer_rows
        if part is None or part[0] != "answer" or not 1 <= part[1] <= len(rows):
            return str(error).removeprefix("the sweep: ")
        row, kind = rows[part[1] - 1]  # the row says the kind: "Program (replay)"
        return f"{row}: {error.why.removeprefix(kind + ': ')}"

    def run_under_way(self) -> str:
        """What runs and how far it is, in words (asked before closing)."""
        total = self.spec.size if self.spec is not None else 0
        return (f"A sweep is running: {len(self.rows):,} of {counted(total, 'variant')} done "
                "(the rows made so far stay in this window)")  # fmt: skip

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.status.setText("Cancelling…")

    def _took(self, row: Row) -> None:
        stopped = self._cancel is not None and self._cancel.is_set()
        if self.spec is None or self._dropped or stopped:
            return  # after Cancel: the rows kept are those shown when it was pressed
        self.rows.append(row)
        self._add_table_row(row)
        n, total = len(self.rows), self.spec.size
        self.bar.setValue(int(1000 * n / total))
        elapsed = time.monotonic() - self._started
        left = elapsed / n * (total - n)
        said = f"about {max(1, round(left))} s left" if n >= 2 and n < total else ""
        self.status.setText(f"{n:,} of {counted(total, 'variant')}" + (f", {said}" if said else ""))
        if not self._redraw.isActive():
            self._redraw.start()

    def _ended(self, error: BaseException | None) -> None:
        cancelled = self._cancel is not None and self._cancel.is_set()
        self._cancel = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self._dropped:  # a run of a model no longer open: nothing of it is shown
            self._dropped = False
            self.status.setText("The sweep of the model open before was cancelled")
            return
        self._redraw.stop()
        self.redraw()
        total = self.spec.size if self.spec else 0
        failed = sum(bool(r.error) for r in self.rows)
        if error is not None:
            self.status.setText(f"Stopped after {counted(len(self.rows), 'variant')}")
            self.message.setText(f"The sweep stopped: {error}")
        elif cancelled:
            self.status.setText(f"Cancelled: {len(self.rows):,} of {counted(total, 'variant')}")
        else:
            self.status.setText(f"Done: {counted(total, 'variant')}"
                                + (f", {failed:,} with an error" if failed else ""))  # fmt: skip

    def _add_table_row(self, row: Row) -> None:
        """The row as the CSV writes it, but for its numbers, the axes' values and the
        answers: six significant digits, as the windows show values (a column of
        0.202472527472527 was cut to "0.202472527...", one of a log axis's values to
        "1.930697728..."), the whole number in the cell's tooltip."""
        r = self.table.rowCount()
        self.table.insertRow(r)
        cells = row.cells()
        first = 1 + len(row.values)  # the answers' columns
        for c, text in enumerate(cells[:-2] + cells[-1:]):
            number = row.answers[c - first] if first <= c < first + len(row.answers) else None
            if 1 <= c < first:  # an axis's value: a number, or a word ("torus 8 8 8")
                try:
                    number = float(text)
                except ValueError:
                    number = None
            shown = text if number is None else value_text(number)
            item = QTableWidgetItem(shown)
            if shown != text:
                item.setToolTip(text)
            item.setData(Qt.ItemDataRole.UserRole, row.index)
            self.table.setItem(r, c, item)

    # ------------------------------------------------------------------ drawing

    def _answers(self) -> tuple[int, list[Row], np.ndarray]:
        """The answer chosen, the rows with a value of it a plot can draw, and those
        values; ``self.too_large``: how many were left out for being past +-1e300
        (:mod:`piui.widgets.plot_limits`: pyqtgraph's padding overflows near 1e308)."""
        k = max(self.answer.currentIndex(), 0)
        answered = [r for r in self.rows if r.answers and r.answers[k] is not None]
        self.too_large = sum(too_large(float(r.answers[k])) for r in answered)
        done = [r for r in answered if drawable(float(r.answers[k]))]
        return k, done, np.array([float(r.answers[k]) for r in done])

    def redraw(self) -> None:
        """The results so far, for the answer chosen."""
        self.redraws += 1
        spec = self.spec
        if spec is None or not self.rows:
            self.empty.setText(EMPTY_BEFORE)
            self.plots.setCurrentWidget(self.empty)
            self._draw_effects([])
            return
        k, done, ys = self._answers()
        name = spec.answers[k].name
        n_axes = len(spec.axes)
        if n_axes == 1:
            self._draw_line(spec, done, ys, name)
        elif n_axes == 2:
            self._draw_heat(spec, k, name)
        elif n_axes > 2:
            self._draw_parallel(spec, done, ys, name)
        else:  # no axis: the model as it is, one variant
            self.empty.setText(EMPTY_NO_AXIS)
            self.plots.setCurrentWidget(self.empty)
        self._draw_effects(analysis.effects(spec, self.rows, k) if n_axes else [])

    def _numeric(self, axis: Any) -> np.ndarray | None:
        try:
            return np.array([float(v) for v in axis.values])
        except (TypeError, ValueError):
            return None

    def _draw_line(self, spec: SweepSpec, done: list[Row], ys: np.ndarray, name: str) -> None:
        axis = spec.axes[0]
        where = analysis.positions(spec)
        values = self._numeric(axis)
        pos = [where[r.index][0] for r in done]
        order = np.argsort(pos, kind="stable")
        xs = (values[pos] if values is not None else np.array(pos, float))[order]
        log_x = values is not None and _logarithmic(values)
        log_y = _hundredfold(ys)
        self.line_plot.setLogMode(x=bool(log_x), y=bool(log_y))
        self.line.setData(xs, ys[order], data=np.array([r.index for r in done])[order])
        self.line_plot.setLabel("bottom", axis.name)
        self.line_plot.setLabel("left", name)
        self.line_plot.setTitle(too_large_note(self.too_large) or None)
        bottom = self.line_plot.getAxis("bottom")
        bottom.setTicks(None if values is not None else
                        [[(i, axis.text(i)) for i in range(len(axis.values))]])  # fmt: skip
        plot = self.line_plot.getPlotItem()
        plot.enableAutoRange()
        if values is None:  # named values: room for the first and last names
            plot.setXRange(-0.5, len(axis.values) - 0.5, padding=0)
        if ys.size and ys.min() == ys.max() and not log_y:  # a flat answer, seen as flat
            y = float(ys[0])
            plot.setYRange(y - abs(y) * 0.05 - 1e-300, y + abs(y) * 0.05 + 1e-300, padding=0)
        self.plots.setCurrentWidget(self.line_plot)

    def _draw_heat(self, spec: SweepSpec, k: int, name: str) -> None:
        grid = analysis.table(spec, self.rows, k, 0, 1)  # rows: axis 1, columns: axis 0
        huge = np.abs(grid) > DRAWABLE  # NaN compares False
        grid = np.where(huge, np.nan, grid)  # past what a plot draws: as a missing value
        self.heat_grid = grid
        finite = grid[np.isfinite(grid)]
        log = _hundredfold(finite)
        shown = np.log10(grid) if log else grid
        low = float(np.nanmin(shown)) if finite.size else 0.0
        high = float(np.nanmax(shown)) if finite.size else 1.0
        self.heat.setImage(np.where(np.isnan(shown), low, shown).T,  # ImageItem: x first
                           levels=(low, high if high > low else low + 1))  # fmt: skip
        self.heat_bar.setLevels((low, high if high > low else low + 1))
        self.heat_bar.axis.setLabel(f"log10 {name}" if log else name)
        x, y = spec.axes
        self.heat_plot.getAxis("bottom").setTicks(
            [[(i + 0.5, _short(x.values[i])) for i in range(len(x.values))]])  # fmt: skip
        self.heat_plot.getAxis("left").setTicks(
            [[(j + 0.5, _short(y.values[j])) for j in range(len(y.values))]])  # fmt: skip
        self.heat_plot.setLabel("bottom", x.name)
        self.heat_plot.setLabel("left", y.name)
        note = too_large_note(int(huge.sum()))
        self.heat_plot.setTitle(name + (" (colour: log scale)" if log else "")
                                + (f" ({note})" if note else ""))  # fmt: skip
        self.plots.setCurrentWidget(self.heat_plot)

    def _draw_parallel(self, spec: SweepSpec, done: list[Row], ys: np.ndarray,
                       name: str) -> None:  # fmt: skip
        plot = self.parallel_plot
        for item in self.parallel_lines:
            plot.removeItem(item)
        self.parallel_lines = []
        where = analysis.positions(spec)
        n = len(spec.axes)
        log = _hundredfold(ys)
        scaled = np.log10(ys) if log else ys
        lo, hi = (float(scaled.min()), float(scaled.max())) if ys.size else (0.0, 1.0)
        cmap = pg.colormap.get("viridis")
        for r, y in zip(done, scaled, strict=True):
            p = where[r.index]
            pts = [p[i] / max(len(a.values) - 1, 1) for i, a in enumerate(spec.axes)]
            t = (y - lo) / (hi - lo) if hi > lo else 0.5
            item = pg.PlotDataItem(list(range(n + 1)), [*pts, t],
                                   pen=pg.mkPen(cmap.map(t, mode="qcolor"), width=1))  # fmt: skip
            item.setCurveClickable(True, width=6)  # a click on a line opens its variant
            item.sigClicked.connect(lambda _item, _ev=None, i=r.index: self.open_variant(i))
            plot.addItem(item)
            self.parallel_lines.append(item)
        plot.setXRange(-0.4, n + 0.4, padding=0)
        show_categories(plot, "bottom", [a.name for a in spec.axes] + [name], padding=0)
        plot.getAxis("left").setTicks([[(0, "lowest"), (1, "highest")]])
        low, high = (10**lo, 10**hi) if log else (lo, hi)
        note = too_large_note(self.too_large)
        plot.setTitle(f"{name}: {low:.4g} (dark) to {high:.4g} (light)"
                      + (", log scale" if log else "") + (f"; {note}" if note else ""))  # fmt: skip
        self.plots.setCurrentWidget(plot)

    def _draw_effects(self, effects: list[tuple[str, float]]) -> None:
        plot = self.effects_plot
        effects = [(n, e) for n, e in effects if drawable(e)]  # an effect past 1e300: none
        if self.effect_bars is not None:
            plot.removeItem(self.effect_bars)
            self.effect_bars = None
        self.effects = effects
        if not effects:  # nothing to name: no bar, and no name of the last sweep's axes
            show_categories(plot, "bottom", [])
            plot.setXRange(-0.5, 0.5, padding=0)
            plot.setYRange(0, 1, padding=0)
            return
        heights = [e for _, e in effects]
        self.effect_bars = pg.BarGraphItem(x=list(range(len(effects))), height=heights,
                                           width=0.6, brush="#c06030")  # fmt: skip
        plot.addItem(self.effect_bars)
        show_categories(plot, "bottom", [n for n, _ in effects])
        plot.setXRange(-0.5, len(effects) - 0.5, padding=0.05)
        plot.setYRange(0, max(heights) * 1.1 if max(heights) > 0 else 1)
        self._room_for_effects()

    def _room_for_effects(self) -> None:
        """What dominates the width its names need, taken from the chart beside it
        while that keeps the width its own names need: with three axes at 1,100 px it
        scrolled to show its third bar where the other chart had room to spare."""
        left, right = self.charts.sizes()
        need = self.effects_plot.minimumWidth() - right
        spare = left - max(self.plots.currentWidget().minimumWidth(), EFFECTS_LEFT_LEAST)
        grow = min(need, spare)
        if grow > 0:
            self.charts.setSizes([left - grow, right + grow])

    # ------------------------------------------------------------------ opening a variant

    def open_variant(self, index: int) -> None:
        """Variant ``index`` of the last sweep, as a new unsaved model."""
        from parasol_core.sweep.variants import variants
        from parasol_core.sweep.worker import Worker

        if self.spec is None:
            return
        found = next((v for v in variants(self.spec) if v.index == index), None)
        if found is None:
            return
        try:
            text = Worker(self.spec).variant_text(found)
        except Exception as e:  # an edit the variant could not make: say so
            self.message.setText(f"Variant {index} cannot be opened: {e}")
            return
        said = ", ".join(f"{a.name} = {a.text(p)}" for a, p in zip(self.spec.axes,
                                                                  found.positions, strict=True))  # fmt: skip
        self._opening = True
        try:
            self.opened.emit(text, said)
        finally:
            self._opening = False

    def _open_row(self, r: int) -> None:
        item = self.table.item(r, 0)
        if item is not None:
            self.open_variant(int(item.data(Qt.ItemDataRole.UserRole)))

    def _point_clicked(self, item: Any, points: Any, *_: Any) -> None:
        if len(points):
            self.open_variant(int(points[0].data()))

    def _heat_clicked(self, event: Any) -> None:
        if self.spec is None or len(self.spec.axes) != 2:
            return
        p = self.heat.mapFromScene(event.scenePos())
        i, j = int(math.floor(p.x())), int(math.floor(p.y()))
        where = analysis.positions(self.spec)
        for r in self.rows:
            if where[r.index] == (i, j):
                self.open_variant(r.index)
                return
