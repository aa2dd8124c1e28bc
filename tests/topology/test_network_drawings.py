"""Networks drawn so a person can read them (issue 33, item 4), in the core (no Qt):
the graph drawings of :mod:`parasol_core.topology.graph_layout` hold for any network
(every processor placed, finite, apart, the same every time, buses as bars), tori of 3
to 6 dimensions are full grids of blocks, and SimGrid's dragonfly, a flat cluster with
a backbone and buses as an explicit zone routes them are drawn as what they are."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from network_platforms import machine

from parasol_core.topology import generate, graph_layout
from parasol_core.topology.graph_layout import draw, graph, terminals
from parasol_core.topology.layout import nested_arrangement, nested_grid, placement, segments
from parasol_core.topology.shape import Shape
from parasol_core.topology.switches import switch_mask


def laid_out(name: str):
    m = machine(name)
    hw = m.hardware()
    mask = switch_mask(m, hw)
    return hw, mask[1:], placement(hw, switches=mask)


def distinct(xy: np.ndarray) -> bool:
    return len({tuple(p) for p in np.round(xy, 6).tolist()}) == xy.shape[0]


# --------------------------------------------------------------------------- any network


@st.composite
def networks(draw_):
    """A processor count, two-processor links, buses and switches, any of them."""
    n = draw_(st.integers(1, 40))
    pairs = draw_(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                           max_size=3 * n))  # fmt: skip
    bus = st.lists(st.integers(0, n - 1), min_size=3, max_size=9, unique=True)
    buses = draw_(st.lists(bus, max_size=3)) if n >= 3 else []
    switches = draw_(st.none() | st.lists(st.booleans(), min_size=n, max_size=n))
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    bus_list = [(100 + k, np.array(m, dtype=np.int64)) for k, m in enumerate(buses)]
    mask = None if switches is None else np.array(switches, dtype=bool)
    return n, a, b, bus_list, mask


@settings(max_examples=80, deadline=None)
@given(networks())
def test_every_processor_is_placed_apart_at_a_finite_place_the_same_every_time(net):
    n, a, b, buses, mask = net
    d = draw(n, a, b, buses, mask)
    assert d.xy.shape == (n, 2)
    assert np.isfinite(d.xy).all()
    assert distinct(d.xy)
    again = draw(n, a.copy(), b.copy(), [(i, m.copy()) for i, m in buses], mask)
    assert again.kind == d.kind and np.array_equal(again.xy, d.xy)
    assert np.array_equal(again.bars.ends, d.bars.ends)
    if d.note is not None:  # a fallback says what it did
        assert "not run" in d.note


@settings(max_examples=80, deadline=None)
@given(networks())
# two buses alike and a third: its one terminal, on another's place, was moved aside
# after its bar was drawn, past the bar's end (1.509 from it, not 1.5)
@example((6, np.array([0, 1]), np.array([3, 4]),
          [(100, np.array([0, 1, 2])), (101, np.array([0, 1, 2])), (102, np.array([5, 0, 1]))],
          None))  # fmt: skip
def test_buses_are_bars_their_processors_hang_off(net):
    n, a, b, buses, mask = net
    d = draw(n, a, b, buses, mask)
    g = graph(n, a, b, buses, mask)
    parent = terminals(g)
    assert d.bars.ids.tolist() == g.bus_ids.tolist()  # every bus of three or more
    for k, lid in enumerate(d.bars.ids.tolist()):
        members = sorted(set(dict(buses)[lid].tolist()))
        assert d.bars.members_of(k).tolist() == members
        x0, y0, x1, y1 = d.bars.ends[k]
        assert np.isfinite(d.bars.ends[k]).all() and np.hypot(x1 - x0, y1 - y0) >= 1.0 - 1e-9
        if d.kind in ("levels", "bus"):
            assert y0 == y1  # in layers, bars are level
        # the processors that hang off this bus alone: a row beside the bar, each with
        # a foot of its own on it, at the same distance
        own = np.array([p for p in members if parent[p] == n + k], dtype=np.int64)
        if own.size:
            feet = d.bars.foot(k, d.xy[own])
            dist = np.hypot(*(d.xy[own] - feet).T)
            assert np.allclose(dist, graph_layout.HANG)
            assert distinct(feet)


@pytest.mark.parametrize("n", [3, 6, 12, 13, 42])
def test_a_bus_is_a_bar_over_a_row_of_its_processors(n):
    """A row below the bar; a long bus (FWI's Ethernet of 42) the first half above it
    and the rest below, half a unit along, so that it is half as wide."""
    where = placement(generate("bus", (n,), 1e-5, 1e-6))
    assert where.kind == "bus"
    (x0, y0, x1, y1), = where.bars.ends.tolist()  # fmt: skip
    assert y0 == y1
    assert x0 < where.xy[:, 0].min() and x1 > where.xy[:, 0].max()
    rows = [np.arange(n)] if n <= graph_layout.BUS_ROW else np.array_split(np.arange(n), 2)
    for row, side in zip(rows, (1, -1) if len(rows) == 1 else (-1, 1)):
        y = where.xy[row, 1]
        assert np.all(y - y0 == side * graph_layout.HANG)
        assert np.all(np.diff(where.xy[row, 0]) == 1)  # in number order
    assert np.ptp(where.xy[:, 0]) + 1 <= (n if n <= graph_layout.BUS_ROW else n / 2 + 1)


# --------------------------------------------------------------------------- tori


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(2, 6), min_size=3, max_size=6).filter(
    lambda d: int(np.prod(d)) <= 20000))  # fmt: skip
def test_tori_of_3_to_6_dimensions_are_full_grids_of_blocks(dims):
    """Every processor at a place of its own; unless a dimension of 5 blocks is folded
    (a prime number of blocks may leave places of the last row empty), the picture's
    rows and columns are full: each row holds as many processors as every other, each
    column too (no L of blocks)."""
    xy = nested_grid(Shape(tuple(dims)))
    assert np.isfinite(xy).all() and distinct(xy)
    if 5 in dims[2:]:
        return
    xs, ys = np.unique(xy[:, 0]), np.unique(xy[:, 1])
    assert xs.size * ys.size == xy.shape[0]


def test_a_4x4x4_torus_is_2_by_2_blocks_not_an_l():
    assert nested_arrangement((4, 4, 4)) == [(2, 2)]
    hw, _, where = laid_out("torus")
    assert where.kind == "layers" and hw.shape == (4, 4, 4)
    xs, ys = np.unique(where.xy[:, 0]), np.unique(where.xy[:, 1])
    assert xs.size == 8 and ys.size == 8  # blocks across and down, every place full


# --------------------------------------------------------------------------- SimGrid's


def crossings_of_processors(xy: np.ndarray, a: np.ndarray, b: np.ndarray,
                            among: np.ndarray, within: float = 0.25) -> int:  # fmt: skip
    """How many links a[i]-b[i] pass within ``within`` units of a processor of
    ``among`` that they do not join."""
    pa, pb = xy[a], xy[b]
    d = pb - pa
    length2 = np.maximum((d**2).sum(axis=1), 1e-12)
    hits = 0
    for p in among.tolist():
        t = ((xy[p] - pa) * d).sum(axis=1) / length2
        inside = (t > 0) & (t < 1) & (a != p) & (b != p)
        gap = np.hypot(*(pa + d * t[:, None] - xy[p]).T)
        hits += int((inside & (gap < within)).sum())
    return hits


def test_simgrids_dragonfly_is_drawn_force_directed_not_a_comb():
    hw, switch, where = laid_out("dragonfly")
    assert where.kind == "force" and where.note is None
    routers = np.flatnonzero(switch)
    assert routers.size == 60
    # not a comb: the routers are spread over many rows and columns
    assert np.unique(np.round(where.xy[routers, 1], 2)).size > 30
    assert np.unique(np.round(where.xy[routers, 0], 2)).size > 30
    # no link between routers runs over a third router
    ids, a, b = segments(hw, where)
    inner = switch[a] & switch[b]
    assert crossings_of_processors(where.xy, a[inner], b[inner], routers) == 0
    # few links run over a host, and a host is nearer its own router than any other
    # (all but a few of them: a router has a dozen links, in every direction)
    hosts = np.flatnonzero(~switch)
    assert crossings_of_processors(where.xy, a, b, hosts) <= hosts.size // 10
    own = {}
    for x, y in zip(a.tolist(), b.tolist()):
        if switch[x] != switch[y]:
            own[x if not switch[x] else y] = y if not switch[x] else x
    d = np.hypot(*(where.xy[hosts, None, :] - where.xy[None, routers, :]).transpose(2, 0, 1))
    nearest = routers[d.argmin(axis=1)]
    assert sum(int(r) == own[h] for r, h in zip(nearest, hosts.tolist())) >= 0.95 * hosts.size


def test_a_flat_clusters_backbone_is_a_bar_its_ports_hang_off():
    hw, switch, where = laid_out("backbone")
    assert where.kind == "levels"
    assert len(where.bars) == 1
    x0, y0, x1, y1 = where.bars.ends[0]
    assert y0 == y1
    hosts, ports, router = np.arange(8), np.arange(8, 16), 16
    assert switch[ports].all() and switch[router]
    assert sorted(where.bars.members_of(0).tolist()) == [*ports.tolist(), router]
    # the ports in a row below the bar, each over its host; the router above the bar
    assert np.all(where.xy[ports, 1] == where.xy[ports[0], 1]) and where.xy[ports[0], 1] > y0
    assert np.all(np.diff(where.xy[ports, 0]) > 0)
    assert np.array_equal(where.xy[hosts, 0], where.xy[ports, 0])
    assert np.all(where.xy[hosts, 1] > where.xy[ports, 1])
    assert where.xy[router, 1] < y0
    assert x0 <= where.xy[ports, 0].min() and x1 >= where.xy[ports, 0].max()
    ids, _, _ = segments(hw, where)
    assert where.bars.ids[0] not in ids.tolist()  # not a chain of switches


def test_buses_of_an_explicit_zone_are_bars_joined_by_their_switch():
    hw, switch, where = laid_out("buses")
    assert hw.processor_count == 7 and switch.tolist() == [False] * 6 + [True]
    assert len(where.bars) == 2
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = where.bars.ends.tolist()
    assert ay0 == ay1 == by0 == by1
    assert ax1 < bx0  # two bars, apart: not one line
    for k, hosts in enumerate(([0, 1, 2], [3, 4, 5])):
        assert sorted(where.bars.members_of(k).tolist()) == [*hosts, 6]
        y = where.xy[hosts, 1]
        assert np.all(y == y[0]) and y[0] > ay0  # hanging in a row below their bar
    # the switch joins both bars, from above, between them
    feet = [where.bars.foot(k, where.xy[[6]])[0] for k in range(2)]
    assert where.xy[6, 1] < ay0 and feet[0][0] == ax1 and feet[1][0] == bx0
    assert ax1 < where.xy[6, 0] < bx0


def test_a_star_of_hosts_round_one_router_is_a_block_below_it():
    text = """<?xml version="1.0"?><platform version="4.1"><zone id="w" routing="Full">
      <cluster id="c" prefix="n" suffix="" radical="0-63" speed="1Gf" bw="1GBps" lat="1us"/>
      </zone></platform>"""
    from parasol_core.simgrid import import_text

    m = import_text(text).machine
    hw = m.hardware()
    where = placement(hw, switches=switch_mask(m, hw))
    assert where.kind == "levels"
    w, h = np.ptp(where.xy, axis=0) + 1
    assert 0.75 <= w / h <= 3  # a block, not a row of 64
    assert (where.xy[:64, 1] > where.xy[64, 1]).all()


# --------------------------------------------------------------------------- budgets


def test_past_its_budget_the_force_layout_is_not_run_and_the_fallback_is_named(monkeypatch):
    import networkx as nx

    def refused(*args, **kwargs):
        raise AssertionError("the force-directed layout ran past its budget")

    monkeypatch.setattr(nx, "spring_layout", refused)
    monkeypatch.setattr(graph_layout, "FORCE_BUDGET", 1000)
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 30, (2, 60))
    d = draw(30, a, b)
    assert d.kind == "circle" and np.isfinite(d.xy).all() and distinct(d.xy)
    assert "budget of 1,000" in d.note and "circle" in d.note
    # a switched network falls back to its layers
    hw, switch, _ = laid_out("dragonfly")
    where = placement(hw, switches=np.concatenate(([False], switch)))
    assert where.kind == "levels" and "in layers" in where.note and distinct(where.xy)


def test_a_part_too_large_for_networkx_dense_solver_is_drawn_on_a_circle():
    n = graph_layout.FORCE_NODES + 101
    a = np.arange(n)
    b = (a + 1) % n  # one part of 600: past the dense solver, whatever the budget
    b2 = (a + 7) % n
    d = draw(n, np.concatenate((a, a)), np.concatenate((b, b2)))
    assert d.kind == "circle" and "dense solver" in d.note
