"""The run-time systems window and the fit dialog, driven through their widgets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import OSU_LOGS, SAMPLES
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from parasol_core.frontend.runtime import message_sizes
from piui.document import Document
from piui.widgets.expression_edit import INVALID_STYLE, ExpressionEdit
from piui.widgets.labels import value_text
from piui.windows.runtime import RuntimeSystemsWindow


@pytest.fixture
def open_window(qtbot, sample_copy):
    def make(name: str = "fwi-csys.machine") -> RuntimeSystemsWindow:
        document = Document()
        document.open(sample_copy(name))
        window = RuntimeSystemsWindow(document)
        qtbot.addWidget(window)
        window.resize(900, 800)
        window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        return window

    return make


def retype(qtbot, edit: ExpressionEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def settle(window: RuntimeSystemsWindow) -> None:
    """Let the throttled redraw happen now."""
    window._redraw_timer.stop()
    window.redraw()


def plotted(plot, label: str) -> np.ndarray:
    return next(s.y for s in plot.series if s.label == label)


def test_editing_a_pvm_expression_changes_its_value_and_plot(open_window, qtbot):
    window = open_window()
    page = window.pages["pvm"]
    doc = window.document
    page.select("send")
    settle(window)
    row = page.rows["send"]
    assert row.edit.text() == "tl(1)(1).latency + ar.bytes * tl(1)(1).speed"
    assert row.value.text() == value_text(doc.engine.value("pv.send"))
    before = plotted(page.bytes_plot, "pv.send").copy()

    retype(qtbot, row.edit, "2 * (tl(1)(1).latency + ar.bytes * tl(1)(1).speed)")
    qtbot.keyClick(row.edit, Qt.Key.Key_Return)
    settle(window)
    assert doc.machine.pvm.entries["send"].text.startswith("2 * (")
    assert doc.undo_stack.count() == 1
    assert row.value.text() == value_text(doc.engine.value("pv.send"))
    assert float(row.value.text()) == pytest.approx(2 * float(value_text(
        doc.engine.evaluate_text("tl(1)(1).latency + 1024 * tl(1)(1).speed"))), rel=1e-5)  # fmt: skip
    assert np.allclose(plotted(page.bytes_plot, "pv.send"), 2 * before)

    doc.undo_stack.undo()
    settle(window)
    assert row.edit.text().startswith("tl(1)(1).latency")
    assert np.allclose(plotted(page.bytes_plot, "pv.send"), before)


def test_an_invalid_expression_is_refused_in_place(open_window, qtbot):
    window = open_window()
    page = window.pages["pvm"]
    doc = window.document
    row = page.rows["send"]
    old = row.edit.text()
    retype(qtbot, row.edit, "ar.bytes * tl(1)(77).speed")
    assert row.edit.styleSheet() == INVALID_STYLE
    assert "77" in row.edit.toolTip()
    assert "not applied" in page.message.text()
    qtbot.keyClick(row.edit, Qt.Key.Key_Return)
    assert doc.machine.pvm.entries["send"].text == old and doc.undo_stack.count() == 0
    retype(qtbot, row.edit, "ar.bytes * ")  # a syntax error too
    assert row.edit.styleSheet() == INVALID_STYLE
    qtbot.keyClick(row.edit, Qt.Key.Key_Escape)
    assert row.edit.text() == old and doc.undo_stack.count() == 0


def test_sliders_set_the_arguments_values_and_markers(open_window):
    window = open_window()
    page = window.pages["pvm"]
    doc = window.document
    assert window.procs_slider.maximum() == 42  # the machine's processor count
    assert window.current_args() == {"bytes": 1024, "procs": 42}
    window.set_args(nbytes=1 << 20, procs=8)
    settle(window)
    assert doc.engine.args == {"bytes": 1 << 20, "procs": 8}
    expected = doc.engine.value("pv.broadcast")
    assert expected == pytest.approx(7 * (0.03 + (1 << 20) * 8.6e-07))
    assert page.rows["broadcast"].value.text() == value_text(expected)
    assert page.bytes_plot.marker.value() == pytest.approx(20 * math.log10(2))
    assert page.procs_plot.marker.value() == 8
    # the process curve is drawn at the chosen message size, and vice versa
    page.select("broadcast")
    settle(window)
    procs_curve = page.procs_plot.series[0]
    assert procs_curve.y[list(procs_curve.x).index(8)] == pytest.approx(expected)
    sizes = message_sizes()
    assert sizes[0] == 1 and sizes[-1] == 64 << 20
    bytes_curve = page.bytes_plot.series[0]
    assert bytes_curve.y[sizes.index(1 << 20)] == pytest.approx(expected)


def test_typing_a_collective_into_a_model_without_mpi_adds_the_section(open_window, qtbot):
    window = open_window()
    doc = window.document
    assert doc.machine.mpi is None
    page = window.pages["mpi"]
    window.tabs.setCurrentWidget(page)
    row = page.rows["bcast"]
    assert row.edit.text() == "" and row.value.text() == ""
    retype(qtbot, row.edit, "log(ar.procs) * pv.send")
    qtbot.keyClick(row.edit, Qt.Key.Key_Return)
    assert doc.machine.mpi.entries["bcast"].text == "log(ar.procs) * pv.send"
    assert doc.undo_stack.count() == 1
    assert float(row.value.text()) == pytest.approx(
        math.log(42) * doc.engine.value("pv.send"), rel=1e-5)  # fmt: skip
    doc.undo_stack.undo()
    assert doc.machine.mpi is None and page.rows["bcast"].edit.text() == ""


def test_overlay_another_primitive_and_another_model_file(open_window, tmp_path, monkeypatch):
    import os

    from PySide6.QtCore import QSettings

    gcel = SAMPLES / "parsytec-gcel.machine"
    QSettings(os.environ["PIUI_SETTINGS"], QSettings.Format.IniFormat).setValue(
        "recentFiles", [str(gcel)])  # fmt: skip
    window = open_window()
    page = window.pages["pvm"]
    page.select("send")
    page.set_overlay(("receive", None))
    settle(window)
    assert [s.label for s in page.bytes_plot.series] == ["pv.send", "pv.receive"]
    labels = [page.overlay_box.itemText(i) for i in range(page.overlay_box.count())]
    assert "pv.send in parsytec-gcel.machine" in labels
    # GCel has no PVM section: the overlay says so instead of drawing nothing silently
    page.set_overlay(("send", str(gcel)))
    settle(window)
    assert "defines no pv.send" in page.readout.text()
    window.tabs.setCurrentWidget(window.pages["mpi"])
    mpi = window.pages["mpi"]
    other = tmp_path / "other.machine"
    other.write_text(gcel.read_text().replace("ar.bytes * tl(1)(1).speed",
                                              "2 * ar.bytes * tl(1)(1).speed"))  # fmt: skip
    window.document.session.set_expression("mp.send", "ar.bytes * 1e-9")
    mpi.select("send")
    mpi.set_overlay(("send", str(other)))
    settle(window)
    own, theirs = mpi.bytes_plot.series
    assert theirs.label == "mp.send (other.machine)" and theirs.dashed
    i = message_sizes().index(1 << 20)
    assert own.y[i] == pytest.approx((1 << 20) * 1e-9)
    assert theirs.y[i] == pytest.approx(2.85e-05 + 2 * (1 << 20) * 9.1e-07)


def test_crosshair_reads_out_the_values_under_the_mouse(open_window):
    window = open_window()
    page = window.pages["pvm"]
    page.select("send")
    settle(window)
    plot = page.bytes_plot
    text = plot.readout_at(1 << 20)
    assert text.startswith("1 MiB") and "pv.send" in text
    value = window.document.engine.evaluate_text("tl(1)(1).latency + 1048576 * tl(1)(1).speed")
    assert f"{value * 1e3:.4g} ms" in text or f"{value:.4g} s" in text
    vb = plot.getPlotItem().getViewBox()
    centre = vb.sceneBoundingRect().center()
    plot.scene().sigMouseMoved.emit(QPointF(centre))
    assert plot.crosshair.isVisible() and page.readout.text().startswith(plot.readout.split()[0])
    plot.scene().sigMouseMoved.emit(QPointF(-50, -50))
    assert not plot.crosshair.isVisible()


def test_the_readout_evaluates_the_cost_at_the_cursor_not_at_a_nearby_sample(open_window):
    """Issue 22: at 328 KiB the MPI plot showed the time of a nearby sample (38.17 ms
    against 41.10 ms). The mouse over the plot at a size between samples reads the value
    the engine gives at that size."""
    from parasol_core.frontend.runtime import time_text

    window = open_window("parsytec-gcel.machine")
    page = window.pages["mpi"]
    page.select("send")
    settle(window)
    plot = page.bytes_plot
    nbytes = 328 * 1024
    assert nbytes not in message_sizes()  # between two samples
    vb = plot.getPlotItem().getViewBox()
    y = vb.viewRect().center().y()
    plot.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(math.log10(nbytes), y)))
    assert plot.crosshair.isVisible()
    at = round(10 ** plot.crosshair.value())  # where the mouse is, in whole bytes
    assert abs(at - nbytes) <= 1
    procs = window.current_args()["procs"]
    [exact] = window.document.engine.sweep("mp.send", [{"bytes": at, "procs": procs}])
    assert page.readout.text().startswith("328 KiB")
    assert f"mp.send {time_text(exact)}" in page.readout.text()
    own = plot.series[0]
    nearest = own.y[int(np.argmin(np.abs(np.log(own.x) - math.log(at))))]
    assert time_text(nearest) != time_text(exact)  # the nearest sample would have misled


# ---------------------------------------------------------------- the fit dialog


def bcast_csv(path, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    rows = ["procs,bytes,seconds,error"]
    for p in (2, 4, 8, 16, 32):
        for d in (8, 64, 512, 4096, 32768, 262144):
            t = 1e-4 + 2e-6 * p + 2e-8 * d * math.log(p)
            rows.append(f"{p},{d},{t * (1 + 0.01 * rng.normal())!r},{0.01 * t!r}")
    path.write_text("\n".join(rows) + "\n")


def test_fit_dialog_shows_all_seven_process_counts_a_picker_and_the_residuals(
    open_window, tmp_path, qtbot
):
    """Issue 22: a CSV with 7 process counts plotted 6 series and said nothing of the
    seventh; the min/max band did not show. Every count is a series (and an entry of
    the picker), unticking one hides it from both plots, the residual plot shows
    measured - fitted, and the band's width is written and its edges drawn."""
    window = open_window()
    page = window.pages["mpi"]
    window.tabs.setCurrentWidget(page)
    page.select("bcast")
    dialog = page.open_fit_dialog()
    qtbot.addWidget(dialog)
    counts = (2, 4, 8, 16, 32, 64, 128)
    rng = np.random.default_rng(7)
    rows = ["procs,bytes,seconds,error"]
    for p in counts:
        for d in (8, 64, 512, 4096, 32768):
            t = 1e-4 + 2e-6 * p + 2e-8 * d * math.log(p)
            rows.append(f"{p},{d},{t * (1 + 0.01 * rng.normal())!r},{0.01 * t!r}")
    csv = tmp_path / "seven.csv"
    csv.write_text("\n".join(rows) + "\n")
    assert dialog.add_file(csv)
    dialog.show()
    qtbot.waitExposed(dialog)
    entries = [dialog.series_list.item(i).text() for i in range(dialog.series_list.count())]
    assert entries == [f"{p} processes" for p in counts]
    points = [s for s in dialog.plot.series if s.points]
    assert [s.label for s in points] == entries  # seven series, none left out
    assert dialog.series_note.text() == "All 7 process counts shown."
    assert "within ±" in dialog.plot.getPlotItem().titleLabel.text  # the band, in words

    # untick 128 processes as a user does: the entry current, Space
    last = dialog.series_list.item(6)
    dialog.series_list.setFocus()
    dialog.series_list.setCurrentItem(last)
    qtbot.keyClick(dialog.series_list, Qt.Key.Key_Space)
    assert last.checkState() == Qt.CheckState.Unchecked
    labels = [s.label for s in dialog.plot.series if s.points]
    assert "128 processes" not in labels and len(labels) == 6
    assert "hidden: 128" in dialog.series_note.text()

    best = dialog.chosen()
    residuals = dialog.residuals.series
    assert [s.label for s in residuals] == labels
    m = dialog.measurements
    for s in residuals:
        p = int(s.label.split()[0])
        sel = m.procs == p
        expected = m.seconds[sel] - best.predict(p, m.bytes[sel])
        assert np.allclose(s.y, expected) and np.allclose(s.x, m.bytes[sel])


