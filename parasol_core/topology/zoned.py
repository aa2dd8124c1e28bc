"""Regions routed by their own technique (the ``zones`` technique, issue 36).

A SimGrid platform may hold a FAT_TREE, DRAGONFLY or TORUS cluster inside a larger zone (two
fat trees joined by a WAN link). SimGrid routes within such a cluster by the cluster's
own routing, and between zones from the source to its zone's gateway (``gw_src``), over
the zone route, and from the other zone's gateway (``gw_dst``) to the destination. A
topology says so by ``# piui: zones = RANGES ROUTING NETWORK via G; ...``
(:class:`~parasol_core.syntax.annotations.Zone`) and ``routing = "zones"``:

* both ends in one zone: the zone's technique (``updown``, ``simgrid-dragonfly``,
  ``dragonfly-minimal``, ``simgrid-torus``) on the zone alone, its processors numbered
  1.. in the order the zone lists them and its network (a torus: its shape) the zone's;
* otherwise: from the source to its zone's gateway by that zone's technique (from the
  source itself outside any zone), then ``shortest`` (topology/shortest.py) over the
  links that are not inside one zone to the destination's zone's gateway (or the
  destination), then from that gateway to the destination by its zone's technique.

Routes are made in batches: one call of each zone's technique for all the pieces
inside it, one breadth-first table per distinct source outside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.words import counted
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique, get_routing
from parasol_core.topology.shape import Layout, Shape
from parasol_core.topology.shortest import SHORTEST, LinkGraph


class _Zones:
    """What routing needs of a layout's zones, made once per layout."""

    def __init__(self, layout: Layout) -> None:
        zones = layout.zones
        if not zones:
            raise RoutingError(f"zones routing needs a '# piui: zones = RANGES ROUTING NETWORK "
                               f"via G; ...' line, which {layout.label} has not")  # fmt: skip
        graph = layout.graph
        if not isinstance(graph, LinkGraph):
            raise RoutingError(f"zones routing needs the links of a hardware topology, and "
                               f"{layout.label} has none")  # fmt: skip
        count = layout.count
        self.zone_of = np.zeros(count + 1, dtype=np.int64)  # 0: in no zone
        self.local = np.zeros(count + 1, dtype=np.int64)  # its number within its zone
        self.members: list[np.ndarray] = []
        self.layouts: list[Layout] = []
        self.techniques: list[RoutingTechnique] = []
        self.gateways: list[int | None] = []
        for k, zone in enumerate(zones, start=1):
            procs = np.asarray(zone.processors(), dtype=np.int64)
            if procs.shape[0] and int(procs.max()) > count:
                raise RoutingError(f"{layout.label}: zone {k} names processor "
                                   f"{int(procs.max())}, past its "
                                   f"{counted(count, 'processor')}")  # fmt: skip
            self.zone_of[procs] = k
            self.local[procs] = np.arange(1, procs.shape[0] + 1)
            self.members.append(np.concatenate([[0], procs]))
            kind, *numbers = zone.network.split()
            sizes = tuple(int(x) for x in numbers)
            label = f"zone {k} of {layout.label}"
            if kind == "shape":  # a torus: its grid, processors in grid order
                if int(np.prod(sizes)) != procs.shape[0]:
                    raise RoutingError(f"{label} has {counted(procs.shape[0], 'processor')}, "
                                       f"not the {int(np.prod(sizes)):,} of its shape "
                                       f"{' x '.join(numbers)}")  # fmt: skip
                self.layouts.append(Layout(int(procs.shape[0]), Shape(sizes), label))
            else:
                self.layouts.append(Layout(int(procs.shape[0]), None, label,
                                           network=(kind, sizes)))  # fmt: skip
            self.techniques.append(get_routing(zone.routing))
            self.gateways.append(zone.gateway)
        # the links outside every zone: those whose processors are not all in one zone
        sizes, offsets, procs = graph.sizes, graph.offsets, graph.procs
        zof = self.zone_of[procs]
        slot = np.repeat(np.arange(sizes.shape[0]), sizes)
        first = zof[offsets[:-1]] if sizes.shape[0] else zof[:0]
        same = np.ones(sizes.shape[0], dtype=bool)
        np.logical_and.at(same, slot, zof == first[slot])
        outer = ~(same & (first > 0))
        keep = np.repeat(outer, sizes)
        out_sizes = sizes[outer]
        out_offsets = np.zeros(out_sizes.shape[0] + 1, dtype=np.int64)
        np.cumsum(out_sizes, out=out_offsets[1:])
        self.outer = Layout(count, None, f"{layout.label} (between its zones)",
                            graph=LinkGraph(count, out_sizes, out_offsets, procs[keep],
                                            f"{layout.label} (between its zones)"))  # fmt: skip

        #: each zone's gateway by zone number (0 unused; -1: none)
        self.gw = np.asarray([-1] + [-1 if g is None else g for g in self.gateways], np.int64)

    def no_gateway(self, k: int, label: str) -> RoutingError:
        return RoutingError(f"zone {k} of {label} has no gateway ('via G'): no route "
                            "leaves or enters it")  # fmt: skip


