"""File > Sweep… holds nothing that outlives the model it was built on: opening another
model (File > Open, New from sample) while the dialog is open leaves no axis, answer,
result or variant of the last one, and a run under way is cancelled with nothing of it
shown; opening one of the sweep's own variants keeps the sweep, to open another."""

from __future__ import annotations

from PySide6.QtCore import Qt

from piui.widgets.plot_axes import label_rects


def label_texts(axis) -> list[str]:
    return [text for _rect, text in label_rects(axis)]


def _dialog(main_window):
    action = next(a for a in main_window.menuBar().actions()[0].menu().actions()
                  if a.text() == "S&weep…")  # fmt: skip
    action.trigger()
    return main_window.sweep_dialog


def _new_from_sample(main_window, name: str) -> None:
    file_menu = main_window.menuBar().actions()[0].menu()
    samples = next(a.menu() for a in file_menu.actions() if a.text() == "&New from sample")
    next(a for a in samples.actions() if a.text() == name).trigger()


def test_another_model_opened_leaves_nothing_of_the_last_sweep(main_window, qtbot, sample_copy):
    dialog = _dialog(main_window)
    dialog.add_suggested("tl(1)(*).speed")
    dialog.add_suggested("scale all")
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.table.rowCount() == 25 and dialog.plots.currentWidget() is dialog.heat_plot
    assert dialog.windowTitle() == "Sweep of parsytec-gcel.machine"

    _new_from_sample(main_window, "grid4x4")
    assert main_window.document.machine.name.startswith("4 x 4 grid")
    assert main_window.document.title() in dialog.windowTitle()
    assert "gcel" not in dialog.windowTitle()
    # the axes' values were the GCel's link speeds: gone with it, and its results too
    assert dialog.axes.rowCount() == 0
    assert dialog.table.rowCount() == 0 and dialog.answer.count() == 0
    assert dialog.plots.currentWidget() is dialog.empty and dialog.effects == []
    # "What dominates" names none of the GCel's axes: no tick label is drawn
    bottom = dialog.effects_plot.getAxis("bottom")
    assert not {"tl(1)(*).speed", "scale all"} & set(label_texts(bottom))
    assert dialog.status.text() == ""
    # the answers offered are the open model's ratios
    expected = [f"po({p.id}).{n}" for p in main_window.document.machine.processors
                for n in p.combinations]  # fmt: skip
    assert dialog.expressions.text().split(", ")[: len(expected)] == expected
    # no variant of the GCel can be opened over the grid any more
    text_before = main_window.document.session.text()
    dialog.open_variant(0)
    assert main_window.document.session.text() == text_before

    # a sweep of the new model runs on it, and File > Open resets the dialog the same way
    dialog.add_suggested("scale all")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.table.rowCount() == 5
    assert main_window.open_file(sample_copy("cray-t3d.machine"))
    assert dialog.windowTitle() == "Sweep of cray-t3d.machine"
    assert dialog.axes.rowCount() == 0 and dialog.table.rowCount() == 0


def test_a_run_under_way_is_cancelled_when_another_model_opens(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "linear 1e-7 1e-5 5000")
    dialog.pattern.setCurrentText("broadcast")
    dialog.run()
    qtbot.waitUntil(lambda: len(dialog.rows) >= 2, timeout=60_000)
    assert dialog.running  # 5,000 variants: still under way (400 could all be done)
    _new_from_sample(main_window, "grid4x4")
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    qtbot.wait(200)  # rows that were on their way: none is shown
    assert dialog.rows == [] and dialog.table.rowCount() == 0
    assert dialog.plots.currentWidget() is dialog.empty
    assert "cancelled" in dialog.status.text()
    assert dialog.run_button.isEnabled()


def test_a_variant_opened_from_the_sweep_keeps_the_sweep(main_window, qtbot):
    dialog = _dialog(main_window)
    dialog.add_axis("pt(1).iga", "7e-7, 1.4e-6, 2.8e-6")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    where = dialog.table.visualItemRect(dialog.table.item(2, 0)).center()
    qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert main_window.document.machine.processor(1).timings["iga"].mean == 2.8e-6
    # the results stay, to open another variant
    assert dialog.table.rowCount() == 3 and dialog.axes.rowCount() == 1
    dialog.open_variant(0)
    assert main_window.document.machine.processor(1).timings["iga"].mean == 7e-7
