"""Array helpers the bulk paths share.

:func:`unique` is ``np.unique`` for a one-dimensional array, by a sort (and
:func:`union` and :func:`difference` are ``np.union1d`` and ``np.setdiff1d``, which call
``np.unique`` inside). numpy 2.x's
``np.unique`` without ``return_index``, ``return_inverse`` or ``return_counts`` takes a
hash table, which on this project's machines is 12 to 60 times slower than a sort for
millions of integers (3,000,000 link ids: 2.4-3.4 s against 0.06-0.19 s; measured
with numpy 2.4). Large arrays are the common case here (a million-processor torus's
links, a batch of routes), so the core and the windows use this one, and
``tests/test_arrays.py`` keeps plain ``np.unique(x)``, ``np.union1d`` and ``np.setdiff1d``
out of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def unique(values: Any) -> np.ndarray:
    """The sorted distinct values of a one-dimensional array (as ``np.unique``, NaNs
    folded into one at the end), found by a sort."""
    a = np.sort(np.asarray(values).reshape(-1))
    if a.shape[0] < 2:
        return a
    keep = np.empty(a.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    if a.dtype.kind in "fc" and np.isnan(a[-1]):  # NaN != NaN: keep only the first
        first = int(np.argmax(np.isnan(a)))
        keep[first + 1 :] = False
    return a[keep]


def union(a: Any, b: Any) -> np.ndarray:
    """The sorted distinct values of both (``np.union1d``, by a sort)."""
    return unique(np.concatenate((np.asarray(a).reshape(-1), np.asarray(b).reshape(-1))))


def difference(a: Any, b: Any) -> np.ndarray:
    """The sorted distinct values of ``a`` not in ``b`` (``np.setdiff1d``, by a sort)."""
    values = unique(a)
    return values[~np.isin(values, np.asarray(b).reshape(-1))]
