"""Switched networks: fat trees and dragonflies, their links and their routes (issue 21).

Both are built of compute processors and switches (docs/decisions.md, "Switches"):
compute processors are numbered first, ``1..C``, then the switches. A topology
generated as one says so in its section (``# piui: network = ...``, kinds and parameter
names in :data:`parasol_core.model.NETWORK_KINDS`); the routing techniques here read
the structure from there, never from the links.

**Fat trees** are extended generalized fat trees (XGFT, Ohring et al. 1995): ``h``
levels of switches above the compute processors; a switch of level ``i`` has ``m_i``
children (down ports) and a node of level ``i`` has ``w_(i+1)`` parents (up ports);
a compute processor has one parent (its leaf switch). Three ways to give one:

* ``fattree K N``: the k-ary n-tree (Petrini and Vanneschi 1997), ``K**N`` compute
  processors and ``N`` levels of ``K**(N-1)`` switches with ``K`` ports down and ``K``
  up (the top level only down): ``m = (K,)*N``, up ports ``(K,)*(N-1)``.
* ``fattree2 D1 U1 D2``: two levels; leaf switches with ``D1`` compute ports down and
  ``U1`` up, spine switches with ``D2`` ports down. ``D2`` leaves, ``U1`` spines,
  ``D1 * D2`` compute processors; oversubscription ``D1 : U1``.
* ``fattree3 D1 U1 D2 U2 D3``: three levels the same way; ``D2 * D3`` leaves,
  ``U1 * D3`` middle switches (``D3`` pods of ``U1``), ``U1 * U2`` top switches,
  ``D1 * D2 * D3`` compute processors.

A node of level ``i`` is labelled by the digits of the subtree it is in (``x_(i+1)``
.. ``x_h``, as an index ``X`` with ``x_(i+1)`` fastest) and by which of the parallel
switches it is (``y_2`` .. ``y_i``, an index ``Y``, ``y_2`` fastest); its number
within its level is ``Y + W_i * X`` (``W_i`` = the product of the up-port counts
below it), so the switches of one subtree (a pod) are consecutive. Compute processor
``t`` (0-based) hangs off leaf switch ``t // D1``. Links, in order: each compute
processor to its leaf (by processor), then each level to the next (by lower switch,
then by its up port).

**Up/down routing** (``updown``) goes up to the nearest common ancestors' level and
straight down; of the parallel ancestors it takes the one the destination picks
(d-mod-k, Zahavi 2010): going up from level ``i - 1`` to ``i`` the up port is
``(d // (w_2 * ... * w_(i-1))) mod w_i``, ``d`` the destination counted from 0, so the
destinations of one leaf spread over its up ports (on a k-ary n-tree the up port at
each level is the destination's next base-k digit, lowest first). Every
route between two compute processors whose nearest common ancestors are at level
``L`` has ``2L`` hops.

**Dragonflies** (Kim, Dally, Scott and Abts 2008), ``dragonfly G A P H``: ``G`` groups
of ``A`` routers, each router with ``P`` terminals (compute processors) and ``H``
global links; routers of a group are all joined to each other (local links).
Terminal ``t`` (0-based) hangs off router ``t // P``; router ``r`` (0-based, number
``G*A*P + r + 1``) is in group ``r // A``. Global links use the *consecutive*
arrangement: a group's ``A*H`` global ports are numbered ``k = 0..A*H-1``, port ``k``
on the group's router ``k // H``; port ``k`` of group ``i`` goes to the other group
with index ``k mod (G-1)`` among the other groups in ascending order, as their
``k // (G-1)``-th link. So every pair of groups has ``K = (A*H) // (G-1)`` global
links between them, and the ports past ``K*(G-1)`` stay free (none when ``A*H`` is a
multiple of ``G - 1``, as in the balanced ``G = A*H + 1``). ``G`` may be 1 to
``A*H + 1``. Links, in order: terminals to routers, then each group's local links
(router pairs ascending), then global links by group and port.

**Dragonfly routing** (``dragonfly-minimal``): to the destination's router by the
fewest hops: in the same group one local hop; else local hop to a router holding a
global link to the destination's group (none if the source router has one), the
global hop, local hop to the destination's router (none if it is where the link
lands). Of a pair of groups' ``K`` global links it takes the one with the fewest hops,
a tie the lowest ``k``. At most 5 hops terminal to terminal.

``dragonfly-valiant``: between different groups (when there are 3 or more groups), a
minimal route to an intermediate group and from where it lands a minimal route to the
destination: at most 7 hops. The intermediate group is random but fixed for the pair:
the ``(splitmix64(src * (count + 1) + dst) mod (G - 2))``-th of the groups other than
the source's and the destination's, ascending (``src``, ``dst`` the processor numbers,
``count`` the topology's processor count), so a pair always takes the same route and a
run can be repeated. Within a group it is the minimal route.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod

import numpy as np

from parasol_core.base.words import counted
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.routing import RoutingTechnique
from parasol_core.topology.shape import Layout

FAT_TREE_KINDS = ("fattree", "fattree2", "fattree3", "xgft")
XGFT_MAX_LEVELS = 8


# --------------------------------------------------------------------------- fat trees


@dataclass(frozen=True)
class FatTree:
    """An XGFT: ``down[i-1]`` children per switch of level ``i`` (1..h), ``up[i-1]``
    parents per node of level ``i`` (1..h-1); compute processors have one parent."""

    down: tuple[int, ...]
    up: tuple[int, ...]
    #: an ``xgft`` (SimGrid's FAT_TREE): parents per compute processor, and the parallel
    #: links between a node of each level and each of its parents (empty: all 1)
    host_up: int = 1
    ports: tuple[int, ...] = ()
    #: routed as SimGrid 3.32 routes it (:meth:`simgrid_paths`), parallel links included
    simgrid: bool = False

    @classmethod
    def of(cls, kind: str, values: tuple[int, ...] | list[int]) -> FatTree:
        v = [int(x) for x in values]
        if kind == "fattree":
            if len(v) != 2:
                raise ValueError(f"a fattree takes two numbers, K and N; got {len(v)}")
            k, n = v
            if k < 1 or not 1 <= n <= 8:
                raise ValueError(f"a k-ary n-tree needs K >= 1 and N from 1 to 8, got {k} {n}")
            return cls((k,) * n, (k,) * (n - 1))
        if kind in ("fattree2", "fattree3"):
            levels = 2 if kind == "fattree2" else 3
            want = 2 * levels - 1
            if len(v) != want:
                names = "D1 U1 D2" if levels == 2 else "D1 U1 D2 U2 D3"
                raise ValueError(f"a {kind} takes {want} numbers ({names}); got {len(v)}")
            if any(x < 1 for x in v):
                raise ValueError(f"the port counts of a {kind} must be positive, got {tuple(v)}")
            return cls(tuple(v[0::2]), tuple(v[1::2]))
        if kind == "xgft":
            if not v or not 1 <= v[0] <= XGFT_MAX_LEVELS or len(v) != 1 + 3 * v[0]:
                raise ValueError("an xgft takes H (1 to 8 levels), then H children counts, H "
                                 "parent counts and H parallel-link counts")  # fmt: skip
            h = v[0]
            down, up, ports = v[1 : 1 + h], v[1 + h : 1 + 2 * h], v[1 + 2 * h :]
            if min(v) < 1:
                raise ValueError(f"the counts of an xgft must be positive, got {tuple(v)}")
            return cls(tuple(down), tuple(up[1:]), up[0], tuple(ports), simgrid=True)
        raise ValueError(f"not a fat tree: {kind!r}")

    @property
    def levels(self) -> int:
        return len(self.down)

    @cached_property
    def w(self) -> tuple[int, ...]:
        """Parents per node, by level 1..h (w_1 = 1, a compute processor's one leaf,
        but in an ``xgft``)."""
        return (self.host_up, *self.up)

    @cached_property
    def p(self) -> tuple[int, ...]:
        """Parallel links from a node of each level 0..h-1 to each of its parents."""
        return self.ports or (1,) * self.levels

    @cached_property
    def level_sizes(self) -> tuple[int, ...]:
        """Switches at levels 1..h."""
        h = self.levels
        return tuple(prod(self.down[i:]) * prod(self.w[:i]) for i in range(1, h + 1))

    @property
    def compute(self) -> int:
        return prod(self.down)

    @property
    def switches(self) -> int:
        return sum(self.level_sizes)

    @property
    def count(self) -> int:
        return self.compute + self.switches

    @property
    def links(self) -> int:
        # a compute link each (w_1 p_1 in an xgft), then each node of levels 1..h-1 has
        # w_(i+1) p_(i+1) up links
        sizes = (self.compute, *self.level_sizes)
        return sum(n * u * q for n, u, q in zip(sizes, self.w, self.p))

    @cached_property
    def bases(self) -> tuple[int, ...]:
        """Processor number before the first switch of each level 1..h."""
        out, at = [], self.compute
        for n in self.level_sizes:
            out.append(at)
            at += n
        return tuple(out)

    def pairs(self) -> np.ndarray:
        """The links as an ``(L, 2)`` array of processor numbers, in the documented order."""
        parts = []
        t = np.arange(self.compute, dtype=np.int64)
        parts.append(np.column_stack((t + 1, self.bases[0] + t // self.down[0] + 1)))
        wlow = 1  # W_i: product of w_2..w_i
        for i in range(1, self.levels):  # level i (1-based) to level i + 1
            q = np.arange(self.level_sizes[i - 1], dtype=np.int64)
            x, y = q // wlow, q % wlow
            xup = x // self.down[i]
            wup = wlow * self.w[i]
            lower = np.repeat(self.bases[i - 1] + q + 1, self.w[i])
            yi = np.tile(np.arange(self.w[i], dtype=np.int64), q.shape[0])
            parent = np.repeat(y, self.w[i]) + wlow * yi + wup * np.repeat(xup, self.w[i])
            parts.append(np.column_stack((lower, self.bases[i] + parent + 1)))
            wlow = wup
        return np.concatenate(parts)

    def simgrid_paths(
        self, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The routes SimGrid 3.32's ``FatTreeZone::get_local_route`` gives, batch form,
        with the rank of the parallel link each hop crosses (0: the lowest id, as the
        SimGrid import numbers them: port ``j`` of a pair is its ``j``-th link).

        Labels as SimGrid's: a node of level ``L`` has ``h`` digits, digit ``j`` counting
        to ``w[j]`` below ``L`` and to ``m[j]`` from ``L`` on, digit 0 the fastest (its
        position in its level). Up from level ``L`` while the node's digits from ``L`` on
        differ from the destination's: ``x = (d // prod(w[i], i < L)) mod (w[L] p[L])``
        (3.32 divides by the parent counts alone, and takes the modulus over the
        parallel links too), the parent whose digit ``L`` is ``x mod w[L]``, over its link ``x //
        w[L]``. Down: to the child whose digit is the destination's, over the link the
        scan of SimGrid's loop finds: it starts at ``(s mod p) m + digit`` (``s`` the
        source's position), and after a step it goes on scanning the next node's
        children from the index it stopped at, taking the next index of the right digit
        if there is one below that node's ``m p`` (SimGrid's loop does not restart)."""
        s = np.asarray(src, dtype=np.int64) - 1
        d = np.asarray(dst, dtype=np.int64) - 1
        h, m, w, p = self.levels, self.down, self.w, self.p
        k = s.shape[0]
        sd = np.empty((k, h), dtype=np.int64)
        dd = np.empty((k, h), dtype=np.int64)
        rest_s, rest_d = s.copy(), d.copy()
        top = np.zeros(k, dtype=np.int64)  # R: the level of the first common ancestor
        for j in range(h):
            sd[:, j], rest_s = rest_s % m[j], rest_s // m[j]
            dd[:, j], rest_d = rest_d % m[j], rest_d // m[j]
        for r in range(h, 0, -1):  # the lowest R whose digits from R on agree
            agree = (sd[:, r:] == dd[:, r:]).all(axis=1)
            top = np.where(agree, r, top)
        top[s == d] = 0
        label = sd.copy()
        cols = np.empty((k, 2 * h + 1), dtype=np.int64)
        keep = np.zeros((k, 2 * h + 1), dtype=bool)
        ranks = np.zeros((k, 2 * h), dtype=np.int64)
        hop_keep = np.zeros((k, 2 * h), dtype=bool)
        cols[:, 0] = s + 1
        keep[:, 0] = True
        bases = (0, *(b - self.compute for b in self.bases))  # level start, 0-based
        divide = 1
        for lvl in range(h):  # up from level lvl to lvl + 1
            live = lvl < top
            x = (d // divide) % (w[lvl] * p[lvl])
            divide *= w[lvl]  # SimGrid 3.32 divides by the parents only
            label[:, lvl] = np.where(live, x % w[lvl], label[:, lvl])
            cols[:, lvl + 1] = self.compute + bases[lvl + 1] + self._position(label, lvl + 1) + 1
            keep[:, lvl + 1] = live
            ranks[:, lvl] = x // w[lvl]
            hop_keep[:, lvl] = live
        prev = np.zeros(k, dtype=np.int64)
        going = np.zeros(k, dtype=bool)  # inside SimGrid's scan of children
        for n, lvl in enumerate(range(h, 0, -1)):  # down from level lvl to lvl - 1
            live = lvl <= top
            mm, pp = m[lvl - 1], p[lvl - 1]
            digit = dd[:, lvl - 1]
            nxt = prev + 1 + (digit - prev - 1) % mm
            at = np.where(going & (nxt < mm * pp), nxt, (s % pp) * mm + digit)
            prev = np.where(live, at, prev)
            going |= live
            label[:, lvl - 1] = np.where(live, digit, label[:, lvl - 1])
            if lvl > 1:
                cols[:, h + 1 + n] = (self.compute + bases[lvl - 1]
                                      + self._position(label, lvl - 1) + 1)  # fmt: skip
            else:
                cols[:, h + 1 + n] = d + 1
            keep[:, h + 1 + n] = live
            ranks[:, h + n] = at // mm
            hop_keep[:, h + n] = live
        offsets, procs = _flatten(cols, keep)
        return offsets, procs, ranks[hop_keep]

    def _position(self, label: np.ndarray, level: int) -> np.ndarray:
        """Positions in their level of nodes of level ``level`` with digits ``label``."""
        out = np.zeros(label.shape[0], dtype=np.int64)
        stride = 1
        for j in range(self.levels):
            out += label[:, j] * stride
            stride *= self.w[j] if j < level else self.down[j]
        return out

    def paths(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Up/down routes between compute processors (1-based numbers), batch form."""
        if self.simgrid:
            offsets, procs, _ = self.simgrid_paths(src, dst)
            return offsets, procs
        s = np.asarray(src, dtype=np.int64) - 1
        d = np.asarray(dst, dtype=np.int64) - 1
        h = self.levels
        k = s.shape[0]
        cols = np.empty((k, 2 * h + 1), dtype=np.int64)
        keep = np.zeros((k, 2 * h + 1), dtype=bool)
        cols[:, 0] = s + 1
        keep[:, 0] = True
        level = np.zeros(k, dtype=np.int64)  # L: the common ancestors' level
        below = 1  # M_(i-1): product of m_1..m_(i-1)
        wlow = 1
        y = np.zeros(k, dtype=np.int64)
        for i in range(1, h + 1):
            level += (s // below) != (d // below)
            if i >= 2:  # d-mod-k: the up port is the destination's number's next digit
                y = y + wlow * ((d // wlow) % self.w[i - 1])
                wlow *= self.w[i - 1]
            below *= self.down[i - 1]
            base = self.bases[i - 1] + 1
            cols[:, i] = base + y + wlow * (s // below)
            if i < h:
                cols[:, 2 * h - i] = base + y + wlow * (d // below)
        for i in range(1, h + 1):
            keep[:, i] = level >= i
            if i < h:
                keep[:, 2 * h - i] = level > i
        cols[:, 2 * h] = d + 1
        keep[:, 2 * h] = level >= 1
        return _flatten(cols, keep)


# --------------------------------------------------------------------------- dragonflies


@dataclass(frozen=True)
class Dragonfly:
    """``g`` groups of ``a`` routers, ``p`` terminals and ``h`` global links a router."""

    g: int
    a: int
    p: int
    h: int

    @classmethod
    def of(cls, values: tuple[int, ...] | list[int]) -> Dragonfly:
        v = [int(x) for x in values]
        if len(v) != 4:
            raise ValueError(f"a dragonfly takes four numbers, G A P H; got {len(v)}")
        g, a, p, h = v
        if min(v) < 1:
            raise ValueError(f"the numbers of a dragonfly must be positive, got {tuple(v)}")
        if g > a * h + 1:
            raise ValueError(
                f"a dragonfly of {a} routers with {counted(h, 'global link', grouped=False)} "
                f"each joins at most "
                f"A*H + 1 = {counted(a * h + 1, 'group', grouped=False)}, not {g}"
            )
        return cls(g, a, p, h)

    @property
    def terminals(self) -> int:
        return self.g * self.a * self.p

    @property
    def routers(self) -> int:
        return self.g * self.a

    @property
    def count(self) -> int:
        return self.terminals + self.routers

    @property
    def per_pair(self) -> int:
        """Global links between each pair of groups."""
        return (self.a * self.h) // (self.g - 1) if self.g > 1 else 0

    @property
    def links(self) -> int:
        g, a = self.g, self.a
        return self.terminals + g * a * (a - 1) // 2 + self.per_pair * g * (g - 1) // 2

    def gateway(self, i: np.ndarray, j: np.ndarray, c: np.ndarray | int) -> np.ndarray:
        """Router index (0-based) in group ``i`` holding its ``c``-th global link to ``j``."""
        other = np.where(j < i, j, j - 1)
        return i * self.a + (c * (self.g - 1) + other) // self.h

    def pairs(self) -> np.ndarray:
        g, a, p = self.g, self.a, self.p
        t0 = self.terminals
        parts = []
        t = np.arange(self.terminals, dtype=np.int64)
        parts.append(np.column_stack((t + 1, t0 + t // p + 1)))
        u, v = np.triu_indices(a, 1)
        grp = np.repeat(np.arange(g, dtype=np.int64), u.shape[0])
        parts.append(np.column_stack((t0 + grp * a + np.tile(u, g) + 1,
                                      t0 + grp * a + np.tile(v, g) + 1)))  # fmt: skip
        if g > 1 and self.per_pair:
            ports = self.per_pair * (g - 1)
            i = np.repeat(np.arange(g, dtype=np.int64), ports)
            k = np.tile(np.arange(ports, dtype=np.int64), g)
            other, c = k % (g - 1), k // (g - 1)
            j = np.where(other < i, other, other + 1)
            up = j > i
            i, j, c = i[up], j[up], c[up]
            parts.append(np.column_stack((t0 + self.gateway(i, j, c) + 1,
                                          t0 + self.gateway(j, i, c) + 1)))  # fmt: skip
        return np.concatenate(parts)

    def _minimal(self, ra: np.ndarray, rb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of each pair of routers (0-based) in different groups, the two ends of the
        global link the minimal route takes: fewest hops, then the lowest ``k``."""
        gi, gj = ra // self.a, rb // self.a
        best_hops = np.full(ra.shape[0], 99, dtype=np.int64)
        out_a, out_b = ra.copy(), rb.copy()
        for c in range(self.per_pair):
            x, y = self.gateway(gi, gj, c), self.gateway(gj, gi, c)
            hops = (x != ra).astype(np.int64) + (y != rb)
            better = hops < best_hops
            best_hops[better] = hops[better]
            out_a[better], out_b[better] = x[better], y[better]
        return out_a, out_b

    def _leave(self, ra: np.ndarray, gj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """From router ``ra`` to group ``gj`` (another group) by the fewest hops: the
        global link's two ends (fewest local hops before it, then the lowest ``k``)."""
        gi = ra // self.a
        best = np.full(ra.shape[0], 99, dtype=np.int64)
        out_a, out_b = ra.copy(), ra.copy()
        for c in range(self.per_pair):
            x = self.gateway(gi, gj, c)
            hops = (x != ra).astype(np.int64)
            better = hops < best
            best[better] = hops[better]
            out_a[better], out_b[better] = x[better], self.gateway(gj, gi, c)[better]
        return out_a, out_b

    def paths(
        self, src: np.ndarray, dst: np.ndarray, valiant: bool, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        t0, a = self.terminals, self.a
        rs, rd = (s - 1) // self.p, (d - 1) // self.p
        gs, gd = rs // a, rd // a
        k = s.shape[0]
        # columns: s, rs, x1, x2, x3, x4, rd, d (router indices until the end)
        x1, x2 = rs.copy(), rs.copy()
        x3, x4 = rs.copy(), rs.copy()
        far = gs != gd
        if valiant and self.g >= 3 and far.any():
            at = np.flatnonzero(far)
            mid = _splitmix64(s[at] * (count + 1) + d[at]) % np.uint64(self.g - 2)
            mid = mid.astype(np.int64)
            lo, hi = np.minimum(gs[at], gd[at]), np.maximum(gs[at], gd[at])
            mid += mid >= lo  # the mid-th of the other groups, ascending
            mid += mid >= hi
            x1[at], x2[at] = self._leave(rs[at], mid)
        if far.any():  # minimal from x2 (rs, or where the detour landed) to rd
            at = np.flatnonzero(far)
            x3[at], x4[at] = self._minimal(x2[at], rd[at])
        cols = np.empty((k, 8), dtype=np.int64)
        cols[:, 0] = s
        cols[:, 7] = d
        for j, r in enumerate((rs, x1, x2, x3, x4, rd), start=1):
            cols[:, j] = t0 + r + 1
        keep = np.ones((k, 8), dtype=bool)
        keep[:, 2:7] = cols[:, 2:7] != cols[:, 1:6]
        same = s == d
        keep[same, 1:] = False
        return _flatten(cols, keep)


@dataclass(frozen=True)
class SimGridDragonfly:
    """SimGrid 3.32's DRAGONFLY cluster (``# piui: network = simgrid-dragonfly G C B N``,
    what the SimGrid import writes): ``G`` groups of ``C`` chassis of ``B`` routers
    (blades), ``N`` hosts on each router; hosts first (host ``t``, 0-based, on router
    ``t // N``), then the routers, router ``r`` at position ``r mod (C B)`` of group
    ``r // (C B)``, chassis ``position // B``, blade ``position mod B``. Links: green
    between the routers of a chassis, black between the routers of one blade in the
    chassis of a group, blue from position ``j`` of group ``i`` to position ``i`` of
    group ``j``.

    Routes as ``DragonflyZone::get_local_route``: to another group, a green hop to blade
    ``g_dst`` of the chassis, a black hop to chassis 0, the blue link (landing at
    position ``g_src`` of the destination group); then a green hop to the destination's
    blade and a black hop to its chassis. One case is no chain of links in SimGrid:
    within a group from a chassis other than 0, SimGrid crosses the green link of that
    chassis and then goes on as if it were in chassis 0; PARASOL takes the chain (the
    green link, then the black link of the destination's blade)."""

    g: int
    c: int
    b: int
    n: int

    @classmethod
    def of(cls, values: tuple[int, ...] | list[int]) -> SimGridDragonfly:
        v = [int(x) for x in values]
        if len(v) != 4 or min(v) < 1:
            raise ValueError(f"a simgrid-dragonfly takes four positive numbers, G C B N; got {v}")
        if v[0] > v[2]:
            raise ValueError(f"SimGrid's dragonfly routing goes to blade G of a chassis: it "
                             f"needs as many blades as groups, not {v[2]} for {v[0]}")  # fmt: skip
        return cls(*v)

    @property
    def terminals(self) -> int:
        return self.g * self.c * self.b * self.n

    @property
    def count(self) -> int:
        return self.terminals + self.g * self.c * self.b

    def paths(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = np.asarray(src, dtype=np.int64) - 1
        d = np.asarray(dst, dtype=np.int64) - 1
        cb, b = self.c * self.b, self.b
        rs, rt = s // self.n, d // self.n
        gs, gt = rs // cb, rt // cb
        ct, bt = (rt % cb) // b, rt % b
        k = s.shape[0]
        cols = np.empty((k, 8), dtype=np.int64)
        cur = rs.copy()
        cols[:, 1] = cur
        far = gs != gt
        cur = np.where(far & (cur % b != gt), gs * cb + ((cur % cb) // b) * b + gt, cur)  # green
        cols[:, 2] = cur
        cur = np.where(far & ((cur % cb) // b != 0), gs * cb + gt, cur)  # black to chassis 0
        cols[:, 3] = cur
        cur = np.where(far, gt * cb + gs, cur)  # blue
        cols[:, 4] = cur
        cur = np.where(cur % b != bt, (cur // cb) * cb + ((cur % cb) // b) * b + bt, cur)  # green
        cols[:, 5] = cur
        cur = np.where((cur % cb) // b != ct, (cur // cb) * cb + ct * b + bt, cur)  # black
        cols[:, 6] = cur
        cols[:, 1:7] += self.terminals + 1
        cols[:, 0] = s + 1
        cols[:, 7] = d + 1
        keep = np.ones((k, 8), dtype=bool)
        keep[:, 2:7] = cols[:, 2:7] != cols[:, 1:6]
        keep[s == d, 1:] = False
        return _flatten(cols, keep)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea and Flood 2014), element-wise, wrapping."""
    z = np.asarray(x, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _flatten(cols: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(cols.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=offsets[1:])
    return offsets, cols[keep]


# --------------------------------------------------------------------------- techniques


def fat_tree_of(layout: Layout, technique: str) -> FatTree:
    net = layout.network
    if net is None or net[0] not in FAT_TREE_KINDS:
        raise RoutingError(
            f"{technique} routing needs a fat tree, and {layout.label} does not say it is "
            "one (a '# piui: network = fattree K N' line, as the generator writes)"
        )
    tree = FatTree.of(net[0], net[1])
    if tree.count != layout.count:
        raise RoutingError(
            f"{layout.label} says it is a {' '.join(map(str, (net[0], *net[1])))} fat tree "
            f"of {counted(tree.count, 'processor', grouped=False)}, but has {layout.count}"
        )
    return tree


def dragonfly_of(layout: Layout, technique: str) -> Dragonfly:
    net = layout.network
    if net is None or net[0] != "dragonfly":
        raise RoutingError(
            f"{technique} routing needs a dragonfly, and {layout.label} does not say it is "
            "one (a '# piui: network = dragonfly G A P H' line, as the generator writes)"
        )
    fly = Dragonfly.of(net[1])
    if fly.count != layout.count:
        raise RoutingError(
            f"{layout.label} says it is a dragonfly {' '.join(map(str, net[1]))} of "
            f"{counted(fly.count, 'processor', grouped=False)}, but has {layout.count}"
        )
    return fly


def _check_compute(src: np.ndarray, dst: np.ndarray, compute: int, label: str, what: str) -> None:
    for ends in (src, dst):
        bad = ends > compute
        if bad.any():
            p = int(ends[np.argmax(bad)])
            raise RoutingError(
                f"processor {p} is a {what} of {label}; routes run between its compute "
                f"processors 1..{compute}"
            )


class _ArrayRouting(RoutingTechnique):
    """A technique whose routes are computed in batch (:meth:`paths`); one route is a
    batch of one."""

    def path(self, layout: Layout, src: int, dst: int) -> list[int]:
        _, procs = self.paths(layout, np.asarray([src]), np.asarray([dst]))
        return procs.tolist()


class UpDownRouting(_ArrayRouting):
    """Up to the nearest common ancestors' level of a fat tree and down again; the
    ancestor the destination picks (d-mod-k)."""

    name = "updown"
    description = (
        "fat tree: up to the nearest common ancestor, then down; up ports chosen by the "
        "destination (d-mod-k)"
    )

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        tree = fat_tree_of(layout, self.name)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _check_compute(src, dst, tree.compute, layout.label, "switch")
        return tree.paths(src, dst)

    def ranked_paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`paths`, and on an ``xgft`` the parallel link each hop takes."""
        tree = fat_tree_of(layout, self.name)
        if not tree.simgrid:
            offsets, procs = self.paths(layout, src, dst)
            return offsets, procs, None
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _check_compute(src, dst, tree.compute, layout.label, "switch")
        return tree.simgrid_paths(src, dst)

    def steps(self, layout: Layout, src: np.ndarray, dst: np.ndarray) -> int:
        """At most the processors the routes visit: up to the top and down again."""
        tree = fat_tree_of(layout, self.name)
        return int(np.asarray(src).shape[0]) * (2 * tree.levels + 1)


class DragonflyRouting(_ArrayRouting):
    """Minimal or Valiant routing on a dragonfly."""

    def __init__(self, valiant: bool) -> None:
        self.valiant = valiant
        self.name = "dragonfly-valiant" if valiant else "dragonfly-minimal"
        self.description = (
            "dragonfly: minimal route via a random intermediate group (fixed per pair)"
            if valiant
            else "dragonfly: fewest hops (local, global, local)"
        )

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        fly = dragonfly_of(layout, self.name)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _check_compute(src, dst, fly.terminals, layout.label, "router")
        return fly.paths(src, dst, self.valiant, layout.count)

    def steps(self, layout: Layout, src: np.ndarray, dst: np.ndarray) -> int:
        """At most the processors the routes visit: 6 a minimal route, 8 a Valiant one."""
        dragonfly_of(layout, self.name)
        return int(np.asarray(src).shape[0]) * (8 if self.valiant else 6)


class SimGridDragonflyRouting(_ArrayRouting):
    """SimGrid 3.32's dragonfly routing on its DRAGONFLY cluster (:class:`SimGridDragonfly`)."""

    name = "simgrid-dragonfly"
    description = ("SimGrid's DRAGONFLY cluster: green to the blade of the destination's "
                   "group, black to chassis 0, blue, then green and black")  # fmt: skip

    def _fly(self, layout: Layout) -> SimGridDragonfly:
        net = layout.network
        if net is None or net[0] != "simgrid-dragonfly":
            raise RoutingError(f"{self.name} routing needs a '# piui: network = "
                               f"simgrid-dragonfly G C B N' line, which {layout.label} has not")  # fmt: skip
        try:
            fly = SimGridDragonfly.of(net[1])
        except ValueError as e:
            raise RoutingError(f"{layout.label}: {e}") from None
        if fly.count != layout.count:
            raise RoutingError(f"{layout.label} says it is a simgrid-dragonfly of {fly.count} "
                               f"processors, but has {layout.count}")  # fmt: skip
        return fly

    def paths(
        self, layout: Layout, src: np.ndarray, dst: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        fly = self._fly(layout)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _check_compute(src, dst, fly.terminals, layout.label, "router")
        return fly.paths(src, dst)

    def steps(self, layout: Layout, src: np.ndarray, dst: np.ndarray) -> int:
        """At most the processors the routes visit: 8 a route."""
        self._fly(layout)
        return int(np.asarray(src).shape[0]) * 8


UPDOWN = UpDownRouting()
SIMGRID_DRAGONFLY = SimGridDragonflyRouting()
DRAGONFLY_MINIMAL = DragonflyRouting(valiant=False)
DRAGONFLY_VALIANT = DragonflyRouting(valiant=True)


def network_structure(kind: str, values: tuple[int, ...] | list[int]) -> FatTree | Dragonfly:
    """The structure a ``# piui: network`` kind and its numbers describe."""
    if kind in FAT_TREE_KINDS:
        return FatTree.of(kind, values)
    if kind == "dragonfly":
        return Dragonfly.of(values)
    if kind == "simgrid-dragonfly":
        return SimGridDragonfly.of(values)
    raise ValueError(f"unknown network {kind!r}")