@dataclass
class _Pieces:
    """A batch's routes cut into pieces: ``head`` (within the source's zone: to its
    gateway, or the whole route where both ends are in it), ``middle`` (between the
    zones, from the source or its zone's gateway to the destination or its zone's
    gateway) and ``tail`` (within the destination's zone, from its gateway); each the
    pairs it belongs to, where it starts and where it ends."""

    head: tuple[np.ndarray, np.ndarray, np.ndarray]
    middle: tuple[np.ndarray, np.ndarray, np.ndarray]
    tail: tuple[np.ndarray, np.ndarray, np.ndarray]
    zone_head: np.ndarray  # the zone of each head piece
    zone_tail: np.ndarray


def _pieces(z: _Zones, label: str, src: Any, dst: Any) -> _Pieces:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    zs, zd = z.zone_of[src], z.zone_of[dst]
    same = (zs > 0) & (zs == zd)
    leave = (zs > 0) & ~same
    enter = (zd > 0) & ~same
    for need, zone in ((leave, zs), (enter, zd)):
        bad = need & (z.gw[zone] < 0)
        if bad.any():
            raise z.no_gateway(int(zone[np.argmax(bad)]), label)
    pairs = np.arange(src.shape[0], dtype=np.int64)
    h = zs > 0
    head = (pairs[h], src[h], np.where(same, dst, z.gw[zs])[h])
    m = ~same
    a = np.where(zs > 0, z.gw[zs], src)
    b = np.where(zd > 0, z.gw[zd], dst)
    middle = (pairs[m], a[m], b[m])
    tail = (pairs[enter], z.gw[zd][enter], dst[enter])
    return _Pieces(head, middle, tail, zs[h], zd[enter])


def _gather(flat: np.ndarray, pair: np.ndarray, order: np.ndarray, start: np.ndarray,
            length: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``flat``'s runs ``start[j] .. start[j] + length[j]`` laid end to end, pair by pair
    (``pair[j]``) in ``order[j]`` within a pair: the values and each pair's offsets."""
    by = np.lexsort((order, pair))
    pair, start, length = pair[by], start[by], length[by]
    ends = np.cumsum(length)
    index = np.repeat(start - ends + length, length) + np.arange(int(ends[-1]) if ends.size else 0)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair, weights=length, minlength=n).astype(np.int64), out=offsets[1:])
    return flat[index], offsets


