"""Properties of replays of random programs (issue 31): rounds of random pairings of
ranks, each pair one message (eager or rendezvous, blocking or not, waited for at the
round's end), random computation between them. Every rank's computation, communication
and waiting add up to its finish; its operations follow each other without gaps; and
the flow engine's C kernel and its Python specification give the same times on the
programs replays make (their delays included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_platforms import machine_of

from parasol_core.replay import KINDS, ReplayOptions, load_trace, replay
from parasol_core.simulate import flow
from parasol_core.topology.generators import torus


@st.composite
def program(draw):
    ranks = draw(st.integers(2, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rounds = draw(st.integers(1, 6))
    lines: dict[int, list[str]] = {r: [f"{r} init"] for r in range(ranks)}
    for k in range(rounds):
        order = rng.permutation(ranks)
        for a, b in zip(order[0::2].tolist(), order[1::2].tolist()):
            size = int(rng.choice([8, 4096, 65535, 65536, 300000]))
            if rng.random() < 0.5:
                lines[a].append(f"{a} compute {int(rng.integers(0, 50000))}")
            how = rng.integers(0, 3)
            if how == 0:
                lines[a].append(f"{a} send {b} {k} {size} 6")
                lines[b].append(f"{b} recv {a} {k} {size} 6")
            else:
                lines[a].append(f"{a} isend {b} {k} {size} 6")
                lines[b].append(f"{b} irecv {a} {k} {size} 6")
                lines[a].append(f"{a} waitall 1" if how == 1 else f"{a} wait {a} {b} {k}")
                lines[b].append(f"{b} waitall 1" if how == 1 else f"{b} wait {a} {b} {k}")
        if rng.random() < 0.3:
            count = int(rng.choice([1, 10000]))  # every rank the same
            for r in range(ranks):
                lines[r].append(f"{r} allreduce {count} 0 0")
    text = "".join(line + "\n" for r in range(ranks) for line in lines[r] + [f"{r} finalize"])
    return ranks, text, draw(st.sampled_from(["max", "maxmin", "cm02"]))


def machine():
    topology = torus([3, 3], 1e-6, 1e-9)
    topology.duplex = 0.0
    return machine_of(topology)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=program())
def test_a_rank_s_time_adds_up_and_its_operations_follow_each_other(tmp_path, case):
    ranks, text, sharing = case
    path = tmp_path / "p.txt"
    path.write_text(text)
    result = replay(machine(), load_trace(path), ReplayOptions(sharing=sharing))
    parts = result.computation + result.communication + result.waiting
    np.testing.assert_allclose(parts, result.finish, rtol=1e-9, atol=1e-15)
    # (a join ends with the last message it waits for: to rounding, as the engine takes
    # ends within 1e-12 of each other as one event)
    assert (result.end >= result.start * (1 - 1e-12)).all()
    blocking = ~np.isin(result.kind, [KINDS.index("isend"), KINDS.index("irecv")])
    for r in range(ranks):
        mine = np.flatnonzero((result.rank == r) & blocking)
        np.testing.assert_allclose(result.start[mine[1:]], result.end[mine[:-1]], rtol=1e-12)
        assert result.end[mine[-1]] == result.finish[r]


@pytest.mark.skipif(flow._kernel() is None, reason="the flow engine's C kernel was not built")
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=program())
def test_the_kernel_and_its_python_specification_agree_on_replays(tmp_path, monkeypatch, case):
    _, text, sharing = case
    path = tmp_path / "p.txt"
    path.write_text(text)
    trace = load_trace(path)
    fast = replay(machine(), trace, ReplayOptions(sharing=sharing))
    with monkeypatch.context() as m:
        m.setattr(flow, "_kernel", lambda: None)
        spec = replay(machine(), trace, ReplayOptions(sharing=sharing))
    np.testing.assert_allclose(fast.end, spec.end, rtol=1e-9, atol=1e-18)
    np.testing.assert_allclose(fast.finish, spec.finish, rtol=1e-9, atol=1e-18)
