"""No answer is NaN, infinite or null (issue 35, item 3).

A value that is finite and valid but whose results overflow (or underflow to 0) is
refused where the computation is set up, naming it (the link and its timing, the
forwarding annotation and its line, the message); no output of the project (text,
``--json``, the estimator) holds NaN, an infinity or a null for a number; ``check``
warns about the values that make results overflow; the SimGrid import refuses
overflow and underflow as every other reader does.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from parasol_core import native
from parasol_core.base import jsonout
from parasol_core.base.numeric import LARGEST
from parasol_core.cli import main
from parasol_core.simulate.phases import PhaseOverflowError, simulate
from parasol_core.syntax.loader import loads
from parasol_core.topology.overflow import PER_BYTE_SCALE, TimeOverflowError
from parasol_core.topology.transfer import RouteTable

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "sample_models" / "grid4x4.machine"
GRID_TEXT = GRID.read_text()
SHAPE_LINE = "        # piui: shape = 4 4\n"
LINK_2 = "latency = 2.85e-05\n                speed = 9.1e-07\n                connect = 2 2 3"
LINK_1 = "latency = 2.85e-05\n                speed = 9.1e-07\n                connect = 2 1 2"
PATTERNS = ("alltoall", "shift", "halo", "broadcast", "ring-allgather")
# a number JSON does not have, as Python's json or a careless writer would spell it
NOT_JSON = re.compile(r"\b(NaN|-?Infinity|nan|inf)\b")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as e:
        status = e.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "please report" not in out.err, out.err
    return status, out.out, out.err


def forward(value: str) -> str:
    return GRID_TEXT.replace(SHAPE_LINE, SHAPE_LINE + f"        # piui: forward = {value}\n", 1)


def link(text: str, which: str, latency: str | None = None, speed: str | None = None) -> str:
    lat = latency or "2.85e-05"
    spd = speed or "9.1e-07"
    new = which.replace("latency = 2.85e-05", f"latency = {lat}").replace(
        "speed = 9.1e-07", f"speed = {spd}")  # fmt: skip
    return text.replace(which, new, 1)


def all_finite(data) -> bool:
    return jsonout.find_non_finite(data) is None


CASES = {
    "forward 1e308": (
        forward("1e308"),
        "'# piui: forward = 1e+308' annotation of topology 1 (line 45)",
    ),
    "link speed 1e308": (
        link(GRID_TEXT, LINK_2, speed="1e308"),
        "link 2 of topology 1 has speed 1e+308",
    ),
    "two latencies 1e308": (
        link(link(GRID_TEXT, LINK_1, latency="1e308"), LINK_2, latency="1e308"),
        "latency 1e+308 s",
    ),  # fmt: skip
    "contention": (link(GRID_TEXT, LINK_2, speed="1e302"), "up to 32 on one"),
}


# --------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("sharing", ["max", "maxmin"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("pure", [False, True])
def test_a_phase_that_overflows_is_refused_naming_why(tmp_path, capsys, monkeypatch, case,
                                                       sharing, pure):  # fmt: skip
    if pure:
        monkeypatch.setenv(native.PURE_ENV, "1")
    text, words = CASES[case]
    nbytes = "1e5" if case == "contention" else "1000"
    path = tmp_path / "m.machine"
    path.write_text(text)
    for extra in ((), ("--json",)):
        status, out, err = cli(capsys, "simulate", str(path), "--pattern", "alltoall",
                               "--bytes", nbytes, "--sharing", sharing, *extra)  # fmt: skip
        assert status == 1, (out, err)
        assert out == "" and NOT_JSON.search(out) is None
        if sharing == "max" or case != "contention":  # max-min shares more fairly
            assert words in err, err
        assert "the largest number a double holds" in err


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_estimator_refuses_the_phase_as_an_evaluation_failure(tmp_path, case):
    from parasol_core.estimator import methods
    from parasol_core.estimator.protocol import EVALUATION_FAILED, MethodError
    from parasol_core.estimator.store import ModelStore

    text, words = CASES[case]
    svc = methods.Service(ModelStore(tmp_path))
    answer = methods.model_push(svc, text)
    assert any("makes times past" in d["message"] for d in answer["diagnostics"])
    nbytes = 1e5 if case == "contention" else 1000
    with pytest.raises(MethodError) as e:
        methods.estimate_phase(svc, answer["model"], pattern="alltoall", bytes=nbytes)
    assert e.value.code == EVALUATION_FAILED and words in e.value.message
    if case == "contention":  # a message alone takes 1e307 s: only sharing overflows
        return
    rid = methods.route_plot(svc, answer["model"], 1, 3)["route"]
    with pytest.raises(MethodError) as e:
        methods.network_transfer_time(svc, answer["model"], rid, nbytes)
    assert e.value.code == EVALUATION_FAILED


def test_a_transfer_that_overflows_names_the_link(capsys, tmp_path):
    for case in ("forward 1e308", "link speed 1e308", "two latencies 1e308"):
        text, words = CASES[case]
        path = tmp_path / "m.machine"
        path.write_text(text)
        status, out, err = cli(capsys, "transfer", str(path), "1:3", "--bytes", "1000")
        assert status == 1 and out == "" and words in err, err


def test_route_with_a_forwarding_cost_past_a_double_names_it(capsys, tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(link(forward("1.7e308"), LINK_1, speed="1e307"))
    status, out, err = cli(capsys, "route", str(path), "1", "3")
    assert status == 1 and out == "" and "annotation of topology 1 (line 45)" in err


def test_a_chain_of_messages_that_overflows_names_the_waiting_one(tmp_path, capsys):
    path = tmp_path / "m.machine"
    path.write_text(link(GRID_TEXT, LINK_2, speed="1e302"))
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"src": 2, "dst": 3, "bytes": 1e6},
                                    {"src": 3, "dst": 2, "bytes": 1e6, "after": [0]}]))  # fmt: skip
    for pure in ("0", "1"):
        import os

        os.environ[native.PURE_ENV] = pure
        try:
            status, out, err = cli(capsys, "simulate", str(path), "--messages", str(messages))
        finally:
            del os.environ[native.PURE_ENV]
        assert status == 1 and "message 1 (3 -> 2)" in err and "waits ('after')" in err, err


def test_a_start_near_the_largest_double_is_refused(tmp_path, capsys):
    path = tmp_path / "m.machine"
    path.write_text(link(GRID_TEXT, LINK_2, speed="1e302"))  # 1e6 bytes take 1e308 s
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"src": 2, "dst": 3, "bytes": 1e6, "start": 1e308}]))
    status, out, err = cli(capsys, "simulate", str(path), "--messages", str(messages))
    assert status == 1 and "it starts at 1e+308 s" in err, err


def test_a_time_a_byte_that_underflows_is_refused():
    m = loads(GRID_TEXT)
    with pytest.raises(PhaseOverflowError, match="too small for a double"):
        simulate(m, pattern="shift", bytes=1e-310)
    table = RouteTable(m.hardware())
    rid = table.add(1, 2)
    with pytest.raises(TimeOverflowError, match="too small for a double"):
        table.state([rid]).transfer_time(rid, 1e-310)


# --------------------------------------------------------------------------- the class


TIMINGS = st.one_of(
    st.floats(min_value=0, max_value=LARGEST, allow_nan=False),
    st.builds(lambda e, m: m * 10.0**e, st.integers(280, 308), st.floats(1, 1.79)),
    st.builds(lambda e: 10.0**e, st.integers(-307, -280)),
)
SIZES = st.one_of(st.floats(0, 2.0**53), st.builds(lambda e: 10.0**e, st.integers(-320, 15)))


def _model(latency: float, speed: float, fwd: float | None, links: int) -> str:
    """grid4x4 with the first ``links`` links at these timings (and a forwarding cost)."""
    text = GRID_TEXT if fwd is None else forward(repr(fwd))
    parts = text.split("begin link\n")
    for k in range(1, links + 1):
        parts[k] = (parts[k].replace("latency = 2.85e-05", f"latency = {latency!r}", 1)
                    .replace("speed = 9.1e-07", f"speed = {speed!r}", 1))  # fmt: skip
    return "begin link\n".join(parts)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# an end at the largest double: its tolerance overflowed to inf and took the padding
# past the last message as ends (the C kernel wrote past its arrays, Python raised
# IndexError)
@example(1.7976931348623157e308, 0.0, None, 1, 0.0, "alltoall", "max", False)
@example(1.7976931348623157e308, 0.0, None, 1, 0.0, "alltoall", "max", True)
@given(TIMINGS, TIMINGS, st.one_of(st.none(), TIMINGS), st.integers(1, 24), SIZES,
       st.sampled_from(PATTERNS), st.sampled_from(["max", "maxmin"]), st.booleans())  # fmt: skip
def test_every_phase_is_finite_or_refused_naming_its_cause(latency, speed, fwd, links, nbytes,
                                                            pattern, sharing, pure):  # fmt: skip
    import os

    m = loads(_model(latency, speed, fwd, links))
    os.environ[native.PURE_ENV] = "1" if pure else "0"
    try:
        result = simulate(m, pattern=pattern, bytes=nbytes, sharing=sharing)
    except PhaseOverflowError as e:
        text = str(e)
        assert re.match(r"message \d+ \(\d+ -> \d+\)", text), text
        assert "link " in text or "annotation" in text or "starts at" in text, text
        return
    finally:
        del os.environ[native.PURE_ENV]
    data = result.to_json()
    assert all_finite(data) and math.isfinite(result.ratio)
    json.loads(jsonout.dumps(data))  # strict JSON
    assert all(t >= 0 for t in result.end.tolist())


@settings(max_examples=150, deadline=None)
@given(TIMINGS, TIMINGS, st.one_of(st.none(), TIMINGS), SIZES, st.integers(0, 5))
def test_every_transfer_time_is_finite_or_refused_naming_its_cause(latency, speed, fwd, nbytes,
                                                                   others):  # fmt: skip
    m = loads(_model(latency, speed, fwd, 24))
    table = RouteTable(m.hardware())
    mine = table.add(1, 16)
    active = [table.add(1 + k, 16 - k) for k in range(others)]
    try:
        t = table.transfer_time(mine, active, nbytes)
        many = table.state([mine, *active]).transfer_times([mine, *active], nbytes)
    except TimeOverflowError as e:
        assert "link " in str(e) or "annotation" in str(e), e
        return
    assert math.isfinite(t) and t >= 0
    assert np.isfinite(many).all()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(allow_nan=False,
       allow_infinity=False), st.sampled_from(["*", "/", "+", "-"]),
       st.sampled_from(["{a} {op} {b}", "exp({a})", "sqrt({a}) {op} {b}", "log({a})"]))  # fmt: skip
def test_eval_prints_finite_values_or_an_error(capsys, a, b, op, form):
    expr = form.format(a=repr(abs(a) if "sqrt" in form or "log" in form else a), b=repr(b), op=op)
    status, out, err = cli(capsys, "eval", str(GRID), expr)
    if status == 0:
        assert math.isfinite(float(out)), out
    else:
        assert status == 1 and err.startswith("error:"), err
    assert NOT_JSON.search(out) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(TIMINGS, TIMINGS, SIZES)
def test_the_estimator_answers_finite_numbers_or_an_error(tmp_path, latency, speed, nbytes):
    from parasol_core.estimator import methods
    from parasol_core.estimator.protocol import EVALUATION_FAILED, MethodError, ParamError
    from parasol_core.estimator.store import ModelStore

    svc = methods.Service(ModelStore(tmp_path))
    mid = methods.model_push(svc, _model(latency, speed, None, 24))["model"]
    rids = [methods.route_plot(svc, mid, 1, d)["route"] for d in (2, 16)]
    calls = [
        lambda: methods.estimate_phase(svc, mid, pattern="halo", bytes=nbytes),
        lambda: methods.network_transfer_time(svc, mid, rids[1], nbytes, active=[rids[0]]),
        lambda: methods.network_transfer_times(
            svc, mid, [{"route": r, "bytes": nbytes} for r in rids]
        ),  # fmt: skip
    ]
    for call in calls:
        try:
            answer = call()
        except MethodError as e:
            assert e.code == EVALUATION_FAILED and "link " in e.message, e.message
            continue
        except ParamError as e:  # a size past what the params take
            assert "bytes" in e.message
            continue
        jsonout.dumps_bytes({"result": answer})  # no NaN, no infinity, no null for one


# --------------------------------------------------------------------------- the writer


@pytest.mark.parametrize("bad,path", [
    ({"makespan": math.nan}, "makespan"),
    ({"messages": [{"end": 1.0}, {"end": math.inf}]}, "messages[1].end"),
    ([1.0, 2.0, -math.inf], "[2]"),
    ({"a": np.array([0.0, np.nan])}, "a[1]"),
    ({"a": np.float64("inf")}, "a"),
])  # fmt: skip
def test_the_json_writer_refuses_non_finite_numbers_naming_where(bad, path):
    for dump in (jsonout.dumps_bytes, lambda d: jsonout.dumps(_plain(d), indent=2)):
        with pytest.raises(jsonout.NonFiniteError) as e:
            dump(bad)
        assert e.value.path == path
    assert jsonout.dumps_bytes({"name": None, "x": [1.5]}) == b'{"name":null,"x":[1.5]}'


def _plain(data):
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    if isinstance(data, np.ndarray):
        return data.tolist()
    if isinstance(data, np.floating):
        return float(data)
    return data


def test_the_server_answers_an_error_for_a_result_holding_nan_and_keeps_the_others():
    from parasol_core.estimator import server
    from parasol_core.estimator.binary import Binary, frame, split

    batch = [
        {"jsonrpc": "2.0", "id": 1, "result": {"makespan": math.nan}},
        {"jsonrpc": "2.0", "id": 2, "result": {"makespan": 1.5}},
    ]
    with pytest.raises(jsonout.NonFiniteError):
        server._dumps(batch)
    out = json.loads(server._dumps(server._refuse_non_finite(batch)))
    assert out[0]["id"] == 1 and out[0]["error"]["code"] == -32002
    assert out[0]["error"]["data"] == {"path": "result.makespan"}
    assert out[1] == batch[1]
    # a framed answer is left as it was when its envelope is refused, to be framed again
    binary = Binary({"encoding": "binary"}, {"hops": np.arange(3, dtype=np.int64)}, None)
    framed = [{"jsonrpc": "2.0", "id": 3, "result": binary}, batch[0]]
    with pytest.raises(jsonout.NonFiniteError):
        frame(framed, server._dumps)
    assert framed[0]["result"] is binary
    text, attachment = split(frame(server._refuse_non_finite(framed), server._dumps))
    answers = json.loads(bytes(text))
    assert answers[0]["result"]["hops"]["count"] == 3 and answers[1]["error"]["code"] == -32002


def test_the_client_refuses_to_send_nan():
    from parasol_core.estimator.client import Client

    with (
        Client("http://127.0.0.1:9", timeout=1) as c,
        pytest.raises(ValueError, match="params.bytes"),
    ):
        c.call("network.transfer_time", model="x", route="y", bytes=math.nan)


# --------------------------------------------------------------------------- check


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e250, max_value=LARGEST), st.sampled_from(["latency", "speed"]))
def test_check_warns_exactly_about_timings_that_overflow_a_phase(value, attr):
    from parasol_core.analysis.validate import validate

    kw = {attr: repr(value)}
    m = loads(link(GRID_TEXT, LINK_2, **kw))
    found = [d for d in validate(m) if "makes times past" in d.message]
    scale = PER_BYTE_SCALE if attr == "speed" else 16 * 1_000_000
    assert bool(found) == (value * scale > LARGEST)
    if found:
        assert found[0].severity == "warning" and "link 2 of topology 1" in found[0].message
        assert found[0].line == GRID_TEXT[: GRID_TEXT.index(LINK_2)].count("\n") + 1 + (
            attr == "speed")  # fmt: skip


def test_check_warns_about_the_forwarding_cost_at_its_line(capsys, tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(forward("1e308"))
    status, out, _ = cli(capsys, "check", str(path))
    assert status == 0
    assert f"{path}:45:9: warning: '# piui: forward' of topology 1: forward = 1e+308" in out


def test_check_warns_about_a_speed_whose_times_underflow():
    from parasol_core.analysis.validate import validate

    m = loads(link(GRID_TEXT, LINK_2, speed="5e-324"))
    assert any("underflows" in d.message and "link 2" in d.message for d in validate(m))


def test_the_samples_have_no_such_warning():
    from parasol_core.analysis.validate import validate
    from parasol_core.syntax.loader import load

    for path in sorted((ROOT / "sample_models").glob("*.machine")):
        messages = [d.message for d in validate(load(path))]
        assert not any("makes times past" in t or "underflows" in t for t in messages), path


# --------------------------------------------------------------------------- SimGrid and fit


def platform_cluster(attrs: str) -> str:
    return (
        f'<platform version="4.1"><zone id="w" routing="Full"><cluster {attrs}/></zone></platform>'
    )


@pytest.mark.parametrize("blue", ["1" + "0" * 300, "1" + "0" * 400, "1" + "0" * 18])
def test_a_dragonfly_factor_past_a_double_is_refused(blue):
    from parasol_core.simgrid import PlatformError, import_text

    with pytest.raises(PlatformError, match="cluster 'd'"):
        import_text(platform_cluster(
            'id="d" prefix="n" suffix="" radical="0-35" speed="1Gf" bw="125MBps" lat="50us" '
            f'topology="DRAGONFLY" topo_parameters="3,{blue};2,1;3,1;2"'))  # fmt: skip


def test_a_dragonfly_bandwidth_whose_time_a_byte_underflows_is_refused():
    from parasol_core.simgrid import PlatformError, import_text

    with pytest.raises(PlatformError, match="blue links' bandwidth"):
        import_text(platform_cluster(
            'id="d" prefix="n" suffix="" radical="0-3" speed="1Gf" bw="1e305Bps" lat="50us" '
            'topology="DRAGONFLY" topo_parameters="2,1000;1,1;2,1;1"'))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.integers(-420, 420), st.sampled_from(["s", "ms", "us", "ns", "ps", "w", "h"]),
       st.sampled_from(["Bps", "bps", "GBps", "KiBps", "TBps", "YBps"]))  # fmt: skip
def test_simgrid_units_never_give_zero_or_infinity(exponent, time_unit, bw_unit):
    from parasol_core.simgrid import UnitError, parse_bandwidth, parse_time

    for parse, unit in ((parse_time, time_unit), (parse_bandwidth, bw_unit)):
        try:
            value = parse(f"1.5e{exponent}{unit}")
        except UnitError as e:
            assert f"1.5e{exponent}" in str(e)
            continue
        assert math.isfinite(value) and value > 0  # a subnormal only as typed (1.5e-308)


@pytest.mark.parametrize("attr,value", [("latency", "1e-400s"), ("latency", "1e-300ps"),
                                        ("bandwidth", "1e400Bps"), ("bandwidth", "1e308Bps"),
                                        ("bandwidth", "1e-310Bps")])  # fmt: skip
def test_a_link_whose_value_or_time_a_byte_is_no_double_is_refused(attr, value):
    from parasol_core.simgrid import PlatformError, UnitError, import_text

    values = {"latency": "1us", "bandwidth": "1GBps", attr: value}
    text = (
        '<platform version="4.1"><zone id="w" routing="Full"><host id="a" speed="1Gf"/>'
        f'<host id="b" speed="1Gf"/><link id="l" bandwidth="{values["bandwidth"]}" '
        f'latency="{values["latency"]}"/><route src="a" dst="b"><link_ctn id="l"/></route>'
        "</zone></platform>"
    )
    with pytest.raises((PlatformError, UnitError), match=f"link 'l'|{value[:-3]}"):
        import_text(text)


def test_the_export_refuses_a_bandwidth_past_a_double():
    from parasol_core.simgrid import ExportError, export_platform

    m = loads(link(GRID_TEXT, LINK_2, speed="5e-324"))
    with pytest.raises(ExportError, match="link 2"):
        export_platform(m)


def test_a_fit_of_huge_times_is_finite():
    from parasol_core.analysis.fit import fit, read_csv

    rows = ["procs,bytes,seconds"] + [
        f"{p},{b},{1e305 * (1 + b / 1e3) * (1 + p / 10)!r}"
        for p in (2, 4, 8, 16) for b in (1, 10, 100, 1000, 10000)
    ]  # fmt: skip
    best = fit(read_csv("\n".join(rows) + "\n"))[0]
    assert all_finite([best.coefficients, best.errors, best.chi2])
    assert best.coefficients["c"] > 1e304


@pytest.mark.parametrize("pure", ["0", "1"])
def test_a_time_a_byte_that_overflows_under_load_is_refused_even_for_no_bytes(tmp_path, pure):
    """0 bytes at a time a byte that the load makes infinite is NaN: the C kernel looped
    on it for ever (found by the property test above); the trace it is given to is the
    Python one, which names the link. In a process of its own: a loop in C cannot be
    interrupted."""
    import os
    import subprocess
    import sys

    path = tmp_path / "m.machine"
    path.write_text(_model(1.1423722788019087e308, 1.1423722788019087e308, None, 1))
    env = {**os.environ, native.PURE_ENV: pure}
    done = subprocess.run([sys.executable, "-c", "from parasol_core.cli import main; raise SystemExit(main())",
                           "simulate", str(path),
                           "--pattern", "alltoall", "--bytes", "0"], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "link 1 of topology 1 has speed 1.14237e+308" in done.stderr
