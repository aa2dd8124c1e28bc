"""The estimator under load and protocol (issue 35, item 7): who a client is on loopback,
what an honest client is guaranteed while others flood the server, connections capped
below the descriptor limit, a log that a flood cannot fill, and a batch over its budget
answered as JSON-RPC 2.0 answers a valid batch: an array, one response per request."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from aiohttp.test_utils import make_mocked_request
from estimator_support import Estimator, rpc_raw

from parasol_core.estimator.protocol import INVALID_PARAMS, INVALID_REQUEST
from parasol_core.estimator.scheduler import Scheduler
from parasol_core.estimator.server import RateLimit, client_of, connection_cap

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "sample_models" / "grid4x4.machine"


# --------------------------------------------------------------------------- who a client is


def request_from(host: str, port: int):
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (
        (host, port) if name == "peername" else default
    )
    return make_mocked_request("POST", "/rpc", transport=transport)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "127.0.0.53"])
def test_each_local_connection_is_a_client_of_its_own(host) -> None:
    """Every program on loopback has the same address; counted by it, 50 local programs
    were one client sharing two workers, and an honest one's push timed out."""
    a, b = client_of(request_from(host, 50001)), client_of(request_from(host, 50002))
    assert a != b
    assert client_of(request_from(host, 50001)) == a  # the same connection: the same client


@pytest.mark.parametrize("host", ["192.0.2.7", "2001:db8::1"])
def test_a_remote_client_is_its_address_whatever_its_connections(host) -> None:
    """Away from loopback, opening more connections gives no more share."""
    assert client_of(request_from(host, 50001)) == client_of(request_from(host, 50002)) == host


# --------------------------------------------------------------------------- the guarantee


def test_an_honest_client_runs_next_when_a_worker_frees_while_ten_others_flood() -> None:
    """docs/estimator.md, "Under load": among the waiting, a client with no call running
    that has not been served since the others were goes first, whatever arrived first;
    so it waits at most until one running call ends. Ten clients, each served once
    already, keep three calls each queued on two workers; the honest call, queued last,
    starts as soon as one of the two running calls ends."""
    started: list[str] = []
    gates: dict[str, threading.Event] = {}
    lock = threading.Lock()

    def job(name: str):
        gates[name] = threading.Event()

        def run() -> str:
            with lock:
                started.append(name)
            gates[name].wait(10)
            return name

        return run

    async def until(count: int) -> None:
        for _ in range(2000):
            if len(started) >= count:
                return
            await asyncio.sleep(0.005)
        raise AssertionError(f"only {started} started")

    async def scenario() -> None:
        lane = Scheduler(workers=2, per_client=2, name="test-load")
        try:
            for c in range(10):  # the flood has been going on: each client served once
                done = asyncio.create_task(lane.run(job(f"warm{c}"), client=f"flood{c}",
                                                    request_id=("warm", c)))  # fmt: skip
                await until(len(started) + 1)
                gates[f"warm{c}"].set()
                await done
            calls = [
                asyncio.create_task(
                    lane.run(job(f"flood{c}.{i}"), client=f"flood{c}", request_id=(c, i))
                )
                for c in range(10)
                for i in range(3)
            ]
            await until(12)  # two flood calls hold both workers
            honest = asyncio.create_task(lane.run(job("honest"), client="honest", request_id="h"))
            await asyncio.sleep(0.05)  # queued behind 28 flood calls
            assert "honest" not in started
            gates[started[-1]].set()  # one running call ends
            await until(13)
            assert started[12] == "honest", started[10:]
            for gate in gates.values():
                gate.set()
            await asyncio.gather(honest, *calls)
        finally:
            for gate in gates.values():
                gate.set()
            lane.shutdown()

    asyncio.run(scenario())
    assert len(started) == 41


# --------------------------------------------------------------------------- connections


def test_the_cap_stays_below_the_descriptor_limit() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_cap(10) == min(10, soft - 256) or soft - 256 < 1
    assert connection_cap(10**9) < soft


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends before it closes (bounded by the socket timeout)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.fixture
def capped(tmp_path):
    est = Estimator(tmp_path / "models", "--max-connections", "3", "--idle-timeout", "30")
    est.start()
    yield est
    est.kill()


