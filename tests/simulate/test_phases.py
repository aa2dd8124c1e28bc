"""Communication phases: the event trace (parasol_core.simulate.phases), the pattern
generators and `parasol-model simulate`.

The 4 x 4 grid sample has XY routing and every link at latency L = 2.85e-05 s and speed
S = 9.1e-07 s/byte, so the hand-computed times below are written with L and S.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import native
from parasol_core.cli import main
from parasol_core.model import Machine
from parasol_core.simulate.patterns import PATTERNS, make_pattern
from parasol_core.simulate.phases import (
    Message,
    MessageArrays,
    PhaseError,
    _kernel,
    load_messages,
    simulate,
    simulate_phase,
)
from parasol_core.syntax.loader import load
from parasol_core.topology.generators import grid
from parasol_core.topology.mapping import make_mapping, mapping_quality
from parasol_core.topology.transfer import RouteTable
from parasol_core.topology.virtual import virtual_links

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
L, S = 2.85e-05, 9.1e-07
B = 4096.0


@pytest.fixture(scope="module", autouse=True, params=["kernel", "python"])
def trace_path(request):
    """Every test here runs twice: with the trace's C kernel and with its pure-Python
    path (PARASOL_PURE_PYTHON=1). tests/simulate/test_phases_native.py compares the two."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "python":
            mp.setenv(native.PURE_ENV, "1")
        elif _kernel() is None:
            pytest.skip("the C kernel of the trace was not built")
        yield request.param


@pytest.fixture(scope="module")
def grid4() -> Machine:
    return load(SAMPLES / "grid4x4.machine")


@pytest.fixture(scope="module")
def gcel() -> Machine:
    return load(SAMPLES / "parsytec-gcel.machine")


def ends(result) -> list[float]:
    return result.end.tolist()


# --------------------------------------------------------------------------- hand-computed


def test_one_message_takes_its_transfer_time(grid4):
    table = RouteTable.for_machine(grid4)
    rid = table.add(1, 16)
    alone = table.transfer_time(rid, [], B)
    result = simulate_phase(grid4, [Message(1, 16, B)])
    assert result.end[0] == pytest.approx(alone, rel=1e-12)
    assert result.end[0] == pytest.approx(6 * L + B * S, rel=1e-12)
    assert result.makespan == result.end[0] == pytest.approx(result.uncontended, rel=1e-12)
    # its six links were busy all that time, one message on each
    assert sorted(result.link_ids.tolist()) == [1, 2, 3, 16, 20, 24]
    assert result.busy == pytest.approx([result.makespan] * 6)
    assert result.max_in_flight.tolist() == [1] * 6


@pytest.mark.parametrize("k", [2, 3])
def test_k_equal_messages_over_one_link_end_together(grid4, k):
    result = simulate_phase(grid4, [Message(1, 2, B)] * k)
    assert ends(result) == pytest.approx([L + k * B * S] * k, rel=1e-12)
    assert result.uncontended == pytest.approx(L + B * S, rel=1e-12)
    assert result.max_in_flight.tolist() == [k]
    assert result.events == 2  # one start, one end for all of them


def test_two_routes_sharing_one_link(grid4):
    # 1 -> 3 crosses links 1, 2; 2 -> 4 crosses links 2, 3: they share link 2
    result = simulate_phase(grid4, [Message(1, 3, B), Message(2, 4, B)])
    assert ends(result) == pytest.approx([2 * L + 2 * B * S] * 2, rel=1e-12)
    loads = dict(zip(result.link_ids.tolist(), result.max_in_flight.tolist()))
    assert loads == {1: 1, 2: 2, 3: 1}


def test_short_message_ends_and_the_long_one_speeds_up(grid4):
    short, long = 1000.0, 4096.0
    result = simulate_phase(grid4, [Message(1, 2, short), Message(1, 2, long)])
    t_short, t_long = ends(result)
    assert t_short == pytest.approx(L + 2 * short * S, rel=1e-12)
    # until then both moved `short` bytes at half speed; the rest goes at full speed
    assert t_long == pytest.approx(t_short + (long - short) * S, rel=1e-12)
    # so every byte over the shared link took S: the total is conserved
    assert (t_long - L) / S == pytest.approx(short + long, rel=1e-12)
    assert result.busy.tolist() == pytest.approx([t_long])


