"""The Program window as a user meets it: File > Open program trace… predicts the
trace on the model on screen; the prediction follows a scaler dragged (off the GUI
thread, the last answer on screen until the next, before -> after), undo, another
model; the timeline names what is under the mouse; a bad trace is said, with its line,
and loses nothing."""

from __future__ import annotations

import copy

import pytest
from program_traces import write_stencil
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from parasol_core.frontend import program as core
from parasol_core.replay import replay


def _replayed(window, path) -> float:
    """The makespan of the trace on the model on screen, replayed here, directly."""
    program = core.read_program(path)
    machine = copy.deepcopy(window.document.machine)
    return replay(machine, program.trace, program.options_for(machine)).makespan


@pytest.fixture
def program(main_window, qtbot, tmp_path):
    """The main window with the Program window open on a 16-rank stencil trace, its
    first prediction shown."""
    path = write_stencil(tmp_path, ranks=16, iterations=10)
    main_window.panels["program"].ask_trace_path = lambda: str(path)
    window = main_window.panels["program"]
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
    window.trace_path = path
    return window


def test_open_program_trace_predicts_it_on_the_model_on_screen(main_window, program):
    assert main_window.docks["program"].isVisible()
    assert "Program" in [a.text() for a in main_window.view_menu.actions()]
    seconds = _replayed(main_window, program.trace_path)
    assert program.after.makespan == seconds
    assert program.prediction.text() == f"Predicted time: {core.seconds_text(seconds)}"
    table = program.table.model()
    assert table.rowCount() == 16
    assert table.index(3, 2).data() == f"{program.after.finish[3]:.6g}"
    tip = table.index(3, 2).data(Qt.ItemDataRole.ToolTipRole)
    assert float(tip) == program.after.finish[3]  # the whole number
    assert table.index(3, 1).data() == str(int(program.after.host[3]))  # its processor
    assert program.timeline.rasters >= 1 and len(program.timeline.timeline) > 16 * 10


def test_every_column_of_the_breakdown_is_in_sight_in_a_window_of_1600(main_window, program,
                                                                        qtbot):  # fmt: skip
    """The breakdown takes at most 40 % of the window beside the timeline; its last
    column, the waiting (how unbalanced the program is), was scrolled out of sight at
    1600 x 1000. Each header says itself in full in its tooltip."""
    main_window.resize(1600, 1000)
    for _ in range(4):
        QApplication.processEvents()
    table = program.table
    assert program.split.orientation() == Qt.Orientation.Horizontal
    header = table.horizontalHeader()
    last = header.sectionViewportPosition(5) + header.sectionSize(5)
    assert last <= table.viewport().width()
    tips = [table.model().headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
            for c in range(6)]  # fmt: skip
    assert all(tips) and "waiting" in tips[5].lower()


def test_the_prediction_follows_a_scaler_dragged(main_window, program, qtbot):
    before = program.after.makespan
    slider = main_window.panels["groups"].rows["double"].slider
    shown: list[tuple[float | None, float]] = []
    program.predictionShown.connect(lambda b, a: shown.append((b, a)))
    started = program.live.started
    # a drag: three positions, made faster than any answer can come back (the GUI
    # thread is not given back between them)
    for factor in (0.8, 0.6, 0.5):
        slider.slider.setValue(slider.slider.value() - 1)  # moves a little each time
        slider.setValue(factor)
        slider.slider.setValue(slider.slider.value() + 1)
    assert program.state.text() == "predicting…"
    # the last answer stays on screen until the next is ready
    assert program.prediction.text() == f"Predicted time: {core.seconds_text(before)}"
    with qtbot.waitSignal(program.live.busyChanged, timeout=30_000,
                          check_params_cb=lambda busy: not busy):  # fmt: skip
        pass
    # the first move's job ran, the ones between were replaced by the last: two jobs
    assert program.live.started - started == 2
    after = _replayed(main_window, program.trace_path)
    assert after < before  # double precision made faster: the stencil computes in it
    assert shown == [(before, after)]  # only the answer about the model as it is now
    assert program.prediction.text() == core.before_after_text(before, after)
    assert "→" in program.prediction.text()
    # undo: the prediction comes back to where it was
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        main_window.undo_action.trigger()
    assert program.after.makespan == before
    assert program.prediction.text() == f"Predicted time: {core.seconds_text(before)}"


