"""The run-time systems window (report 3.2.1, "The SPMD Programming Models Windows").

One tab per run-time system (PVM, Express, MPI): every primitive the format knows with
its expression, editable and checked as it is typed, and its value at the current
run-time arguments; below, the selected primitive's cost against message size (log-log,
1 B to 64 MiB) and against process count (1 to the machine's processor count). The
sliders above the tabs set ``ar.bytes`` and ``ar.procs`` for the whole model. A second
curve can be overlaid: another primitive of the same system, or the same primitive in
another (recent) model file. Hovering a plot shows the values under the mouse.
"Fit from measurements..." fits the selected primitive to measured times (the data-sheet
method, :mod:`parasol_core.analysis.fit`) and writes the chosen expression as one undoable edit.
"""

from __future__ import annotations

import logging
import os
from functools import partial
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSlider,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from parasol_core.expr.engine import Engine
from parasol_core.frontend import runtime
from parasol_core.frontend.runtime import RuntimeSystem
from parasol_core.model.tree import Expression
from parasol_core.session import SessionError
from parasol_core.session.edit import EditError
from parasol_core.syntax.loader import load
from piui.document import Document
from piui.widgets.cost_plot import PALETTE, CostPlot, Series
from piui.widgets.expression_edit import ExpressionEdit
from piui.widgets.fit_dialog import FitDialog
from piui.widgets.labels import value_text
from piui.widgets.status_messages import message_label

log = logging.getLogger("piui")

NAME, EXPRESSION, VALUE = range(3)
REDRAW_MS = 40  # at most ~25 redraws a second while a slider is dragged
NO_OVERLAY = "(no comparison)"
OTHER_FILE = "Another model file…"
HINT = "Select a primitive to plot it. Enter applies an expression, Esc reverts."


def _mono() -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    return font


