"""File > Measure this machine…: a model of the computer PIUI runs on, measured with the
generated C benchmarks of :mod:`parasol_core.measure` (docs/measure.md).

The measurement runs on a worker thread; the dialog shows what is being measured, the
time left, the instruction-cache curve and the memory curve (the time of an array
reference against the bytes touched, with the cache levels marked) as they grow, and
Cancel (or closing the dialog) stops it at once with nothing written. The result opens
as a new, unsaved model. **Validate** then runs the report's two experiments (4.5) and
the suite's programs the measurement never saw, and plots each problem size's predicted
time against the measured one, as table 4.2 prints them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.words import counted
from piui.widgets.shortcuts import CLOSE, RUN, CancelsItsRunFirst, key_for, with_key
from piui.widgets.status_messages import message_label


class _Runner(QObject):
    """Runs one job on a thread of its own; its progress and its end come back to the
    GUI thread as signals (queued: the receiver lives there)."""

    progressed = Signal(object)  # Progress
    ended = Signal(object, object)  # result, exception

    def start(self, job: Callable[[Callable[[Any], None], threading.Event], Any],
              cancel: threading.Event) -> None:  # fmt: skip
        def run() -> None:
            try:
                result, error = job(self.progressed.emit, cancel), None
            except BaseException as e:  # delivered to the GUI thread, never lost
                result, error = None, e
            self.ended.emit(result, error)

        threading.Thread(target=run, name="piui-measure", daemon=True).start()


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "working out the time left"
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"about {seconds} s left"
    return f"about {seconds // 60} min {seconds % 60:02d} s left"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


class MeasureDialog(CancelsItsRunFirst, QDialog):
    """``opened(text)`` asks the main window to open a measured model.

    ``document``: the model on screen, which Validate predicts with (the measured model
    just opened, or whatever the user opened or edited since); without one, Validate
    takes the last measured model."""

    opened = Signal(str)

    def __init__(self, parent: QWidget | None = None, document: Any = None) -> None:
        super().__init__(parent)
        self.document = document
        self.setWindowTitle("Measure this machine")
        self.resize(720, 620)
        self.result: Any = None  # the HostModel of the last measurement
        self.rows: list = []  # the ValidationRows of the last validation
        self._cancel: threading.Event | None = None
        self._runner = _Runner(self)
        self._runner.progressed.connect(self._progressed)
        self._runner.ended.connect(self._ended)
        self._then: Callable[[Any, BaseException | None], None] | None = None
        self._doing = ""  # what runs, in words (run_under_way)
        self.validation_sizes: tuple[int, ...] | None = None  # None: the options' own
        self.validation_programs: tuple[str, ...] | None = None  # None: the held-out ones

        intro = QLabel(
            "Measures this computer's processor with benchmark programs generated in C and "
            "compiled with the C compiler at hand: about 130 instruction timings, each with "
            "its deviation, the instruction cache and the memory levels. Each operation is "
            "timed in a dependent chain (latency) and in independent ones (throughput); the "
            "value written is the throughput scaled, per class of operation, to predict a "
            "suite of small programs (docs/measure.md). The result opens as a new model."
        )
        intro.setWordWrap(True)
        self.quick = QCheckBox("Quick: fewer and shorter runs, wider deviations")
        self.estimate = QLabel()
        self.start_button = QPushButton("&Measure")
        self.validate_button = QPushButton("&Validate")
        self.validate_button.setToolTip(
            "Run the report's two experiments (the Collatz loop and the prime search) and "
            "compare their times with the model's prediction (table 4.2)"
        )
        self.validate_button.setEnabled(False)
        self.cancel_button = QPushButton("&Cancel")
        self.cancel_button.setEnabled(False)
        close = self.close_button = QPushButton("C&lose")
        key_for(self.start_button, self, RUN, "Measure this computer: the result opens as a "
                "new model")  # fmt: skip
        self.cancel_button.setToolTip(with_key("Stop what runs now; nothing is written",
                                               "Esc"))  # fmt: skip
        key_for(close, self, CLOSE, "Close this window (asks first while a run is under way)")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.status = QLabel("Not started.")
        self.status.setWordWrap(True)
        self.message = message_label()
        self.report = QPlainTextEdit()
        self.report.setReadOnly(True)
        self.report.setMaximumHeight(130)
        self.report.setPlaceholderText("What was left out and why, and the validation table.")

        import pyqtgraph as pg  # when first opened: it costs start-up time

        from piui.widgets.plot_axes import readable_axes

        self.cache_plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        self.cache_plot.setLogMode(x=True, y=False)
        self.cache_plot.setLabel("bottom", "loop body (operations)")
        self.cache_plot.setLabel("left", "ns per operation")
        self.cache_plot.setTitle("instruction cache: the growing unrolled loop (report 4.1)")
        self.cache_curve = self.cache_plot.plot([], [], pen=pg.mkPen("#1f77b4", width=2),
                                                symbol="o", symbolSize=5)  # fmt: skip
        self.memory_plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        self.memory_plot.setLogMode(x=True, y=True)
        self.memory_plot.setLabel("bottom", "bytes touched (working set)")
        self.memory_plot.setLabel("left", "ns per array reference")
        self.memory_plot.setTitle("memory levels: a pointer chased through a growing array")
        self.memory_curve = self.memory_plot.plot([], [], pen=pg.mkPen("#2ca02c", width=2),
                                                  symbol="o", symbolSize=5)  # fmt: skip
        self.level_lines: list = []  # one dashed line per cache level's size
        self.valid_plot = pg.PlotWidget(background="w", axisItems=readable_axes())
        self.valid_plot.setLogMode(x=True, y=True)
        self.valid_plot.setLabel("bottom", "measured (s)")
        self.valid_plot.setLabel("left", "predicted (s)")
        self.valid_plot.setTitle("validation: predicted against measured (tables 4.2, 4.3 and "
                                 "the programs the measurement never saw)")  # fmt: skip
        # top left: the points run from bottom left to top right
        self.valid_plot.addLegend(offset=(10, 10))
        self.plots = QTabWidget()
        self.plots.addTab(self.cache_plot, "Instruction cache")
        self.plots.addTab(self.memory_plot, "Memory levels")
        self.plots.addTab(self.valid_plot, "Validation")

        buttons = QHBoxLayout()
        buttons.addWidget(self.quick)
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.validate_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.estimate)
        layout.addLayout(buttons)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addWidget(self.message)
        layout.addWidget(self.plots, 1)
        layout.addWidget(self.report)

        self.quick.toggled.connect(lambda _on: self._show_estimate())
        self.start_button.clicked.connect(lambda: self.measure())
        self.validate_button.clicked.connect(lambda: self.validate())
        self.cancel_button.clicked.connect(lambda: self.cancel())
        close.clicked.connect(self.close)
        self._show_estimate()
        self._show_validate()

    # ---- state

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def options(self) -> Any:
        from parasol_core.measure import MeasureOptions

        return MeasureOptions(quick=self.quick.isChecked())

    def _show_estimate(self) -> None:
        from parasol_core.measure import estimate_seconds

        try:
            seconds = estimate_seconds(self.options())
        except Exception as e:
            self.estimate.setText(f"Cannot measure here: {e}")
            self.start_button.setEnabled(False)
            return
        pace = self._pace()
        if pace is None:
            self.estimate.setText(
                f"This takes {_duration(seconds).removesuffix(' left')} on an idle machine, "
                "longer on a busy one: the time left is measured as it runs. PIUI stays "
                "usable meanwhile.")  # fmt: skip
        else:
            self.estimate.setText(
                f"This takes {_duration(seconds * pace).removesuffix(' left')} here, at the "
                "pace of the last run; the time left is measured as it runs. PIUI stays "
                "usable meanwhile.")  # fmt: skip

    def _pace_key(self) -> str:
        return f"measure/pace/{'quick' if self.options().quick else 'full'}"

    def _pace(self) -> float | None:
        """Seconds the last measurement here took per estimated second (None: none yet)."""
        from piui.app_settings import settings

        try:
            pace = float(settings().value(self._pace_key(), "") or "nan")
        except (TypeError, ValueError):
            return None
        return pace if 0.05 <= pace <= 50 else None

    def _busy(self, busy: bool) -> None:
        self.start_button.setEnabled(not busy)
        self.quick.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self._show_validate()

    def _model_on_screen(self) -> tuple[str, str] | None:
        """(its name, its text): what Validate predicts with."""
        if self.document is not None:
            return self.document.title(), self.document.session.text()
        if self.result is not None:
            return self.result.cpu, self.result.text
        return None

    def _show_validate(self) -> None:
        """Validate acts on the model on screen: the button says which, or why not."""
        model = None if self.running else self._model_on_screen()
        self.validate_button.setEnabled(model is not None)
        if self.running:
            why = "Wait for the run under way to end (or cancel it)."
        elif model is None:
            why = "Measure first, or open a model: Validate predicts with the model on screen."
        else:
            why = (f"Predict the report's two experiments (the Collatz loop and the prime "
                   f"search) with the model on screen, {model[0]}, run them on this machine "
                   "and compare (table 4.2)")  # fmt: skip
        self.validate_button.setToolTip(why)

    def _run(self, job: Callable, then: Callable[[Any, BaseException | None], None],
             what: str) -> None:  # fmt: skip
        self._doing = what
        self._cancel = threading.Event()
        self._then = then
        self.message.clear()
        self.bar.setValue(0)
        self._busy(True)
        self._runner.start(job, self._cancel)

    def run_under_way(self) -> str:
        """What runs and how far it is, in words (asked before closing)."""
        return (
            f"{self._doing} is under way ({self.status.text()}); nothing is written until it ends"
        )

    def cancel(self) -> None:
        """Stop what runs now; nothing is written or opened."""
        if self._cancel is not None:
            self._cancel.set()
            self.status.setText("Cancelling…")

    # ---- measuring

    def measure(self) -> None:
        from parasol_core.measure import measure_host

        if self.running:
            return
        options = self.options()
        self.cache_curve.setData([], [])
        self.memory_curve.setData([], [])
        self._show_levels([])
        self.plots.setCurrentWidget(self.cache_plot)
        self._points: list[tuple[int, float]] = []
        self._memory_points: list[tuple[int, float]] = []
        self.report.clear()
        self._run(
            lambda progress, cancel: measure_host(options, progress, cancel),
            self._measured,
            "Measuring this machine",
        )

    def _progressed(self, p: Any) -> None:
        self.bar.setValue(int(round(1000 * min(max(p.fraction, 0.0), 1.0))))
        step = p.parameter  # compiling is a step of its own, said as such
        what = step[:1].upper() + step[1:] if step.startswith(("compiling", "starting")) \
            else f"Measuring {step}"  # fmt: skip
        self.status.setText(f"{what} — {_duration(p.seconds_left)}")
        if p.cache_point is not None:
            size, seconds = p.cache_point
            self._points.append((size, seconds * 1e9))
            self._show_cache_curve()
        point = getattr(p, "memory_point", None)
        if point is not None:
            if not self._memory_points:
                self.plots.setCurrentWidget(self.memory_plot)
            self._memory_points.append((point[0], point[1] * 1e9))
            self._show_memory_curve()

    def _show_cache_curve(self) -> None:
        """The curve from zero up: a flat curve (no knee) must look flat."""
        self._points.sort()
        ys = [y for _, y in self._points]
        self.cache_curve.setData([x for x, _ in self._points], ys)
        if ys:
            self.cache_plot.setYRange(0, max(ys) * 1.15, padding=0)

    def _show_memory_curve(self) -> None:
        self._memory_points.sort()
        self.memory_curve.setData([b for b, _ in self._memory_points],
                                  [t for _, t in self._memory_points])  # fmt: skip

    def _show_levels(self, levels: list) -> None:
        """A dashed vertical line at each cache level's size, named, with its time."""
        import pyqtgraph as pg

        for item in self.level_lines:
            self.memory_plot.removeItem(item)
        self.level_lines = []
        for lv in levels:
            if lv.size is None:
                continue
            t = f"{lv.seconds * 1e9:.3g} ns" if lv.seconds is not None else "not measured"
            line = pg.InfiniteLine(pos=math.log10(lv.size), angle=90,
                                   pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine),
                                   label=f"{lv.name} {_bytes(lv.size)}: {t}",
                                   labelOpts={"position": 0.92 - 0.12 * (len(self.level_lines) % 2),
                                              "color": "#444"})  # fmt: skip
            self.memory_plot.addItem(line)
            self.level_lines.append(line)

    def _ended(self, result: Any, error: BaseException | None) -> None:
        self._cancel = None
        then, self._then = self._then, None
        self._busy(False)
        if then is not None:
            try:
                then(result, error)
            except Exception as e:  # shown, never raised into Qt's event loop
                self._failed("Showing the result", e)

    def _failed(self, what: str, error: BaseException) -> None:
        from parasol_core.measure import MeasureCancelled

        if isinstance(error, MeasureCancelled):
            self.status.setText(f"{what} cancelled: nothing was written.")
        else:
            self.status.setText(f"{what} failed.")
            self.message.setStyleSheet("color: #b00020;")
            self.message.setText(str(error) or type(error).__name__)
        self.bar.setValue(0)

    def _measured(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            self._failed("The measurement", error)
            return
        self.result = result
        self._remember_pace(result)
        self._busy(False)
        self.bar.setValue(1000)
        written = (
            counted(len(result.timings), "timing") if result.timings else "all measurable timings"
        )
        self.status.setText(f"Measured {result.cpu} in {result.seconds:.0f} s: {written}"
                            f"; {len(result.left_out)} left out. It is open as a new "
                            "model: Save as to keep it.")  # fmt: skip
        self.report.setPlainText("Left out, and why:\n" + "\n".join(
            f"  {name}: {why}" for name, why in result.left_out) if result.left_out
            else "Nothing was left out.")  # fmt: skip
        if not self._points and result.cache_curve:
            self._points = [(x, s * 1e9) for x, s in result.cache_curve]
            self._show_cache_curve()
        if not self._memory_points and result.memory_curve:
            self._memory_points = [(b, s * 1e9) for b, s in result.memory_curve]
            self._show_memory_curve()
        self._show_levels(list(result.memory_levels))
        self.opened.emit(result.text)

    def _remember_pace(self, result: Any) -> None:
        """How this run compared with its estimate, for the next announcement."""
        from parasol_core.measure import estimate_seconds
        from piui.app_settings import settings

        try:
            estimated = estimate_seconds(self.options())
        except Exception:
            return
        if estimated > 0 and result.seconds > 0:
            settings().setValue(self._pace_key(), f"{result.seconds / estimated:.4g}")
            self._show_estimate()

    # ---- validating

    def validate(self) -> None:
        from parasol_core.measure.validation import validate_host

        model = None if self.running else self._model_on_screen()
        if model is None:
            return
        self.validated_model, self.validated_text = model
        text, options, sizes = model[1], self.options(), self.validation_sizes
        more = {} if self.validation_programs is None else {"programs": self.validation_programs}
        self._run(lambda progress, cancel: validate_host(text, options, progress, cancel, sizes,
                                                         **more),
                  self._validated, "Validating the model")  # fmt: skip

    def _validated(self, rows: Any, error: BaseException | None) -> None:
        import pyqtgraph as pg

        from parasol_core.measure.validation import format_validation_table

        if error is not None:
            self._failed("The validation", error)
            return
        self.rows = list(rows)
        self.bar.setValue(1000)
        self.valid_plot.clear()
        self.plots.setCurrentWidget(self.valid_plot)
        colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                   "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"]  # fmt: skip
        for i, name in enumerate(dict.fromkeys(r.experiment for r in self.rows)):
            # a log plot: a size predicted at 0 (no counted operation timed) is left out
            mine = [r for r in self.rows if r.experiment == name and r.measured > 0
                    and r.predicted > 0]  # fmt: skip
            # a size predicted by its loop-carried chain (docs/measure.md, "Chains"): a
            # triangle, the others a disc, and the legend says at how many sizes
            # (one item per marker: the legend draws an item's one symbol, and names the
            # program once, on the triangles where any size is chained)
            named = "t" if any(_bound_symbol(r.bound) == "t" for r in mine) else "o"
            for symbol in ("t", "o"):
                some = [r for r in mine if _bound_symbol(r.bound) == symbol]
                if some:
                    self.valid_plot.plot(
                        [r.measured for r in some], [r.predicted for r in some], pen=None,
                        symbol=symbol, symbolSize=8, symbolBrush=colours[i % len(colours)],
                        name=_bound_name(name, [r.bound for r in mine]) if symbol == named else None)  # fmt: skip
        everything = [v for r in self.rows for v in (r.measured, r.predicted) if v > 0]
        if everything:
            lo, hi = min(everything), max(everything)
            self.valid_plot.plot([lo, hi], [lo, hi], pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine),
                                 name="predicted = measured")  # fmt: skip
        from parasol_core.measure.validation import program_summary

        ratios = [r.ratio for r in self.rows] or [float("nan")]
        means, mean, spread = program_summary(self.rows)
        held_out = (f" On {counted(len(means), 'program')} the measurement never saw: mean ratio "
                    f"{mean:.3g}, spread {spread:.3g}x." if means else "")  # fmt: skip
        self.status.setText(f"Validated {self.validated_model}: predicted / measured from "
                            f"{min(ratios):.3g} to {max(ratios):.3g} over "
                            f"{counted(len(ratios), 'problem size')}." + held_out)  # fmt: skip
        self.report.setPlainText(format_validation_table(self.rows, self.validated_text))


def _bound_symbol(bound: str) -> str:
    """A validation point's marker: a triangle where the loop-carried chain bounds it."""
    return "t" if bound == "chain" else "o"


def _bound_name(name: str, bounds: list[str]) -> str:
    """A program's legend entry: its name, and where its chain bounds it (at every size
    shown, or at some)."""
    chained = sum(b == "chain" for b in bounds)
    if not chained:
        return name
    if chained == len(bounds):
        return f"{name} (chain)"
    return f"{name} (chain at {chained} of {counted(len(bounds), 'size')})"
