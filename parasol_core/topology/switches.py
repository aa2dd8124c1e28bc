"""Switches: network nodes that only forward (docs/decisions.md, "Switches").

A processor type whose section holds ``# piui: role = switch`` is a switch type; every
processor of a hardware topology whose ``p[i]`` names such a type is a switch. Switches
take part in routes like any processor. They run no program, so they are left out of
communication patterns, of the targets of mappings and of the processor counts shown as
compute processors.

Everything here is computed from the model each time it is asked (a numpy pass over the
procid table): nothing is cached that an edit of a type's role or of a ``p[i]`` could
leave stale.
"""

from __future__ import annotations

import numpy as np

from parasol_core.model import NETWORK_KINDS, VARIABLE_NETWORKS, Machine, Topology
from parasol_core.model.inttable import int_columns


def switch_types(machine: Machine) -> frozenset[int]:
    """The ids of the processor types marked as switches."""
    return frozenset(p.id for p in machine.processors if p.is_switch and p.id is not None)


def switch_numbers(machine: Machine, topology: Topology) -> np.ndarray:
    """The numbers of the topology's processors whose type is a switch type, as its
    procid table gives them (any number: nothing here is sized by a processor count,
    which a file may state as anything)."""
    kinds = switch_types(machine)
    if not kinds or not topology.types:
        return np.zeros(0, dtype=np.int64)
    found = int_columns(topology.types)
    if found is None:
        return np.asarray([n for n, t in topology.types.items()
                           if t in kinds and type(n) is int and 0 <= n < 2**63],
                          dtype=np.int64)  # fmt: skip
    numbers, types = found
    return numbers[np.isin(types, np.fromiter(kinds, dtype=np.int64, count=len(kinds)))]


def switch_mask(machine: Machine, topology: Topology, count: int | None = None) -> np.ndarray:
    """A boolean array indexed by processor number (0 unused, 1..count): True where the
    processor is a switch. ``count`` defaults to the topology's processor count."""
    if count is None:
        from parasol_core.topology.shape import processor_count

        count = processor_count(topology)
    mask = np.zeros(count + 1, dtype=bool)
    numbers = switch_numbers(machine, topology)
    mask[numbers[(numbers >= 1) & (numbers <= count)]] = True
    return mask


def compute_processors(
    machine: Machine, topology: Topology, count: int | None = None
) -> np.ndarray:
    """The numbers of the processors that run programs (not switches), ascending."""
    mask = switch_mask(machine, topology, count)
    return np.flatnonzero(~mask[1:]) + 1


def compute_count(machine: Machine, topology: Topology) -> int:
    """How many processors of the topology run programs."""
    mask = switch_mask(machine, topology)
    return int(mask.size - 1 - mask[1:].sum())


def has_switches(machine: Machine, topology: Topology | None = None) -> bool:
    """Whether any processor type (or, given a topology, any of its processors) is a switch."""
    if topology is None:
        return bool(switch_types(machine))
    return bool(switch_mask(machine, topology).any())


def network_of(topology: Topology) -> tuple[str, dict[str, int]] | None:
    """What network the topology says it is (``# piui: network = KIND N ...``): the kind
    and its parameters by name (``NETWORK_KINDS``), or None when it says nothing or what
    it says cannot be read."""
    from parasol_core.syntax.annotations import check_network

    try:
        text = check_network(topology.network)
    except ValueError:
        return None
    if text is None:
        return None
    kind, *numbers = text.split()
    if kind in VARIABLE_NETWORKS:  # xgft H m1..mH w1..wH p1..pH: numbered names
        h = int(numbers[0])
        names = ["h", *(f"{x}{i}" for x in "mwp" for i in range(1, h + 1))]
        return kind, dict(zip(names, map(int, numbers), strict=True))
    return kind, dict(zip(NETWORK_KINDS[kind], map(int, numbers), strict=True))


def with_unit(count: str) -> str:
    """A count of :func:`count_text` in a sentence: ``"16 processors"``, or
    ``"16 compute processors + 4 switches"``."""
    if " compute + " in count:
        return count.replace(" compute + ", " compute processors + ", 1)
    return f"{count} processor{'' if count == '1' else 's'}"


def count_text(machine: Machine, topology: Topology) -> str:
    """A topology's processor count as shown to a user: ``"16"``, or with switches
    ``"16 compute + 4 switches"`` (the compute processors are what programs run on)."""
    from parasol_core.topology.shape import processor_count

    n = processor_count(topology)
    switches = int(switch_mask(machine, topology, n).sum())
    if not switches:
        return str(n)
    return f"{n - switches} compute + {switches} switch{'es' if switches != 1 else ''}"
