"""Hostile input: each case gets its exact error, and afterwards the server still answers,
other clients are not blocked, and the stored model is unchanged."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from estimator_support import (  # noqa: F401
    SAMPLES,
    Estimator,
    error_code,
    estimator,
    post_raw,
    rpc_raw,
)

from parasol_core.estimator.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNKNOWN_MODEL,
)

GCEL = SAMPLES / "parsytec-gcel.machine"
GRID = SAMPLES / "grid4x4.machine"


@pytest.fixture(scope="module")
def models(estimator):  # noqa: F811
    with estimator.client() as c:
        gcel = c.push(GCEL.read_text())["model"]
        grid = c.push(GRID.read_text())["model"]
    return {"gcel": gcel, "grid": grid}


@pytest.fixture(autouse=True)
def _unharmed(estimator, models):  # noqa: F811
    """After every case: the server answers and the stored models are as pushed."""
    yield
    assert estimator.alive()
    with estimator.client() as c:
        assert c.get(models["gcel"]) == GCEL.read_text()
        assert c.get(models["grid"]) == GRID.read_text()
    assert "Traceback" not in estimator.log()


def req(method: str, params: object = None, rid: object = 1) -> dict:
    out = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        out["params"] = params
    return out


def call_code(est, method: str, params: object) -> int:
    answer = rpc_raw(est, req(method, params))
    assert "Traceback" not in json.dumps(answer)
    return error_code(answer)


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"not json",
        b'{"jsonrpc": "2.0", "id": 1, "method": "server.ping"',
        b"\xff\xfe",
        b'{"a": "\\ud800"}',
        b"",
    ],  # fmt: skip
)
def test_malformed_json_is_a_parse_error(estimator, body) -> None:  # noqa: F811
    answer = rpc_raw(estimator, body)
    assert error_code(answer) == PARSE_ERROR
    assert answer["id"] is None


@pytest.mark.parametrize("body", [b"1", b'"x"', b"null", b"true", b'{"method": "server.ping"}',
                                  b'{"jsonrpc": "1.0", "id": 1, "method": "server.ping"}',
                                  b'{"jsonrpc": "2.0", "id": 1, "method": 5}',
                                  b'{"jsonrpc": "2.0", "id": 1.5, "method": "server.ping"}',
                                  b'{"jsonrpc": "2.0", "id": 1, "method": "server.ping", '
                                  b'"params": 3}', b"[]"])  # fmt: skip
def test_a_non_request_is_an_invalid_request(estimator, body) -> None:  # noqa: F811
    assert error_code(rpc_raw(estimator, body)) == INVALID_REQUEST


def test_unknown_methods(estimator) -> None:  # noqa: F811
    assert call_code(estimator, "no.such.method", {}) == METHOD_NOT_FOUND
    assert call_code(estimator, "__init__", {}) == METHOD_NOT_FOUND


def test_missing_extra_and_ill_typed_params(estimator, models) -> None:  # noqa: F811
    gcel = models["gcel"]
    cases = [
        ("route.plot", {"model": gcel, "src": 1}),  # missing
        ("route.plot", {"model": gcel, "src": 1, "dst": 2, "colour": "red"}),  # extra
        ("route.plot", {"model": gcel, "src": "1", "dst": 2}),
        ("route.plot", {"model": gcel, "src": 1.0, "dst": 2}),
        ("route.plot", {"model": gcel, "src": True, "dst": 2}),
        ("route.plot", {"model": gcel, "src": 2**40, "dst": 2}),
        ("route.plot", {"model": 5, "src": 1, "dst": 2}),
        ("route.plot", [gcel, 1, 2]),  # by position
        ("route.plot_many", {"model": gcel, "pairs": [[1, 2], [3]]}),
        ("route.plot_many", {"model": gcel, "pairs": [[1, 2], [3, "4"]]}),
        ("route.plot_many", {"model": gcel, "pairs": {"a": 1}}),
        ("route.plot_many", {"model": gcel, "pairs": [[1, 2**70]]}),
        ("model.push", {"text": 12}),
        ("model.push", {"text": "x", "name": ["n"]}),
        ("model.evaluate", {"model": gcel, "expression": None}),
        ("estimate.block", {"model": gcel, "processor": 1, "counts": [1]}),
        ("estimate.block", {"model": gcel, "processor": 1, "counts": {"iga": "many"}}),
        ("estimate.block", {"model": gcel, "processor": 1, "counts": {"iga": -1}}),
        ("estimate.block", {"model": gcel, "processor": 1, "counts": {}, "cached": "yes"}),
        ("network.transfer_times", {"model": gcel, "requests": [{"route": "x"}]}),
        ("server.info", {"verbose": True}),
    ]
    for method, params in cases:
        assert call_code(estimator, method, params) == INVALID_PARAMS, (method, params)


def test_batches_with_bad_members_answer_each_member(estimator, models) -> None:  # noqa: F811
    batch = [
        req("server.ping", rid=1),
        5,
        req("no.such", rid=2),
        {"jsonrpc": "2.0", "method": "server.ping"},  # a notification: no answer
        req("route.plot", {"model": models["gcel"], "src": 1, "dst": 2}, rid="three"),
        req("route.plot", {"model": models["gcel"], "src": 1}, rid=4),
        [req("server.ping", rid=5)],
    ]
    answers = rpc_raw(estimator, batch)
    assert isinstance(answers, list) and len(answers) == 6
    by_id = {a["id"]: a for a in answers if a["id"] is not None}
    assert by_id[1]["result"] is True
    assert by_id[2]["error"]["code"] == METHOD_NOT_FOUND
    assert by_id["three"]["result"]["processors"] == [1, 2]
    assert by_id[4]["error"]["code"] == INVALID_PARAMS
    nulls = [a for a in answers if a["id"] is None]
    assert [a["error"]["code"] for a in nulls] == [INVALID_REQUEST, INVALID_REQUEST]


def test_notifications_get_no_answer(estimator) -> None:  # noqa: F811
    status, body = post_raw(
        estimator, json.dumps({"jsonrpc": "2.0", "method": "server.ping"}).encode()
    )
    assert (status, body) == (204, b"")
    batch = [{"jsonrpc": "2.0", "method": "server.ping"}, {"jsonrpc": "2.0", "method": "nope"}]
    status, body = post_raw(estimator, json.dumps(batch).encode())
    assert (status, body) == (204, b"")


def test_a_body_over_the_limit_is_413(estimator) -> None:  # noqa: F811
    big = json.dumps(req("model.push", {"text": "#" * (5 * 1024 * 1024)})).encode()
    status, body = post_raw(estimator, big)
    assert status == 413
    assert json.loads(body)["error"]["code"] == INVALID_REQUEST


def test_the_wrong_content_type_is_415(estimator) -> None:  # noqa: F811
    status, _ = post_raw(estimator, b"{}", {"Content-Type": "text/plain"})
    assert status == 415


def test_a_slow_upload_times_out_and_does_not_block_others(estimator) -> None:  # noqa: F811
    with socket.create_connection(("127.0.0.1", estimator.port), timeout=10) as s:
        s.sendall(b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{\"jsonrpc\"")  # fmt: skip
        assert estimator.alive()  # others are answered meanwhile
        s.settimeout(60)  # only stops a test whose server never answers (it is 1.5 s)
        answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:100]


def test_route_ids_of_another_model(estimator, models) -> None:  # noqa: F811
    with estimator.client() as c:
        grid_route = c.plot(models["grid"], 1, 2)["route"]
        gcel_route = c.plot(models["gcel"], 1, 2)["route"]
    for params in [
        {"model": models["gcel"], "route": grid_route, "bytes": 10},
        {"model": models["gcel"], "route": gcel_route, "bytes": 10, "active": [grid_route]},
        {"model": models["gcel"], "route": "nonsense", "bytes": 10},
        {"model": models["gcel"], "route": gcel_route + "x", "bytes": 10},
        {"model": models["gcel"], "route": 17, "bytes": 10},
    ]:
        assert call_code(estimator, "network.transfer_time", params) == INVALID_PARAMS, params


def test_processors_that_do_not_exist(estimator, models) -> None:  # noqa: F811
    gcel = models["gcel"]
    for method, params in [
        ("route.plot", {"model": gcel, "src": 0, "dst": 2}),
        ("route.plot", {"model": gcel, "src": 1, "dst": 513}),
        ("route.plot", {"model": gcel, "src": -5, "dst": 2}),
        ("route.plot", {"model": models["grid"], "src": 1, "dst": 17, "virtual": 2}),
        ("route.plot", {"model": models["grid"], "src": 1, "dst": 2, "virtual": 99}),
        ("route.plot_many", {"model": gcel, "pairs": [[1, 2], [1, 600]]}),
        ("network.transfer_time", {"model": gcel, "route": f"{gcel[:8]}:1-999", "bytes": 1}),
        ("estimate.block", {"model": gcel, "processor": 42, "counts": {}}),
    ]:
        answer = rpc_raw(estimator, req(method, params))
        assert error_code(answer) == INVALID_PARAMS, (method, params)
        assert answer["error"]["message"]


def test_negative_huge_and_non_finite_bytes(estimator, models) -> None:  # noqa: F811
    gcel = models["gcel"]
    rid = f"{gcel[:8]}:1-2"
    for nbytes in [-1, -1e-9, 2.0**60, 10**30, "10", None]:
        params = {"model": gcel, "route": rid, "bytes": nbytes}
        assert call_code(estimator, "network.transfer_time", params) == INVALID_PARAMS, nbytes
    params = {"model": gcel, "requests": [{"route": rid, "bytes": -3}]}
    assert call_code(estimator, "network.transfer_times", params) == INVALID_PARAMS
    for literal in ["NaN", "Infinity", "-Infinity", "1e999"]:
        body = ('{"jsonrpc": "2.0", "id": 1, "method": "network.transfer_time", "params": '
                f'{{"model": "{gcel}", "route": "{rid}", "bytes": {literal}}}}}')  # fmt: skip
        assert error_code(rpc_raw(estimator, body)) == PARSE_ERROR, literal


def test_deeply_nested_json(estimator, models) -> None:  # noqa: F811
    deep = "[" * 100_000 + "]" * 100_000
    assert error_code(rpc_raw(estimator, deep)) == PARSE_ERROR
    body = '{"jsonrpc": "2.0", "id": 1, "method": "server.ping", "params": ' + deep + "}"
    assert error_code(rpc_raw(estimator, body)) == PARSE_ERROR
    # nested, but within the parser's limit: a param of the wrong shape
    nested = "[" * 500 + "]" * 500
    body = ('{"jsonrpc": "2.0", "id": 1, "method": "route.plot_many", "params": '
            f'{{"model": "{models["gcel"]}", "pairs": {nested}}}}}')  # fmt: skip
    assert error_code(rpc_raw(estimator, body)) == INVALID_PARAMS


def test_deeply_nested_expressions(estimator, models) -> None:  # noqa: F811
    for expression in ["(" * 50_000 + "1" + ")" * 50_000, "-" * 90_000 + "1", "1" + "+1" * 40_000]:
        params = {"model": models["grid"], "expression": expression}
        answer = rpc_raw(estimator, req("model.evaluate", params))
        if "result" in answer:  # a long flat sum is fine
            assert answer["result"] == 40_001
        else:
            assert error_code(answer) == INVALID_PARAMS, answer


def test_unknown_model_ids(estimator) -> None:  # noqa: F811
    for mid in ["0" * 32, "../../etc/passwd", ""]:
        assert call_code(estimator, "model.get", {"model": mid}) == UNKNOWN_MODEL
        assert call_code(estimator, "model.drop", {"model": mid}) == UNKNOWN_MODEL


# The "thousand concurrent connections" case, bounded: this opens 1,000 connections at
# once from a helper process (so the test's own file limit does not matter), sends a
# request on every one, reads every answer, and meanwhile checks that another client is
# answered. It takes a few seconds on two cores.
THOUSAND = r"""
import asyncio, json, sys, time
port = int(sys.argv[1])
async def one(i):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "server.ping"}).encode()
    w.write(b"POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await w.drain()
    head = await r.readuntil(b"\r\n\r\n")
    length = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
    data = json.loads(await r.readexactly(length))
    w.close()
    return data["id"] == i and data["result"] is True
async def main():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    results = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(1000))), 60)
    print(sum(results))
asyncio.run(main())
"""


def test_a_thousand_concurrent_connections(estimator) -> None:  # noqa: F811
    helper = subprocess.Popen([sys.executable, "-c", THOUSAND, str(estimator.port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert estimator.alive()  # answered while the thousand are under way
        out, err = helper.communicate(timeout=90)
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait(10)
    assert helper.returncode == 0, err
    assert out.strip() == "1000"
