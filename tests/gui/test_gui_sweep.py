"""File > Sweep…, as a user drives it: axes added from the model's menu, the sweep run in
the background with the plot updating as rows come, cancel, the heat map and parallel
coordinates, what dominates, and a clicked result opened as a new unsaved model."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from parasol_core.sweep.worker import Row


def _dialog(main_window):
    action = next(a for a in main_window.menuBar().actions()[0].menu().actions()
                  if a.text() == "S&weep…")  # fmt: skip
    action.trigger()
    dialog = main_window.sweep_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def _running(main_window, qtbot, rows: int = 2):
    """The dialog with a sweep of 5,000 broadcast variants under way, ``rows`` of them
    made (400 could all be done on a quiet machine before the test acts)."""
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "linear 1e-7 1e-5 5000")
    dialog.pattern.setCurrentText("broadcast")
    dialog.run()
    qtbot.waitUntil(lambda: len(dialog.rows) >= rows, timeout=60_000)
    assert dialog.running
    return dialog


def _add_from_menu(dialog, change: str) -> None:
    dialog._fill_add_menu()
    for menu_action in dialog.add_menu.actions():
        for action in menu_action.menu().actions():
            if action.text() == change:
                action.trigger()
                return
    raise AssertionError(f"{change} is not offered")


def test_the_plot_updates_as_rows_come_and_a_point_opens_its_variant(main_window, qtbot):
    qtbot.waitExposed(main_window)
    qtbot.wait(300)  # the main window's first paints done: the GUI thread is free
    dialog = _dialog(main_window)
    assert "po(1).ia_spd" in dialog.expressions.text()  # the model's ratios to start with
    _add_from_menu(dialog, "tl(1)(*).speed")
    assert dialog.axes.rowCount() == 1
    dialog.axes.item(0, 1).setText("log 1e-7 1e-5 120")
    dialog.pattern.setCurrentText("broadcast")  # a few ms a variant: rows come over time
    seen = []  # (rows so far, points drawn) after each timed redraw

    def spy():  # connected after the dialog's own redraw: runs after it
        xs = dialog.line.getData()[0]
        seen.append((len(dialog.rows), 0 if xs is None else len(xs)))

    dialog._redraw.timeout.connect(spy)
    dialog._redraw.setInterval(20)  # several redraws over the sweep's fraction of a second
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert dialog.running and dialog.cancel_button.isEnabled()
    assert dialog._runner.executor == "local"  # 120 broadcasts on 512 processors: a pool
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert len(dialog.rows) == 120 and "Done: 120 variants" in dialog.status.text()
    # drawn while the rows came: some redraws had part of them, each all there were
    assert any(0 < n < 120 for n, _ in seen), seen
    assert all(points == n for n, points in seen)
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)
    xs, ys = dialog.line.getData()
    assert len(xs) == 120 and dialog.plots.currentWidget() is dialog.line_plot
    # the ratios fall as the links get slower (ia_spd = iga / speed)
    assert ys[0] > ys[-1]
    assert dialog.effects[0][0] == "tl(1)(*).speed"
    # clicking the last point opens that variant as a new unsaved model
    points = dialog.line.scatter.points()
    last = max(points, key=lambda p: p.pos().x())
    dialog.line.scatter.sigClicked.emit(dialog.line.scatter, [last], None)
    doc = main_window.document
    assert doc.path is None and doc.is_modified
    assert doc.machine.topology(1).links[5].speed.mean == pytest.approx(1e-5)
    assert "tl(1)(*).speed = 1e-05" in main_window.statusBar().currentMessage()


def test_two_axes_make_a_heat_map_more_make_parallel_coordinates(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "7e-7, 1.4e-6, 2.8e-6")
    dialog.add_axis("scale arithmetic", "linear 0.5 2 4")
    dialog.expressions.setText("po(1).ia_spd, po(1).dp_spd")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.plots.currentWidget() is dialog.heat_plot
    image = dialog.heat.image
    assert image.shape == (3, 4)  # x: the 3 iga values, y: the 4 factors
    assert image[2, 3] == pytest.approx(16 * image[0, 0])  # 4x iga, 4x the factor
    # dp_spd reads dgx, which the arithmetic group scales and iga is not
    dialog.answer.setCurrentIndex(1)
    assert dict(dialog.effects)["pt(1).iga"] == 0
    # clicking a cell opens its variant
    dialog.open_variant(11)
    assert main_window.document.machine.processor(1).timings["iga"].mean == pytest.approx(
        2.8e-6 * 2)  # fmt: skip
    dialog.add_axis("tl(1)(*).latency", "1e-5, 3e-5")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.plots.currentWidget() is dialog.parallel_plot
    assert len(dialog.parallel_lines) == 24
    line = dialog.parallel_lines[5]  # the rows in the order they came: variant 5 here
    line.sigClicked.emit(line, None)
    iga = main_window.document.machine.processor(1).timings["iga"].mean
    assert iga == pytest.approx(float(dialog.rows[5].values[0]) * float(dialog.rows[5].values[1]))


def test_cancel_stops_the_sweep_and_bad_axes_are_said(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "linear 1e-7 1e-5 5000")
    dialog.pattern.setCurrentText("broadcast")
    dialog.run()
    qtbot.waitUntil(lambda: len(dialog.rows) >= 5, timeout=60_000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert 5 <= len(dialog.rows) < 5000
    assert dialog.status.text().startswith("Cancelled:")
    assert dialog.table.rowCount() == len(dialog.rows)
    dialog.add_axis("pt(9).iga", "1, 2")
    dialog.run()
    assert not dialog.running
    assert "axis 2: 'pt(9).iga': there is no processor with id 9" in dialog.message.text()
    assert isinstance(dialog.rows[0], Row)  # the last results stay


def test_the_pool_runs_while_the_window_lives_and_cancel_ends_its_processes(main_window,
                                                                            qtbot):  # fmt: skip
    """The dialog runs its variants on a process pool (the command line's), the window
    handling events all along; Cancel ends the pool's processes at once: the variants
    under way are dropped, no row comes after it, and no process is left."""
    import multiprocessing
    import os
    import signal

    from PySide6.QtCore import QTimer

    dialog = _dialog(main_window)
    dialog._runner.workers = 2  # a pool of two whatever the cores this test may use
    dialog.add_axis("tl(1)(*).speed", "log 1e-7 1e-5 12")
    dialog.expressions.setText("")
    dialog.pattern.setCurrentText("alltoall")  # seconds a variant: cancelled mid-variant
    events: list[str] = []
    ticker = QTimer(dialog, interval=20)
    ticker.timeout.connect(lambda: events.append("tick"))
    dialog._runner.row.connect(lambda _r: events.append("row"))
    dialog._runner.ended.connect(lambda _e: events.append("ended"))
    before = {p.pid for p in multiprocessing.active_children()}
    ticker.start()
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert dialog._runner.executor == "local"
    qtbot.waitUntil(lambda: len(dialog.rows) >= 1, timeout=120_000)
    processes = [p for p in multiprocessing.active_children() if p.pid not in before]
    workers = {p.pid for p in processes}
    assert len(workers) == 2  # the pool's processes, this process's children
    assert all(os.getppid() != pid for pid in workers)
    # the window was live while the pool worked: the timer ticked before the first row
    assert events.index("row") > 10 and events[:10] == ["tick"] * 10
    # the rows shown at the click (a row already on its way may be delivered while the
    # click is handled: what counts is what the dialog holds when Cancel acts)
    at_click: list[int] = []
    dialog.cancel_button.clicked.connect(lambda: at_click.append(len(dialog.rows)))
    dialog.cancel_button.clicked.connect(lambda: events.append("cancel"))
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    (rows_at_cancel,) = at_click
    # the lambdas above run in the sweep's own thread as it signals: the dialog may take
    # the end (queued to this thread) before "ended" is appended here
    qtbot.waitUntil(lambda: not dialog.running and "ended" in events, timeout=60_000)
    # at once: the workers were ended (SIGTERM), not left to finish their variants and
    # exit as a pool shut down in order does (exit code 0)
    assert [p.exitcode for p in processes] == [-signal.SIGTERM] * len(processes)
    assert len(dialog.rows) == rows_at_cancel < 12
    said = [e for e in events if e != "tick"]
    # every row before the click was taken, and the run ended after it: a row signalled
    # after the click (made before Cancel reached the pool) is not taken
    assert said[: said.index("cancel")] == ["row"] * rows_at_cancel and said[-1] == "ended"
    assert dialog.status.text().startswith("Cancelled:")
    # none of the pool's processes is left, alive or a zombie
    alive = {p.pid for p in multiprocessing.active_children()}
    assert not workers & alive
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}"), pid
    # and a second run of the same dialog works on a new pool
    dialog.pattern.setCurrentText("broadcast")
    dialog.axes.item(0, 1).setText("log 1e-7 1e-5 6")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)
    assert sorted(r.index for r in dialog.rows) == list(range(6))


def test_a_programs_replay_is_an_answer(main_window, qtbot):
    from pathlib import Path

    from parasol_core.sweep import loads_spec, run_sweep

    trace = Path(__file__).resolve().parents[2] / "sample_models" / "traces" / "stencil.txt"
    dialog = _dialog(main_window)
    dialog.add_axis("tl(1)(*).speed", "9.1e-8, 9.1e-7, 9.1e-6")
    dialog.expressions.setText("")
    dialog.trace.setText(str(trace))
    dialog.flop.setText("pt(T).dga")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert [a.name for a in dialog.spec.answers] == ["replay stencil.txt"]
    core = []
    run_sweep(loads_spec(dialog.sweep_text(), model_text=main_window.document.session.text()),
              core.append, executor="serial")  # fmt: skip
    assert sorted(r.answers for r in dialog.rows) == sorted(r.answers for r in core)
    xs, ys = dialog.line.getData()
    assert len(xs) == 3 and ys[0] < ys[1] < ys[2]  # slower links, a longer program


@pytest.mark.parametrize("flop, why", [
    ("pt(T).dga *", "Program (replay): a flop's time, 'pt(T).dga *': syntax error"),
    ("pt(T).dla", "Program (replay): a flop's time on processor type 1, 'pt(1).dla': "
                  "processor 1 has no timing 'dla'"),
])  # fmt: skip
def test_a_flop_no_variant_can_replay_with_is_said_before_any_row_runs(main_window, qtbot,
                                                                        flop, why):  # fmt: skip
    """A flop typed wrong ran every variant, each row saying the same error."""
    from pathlib import Path

    trace = Path(__file__).resolve().parents[2] / "sample_models" / "traces" / "stencil.txt"
    dialog = _dialog(main_window)
    dialog.add_axis("tl(1)(*).speed", "9.1e-8, 9.1e-7")
    dialog.trace.setText(str(trace))
    dialog.flop.setText(flop)
    dialog.run()
    assert not dialog.running and not dialog.rows and dialog.table.rowCount() == 0
    assert dialog.message.text().startswith(why)  # the form's row, not "answer 2"
    dialog.expressions.setText("po(1).ia_spd, 2 *")  # the eval row's own, named so
    dialog.run()
    assert dialog.message.text().startswith("Answers (eval): eval '2 *': syntax error")
    dialog.expressions.setText("")
    dialog.flop.setText("pt(T).dga")  # mended, it runs
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert len(dialog.rows) == 2 and not any(r.error for r in dialog.rows)
    assert dialog.message.text() == ""


def test_a_message_that_comes_and_goes_does_not_move_the_form(main_window, qtbot):
    """The form jumped when an error line under it was cleared (the line went from one
    line's height to none, and the axes table grew into it), and back at the next."""
    from PySide6.QtCore import QPoint

    dialog = _dialog(main_window)
    dialog.resize(900, 700)
    qtbot.waitExposed(dialog)

    def form() -> tuple[int, int]:
        QApplication.processEvents()
        return dialog.axes.height(), dialog.run_button.mapTo(dialog, QPoint(0, 0)).y()

    before = form()
    dialog.add_axis("pt(9).iga", "1, 2")
    dialog.run()
    assert dialog.message.text().startswith("axis 1: 'pt(9).iga'")
    assert form() == before
    dialog.message.clear()
    assert form() == before
    dialog.run()
    assert dialog.message.text() and form() == before


def test_the_program_windows_trace_and_flop_are_one_click_away(main_window, qtbot, tmp_path):
    """Found on a real display: a sweep of the program the Program window predicts meant
    typing its path again, and its flop. The button takes both; the base variant's
    answer is then the window's prediction."""
    from program_traces import write_stencil

    dialog = _dialog(main_window)
    dialog.program_button.click()  # none open yet: said, nothing filled in
    assert "No program is open" in dialog.message.text() and dialog.trace.text() == ""
    path = write_stencil(tmp_path, ranks=8, iterations=4)
    window = main_window.panels["program"]
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_program_trace(str(path))
    window.flop.setText("2 * pt(T).dga")
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        window.flop.editingFinished.emit()
    assert window.program.flop == "2 * pt(T).dga"
    dialog.program_button.click()
    assert dialog.trace.text() == str(path) and dialog.flop.text() == "2 * pt(T).dga"
    assert dialog.message.text() == ""
    dialog.add_axis("scale global", "1, 2")
    dialog.expressions.setText("")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    base = next(r for r in dialog.rows if r.values == ("1",))
    assert base.error == "" and base.answers[0] == window.after.makespan


def test_a_timings_context_menu_adds_it_as_an_axis(main_window, qtbot):
    from parasol_core.frontend.categories import CATEGORIES
    from piui.windows.instructions import CategoryWindow

    category = next(c for c in CATEGORIES if any("iga" in names for _, names in c.sections))
    window = CategoryWindow(main_window.document, category)
    qtbot.addWidget(window)
    window.show()
    menu = window.sweep_menu("iga")
    assert [a.text() for a in menu.actions()] == ["Sweep pt(1).iga…"]
    menu.actions()[0].trigger()
    dialog = main_window.sweep_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.axes.item(0, 0).text() == "pt(1).iga"
    assert dialog.axes.item(0, 1).text() == "log 1.842e-07 2.948e-06 5"  # a quarter to 4x
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert len(dialog.rows) == 5 and not any(r.error for r in dialog.rows)
    assert dialog._runner.executor == "serial"  # 5 evaluations: less than a pool's start-up


def test_a_scaler_groups_context_menu_adds_it_as_an_axis(main_window, qtbot):
    from piui.windows.groups import InstructionGroupsWindow

    window = InstructionGroupsWindow(main_window.document)
    qtbot.addWidget(window)
    menu = window.sweep_menu("arithmetic")
    assert [a.text() for a in menu.actions()] == ["Sweep scale arithmetic pr(1)…"]
    menu.actions()[0].trigger()
    dialog = main_window.sweep_dialog
    assert dialog.axes.item(0, 0).text() == "scale arithmetic pr(1)"
    assert dialog.axes.item(0, 1).text() == "log 0.25 4 5"
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    ratios = [r.answers[0] for r in sorted(dialog.rows, key=lambda r: r.index)]
    assert ratios[-1] == pytest.approx(16 * ratios[0])  # ia_spd scales with iga


def _offered(main_window, menu, text: str, change: str, kind: str, target: tuple) -> str:
    """The menu's one entry says ``text``; triggered, File > Sweep… has ``change`` as its
    axis, which the sweep's reader reads as ``kind`` of ``target`` (its first items).
    Returns the values the dialog suggests."""
    from parasol_core.sweep import loads_spec

    assert [a.text() for a in menu.actions()] == [text]
    menu.actions()[0].trigger()
    dialog = main_window.sweep_dialog
    assert dialog is not None and dialog.isVisible()
    changes = [dialog.axes.item(r, 0).text() for r in range(dialog.axes.rowCount())]
    assert changes.count(change) == 1  # asked again, the axis is chosen, not repeated
    row = changes.index(change)
    assert dialog.axes.currentRow() == row or row == len(changes) - 1
    spec = loads_spec(dialog.sweep_text(), model_text=main_window.document.session.text())
    axis = spec.axes[row]
    assert (axis.kind, axis.target[: len(target)]) == (kind, target)
    return dialog.axes.item(row, 1).text()


def test_the_link_windows_context_menus_add_their_axes(main_window, qtbot):
    from piui.widgets.topology_selection import selection_of
    from piui.windows.link_groups import LinkGroupsWindow
    from piui.windows.topology_editor import TopologyEditorWindow

    links = LinkGroupsWindow(main_window.document)
    qtbot.addWidget(links)
    links.show()
    # every link of the hardware topology, from the group's speed and latency rows
    values = _offered(main_window, links.sweep_menu("speed"), "Sweep tl(1)(*).speed…",
                      "tl(1)(*).speed", "links", (1, "speed"))  # fmt: skip
    assert values == "log 2.275e-07 3.64e-06 5"  # a quarter to 4x the links' 9.1e-7
    _offered(main_window, links.sweep_menu("latency"), "Sweep tl(1)(*).latency…",
             "tl(1)(*).latency", "links", (1, "latency"))  # fmt: skip
    # a single selected link, from its own row
    selection_of(main_window.document).set(1, [], [5])
    assert 5 in links.single_edits
    values = _offered(main_window, links.sweep_menu("speed", 5), "Sweep tl(1)(5).speed…",
                      "tl(1)(5).speed", "set", ("tl(1)(5).speed",))  # fmt: skip
    assert values == "log 2.275e-07 3.64e-06 5"
    # the labels of the rows carry the menus
    label = links.singles.labelForField(links.single_edits[5][1])
    assert label.contextMenuPolicy() == Qt.ContextMenuPolicy.CustomContextMenu
    # the topology editor: the generator (a generated topology) and its links
    editor = TopologyEditorWindow(main_window.document)
    qtbot.addWidget(editor)
    values = _offered(main_window, editor.sweep_menu("topology"), "Sweep topology 1…",
                      "topology 1", "generate", (1,))  # fmt: skip
    assert values.startswith("torus")
    _offered(main_window, editor.sweep_menu("latency"), "Sweep tl(1)(*).latency…",
             "tl(1)(*).latency", "links", (1, "latency"))  # fmt: skip
    dialog = main_window.sweep_dialog
    assert dialog.axes.rowCount() == 4  # the latency of every link was there already
    # the single link's axis sweeps that link alone
    for row in (3, 1, 0):
        dialog.axes.removeRow(row)
    assert [dialog.axes.item(0, 0).text()] == ["tl(1)(5).speed"]
    dialog.axes.item(0, 1).setText("9.1e-7, 9.1e-4")
    dialog.expressions.setText("2 * tl(1)(5).speed, tl(1)(6).speed")  # not the axis' name
    dialog.run()
    assert dialog.running, dialog.message.text()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    got = sorted((r.answers for r in dialog.rows), key=lambda a: a[0])
    assert got == [(pytest.approx(1.82e-6), pytest.approx(9.1e-7)),
                   (pytest.approx(1.82e-3), pytest.approx(9.1e-7))]  # fmt: skip


def test_the_mpi_and_cache_windows_context_menus_add_their_axes(main_window, qtbot):
    from piui.windows.cache import CacheWindow
    from piui.windows.runtime import RuntimeSystemsWindow

    runtime = RuntimeSystemsWindow(main_window.document)
    qtbot.addWidget(runtime)
    page = runtime.pages["mpi"]
    values = _offered(main_window, page.sweep_menu("send"), "Sweep mp.send…", "mp.send",
                      "set", ("mp.send",))  # fmt: skip
    assert values == main_window.document.machine.runtime_sections()[0].entries["send"].text
    undefined = next(n for n in page.rows if n not in ("send", "receive"))
    assert not page.sweep_menu(undefined).actions()[0].isEnabled()  # nothing to sweep
    cache = CacheWindow(main_window.document)
    qtbot.addWidget(cache)
    values = _offered(main_window, cache.sweep_menu("speed"), "Sweep pc(1).speed…",
                      "pc(1).speed", "set", ("pc(1).speed",))  # fmt: skip
    assert values == "log 8.25e-09 1.32e-07 5"  # a quarter to 4x its 3.3e-8
    values = _offered(main_window, cache.sweep_menu("size"), "Sweep pc(1).size…",
                      "pc(1).size", "set", ("pc(1).size",))  # fmt: skip
    assert values == "1, 2, 4"  # whole numbers around its size of 1


def test_every_axis_is_named_in_a_narrow_dialog(main_window, qtbot):
    """Five axes in a 700 px dialog: the parallel coordinates and "what dominates" name
    every axis (none dropped to fit); the charts scroll sideways instead."""
    from PySide6.QtWidgets import QApplication, QScrollArea

    from piui.widgets.plot_axes import label_rects, overlapping

    dialog = _dialog(main_window)
    axes = {"pt(1).iga": "7e-7, 1.4e-6", "pt(1).igm": "1e-6, 2e-6",
            "scale arithmetic": "0.5, 2", "tl(1)(*).latency": "1e-5, 3e-5",
            "tl(1)(*).speed": "1e-7, 1e-6"}  # fmt: skip
    for change, values in axes.items():
        dialog.add_axis(change, values)
    dialog.expressions.setText("po(1).ia_spd")
    dialog.resize(700, 700)
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    for _ in range(3):  # the plots' layout settles over a few passes
        QApplication.processEvents()
        qtbot.wait(10)
    assert dialog.plots.currentWidget() is dialog.parallel_plot
    for plot, names in ((dialog.parallel_plot, [*axes, "po(1).ia_spd"]),
                        (dialog.effects_plot, sorted(axes))):  # fmt: skip
        drawn = label_rects(plot.getPlotItem().getAxis("bottom"))
        assert sorted(text for _, text in drawn) == sorted(names), plot
        assert not overlapping(drawn)
        area = plot.parentWidget()
        while not isinstance(area, QScrollArea):
            area = area.parentWidget()
        scrolls = area.horizontalScrollBar().maximum() > 0
        assert scrolls == (area.viewport().width() < plot.minimumWidth()), plot


def test_escape_cancels_a_running_sweep_before_it_closes_the_dialog(main_window, qtbot):
    """Esc hid the dialog and its sweep ran on unseen; now the first Esc cancels the
    run (the dialog stays, saying so, with the rows made), the next closes it."""
    dialog = _running(main_window, qtbot, 2)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.status.text().startswith("Cancelled:") and len(dialog.rows) < 5000
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_the_table_shows_answers_as_the_windows_do_the_whole_number_in_a_tooltip(
        main_window, qtbot):  # fmt: skip
    """A column of ratios read "0.202472527..." (the CSV's shortest round trip, cut):
    six significant digits, as every window shows a value, the number whole beside."""
    dialog = _dialog(main_window)
    dialog.add_axis("scale all", "0.25, 3")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    headers = [
        dialog.table.horizontalHeaderItem(c).text() for c in range(dialog.table.columnCount())
    ]
    column = headers.index("po(1).ia_spd")
    by_row = {dialog.table.item(r, 0).text(): dialog.table.item(r, column)
              for r in range(dialog.table.rowCount())}  # fmt: skip
    rows = {str(row.index): row for row in dialog.rows}
    for index, item in by_row.items():
        value = rows[index].answers[0]
        assert item.text() == f"{value:.6g}"
        assert float(item.toolTip() or item.text()) == value  # the whole number
    assert dialog.table.item(0, 1).text() in ("0.25", "3")  # an axis's value as written


def test_an_axis_of_long_numbers_is_shown_as_the_answers_are(main_window, qtbot):
    """A log axis's values read "1.930697728..." in the table: six significant digits
    too, the whole number in the tooltip; a generator's words stay as they are."""
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "log 1e-7 1e-5 8")
    dialog.expressions.setText("po(1).ia_spd")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    cells = [dialog.table.item(r, 1) for r in range(dialog.table.rowCount())]
    values = {row.values[0] for row in dialog.rows}
    assert {c.text() for c in cells} == {f"{float(v):.6g}" for v in values}
    long = next(c for c in cells if len(c.toolTip()) > 10)
    assert long.text() == "1.9307e-07" and float(long.toolTip()) == pytest.approx(1.9306977e-07)


@pytest.mark.parametrize(("values", "log"), [("log 0.25 4 5", True), ("0.25, 0.5, 1, 2, 4", True),
                                           ("linear 0.25 4 5", False), ("0.5, 1, 3", False)])  # fmt: skip
def test_a_log_range_is_drawn_on_a_log_axis(main_window, qtbot, values, log):
    """A log range of 0.25 to 4 was drawn on a linear axis, its points bunched at the
    left: values in a constant ratio (or spanning a hundredfold) are drawn on a log one."""
    dialog = _dialog(main_window)
    dialog.add_axis("scale all", values)
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    dialog.redraw()
    assert dialog.line_plot.getPlotItem().getAxis("bottom").logMode == log


def test_a_sweep_of_one_variant_says_one_variant(main_window, qtbot):
    """The status said "Done: 1 variants"; a count is worded by base.words."""
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "1e-6")
    dialog.run()
    assert dialog.status.text() == "0 of 1 variant"
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.status.text() == "Done: 1 variant"


