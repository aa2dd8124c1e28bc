"""Estimate: ask the estimator about the model on screen, where a tweak counts — the
route between two processors, the transfer time of a message on it (with the other
routes asked for here as the network's active routes, the current phase), and the time
of a basic block. A question about a model edited since its last export pushes it again
first; an answer that arrives after another model was opened is dropped. Every question
goes off the GUI thread.

What can be asked is the model's: the processor boxes take the processors of the
hardware topology (or of the virtual topology chosen in *between*), the processor type
box the model's type ids, rebuilt whenever the model or its structure changes. A route
answered is drawn in the grid view too (``Document.show_route``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from PySide6.QtCore import QMargins, QSize, Qt
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.limits import MAX_ID
from parasol_core.base.numeric import parse_whole
from parasol_core.base.words import counted
from parasol_core.topology.shape import processor_count
from piui.export import Exporter, ExportResult, push_name
from piui.widgets.labels import wrapped_tip
from piui.widgets.number_controls import ValueField
from piui.widgets.processor_box import ProcessorBox
from piui.widgets.scrolling import in_scroll_area
from piui.widgets.shortcuts import RUN, key_for, on_return, with_key
from piui.widgets.status_messages import (
    MessageLine,
    forget_on_change,
    message_label,
    show_refusal,
)
from piui.widgets.turning_splitter import side_by_side_width, turn_layout


def _row(*widgets: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    for w in widgets:
        row.addWidget(w)
    row.addStretch(1)
    return row


class _TurningBox(QGroupBox):
    """A box whose question is one row where it is wide enough, and its two halves one
    above the other where it is not (a place of 385 pixels scrolled the Route box's 399
    and the Basic block's 387 sideways). Its minimum width is its wider half's."""

    def __init__(self, title: str, first: Sequence[QWidget], second: Sequence[QWidget]) -> None:
        super().__init__(title)
        self.rows = QVBoxLayout(self)
        # the box's least width is minimumSizeHint's, not its one-row layout's
        self.rows.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.halves = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        left = QHBoxLayout()
        for w in first:
            left.addWidget(w)
        left.addStretch(0)  # 1 when the halves are stacked: the fields keep their width
        self._left, self._right = left, _row(*second)
        self.halves.addLayout(left, 0)  # on one row the room left goes after the second
        self.halves.addLayout(self._right, 1)
        self.rows.addLayout(self.halves)

    def _frame(self) -> int:
        """The box's width beyond its layout's (its frame and the layout's margins)."""
        return super().minimumSizeHint().width() - self.rows.minimumSize().width()

    def one_row_width(self) -> int:
        """The least width the question takes on one row."""
        halves = self._left.minimumSize().width() + self._right.minimumSize().width()
        return halves + max(0, self.halves.spacing()) + self._frame()

    def minimumSizeHint(self) -> QSize:
        widest = max(self._left.minimumSize().width(), self._right.minimumSize().width())
        return QSize(widest + self._frame(), super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        self._turn(event.size().width())
        super().resizeEvent(event)

    def refit(self) -> None:
        """Turn again for what the box now holds: an answer shown beside its button
        widens the row (the Basic block's interval was cut off at the box's edge, the
        row laid out for the empty answer it had when the box was last resized)."""
        for layout in (self._left, self._right, self.halves):
            layout.invalidate()  # their minimum sizes are cached: the new answer's width
        self._turn(self.width())

    def _turn(self, width: int) -> None:
        if turn_layout(self.halves, width, self.one_row_width()):
            stacked = self.halves.direction() == QBoxLayout.Direction.TopToBottom
            self._left.setStretch(self._left.count() - 1, 1 if stacked else 0)


class _Message(MessageLine):
    """The panel's message line, shown only when it says something: it sits right under
    the line naming the model, where an answer's error is never below the fold of the
    low dock, and takes no room otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.setVisible(False)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))

    def clear(self) -> None:
        super().clear()
        self.setVisible(False)


def _read_counts(text: str) -> object:
    """Counts typed as JSON (text starting ``{`` or ``[``, or nothing) or ``OP=N,...``
    (as ``parasol-model block`` takes them); ValueError saying where JSON went wrong."""
    from parasol_core.analysis.block_time import parse_counts

    if text[:1] in ("", "{", "["):  # JSON, as the placeholder shows it
        try:
            return json.loads(text or "{}")
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    return parse_counts(text)


class EstimatePanel(QWidget):
    def __init__(self, exporter: Exporter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.exporter = exporter
        self.document = exporter.document
        self.routes: list[dict] = []  # routes asked for, in order: the current phase
        # questions waiting for the model on screen to be pushed
        self._waiting: list[Callable[[str], None]] = []

        self.model_label = message_label()

        # a number, or a name of the hardware's processors (shown as "3 (Fafard)")
        self.src = ProcessorBox(self._named_topology, what="from")
        self.dst = ProcessorBox(self._named_topology, what="to")
        for box in (self.src, self.dst):
            box.setRange(1, MAX_ID)
            box.setToolTip("a processor: its number, or its name where the topology keeps "
                           "one")  # fmt: skip
        self.dst.setValue(2)
        self.between = QComboBox()
        self.between.setToolTip("route between processors of the hardware topology, or "
                                "between virtual processors of a virtual topology")  # fmt: skip
        self.route_button = QPushButton("&Route")
        self.route_text = message_label()
        route_box = _TurningBox("Route", (QLabel("from"), self.src, QLabel("to"), self.dst),
                                (QLabel("of"), self.between, self.route_button))  # fmt: skip
        route_box.rows.addWidget(self.route_text)

        self.bytes = ValueField("1024")
        self.bytes.setToolTip("message size in bytes")
        self.bytes.setMaximumWidth(110)
        self.phase = QCheckBox("the other routes in flight")
        self.phase.setToolTip("with the other routes asked for here in flight (the phase)")
        self.transfer_button = QPushButton("&Transfer time")
        self.transfer_text = QLabel()
        transfer_box = QGroupBox("Transfer time on the last route")
        rows = QVBoxLayout(transfer_box)
        rows.addLayout(_row(QLabel("bytes"), self.bytes, self.phase))
        rows.addLayout(_row(self.transfer_button, self.transfer_text))

        self.processor = QSpinBox()
        self.processor.setRange(1, MAX_ID)
        self.counts = QPlainTextEdit()
        self.counts.setPlaceholderText('instruction counts: ila=4,ils=2 or JSON {"ila": 4}')
        self.counts.setMaximumHeight(2 * self.counts.fontMetrics().height() + 12)
        # Tab goes to the next field, as in every other field (it typed a tab into the
        # counts: the chains… button beside them was out of the keyboard's reach)
        self.counts.setTabChangesFocus(True)
        # issue 34's block: its loop-carried chains and the working set its arrays span
        self.chains = QPlainTextEdit()
        self.chains.setPlaceholderText("loop-carried chains, one a line: dla=1000 or "
                                       "dla=4096,starts=64")  # fmt: skip
        self.chains.setToolTip(
            "the operations on each loop-carried dependence chain of the block (each waits "
            "for the one before), one chain a line, as parasol-model block --chain takes "
            "them (starts=S: the chain begins afresh S times, and the core runs several of "
            "its runs at once by the model's chain window); the estimate is the larger of "
            "the sum over the counts and the longest chain at the model's measured latencies "
            "(docs/measure.md, \"Chains\")"
        )  # fmt: skip
        self.chains.setMaximumHeight(2 * self.chains.fontMetrics().height() + 12)
        self.chains.setTabChangesFocus(True)
        self.working_set = QLineEdit()
        self.working_set.setPlaceholderText("bytes")
        self.working_set.setToolTip(
            "the bytes of data the block's arrays span (optional), as parasol-model block "
            "--working-set: each array reference is charged the memory level that holds "
            "that much, on a model measured by parasol-model measure"
        )  # fmt: skip
        self.working_set.setMaximumWidth(110)
        self.cached = QCheckBox("loop in the cache")
        self.block_button = QPushButton("Estimate &block")
        self.block_text = QLabel()
        # the answer wraps within its box: with the interval and the bound it is wider
        # than the box's share of a wide panel, and was cut at the box's edge
        self.block_text.setWordWrap(True)
        block_box = _TurningBox("Basic block", (QLabel("processor type"), self.processor,
                                                self.cached),
                                (self.block_button, self.block_text))  # fmt: skip
        # the chains and the working set are a second question's worth of fields: shown
        # when asked for (a disclosure beside the counts, so the panel's low dock keeps
        # its height and width), and asked about only while shown
        self.more = QToolButton()
        self.more.setText("chains…")
        self.more.setCheckable(True)
        self.more.setArrowType(Qt.ArrowType.RightArrow)
        self.more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.more.setToolTip("the block's loop-carried chains and its working set (shown "
                             "and asked about while this is on)")  # fmt: skip
        self.extra = QWidget()
        extra = QVBoxLayout(self.extra)
        extra.setContentsMargins(0, 0, 0, 0)
        extra.setSpacing(2)
        extra.addWidget(self.chains)
        extra.addLayout(_row(QLabel("working set"), self.working_set))
        self.extra.setVisible(False)
        counts_row = QHBoxLayout()
        counts_row.addWidget(self.counts, 1)
        counts_row.addWidget(self.more, 0, Qt.AlignmentFlag.AlignTop)
        block_box.rows.addLayout(counts_row)
        block_box.rows.addWidget(self.extra)
        for box in (route_box, transfer_box, block_box):
            box.layout().setContentsMargins(6, 2, 6, 2)
            box.layout().setSpacing(2)

        self.message = _Message()
        for box in (self.src, self.dst):  # a name the topology lacks: why, on the line
            box.rejected.connect(lambda text: show_refusal(self.message, text))
        body = QWidget()
        inner = QVBoxLayout(body)
        inner.setContentsMargins(6, 2, 6, 2)
        inner.setSpacing(2)
        inner.addWidget(self.model_label)
        # the answer's message right under what it is about, never below the fold of a
        # low dock (an error there was cut off)
        inner.addWidget(self.message)
        # three columns of two lines each: the panel sits in a wide, low dock, and every
        # part (the transfer time among them) is then in sight without scrolling; in a
        # place too narrow for the three (a tab of the default layout's bottom-left
        # stack), one above the other, scrolled down rather than cut off at the side
        self.questions = row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        row.addWidget(route_box, 1)
        row.addWidget(transfer_box, 1)
        row.addWidget(block_box, 1)
        self._boxes = (route_box, transfer_box, block_box)
        inner.addLayout(row)
        inner.addStretch(1)
        # in a scroll area: never forces the main window taller than the screen
        self._scroll = scroll = in_scroll_area(body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)

        # an answer shown answers what the fields say: changing a question's input takes
        # its last answer away (a time beside a size it is not for was read as its time)
        self.bytes.textChanged.connect(lambda _t: self.transfer_text.clear())
        self.phase.toggled.connect(lambda _on: self.transfer_text.clear())
        self.counts.textChanged.connect(self._clear_block)
        self.chains.textChanged.connect(self._clear_block)
        self.more.toggled.connect(self._show_more)
        self.working_set.textChanged.connect(lambda _t: self._clear_block())
        self.processor.valueChanged.connect(lambda _v: self._clear_block())
        self.cached.toggled.connect(lambda _on: self._clear_block())
        self.route_button.clicked.connect(lambda: self.ask_route())
        self.transfer_button.clicked.connect(lambda: self.ask_transfer())
        on_return(self.route_button, self.src, self.dst)
        on_return(self.transfer_button, self.bytes)
        self.transfer_button.setToolTip(with_key("Ask the transfer time of the message on the "
                                                 "last route", "Return"))  # fmt: skip
        # the counts are typed over lines (Return is a line end): Ctrl+Return asks, as Run
        key_for(self.block_button, self, RUN, "Estimate the basic block's time")
        self.block_button.clicked.connect(lambda: self.ask_block())
        exporter.finished.connect(self._exported)
        self.document.modelReset.connect(self.reset)
        self.document.structureChanged.connect(self._fit_to_model)
        self.between.currentIndexChanged.connect(lambda _i: self._fit_to_model())
        self.document.changed.connect(lambda _change: self._show_model())
        forget_on_change(self.document, self, self.message)
        self._fit_to_model()
        self._show_model()

    def _show_more(self, on: bool) -> None:
        """Show or hide the chains and the working set: the question changes with them."""
        self.more.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.extra.setVisible(on)
        self._clear_block()
        if on:
            self.chains.setFocus()

    def _clear_block(self) -> None:
        """The block's answer goes with the question it answered (its tooltip too)."""
        self.block_text.clear()
        self.block_text.setToolTip("")
        self._refit()

    def _refit(self) -> None:
        """Each question's box turned for the answer it now shows (or no longer does)."""
        for box in self._boxes:
            if isinstance(box, _TurningBox):
                box.refit()

    def side_by_side_width(self) -> int:
        """The width the three question boxes take side by side, at their minimum."""
        # beyond the boxes: the body's margins (12) and a scroll bar (20)
        return side_by_side_width(self._boxes, self.questions.spacing(), 12 + 20)

    def sizeHint(self) -> QSize:
        """The questions' size, not the scroll area's capped hint: a place too low for
        them is raised as far as the window allows (``MainWindow._give_room``)."""
        body = self._scroll.widget()
        return body.sizeHint().grownBy(QMargins(0, 0, 0, 4))

    def resizeEvent(self, event) -> None:  # noqa: ANN001
        turn_layout(self.questions, event.size().width(), self.side_by_side_width())
        super().resizeEvent(event)

    def _named_topology(self):  # noqa: ANN202
        """The topology whose names the processor boxes show: the hardware, unless
        *between* is a virtual topology (its processors are numbers)."""
        between = getattr(self, "between", None)  # (made after the boxes)
        if between is None or between.currentData() is not None:
            return None
        return self.document.machine.hardware()

    @property
    def model(self) -> str | None:
        """The estimator's id of the model on screen as it is now (None: not pushed)."""
        current = self.exporter.current()
        return current.model if current is not None else None

    # ---- state

    def reset(self) -> None:
        """Another model: nothing asked about the last one is shown or kept."""
        self.routes = []
        self._waiting = []
        for label in (self.route_text, self.transfer_text):
            label.clear()
        self._clear_block()
        self._fit_to_model()
        self._show_model()

    def _fit_to_model(self) -> None:
        """The boxes offer what the model on screen has: its virtual topologies in
        *between*, its processors (hardware or virtual) in *from* and *to*, its processor
        type ids in *processor type* (a value outside is brought in)."""
        machine = self.document.machine
        chosen = self.between.currentData()
        self.between.blockSignals(True)
        self.between.clear()
        self.between.addItem("hardware", None)
        for virt in machine.virtuals:
            if virt.id is not None:
                name = f" ({virt.name})" if virt.name else ""
                self.between.addItem(f"virtual {virt.id}{name}", virt.id)
        index = self.between.findData(chosen)
        self.between.setCurrentIndex(max(index, 0))
        self.between.setEnabled(self.between.count() > 1)
        self.between.blockSignals(False)
        virtual = self.between.currentData()
        topo = machine.virtual(virtual) if virtual is not None else machine.hardware()
        count = (processor_count(topo) or 0) if topo is not None else 0
        for box in (self.src, self.dst):
            box.setRange(1, max(count, 1))
            box.setEnabled(count > 1)
            box.refresh()  # the names of this model's processors, or numbers
        self.route_button.setEnabled(count > 1)
        self.route_button.setToolTip(with_key("Ask the estimator the route", "Return")
                                     if count > 1 else "the topology has one processor: "
                                     "there is no route to ask for")  # fmt: skip
        ids = [p.id for p in machine.processors if p.id is not None]
        self.processor.setRange(min(ids, default=1), max(ids, default=1))
        self.block_button.setEnabled(bool(ids))

    def _exported(self, result: ExportResult) -> None:
        doc = self.document
        if result.generation != doc.generation:
            return  # a push of a model no longer open: not what the questions are about
        waiting, self._waiting = self._waiting, []
        if not result.ok:
            if waiting:
                show_refusal(self.message, f"not asked: {result.error}")
        elif result.revision != doc.revision and waiting:
            self._waiting = waiting  # edited while it was pushed: push the model as it is
            self.exporter.export()
        else:
            for ask in waiting:
                ask(result.model)
        self._show_model()

    def _show_model(self) -> None:
        doc = self.document
        last = self.exporter.last
        pushed = last is not None and last.ok and last.generation == doc.generation
        name = push_name(doc)
        if self.model is not None:
            text = (f"Answers are about <b>{doc.title()}</b>, pushed as “{name}” "
                    f"(model {self.model[:12]}…).")  # fmt: skip
        elif pushed:
            text = (f"Answers are about <b>{doc.title()}</b>: edited since it was pushed as "
                    f"“{name}”; the next question pushes it again.")  # fmt: skip
        else:
            text = (f"Answers are about <b>{doc.title()}</b>: the first question pushes it "
                    f"to the estimator as “{name}” (Edit > Preferences).")  # fmt: skip
        self.model_label.setText(text)

    def _failed(self, error: BaseException) -> None:
        show_refusal(self.message, str(error))

    def _with_model(self, ask: Callable[[str], None]) -> None:
        """Run ``ask(model id)`` on the model on screen: pushed first when it has not
        been, or was edited since."""
        model = self.model
        if model is not None:
            ask(model)
            return
        self._waiting.append(ask)
        self.message.setText("Pushing the model on screen to the estimator first…")
        if not self.exporter.busy:
            self.exporter.export()

    def _answer(
        self, show: Callable[[object], None]
    ) -> Callable[[object, BaseException | None], None]:
        """A callback that shows an answer only if it is about the model still open."""
        generation = self.document.generation

        def done(result: object, error: BaseException | None) -> None:
            if generation != self.document.generation:
                return  # another model was opened meanwhile: the answer is not about it
            if error is not None:
                self._failed(error)
            else:
                self.message.clear()
                show(result)

        return done

    # ---- questions

    def ask_route(self) -> None:
        src, dst, virtual = self.src.value(), self.dst.value(), self.between.currentData()

        def show(route: dict) -> None:
            self.routes = [r for r in self.routes if r["route"] != route["route"]] + [route]
            hops = len(route.get("links", []))
            names = route.get("names", {})  # the answer's (protocol 1.4): "3 (Fafard)"
            path = " → ".join(f"{p} ({names[str(p)]})" if str(p) in names else str(p)
                              for p in route.get("processors", []))  # fmt: skip
            between = f"virtual {src} → {dst} of {virtual}: " if virtual is not None else ""
            self.route_text.setText(f"{between}{counted(hops, 'link')}: {path}")
            self._refit()
            self.transfer_text.clear()  # a time on the route before: not on this one
            self.document.show_route(src, dst, virtual)

        self._with_model(lambda model: self.exporter.call(
            lambda c: c.plot(model, src, dst, virtual), self._answer(show)))  # fmt: skip

    def ask_transfer(self) -> None:
        # the field typed in is judged first: "abc" is refused at the field, whatever
        # else the question still lacks
        try:
            nbytes = parse_whole(self.bytes.text(), 0, 2**53, "a message size in bytes")
        except ValueError as e:
            self.transfer_text.clear()
            self.bytes.reject_input(str(e), "1024")
            show_refusal(self.message, str(e))
            return
        self.bytes.accept_input()
        if not self.routes:
            show_refusal(self.message, "ask for a route first")
            return
        route = self.routes[-1]["route"]
        active = [r["route"] for r in self.routes[:-1]] if self.phase.isChecked() else []

        def show(seconds: float) -> None:
            self.transfer_text.setText(f"{seconds:.6g} s")
            self._refit()

        self._with_model(lambda model: self.exporter.call(
            lambda c: c.transfer_time(model, route, nbytes, active), self._answer(show)))  # fmt: skip

    def ask_block(self) -> None:
        from parasol_core.analysis.block_time import (
            MAX_WORKING_SET,
            checked_chains,
            checked_counts,
            parse_counts,
        )

        field = "counts"
        try:
            counts = _read_counts(self.counts.toPlainText().strip())
            checked_counts(counts)  # NaN, 1e400, -4, "x", an unknown mnemonic: said here
            field = "chains"
            more = self.more.isChecked()  # hidden, they are not part of the question
            text = self.chains.toPlainText().strip() if more else ""
            if text[:1] == "[":  # a JSON list of them, as estimate.block takes
                chains = _read_counts(text)
            else:  # one a line, each as `parasol-model block --chain` takes it
                chains = [parse_counts(line) for line in text.splitlines() if line.strip()]
            chains = checked_chains(chains)
            field = "working set"
            text = self.working_set.text().strip() if more else ""
            working_set = (parse_whole(text, 0, MAX_WORKING_SET, "a number of bytes")
                           if text else None)  # fmt: skip
        except ValueError as e:
            self._clear_block()
            show_refusal(self.message, f"{field}: {e}")
            return
        proc, cached = self.processor.value(), self.cached.isChecked()

        def show(result: dict) -> None:
            text = f"{result['mean']:.6g} s ± {result['sd']:.3g} s"
            span = result.get("interval")  # a server before protocol 1.8 gives none
            if isinstance(span, list) and len(span) == 2:
                text += f", {span[0]:.3g} .. {span[1]:.3g} s"
            if result.get("bound") == "chain":
                text += ", chain-bound"
            self.block_text.setText(text)
            self._refit()
            why = result.get("interval_from")
            lines = [f"The time lies in {span[0]:.6g} .. {span[1]:.6g} s: {why}."
                     if why and span else ""]  # fmt: skip
            if result.get("bound_words"):
                lines.append(f"Bound: {result['bound_words']}.")
            if result.get("level_words"):
                lines.append(f"Memory level: {result['level_words']}.")
            self.block_text.setToolTip(wrapped_tip(" ".join(x for x in lines if x)))

        self._with_model(lambda model: self.exporter.call(
            lambda c: c.block(model, proc, counts, cached, chains=chains or None,
                              working_set=working_set), self._answer(show)))  # fmt: skip
