"""A timeline of ranks as a window draws it: every operation of a replayed program as a
span of one kind (computation, sending, receiving, waiting) on its rank's lane, reduced
to a raster of the pixels on show.

Drawing a million operations one item each takes seconds a frame; this module makes
the picture in bulk, with numpy, in time that grows with the operations in view and
the pixels of the view, never with Qt items. :meth:`Timeline.raster` answers, for the
visible time range, ranks and pixel size, one kind code per pixel: the kind that
covers most of that pixel's time (summed over the ranks a pixel row holds when there
are more ranks than pixel rows), 0 where nothing runs. A span shorter than a pixel still
counts for its share, so a short message between long computations appears when the
view is zoomed in far enough for it to cover a pixel's worth of time; an isolated one
shows whatever its length. Zoomed out (pixels wider than the cells of the whole run's
picture, :meth:`Timeline._pyramid`), a cell's cover is taken as spread evenly over it:
what runs near a pixel's edge may tint its neighbour, by less than one cell (a fraction
of a pixel). :meth:`Timeline.at` finds the operation under a point (the
hover).

Qt-free: the widget (``piui/widgets/timeline_plot.py``) turns the codes into colours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The kinds a timeline draws, in code order (code = index + 1; 0 is "nothing").
KINDS = ("computation", "sending", "receiving", "waiting")
COMPUTATION, SENDING, RECEIVING, WAITING = 1, 2, 3, 4
# Cover (in pixels, or cells) below NOTHING is rounding, not an operation; an operation
# of no length covers INSTANT of its pixel, so that it is drawn
NOTHING = 1e-7
INSTANT = 1e-6


@dataclass(frozen=True)
class Raster:
    """Kind codes (uint8) of ``rows`` x ``width`` pixels. Row ``i`` holds the ranks
    ``first + i * per_row`` to ``first + (i + 1) * per_row - 1``."""

    codes: np.ndarray
    first: int
    per_row: int
    t0: float
    t1: float


class Timeline:
    """Operations as columns: ``rank`` (0-based), ``code`` (1..4, :data:`KINDS`),
    ``start`` and ``end`` in seconds; ``ranks`` lanes."""

    def __init__(self, rank: np.ndarray, code: np.ndarray, start: np.ndarray,
                 end: np.ndarray, ranks: int) -> None:  # fmt: skip
        rank = np.asarray(rank, dtype=np.int64)
        code = np.asarray(code, dtype=np.int64)
        start = np.asarray(start, dtype=np.float64)
        end = np.asarray(end, dtype=np.float64)
        n = len(rank)
        if not (len(code) == len(start) == len(end) == n):
            raise ValueError("a timeline's columns must be of one length")
        if n and (rank.min() < 0 or rank.max() >= ranks):
            raise ValueError(f"a rank outside 0..{ranks - 1}")
        if n and (code.min() < 1 or code.max() > len(KINDS)):
            raise ValueError(f"a kind code outside 1..{len(KINDS)}")
        self.ranks = int(ranks)
        # sorted by rank, then start: a rank's operations are one slice (the hover), and
        # the raster reads the rows of the ranks in view as one slice too
        order = np.lexsort((start, rank))
        self.order = order  # position here -> the caller's operation index
        self.rank = rank[order]
        self.code = code[order]
        self.start = start[order]
        self.end = np.maximum(end[order], self.start)
        self.offsets = np.searchsorted(self.rank, np.arange(self.ranks + 1))
        # the longest span of each rank: how far back a hover must look
        longest = np.zeros(self.ranks)
        if n:
            np.maximum.at(longest, self.rank, self.end - self.start)
        self.longest = longest
        self.t_end = float(self.end.max()) if n else 0.0
        self._cells: tuple[np.ndarray, float] | None = None

    def __len__(self) -> int:
        return len(self.rank)

    # The picture of the whole run, made once: each rank's time covered by each kind
    # in PYRAMID_CELLS cells at most (fewer with many ranks, PYRAMID_CELLS in all over
    # the kinds and ranks). A view whose pixels are wider than a cell is drawn from it,
    # in time that grows with the pixels, not with the operations.
    PYRAMID_CELLS = 2_000_000
    # Views of ranks of at most DIRECT operations are drawn from the operations
    # themselves (a few milliseconds); past it, zoomed out, from the whole run's cells,
    # made when first needed (a large trace's first picture then costs their making)
    DIRECT = 200_000

    def _pyramid(self) -> tuple[np.ndarray, float]:
        if self._cells is None:
            bins = int(min(8192, max(64, self.PYRAMID_CELLS // (len(KINDS) * self.ranks))))
            t_end = self.t_end if self.t_end > 0 else 1.0
            cover = _cover(self.start, self.end, self.rank, self.code - 1, 0.0, t_end, bins,
                           self.ranks)  # fmt: skip
            cumulative = np.zeros((len(KINDS), self.ranks, bins + 1), np.float64)
            np.cumsum(cover, axis=2, out=cumulative[:, :, 1:])
            self._cells = (cumulative, t_end / bins)
        return self._cells

    def raster(self, t0: float, t1: float, width: int, r0: int, r1: int,
               height: int) -> Raster:  # fmt: skip
        """The kinds of ``width`` pixels spanning [t0, t1) for the ranks r0..r1-1, in at
        most ``height`` pixel rows (several ranks a row when they are more)."""
        width = max(int(width), 1)
        height = max(int(height), 1)
        r0 = max(int(r0), 0)
        r1 = min(int(r1), self.ranks)
        if r1 <= r0 or not t1 > t0:
            return Raster(np.zeros((0, width), np.uint8), r0, 1, t0, t1)
        lanes = r1 - r0
        per_row = -(-lanes // height)  # ceil
        rows = -(-lanes // per_row)
        lo, hi = self.offsets[r0], self.offsets[r1]
        if hi - lo > self.DIRECT and (t1 - t0) / width >= self._pyramid()[1]:
            cumulative = self._pyramid()[0]
            cover = _from_cells(cumulative[:, r0:r1], self._pyramid()[1], t0, t1, width)
            if per_row > 1:
                padded = np.zeros((len(KINDS), rows * per_row, width), cover.dtype)
                padded[:, :lanes] = cover
                cover = padded.reshape(len(KINDS), rows, per_row, width).sum(axis=2)
        else:
            start, end = self.start[lo:hi], self.end[lo:hi]
            keep = np.flatnonzero((end >= t0) & (start <= t1))
            cover = _cover(start[keep], end[keep], (self.rank[lo:hi][keep] - r0) // per_row,
                           self.code[lo:hi][keep] - 1, t0, t1, width, rows)  # fmt: skip
        best = np.argmax(cover, axis=0)
        filled = np.take_along_axis(cover, best[None], axis=0)[0] > NOTHING
        codes = np.zeros((rows, width), np.uint8)
        codes[filled] = (best[filled] + 1).astype(np.uint8)
        return Raster(codes, r0, per_row, t0, t1)

    def at(self, t: float, rank: int) -> int | None:
        """The caller's index of the operation of ``rank`` running at ``t`` (the shortest
        of those that overlap there), or None."""
        if not 0 <= rank < self.ranks:
            return None
        lo, hi = int(self.offsets[rank]), int(self.offsets[rank + 1])
        if lo == hi:
            return None
        # candidates start no later than t and no earlier than t - the rank's longest
        first = lo + int(np.searchsorted(self.start[lo:hi], t - self.longest[rank], "left"))
        last = lo + int(np.searchsorted(self.start[lo:hi], t, "right"))
        if last <= first:
            return None
        span = slice(first, last)
        hit = np.flatnonzero(self.end[span] >= t)
        if not len(hit):
            return None
        lengths = self.end[span][hit] - self.start[span][hit]
        return int(self.order[first + hit[int(np.argmin(lengths))]])


def _cover(start: np.ndarray, end: np.ndarray, row: np.ndarray, kind: np.ndarray, t0: float,
           t1: float, width: int, rows: int) -> np.ndarray:  # fmt: skip
    """Time covered (in pixels) per (kind, row, pixel) of ``width`` pixels over [t0, t1):
    full pixels by a running sum of +1 at a span's first pixel and -1 at the pixel of its
    end, corrected by the fractions at both ends (pixel ia loses a - ia, pixel ib gains
    b - ib). A span of no length still marks its pixel (a little)."""
    scale = width / (t1 - t0)
    a = np.clip((start - t0) * scale, 0.0, width)
    b = np.maximum(np.clip((end - t0) * scale, 0.0, width), a)
    ia = np.minimum(a.astype(np.int64), width - 1)
    ib = np.minimum(b.astype(np.int64), width)
    stride = width + 1
    base = (kind.astype(np.int64) * rows + row) * stride
    size = len(KINDS) * rows * stride
    index = np.concatenate((base + ia, base + ib))
    ones = np.ones(len(a))
    slope = np.bincount(index, weights=np.concatenate((ones, -ones)), minlength=size)
    fix = np.bincount(index, weights=np.concatenate((ia - a, b - ib)), minlength=size)
    cover = np.cumsum(slope.reshape(len(KINDS), rows, stride), axis=2)
    cover += fix.reshape(cover.shape)
    cover = cover[:, :, :width]
    instant = b <= a
    if instant.any():
        np.maximum.at(cover, (kind[instant], row[instant], ia[instant]), INSTANT)
    return cover


def _from_cells(cumulative: np.ndarray, cell: float, t0: float, t1: float,
                width: int) -> np.ndarray:  # fmt: skip
    """Time covered per (kind, rank, pixel) from the cumulative cover of the cells,
    linear within a cell."""
    cells = cumulative.shape[2] - 1
    edges = np.clip((t0 + (t1 - t0) * np.arange(width + 1) / width) / cell, 0.0, cells)
    whole = np.minimum(edges.astype(np.int64), cells - 1)
    part = edges - whole
    low = np.take(cumulative, whole, axis=2)
    high = np.take(cumulative, whole + 1, axis=2)
    high -= low
    high *= part.astype(cumulative.dtype)
    low += high
    return np.diff(low, axis=2)
