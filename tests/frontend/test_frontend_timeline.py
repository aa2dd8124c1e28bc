"""The timeline's raster: what a pixel shows is the kind that covers most of its time,
whether drawn from the operations (zoomed in) or from the whole run's cells (zoomed
out); the hover finds the operation under a point."""

from __future__ import annotations

import numpy as np
import pytest

from parasol_core.frontend.timeline import (
    COMPUTATION,
    RECEIVING,
    SENDING,
    WAITING,
    Timeline,
    _cover,
)


def _two_ranks() -> Timeline:
    # rank 0: compute 0..6, send 6..7, wait 7..10; rank 1: receive 0..10
    return Timeline(rank=[0, 0, 0, 1], code=[COMPUTATION, SENDING, WAITING, RECEIVING],
                    start=[0.0, 6.0, 7.0, 0.0], end=[6.0, 7.0, 10.0, 10.0], ranks=2)  # fmt: skip


def test_each_pixel_shows_its_kind():
    raster = _two_ranks().raster(0.0, 10.0, 10, 0, 2, 100)
    assert raster.codes.tolist() == [
        [COMPUTATION] * 6 + [SENDING] + [WAITING] * 3,
        [RECEIVING] * 10,
    ]


def test_a_pixel_shows_the_kind_that_covers_most_of_it():
    # two pixels of 5 s: the first is 5 s of computation, the second 1 of computation,
    # 1 of sending and 3 of waiting
    raster = _two_ranks().raster(0.0, 10.0, 2, 0, 1, 100)
    assert raster.codes.tolist() == [[COMPUTATION, WAITING]]


def test_a_short_operation_alone_in_its_pixel_is_drawn():
    line = Timeline([0], [SENDING], [5.5], [5.501], 1)
    codes = line.raster(0.0, 10.0, 10, 0, 1, 10).codes
    assert codes.tolist() == [[0] * 5 + [SENDING] + [0] * 4]


def test_more_ranks_than_rows_are_summed_into_rows():
    # ranks 0 and 1 compute for 10 s while rank 2 sends; then rank 2 alone sends
    line = Timeline(rank=[0, 1, 2, 2], code=[COMPUTATION, COMPUTATION, SENDING, SENDING],
                    start=[0.0, 0.0, 0.0, 10.0], end=[10.0, 10.0, 10.0, 20.0], ranks=3)  # fmt: skip
    raster = line.raster(0.0, 20.0, 4, 0, 3, 1)
    assert raster.per_row == 3
    assert raster.codes.tolist() == [[COMPUTATION, COMPUTATION, SENDING, SENDING]]
    raster = line.raster(0.0, 20.0, 4, 0, 3, 2)  # two rows: ranks 0-1, rank 2
    assert raster.per_row == 2
    assert raster.codes.tolist() == [[COMPUTATION, COMPUTATION, 0, 0], [SENDING] * 4]


def test_zoomed_out_from_the_cells_agrees_with_the_operations():
    rng = np.random.default_rng(7)
    ranks, per = 8, 4000
    rank = np.repeat(np.arange(ranks), per)
    length = rng.exponential(1.0, ranks * per)
    end = np.concatenate([np.cumsum(length[r * per : (r + 1) * per]) for r in range(ranks)])
    start = end - length
    code = rng.integers(1, 5, ranks * per)
    line = Timeline(rank, code, start, end, ranks)
    line.PYRAMID_CELLS = 4 * ranks * 2048  # cells of ~2 s: a pixel of ~8 s is drawn from them
    line.DIRECT = 0  # as if the operations were too many to draw one by one
    t1 = line.t_end
    raster = line.raster(0.0, t1, 500, 0, ranks, 100)
    exact = _cover(line.start, line.end, line.rank, line.code - 1, 0.0, t1, 500, ranks)
    exact_codes = np.argmax(exact, axis=0) + 1
    assert (raster.codes == exact_codes).mean() > 0.85
    # zoomed in, pixels narrower than a cell: drawn from the operations, exactly
    t0, t1 = 1000.0, 1100.0
    raster = line.raster(t0, t1, 400, 0, ranks, 100)
    exact = _cover(line.start, line.end, line.rank, line.code - 1, t0, t1, 400, ranks)
    assert (raster.codes == np.argmax(exact, axis=0) + 1).all()


def test_hover_finds_the_operation_under_the_point():
    line = Timeline(rank=[1, 0, 0, 0], code=[RECEIVING, COMPUTATION, SENDING, WAITING],
                    start=[0.0, 0.0, 6.0, 7.0], end=[10.0, 6.0, 7.0, 10.0], ranks=2)  # fmt: skip
    assert line.at(6.5, 0) == 2  # the caller's index, not the sorted one
    assert line.at(3.0, 1) == 0
    assert line.at(11.0, 0) is None
    assert line.at(3.0, 5) is None


def test_bad_columns_are_refused():
    with pytest.raises(ValueError, match="rank outside"):
        Timeline([2], [1], [0.0], [1.0], 2)
    with pytest.raises(ValueError, match="kind code"):
        Timeline([0], [9], [0.0], [1.0], 2)
