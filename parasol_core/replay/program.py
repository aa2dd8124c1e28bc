"""A trace compiled into a program of messages for the flow engine (docs/replay.md,
"Semantics"): what each MPI call waits for, as ``after`` dependencies and delays.

Every action of a rank is a step of its *point*, the node whose end is the rank's
clock (-1: time 0). Nodes are messages of the flow engine
(:class:`~parasol_core.simulate.messages.MessageArrays`):

* a *transfer* from one rank's processor to another's, with its bytes;
* a *join*, from a rank's processor to itself with no bytes (it takes no time): it ends
  when the last of the nodes it waits for ends, plus its delay: a ``compute``'s flops
  times the rank's time a flop, or a collective's cost under ``collectives="model"``.

Point to point, as SMPI 3.32 does it with its overheads at 0 (``smpi/os``, ``or``,
``ois``): a send of fewer than ``eager`` bytes (SMPI's ``smpi/async-small-thresh`` and
``send-is-detached-thresh``, 65,536 by default) starts moving when it is posted and
the sender goes on at once (eager); a larger one starts when both its send and its
receive are posted and a blocking send returns when it has arrived (rendezvous). A
receive returns at the later of its post and its message's arrival. Messages match by
source, destination and tag in the order they were posted; a receive from any source
(``-555``, ``-333``) takes, after every rank's other receives are matched, the first
unmatched send to its rank (lowest rank first, then trace order): a static choice,
not the one a run would make by arrival times.

Collectives are decomposed into sends and receives by SMPI's algorithms
(:data:`ALGORITHMS`) under ``collectives="network"``; under ``"model"`` every rank
leaves a collective at the last rank's arrival plus the model's ``mpi`` cost.
"""

from __future__ import annotations

import ctypes
import gc
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core import native
from parasol_core.base.budget import check_deadline
from parasol_core.base.words import counted
from parasol_core.replay.tifile import ANY_SOURCE, ANY_TAG, KIND, KINDS, Trace, TraceError

# per collective, its algorithms (the first is the default: the ones the agreement
# tests set in SMPI), by SMPI's names
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "bcast": ("binomial_tree", "flat_tree"),
    "reduce": ("binomial", "flat_tree"),
    "allreduce": ("rdb", "redbcast"),
    "alltoall": ("pair", "ring"),
    "allgather": ("ring",),
    "barrier": ("ompi_basic_linear",),
    "gather": ("ompi_basic_linear",),
    "scatter": ("ompi_basic_linear",),
    "alltoallv": ("ring",),
    "gatherv": ("ompi_basic_linear",),
    "allgatherv": ("ring",),
    "reducescatter": ("mpich_pair", "reduce_scatterv"),
}
DEFAULT_ALGORITHMS = {name: algos[0] for name, algos in ALGORITHMS.items()}
EAGER_BYTES = 65536.0
"""SMPI's default ``smpi/async-small-thresh`` and ``send-is-detached-thresh``: a send of
fewer bytes is eager."""

# the model's mpi entries a collective costs under collectives="model"
MODEL_COSTS: dict[str, tuple[str, ...]] = {
    "bcast": ("bcast",), "reduce": ("reduce",), "allreduce": ("allreduce",),
    "alltoall": ("alltoall",), "alltoallv": ("alltoall",), "gather": ("gather",),
    "gatherv": ("gather",), "allgather": ("allgather",), "allgatherv": ("allgather",),
    "scatter": ("scatter",), "reducescatter": ("reduce", "scatter"), "barrier": ("barrier",),
}  # fmt: skip

_COMPUTE, _SEND, _ISEND, _RECV, _IRECV = (KIND[k] for k in ("compute", "send", "isend", "recv",
                                                            "irecv"))  # fmt: skip
_WAIT, _WAITALL, _SENDRECV = KIND["wait"], KIND["waitall"], KIND["sendRecv"]


class DeadlockError(ValueError):
    """A program that cannot finish under the semantics chosen: the message names every
    stuck rank and the operation each waits in (``stuck``: rank -> action index)."""

    def __init__(self, message: str, stuck: dict[int, int]) -> None:
        super().__init__(message)
        self.stuck = stuck


