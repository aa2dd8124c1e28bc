"""SimGrid time-independent traces (``smpirun -trace-ti``, SimGrid 3.32), read into a
:class:`Trace`: every action of every rank as numpy columns, read once and replayed
as often as wanted (docs/replay.md, "Formats").

An index file names one action file per rank, one path a line (relative to the index
file's folder, else to the working folder), rank 0 first; or the file itself holds the
actions of every rank, each line starting with its rank. An action line is
``RANK ACTION ARGS...``; the actions and their arguments (``DT``: a datatype's number,
optional, :data:`DATATYPES`; counts are elements of it):

=================  ==========================================================
``init``           (anything after it is ignored)
``finalize``
``compute F``      F floating-point operations
``send D TAG N [DT]``, ``isend D TAG N [DT]``
``recv S TAG N [DT]``, ``irecv S TAG N [DT]``  (S ``-555`` or ``-333``: any source)
``wait [S D TAG]``  the request of that source, destination and tag, else the oldest
``waitall [K]``    every request not waited for
``sendRecv N D M S [DT DT]``
``bcast N ROOT [DT]``, ``reduce N F ROOT [DT]``, ``allreduce N F [DT]``
``alltoall N M [DT DT]``, ``allgather N M [DT DT]``, ``gather N M ROOT [DT DT]``,
``scatter N M ROOT [DT DT]``
``alltoallv N C1..CP M D1..DP [DT DT]``, ``gatherv N D1..DP ROOT [DT DT]``,
``allgatherv N D1..DP [DT DT]``, ``reducescatter D1..DP F [DT]``
``barrier``
``comm_size P``, ``comm_split``, ``comm_dup``  (read; replay.communicators refuses a split)
=================  ==========================================================

Bad input raises :class:`TraceError` naming the file and line.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core import native
from parasol_core.base import budget
from parasol_core.base.limits import (
    MAX_FILE_BYTES,
    Unreadable,
    ValueRangeError,
    file_kind,
    open_input,
    read_capped,
    read_head,
)
from parasol_core.base.numeric import is_whole, read_float, read_int
from parasol_core.base.words import counted

# SMPI 3.32's datatype numbers (smpi_datatype.cpp, CREATE_MPI_DATATYPE) and their sizes
DATATYPES: dict[int, tuple[str, int]] = {
    0: ("MPI_DOUBLE", 8),
    1: ("MPI_INT", 4),
    2: ("MPI_CHAR", 1),
    3: ("MPI_SHORT", 2),
    4: ("MPI_LONG", 8),
    5: ("MPI_FLOAT", 4),
    6: ("MPI_BYTE", 1),
}
# SMPI 3.32's replay when a line names none (smpi_replay.cpp's MPI_DEFAULT_TYPE): bytes.
# Measured: a 10^6-count send, bcast, allreduce or alltoall without a datatype takes
# as long in smpirun -replay as one of MPI_BYTE, an eighth of one of MPI_DOUBLE.
DEFAULT_DATATYPE = 6
DEFAULT_SIZE = DATATYPES[DEFAULT_DATATYPE][1]  # its bytes
ANY_SOURCE = (-555, -333)
ANY_TAG = -444
MAX_COUNT = 2**53  # elements or flops past which a count is not a whole double
#: The most ranks a trace may have: 16,777,216, sixteen times the largest models PIUI
#: holds. Every rank costs its per-rank arrays whether it acts or not, so a rank number
#: past it (one line of a single-file trace can name any) is refused where it is
#: written, before anything is made for that many ranks.
MAX_RANKS = 1 << 24
_INT64 = 2**63 - 1  # what a column holds: past it, a line is read in full (and refused)

# action kinds (the ``kind`` column); their names as the trace spells them
KINDS = ("init", "finalize", "compute", "send", "isend", "recv", "irecv", "wait", "waitall",
         "sendRecv", "bcast", "reduce", "allreduce", "alltoall", "alltoallv", "gather",
         "gatherv", "allgather", "allgatherv", "scatter", "reducescatter", "barrier",
         "comm_size", "comm_split", "comm_dup")  # fmt: skip
KIND = {name: i for i, name in enumerate(KINDS)}
COLLECTIVES = frozenset(
    KIND[k]
    for k in (
        "bcast",
        "reduce",
        "allreduce",
        "alltoall",
        "alltoallv",
        "gather",
        "gatherv",
        "allgather",
        "allgatherv",
        "scatter",
        "reducescatter",
        "barrier",
    )  # fmt: skip
)
_LOWER = {name.lower(): name for name in KINDS}

# memory a replay takes, for the budget (--max-memory): its peak resident memory's
# growth over the same replay of a one-iteration trace of the same ranks (Python's,
# numpy's and the model's), in bytes an action of a Jacobi trace
# (benchmarks/bench_replay_memory.py; tests/replay/test_replay_memory.py holds them),
# and BYTES_PER_RANK a rank (what a rank costs whatever its actions: its file's
# reading, its share of the routes and the per-rank sums).
# A one-shot replay (parasol-model replay without --json or --timeline,
# replay(release=True, operations=False)), since its compiler writes narrow per-action
# columns, the flow kernel reads 32-bit indices, large arrays are mappings of their
# own and the resource uses are made without gathering every message's processors
# (docs/replay.md, "Memory"): 151-180 on 1,024 ranks (10^5 and 10^6 actions), 125 on
# 64 ranks at 97,088, 147-163 on 256 ranks, 214 on 4,096 ranks at 421,888 actions
# (its fixed part: about 4 KiB a rank), 180 at 2,490,368 and 166 at 10,018,816 (peak
# 1,631 MiB; 173 and 1,695 MiB since the waiting is told apart along each operation's
# critical path, which reads the flow engine's critical predecessors and each node's
# ranks, 8 bytes a node; 153-176 on 1,024 ranks, kept 400-413);
# charged 185 an action and 8 KiB a rank. Before these cuts: 199-208,
# 291, about 200 at 10^7 (peak 1,946 MiB), charged 360; and before the trace was let
# go as the compiler took it and the flow kernel was given only what it reads: 293-308,
# 404, 324, charged 480. A replay that keeps the trace, its program and
# every operation (replay(), the Program window, the estimator): 465-475 on 1,024
# ranks (399-415 since the flow kernel is given only what it reads), 565 on 4,096 at
# 421,888 actions, 485 at 10^7. Reading the trace alone: 89 at 10^7. A Jacobi
# trace compiles to NODES_PER_ACTION program nodes an action; a trace of more
# (collectives on many ranks: hundreds a collective) is charged per node, at the same
# figure over NODES_PER_ACTION. Reading is charged READ_BYTES_PER_ACTION a line, the
# lines counted before the columns are made (it was charged by the files' bytes over
# a shortest line of 12 bytes: 3.1 x 10^9 for the 10^7-action trace, whose 23-byte
# lines take 89 bytes an action); an OTF2 archive still is, by its bytes over
# SHORTEST_LINE.
BYTES_PER_ACTION = 700
ONCE_BYTES_PER_ACTION = 185
BYTES_PER_RANK = 8192
READ_BYTES_PER_ACTION = 160
NODES_PER_ACTION = 0.84
SHORTEST_LINE = 12


def replay_memory(actions: int, nodes: int | None = None, once: bool = False,
                  ranks: int = 0) -> int:  # fmt: skip
    """The bytes a replay of ``actions`` actions (``nodes`` program nodes, when compiled)
    on ``ranks`` ranks is charged: one-shot (``once``) or kept (see
    :data:`BYTES_PER_ACTION`), and :data:`BYTES_PER_RANK` a rank."""
    per = ONCE_BYTES_PER_ACTION if once else BYTES_PER_ACTION
    units = actions if nodes is None else max(actions, nodes / NODES_PER_ACTION)
    return int(units * per) + ranks * BYTES_PER_RANK


class TraceError(ValueError):
    """A trace that cannot be replayed; the message names the file and line."""


class TraceUnreadable(TraceError, Unreadable):
    """A trace file that cannot be read: absent, not a regular file, too large."""


@dataclass
class Trace:
    """A parsed trace: per action (rank by rank, in trace order) its ``rank``, ``kind``
    (an index of :data:`KINDS`), ``peer`` (destination, source or root; -1 for none,
    :data:`ANY_SOURCE` kept as -555), ``tag``, ``size`` and ``size2`` (bytes: a send's,
    a receive's; a collective's send and receive part), ``flops`` (``compute`` and the
    reductions' F), and where it came from: ``file`` (an index of ``files``) and
    ``line`` (1-based). The v-collectives keep their per-rank counts (bytes) in
    ``counts[counts_ptr[0, i]:counts_ptr[1, i]]`` (alltoallv: the send counts, then the
    receive counts). ``first[r]:first[r + 1]`` are rank r's actions.

    Replaying compiles the trace into a program of messages once per set of semantic
    options and keeps it here (:attr:`compiled`), so a replay after a timing changed
    costs the network trace only."""

    ranks: int
    files: list[str]
    rank: np.ndarray
    kind: np.ndarray
    peer: np.ndarray
    tag: np.ndarray
    size: np.ndarray
    size2: np.ndarray
    flops: np.ndarray
    file: np.ndarray
    line: np.ndarray
    counts_ptr: np.ndarray
    counts: np.ndarray
    first: np.ndarray
    timed: bool = False  # ``flops`` of computes are seconds measured (OTF2), not flops
    compiled: dict[Any, Any] = field(default_factory=dict, repr=False)
    # what :func:`~parasol_core.replay.reading.load_trace` read it from (path, ranks):
    # a trace whose columns were let go is read again from there to word a deadlock
    source: tuple[Any, int | None] | None = None
    released: int = -1  # after :meth:`release`: how many actions it had

    def __len__(self) -> int:
        return self.released if self.released >= 0 else int(self.kind.shape[0])

    def release(self) -> None:
        """Let go of the per-action columns (``first`` stays: each rank's count of
        actions) and of the compiled programs: what a one-shot replay does once the
        trace is compiled (``replay(..., release=True)``, docs/replay.md, "Memory").
        The trace cannot be replayed again; ``len`` still gives its actions."""
        n = len(self)
        for name in ("rank", "kind", "peer", "tag", "size", "size2", "flops", "file", "line",
                     "counts"):  # fmt: skip
            setattr(self, name, getattr(self, name)[:0].copy())
        self.counts_ptr = self.counts_ptr[:, :0].copy()
        self.compiled.clear()
        self.released = n

    def where(self, i: int) -> str:
        """``FILE:LINE`` of action ``i``."""
        return f"{self.files[int(self.file[i])]}:{int(self.line[i])}"

    def text(self, i: int) -> str:
        """Action ``i`` in words (its kind and peer), for messages."""
        kind = KINDS[int(self.kind[i])]
        peer = int(self.peer[i])
        return f"{kind} {peer}" if peer >= 0 and kind not in ("compute",) else kind


# --------------------------------------------------------------------------- reading


def load_ti_trace(path: str | os.PathLike, ranks: int | None = None) -> Trace:
    """Read a SimGrid time-independent trace: an index file naming one action file per
    rank, or one file holding every rank's actions. ``ranks``: how many the program had
    (default: as many as the index names, or the highest rank seen plus one). Held to
    the memory budget in force (:mod:`parasol_core.base.budget`, ``--max-memory``),
    estimated from the files' lines, counted before the trace's columns are made.
    TraceError on bad input."""
    index = Path(path)
    files = ti_files(index)
    collecting = gc.isenabled()
    gc.disable()  # the columns' lists hold numbers only: no collector passes
    try:
        return _read(files, ranks, index)
    finally:
        if collecting:
            gc.enable()


def ti_files(path: str | os.PathLike) -> list[Path]:
    """The files a time-independent trace at ``path`` is read from, as
    :func:`load_ti_trace` reads it: ``[path]`` when it holds the actions, else the
    action files its index names (comments skipped, each path relative to the index's
    folder, or as given). TraceUnreadable on a file that cannot be read or is binary,
    TraceError on an index naming no file."""
    index = Path(path)
    try:
        head = read_head(index, 4096)
    except OSError as e:
        raise TraceUnreadable(f"{index}: cannot read: {e.strerror or e}") from None
    if b"\0" in head:
        raise TraceUnreadable(f"{index}: is a binary file, not a trace (a SimGrid "
                              "time-independent trace is text: an index naming one action "
                              "file per rank, or the actions; or an OTF2 archive's .otf2)")  # fmt: skip
    first = _first_line(head)
    return [index] if first is not None and _is_action(first) else _index_files(index)


def _first_line(head: bytes) -> str | None:
    for raw in head.splitlines():
        line = raw.decode("utf-8", "replace").strip()
        if line and not line.startswith("#"):
            return line
    return None


def _is_action(line: str) -> bool:
    words = line.split()
    return len(words) >= 2 and is_whole(words[0].lstrip("-")) and words[1].lower() in _LOWER


def _index_files(index: Path) -> list[Path]:
    try:
        text = read_capped(index, MAX_FILE_BYTES, "a trace's index").decode("utf-8", "replace")
    except ValueRangeError as e:
        raise TraceUnreadable(str(e)) from None
    except OSError as e:
        raise TraceUnreadable(f"{index}: cannot read: {e.strerror or e}") from None
    files = []
    for n, raw in enumerate(text.splitlines(), 1):
        name = raw.strip()
        if not name or name.startswith("#"):
            continue
        if "\0" in name:  # no file is named so (and Path.exists() would raise)
            raise TraceUnreadable(f"{index}:{n}: holds a NUL byte: binary, not a file name "
                                  "(an index names one action file a line)")  # fmt: skip
        p = Path(name)
        if not p.is_absolute():
            near = index.parent / p
            p = near if near.exists() or not p.exists() else p
        if not p.is_file():
            why = "does not exist"
            with contextlib.suppress(OSError):
                mode = p.stat().st_mode
                why = f"is {file_kind(mode)}, not a regular file"
            raise TraceUnreadable(f"{index}:{n}: the action file '{name}' {why}")
        files.append(p)
    if not files:
        raise TraceError(f"{index}: names no action file (an index lists one per rank)")
    return files


def _check_size(files: list[Path]) -> None:
    """Reading ``files`` against the memory budget in force by their bytes, over
    SHORTEST_LINE bytes an action (an OTF2 archive's, before it is read)."""
    total = sum(f.stat().st_size for f in files)
    _charge(f"reading the trace ({counted(total, 'byte')} in {counted(len(files), 'file')}, up to "
            f"{counted(total // SHORTEST_LINE, 'action')})",
            total // SHORTEST_LINE * READ_BYTES_PER_ACTION)  # fmt: skip


def _check_lines(lines: int, files: int) -> None:
    """Reading ``lines`` lines (at most as many actions) of ``files`` files against the
    memory budget in force, before the columns are made (READ_BYTES_PER_ACTION a line:
    the lines are counted first, a file at a time)."""
    _charge(f"reading the trace ({counted(lines, 'line')} in "
            f"{counted(files, 'file', grouped=False)}, "
            f"{READ_BYTES_PER_ACTION} bytes a line)", lines * READ_BYTES_PER_ACTION)  # fmt: skip


def _charge(what: str, estimate: int) -> None:
    """MemoryBudgetError naming ``what`` when ``estimate`` bytes are past the memory
    budget in force (none: nothing to check)."""
    limit = budget.current().memory
    if limit is not None and estimate > limit:
        raise budget.MemoryBudgetError(what, estimate, limit, budget.current().source)


class _Columns:
    def __init__(self) -> None:
        self.rank: list[int] = []
        self.kind: list[int] = []
        self.peer: list[int] = []
        self.tag: list[int] = []
        self.size: list[float] = []
        self.size2: list[float] = []
        self.flops: list[float] = []
        self.file: list[int] = []
        self.line: list[int] = []
        self.vraw: list[tuple[int, str, list[str], str]] = []


_FIELDS = ("rank", "kind", "peer", "tag", "size", "size2", "flops", "line")
_TYPES = (np.int64, np.int8, np.int64, np.int64, np.float64, np.float64, np.float64, np.int64)
_COLUMNS = (*zip(_FIELDS, _TYPES), ("file", np.int32))  # a trace's columns and their types
# the actions native/tiscan.c reads, in its order
_SCANNED = np.asarray([KIND[k] for k in ("init", "finalize", "compute", "send", "isend", "recv",
                                         "irecv", "wait", "waitall", "bcast", "reduce",
                                         "allreduce", "alltoall", "allgather", "gather",
                                         "scatter", "barrier", "sendRecv")], dtype=np.int64)  # fmt: skip
_P, _N = ctypes.c_void_p, ctypes.c_int64
_SCAN_SIGNATURE = (_P, _N, _N, _P, _N, *[_P] * 8)


def _scanner() -> Any:
    """The C reader of common lines (``native/tiscan.c``), None when not built or
    ``PARASOL_PURE_PYTHON=1``."""
    return native.function("_replay", "parasol_ti_scan", _SCAN_SIGNATURE)


def scan_native(lib: Any, data: bytes, expect: int | None) -> dict[str, np.ndarray] | None:
    """A file's actions read by the C reader, or None where it leaves the file to
    Python (a line it does not read; see native/tiscan.c)."""
    cap = data.count(b"\n") + 1
    col = {f: np.zeros(cap, dtype=t) for f, t in zip(_FIELDS, _TYPES)}
    got = scan_into(lib, data, expect, col, 0, cap, np.zeros(cap, dtype=np.int64))
    return None if got < 0 else {f: a[:got] for f, a in col.items()}


def scan_into(lib: Any, data: bytes, expect: int | None, col: dict[str, np.ndarray], at: int,
              cap: int, kinds: np.ndarray) -> int:  # fmt: skip
    """A file's actions read by the C reader into ``col[...][at:at + cap]`` (its kinds
    through ``kinds``, an int64 scratch of at least ``cap``): how many, or -1 where it
    leaves the file to Python (what it wrote is then written over)."""
    out = [kinds if f == "kind" else col[f][at:] for f in _FIELDS]
    got = lib(data, len(data), -1 if expect is None else expect, _SCANNED.ctypes.data, cap,
              *(a.ctypes.data for a in out))  # fmt: skip
    if got >= 0:
        col["kind"][at : at + got] = kinds[:got]
    return int(got)


def _python_file(text: str, name: str, fi: int, expect: int | None
                 ) -> tuple[dict[str, np.ndarray], list]:  # fmt: skip
    cols = _Columns()
    if text.isascii() and "_" not in text:
        _fast(cols, text, name, fi, expect)
    else:
        for n, raw in enumerate(text.splitlines(), 1):
            words = raw.split()
            if not words or words[0].startswith("#"):
                continue
            _action(cols, words, name, fi, n, expect)
    arrays = {f: np.asarray(getattr(cols, f), dtype=t) for f, t in zip(_FIELDS, _TYPES)}
    return arrays, cols.vraw


def _bytes_of(f: Path) -> bytes:
    try:
        with open_input(f) as file:
            return file.read()
    except OSError as e:
        raise TraceUnreadable(f"{f}: cannot read: {e.strerror or e}") from None


def _read(files: list[Path], ranks: int | None, index: Path) -> Trace:
    names = [str(f) for f in files]
    per_file = len(files) > 1 or files[0] != index
    lib = _scanner()
    # the columns are made once, as long as the files have lines, and each file is read
    # into its slice: no file's columns to join (the trace held twice at the peak) and
    # none of thousands of small arrays left as holes in the heap (about a third of the
    # columns' size in resident memory, never given back). A second read of each file
    # counts its lines first (from the page cache: a few percent of the reading).
    caps = [_bytes_of(f).count(b"\n") + 1 for f in files] if len(files) > 1 else None
    col: dict[str, np.ndarray] = {}
    scratch = np.zeros(0, dtype=np.int64)
    vraw: list = []
    done = 0
    for fi, f in enumerate(files):
        expect = fi if per_file else None
        data = _bytes_of(f)
        cap = data.count(b"\n") + 1
        if not col:
            total = cap if caps is None else max(sum(caps), cap)
            _check_lines(total, len(files))  # before the columns are made
            col = {k: np.empty(total, dtype=t) for k, t in _COLUMNS}
        if done + cap > col["rank"].shape[0]:  # a file grew since it was counted
            col = {k: np.concatenate([a[:done], np.empty(cap, dtype=a.dtype)])
                   for k, a in col.items()}  # fmt: skip
        got = -1
        if lib is not None and data.isascii() and b"_" not in data:
            if scratch.shape[0] < cap:
                scratch = np.zeros(cap, dtype=np.int64)  # the C reader's kinds (int64)
            got = scan_into(lib, data, expect, col, done, cap, scratch)
        if got < 0:
            text = data.decode("utf-8", errors="replace")
            chunk, raw = _python_file(text, names[fi], fi, expect)
            vraw += [(done + at, *rest) for at, *rest in raw]
            got = chunk["rank"].shape[0]
            for name in _FIELDS:
                col[name][done : done + got] = chunk[name]
            del chunk
        col["file"][done : done + got] = fi
        done += got
        del data
    del scratch
    col = {k: a[:done] for k, a in col.items()} if col else {
        k: np.zeros(0, dtype=t) for k, t in _COLUMNS}  # fmt: skip
    seen = int(col["rank"].max()) + 1 if done else 0
    if seen > MAX_RANKS:
        i = int(np.argmax(col["rank"]))
        raise TraceError(f"{names[int(col['file'][i])]}:{int(col['line'][i])}: rank "
                         f"{seen - 1} is past the {MAX_RANKS:,} ranks a trace may have")  # fmt: skip
    count = ranks if ranks is not None else max(seen, len(files) if per_file else 0)
    check_rank_count(count)
    size, size2, flops, peer = col["size"], col["size2"], col["flops"], col["peer"]
    lo = np.zeros(done, dtype=np.int64)
    hi = np.zeros(done, dtype=np.int64)
    counts: list[float] = []
    for at, name, args, where in vraw:  # the v-collectives, now that P is known
        peer[at], size[at], size2[at], flops[at], mine = _vector(name, args, where, count)
        lo[at] = len(counts)
        counts.extend(mine)
        hi[at] = len(counts)
    rank = col["rank"]
    if done and bool((rank[1:] < rank[:-1]).any()):  # one file: its ranks' lines interleave
        order = np.argsort(rank, kind="stable")
        col = {f: a[order] for f, a in col.items()}
        peer, size, size2, flops, lo, hi = (a[order] for a in (peer, size, size2, flops, lo, hi))
        rank = col["rank"]
    trace = Trace(
        ranks=count,
        files=names,
        rank=rank,
        kind=col["kind"],
        peer=peer,
        tag=col["tag"],
        size=size,
        size2=size2,
        flops=flops,
        file=col["file"],
        line=col["line"],
        counts_ptr=np.stack([lo, hi]),
        counts=np.asarray(counts, dtype=np.float64),
        first=np.searchsorted(rank, np.arange(count + 1)).astype(np.int64),
    )
    check_ranks(trace)
    return trace


_POINT = {"send": KIND["send"], "isend": KIND["isend"], "recv": KIND["recv"],
          "irecv": KIND["irecv"]}  # fmt: skip
_SIZES = {str(k): v[1] for k, v in DATATYPES.items()}


def _fast(cols: _Columns, text: str, fname: str, fi: int, expect: int | None) -> None:
    """The common lines of an ASCII file without underscores (what Python's int and
    float then read is what the project's readers read), in one loop; any other line,
    and any line whose numbers are out of range, goes to :func:`_action`, which reads
    it in full and words its error."""
    rank_a, kind_a, peer_a, tag_a = (
        cols.rank.append,
        cols.kind.append,
        cols.peer.append,
        cols.tag.append,
    )
    size_a, size2_a, flops_a = cols.size.append, cols.size2.append, cols.flops.append
    file_a, line_a = cols.file.append, cols.line.append
    compute, waitall, init, finalize = (
        KIND["compute"],
        KIND["waitall"],
        KIND["init"],
        KIND["finalize"],
    )
    wait = KIND["wait"]
    point, sizes, top = _POINT, _SIZES, float(MAX_COUNT)
    default = DEFAULT_SIZE  # a line that names no datatype
    for n, raw in enumerate(text.splitlines(), 1):
        w = raw.split()
        if not w or w[0][0] == "#":
            continue
        try:
            r = int(w[0])
            if not 0 <= r <= _INT64 or (expect is not None and r != expect) or len(w) < 2:
                raise ValueError
            k = w[1]
            nw = len(w)
            if k == "compute" and nw == 3:
                f = float(w[2])
                if not 0 <= f <= top:
                    raise ValueError
                kind, peer, tag, size, size2, flops = compute, -1, 0, 0.0, 0.0, f
            elif k in point and (nw == 5 or nw == 6):
                peer, tag = int(w[2]), int(w[3])
                size = float(w[4]) * (sizes[w[5]] if nw == 6 else default)
                if not 0 <= size <= top or not 0 <= peer <= _INT64 or abs(tag) > MAX_COUNT:
                    raise ValueError
                kind, size2, flops = point[k], 0.0, 0.0
            elif k == "wait" and nw == 5:
                peer, tag, size2 = int(w[2]), int(w[4]), float(int(w[3]))
                if not (-1 <= peer <= _INT64 or peer in ANY_SOURCE) or abs(tag) > MAX_COUNT:
                    raise ValueError
                kind, size, flops = wait, 0.0, 0.0
                peer = ANY_SOURCE[0] if peer in ANY_SOURCE else peer
            elif (k == "waitall" and nw <= 3) or k == "init" or (k == "finalize" and nw == 2):
                if nw == 3:
                    int(w[2])
                kind = waitall if k == "waitall" else init if k == "init" else finalize
                peer, tag, size, size2, flops = -1, 0, 0.0, 0.0, 0.0
            else:
                raise ValueError
        except (ValueError, KeyError, IndexError):
            _action(cols, w, fname, fi, n, expect)  # in full: reads it, or says why not
            continue
        rank_a(r)
        kind_a(kind)
        peer_a(peer)
        tag_a(tag)
        size_a(size)
        size2_a(size2)
        flops_a(flops)
        file_a(fi)
        line_a(n)


def check_rank_count(count: int) -> None:
    """Refuse a program of more ranks than :data:`MAX_RANKS`, naming both."""
    if count > MAX_RANKS:
        raise TraceError(f"a program of {counted(count, 'rank')} is past the {MAX_RANKS:,} ranks a "
                         "trace may have")  # fmt: skip


def check_ranks(trace: Trace) -> None:
    """Every rank and peer within the program's ranks, the v-counts one per rank."""
    p = trace.ranks
    bad = trace.rank >= p
    if bad.any():
        i = int(np.argmax(bad))
        raise TraceError(f"{trace.where(i)}: rank {int(trace.rank[i])} is out of range: the "
                         f"program has {counted(p, 'rank', grouped=False)} "
                         f"(0..{p - 1})")  # fmt: skip
    peer = trace.peer
    wild = (peer == ANY_SOURCE[0]) | (peer == ANY_SOURCE[1])
    bad = ((peer < -1) & ~wild) | (peer >= p)
    if bad.any():
        i = int(np.argmax(bad))
        what = "root" if int(trace.kind[i]) in COLLECTIVES else "peer"
        raise TraceError(f"{trace.where(i)}: {what} {int(peer[i])} is out of range: the "
                         f"program has {counted(p, 'rank', grouped=False)} "
                         f"(0..{p - 1})")  # fmt: skip
    sr = (trace.kind == KIND["sendRecv"]) & (trace.tag >= p)  # its source, in the tag column
    if sr.any():
        i = int(np.argmax(sr))
        raise TraceError(f"{trace.where(i)}: source {int(trace.tag[i])} is out of range: the "
                         f"program has {counted(p, 'rank', grouped=False)} "
                         f"(0..{p - 1})")  # fmt: skip
    lo, hi = trace.counts_ptr
    n = hi - lo
    v = n > 0
    if v.any():
        kind = trace.kind
        want = np.where(kind == KIND["alltoallv"], 2 * p, p)
        bad = v & (n != want)
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceError(f"{trace.where(i)}: {KINDS[int(kind[i])]} gives {int(n[i])} "
                             f"counts; the program has "
                             f"{counted(p, 'rank', grouped=False)}")  # fmt: skip


def _int(word: str, what: str, where: str) -> int:
    try:
        value = read_int(word, what, sign=True)
    except ValueError as e:
        raise TraceError(f"{where}: {e}") from None
    if abs(value) > MAX_COUNT:
        raise TraceError(f"{where}: {what} {word} overflows (more than 2^53)")
    return value


def _count(word: str, what: str, where: str) -> float:
    try:
        value = read_float(word, f" ({what})")
    except ValueError as e:
        raise TraceError(f"{where}: {e}") from None
    if not math.isfinite(value) or value < 0 or value > MAX_COUNT:
        why = "is negative" if value < 0 else "overflows (past 2^53)"
        raise TraceError(f"{where}: {what} {word} {why}")
    return value


def _dt(words: list[str], at: int, where: str) -> int:
    if len(words) <= at:
        return DEFAULT_SIZE
    number = _int(words[at], "a datatype", where)
    if number not in DATATYPES:
        known = ", ".join(f"{k} ({v[0]})" for k, v in DATATYPES.items())
        raise TraceError(f"{where}: unknown datatype {number} (known: {known})")
    return DATATYPES[number][1]


def _bytes(count: float, size: int, where: str) -> float:
    value = count * size
    if value > MAX_COUNT:
        raise TraceError(f"{where}: {counted(count, 'element', spec='.17g')} of "
                         f"{counted(size, 'byte', grouped=False)} overflow (past 2^53 "
                         "bytes)")  # fmt: skip
    return value


# arguments each action needs (at least, at most; None: any number)
_ARITY = {"init": (0, None), "finalize": (0, 0), "compute": (1, 1), "send": (3, 4),
          "isend": (3, 4), "recv": (3, 4), "irecv": (3, 4), "wait": (0, 3), "waitall": (0, 1),
          "sendRecv": (4, 6), "bcast": (2, 3), "reduce": (3, 4), "allreduce": (2, 3),
          "alltoall": (2, 4), "gather": (3, 5), "allgather": (2, 4), "scatter": (3, 5),
          "barrier": (0, 0), "comm_size": (1, 1), "comm_split": (0, None),
          "comm_dup": (0, None)}  # fmt: skip


def _action(cols: _Columns, words: list[str], fname: str, fi: int, n: int,
            expect: int | None) -> None:  # fmt: skip
    where = f"{fname}:{n}"
    if len(words) < 2:
        raise TraceError(
            f"{where}: an action line is 'RANK ACTION ARGS...', got '{' '.join(words)}'"
        )
    rank = _int(words[0], "the rank", where)
    if rank < 0:
        raise TraceError(f"{where}: rank {rank} is out of range (ranks count from 0)")
    if expect is not None and rank != expect:
        raise TraceError(f"{where}: a line of rank {rank} in the file of rank {expect} (the "
                         f"index's line {expect + 1})")  # fmt: skip
    name = _LOWER.get(words[1].lower()) if words[1] in KIND or words[1].lower() in _LOWER else None
    if name is None:
        raise TraceError(f"{where}: unknown action '{words[1]}' (known: {', '.join(KINDS)})")
    args = words[2:]
    arity = _ARITY.get(name)
    if arity is not None:
        lo, hi = arity
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = f"{lo}" if lo == hi else (f"{lo} to {hi}" if hi is not None else f"{lo} or more")
            raise TraceError(f"{where}: {name} takes {want} arguments, got {len(args)}")
    peer, tag, size, size2, flops = -1, 0, 0.0, 0.0, 0.0
    if name == "compute":
        flops = _count(args[0], "the flops", where)
    elif name in ("send", "isend", "recv", "irecv"):
        peer = _int(args[0], "the destination" if "send" in name else "the source", where)
        tag = _int(args[1], "the tag", where)
        size = _bytes(_count(args[2], "the count", where), _dt(args, 3, where), where)
    elif name == "wait":
        if len(args) == 3:
            peer = _int(args[0], "the source", where)
            tag = _int(args[2], "the tag", where)
            size2 = float(_int(args[1], "the destination", where))
        elif args:
            raise TraceError(f"{where}: wait takes no arguments or SRC DST TAG, got {len(args)}")
    elif name == "sendRecv":
        sdt, rdt = _dt(args, 4, where), _dt(args, 5, where)
        size = _bytes(_count(args[0], "the send count", where), sdt, where)
        peer = _int(args[1], "the destination", where)
        size2 = _bytes(_count(args[2], "the receive count", where), rdt, where)
        tag = _int(args[3], "the source", where)  # the source, kept in the tag column
        if tag < 0 or peer < 0:
            raise TraceError(f"{where}: sendRecv's destination and source are ranks")
    elif name == "bcast":
        size = _bytes(_count(args[0], "the count", where), _dt(args, 2, where), where)
        peer = _int(args[1], "the root", where)
    elif name == "reduce":
        size = _bytes(_count(args[0], "the count", where), _dt(args, 3, where), where)
        flops = _count(args[1], "the flops", where)
        peer = _int(args[2], "the root", where)
    elif name == "allreduce":
        size = _bytes(_count(args[0], "the count", where), _dt(args, 2, where), where)
        flops = _count(args[1], "the flops", where)
    elif name in ("alltoall", "allgather", "gather", "scatter"):
        rooted = name in ("gather", "scatter")
        sdt, rdt = _dt(args, 3 if rooted else 2, where), _dt(args, 4 if rooted else 3, where)
        size = _bytes(_count(args[0], "the send count", where), sdt, where)
        size2 = _bytes(_count(args[1], "the receive count", where), rdt, where)
        if rooted:
            peer = _int(args[2], "the root", where)
    elif name in ("alltoallv", "gatherv", "allgatherv", "reducescatter"):
        cols.vraw.append((len(cols.kind), name, args, where))  # decoded when P is known
    elif name == "comm_size":  # kept for communicators.check_world
        size = float(_int(args[0], "the size", where))
    for value, what in ((peer, "peer"),):
        if value < -1 and value not in ANY_SOURCE:
            raise TraceError(f"{where}: {what} {value} is out of range (ranks count from 0)")
    if peer in ANY_SOURCE and name not in ("recv", "irecv", "wait"):
        raise TraceError(f"{where}: {name} cannot take any source ({peer})")
    cols.rank.append(rank)
    cols.kind.append(KIND[name])
    cols.peer.append(ANY_SOURCE[0] if peer in ANY_SOURCE else peer)
    cols.tag.append(tag)
    cols.size.append(size)
    cols.size2.append(size2)
    cols.flops.append(flops)
    cols.file.append(fi)
    cols.line.append(n)


def _vector(name: str, args: list[str], where: str, p: int
            ) -> tuple[int, float, float, float, list[float]]:  # fmt: skip
    """A v-collective's arguments, for a program of ``p`` ranks (SMPI 3.32 writes a
    datatype for each buffer; without them the counts are bytes, MPI_BYTE):
    its peer (root), sizes, flops and counts in bytes."""
    n = len(args)
    shapes = {"alltoallv": (2 * p + 2, 2), "gatherv": (p + 2, 2), "allgatherv": (p + 1, 2),
              "reducescatter": (p + 1, 1)}  # fmt: skip
    need, dts = shapes[name]
    if n not in (need, need + dts):
        forms = {"alltoallv": "N C1..CP M D1..DP [DT DT]", "gatherv": "N D1..DP ROOT [DT DT]",
                 "allgatherv": "N D1..DP [DT DT]", "reducescatter": "D1..DP F [DT]"}  # fmt: skip
        raise TraceError(f"{where}: {name} takes {forms[name]}: {need} or {need + dts} "
                         f"arguments for {counted(p, 'rank', grouped=False)}, got {n}")  # fmt: skip
    typed = n == need + dts
    sdt = _dt(args, need, where) if typed else DEFAULT_SIZE
    rdt = _dt(args, need + 1, where) if typed and dts == 2 else sdt

    def sizes(words: list[str], dt: int, what: str) -> list[float]:
        return [_bytes(_count(w, what, where), dt, where) for w in words]

    if name == "alltoallv":
        size = _bytes(_count(args[0], "the send size", where), sdt, where)
        send = sizes(args[1 : p + 1], sdt, "a send count")
        size2 = _bytes(_count(args[p + 1], "the receive size", where), rdt, where)
        recv = sizes(args[p + 2 : 2 * p + 2], rdt, "a receive count")
        return -1, size, size2, 0.0, send + recv
    if name == "reducescatter":
        counts = sizes(args[:p], sdt, "a count")
        return -1, sum(counts), 0.0, _count(args[p], "the flops", where), counts
    size = _bytes(_count(args[0], "the send count", where), sdt, where)
    counts = sizes(args[1 : p + 1], rdt, "a receive count")
    peer = _int(args[p + 1], "the root", where) if name == "gatherv" else -1
    return peer, size, sum(counts), 0.0, counts
