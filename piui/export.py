"""Export: push the open model to the estimator without freezing the window.

Every call to the estimator runs on a worker thread (the client blocks on the network);
the result comes back to the GUI thread as a Qt signal. The estimator to use is in the
settings (Preferences): its URL, a token, and the name to push under. Preferences can
also start a private estimator (:class:`~parasol_core.estimator.local.LocalEstimator`),
stopped when PIUI exits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from parasol_core.base.diagnostics import Diagnostic
from parasol_core.session import EDIT, REDO, UNDO, Change
from piui.document import Document

if TYPE_CHECKING:
    from parasol_core.estimator.client import Client

log = logging.getLogger("piui")

AUTO_EXPORT_DELAY_MS = 1000  # auto-export pushes this long after the last edit
TIMEOUT = 30.0  # seconds an estimator call may take


def default_url() -> str:
    """The estimator's address unless Preferences say another (the client module, and
    the HTTP and JSON modules it imports, are loaded when first needed: not at start)."""
    from parasol_core.estimator.client import default_url

    return default_url()


@dataclass
class EstimatorSettings:
    """Which estimator to push to; the same for every model (the name a model is pushed
    under is the model's own: :func:`push_name`)."""

    url: str = field(default_factory=default_url)
    token: str = ""
    auto: bool = False

    @classmethod
    def load(cls, settings: QSettings) -> EstimatorSettings:
        url = str(settings.value("estimator/url", "") or "")
        s = cls(url or default_url())
        s.token = str(settings.value("estimator/token", "") or "")
        s.auto = str(settings.value("estimator/auto", "false")).lower() == "true"
        return s

    def save(self, settings: QSettings) -> None:
        settings.setValue("estimator/url", self.url)
        settings.setValue("estimator/token", self.token)
        settings.setValue("estimator/auto", "true" if self.auto else "false")
        settings.sync()

    def client(self) -> Client:
        from parasol_core.estimator.client import Client

        return Client(self.url, token=self.token or None, timeout=TIMEOUT)


def _name_key(path: object) -> str:
    import hashlib

    return "pushNames/" + hashlib.sha1(str(path).encode()).hexdigest()[:16]


def default_push_name(document: Document) -> str:
    """A model's push name unless given one: its file's name without ``.machine``, else
    its own name."""
    if document.path is not None:
        return document.path.stem
    return document.machine.name or document.title()


def push_name(document: Document) -> str:
    """The name this model is pushed under: the one given for it (kept with its file in
    the settings, or with the unsaved model), else :func:`default_push_name`."""
    if document.push_name:
        return document.push_name
    if document.path is not None:
        from piui.app_settings import settings

        kept = settings().value(_name_key(document.path.resolve()), "")
        if kept:
            return str(kept)
    return default_push_name(document)


def set_push_name(document: Document, name: str) -> None:
    """Give the model on screen a push name ('' goes back to the default); kept with its
    file for the next time it is opened."""
    document.push_name = name or None
    if document.path is not None:
        from piui.app_settings import settings

        s = settings()
        key = _name_key(document.path.resolve())
        if name:
            s.setValue(key, name)
        else:
            s.remove(key)
        s.sync()


@dataclass
class ExportResult:
    """What one export came to."""

    url: str
    model: str | None = None  # the id the estimator gave it
    name: str | None = None
    title: str = ""  # the model pushed, as the window title names it
    generation: int = -1  # Document.generation and .revision when it was pushed
    revision: int = -1
    diagnostics: list[Diagnostic] = field(default_factory=list)  # refused, or warnings
    error: str | None = None  # unreachable, timeout, refused: in words

    @property
    def ok(self) -> bool:
        return self.model is not None


def diagnostics_from(items: list[dict], file: str | None) -> list[Diagnostic]:
    out = []
    for d in items:
        out.append(Diagnostic(str(d.get("severity", "error")), str(d.get("message", "")),
                              d.get("line"), d.get("column"), file))  # fmt: skip
    return out


class Worker(QObject):
    """Runs blocking calls one at a time off the GUI thread; ``done`` brings each result
    (or the exception it raised) back to the GUI thread."""

    done = Signal(object, object, object)  # callback, result, exception

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="piui-estimator")
        self._closed = False
        self.pending = 0
        self.done.connect(self._deliver)

    def run(self, call: Callable[[], Any], then: Callable[[Any, BaseException | None], None],
            ) -> None:  # fmt: skip
        if self._closed:  # the window closed: nothing to ask for, nobody to tell
            return
        self.pending += 1

        def job() -> None:
            try:
                result, error = call(), None
            except BaseException as e:  # delivered to the GUI thread, never lost
                result, error = None, e
            self.done.emit(then, result, error)

        self._pool.submit(job)

    def background(self, call: Callable[[], Any]) -> None:
        """Run ``call`` on the worker thread for its side effect only: no result comes
        back and it does not count as a call under way (``pending``)."""

        def job() -> None:
            try:
                call()
            except Exception as e:  # a preload that fails is retried where it is needed
                log.debug("background call failed: %s", e)

        try:
            self._pool.submit(job)
        except RuntimeError:  # shut down (the window closed): nothing left to do it for
            pass

    def _deliver(self, then: Callable, result: Any, error: BaseException | None) -> None:
        self.pending -= 1
        then(result, error)

    def shutdown(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)


