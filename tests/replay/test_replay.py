"""Replaying MPI traces (issue 31): a SimGrid time-independent trace in, times out.

Hand-computed cases on a ring of 1 us, 1 ns a byte links with a 1 ns flop: eager and
rendezvous sends, waits, computation, the breakdown of each rank's time; one parse
replayed many times; the Chrome timeline; errors with their file and line; deadlocks
naming the stuck ranks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from replay_platforms import machine_of

from parasol_core.model import Timing
from parasol_core.replay import (
    KINDS,
    DeadlockError,
    ReplayError,
    ReplayOptions,
    TraceError,
    load_trace,
    replay,
)
from parasol_core.topology.generators import ring

US = 1e-6


def ring_machine(n: int = 4):
    topology = ring(n, 1e-6, 1e-9)
    topology.duplex = 0.0  # each way its own: the hand computations need no sharing
    return machine_of(topology)


def write(tmp_path, text: str, name: str = "trace.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


PING_PONG = """\
0 init
1 init
0 compute 1000
0 send 1 5 100 2
1 recv 0 5 100 2
1 compute 2000
1 send 0 7 10000 0
0 compute 5000
0 recv 1 7 10000 0
1 finalize
0 finalize
"""


def test_eager_and_rendezvous_sends_by_hand(tmp_path):
    # rank 0 computes 1 us, sends 100 B eagerly (it goes on at once; the message
    # arrives at 1 + 1 + 0.1 us), computes 5 us and receives 80,000 B that rank 1 has
    # been trying to send since 4.1 us: a rendezvous, which starts when the receive is
    # posted at 6 us and takes 1 + 80 us
    trace = load_trace(write(tmp_path, PING_PONG))
    result = replay(ring_machine(), trace)
    assert result.finish == pytest.approx([87 * US, 87 * US], rel=1e-12)
    assert result.makespan == pytest.approx(87 * US, rel=1e-12)
    assert result.computation == pytest.approx([6 * US, 2 * US], rel=1e-12)
    # rank 1 waits 1 us for the eager message to leave and 1.9 us for rank 0's receive
    assert result.waiting == pytest.approx([0, 2.9 * US], rel=1e-9, abs=1e-18)
    assert result.communication == pytest.approx([81 * US, 82.1 * US], rel=1e-9)
    total = result.computation + result.communication + result.waiting
    np.testing.assert_allclose(total, result.finish, rtol=1e-12)
    ops = {(int(r), KINDS[k], int(n)): (s, e) for r, k, n, s, e in zip(
        result.rank, result.kind, result.line, result.start, result.end)}  # fmt: skip
    assert ops[(0, "send", 4)] == pytest.approx((1 * US, 1 * US))  # eager: returns at once
    assert ops[(1, "recv", 5)] == pytest.approx((0, 2.1 * US))
    assert ops[(1, "send", 7)] == pytest.approx((4.1 * US, 87 * US))
    assert ops[(0, "recv", 9)] == pytest.approx((6 * US, 87 * US))


def test_the_eager_threshold_decides_when_a_send_returns(tmp_path):
    # with every send eager, rank 1's 80,000 B leave at 4.1 us: it finishes then, and
    # rank 0's receive at 6 us finds the message arrived at 4.1 + 81 us
    trace = load_trace(write(tmp_path, PING_PONG))
    result = replay(ring_machine(), trace, ReplayOptions(eager=1e9))
    assert result.finish == pytest.approx([85.1 * US, 4.1 * US], rel=1e-12)
    # no threshold at all (docs/replay.md): every send eager, as far below any size
    assert replay(ring_machine(), trace, ReplayOptions(eager=math.inf)).finish == \
        pytest.approx(result.finish, rel=1e-12)  # fmt: skip
    # 0: every send a rendezvous; rank 0's 10 B send then waits for rank 1's receive
    assert replay(ring_machine(), trace, ReplayOptions(eager=0)).finish[1] > 4.1 * US


def test_a_waitall_waits_until_the_last_message_it_waits_for_starts(tmp_path):
    # rank 0 posts two receives and waits for both: rank 1's 10 B leave at 1 us and
    # arrive at 1 + 1 + 0.01 us, rank 2's leave at 5 us and arrive at 6.01 us. Rank 0
    # waited 5 us for the later sender, and communicated 1.01 us: its waiting ended
    # when the message it waited for last started, not the first (which said 1 us of
    # waiting and 5.01 us of communication, most of it waiting for rank 2)
    text = """\
