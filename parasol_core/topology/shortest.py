"""Shortest-path routing over any link list (the ``shortest`` technique, issue 21).

A route is a shortest one by hops: breadth-first from the source over the topology's
links, a link of several processors (a bus) one hop between any two of them. Among
equally short routes the choice is fixed by one rule, applied from the destination
back: **each processor's predecessor is the lowest-numbered processor that shares a
link with it and is one hop nearer the source.** (Each hop then crosses the lowest-id
link holding both processors, as for every technique.) On a ring of 6 processors the
route from 1 to 4 is therefore ``1, 2, 3, 4``: 4's neighbours 3 and 5 are both two hops
from 1, and 3 is the lower.

The breadth-first search of a source gives every processor's predecessor and distance
(two int32 arrays, 8 bytes a processor). They are computed when a route from that source
is first asked for and kept per topology index (an index is a snapshot, so an edited
topology starts afresh), up to :data:`parasol_core.base.budget.MAX_SHORTEST_TABLE` entries
(processors x sources) in all; past it the oldest source's tables go first. A batch of
routes whose distinct sources need more than that at once (158,976 processors of
Fugaku's torus x 79 sources) is refused before any search, with a
:class:`~parasol_core.base.budget.BudgetError` naming both numbers.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property
from typing import Any

import numpy as np

from parasol_core.base import budget
from parasol_core.base.arrays import unique
from parasol_core.base.words import counted
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique
from parasol_core.topology.shape import Layout

# Links of more processors than this are searched as groups (every member one hop from
# every other), not expanded into the square of their size in pairs.
GROUP_LINK = 32


class LinkGraph:
    """Which processors share a link, for breadth-first search: ``count`` processors and
    the links the index checked, as its arrays: ``sizes[s]`` processors in slot ``s``,
    ``procs[offsets[s]:offsets[s + 1]]``."""

    def __init__(self, count: int, sizes: np.ndarray, offsets: np.ndarray, procs: np.ndarray,
                 label: str) -> None:  # fmt: skip
        self.count = count
        self.sizes, self.offsets, self.procs = sizes, offsets, procs
        self.label = label
        self._trees: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    @cached_property
    def _adjacency(self) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """CSR (``indptr``, ``indices``) over processors 0..count of the links of up to
        :data:`GROUP_LINK` processors, both directions, and the bigger links' members."""
        a_parts, b_parts, groups = [], [], []
        start = self.offsets[:-1][self.sizes == 2]
        if start.shape[0]:  # two-processor links, all at once
            first = self.procs[start].astype(np.int64)
            second = self.procs[start + 1].astype(np.int64)
            a_parts += [first, second]
            b_parts += [second, first]
        for s in np.flatnonzero(self.sizes != 2).tolist():  # buses: few
            procs = self.procs[self.offsets[s] : self.offsets[s + 1]].tolist()
            if len(procs) > GROUP_LINK:
                groups.append(unique(np.asarray(procs, dtype=np.int64)))
                continue
            for i, a in enumerate(procs):
                for b in procs[i + 1 :]:
                    a_parts.append(np.asarray([a, b], dtype=np.int64))
                    b_parts.append(np.asarray([b, a], dtype=np.int64))
        n = self.count + 1
        if a_parts:
            a = np.concatenate(a_parts)
            b = np.concatenate(b_parts)
            keep = a != b
            key = unique(a[keep] * n + b[keep])
            a, b = key // n, key % n
        else:
            a = b = np.empty(0, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(a, minlength=n), out=indptr[1:])
        return indptr, b, groups

    def tree(self, src: int) -> tuple[np.ndarray, np.ndarray]:
        """``(predecessor, distance)`` of every processor (index = processor number)
        from ``src``; distance -1 where no chain of links reaches."""
        hit = self._trees.get(src)
        if hit is not None:
            self._trees.move_to_end(src)
            return hit
        tree = self._search(src)
        self._trees[src] = tree
        kept = len(self._trees) * (self.count + 1)
        most = budget.current().shortest_table
        while kept > most and len(self._trees) > 1:
            self._trees.popitem(last=False)
            kept -= self.count + 1
        return tree

    def _search(self, src: int) -> tuple[np.ndarray, np.ndarray]:
        indptr, indices, groups = self._adjacency
        n = self.count + 1
        dist = np.full(n, -1, dtype=np.int32)
        parent = np.zeros(n, dtype=np.int32)
        dist[src], parent[src] = 0, src
        frontier = np.asarray([src], dtype=np.int64)
        used = [False] * len(groups)
        level = 0
        while frontier.shape[0]:
            budget.check_deadline()
            level += 1
            starts, lens = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
            total = int(lens.sum())
            # the neighbours of every frontier processor, each with who reached it
            first = np.repeat(starts - np.cumsum(lens) + lens, lens)
            v = indices[first + np.arange(total, dtype=np.int64)]
            u = np.repeat(frontier, lens)
            for g, procs in enumerate(groups):
                if used[g]:
                    continue
                near = procs[dist[procs] == level - 1]
                if near.shape[0]:
                    used[g] = True
                    v = np.concatenate((v, procs))
                    u = np.concatenate((u, np.full(procs.shape[0], near.min(), dtype=np.int64)))
            new = dist[v] == -1
            v, u = v[new], u[new]
            if not v.shape[0]:
                break
            order = np.lexsort((u, v))  # by processor, then its lowest predecessor first
            v, u = v[order], u[order]
            lowest = np.ones(v.shape[0], dtype=bool)
            lowest[1:] = v[1:] != v[:-1]
            v, u = v[lowest], u[lowest]
            dist[v], parent[v] = level, u
            frontier = v
        return parent, dist

    def unreachable(self, src: int, dst: int) -> RoutingError:
        return RoutingError(
            f"no route from processor {src} to processor {dst} in {self.label}: "
            "no chain of links joins them"
        )


