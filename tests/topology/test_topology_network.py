"""Route ids, network states and transfer times (docs/decisions.md, "Network state and
transfer time": t = sum of latencies + bytes * max(speed * routes sharing the link))."""

from pathlib import Path

import numpy as np
import pytest

from parasol_core import load
from parasol_core.model import Timing
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import bus, grid
from parasol_core.topology.index import route
from parasol_core.topology.transfer import RouteTable, transfer_time

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
LAT, SPD = 2.85e-05, 9.1e-07  # the GCel / grid4x4 link
B = 4096.0


@pytest.fixture
def grid4():
    return load(SAMPLES / "grid4x4.machine")


def formula(topology, r, state):
    """The formula of docs/decisions.md, spelled out independently of the implementation."""
    links = {link.id: link for link in topology.links}

    def n(lid):
        return sum(1 for other in state if lid in other.links)

    lat = sum(links[lid].latency.mean for lid in r.links)
    per_byte = max((links[lid].speed.mean * n(lid) for lid in r.links), default=0.0)
    return lat + B * per_byte


def test_one_message_alone(grid4):
    table = RouteTable.for_machine(grid4)
    rid = table.add(1, 4)  # three links along the bottom row
    assert table[rid].links == (1, 2, 3)
    state = table.state([rid])
    assert state.transfer_time(rid, B) == pytest.approx(3 * LAT + B * SPD, rel=1e-12)


def test_two_messages_sharing_one_link_double_the_per_byte_part(grid4):
    table = RouteTable.for_machine(grid4)
    long, short = table.add(1, 4), table.add(2, 3)  # both cross link 2 (2-3)
    state = table.state([long, short])
    assert state.load(2) == 2 and state.load(1) == 1
    assert state.transfer_time(long, B) == pytest.approx(3 * LAT + B * 2 * SPD, rel=1e-12)
    assert state.transfer_time(short, B) == pytest.approx(LAT + B * 2 * SPD, rel=1e-12)


def test_two_messages_on_disjoint_links_are_unchanged(grid4):
    table = RouteTable.for_machine(grid4)
    a, b = table.add(1, 4), table.add(5, 8)
    alone = table.state([a]).transfer_time(a, B)
    together = table.state([a, b]).transfer_time(a, B)
    assert together == alone == pytest.approx(3 * LAT + B * SPD, rel=1e-12)


def test_a_bottleneck_in_the_middle_of_the_route_sets_the_per_byte_part():
    line = grid([6], LAT, SPD)  # 1-2-3-4-5-6, links 1..5
    table = RouteTable(line)
    whole = table.add(1, 6)
    middle = [table.add(3, 4), table.add(4, 3)]  # two more messages on link 3 only
    state = table.state([whole, *middle])
    assert [state.load(lid) for lid in range(1, 6)] == [1, 1, 3, 1, 1]
    t = state.transfer_time(whole, B)
    assert t == pytest.approx(5 * LAT + B * 3 * SPD, rel=1e-12)
    assert t == pytest.approx(formula(line, table[whole], [table[r] for r in state.counts]))
    # a slow link in the middle, no other traffic: its own speed decides
    line.links[2].speed = Timing(4 * SPD)
    slow = RouteTable(line)
    rid = slow.add(1, 6)
    assert slow.state([rid]).transfer_time(rid, B) == pytest.approx(5 * LAT + B * 4 * SPD)


def test_states_are_multisets_and_track_their_load(grid4):
    table = RouteTable.for_machine(grid4)
    a, b = table.add(1, 4), table.add(2, 3)
    state = table.state([a, a, b])
    assert len(state) == 3 and state.load(2) == 3
    assert state.transfer_time(b, B) == pytest.approx(LAT + B * 3 * SPD, rel=1e-12)
    state.remove(a)
    assert state.load(2) == 2 and a in state
    state.remove(a)
    assert a not in state and state.load(1) == 0
    with pytest.raises(ValueError, match=f"route {a} is not in the network state"):
        state.transfer_time(a, B)
    with pytest.raises(KeyError):
        state.remove(a)
    state.add(a, 3)
    assert state.load(1) == 3
    assert np.array_equal(state.loads, table.state([a, a, a, b]).loads)
    with pytest.raises(KeyError, match="no route with id 99"):
        table.state([99])


