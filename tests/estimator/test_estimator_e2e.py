"""The estimator end to end: a real server process, the client, and the numbers checked
against the core called directly."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from estimator_support import SAMPLES, estimator  # noqa: F401

from parasol_core.analysis.block_time import estimate_block
from parasol_core.estimator import (
    PROTOCOL_VERSION,
    EstimatorUnreachable,
    ModelRefused,
    RemoteError,
    UnknownModel,
    routes_of,
)
from parasol_core.estimator.local import free_port
from parasol_core.estimator.protocol import EVALUATION_FAILED, INVALID_PARAMS, UNKNOWN_MODEL
from parasol_core.estimator.store import model_id
from parasol_core.expr.engine import Engine
from parasol_core.syntax.loader import load, loads
from parasol_core.topology.index import index_of, route, routes
from parasol_core.topology.transfer import RouteTable
from parasol_core.topology.virtual import virtual_route

SAMPLE_FILES = sorted(SAMPLES.glob("*.machine"))
GCEL = SAMPLES / "parsytec-gcel.machine"
GRID = SAMPLES / "grid4x4.machine"


def read(path) -> str:
    return path.read_bytes().decode("utf-8")


@pytest.fixture(scope="module")
def client(estimator):  # noqa: F811
    with estimator.client() as c:
        yield c


@pytest.fixture(scope="module")
def pushed(client):
    """Every sample pushed once: file name -> model id."""
    return {p.name: client.push(read(p), name=p.stem)["model"] for p in SAMPLE_FILES}


def test_server_info_gives_the_protocol_version(client) -> None:
    info = client.info()
    assert info["protocol"] == PROTOCOL_VERSION
    assert info["uptime"] >= 0
    assert "route.plot" in info["methods"]


def test_push_gives_a_content_id_and_get_returns_the_text_byte_for_byte(client, pushed) -> None:
    for path in SAMPLE_FILES:
        text = read(path)
        mid = pushed[path.name]
        assert mid == model_id(text)
        assert client.push(text)["model"] == mid  # the same text, the same id
        assert client.get(mid) == text
        assert client.latest(path.stem) == mid
    listed = {m["model"]: m for m in client.list()}
    assert set(pushed.values()) <= set(listed)
    assert listed[pushed[GCEL.name]]["size"] == GCEL.stat().st_size


def test_a_second_push_under_a_name_becomes_its_latest(client) -> None:
    first = client.push(read(GRID), name="moving")["model"]
    changed = read(GRID) + "# another version\n"
    second = client.push(changed, name="moving")["model"]
    assert first != second
    assert client.latest("moving") == second
    assert client.drop(second) is True
    assert client.latest("moving") == first
    with pytest.raises(UnknownModel):
        client.get(second)
    with pytest.raises(UnknownModel):
        client.drop(second)
    with pytest.raises(UnknownModel):
        client.latest("never pushed")


def test_a_model_with_a_syntax_error_is_refused_with_line_and_column(client) -> None:
    before = client.list()
    text = read(GRID).replace("begin topology", "begin topolgy", 1)
    with pytest.raises(ModelRefused) as e:
        client.push(text, name="broken")
    assert e.value.code == INVALID_PARAMS
    (d,) = e.value.diagnostics
    assert d["severity"] == "error" and d["line"] > 1 and d["column"] >= 1
    assert client.list() == before
    with pytest.raises(UnknownModel):
        client.latest("broken")


def test_a_model_with_a_semantic_error_is_refused_and_stored_nowhere(client) -> None:
    before = client.list()
    text = read(GRID).replace('routing = "XY"', 'routing = "NoSuchRouting"', 1)
    assert "NoSuchRouting" in text
    with pytest.raises(ModelRefused) as e:
        client.push(text)
    errors = [d for d in e.value.diagnostics if d["severity"] == "error"]
    assert errors and all(d["line"] for d in errors)
    assert "NoSuchRouting" in e.value.message
    assert client.list() == before
    with pytest.raises(UnknownModel):
        client.get(model_id(text))


def test_warnings_come_back_with_the_acknowledgement(client) -> None:
    text = "".join(read(GRID).rsplit("end machine", 1))
    assert loads(text) is not None
    answer = client.push(text)
    assert [d["severity"] for d in answer["diagnostics"]] == ["warning"]
    assert answer["diagnostics"][0]["line"]
    client.drop(answer["model"])


def test_routes_match_the_core(client, pushed) -> None:
    machine = load(GCEL)
    hw = machine.hardware()
    mid = pushed[GCEL.name]
    for src, dst in [(1, 512), (17, 3), (300, 300), (512, 1)]:
        answer = client.plot(mid, src, dst)
        r = route(hw, src, dst)
        assert answer["processors"] == list(r.processors)
        assert answer["links"] == list(r.links)
        assert answer["route"].startswith(mid[:8])


def test_virtual_routes_match_the_core(client, pushed) -> None:
    machine = load(GRID)
    mid = pushed[GRID.name]
    for virt in (2, 3):
        for src, dst in [(1, 16), (5, 2)]:
            answer = client.plot(mid, src, dst, virtual=virt)
            r = virtual_route(machine, virt, src, dst)
            assert (answer["processors"], answer["links"]) == (list(r.processors), list(r.links))
        many = routes_of(client.plot_many(mid, [[1, 16], [5, 2]], virtual=virt))
        assert [m["links"] for m in many] == [
            list(virtual_route(machine, virt, 1, 16).links),
            list(virtual_route(machine, virt, 5, 2).links),
        ]


def test_plot_many_matches_the_core_and_plot(client, pushed) -> None:
    hw = load(GCEL).hardware()
    mid = pushed[GCEL.name]
    rng = np.random.default_rng(7)
    pairs = rng.integers(1, 513, size=(2000, 2))
    result = client.plot_many(mid, pairs.tolist())
    batch = routes(hw, pairs[:, 0], pairs[:, 1])
    got = routes_of(result)
    assert len(got) == 2000
    for i in (0, 1, 999, 1999):
        assert got[i]["processors"] == list(batch[i].processors)
        assert got[i]["links"] == list(batch[i].links)
        single = client.plot(mid, int(pairs[i, 0]), int(pairs[i, 1]))
        assert single["route"] == got[i]["route"]
    assert client.plot_many(mid, [])["routes"] == []
    compact = client.plot_many(mid, pairs, compact=True)  # a compact form (binary)
    for key in ("offsets", "processors", "link_offsets", "links"):
        assert compact[key].tolist() == result[key]
    ids = [f"{compact['route_prefix']}{a}-{b}" for a, b in pairs.tolist()]
    assert ids == result["routes"]
    assert client.plot_many(mid, [], compact=True)["links"].size == 0


@pytest.mark.parametrize(
    "pairs",
    [{"dtype": "<i8", "data": "not base64!"}, {"dtype": "<f8", "data": ""},
     {"dtype": "<i8", "data": "AAAA"}, {"dtype": "<i8"}, {"dtype": "<i8", "data": 5}],
)  # fmt: skip
def test_bad_compact_pairs_are_refused(client, pushed, pairs) -> None:
    with pytest.raises(RemoteError) as e:
        client.call("route.plot_many", model=pushed[GCEL.name], pairs=pairs)
    assert e.value.code == INVALID_PARAMS
    with pytest.raises(RemoteError) as e:
        client.call("route.plot_many", model=pushed[GCEL.name], pairs=[[1, 2]], encoding="xml")
    assert e.value.code == INVALID_PARAMS
    assert client.ping()


def test_transfer_times_match_the_core(client, pushed) -> None:
    machine = load(GCEL)
    mid = pushed[GCEL.name]
    msgs = [(1, 512), (2, 500), (17, 400), (1, 512)]
    rids = [client.plot(mid, s, d)["route"] for s, d in msgs]
    table = RouteTable.for_machine(machine)
    ids = [table.add(s, d) for s, d in msgs]
    # the asked route not in `active`: it is added once
    got = client.transfer_time(mid, rids[0], 4096, rids[1:3])
    assert got == pytest.approx(table.transfer_time(ids[0], ids[1:3], 4096), rel=1e-12)
    # listed in `active`: still counted once
    assert client.transfer_time(mid, rids[0], 4096, rids[0:3]) == got
    # listed twice (two messages on the same route): counted twice
    twice = client.transfer_time(mid, rids[0], 4096, rids)
    assert twice == pytest.approx(table.transfer_time(ids[0], ids[1:], 4096), rel=1e-12)
    assert twice > got
    # the batch form, against the core one by one
    requests = [(rids[0], 100), (rids[2], 0), (client.plot(mid, 5, 6)["route"], 1e6)]
    batch = client.transfer_times(mid, requests, rids[1:3])
    extra = table.add(5, 6)
    expect = [
        table.transfer_time(ids[0], ids[1:3], 100),
        table.transfer_time(ids[2], [ids[1]], 0),
        table.transfer_time(extra, ids[1:3], 1e6),
    ]
    assert batch == pytest.approx(expect, rel=1e-12)
    # a message alone: latency + bytes * the slowest link
    alone = client.transfer_time(mid, rids[0], 1000)
    idx = index_of(machine.hardware())
    r = route(machine.hardware(), 1, 512)
    slots = [idx.slot_of[lid] for lid in r.links]
    assert alone == pytest.approx(idx.latency[slots].sum() + 1000 * idx.speed[slots].max())


def test_evaluate_matches_the_engine(client, pushed) -> None:
    mid = pushed[GRID.name]
    engine = Engine(load(GRID))
    for expr in ["1 + 2 * 3", "7 / 2", "pt(1).iga", "tl(1)(1).speed * 1e6"]:
        assert client.evaluate(mid, expr) == engine.evaluate_text(expr, runtime=True)
    for expr, args in [("ar.bytes * 2", {"bytes": 10}), ("ar.procs", None)]:
        assert client.evaluate(mid, expr, args) == engine.evaluate_text(expr, True, args)
    with pytest.raises(RemoteError) as e:
        client.evaluate(mid, "1 / 0")
    assert e.value.code == EVALUATION_FAILED
    with pytest.raises(RemoteError) as e:
        client.evaluate(mid, "1 +* 2")
    assert e.value.code == INVALID_PARAMS and e.value.data["diagnostics"][0]["column"]
    with pytest.raises(RemoteError) as e:
        client.evaluate(mid, "ar.bytes", {"color": 1})
    assert e.value.code == INVALID_PARAMS


def test_block_estimates_match_the_core(client, pushed) -> None:
    machine = load(GRID)
    mid = pushed[GRID.name]
    proc = machine.processors[0]
    names = sorted(proc.timings)[:5]
    counts = {n: i + 1 for i, n in enumerate(names)}
    for cached in (False, True):
        try:
            expect = estimate_block(machine, proc.id, counts, cached)
        except ValueError:
            continue
        got = client.block(mid, proc.id, counts, cached)
        assert got["mean"] == pytest.approx(expect.mean, rel=1e-12)
        assert got["sd"] == pytest.approx(expect.sd, rel=1e-12)
    with pytest.raises(RemoteError) as e:
        client.block(mid, 999, counts)
    assert e.value.code == INVALID_PARAMS and "999" in e.value.message
    # a loop-carried chain (docs/measure.md, "Chains"): the larger bound, as the core says
    chain = {names[0]: 1000}
    expect = estimate_block(machine, proc.id, counts, chains=[chain])
    got = client.block(mid, proc.id, counts, chains=[chain])
    assert got["mean"] == pytest.approx(expect.mean, rel=1e-12) and got["bound"] == "chain"
    assert got["chain_at"] == "timing" and got["throughput"] < got["chain"]
    with pytest.raises(RemoteError) as e:
        client.block(mid, proc.id, counts, chains=[{"xyz": 1}])
    assert e.value.code == INVALID_PARAMS and "xyz" in e.value.message


def test_a_measured_models_block_is_answered_as_the_command_answers_it(client, pushed,
                                                                      capsys) -> None:  # fmt: skip
    """The interval the time lies in (issue 34's honest uncertainty) and the memory level
    of a working set: the estimator gives what `parasol-model block` prints, both from
    the core's answer_block."""
    from parasol_core.analysis.block_time import answer_block, read_validation_ratios
    from parasol_core.cli import main

    path = SAMPLES / "amd-epyc-host.machine"
    mid = pushed[path.name]
    counts, chains, ws = {"dla": 1000, "arr1": 2000, "dln": 1000}, [{"dla": 1000}], 8 << 20
    answer = answer_block(load(path), 1, counts, working_set=ws, chains=chains)
    got = client.block(mid, 1, counts, chains=chains, working_set=ws)
    assert got["mean"] == answer.estimate.mean and got["sd"] == answer.estimate.sd
    assert got["interval"] == [answer.low, answer.high] and answer.low < answer.high
    lo, hi = read_validation_ratios(path.read_text())
    assert (
        f"the validation's ratios predicted / measured {lo:.3g} .. {hi:.3g}" in got["interval_from"]
    )
    assert got["level"] == "L3" and got["array_extra"] == answer.estimate.array_extra
    assert main(["block", str(path), "--processor", "1", json.dumps(counts), "--working-set",
                 str(ws), "--chain", "dla=1000"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"interval: {answer.low:.4g} .. {answer.high:.4g} ({got['interval_from']})\n" in out
    assert f"memory level: {got['level_words']}\n" in out
    # a chain begun afresh: overlapped by the sample's measured chain window, as the core says
    restarted = [{"dla": 4096, "starts": 64}]
    answer = answer_block(load(path), 1, counts, chains=restarted)
    got = client.block(mid, 1, counts, chains=restarted)
    assert got["chain_at_once"] == answer.estimate.chain_at_once > 1.2
    assert got["chain"] == answer.estimate.chain_bound
    assert (
        got["bound_words"] == answer.bound_words() and "of its runs at once" in got["bound_words"]
    )
    assert client.block(mid, 1, counts, chains=chains)["chain_at_once"] == 1.0
    with pytest.raises(RemoteError) as e:
        client.block(mid, 1, counts, chains=[{"dla": 10, "starts": 11}])
    assert e.value.code == INVALID_PARAMS and "'starts'" in e.value.message
    # without a working set, no level; a working set of the wrong kind is refused
    assert "level" not in client.block(mid, 1, counts)
    for bad in (-1, 1.5, "8M", 2**62 + 1):
        with pytest.raises(RemoteError) as e:
            client.block(mid, 1, counts, working_set=bad)
        assert e.value.code == INVALID_PARAMS and "working_set" in e.value.message
    # a model that records no validation says so in the interval's words
    some = sorted(load(GRID).processors[0].timings)[0]
    plain = client.block(pushed[GRID.name], 1, {some: 4})
    assert "the model records no validation" in plain["interval_from"]


def test_unknown_models_are_their_own_error(client) -> None:
    with pytest.raises(UnknownModel) as e:
        client.plot("0" * 32, 1, 2)
    assert e.value.code == UNKNOWN_MODEL


# --------------------------------------------------------------------------- the commands


MODEL_CLI = (sys.executable, "-c", "import sys; from parasol_core.cli import main; "
             "sys.exit(main(sys.argv[1:]))")  # fmt: skip


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def test_push_command_prints_the_id(estimator) -> None:  # noqa: F811
    p = run(*MODEL_CLI, "push", str(GRID), "--url",
            estimator.url, "--name", "from-cli")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == model_id(read(GRID))
    with estimator.client() as c:
        assert c.latest("from-cli") == p.stdout.strip()


def test_push_command_exits_1_with_the_diagnostics_when_refused(estimator, tmp_path) -> None:  # noqa: F811
    bad = tmp_path / "bad.machine"
    bad.write_text(read(GRID).replace('routing = "XY"', 'routing = "Nowhere"', 1))
    p = run(*MODEL_CLI, "push", str(bad), "--url", estimator.url)
    assert p.returncode == 1
    assert "refused" in p.stderr and "Nowhere" in p.stderr
    assert f"{bad}:" in p.stderr


def test_push_command_exits_2_when_nothing_answers() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    p = run(*MODEL_CLI, "push", str(GRID), "--url", url)
    assert p.returncode == 2
    assert url in p.stderr


def test_the_client_says_when_nothing_answers() -> None:
    from parasol_core.estimator import Client

    with pytest.raises(EstimatorUnreachable) as e, Client(f"http://127.0.0.1:{free_port()}") as c:
        c.info()
    assert "127.0.0.1" in str(e.value)


def test_status_command(estimator, pushed) -> None:  # noqa: F811
    p = run(sys.executable, "-m", "parasol_core.estimator.server", "status", "--url", estimator.url)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "running" in p.stdout and pushed[GCEL.name] in p.stdout
    p = run(sys.executable, "-m", "parasol_core.estimator.server", "status", "--url",
            f"http://127.0.0.1:{free_port()}")  # fmt: skip
    assert p.returncode == 1 and "no estimator" in p.stdout


def test_one_log_line_per_request(estimator, client, pushed) -> None:  # noqa: F811
    client.plot(pushed[GCEL.name], 1, 2)
    lines = [ln for ln in estimator.log().splitlines() if " rpc route.plot " in ln]
    assert lines and f"model={pushed[GCEL.name][:12]}" in lines[-1]
    assert lines[-1].rstrip().endswith("ok") and "ms" in lines[-1]


def test_results_are_finite_numbers(client, pushed) -> None:
    mid = pushed[GCEL.name]
    rid = client.plot(mid, 1, 512)["route"]
    assert math.isfinite(client.transfer_time(mid, rid, 2.0**53))


def test_estimate_phase_is_the_core_event_trace(client, pushed) -> None:
    from parasol_core.simulate.phases import simulate

    machine = load(GRID)
    mid = pushed[GRID.name]
    virt = machine.virtuals[-1].id
    expected = simulate(machine, pattern="halo", bytes=4096, virtual=virt).to_json()
    assert client.phase(mid, pattern="halo", nbytes=4096, virtual=virt) == expected
    msgs = [{"src": 1, "dst": 2, "bytes": 1000}, {"src": 1, "dst": 3, "bytes": 500, "after": [0]}]
    assert client.phase(mid, messages=msgs) == simulate(machine, messages=msgs).to_json()
    for bad in ({"messages": [{"src": 1, "dst": 99, "bytes": 1}]},
                {"messages": [{"src": 1, "dst": 2, "bytes": -1}]},
                {"messages": [{"src": 1, "dst": 2, "bytes": 1, "after": [0]}]},
                {"pattern": "halo"}, {}, {"pattern": "nosuch", "bytes": 8}):  # fmt: skip
        with pytest.raises(RemoteError) as e:
            client.call("estimate.phase", model=mid, **bad)
        assert e.value.code == -32602
    assert client.ping()
