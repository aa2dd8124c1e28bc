"""The blank model: File > New blank model in PIUI, and the smallest model the core
accepts with no diagnostic at all.

One processor type (no timings yet: every timing is optional) and one hardware topology
of one processor of that type, no links, made by the grid generator (a one-processor
grid: dimension-order routing, ``XY``, which needs no link). No machine combinations,
no run-time systems: they are added when the user writes their first expression.
"""

from __future__ import annotations

from parasol_core.model import Machine, Processor
from parasol_core.topology.generators import grid

BLANK_NAME = "untitled"


def blank_machine(name: str = BLANK_NAME) -> Machine:
    """A new, valid model with one processor type on a one-processor topology."""
    topology = grid((1,), 0.0, 0.0, id=1, name="one processor")
    return Machine(
        id=1,
        name=name,
        processor_count=1,
        topology_count=1,
        processors=[Processor(1, "processor 1")],
        topologies=[topology],
    )
