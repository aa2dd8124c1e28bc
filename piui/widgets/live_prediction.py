"""A computation that follows the model as it is edited: off the GUI thread, one at a
time, cancelled and started again on each change, its last answer kept until the next
is ready.

``request(job)`` is called on the GUI thread with ``job(cancel) -> answer``, a callable
that holds everything it needs (a copy of the model made on the GUI thread: the model
itself is the GUI thread's) and that polls the ``threading.Event`` it is given where it
can (a replay polls it in its flow run, every few thousand events:
``parasol_core.replay.replay``'s ``cancel``). A request made while another runs sets
that one's event (it stops at its next poll, raising :data:`Cancelled`; a job that
polls nowhere runs out and its answer is dropped) and waits to run next, in the place
of any request that waited before it: a slider dragged across a hundred positions
starts the first position's replay, stops it at its next poll, and runs the last's to
its end, not a hundred. ``answered(answer, serial)`` brings the
answer of the latest request only; ``failed(error, serial)`` its exception; ``busy``
says whether a request is under way or waiting (the window shows "predicting…"). Each
job runs on a daemon thread of its own, one at a time, so that one under way never
holds up PIUI's exit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from parasol_core.base import budget

log = logging.getLogger("piui")


Cancelled = budget.Cancelled
"""What a job raises when it stops because a newer request replaced it (its event set):
the core's own (``parasol_core.base.budget``), which a replay under way raises part-way
(``replay(..., cancel=event)``), so that a drag runs no stale replay to its end."""


class LivePrediction(QObject):
    answered = Signal(object, int)  # answer, serial
    failed = Signal(object, int)  # exception, serial
    busyChanged = Signal(bool)
    _done = Signal(object, object, int)  # answer, exception, serial (from the worker)

    def __init__(self, parent: QObject | None = None, name: str = "piui-prediction") -> None:
        super().__init__(parent)
        self._name = name
        self._closed = False
        self.serial = 0  # requests made
        self.started = 0  # jobs started (a request replaced while waiting never starts)
        self.stopped = 0  # jobs that stopped part-way, raising Cancelled (replaced)
        self._running: tuple[int, threading.Event] | None = None
        self._waiting: tuple[int, Callable[[threading.Event], Any]] | None = None
        self._done.connect(self._finished)

    @property
    def busy(self) -> bool:
        return self._running is not None or self._waiting is not None

    def request(self, job: Callable[[threading.Event], Any]) -> int:
        """Run ``job`` as soon as the worker is free, cancelling the one under way."""
        was_busy = self.busy
        self.serial += 1
        self._waiting = (self.serial, job)
        if self._running is not None:
            self._running[1].set()
        else:
            self._start()
        if not was_busy:
            self.busyChanged.emit(True)
        return self.serial

    def cancel(self) -> None:
        """Drop what waits and stop what runs (another trace, another model)."""
        was_busy = self.busy
        self.serial += 1
        self._waiting = None
        if self._running is not None:
            self._running[1].set()
        elif was_busy:
            self.busyChanged.emit(False)

    def _start(self) -> None:
        serial, job = self._waiting
        self._waiting = None
        cancel = threading.Event()
        self._running = (serial, cancel)
        self.started += 1

        def run() -> None:
            try:
                answer, error = job(cancel), None
            except BaseException as e:  # delivered to the GUI thread, never lost
                answer, error = None, e
            if not self._closed:
                try:
                    self._done.emit(answer, error, serial)
                except RuntimeError:  # the window went meanwhile: nobody to tell
                    pass

        if self._closed:
            self._running = None
            return
        # a daemon thread a job: a replay under way never holds up PIUI's exit
        threading.Thread(target=run, name=self._name, daemon=True).start()

    def _finished(self, answer: object, error: BaseException | None, serial: int) -> None:
        self._running = None
        if isinstance(error, Cancelled):
            self.stopped += 1
        if self._waiting is not None:
            self._start()  # a newer request: this answer is of a model no longer shown
        elif serial == self.serial:
            if error is None:
                self.answered.emit(answer, serial)
            elif not isinstance(error, Cancelled):
                self.failed.emit(error, serial)
        if not self.busy:
            self.busyChanged.emit(False)

    def shutdown(self) -> None:
        """No more jobs; the one under way is told to stop and its answer dropped."""
        self.cancel()
        self._closed = True