def test_fit_dialog_writes_the_chosen_expression_as_one_undoable_edit(open_window, tmp_path):
    window = open_window()
    doc = window.document
    page = window.pages["mpi"]
    window.tabs.setCurrentWidget(page)
    page.select("bcast")
    dialog = page.open_fit_dialog()
    csv = tmp_path / "bcast.csv"
    bcast_csv(csv)
    assert dialog.add_file(csv)
    assert dialog.table.rowCount() == 12
    assert dialog.table.item(0, 0).text() == "c + s*p + d*bytes*log(p)"
    best = dialog.candidates[0]
    assert dialog.expression.text() == f"mp.bcast = {best.expression()}"
    points = [s for s in dialog.plot.series if s.points]
    assert len(points) == 5 and sum(len(s.x) for s in points) == 30
    assert dialog.write()
    assert doc.machine.mpi.entries["bcast"].text == best.expression()
    assert doc.undo_stack.count() == 1 and doc.undo_stack.undoText() == "Fit mp.bcast"
    value = doc.engine.value("mp.bcast")  # at 1 KiB and 42 processes
    assert value == pytest.approx(float(best.predict(42, 1024)), rel=1e-3)
    assert page.rows["bcast"].value.text() == value_text(value)
    # choosing another candidate writes that one instead
    dialog.choose(3)
    assert dialog.write()
    assert doc.machine.mpi.entries["bcast"].text == dialog.candidates[3].expression()
    doc.undo_stack.undo()
    doc.undo_stack.undo()
    assert doc.machine.mpi is None