def _ping_ok(est: Estimator) -> bool:
    try:
        answer = rpc_raw(est, {"jsonrpc": "2.0", "id": 1, "method": "server.ping"})
    except (AssertionError, OSError, json.JSONDecodeError):
        return False
    return answer.get("result") is True


def test_connections_past_the_cap_are_answered_503_and_closed(capped) -> None:
    """21,000 idle connections from two clients took every descriptor; now the server
    holds at most --max-connections, refuses the rest at once, and serves again as soon
    as one closes."""
    idle = [_connect(capped.port) for _ in range(3)]
    try:
        time.sleep(0.2)  # all three accepted (accepts are in arrival order anyway)
        extra = _connect(capped.port)
        answer = _answer(extra)
        extra.close()
        assert answer.startswith(b"HTTP/1.1 503"), answer[:100]
        assert b"too many connections" in answer
    finally:
        for sock in idle:
            sock.close()
    for _ in range(200):  # the closed connections are let go: a new one is served
        if _ping_ok(capped):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"no request served after the connections closed:\n{capped.log()}")
    assert "Traceback" not in capped.log()


def test_a_flood_of_refused_connections_costs_the_log_a_few_lines(capped) -> None:
    idle = [_connect(capped.port) for _ in range(3)]
    try:
        time.sleep(0.2)  # all three accepted
        for _ in range(300):
            sock = _connect(capped.port)
            _answer(sock)
            sock.close()
    finally:
        for sock in idle:
            sock.close()
    lines = [line for line in capped.log().splitlines() if "connection refused" in line]
    assert 1 <= len(lines) <= RateLimit().burst, len(lines)


def test_the_log_limit_counts_what_it_leaves_out() -> None:
    now = [0.0]
    limit = RateLimit(burst=3, seconds=10.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("parasol.estimator", logging.WARNING, __file__, 1, msg, None,
                                 None)  # fmt: skip

    kept = [limit.filter(record("refused %d")) for _ in range(10)]
    assert kept == [True] * 3 + [False] * 7
    assert limit.filter(record("another kind"))  # kinds are counted apart
    now[0] = 10.5
    later = record("refused %d")
    assert limit.filter(later)
    assert later.msg == "refused %d (7 more like this left out)"
    access = logging.LogRecord("parasol.estimator", logging.INFO, __file__, 1, "rpc %s", None, None)
    assert all(limit.filter(access) for _ in range(100))  # one line per call, always


# --------------------------------------------------------------------------- batches


@pytest.fixture
def small_batches(tmp_path):
    est = Estimator(tmp_path / "models", "--batch-work", "300").start()
    with est.client() as c:
        est.grid = c.push(GRID.read_text())["model"]  # type: ignore[attr-defined]
    yield est
    est.kill()


def test_a_batch_over_its_budget_gets_one_refusal_per_request(small_batches) -> None:
    """A JSON-RPC 2.0 batch is answered by an array, one response per request: refused
    for its work, each request gets -32602 with its own id; a notification gets nothing;
    a member that is no request gets -32600, as it would in any batch."""
    phase = {"model": small_batches.grid, "pattern": "alltoall", "bytes": 64}  # 240 messages
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "estimate.phase", "params": phase},
        {"jsonrpc": "2.0", "method": "estimate.phase", "params": phase},
        {"jsonrpc": "2.0", "id": 7, "method": "estimate.phase", "params": phase},
        {"jsonrpc": "2.0", "id": 3, "method": 5},
    ]
    answer = rpc_raw(small_batches, batch)
    assert isinstance(answer, list), answer
    assert [(a["id"], a["error"]["code"]) for a in answer] == [
        ("a", INVALID_PARAMS), (7, INVALID_PARAMS), (None, INVALID_REQUEST)
    ]  # fmt: skip
    assert "over the batch budget of 300" in answer[0]["error"]["message"]
    assert "720" in answer[0]["error"]["message"]
    # under the budget the same batch shape runs
    answer = rpc_raw(small_batches, batch[:1] + [{"jsonrpc": "2.0", "id": 2,
                                                  "method": "server.ping"}])  # fmt: skip
    assert [a["id"] for a in answer] == ["a", 2]
    assert "result" in answer[0] and answer[1]["result"] is True