0 irecv 1 1 10 2
0 irecv 2 2 10 2
0 isend 1 3 10 2
0 waitall 3
0 compute 9000
0 waitall 0
1 compute 1000
1 send 0 1 10 2
1 recv 0 3 10 2
2 compute 5000
2 send 0 2 10 2
"""
    trace = load_trace(write(tmp_path, text))
    for options in (ReplayOptions(), ReplayOptions(sharing="max")):
        result = replay(ring_machine(3), trace, options)
        assert result.finish[0] == pytest.approx(15.01 * US, rel=1e-12)
        assert result.waiting[0] == pytest.approx(5 * US, rel=1e-9)
        assert result.communication[0] == pytest.approx(1.01 * US, rel=1e-9)
        assert result.computation[0] == pytest.approx(9 * US, rel=1e-12)
        waitall = (result.rank == 0) & (result.line == 4)
        assert result.waiting_op[waitall] == pytest.approx([5 * US], rel=1e-9)
    # the same from the one-shot replay the command line runs
    lean = replay(ring_machine(3), load_trace(write(tmp_path, text)), release=True,
                  operations=False)  # fmt: skip
    assert lean.waiting[0] == result.waiting[0] and lean.finish[0] == result.finish[0]


def test_a_collective_waits_for_the_late_rank_along_its_critical_path(tmp_path):
    # a barrier (ompi_basic_linear: each rank's 0 B to rank 0, then rank 0's to each)
    # on a ring of 4, rank 3 late by 5 us of computation: its message reaches rank 0 at
    # 6 us, rank 0's reach ranks 1 and 3 at 7 us (one hop) and rank 2 at 8 us (two).
    # Each communicated while a message of its own moved on its critical path, and
    # waited the rest: rank 0 waited 5 us (rank 3's computing) for rank 3's message
    # (1 us); ranks 1 and 2 waited 6 us (rank 3's computing and its message to rank 0,
    # between others) for rank 0's (1 and 2 us); rank 3 sent and received (1 + 1 us).
    # The rule before took the first step's message: ranks 1 and 2 sent first, so their
    # whole wait was said to be communication.
    text = "0 barrier\n1 barrier\n2 barrier\n3 compute 5000\n3 barrier\n"
    for release in (False, True):  # the Program window's replay, the command line's
        result = replay(ring_machine(4), load_trace(write(tmp_path, text)), release=release,
                        operations=not release)  # fmt: skip
        assert result.finish == pytest.approx([6 * US, 7 * US, 8 * US, 7 * US], rel=1e-12)
        assert result.waiting == pytest.approx([5 * US, 6 * US, 6 * US, 0], rel=1e-9, abs=1e-18)
        assert result.communication == pytest.approx([1 * US, 1 * US, 2 * US, 2 * US],
                                                     rel=1e-9)  # fmt: skip
        assert result.computation == pytest.approx([0, 0, 0, 5 * US], rel=1e-12, abs=1e-18)
        if not release:  # of which each received: rank 3 its 1 us from rank 0, not its send
            barrier = result.kind == KINDS.index("barrier")
            assert result.receiving_op[barrier] == pytest.approx([1 * US, 1 * US, 2 * US,
                                                                  1 * US], rel=1e-9)  # fmt: skip


def test_the_timeline_draws_what_a_rank_sent_apart_from_what_it_received(tmp_path):
    # the rule: a span's colour is the way its rank's messages went on its critical
    # path, whatever the action is called. Rank 0 waits for its 80,000 B rendezvous
    # isend, which starts when rank 1 posts its receive at 3 us and takes 1 + 80 us: its
    # waitall waits 3 us (rank 1's computing) and then *sends* (it was drawn receiving,
    # as a wait). The barrier after it (ompi_basic_linear): rank 1 sends its 0 B to
    # rank 0 (1 us), then receives rank 0's (1 us); rank 0 only receives (its send
    # back is eager).
    from parasol_core.frontend.program import spans
    from parasol_core.frontend.timeline import RECEIVING, SENDING, WAITING

    text = ("0 isend 1 1 10000 0\n0 waitall 1\n0 barrier\n"
            "1 compute 3000\n1 recv 0 1 10000 0\n1 barrier\n")  # fmt: skip
    result = replay(ring_machine(2), load_trace(write(tmp_path, text)))
    rank, code, start, end, op = spans(result)
    line = result.line[op]

    def drawn(r: int, n: int) -> list[tuple[int, float]]:
        mine = (rank == r) & (line == n)
        return [(int(c), float(e - s)) for c, s, e in zip(code[mine], start[mine], end[mine])]

    waitall = drawn(0, 2)
    assert [c for c, _ in waitall] == [WAITING, SENDING]
    assert [t for _, t in waitall] == pytest.approx([3 * US, 81 * US], rel=1e-9)
    assert drawn(1, 5) == [(RECEIVING, pytest.approx(81 * US, rel=1e-9))]
    assert drawn(0, 3) == [(RECEIVING, pytest.approx(1 * US, rel=1e-9))]
    assert drawn(1, 6) == [(SENDING, pytest.approx(1 * US, rel=1e-9)),
                           (RECEIVING, pytest.approx(1 * US, rel=1e-9))]  # fmt: skip
    # the Chrome timeline (--timeline) tells them apart the same way
    events = [e for e in result.chrome_trace()["traceEvents"] if e.get("cat") == "communication"]
    said = [(e["tid"], e["args"]["trace"].rsplit(":", 1)[1], e["args"]["direction"])
            for e in events]  # fmt: skip
    assert said == [(0, "2", "sending"), (0, "3", "receiving"), (1, "5", "receiving"),
                    (1, "6", "sending"), (1, "6", "receiving")]  # fmt: skip
    # and --json (estimate.program's operations): the seconds each received
    ops = {(o["rank"], o["line"]): o for o in result.to_json()["operations"]}
    assert ops[(0, 2)]["received"] == 0.0
    assert ops[(1, 5)]["received"] == pytest.approx(81 * US, rel=1e-9)
    assert ops[(1, 6)]["received"] == pytest.approx(1 * US, rel=1e-9)
    # what is drawn adds up to each operation's communication
    talk = np.isin(code, (RECEIVING, SENDING))
    comm = result.end - result.start - result.waiting_op - result.computation_op
    np.testing.assert_allclose(np.bincount(op[talk], weights=(end - start)[talk],
                                           minlength=len(comm)), comm, atol=1e-15)  # fmt: skip


def test_a_pipeline_filling_is_waiting_not_the_other_ranks_messages(tmp_path):
    # ranks 0 -> 1 -> 2 -> 3 pass 1,000 B along a ring of 4 after rank 0 computes 5 us:
    # each message takes 1 + 1 us; rank 3's receive ends at 5 + 3 x 2 = 11 us, of which
    # only the last message, its own, is communication (2 us): the 9 us before it,
    # rank 0's computing and the messages between ranks 0, 1 and 2, are waiting
    text = ("0 compute 5000\n0 send 1 0 1000 2\n"
            "1 recv 0 0 1000 2\n1 send 2 0 1000 2\n"
            "2 recv 1 0 1000 2\n2 send 3 0 1000 2\n"
            "3 recv 2 0 1000 2\n")  # fmt: skip
    result = replay(ring_machine(4), load_trace(write(tmp_path, text)), ReplayOptions(eager=0))
    assert result.finish[3] == pytest.approx(11 * US, rel=1e-12)
    assert result.communication[3] == pytest.approx(2 * US, rel=1e-9)
    assert result.waiting[3] == pytest.approx(9 * US, rel=1e-9)
    # rank 1 waited for rank 0's computing, and communicated its receive and its send
    assert result.waiting[1] == pytest.approx(5 * US, rel=1e-9)
    assert result.communication[1] == pytest.approx(4 * US, rel=1e-9)
    # the rank each receive's wait leads back to: rank 0, computing, however far along
    recv = result.kind == KINDS.index("recv")
    assert result.waited_for[recv].tolist() == [0, 0, 0]
    assert (result.waited_for[~recv] == -1).all()  # the rest waited for nobody
    # and the Program window's hover says it
    from parasol_core.frontend.program import operation_text

    last = int(np.flatnonzero(recv)[-1])
    assert ", waited 9 µs for rank 0, " in operation_text(result, last)
    # and --json (the estimator's estimate.program): null where it waited for nobody
    ops = result.to_json()["operations"]
    assert [o["waited_for"] for o in ops if o["action"] == "recv"] == [0, 0, 0]
    assert all(o["waited_for"] is None for o in ops if o["action"] != "recv")


def test_nonblocking_requests_are_waited_for(tmp_path):
    # rank 0 posts a large isend at 0, computes 10 us and waits: the transfer started
    # when rank 1 posted its irecv at 3 us and ends at 3 + 1 + 100 us
    text = """\