def test_a_later_message_counts_while_in_its_latency(grid4):
    a, b, t_b = 4096.0, 2048.0, 0.001
    result = simulate_phase(grid4, [Message(1, 2, a), Message(1, 2, b, start=t_b)])
    # A alone from L to t_b; from t_b it shares the link with B, which counts from its
    # start (its latency too) and then moves at half speed until it is done
    t_b_end = t_b + L + 2 * S * b
    left_a = a - (t_b - L) / S - (t_b_end - t_b) / (2 * S)
    assert left_a > 0  # A is still under way, and finishes alone
    t_a = t_b_end + left_a * S
    assert ends(result) == pytest.approx([t_a, t_b_end], rel=1e-12)
    assert result.start.tolist() == [0.0, t_b]


def test_after_chain(grid4):
    msgs = [
        Message(1, 2, B),
        Message(2, 3, B, after=(0,)),
        Message(3, 4, B, after=(1,)),
        Message(4, 8, B, start=1.0, after=(2,)),  # waits for its start, not the chain
    ]
    result = simulate_phase(grid4, msgs)
    one = L + B * S
    assert result.start.tolist() == pytest.approx([0, one, 2 * one, 1.0], rel=1e-12)
    assert ends(result) == pytest.approx([one, 2 * one, 3 * one, 1.0 + one], rel=1e-12)
    assert result.uncontended == pytest.approx(result.makespan, rel=1e-12)


def test_after_waits_for_the_last_of_several(grid4):
    msgs = [Message(1, 2, B), Message(5, 6, 2 * B), Message(9, 10, B, after=(0, 1))]
    result = simulate_phase(grid4, msgs)
    assert result.start[2] == pytest.approx(L + 2 * B * S, rel=1e-12)


def test_message_to_itself_takes_no_time(grid4):
    result = simulate_phase(grid4, [Message(5, 5, B, start=0.5), Message(1, 2, B, after=(0,))])
    assert result.end[0] == 0.5
    assert result.start[1] == 0.5
    assert result.link_ids.tolist() == [1]


def test_links_of_speed_zero_cost_latency_only():
    line = Machine(topologies=[grid([8], L, 0.0)])
    rng = np.random.default_rng(3)
    msgs = [
        Message(int(a), int(b), 4096.0, float(t0))
        for a, b, t0 in zip(
            rng.integers(1, 9, 150), rng.integers(1, 9, 150), rng.uniform(0, 1e-4, 150)
        )
    ]
    result = simulate_phase(line, msgs)
    hops = np.abs([m.src - m.dst for m in msgs])
    assert result.end.tolist() == pytest.approx((result.start + hops * L).tolist(), rel=1e-12)


def test_empty_phase(grid4):
    result = simulate_phase(grid4, [])
    assert result.makespan == 0 and result.uncontended == 0
    assert result.to_json() == {"makespan": 0.0, "uncontended": 0.0, "messages": [], "links": []}


def test_halo_on_the_torus_slower_under_a_worse_mapping(grid4):
    identity = simulate(grid4, pattern="halo", bytes=B, virtual=3)
    assert len(identity.src) == len(virtual_links(grid4, 3)) == 64
    # The 1:1 mapping: 48 one-hop messages, and 16 wrap-arounds of three hops (1 <-> 4
    # crosses links 1, 2, 3). Every link carries 4: the two one-hop messages across it
    # and two wrap-arounds. The one-hop ones end at L + 4BS; the wrap-arounds, moving
    # since 3L at 1/(4S), then have L/(2S) bytes left and share links by 2: L more.
    assert identity.max_in_flight.tolist() == [4] * 24
    one_hop = L + 4 * B * S
    assert sorted(set(np.round(identity.end / one_hop, 9))) == [1.0, round(1 + L / one_hop, 9)]
    assert identity.makespan == pytest.approx(2 * L + 4 * B * S, rel=1e-12)

    worse = copy.deepcopy(grid4)
    mapping = make_mapping(worse, 3, "random", seed=3)
    assert mapping_quality(worse, 3, mapping).congestion > mapping_quality(grid4, 3).congestion
    worse.virtual(3).mapping = mapping
    slower = simulate(worse, pattern="halo", bytes=B, virtual=3)
    assert slower.makespan > identity.makespan
    assert slower.ratio > identity.ratio