def test_keep_as_before_and_another_model(main_window, program, qtbot, sample_copy):
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        main_window.document.session.scale_group("all", 2.0)
    slower = program.after.makespan
    program.keep_button.click()
    assert program.prediction.text() == f"Predicted time: {core.seconds_text(slower)}"
    # another model opened: predicted afresh, compared with nothing from the last one
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        main_window.open_file(sample_copy("grid4x4.machine"))
    assert program.before is program.after
    assert program.after.makespan == _replayed(main_window, program.trace_path)


def _hover_rank_5(program, qtbot) -> str:
    """Move the mouse over the middle of rank 5's first computation; what is heard."""
    plot = program.timeline
    heard: list[str] = []
    plot.hovered.connect(heard.append)
    timeline = program.after.timeline
    first = list(timeline.order).index(timeline.at(1e-9, 5))
    t = (timeline.start[first] + timeline.end[first]) / 2
    scene = plot.view.mapViewToScene(QPointF(t, 5.5))
    where = plot.plot.mapFromScene(scene)
    viewport = plot.plot.viewport()
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(where), QPointF(viewport.mapToGlobal(where)),
                       Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)  # fmt: skip
    QApplication.sendEvent(viewport, move)
    qtbot.waitUntil(lambda: bool(heard))
    return heard[-1]


def test_the_timeline_names_the_operation_under_the_mouse(program, qtbot):
    plot = program.timeline
    path = program.trace_path
    line = path.read_text().splitlines().index("5 compute 2000000") + 1
    heard = _hover_rank_5(program, qtbot)
    assert heard.startswith("rank 5: compute")
    assert heard.endswith(f"{path}:{line}")
    # on screen, with the end of where (a long folder may be cut from the left)
    assert plot.hover_label.text().endswith(f"{path.name}:{line}")
    assert plot.hover_label.toolTip() == heard


def test_a_long_trace_path_keeps_the_file_and_line_in_a_narrow_window(main_window, program,
                                                                     qtbot):  # fmt: skip
    """The hover names the operation, its times and where the trace says it; in a
    window too narrow for a long folder, the folder is cut from the left, never the
    file's name and line (the tooltip has the whole)."""
    from PySide6.QtGui import QFontMetrics

    dock = main_window.docks["program"]
    dock.setFloating(True)
    dock.resize(620, 600)
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(10)
    label = program.timeline.hover_label
    heard = _hover_rank_5(program, qtbot)
    shown = label.text()
    line = program.trace_path.read_text().splitlines().index("5 compute 2000000") + 1
    assert QFontMetrics(label.font()).horizontalAdvance(heard) > label.width()  # too long
    assert QFontMetrics(label.font()).horizontalAdvance(shown) <= label.width()
    assert shown.startswith("rank 5: compute") and "…" in shown
    assert shown.endswith(f"{program.trace_path.name}:{line}")
    assert label.toolTip() == heard and program.timeline.plot.toolTip() == heard


def test_a_bad_trace_is_said_with_its_line_and_the_open_one_stays(program, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 compute 10\n0 frobnicate 3\n")
    shown = program.after
    assert not program.open_trace(bad)
    assert "bad.txt:3" in program.message.text()
    assert program.after is shown and program.program.path == program.trace_path


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)) * 8,  # a binary file opened by mistake (an image, a core dump)
        b"rank-0.txt\n" + b"\x00" * 5000 + b"\n",  # an index whose NUL is past the first 4 KiB
    ],
    ids=["binary", "nul-late"],
)
def test_a_binary_file_opened_as_a_trace_is_said_and_the_open_one_stays(
        main_window, program, tmp_path, content):  # fmt: skip
    """File > Open program trace… on a binary file: the message says which file and
    why (not an uncaught ValueError: embedded null byte), the trace open stays."""
    bad = tmp_path / "picture.png"
    bad.write_bytes(content)
    (tmp_path / "rank-0.txt").write_text("0 init\n0 finalize\n")
    shown = program.after
    program.ask_trace_path = lambda: str(bad)
    assert not main_window.open_program_trace()
    assert "picture.png" in program.message.text()
    assert "binary" in program.message.text()
    assert program.after is shown and program.program.path == program.trace_path
    assert program.title.text() == f"Program: {program.program.title}"


