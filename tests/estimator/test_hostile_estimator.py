"""Issue 26 at the estimator: underflow refused like overflow (rule 3), and every
refusal with its documented code and a true message (rule 4). The server is a real
process; after each case it still answers and the models pushed are unchanged."""

from __future__ import annotations

import json

import pytest
from estimator_support import (  # noqa: F401
    SAMPLES,
    error_code,
    estimator,
    rpc_raw,
)

from parasol_core.estimator.protocol import INVALID_PARAMS, PARSE_ERROR

GCEL = SAMPLES / "parsytec-gcel.machine"


@pytest.fixture(scope="module")
def gcel(estimator):  # noqa: F811
    with estimator.client() as c:
        return c.push(GCEL.read_text())["model"]


@pytest.fixture(autouse=True)
def _unharmed(estimator, gcel):  # noqa: F811
    yield
    assert estimator.alive()
    with estimator.client() as c:
        assert c.get(gcel) == GCEL.read_text()
    assert "Traceback" not in estimator.log()


def request(method: str, params: object) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def body_with(method: str, params_json: str) -> str:
    return f'{{"jsonrpc": "2.0", "id": 7, "method": "{method}", "params": {params_json}}}'


@pytest.mark.parametrize("literal", ["1e-400", "-1e-400", "1.2345678e-318", "0.1e-330"])
def test_a_json_number_that_underflows_is_a_parse_error_naming_it(estimator, gcel, literal):  # noqa: F811
    rid = f"{gcel[:8]}:1-2"
    for method, params in [
        ("network.transfer_time", f'{{"model": "{gcel}", "route": "{rid}", "bytes": {literal}}}'),
        ("model.evaluate", f'{{"model": "{gcel}", "expression": "ar.bytes", '
                           f'"args": {{"bytes": {literal}}}}}'),
        ("estimate.phase", f'{{"model": "{gcel}", "messages": '
                           f'[{{"src": 1, "dst": 2, "bytes": 1, "start": {literal}}}]}}'),
        ("estimate.block", f'{{"model": "{gcel}", "processor": 1, "counts": '
                           f'{{"iga": {literal}}}}}'),
    ]:  # fmt: skip
        answer = rpc_raw(estimator, body_with(method, params))
        assert error_code(answer) == PARSE_ERROR, (method, answer)
        assert f"'{literal}' is too small to represent" in answer["error"]["message"]


def test_underflow_inside_a_string_is_not_a_number(estimator, gcel):  # noqa: F811
    answer = rpc_raw(estimator, request("model.evaluate", {"model": gcel, "expression": "1e-4"}))
    assert answer["result"] == 1e-4
    answer = rpc_raw(estimator, request("model.latest", {"name": "1e-400"}))
    assert "1e-400" in answer["error"]["message"] and "too small" not in json.dumps(answer)


def test_a_pushed_model_with_a_number_that_underflows_is_refused(estimator):  # noqa: F811
    text = GCEL.read_text()
    assert "iga = " in text
    bad = text.replace("iga = ", "iga = 1e-400 # was ", 1)
    answer = rpc_raw(estimator, request("model.push", {"text": bad}))
    assert error_code(answer) == INVALID_PARAMS
    assert "'1e-400' is too small to represent" in answer["error"]["message"]


def test_params_as_an_array_are_refused_even_empty(estimator):  # noqa: F811
    for params in ([], [1]):
        answer = rpc_raw(estimator, request("server.ping", params))
        assert error_code(answer) == INVALID_PARAMS
        assert "params must be an object (by name), not an array" in answer["error"]["message"]
    answer = rpc_raw(estimator, request("server.ping", {}))
    assert answer["result"] is True


def test_a_phase_with_neither_messages_nor_pattern_says_so(estimator, gcel):  # noqa: F811
    answer = rpc_raw(estimator, request("estimate.phase", {"model": gcel}))
    assert error_code(answer) == INVALID_PARAMS
    message = answer["error"]["message"]
    assert "neither was given" in message and "not both" not in message
    answer = rpc_raw(estimator, request("estimate.phase", {"model": gcel, "pattern": "ring",
                                                           "bytes": 1, "messages": []}))  # fmt: skip
    assert "not both" in answer["error"]["message"]


def test_bytes_past_2_to_the_53_are_refused_with_exact_numbers(estimator, gcel):  # noqa: F811
    rid = f"{gcel[:8]}:1-2"
    answer = rpc_raw(estimator, request("network.transfer_time",
                                        {"model": gcel, "route": rid, "bytes": 2**53 + 1}))  # fmt: skip
    assert error_code(answer) == INVALID_PARAMS
    message = answer["error"]["message"]
    assert "must be between 0 and 9007199254740992, not 9007199254740993" in message


@pytest.mark.parametrize("name", ["a\x00b", "\x1b[31mred", "tab\x7f"])
def test_a_name_with_a_control_character_is_refused(estimator, name):  # noqa: F811
    answer = rpc_raw(estimator, request("model.push", {"text": GCEL.read_text(), "name": name}))
    assert error_code(answer) == INVALID_PARAMS
    assert "(a control character)" in answer["error"]["message"]
    answer = rpc_raw(estimator, request("model.latest", {"name": name}))
    assert error_code(answer) == INVALID_PARAMS
