"""The C kernel of the communication-phase trace (parasol_core/native/phases.c) against
the pure-Python trace: the same phases, run both ways, must give the same starts, ends,
link busy times, largest loads and event counts.

The kernel takes the same steps with the same arithmetic, so the results are in fact
bit-identical; the tests allow 1e-12 (relative) on the times, so that a compiler that
rounds a last bit differently does not fail them, and nothing on the counts.
(tests/simulate/test_phases.py runs every hand-computed and property test both ways too.)
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import native
from parasol_core.model import Machine, Timing, VirtualTopology
from parasol_core.simulate.patterns import PATTERNS
from parasol_core.simulate.phases import (
    MessageArrays,
    PhaseResult,
    _kernel,
    simulate,
    simulate_phase,
)
from parasol_core.syntax.loader import load
from parasol_core.topology.generators import bus, clique, grid, hypercube, ring, torus
from parasol_core.topology.mapping import make_mapping

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
L, S = 2.85e-05, 9.1e-07

pytestmark = pytest.mark.skipif(
    native.load("_phases") is None and not native.pure_python(),
    reason="the C kernel of the trace was not built (no C compiler at install time)",
)


def both(run):
    """``run()`` with the kernel, then with the pure-Python path."""
    assert _kernel() is not None
    fast = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(native.PURE_ENV, "1")
        assert _kernel() is None
        slow = run()
    return fast, slow


def assert_same(fast: PhaseResult, slow: PhaseResult) -> None:
    for name in ("start", "end", "alone", "busy"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-12, atol=0)
    for name in ("link_ids", "max_in_flight", "src", "dst", "nbytes"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.events == slow.events
    assert fast.makespan == pytest.approx(slow.makespan, rel=1e-12, abs=0)
    assert fast.uncontended == slow.uncontended


@pytest.fixture(scope="module")
def gcel() -> Machine:
    return load(SAMPLES / "parsytec-gcel.machine")


# --------------------------------------------------------------------------- random phases

TOPOLOGIES = {
    "grid": lambda a, b: grid([a, b], L, S),
    "torus": lambda a, b: torus([a, b], L, S),
    "ring": lambda a, b: ring(a * b, L, S),
    "hypercube": lambda a, b: hypercube(max(1, (a * b).bit_length() - 1), L, S),
    "bus": lambda a, b: bus(a * b, L, S),
    "clique": lambda a, b: clique(min(a * b, 8), L, S),
}


@st.composite
def random_phase(draw):
    """A machine with random link times and a random phase on it: sizes (zero
    included), start times with ties, ``after`` dependencies, messages to self, and
    often more than 64 in flight (the kernel's one-message-at-a-time steps)."""
    kind = draw(st.sampled_from(sorted(TOPOLOGIES)))
    a, b = draw(st.integers(1, 6)), draw(st.integers(2, 6))
    topology = TOPOLOGIES[kind](a, b)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    lat = draw(st.sampled_from(["same", "random", "zero", "some zero"]))
    spd = draw(st.sampled_from(["same", "random", "some zero", "all zero"]))
    for link in topology.links:
        if lat == "random" or (lat == "some zero" and rng.random() < 0.5):
            link.latency = Timing(0.0 if lat == "some zero" else float(rng.uniform(0, 5e-5)))
        elif lat == "zero":
            link.latency = Timing(0.0)
        if spd == "random":
            link.speed = Timing(float(rng.uniform(1e-7, 2e-6)))
        elif spd == "all zero" or (spd == "some zero" and rng.random() < 0.3):
            link.speed = Timing(0.0)
    machine = Machine(topologies=[topology])
    p = topology.processor_count
    count = draw(st.sampled_from([1, 5, 30, 120, 400]))
    src = rng.integers(1, p + 1, count)
    dst = rng.integers(1, p + 1, count)  # some to themselves
    sizes = draw(st.sampled_from(["equal", "few", "uniform", "with zeros"]))
    if sizes == "equal":
        nbytes = np.full(count, 4096.0)
    elif sizes == "few":
        nbytes = rng.choice([100.0, 1000.0, 4096.0], count)
    else:
        nbytes = rng.uniform(1, 65536, count)
        if sizes == "with zeros":
            nbytes[rng.random(count) < 0.2] = 0.0
    window = draw(st.sampled_from([0.0, 1e-4, 1e-2, 0.1]))
    start = rng.uniform(0, window, count)
    if draw(st.booleans()):
        start = np.round(start, 4)  # ties: several start together
    after_ptr = after_idx = None
    share = draw(st.sampled_from([0.0, 0.1, 0.5]))
    if share and count > 1:
        waits = [
            sorted(set(rng.integers(0, i, rng.integers(1, 4)).tolist()))
            if i and rng.random() < share
            else []
            for i in range(count)
        ]
        after_ptr = np.zeros(count + 1, dtype=np.int64)
        np.cumsum([len(w) for w in waits], out=after_ptr[1:])
        after_idx = np.asarray([j for w in waits for j in w], dtype=np.int64)
    return machine, MessageArrays(src, dst, nbytes, start, after_ptr, after_idx)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_phase())