def test_a_failed_prediction_leaves_no_number_of_the_question_before(main_window, program, qtbot):
    """A flop expression that cannot be worked out: no prediction. The window said
    'Predicted time: 28.46 s' beside '1/0' (the number of the flop before, looking
    current) and kept *Keep as before* on; now it says there is none, and the next good
    expression brings a number again."""
    before = program.after.makespan
    with qtbot.waitSignal(program.predictionFailed, timeout=30_000):
        program.flop.setText("1/0")
        program.flop.editingFinished.emit()
    assert "division by zero" in program.message.text()
    assert core.seconds_text(before) not in program.prediction.text()
    assert program.prediction.text() == "Predicted time: none (the message below says why)"
    assert not program.keep_button.isEnabled()
    assert program.table.model().rowCount() == 0 and program.timeline.timeline is None
    # the field shows its expression refused, as every field shows a refused entry (it
    # was left looking accepted): marked, its tooltip saying why, the text kept to mend
    assert program.flop.is_refused() and program.flop.text() == "1/0"
    assert "division by zero" in program.flop.toolTip()
    double = core.flop_for(main_window.document.machine)
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        program.flop.setText(f"2 * ({double})")
        program.flop.editingFinished.emit()
    assert program.after.makespan > before
    assert not program.flop.is_refused() and not program.flop.styleSheet()
    assert program.flop.toolTip().startswith("The seconds of one floating-point operation")
    # another flop is another question: its own before (ProgramWindow._question_changed)
    assert program.prediction.text() == core.before_after_text(None, program.after.makespan)
    assert program.keep_button.isEnabled() and program.table.model().rowCount() == 16


def test_a_trace_that_cannot_be_replayed_is_not_shown_as_predicting(main_window, program,
                                                                    qtbot, tmp_path):  # fmt: skip
    """A trace whose receive no send matches opens (it is read) but cannot be predicted:
    the window said 'Predicted time: …' for ever, as if still working."""
    (tmp_path / "r0").write_text("0 init\n0 recv 1 1 100\n0 finalize\n")
    (tmp_path / "r1").write_text("1 init\n1 recv 0 1 100\n1 finalize\n")
    (tmp_path / "deadlock.txt").write_text("r0\nr1\n")
    program.ask_trace_path = lambda: str(tmp_path / "deadlock.txt")
    with qtbot.waitSignal(program.predictionFailed, timeout=30_000):
        assert main_window.open_program_trace()
    assert "r0:2" in program.message.text() and "matched by no send" in program.message.text()
    assert program.prediction.text() == "Predicted time: none (the message below says why)"
    assert not program.state.text()  # not "predicting…"


