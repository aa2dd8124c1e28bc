"""The estimator's faster forms of ``route.plot_many``: ``encoding`` (``json``,
``base64``, ``binary``) and ``fields``, against the core called directly, over a real
server process; the binary framing itself; and hostile binary bodies and params."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest
from estimator_support import SAMPLES, estimator, post_raw  # noqa: F401

from parasol_core.estimator import RemoteError
from parasol_core.estimator.binary import (
    BINARY_TYPE,
    Binary,
    ColumnRef,
    FramingError,
    columns_of,
    frame,
    narrow,
    split,
)
from parasol_core.estimator.protocol import INVALID_PARAMS, PARSE_ERROR
from parasol_core.syntax.loader import load
from parasol_core.topology.index import index_of
from parasol_core.topology.virtual import virtual_routes

GCEL = SAMPLES / "parsytec-gcel.machine"
TORUS = SAMPLES / "cray-t3d.machine"  # a 3D torus
GRID = SAMPLES / "grid4x4.machine"  # with two virtual topologies
COLUMNS = ("offsets", "processors", "link_offsets", "links")
ENCODINGS = ("json", "base64", "binary")


@pytest.fixture(scope="module")
def client(estimator):  # noqa: F811
    with estimator.client() as c:
        yield c


@pytest.fixture(scope="module")
def models(client):
    return {p.name: client.push(p.read_text())["model"] for p in (GCEL, TORUS, GRID)}


def _pairs(count: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, count + 1, size=(n, 2))


# --------------------------------------------------------------------------- the framing


def test_narrow_picks_the_smallest_dtype_that_holds_the_values() -> None:
    assert narrow(np.array([0, 32767, -32768])) == "<i2"
    assert narrow(np.array([0, 32768])) == "<i4"
    assert narrow(np.array([-(2**31)])) == "<i4"
    assert narrow(np.array([2**31])) == "<i8"
    assert narrow(np.array([], dtype=np.int64)) == "<i2"
    assert narrow(np.array([1, 2]), (0, 70000)) == "<i4"  # bounds instead of a scan


def test_a_framed_batch_splits_back_into_its_json_and_columns() -> None:
    a = np.array([1, 2, 3], dtype=np.int64)
    b = np.array([0, 40000, -5], dtype=np.int64)
    c = np.array([2**40, 7], dtype=np.int64)
    message = [
        {"jsonrpc": "2.0", "id": 1, "result": Binary({"x": "y"}, {"a": a, "b": b})},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}},
        {"jsonrpc": "2.0", "id": 3, "result": Binary({}, {"c": c, "e": a[:0]})},
    ]
    body = frame(message, orjson.dumps)
    text, attachment = split(bytes(body))
    assert (len(text) + 1) % 8 == 0  # the attachment starts 8-aligned
    answers = orjson.loads(text)
    assert answers[1]["error"]["code"] == -32602
    first = columns_of(answers[0]["result"], attachment)
    third = columns_of(answers[2]["result"], attachment)
    assert first["x"] == "y"
    assert first["a"].dtype == np.dtype("<i2") and first["a"].tolist() == a.tolist()
    assert first["b"].dtype == np.dtype("<i4") and first["b"].tolist() == b.tolist()
    assert third["c"].dtype == np.dtype("<i8") and third["c"].tolist() == c.tolist()
    assert third["e"].size == 0
    refs = [answers[0]["result"]["a"], answers[0]["result"]["b"], answers[2]["result"]["c"]]
    assert all(r["offset"] % 8 == 0 for r in refs)
    assert refs[2]["offset"] > refs[1]["offset"]  # the second answer's columns come after
    assert bytes(attachment[6:8]) == b"\0\0"  # padding is zeros, not leftover memory


def test_split_refuses_a_body_without_a_newline() -> None:
    with pytest.raises(FramingError):
        split(b'{"jsonrpc": "2.0"}')


@pytest.mark.parametrize(
    "spec",
    [{"dtype": "<f8", "offset": 0, "count": 1}, {"dtype": "<i4", "offset": -8, "count": 1},
     {"dtype": "<i4", "offset": 0, "count": 3}, {"dtype": "<i4", "offset": 4, "count": 2},
     {"dtype": "<i4", "offset": True, "count": 1}, {"dtype": "<i4", "offset": 0, "count": 1.5}],
)  # fmt: skip
def test_a_column_beyond_or_unlike_the_attachment_is_refused(spec) -> None:
    with pytest.raises(ValueError, match="'pairs'"):
        ColumnRef(memoryview(bytes(8)), spec).array("pairs")


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("sample", [GCEL, TORUS], ids=["gcel", "torus"])
def test_every_encoding_equals_the_core(client, models, sample) -> None:
    index = index_of(load(sample).hardware())
    pairs = _pairs(index.count, 3000, 11)
    batch = index.routes(pairs[:, 0], pairs[:, 1])
    mid = models[sample.name]
    as_json = client.plot_many(mid, pairs.tolist())
    for key in COLUMNS:
        assert as_json[key] == getattr(batch, key).tolist()
    for encoding in ("base64", "binary"):
        got = client.plot_many(mid, pairs, encoding=encoding)
        for key in COLUMNS:
            assert got[key].dtype == np.int64, (encoding, key)
            assert np.array_equal(got[key], getattr(batch, key)), (encoding, key)
        ids = [f"{got['route_prefix']}{a}-{b}" for a, b in pairs.tolist()]
        assert ids == as_json["routes"]


def test_binary_virtual_routes_equal_the_core(client, models) -> None:
    machine = load(GRID)
    mid = models[GRID.name]
    for virt in machine.virtuals:
        count = max(virt.mapping)
        pairs = _pairs(count, 500, virt.id)
        batch = virtual_routes(machine, virt.id, pairs[:, 0], pairs[:, 1])
        as_json = client.plot_many(mid, pairs.tolist(), virtual=virt.id)
        got = client.plot_many(mid, pairs, virtual=virt.id, encoding="binary")
        for key in COLUMNS:
            assert np.array_equal(got[key], getattr(batch, key)), (virt.id, key)
            assert got[key].tolist() == as_json[key]
        assert [f"{got['route_prefix']}{a}-{b}" for a, b in pairs.tolist()] == as_json["routes"]


def test_compact_means_binary_and_empty_batches_work(client, models) -> None:
    mid = models[GCEL.name]
    got = client.plot_many(mid, [[1, 2], [3, 3]], compact=True)
    assert got["offsets"].tolist() == [0, 2, 3]
    assert got["links"].tolist() == [1]
    for encoding in ENCODINGS:
        empty = client.plot_many(mid, [], encoding=encoding)
        assert len(empty["links"]) == 0 and list(empty["offsets"]) == [0]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fields_send_only_what_was_asked(client, models, encoding) -> None:
    index = index_of(load(GCEL).hardware())
    pairs = _pairs(index.count, 400, 5)
    batch = index.routes(pairs[:, 0], pairs[:, 1])
    mid = models[GCEL.name]
    expect = {
        "processors": {"offsets", "processors"},
        "links": {"link_offsets", "links"},
        "hops": {"hops"},
        "routes": {"routes" if encoding == "json" else "route_prefix"},
    }
    for fields in (["hops"], ["routes", "hops"], ["links"], ["processors", "routes"]):
        got = client.plot_many(mid, pairs, encoding=encoding, fields=fields)
        assert set(got) == set().union(*(expect[f] for f in fields)), (encoding, fields)
        for key in set(got) & {*COLUMNS, "hops"}:
            assert np.array_equal(np.asarray(got[key]), getattr(batch, key)), (encoding, key)


def _binary_request(request: object, attachment: bytes) -> bytes:
    text = json.dumps(request).encode()
    return text + b" " * (-(len(text) + 1) % 8) + b"\n" + attachment


def test_a_binary_batch_answers_each_member_with_its_own_columns(estimator, models) -> None:  # noqa: F811
    index = index_of(load(GCEL).hardware())
    mid = models[GCEL.name]
    first = np.array([[1, 512], [7, 7]], dtype="<i2")
    second = np.array([[300, 2]], dtype="<i4")
    attachment = first.tobytes() + second.tobytes()
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "route.plot_many", "params": {
            "model": mid, "encoding": "binary", "pairs": {"dtype": "<i2", "offset": 0, "count": 4}}},
        {"jsonrpc": "2.0", "id": 2, "method": "route.plot_many", "params": {
            "model": mid, "encoding": "binary", "pairs": {"dtype": "<i4", "offset": 8, "count": 2}}},
        {"jsonrpc": "2.0", "id": 3, "method": "route.plot_many", "params": {
            "model": mid, "pairs": {"dtype": "<i4", "offset": 8, "count": 200}}},
        {"jsonrpc": "2.0", "id": 4, "method": "route.plot_many", "params": {
            "model": mid, "pairs": {"dtype": "<i4", "offset": 8, "count": 2}}},
    ]  # fmt: skip
    status, body = post_raw(estimator, _binary_request(batch, attachment),
                            {"Content-Type": BINARY_TYPE})  # fmt: skip
    assert status == 200
    text, att = split(body)
    answers = {a["id"]: a for a in orjson.loads(text)}
    assert answers[3]["error"]["code"] == INVALID_PARAMS
    assert "beyond the attachment" in answers[3]["error"]["message"]
    assert answers[4]["result"]["links"] == index.routes([300], [2]).links.tolist()  # JSON
    for rid, pairs in ((1, first), (2, second)):
        got = columns_of(answers[rid]["result"], att)
        want = index.routes(pairs[:, 0].astype(int), pairs[:, 1].astype(int))
        for key in COLUMNS:
            assert got[key].tolist() == getattr(want, key).tolist(), (rid, key)


# --------------------------------------------------------------------------- hostile


@pytest.mark.parametrize(
    ("params", "says"),
    [({"fields": "links"}, "'fields' must be an array"),
     ({"fields": []}, "at least one"),
     ({"fields": ["links", "colour"]}, "'fields[1]' must be one of"),
     ({"fields": [7]}, "'fields[0]' must be one of"),
     ({"fields": ["hops", "hops"]}, "twice"),
     ({"encoding": "msgpack"}, "'encoding' must be one of"),
     ({"encoding": ["binary"]}, "'encoding' must be one of"),
     ({"pairs": {"dtype": "<i4", "offset": 0, "count": 2}}, "only in a binary request")],
)  # fmt: skip
def test_bad_fields_and_encodings_are_refused_readably(client, models, params, says) -> None:
    call = {"model": models[GCEL.name], "pairs": [[1, 2]]} | params
    with pytest.raises(RemoteError) as e:
        client.call("route.plot_many", **call)
    assert e.value.code == INVALID_PARAMS
    assert says in e.value.message
    assert client.ping()


def _post_binary(estimator, request: object, attachment: bytes) -> dict:  # noqa: F811
    status, body = post_raw(estimator, _binary_request(request, attachment),
                            {"Content-Type": BINARY_TYPE})  # fmt: skip
    assert status == 200, body[:200]
    return orjson.loads(body)  # an error: a plain JSON answer


@pytest.mark.parametrize(
    ("pairs", "attachment", "says"),
    [({"dtype": "<i4", "offset": 0, "count": 3}, bytes(12), "whole [src, dst] pairs"),
     ({"dtype": "<u4", "offset": 0, "count": 2}, bytes(8), "dtype must be one of"),
     ({"dtype": "<i4", "offset": 0, "count": 2**40}, bytes(8), "beyond the attachment"),
     ({"dtype": "<i4", "offset": 0, "count": 2}, bytes(8), "processor"),  # processor 0
     ({"dtype": "<i4", "offset": 0, "count": 2}, np.array([1, 99999], "<i4").tobytes(),
      "processor")],
)  # fmt: skip
def test_bad_binary_columns_are_refused(estimator, models, pairs, attachment, says) -> None:  # noqa: F811
    request = {"jsonrpc": "2.0", "id": 1, "method": "route.plot_many",
               "params": {"model": models[GCEL.name], "pairs": pairs, "encoding": "binary"}}  # fmt: skip
    answer = _post_binary(estimator, request, attachment)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert says in answer["error"]["message"]
    assert estimator.alive()


def test_a_column_where_no_array_belongs_is_refused(estimator) -> None:  # noqa: F811
    request = {"jsonrpc": "2.0", "id": 1, "method": "route.plot",
               "params": {"model": {"dtype": "<i4", "offset": 0, "count": 0}, "src": 1, "dst": 2}}  # fmt: skip
    answer = _post_binary(estimator, request, b"")
    assert answer["error"]["code"] == INVALID_PARAMS
    assert "'model' must be a string, not a binary column" in answer["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [b'{"jsonrpc": "2.0", "id": 1, "method": "server.ping"}',  # no newline
     b'{"jsonrpc": "2.0",\n "id": 1, "method": "server.ping"}\n',  # a newline in the JSON
     b"\n" + bytes(16), b"\xff\xfe\n"],
)  # fmt: skip
def test_a_malformed_binary_body_is_a_parse_error(estimator, body) -> None:  # noqa: F811
    status, answer = post_raw(estimator, body, {"Content-Type": BINARY_TYPE})
    assert status == 200
    assert orjson.loads(answer)["error"]["code"] == PARSE_ERROR
    assert estimator.alive()


def test_a_plain_request_in_the_binary_framing_gets_a_json_answer(estimator) -> None:  # noqa: F811
    request = {"jsonrpc": "2.0", "id": 9, "method": "server.ping"}
    status, body = post_raw(estimator, _binary_request(request, b""),
                            {"Content-Type": BINARY_TYPE})  # fmt: skip
    assert status == 200
    assert orjson.loads(body) == {"jsonrpc": "2.0", "id": 9, "result": True}


def test_a_big_json_part_in_the_binary_framing_is_parsed(estimator, models) -> None:  # noqa: F811
    # over 256 KiB of JSON before the newline: parsed off the event loop, from a view
    index = index_of(load(GCEL).hardware())
    pairs = _pairs(index.count, 30_000, 3)
    request = {"jsonrpc": "2.0", "id": 1, "method": "route.plot_many",
               "params": {"model": models[GCEL.name], "pairs": pairs.tolist(),
                          "encoding": "binary", "fields": ["hops"]}}  # fmt: skip
    body = _binary_request(request, b"")
    assert body.index(b"\n") > 256 * 1024
    status, answer = post_raw(estimator, body, {"Content-Type": BINARY_TYPE})
    assert status == 200
    text, attachment = split(answer)
    hops = columns_of(orjson.loads(text)["result"], attachment)["hops"]
    assert np.array_equal(hops, index.routes(pairs[:, 0], pairs[:, 1]).hops)
