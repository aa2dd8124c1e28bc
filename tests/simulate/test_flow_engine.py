"""The flow engine (issue 36): the C kernel (parasol_core/native/flow.c) held equal to its
executable specification, the Python trace of parasol_core/simulate/flow.py, on random
phases of every sharing rule (max, maxmin, cm02) and every kind of resource (shared
links, split-duplex links with and without acknowledgements, fatpipe links, shared links
among split ones, forwarders, buses, switches); hand-computed answers of each rule; plain
max-min against an independent computation; the link policy annotations.

The kernel solves max-min incrementally and sums in another order, so the two agree to
rounding, not bit for bit: times to 1e-9 (relative). A link's largest load may differ by
one where a start and an end fall on the same instant up to rounding (which of the two
comes first is then a matter of the last bit).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from estimator_support import estimator  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import native
from parasol_core.base import budget
from parasol_core.cli import main
from parasol_core.model import Machine, Processor, Timing
from parasol_core.simulate import flow
from parasol_core.simulate.messages import MessageArrays
from parasol_core.simulate.phases import PhaseError, simulate, simulate_phase
from parasol_core.simulate.trace import Phase
from parasol_core.syntax.loader import load, loads
from parasol_core.syntax.writer import dumps
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import build, bus, clique, generate, grid, ring, torus
from parasol_core.topology.resources import options_of, usage_of
from parasol_core.topology.transfer import RouteTable

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
RULES = ("max", "maxmin", "cm02")

needs_kernel = pytest.mark.skipif(
    flow._kernel() is None,
    reason="the flow engine's C kernel was not built, or PARASOL_PURE_PYTHON is set",
)


def machine_of(topology, switches: bool = False) -> Machine:
    procs = [Processor(id=1, name="node")]
    if switches:
        procs.append(Processor(id=2, name="switch", role="switch"))
    return Machine(id=1, name="flows", processor_count=len(procs), topology_count=1,
                   processors=procs, topologies=[topology])  # fmt: skip


def both(machine: Machine, msgs: MessageArrays, sharing: str):
    """The Python trace and the kernel on the same routes."""
    table = RouteTable.for_machine(machine)
    ids = table.add_many(msgs.src, msgs.dst)
    phase = Phase.of(table, ids, msgs)
    usage = usage_of(table, ids, table.options)
    spec = flow.run_flow(phase, usage, sharing, crit=True)
    fast = flow.run_native(flow._kernel(), phase, usage, sharing, crit=True)
    for out in (spec, fast):
        assert_critical(msgs, out)
    return spec, fast


def assert_close(spec, fast) -> None:
    for name in ("t0", "end", "alone", "busy"):
        a, b = getattr(spec, name), getattr(fast, name)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-18, err_msg=name)
    assert np.abs(spec.max_n - fast.max_n).max(initial=0) <= 1


def assert_critical(msgs: MessageArrays, out) -> None:
    """Each message's critical predecessor (``crit``) is the one of those it waits for
    that ended last, the highest numbered among ends equal to rounding (C and Python
    round apart), or none (-1) when none ended after its own start (or it waits for
    none); computed here from the ends alone."""
    assert out.crit is not None and out.crit.shape == out.end.shape
    m = out.end.shape[0]
    for j in range(m):
        deps = [] if msgs.after_ptr is None else \
            msgs.after_idx[msgs.after_ptr[j] : msgs.after_ptr[j + 1]].tolist()  # fmt: skip
        c = int(out.crit[j])
        if not deps or np.isnan(out.end[j]):
            assert c == -1 or c in deps, (j, c, deps)
            continue
        latest = max(out.end[d] for d in deps)
        start = float(msgs.start[j])
        if c == -1:  # nobody ended after its start (to rounding)
            assert latest <= start * (1 + 1e-9) + 1e-18, (j, latest, start)
            continue
        assert c in deps, (j, c, deps)
        assert out.end[c] >= latest * (1 - 1e-9) - 1e-18, (j, c, out.end[c], latest)
        # the highest numbered of those that ended with it
        assert all(out.end[d] < out.end[c] for d in deps if d > c), (j, c, deps)


# --------------------------------------------------------------------------- random phases

KINDS = ("torus", "grid", "ring", "bus", "clique", "fattree", "dragonfly")


def _topology(kind: str, a: int, b: int):
    if kind == "torus":
        return torus([a + 1, b], 1e-6, 1e-9), False
    if kind == "grid":
        return grid([a + 1, b], 1e-6, 1e-9), False
    if kind == "ring":
        return ring(a * b + 2, 1e-6, 1e-9), False
    if kind == "bus":
        return bus(a + b, 1e-6, 1e-9), False
    if kind == "clique":
        return clique(min(a + b, 7), 1e-6, 1e-9), False
    if kind == "fattree":
        return generate("fattree", [2, 2 + (a > 3)], 1e-6, 1e-9), True
    return generate("dragonfly", [3, 2, 2, 1], 1e-6, 1e-9), True


@st.composite
def flow_phase(draw):
    """A topology with random link times and policies, and a random phase on its compute
    processors: sizes (zero included), starts with ties, ``after`` dependencies,
    delays, messages to self."""
    kind = draw(st.sampled_from(KINDS))
    a, b = draw(st.integers(1, 5)), draw(st.integers(2, 5))
    topology, switches = _topology(kind, a, b)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lat = draw(st.sampled_from(["same", "random", "some zero", "zero"]))
    spd = draw(st.sampled_from(["same", "random", "some zero"]))
    for link in topology.links:
        if lat == "random" or (lat == "some zero" and rng.random() < 0.5):
            link.latency = Timing(0.0 if lat == "some zero" else float(rng.uniform(1e-7, 5e-6)))
        elif lat == "zero":
            link.latency = Timing(0.0)
        if spd == "random":
            link.speed = Timing(float(rng.uniform(2e-10, 3e-9)))
        elif spd == "some zero" and rng.random() < 0.2:
            link.speed = Timing(0.0)
    topology.duplex = draw(st.sampled_from([None, 0.0, 0.2]))
    topology.forward = draw(st.sampled_from([None, None, 0.0, 5e-10, 4e-9]))
    ids = [link.id for link in topology.links]
    if draw(st.booleans()):
        topology.fatpipe = " ".join(str(i) for i in ids if rng.random() < 0.3) or None
    if topology.duplex is not None and draw(st.booleans()):
        topology.shared = " ".join(str(i) for i in ids if rng.random() < 0.3) or None
    machine = machine_of(topology, switches)
    compute = topology.processor_count if not switches else _computes(topology)
    count = draw(st.sampled_from([1, 2, 10, 40, 150]))
    src = rng.integers(1, compute + 1, count)
    dst = rng.integers(1, compute + 1, count)
    sizes = draw(st.sampled_from(["equal", "few", "uniform", "with zeros"]))
    if sizes == "equal":
        nbytes = np.full(count, 65536.0)
    elif sizes == "few":
        nbytes = rng.choice([100.0, 4096.0, 65536.0], count)
    else:
        nbytes = rng.uniform(1, 1e5, count)
        if sizes == "with zeros":
            nbytes[rng.random(count) < 0.2] = 0.0
    window = draw(st.sampled_from([0.0, 1e-5, 1e-4]))
    start = rng.uniform(0, window, count)
    if draw(st.booleans()):
        start = np.round(start, 6)  # ties
    after_ptr = after_idx = None
    if count > 1 and draw(st.booleans()):
        waits = [sorted(set(rng.integers(0, i, rng.integers(1, 3)).tolist()))
                 if i and rng.random() < 0.3 else [] for i in range(count)]  # fmt: skip
        after_ptr = np.zeros(count + 1, dtype=np.int64)
        np.cumsum([len(w) for w in waits], out=after_ptr[1:])
        after_idx = np.asarray([j for w in waits for j in w], dtype=np.int64)
    delay = None
    if draw(st.booleans()):  # what a replayed program computes between its messages
        delay = np.where(rng.random(count) < 0.5, rng.uniform(0, 2e-5, count), 0.0)
    return machine, MessageArrays(src, dst, nbytes, start, after_ptr, after_idx, delay)


def _computes(topology) -> int:
    return sum(1 for t in topology.types.values() if t == 1)


@needs_kernel
@pytest.mark.parametrize("sharing", RULES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=flow_phase())
def test_kernel_equals_the_python_trace_on_random_phases(sharing, case):
    machine, msgs = case
    assert_close(*both(machine, msgs, sharing))


@needs_kernel
@pytest.mark.parametrize("sharing", RULES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=flow_phase())
def test_the_kernel_gives_the_same_doubles_however_its_inputs_are_made(sharing, case):
    # the resources renumbered for the kernel or not, the usage consumed (a one-shot
    # replay's) or kept: the same events, times and loads, bit for bit
    machine, msgs = case
    table = RouteTable.for_machine(machine)
    ids = table.add_many(msgs.src, msgs.dst)
    phase = Phase.of(table, ids, msgs)
    lib = flow._kernel()
    runs = [flow.run_native(lib, phase, usage_of(table, ids, table.options), sharing,
                            renumber=renumber) for renumber in (None, True, False)]  # fmt: skip
    usage = usage_of(table, ids, table.options)
    runs.append(flow.run_native(lib, phase, usage, sharing, consume=True))
    assert usage.floor is None and usage.slowest is None  # let go
    assert runs[-1].alone.shape == (0,)
    # the phase lightened (a one-shot replay's): its link slots, on a topology of links
    # only, taken from the resource uses, renumbered or not
    for renumber in (None, True):
        usage = usage_of(table, ids, table.options)
        light = flow.lighten(phase, usage)
        assert (light.u_flat is None) == usage.links_only
        runs.append(flow.run(light, usage, sharing, consume=True) if renumber is None else
                    flow.run_native(lib, light, usage, sharing, True, renumber))  # fmt: skip
    for other in runs[1:]:
        for name in ("t0", "end", "busy", "max_n"):
            np.testing.assert_array_equal(getattr(other, name), getattr(runs[0], name), name)
        assert other.events == runs[0].events
    np.testing.assert_array_equal(runs[1].alone, runs[0].alone)


@needs_kernel
@pytest.mark.slow
@pytest.mark.parametrize("sharing", RULES)
@pytest.mark.parametrize("duplex", [None, 0.0])
def test_kernel_equals_the_python_trace_on_a_busy_torus(sharing, duplex):
    # 600 messages on a 6 x 6 x 6 torus, starting over 0.1 ms: over a thousand events,
    # hundreds in flight, the incremental max-min at work
    topology = torus([6, 6, 6], 1e-6, 1e-9)
    topology.duplex = duplex
    rng = np.random.default_rng(3)
    n = 600
    src, dst = rng.integers(1, 217, n), rng.integers(1, 217, n)
    msgs = MessageArrays(src, dst, rng.uniform(1e3, 1e5, n), rng.uniform(0, 1e-4, n))
    spec, fast = both(machine_of(topology), msgs, sharing)
    assert_close(spec, fast)
    assert fast.events > n


@needs_kernel
def test_the_kernel_runs_by_default_and_python_when_switched_off():
    topology = torus([4, 4], 1e-6, 1e-9)
    topology.duplex = 0.0
    machine = machine_of(topology)
    msgs = MessageArrays([1, 2, 3], [3, 4, 1], 1e5)
    fast = simulate_phase(machine, msgs, sharing="cm02")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(native.PURE_ENV, "1")
        assert flow._kernel() is None
        slow = simulate_phase(machine, msgs, sharing="cm02")
    np.testing.assert_allclose(fast.end, slow.end, rtol=1e-12)


# --------------------------------------------------------------------------- by hand


def _torus8(duplex=0.0) -> Machine:
    topology = torus([8, 8, 8], 1e-6, 1e-9)
    topology.duplex = duplex
    return machine_of(topology)


def test_cm02_weighs_by_route_latency_on_a_hand_computed_case():
    """Three 64 KiB messages on an 8 x 8 x 8 torus (1 us, 1 GB/s, split duplex): A
    167 -> 128 (5 hops), B 175 -> 218 and C 175 -> 512 (6 hops). C shares three links
    with A and its first with B. A moves alone from 5 us (1,000 bytes by 6 us). From 6
    us the links A and C share fill at level 1 / (1e-9 (1/5e-6 + 1/6e-6)): A at 6/11 GB/s,
    C at 5/11; B takes what C leaves on their link, 6/11. A ends at 6 + 64,536 x 11/6 ns
    = 124.316 us; then B and C (equal weights) share theirs at 1/2 GB/s: B's last 1,000
    bytes take 2 us; C, alone, ends at 137.072 us. SimGrid 3.32 gives exactly these
    (tests/test_flow_simgrid.py), in its Full update mode."""
    msgs = MessageArrays([167, 175, 175], [128, 218, 512], 65536.0)
    result = simulate_phase(_torus8(), msgs, sharing="cm02")
    assert result.end.tolist() == pytest.approx([124.316e-6, 126.316e-6, 137.072e-6], rel=1e-12)
    # plain max-min: on the shared links A and C get 1/2 each (A: 64,536 bytes at
    # 1/2 GB/s from 6 us), B the other half of its link
    result = simulate_phase(_torus8(), msgs, sharing="maxmin")
    assert result.end.tolist() == pytest.approx([135.072e-6, 137.072e-6, 137.072e-6], rel=1e-12)


def test_cm02_caps_each_message_at_its_slowest_link():
    # one message alone: latency + bytes x the slowest link's speed, under every rule
    machine = load(SAMPLES / "grid4x4.machine")
    for sharing in RULES:
        result = simulate(machine, messages=[{"src": 1, "dst": 16, "bytes": 4096}], sharing=sharing)
        assert result.end[0] == pytest.approx(6 * 2.85e-05 + 4096 * 9.1e-07, rel=1e-12)


def zero_latency_pair() -> Machine:
    """1 - 2 over link 1 (no latency), 3 - 1 over link 2 (1 us); 1 GB/s."""
    topology = build([(1, 2), (3, 1)], 3, 0.0, 1e-9, routing="shortest")
    topology.links[1].latency = Timing(1e-6)
    return machine_of(topology)


def test_a_zero_latency_route_weighs_one_second_under_cm02():
    """SimGrid's CM02 gives a route without latency the penalty 1 (not 0): A, 1 -> 2 (no
    latency), and B, 3 -> 1 -> 2 (1 us), share link 1 as 1 : 10^6."""
    msgs = MessageArrays([1, 3], [2, 2], 1e6)
    result = simulate_phase(zero_latency_pair(), msgs, sharing="cm02")
    level = 1 / (1e-9 * (1 + 1e6))  # link 1 fills: A at level / 1, B at level / 1e-6
    b_end = 1e-6 + 1e6 / (level / 1e-6)
    a_left = 1e6 - 1e9 * 1e-6 - level * (b_end - 1e-6)  # alone for 1 us, then shared
    assert result.end.tolist() == pytest.approx([b_end + a_left * 1e-9, b_end], rel=1e-12)


def test_a_fatpipe_link_bounds_each_message_separately():
    # four messages across one fatpipe bus: each at the link's full speed, as if alone
    topology = bus(8, 1e-6, 1e-9)
    topology.fatpipe = "1"
    machine = machine_of(topology)
    msgs = MessageArrays([1, 2, 3, 4], [5, 6, 7, 8], 1e6)
    for sharing in RULES:
        assert simulate_phase(machine, msgs, sharing=sharing).end.tolist() == pytest.approx(
            [1e-6 + 1e-3] * 4, rel=1e-12
        )
    topology.fatpipe = None  # shared: four times as long
    for sharing in RULES:
        assert simulate_phase(machine, msgs, sharing=sharing).end.tolist() == pytest.approx(
            [1e-6 + 4e-3] * 4, rel=1e-12
        )


def test_a_link_listed_shared_stays_one_resource_on_a_duplex_topology():
    topology = ring(4, 0.0, 1e-9)
    topology.duplex = 0.0
    machine = machine_of(topology)
    swap = MessageArrays([1, 2], [2, 1], 1e6)
    for sharing in RULES:
        assert simulate_phase(machine, swap, sharing=sharing).makespan == pytest.approx(1e-3)
    topology.shared = "1"
    for sharing in RULES:
        assert simulate_phase(machine, swap, sharing=sharing).makespan == pytest.approx(2e-3)


# --------------------------------------------------------------------------- plain max-min


def independent_maxmin(routes, nbytes, latency, capacity) -> list[float]:
    """Plain max-min fair sharing, written apart from the engine: every message (all
    start at 0) first waits its latency, then shares each resource of its route (a list
    of resource names; capacity in bytes a second) max-min fairly with the others moving:
    repeatedly the resource with the smallest equal share left fixes its messages at that
    share. Events: the next end or the next end of a latency. Returns the ends."""
    n = len(routes)
    left = list(nbytes)
    end = [None] * n
    t = 0.0
    while any(e is None for e in end):
        moving = [i for i in range(n) if end[i] is None and latency[i] <= t]
        rate = {}
        free = set(moving)
        room = dict(capacity)
        while free:
            best, share = None, math.inf
            for r in room:
                users = [i for i in free if r in routes[i]]
                if users and room[r] / len(users) < share:
                    best, share = r, room[r] / len(users)
            for i in [i for i in free if best in routes[i]]:
                rate[i] = share
                free.discard(i)
                for r in routes[i]:
                    room[r] -= share
        nxt = min([latency[i] for i in range(n) if end[i] is None and latency[i] > t]
                  + [t + left[i] / rate[i] for i in moving])  # fmt: skip
        for i in moving:
            left[i] -= rate[i] * (nxt - t)
            if left[i] <= 1e-9 * nbytes[i]:
                end[i] = nxt
        t = nxt
    return end


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("duplex", [None, 0.0])
def test_maxmin_equals_an_independent_computation(seed, duplex):
    rng = np.random.default_rng(seed)
    topology = torus([4, 4, 2], 1e-6, 1e-9)
    topology.duplex = duplex
    for link in topology.links:  # links of two speeds
        link.speed = Timing(float(rng.choice([1e-9, 2.5e-9])))
    machine = machine_of(topology)
    n = 30
    src = rng.integers(1, 33, n)
    dst = (src + rng.integers(1, 32, n) - 1) % 32 + 1
    nbytes = rng.uniform(1e4, 1e5, n)
    result = simulate_phase(machine, MessageArrays(src, dst, nbytes), sharing="maxmin")
    table = RouteTable.for_machine(machine)
    index = table.index
    routes, latency, capacity = [], [], {}
    for s, d in zip(src.tolist(), dst.tolist()):
        r = table[table.add(s, d)]
        names = []
        for k, lid in enumerate(r.links):
            a, b = r.processors[k], r.processors[k + 1]
            name = (lid, a < b) if duplex is not None else lid
            names.append(name)
            capacity[name] = 1 / float(index.speed[index.slot_of[lid]])
        routes.append(set(names))
        latency.append(1e-6 * len(r.links))
    expected = independent_maxmin(routes, nbytes.tolist(), latency, capacity)
    assert result.end.tolist() == pytest.approx(expected, rel=1e-9)


# --------------------------------------------------------------------------- no count budget

EXPLICIT = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/><host id="h3" speed="1Gf"/>
  <host id="h4" speed="1Gf"/><router id="r1"/>
  <link id="l1" bandwidth="1GBps" latency="1us"/><link id="l2" bandwidth="2GBps" latency="2us"/>
  <link id="l3" bandwidth="1GBps" latency="1us"/><link id="l4" bandwidth="4GBps" latency="1us"/>
  <route src="h1" dst="h2"><link_ctn id="l1"/><link_ctn id="l2"/></route>
  <route src="h1" dst="h3"><link_ctn id="l1"/><link_ctn id="l3"/></route>
  <route src="h1" dst="h4"><link_ctn id="l1"/><link_ctn id="l4"/></route>
  <route src="h2" dst="h3"><link_ctn id="l2"/><link_ctn id="l3"/></route>
  <route src="h2" dst="h4"><link_ctn id="l2"/><link_ctn id="l4"/></route>
  <route src="h3" dst="h4"><link_ctn id="l3"/><link_ctn id="l4"/></route>
</zone>
</platform>
"""