@dataclass(frozen=True)
class Semantics:
    """What decides the program's shape (not its timings): the eager threshold in
    bytes, each collective's algorithm, and ``collectives`` (``network``/``model``)."""

    eager: float = EAGER_BYTES
    algorithms: tuple[tuple[str, str], ...] = tuple(sorted(DEFAULT_ALGORITHMS.items()))
    collectives: str = "network"

    @classmethod
    def make(cls, eager: float = EAGER_BYTES, algorithms: Mapping[str, str] | None = None,
             collectives: str = "network") -> Semantics:  # fmt: skip
        if collectives not in ("network", "model"):
            raise ValueError(f"collectives must be 'network' or 'model', got {collectives!r}")
        if not eager >= 0:
            raise ValueError(f"the eager threshold must be zero or more bytes, got {eager!r}")
        chosen = dict(DEFAULT_ALGORITHMS)
        for name, algo in (algorithms or {}).items():
            if name not in ALGORITHMS:
                raise ValueError(f"no collective '{name}' (collectives: {', '.join(ALGORITHMS)})")
            if algo not in ALGORITHMS[name]:
                raise ValueError(f"{name} has no algorithm '{algo}' (its algorithms: "
                                 f"{', '.join(ALGORITHMS[name])})")  # fmt: skip
            chosen[name] = algo
        return cls(float(eager), tuple(sorted(chosen.items())), collectives)


@dataclass
class Program:
    """Nodes (``src``/``dst`` ranks, ``nbytes``, ``flops`` of delay at the source rank's
    time a flop, ``cost``: an index of ``cost_keys`` (name, bytes, procs) or -1, and
    ``after_ptr``/``after_idx``) and, per action of the trace, ``op_start``/``op_end``
    (the nodes whose ends are its start and end; -1: time 0), ``op_msg`` (the first
    transfer it waits for, -1: none) and ``op_flops`` (flops of its own delay)."""

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    flops: np.ndarray
    cost: np.ndarray
    after_ptr: np.ndarray
    after_idx: np.ndarray
    cost_keys: list[tuple[str, float, int]]
    op_start: np.ndarray
    op_end: np.ndarray
    op_msg: np.ndarray
    op_flops: np.ndarray
    transfer: np.ndarray  # per node: a transfer between ranks (not a join)
    # set by a replay that lets the node columns go (run._run_program(consume=True)):
    # the count of transfers, which then stays
    transfers: int = -1

    @property
    def nodes(self) -> int:
        return int(self.src.shape[0])

    @property
    def messages(self) -> int:
        """The transfers between ranks (what the network carries)."""
        return self.transfers if self.transfer is None else int(self.transfer.sum())