@pytest.mark.parametrize("values", ["1e-6", "1e-6, 2e-6, 1e-5"])
def test_answers_near_the_largest_double_are_left_out_and_said(main_window, qtbot, values):
    """A line of answers near 1e308: pyqtgraph's padding (and the dialog's own +-5 % for
    a flat answer) overflowed to infinity and the plot stopped drawing. Now an answer past
    +-1e300 is left out as plot_limits says, and the plot's title says how many."""
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", values)
    dialog.expressions.setText("pt(1).iga * 1.7e300 * 1e13, pt(1).iga * 2")  # 1.7e307 to 1.7e308
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    n = len(values.split(","))
    assert len(dialog.rows) == n, dialog.message.text()
    assert dialog.status.text().startswith("Done")
    dialog.redraw()
    xs, ys = dialog.line.getData()
    assert xs is None or len(xs) == 0  # none drawable
    title = dialog.line_plot.getPlotItem().titleLabel.text
    assert f"{n} value{'s' if n > 1 else ''} past ±1e300 not drawn" in title
    dialog.line_plot.grab()  # drawn without an error (pytest-qt fails on one raised)
    for lo, hi in dialog.line_plot.getPlotItem().viewRange():
        assert math.isfinite(lo) and math.isfinite(hi)
    dialog.answer.setCurrentIndex(1)  # the other answer: drawn, with no note
    xs, ys = dialog.line.getData()
    assert len(xs) == n and not dialog.line_plot.getPlotItem().titleLabel.isVisible()


