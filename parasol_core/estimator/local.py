"""Start a private estimator for this user: a child process on a free loopback port.

PIUI's Preferences offer this, so that Export works without setting anything up; the
tests use it too. The process is stopped with :meth:`LocalEstimator.stop` (PIUI does
so when it exits). Every wait is bounded.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from parasol_core.estimator.client import Client, EstimatorError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child, before it runs: on Linux, have the kernel stop it when the process
    that started it dies, however that happens (a crash, kill -9), so that no private
    estimator is ever left behind."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


class LocalEstimator:
    """``LocalEstimator().start()`` -> an estimator answering at ``.url``. ``extra``:
    more ``serve`` arguments (say ``["--max-body", "4096"]``)."""

    def __init__(
        self, store: Path | None = None, token: str | None = None, extra: Sequence[str] = ()
    ) -> None:
        self._tmp = None
        if store is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="piui-estimator-")
            store = Path(self._tmp.name) / "models"
        self.store = store
        self.token = token
        self.extra = tuple(extra)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = Path(store).parent / f"estimator-{self.port}.log"

    def start(self, timeout: float = 30.0) -> LocalEstimator:
        """Start it and wait until it answers; RuntimeError (with its log) if it does not."""
        cmd = [sys.executable, "-m", "parasol_core.estimator.server", "serve",
               "--port", str(self.port), "--store", str(self.store), *self.extra]  # fmt: skip
        if self.token:
            cmd += ["--token", self.token]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child writes to it
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # its token is the one given here, not one the user's environment happens to set
        env.pop("PARASOL_ESTIMATOR_TOKEN", None)
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the estimator stopped at start:\n{self.log()}")
            try:
                with Client(self.url, token=self.token, timeout=2) as client:
                    client.ping()
                return self
            except EstimatorError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the estimator did not answer within {timeout:g} s:\n{self.log()}")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """Stop it (SIGTERM, then SIGKILL after ``timeout``) and remove a private store."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
