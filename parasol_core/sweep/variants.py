"""The variants of a sweep: positions in each axis's values, numbered from 0.

* ``grid``: every combination, the last axis varying fastest; variant i is the i-th.
* ``random``: ``count`` distinct grid points drawn uniformly (all of them, in grid
  order, when the grid has no more than ``count``).
* ``latin``: a Latin-hypercube sample of ``count`` points: on each axis, the ``count``
  points spread evenly over its values (each value used ``count / n`` times, give or
  take one), the axes paired at random.

Both samples are seeded (``[sample] seed``): the same file gives the same variants to
every process that asks, so that the ranks of an MPI job, a resumed sweep and the
estimator agree on what variant 17 is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parasol_core.sweep.spec import SweepSpec


@dataclass(frozen=True)
class Variant:
    index: int
    positions: tuple[int, ...]  # one a axis: which of its values


def _unravel(flat: int, sizes: list[int]) -> tuple[int, ...]:
    out = []
    for n in reversed(sizes):
        flat, r = divmod(flat, n)
        out.append(r)
    return tuple(reversed(out))


def variants(spec: SweepSpec) -> list[Variant]:
    sizes = [len(a.values) for a in spec.axes]
    grid = spec.grid_size
    if spec.method == "grid" or (spec.method == "random" and (spec.count or 0) >= grid):
        return [Variant(i, _unravel(i, sizes)) for i in range(grid)]
    rng = np.random.default_rng(spec.seed)
    count = int(spec.count or 0)
    if spec.method == "random":
        if grid <= 4 * count:
            flat = np.sort(rng.choice(grid, size=count, replace=False))
        else:  # a grid far larger than the sample: draw and drop repeats
            seen: set[int] = set()
            order: list[int] = []
            while len(order) < count:
                for x in rng.integers(0, grid, size=count - len(order)).tolist():
                    if x not in seen:
                        seen.add(x)
                        order.append(x)
            flat = np.sort(np.array(order, dtype=np.int64))
        return [Variant(i, _unravel(int(f), sizes)) for i, f in enumerate(flat.tolist())]
    columns = []
    for n in sizes:
        strata = (np.arange(count) * n) // count  # each value count/n times
        columns.append(rng.permutation(strata))
    if not columns:
        return [Variant(0, ())]
    table = np.stack(columns, axis=1)
    return [Variant(i, tuple(int(x) for x in row)) for i, row in enumerate(table.tolist())]
