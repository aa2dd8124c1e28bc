"""Estimate: ask the estimator about the model last exported, where a tweak counts — the
route between two processors, the transfer time of a message on it (with the other
routes asked for here as the network's active routes, the current phase), and the time
of a basic block. Every question goes off the GUI thread."""

from __future__ import annotations

import json

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from parasol_core.limits import MAX_ID
from parasol_core.numeric import parse_whole
from piui.export import Exporter, ExportResult
from piui.widgets.messages import message_label, show_refusal
from piui.widgets.number_controls import ValueField


class EstimatePanel(QWidget):
    def __init__(self, exporter: Exporter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.exporter = exporter
        # the model of the last export (an export may come before this panel is built)
        last = exporter.last
        self.model: str | None = last.model if last is not None and last.ok else None
        self.routes: list[dict] = []  # routes asked for, in order: the current phase

        self.model_label = QLabel()
        self.model_label.setWordWrap(True)

        self.src = QSpinBox()
        self.dst = QSpinBox()
        for box in (self.src, self.dst):
            box.setRange(1, MAX_ID)
        self.dst.setValue(2)
        self.route_button = QPushButton("Route")
        self.route_text = QLabel()
        self.route_text.setWordWrap(True)
        route_box = QGroupBox("Route")
        rf = QFormLayout(route_box)
        pair = QHBoxLayout()
        pair.addWidget(QLabel("from"))
        pair.addWidget(self.src)
        pair.addWidget(QLabel("to"))
        pair.addWidget(self.dst)
        pair.addWidget(self.route_button)
        pair.addStretch(1)
        rf.addRow(pair)
        rf.addRow(self.route_text)

        self.bytes = ValueField("1024")
        self.bytes.setToolTip("message size in bytes")
        self.phase = QCheckBox("with the other routes asked for here in flight")
        self.transfer_button = QPushButton("Transfer time")
        self.transfer_text = QLabel()
        transfer_box = QGroupBox("Transfer time on the last route")
        tf = QFormLayout(transfer_box)
        tf.addRow("Bytes:", self.bytes)
        tf.addRow(self.phase)
        tf.addRow(self.transfer_button, self.transfer_text)

        self.processor = QSpinBox()
        self.processor.setRange(1, MAX_ID)
        self.counts = QPlainTextEdit()
        self.counts.setPlaceholderText(
            'instruction counts as JSON: {"ila": 4, "ils": 2, "goto": 1}'
        )
        self.counts.setMaximumHeight(80)
        self.cached = QCheckBox("loop in the cache")
        self.block_button = QPushButton("Estimate block")
        self.block_text = QLabel()
        block_box = QGroupBox("Basic block")
        bf = QFormLayout(block_box)
        bf.addRow("Processor type:", self.processor)
        bf.addRow(self.counts)
        bf.addRow(self.cached)
        bf.addRow(self.block_button, self.block_text)

        self.message = message_label()
        body = QWidget()
        inner = QVBoxLayout(body)
        inner.addWidget(self.model_label)
        row = QHBoxLayout()  # side by side: the panel usually sits in a wide, low dock
        left = QVBoxLayout()
        left.addWidget(route_box)
        left.addWidget(transfer_box)
        left.addStretch(1)
        row.addLayout(left, 1)
        row.addWidget(block_box, 1)
        inner.addLayout(row)
        inner.addWidget(self.message)
        inner.addStretch(1)
        scroll = QScrollArea()  # never forces the main window taller than the screen
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)

        self.route_button.clicked.connect(self.ask_route)
        self.transfer_button.clicked.connect(self.ask_transfer)
        self.block_button.clicked.connect(self.ask_block)
        exporter.finished.connect(self._exported)
        self._show_model()

    # ---- state

    def _exported(self, result: ExportResult) -> None:
        if result.ok and result.model != self.model:
            self.model = result.model
            self.routes = []
            self.route_text.clear()
            self.transfer_text.clear()
        self._show_model()

    def _show_model(self) -> None:
        ready = self.model is not None
        for w in (self.route_button, self.transfer_button, self.block_button):
            w.setEnabled(ready)
        self.model_label.setText(
            f"Asking the estimator about model {self.model[:12]}… (the last export)."
            if ready else "Export the model first (File > Export to estimator, Ctrl+Shift+E)."
        )  # fmt: skip

    def _failed(self, error: BaseException) -> None:
        show_refusal(self.message, str(error))

    # ---- questions

    def ask_route(self) -> None:
        if self.model is None:
            return
        model, src, dst = self.model, self.src.value(), self.dst.value()
        self.message.clear()

        def done(route: dict | None, error: BaseException | None) -> None:
            if error is not None:
                self._failed(error)
                return
            self.routes = [r for r in self.routes if r["route"] != route["route"]] + [route]
            hops = len(route.get("links", []))
            path = " → ".join(map(str, route.get("processors", [])))
            self.route_text.setText(f"{hops} link(s): {path}")

        self.exporter.call(lambda c: c.plot(model, src, dst), done)

    def ask_transfer(self) -> None:
        if self.model is None or not self.routes:
            show_refusal(self.message, "ask for a route first")
            return
        try:
            nbytes = parse_whole(self.bytes.text(), 0, 2**53, "a message size in bytes")
        except ValueError as e:
            self.bytes.reject_input(str(e), "1024")
            show_refusal(self.message, str(e))
            return
        self.bytes.accept_input()
        model, route = self.model, self.routes[-1]["route"]
        active = [r["route"] for r in self.routes[:-1]] if self.phase.isChecked() else []

        def done(seconds: float | None, error: BaseException | None) -> None:
            if error is not None:
                self._failed(error)
                return
            self.transfer_text.setText(f"{seconds:.6g} s")

        self.exporter.call(lambda c: c.transfer_time(model, route, nbytes, active), done)

    def ask_block(self) -> None:
        if self.model is None:
            return
        try:
            counts = json.loads(self.counts.toPlainText() or "{}")
            if not isinstance(counts, dict):
                raise ValueError("the counts must be a JSON object of mnemonic: count")
        except ValueError as e:
            show_refusal(self.message, f"counts: {e}")
            return
        model, proc, cached = self.model, self.processor.value(), self.cached.isChecked()

        def done(result: dict | None, error: BaseException | None) -> None:
            if error is not None:
                self._failed(error)
                return
            self.block_text.setText(f"{result['mean']:.6g} s ± {result['sd']:.3g} s")

        self.exporter.call(lambda c: c.block(model, proc, counts, cached), done)