def test_closing_a_running_sweep_asks_and_keep_running_keeps_both(main_window, qtbot):
    """Ctrl+W or the title bar cancelled a sweep without a word; now they ask, saying how
    far it is: Keep running keeps the dialog and its run; Stop cancels it and closes."""
    dialog = _running(main_window, qtbot, 2)
    asked = []
    dialog.ask_stop_run = lambda what: asked.append(what) or False
    qtbot.keyClick(dialog, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert dialog.isVisible() and dialog.running and not dialog._cancel.is_set()
    assert len(asked) == 1 and asked[0].startswith("A sweep is running: ")
    assert "of 5,000 variants done" in asked[0]
    dialog.ask_stop_run = lambda what: asked.append(what) or True
    dialog.close()
    assert len(asked) == 2 and not dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert len(dialog.rows) < 5000


@pytest.mark.parametrize("stop", [False, True])
def test_quitting_with_a_sweep_running_asks_before_the_unsaved_changes(main_window, qtbot, stop):
    """Quitting PIUI ended a running sweep unasked. Now the sweep's question comes first:
    Keep running keeps PIUI open (the unsaved changes not asked about, the sweep going
    on); Stop goes on to the unsaved changes, and a Cancel there stops nothing."""
    dialog = _running(main_window, qtbot, 1)
    order = []
    dialog.ask_stop_run = lambda what: order.append("run") or stop
    main_window.ask_save_changes = lambda: order.append("save") or QMessageBox.StandardButton.Cancel
    main_window.document.session.set("pt(1).iga", "8e-7")  # a change not saved
    assert not main_window.close()
    assert order == (["run", "save"] if stop else ["run"])
    assert dialog.running and not dialog._cancel.is_set()  # nothing stopped yet
    main_window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    dialog.ask_stop_run = lambda what: True
    assert main_window.close()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)


