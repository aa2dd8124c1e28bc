"""Program: how long a traced MPI program takes on the model on screen (issue 31, SAD
level 3). Open a trace (File > Open program trace…); the window shows the predicted
time, each rank's finish and its time in computation, communication and waiting, and a
timeline of the ranks. The prediction follows every edit of the model — a scaler, a
timing, a link speed dragged — off the GUI thread, each edit stopping the replay of
the one before part-way (``LivePrediction`` sets its event; ``replay(..., cancel=)``
raises ``Cancelled`` at its next poll), the last answer kept on screen until the next
is ready, and reads *before → after*: the prediction of the model as it was
when the trace was opened (or when *Keep as before* was pressed) and as it is now. The
*What dominates* tab says how much the predicted time changes when each instruction
group, the link speed and the latency are made 10 % faster.

Where the ranks run is chosen as ``parasol-model replay`` takes it: in order on the
compute processors, by a virtual topology's mapping (``--virtual``), or by a hostfile
(``--hostfile``); an OTF2 trace's measured durations are scaled to the model by the
model of the machine it was traced on (``--traced-on``). Each choice reruns the
prediction (with its own *before*). The placement is about the model's processors and
goes when another model opens; the traced-on model is about the trace and goes with it.

The replay is the core's (``parasol_core.replay``): this window copies the model on the
GUI thread, hands the copy and the trace to the worker, and draws what comes back. It
keeps the trace it was given and the answers about the model on screen; another model
opened is predicted afresh.
"""

from __future__ import annotations

import copy
import logging
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from parasol_core.frontend import program as core
from parasol_core.session import EDIT, OPEN, REDO, UNDO, Change
from piui.document import Document
from piui.widgets.deferred import on_screen
from piui.widgets.labels import value_text
from piui.widgets.live_prediction import LivePrediction
from piui.widgets.number_controls import ValueField
from piui.widgets.placement import (
    ask_hostfile,
    fill_placements,
    placement_controls,
    placement_of,
)
from piui.widgets.status_messages import (
    forget_on_change,
    heading_label,
    message_label,
    show_refusal,
)
from piui.widgets.timeline_plot import TimelinePlot
from piui.widgets.turning_splitter import TurningSplitter

log = logging.getLogger("piui")

# Ranks listed in the breakdown table at most (the table is for reading; the timeline
# shows them all)
MAX_TABLE_RANKS = 4096


def seconds_text(x: float) -> str:
    return core.seconds_text(x)