def test_fit_dialog_reads_osu_output_and_reports_bad_files(open_window, tmp_path):
    window = open_window()
    dialog = window.pages["mpi"].open_fit_dialog()
    osu = tmp_path / "osu_latency.txt"
    osu.write_text("# OSU MPI Latency Test v7.1\n# Size          Latency (us)\n"
                   "1 1.0\n64 1.5\n1024 9.0\n65536 520.0\n")  # fmt: skip
    assert dialog.add_file(osu, procs=2)
    assert "2 processes" in dialog.source_list.item(0).text()
    assert dialog.candidates[0].form.start is None
    assert "Q is not given" in dialog.status.text()
    bad = tmp_path / "bad.csv"
    bad.write_text("procs,bytes\n1,2\n")
    assert not dialog.add_file(bad)
    assert "expected the header" in dialog.status.text()
    binary = tmp_path / "osu.out"
    binary.write_bytes(b"# Size  Latency (us)\n1 \xff\xfe\n")
    assert not dialog.add_file(binary)
    assert "osu.out: line 2: not UTF-8 text" in dialog.status.text()
    garbled = tmp_path / "osu2.out"
    garbled.write_text("# Size  Latency (us)\n1 1.0\n64 1.5x\n")
    assert not dialog.add_file(garbled)
    assert "line 3: '1.5x' is not a number" in dialog.status.text()
    assert len(dialog.sources) == 1