# --------------------------------------------------------------------------- van Gemund


# Table 4.1 of van Gemund's thesis (pamela-1996): 10^6-byte transfers on the first row
# of a T800 mesh (nodes 0..3 there, 1..4 here), s -> r; the measured time T^m and his
# simulated T. One link of 108 us per 120-byte packet: 0.9e-6 s/byte.
VAN_GEMUND = [
    ([0], [1], 0.9, 0.9),
    ([0], [2], 1.5, 1.5),
    ([0, 0], [1, 1], 1.8, 1.8),
    ([0, 0], [2, 2], 3.0, 3.0),
    ([0, 0], [1, 2], 1.8, 1.8),
    ([0, 0, 0], [1, 1, 2], 2.7, 2.7),
    ([0, 0, 0], [1, 2, 2], 3.3, 3.3),
    ([0] * 6, [1, 1, 1, 2, 2, 2], 6.0, 5.4),
]
REPRODUCED = {0, 2, 4, 5, 7}  # rows whose simulated T this model gives (see docs)


@pytest.mark.parametrize("row", range(len(VAN_GEMUND)))
def test_van_gemund_table_4_1(row):
    machine = Machine(topologies=[grid([4, 4], 0.0, 0.9e-6)])
    senders, receivers, _measured, simulated = VAN_GEMUND[row]
    msgs = [Message(s + 1, r + 1, 1e6) for s, r in zip(senders, receivers)]
    ours = simulate_phase(machine, msgs).makespan
    if row in REPRODUCED:
        assert ours == pytest.approx(simulated, abs=0.05)
    else:  # a second hop costs nothing per byte here: forwarding is not modelled
        assert ours < simulated - 0.25


# --------------------------------------------------------------------------- patterns


def test_patterns_on_the_torus(grid4):
    def pairs(name, **kw):
        return [(m.src, m.dst) for m in make_pattern(grid4, name, B, virtual=3, **kw)]

    assert sorted(pairs("halo")) == sorted(virtual_links(grid4, 3))
    # a torus shift wraps: 4 -> 1 along X, 13 -> 1 along Y
    assert (4, 1) in pairs("shift") and len(pairs("shift")) == 16
    assert (13, 1) in pairs("shift", dim="y") and (1, 5) in pairs("shift", dim=1)
    assert len(pairs("alltoall")) == 16 * 15
    assert pairs("broadcast", root=6) == [(6, p) for p in range(1, 17) if p != 6]


def test_shift_on_a_mesh_does_not_wrap(grid4):
    msgs = make_pattern(grid4, "shift", B)  # the hardware: a 4 x 4 XY mesh
    assert [(m.src, m.dst) for m in msgs][:3] == [(1, 2), (2, 3), (3, 4)]
    assert len(msgs) == 12 and all(m.src % 4 != 0 for m in msgs)


def test_binomial_broadcast_reaches_everyone_once(grid4):
    msgs = make_pattern(grid4, "broadcast-tree", B, root=3)
    assert sorted(m.dst for m in msgs) == [p for p in range(1, 17) if p != 3]
    result = simulate_phase(grid4, msgs)
    # log2(16) = 4 rounds, each at least one message alone
    assert result.makespan >= 4 * (L + B * S)
    has = {3: 0.0}
    for i in np.argsort(result.start):
        m = msgs[i]
        assert m.src in has and has[m.src] <= result.start[i] + 1e-15  # it had the data
        has[m.dst] = result.end[i]


