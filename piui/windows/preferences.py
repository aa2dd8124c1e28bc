"""Preferences: which estimator Export pushes to (URL, token, name), whether to push
again a second after each edit, and a private estimator started for the user."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.words import counted
from parasol_core.estimator.client import Client, check_url, default_url
from parasol_core.estimator.local import LocalEstimator
from piui.export import EstimatorSettings, Worker
from piui.widgets.status_messages import message_label


def check_failure(url: str, token: str, error: BaseException) -> str:
    """What a failed check means, in words that are true: an estimator that answers but
    refuses the token is not one that does not answer."""
    from parasol_core.estimator.client import (
        EstimatorTimeout,
        EstimatorUnreachable,
        Unauthorized,
        naming,
    )

    if isinstance(error, Unauthorized):
        if token:
            return f"The estimator at {url} answers, but refuses this token."
        return f"The estimator at {url} answers, but wants a token: give it above."
    if isinstance(error, EstimatorTimeout):
        return naming(url, "The estimator did not answer in time", error)
    if isinstance(error, EstimatorUnreachable):
        return naming(url, "No estimator answers", error)
    if isinstance(error, ValueError):  # an address typed wrong: nothing was asked
        return f"{error}."
    return naming(url, "The estimator answered with an error", error)


class PreferencesDialog(QDialog):
    """Edits an :class:`EstimatorSettings`; ``local`` holds the private estimator (the
    main window stops it when PIUI exits)."""

    def __init__(self, current: EstimatorSettings, local: LocalEstimator | None,
                 parent: QWidget | None = None, push_name: str = "",
                 default_name: str = "") -> None:  # fmt: skip
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.local = local
        self.worker = Worker(self)
        self.url = QLineEdit(current.url)
        self.url.setPlaceholderText("http://127.0.0.1:7911")
        self.token = QLineEdit(current.token)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("none")
        self.name = QLineEdit(push_name)
        self.name.setPlaceholderText(default_name or "the model's file name")
        self.name.setToolTip("the name the model on screen is pushed under; kept with its "
                             "file, so each model has its own")  # fmt: skip
        self.auto = QCheckBox("Export again a second after each edit")
        self.auto.setChecked(current.auto)
        self.status = message_label()
        self.check_button = QPushButton("Check")
        self.check_button.setToolTip("Ask the estimator at this URL whether it answers")
        self.start_button = QPushButton("Start a local estimator")
        self.start_button.setToolTip("Run an estimator for this session on a free port; "
                                     "it stops when PIUI exits")  # fmt: skip
        form = QFormLayout()
        form.addRow("Estimator URL:", self.url)
        form.addRow("Token:", self.token)
        form.addRow("Push this model as:", self.name)
        form.addRow(self.auto)
        row = QHBoxLayout()
        row.addWidget(self.check_button)
        row.addWidget(self.start_button)
        row.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        # (clicked passes a bool: never let it become the callback)
        self.check_button.clicked.connect(lambda: self.check())
        self.start_button.clicked.connect(lambda: self.start_local())
        self.resize(520, self.sizeHint().height())
        if local is not None and local.running():
            self.status.setText(f"A local estimator is running at {local.url}.")

    def settings(self) -> EstimatorSettings:
        """What the dialog says; an empty URL is the default estimator's."""
        url = self.url.text().strip() or default_url()
        return EstimatorSettings(url, self.token.text(), self.auto.isChecked())

    def url_error(self) -> str:
        """Why the URL typed is no estimator's address ('' when it is one)."""
        try:
            check_url(self.settings().url)
        except ValueError as e:
            return f"{e}."
        return ""

    def accept(self) -> None:
        """OK keeps an address an estimator can have; one typed wrong is refused here,
        saying why, and the dialog stays open with it to correct."""
        error = self.url_error()
        if error:
            self.status.setText(error)
            self.url.setFocus()
            self.url.selectAll()
            return
        super().accept()

    def push_name(self) -> str:
        """The push name typed for the model on screen ('' for its default)."""
        return self.name.text().strip()

    def check(self, then: Callable[[bool], None] | None = None) -> None:
        """Say whether the estimator at the URL answers (asked off the GUI thread)."""
        s = self.settings()
        error = self.url_error()
        if error:  # nothing to ask: say what is wrong with the address
            self.status.setText(error)
            if then is not None:
                then(False)
            return
        self.status.setText(f"Asking {s.url}…")

        def ask() -> dict:
            with Client(s.url, token=s.token or None, timeout=5) as client:
                return client.info()

        def done(info: dict | None, error: BaseException | None) -> None:
            if error is None:
                self.status.setText(f"The estimator at {s.url} answers: protocol "
                                    f"{info.get('protocol')}, "
                                    f"{counted(info.get('models', 0), 'model')} stored.")  # fmt: skip
            else:
                self.status.setText(check_failure(s.url, s.token, error))
            if then is not None:
                then(error is None)

        self.worker.run(ask, done)

    def start_local(self, then: Callable[[bool], None] | None = None) -> None:
        """Start a private estimator (off the GUI thread) and point the URL at it."""
        if self.local is not None and self.local.running():
            self.url.setText(self.local.url)
            self.status.setText(f"A local estimator is running at {self.local.url}.")
            if then is not None:
                then(True)
            return
        local = LocalEstimator()
        self.start_button.setEnabled(False)
        self.status.setText("Starting a local estimator…")

        def done(_: object, error: BaseException | None) -> None:
            self.start_button.setEnabled(True)
            if error is None:
                self.local = local
                self.url.setText(local.url)
                self.token.clear()
                self.status.setText(f"A local estimator is running at {local.url}; it "
                                    "stops when PIUI exits.")  # fmt: skip
            else:
                self.status.setText(f"The local estimator did not start: {error}")
            if then is not None:
                then(error is None)

        self.worker.run(local.start, done)