class Exporter(QObject):
    """Pushes the document's model to the configured estimator."""

    started = Signal(str)  # url
    finished = Signal(object)  # ExportResult

    def __init__(self, document: Document, settings: Callable[[], EstimatorSettings],
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.worker = Worker(self)
        self.last: ExportResult | None = None
        self._auto = QTimer(self)
        self._auto.setSingleShot(True)
        self._auto.setInterval(AUTO_EXPORT_DELAY_MS)
        self._auto.timeout.connect(self.export)
        document.changed.connect(self._changed)

    def shutdown(self) -> None:
        """The window closes: no export starts any more (an auto-export waiting for its
        second fired after the worker was gone: 'cannot schedule new futures after
        shutdown'), and the worker's thread ends."""
        self._auto.stop()
        self.worker.shutdown()

    def preload(self) -> None:
        """Import the estimator's client (and the HTTP and JSON modules it uses) on the
        worker thread, so that the first export or edit does not import it on the GUI
        thread. The main window asks for this once it has been painted."""

        def load() -> None:
            import parasol_core.estimator.client  # noqa: F401

        self.worker.background(load)

    @property
    def busy(self) -> bool:
        return self.worker.pending > 0

    def current(self) -> ExportResult | None:
        """The last export, if it pushed the model on screen as it is now."""
        last, doc = self.last, self.document
        if last is not None and last.ok and (last.generation, last.revision) == (
                doc.generation, doc.revision):  # fmt: skip
            return last
        return None

    def export(self) -> bool:
        """Push now; False (and nothing done) while an export is under way."""
        if self.busy:
            return False
        self.document.commit_pending()  # "Ok is assumed": a value being typed goes too
        s = self.settings()
        doc = self.document
        text = doc.session.text()
        name = push_name(doc)
        file = str(doc.path) if doc.path else None
        pushed = {"title": doc.title(), "generation": doc.generation, "revision": doc.revision}
        url = s.url
        self.started.emit(url)
        log.info("exporting %s to the estimator at %s", name, url)

        def push() -> dict:
            with s.client() as client:
                return client.push(text, name=name)

        def then(answer: dict | None, error: BaseException | None) -> None:
            from parasol_core.estimator.client import EstimatorError, ModelRefused, naming

            result = ExportResult(url, name=name, **pushed)
            if isinstance(error, ModelRefused):
                result.error = f"the estimator at {url} refused the model: {error}"
                result.diagnostics = diagnostics_from(error.diagnostics, file)
            elif isinstance(error, EstimatorError):  # the address said once
                result.error = naming(url, "cannot export", error)
            elif isinstance(error, ValueError):
                result.error = f"cannot export: {error}"  # a URL that is not one
            elif error is not None:
                result.error = f"export to {url} failed: {type(error).__name__}: {error}"
            else:
                result.model = answer["model"]
                result.name = answer.get("name", name)
                result.diagnostics = diagnostics_from(answer.get("diagnostics", []), file)
            if result.generation == self.document.generation:
                self.last = result  # never the answer about a model no longer open
            if result.ok:
                log.info("exported %s to %s as model %s", result.name, url, result.model)
            else:
                log.error("%s", result.error)
            self.finished.emit(result)

        self.worker.run(push, then)
        return True

    def _changed(self, change: Change) -> None:
        if change.reason in (EDIT, UNDO, REDO) and change.fields and self.settings().auto:
            self._auto.start()  # a second after the last edit

    def call(self, method: Callable[[Client], Any],
             then: Callable[[Any, BaseException | None], None]) -> None:  # fmt: skip
        """Any estimator call off the GUI thread (the Estimate panel's)."""
        s = self.settings()

        def run() -> Any:
            with s.client() as client:
                return method(client)

        self.worker.run(run, then)