def pick(qtbot, combo, text: str) -> None:
    """Choose ``text`` in a combo box as a user does: click it open, arrow down to the
    item, press Return."""
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    for _ in range(combo.count() + 1):
        if view.currentIndex().data() == text:
            break
        qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.currentIndex().data() == text
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not view.isVisible())


def open_send_fit(open_window, qtbot):
    window = open_window()
    page = window.pages["mpi"]
    window.tabs.setCurrentWidget(page)
    page.select("send")
    dialog = page.open_fit_dialog()
    qtbot.waitExposed(dialog)
    return window, dialog


def test_fit_dialog_lists_the_tables_of_a_log_and_fits_the_one_picked(open_window, qtbot):
    window, dialog = open_send_fit(open_window, qtbot)
    assert dialog.add_file(OSU_LOGS / "job-seven-benchmarks.log", procs=2)
    # seven benchmarks: a list of them, and nothing fitted until one is chosen
    assert dialog.table_row.isVisible()
    names = [dialog.table_box.itemText(i) for i in range(dialog.table_box.count())]
    assert names[:2] == ["osu_latency — Latency Test (23 rows)",
                         "osu_bw — Bandwidth Test (23 rows, bandwidth)"]  # fmt: skip
    assert names[-1] == "osu_barrier — Barrier Latency Test (1 row)"
    assert dialog.table_box.currentIndex() == -1 and dialog.candidates == []
    assert not dialog.write_button.isEnabled()
    assert "holds 7 benchmark tables: choose one under Table" in dialog.status.text()
    assert "12 lines were not part of a table and skipped" in dialog.notes.text()
    assert "7 tables; choose one" in dialog.source_list.item(0).text()

    pick(qtbot, dialog.table_box, names[0])
    assert "osu_latency, 23 measurements" in dialog.source_list.item(0).text()
    best = dialog.candidates[0]
    assert best.coefficients["c"] == pytest.approx(9.6e-6, rel=0.05)  # not 15 us
    assert dialog.expression.text() == f"mp.send = {best.expression()}"
    points = [s for s in dialog.plot.series if s.points]
    assert sum(len(s.x) for s in points) == 23
    assert "job-seven-benchmarks.log: table osu_latency." in dialog.notes.text()
    assert "bandwidth" not in dialog.notes.text()

    # the bandwidth table: times are bytes / bandwidth, and the notes say what that means
    pick(qtbot, dialog.table_box, names[1])
    bw = dialog.candidates[0]
    assert bw.coefficients["c"] == pytest.approx(0.5e-6, rel=0.1)
    assert bw.coefficients["d"] == pytest.approx(1 / 2800e6, rel=0.05)
    table = dialog.sources[0].table
    (series,) = points = [s for s in dialog.plot.series if s.points]
    assert np.allclose(series.y, np.array(table.sizes) / (np.array(table.values) * 1e6))
    assert "osu_bw is a bandwidth table" in dialog.notes.text()
    assert "not the latency of one message" in dialog.notes.text()
    assert dialog.write()
    doc = window.document
    assert doc.machine.mpi.entries["send"].text == bw.expression()
    assert doc.undo_stack.undoText() == "Fit mp.send"