class ProgramWindow(QWidget):
    """See the module docstring."""

    # a view that zooms: its dock shrinks it rather than scroll it (the timeline below
    # the fold was out of reach in a low dock)
    ZOOMS = True

    # a prediction shown: (before seconds or None, after seconds)
    predictionShown = Signal(object, float)
    predictionFailed = Signal(str)  # no prediction: why (the message line says it too)
    dominanceShown = Signal()

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.program: core.Program | None = None  # the trace opened, read
        self.before: core.Prediction | None = None
        self.after: core.Prediction | None = None
        self.shown_generation = -1  # the model the answers on screen are about
        self._pending = False  # a prediction waits for the window to be on screen
        self.live = LivePrediction(self, "piui-program")
        self.live.answered.connect(self._answered)
        self.live.failed.connect(self._failed)
        self.live.busyChanged.connect(self._busy)
        self.dominance_job = LivePrediction(self, "piui-dominates")
        self.dominance_job.answered.connect(self._dominance_answered)
        self.dominance_job.failed.connect(self._dominance_failed)
        # asked from outside (the main window's File menu); tests answer it
        self.ask_trace_path = self._ask_trace_path
        self.ask_hostfile_path = lambda: ask_hostfile(self, self.document)
        self.ask_traced_on_path = self._ask_traced_on_path

        self.title = heading_label()
        self.title.setText("No program trace open")
        self.open_button = QPushButton("Open trace…")
        self.open_button.setToolTip("A SimGrid time-independent trace (its index file, or "
                                    "one rank's action file) or an OTF2 archive")  # fmt: skip
        self.keep_button = QPushButton("Keep as before")
        self.keep_button.setToolTip("Make the prediction on screen the one later edits are "
                                    "compared with")  # fmt: skip
        self.keep_button.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.keep_button)
        top.addWidget(self.open_button)

        self.prediction = QLabel("Open a trace (File > Open program trace…) to predict "
                                 "its run on this model.")  # fmt: skip
        big = QFont(self.prediction.font())
        big.setPointSizeF(big.pointSizeF() * 1.4)
        self.prediction.setFont(big)
        self.prediction.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prediction.setWordWrap(True)  # "none (the message below says why)" in a narrow dock
        self.state = QLabel()
        self.state.setStyleSheet("color: palette(dark);")
        self.message = message_label()
        self.flop = ValueField()
        self.flop.setToolTip("The seconds of one floating-point operation of a trace's "
                             "compute, an expression of the model in which T is the "
                             "rank's processor type; empty: the model's own (a double "
                             "addition and multiplication)")  # fmt: skip
        self.flop.setPlaceholderText("the model's")
        self.flop.editingFinished.connect(self._flop_edited)
        forget_on_change(document, self, None)  # a refused field's pink goes with its model
        flop_row = QHBoxLayout()
        flop_row.addWidget(QLabel("A flop takes"))
        flop_row.addWidget(self.flop, 1)
        flop_row.addWidget(QLabel("seconds"))
        self.flop_row = QWidget()
        self.flop_row.setLayout(flop_row)
        flop_row.setContentsMargins(0, 0, 0, 0)

        # where the ranks run (--virtual, --hostfile)
        self.placement, self.hostfile_button = placement_controls(self._placement_chosen,
                                                                  self.choose_hostfile)  # fmt: skip
        place_row = QHBoxLayout()
        place_row.setContentsMargins(0, 0, 0, 0)
        place_row.addWidget(QLabel("Ranks run"))
        place_row.addWidget(self.placement, 1)
        place_row.addWidget(self.hostfile_button)
        self.placement_row = QWidget()
        self.placement_row.setLayout(place_row)
        self.placement_row.setEnabled(False)
        self._placements: list[tuple[str, object]] = []  # the chooser's entries' meaning

        # the machine an OTF2 trace was taken on (--traced-on)
        self.traced_on = QLabel()
        self.traced_on.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.traced_on_button = QPushButton("Model…")
        self.traced_on_button.setToolTip("The model of the machine the trace was taken on "
                                         "(parasol-model measure's of that host): the "
                                         "measured computation is scaled by its speed "
                                         "against this model's")  # fmt: skip
        self.traced_on_button.clicked.connect(lambda: self.choose_traced_on())
        self.traced_on_clear = QPushButton("As measured")
        self.traced_on_clear.setToolTip("The trace's computation as measured, not scaled")
        self.traced_on_clear.clicked.connect(lambda: self.set_traced_on(None))
        traced_row = QHBoxLayout()
        traced_row.setContentsMargins(0, 0, 0, 0)
        traced_row.addWidget(QLabel("Traced on"))
        traced_row.addWidget(self.traced_on, 1)
        traced_row.addWidget(self.traced_on_button)
        traced_row.addWidget(self.traced_on_clear)
        self.traced_on_row = QWidget()
        self.traced_on_row.setLayout(traced_row)
        self.traced_on_row.setVisible(False)

        self.breakdown = _Breakdown()
        self.table = QTableView()
        self.table.setModel(self.breakdown)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        # sized to the contents once a trace, not at every answer (a drag's every answer
        # re-sized the columns: 160 ms for 64 ranks)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.timeline = TimelinePlot()
        self.dominates = _DominatesView()

        # side by side in a wide window, the timeline under the breakdown in a narrow one
        self.split = split = TurningSplitter()
        split.addWidget(self.table)
        split.addWidget(self.timeline)
        split.setStretchFactor(0, 2)  # the breakdown's five columns, the timeline the rest
        split.setStretchFactor(1, 3)
        split.setCollapsible(0, False)
        split.setCollapsible(1, False)
        self.table.setMinimumWidth(160)
        split.setSizes([420, 900])
        self._split_moved = False
        split.splitterMoved.connect(lambda *_: setattr(self, "_split_moved", True))
        self.tabs = QTabWidget()
        self.tabs.addTab(split, "Timeline")
        self.tabs.addTab(self.dominates, "What dominates")
        self.tabs.currentChanged.connect(lambda _i: self._dominance_if_shown())

        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        column.setSpacing(3)
        column.addLayout(top)
        column.addWidget(self.prediction)
        column.addWidget(self.state)
        column.addWidget(self.flop_row)
        column.addWidget(self.placement_row)
        column.addWidget(self.traced_on_row)
        column.addWidget(self.message)
        column.addWidget(self.tabs, 1)

        self.open_button.clicked.connect(lambda: self.open_dialog())
        self.keep_button.clicked.connect(self.keep_as_before)
        document.changed.connect(self._model_changed)

    # ---- the trace

    def _ask_trace_path(self) -> str:
        from piui.widgets.file_dialogs import ask_path, start_folder

        return ask_path(self, "Open program trace", str(start_folder(self.document)), False,
                        core.TRACE_FILTER)  # fmt: skip

    def open_dialog(self) -> bool:
        path = self.ask_trace_path()
        return bool(path) and self.open_trace(path)

    def open_trace(self, path: str | Path) -> bool:
        """Read a trace and predict it on the model on screen; a trace that cannot be
        read is said so, and the one open stays."""
        from PySide6.QtWidgets import QMainWindow

        from parasol_core.base.budget import BudgetError
        from piui.widgets.busy import busy

        top = self.window()
        try:
            if isinstance(top, QMainWindow):
                with busy(top, f"Reading {Path(path).name}…"):
                    program = core.read_program(path)
            else:
                program = core.read_program(path)
        except (core.TraceError, BudgetError, OSError) as e:
            show_refusal(self.message, f"Cannot open the trace: {e}")
            log.error("cannot open the trace %s: %s", path, e)
            return False
        self.program = program
        self.title.setText(f"Program: {program.title}")
        self.message.clear()
        self._forget_answers()
        self._show_flop()
        self._show_placement()
        self._show_traced_on()
        self.predict()
        return True

    def _show_flop(self) -> None:
        if self.program is not None:
            self.flop.setText(self.program.options_for(self.document.machine).flop)
            # an OTF2 trace's computations are measured seconds, not flops
            self.flop_row.setVisible(not self.program.timed)

    def _flop_edited(self) -> None:
        if self.program is None:
            return
        text = self.flop.text().strip()
        chosen = (
            None if not text or text == self.program.model_flop(self.document.machine) else text
        )
        if chosen != self.program.flop:
            self.program.flop = chosen
            self._question_changed()

    # ---- where the ranks run, the machine traced on

    def _ask_traced_on_path(self) -> str:
        from piui.widgets.file_dialogs import ask_path, start_folder

        return ask_path(self, "Model of the machine traced on", str(start_folder(self.document)),
                        False, "PARASOL models (*.machine);;All files (*)")  # fmt: skip

    def _show_placement(self) -> None:
        """The placement chooser as the program and the model on screen are: in order,
        each virtual topology of the model, the hostfile chosen (if any)."""
        program = self.program
        entries, chosen = core.placement_entries(
            self.document.machine,
            program.virtual if program is not None else None,
            program.hostfile if program is not None else None,
        )
        self._placements = fill_placements(self.placement, entries, chosen)
        self.placement_row.setEnabled(program is not None)

    def _placement_chosen(self, index: int) -> None:
        self.set_placement(*placement_of(self._placements[index]))

    def set_placement(self, virtual: int | None, hostfile: str | Path | None = None) -> None:
        """Place the ranks by virtual topology ``virtual``, or by ``hostfile``, or (both
        None) in order; the prediction reruns when that is another placement."""
        program = self.program
        if program is None:
            return
        hostfile = Path(hostfile) if hostfile is not None else None
        if (virtual, hostfile) == (program.virtual, program.hostfile):
            return
        program.virtual, program.hostfile = virtual, hostfile
        self._show_placement()
        self._question_changed()

    def choose_hostfile(self) -> bool:
        path = self.ask_hostfile_path()
        if not path or self.program is None:
            return False
        self.set_placement(None, path)
        return True

    def _show_traced_on(self) -> None:
        program = self.program
        self.traced_on_row.setVisible(program is not None and program.timed)
        path = program.traced_on_path if program is not None else None
        self.traced_on.setText(str(path) if path is not None
                               else "the computation as measured")  # fmt: skip
        self.traced_on_clear.setEnabled(path is not None)

    def choose_traced_on(self) -> bool:
        path = self.ask_traced_on_path()
        return bool(path) and self.set_traced_on(path)

    def set_traced_on(self, path: str | Path | None) -> bool:
        """Scale the trace's measured computation by the model at ``path`` of the machine
        it was traced on (None: as measured); a model that cannot be read is said, and
        the one chosen before stays."""
        program = self.program
        if program is None:
            return False
        machine = None
        if path is not None:
            try:
                machine = core.read_traced_on(path)
            except ValueError as e:
                show_refusal(self.message, f"Cannot use the model traced on: {e}")
                return False
        program.traced_on = machine
        program.traced_on_path = Path(path) if path is not None else None
        self.message.clear()
        self._show_traced_on()
        self._question_changed()
        return True

    def _question_changed(self) -> None:
        """Another question about the same model: its own before, what dominates anew."""
        self.before = None
        self.dominates.stale()
        self.predict()

    # ---- predicting

    def _model_changed(self, change: Change) -> None:
        if self.program is None:
            return
        if change.reason == OPEN:
            self._forget_answers()  # another model: predicted afresh
            self.program.another_model()  # its processors: the placement goes
            self._show_flop()
            self._show_placement()
            self.predict()
        elif change.reason in (EDIT, UNDO, REDO) and (change.fields or change.structure):
            if change.structure:
                self._show_placement()  # a virtual topology added or removed
            self.dominates.stale()
            self.predict()

    def predict(self) -> None:
        """Predict the trace on the model as it is now, off the GUI thread; while the
        window is out of sight (closed, behind another dock's tab) the prediction waits
        until it is shown again: a drag elsewhere costs no replays nobody sees."""
        if self.program is None:
            return
        if not on_screen(self):
            self._pending = True
            self.live.cancel()
            self.dominance_job.cancel()
            return
        self._pending = False
        machine = copy.deepcopy(self.document.machine)  # the GUI thread's model, copied
        program = self.program
        generation = self.document.generation

        def job(cancel: threading.Event) -> tuple[int, core.Prediction]:
            return generation, core.predict(machine, program, cancel)

        self.live.request(job)
        # what dominates waits for the prediction (it is 21 replays: the prediction the
        # user is dragging comes first); one under way is about a model gone
        self.dominance_job.cancel()

    def showEvent(self, event) -> None:  # noqa: ANN001
        super().showEvent(event)
        if self._pending:
            QTimer.singleShot(0, self.dock_shown)

    def dock_shown(self) -> None:
        """Its dock brought forward (the main window calls it): what waited is done."""
        if self._pending and on_screen(self):
            self.predict()

    def keep_as_before(self) -> None:
        if self.after is not None:
            self.before = self.after
            self._show()

    def _answered(self, answer: tuple[int, core.Prediction], _serial: int) -> None:
        generation, prediction = answer
        if generation != self.document.generation:
            return  # about a model no longer open (another is being predicted)
        first = self.after is None or self.shown_generation != generation
        self.after = prediction
        if self.before is None:
            self.before = prediction
        self.shown_generation = generation
        self.message.clear()
        self.flop.accept_input()  # the flop it shows gives a time
        self._show(keep_view=not first)
        if not self.live.busy:
            self._dominance_if_shown()  # the prediction is in: what dominates, if on show

    def _failed(self, error: BaseException, _serial: int) -> None:
        """No prediction for the trace and model on screen (a flop expression refused, a
        trace whose receives no send matches): the number, breakdown and timeline of the
        question before are not about them and go (the *before* stays, to compare the
        next answer with); the message says why."""
        self.after = None
        self._clear_answer(FAILED)
        self._dominance_failed(error)
        if isinstance(error, core.FlopError):  # the flop expression shown is what failed
            self.flop.mark_refused(str(error))
        self.predictionFailed.emit(str(error))

    def _dominance_failed(self, error: BaseException, _serial: int = 0) -> None:
        show_refusal(self.message, f"No prediction: {error}")
        log.error("program prediction: %s", error)

    def _busy(self, busy: bool) -> None:
        self.state.setText("predicting…" if busy else "")

    # ---- showing

    def _forget_answers(self) -> None:
        """Another trace or another model: nothing on screen is about it yet. The last
        answer stays on show while the same trace on the same model is predicted again
        (a slider dragged), never under another trace's title or for another model."""
        self.before = self.after = None
        self._clear_answer(PENDING)

    def _clear_answer(self, said: str) -> None:
        """No answer on show: ``said`` where the predicted time was, the breakdown, the
        timeline and the bars of what dominates empty."""
        self.shown_generation = -1
        self.keep_button.setEnabled(False)
        self.prediction.setText(said)
        self.breakdown.show(None)
        self.timeline.set_timeline(None)
        self.dominates.clear()

    def _show(self, keep_view: bool = True) -> None:
        after, before = self.after, self.before
        if after is None:
            return
        self.keep_button.setEnabled(True)
        self.prediction.setText(core.before_after_text(
            None if before is None else before.makespan, after.makespan))  # fmt: skip
        self._fill_table(after)
        self._fit_split()
        self.timeline.set_timeline(after.timeline, after.describe, keep_view=keep_view)
        self.predictionShown.emit(None if before is None else before.makespan, after.makespan)

    def _fit_split(self) -> None:
        """The breakdown as wide as its columns (at most 40 % of the window), the
        timeline the rest; until the user moves the splitter."""
        total = sum(self.split.sizes())
        side_by_side = self.split.orientation() == Qt.Orientation.Horizontal
        if self._split_moved or total <= 0 or not self.breakdown.ranks or not side_by_side:
            return
        wanted = (self.table.horizontalHeader().length() + 2 * self.table.frameWidth()
                  + self.table.verticalScrollBar().sizeHint().width())  # fmt: skip
        table = min(wanted, int(total * 0.4))
        if abs(self.split.sizes()[0] - table) > 2:
            self.split.setSizes([table, total - table])

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        super().resizeEvent(event)
        self._fit_split()

    def _fill_table(self, prediction: core.Prediction) -> None:
        if self.breakdown.show(prediction):
            self.table.resizeColumnsToContents()

    # ---- what dominates

    def _dominance_if_shown(self) -> None:
        if self.tabs.currentWidget() is self.dominates and self.dominates.is_stale():
            self._dominance()

    def _dominance(self) -> None:
        if self.program is None:
            return
        machine = copy.deepcopy(self.document.machine)
        program = self.program
        generation = self.document.generation
        self.dominates.working()

        def job(cancel: threading.Event) -> tuple[int, object]:
            return generation, core.dominance(machine, program, cancel)

        self.dominance_job.request(job)

    def _dominance_answered(self, answer: tuple[int, object], _serial: int) -> None:
        generation, found = answer
        if generation == self.document.generation:
            self.dominates.show_dominance(found)
            self.dominanceShown.emit()

    def closeEvent(self, event) -> None:  # noqa: ANN001
        self.live.shutdown()
        self.dominance_job.shutdown()
        super().closeEvent(event)


