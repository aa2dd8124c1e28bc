"""Ragged arrays: many variable-length segments (each route's links, each message's
dependants) kept as one flat array and the offsets where each segment ends; what the
transfer times, the pacing model and the event trace all gather and reduce over.
"""

from __future__ import annotations

import numpy as np


def gather(
    flat: np.ndarray, ends: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated segments ``flat[ends[i]:ends[i+1]]`` for each i in
    ``positions``, and for every element which of ``positions`` it came from."""
    lengths = ends[positions + 1] - ends[positions]
    which = np.repeat(np.arange(positions.shape[0]), lengths)
    starts = np.zeros(positions.shape[0], dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    at = np.arange(which.shape[0], dtype=np.int64) - starts[which] + ends[positions][which]
    return flat[at], which


def segment_reduce(
    ufunc: np.ufunc, values: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """``ufunc.reduce`` over consecutive segments; 0 for an empty one."""
    out = np.zeros(starts.shape[0], dtype=np.float64)
    full = lengths > 0
    if values.shape[0] and full.any():
        out[full] = ufunc.reduceat(values, starts[full])
    return out
