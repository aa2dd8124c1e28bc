"""What a replay predicts: the makespan, per rank its finish and its seconds in
computation, communication and waiting, and per operation (an action of the trace)
its start and end, as numpy columns; as JSON and as a Chrome trace-event timeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.replay.program import Program
from parasol_core.replay.tifile import KINDS, Trace

# what an operation's time is called in the breakdown and the timeline
CATEGORIES = ("computation", "communication", "waiting")
# the actions whose size column is bytes (a wait's holds nothing of the kind)
_SIZED = [i for i, k in enumerate(KINDS) if k not in ("init", "finalize", "compute", "wait",
                                                        "waitall", "comm_size", "comm_split",
                                                        "comm_dup")]  # fmt: skip
# the actions that take messages in (a wait completes a receive or a send): what
# communication they spend off a followed path is receiving
_RECEIVES = [KINDS.index(k) for k in ("recv", "irecv", "wait", "waitall")]


WALK = 64  # the most nodes of an operation's critical path followed (the rest: waiting)


def _waiting(op_msg: np.ndarray, op_end: np.ndarray, rank: np.ndarray, start: np.ndarray,
             rest: np.ndarray, t0: np.ndarray, end: np.ndarray,
             path: tuple[np.ndarray, np.ndarray, np.ndarray], directions: bool = True
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:  # fmt: skip
    """Per action, the seconds it waited, of ``rest`` (its time less its own
    computation), the rank it waited for (-1: none), and with ``directions`` (a result
    that keeps its operations: the one-shot replay sums per rank and reads neither) of
    its communication the seconds it received (NaN: an action whose path is not
    followed) and whether it received before it sent (its first message in began
    before its first out); else None for both.

    Its path is followed back from its end node through each node's critical
    predecessor (``path``: the flow engine's ``crit``, the node whose end released it,
    and each node's source and destination ranks) while it lies within the action. A
    message to or from the action's rank counts as communication from when it started
    moving to its end; the rest of ``rest`` is waiting: the computation of the rank it
    waited for, and messages between other ranks (a pipeline filling, a tree's other
    branches). The rank it waited for is that of the deepest node of another rank on
    the path: the late one, not the neighbour that passed its lateness on. An action
    of no transfer (``op_msg`` -1: computes, eager sends, the model's collectives, whose
    cost is their communication) waits for nothing. Of the communication, a message to
    the action's rank from another is received, one from it sent (the timeline draws
    them apart: a reduce's receives, a waitall's sends)."""
    wait = np.zeros(rest.shape[0])
    who = np.full(rest.shape[0], -1, dtype=np.int32)
    received = np.full(rest.shape[0], np.nan) if directions else None
    in_first = np.ones(rest.shape[0], dtype=bool) if directions else None
    acts = np.flatnonzero((op_msg != -1) & (op_end >= 0) & (rest > 0))
    if not acts.size:
        return wait, who, received, in_first
    crit, src, dst = path
    s, r = start[acts], rank[acts]
    comm = np.zeros(acts.shape[0])
    if directions:
        got = np.zeros(acts.shape[0])
        # when its earliest message in and out on the path began (the walk goes back in
        # time: the last one seen is the earliest)
        first_in = np.full(acts.shape[0], np.inf)
        first_out = np.full(acts.shape[0], np.inf)
    late = np.full(acts.shape[0], -1, dtype=np.int32)
    node = op_end[acts].astype(np.int64)
    live = np.arange(acts.shape[0])  # the walks still inside their action
    for _ in range(WALK):
        n = node[live]
        into = (dst[n] == r[live]) & (src[n] != r[live])
        mine = (src[n] == r[live]) | into
        began = np.maximum(t0[n], s[live])
        moving = np.where(mine, np.maximum(end[n] - began, 0.0), 0.0)
        comm[live] += moving
        if directions:
            got[live] += np.where(into, moving, 0.0)
            first_in[live] = np.where(into & (moving > 0), began, first_in[live])
            first_out[live] = np.where(mine & ~into & (moving > 0), began, first_out[live])
        late[live[~mine]] = src[n[~mine]]  # the deepest node of another rank: who it waited for
        c = crit[n]
        go = (t0[n] > s[live]) & (c >= 0)  # released within the action, by another node
        live, c = live[go], c[go].astype(np.int64)
        go = end[c] > s[live]  # which itself ended within the action
        live, c = live[go], c[go]
        node[live] = c
        if not live.size:
            break
    wait[acts] = np.clip(rest[acts] - comm, 0.0, None)
    who[acts] = np.where(wait[acts] > 0, late, -1)
    if directions:
        # what is not waiting is communication, of which ``got`` came in (the waiting
        # was clipped: the messages' times may add past the action's rest, overlapping)
        received[acts] = np.minimum(got, rest[acts] - wait[acts])
        in_first[acts] = first_in <= first_out
    return wait, who, received, in_first


@dataclass
class ReplayResult:
    """Per operation (the trace's actions, rank by rank): ``rank``, ``kind`` (an index
    of :data:`~parasol_core.replay.tifile.KINDS`), ``peer`` (-1: none; a receive from any
    source: the source it took, :mod:`~parasol_core.replay.matching`),
    ``nbytes`` (sent, or received by a receive; a collective's own part), ``start``,
    ``end`` and of that time ``computation`` and ``waiting`` (the time on its critical
    path when no message of its rank was moving: :func:`_waiting`; the rest is
    communication), ``waited_for`` (the rank its waiting leads back to, -1: none),
    ``receiving_op`` (of its communication, the seconds a message to its rank from
    another moved on its critical path; an action whose path is not followed: all of
    it for a receive or a wait, none otherwise), ``receives_first`` (whether its first
    message in on that path began before its first out: a reduce's receives come
    before its send, a barrier's send before its receive),
    ``file`` (an index of ``files``)
    and ``line``. Per rank: ``host`` (its processor), ``finish``, ``computation``,
    ``communication``, ``waiting`` (they add up to ``finish``). ``messages``: the
    transfers the network carried; ``events``: the flow engine's, ``polls`` its polls
    for a stop (``replay(..., cancel=)``); ``runs``: the flow
    engine's runs it took (more than one to match receives from any source by the
    simulated times, :mod:`~parasol_core.replay.matching`)."""

    makespan: float
    files: list[str]
    rank: np.ndarray
    kind: np.ndarray
    peer: np.ndarray
    nbytes: np.ndarray
    start: np.ndarray
    end: np.ndarray
    computation_op: np.ndarray
    waiting_op: np.ndarray
    waited_for: np.ndarray  # the rank each waited for (-1: none): its path's late one
    receiving_op: np.ndarray  # of its communication, the seconds messages came to it
    receives_first: np.ndarray  # (bool) whether it received before it sent
    file: np.ndarray
    line: np.ndarray
    host: np.ndarray
    finish: np.ndarray
    computation: np.ndarray
    communication: np.ndarray
    waiting: np.ndarray
    messages: int
    events: int
    polls: int = 0
    runs: int = 1  # runs of the flow engine: more to match receives from any source
    operations: bool = True  # False: the per-rank figures only (replay(operations=False))

    @classmethod
    def of(cls, trace: Trace, prog: Program, hosts: np.ndarray, t0: np.ndarray, end: np.ndarray,
           delay: np.ndarray, events: int, polls: int = 0, operations: bool = True, *,
           path: tuple[np.ndarray, np.ndarray, np.ndarray]) -> ReplayResult:  # fmt: skip
        """``operations=False``: the per-rank figures only (the per-operation columns
        empty, :attr:`operations` False), from ``trace.first`` and the program's
        per-action columns: what a trace whose columns were let go can give (its
        ``op_start`` may be None: each action's start is then the end of the one before
        it on its rank, which is what ``op_start`` names, and 0 for a rank's first).
        ``path``: each node's critical predecessor (the flow engine's ``crit``) and its
        source and destination ranks, along which an action's waiting and communication
        are told apart (:func:`_waiting`)."""
        p = trace.ranks

        def at(nodes: np.ndarray, times: np.ndarray) -> np.ndarray:
            return np.where(nodes >= 0, times[np.maximum(nodes, 0)], 0.0) if times.size else \
                np.zeros(nodes.shape[0])  # fmt: skip

        stop = at(prog.op_end, end)
        if prog.op_start is not None:
            start = at(prog.op_start, end)
        else:  # (a one-shot replay's) each action starts where its rank's previous one ended
            start = np.empty_like(stop)
            start[1:] = stop[:-1]
            heads = trace.first[:-1]
            start[heads[heads < stop.shape[0]]] = 0.0
        dur = np.maximum(stop - start, 0.0)
        comp = np.where(prog.op_flops > 0, at(prog.op_end, delay), 0.0)
        comp = np.minimum(comp, dur)
        rest = dur - comp
        del dur
        # the same ranks as trace.rank (sorted, first[r]:first[r + 1] are rank r's)
        rank = trace.rank if operations else np.repeat(
            np.arange(p, dtype=np.int64), np.diff(trace.first))  # fmt: skip
        wait, who, received, in_first = _waiting(prog.op_msg, prog.op_end, rank, start, rest,
                                                 t0, end, path, directions=operations)  # fmt: skip
        if operations:  # an action whose path was not followed receives by its kind
            received = np.where(np.isnan(received),
                                np.where(np.isin(trace.kind, _RECEIVES), rest - wait, 0.0),
                                received)  # fmt: skip
        del rest
        finish = np.zeros(p)
        has = np.diff(trace.first) > 0
        finish[has] = stop[trace.first[1:][has] - 1]
        computation = np.bincount(rank, weights=comp, minlength=p)
        waiting = np.bincount(rank, weights=wait, minlength=p)
        communication = np.maximum(finish - computation - waiting, 0.0)
        if operations:
            nbytes = np.where(np.isin(trace.kind, _SIZED), trace.size, 0.0)
            cols = dict(rank=rank, kind=trace.kind, peer=trace.peer, nbytes=nbytes, start=start,
                        end=stop, computation_op=comp, waiting_op=wait, waited_for=who,
                        receiving_op=received, receives_first=in_first, file=trace.file, line=trace.line)  # fmt: skip
        else:
            none, ints = np.zeros(0), np.zeros(0, dtype=np.int64)
            cols = dict(rank=ints, kind=np.zeros(0, dtype=np.int8), peer=ints, nbytes=none,
                        start=none, end=none, computation_op=none, waiting_op=none,
                        receiving_op=none, receives_first=np.zeros(0, dtype=bool),
                        waited_for=np.zeros(0, dtype=np.int32),
                        file=np.zeros(0, dtype=np.int32), line=ints)  # fmt: skip
        return cls(
            makespan=float(finish.max(initial=0.0)),
            files=list(trace.files),
            **cols,
            host=hosts,
            finish=finish,
            computation=computation,
            communication=communication,
            waiting=waiting,
            messages=prog.messages,
            events=events,
            polls=polls,
            operations=operations,
        )

    @property
    def ranks(self) -> int:
        return int(self.finish.shape[0])

    def where(self, i: int) -> str:
        """``FILE:LINE`` of operation ``i``."""
        return f"{self.files[int(self.file[i])]}:{int(self.line[i])}"

    def breakdown(self) -> dict[str, float]:
        """Seconds in computation, communication and waiting, summed over the ranks."""
        return {"computation": float(self.computation.sum()),
                "communication": float(self.communication.sum()),
                "waiting": float(self.waiting.sum())}  # fmt: skip

    def to_json(self, operations: bool = True) -> dict[str, Any]:
        """``{"makespan", "ranks": [{"rank", "processor", "finish", "computation",
        "communication", "waiting"}...], "messages", "operations": [{"rank", "action",
        "peer", "bytes", "start", "end", "computation", "waiting", "received",
        "waited_for", "file", "line"}...]}`` (``peer`` null for none; a receive from any
        source: the source it took; ``received`` the seconds of its communication that a
        message to its rank moved, the rest sent, as the timeline draws them;
        ``waited_for`` the rank its waiting leads back to, null for none)."""
        ranks = [
            {"rank": r, "processor": h, "finish": f, "computation": c, "communication": m,
             "waiting": w}
            for r, (h, f, c, m, w) in enumerate(zip(
                self.host.tolist(), self.finish.tolist(), self.computation.tolist(),
                self.communication.tolist(), self.waiting.tolist()))
        ]  # fmt: skip
        out: dict[str, Any] = {"makespan": self.makespan, "ranks": ranks,
                               "messages": self.messages}  # fmt: skip
        if operations and not self.operations:
            raise ValueError("this result has the per-rank figures only (replayed with "
                             "operations=False)")  # fmt: skip
        if operations:
            out["operations"] = [
                {"rank": r, "action": KINDS[k], "peer": None if p == -1 else p, "bytes": b,
                 "start": s, "end": e, "computation": c, "waiting": w, "received": g,
                 "waited_for": None if x < 0 else x, "file": self.files[f], "line": n}
                for r, k, p, b, s, e, c, w, g, x, f, n in zip(
                    self.rank.tolist(), self.kind.tolist(), self.peer.tolist(),
                    self.nbytes.tolist(), self.start.tolist(), self.end.tolist(),
                    self.computation_op.tolist(), self.waiting_op.tolist(),
                    self.received().tolist(), self.waited_for.tolist(),
                    self.file.tolist(), self.line.tolist())
            ]  # fmt: skip
        return out

    def received(self) -> np.ndarray:
        """Per operation, the seconds of its communication that messages to its rank
        moved (``receiving_op`` within the communication: what the timeline draws
        receiving; the rest of the communication it sent)."""
        comm = self.end - self.start - self.computation_op - self.waiting_op
        return np.clip(self.receiving_op, 0.0, np.maximum(comm, 0.0))

    def chrome_trace(self) -> dict[str, Any]:
        """The timeline in Chrome's trace-event format (``chrome://tracing``, Perfetto,
        speedscope open it): a thread per rank, a complete event ("X", microseconds)
        for each part of an operation that took time, its category ``computation``,
        ``communication`` or ``waiting``, its arguments the peer, the bytes and the
        trace line; an operation's communication is one event for what it received and
        one for what it sent, in the order they began (``receiving_op``,
        ``receives_first``), its argument ``direction`` saying which."""
        if not self.operations:
            raise ValueError("a timeline needs the operations (replayed with operations=False)")
        events: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "replay"}}
        ]
        for r in range(self.ranks):
            events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": r,
                           "args": {"name": f"rank {r} (processor {int(self.host[r])})"}})  # fmt: skip
        dur = self.end - self.start
        busy = np.flatnonzero(dur > 0)
        rank, kind, peer = self.rank.tolist(), self.kind.tolist(), self.peer.tolist()
        start, comp, wait = (
            self.start.tolist(),
            self.computation_op.tolist(),
            self.waiting_op.tolist(),
        )
        got, in_first = self.received().tolist(), self.receives_first.tolist()
        d, nbytes, file, line = (
            dur.tolist(),
            self.nbytes.tolist(),
            self.file.tolist(),
            self.line.tolist(),
        )
        for i in busy.tolist():
            args: dict[str, Any] = {"trace": f"{self.files[file[i]]}:{line[i]}"}
            if peer[i] != -1:
                args["peer"] = peer[i]
            if nbytes[i]:
                args["bytes"] = nbytes[i]
            t = start[i]
            comm = d[i] - comp[i] - wait[i]
            talk = [("receiving", got[i]), ("sending", comm - got[i])]
            if not in_first[i]:
                talk.reverse()
            name = KINDS[kind[i]]
            parts = [("waiting", wait[i], args)]
            parts += [("communication", span, {**args, "direction": way}) for way, span in talk]
            parts.append(("computation", comp[i], args))
            for cat, span, given in parts:
                if span > 0:
                    events.append({"name": name, "cat": cat, "ph": "X", "pid": 0,
                                   "tid": rank[i], "ts": t * 1e6, "dur": span * 1e6,
                                   "args": given})  # fmt: skip
                    t += span
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"makespan_s": self.makespan}}  # fmt: skip
