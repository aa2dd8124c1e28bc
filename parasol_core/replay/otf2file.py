"""OTF2 archives (Score-P's format), read with the registry's ``otf2`` package into a
:class:`~parasol_core.replay.tifile.Trace` whose computations are measured seconds
(docs/replay.md, "OTF2").

Each location group of type process is a rank, in definition order (Score-P defines
them in rank order); a rank's events are those of its locations. Inside an MPI call
(an ``Enter`` of a region whose name starts with ``MPI_`` up to its ``Leave``):
``MpiSend`` is a send, ``MpiRecv`` a receive, ``MpiIsend`` and ``MpiIrecvRequest``
post requests (an irecv's source, tag and size come with its ``MpiIrecv``), and the
requests an MPI call completes (``MpiIsendComplete``, ``MpiIrecv``) are waited for at
its ``Leave``; ``MpiCollectiveEnd`` is a collective of MPI_COMM_WORLD. The time between
a rank's MPI calls (from the archive's first event) is computation measured on the
traced machine.

Collective sizes: OTF2's ``sizeSent`` and ``sizeReceived`` are this rank's bytes, as
Score-P's MPI adapter counts them (``scorep_mpi_coll_bytes_*``; P ranks, block B, not
in place): bcast and scatter send P B at the root, 0 elsewhere, and receive B on every
rank; gather and reduce send B on every rank and receive P B at the root; allreduce,
allgather and alltoall send and receive P B on every rank; reduce_scatter sends the
total and receives P times its own part; scan sends (P - rank) B, exscan (P - rank -
1) B; a barrier nothing. So a message moves: for a bcast or scatter the largest
``sizeReceived`` of its ranks, a gather or reduce the largest ``sizeSent``, an
allreduce, allgather, alltoall or scan the largest ``sizeSent / P`` (exscan's over P -
1); a reduce-scatter's total is its ``sizeSent`` and rank r's part its
``sizeReceived / P`` (the TI trace's ``reducescatter D1..DP``). In-place calls
(``MPI_IN_PLACE``: Score-P counts (P - 1) B) are taken as not in place.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core.base.words import counted
from parasol_core.replay.tifile import (
    KIND,
    Trace,
    TraceError,
    TraceUnreadable,
    _check_size,
    check_rank_count,
    check_ranks,
)

# OTF2 collective operations (otf2.CollectiveOp names) -> trace actions
_COLLECTIVES = {
    "BARRIER": "barrier", "BCAST": "bcast", "GATHER": "gather", "GATHERV": "gatherv",
    "SCATTER": "scatter", "SCATTERV": "scatter", "ALLGATHER": "allgather",
    "ALLGATHERV": "allgather", "ALLTOALL": "alltoall", "ALLTOALLV": "alltoall",
    "ALLTOALLW": "alltoall", "ALLREDUCE": "allreduce", "REDUCE": "reduce",
    "REDUCE_SCATTER": "reducescatter", "REDUCE_SCATTER_BLOCK": "reducescatter",
    "SCAN": "allreduce", "EXSCAN": "allreduce",
}  # fmt: skip
_MPI_WAITS = ("MPI_Wait", "MPI_Test")


def is_otf2(path: str | os.PathLike) -> bool:
    """Whether ``path`` names an OTF2 archive (its anchor file, or a folder holding one)."""
    p = Path(path)
    return p.suffix == ".otf2" or (p.is_dir() and any(p.glob("*.otf2")))


_said = threading.local()  # .reports: the OTF2 library's error reports of this thread
_callback: Any = None  # the error callback given to the library (kept alive)


def _take_reports() -> None:
    """Have the OTF2 library hand its error reports to this module instead of printing
    them (once a process): a damaged archive made it print eight lines of its own source
    files and functions on stderr before the one error that says which file, and that
    error's words were the library's least ("INVALID (1): Unknown error code"). Each
    report is kept for the thread that caused it (:func:`_reports`)."""
    global _callback
    if _callback is not None:
        return
    import ctypes

    from _otf2.Config import conf

    # OTF2_ErrorCallback: (userData, file, line, function, errorCode, format, va_list),
    # the va_list a pointer here (its arguments are not read)
    kind = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64,
                            ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)  # fmt: skip

    def report(_user, _file, _line, _function, code, text, _va):  # noqa: ANN001, ANN202
        kept = getattr(_said, "reports", None)
        if kept is not None and len(kept) < 100:
            kept.append((int(code), (text or b"").decode("utf-8", "replace")))
        return code

    _callback = kind(report)
    register = conf.lib.OTF2_Error_RegisterCallback
    register.argtypes = [kind, ctypes.c_void_p]
    register.restype = ctypes.c_void_p
    register(_callback, None)


def _why(error: Exception) -> str:
    """What the library reported first (the cause the rest follow from), in its words:
    its error's description and its message where that needs no arguments."""
    from _otf2.ErrorCodes import Error_GetDescription, ErrorCode

    for code, text in getattr(_said, "reports", None) or ():
        description = _lower_first(Error_GetDescription(ErrorCode(code)) or "")
        message = _lower_first(text.strip().rstrip(".!")) if "%" not in text else ""
        if description and message:
            return f"{description} ({message})"
        if description or message:
            return description or message
    return str(error)


