"""Phase.of and usage_of on many messages over few routes (a replay's shape: 10^6
messages on a few thousand routes): each route's latency is summed once and handed
out, the ragged gathers skip what their callers do without; the arrays are those of
the per-message definition, double for double, and a link without a usable latency
is still named with the first message that crosses it."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from parasol_core.model import Machine, Processor, Timing
from parasol_core.simulate.messages import MessageArrays, PhaseError
from parasol_core.simulate.trace import Phase
from parasol_core.syntax.loader import load
from parasol_core.topology import ragged, resources
from parasol_core.topology.generators import torus
from parasol_core.topology.ragged import gather, segment_reduce
from parasol_core.topology.resources import usage_of
from parasol_core.topology.transfer import RouteTable

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def routed(table: RouteTable, msgs: MessageArrays) -> np.ndarray:
    """Each message's route id, one route a pair of processors (as a replay plots them)."""
    pairs = sorted(set(zip(msgs.src.tolist(), msgs.dst.tolist())))
    ids = table.add_many(np.array([a for a, _ in pairs]), np.array([b for _, b in pairs]))
    of = {pair: int(i) for pair, i in zip(pairs, ids.tolist())}
    return np.array([of[pair] for pair in zip(msgs.src.tolist(), msgs.dst.tolist())])


def messages(count: int, procs: int, seed: int) -> MessageArrays:
    rng = np.random.default_rng(seed)
    src = rng.integers(1, procs + 1, count)
    dst = rng.integers(1, procs + 1, count)
    return MessageArrays(src, dst, rng.uniform(0, 1e6, count), np.zeros(count))


@pytest.mark.parametrize("name", ["grid4x4.machine", "parsytec-gcel.machine"])
def test_phase_arrays_are_the_per_message_definition(name):
    machine = load(SAMPLES / name)
    table = RouteTable.for_machine(machine)
    procs = table.index.count
    msgs = messages(3000, min(procs, 12), 1)  # 3,000 messages on at most 144 routes
    ids = routed(table, msgs)
    phase = Phase.of(table, ids, msgs)
    slots, ends, uslots, uends = table.arrays()
    index = table.index
    assert ends.shape[0] - 1 < ids.shape[0]  # the per-route path is the one taken
    # the definition: every message's crossings gathered, summed per message
    crossed = np.concatenate([slots[ends[r - 1] : ends[r]] for r in ids.tolist()])
    hops = ends[ids] - ends[ids - 1]
    starts = np.concatenate([[0], np.cumsum(hops)[:-1]])
    want = segment_reduce(np.add, index.latency[crossed], starts, hops)
    assert phase.latency.tolist() == want.tolist()
    for i, r in enumerate(ids.tolist()):
        distinct = uslots[uends[r - 1] : uends[r]]
        got = phase.u_flat[phase.u_start[i] : phase.u_start[i] + phase.u_hops[i]]
        assert got.tolist() == distinct.tolist()
    usage = usage_of(table, ids, table.options)
    assert (
        usage.start.tolist() == np.searchsorted(usage.owner, np.arange(ids.shape[0] + 1)).tolist()
    )


def test_gather_without_its_owners_gives_the_same_elements():
    flat = np.arange(100, 130)
    ends = np.array([0, 3, 3, 10, 30])
    pos = np.array([3, 0, 1, 2, 0, 3])
    got, which = gather(flat, ends, pos)
    want = np.concatenate([flat[ends[p] : ends[p + 1]] for p in pos])
    assert got.tolist() == want.tolist()
    assert which.tolist() == np.repeat(np.arange(6), np.diff(ends)[pos]).tolist()
    alone, none = gather(flat, ends, pos, which=False)
    assert none is None and alone.tolist() == want.tolist()
    empty, owners = gather(flat, ends, np.zeros(0, dtype=np.int64))
    assert empty.shape == (0,) and owners.shape == (0,)


def test_a_link_without_a_latency_is_named_with_its_first_message():
    machine = copy.deepcopy(load(SAMPLES / "grid4x4.machine"))
    table = RouteTable.for_machine(machine)
    msgs = messages(500, 16, 2)
    ids = routed(table, msgs)
    slots, ends, _, _ = table.arrays()
    r = int(ids[7])  # message 7's route: its first link made unusable
    while ends[r] == ends[r - 1]:
        r = int(ids[np.flatnonzero(ids != r)[0]])
    bad = int(slots[ends[r - 1]])
    first = min(i for i, q in enumerate(ids.tolist()) if bad in slots[ends[q - 1] : ends[q]])
    table.index.latency[bad] = np.nan
    with pytest.raises(PhaseError) as info:
        Phase.of(table, ids, msgs)
    link = int(table.index.link_ids[bad])
    assert f"message {first}: link {link} of" in str(info.value)
    assert "no usable latency" in str(info.value)


@pytest.mark.parametrize("duplex", [None, 0.0])
@pytest.mark.parametrize("shared", [None, "1 3-5"])
@pytest.mark.parametrize("block", [None, 7])
def test_link_entries_are_the_per_message_definition(duplex, shared, block, monkeypatch):
    # a topology of links only (no forwarding cost, no acknowledgements, no fatpipe,
    # no link crossed twice): each message's entries are its crossings in route order,
    # a split link's direction 1 the way from its higher-numbered end (found per route
    # of the table, gathered per message), made without an owner per entry (made when
    # asked); the passes done in blocks (``block``: 7 messages or crossings a block, so
    # that blocks end inside routes) give the same
    if block is not None:
        monkeypatch.setattr(resources, "_BLOCK", block)
        monkeypatch.setattr(ragged, "_BLOCK", block)
    topology = torus([4, 3], 1e-6, 1e-9)
    topology.duplex, topology.shared = duplex, shared if duplex is not None else None
    rng = np.random.default_rng(7)
    for link in topology.links:
        link.speed = Timing(float(rng.uniform(1e-10, 1e-9)))
    machine = Machine(id=1, name="links", processor_count=1, topology_count=1,
                      processors=[Processor(id=1, name="node")], topologies=[topology])  # fmt: skip
    table = RouteTable.for_machine(machine)
    msgs = messages(500, 12, 3)
    ids = routed(table, msgs)
    usage = usage_of(table, ids, table.options)
    assert usage._owner is None
    slots, ends, _, _ = table.arrays()
    procs, proc_ends = table.processor_arrays()
    index = table.index
    split = (index.sizes == 2) & ~table.options.policy_masks(index.link_ids)[0]
    res, weight, start, slowest = [], [], [0], []
    for r in ids.tolist():
        crossed = slots[ends[r - 1] : ends[r]].tolist()
        path = procs[proc_ends[r - 1] : proc_ends[r]].tolist()
        for k, s in enumerate(crossed):
            up = duplex is not None and bool(split[s]) and path[k] > path[k + 1]
            res.append(2 * s + up)
            weight.append(float(index.speed[s]))
        start.append(start[-1] + len(crossed))
        slowest.append(max((float(index.speed[s]) for s in crossed), default=0.0))
    assert usage.res.tolist() == res
    assert usage.weight.tolist() == weight
    assert usage.start.tolist() == start
    assert usage.slowest.tolist() == slowest and not usage.floor.any()
    assert usage.owner.tolist() == np.repeat(np.arange(ids.shape[0]), np.diff(start)).tolist()