def test_stopped_by_a_signal_with_a_sweep_running_nothing_is_asked(main_window, qtbot):
    """SIGTERM (a session's end) closes PIUI with nobody there to answer: a running
    sweep is stopped unasked, not waited on behind a question (the close-asks rule must
    not block a signal's stop)."""
    dialog = _running(main_window, qtbot, 1)
    dialog.ask_stop_run = lambda what: pytest.fail(f"asked: {what}")
    main_window.stop_by_signal("SIGTERM")
    assert not main_window.isVisible()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert len(dialog.rows) < 5000


def test_what_dominates_takes_the_width_its_names_need_when_there_is_room(main_window, qtbot):
    """Three axes at 1,100 px: What dominates scrolled sideways to show its third bar
    while the chart beside it had room to spare; it now takes that room."""
    from PySide6.QtWidgets import QApplication

    dialog = _dialog(main_window)
    for change, values in (("pt(1).iga", "1e-7, 1e-5"), ("tl(1)(*).speed", "1e-7, 1e-5"),
                           ("scale arithmetic", "0.5, 2")):  # fmt: skip
        dialog.add_axis(change, values)
    dialog.expressions.setText("po(1).ia_spd")
    dialog.resize(1100, 760)
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(10)
    area = dialog.effects_plot.parentWidget().parentWidget()
    assert area.viewport().width() >= dialog.effects_plot.minimumWidth()
    assert area.horizontalScrollBar().maximum() == 0


def test_every_column_of_the_results_shows_its_whole_name(main_window, qtbot):
    """Seen on a real display: the results' column "replay stencil.txt" showed as
    "eplay stencil.tx"; and a sweep of no axis said "Run the sweep" once it had run."""
    from pathlib import Path

    trace = Path(__file__).resolve().parents[2] / "sample_models" / "traces" / "stencil.txt"
    dialog = _dialog(main_window)
    dialog.trace.setText(str(trace))
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    header = dialog.table.horizontalHeader()
    metrics = header.fontMetrics()
    for c in range(dialog.table.columnCount()):
        name = dialog.table.horizontalHeaderItem(c).text()
        assert dialog.table.columnWidth(c) >= metrics.horizontalAdvance(name), name
    assert len(dialog.rows) == 1 and dialog.plots.currentWidget() is dialog.empty
    assert dialog.empty.text().startswith("No axis: one variant")
    dialog.add_axis("tl(1)(*).speed", "9.1e-8, 9.1e-7")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.plots.currentWidget() is dialog.line_plot