@pytest.mark.parametrize("sharing", RULES)
def test_two_messages_sharing_no_link_are_never_refused(sharing):
    """Issue 36's defect: `simulate --sharing maxmin` refused 12 of 40 random two-message
    phases on an imported explicit platform (the solver's own steps were taken from the
    message budget). Now every one runs, and two messages that share no link each take
    their time alone."""
    from parasol_core.simgrid import import_text

    machine = import_text(EXPLICIT).machine
    table = RouteTable.for_machine(machine)
    rng = np.random.default_rng(40)
    for _ in range(40):
        src, dst = rng.integers(1, 5, 2), rng.integers(1, 5, 2)
        msgs = MessageArrays(src, dst, rng.uniform(1, 1e6, 2))
        result = simulate_phase(machine, msgs, sharing=sharing)
        a, b = (set(table[table.add(int(s), int(d))].links) for s, d in zip(src, dst))
        if not a & b:
            assert result.end == pytest.approx(result.alone, rel=1e-12)


def test_no_message_resource_budget_is_left(capsys):
    """Issue 36: the only refusals are the memory estimate and the estimator's counts.
    The Python trace alone (no kernel) once refused 5,000 random messages on a 16^3
    torus ("needs about 899,294,949 updates"); now nothing counts them."""
    assert not hasattr(flow, "MAX_FLOW_WORK") and not hasattr(flow, "FlowLimitError")
    machine = load(SAMPLES / "grid4x4.machine")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(native.PURE_ENV, "1")
        simulate(machine, pattern="alltoall", bytes=10, sharing="maxmin")
    # the command line's refusal is the memory budget's, naming it
    assert main(["simulate", str(SAMPLES / "parsytec-gcel.machine"), "--pattern", "alltoall",
                 "--bytes", "10", "--sharing", "maxmin", "--max-memory", "10M"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "over the memory budget of 10.0 MiB (--max-memory)" in err
    assert "updates" not in err


def test_the_flow_engine_is_held_to_its_own_memory_figures():
    """The memory budget charges a phase the flow engine runs 400 bytes a message, 200 a
    route step and 80 a link (budget.FLOW_BYTES_PER_*; the 1994 trace: 240 a message and
    120 a step)."""
    machine = load(SAMPLES / "grid4x4.machine")
    msgs = [{"src": 1, "dst": 16, "bytes": 10}] * 100  # 7 route steps each; 24 links
    between = 100 * 300 + 700 * 150
    with budget.limits(memory=between):
        simulate(machine, messages=msgs)  # 1994: 100 x 240 + 700 x 120 = 108,000
        with pytest.raises(budget.MemoryBudgetError, match="100 messages, 700 route steps"):
            simulate(machine, messages=msgs, sharing="maxmin")  # 40,000 + 140,000


@needs_kernel
def test_the_kernel_stops_at_an_estimator_deadline():
    topology = torus([6, 6, 6], 1e-6, 1e-9)
    topology.duplex = 0.0
    rng = np.random.default_rng(0)
    n = 6000
    msgs = MessageArrays(rng.integers(1, 217, n), rng.integers(1, 217, n), 1e5,
                         rng.uniform(0, 1e-3, n))  # fmt: skip
    with budget.deadline(0.0), pytest.raises(budget.TimeBudgetError):
        simulate_phase(machine_of(topology), msgs, sharing="maxmin")


# --------------------------------------------------------------------------- front ends

LINE = (SAMPLES / "grid4x4.machine").read_text()


def test_simulate_sharing_cm02_from_the_command_line(tmp_path, capsys):
    path = tmp_path / "m.json"
    msgs = [{"src": 1, "dst": 16, "bytes": 4096}, {"src": 2, "dst": 12, "bytes": 8192},
            {"src": 5, "dst": 8, "bytes": 1000, "start": 1e-5}]  # fmt: skip
    path.write_text(json.dumps(msgs))
    machine = str(SAMPLES / "grid4x4.machine")
    assert main(["simulate", machine, "--messages", str(path), "--json", "--sharing", "cm02"]) == 0
    got = [m["end"] for m in json.loads(capsys.readouterr().out)["messages"]]
    expected = simulate(load(SAMPLES / "grid4x4.machine"), messages=msgs, sharing="cm02")
    assert got == expected.end.tolist()


@pytest.mark.parametrize("sharing", RULES)
def test_the_estimator_and_the_command_line_give_the_same_phase(
    estimator,  # noqa: F811
    tmp_path,
    capsys,
    sharing,
):
    """simulate, estimate.phase (and nothing else: no window plots a phase; PIUI's
    estimate window asks transfer.time in a network state) call the same core function,
    simulate(), so their answers are the same numbers, here on the T800 mesh with
    forwarding and duplex links."""
    t800 = SAMPLES / "pamela-t800.machine"
    msgs = [{"src": 1, "dst": 3, "bytes": 1e6}, {"src": 1, "dst": 2, "bytes": 5e5},
            {"src": 2, "dst": 1, "bytes": 1e6, "start": 0.1}]  # fmt: skip
    path = tmp_path / "m.json"
    path.write_text(json.dumps(msgs))
    assert main(["simulate", str(t800), "--messages", str(path), "--json", "--sharing",
                 sharing]) == 0  # fmt: skip
    cli = json.loads(capsys.readouterr().out)
    with estimator.client() as client:
        mid = client.push(t800.read_text(), name="t800")["model"]
        got = client.call("estimate.phase", model=mid, messages=msgs, sharing=sharing)
    assert got == cli
    assert [m["end"] for m in got["messages"]] == simulate(
        load(t800), messages=msgs, sharing=sharing).end.tolist()  # fmt: skip


def test_an_unknown_sharing_names_cm02_among_the_rules():
    with pytest.raises(PhaseError, match="max, maxmin, cm02"):
        simulate(load(SAMPLES / "grid4x4.machine"), pattern="halo", bytes=10, sharing="fair")


# --------------------------------------------------------------------------- the annotations


def test_link_policies_read_and_write_losslessly():
    text = (SAMPLES / "grid4x4.machine").read_text()
    text = text.replace("# piui: shape = 4 4", "# piui: shape = 4 4\n        # piui: duplex = 0"
                        "\n        # piui: fatpipe = 7 3-5  # the fat ones\n        "
                        "# piui: shared = 2", 1)  # fmt: skip
    machine = loads(text)
    topology = machine.hardware()
    assert (topology.fatpipe, topology.shared) == ("3-5 7", "2")
    assert dumps(machine) == text  # unedited: byte for byte
    topology.fatpipe = "1 2 3 9"  # written as set, read back in the written form
    edited = dumps(machine)
    assert "# piui: fatpipe = 1 2 3 9  # the fat ones" in edited
    assert loads(edited).hardware().fatpipe == "1-3 9"
    topology.fatpipe = "1-3 9"
    edited = dumps(machine)
    assert "# piui: fatpipe = 1-3 9  # the fat ones" in edited
    assert loads(edited).hardware().fatpipe == "1-3 9"
    topology.fatpipe = None
    assert "fatpipe" not in dumps(machine)


@pytest.mark.parametrize("line, why", [("# piui: fatpipe = 3 x", "expected link ids"),
                                       ("# piui: fatpipe = 5-2", "not a link id or an ascending"),
                                       ("# piui: fatpipe = \u0663", "expected link ids"),
                                       ("# piui: shared = 2-\u00b2", "expected link ids"),
                                       ("# piui: shared", "expected '# piui: shared = ID")])  # fmt: skip
def test_bad_link_policies_warn_and_are_ignored(line, why):
    text = LINE.replace("# piui: shape = 4 4", f"# piui: shape = 4 4\n        {line}", 1)
    machine = loads(text)
    assert any(why in d.message for d in machine.src.diagnostics)
    assert machine.hardware().fatpipe is None and machine.hardware().shared is None


def test_a_bad_link_policy_set_by_a_program_is_a_routing_error():
    topology = torus([3, 3], 1e-6, 1e-9)
    topology.fatpipe = "one"
    with pytest.raises(RoutingError, match="fatpipe"):
        options_of(topology)
    topology.fatpipe = [3, 1, 2]
    assert options_of(topology).fatpipe == "1-3"


@pytest.mark.parametrize("sharing", RULES)
def test_a_delay_starts_a_message_that_long_after_the_last_it_waits_for(sharing):
    # a 4-ring of 1 us, 1 ns a byte links: message 1 waits for message 0 and then 5 us,
    # message 2 waits for nobody and starts 3 us after its start; message 3 (to itself,
    # no time) waits for 1 and 2 and 7 us more; message 4 waits for 3 and takes 1000 B
    machine = machine_of(ring(4, 1e-6, 1e-9))
    msgs = MessageArrays([1, 2, 3, 1, 1], [2, 3, 4, 1, 2], [1000, 1000, 0, 0, 1000],
                         [0, 0, 1e-6, 0, 0], np.array([0, 0, 1, 1, 3, 4]),
                         np.array([0, 1, 2, 3]), [0, 5e-6, 3e-6, 7e-6, 0])  # fmt: skip
    result = simulate_phase(machine, msgs, sharing=sharing)
    alone = 2e-6  # 1 us + 1000 x 1 ns
    ends = [alone, alone + 5e-6 + alone, 4e-6 + 1e-6, 0, 0]  # message 2: 0 bytes
    ends[3] = max(ends[1], ends[2]) + 7e-6
    ends[4] = ends[3] + alone
    np.testing.assert_allclose(result.end, ends, rtol=1e-12)
    np.testing.assert_allclose(result.start[1:], [alone + 5e-6, 4e-6, ends[3], ends[3]], rtol=1e-12)
    np.testing.assert_allclose(result.makespan, ends[4], rtol=1e-12)
    assert result.uncontended == pytest.approx(result.makespan)