0 isend 1 1 100000 6
0 compute 10000
0 wait 0 1 1
1 compute 3000
1 irecv 0 1 100000 6
1 isend 0 2 10 6
1 recv 0 3 10 6
0 irecv 1 2 10 6
0 send 1 3 10 6
0 waitall 1
1 waitall 2
"""
    result = replay(ring_machine(), load_trace(write(tmp_path, text)))
    end = 104 * US
    ops = {(int(r), int(n)): (s, e) for r, n, s, e in zip(result.rank, result.line,
                                                          result.start, result.end)}  # fmt: skip
    assert ops[(0, 3)] == pytest.approx((10 * US, end))  # the wait
    # rank 1's small isend left at 3 us and arrives at 4.01 us; rank 0 receives after
    # its wait; its small send leaves at 104 us and arrives at 105.01 us
    assert ops[(0, 10)] == pytest.approx((end, end))
    assert result.finish[1] == pytest.approx(end + 1.01 * US, rel=1e-12)
    assert result.finish[0] == pytest.approx(end, rel=1e-12)


def test_parse_once_replay_many_after_a_timing_changes(tmp_path):
    machine = ring_machine()
    trace = load_trace(write(tmp_path, PING_PONG))
    first = replay(machine, trace)
    assert len(trace.compiled) == 1
    program = next(iter(trace.compiled.values()))
    machine.processors[0].timings["dla"] = Timing(3e-9)  # a flop: (3 + 1) / 2 ns
    second = replay(machine, trace)
    assert next(iter(trace.compiled.values())) is program  # not compiled again
    # rank 0 computes 6,000 flops before the rendezvous, each 1 ns slower
    assert second.makespan - first.makespan == pytest.approx(6 * US, rel=1e-9)
    third = replay(machine, trace, ReplayOptions(flop="pt(T).dln"))
    assert third.makespan == pytest.approx(first.makespan, rel=1e-12)


def test_an_index_file_names_one_action_file_per_rank(tmp_path):
    ranks = {0: [], 1: []}
    for line in PING_PONG.splitlines():
        ranks[int(line.split()[0])].append(line)
    (tmp_path / "run_files").mkdir()
    for r, lines in ranks.items():
        write(tmp_path / "run_files", "\n".join(lines) + "\n", f"rank-{r}.txt")
    index = write(tmp_path, "run_files/rank-0.txt\nrun_files/rank-1.txt\n", "run.txt")
    trace = load_trace(index)
    assert trace.ranks == 2
    result = replay(ring_machine(), trace)
    assert result.makespan == pytest.approx(87 * US, rel=1e-12)
    assert result.where(int(np.flatnonzero(result.rank == 1)[2])).endswith("rank-1.txt:3")


def test_collectives_on_a_ring_end_together_after_a_barrier(tmp_path):
    lines = []
    for r in range(4):
        lines += [f"{r} compute {1000 * (r + 1)}", f"{r} allreduce 10 0 0", f"{r} bcast 100 2 0",
                  f"{r} reduce 8 500 1 0", f"{r} alltoall 4 4 0 0", f"{r} allgather 4 4 0 0",
                  f"{r} barrier", f"{r} compute 100"]  # fmt: skip
    result = replay(ring_machine(), load_trace(write(tmp_path, "\n".join(lines) + "\n")))
    barrier = result.end[result.kind == KINDS.index("barrier")]
    # rank 0 releases the others after the last arrives: they leave 1 us (one hop) or
    # 2 us (two) after it, rank 0 itself when its last send leaves (eager)
    assert barrier.max() - barrier.min() == pytest.approx(2 * US, rel=1e-9)
    np.testing.assert_allclose(result.finish - barrier, 100e-9, rtol=1e-9)
    assert result.messages > 4 * 4


def test_model_collectives_cost_what_the_mpi_section_says(tmp_path):
    from parasol_core.model import Mpi
    from parasol_core.syntax.expression import parse_expression

    machine = ring_machine()
    machine.mpi = Mpi(entries={"allreduce": parse_expression("1e-5 + ar.bytes * 1e-9 * ar.procs")})
    text = "".join(f"{r} compute {1000 * (r + 1)}\n{r} allreduce 125 0 0\n" for r in range(4))
    result = replay(machine, load_trace(write(tmp_path, text)),
                    ReplayOptions(collectives="model"))  # fmt: skip
    # every rank leaves at the last arrival (4 us) plus 10 us + 1000 B x 1 ns x 4
    np.testing.assert_allclose(result.finish, 4 * US + 14 * US, rtol=1e-12)
    with pytest.raises(ReplayError, match="no 'bcast'"):
        replay(machine, load_trace(write(tmp_path, "0 bcast 1 0\n", "b.txt")),
               ReplayOptions(collectives="model"))  # fmt: skip


def test_the_timeline_is_chrome_trace_json(tmp_path):
    result = replay(ring_machine(), load_trace(write(tmp_path, PING_PONG)))
    timeline = json.loads(json.dumps(result.chrome_trace()))
    spans = [e for e in timeline["traceEvents"] if e["ph"] == "X"]
    names = {(e["tid"], e["name"], e["cat"]) for e in spans}
    assert (1, "send", "waiting") in names and (1, "send", "communication") in names
    assert (0, "compute", "computation") in names
    for r in (0, 1):
        mine = sorted((e for e in spans if e["tid"] == r), key=lambda e: e["ts"])
        assert sum(e["dur"] for e in mine) == pytest.approx(result.finish[r] * 1e6, rel=1e-9)
        assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-6 for a, b in zip(mine, mine[1:]))
    assert all(e["args"]["trace"].startswith(str(tmp_path)) for e in spans)
    data = result.to_json()
    assert data["makespan"] == result.makespan
    send = data["operations"][2]  # rank 0's third action (operations go rank by rank)
    assert send == {**send, "rank": 0, "action": "send", "peer": 1, "bytes": 100.0, "line": 4}


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("text", "where", "why"),
    [
        ("0 init\n0 jump 3\n", ":2:", "unknown action 'jump'"),
        (
            "0 init\n0 send 7 0 10\n1 recv 0 0 10\n",
            ":2:",
            "destination 7 is out of range|peer 7 is out of range",
        ),
        ("0 send 1 0 1e300\n1 recv 0 0 1e300\n", ":1:", "overflows"),
        ("0 send 1 0 -4\n", ":1:", "is negative"),
        ("0 send 1 0 10 99\n", ":1:", "unknown datatype 99"),
        ("0 send 1 0 ten\n", ":1:", "is not a number"),
        ("0 compute 5\n0 send 1 3 10\n1 recv 0 4 10\n", ":2:", "matched by no receive"),
        ("0 recv 1 3 10\n1 compute 1\n", ":1:", "matched by no send"),
        ("0 bcast 1 0\n1 compute 1\n", ":1:", "do not call the same collectives"),
        (
            "0 bcast 1 0\n1 bcast 1 1\n",
            ":1:",
            "is bcast .root 0, 1 byte., and rank 1's is "
            "bcast .root 1, 1 byte.*do not call the same collectives",
        ),
        ("0 allreduce 4 0\n1 allreduce 2 0\n", ":1:", "do not call the same collectives"),
        ("0 compute 1\n0 comm_split\n1 compute 1\n", ":2:", "splits a communicator"),
        ("0 comm_size 4\n1 compute 1\n", ":1:", "comm_size 4, and the trace has 2 ranks"),
        ("0 wait\n", ":1:", "no request left"),
        ("0 sendRecv 1 1 1 5\n1 sendRecv 1 0 1 0\n", ":1:", "source 5 is out of range"),
        ("0 send 1 3\n", ":1:", "takes 3 to 4 arguments"),
    ],
)
def test_bad_traces_are_refused_with_their_line(tmp_path, text, where, why):
    path = write(tmp_path, text)
    with pytest.raises(TraceError, match=why) as info:
        replay(ring_machine(), load_trace(path))
    assert f"{path}{where}" in str(info.value)


# every whole number a line gives (rank, peer, tag, source, destination, root, datatype),
# at sizes a reader could not hold or a program could not have: refused at its line,
# never a crash of the reader or an allocation for that many ranks
_HUGE = ["9223372036854775808", "99999999999999999999", "999999999999999", "16777216"]
_FIELDS = ["{n} init", "0 send {n} 0 10", "0 recv {n} 0 10", "0 isend 1 {n} 10",
           "0 irecv {n} 0 10", "0 wait {n} 1 0", "0 sendRecv 1 {n} 1 0", "0 bcast 1 {n}",
           "0 send 1 0 10 {n}"]  # fmt: skip


@pytest.mark.parametrize("number", _HUGE)
@pytest.mark.parametrize("field", _FIELDS)
@pytest.mark.parametrize("scanner", ["c", "python"])
def test_huge_numbers_are_refused_at_their_line(tmp_path, monkeypatch, field, number, scanner):
    from parasol_core.replay import tifile

    if scanner == "python":
        monkeypatch.setattr(tifile, "_scanner", lambda: None)
    path = write(tmp_path, "0 init\n" + field.format(n=number) + "\n1 init\n")
    with pytest.raises(TraceError) as info:
        replay(ring_machine(), load_trace(path))
    assert f"{path}:2:" in str(info.value)


def test_a_program_past_the_ranks_a_trace_may_have_is_refused_naming_both(tmp_path):
    from parasol_core.replay.tifile import MAX_RANKS

    path = write(tmp_path, "0 init\n1 init\n")
    with pytest.raises(TraceError, match=f"{MAX_RANKS + 1:,} ranks is past the {MAX_RANKS:,}"):
        load_trace(path, ranks=MAX_RANKS + 1)
    assert load_trace(path, ranks=4).ranks == 4


def test_a_deadlock_names_every_stuck_rank_and_what_it_waits_in(tmp_path):
    # both ranks send 1 MB first: rendezvous sends that wait for receives never posted
    text = (
        "0 send 1 0 1000000 6\n0 recv 1 0 1000000 6\n1 send 0 0 1000000 6\n1 recv 0 0 1000000 6\n"
    )
    path = write(tmp_path, text)
    with pytest.raises(DeadlockError) as info:
        replay(ring_machine(), load_trace(path))
    message = str(info.value)
    assert "2 of 2 ranks never finish" in message
    assert f"rank 0 in send at {path}:1, waiting for rank 1" in message
    assert f"rank 1 in send at {path}:3, waiting for rank 0" in message
    assert info.value.stuck == {0: 0, 1: 2}
    # eager, the same program runs
    assert replay(ring_machine(), load_trace(path), ReplayOptions(eager=2e6)).makespan > 0


def test_a_waitall_stuck_names_the_rank_whose_message_never_comes(tmp_path):
    # ranks 1 and 2 each wait to receive from the other first; rank 0 got rank 1's
    # message and waits in its waitall for rank 2's
    text = ("0 irecv 1 0 10 2\n0 irecv 2 0 10 2\n0 waitall 2\n"
            "1 send 0 0 10 2\n1 recv 2 6 10 2\n1 send 2 5 10 2\n"
            "2 recv 1 5 10 2\n2 send 1 6 10 2\n2 send 0 0 10 2\n")  # fmt: skip
    path = write(tmp_path, text)
    for release in (False, True):  # the Program window's replay, the command line's
        with pytest.raises(DeadlockError) as info:
            replay(ring_machine(3), load_trace(path), release=release, operations=not release)
        message = str(info.value)
        assert f"rank 0 in waitall at {path}:3, waiting for rank 2" in message
        assert f"rank 1 in recv at {path}:5, waiting for rank 2" in message
        assert f"rank 2 in recv at {path}:7, waiting for rank 1" in message


def test_ranks_run_where_the_hostfile_or_a_virtual_topology_says(tmp_path):
    trace = load_trace(write(tmp_path, "0 send 1 0 1000 6\n1 recv 0 0 1000 6\n"))
    machine = ring_machine(6)
    near = replay(machine, trace).makespan  # processors 1 and 2: one hop
    hosts = write(tmp_path, "p1\n4\n", "hosts")
    far = replay(machine, trace, ReplayOptions(hostfile=hosts))  # 1 -> 4: three hops
    assert far.makespan - near == pytest.approx(2 * US, rel=1e-9)
    assert far.host.tolist() == [1, 4]
    with pytest.raises(ReplayError, match="processor 9"):
        replay(machine, trace, ReplayOptions(hostfile=[1, 9]))
    with pytest.raises(ReplayError, match="3 ranks and .* 2 compute processors"):
        replay(ring_machine(2), load_trace(write(tmp_path, "2 compute 1\n", "c.txt")))


def test_a_processor_the_topology_lacks_is_refused_naming_the_entry_that_names_it(tmp_path):
    """Every reader of hostfile entries says which entry named a processor the hardware
    lacks: a file's line (it said "rank 1: the hostfile names processor 99", no line), a
    list's index (a sweep's), and an entry past the ranks to place is still checked."""
    trace = load_trace(write(tmp_path, "0 send 1 0 1000 6\n1 recv 0 0 1000 6\n"))
    machine = ring_machine(6)
    hosts = write(tmp_path, "# two ranks\n1\n\np99\n", "hosts")
    for source, where in ((hosts, f"{hosts}:4: host 'p99'"), ([1, 99], "hostfile[1] 99"),
                          ([1, 2, "7:3"], "hostfile[2] '7:3'")):  # fmt: skip
        with pytest.raises(ReplayError) as info:
            replay(machine, trace, ReplayOptions(hostfile=source))
        said = str(info.value)
        assert said.startswith(where), said
        assert "is not in hardware topology 1 (processors 1..6)" in said
    for fine, placed in (([6, "p1"], [6, 1]), (["1:2", 6], [1, 1])):  # the range's ends
        assert replay(machine, trace, ReplayOptions(hostfile=fine)).host.tolist() == placed
    with pytest.raises(ReplayError, match=r"hostfile\[0\] 0: processor 0 is not in"):
        replay(machine, trace, ReplayOptions(hostfile=[0, 1]))


def test_a_hostfile_entry_of_ten_billion_ranks_places_the_trace_s_and_no_more(tmp_path):
    """'1:9999999999' was a list of ten billion processors (80 GB) before any rank was
    placed: an entry gives at most the ranks left to place, read from a file, from a
    list (a sweep's), and checked in a sweep file; the placement is the same."""
    import tracemalloc

    trace = load_trace(write(tmp_path, "0 send 1 0 1000 6\n1 recv 0 0 1000 6\n"))
    machine = ring_machine(6)
    small = replay(machine, trace, ReplayOptions(hostfile=["p4:2"]))
    tracemalloc.start()
    try:
        for source in (write(tmp_path, "p4:9999999999\n", "hosts"), ["p4:9999999999"],
                       [4, "p4:9999999999"]):  # fmt: skip
            result = replay(machine, trace, ReplayOptions(hostfile=source))
            assert result.host.tolist() == [4, 4] and result.makespan == small.makespan
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024  # not a list per rank asked for
    with pytest.raises(ReplayError, match="Saturn"):  # each entry is still read
        replay(machine, trace, ReplayOptions(hostfile=[4, 4, "Saturn:9999999999"]))


def test_receives_from_any_source_of_sends_posted_together_take_the_lowest_rank(tmp_path):
    # rank 0 receives twice from any source (-555, and -333 as SMPI's tracing writes
    # it), then from rank 3 by name; ranks 1, 2 and 3 each send once (rank 3 late);
    # ranks 1 and 2 post theirs at 0 (the order of posting decides: test_replay_matching)
    text = """\
0 recv -555 0 1000 6
0 recv -333 0 1000 6
0 recv 3 0 1000 6
1 send 0 0 1000 6
2 send 0 0 1000 6
3 compute 50000
3 send 0 0 1000 6
"""
    result = replay(ring_machine(), load_trace(write(tmp_path, text)))
    recv = result.end[result.rank == 0]
    # 1 -> 0 and 3 -> 0 are one hop (2 us), 2 -> 0 two hops (3 us: 2 latencies); the
    # wildcards take ranks 1 and 2, the named receive rank 3's message at 50 + 2 us
    assert recv == pytest.approx([2 * US, 3 * US, 52 * US], rel=1e-9)
    with pytest.raises(TraceError, match="receive from any source is matched by no send"):
        replay(
            ring_machine(), load_trace(write(tmp_path, "0 recv -555 0 8 6\n1 compute 1\n", "w.txt"))
        )


def test_world_and_its_duplicates_are_replayed(tmp_path):
    # comm_size of all ranks and comm_dup (nothing happens), collectives alike
    text = "0 comm_size 2\n0 comm_dup\n0 bcast 1 1\n1 comm_size 2\n1 comm_dup\n1 bcast 1 1\n"
    assert replay(ring_machine(), load_trace(write(tmp_path, text))).makespan > 0


def test_a_session_edit_moves_the_prediction_without_recompiling(tmp_path):
    # the Program window's case: the trace read once, the model edited in a session (a
    # scaler drag, a link's speed), each edit replayed with the session's engine
    from parasol_core.session import Session
    from parasol_core.syntax.writer import dumps

    session = Session.from_text(dumps(ring_machine()))
    trace = load_trace(write(tmp_path, PING_PONG))
    before = replay(session.machine, trace, engine=session.engine)
    session.move_scaler(1, "local", 2.0, merge="drag")  # dla and dln twice as slow
    slower = replay(session.machine, trace, engine=session.engine)
    assert slower.computation == pytest.approx(2 * before.computation, rel=1e-12)
    assert len(trace.compiled) == 1
    link = session.machine.hardware().links[0]  # processors 1 - 2: the ping-pong's link
    session.set(f"tl({session.machine.hardware().id})({link.id}).speed", "0.5e-9")
    faster = replay(session.machine, trace, engine=session.engine)
    # the rendezvous' 80,000 B at 0.5 ns instead of 1 ns: 40 us less
    assert slower.makespan - faster.makespan == pytest.approx(40 * US, rel=1e-9)
    session.undo()
    assert replay(session.machine, trace, engine=session.engine).makespan == pytest.approx(
        slower.makespan, rel=1e-12)  # fmt: skip


@pytest.mark.parametrize("lines", [
    ("0 send 1 0 1000000{dt}", "1 recv 0 0 1000000{dt}"),
    ("0 bcast 1000000 0{dt}", "1 bcast 1000000 0{dt}"),
    ("0 allgatherv 200000 200000 300000{dt}{dt}", "1 allgatherv 300000 200000 300000{dt}{dt}"),
])  # fmt: skip
def test_a_line_that_names_no_datatype_counts_bytes_as_smpis_replay(tmp_path, lines):
    """SMPI 3.32's replay reads a count with no datatype as MPI_BYTE's (measured in
    test_replay_simgrid.py against smpirun -replay): the C reader and Python's alike
    (the v-collectives are Python's)."""
    machine = ring_machine(2)

    def makespan(dt: str) -> float:
        path = write(tmp_path, "".join(line.format(dt=dt) + "\n" for line in lines))
        return replay(machine, load_trace(path), ReplayOptions()).makespan

    assert makespan("") == makespan(" 6")  # MPI_BYTE
    assert makespan(" 0") > 7 * makespan("")  # MPI_DOUBLE: eight times the bytes
