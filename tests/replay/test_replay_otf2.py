"""OTF2 archives (issue 31): read with the registry's otf2 package; the time between MPI
calls is computation measured on the traced machine, scaled by --traced-on. An archive
written here (the otf2 package writes them too) replays as the TI trace of the same
program does."""

from __future__ import annotations

import numpy as np
import pytest
from program_traces import write_archive
from replay_platforms import machine_of

from parasol_core.model import Timing
from parasol_core.replay import ReplayOptions, TraceError, load_trace, replay
from parasol_core.topology.generators import ring

otf2 = pytest.importorskip("otf2", reason="the otf2 package is not installed (pip install otf2)")


def ring_machine():
    topology = ring(4, 1e-6, 1e-9)
    topology.duplex = 0.0
    return machine_of(topology)


# the ping-pong of test_replay.py's PING_PONG, measured: rank 0 computes 1 us, sends
# 100 B, computes 5 us, receives 80,000 B; rank 1 receives, computes 2 us, sends
PROGRAM = [
    [("MPI_Send", 1000, 1500, [("MpiSend", 1, 5, 100)]),
     ("MPI_Recv", 6500, 90000, [("MpiRecv", 1, 7, 80000)])],
    [("MPI_Recv", 0, 2100, [("MpiRecv", 0, 5, 100)]),
     ("MPI_Send", 4100, 90000, [("MpiSend", 0, 7, 80000)])],
]  # fmt: skip


def test_an_archive_replays_as_its_time_independent_trace(tmp_path):
    # the time between calls is measured: rank 0's 1 us, then 5 us after its send
    # returned at 1.5 us (the trace says so: it is what ran); rank 1's 2 us
    anchor = write_archive(tmp_path / "run", PROGRAM)
    trace = load_trace(anchor)
    assert trace.timed and trace.ranks == 2
    result = replay(ring_machine(), trace)
    # rank 0 posts its receive at 1 + 5 = 6 us (its eager send returns at once here),
    # rank 1 its send at 2.1 + 2 = 4.1 us: the rendezvous moves at 6 us, 81 us
    np.testing.assert_allclose(result.finish, [87e-6, 87e-6], rtol=1e-9)
    np.testing.assert_allclose(result.computation, [6e-6, 2e-6], rtol=1e-9)
    # on a machine whose flop is twice as slow as the traced one's, computing takes twice
    traced = ring_machine()
    target = ring_machine()
    for name in ("dla", "dln"):
        target.processors[0].timings[name] = Timing(2e-9)
    slower = replay(target, trace, ReplayOptions(traced_on=traced))
    np.testing.assert_allclose(slower.computation, [12e-6, 4e-6], rtol=1e-9)
    assert slower.makespan == pytest.approx(87e-6 + 6e-6, rel=1e-9)


def test_nonblocking_requests_and_collectives_of_an_archive(tmp_path):
    program = [
        [("MPI_Isend", 0, 10, [("MpiIsend", 1, 1, 100000, 7)]),
         ("MPI_Wait", 10000, 20000, [("MpiIsendComplete", 7)]),
         ("MPI_Allreduce", 30000, 40000, [("MpiCollectiveEnd", "ALLREDUCE", 0xFFFFFFFF, 16, 16)])],
        [("MPI_Irecv", 3000, 3010, [("MpiIrecvRequest", 3)]),
         ("MPI_Wait", 3010, 20000, [("MpiIrecv", 0, 1, 100000, 3)]),
         ("MPI_Allreduce", 30000, 40000, [("MpiCollectiveEnd", "ALLREDUCE", 0xFFFFFFFF, 16, 16)])],
    ]  # fmt: skip
    trace = load_trace(write_archive(tmp_path / "nb", program))
    result = replay(ring_machine(), trace)
    # the 100,000 B move from rank 1's irecv at 3 us: 1 + 100 us; both wait for it
    waits = result.end[result.kind == 7]
    np.testing.assert_allclose(waits, [104e-6, 104e-6], rtol=1e-9)
    # 10 us of computation each, then an allreduce of 8 B (Score-P counts P x 8 B sent
    # and received): one exchange, 1.008 us
    np.testing.assert_allclose(result.finish, waits + 10e-6 + 1.008e-6, rtol=1e-9)


def test_a_damaged_archive_is_refused_in_one_line_that_says_why(tmp_path, capfd):
    # the library printed eight lines of its own source files on stderr, and the error
    # said "INVALID (1): Unknown error code"
    anchor = write_archive(tmp_path / "bad", PROGRAM)
    anchor.write_bytes(b"not an archive")
    with pytest.raises(TraceError) as e:
        load_trace(anchor)
    assert str(e.value) == (f"{anchor}: not a readable OTF2 archive: invalid or inconsistent "
                            "record data (this is no chunk header)")  # fmt: skip
    out, err = capfd.readouterr()  # the process's own descriptors: the C library's output
    assert out == "" and err == ""
    # and an archive read after it is read as before
    assert load_trace(write_archive(tmp_path / "good", PROGRAM)).ranks == 2