def _graph(layout: Layout) -> LinkGraph:
    graph = layout.graph
    if not isinstance(graph, LinkGraph):
        raise RoutingError(
            f"shortest routing needs the links of a hardware topology, and {layout.label} "
            "has none to search (a virtual topology cannot be named 'shortest')"
        )
    return graph


class ShortestRouting(RoutingTechnique):
    """Shortest paths by hops over the topology's links (breadth-first); of equally
    short ones, each processor's predecessor is the lowest-numbered one nearer the
    source."""

    name = "shortest"
    description = (
        "shortest path by hops over the links (breadth-first); ties: each processor's "
        "predecessor is its lowest-numbered neighbour nearer the source"
    )

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        graph = _graph(layout)
        parent, dist = graph.tree(src)
        if dist[dst] < 0:
            raise graph.unreachable(src, dst)
        out = [dst]
        p = dst
        for _ in range(int(dist[dst])):
            p = int(parent[p])
            out.append(p)
        out.reverse()
        return out

    def _tables(self, layout: Layout, src: np.ndarray, dst: np.ndarray) -> tuple:
        """The breadth-first tables of the batch's sources, stacked, each pair's row in
        them and its hop count; refused past the budget before any search."""
        graph = _graph(layout)
        sources, row = np.unique(src, return_inverse=True)
        budget.check(
            f"shortest-path routes from {sources.shape[0]:,} sources on "
            f"{counted(graph.count, 'processor')}",
            sources.shape[0] * (graph.count + 1),
            budget.current().shortest_table,
            "table entries",
            "a predecessor and a distance per processor per source",
        )
        trees = [graph.tree(int(s)) for s in sources.tolist()]
        parents = np.stack([t[0] for t in trees]) if trees else np.zeros((0, 1), np.int32)
        dists = np.stack([t[1] for t in trees]) if trees else np.zeros((0, 1), np.int32)
        hops = dists[row, dst].astype(np.int64) if src.shape[0] else np.zeros(0, np.int64)
        if (hops < 0).any():
            i = int(np.argmax(hops < 0))
            raise graph.unreachable(int(src[i]), int(dst[i]))
        return row, parents, hops

    def steps(self, layout: Layout, src: Any, dst: Any) -> int:
        """The processors the routes visit, all together (both ends included), exact:
        what :func:`~parasol_core.topology.steps.route_steps` charges a batch."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        return int(self._tables(layout, src, dst)[2].sum()) + int(src.shape[0])

    def paths(self, layout: Layout, src: Any, dst: Any) -> tuple[np.ndarray, np.ndarray]:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        row, parents, hops = self._tables(layout, src, dst)
        offsets = np.zeros(src.shape[0] + 1, dtype=np.int64)
        np.cumsum(hops + 1, out=offsets[1:])
        procs = np.empty(int(offsets[-1]), dtype=np.int64)
        at = offsets[1:] - 1
        cur = dst.copy()
        procs[at] = cur
        live = np.nonzero(hops > 0)[0]
        left = hops[live]
        while live.shape[0]:  # one step back per round, every unfinished route at once
            cur_live = parents[row[live], cur[live]].astype(np.int64)
            cur[live] = cur_live
            at[live] -= 1
            procs[at[live]] = cur_live
            left -= 1
            keep = left > 0
            live, left = live[keep], left[keep]
        return offsets, procs


SHORTEST = ShortestRouting()