def _lower_first(words: str) -> str:
    return words[:1].lower() + words[1:]


def load_otf2(path: str | os.PathLike, ranks: int | None = None) -> Trace:
    """Read an OTF2 archive (its ``.otf2`` anchor file, or the folder holding it)."""
    try:
        import otf2
    except ImportError:
        raise TraceError(f"{path}: reading OTF2 needs the otf2 package (pip install otf2, "
                         "or the project's 'replay' extra)") from None  # fmt: skip
    anchor = Path(path)
    if anchor.is_dir():
        found = sorted(anchor.glob("*.otf2"))
        if not found:
            raise TraceError(f"{path}: no .otf2 anchor file in this folder")
        anchor = found[0]
    if not anchor.is_file():
        raise TraceUnreadable(f"{anchor}: cannot read: no such file")
    _check_size([f for f in anchor.parent.rglob("*") if f.is_file()])
    _take_reports()
    _said.reports = []
    try:
        with otf2.reader.open(str(anchor)) as archive:
            return _read(archive, anchor, ranks)
    except TraceError:
        raise
    except Exception as e:  # the otf2 package's errors: a damaged or foreign archive
        raise TraceError(f"{anchor}: not a readable OTF2 archive: {_why(e)}") from None
    finally:
        _said.reports = None


class _Rank:
    def __init__(self) -> None:
        self.depth = 0
        self.call = ""
        self.last = None  # the end of its last MPI call
        self.requests: dict[int, tuple[str, int, int, int]] = {}  # id -> kind, peer, tag, action
        self.done: list[int] = []