def test_kernel_equals_python_on_random_phases(case):
    machine, msgs = case
    assert_same(*both(lambda: simulate_phase(machine, msgs)))


# --------------------------------------------------------------------------- larger cases


def busy_gcel_phase(window: float, count: int = 2000) -> MessageArrays:
    """``count`` random messages between the GCel's 512 processors starting within
    ``window`` seconds (0.2 s: saturated; 2 s: light), a seventh of the starts rounded so
    that some tie."""
    rng = np.random.default_rng(11)
    src = rng.integers(1, 513, count)
    dst = rng.integers(1, 512, count)
    dst[dst >= src] += 1
    start = rng.uniform(0, window, count)
    start[::7] = np.round(start[::7], 2)
    return MessageArrays(src, dst, rng.uniform(1024, 65536, count), start)


@pytest.mark.parametrize("window", [0.2, 2.0])
def test_kernel_equals_python_on_a_busy_gcel_phase(gcel, window):
    # the benchmark's phase, smaller: saturated (0.2 s) and light (2 s), thousands of
    # events one message at a time, with batches where starts tie
    count = 2000
    msgs = busy_gcel_phase(window, count)
    fast, slow = both(lambda: simulate_phase(gcel, msgs))
    assert_same(fast, slow)
    assert fast.events > count  # most ends apart: the one-message steps ran


@pytest.fixture(scope="module")
def gcel_virtual(gcel) -> Machine:
    """The GCel with 64 virtual processors as an 8 x 8 torus placed at random: routes
    of every length, many ends apart."""
    machine = copy.deepcopy(gcel)
    virt = VirtualTopology(id=5, routing="2Dtorus", processor_count=64, shape=[8, 8])
    machine.virtuals.append(virt)
    virt.mapping = make_mapping(machine, virt, "random", seed=5)
    return machine


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_kernel_equals_python_on_every_pattern(gcel, gcel_virtual, name):
    kw = {"dim": 1} if name == "shift" else {}
    assert_same(*both(lambda: simulate(gcel_virtual, pattern=name, bytes=1024.0, virtual=5, **kw)))
    if name in ("shift", "halo", "broadcast", "broadcast-tree"):  # on all 512 processors
        assert_same(*both(lambda: simulate(gcel, pattern=name, bytes=1024.0)))


def test_kernel_equals_python_on_a_halo_of_a_3d_torus():
    # equal messages all at once: two events, every message in one batch
    machine = Machine(topologies=[torus([8, 8, 8], L, S)])
    fast, slow = both(lambda: simulate(machine, pattern="halo", bytes=4096.0))
    assert_same(fast, slow)
    assert fast.events == 2


@pytest.mark.parametrize("apart, events", [(1e-13, 2), (1e-10, 3)])
def test_ends_within_one_part_in_10_12_are_one_event(apart, events):
    # 100 messages on 100 separate links (more than 64 in flight: the one-message
    # steps), one of them longer by `apart` (relative): within END_RTOL it ends in the
    # same event as the others, beyond it in an event of its own; each keeps its own end
    machine = Machine(topologies=[ring(200, L, S)])
    src = np.arange(1, 200, 2)  # to the next one: one link each, none shared
    nbytes = np.full(100, 4096.0)
    alone = L + 4096.0 * S
    nbytes[37] += alone * apart / S
    msgs = MessageArrays(src, src + 1, nbytes)
    fast, slow = both(lambda: simulate_phase(machine, msgs))
    assert_same(fast, slow)
    assert fast.max_in_flight.max() == 1
    assert fast.events == events
    assert fast.end[37] > fast.end[36] == pytest.approx(alone, rel=1e-15)
