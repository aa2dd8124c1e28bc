"""A one-shot replay (``replay(..., release=True, operations=False)``, what
``parasol-model replay`` does without ``--json`` or ``--timeline``: each stage let go
once the next has what it needs, docs/replay.md "Memory") predicts exactly what the
replay that keeps the trace, its program and every operation predicts: random programs
of point-to-point messages, collectives and computation (receives from any source
among them) give the same makespan and per-rank figures, bit for bit, on every sharing
rule; a deadlock or an unmatched receive is worded alike; the trace let go cannot be replayed again."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_platforms import machine_of

from parasol_core.replay import (
    DeadlockError,
    ReplayError,
    ReplayOptions,
    TraceError,
    load_trace,
    replay,
)
from parasol_core.topology.generators import torus

COLLECTIVES = ["allreduce {n} 0 0", "bcast {n} {root} 6", "reduce {n} 10 {root} 6",
               "alltoall {n} {n} 6 6", "allgather {n} {n} 6 6", "barrier",
               "gather {n} {n} {root} 6 6", "scatter {n} {n} {root} 6 6"]  # fmt: skip


@st.composite
def program(draw):
    ranks = draw(st.integers(2, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    wild = draw(st.booleans())
    lines: dict[int, list[str]] = {r: [f"{r} init"] for r in range(ranks)}
    for k in range(draw(st.integers(1, 7))):
        if rng.random() < 0.3:
            text = str(rng.choice(COLLECTIVES))
            n, root = int(rng.choice([1, 9000, 70000])), int(rng.integers(0, ranks))
            for r in range(ranks):
                lines[r].append(f"{r} " + text.format(n=n, root=root))
            continue
        order = rng.permutation(ranks)
        for a, b in zip(order[0::2].tolist(), order[1::2].tolist()):
            size = int(rng.choice([8, 4096, 65535, 65536, 300000]))
            if rng.random() < 0.5:
                lines[a].append(f"{a} compute {int(rng.integers(0, 50000))}")
            src = -555 if wild and rng.random() < 0.3 else a
            how = int(rng.integers(0, 4))
            if how == 0:
                lines[a].append(f"{a} send {b} {k} {size} 6")
                lines[b].append(f"{b} recv {src} {k} {size} 6")
            elif how == 3:
                lines[a].append(f"{a} sendRecv {size} {b} {size} {b} 6 6")
                lines[b].append(f"{b} sendRecv {size} {a} {size} {a} 6 6")
            else:
                lines[a].append(f"{a} isend {b} {k} {size} 6")
                lines[b].append(f"{b} irecv {src} {k} {size} 6")
                lines[a].append(f"{a} waitall 1")
                lines[b].append(f"{b} waitall 1")
    text = "".join(line + "\n" for r in range(ranks) for line in lines[r] + [f"{r} finalize"])
    return text, draw(st.sampled_from(["max", "maxmin", "cm02"]))


def machine():
    topology = torus([3, 3], 1e-6, 1e-9)
    topology.duplex = 0.0
    return machine_of(topology)


PER_RANK = ("finish", "computation", "communication", "waiting", "host")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=program())
def test_a_one_shot_replay_predicts_what_a_kept_one_does(tmp_path, case):
    text, sharing = case
    path = tmp_path / "p.txt"
    path.write_text(text)
    options = ReplayOptions(sharing=sharing)
    try:
        kept = replay(machine(), load_trace(path), options)  # trace, program, every operation
    except TraceError as e:  # receives from any source that leave a send unmatched
        with pytest.raises(TraceError) as again:
            replay(machine(), load_trace(path), options, release=True, operations=False)
        assert str(again.value) == str(e)
        return
    trace = load_trace(path)
    actions = len(trace)
    once = replay(machine(), trace, options, release=True, operations=False)
    assert once.makespan == kept.makespan
    for name in PER_RANK:
        np.testing.assert_array_equal(getattr(once, name), getattr(kept, name), err_msg=name)
    assert (once.messages, once.events, once.runs) == (kept.messages, kept.events, kept.runs)
    assert not once.operations and once.end.shape == (0,)
    # the per-rank figures only, of a trace kept (and its program kept on it)
    kept_trace = load_trace(path)
    ranks_only = replay(machine(), kept_trace, options, operations=False)
    for name in PER_RANK:
        np.testing.assert_array_equal(getattr(ranks_only, name), getattr(kept, name))
    assert kept_trace.compiled and len(kept_trace.kind) == actions
    # the operations asked for: every one's times as the kept replay's
    some = replay(machine(), load_trace(path), options, release=True)
    for name in ("start", "end", "computation_op", "waiting_op", "rank", "line", *PER_RANK):
        np.testing.assert_array_equal(getattr(some, name), getattr(kept, name), err_msg=name)
    if "-555" not in text:  # no receive from any source (matched by runs): let go
        assert len(trace) == actions and trace.kind.shape == (0,)
        with pytest.raises(ReplayError, match="read it again"):
            replay(machine(), trace, options)


def test_a_one_shot_replay_words_a_deadlock_as_a_kept_one(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("0 init\n0 compute 10\n0 send 1 0 1000000 6\n0 recv 1 0 1000000 6\n"
                    "1 send 0 0 1000000 6\n1 recv 0 0 1000000 6\n")  # fmt: skip
    with pytest.raises(DeadlockError) as kept:
        replay(machine(), load_trace(path))
    with pytest.raises(DeadlockError) as once:
        replay(machine(), load_trace(path), release=True, operations=False)
    assert str(once.value) == str(kept.value)
    assert once.value.stuck == kept.value.stuck == {0: 2, 1: 4}
    assert f"rank 0 in send at {path}:3, waiting for rank 1" in str(once.value)


def test_the_result_of_a_one_shot_replay_refuses_what_it_has_not(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("0 send 1 0 100 6\n1 recv 0 0 100 6\n")
    once = replay(machine(), load_trace(path), release=True, operations=False)
    assert set(once.to_json(operations=False)) == {"makespan", "ranks", "messages"}
    with pytest.raises(ValueError, match="per-rank figures only"):
        once.to_json()
    with pytest.raises(ValueError, match="operations"):
        once.chrome_trace()


@pytest.mark.parametrize("text", ["0 send 1 0 100 6\n1 recv 0 0 100 6\n1 recv 0 1 8 6\n",
                                  "0 send 1 0 100 6\n0 send 1 3 100 6\n1 recv 0 0 100 6\n"])  # fmt: skip
def test_a_bad_trace_let_go_by_a_one_shot_replay_is_read_again_for_its_error(
    tmp_path, monkeypatch, text
):
    # the compiler has the trace's columns let go as soon as it has its inputs; when it
    # then finds the trace bad, the trace is read again and the error worded from it
    from parasol_core.replay import program as compiler

    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises((TraceError, DeadlockError, ReplayError)) as kept:
        replay(machine(), load_trace(path))
    seen = []
    real = compiler.compile_native

    def spy(lib, trace, sem, release=False):
        got = real(lib, trace, sem, release)
        seen.append((release, got is None, trace.released >= 0))
        return got

    monkeypatch.setattr(compiler, "compile_native", spy)
    with pytest.raises(type(kept.value)) as once:
        replay(machine(), load_trace(path), release=True, operations=False)
    assert str(once.value) == str(kept.value)
    assert str(path) in str(once.value)  # its file and line, from the trace read again
    if compiler._kernel() is not None:
        assert seen[0] == (True, True, True)  # let go, then found bad