class _Breakdown(QAbstractTableModel):
    """Each rank's finish and its seconds in computation, communication and waiting
    (the first :data:`MAX_TABLE_RANKS` ranks), read from the prediction on screen."""

    # short, so that the six fit the breakdown's share of the window (waiting, which
    # says how unbalanced the program is, was scrolled out of sight); each in full in
    # its tooltip
    HEADERS = ("Rank", "Proc.", "Finish (s)", "Compute (s)", "Comm. (s)", "Wait (s)")
    MEANINGS = (
        "The rank (its number in the trace)",
        "The processor it runs on (and its name on the platform, if it has one)",
        "When its last operation ends, seconds",
        "Seconds computing: its computes and the reductions' flops",
        "Seconds communicating: a message it waited for was moving (docs/replay.md, Results)",
        "Seconds waiting: for another rank to compute or to post, no message moving",
    )

    def __init__(self) -> None:
        super().__init__()
        self.columns: tuple[np.ndarray, ...] = ()
        self.ranks = 0
        self.prediction: core.Prediction | None = None

    def show(self, prediction: core.Prediction | None) -> bool:
        """Show ``prediction`` (None: nothing); True when the ranks are others."""
        ranks = 0 if prediction is None else min(len(prediction.finish), MAX_TABLE_RANKS)
        columns = () if prediction is None else (
            prediction.finish, prediction.computation, prediction.communication,
            prediction.waiting)  # fmt: skip
        if ranks != self.ranks:
            self.beginResetModel()
            self.ranks, self.columns, self.prediction = ranks, columns, prediction
            self.endResetModel()
            return True
        self.columns, self.prediction = columns, prediction
        if ranks:
            self.dataChanged.emit(self.index(0, 1), self.index(ranks - 1, 5))
        return False

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.ranks

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:  # fmt: skip
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return self.MEANINGS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        shown = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
        if role not in shown or not index.isValid():
            return None
        r, c = index.row(), index.column()
        if c == 0:
            return str(r)
        if c == 1:  # its processor, with the platform's name of it
            return self.prediction.processor_text(r) if self.prediction is not None else ""
        x = float(self.columns[c - 2][r])
        # as the windows show values (six digits), the whole number in its tooltip
        return value_text(x) if role == Qt.ItemDataRole.DisplayRole else repr(x)


