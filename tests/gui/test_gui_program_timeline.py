"""The timeline widget draws in bulk: one image item whatever the number of operations,
made again at the view's new range once a zoom or a pan has settled (the picture on
show is moved meanwhile), its pixels the core's raster of that range."""

from __future__ import annotations

import numpy as np

from parasol_core.frontend.timeline import Timeline
from piui.widgets.timeline_plot import COLOURS, TimelinePlot


def _timeline(n: int, ranks: int = 8) -> Timeline:
    rng = np.random.default_rng(3)
    per = n // ranks
    rank = np.repeat(np.arange(ranks), per)
    length = rng.exponential(1.0, per * ranks)
    end = np.concatenate([np.cumsum(length[r * per : (r + 1) * per]) for r in range(ranks)])
    return Timeline(rank, rng.integers(1, 5, per * ranks), end - length, end, ranks)


def test_one_item_whatever_the_number_of_operations(qtbot):
    counts = []
    for n in (16, 160_000):
        plot = TimelinePlot()
        qtbot.addWidget(plot)
        plot.resize(800, 400)
        plot.show()
        plot.set_timeline(_timeline(n))
        counts.append(len(plot.view.addedItems))
    assert counts[0] == counts[1] == 1


def test_a_zoom_is_drawn_again_at_its_range_once_it_settles(qtbot):
    plot = TimelinePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    line = _timeline(4000)
    plot.set_timeline(line)
    qtbot.waitExposed(plot)
    drawn = plot.rasters
    t_end = line.t_end
    with qtbot.waitSignal(plot.drawn, timeout=5000):
        plot.view.setXRange(t_end * 0.25, t_end * 0.5, padding=0)
        assert plot.rasters == drawn  # not yet: the picture on show is moved meanwhile
    assert plot.rasters == drawn + 1
    rect = plot.image.mapRectToParent(plot.image.boundingRect())
    assert abs(rect.left() - t_end * 0.25) < t_end * 1e-6
    assert abs(rect.right() - t_end * 0.5) < t_end * 1e-6
    # its pixels are the core's raster of that range, in the kinds' colours
    image = plot.image.image
    colours = {
        tuple(int(c.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4)) for c in COLOURS.values()
    }
    shown = {tuple(px[:3]) for px in image.reshape(-1, 4) if px[3]}
    assert shown and shown <= colours


def test_a_new_answer_refits_the_view_unless_the_user_moved_it(qtbot):
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    plot = TimelinePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    qtbot.waitExposed(plot)
    line = _timeline(400)
    plot.set_timeline(line)
    shorter = Timeline(line.rank, line.code, line.start / 2, line.end / 2, line.ranks)
    plot.set_timeline(shorter, keep_view=True)  # the same program, predicted faster
    (x0, x1), _ = plot.view_range()
    assert x1 < line.t_end * 0.6  # fitted to the new run
    # the user turns the wheel over the timeline: their view stays through the next answer
    viewport = plot.plot.viewport()
    centre = QPointF(viewport.width() / 2, viewport.height() / 2)
    wheel = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)  # fmt: skip
    QApplication.sendEvent(viewport, wheel)
    assert plot.moved
    zoomed = plot.view_range()
    plot.set_timeline(line, keep_view=True)
    assert plot.view_range() == zoomed


def test_an_empty_timeline_shows_time_and_rank_from_zero_and_forgets_the_last_view(qtbot):
    """With no program open the axes ran from -0.4 to 0.4 (pyqtgraph's empty view): a
    negative time and rank under "No program trace open". And a program's limits stayed
    on the empty view after it closed."""
    plot = TimelinePlot()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    qtbot.waitExposed(plot)
    (x0, x1), (y0, y1) = plot.view_range()
    assert (x0, y0) == (0, 0) and x1 > 0 and y1 > 0
    line = _timeline(400)
    plot.set_timeline(line)
    assert plot.view_range()[0][1] > line.t_end * 0.9
    plot.set_timeline(None)  # the trace closed, or the answer went
    (x0, x1), (y0, y1) = plot.view_range()
    assert (x0, x1, y0, y1) == (0, 1, 0, 1)
    plot.view.setXRange(0, 5, padding=0)  # no limit of the last program holds the view
    assert plot.view_range()[0] == (0, 5)