def test_ring_allgather_steps(grid4):
    msgs = make_pattern(grid4, "ring-allgather", B, virtual=2)
    assert len(msgs) == 15 * 16
    result = simulate_phase(grid4, msgs, virtual=2)
    # the ring is mapped with every virtual link one hop: 15 dependent steps, no contention
    assert result.makespan == pytest.approx(15 * (L + B * S), rel=1e-9)
    assert result.ratio == pytest.approx(1.0)


def test_every_pattern_runs_on_the_gcel(gcel):
    counts = {"shift": 15 * 32, "halo": 2 * 976, "broadcast": 511, "broadcast-tree": 511}
    for name in PATTERNS:
        msgs = make_pattern(gcel, name, 1024.0)
        if name in counts:
            assert len(msgs) == counts[name]
            result = simulate_phase(gcel, msgs)
            assert result.makespan >= result.uncontended > 0
        else:  # 261,632 messages each: generated here, simulated in the benchmark
            assert len(msgs) == 512 * 511


def test_every_pattern_runs_on_a_gcel_virtual_torus(gcel):
    # 64 virtual processors as an 8 x 8 torus, placed on the GCel by the snake scheme
    machine = copy.deepcopy(gcel)
    from parasol_core.model import VirtualTopology

    virt = VirtualTopology(id=5, routing="2Dtorus", processor_count=64, shape=[8, 8])
    machine.virtuals.append(virt)
    virt.mapping = make_mapping(machine, virt, "snake")
    for name in PATTERNS:
        kw = {"dim": 1} if name == "shift" else {}
        result = simulate(machine, pattern=name, bytes=1024.0, virtual=5, **kw)
        assert result.makespan >= result.uncontended > 0, name


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "messages, words",
    [
        ([Message(1, 17, B)], "processor 17 is not in topology 1"),
        ([Message(0, 1, B)], "processor 0"),
        ([Message(1, 2, -1.0)], "bytes must be zero or positive"),
        ([Message(1, 2, float("nan"))], "bytes must be zero or positive"),
        ([Message(1, 2, B, start=-1.0)], "start must be zero or positive"),
        ([Message(1, 2, B, after=(1,)), Message(2, 3, B, after=(0,))], "cycle"),
        ([Message(1, 2, B, after=(0,))], "message 0 waits for message 0"),
        ([Message(1, 2, B, after=(5,))], "names message 5"),
        ([{"src": 1, "dst": 2}], "missing 'bytes'"),
        ([{"src": 1, "dst": 2, "bytes": 1, "strat": 3}], "unknown field(s) strat"),
        ([{"src": "1", "dst": 2, "bytes": 1}], "src must be an integer"),
        ({"src": 1}, "must be a JSON list"),
        ("[{", "not valid JSON"),
    ],
)
def test_bad_phases_raise_phase_error(grid4, messages, words):
    with pytest.raises(PhaseError, match=None) as info:
        simulate_phase(grid4, messages)
    assert words in str(info.value)


def test_bad_virtual_and_patterns(grid4):
    with pytest.raises(PhaseError, match="no virtual topology with id 9"):
        simulate_phase(grid4, [Message(1, 2, B)], virtual=9)
    with pytest.raises(PhaseError, match="unknown pattern"):
        simulate(grid4, pattern="gossip", bytes=B)
    with pytest.raises(PhaseError, match="root must be a processor"):
        simulate(grid4, pattern="broadcast", bytes=B, root=17)
    with pytest.raises(PhaseError, match="dimension"):
        simulate(grid4, pattern="shift", bytes=B, dim=2)
    with pytest.raises(PhaseError, match="needs a message size"):
        simulate(grid4, pattern="halo")
    with pytest.raises(PhaseError, match="either messages or a pattern"):
        simulate(grid4, messages=[], pattern="halo", bytes=B)


def test_message_json_round_trip(tmp_path, grid4):
    msgs = [Message(1, 2, B), Message(2, 3, 10.0, start=0.5, after=(0,))]
    path = tmp_path / "m.json"
    path.write_text(json.dumps([m.to_json() for m in msgs]))
    assert load_messages(path) == msgs
    assert MessageArrays.from_messages(msgs).to_messages() == msgs


# --------------------------------------------------------------------------- command line


