"""Ragged arrays: many variable-length segments (each route's links, each message's
dependants) kept as one flat array and the offsets where each segment ends; what the
transfer times, the pacing model and the event trace all gather and reduce over.
"""

from __future__ import annotations

import numpy as np


def gather(
    flat: np.ndarray, ends: np.ndarray, positions: np.ndarray, which: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """The concatenated segments ``flat[ends[i]:ends[i+1]]`` for each i in
    ``positions``, and for every element which of ``positions`` it came from (None
    when ``which`` is false: the caller does without it, and the pass is saved)."""
    first = ends[positions]
    lengths = ends[positions + 1]
    lengths -= first
    n = positions.shape[0]
    starts = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    # element e of segment i is flat[first[i] + e - starts[i]]: one repeat of the
    # segments' offsets, not two gathers by ``which`` (the passes a replay's 10^6
    # messages spend most here)
    first -= starts
    del starts
    at = np.repeat(first, lengths)
    del first
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths) if which else None
    del lengths
    # at[e] += e, without an arange of them all; and, when the segments' elements are
    # of its type, each block of offsets replaced by the elements they point at (the
    # result in the offsets' storage: one array of the elements' length, not two)
    inplace = flat.dtype == at.dtype
    for lo in range(0, at.shape[0], _BLOCK):
        hi = min(lo + _BLOCK, at.shape[0])
        block = at[lo:hi]
        block += np.arange(lo, hi, dtype=np.int64)
        if inplace:
            np.take(flat, block, out=block)
    return (at if inplace else flat[at]), owner


_BLOCK = 1 << 20  # elements a block of gather's offsets


def segment_reduce(
    ufunc: np.ufunc, values: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """``ufunc.reduce`` over consecutive segments; 0 for an empty one."""
    out = np.zeros(starts.shape[0], dtype=np.float64)
    full = lengths > 0
    if values.shape[0] and full.any():
        out[full] = ufunc.reduceat(values, starts[full])
    return out
