"""Receives from any source matched by the simulated times, as SMPI 3.32 matches them
(parasol_core/replay/matching.py, docs/replay.md "Receives from any source"): a
receive takes the fitting send *posted* first, not the lowest rank's nor the first to
arrive; the matching iterated to a fixed point, kept for the next replay; a matching
that does not settle refused with the receive's file and line. Hand-computed on rings
of 1 us, 1 ns a byte links and a 1 ns flop (SimGrid agrees: the last test, and
tests/replay/test_replay_simgrid.py's master and workers program)."""

from __future__ import annotations

import numpy as np
import pytest
from replay_platforms import machine_of
from smpi_replay import AVAILABLE, WHY, for_simgrid_replay, smpi_replay, write_platform

from parasol_core.replay import DeadlockError, ReplayOptions, load_trace, matching, replay
from parasol_core.replay import program as prog
from parasol_core.topology.generators import ring

US = 1e-6


def ring_machine(n: int):
    topology = ring(n, 1e-6, 1e-9)
    topology.duplex = 0.0
    return machine_of(topology)


def write(tmp_path, ranks: dict[int, list[str]], name: str = "idx.txt"):
    """An index file and one action file per rank, as smpirun -trace-ti writes them."""
    names = []
    for r, actions in ranks.items():
        (tmp_path / f"{name}-r{r}.txt").write_text("".join(f"{r} {a}\n" for a in actions))
        names.append(f"{name}-r{r}.txt")
    (tmp_path / name).write_text("\n".join(names) + "\n")
    return tmp_path / name


# on a ring of 8: rank 4's send is posted at 0 and crosses 4 hops (4 us + 10 us); rank
# 1's is posted at 2 us (2,000 flops) and crosses 1 hop: it arrives first (13 us), and
# SMPI still gives the first receive rank 4's message, the one posted first; rank 0
# then computes 20 us and takes rank 1's (had the first taken rank 1's, at 13 us, rank
# 0 would finish at 33 us, not 34)
POSTED_FIRST = {0: ["recv -555 0 10000 6", "compute 20000", "recv -333 0 10000 6"],
                1: ["compute 2000", "send 0 0 10000 6"], 2: ["compute 1"], 3: ["compute 1"],
                4: ["send 0 0 10000 6"], 5: ["compute 1"], 6: ["compute 1"],
                7: ["compute 1"]}  # fmt: skip


def test_a_receive_from_any_source_takes_the_send_posted_first(tmp_path):
    result = replay(ring_machine(8), load_trace(write(tmp_path, POSTED_FIRST)))
    zero = result.rank == 0
    assert result.peer[zero].tolist() == [4, -1, 1]  # the sources they took
    assert result.end[zero] == pytest.approx([14 * US, 34 * US, 34 * US], rel=1e-9)


def test_not_the_lowest_rank_first(tmp_path):
    # ring of 4: rank 1 computes 10 us before it sends, rank 2 sends at once (2 hops,
    # 3 us): the first wildcard takes rank 2's (the static rule took rank 1's: 12 us),
    # the second rank 1's (1 us + 1 us + 10 us), the named one rank 3's at 50 + 2 us
    trace = load_trace(write(tmp_path, {
        0: ["recv -555 0 1000 6", "irecv -333 0 1000 6", "wait -333 0 0", "recv 3 0 1000 6"],
        1: ["compute 10000", "send 0 0 1000 6"], 2: ["send 0 0 1000 6"],
        3: ["compute 50000", "send 0 0 1000 6"]}))  # fmt: skip
    result = replay(ring_machine(4), trace)
    zero = np.flatnonzero(result.rank == 0)
    assert result.peer[zero].tolist() == [2, 1, -555, 3]
    assert result.end[zero] == pytest.approx([3 * US, 3 * US, 12 * US, 52 * US], rel=1e-9)
    # the compute-only first guess (rank 1 at 10 us, rank 2 at 0) was right: one run
    assert result.runs == 1