def test_the_prediction_follows_a_link_speed_dragged(main_window, program, qtbot):
    before = program.after.makespan
    links = main_window.panels["link-groups"]
    assert len(links.group_ids()) == len(main_window.document.machine.hardware().links)
    mantissa = links.speed.mantissa  # GCel's links: 9.1e-07 s a byte
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        mantissa.setValue(mantissa.value() // 2)  # twice as fast
    after = _replayed(main_window, program.trace_path)
    assert program.after.makespan == after < before
    assert program.prediction.text() == core.before_after_text(before, after)
    table = program.table.model()
    assert table.index(0, 2).data() == f"{program.after.finish[0]:.6g}"


def test_what_dominates_shows_the_cores_answer_and_follows_edits(main_window, program, qtbot):
    view = program.dominates
    with qtbot.waitSignal(program.dominanceShown, timeout=60_000):
        program.tabs.setCurrentWidget(view)
    machine = copy.deepcopy(main_window.document.machine)
    expected = core.dominance_rows(core.dominance(machine, core.read_program(program.trace_path)))
    assert view.rows == expected
    labels = [label for label, _ in view.rows]
    assert labels[0] == "All timings" and "Link speed" in labels and "Link latency" in labels
    # an edit while it is on show: worked out again, on the model as it is now, once
    # the prediction the user is watching is in
    order: list[str] = []
    program.predictionShown.connect(lambda *_: order.append("prediction"))
    program.dominanceShown.connect(lambda: order.append("what dominates"))
    with qtbot.waitSignal(program.dominanceShown, timeout=60_000):
        main_window.document.session.scale_group("all", 4.0)
    assert order == ["prediction", "what dominates"]
    machine = copy.deepcopy(main_window.document.machine)
    again = core.dominance_rows(core.dominance(machine, core.read_program(program.trace_path)))
    assert view.rows == again != expected


@pytest.mark.parametrize("width, height", [(600, 300), (1100, 900)])
def test_every_bar_of_what_dominates_is_named_in_a_dock_of(width, height, main_window,
                                                           program, qtbot):  # fmt: skip
    """A bar a knob in a short dock: every bar keeps its name (none dropped to fit), the chart
    scrolls instead; the names are drawn on the axis, none overlapping."""
    from piui.widgets.plot_axes import label_rects, overlapping

    dock = main_window.docks["program"]
    dock.setFloating(True)
    dock.resize(width, height)
    view = program.dominates
    with qtbot.waitSignal(program.dominanceShown, timeout=60_000):
        program.tabs.setCurrentWidget(view)
    for _ in range(3):  # the plot's layout settles over a few passes
        QApplication.processEvents()
        qtbot.wait(10)
    names = [label for label, _ in view.rows]
    assert len(names) >= 10
    axis = view.plot.getPlotItem().getAxis("left")
    drawn = label_rects(axis)
    assert [text for _, text in drawn] == names
    assert not overlapping(drawn)
    scrolls = view.scroll.verticalScrollBar().maximum() > 0
    assert scrolls == (view.scroll.viewport().height() < view.plot.minimumHeight())
    if height == 300:
        assert scrolls  # a dozen names need more than a short dock has
    # each bar's figure at its end, inside the view: read without the scale, which the
    # short dock scrolls below the fold
    assert [t.toPlainText() for t in view.figures] == [core.saved_text(p) for _, p in view.rows]
    (x0, x1), _ = view.view.viewRange()
    for text, (_name, percent) in zip(view.figures, view.rows):
        assert text.pos().x() == pytest.approx(max(percent, 0.0)) and x0 <= text.pos().x() < x1
    longest = max(view.figures, key=lambda t: t.pos().x())
    assert longest.mapRectToView(longest.boundingRect()).right() <= x1  # not cut at the edge


def test_a_program_that_deadlocks_is_said_with_the_stuck_ranks(program, qtbot, tmp_path):
    stuck = tmp_path / "stuck.txt"
    # both send 1.6 MB first (rendezvous: a send waits for its receive), then receive
    stuck.write_text("0 init\n1 init\n0 send 1 0 200000\n1 send 0 0 200000\n"
                     "0 recv 1 0 200000\n1 recv 0 0 200000\n0 finalize\n1 finalize\n")  # fmt: skip
    with qtbot.waitSignal(program.live.failed, timeout=30_000):
        assert program.open_trace(stuck)
    text = program.message.text()
    assert "deadlocks" in text
    assert "rank 0 in send" in text and "stuck.txt:3" in text
    assert "rank 1 in send" in text and "stuck.txt:4" in text
    assert program.state.text() == ""  # nothing left running


def test_out_of_sight_it_predicts_when_shown_again(main_window, program, qtbot):
    before = program.after.makespan
    started = program.live.started
    main_window.docks["program"].hide()
    main_window.document.session.scale_group("all", 2.0)
    main_window.document.session.scale_group("all", 1.5)
    assert program.live.started == started  # no replay nobody sees
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        main_window.show_panel("program")
    assert program.live.started == started + 1
    assert program.after.makespan == _replayed(main_window, program.trace_path) > before


def test_another_trace_or_model_never_shows_the_last_ones_answer(main_window, program,
                                                                 qtbot, tmp_path, sample_copy):  # fmt: skip
    """The last answer stays on show while the same question is asked again (a drag);
    under another trace's title, or for another model, it would be a wrong answer: until
    the new one comes the window says it is pending, the table and timeline empty."""
    old = program.prediction.text()
    assert old.startswith("Predicted time: ") and program.keep_button.isEnabled()
    other = write_stencil(tmp_path, "other.txt", ranks=8, iterations=3)
    shown: list[str] = []
    program.predictionShown.connect(lambda *_: shown.append(program.prediction.text()))
    assert program.open_trace(other)
    # the new trace's prediction runs off the GUI thread: not in yet
    assert not shown
    assert program.prediction.text() == "Predicted time: …"
    assert program.breakdown.rowCount() == 0 and not program.keep_button.isEnabled()
    assert program.title.text().startswith("Program: ")
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    assert program.breakdown.rowCount() == 8
    # another model: the same
    shown.clear()
    assert main_window.open_file(sample_copy("grid4x4.machine"))
    assert not shown and program.prediction.text() == "Predicted time: …"
    assert program.breakdown.rowCount() == 0
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    assert program.prediction.text().startswith("Predicted time: ")
    assert program.prediction.text() != "Predicted time: …"


def test_the_status_bar_stops_saying_predicting_once_the_answer_is_in(main_window, program,
                                                                      qtbot, tmp_path):  # fmt: skip
    other = write_stencil(tmp_path, "third.txt", ranks=4, iterations=2)
    main_window.panels["program"].ask_trace_path = lambda: str(other)
    with qtbot.waitSignal(program.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
        assert main_window.statusBar().currentMessage().startswith("Predicting third.txt")
    assert main_window.statusBar().currentMessage() == ""
    # a trace that cannot be predicted: the message line says why, the bar no "predicting"
    stuck = tmp_path / "stuck.txt"
    stuck.write_text("0 init\n1 init\n0 send 1 0 200000\n1 send 0 0 200000\n"
                     "0 recv 1 0 200000\n1 recv 0 0 200000\n0 finalize\n1 finalize\n")  # fmt: skip
    main_window.panels["program"].ask_trace_path = lambda: str(stuck)
    with qtbot.waitSignal(program.predictionFailed, timeout=30_000):
        main_window.open_trace_action.trigger()
    assert main_window.statusBar().currentMessage() == ""
    assert "deadlocks" in program.message.text()


@pytest.mark.parametrize(("width", "failed"), [(320, False), (320, True), (900, False)])
def test_the_program_window_narrows_to_its_widest_pane(main_window, program, qtbot, width,
                                                       failed):  # fmt: skip
    """The Program window asked 470 px (its breakdown and timeline side by side, at their
    minimum): a narrow dock could not hold it. Now the timeline goes under the breakdown
    when both do not fit, and the window narrows to about 320 px with nothing drawn
    over anything else; wide, they stand side by side again."""
    from widget_overlap import overlapping

    if failed:  # its longest words: "Predicted time: none (the message below says why)"
        with qtbot.waitSignal(program.predictionFailed, timeout=30_000):
            program.flop.setText("1/0")
            program.flop.editingFinished.emit()
    dock = main_window.docks["program"]
    dock.setFloating(True)
    assert dock.minimumSizeHint().width() <= 330
    dock.resize(width, 700)
    for _ in range(4):
        QApplication.processEvents()
    assert abs(program.width() - width) < 40
    side_by_side = program.split.orientation() == Qt.Orientation.Horizontal
    assert side_by_side == (width > 600)
    assert not overlapping(program)
    assert program.timeline.isVisible() and program.table.isVisible()
    assert program.timeline.height() > 100 and program.table.width() > 150
