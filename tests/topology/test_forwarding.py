"""Per-hop forwarding, full-duplex links and max-min sharing (issue 25, parts 2 and 3;
docs/topology.md, "Which model answers what").

PAMELA's table 4.1 (van Gemund 1996, example 4.9): 10^6-byte messages on the first row
of a 4 x 4 T800 mesh, PAMELA node n being processor n + 1 here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from estimator_support import estimator  # noqa: F401

from parasol_core.cli import main
from parasol_core.simulate.flow import run_flow
from parasol_core.simulate.phases import PhaseError, _as_arrays, simulate
from parasol_core.simulate.trace import Phase
from parasol_core.syntax.loader import load, loads
from parasol_core.syntax.writer import dumps
from parasol_core.topology.resources import NetOptions, usage_of
from parasol_core.topology.transfer import RouteTable

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
T800 = SAMPLES / "pamela-t800.machine"
FORWARD = 6.083333333333333e-07  # the file's 73 us / 120 bytes
GRID = SAMPLES / "grid4x4.machine"

# (senders, receivers, published T in seconds): table 4.1's simulated column T (its
# measured column T^m is the same but for the last row, 6.0, which PAMELA's own model
# also puts at 5.4)
TABLE_4_1 = [
    ((0,), (1,), 0.9),
    ((0,), (2,), 1.5),
    ((0, 0), (1, 1), 1.8),
    ((0, 0), (2, 2), 3.0),
    ((0, 0), (1, 2), 1.8),
    ((0, 0, 0), (1, 1, 2), 2.7),
    ((0, 0, 0), (1, 2, 2), 3.3),
    ((0,) * 6, (1, 1, 1, 2, 2, 2), 5.4),
]


def _messages(senders, receivers, nbytes=1e6):
    return [{"src": s + 1, "dst": r + 1, "bytes": nbytes} for s, r in zip(senders, receivers)]


@pytest.fixture(scope="module")
def t800():
    return load(T800)


@pytest.mark.parametrize("senders,receivers,published", TABLE_4_1)
def test_pamela_table_4_1_within_one_percent(t800, senders, receivers, published):
    result = simulate(t800, messages=_messages(senders, receivers))
    assert result.makespan == pytest.approx(published, rel=0.01)


def test_pamela_table_4_1_exact_figures(t800):
    """The derivation in docs/topology.md, to the last digit: tau_x = 108 us and
    tau_y = 73 us per 120-byte packet, 10^6 / 120 packets."""
    packets = 1e6 / 120
    x, y = 108e-6, 73e-6
    expected = [x, x + y, 2 * x, 2 * (x + y), 2 * x, 3 * x, 3 * x + y, 6 * x]
    got = [simulate(t800, messages=_messages(s, r)).makespan for s, r, _ in TABLE_4_1]
    assert got == pytest.approx([packets * e for e in expected], rel=1e-12)


def test_without_the_forwarding_cost_rows_2_4_7_are_what_1994_gives(t800):
    t800.topologies[0].forward = None
    try:
        got = [simulate(t800, messages=_messages(s, r)).makespan for s, r, _ in TABLE_4_1]
    finally:
        t800.topologies[0].forward = FORWARD
    assert [got[1], got[3], got[6]] == pytest.approx([0.9, 1.8, 2.7])


def test_duplex_exchange_takes_1_06_s_and_a_shared_link_1_8_s(t800):
    swap = [{"src": 1, "dst": 2, "bytes": 1e6}, {"src": 2, "dst": 1, "bytes": 1e6}]
    assert simulate(t800, messages=swap).makespan == pytest.approx(1.06, rel=0.01)
    assert simulate(t800, messages=swap).makespan == pytest.approx(0.9 * 13 / 11, rel=1e-12)
    t800.topologies[0].duplex = None
    try:
        assert simulate(t800, messages=swap).makespan == pytest.approx(1.8, rel=1e-12)
    finally:
        t800.topologies[0].duplex = 2 / 11
    # one way only: the acknowledgements cost the other direction, not this one
    assert simulate(t800, messages=swap[:1]).makespan == pytest.approx(0.9, rel=1e-12)


def test_transfer_time_uses_the_same_model(t800):
    table = RouteTable.for_machine(t800)
    a, b = table.add(1, 3), table.add(1, 2)
    assert table.transfer_time(a, [], 1e6) == pytest.approx(1e6 * 181e-6 / 120)
    # row 7: two forwarded and one for processor 2 itself, in flight together
    state = table.state([a, a, b])
    assert state.transfer_times([a, b], 1e6) == pytest.approx([3.3083333333, 3.3083333333])
    assert table.transfer_time(b, [table.add(2, 1)], 1e6) == pytest.approx(0.9 * 13 / 11)


def test_route_and_transfer_from_the_command_line(capsys):
    assert main(["route", str(T800), "1", "4"]) == 0
    out = capsys.readouterr().out
    assert "forwarded by: 2 3" in out
    assert "seconds per byte alone: 1.50833333333e-06" in out
    assert main(["route", str(GRID), "1", "4"]) == 0
    assert "forwarded" not in capsys.readouterr().out  # 1994 models: as before
    assert main(["transfer", str(T800), "1:3", "--bytes", "1e6", "--active", "1:3", "1:2"]) == 0
    assert capsys.readouterr().out.strip() == "3.30833333333"


# --------------------------------------------------------------------------- the file


def test_annotations_read_write_losslessly():
    text = T800.read_text()
    machine = loads(text)
    topo = machine.topologies[0]
    assert (topo.forward, topo.duplex) == (FORWARD, 2 / 11)
    assert dumps(machine) == text  # unedited: byte for byte
    topo.forward = 1e-6
    edited = dumps(machine)
    assert "# piui: forward = 1e-06  # PAMELA" in edited  # the number only
    assert edited.replace("1e-06  # PAMELA", "6.083333333333333e-07  # PAMELA") == text
    topo.duplex = None
    removed = dumps(machine)
    assert "piui: duplex" not in removed and loads(removed).topologies[0].duplex is None
    again = loads(removed)
    again.topologies[0].duplex = 0.5
    assert loads(dumps(again)).topologies[0].duplex == 0.5
    canonical = dumps(machine, canonical=True)
    assert "    # piui: forward = 1e-06\n" in canonical
    assert loads(canonical).topologies[0].forward == 1e-06


def test_models_without_annotations_are_untouched():
    machine = load(GRID)
    assert machine.topologies[0].forward is None and machine.topologies[0].duplex is None
    assert "piui: forward" not in dumps(machine, canonical=True)


@pytest.mark.parametrize(
    "line,why",
    [
        ("# piui: forward = -1e-6", "is negative"),
        ("# piui: forward = fast", "expected one number"),
        ("# piui: forward 1e-6", "expected '# piui: forward = NUMBER'"),
        ("# piui: duplex = 2", "more than 1"),
        ("# piui: duplex = nan", "not a finite number"),
    ],
)
def test_bad_annotations_warn_with_their_line_and_are_ignored(line, why):
    text = T800.read_text().replace("# piui: shape = 4 4", f"# piui: shape = 4 4\n        {line}")
    machine = loads(text)
    [warning] = [d for d in machine.src.diagnostics if why in d.message]
    line_no = text[: text.index(line)].count("\n") + 1
    assert warning.severity == "warning" and (warning.line, warning.column) == (line_no, 9)
    assert dumps(machine) == text
    # the good annotation after it still stands
    assert (machine.topologies[0].forward is not None) or ("forward" in line)


def test_an_annotation_inside_a_link_is_ignored_with_a_warning():
    text = T800.read_text().replace("connect = 2 1 2", "# piui: forward = 1.0\nconnect = 2 1 2", 1)
    assert text != T800.read_text()
    machine = loads(text)
    assert machine.topologies[0].forward == FORWARD
    assert any("belongs directly in the topology" in d.message for d in machine.src.diagnostics)


def test_an_annotation_in_a_virtual_topology_is_ignored_with_a_warning():
    text = GRID.read_text()
    at = text.index("begin virtual") + len("begin virtual")
    text = text[:at] + "\n        # piui: duplex = 0.1" + text[at:]
    machine = loads(text)
    assert any("not a virtual one" in d.message for d in machine.src.diagnostics)
    assert machine.hardware().duplex is None
    assert dumps(machine) == text


def test_a_negative_forwarding_cost_set_by_a_program_is_a_phase_error(t800):
    t800.topologies[0].forward = -1.0
    try:
        with pytest.raises(PhaseError, match="forward.*negative"):
            simulate(t800, messages=_messages((0,), (2,)))
    finally:
        t800.topologies[0].forward = FORWARD


# --------------------------------------------------------------------------- sharing

LINE = """begin machine
    id = 1
    name = "line"
    processors = 1
    topologies = 1
    begin processor
        id = 1
        name = "p"
    end processor
    begin topology
        id = 1
        name = "line of 3"
        routing = "XY"
        processors = 3
        links = 2
        begin procid
            p[1] = 1
            p[2] = 1
            p[3] = 1
        end procid
        begin linklist
            begin link
                id = 1
                latency = 0.0
                speed = 1.0
                connect = 2 1 2
            end link
            begin link
                id = 2
                latency = 0.0
                speed = 2.0
                connect = 2 2 3
            end link
        end linklist
    end topology