def test_a_wait_on_an_irecv_of_any_tag_finds_it(tmp_path):
    # SMPI's tracing writes the wait on an irecv of any tag (-444) with that tag: once
    # the irecv is given rank 2's tag 9, the wait still waits for it (3 us), not for
    # the oldest request (rank 1's, 12 us)
    trace = load_trace(write(tmp_path, {
        0: ["irecv 1 7 1000 6", "irecv -333 -444 1000 6", "wait -333 0 -444", "compute 1000",
            "wait 1 0 7"],
        1: ["compute 10000", "send 0 7 1000 6"], 2: ["send 0 9 1000 6"], 3: ["compute 1"]}))  # fmt: skip
    result = replay(ring_machine(4), trace)
    zero = np.flatnonzero(result.rank == 0)
    assert result.peer[zero[1]] == 2
    assert result.end[zero[2:]] == pytest.approx([3 * US, 4 * US, 12 * US], rel=1e-9)


def waiting_worker(tmp_path):
    """Rank 2 sends to 0 at once by its computation, but only after a 10,000-byte
    message from rank 3 (one hop: 11 us); rank 1 after 1 us of computation:
    the first guess (rank 2 first) is wrong, the second run's matching is right."""
    return load_trace(write(tmp_path, {
        0: ["recv -555 0 100 6", "recv -555 0 100 6"],
        1: ["compute 1000", "send 0 0 100 6"],
        2: ["recv 3 0 10000 6", "send 0 0 100 6"],
        3: ["send 2 0 10000 6"]}, "w.txt"))  # fmt: skip


def test_the_matching_is_iterated_to_a_fixed_point_and_kept(tmp_path):
    trace = waiting_worker(tmp_path)
    machine = ring_machine(4)
    first = replay(machine, trace)
    zero = first.rank == 0
    assert first.peer[zero].tolist() == [1, 2]
    # rank 1's message: 1 us + 1 us + 0.1 us; rank 2's: 11 us + 2 us + 0.1 us
    assert first.end[zero] == pytest.approx([2.1 * US, 13.1 * US], rel=1e-9)
    assert first.runs == 2
    again = replay(machine, trace)  # starts from the fixed point kept on the trace
    assert again.runs == 1 and again.makespan == first.makespan


def test_a_matching_that_does_not_settle_is_refused_naming_the_receive(tmp_path, monkeypatch):
    monkeypatch.setattr(matching, "MAX_ROUNDS", 1)
    with pytest.raises(matching.WildcardError, match=r"w.txt-r0.txt:1: rank 0's receive"):
        replay(ring_machine(4), waiting_worker(tmp_path))


def test_a_deadlock_at_the_fixed_point_is_reported(tmp_path):
    # rank 0 waits for any source; the only send to it follows rank 1's receive of
    # the message rank 0 sends after its receive
    trace = load_trace(write(tmp_path, {0: ["recv -555 0 8 6", "send 1 0 8 6"],
                                        1: ["recv 0 0 8 6", "send 0 0 8 6"]}))  # fmt: skip
    with pytest.raises(DeadlockError, match="2 of 2 ranks never finish"):
        replay(ring_machine(2), trace)


@pytest.mark.skipif(prog._kernel() is None, reason="the replay's C compiler was not built")
def test_a_resolved_trace_compiles_alike_in_c_and_python(tmp_path):
    trace = load_trace(write(tmp_path, POSTED_FIRST))
    wild = matching.wildcards(trace)
    fixed = matching.resolved(trace, wild, np.asarray([4, 1]), np.asarray([0, 0]))
    sem = prog.Semantics()
    assert prog.native_usable(fixed, sem) and not prog.native_usable(trace, sem)
    c, py = prog.compile_native(prog._kernel(), fixed, sem), prog.compile_python(fixed, sem)
    for name in ("src", "dst", "nbytes", "flops", "after_ptr", "after_idx", "op_start",
                 "op_end", "op_msg"):  # fmt: skip
        np.testing.assert_array_equal(getattr(c, name), getattr(py, name), err_msg=name)


