"""Only ``MPI_COMM_WORLD``: what a time-independent trace cannot say about other
communicators, and the traces refused for it (docs/replay.md, "Communicators").

SimGrid 3.32's tracing (``smpi_pmpi_coll.cpp``) writes a collective with no
communicator: one on a sub-communicator (``MPI_Comm_split``'s, ``MPI_Comm_dup``'s) is
written as one of ``MPI_COMM_WORLD``, by the ranks of that sub-communicator only, with
its root a rank *of the sub-communicator*; ``MPI_Comm_split`` and ``MPI_Comm_dup``
themselves write nothing (``smpi_pmpi_comm.cpp`` has no tracing). Its replay
(``smpi_replay.cpp``) accepts ``comm_size``, ``comm_split`` and ``comm_dup`` lines
(written by older tracers) and does nothing with them, running every collective on
``MPI_COMM_WORLD``. Point-to-point calls on any communicator are written with world
ranks, and replay right.

So this replay refuses, with the file and line, what it can tell is not a trace of
``MPI_COMM_WORLD`` alone (:func:`check_world`): ranks whose collectives differ (in
number, in kind, in root, or in bytes where MPI makes every rank give the same), a
``comm_split`` line (a communicator of ranks the format does not name), a
``comm_size`` other than the ranks'. A sub-communicator used alike by every group
(each row of a grid calling the same collective with the same arguments) leaves
nothing to tell: it is replayed, as SimGrid replays it, as collectives of all ranks.
"""

from __future__ import annotations

import numpy as np

from parasol_core.base.words import counted
from parasol_core.replay.tifile import COLLECTIVES, KIND, KINDS, Trace, TraceError

# collectives whose bytes every rank gives alike (MPI: the same count and type signature)
_SAME_BYTES = np.asarray([KIND[k] for k in ("bcast", "reduce", "allreduce", "alltoall",
                                            "allgather", "barrier")])  # fmt: skip
_WHY = ("the ranks do not call the same collectives: a collective on a sub-communicator "
        "(MPI_Comm_split's) is written by SimGrid's tracing as one of MPI_COMM_WORLD by "
        "its ranks alone, and the format cannot say which ranks take part "
        "(docs/replay.md, \"Communicators\")")  # fmt: skip


def check_world(trace: Trace) -> None:
    """Refuse (TraceError, naming the file and line) a trace whose collectives cannot
    all be of ``MPI_COMM_WORLD``, or that makes a communicator the format cannot
    describe (module docstring)."""
    kind = trace.kind
    split = np.flatnonzero(kind == KIND["comm_split"])
    if split.size:
        i = int(split[0])
        raise TraceError(f"{trace.where(i)}: rank {int(trace.rank[i])} splits a communicator "
                         "(comm_split): the format does not say which ranks it holds nor "
                         "which collectives are on it, and only MPI_COMM_WORLD is replayed "
                         "(docs/replay.md, \"Communicators\")")  # fmt: skip
    sized = np.flatnonzero(kind == KIND["comm_size"])
    bad = sized[trace.size[sized] != trace.ranks] if sized.size else sized
    if bad.size:
        i = int(bad[0])
        raise TraceError(f"{trace.where(i)}: comm_size {trace.size[i]:g}, and the trace has "
                         f"{counted(trace.ranks, 'rank', grouped=False)}: only MPI_COMM_WORLD "
                         f"is replayed")  # fmt: skip
    coll = np.flatnonzero(np.isin(kind, np.fromiter(COLLECTIVES, dtype=np.int64)))
    if not coll.size:
        return
    rank = trace.rank[coll]
    count = np.bincount(rank, minlength=trace.ranks)
    k = int(count.min())
    # the first k collectives of each rank, as a ranks x k table of action indices
    order = np.argsort(rank, kind="stable")
    starts = np.concatenate(([0], np.cumsum(count)[:-1]))
    table = coll[order][(starts[:, None] + np.arange(k)[None, :]).ravel()].reshape(-1, k) \
        if k else np.zeros((trace.ranks, 0), dtype=np.int64)  # fmt: skip
    differs = kind[table] != kind[table[:1]]
    differs |= trace.peer[table] != trace.peer[table[:1]]  # the root (-1: none)
    if not trace.timed:  # OTF2's sizes are each rank's own: see otf2file
        alike = np.isin(kind[table], _SAME_BYTES) & (kind[table] == kind[table[:1]])
        differs |= alike & (trace.size[table] != trace.size[table[:1]])
    if differs.any():
        col = int(np.flatnonzero(differs.any(axis=0))[0])
        r = int(np.flatnonzero(differs[:, col])[0])
        a, b = int(table[0, col]), int(table[r, col])
        raise TraceError(f"{trace.where(a)}: rank 0's collective number {col + 1} is "
                         f"{_text(trace, a)}, and rank {r}'s is {_text(trace, b)} "
                         f"({trace.where(b)}): {_WHY}")  # fmt: skip
    if int(count.max()) != k:
        r = int(np.argmax(count))
        few = int(np.argmin(count))
        i = int(coll[order][starts[r] + k])
        raise TraceError(f"{trace.where(i)}: rank {r} calls {_text(trace, i)} as its "
                         f"collective number {k + 1}, and rank {few} calls {counted(k, 'collective')}: "
                         f"{_WHY}")  # fmt: skip


def _text(trace: Trace, i: int) -> str:
    root, size = int(trace.peer[i]), float(trace.size[i])
    parts = ([f"root {root}"] if root >= 0 else []) + (
        [counted(size, "byte", spec="g")] if size else []
    )
    return KINDS[int(trace.kind[i])] + (f" ({', '.join(parts)})" if parts else "")
