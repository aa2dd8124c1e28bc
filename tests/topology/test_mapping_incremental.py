"""Incremental dilation and congestion (MappingMetrics): after every move of a random
sequence, the kept-up-to-date figures equal the full recomputation by the core."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from parasol_core import load
from parasol_core.model import Machine, Processor, VirtualTopology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.generators import grid, torus
from parasol_core.topology.mapping import (
    MappingMetrics,
    link_load,
    make_mapping,
    mapping_quality,
    swap,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def machine_with(hardware, *virtuals):
    return Machine(id=1, name="m", processor_count=1, topology_count=1 + len(virtuals),
                   processors=[Processor(id=1, name="p")], topologies=[hardware],
                   virtuals=list(virtuals))  # fmt: skip


def virtual(vid, routing, count, shape=None):
    mapping = {v: v for v in range(1, count + 1)}
    return VirtualTopology(id=vid, routing=routing, processor_count=count, mapping=mapping,
                           shape=shape)  # fmt: skip


def cases():
    grid4 = load(SAMPLES / "grid4x4.machine")
    yield "4x4 2D torus", grid4, 3
    yield "4x4 ring", grid4, 2
    gcel = load(SAMPLES / "parsytec-gcel.machine")
    gcel.virtuals = [virtual(2, "2Dtorus", 512, (16, 32))]
    yield "GCel 2D torus", gcel, 2
    yield (
        "3D torus on a 4x4x4 grid",
        machine_with(
            grid((4, 4, 4), 1e-5, 1e-7, id=1),
            virtual(2, "3Dtorus", 64, (4, 4, 4)),
        ),
        2,
    )
    # fewer virtual processors than hardware ones: some drops land on free processors
    yield (
        "2D grid of 12 on a 6x6 torus",
        machine_with(torus((6, 6), 1e-5, 1e-7, id=1), virtual(2, "XY", 12, (3, 4))),
        2,
    )


CASES = list(cases())


@pytest.mark.parametrize("name,machine,vid", CASES, ids=[c[0] for c in CASES])
def test_random_swaps_match_the_full_recomputation(name, machine, vid):
    rng = random.Random(hash(name) & 0xFFFF)
    virt = machine.virtual(vid)
    start = make_mapping(machine, virt, "random", seed=rng.randrange(1000))
    metrics = MappingMetrics(machine, virt, start)
    assert metrics.quality() == mapping_quality(machine, virt, start)
    count = metrics.index.count  # hardware processors
    for _ in range(60):
        a, b = rng.sample(range(1, count + 1), 2)
        moves = swap(metrics.mapping, a, b)
        expected_after = mapping_quality(machine, virt, {**metrics.mapping, **moves})
        before = metrics.quality()
        # a preview shows the swapped figures and leaves the state as it was
        assert metrics.preview(moves) == expected_after
        assert metrics.quality() == before
        metrics.update(moves)
        assert metrics.quality() == expected_after
        assert metrics.link_load() == link_load(machine, virt, metrics.mapping)


def test_sync_follows_the_model_mapping_after_edits_and_undo():
    machine = load(SAMPLES / "grid4x4.machine")
    virt = machine.virtual(3)
    metrics = MappingMetrics(machine, virt)
    original = dict(virt.mapping)
    virt.mapping.update(swap(virt.mapping, 1, 16))
    virt.mapping.update(swap(virt.mapping, 2, 7))
    metrics.sync(virt.mapping)
    assert metrics.mapping == virt.mapping
    assert metrics.quality() == mapping_quality(machine, virt)
    virt.mapping.clear()
    virt.mapping.update(original)  # undone
    metrics.sync(virt.mapping)
    assert metrics.quality() == mapping_quality(machine, virt)


def test_a_routing_error_changes_nothing():
    machine = load(SAMPLES / "grid4x4.machine")
    virt = machine.virtual(3)
    metrics = MappingMetrics(machine, virt)
    before = (metrics.quality(), dict(metrics.mapping))
    with pytest.raises(RoutingError):
        metrics.update({1: 99})  # no hardware processor 99
    assert (metrics.quality(), metrics.mapping) == before
    with pytest.raises(RoutingError, match="not mapped"):
        metrics.sync({v: h for v, h in virt.mapping.items() if v != 5})
    with pytest.raises(RoutingError, match="not mapped"):
        MappingMetrics(machine, virt, {v: h for v, h in virt.mapping.items() if v != 5})