def test_fit_dialog_never_fits_different_benchmarks_together(open_window, qtbot):
    _, dialog = open_send_fit(open_window, qtbot)
    # one table: chosen without asking, the list stays hidden, skipped lines noted
    assert dialog.add_file(OSU_LOGS / "prose-first-latency.log", procs=2)
    assert not dialog.table_row.isVisible()
    assert len(dialog.candidates) == 4 and len(dialog.measurements) == 24
    assert "7 lines were not part of a table" in dialog.notes.text()
    # a bandwidth file beside it: a warning and no fit, not a merge
    assert dialog.add_file(OSU_LOGS / "osu_bw.txt", procs=2)
    assert dialog.candidates == [] and not dialog.write_button.isEnabled()
    text = dialog.status.text()
    assert text.startswith("Not fitted: the tables are of different benchmarks")
    assert "osu_latency (prose-first-latency.log)" in text and "osu_bw (osu_bw.txt)" in text
    # the user selects the bandwidth file and removes it: the latency fit is back
    dialog.source_list.setCurrentRow(1)
    qtbot.mouseClick(dialog.remove_button, Qt.MouseButton.LeftButton)
    assert len(dialog.sources) == 1 and len(dialog.measurements) == 24
    # the same benchmark from a job log is fitted with it once chosen there
    assert dialog.add_file(OSU_LOGS / "job-seven-benchmarks.log", procs=2)
    assert dialog.candidates == []  # until a table of the log is chosen
    pick(qtbot, dialog.table_box, "osu_allreduce — Allreduce Latency Test (19 rows)")
    assert "osu_allreduce (job-seven-benchmarks.log)" in dialog.status.text()
    assert dialog.choose_table("latency")  # the same, by name
    assert dialog.table_box.currentText() == "osu_latency — Latency Test (23 rows)"
    assert len(dialog.measurements) == 24 + 23 and dialog.candidates
    # a table with nothing to fit says why
    assert dialog.add_file(OSU_LOGS / "mixed-versions.log", procs=2)
    pick(qtbot, dialog.table_box,
         "osu_iallreduce — Non-blocking Allreduce Latency Test (15 rows, other)")  # fmt: skip
    assert "no latency (us) or bandwidth (MB/s) column" in dialog.status.text()
    assert dialog.candidates == []