@pytest.mark.skipif(not AVAILABLE, reason=WHY)
def test_simgrid_gives_the_first_receive_the_send_posted_first(tmp_path):
    machine = ring_machine(8)
    index = write(tmp_path, POSTED_FIRST)
    platform, hostfile = write_platform(machine, tmp_path)
    total, finish, _ = smpi_replay(platform, hostfile, for_simgrid_replay(index), 8)
    # SimGrid's log has microseconds: rank 0 ends at 34 us (33 us had its first
    # receive taken the first message to arrive), as ours
    ours = replay(machine, load_trace(index), ReplayOptions(sharing="cm02"))
    assert ours.finish[0] == pytest.approx(34 * US, rel=1e-9)
    assert finish[0] == pytest.approx(ours.finish[0], abs=0.5 * US)
    assert total == pytest.approx(ours.makespan, abs=0.5 * US)


def test_the_command_line_says_how_many_runs_matched_them(tmp_path, capsys):
    from parasol_core.cli import main
    from parasol_core.syntax.writer import dumps

    model = tmp_path / "ring.machine"
    model.write_text(dumps(ring_machine(4)))
    waiting_worker(tmp_path)  # writes w.txt, the index
    assert main(["replay", str(model), str(tmp_path / "w.txt")]) == 0
    out = capsys.readouterr().out
    assert "receives from any source: matched in 2 runs" in out
    assert "makespan: 1.31e-05 s" in out


def many_senders(tmp_path, seed: int):
    """15 ranks send rank 0 one to four messages each, eager (100 B) or rendezvous
    (100,000 B), tag 1 or 2, after random computation; some then wait for an answer;
    rank 0 answers first (eager isends), then takes every message with a receive or
    an irecv + wait from any source and of any tag, computing between."""
    rng = np.random.default_rng(seed)
    ranks: dict[int, list[str]] = {r: [] for r in range(16)}
    answers, total = [], 0
    for r in range(1, 16):
        for _ in range(int(rng.integers(1, 5))):
            ranks[r].append(f"compute {int(rng.integers(0, 300000))}")
            ranks[r].append(f"send 0 {int(rng.integers(1, 3))} {rng.choice([100, 100000])} 2")
            total += 1
            if rng.random() < 0.3:
                ranks[r].append("recv 0 5 8 2")
                answers.append(r)
    ranks[0] = [f"isend {r} 5 8 2" for r in answers]
    for _ in range(total):
        if rng.random() < 0.5:
            ranks[0].append("recv -333 -444 100000 2")
        else:
            ranks[0] += ["irecv -333 -444 100000 2", "wait -333 0 -444"]
        ranks[0].append(f"compute {int(rng.integers(0, 50000))}")
    return write(tmp_path, ranks, f"many{seed}.txt")


@pytest.mark.skipif(not AVAILABLE, reason=WHY)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_many_senders_of_both_sizes_agree_with_simgrid(tmp_path, seed):
    # SMPI takes a waiting eager message before a waiting rendezvous one, whatever
    # their order: with one queue by posting time (no two mailboxes) these fail
    from replay_platforms import MACHINES

    index = many_senders(tmp_path, seed)
    machine = MACHINES[("cluster", "torus", "fattree")[seed]]()
    platform, hostfile = write_platform(machine, tmp_path)
    total, finish, _ = smpi_replay(platform, hostfile, for_simgrid_replay(index), 16)
    ours = replay(machine, load_trace(index), ReplayOptions(sharing="cm02"))
    assert ours.runs > 1
    assert ours.makespan == pytest.approx(total, rel=0.01)
    # SimGrid's log has microseconds: a rank done in 60 us is known to 1 %
    np.testing.assert_allclose(ours.finish, finish, rtol=0.05)
