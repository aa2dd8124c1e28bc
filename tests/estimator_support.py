"""Starting a real `parasol-estimator serve` for the estimator tests (127.0.0.1 only).

Every wait is bounded; every process started is killed in teardown.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
from pathlib import Path

import pytest

from parasol_core.estimator import Client
from parasol_core.estimator.local import LocalEstimator

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_models"
START_TIMEOUT = 30.0


class Estimator(LocalEstimator):
    """A server process on a free port (PIUI's own :class:`LocalEstimator`), its store
    and its log, with what the tests need besides: a client, a liveness check, a kill
    by any signal and the exit status."""

    def __init__(self, store: Path, *extra: str, token: str | None = None) -> None:
        super().__init__(store, token=token, extra=extra)

    def start(self, timeout: float = START_TIMEOUT) -> Estimator:
        super().start(timeout)
        return self

    def client(self, timeout: float = 20.0) -> Client:
        return Client(self.url, token=self.token, timeout=timeout)

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

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL if it has not stopped within 10 s; the exit status."""
        super().stop(timeout)
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