def _read(archive: Any, anchor: Path, ranks: int | None) -> Trace:
    defs = archive.definitions
    resolution = float(archive.timer_resolution or 1)
    procs = [g for g in defs.location_groups if str(g.location_group_type).endswith("PROCESS")]
    if not procs:
        procs = list(defs.location_groups)
    rank_of_group = {id(g): r for r, g in enumerate(procs)}
    rank_of_loc = {}
    for loc in defs.locations:
        r = rank_of_group.get(id(loc.group))
        if r is not None:
            rank_of_loc[id(loc)] = r
    count = ranks if ranks is not None else len(procs)
    check_rank_count(count)
    world = None
    for c in defs.comms:
        members = list(c.group.members) if c.group is not None else []
        if len(members) == len(procs) and (world is None or c.name == "MPI_COMM_WORLD"):
            world = c

    cols: dict[str, list] = {k: [] for k in ("rank", "kind", "peer", "tag", "size", "size2",
                                             "flops", "line")}  # fmt: skip
    instances: dict[int, list[int]] = {}  # collective number -> its actions
    number = [0] * count
    state = [_Rank() for _ in range(count)]
    start = None
    where = str(anchor)

    def add(rank: int, kind: str, peer: int = -1, tag: int = 0, size: float = 0.0,
            size2: float = 0.0, flops: float = 0.0, n: int = 0) -> int:  # fmt: skip
        cols["rank"].append(rank)
        cols["kind"].append(KIND[kind])
        cols["peer"].append(peer)
        cols["tag"].append(tag)
        cols["size"].append(size)
        cols["size2"].append(size2)
        cols["flops"].append(flops)
        cols["line"].append(n)
        return len(cols["rank"]) - 1

    def peer_of(comm: Any, local: int, n: int) -> int:
        if comm is None or comm is world or world is None:
            return int(local)
        try:
            loc = list(comm.group.members)[local]
        except (IndexError, TypeError):
            raise TraceError(
                f"{where}: event {n}: rank {local} of {comm.name} is not in it"
            ) from None
        return rank_of_loc.get(id(loc), int(local))

    for n, (loc, event) in enumerate(archive.events, 1):
        rank = rank_of_loc.get(id(loc))
        if rank is None:
            continue
        if rank >= count:
            raise TraceError(f"{where}: event {n}: rank {rank} is out of range: the program "
                             f"has {counted(count, 'rank', grouped=False)}")  # fmt: skip
        s = state[rank]
        name = type(event).__name__
        t = event.time / resolution
        if start is None:
            start = t
        if name == "Enter" and event.region.name.startswith("MPI_"):
            if s.depth == 0:
                gap = t - (start if s.last is None else s.last)
                if gap > 0:
                    add(rank, "compute", flops=gap, n=n)
                s.call = event.region.name
            s.depth += 1
        elif name == "Leave" and event.region.name.startswith("MPI_") and s.depth > 0:
            s.depth -= 1
            if s.depth == 0:
                s.last = t
                for req in s.done:
                    kind, peer, tag, _ = s.requests.pop(req)
                    src, dst = (rank, peer) if kind == "s" else (peer, rank)
                    add(rank, "wait", peer=src, tag=tag, size2=float(dst), n=n)
                s.done.clear()
        elif name == "MpiSend":
            add(rank, "send", peer_of(event.communicator, event.receiver, n), event.msg_tag,
                float(event.msg_length), n=n)  # fmt: skip
        elif name == "MpiRecv":
            add(rank, "recv", peer_of(event.communicator, event.sender, n), event.msg_tag,
                float(event.msg_length), n=n)  # fmt: skip
        elif name == "MpiIsend":
            peer = peer_of(event.communicator, event.receiver, n)
            at = add(rank, "isend", peer, event.msg_tag, float(event.msg_length), n=n)
            s.requests[event.request_id] = ("s", peer, event.msg_tag, at)
        elif name == "MpiIsendComplete":
            if event.request_id in s.requests:
                s.done.append(event.request_id)
        elif name == "MpiIrecvRequest":
            at = add(rank, "irecv", n=n)
            s.requests[event.request_id] = ("r", -1, 0, at)
        elif name == "MpiIrecv":
            peer = peer_of(event.communicator, event.sender, n)
            _, _, _, at = s.requests.get(event.request_id, ("r", -1, 0, -1))
            if at < 0:  # completed without its request: posted here
                at = add(rank, "irecv", n=n)
            cols["peer"][at], cols["tag"][at] = peer, event.msg_tag
            cols["size"][at] = float(event.msg_length)
            s.requests[event.request_id] = ("r", peer, event.msg_tag, at)
            s.done.append(event.request_id)
        elif name == "MpiCollectiveEnd":
            op = str(event.collective_op).rsplit(".", 1)[-1]
            kind = _COLLECTIVES.get(op)
            if kind is None:
                raise TraceError(f"{where}: event {n}: rank {rank}: collective {op} is not "
                                 "replayed")  # fmt: skip
            if world is not None and event.communicator is not world:
                raise TraceError(f"{where}: event {n}: rank {rank}: a collective of "
                                 f"{event.communicator.name}; only MPI_COMM_WORLD's are "
                                 "replayed")  # fmt: skip
            root = event.root if kind in ("bcast", "gather", "gatherv", "scatter", "reduce") else -1
            sent, got = float(event.size_sent), float(event.size_received)
            if op == "EXSCAN" and count > 1:  # (P - rank - 1) B: as scan's (P - rank) B
                sent, got = sent * count / (count - 1), got * count / (count - 1)
            at = add(rank, kind, peer=int(root) if 0 <= root < count else -1, size=sent,
                     size2=got, n=n)  # fmt: skip
            instances.setdefault(number[rank], []).append(at)
            number[rank] += 1
    parts = _sizes(cols, instances, count)
    rank = np.asarray(cols["rank"], dtype=np.int64)
    order = np.argsort(rank, kind="stable")
    m = rank.shape[0]
    counts_ptr = np.zeros((2, m), dtype=np.int64)
    counts: list[float] = []
    for at, new in enumerate(order.tolist()):  # a reduce-scatter's parts, as TI keeps them
        if new in parts:
            counts_ptr[:, at] = len(counts), len(counts) + len(parts[new])
            counts.extend(parts[new])
    trace = Trace(
        ranks=count,
        files=[str(anchor)],
        rank=rank[order],
        kind=np.asarray(cols["kind"], dtype=np.int8)[order],
        peer=np.asarray(cols["peer"], dtype=np.int64)[order],
        tag=np.asarray(cols["tag"], dtype=np.int64)[order],
        size=np.asarray(cols["size"], dtype=np.float64)[order],
        size2=np.asarray(cols["size2"], dtype=np.float64)[order],
        flops=np.asarray(cols["flops"], dtype=np.float64)[order],
        file=np.zeros(m, dtype=np.int32),
        line=np.asarray(cols["line"], dtype=np.int64)[order],
        counts_ptr=counts_ptr,
        counts=np.asarray(counts, dtype=np.float64),
        first=np.searchsorted(rank[order], np.arange(count + 1)).astype(np.int64),
        timed=True,
    )
    unfinished = [r for r in range(count) if state[r].requests]
    if unfinished:
        r = unfinished[0]
        raise TraceError(f"{where}: rank {r} ends with {counted(len(state[r].requests), 'request')} never "
                         "completed")  # fmt: skip
    check_ranks(trace)
    return trace


