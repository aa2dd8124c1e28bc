"""How every long-running command stops on a signal: one path for SIGINT, SIGTERM and
SIGHUP (Ctrl-C, ``kill``, a closed terminal or ssh session).

:func:`handled` catches the three for the block (the ``parasol-model`` command wraps
every subcommand in it). The first signal raises :class:`Interrupted` in the main
thread, wherever it is, so every ``finally`` and ``except BaseException`` on the way
does its cleaning: child processes are stopped (SIGTERM, then SIGKILL after a grace
period: :mod:`parasol_core.measure.toolchain`), temporary files and directories are
removed, and a file being replaced keeps its old text (the writer's temporary goes,
:func:`parasol_core.syntax.writer.write_text_atomic`). The command then exits with
128 + the signal (130, 143, 129), always. Signals after the first, while that cleaning
runs, are noted and not raised: a second Ctrl-C does not cut the cleaning short
(SIGKILL still ends the process).

Work that must not be cut anywhere (an MPI rank between two agreement points, where a
raise would leave its partner blocked in a send; a commit of several files) runs in
:func:`deferred`: a signal is only noted there, :func:`received` says which, and the
work stops at a point of its choosing; at the end of the block a noted signal raises
(unless the block says it has dealt with it). Threads that poll a cancel event (the
compiles of a measurement) are told through :func:`cancelling`.

Only the main thread can take signals: elsewhere :func:`handled` changes nothing.

A program that runs an event loop (the estimator's asyncio loop, PIUI's Qt loop) cannot
be interrupted anywhere: it stops through a :class:`Stop`, which records the first of
the same signals and asks the loop to end; the program shuts down in order and then
exits with :meth:`Stop.status`, 128 + the signal, as the commands do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a command: Ctrl-C, ``kill``, and a terminal or session that
closes."""

__all__ = [
    "SIGNALS",
    "Interrupted",
    "Stop",
    "cancelling",
    "deferred",
    "exit_status",
    "handled",
    "name_of",
    "received",
    "reinstall",
]


def name_of(signum: int) -> str:
    """``15`` -> ``"SIGTERM"``."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_status(signum: int) -> int:
    """The exit status of a command stopped by ``signum``: 128 + the signal."""
    return 128 + signum


class Interrupted(BaseException):
    """A signal stopped the command. A BaseException, as KeyboardInterrupt is: only the
    cleaning on the way (``finally``) and the command's top level see it."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {name_of(signum)}")
        self.signum = signum

    @property
    def status(self) -> int:
        return exit_status(self.signum)


class Stop:
    """A stop asked of an event loop by :data:`SIGNALS`. Called with the signal (as a
    handler, or by the loop's own signal handling: ``loop.add_signal_handler(sig, stop,
    sig)``), the first call records it and calls ``request`` (which asks the loop to end;
    it must return at once); later signals are noted only, so that a second Ctrl-C does
    not cut the shutdown short. After the shutdown the program exits with
    :meth:`status`."""

    def __init__(self, request: Callable[[], object]) -> None:
        self.request = request
        self.signum = 0  # the first signal received, 0 for none
        self._before: dict[int, object] = {}

    def __call__(self, signum: int, frame: object = None) -> None:
        if self.signum:
            return
        self.signum = signum
        self.request()

    def status(self, otherwise: int = 0) -> int:
        """128 + the signal that stopped the program, or ``otherwise`` when none did."""
        return exit_status(self.signum) if self.signum else otherwise

    def install(self) -> None:
        """Take :data:`SIGNALS` with Python handlers (for a loop that is not asyncio's:
        it must run Python soon after a signal, as PIUI's wake-up socket makes Qt do);
        :meth:`uninstall` puts the handlers before back. Only the main thread can."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            self._before[sig] = signal.signal(sig, self)

    def uninstall(self) -> None:
        for sig, old in self._before.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        self._before = {}


class _State:
    def __init__(self) -> None:
        self.installed = 0  # nesting depth of handled()
        self.signum = 0  # the first signal received, 0 for none
        self.raised = False  # Interrupted has been raised for it
        self.deferred = 0  # nesting depth of deferred()
        self.events: list[threading.Event] = []


_state = _State()


def _handler(signum: int, frame: object) -> None:
    if not _state.signum:
        _state.signum = signum
    for event in list(_state.events):
        event.set()
    if _state.deferred or _state.raised:
        return  # noted: the work stops where it chooses, or is cleaning up already
    _state.raised = True
    raise Interrupted(signum)


@contextmanager
def handled() -> Iterator[None]:
    """Catch :data:`SIGNALS` for the block (see the module); the handlers before it are
    put back after it. Nested blocks share the outer one's."""
    if _state.installed:
        _state.installed += 1
        try:
            yield
        finally:
            _state.installed -= 1
        return
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread takes signals: nothing to install
        return
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    _state.__init__()
    _state.installed = 1
    try:
        for sig in SIGNALS:
            signal.signal(sig, _handler)
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        _state.__init__()  # what this block received is its own: read it inside


def reinstall() -> None:
    """Put this module's handlers back in place inside :func:`handled`, after a library
    has put its own there (MPI's start-up takes SIGHUP: without this, a closed session
    would not stop a rank)."""
    if _state.installed and threading.current_thread() is threading.main_thread():
        for sig in SIGNALS:
            signal.signal(sig, _handler)


@contextmanager
def deferred(raise_at_end: bool = True) -> Iterator[None]:
    """Within the block a signal is only noted (:func:`received`); at its end a noted
    signal raises :class:`Interrupted`, unless ``raise_at_end`` is False (the block
    has acted on it, as the network measurement does at its agreement points). Signals
    interrupt the main thread only: in another thread the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state.deferred += 1
    try:
        yield
    finally:
        _state.deferred -= 1
    if raise_at_end and not _state.deferred and _state.signum and not _state.raised:
        _state.raised = True
        raise Interrupted(_state.signum)


def received() -> int:
    """The first signal received in the :func:`handled` block now running (0 for
    none, and outside one)."""
    return _state.signum


@contextmanager
def cancelling(event: threading.Event) -> Iterator[threading.Event]:
    """``event`` is set by a signal in the block (and at once if one came before): for
    work in other threads that polls a cancel event."""
    _state.events.append(event)
    if _state.signum:
        event.set()
    try:
        yield event
    finally:
        _state.events.remove(event)