def recent_model_files() -> list[str]:
    """The main window's recent files (the same settings store, read only)."""
    path = os.environ.get("PIUI_SETTINGS")
    store = QSettings(path, QSettings.Format.IniFormat) if path else QSettings("PIUI", "PIUI")
    value = store.value("recentFiles", [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in (value or [])]


class _Row:
    def __init__(self, name: str, edit: ExpressionEdit, value: QTableWidgetItem) -> None:
        self.name, self.edit, self.value = name, edit, value


class RuntimePage(QWidget):
    """One run-time system: its table of primitives and the two plots."""

    def __init__(self, window: RuntimeSystemsWindow, system: RuntimeSystem) -> None:
        super().__init__()
        self.window = window
        self.document: Document = window.document
        self.system = system
        self.rows: dict[str, _Row] = {}
        self.selected: str | None = None
        self.overlay: tuple[str, str | None] | None = None  # (name, other file or None)
        self._other_engines: dict[str, tuple[float, Engine | str]] = {}

        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Primitive", "Expression", "Value"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(EXPRESSION, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(VALUE, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setStyleSheet(
            "QTableWidget { gridline-color: #e2e2e2; }"
            "QTableWidget::item:selected { background: #dce9f7; color: palette(text); }"
            "QTableWidget QLineEdit { background: transparent; }"
        )
        height = self.table.fontMetrics().height() + 8
        self.table.verticalHeader().setDefaultSectionSize(height)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)  # File > Sweep…
        self.table.customContextMenuRequested.connect(self._context_menu)

        self.message = message_label(HINT)
        self.message.setStyleSheet("color: #555;")

        self.overlay_box = QComboBox()
        self.overlay_box.setToolTip("Overlay another primitive, or this one in another model")
        self.overlay_box.activated.connect(self._overlay_chosen)
        self.fit_button = QPushButton("Fit from measurements…")
        self.fit_button.setToolTip("Fit the selected primitive to measured times (CSV or "
                                   "OSU benchmark output) by the data-sheet method")  # fmt: skip
        self.fit_button.clicked.connect(self.open_fit_dialog)
        self.plot_title = QLabel()
        self.plot_title.setFont(_mono())
        self.overlay_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.overlay_box.setMinimumContentsLength(16)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Compare with"))
        controls.addWidget(self.overlay_box, 1)
        controls.addWidget(self.fit_button)

        self.bytes_plot = CostPlot("message size (bytes)", log_x=True, log_y=True,
                                   x_text=runtime.size_text, y_text=runtime.time_text)  # fmt: skip
        self.procs_plot = CostPlot("processes", log_x=False, log_y=False,
                                   x_text=lambda x: f"{round(x)} processes",
                                   y_text=runtime.time_text,
                                   legend_corner="bottom right")  # fmt: skip
        for plot in (self.bytes_plot, self.procs_plot):
            plot.snap_x = runtime.whole_argument  # the read-out evaluates whole counts
            plot.setMinimumHeight(180)
            plot.hovered.connect(self._show_readout)
        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.addWidget(self.bytes_plot)
        plots.addWidget(self.procs_plot)
        self.readout = QLabel(" ")
        self.readout.setFont(_mono())

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.table)
        top_layout.addWidget(self.message)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.plot_title)
        bottom_layout.addLayout(controls)
        bottom_layout.addWidget(plots, 1)
        bottom_layout.addWidget(self.readout)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        self.table.setMinimumHeight(6 * height)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split)
        self.fit_dialog: FitDialog | None = None
        self.rebuild()

    # ------------------------------------------------------------------ the table

    def key(self, name: str) -> str:
        return self.system.key(name)

    def sweep_menu(self, name: str) -> QMenu:
        """The context menu of a primitive's row: sweep its entry (File > Sweep…, its
        expression the first value); none for a primitive the model does not define."""
        from piui.widgets.sweep_menu import sweep_menu

        defined = self.system.expression_text(self.document.machine, name)
        return sweep_menu(self, self.document, self.key(name) if defined else None)

    def _context_menu(self, pos: object) -> None:
        item = self.table.itemAt(pos)
        if item is not None:
            name = self.table.item(item.row(), NAME).text()
            self.sweep_menu(name).exec(self.table.viewport().mapToGlobal(pos))

    def rebuild(self) -> None:
        """Rows for the primitives (after a new model or a structural edit)."""
        machine = self.document.machine
        names = self.system.names(machine)
        if list(self.rows) != names:
            self.table.setRowCount(0)
            self.rows = {}
            self.table.setRowCount(len(names))
            for r, name in enumerate(names):
                self._make_row(r, name)
        for name, row in self.rows.items():
            text = self.system.expression_text(machine, name)
            row.edit.set_model_text(text or "", keep_edit=True)
        self.refresh_values()
        if self.selected not in self.rows:
            defined = [n for n in names if self.system.expression_text(machine, n)]
            self.select(defined[0] if defined else names[0])
        self._fill_overlay_box()
        self.redraw()

    def _make_row(self, r: int, name: str) -> None:
        item = QTableWidgetItem(name)
        item.setFont(_mono())
        if name not in self.system.section.NAMES:
            item.setForeground(QColor("#b00020"))
            item.setToolTip(f"'{name}' is not a {self.system.title} primitive of the format")
        self.table.setItem(r, NAME, item)
        self.table.setItem(r, EXPRESSION, QTableWidgetItem())
        edit = ExpressionEdit(self.document, runtime=True, own_key=self.key(name))
        edit.setFrame(False)
        edit.setPlaceholderText("not defined: type an expression to add it")
        edit.setObjectName(f"expression-{self.system.prefix}-{name}")
        edit.committed.connect(lambda expr, n=name: self.apply(n, expr))
        edit.problemChanged.connect(lambda problem, n=name: self._show_problem(n, problem))
        edit.focusReceived.connect(lambda n=name: self.select(n))
        self.table.setCellWidget(r, EXPRESSION, edit)
        value = QTableWidgetItem()
        value.setFont(_mono())
        value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.table.setItem(r, VALUE, value)
        self.rows[name] = _Row(name, edit, value)

    def refresh_values(self, keys: set[str] | None = None) -> None:
        engine = self.document.engine
        machine = self.document.machine
        for name, row in self.rows.items():
            key = self.key(name)
            if keys is not None and key not in keys:
                continue
            if self.system.expression_text(machine, name) is None:
                row.value.setText("")
                continue
            value = engine.value(key)
            row.value.setText(value_text(value))
            is_number = isinstance(value, (int, float))
            row.value.setForeground(QColor("#222") if is_number else QColor("#b00020"))
            row.value.setToolTip("" if is_number else value_text(value))

    def _show_problem(self, name: str, problem: str) -> None:
        if problem:
            self.message.setText(f"{self.key(name)}: {problem} (not applied)")
            self.message.setStyleSheet("color: #b00020;")
        else:
            self.message.setText(HINT)
            self.message.setStyleSheet("color: #555;")

    def apply(self, name: str, expr: Expression | None) -> None:
        """Set (None: remove) a primitive's expression: one undoable step."""
        key = self.key(name)
        had = self.system.expression_text(self.document.machine, name) is not None
        if expr is None and not had:
            return
        verb = "Remove" if expr is None else ("Edit" if had else "Add")
        try:
            self.document.session.set_expression(key, expr, label=f"{verb} {key}")
        except (EditError, SessionError) as e:
            self.message.setText(f"{key}: {e}")
            self.message.setStyleSheet("color: #b00020;")
            self.rows[name].edit.revert()

    # ------------------------------------------------------------------ selection

    def select(self, name: str) -> None:
        if name not in self.rows:
            return
        r = list(self.rows).index(name)
        if self.table.currentRow() != r:
            self.table.selectRow(r)
        if self.selected != name:
            self.selected = name
            self._fill_overlay_box()
            self.redraw()

    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.select(list(self.rows)[rows[0].row()])

    # ------------------------------------------------------------------ overlay

    def _fill_overlay_box(self) -> None:
        box = self.overlay_box
        box.blockSignals(True)
        box.clear()
        box.addItem(NO_OVERLAY, None)
        machine = self.document.machine
        for name in self.rows:
            if name != self.selected and self.system.expression_text(machine, name):
                box.addItem(self.key(name), (name, None))
        own = str(self.document.path.resolve()) if self.document.path else None
        for path in recent_model_files():
            if path != own and self.selected:
                box.addItem(f"{self.key(self.selected)} in {Path(path).name}",
                            (self.selected, path))  # fmt: skip
        box.addItem(OTHER_FILE, "browse")
        index = 0
        for i in range(box.count()):
            if box.itemData(i) == self.overlay and self.overlay is not None:
                index = i
        if self.overlay is not None and index == 0:
            if self.overlay[1] is not None and self.selected:  # a file: follow the selection
                self.overlay = (self.selected, self.overlay[1])
                box.insertItem(1, f"{self.key(self.selected)} in {Path(self.overlay[1]).name}",
                               self.overlay)  # fmt: skip
                index = 1
            else:
                self.overlay = None
        box.setCurrentIndex(index)
        box.blockSignals(False)

    def _overlay_chosen(self, index: int) -> None:
        data = self.overlay_box.itemData(index)
        if data == "browse":
            from piui.widgets.file_dialogs import ask_path, start_folder

            path = ask_path(self, "Compare with a model file",
                            str(start_folder(self.document)), False)  # fmt: skip
            if not path:
                self._fill_overlay_box()
                return
            data = (self.selected, path)
        self.set_overlay(data)

    def set_overlay(self, overlay: tuple[str, str | None] | None) -> None:
        """Compare with primitive ``name`` of this model (file None) or of another file."""
        self.overlay = tuple(overlay) if overlay else None
        self._fill_overlay_box()
        self.redraw()

    def _other_engine(self, path: str) -> Engine | str:
        """The engine of another model file (cached until the file changes), or why not."""
        try:
            mtime = Path(path).stat().st_mtime
        except OSError as e:
            return f"{path}: {e.strerror or e}"
        cached = self._other_engines.get(path)
        if cached is None or cached[0] != mtime:
            try:
                engine: Engine | str = Engine(load(path))
            except Exception as e:
                engine = f"{Path(path).name}: {getattr(e, 'message', None) or e}"
            cached = (mtime, engine)
            self._other_engines[path] = cached
        return cached[1]

    # ------------------------------------------------------------------ plots

    def curves(self) -> tuple[list[Series], list[Series], list[str]]:
        """The series of both plots (message size, processes) and any problems."""
        args = self.window.current_args()
        sizes = runtime.message_sizes()
        counts = runtime.process_counts(runtime.machine_processes(self.document.machine))
        by_bytes: list[Series] = []
        by_procs: list[Series] = []
        problems: list[str] = []
        wanted: list[tuple[str, Engine | str, str, bool]] = []
        machine = self.document.machine
        if self.selected and self.system.expression_text(machine, self.selected):
            wanted.append((self.key(self.selected), self.document.engine, PALETTE[0], False))
        elif self.selected:
            problems.append(f"{self.key(self.selected)} is not defined")
        if self.overlay is not None:
            name, path = self.overlay
            if path is None:
                if self.system.expression_text(machine, name):
                    wanted.append((self.key(name), self.document.engine, PALETTE[1], False))
            else:
                engine = self._other_engine(path)
                label = f"{self.key(name)} ({Path(path).name})"
                if isinstance(engine, str):
                    problems.append(engine)
                elif not engine.knows(self.key(name)):
                    problems.append(f"{Path(path).name} defines no {self.key(name)}")
                else:
                    wanted.append((label, engine, PALETTE[1], True))
        for label, engine, color, dashed in wanted:
            key = label.split(" ")[0]
            c1 = runtime.curve(engine, key, "bytes", sizes, {"procs": args["procs"]})
            c2 = runtime.curve(engine, key, "procs", counts, {"bytes": args["bytes"]})
            # the read-out evaluates the cost at the cursor, not at the nearest sample
            at_bytes = partial(
                runtime.value_at, engine, key, "bytes", fixed={"procs": args["procs"]}
            )
            at_procs = partial(
                runtime.value_at, engine, key, "procs", fixed={"bytes": args["bytes"]}
            )
            by_bytes.append(Series(label, c1.x, c1.y, color, dashed, at=at_bytes))
            by_procs.append(Series(label, c2.x, c2.y, color, dashed, at=at_procs))
            for c in (c1, c2):
                if c.errors:
                    problems.append(f"{label}: {next(iter(c.errors.values()))}")
        return by_bytes, by_procs, problems

    def redraw(self) -> None:
        by_bytes, by_procs, problems = self.curves()
        args = self.window.current_args()
        self.bytes_plot.set_series(by_bytes)
        self.procs_plot.set_series(by_procs)
        self.bytes_plot.set_marker(args["bytes"])
        self.procs_plot.set_marker(args["procs"])
        name = self.key(self.selected) if self.selected else ""
        self.plot_title.setText(f"{name} at {args['procs']} processes / "
                                f"{runtime.size_text(args['bytes'])}")  # fmt: skip
        self.fit_button.setEnabled(self.selected is not None)
        self.readout.setText("; ".join(dict.fromkeys(problems)) or " ")
        self.readout.setStyleSheet("color: #b00020;" if problems else "color: #222;")

    def _show_readout(self, text: str) -> None:
        if text:
            self.readout.setStyleSheet("color: #222;")
            self.readout.setText(text)
        else:
            self.redraw()

    # ------------------------------------------------------------------ fitting

    def open_fit_dialog(self) -> FitDialog | None:
        if self.selected is None:
            return None
        if self.fit_dialog is not None:
            self.fit_dialog.close()
        self.fit_dialog = FitDialog(self.document, self.key(self.selected), self)
        self.fit_dialog.show()
        return self.fit_dialog