end machine
"""


def test_max_and_maxmin_differ_on_a_hand_computed_line():
    """Three 12-byte messages on 1 - 2 - 3 (link 1: 1 s/byte, link 2: 2 s/byte):
    A 1->3, B 1->2, C 2->3. Max: A and C meet link 2's load 2 x 2 = 4 s/byte (end 48),
    B link 1's 1 x 2 = 2 (end 24). Max-min: link 2 holds A and C at 1/4 byte/s (2 x 2
    x 1/4 = 1), leaving link 1 3/4 for B (end 16); after B, A and C stay at 1/4."""
    machine = loads(LINE)
    msgs = [{"src": 1, "dst": 3, "bytes": 12}, {"src": 1, "dst": 2, "bytes": 12},
            {"src": 2, "dst": 3, "bytes": 12}]  # fmt: skip
    assert simulate(machine, messages=msgs).end.tolist() == [48.0, 24.0, 48.0]
    assert simulate(machine, messages=msgs, sharing="maxmin").end.tolist() == [48.0, 16.0, 48.0]


def test_maxmin_waits_out_the_latency_before_taking_a_share():
    machine = loads(LINE.replace("latency = 0.0\n                speed = 1.0",
                                 "latency = 4.0\n                speed = 1.0"))  # fmt: skip
    msgs = [{"src": 1, "dst": 2, "bytes": 12}, {"src": 2, "dst": 3, "bytes": 3}]
    # max: both in flight from 0, but they share no link: 4 + 12 and 0 + 3 x 2
    assert simulate(machine, messages=msgs).end.tolist() == [16.0, 6.0]
    assert simulate(machine, messages=msgs, sharing="maxmin").end.tolist() == [16.0, 6.0]


def test_the_flow_trace_agrees_with_the_1994_trace_without_annotations():
    rng = np.random.default_rng(7)
    machine = load(GRID)
    msgs = [{"src": int(rng.integers(1, 17)), "dst": int(rng.integers(1, 17)),
             "bytes": float(rng.choice([0, 10, 1000, 5e4])),
             "start": float(rng.choice([0, 0, 1e-3, 0.02]))} for _ in range(300)]  # fmt: skip
    expected = simulate(machine, messages=msgs)
    arrays = _as_arrays(msgs)
    table = RouteTable.for_machine(machine)
    ids = table.add_many(arrays.src, arrays.dst)
    trace = run_flow(Phase.of(table, ids, arrays), usage_of(table, ids, NetOptions()), "max")
    assert trace.end == pytest.approx(expected.end, rel=1e-12, abs=1e-15)
    assert trace.alone == pytest.approx(expected.alone, rel=1e-12)


def test_maxmin_on_all_to_all_makespan_close_single_messages_faster():
    machine = load(GRID)
    a = simulate(machine, pattern="alltoall", bytes=1e5)
    b = simulate(machine, pattern="alltoall", bytes=1e5, sharing="maxmin")
    assert b.makespan == pytest.approx(a.makespan, rel=0.01)
    assert (b.end <= a.end * (1 + 1e-9)).sum() > len(a.end) // 2


def test_an_unknown_sharing_is_a_phase_error():
    with pytest.raises(PhaseError, match="sharing must be one of max, maxmin"):
        simulate(load(GRID), pattern="alltoall", bytes=10, sharing="fair")


def test_simulate_sharing_from_the_command_line(tmp_path, capsys):
    path = tmp_path / "line.machine"
    path.write_text(LINE)
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"src": 1, "dst": 3, "bytes": 12}, {"src": 1, "dst": 2,
                                "bytes": 12}, {"src": 2, "dst": 3, "bytes": 12}]))  # fmt: skip
    for sharing, ends in (("max", [48, 24, 48]), ("maxmin", [48, 16, 48])):
        assert main(["simulate", str(path), "--messages", str(msgs), "--json",
                     "--sharing", sharing]) == 0  # fmt: skip
        result = json.loads(capsys.readouterr().out)
        assert [m["end"] for m in result["messages"]] == ends


def test_the_estimator_answers_with_forwarding_and_sharing(estimator):  # noqa: F811
    with estimator.client() as client:
        mid = client.push(T800.read_text(), name="t800")["model"]
        msgs = _messages((0, 0, 0), (1, 2, 2))
        got = client.call("estimate.phase", model=mid, messages=msgs)
        assert got["makespan"] == pytest.approx(3.3083333333)
        got = client.call("estimate.phase", model=mid, messages=msgs, sharing="maxmin")
        assert got["makespan"] == pytest.approx(3.0166666667)
        plot = client.call("route.plot", model=mid, src=1, dst=3)
        assert plot["forwarders"] == [2]
        assert plot["seconds_per_byte"] == pytest.approx(181e-6 / 120)
        rid = plot["route"]
        assert client.transfer_time(mid, rid, 1e6) == pytest.approx(1.5083333333)
        grid = client.push(GRID.read_text(), name="grid")["model"]
        assert "forwarders" not in client.call("route.plot", model=grid, src=1, dst=3)
