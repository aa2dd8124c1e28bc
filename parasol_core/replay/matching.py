"""Receives from any source matched as SMPI matches them: by the simulated times at
which the sends are posted (docs/replay.md, "Receives from any source").

A receive from any source (``recv -555``, ``irecv``; SimGrid 3.32's tracing writes
``-333``) or of any tag (``-444``) takes whichever fitting message SMPI's mailboxes
give it. SMPI 3.32 (``smpi_request.cpp`` ``Request::start``, ``CommImpl::isend`` and
``irecv``) has two per receiving rank: a send enters when it is *posted*, an eager one
into the small (permanent) mailbox, where it starts moving at once, unless a receive
waits for it, a rendezvous one into the large mailbox; a receive, when it is posted,
takes the first fitting send waiting in the small mailbox, else in the large one,
else waits for the first fitting send posted after it. Which send a receive from any
source takes thus depends on the simulated times, which depend on the matching: we
iterate.

:func:`settle` runs the replay with a matching, simulates every mailbox that holds a
receive from any source under the times that run gave (:func:`mailbox_matching`),
gives each such receive the source and tag of the send it took there
(:func:`resolved`: a copy of the trace whose wildcards are those ranks, compiled as
any other trace, by the C compiler too), and runs again until the matching does not
change: a fixed point, a run in which every receive took the send SMPI's mailboxes
would give it under that run's own times. The first matching comes from the
mailboxes under each rank's computation alone (no communication time), or from the
last fixed point this trace settled on (the Program window's slider starts there).
Events that a run never reached (a matching that deadlocks) are placed after every
reached one, in the order of their rank's last reached one plus its computation in
between.

At most :data:`MAX_ROUNDS` runs; a matching met again (a cycle) or no fixed point
within the bound is refused (:class:`WildcardError`, naming a receive whose match
keeps changing); a deadlock at the fixed point is reported as any deadlock.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.replay.program import _find
from parasol_core.replay.tifile import ANY_SOURCE, ANY_TAG, KIND, Trace, TraceError

MAX_ROUNDS = 40
"""Runs of the replay at most before a matching of receives from any source that does
not settle is refused."""

_SEND, _ISEND, _RECV, _IRECV = (KIND[k] for k in ("send", "isend", "recv", "irecv"))
_SENDRECV, _WAIT, _WAITALL = KIND["sendRecv"], KIND["wait"], KIND["waitall"]


class WildcardError(TraceError):
    """Receives from any source whose matching by simulated time does not settle (a
    TraceError: the command line, the estimator and the Program window report it as
    any trace they cannot replay, with the receive's file and line)."""


def wildcards(trace: Trace) -> np.ndarray:
    """The actions that receive from any source or of any tag."""
    recv = (trace.kind == _RECV) | (trace.kind == _IRECV)
    return np.flatnonzero(recv & ((trace.peer == ANY_SOURCE[0]) | (trace.tag == ANY_TAG)))


def resolved(trace: Trace, wild: np.ndarray, source: np.ndarray, tag: np.ndarray) -> Trace:
    """A copy of ``trace`` whose receives ``wild`` are from ``source`` with ``tag`` (a
    source of -555 stays a wildcard: the compiler's static choice). A ``wait`` on an
    irecv of any tag names the tag -444 (what SMPI's tracing writes): it is given the
    tag that irecv now has, so that it still finds it."""
    peer, tags = trace.peer.copy(), trace.tag.copy()
    peer[wild], tags[wild] = source, tag
    any_tag = (trace.kind[wild] == _IRECV) & (trace.tag[wild] == ANY_TAG)
    if any_tag.any():
        now = {int(i): int(t) for i, t in zip(wild[any_tag].tolist(), tag[any_tag].tolist())}
        for r in unique(trace.rank[wild[any_tag]]).tolist():
            _retag_waits(trace, r, now, tags)
    return dataclasses.replace(trace, peer=peer, tag=tags, compiled={})


def _retag_waits(trace: Trace, r: int, now: dict[int, int], tags: np.ndarray) -> None:
    """Rank ``r``'s waits on the irecvs ``now`` (action -> its tag), found as the
    compiler finds a wait's request (:func:`program._find`), take that tag."""
    requests: list[tuple[int, int, int, int, int]] = []  # src, dst, tag, -, action
    kind, peer, tag = trace.kind, trace.peer, trace.tag
    for i in range(int(trace.first[r]), int(trace.first[r + 1])):
        k = int(kind[i])
        if k == _ISEND:
            requests.append((r, int(peer[i]), int(tag[i]), 0, i))
        elif k == _IRECV:
            requests.append((int(peer[i]), r, int(tag[i]), 0, i))
        elif k == _WAIT and requests:
            at = _find(requests, int(peer[i]), int(trace.size2[i]), int(tag[i]))
            waited = requests.pop(0 if at is None else at)[4]
            if waited in now:
                tags[i] = now[waited]
        elif k == _WAITALL:
            requests.clear()


def post_times(trace: Trace, op_start: np.ndarray, end: np.ndarray, seconds: np.ndarray
               ) -> np.ndarray:  # fmt: skip
    """Each action's start in a run (``end`` of its ``op_start`` node; 0 for none).
    Where the run never reached it (NaN: the matching deadlocked), after every
    reached one: ordered by its rank's last reached start plus the computation
    between (``seconds``: each action's own), all shifted past the last reached
    start, so that a receive the run reached takes a send the run reached first."""
    t = np.where(op_start >= 0, end[np.maximum(op_start, 0)], 0.0) if end.size else \
        np.zeros(len(trace))  # fmt: skip
    missing = np.isnan(t)
    if missing.any():
        before = np.cumsum(seconds) - seconds  # computation before each action
        for r in unique(trace.rank[missing]).tolist():
            lo, hi = int(trace.first[r]), int(trace.first[r + 1])
            known = np.flatnonzero(~missing[lo:hi])
            last = lo + int(known[-1]) if known.size else -1
            base = t[last] - before[last] if last >= 0 else -before[lo]
            gone = lo + np.flatnonzero(missing[lo:hi])
            t[gone] = base + before[gone]
        reached = t[~missing]
        shift = (reached.max() if reached.size else 0.0) - t[missing].min()
        t[missing] += max(shift, 0.0) + 1.0  # a second past every reached start
    return t


class _Box:
    """One of a rank's two SMPI mailboxes: the sends waiting in it by (source, tag), in
    posting order (``seq``), and the receives waiting in it (named ones by (source,
    tag), the others in one queue)."""

    def __init__(self) -> None:
        self.sends: dict[tuple[int, int], deque] = {}
        self.named: dict[tuple[int, int], deque] = {}
        self.wild: deque = deque()

    def take_send(self, src: int, tag: int) -> tuple[int, int] | None:
        """The (source, tag) of the first waiting send a receive of ``src``, ``tag``
        fits, taken out; None: none."""
        if src != ANY_SOURCE[0] and tag != ANY_TAG:
            q = self.sends.get((src, tag))
            if not q:
                return None
            q.popleft()
            return src, tag
        best, first = None, None
        for key, q in self.sends.items():
            fits = q and src in (ANY_SOURCE[0], key[0]) and tag in (ANY_TAG, key[1])
            if fits and (first is None or q[0] < first):
                best, first = key, q[0]
        if best is not None:
            self.sends[best].popleft()
        return best

    def take_recv(self, src: int, tag: int) -> tuple[int, int, int, int] | None:
        """The first waiting receive that fits a send of ``src``, ``tag``, taken out:
        (seq, its source, its tag, its action); None: none."""
        q = self.named.get((src, tag))
        best = q[0] if q else None
        for w in self.wild:
            if w[1] in (ANY_SOURCE[0], src) and w[2] in (ANY_TAG, tag):
                if best is None or w[0] < best[0]:
                    best = w
                break
        if best is None:
            return None
        if q and best is q[0]:
            q.popleft()
        else:
            self.wild.remove(best)
        return best

    def add_recv(self, entry: tuple[int, int, int, int]) -> None:
        if entry[1] != ANY_SOURCE[0] and entry[2] != ANY_TAG:
            self.named.setdefault((entry[1], entry[2]), deque()).append(entry)
        else:
            self.wild.append(entry)


def mailbox_matching(trace: Trace, wild: np.ndarray, posted: np.ndarray,
                     eager: float = 65536.0) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The source and tag of the send each receive ``wild`` takes when every send and
    receive to its rank enters that rank's mailboxes at its ``posted`` time (ties:
    sends first, then by rank, then in trace order), as SMPI 3.32 matches with its
    thresholds at ``eager`` bytes (``smpi_request.cpp``, ``Request::start``): a
    receive takes the first fitting send waiting in the small mailbox (eager sends),
    else the first in the large one (rendezvous sends), else waits in the small
    mailbox (fewer than ``eager`` bytes) or the large one; an eager send goes to the
    first fitting receive waiting in the large mailbox, else in the small one, else
    waits in the small one; a rendezvous send to the first fitting receive waiting in
    the large mailbox, else waits there. -555: it takes none (the compiler then says
    which receive is unmatched)."""
    source = np.full(wild.shape[0], ANY_SOURCE[0], dtype=np.int64)
    tag_out = trace.tag[wild].astype(np.int64).copy()
    slot = {int(i): k for k, i in enumerate(wild.tolist())}
    kind, peer, tag, rank = trace.kind, trace.peer, trace.tag, trace.rank
    targets = unique(rank[wild])
    is_send = ((kind == _SEND) | (kind == _ISEND)) & np.isin(peer, targets)
    is_sr = (kind == _SENDRECV) & np.isin(peer, targets)  # sends tag 0 to peer
    is_recv = ((kind == _RECV) | (kind == _IRECV)) & np.isin(rank, targets)
    is_srr = (kind == _SENDRECV) & np.isin(rank, targets)  # receives tag 0 from its tag column
    # per receiving rank: time, 0 send / 1 receive, rank, action, source, tag, bytes
    events: dict[int, list[tuple[float, int, int, int, int, int, float]]] = {}
    for i in np.flatnonzero(is_send | is_sr).tolist():
        t = 0 if kind[i] == _SENDRECV else int(tag[i])
        events.setdefault(int(peer[i]), []).append(
            (float(posted[i]), 0, int(rank[i]), i, int(rank[i]), t, float(trace.size[i]))
        )
    for i in np.flatnonzero(is_recv | is_srr).tolist():
        if kind[i] == _SENDRECV:
            src, t, nbytes = int(tag[i]), 0, float(trace.size2[i])
        else:
            src, t, nbytes = int(peer[i]), int(tag[i]), float(trace.size[i])
        src = ANY_SOURCE[0] if src in ANY_SOURCE else src
        events.setdefault(int(rank[i]), []).append(
            (float(posted[i]), 1, int(rank[i]), i, src, t, nbytes)
        )
    for evs in events.values():
        evs.sort()
        small, large = _Box(), _Box()
        for seq, (_t, side, _r, i, src, t, nbytes) in enumerate(evs):
            if side == 0:  # a send
                if nbytes < eager:
                    got = large.take_recv(src, t) or small.take_recv(src, t)
                    if got is None:
                        small.sends.setdefault((src, t), deque()).append(seq)
                else:
                    got = large.take_recv(src, t)
                    if got is None:
                        large.sends.setdefault((src, t), deque()).append(seq)
                if got is not None and got[3] in slot:
                    source[slot[got[3]]], tag_out[slot[got[3]]] = src, t
            else:  # a receive
                key = small.take_send(src, t) or large.take_send(src, t)
                if key is None:
                    (small if nbytes < eager else large).add_recv((seq, src, t, i))
                elif i in slot:
                    source[slot[i]], tag_out[slot[i]] = key
    return source, tag_out


def _compute_clock(trace: Trace, seconds: np.ndarray) -> np.ndarray:
    """Each action's start when each rank's clock runs by its computation alone."""
    before = np.cumsum(seconds) - seconds
    if not len(trace):
        return before
    heads = np.minimum(trace.first[:-1], len(trace) - 1)
    return before - before[heads][trace.rank]


def settle(
    trace: Trace,
    seconds: np.ndarray,
    key: Any,
    run: Callable[[Trace], tuple[Any, np.ndarray, np.ndarray, Any]],
    eager: float = 65536.0,
) -> tuple[Trace, Any]:
    """Run ``run`` (a resolved trace -> its program's ``op_start``, the nodes' ends,
    its outcome) until the matching of ``trace``'s receives from any source is a
    fixed point; the resolved trace and the outcome of its run. ``seconds``: each
    action's own computation; ``eager``: SMPI's thresholds; ``key``: where the fixed point (and its trace, with its
    compiled program) is kept on ``trace``: the next replay starts from it."""
    wild = wildcards(trace)
    kept = trace.compiled.get(("wildcards", key))
    if kept is not None and kept[0].shape == wild.shape:
        source, tag, _ = kept
    else:
        source, tag = mailbox_matching(trace, wild, _compute_clock(trace, seconds), eager)
    seen: dict[bytes, int] = {}
    for round_ in range(1, MAX_ROUNDS + 1):
        if kept is not None and np.array_equal(kept[0], source) and np.array_equal(kept[1], tag):
            current = kept[2]  # the last fixed point's trace, its program compiled on it
        else:
            current = resolved(trace, wild, source, tag)
        op_start, end, outcome = run(current)
        new_source, new_tag = mailbox_matching(
            trace, wild, post_times(trace, op_start, end, seconds), eager
        )
        if np.array_equal(new_source, source) and np.array_equal(new_tag, tag):
            trace.compiled[("wildcards", key)] = (source, tag, current)
            if isinstance(outcome, Exception):
                raise outcome
            outcome.runs = round_
            return current, outcome
        state = source.tobytes() + tag.tobytes()
        seen[state] = round_
        changed = int(np.flatnonzero((new_source != source) | (new_tag != tag))[0])
        source, tag = new_source, new_tag
        if source.tobytes() + tag.tobytes() in seen:
            raise WildcardError(
                f"the receives from any source do not settle: the matching of run {round_ + 1} "
                f"is that of run {seen[source.tobytes() + tag.tobytes()]} (a cycle); "
                f"{trace.where(int(wild[changed]))}: rank {int(trace.rank[wild[changed]])}'s "
                "receive keeps changing its sender")  # fmt: skip
    raise WildcardError(
        f"the receives from any source do not settle within {MAX_ROUNDS} runs; "
        f"{trace.where(int(wild[changed]))}: rank {int(trace.rank[wild[changed]])}'s receive "
        "still changes its sender")  # fmt: skip