class ZonedRouting(RoutingTechnique):
    """Each zone by its own technique, between zones through their gateways
    (module docstring)."""

    name = "zones"
    description = ("regions routed by their own technique ('# piui: zones'), between them "
                   "through their gateways by shortest paths")  # fmt: skip

    def _zones(self, layout: Layout) -> _Zones:
        memo = layout._grids
        found = memo.get("zones")
        if found is None:
            found = memo["zones"] = _Zones(layout)
        return found

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        _, procs, _ = self.ranked_paths(layout, np.asarray([src]), np.asarray([dst]))
        return procs.tolist()

    def paths(self, layout: Layout, src: Any, dst: Any) -> tuple[np.ndarray, np.ndarray]:
        offsets, procs, _ = self.ranked_paths(layout, src, dst)
        return offsets, procs

    def steps(self, layout: Layout, src: Any, dst: Any, count: Any = None) -> int:
        """At most the processors the routes visit, before any is made: each piece's as
        ``count`` (topology/steps.py's ``route_steps``, which passes itself) counts it for
        its technique (``shortest``'s from its tables, within their own budget), the
        gateways where pieces join counted twice. Without ``count``: the routes made."""
        if count is None:
            _, procs, _ = self.ranked_paths(layout, src, dst)
            return int(procs.shape[0])
        z = self._zones(layout)
        cut = _pieces(z, layout.label, src, dst)
        total = 0
        for (_, a, b), zone in ((cut.head, cut.zone_head), (cut.tail, cut.zone_tail)):
            for k in unique(zone).tolist():
                pick = zone == k
                total += count(z.layouts[k - 1], z.techniques[k - 1], z.local[a[pick]],
                               z.local[b[pick]])  # fmt: skip
        _, a, b = cut.middle
        if a.shape[0]:
            total += SHORTEST.steps(z.outer, a, b)
        return total

    def _within(self, z: _Zones, piece: tuple, zone: np.ndarray) -> tuple:
        """The routes of pieces inside zones, by each zone's technique: their pairs,
        processors (global numbers), offsets and ranks (hop by hop, as the processors)."""
        pairs, a, b = piece
        parts_pair, parts_procs, parts_len, parts_ranks = [], [], [], []
        for k in unique(zone).tolist():
            pick = np.flatnonzero(zone == k)
            s, d = z.local[a[pick]], z.local[b[pick]]
            offsets, procs, ranks = z.techniques[k - 1].ranked_paths(z.layouts[k - 1], s, d)
            offsets = np.asarray(offsets, dtype=np.int64)
            procs = z.members[k - 1][np.asarray(procs, dtype=np.int64)]
            lengths = np.diff(offsets)
            hops = int(lengths.sum()) - pick.shape[0]
            parts_pair.append(pairs[pick])
            parts_procs.append(procs)
            parts_len.append(lengths)
            parts_ranks.append(np.zeros(hops, np.int64) if ranks is None
                               else np.asarray(ranks, dtype=np.int64))  # fmt: skip
        if not parts_pair:
            e = np.zeros(0, np.int64)
            return e, e, e, e
        return (np.concatenate(parts_pair), np.concatenate(parts_procs),
                np.concatenate(parts_len), np.concatenate(parts_ranks))  # fmt: skip

    def ranked_paths(
        self, layout: Layout, src: Any, dst: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z = self._zones(layout)
        n = int(np.asarray(src).shape[0])
        cut = _pieces(z, layout.label, src, dst)
        h_pair, h_procs, h_len, h_ranks = self._within(z, cut.head, cut.zone_head)
        t_pair, t_procs, t_len, t_ranks = self._within(z, cut.tail, cut.zone_tail)
        m_pair, ma, mb = cut.middle
        if m_pair.shape[0]:
            m_offsets, m_procs = SHORTEST.paths(z.outer, ma, mb)
            m_len = np.diff(np.asarray(m_offsets, dtype=np.int64))
            m_procs = np.asarray(m_procs, dtype=np.int64)
        else:
            m_len = m_procs = np.zeros(0, np.int64)
        # a middle piece drops its first processor where a head ends there, a tail always
        has_head = np.zeros(n, dtype=bool)
        has_head[h_pair] = True
        m_skip = has_head[m_pair].astype(np.int64)
        h_start = np.cumsum(h_len) - h_len
        m_start = np.cumsum(m_len) - m_len
        t_start = np.cumsum(t_len) - t_len
        base_m, base_t = h_procs.shape[0], h_procs.shape[0] + m_procs.shape[0]
        flat = np.concatenate([h_procs, m_procs, t_procs])
        procs, offsets = _gather(
            flat,
            np.concatenate([h_pair, m_pair, t_pair]),
            np.concatenate([np.zeros_like(h_pair), np.ones_like(m_pair), np.full_like(t_pair, 2)]),
            np.concatenate([h_start, base_m + m_start + m_skip, base_t + t_start + 1]),
            np.concatenate([h_len, m_len - m_skip, t_len - 1]),
            n,
        )
        # ranks: every hop of every piece, in the same order (the middle's are 0: the
        # lowest-id link, as 'shortest' takes)
        h_hops, t_hops = h_len - 1, t_len - 1
        m_hops = m_len - 1
        flat_r = np.concatenate([h_ranks, np.zeros(int(m_hops.sum()), np.int64), t_ranks])
        ranks, _ = _gather(
            flat_r,
            np.concatenate([h_pair, m_pair, t_pair]),
            np.concatenate([np.zeros_like(h_pair), np.ones_like(m_pair), np.full_like(t_pair, 2)]),
            np.concatenate([np.cumsum(h_hops) - h_hops,
                            h_hops.sum() + np.cumsum(m_hops) - m_hops,
                            h_hops.sum() + m_hops.sum() + np.cumsum(t_hops) - t_hops]),
            np.concatenate([h_hops, m_hops, t_hops]),
            n,
        )  # fmt: skip
        return offsets, procs, ranks


ZONES = ZonedRouting()