class _Builder:
    def __init__(self, trace: Trace, sem: Semantics) -> None:
        self.trace, self.sem = trace, sem
        self.algo = dict(sem.algorithms)
        self.src: list[int] = []
        self.dst: list[int] = []
        self.nbytes: list[float] = []
        self.flops: list[float] = []
        self.cost: list[int] = []
        self.after: list[list[int]] = []
        self.is_transfer: list[bool] = []
        self.chan: dict[tuple[int, int, Any], deque] = {}
        self.wild: list[tuple[int, Any, int, int, int]] = []  # rank, tag, msg, post, action
        self.cost_keys: list[tuple[str, float, int]] = []
        self.cost_index: dict[tuple[str, float, int], int] = {}
        self.model_nodes: dict[int, tuple[int, int]] = {}  # number -> its joins (model)
        self.model_seen: dict[int, tuple[int, int]] = {}  # number -> kind, first action
        n = len(trace)
        # per action, as lists while building (a numpy element write costs more)
        self.op_start = [-1] * n
        self.op_end = [-1] * n
        self.op_msg = [-1] * n
        self.op_flops = [0.0] * n
        self.first_msg = -1

    # ---------------------------------------------------------------- nodes

    def node(self, a: int, b: int, nbytes: float, after: list[int], flops: float = 0.0,
             cost: int = -1, transfer: bool = False) -> int:  # fmt: skip
        self.src.append(a)
        self.dst.append(b)
        self.nbytes.append(nbytes)
        self.flops.append(flops)
        self.cost.append(cost)
        self.after.append(after)
        self.is_transfer.append(transfer)
        return len(self.src) - 1

    def join(self, rank: int, deps: list[int]) -> int:
        if len(deps) == 2:  # the usual case: a point and one more
            a, b = deps
            if a < 0 or a == b:
                return b
            if b < 0:
                return a
            return self.node(rank, rank, 0.0, [a, b])
        deps = list(dict.fromkeys(d for d in deps if d >= 0))
        if not deps:
            return -1
        if len(deps) == 1:
            return deps[0]
        return self.node(rank, rank, 0.0, deps)

    def compute(self, rank: int, cur: int, flops: float) -> int:
        if flops <= 0:
            return cur
        return self.node(rank, rank, 0.0, [cur] if cur >= 0 else [], flops=flops)

    # ---------------------------------------------------------------- point to point

    def send(self, rank: int, dst: int, tag: Any, nbytes: float, cur: int, action: int
             ) -> tuple[int, bool]:  # fmt: skip
        """Post a send; its transfer node and whether it is eager."""
        eager = nbytes < self.sem.eager
        key = (rank, dst, tag)
        q = self.chan.get(key)
        if q and q[0][0] == "r":
            _, msg, post, _ = q.popleft()
            self.src[msg], self.dst[msg], self.nbytes[msg] = rank, dst, nbytes
            self.after[msg] = [d for d in ((cur,) if eager else (cur, post)) if d >= 0]
        else:
            msg = self.node(rank, dst, nbytes, [cur] if cur >= 0 else [], transfer=True)
            self.chan.setdefault(key, deque()).append(("s", msg, eager, action))
        if self.first_msg < 0:
            self.first_msg = msg
        return msg, eager

    def recv(self, rank: int, src: int, tag: Any, cur: int, action: int, blocking: bool = True
             ) -> tuple[int, int]:  # fmt: skip
        """Post a receive; its completion node and its transfer node. A nonblocking one's
        completion is its transfer's end: whatever waits for it waits for the rank's
        point too, which is past the post."""
        if src == ANY_SOURCE[0] or tag == ANY_TAG:
            msg = self.node(-1, rank, 0.0, [], transfer=True)
            self.wild.append((rank, (src, tag), msg, cur, action))
            done = self.join(rank, [msg, cur]) if blocking else msg
        else:
            key = (src, rank, tag)
            q = self.chan.get(key)
            if q and q[0][0] == "s":
                _, msg, eager, _ = q.popleft()
                if eager:
                    done = self.join(rank, [msg, cur]) if blocking else msg
                else:
                    if cur >= 0:
                        self.after[msg].append(cur)
                    done = msg
            else:
                msg = self.node(src, rank, 0.0, [], transfer=True)
                self.chan.setdefault(key, deque()).append(("r", msg, cur, action))
                done = self.join(rank, [msg, cur]) if blocking else msg
        if self.first_msg < 0:
            self.first_msg = msg
        return done, msg

    def match_wildcards(self) -> None:
        """Receives from any source (or of any tag) take the first unmatched send to
        their rank with a fitting source and tag, lowest rank first."""
        if not self.wild:
            return
        pending: dict[int, list[tuple[int, int, Any, deque]]] = {}
        for key, q in self.chan.items():
            if q and q[0][0] == "s" and not isinstance(key[2], tuple):
                pending.setdefault(key[1], []).append((key[0], q[0][1], key[2], q))
        for rank, (src, tag), msg, post, action in self.wild:
            found = None
            for entry in sorted(pending.get(rank, []), key=lambda e: (e[0], e[1])):
                s, _, t, q = entry
                if q and q[0][0] == "s" and src in (ANY_SOURCE[0], s) and tag in (ANY_TAG, t):
                    found = q
                    break
            if found is None:
                raise TraceError(f"{self.trace.where(action)}: rank {rank}'s receive from any "
                                 "source is matched by no send")  # fmt: skip
            _, smsg, eager, _ = found.popleft()
            # the wildcard's node becomes the send's transfer: the send's node is left
            # a join of the sender's post (it takes no time), so both ends stay as built
            self.src[msg], self.dst[msg] = self.src[smsg], rank
            self.nbytes[msg] = self.nbytes[smsg]
            sender_post = self.after[smsg]
            self.after[msg] = list(sender_post) if eager else list(sender_post) + (
                [post] if post >= 0 else [])  # fmt: skip
            self.is_transfer[smsg] = False
            self.dst[smsg] = self.src[smsg]  # a node to itself: no time
            self.nbytes[smsg] = 0.0
            if not eager:
                self.after[smsg] = [msg]  # a blocking send returns when it has arrived

    # ---------------------------------------------------------------- collectives

    def coll(self, rank: int, cur: int, kind: str, i: int, number: int) -> int:
        ops = _Ops(self, rank, ("c", number), cur, i)
        _collective(ops, self.trace, self.algo, rank, kind, i, number)
        self.op_msg[i] = ops.first
        return ops.cur

    def model_coll(self, rank: int, cur: int, kind: str, i: int, number: int) -> int:
        """Every rank leaves at the last one's arrival plus the model's cost."""
        tr = self.trace
        if number not in self.model_nodes:
            size = float(tr.size[i])  # ar.bytes: what each rank sends (reducescatter: all)
            costs = []
            for name in MODEL_COSTS[kind]:
                key = (name, size, tr.ranks)
                if key not in self.cost_index:
                    self.cost_index[key] = len(self.cost_keys)
                    self.cost_keys.append(key)
                costs.append(self.cost_index[key])
            # several costs (reducescatter): a chain of joins after the first
            head = tail = self.node(rank, rank, 0.0, [], cost=costs[0])
            for c in costs[1:]:
                tail = self.node(rank, rank, 0.0, [tail], cost=c)
            self.model_nodes[number] = (head, tail)
            self.model_seen[number] = (int(tr.kind[i]), i)
        else:
            kind0, first = self.model_seen[number]
            if kind0 != int(tr.kind[i]):
                raise TraceError(f"{tr.where(i)}: rank {rank} calls {kind} as its collective "
                                 f"number {number + 1}, where {tr.where(first)} calls "
                                 f"{KINDS[kind0]}")  # fmt: skip
        head, tail = self.model_nodes[number]
        if cur >= 0:
            self.after[head].append(cur)
        return tail

    # ---------------------------------------------------------------- the ranks

    def build(self) -> None:
        tr = self.trace
        kinds = tr.kind.tolist()
        peers, tags, sizes = tr.peer.tolist(), tr.tag.tolist(), tr.size.tolist()
        flops = tr.flops.tolist()
        first = tr.first.tolist()
        model = self.sem.collectives == "model"
        op_start, op_end, op_msg, op_flops = self.op_start, self.op_end, self.op_msg, self.op_flops
        send, recv, join, compute = self.send, self.recv, self.join, self.compute
        for rank in range(tr.ranks):
            cur = -1
            requests: list[tuple[int, int, Any, int, int]] = []  # src, dst, tag, done, msg
            number = 0
            for i in range(first[rank], first[rank + 1]):
                if not i & 4095:
                    check_deadline()  # a cancel or a time budget, every 4,096 actions
                k = kinds[i]
                op_start[i] = cur
                if k == _COMPUTE:
                    cur = compute(rank, cur, flops[i])
                    op_flops[i] = flops[i]
                elif k in (_SEND, _ISEND):
                    msg, eager = send(rank, peers[i], tags[i], sizes[i], cur, i)
                    if k == _ISEND:  # an eager one is done when posted (SMPI: detached)
                        requests.append((rank, peers[i], tags[i], -1 if eager else msg, msg))
                    elif not eager:
                        cur = msg
                        op_msg[i] = msg
                elif k in (_RECV, _IRECV):
                    done, msg = recv(rank, peers[i], tags[i], cur, i, k == _RECV)
                    if k == _RECV:
                        cur = done
                        op_msg[i] = msg
                    else:
                        requests.append((peers[i], rank, tags[i], done, msg))
                elif k == _WAIT:
                    if not requests:
                        raise TraceError(f"{tr.where(i)}: rank {rank} waits, and has no "
                                         "request left to wait for")  # fmt: skip
                    at = _find(requests, peers[i], int(tr.size2[i]), tags[i])
                    _, _, _, done, msg = requests.pop(0 if at is None else at)
                    cur = join(rank, [cur, done])
                    if done >= 0:
                        op_msg[i] = msg
                elif k == _WAITALL:
                    waited = [r for r in requests if r[3] >= 0]
                    if waited:
                        cur = join(rank, [cur] + [r[3] for r in waited])
                        op_msg[i] = waited[0][4]
                    requests.clear()
                elif k == _SENDRECV:
                    ops = _Ops(self, rank, 0, cur, i)
                    ops.sendrecv(peers[i], sizes[i], tags[i], float(tr.size2[i]))
                    cur = ops.cur
                    op_msg[i] = ops.first
                elif KINDS[k] in ALGORITHMS:
                    name = KINDS[k]
                    if model:
                        cur = self.model_coll(rank, cur, name, i, number)
                    else:
                        cur = self.coll(rank, cur, name, i, number)
                    number += 1
                    if flops[i] > 0:  # the reductions' own computation
                        cur = compute(rank, cur, flops[i])
                        op_flops[i] = flops[i]
                op_end[i] = cur
        self.match_wildcards()
        self._unmatched()

    def _unmatched(self) -> None:
        tr = self.trace
        for (src, dst, tag), q in self.chan.items():
            if not q:
                continue
            side, _, _, action = q[0]
            if isinstance(tag, tuple):
                raise TraceError(f"{tr.where(action)}: rank {tr.rank[action]}'s {tr.text(action)} "
                                 f"finds no partner: the ranks do not call the same "
                                 f"collectives in the same order (rank {src if side == 'r' else dst} "
                                 "does not take part)")  # fmt: skip
            if side == "s":
                raise TraceError(f"{tr.where(action)}: rank {src}'s send to {dst} (tag {tag}) "
                                 f"is matched by no receive ({counted(len(q), 'such send')} unmatched)")  # fmt: skip
            raise TraceError(f"{tr.where(action)}: rank {dst}'s receive from {src} (tag {tag}) "
                             f"is matched by no send ({counted(len(q), 'such receive')} unmatched)")  # fmt: skip

    def program(self) -> Program:
        n = len(self.src)
        lengths = np.fromiter((len(a) for a in self.after), dtype=np.int64, count=n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        idx = np.fromiter((d for a in self.after for d in a), dtype=np.int64, count=int(ptr[-1]))
        return Program(
            src=np.asarray(self.src, dtype=np.int64),
            dst=np.asarray(self.dst, dtype=np.int64),
            nbytes=np.asarray(self.nbytes, dtype=np.float64),
            flops=np.asarray(self.flops, dtype=np.float64),
            cost=np.asarray(self.cost, dtype=np.int64),
            after_ptr=ptr,
            after_idx=idx,
            cost_keys=self.cost_keys,
            op_start=np.asarray(self.op_start, dtype=np.int64),
            op_end=np.asarray(self.op_end, dtype=np.int64),
            op_msg=np.asarray(self.op_msg, dtype=np.int64),
            op_flops=np.asarray(self.op_flops, dtype=np.float64),
            transfer=np.asarray(self.is_transfer, dtype=bool),
        )


def _collective(ops: Any, tr: Trace, algos: dict[str, str], rank: int, kind: str, i: int,
                number: int) -> None:  # fmt: skip
    """Rank ``rank``'s part of collective action ``i`` (its ``number``-th), as SMPI's
    algorithms write it, on ``ops`` (:class:`_Ops` builds it, :class:`_Recorder` records
    it for the C kernel)."""
    p = tr.ranks
    size, size2 = float(tr.size[i]), float(tr.size2[i])
    root = int(tr.peer[i])
    lo, hi = tr.counts_ptr[0, i], tr.counts_ptr[1, i]
    counts = tr.counts[lo:hi]
    if not counts.shape[0]:  # no per-rank counts (OTF2): each the same
        counts = np.full(2 * p if kind == "alltoallv" else p, size)
    algo = algos[kind]
    if kind == "bcast":
        _bcast(ops, rank, p, root, size, algo)
    elif kind == "reduce":
        _reduce(ops, rank, p, root, size, algo)
    elif kind == "allreduce":
        if algo == "rdb":
            _allreduce_rdb(ops, rank, p, size)
        else:
            _reduce(ops, rank, p, 0, size, "binomial")
            ops.tag = ("c2", number)
            _bcast(ops, rank, p, 0, size, "binomial_tree")
    elif kind == "alltoall":
        if algo == "pair" and p & (p - 1) == 0:
            for k in range(p):
                peer = rank ^ k
                ops.sendrecv(peer, size, peer, size2)
        else:  # ring (SMPI's pair refuses a rank count that is no power of 2)
            for k in range(p):
                ops.sendrecv((rank + k) % p, size, (rank - k) % p, size2)
    elif kind == "alltoallv":  # SMPI's alltoallv-ring.cpp: exclusive or on 2^k ranks
        send, recv = counts[:p], counts[p:]
        for k in range(p):
            dst, src = (rank ^ k, rank ^ k) if p & (p - 1) == 0 else ((rank + k) % p,
                                                                      (rank - k) % p)  # fmt: skip
            ops.sendrecv(dst, float(send[dst]), src, float(recv[src]))
    elif kind == "allgather":
        for k in range(1, p):
            ops.sendrecv((rank + k) % p, size, (rank - k) % p, size2)
    elif kind == "allgatherv":
        for k in range(1, p):
            src = (rank - k) % p
            ops.sendrecv((rank + k) % p, size, src, float(counts[src]))
    elif kind == "barrier":
        if rank > 0:
            ops.send(0, 0.0)
            ops.recv(0)
        else:
            ops.waitall([ops.irecv(k) for k in range(1, p)])
            ops.waitall([ops.isend(k, 0.0) for k in range(1, p)])
    elif kind in ("gather", "gatherv"):
        if rank == root:
            for k in range(p):
                if k != rank:
                    ops.recv(k)
        else:
            ops.send(root, size)
    elif kind == "scatter":
        if rank == root:
            for k in range(p):
                if k != rank:
                    ops.send(k, size)
        else:
            ops.recv(root)
    elif kind == "reducescatter" and algo == "mpich_pair":
        for k in range(1, p):  # SMPI's reduce_scatter-mpich.cpp, pairwise
            dst, src = (rank + k) % p, (rank - k) % p
            ops.sendrecv(dst, float(counts[dst]), src, float(counts[rank]))
    elif kind == "reducescatter":
        total = float(counts.sum())
        _reduce(ops, rank, p, 0, total, "binomial")
        ops.tag = ("c2", number)
        if rank == 0:
            for k in range(1, p):
                ops.send(k, float(counts[k]))
        else:
            ops.recv(0)


def _find(requests: list, src: int, dst: int, tag: int) -> int | None:
    for at, (s, d, t, _, _) in enumerate(requests):
        if d == dst and t == tag and (s == src or s == ANY_SOURCE[0] or src == ANY_SOURCE[0]):
            return at
    return None


class _Ops:
    """One rank's part of a collective, as SMPI's algorithms write it (blocking sends and
    receives, sendrecv as isend + irecv + waitall, a sendrecv with itself a copy)."""

    def __init__(self, b: _Builder, rank: int, tag: Any, cur: int, action: int) -> None:
        self.b, self.rank, self.tag, self.cur, self.action = b, rank, tag, cur, action
        self.first = -1

    def _seen(self, msg: int) -> None:
        if self.first < 0:
            self.first = msg

    def send(self, dst: int, nbytes: float) -> None:
        msg, eager = self.b.send(self.rank, dst, self.tag, nbytes, self.cur, self.action)
        self._seen(msg)
        if not eager:
            self.cur = msg

    def recv(self, src: int) -> None:
        done, msg = self.b.recv(self.rank, src, self.tag, self.cur, self.action)
        self._seen(msg)
        self.cur = done

    def isend(self, dst: int, nbytes: float) -> int:
        msg, eager = self.b.send(self.rank, dst, self.tag, nbytes, self.cur, self.action)
        self._seen(msg)
        return -1 if eager else msg

    def irecv(self, src: int) -> int:
        done, msg = self.b.recv(self.rank, src, self.tag, self.cur, self.action, False)
        self._seen(msg)
        return done

    def waitall(self, done: list[int]) -> None:
        self.cur = self.b.join(self.rank, [self.cur, *done])

    def sendrecv(self, dst: int, nbytes: float, src: int, _rbytes: float) -> None:
        if dst == self.rank and src == self.rank:
            return  # SMPI copies locally
        a = self.isend(dst, nbytes)
        b = self.irecv(src)
        self.waitall([a, b])


def _bcast(ops: _Ops, rank: int, p: int, root: int, size: float, algo: str) -> None:
    rel = (rank - root) % p
    if algo == "flat_tree":
        if rank == root:
            for k in range(p):
                if k != root:
                    ops.send(k, size)
        else:
            ops.recv(root)
        return
    mask = 1
    while mask < p:  # SMPI's bcast-binomial-tree.cpp
        if rel & mask:
            ops.recv((rank - mask) % p)
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:
        if rel + mask < p:
            ops.send((rank + mask) % p, size)
        mask >>= 1


def _reduce(ops: _Ops, rank: int, p: int, root: int, size: float, algo: str) -> None:
    if algo == "flat_tree":
        if rank == root:
            for k in range(p):
                if k != root:
                    ops.recv(k)
        else:
            ops.send(root, size)
        return
    rel = (rank - root) % p  # SMPI's reduce-binomial.cpp, commutative (MPI_OP_NULL)
    mask = 1
    while mask < p:
        if mask & rel == 0:
            source = rel | mask
            if source < p:
                ops.recv((source + root) % p)
        else:
            ops.send(((rel & ~mask) + root) % p, size)
            break
        mask <<= 1


def _allreduce_rdb(ops: _Ops, rank: int, p: int, size: float) -> None:
    pof2 = 1  # SMPI's allreduce-rdb.cpp
    while pof2 <= p:
        pof2 <<= 1
    pof2 >>= 1
    rem = p - pof2
    if rank < 2 * rem:
        if rank % 2 == 0:
            ops.send(rank + 1, size)
            newrank = -1
        else:
            ops.recv(rank - 1)
            newrank = rank // 2
    else:
        newrank = rank - rem
    if newrank != -1:
        mask = 1
        while mask < pof2:
            newdst = newrank ^ mask
            dst = newdst * 2 + 1 if newdst < rem else newdst + rem
            ops.sendrecv(dst, size, dst, size)
            mask <<= 1
    if rank < 2 * rem:
        if rank % 2:
            ops.send(rank - 1, size)
        else:
            ops.recv(rank + 1)


class _Recorder:
    """A rank's steps of a collective or a sendRecv, recorded for the C kernel in the
    order :class:`_Ops` would take them: op (P_*), peer, bytes, phase; a waitall waits
    for the requests from ``peer`` on (they are always the last ones posted)."""

    def __init__(self, out: list, rank: int) -> None:
        self.out, self.rank = out, rank
        self.phase = 0
        self.posted = 0  # requests posted and not yet waited for

    @property
    def tag(self) -> Any:
        return self.phase

    @tag.setter
    def tag(self, value: Any) -> None:  # ("c2", number): the second phase
        self.phase = 1 if value[0] == "c2" else 0

    def send(self, dst: int, nbytes: float) -> None:
        self.out.append((_P_SEND, dst, nbytes, self.phase))

    def recv(self, src: int) -> None:
        self.out.append((_P_RECV, src, 0.0, self.phase))

    def isend(self, dst: int, nbytes: float) -> int:
        self.out.append((_P_ISEND, dst, nbytes, self.phase))
        self.posted += 1
        return self.posted - 1

    def irecv(self, src: int) -> int:
        self.out.append((_P_IRECV, src, 0.0, self.phase))
        self.posted += 1
        return self.posted - 1

    def waitall(self, handles: list[int]) -> None:
        first = min(handles) if handles else self.posted
        assert list(handles) == list(range(first, self.posted)), "not the last requests"
        self.out.append((_P_WAITALL, first, 0.0, self.phase))
        self.posted = first

    sendrecv = _Ops.sendrecv


_P_SEND, _P_RECV, _P_ISEND, _P_IRECV, _P_WAITALL = range(5)
_KINDS_C = np.asarray([KIND[k] for k in ("compute", "send", "isend", "recv", "irecv", "wait",
                                         "waitall", "sendRecv", "bcast", "barrier")],
                      dtype=np.int64)  # fmt: skip
_COLLECTIVE_KINDS = np.arange(KIND["bcast"], KIND["barrier"] + 1)
_P, _N = ctypes.c_void_p, ctypes.c_int64
_SIGNATURE = (_N, _P, _N, *[_P] * 12, ctypes.c_double, _N, _N, *[_P] * 17, _N)


def _kernel() -> Any:
    """The C compiler of programs (``native/replay.c``), None when not built or
    ``PARASOL_PURE_PYTHON=1``."""
    return native.function("_replay", "parasol_replay_compile", _SIGNATURE)


def native_usable(trace: Trace, sem: Semantics) -> bool:
    """Whether the C kernel compiles this trace: collectives on the network, and no
    receive from any source or of any tag (left to the Python builder)."""
    if sem.collectives != "network":
        return False
    recv = (trace.kind == KIND["recv"]) | (trace.kind == KIND["irecv"])
    return not bool((recv & ((trace.peer == ANY_SOURCE[0]) | (trace.tag == ANY_TAG))).any())


def _steps(trace: Trace, sem: Semantics) -> tuple[np.ndarray, ...]:
    """Every collective's and sendRecv's steps, recorded (:class:`_Recorder`). A rank's
    steps depend only on its action's fields (not on which of its collectives it is: the
    second phase's tag is a phase number), so each distinct one is recorded once: a
    Jacobi loop's allreduce is recorded once per rank, not once per iteration."""
    algos = dict(sem.algorithms)
    n = len(trace)
    ptr = np.zeros(n + 1, dtype=np.int64)
    kind = trace.kind
    special = np.flatnonzero(np.isin(kind, _COLLECTIVE_KINDS) | (kind == KIND["sendRecv"]))
    counted = np.zeros(n, dtype=np.int64)
    numbers = np.zeros(trace.ranks, dtype=np.int64)
    seen: dict[tuple, np.ndarray] = {}
    pieces: list[np.ndarray] = []
    sendrecv = KIND["sendRecv"]
    ranks, peers, tags = trace.rank, trace.peer, trace.tag
    sizes, sizes2, lo, hi = trace.size, trace.size2, trace.counts_ptr[0], trace.counts_ptr[1]
    for i in special.tolist():
        r, k = int(ranks[i]), int(kind[i])
        key = (k, r, int(peers[i]), int(tags[i]) if k == sendrecv else 0, float(sizes[i]),
               float(sizes2[i]), trace.counts[lo[i]:hi[i]].tobytes())  # fmt: skip
        got = seen.get(key)
        if got is None:
            out: list = []
            rec = _Recorder(out, r)
            if k == sendrecv:
                rec.sendrecv(int(peers[i]), float(sizes[i]), int(tags[i]), float(sizes2[i]))
            else:
                _collective(rec, trace, algos, r, KINDS[k], i, int(numbers[r]))
            got = np.zeros((len(out), 4))
            if out:
                got[:] = out
            seen[key] = got
        if k != sendrecv:
            numbers[r] += 1
        counted[i] = got.shape[0]
        pieces.append(got)
    np.cumsum(counted, out=ptr[1:])
    steps = np.concatenate(pieces) if pieces else np.zeros((0, 4))
    op, peer, nbytes, phase = steps.T
    return (ptr, op.astype(np.int64), peer.astype(np.int64), np.ascontiguousarray(nbytes),
            phase.astype(np.int64))  # fmt: skip


def compile_native(lib: Any, trace: Trace, sem: Semantics, release: bool = False
                   ) -> Program | None:  # fmt: skip
    """The program from the C kernel (``native/replay.c``); None when the trace is bad
    (the Python builder then says why). ``release``: the trace's columns are let go
    (:meth:`Trace.release`) once the kernel's inputs are made, before its outputs are,
    and the per-action columns are a one-shot replay's (``run._narrow``'s: no
    ``op_start``, ``op_end`` and ``op_msg`` int32, ``op_flops`` whether the action
    computes), made so by the kernel rather than narrowed after."""
    i64, f64 = np.int64, np.float64
    n = len(trace)
    ptr, op, peer, nbytes, phase = _steps(trace, sem)
    steps, ranks = int(op.shape[0]), trace.ranks
    cols = [np.ascontiguousarray(a, dtype=t) for a, t in (
        (trace.first, i64), (trace.kind, np.int8), (trace.peer, i64), (trace.tag, i64),
        (trace.size, f64), (trace.size2, f64), (trace.flops, f64), (ptr, i64), (op, i64),
        (peer, i64), (nbytes, f64), (phase, i64), (_KINDS_C, i64))]  # fmt: skip
    del ptr, op, peer, nbytes, phase
    max_nodes = 2 * n + 2 * steps + 16
    max_edges = 2 * max_nodes + n + 2 * steps + 16
    if max_edges >= 2**31 - 1:  # the kernel's scratch is 32-bit: the Python builder's
        return None
    if release:  # what the kernel reads stays (cols), the rest goes: ranks, lines, files
        trace.release()
    src, dst = np.zeros(max_nodes, i64), np.zeros(max_nodes, i64)
    nb, fl = np.zeros(max_nodes), np.zeros(max_nodes)
    transfer = np.zeros(max_nodes, np.uint8)
    i32 = np.int32  # (the kernel's scratch: 32-bit node numbers and offsets)
    dep0, dep1 = np.zeros(max_nodes, i32), np.zeros(max_nodes, i32)
    xstart, xcount, xdeps = (
        np.zeros(max_nodes, i32),
        np.zeros(max_nodes, i32),
        np.zeros(max_edges, i64),
    )
    after_ptr, after_idx = np.zeros(max_nodes + 1, i64), np.zeros(max_edges, i64)
    narrow = release  # (node numbers fit 32 bits: max_nodes < max_edges < 2^31)
    if narrow:
        op_start, op_flops = None, np.zeros(n, np.uint8)
        op_end, op_msg = np.zeros(n, np.int32), np.zeros(n, np.int32)
    else:
        op_start, op_end, op_msg = np.zeros(n, i64), np.zeros(n, i64), np.zeros(n, i64)
        op_flops = np.zeros(n)
    where = np.zeros(1, i64)

    def p(a: np.ndarray | None) -> int | None:
        return None if a is None else a.ctypes.data

    got = lib(ranks, p(cols[0]), n, *map(p, cols[1:]), sem.eager, max_nodes, max_edges,
              *map(p, (src, dst, nb, fl, transfer, dep0, dep1, xstart, xcount, xdeps,
                       after_ptr, after_idx, op_start, op_end, op_msg, op_flops, where)),
              int(narrow))  # fmt: skip
    if got == -2:
        raise MemoryError("the replay's compiler could not allocate its state")
    if got < 0:
        return None
    m = int(got)
    del dep0, dep1, xstart, xcount, xdeps, cols  # the kernel's scratch
    # views, not copies: the arrays were allocated zeroed (calloc), so the room past the
    # program's end was never touched and takes no memory; a copy would for a moment
    return Program(src=src[:m], dst=dst[:m], nbytes=nb[:m], flops=fl[:m],
                   cost=np.full(m, -1, dtype=i64), after_ptr=after_ptr[: m + 1],
                   after_idx=after_idx[: int(after_ptr[m])], cost_keys=[],
                   op_start=op_start, op_end=op_end, op_msg=op_msg,  # type: ignore[arg-type]
                   op_flops=op_flops.view(bool) if narrow else op_flops,
                   transfer=transfer[:m].view(bool))  # fmt: skip


def compile_python(trace: Trace, sem: Semantics) -> Program:
    """The program from the Python builder (the kernel's specification)."""
    collecting = gc.isenabled()
    gc.disable()  # millions of small lists, none of them cyclic: no collector passes
    try:
        b = _Builder(trace, sem)
        b.build()
        return b.program()
    finally:
        if collecting:
            gc.enable()


def compile_program(trace: Trace, sem: Semantics, keep: bool = True,
                    release: bool = False) -> Program | None:  # fmt: skip
    """The trace's program under ``sem``, compiled once and kept on the trace
    (``keep=False``: not kept, for a one-shot replay that lets it go part by part).
    ``release`` (with ``keep=False``): when the C kernel compiles it, the trace's
    columns are let go (:meth:`Trace.release`) once the kernel has its inputs; None
    when the kernel then finds the trace bad (read it again: the Python builder words
    the error)."""
    found = trace.compiled.get(sem)
    if found is None:
        lib = _kernel()
        if lib is not None and native_usable(trace, sem):
            found = compile_native(lib, trace, sem, release=release and not keep)
            if found is None and trace.released >= 0:
                return None
        if found is None:  # no kernel, a case it leaves, or bad input (words the error)
            found = compile_python(trace, sem)
        if keep:
            trace.compiled[sem] = found
    return found