def _sizes(cols: dict[str, list], instances: dict[int, list[int]], p: int
           ) -> dict[int, list[float]]:  # fmt: skip
    """Per-message sizes of the collectives (module docstring); each reduce-scatter
    action's parts (bytes per rank)."""
    kinds = {KIND[k]: k for k in ("bcast", "scatter", "gather", "reduce", "alltoall",
                                  "allreduce", "allgather", "reducescatter")}  # fmt: skip
    parts: dict[int, list[float]] = {}
    for acts in instances.values():
        kind = kinds.get(cols["kind"][acts[0]])
        if kind in ("bcast", "scatter"):
            size = size2 = max(cols["size2"][a] for a in acts)
        elif kind in ("gather", "reduce"):
            size = size2 = max(cols["size"][a] for a in acts)
        elif kind in ("alltoall", "allreduce", "allgather"):
            size = size2 = max(cols["size"][a] for a in acts) / max(p, 1)
        elif kind == "reducescatter":
            own = [0.0] * p  # rank r's part: its sizeReceived / P
            for a in acts:
                if 0 <= cols["rank"][a] < p:
                    own[cols["rank"][a]] = cols["size2"][a] / max(p, 1)
            size, size2 = max(cols["size"][a] for a in acts), 0.0
            for a in acts:
                parts[a] = own
        else:
            continue
        for a in acts:
            cols["size"][a], cols["size2"][a] = size, size2
    return parts
