"""The run-time systems window and the fit dialog, driven through their widgets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import SAMPLES
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from parasol_core.runtime import message_sizes
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


# ---------------------------------------------------------------- the fit dialog


def bcast_csv(path, seed: int = 5) -> None:
    rng = np.random.default_rng(seed)
    rows = ["procs,bytes,seconds,error"]
    for p in (2, 4, 8, 16, 32):
        for d in (8, 64, 512, 4096, 32768, 262144):
            t = 1e-4 + 2e-6 * p + 2e-8 * d * math.log(p)
            rows.append(f"{p},{d},{t * (1 + 0.01 * rng.normal())!r},{0.01 * t!r}")
    path.write_text("\n".join(rows) + "\n")


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
    assert len(dialog.sources) == 1


def test_screenshots_include_the_runtime_window_and_fit_dialog(tmp_path):
    from piui.app import main

    out = tmp_path / "shots"
    assert main(["--screenshots", str(out), str(SAMPLES / "fwi-csys.machine")]) == 0
    names = {p.stem for p in out.glob("*.png")}
    assert {"runtime", "runtime-2", "runtime-3", "runtime-fit"} <= names
    QApplication.processEvents()