def test_route_crossing_a_link_twice_counts_once_in_the_load():
    line = grid([3], LAT, SPD)  # XY on a line of 3...
    line.links = [bus(3, LAT, SPD).links[0]]  # ...whose only link is a bus
    line.link_count = 1
    table = RouteTable(line)
    once = table.add(1, 3)
    assert table[once].links == (1, 1)  # 1 -> 2 -> 3, both steps on the bus
    batch = table.add_many([1, 3], [3, 2])
    assert [table[int(i)].links for i in batch] == [(1, 1), (1,)]
    for rid in (once, int(batch[0])):
        state = table.state([rid])
        assert state.load(1) == 1
        assert state.transfer_time(rid, B) == pytest.approx(2 * LAT + B * SPD)
    assert table.state([once, *batch]).load(1) == 3


def test_a_message_to_itself_takes_no_time(grid4):
    table = RouteTable.for_machine(grid4)
    rid = table.add(7, 7)
    assert table.state([rid]).transfer_time(rid, B) == 0.0


def test_the_functional_form_counts_the_message_and_the_others(grid4):
    hw = grid4.hardware()
    r = route(hw, 1, 4)
    assert transfer_time(hw, r, [], B) == pytest.approx(3 * LAT + B * SPD)
    assert transfer_time(hw, r, [r], B) == pytest.approx(3 * LAT + B * 2 * SPD)  # two alike
    assert transfer_time(hw, r, [route(hw, 3, 4)], B) == pytest.approx(3 * LAT + B * 2 * SPD)


def test_table_transfer_time_adds_the_message_to_the_others(grid4):
    table = RouteTable.for_machine(grid4)
    a, b = table.add(1, 4), table.add(3, 4)
    assert table.transfer_time(a, [b], B) == pytest.approx(3 * LAT + B * 2 * SPD)
    assert table.transfer_time(a, [], B) == pytest.approx(3 * LAT + B * SPD)


def test_virtual_route_table_maps_virtual_processors(grid4):
    table = RouteTable.for_machine(grid4, 2)  # the ring: virtual 4 -> 5 is hardware 4 -> 8
    rid = table.add(4, 5)
    assert table[rid].processors == (4, 8)
    ids = table.add_many([4, 1], [5, 11])
    assert table[int(ids[0])] == table[rid]
    with pytest.raises(RoutingError, match="virtual processor 17 of virtual topology 2"):
        table.add(17, 1)
    with pytest.raises(RoutingError, match="virtual processor 0"):
        table.add_many([1, 0], [2, 2])


def test_batch_transfer_times_equal_single_ones_on_the_gcel():
    machine = load(SAMPLES / "parsytec-gcel.machine")
    hw = machine.hardware()
    table = RouteTable.for_machine(machine)
    rng = np.random.default_rng(3)
    src, dst = rng.integers(1, 513, 2000), rng.integers(1, 513, 2000)
    ids = table.add_many(src, dst)
    one_by_one = [table.add(int(s), int(d)) for s, d in zip(src[:50], dst[:50])]
    assert [table[i] for i in one_by_one] == [table[int(i)] for i in ids[:50]]
    state = table.state(ids)
    sizes = rng.uniform(1, 1e5, ids.shape[0])
    times = state.transfer_times(ids, sizes)
    for k in range(0, 2000, 37):
        assert times[k] == pytest.approx(state.transfer_time(int(ids[k]), sizes[k]), rel=1e-12)
    active = [table[int(i)] for i in ids]
    for k in (0, 1, 1999):
        r = table[int(ids[k])]
        by_hand = formula(hw, r, active)
        assert state.transfer_time(int(ids[k]), B) == pytest.approx(by_hand, rel=1e-12)
    every = state.transfer_times(nbytes=B)  # all distinct active routes, by id
    assert every.shape == (2000,) and every[5] == pytest.approx(state.transfer_time(int(ids[5]), B))
    with pytest.raises(ValueError, match="not in the network state"):
        table.state(ids[:10]).transfer_times(ids[10:12], B)


def test_a_link_without_a_speed_is_named(grid4):
    grid4.hardware().links[1].speed = None
    table = RouteTable.for_machine(grid4)
    rid = table.add(1, 4)
    with pytest.raises(RoutingError, match="link 2 of topology 1 has no speed"):
        table.state([rid]).transfer_time(rid, B)