def test_the_command_line_reads_an_archive_and_scales_it(tmp_path, capsys):
    import json

    from parasol_core.cli import main
    from parasol_core.syntax.writer import dumps

    anchor = write_archive(tmp_path / "run", PROGRAM)
    here, there = tmp_path / "here.machine", tmp_path / "there.machine"
    here.write_text(dumps(ring_machine()))
    fast = ring_machine()
    for name in ("dla", "dln"):
        fast.processors[0].timings[name] = Timing(0.5e-9)
    there.write_text(dumps(fast))  # the traced machine computed twice as fast
    assert main(["replay", str(here), str(anchor), "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)
    assert main(["replay", str(here), str(tmp_path / "run"), "--json", "--traced-on",
                 str(there)]) == 0  # fmt: skip
    scaled = json.loads(capsys.readouterr().out)
    assert [r["computation"] for r in scaled["ranks"]] == pytest.approx(
        [2 * r["computation"] for r in measured["ranks"]], rel=1e-9)  # fmt: skip


# Score-P's bytes of a collective on P ranks, block B, not in place (its
# scorep_mpi_coll_bytes_* of the MPI adapter): a rooted one-to-all (bcast, scatter)
# sends P B at the root and 0 elsewhere and receives B everywhere; an all-to-one
# (gather, reduce) sends B everywhere and receives P B at the root, 0 elsewhere; an
# allreduce, allgather and alltoall send and receive P B on every rank; a
# reduce_scatter_block P B both ways; a scan (P - rank) B and (rank + 1) B, an exscan
# (P - rank - 1) B and rank B; a barrier nothing
P, B = 4, 1000
UNDEFINED = 0xFFFFFFFF


def scorep_bytes(op: str, rank: int, root: int) -> tuple[int, int]:
    if op in ("BCAST", "SCATTER"):
        return (P * B if rank == root else 0), B
    if op in ("GATHER", "REDUCE"):
        return B, (P * B if rank == root else 0)
    if op == "BARRIER":
        return 0, 0
    if op == "SCAN":
        return (P - rank) * B, (rank + 1) * B
    if op == "EXSCAN":
        return (P - rank - 1) * B, rank * B
    return P * B, P * B  # ALLREDUCE, ALLGATHER, ALLTOALL, REDUCE_SCATTER_BLOCK


# the same collectives as a time-independent trace (datatype 2: bytes)
SEQUENCE = [("BCAST", 2, "bcast 1000 2 2"), ("REDUCE", 1, "reduce 1000 0 1 2"),
            ("ALLREDUCE", UNDEFINED, "allreduce 1000 0 2"),
            ("ALLGATHER", UNDEFINED, "allgather 1000 1000 2 2"),
            ("ALLTOALL", UNDEFINED, "alltoall 1000 1000 2 2"),
            ("GATHER", 3, "gather 1000 1000 3 2 2"), ("SCATTER", 0, "scatter 1000 1000 0 2 2"),
            ("REDUCE_SCATTER_BLOCK", UNDEFINED, "reducescatter 1000 1000 1000 1000 0 2"),
            ("BARRIER", UNDEFINED, "barrier"),
            # no scan in the TI format: replayed as an allreduce of the block
            ("SCAN", UNDEFINED, "allreduce 1000 0 2"), ("EXSCAN", UNDEFINED, "allreduce 1000 0 2")]  # fmt: skip


@pytest.mark.parametrize("step", range(len(SEQUENCE)))
def test_collective_sizes_read_as_score_p_writes_them(tmp_path, step):
    # each collective alone, back to back with nothing between calls: the archive
    # with Score-P's sizes replays as the TI trace of the same collective
    op, root, line = SEQUENCE[step]
    program = [[("MPI_" + op.title(), 0, 1000,
                 [("MpiCollectiveEnd", op, root, *scorep_bytes(op, r, root))])]
               for r in range(P)]  # fmt: skip
    archive = replay(ring_machine(), load_trace(write_archive(tmp_path / "a", program)))
    ti = tmp_path / "ti.txt"
    ti.write_text("".join(f"{r} {line}\n" for r in range(P)))
    expected = replay(ring_machine(), load_trace(ti))
    assert expected.makespan > 0 or op == "BARRIER"
    np.testing.assert_allclose(archive.finish, expected.finish, rtol=1e-12)
    np.testing.assert_allclose(archive.nbytes, expected.nbytes, rtol=1e-12)