PENDING = "Predicted time: …"  # a trace or model whose prediction has not come yet
FAILED = "Predicted time: none (the message below says why)"  # its replay failed


class _DominatesView(QWidget):
    """A bar a knob: how much shorter the predicted run gets when it is made 10 % faster."""

    def __init__(self) -> None:
        super().__init__()
        self.note = QLabel("Made 10 % faster, one at a time: each instruction group, the "
                           "links' speed, their latency.")  # fmt: skip
        self.note.setWordWrap(True)
        self.state = QLabel()
        self.state.setStyleSheet("color: palette(dark);")
        self._stale = True
        self.rows: list[tuple[str, float]] = []
        import pyqtgraph as pg

        from piui.widgets.plot_axes import readable_axes
        from piui.widgets.scrolling import in_scroll_area

        self.plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "predicted time saved (%)")
        item.hideButtons()
        item.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.7, brush="#4e79a7")
        item.addItem(self.bars)
        self.view = item.getViewBox()
        self.view.invertY(True)
        # each bar's figure at its end: read without the scale, which a short dock
        # scrolls below the fold
        self.figures: list = []
        # a bar per knob, each named: in a short dock the chart scrolls, no name dropped
        self.scroll = in_scroll_area(self.plot)
        column = QVBoxLayout(self)
        column.addWidget(self.note)
        column.addWidget(self.state)
        column.addWidget(self.scroll, 1)

    def is_stale(self) -> bool:
        return self._stale

    def _set_figures(self, rows: list[tuple[str, float]]) -> None:
        import pyqtgraph as pg

        for text in self.figures:
            self.view.removeItem(text)
        self.figures = []
        for y, (_name, percent) in enumerate(rows):
            text = pg.TextItem(core.saved_text(percent), color="#333", anchor=(0, 0.5))
            text.setPos(max(percent, 0.0), y)
            self.view.addItem(text)
            self.figures.append(text)

    def clear(self) -> None:
        self._stale = True
        self.rows = []
        self.bars.setOpts(x0=[], y=[], width=[])
        self._set_figures([])
        from piui.widgets.plot_axes import show_categories

        show_categories(self.plot, "left", [])
        self.state.setText("")

    def stale(self) -> None:
        self._stale = True
        if self.rows:
            self.state.setText("the model changed: working out again…")

    def working(self) -> None:
        self.state.setText("working out…")

    def show_dominance(self, found: object) -> None:
        self._stale = False
        rows = core.dominance_rows(found)
        self.rows = rows
        saved = np.array([percent for _name, percent in rows], float)
        self.bars.setOpts(x0=np.zeros(len(rows)), y=np.arange(len(rows)), width=saved,
                          height=0.7)  # fmt: skip
        from piui.widgets.plot_axes import show_categories

        show_categories(self.plot, "left", [name for name, _p in rows])
        self._set_figures(rows)
        if len(rows):
            top = max(saved.max(), 1e-9)  # and room for the longest bar's figure after it
            self.view.setRange(xRange=(min(0.0, saved.min()), top * 1.15),
                               yRange=(-0.5, len(rows) - 0.5), padding=0.05)  # fmt: skip
        self.state.setText(core.dominance_summary(found))
