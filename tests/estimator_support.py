"""Starting a real `parasol-estimator serve` for the estimator tests (127.0.0.1 only).

Every wait is bounded; every process started is killed in teardown.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parasol_core.estimator import Client, EstimatorError

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_models"
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Estimator:
    """A server process on a free port, its store and its log."""

    def __init__(self, store: Path, *extra: str, token: str | None = None) -> None:
        self.store = store
        self.extra = extra
        self.token = token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = store.parent / f"estimator-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> Estimator:
        cmd = [sys.executable, "-m", "parasol_core.estimator.server", "serve",
               "--port", str(self.port), "--store", str(self.store), *self.extra]  # fmt: skip
        if self.token:
            cmd += ["--token", self.token]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("PARASOL_ESTIMATOR_TOKEN", None)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the estimator exited at start:\n{self.log()}")
            try:
                with Client(self.url, token=self.token, timeout=2) as c:
                    c.ping()
                return self
            except EstimatorError:
                time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"the estimator did not answer within {START_TIMEOUT} s:\n{self.log()}")

    def client(self, timeout: float = 20.0) -> Client:
        return Client(self.url, token=self.token, timeout=timeout)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        """The server still answers a request from a fresh client."""
        with self.client(timeout=10) as c:
            return c.ping() is True

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if getattr(self, "_log", None) is not None:
            self._log.close()
            self._log = None

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it has not stopped within 10 s; the exit status."""
        self.kill(signal.SIGTERM)
        return self.proc.returncode if self.proc is not None else None


def post_raw(est: Estimator, body: bytes, headers: dict | None = None,
             timeout: float = 20.0) -> tuple[int, bytes]:  # fmt: skip
    """POST bytes to /rpc; (HTTP status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", est.port, timeout=timeout)
    try:
        h = {"Content-Type": "application/json"}
        if est.token:
            h["Authorization"] = f"Bearer {est.token}"
        h.update(headers or {})
        conn.request("POST", "/rpc", body, h)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def rpc_raw(est: Estimator, body: bytes | str | object) -> object:
    """POST a request (bytes, text, or an object to encode); the decoded answer."""
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    status, data = post_raw(est, body)
    assert status == 200, (status, data[:200])
    return json.loads(data)


def error_code(answer: object) -> int:
    assert isinstance(answer, dict) and "error" in answer, answer
    return answer["error"]["code"]


@pytest.fixture(scope="module")
def estimator(tmp_path_factory):
    """A server for the module: 4 MiB body limit, 1.5 s body timeout."""
    store = tmp_path_factory.mktemp("store") / "models"
    est = Estimator(store, "--max-body", str(4 * 1024 * 1024), "--body-timeout", "1.5")
    est.start()
    yield est
    est.kill()