def test_cli_table(grid4, capsys):
    assert main(["simulate", str(SAMPLES / "grid4x4.machine"), "--pattern", "halo",
                 "--bytes", "4096", "--virtual", "3"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["messages"] == "64"
    assert float(lines["makespan"].split()[0]) == pytest.approx(2 * L + 4 * B * S, rel=1e-5)
    assert float(lines["uncontended"].split()[0]) == pytest.approx(3 * L + B * S, rel=1e-5)
    assert "busiest links:" in out


def test_cli_json_shape(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{"src": 1, "dst": 3, "bytes": 4096}, {"src": 2, "dst": 4,
                                 "bytes": 4096, "start": 0.001, "after": [0]}]))  # fmt: skip
    assert main(["simulate", str(SAMPLES / "grid4x4.machine"), "--messages", str(path),
                 "--json"]) == 0  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"makespan", "uncontended", "messages", "links"}
    assert [set(m) for m in data["messages"]] == [{"src", "dst", "bytes", "start", "end"}] * 2
    assert {tuple(sorted(lk)) for lk in data["links"]} == {
        ("busy", "link", "max_in_flight", "topology")
    }
    first = L * 2 + B * S
    assert data["messages"][1]["start"] == pytest.approx(first, rel=1e-12)
    assert data["makespan"] == pytest.approx(2 * first, rel=1e-12)
    assert [lk["link"] for lk in data["links"]] == [1, 2, 3]
    assert all(lk["topology"] == 1 for lk in data["links"])


@pytest.mark.parametrize(
    "text, status, words",
    [
        ('[{"src": 1, "dst": 99, "bytes": 1}]', 1, "processor 99"),
        ('[{"src": 1, "dst": 2, "bytes": -5}]', 1, "bytes must be zero or positive"),
        ('[{"src": 1, "dst": 2, "bytes": 5, "after": [0]}]', 1, "cycle"),
        ("[{", 1, "not valid JSON"),
    ],
)
def test_cli_bad_messages_exit_1(tmp_path, capsys, text, status, words):
    path = tmp_path / "m.json"
    path.write_text(text)
    assert main(["simulate", str(SAMPLES / "grid4x4.machine"), "--messages", str(path)]) == status
    assert words in capsys.readouterr().err


def test_cli_usage_errors(tmp_path, capsys):
    model = str(SAMPLES / "grid4x4.machine")
    assert main(["simulate", model, "--pattern", "halo"]) == 2
    assert main(["simulate", model, "--messages", str(tmp_path / "none.json")]) == 2
    assert main(["simulate", model, "--pattern", "halo", "--bytes", "1", "--virtual", "9"]) == 2
    with pytest.raises(SystemExit):  # a negative size: refused as the option is read
        main(["simulate", model, "--pattern", "halo", "--bytes", "-1"])
    with pytest.raises(SystemExit):
        main(["simulate", model, "--pattern", "halo", "--messages", "m.json"])


# --------------------------------------------------------------------------- properties


def reference(machine: Machine, msgs: list[Message]) -> list[float]:
    """The semantics of the spec, the plain way: at every event recompute every rate
    and move every message's bytes (no incremental bookkeeping)."""
    table = RouteTable.for_machine(machine)
    index = table.index
    routes = [table[table.add(m.src, m.dst)] for m in msgs]
    lat = [sum(index.latency[index.slot_of[lk]] for lk in r.links) for r in routes]
    links = [set(r.links) for r in routes]
    speed = {lk: index.speed[index.slot_of[lk]] for lk in index.slot_of}
    n = len(msgs)
    end: list[float | None] = [None] * n
    started: dict[int, float] = {}
    left = {i: m.bytes for i, m in enumerate(msgs)}
    t = 0.0
    while any(e is None for e in end):
        ready = {}
        for i, m in enumerate(msgs):
            if i in started or any(end[j] is None for j in m.after):
                continue
            ready[i] = max([m.start] + [end[j] for j in m.after])
        flying = [i for i in started if end[i] is None]
        load: dict[int, int] = {}
        for i in flying:
            for lk in links[i]:
                load[lk] = load.get(lk, 0) + 1
        per_byte = {i: max(speed[lk] * load[lk] for lk in links[i]) for i in flying}
        finish = {}
        for i in flying:
            go = max(t, started[i] + lat[i])
            finish[i] = go + left[i] * per_byte[i]
        t_next = min(list(finish.values()) + list(ready.values()))
        for i in flying:
            go = max(t, started[i] + lat[i])
            if t_next > go and per_byte[i] > 0:
                left[i] -= (t_next - go) / per_byte[i]
            if finish[i] <= t_next * (1 + 1e-12):
                end[i] = finish[i]
        for i, when in ready.items():
            if when <= t_next:
                started[i] = t_next
                if not links[i] or (lat[i] == 0 and msgs[i].bytes == 0):
                    end[i] = t_next
        t = t_next
    return end


