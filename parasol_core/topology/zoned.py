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

from typing import Any

import numpy as np

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
                                   f"{int(procs.max())}, past its {count:,} processors")  # fmt: skip
            self.zone_of[procs] = k
            self.local[procs] = np.arange(1, procs.shape[0] + 1)
            self.members.append(np.concatenate([[0], procs]))
            kind, *numbers = zone.network.split()
            sizes = tuple(int(x) for x in numbers)
            label = f"zone {k} of {layout.label}"
            if kind == "shape":  # a torus: its grid, processors in grid order
                if int(np.prod(sizes)) != procs.shape[0]:
                    raise RoutingError(f"{label} has {procs.shape[0]:,} processors, not the "
                                       f"{int(np.prod(sizes)):,} of its shape "
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

    def gateway(self, k: int, label: str) -> int:
        gw = self.gateways[k - 1]
        if gw is None:
            raise RoutingError(f"zone {k} of {label} has no gateway ('via G'): no route "
                               "leaves or enters it")  # fmt: skip
        return gw

    def inside(self, k: int, src: list[int], dst: list[int]) -> list[tuple[list[int], list[int]]]:
        """Routes within zone ``k`` between global processors: (processors, ranks) each."""
        if not src:
            return []
        local = self.local
        s = local[np.asarray(src, dtype=np.int64)]
        d = local[np.asarray(dst, dtype=np.int64)]
        technique = self.techniques[k - 1]
        offsets, procs, ranks = technique.ranked_paths(self.layouts[k - 1], s, d)
        offsets = np.asarray(offsets, dtype=np.int64)
        procs = self.members[k - 1][np.asarray(procs, dtype=np.int64)]
        out = []
        hop = 0
        for i in range(len(src)):
            a, b = int(offsets[i]), int(offsets[i + 1])
            n = b - a - 1
            r = [0] * n if ranks is None else [int(x) for x in ranks[hop : hop + n]]
            hop += n
            out.append((procs[a:b].tolist(), r))
        return out


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
        route_steps = count
        z = self._zones(layout)
        heads, tails, middles = self._pieces(z, layout, src, dst)
        total = 0
        for pieces in (heads, tails):
            for k, items in pieces.items():
                s = z.local[np.asarray([x[1] for x in items], dtype=np.int64)]
                d = z.local[np.asarray([x[2] for x in items], dtype=np.int64)]
                total += route_steps(z.layouts[k - 1], z.techniques[k - 1], s, d)
        if middles:
            ms = np.asarray([m[1] for m in middles], dtype=np.int64)
            md = np.asarray([m[2] for m in middles], dtype=np.int64)
            total += SHORTEST.steps(z.outer, ms, md)
        return total

    @staticmethod
    def _pieces(z: _Zones, layout: Layout, src: Any, dst: Any) -> tuple[dict, dict, list]:
        """Each route's pieces: within the source's zone (to its gateway, or the whole
        route where both ends are in it), between the zones, within the destination's
        zone from its gateway; as (pair, from, to) by zone, and a list between zones."""
        src = np.asarray(src, dtype=np.int64).tolist()
        dst = np.asarray(dst, dtype=np.int64).tolist()
        heads: dict[int, list[tuple[int, int, int]]] = {}
        tails: dict[int, list[tuple[int, int, int]]] = {}
        middles: list[tuple[int, int, int]] = []
        for i, (s, d) in enumerate(zip(src, dst)):
            zs, zd = int(z.zone_of[s]), int(z.zone_of[d])
            if zs and zs == zd:
                heads.setdefault(zs, []).append((i, s, d))
                continue
            a = s
            if zs:
                a = z.gateway(zs, layout.label)
                heads.setdefault(zs, []).append((i, s, a))
            b = d
            if zd:
                b = z.gateway(zd, layout.label)
                tails.setdefault(zd, []).append((i, b, d))
            middles.append((i, a, b))
        return heads, tails, middles

    def ranked_paths(
        self, layout: Layout, src: Any, dst: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z = self._zones(layout)
        n = int(np.asarray(src).shape[0])
        heads, tails, middles = self._pieces(z, layout, src, dst)
        head_of: dict[int, tuple[list[int], list[int]]] = {}
        tail_of: dict[int, tuple[list[int], list[int]]] = {}
        for k, items in heads.items():
            for (i, _, _), piece in zip(items, z.inside(k, [x[1] for x in items],
                                                        [x[2] for x in items])):  # fmt: skip
                head_of[i] = piece
        for k, items in tails.items():
            for (i, _, _), piece in zip(items, z.inside(k, [x[1] for x in items],
                                                        [x[2] for x in items])):  # fmt: skip
                tail_of[i] = piece
        mid_of: dict[int, tuple[list[int], list[int]]] = {}
        if middles:
            ms = np.asarray([m[1] for m in middles], dtype=np.int64)
            md = np.asarray([m[2] for m in middles], dtype=np.int64)
            offsets, procs = SHORTEST.paths(z.outer, ms, md)
            for j, (i, _, _) in enumerate(middles):
                p = procs[offsets[j] : offsets[j + 1]].tolist()
                mid_of[i] = (p, [0] * (len(p) - 1))
        out_offsets = np.zeros(n + 1, dtype=np.int64)
        flat: list[int] = []
        flat_ranks: list[int] = []
        for i in range(n):
            path: list[int] = []
            ranks: list[int] = []
            for piece in (head_of.get(i), mid_of.get(i), tail_of.get(i)):
                if piece is None:
                    continue
                p, r = piece
                if path:
                    p = p[1:]  # the gateway where one piece ends and the next starts
                path.extend(p)
                ranks.extend(r)
            flat.extend(path)
            flat_ranks.extend(ranks)
            out_offsets[i + 1] = len(flat)
        return (out_offsets, np.asarray(flat, dtype=np.int64),
                np.asarray(flat_ranks, dtype=np.int64))  # fmt: skip


ZONES = ZonedRouting()
