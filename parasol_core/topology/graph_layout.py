"""Drawings of networks with no known structure (no shape, no ``# piui: network``
word): switch hierarchies in layers, anything else force-directed, buses as bars
(no drawing here: positions in grid units, x to the right, y downward).

The graph drawn is the topology's links, with each bus (a link of three or more
processors) a node of its own that its processors join. Processors that hang off one
switch or one bus and nothing else (a cluster's hosts, a fat tree's compute
processors, a dragonfly's terminals) are **terminals**: they are not laid out by the
graph algorithm but placed by their switch, in a block of rows beside it, or, on a
bus, in a row along its bar (a long bus with nothing above it: on both sides). What is left, the **core** (switches, buses, processors
with more than one link), is laid out as follows.

* **Layers** (:func:`layered`), when there are switches or buses and the core is a
  hierarchy: levels are hop distances from the compute processors
  (:func:`hop_levels`), and almost no core link joins two nodes of one level
  (:data:`LAYER_INTRA`). A fat tree, a cluster with a backbone, buses joined by a
  switch. Each level is a row, the lowest at the bottom; the order within a row comes
  from barycentre sweeps (Sugiyama's crossing reduction), the switches of level 1 in a
  row wide enough for their terminals' blocks below them, those above each over the
  mean of its neighbours below, kept apart.
* **Force-directed** (networkx's ``spring_layout``, Fruchterman-Reingold, seeded: the
  same drawing at every open) otherwise: a dragonfly (routers linked within their
  level), a link list without a shape. Each connected part of the core on its own,
  the parts side by side; terminals outward of their switch, away from its
  neighbours.

Work is estimated before it is done: the force-directed layout costs nodes squared a
step (networkx's dense solver; its sparse one needs scipy). Past
:data:`FORCE_BUDGET` node pairs times steps, or :data:`FORCE_NODES` nodes in one part,
the drawing falls back to the layers (a switched network) or a circle (anything else),
and :attr:`GraphDrawing.note` names the estimate, the budget and the fallback.

Every processor gets a finite place of its own (:func:`apart` moves the rare
processor that would share one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.words import counted

#: The width / height the layers' blocks of terminals are chosen to come near.
ASPECT = 1.5
#: The seed of the force-directed layout: the same network is drawn the same way.
SEED = 7
#: Steps of the force-directed layout (networkx's default).
FORCE_STEPS = 50
#: Node pairs x steps of the force-directed layout, at most (a few tenths of a second
#: on one core; 500 nodes in one part, 50 steps).
FORCE_BUDGET = 6_000_000
#: Nodes of one connected part, at most: networkx's dense solver stops short of 500.
FORCE_NODES = 499
#: The share of core links within one level above which a switched network is not
#: drawn in layers (a dragonfly's local and global links are all within level 1).
LAYER_INTRA = 0.1
#: Barycentre sweeps (up and down) of the layers' crossing reduction.
SWEEPS = 4
#: Distance from a switch to the first row of its terminals, and from a bus's bar to
#: its row of processors (grid units).
HANG = 1.5
#: Rows between switch levels in the layers, when terminals hang below level 1.
LEVEL_GAP = 3.0
#: A bus's processors, past this many, on both sides of its bar (when nothing is above).
BUS_ROW = 12
#: A switch's terminals, up to this many, on an arc about it (force-directed).
FAN = 6
#: How far (grid units) a link must pass from a processor it does not join.
CLEAR = 0.6
#: Nodes x links of a part at most for which near-collinear triples are untangled.
UNTANGLE_WORK = 2_000_000


@dataclass(frozen=True)
class Bars:
    """Buses drawn as bars: for bus ``k``, the link id ``ids[k]``, the bar from
    ``(ends[k, 0], ends[k, 1])`` to ``(ends[k, 2], ends[k, 3])`` in grid units and the
    0-based processors that hang off it, ``members[ptr[k]:ptr[k + 1]]``."""

    ids: np.ndarray
    ends: np.ndarray
    ptr: np.ndarray
    members: np.ndarray

    @staticmethod
    def empty() -> Bars:
        return Bars(np.zeros(0, np.int64), np.zeros((0, 4)), np.zeros(1, np.int64),
                    np.zeros(0, np.int64))  # fmt: skip

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def members_of(self, k: int) -> np.ndarray:
        return self.members[self.ptr[k] : self.ptr[k + 1]]

    def foot(self, k: int, xy: np.ndarray) -> np.ndarray:
        """Where the processors ``xy`` (rows) meet bar ``k``: the nearest point of it."""
        x0, y0, x1, y1 = self.ends[k]
        d = np.array([x1 - x0, y1 - y0])
        n = float(d @ d)
        t = np.clip(((xy - (x0, y0)) @ d) / n, 0.0, 1.0) if n > 0 else np.zeros(len(xy))
        return np.array([x0, y0]) + t[:, None] * d


@dataclass(frozen=True)
class GraphDrawing:
    """Where each processor goes (``xy``, 0-based rows), by ``kind``: ``levels``
    (layers of a switched network), ``bus`` (layers of buses, no switches), ``force``
    or ``circle`` (the fallback of a large network without switches); ``levels`` per
    processor in the layers (0 compute), the buses' bars, and ``note``: what was not
    done and why (a fallback past a budget), or None."""

    kind: str
    xy: np.ndarray
    levels: np.ndarray | None
    bars: Bars
    note: str | None = None
    bends: Bends | None = None


@dataclass(frozen=True)
class Bends:
    """Links drawn with bends, not straight: the link between processor ``ends[i, 0]``
    and ``ends[i, 1]`` (0-based) goes from the first through ``points[i]`` (in order,
    grid units) to the second. A block of terminals under its switch is wired so (an
    org chart: a rail below the switch, a spine down each pair of columns, a short
    stub to each terminal), so that no link runs over another terminal."""

    ends: np.ndarray  # (m, 2) int64
    points: np.ndarray  # (m, k, 2) float64

    def moved(self, by: np.ndarray) -> Bends:
        return Bends(self.ends, self.points + by)


@dataclass(frozen=True)
class Graph:
    """The graph drawn: nodes ``0..count-1`` the processors, ``count..n-1`` the buses;
    each edge once (``lo < hi``)."""

    count: int
    n: int
    lo: np.ndarray
    hi: np.ndarray
    switch: np.ndarray  # per node: a switch
    hub: np.ndarray  # per node: a bus
    bus_ids: np.ndarray  # link id of each bus node

    @property
    def degree(self) -> np.ndarray:
        return np.bincount(self.lo, minlength=self.n) + np.bincount(self.hi, minlength=self.n)


def graph(count: int, a: np.ndarray, b: np.ndarray,
          buses: list[tuple[int, np.ndarray]] | tuple = (),
          switches: np.ndarray | None = None) -> Graph:  # fmt: skip
    """The graph of ``count`` processors joined by ``a[i]-b[i]`` (0-based) and by
    ``buses`` (link id, 0-based members); ``switches`` (0-based, per processor) or
    None. Links out of range, to themselves or repeated are left out; a "bus" of
    fewer than three processors is a link (or nothing)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ea, eb, ids = [a], [b], []
    for lid, members in buses:
        m = np.asarray(members, dtype=np.int64)
        m = m[(m >= 0) & (m < count)]
        m = np.sort(m)
        m = m[np.concatenate(([True], m[1:] != m[:-1]))] if m.size else m
        if m.size >= 3:
            ea.append(m)
            eb.append(np.full(m.size, count + len(ids), dtype=np.int64))
            ids.append(lid)
        elif m.size == 2:
            ea.append(m[:1])
            eb.append(m[1:])
    n = count + len(ids)
    ea_all, eb_all = np.concatenate(ea), np.concatenate(eb)
    ok = (ea_all >= 0) & (ea_all < n) & (eb_all >= 0) & (eb_all < n) & (ea_all != eb_all)
    lo = np.minimum(ea_all[ok], eb_all[ok])
    hi = np.maximum(ea_all[ok], eb_all[ok])
    key = unique(lo * n + hi)  # one edge per pair, in order (a sort: numpy's is a hash)
    switch = np.zeros(n, dtype=bool)
    if switches is not None:
        s = np.asarray(switches, dtype=bool)[:count]
        switch[: s.shape[0]] = s
    hub = np.zeros(n, dtype=bool)
    hub[count:] = True
    return Graph(count, n, key // n, key % n, switch, hub, np.asarray(ids, dtype=np.int64))


def hop_levels(count: int, a: np.ndarray, b: np.ndarray, compute: np.ndarray) -> np.ndarray:
    """Each node's hop distance (0-based indices, links a[i]-b[i]) from the nearest
    compute processor (``compute``, a boolean mask): 0 for compute processors; a node no
    link chain reaches gets one level above the highest."""
    ptr, nbr = adjacency(count, a, b)
    level = np.full(count, -1, dtype=np.int64)
    frontier = np.flatnonzero(compute)
    level[frontier] = 0
    depth = 0
    while frontier.size:
        depth += 1
        reached = _gather(ptr, nbr, frontier)
        reached = np.sort(reached[level[reached] < 0])
        reached = reached[np.concatenate(([True], reached[1:] != reached[:-1]))[: reached.size]]
        level[reached] = depth
        frontier = reached
    level[level < 0] = int(level.max(initial=0)) + 1
    return level


def adjacency(count: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Neighbour lists of nodes 0..count-1 joined by a[i]-b[i] (0-based), as CSR
    (``nbr[ptr[p]:ptr[p + 1]]``)."""
    src = np.concatenate((a, b)).astype(np.int64)
    dst = np.concatenate((b, a)).astype(np.int64)
    order = np.argsort(src, kind="stable")
    ptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=count), out=ptr[1:])
    return ptr, dst[order]


def _gather(ptr: np.ndarray, nbr: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The neighbours of ``nodes``, concatenated (with repeats)."""
    lengths = ptr[nodes + 1] - ptr[nodes]
    first = np.repeat(ptr[nodes] - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return nbr[first + np.arange(int(lengths.sum()), dtype=np.int64)]


def terminals(g: Graph) -> np.ndarray:
    """Each node's parent when it is a terminal (a processor, not a switch, with one
    link, to a switch, a bus or a node of two links or more), else -1."""
    deg = g.degree
    parent = np.full(g.n, -1, dtype=np.int64)
    one = deg[g.lo] == 1
    parent[g.lo[one]] = g.hi[one]
    one = deg[g.hi] == 1
    parent[g.hi[one]] = g.lo[one]
    safe = np.maximum(parent, 0)
    ok = (parent >= 0) & ~g.hub & ~g.switch & ((deg[safe] >= 2) | g.hub[safe])
    return np.where(ok, parent, -1)


# --------------------------------------------------------------------------- the choice


def draw(count: int, a: np.ndarray, b: np.ndarray,
         buses: list[tuple[int, np.ndarray]] | tuple = (),
         switches: np.ndarray | None = None, levels: np.ndarray | None = None,
         ordered: bool = False) -> GraphDrawing:  # fmt: skip
    """The drawing of a network (see the module's text). ``levels`` (per processor)
    gives the layers instead of hop distances (a fat tree by its numbering); with
    ``ordered`` each level keeps its number order (no crossing reduction)."""
    g = graph(count, a, b, buses, switches)
    parent = terminals(g)
    if levels is not None:
        level = np.zeros(g.n, dtype=np.int64)
        level[:count] = levels
        return layered(g, level, parent, ordered=ordered, kind="levels")
    structured = bool(g.switch.any() or g.hub.any())
    compute = ~g.hub & ~g.switch
    level = hop_levels(g.n, g.lo, g.hi, compute) if structured else None
    if level is not None:
        core = parent < 0
        inner = core[g.lo] & core[g.hi]
        same = level[g.lo[inner]] == level[g.hi[inner]]
        if not inner.any() or same.mean() <= LAYER_INTRA:
            return layered(g, level, parent, kind="levels" if g.switch.any() else "bus")
    sizes = _core_parts(g, parent)
    work = sum(s * s for s in sizes) * FORCE_STEPS
    biggest = max(sizes, default=0)
    if work <= FORCE_BUDGET and biggest <= FORCE_NODES:
        return force(g, parent)
    what = (f"{counted(biggest, 'node', grouped=False)} in one connected part, past the "
            f"{FORCE_NODES} of networkx's "
            f"dense solver" if biggest > FORCE_NODES else
            f"{counted(work, 'node pair')} x steps, past the budget of "
            f"{FORCE_BUDGET:,}")  # fmt: skip
    if level is not None:
        note = f"force-directed layout not run ({what}): drawn in layers by hop distance"
        return _noted(layered(g, level, parent, kind="levels"), note)
    note = f"force-directed layout not run ({what}): drawn on a circle"
    return GraphDrawing("circle", circle(count), None, Bars.empty(), note)


def _noted(d: GraphDrawing, note: str) -> GraphDrawing:
    return GraphDrawing(d.kind, d.xy, d.levels, d.bars, note, d.bends)


def _core_parts(g: Graph, parent: np.ndarray) -> list[int]:
    """Sizes of the connected parts of the core (not terminals, not alone), in nodes."""
    core = parent < 0
    inner = core[g.lo] & core[g.hi]
    label = _components(g.n, g.lo[inner], g.hi[inner])
    keep = core & ((g.degree > 0) | g.hub)
    return [int(s) for s in np.bincount(label[keep]) if s] if keep.any() else []


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A component label per node (the smallest node of its component), by label
    propagation over the edges (numpy, a few passes for the graphs drawn here)."""
    label = np.arange(n, dtype=np.int64)
    if not a.size:
        return label
    while True:
        m = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, m)
        np.minimum.at(new, b, m)
        new = new[new]  # pointer jumping
        if np.array_equal(new, label):
            return label
        label = new


def circle(count: int) -> np.ndarray:
    """Processors on a circle, 1 at the top, clockwise, about one unit apart."""
    if count <= 1:
        return np.zeros((count, 2))
    radius = max(count / (2 * math.pi), 1.0)
    angle = 2 * math.pi * np.arange(count) / count - math.pi / 2
    return np.column_stack((radius * (1 + np.cos(angle)), radius * (1 + np.sin(angle))))


# --------------------------------------------------------------------------- terminals


def _children(parent: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The terminals of each node, CSR (``kids[ptr[p]:ptr[p + 1]]``, ascending)."""
    t = np.flatnonzero(parent >= 0)
    order = np.argsort(parent[t], kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(parent[t], minlength=n), out=ptr[1:])
    return ptr, t[order]


def block_shape(k: int, cols: int) -> tuple[int, int]:
    """Columns and rows of a block of ``k`` terminals at most ``cols`` wide."""
    c = max(1, min(k, cols))
    return c, -(-k // c)


# --------------------------------------------------------------------------- layers


def spread(target: np.ndarray, gap: float) -> np.ndarray:
    """Positions as near ``target`` (in the order given) as keeps neighbours ``gap``
    apart: the mean of the leftmost and the rightmost such placement."""
    if not target.size:
        return target
    i = np.arange(target.size) * gap
    right = i + np.maximum.accumulate(target - i)
    left = i + np.minimum.accumulate((target - i)[::-1])[::-1]
    return (right + left) / 2


def _barycentre_order(members: np.ndarray, pos: np.ndarray, ptr: np.ndarray,
                      nbr: np.ndarray, rank: np.ndarray, toward: np.ndarray) -> np.ndarray:  # fmt: skip
    """``members`` reordered by the mean rank of their neighbours that ``toward``
    marks (those without any keep their rank among the others)."""
    lengths = ptr[members + 1] - ptr[members]
    owner = np.repeat(np.arange(members.size), lengths)
    near = _gather(ptr, nbr, members)
    use = toward[near]
    sums = np.bincount(owner[use], weights=rank[near[use]], minlength=members.size)
    hits = np.bincount(owner[use], minlength=members.size)
    key = np.where(hits > 0, sums / np.maximum(hits, 1), pos)
    return members[np.lexsort((pos, key))]


def layered(g: Graph, level: np.ndarray, parent: np.ndarray, ordered: bool = False,
            kind: str = "levels") -> GraphDrawing:  # fmt: skip
    """Layers (module text): ``level`` per node; terminals (``parent``) below their
    switch in blocks, along their bus's bar in a row. With ``ordered`` each level keeps
    its number order and the levels above the lowest are spread evenly over the width."""
    n, count = g.n, g.count
    core = parent < 0
    alone = core & (g.degree == 0) & ~g.hub
    placed = core & ~alone
    kptr, kids = _children(parent, n)
    nkids = np.diff(kptr)
    rows_of = sorted(set(level[placed].tolist()))
    # the base row: the lowest level of switches or buses (1), its terminals below it
    base = next((lv for lv in rows_of if lv >= 1), rows_of[0] if rows_of else 0)
    ptr, nbr = adjacency(n, g.lo, g.hi)
    rank = np.zeros(n)
    by_level = {lv: np.flatnonzero(placed & (level == lv)) for lv in rows_of}
    for members in by_level.values():
        rank[members] = np.arange(members.size)
    if not ordered:  # crossing reduction: barycentre sweeps up, then down
        for _ in range(SWEEPS):
            steps = [(i, i - 1) for i in range(1, len(rows_of))]
            steps += [(i, i + 1) for i in range(len(rows_of) - 2, -1, -1)]
            for i, j in steps:
                lv = rows_of[i]
                toward = placed & (level == rows_of[j])
                members = _barycentre_order(by_level[lv], rank[by_level[lv]], ptr, nbr,
                                            rank, toward)  # fmt: skip
                by_level[lv] = members
                rank[members] = np.arange(members.size)
    hang = by_level.get(base, np.zeros(0, np.int64))
    k_of = nkids[hang]
    bus = g.hub[hang]
    upper = sum(lv > base for lv in rows_of)
    lower = any(lv < base for lv in rows_of)
    cols = _block_cols(k_of, bus, upper, lower)
    c_of = np.where(bus, np.maximum(k_of, 1), np.maximum(np.minimum(k_of, cols), 1))
    # a long bus with nothing above it: its processors on both sides of the bar
    both = bus & (k_of > BUS_ROW) & (upper == 0)
    c_of = np.where(both, -(-k_of // 2), c_of)
    depth = np.where(k_of > 0, np.where(bus, 1, -(-k_of // c_of)), 0)
    widths = c_of.astype(np.float64) + 0.5 * both
    xy = np.zeros((n, 2))
    left = np.concatenate(([0.0], np.cumsum(widths + 1.0)[:-1]))
    xy[hang, 0] = left + (widths - 1) / 2
    width = float(left[-1] + widths[-1]) if hang.size else 1.0
    gap = LEVEL_GAP if k_of.any() else max(2.0, round(width / (ASPECT * max(upper, 1))))
    for lv in rows_of:  # above the base: over the mean of their neighbours below
        if lv <= base:
            continue
        members = by_level[lv]
        step = max(1.0, min(width / members.size, 2.5))
        if ordered:
            even = (np.arange(members.size) + 0.5) * width / members.size - 0.5
            xy[members, 0] = even
        else:
            target = _mean_of(members, ptr, nbr, xy[:, 0], (level < lv) & placed)
            none = np.isnan(target)
            target[none] = (np.flatnonzero(none) + 0.5) * width / members.size - 0.5
            order = np.lexsort((rank[members], target))
            by_level[lv] = members = members[order]
            xy[members, 0] = spread(target[order], step)
        xy[members, 1] = -(lv - base) * gap
    # terminals: a block (switch) or a row (bus) below their parent on the base row,
    # a block of more than one row wired as an org chart (Bends); a long bus's first
    # half above its bar, the rest below, half a unit on; those of nodes on other rows
    # in a row below each (all at once: a fat tree has thousands of leaves)
    on_base = np.zeros(n, dtype=bool)
    on_base[hang] = True
    cols_of, wide, two = np.ones(n, np.int64), np.ones(n), np.zeros(n, dtype=bool)
    cols_of[hang], wide[hang], two[hang] = c_of, widths, both
    par = parent[kids]
    j = np.arange(kids.size) - kptr[par]  # place among its parent's terminals
    c, px, py = cols_of[par], xy[par, 0], xy[par, 1]
    below = j >= c
    x = np.where(two[par], px - (wide[par] - 1) / 2 + np.where(below, j - c + 0.5, j),
                 px - (c - 1) / 2 + j % c)  # fmt: skip
    y = np.where(two[par], np.where(below, HANG, -HANG), HANG + j // c)
    off = ~on_base[par]  # a row below a node on another row
    x = np.where(off, px - (nkids[par] - 1) / 2 + j, x)
    y = np.where(off, py + HANG, y)
    xy[kids, 0], xy[kids, 1] = x, y
    bent = on_base[par] & ~g.hub[par] & (nkids[par] > c)
    bends = None
    if bent.any():
        t, h = kids[bent], par[bent]
        bends = Bends(np.column_stack((t, h)), _org_chart(xy[t], xy[h], j[bent] % c[bent]))
    # levels below the base (compute processors of more than one link): rows beneath
    floor = HANG + float(depth.max(initial=0)) + 1.0
    for lv in rows_of:
        if lv >= base:
            continue
        members = by_level[lv]
        target = _mean_of(members, ptr, nbr, xy[:, 0], (level > lv) & placed)
        none = np.isnan(target)
        target[none] = np.flatnonzero(none).astype(float)
        order = np.lexsort((rank[members], target))
        xy[members[order], 0] = spread(target[order], 1.0)
        xy[members, 1] = floor + (base - 1 - lv) * 2.0
    xy = _with_alone(xy, alone)
    # places of their own first (a terminal moves along its level, which is along its
    # bar), then the bars through them: a bar made before reached short of a terminal
    # moved off it
    xy[:count] = pos = apart(xy[:count])
    bars = _bars(g, xy, parent, horizontal=True)
    shift = pos.min(axis=0) if count else np.zeros(2)
    bends = bends.moved(-shift) if bends is not None else None
    return GraphDrawing(kind, pos - shift, level[:count].copy(), _moved(bars, -shift),
                        bends=bends)  # fmt: skip


def _org_chart(t: np.ndarray, h: np.ndarray, col: np.ndarray) -> np.ndarray:
    """The bends of the links from switches at ``h`` (rows) to their terminals at
    ``t`` (column ``col`` of their block) below them: across to the spine between its
    pair of columns (an odd last column: the spine on its right), up the spine to a
    rail under the switch, along the rail to below the switch. Returns (terminals, 3,
    2)."""
    left = t[:, 0] - col  # the block's first column
    spine = left + 2 * (col // 2) + 0.5
    rail = h[:, 1] + HANG * 0.5
    out = np.empty((t.shape[0], 3, 2))
    out[:, 0, 0], out[:, 0, 1] = spine, t[:, 1]
    out[:, 1, 0], out[:, 1, 1] = spine, rail
    out[:, 2, 0], out[:, 2, 1] = h[:, 0], rail
    return out


def _block_cols(k_of: np.ndarray, bus: np.ndarray, upper: int, lower: bool) -> int:
    """The widest a switch's block of terminals may be: the choice that brings the
    picture (blocks side by side on the base row, ``upper`` levels above it, rows of
    processors beneath when ``lower``) nearest :data:`ASPECT`."""
    k_sw = k_of[~bus]
    if not k_sw.size or int(k_sw.max(initial=0)) <= 1:
        return 1
    fixed = float(np.maximum(k_of[bus], 1).sum()) + max(k_of.size - 1, 0)
    best, best_cols = math.inf, 1
    top = int(k_sw.max())
    # every width up to 64, then 200 steps apart by a constant ratio (a star of 100,000)
    tries = sorted(set(range(1, min(top, 64) + 1))
                   | set(np.geomspace(1, top, 200).astype(np.int64).tolist()))  # fmt: skip
    for c in tries:
        cols = np.maximum(np.minimum(k_sw, c), 1)
        rows = -(-k_sw // cols)
        w = float(cols.sum()) + fixed
        h = upper * LEVEL_GAP + HANG + float(rows.max()) + (2.0 if lower else 0.0)
        score = abs(math.log(w / h / ASPECT))
        if score < best - 1e-9:
            best, best_cols = score, c
    return best_cols


def _mean_of(members: np.ndarray, ptr: np.ndarray, nbr: np.ndarray, x: np.ndarray,
             which: np.ndarray) -> np.ndarray:  # fmt: skip
    """The mean ``x`` of each member's neighbours that ``which`` marks (NaN: none)."""
    lengths = ptr[members + 1] - ptr[members]
    owner = np.repeat(np.arange(members.size), lengths)
    near = _gather(ptr, nbr, members)
    use = which[near]
    sums = np.bincount(owner[use], weights=x[near[use]], minlength=members.size)
    hits = np.bincount(owner[use], minlength=members.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(hits > 0, sums / np.maximum(hits, 1), np.nan)


def _with_alone(xy: np.ndarray, alone: np.ndarray) -> np.ndarray:
    """Nodes with no link at all in a row below the rest."""
    idx = np.flatnonzero(alone)
    if idx.size:
        rest = ~alone
        y = float(xy[rest, 1].max()) + 2.0 if rest.any() else 0.0
        x0 = float(xy[rest, 0].min()) if rest.any() else 0.0
        xy[idx, 0] = x0 + np.arange(idx.size)
        xy[idx, 1] = y
    return xy


def _bars(g: Graph, xy: np.ndarray, parent: np.ndarray, horizontal: bool,
          direction: np.ndarray | None = None) -> Bars:  # fmt: skip
    """The bar of each bus: through its node's place, horizontal (layers) or along
    ``direction`` (per bus), from half a unit before its first terminal to half a unit
    past its last (a bus without terminals: past its first and last member); its other
    members join it where it is nearest them."""
    hubs = np.flatnonzero(g.hub)
    if not hubs.size:
        return Bars.empty()
    ptr, nbr = adjacency(g.n, g.lo, g.hi)
    ends = np.zeros((hubs.size, 4))
    members, counts = [], []
    for k, h in enumerate(hubs.tolist()):
        m = np.sort(nbr[ptr[h] : ptr[h + 1]])
        m = m[m < g.count]
        members.append(m)
        counts.append(m.size)
        d = np.array([1.0, 0.0]) if horizontal or direction is None else direction[k]
        own = m[parent[m] == h] if (parent[m] == h).any() else m
        t = (xy[own] - xy[h]) @ d if own.size else np.zeros(1)
        lo, hi = min(float(t.min()), 0.0) - 0.5, max(float(t.max()), 0.0) + 0.5
        ends[k] = (*(xy[h] + lo * d), *(xy[h] + hi * d))
    ptr_out = np.zeros(hubs.size + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr_out[1:])
    return Bars(g.bus_ids.copy(), ends, ptr_out,
                np.concatenate(members) if members else np.zeros(0, np.int64))  # fmt: skip


def _moved(bars: Bars, by: np.ndarray) -> Bars:
    if not len(bars):
        return bars
    return Bars(bars.ids, bars.ends + np.tile(by, 2), bars.ptr, bars.members)


# --------------------------------------------------------------------------- force


def force(g: Graph, parent: np.ndarray, seed: int = SEED) -> GraphDrawing:
    """Force-directed (module text): each connected part of the core by networkx's
    ``spring_layout`` (seeded), scaled so that its terminals fit between, the parts
    side by side, terminals outward of their parent."""
    import networkx as nx

    n, count = g.n, g.count
    core = parent < 0
    alone = core & (g.degree == 0) & ~g.hub
    inner = core[g.lo] & core[g.hi]
    lo, hi = g.lo[inner], g.hi[inner]
    kptr, kids = _children(parent, n)
    nkids = np.diff(kptr)
    # the room each core node's terminals take, as a radius
    foot = np.zeros(n)
    for h in np.flatnonzero(nkids).tolist():
        k = int(nkids[h])
        if not g.hub[h] and k <= FAN:
            foot[h] = _arc(k)[0]
            continue
        c, r = (k, 1) if g.hub[h] else _fan(k)
        foot[h] = math.hypot(HANG + r - 1, c / 2)
    label = _components(n, lo, hi)
    nodes = np.flatnonzero(core & ~alone)
    parts: dict[int, list[int]] = {}
    for v in nodes.tolist():
        parts.setdefault(int(label[v]), []).append(v)
    xy = np.zeros((n, 2))
    outward = np.zeros((n, 2))
    outward[:, 1] = 1.0
    room = np.full(n, 2 * math.pi)  # the angle free of links about each node
    ptr, nbr = adjacency(n, lo, hi)
    boxes = []
    for members in sorted(parts.values(), key=lambda m: (-len(m), m[0])):
        m = np.asarray(members, dtype=np.int64)
        if m.size == 1:
            pos = np.zeros((1, 2))
        elif m.size == 2:
            pos = np.array([[0.0, 0.0], [1.0, 0.0]])
        else:
            sub = nx.Graph()
            sub.add_nodes_from(m.tolist())
            keep = np.isin(lo, m)
            sub.add_edges_from(zip(lo[keep].tolist(), hi[keep].tolist()))
            placed = nx.spring_layout(sub, seed=seed, iterations=FORCE_STEPS, method="force")
            pos = np.array([placed[v] for v in m.tolist()], dtype=np.float64)
        # scale: linked core nodes far enough apart for their terminals between them
        at = {v: i for i, v in enumerate(m.tolist())}
        keep = np.isin(lo, m)
        ia = np.array([at[v] for v in lo[keep].tolist()], dtype=np.int64)
        ib = np.array([at[v] for v in hi[keep].tolist()], dtype=np.int64)
        scale = 1.0
        if ia.size:
            length = np.hypot(*(pos[ia] - pos[ib]).T)
            need = foot[m[ia]] + foot[m[ib]] + 2.0
            scale = float(np.percentile(need / np.maximum(length, 1e-9), 75))
        if m.size >= 2:  # no two core nodes nearer than a unit, if it takes little
            d = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
            np.fill_diagonal(d, np.inf)
            nearest = float(d.min())
            if nearest > 1e-9:
                scale = min(max(scale, 1.0 / nearest), 4 * scale)
        pos = pos * scale
        xy[m] = pos
        xy = untangle(xy, m, lo[keep], hi[keep])
        pos = xy[m]
        # outward: the middle of the widest angle between the node's links (away from
        # the centre when it has none)
        centre = pos.mean(axis=0)
        for i, v in enumerate(m.tolist()):
            if not nkids[v]:
                continue
            near = nbr[ptr[v] : ptr[v + 1]]
            if near.size:
                d = xy[near] - pos[i]
                angles = np.sort(np.arctan2(d[:, 1], d[:, 0]))
                gaps = np.diff(np.concatenate((angles, angles[:1] + 2 * math.pi)))
                j = int(np.argmax(gaps))
                middle = angles[j] + gaps[j] / 2
                outward[v] = (math.cos(middle), math.sin(middle))
                room[v] = float(gaps[j])
            else:
                away = pos[i] - centre
                norm = float(np.hypot(*away))
                outward[v] = away / norm if norm > 1e-9 else (0.0, 1.0)
        boxes.append(m)
    # terminals: a bus's in a row beside its bar; a few on an arc outward of their
    # switch (each link its own direction: none runs over another terminal); more in
    # a block of rows outward
    for h in np.flatnonzero(nkids).tolist():
        t = kids[kptr[h] : kptr[h + 1]]
        k = t.size
        out = outward[h]
        across = np.array([-out[1], out[0]])
        j = np.arange(k)
        if not g.hub[h] and k <= FAN:
            radius, step = _arc(k, room[h])
            angle = (j - (k - 1) / 2) * step
            xy[t] = xy[h] + radius * (
                np.cos(angle)[:, None] * out + np.sin(angle)[:, None] * across
            )
            continue
        c, _ = (k, 1) if g.hub[h] else _fan(k)
        row, col = j // c, j % c
        xy[t] = (xy[h] + out * (HANG + row)[:, None]
                 + across * (col - (min(c, k) - 1) / 2)[:, None])  # fmt: skip
    # terminals that still lie on a link between core nodes turn about their switch
    # until they are off it
    fanned = np.flatnonzero((parent >= 0) & ~g.hub[np.maximum(parent, 0)])
    xy = _turn_off_links(xy, fanned, parent, lo, hi)
    # the parts side by side, largest first, tops aligned
    x = 0.0
    for m in boxes:
        group = np.concatenate([m] + [kids[kptr[v] : kptr[v + 1]] for v in m.tolist()])
        lo_xy = xy[group].min(axis=0)
        xy[group] += (x - lo_xy[0], -lo_xy[1])
        x = float(xy[group, 0].max()) + 2.0
    xy = _with_alone(xy, alone)
    hubs = np.flatnonzero(g.hub)
    direction = np.column_stack((-outward[hubs, 1], outward[hubs, 0]))
    # places of their own first, a bus's terminal moved along its bar (its distance
    # from the bar kept), then the bars through them
    along = np.zeros((count, 2))
    along[:, 0] = 1.0
    on_bus = np.flatnonzero((parent[:count] >= 0) & g.hub[np.maximum(parent[:count], 0)])
    hub = parent[on_bus]
    along[on_bus] = np.column_stack((-outward[hub, 1], outward[hub, 0]))
    xy[:count] = pos = apart(xy[:count], along)
    bars = _bars(g, xy, parent, horizontal=False, direction=direction)
    shift = pos.min(axis=0) if count else np.zeros(2)
    pos = pos - shift
    return GraphDrawing("force", pos, None, _moved(bars, -shift))


def _fan(k: int) -> tuple[int, int]:
    """Columns and rows of a switch's terminals in the force-directed drawing: up to
    :data:`FAN` on an arc (as wide as a row of them, one row deep), more in a square
    block."""
    if k <= FAN:
        return k, 1
    c = math.ceil(math.sqrt(k))
    return c, -(-k // c)


def _arc(k: int, room: float = 2 * math.pi) -> tuple[float, float]:
    """The radius and the angle between neighbours of an arc of ``k`` terminals about
    their switch: a unit apart, over at most a third of a turn and at most 60 % of the
    angle free of links (``room``)."""
    spread = max(min(2 * math.pi / 3, 0.6 * room), 0.2)
    radius = max(HANG, (k - 1) / spread) if k > 1 else HANG
    return radius, 1.0 / radius


def _on_links(point: np.ndarray, pa: np.ndarray, d: np.ndarray, length2: np.ndarray,
              skip: np.ndarray) -> bool:  # fmt: skip
    """Whether ``point`` lies within :data:`CLEAR` of a link (``pa`` + t ``d``, between
    its ends) that ``skip`` does not mark."""
    t = ((point - pa) * d).sum(axis=1) / length2
    gap = np.hypot(*(pa + d * t[:, None] - point).T)
    return bool(((t > 0.05) & (t < 0.95) & ~skip & (gap < CLEAR)).any())


def _turn_off_links(xy: np.ndarray, nodes: np.ndarray, parent: np.ndarray, a: np.ndarray,
                    b: np.ndarray) -> np.ndarray:  # fmt: skip
    """``xy`` with each terminal of ``nodes`` that lies on a link ``a[i]-b[i]`` turned
    about its parent, a little at a time either way (up to half a turn), to the
    first place off every link and a unit from every other terminal (further out if
    none is; :func:`_spots`); left where it is when there is none. Within :data:`UNTANGLE_WORK`, like :func:`untangle`."""
    if not a.size or nodes.size * a.size > UNTANGLE_WORK:
        return xy
    pa, d = xy[a], xy[b] - xy[a]
    length2 = np.maximum((d**2).sum(axis=1), 1e-12)
    for p in nodes.tolist():
        h = int(parent[p])
        skip = (a == h) | (b == h)
        if not _on_links(xy[p], pa, d, length2, skip):
            continue
        v = xy[p] - xy[h]
        radius, start = float(np.hypot(*v)), math.atan2(v[1], v[0])
        others = nodes[nodes != p]
        for spot in _spots(xy[h], radius, start):
            near = np.hypot(*(xy[others] - spot).T).min(initial=np.inf)
            if near >= 1.0 and not _on_links(spot, pa, d, length2, skip):
                xy[p] = spot
                break
    return xy


def _spots(centre: np.ndarray, radius: float, start: float) -> list[np.ndarray]:
    """Places about ``centre`` nearest first: a fifth of a radian at a time either way
    up to half a turn, at the radius given, then half a unit and a unit further out."""
    out = []
    for r in (radius, radius + 0.5, radius + 1.0):
        for k in range(0 if r > radius else 1, 16):
            for sign in (1, -1) if k else (1,):
                angle = start + sign * k * 0.2
                out.append(centre + r * np.array([math.cos(angle), math.sin(angle)]))
    return out


def untangle(xy: np.ndarray, nodes: np.ndarray, a: np.ndarray, b: np.ndarray,
             clear: float = CLEAR, passes: int = 4) -> np.ndarray:  # fmt: skip
    """``xy`` with each of ``nodes`` that lies on a link ``a[i]-b[i]`` it is not an end
    of (nearer than ``clear`` to it, between its ends) moved off it, at right angles,
    a few passes over all (what a force-directed layout leaves of near-collinear
    triples). Done only while nodes x links stays under :data:`UNTANGLE_WORK`."""
    if not a.size or nodes.size * a.size > UNTANGLE_WORK:
        return xy
    for _ in range(passes):
        pa, pb = xy[a], xy[b]
        d = pb - pa
        length2 = np.maximum((d**2).sum(axis=1), 1e-12)
        moved = False
        for p in nodes.tolist():
            t = ((xy[p] - pa) * d).sum(axis=1) / length2
            foot = pa + d * t[:, None]
            away = xy[p] - foot
            gap = np.hypot(away[:, 0], away[:, 1])
            hit = (t > 0.05) & (t < 0.95) & (a != p) & (b != p) & (gap < clear)
            if not hit.any():
                continue
            i = int(np.flatnonzero(hit)[np.argmin(gap[hit])])
            if gap[i] > 1e-9:
                unit = away[i] / gap[i]
            else:  # on the line: to its left
                unit = np.array([-d[i, 1], d[i, 0]]) / math.sqrt(length2[i])
            xy[p] = foot[i] + unit * clear * 1.5
            moved = True
        if not moved:
            break
    return xy


# --------------------------------------------------------------------------- checks


def apart(xy: np.ndarray, along: np.ndarray | None = None) -> np.ndarray:
    """``xy`` with every row at a place of its own: a row that shares its place
    (to 1e-6) with an earlier one moves a third of a unit to the right (or along its
    row of ``along``, unit vectors: a bus's terminal along its bar), as often as it
    takes."""
    xy = np.array(xy, dtype=np.float64)
    step = np.array([[1.0, 0.0]]) if along is None else np.asarray(along, dtype=np.float64)
    if not np.isfinite(xy).all():
        xy[~np.isfinite(xy)] = 0.0
    for _ in range(64):
        key = np.round(xy * 1e6)
        order = np.lexsort((key[:, 1], key[:, 0]))
        k = key[order]
        same = np.concatenate(([False], (k[1:] == k[:-1]).all(axis=1)))
        if not same.any():
            return xy
        moved = order[same]
        xy[moved] += step[moved if step.shape[0] > 1 else 0] / 3.0
    return xy