@st.composite
def phases(draw, procs=16, most=8):
    count = draw(st.integers(1, most))
    out = []
    for i in range(count):
        after = draw(st.lists(st.integers(0, i - 1), max_size=2, unique=True)) if i else []
        out.append(
            Message(
                draw(st.integers(1, procs)),
                draw(st.integers(1, procs)),
                draw(st.sampled_from([0.0, 100.0, 1000.0, 4096.0, 12345.0])),
                draw(st.sampled_from([0.0, 0.0, 1e-4, 2e-3, 5e-3])),
                tuple(after) if draw(st.booleans()) else (),
            )
        )
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=phases())
def test_property_bounds_and_the_reference(grid4, msgs):
    result = simulate_phase(grid4, msgs)
    table = RouteTable.for_machine(grid4)
    index = table.index
    per_link: dict[int, float] = {}
    for i, m in enumerate(msgs):
        route = table[table.add(m.src, m.dst)]
        if route.links:
            slots = [index.slot_of[lk] for lk in route.links]
            floor = index.latency[slots].sum() + m.bytes * index.speed[slots].max()
            assert result.end[i] >= result.start[i] + floor * (1 - 1e-9)
        for lk in set(route.links):
            per_link[lk] = per_link.get(lk, 0.0) + m.bytes * index.speed[index.slot_of[lk]]
    assert result.makespan >= max(per_link.values(), default=0.0) * (1 - 1e-9)
    assert result.makespan >= result.uncontended * (1 - 1e-9)
    assert result.end.tolist() == pytest.approx(reference(grid4, msgs), rel=1e-9, abs=1e-15)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=phases(most=10))
def test_property_disjoint_routes_are_uncontended(grid4, msgs):
    table = RouteTable.for_machine(grid4)
    used: set[int] = set()
    keep = []
    for m in msgs:  # keep the messages whose routes share no link with those kept
        links = set(table[table.add(m.src, m.dst)].links)
        if not links & used:
            used |= links
            keep.append(Message(m.src, m.dst, m.bytes, m.start))
    result = simulate_phase(grid4, keep)
    assert result.end.tolist() == pytest.approx((result.start + result.alone).tolist(), rel=1e-12)
    assert result.makespan == pytest.approx(result.uncontended, rel=1e-12)
    assert result.max_in_flight.max(initial=0) <= 1


def test_busy_phase_matches_the_reference(gcel):
    # enough messages in flight for the incremental paths (one event at a time, only the
    # messages on changed links looked at) and for events that end several at once
    rng = np.random.default_rng(7)
    count = 240
    src = rng.integers(1, 513, count)
    dst = rng.integers(1, 513, count)
    sizes = rng.choice([1024.0, 4096.0, 16384.0], count)
    starts = np.round(rng.uniform(0, 0.02, count), 3)  # ties: several start together
    msgs = [
        Message(int(s), int(d), float(b), float(t0), (i - 1,) if i % 17 == 5 else ())
        for i, (s, d, b, t0) in enumerate(zip(src, dst, sizes, starts))
    ]
    result = simulate_phase(gcel, msgs)
    assert result.end.tolist() == pytest.approx(reference(gcel, msgs), rel=1e-9)
    assert result.events < 2 * count
    assert math.isfinite(result.makespan)