class RuntimeSystemsWindow(QWidget):
    """The tabs of the three run-time systems under the argument sliders."""

    def __init__(self, document: Document, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.sizes = runtime.message_sizes()

        self.bytes_slider = QSlider(Qt.Orientation.Horizontal)
        self.bytes_slider.setRange(0, len(self.sizes) - 1)
        self.bytes_slider.setToolTip("ar.bytes: the message size the costs are evaluated at")
        self.bytes_label = QLabel()
        self.procs_slider = QSlider(Qt.Orientation.Horizontal)
        self.procs_slider.setToolTip("ar.procs: the number of processes taking part")
        self.procs_label = QLabel()
        for label in (self.bytes_label, self.procs_label):
            label.setFont(_mono())
            label.setMinimumWidth(label.fontMetrics().horizontalAdvance("1000 KiB"))
        sliders = QGridLayout()
        sliders.addWidget(QLabel("Message size (ar.bytes)"), 0, 0)
        sliders.addWidget(self.bytes_slider, 0, 1)
        sliders.addWidget(self.bytes_label, 0, 2)
        sliders.addWidget(QLabel("Processes (ar.procs)"), 1, 0)
        sliders.addWidget(self.procs_slider, 1, 1)
        sliders.addWidget(self.procs_label, 1, 2)
        sliders.setColumnStretch(1, 1)

        self.tabs = QTabWidget()
        self.pages: dict[str, RuntimePage] = {}
        for system in runtime.SYSTEMS:
            page = RuntimePage(self, system)
            self.pages[system.attr] = page
            self.tabs.addTab(page, system.title)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(sliders)
        layout.addWidget(self.tabs, 1)

        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(REDRAW_MS)
        self._redraw_timer.timeout.connect(self.redraw)
        self.bytes_slider.valueChanged.connect(self._slider_moved)
        self.procs_slider.valueChanged.connect(self._slider_moved)
        self.tabs.currentChanged.connect(lambda _: self.redraw())
        document.modelReset.connect(self._model_reset)
        document.structureChanged.connect(self._structure_changed)
        document.derivedChanged.connect(self._derived_changed)
        self._model_reset()

    # ---- arguments

    def current_args(self) -> dict[str, int]:
        return {"bytes": self.sizes[self.bytes_slider.value()], "procs": self.procs_slider.value()}

    def set_args(self, nbytes: int | None = None, procs: int | None = None) -> None:
        """Move the sliders (the nearest message size on the slider's scale)."""
        if nbytes is not None:
            nearest = min(range(len(self.sizes)), key=lambda i: abs(self.sizes[i] - nbytes))
            self.bytes_slider.setValue(nearest)
        if procs is not None:
            self.procs_slider.setValue(procs)

    def _slider_moved(self) -> None:
        args = self.current_args()
        self.bytes_label.setText(f"{runtime.size_text(args['bytes'])}")
        self.procs_label.setText(f"{args['procs']}")
        changed = self.document.engine.set_args(args)
        if changed:  # every window showing a run-time cost follows
            self.document.derivedChanged.emit(changed)
        self._redraw_timer.start()

    def _model_reset(self) -> None:
        engine_args = self.document.engine.args
        top = runtime.machine_processes(self.document.machine)
        for slider in (self.bytes_slider, self.procs_slider):
            slider.blockSignals(True)
        self.procs_slider.setRange(1, top)
        procs = engine_args.get("procs")
        self.procs_slider.setValue(procs if isinstance(procs, int) and 1 <= procs <= top else top)
        nbytes = engine_args.get("bytes", 1024)
        self.bytes_slider.setValue(min(range(len(self.sizes)),
                                       key=lambda i: abs(self.sizes[i] - nbytes)))  # fmt: skip
        for slider in (self.bytes_slider, self.procs_slider):
            slider.blockSignals(False)
        for page in self.pages.values():
            page.selected = None
            page.overlay = None
        # the tab of a system the model defines, as for a window built on it: another
        # model opened does not stay on the tab of a system it lacks
        machine = self.document.machine
        if machine.mpi is not None and machine.pvm is None:
            self.tabs.setCurrentWidget(self.pages["mpi"])
        elif machine.express is not None and machine.pvm is None:
            self.tabs.setCurrentWidget(self.pages["express"])
        else:
            self.tabs.setCurrentWidget(self.pages["pvm"])
        self._slider_moved()
        for page in self.pages.values():
            page.rebuild()

    def _structure_changed(self) -> None:
        for page in self.pages.values():
            page.rebuild()

    def _derived_changed(self, derived: dict) -> None:
        keys = set(derived)
        prefixes = {p.system.prefix for p in self.pages.values()}
        if not any(k.split(".")[0] in prefixes for k in keys):
            return
        for page in self.pages.values():
            page.refresh_values(keys)
        self._redraw_timer.start()

    def redraw(self) -> None:
        page = self.tabs.currentWidget()
        if isinstance(page, RuntimePage):
            page.redraw()

    def extra_windows(self) -> list[tuple[str, QWidget]]:
        """The fit dialog of the current tab's primitive (for `piui --screenshots`)."""
        page = self.tabs.currentWidget()
        path = self.document.path
        if path is not None:  # a primitive with measurements beside the model, if any
            from parasol_core.measure.files import measurements_file

            found = [(p, name) for p in self.pages.values() for name in p.rows
                     if measurements_file(path, p.system.key(name)).exists()]  # fmt: skip
            if found:
                page, name = found[0]
                page.select(name)
        if not isinstance(page, RuntimePage):
            return []
        dialog = page.open_fit_dialog()
        if dialog is None:
            return []
        dialog.hide()
        dialog.load_beside_model()
        return [("runtime-fit", dialog)]
