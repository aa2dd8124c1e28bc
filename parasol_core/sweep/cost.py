"""The work of a sweep, estimated before it runs: what the estimator charges a
``sweep.run`` request (``docs/estimator.md``, "Budgets").

A variant's work is that of its answers, in the estimator's unit (messages and
evaluations): 1 for an ``eval`` or a ``block``, a phase's messages for a ``simulate``
(a pattern's counted from its formula: on the grid, torus, hypercube, ring, bus or clique
the variant generates, else on the base model's topology). Work the variant will be refused before doing (a phase past the message
limit, a topology past the generator's) counts 1: the refusal is its row. The sweep's
work is the sum over its variants.
"""

from __future__ import annotations

import math
from functools import cache

from parasol_core.base import budget
from parasol_core.model import Machine
from parasol_core.sweep.spec import SweepSpec
from parasol_core.sweep.variants import variants


def work(spec: SweepSpec, machine: Machine) -> int:
    """The estimated work of every variant of ``spec`` on ``machine`` (its base model)."""
    from parasol_core.simulate.patterns import pattern_cost
    from parasol_core.topology.generators import generator_size

    limits = budget.current()
    generating = [i for i, a in enumerate(spec.axes) if a.kind == "generate"]

    @cache
    def messages(pattern: str, virtual: int | None, generated: str | None) -> int:
        if generated is None:
            n = pattern_cost(machine, pattern, virtual)
        else:
            kind, *dims = generated.split()
            sizes = [int(d) for d in dims]
            if generator_size(kind, sizes) > limits.generated:
                return 1  # refused when generated
            shape = _processors(kind, sizes)
            if shape is None:  # a fat tree or dragonfly: as on the base model
                n = pattern_cost(machine, pattern, virtual)
            else:
                n = budget.pattern_messages(pattern, shape[0], shape[1], kind == "torus")
        return 1 if n > limits.message_limit else max(n, 1)

    total = 0
    for v in variants(spec) if generating else [None]:
        generated = None
        if v is not None:  # the last generated topology the variant makes
            i = generating[-1]
            generated = str(spec.axes[i].values[v.positions[i]])
        one = 0
        for answer in spec.answers:
            o = answer.options
            if answer.kind != "simulate":
                one += 1
            elif "messages" in o:
                one += max(len(o["messages"]), 1)
            else:
                one += messages(o["pattern"], o.get("virtual"), generated)
        total += one
    return total if generating else total * spec.size


def _processors(kind: str, sizes: list[int]) -> tuple[int, list[int] | None] | None:
    if kind in ("grid", "torus"):
        return math.prod(sizes), sizes
    if kind == "hypercube":
        return 2 ** sizes[0], [2] * sizes[0]
    if kind in ("ring", "bus", "clique"):
        return sizes[0], None
    return None


SMALL_WORK = 2_000
"""Work (:func:`work`) a sweep may have and still run in the calling process: less
than a pool of spawned processes takes to start (about a second here), about 1 ms of
evaluations and messages a unit."""


def small(spec: SweepSpec, machine: Machine) -> bool:
    """Whether ``spec`` is small enough to run in this process rather than on a pool
    (PIUI's dialog): no replay (whose work :func:`work` counts as 1 a variant) and at
    most :data:`SMALL_WORK`."""
    if any(a.kind == "replay" for a in spec.answers):
        return False
    return work(spec, machine) <= SMALL_WORK