def test_measurements_beside_the_model_are_named_by_one_rule():
    from parasol_core.measure.files import measurements_file

    model = SAMPLES / "cray-t3d.machine"
    path = measurements_file(model, "mp.bcast")
    assert path == SAMPLES / "measurements" / "cray-t3d.mpi.bcast.csv" and path.exists()
    assert measurements_file("m/x.machine", "pv.send").as_posix() == "m/measurements/x.pvm.send.csv"
    assert measurements_file("x.machine", "ex.sync").name == "x.express.sync.csv"
    for bad in ("mpi.bcast", "mp", "mp.", "pt(1).iga"):
        with pytest.raises(ValueError, match="not a run-time primitive"):
            measurements_file(model, bad)


def test_the_window_and_its_fit_dialog_find_the_measurements_beside_the_model(open_window):
    """The window picks the primitive that has measurements beside the model, and the
    fit dialog loads them, both by parasol_core.measure.files.measurements_file."""
    from parasol_core.measure.files import measurements_file

    window = open_window()
    path = window.document.path
    target = measurements_file(path, "mp.reduce")
    target.parent.mkdir()
    bcast_csv(target)
    [(name, dialog)] = window.extra_windows()
    assert name == "runtime-fit" and dialog.ref == "mp.reduce"
    assert len(dialog.sources) == 1 and dialog.candidates
    dialog.close()


def test_screenshots_include_the_runtime_window_and_fit_dialog(tmp_path):
    from piui.app import main

    out = tmp_path / "shots"
    assert main(["--screenshots", str(out), str(SAMPLES / "fwi-csys.machine")]) == 0
    names = {p.stem for p in out.glob("*.png")}
    assert {"runtime", "runtime-2", "runtime-3", "runtime-fit"} <= names
    QApplication.processEvents()


@pytest.mark.parametrize(("first", "then"), [("fwi-csys.machine", "parsytec-gcel.machine"),
                                             ("parsytec-gcel.machine", "fwi-csys.machine")])  # fmt: skip
def test_another_model_opened_shows_what_a_window_built_on_it_shows(open_window, first, then,
                                                                    sample_copy):  # fmt: skip
    """The FWI model (PVM costs) then the GCel (MPI costs only) opened: the window stayed
    on the PVM tab, 'pv.sync is not defined' over empty plots, where a window built on
    the GCel shows its MPI send. On open the window rebuilds what it derived from the
    model, the tab shown included."""
    window = open_window(first)
    window.document.open(sample_copy(then))
    settle(window)
    fresh = open_window(then)
    settle(fresh)
    assert window.tabs.currentIndex() == fresh.tabs.currentIndex()
    page, fresh_page = window.tabs.currentWidget(), fresh.tabs.currentWidget()
    assert page.selected == fresh_page.selected
    assert [s.label for s in page.bytes_plot.series] == [
        s.label for s in fresh_page.bytes_plot.series
    ]
    assert page.bytes_plot.series  # a cost the model defines, drawn
