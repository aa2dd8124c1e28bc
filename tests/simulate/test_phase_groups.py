"""The trace by bottleneck groups (parasol_core/native/phase_groups.c), which the kernel
takes from ``phases.GROUPED_MIN_MESSAGES`` messages on, against the reference trace
(phases.c, itself held bit-equal to the pure-Python trace by test_phases_native.py).

It computes the same quantities another way (a clock per bottleneck link instead of a
predicted end per message), so it rounds differently: starts, ends and busy times are
held to 1e-9 (relative), largest loads exactly. The event counts may differ by ends
that fall within rounding of ``END_RTOL`` apart, so they are not compared.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_phases_native import busy_gcel_phase, random_phase

from parasol_core import native
from parasol_core.model import Machine
from parasol_core.simulate import phases
from parasol_core.simulate.patterns import make_pattern_arrays
from parasol_core.simulate.phases import MessageArrays, PhaseResult, simulate, simulate_phase
from parasol_core.syntax.loader import load
from parasol_core.topology.generators import torus

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
L, S = 2.85e-05, 9.1e-07

pytestmark = pytest.mark.skipif(
    native.load("_phases") is None,
    reason="the C kernel of the trace was not built, or PARASOL_PURE_PYTHON is set",
)


def grouped_and_reference(run, monkeypatch):
    """``run()`` by groups (forced, whatever the size), then by the reference kernel;
    also whether the grouped kernel took it."""
    monkeypatch.setattr(phases, "GROUPED_MIN_MESSAGES", 0)
    monkeypatch.setattr(phases, "GROUPED_MIN_LOAD", 0.0)
    took = []
    real = phases._Trace.run_native

    def spy(self, lib, grouped=False):
        took.append(grouped)
        return real(self, lib, grouped)

    monkeypatch.setattr(phases._Trace, "run_native", spy)
    fast = run()
    monkeypatch.setattr(phases, "GROUPED_MIN_MESSAGES", 10**12)
    slow = run()
    return fast, slow, bool(took and took[0])


def assert_close(fast: PhaseResult, slow: PhaseResult) -> None:
    for name in ("start", "end", "alone", "busy"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-18)
    for name in ("link_ids", "max_in_flight"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.makespan == pytest.approx(slow.makespan, rel=1e-9, abs=1e-18)
    assert fast.uncontended == slow.uncontended


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_phase())
def test_groups_equal_the_reference_on_random_phases(case):
    # six topology kinds, random and zero latencies and speeds (a route with a link of
    # speed 0 stays with the reference kernel), zero sizes, tied starts, `after`
    machine, msgs = case
    with pytest.MonkeyPatch.context() as mp:  # (undone after each example)
        fast, slow, _ = grouped_and_reference(lambda: simulate_phase(machine, msgs), mp)
    assert_close(fast, slow)


def kernels_taken(spied: str, example: int = 80) -> list[bool]:
    """For ``example`` random phases drawn the same way on every run (whatever ran
    before): whether ``phases._Trace.<spied>`` took each (``run_native``: with the
    grouped kernel forced from 0 messages on, as grouped_and_reference does; and
    ``run_together``: every start at one time). The property tests above hold the answers equal; this
    tells that they tried the path they are about often enough."""
    taken: list[bool] = []

    @settings(max_examples=example, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
    @given(case=random_phase())
    def run(case):
        machine, msgs = case
        if spied == "run_together":
            msgs = MessageArrays(msgs.src, msgs.dst, msgs.nbytes,
                                 np.full(len(msgs), msgs.start[0]), msgs.after_ptr,
                                 msgs.after_idx)  # fmt: skip
        took: list[bool] = []
        with pytest.MonkeyPatch.context() as mp:
            real = getattr(phases._Trace, spied)
            if spied == "run_native":
                mp.setattr(phases, "GROUPED_MIN_MESSAGES", 0)
                mp.setattr(phases, "GROUPED_MIN_LOAD", 0.0)
                mp.setattr(phases._Trace, spied, lambda self, lib, grouped=False:
                           took.append(grouped) or real(self, lib, grouped))  # fmt: skip
            else:
                mp.setattr(phases._Trace, spied, lambda self: took.append(real(self)) or took[-1])
            simulate_phase(machine, msgs)
        taken.append(bool(took and took[0]))

    run()
    return taken


def test_groups_ran_on_most_random_phases():
    # a phase with a link of speed 0 on a route stays with the reference kernel, and
    # most do not have one
    taken = kernels_taken("run_native")
    assert len(taken) >= 40 and sum(taken) >= len(taken) // 10, taken


@pytest.mark.parametrize("window", [0.2, 2.0])
def test_groups_equal_the_reference_on_a_busy_gcel_phase(monkeypatch, window):
    # saturated (0.2 s: hundreds in flight on the busiest links, members changing
    # bottleneck at every event) and light
    gcel = load(SAMPLES / "parsytec-gcel.machine")
    msgs = busy_gcel_phase(window)
    fast, slow, grouped = grouped_and_reference(lambda: simulate_phase(gcel, msgs), monkeypatch)
    assert grouped
    assert_close(fast, slow)
    assert fast.ratio > (3 if window < 1 else 1)


def gcel_phase(count: int, window: float) -> MessageArrays:
    rng = np.random.default_rng(3)
    src = rng.integers(1, 513, count)
    dst = rng.integers(1, 512, count)
    dst[dst >= src] += 1
    return MessageArrays(src, dst, rng.uniform(1024, 65536, count), rng.uniform(0, window, count))


@pytest.mark.parametrize("window, grouped", [(0.5, True), (5.0, False)])
def test_groups_take_large_busy_phases_by_default(monkeypatch, window, grouped):
    # 5,000 messages (past GROUPED_MIN_MESSAGES) on the GCel: started over 0.5 s the
    # network saturates and the kernel goes by groups; over 5 s it is light (the busiest
    # link's bytes take about the span) and the reference kernel keeps it. Either way
    # the times are the reference's.
    gcel = load(SAMPLES / "parsytec-gcel.machine")
    msgs = gcel_phase(5000, window)
    took = []
    real = phases._Trace.run_native
    monkeypatch.setattr(
        phases._Trace, "run_native", lambda self, lib, grouped=False: took.append(grouped) or real(self, lib, grouped)
    )  # fmt: skip
    fast = simulate_phase(gcel, msgs)
    assert took == [grouped]
    monkeypatch.setattr(phases, "GROUPED_MIN_MESSAGES", 10**12)
    slow = simulate_phase(gcel, msgs)
    assert took == [grouped, False]
    assert_close(fast, slow)
    assert (fast.ratio > 3) == grouped


def test_groups_after_dependencies_and_zero_sizes(monkeypatch):
    # a ring all-gather (every message after two others) on a virtual-free 4 x 4 torus,
    # and zero-byte messages that take only their latency
    machine = Machine(topologies=[torus([4, 4], L, S)])
    fast, slow, grouped = grouped_and_reference(
        lambda: simulate(machine, pattern="ring-allgather", bytes=1000.0), monkeypatch
    )
    assert grouped
    assert_close(fast, slow)
    msgs = MessageArrays(
        [1, 1, 2, 5], [16, 2, 1, 5], [0.0, 100.0, 0.0, 50.0], [0.0, 0.0, 1e-5, 0.0]
    )
    fast, slow, grouped = grouped_and_reference(lambda: simulate_phase(machine, msgs), monkeypatch)
    assert grouped
    assert_close(fast, slow)
    assert fast.end[0] == pytest.approx(fast.alone[0], rel=1e-12)  # latency only


# --------------------------------------------------------------------------- the bulk path


def loops(monkeypatch):
    """The bulk path (_Trace.run_together) switched off: the event loop runs."""
    monkeypatch.setattr(phases._Trace, "run_together", lambda self: False)


@pytest.mark.parametrize("shape", [(4, 4), (8, 8, 8), (16, 16, 16), (3, 5, 2)])
def test_a_halo_in_bulk_equals_the_loop(monkeypatch, shape):
    # every message at once, all ending in one event: computed in bulk, bit-equal to
    # both loops (kernel and Python), two events
    machine = Machine(topologies=[torus(list(shape), L, S)])
    bulk = simulate(machine, pattern="halo", bytes=4096.0)
    loops(monkeypatch)
    kernel = simulate(machine, pattern="halo", bytes=4096.0)
    monkeypatch.setenv(native.PURE_ENV, "1")
    python = simulate(machine, pattern="halo", bytes=4096.0)
    for other in (kernel, python):
        for name in ("start", "end", "alone", "busy", "link_ids", "max_in_flight"):
            np.testing.assert_array_equal(getattr(bulk, name), getattr(other, name))
        assert bulk.events == other.events == 2
        assert bulk.makespan == other.makespan


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_phase())
def test_the_bulk_path_equals_the_loop_on_phases_started_at_once(case):
    # the random phases with every start moved to one time: where the bulk path takes
    # them it must give what the loop gives, bit for bit; elsewhere it leaves them
    machine, msgs = case
    msgs = MessageArrays(msgs.src, msgs.dst, msgs.nbytes, np.full(len(msgs), msgs.start[0]),
                         msgs.after_ptr, msgs.after_idx)  # fmt: skip
    took = []
    real = phases._Trace.run_together
    with pytest.MonkeyPatch.context() as mp:  # (undone after each example)
        mp.setattr(phases._Trace, "run_together", lambda self: took.append(real(self)) or took[-1])
        bulk = simulate_phase(machine, msgs)
        loops(mp)
        loop = simulate_phase(machine, msgs)
    if took and took[0]:
        assert loop.events == 2
    for name in ("start", "end", "alone", "busy", "link_ids", "max_in_flight"):
        np.testing.assert_array_equal(getattr(bulk, name), getattr(loop, name))
    assert bulk.events == loop.events


def test_the_bulk_path_took_some_random_phases():
    # equal sizes on equal links often end together
    taken = kernels_taken("run_together")
    assert len(taken) >= 40 and any(taken) and not all(taken), taken


def test_the_bulk_path_leaves_phases_that_do_not_end_together(monkeypatch):
    machine = Machine(topologies=[torus([4, 4], L, S)])
    msgs = make_pattern_arrays(machine, "halo", 4096.0)
    msgs.nbytes[3] = 4097.0  # one larger message: its own end event
    result = simulate_phase(machine, msgs)
    assert result.events == 3
    loops(monkeypatch)
    loop = simulate_phase(machine, msgs)
    np.testing.assert_array_equal(result.end, loop.end)
