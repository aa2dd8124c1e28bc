"""The Combinations window: ratios with live values, checked expression editing, the bar
chart of every processor type and the sensitivity of a ratio."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parasol_core.expr.evaluate import EvalError
from parasol_core.model import COMBINATION_NAMES, Timing
from piui.document import Document
from piui.widgets.expression_edit import INVALID_STYLE, ExpressionEdit, check_expression
from piui.widgets.labels import value_text
from piui.windows.combinations import MAXTOTALSPD, CombinationsWindow


@pytest.fixture
def open_window(qtbot, sample_copy):
    """open_window("fwi-csys.machine") -> CombinationsWindow on a Document of a copy."""

    def make(name: str = "parsytec-gcel.machine") -> CombinationsWindow:
        document = Document()
        document.open(sample_copy(name))
        window = CombinationsWindow(document)
        qtbot.addWidget(window)
        window.resize(760, 900)
        window.show()
        window.activateWindow()  # so that editors take the keyboard focus
        qtbot.waitUntil(window.isActiveWindow)
        return window

    return make


def retype(qtbot, edit: ExpressionEdit, text: str) -> None:
    """Replace the editor's text by typing, as a user would."""
    edit.setFocus()
    assert edit.hasFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def value_label(window: CombinationsWindow, name: str) -> str:
    return window.rows[name].value.text()


def is_flagged(edit: ExpressionEdit) -> bool:
    return edit.styleSheet() == INVALID_STYLE and bool(edit.toolTip())


# --------------------------------------------------------------------------- the table


def test_rows_show_expressions_and_engine_values(open_window):
    window = open_window()
    engine = window.document.engine
    for name in COMBINATION_NAMES:
        row = window.rows[name]
        assert row.edit.text() == window.document.machine.processor(1).combinations[name].text
        assert value_label(window, name) == value_text(engine.value(f"po(1).{name}"))
    assert window.rows["ia_spd"].edit.text() == "pt(1).iga / tl(1)(1).speed"
    assert value_label(window, "ia_spd") == "0.80989"  # the report: "evaluates to 0.81"
    assert window.rows[MAXTOTALSPD].edit.text().startswith("(tl(1)(1).connect(0)")
    assert value_label(window, MAXTOTALSPD) == "2.14505e+09"  # the report: 2.145e+9


def test_an_invalid_expression_is_flagged_never_applied_and_fixing_it_applies(open_window, qtbot):
    window = open_window()
    doc = window.document
    proc = doc.machine.processor(1)
    old_text = proc.combinations["ia_spd"].text
    old_value = value_label(window, "ia_spd")
    edit = window.rows["ia_spd"].edit

    # a syntax error: flagged as typed, with its column, and Enter does not apply it
    retype(qtbot, edit, "pt(1).iga / ")
    assert is_flagged(edit)
    assert "column 12" in edit.toolTip() and "ends too early" in edit.toolTip()
    assert "column 12" in window.message.text() and "not applied" in window.message.text()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert proc.combinations["ia_spd"].text == old_text
    assert doc.undo_stack.count() == 0 and value_label(window, "ia_spd") == old_value

    # a reference that names nothing is an error too
    retype(qtbot, edit, "pt(1).iga / tl(1)(9999).speed")
    assert is_flagged(edit)
    assert "no link with id 9999" in edit.toolTip() and "column 13" in edit.toolTip()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    retype(qtbot, edit, "pt(1).igq / tl(1)(1).speed")
    assert "'igq' is not a timing parameter" in edit.toolTip()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert proc.combinations["ia_spd"].text == old_text and doc.undo_stack.count() == 0

    # Escape puts the model's text back
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert edit.text() == old_text and not is_flagged(edit) and edit.toolTip() == old_text
    assert "not applied" not in window.message.text()

    # fixed: applied as one undo step, and the value follows
    retype(qtbot, edit, "pt(1).iga / (2 * tl(1)(1).speed)")
    assert not is_flagged(edit)
    assert "would be 0.404945" in window.message.text()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert proc.combinations["ia_spd"].text == "pt(1).iga / (2 * tl(1)(1).speed)"
    assert doc.undo_stack.count() == 1
    assert doc.engine.value("po(1).ia_spd") == pytest.approx(0.80989 / 2, rel=1e-5)
    assert value_label(window, "ia_spd") == value_text(doc.engine.value("po(1).ia_spd"))
    assert value_label(window, "ia_spd") == "0.404945"

    # undo restores the old text, in the model and in the editor
    doc.undo_stack.undo()
    assert proc.combinations["ia_spd"].text == old_text
    assert edit.text() == old_text and value_label(window, "ia_spd") == old_value
    doc.undo_stack.redo()
    assert edit.text() == "pt(1).iga / (2 * tl(1)(1).speed)"


def test_leaving_the_field_applies_valid_text_and_drops_invalid_text(open_window, qtbot):
    window = open_window()
    doc = window.document
    proc = doc.machine.processor(1)
    edit = window.rows["im_spd"].edit
    other = window.rows["da_spd"].edit
    old_text = proc.combinations["im_spd"].text

    retype(qtbot, edit, "pt(1).igm / ")
    other.setFocus()  # focus out with invalid text: restored, nothing applied
    assert edit.text() == old_text and not is_flagged(edit)
    assert proc.combinations["im_spd"].text == old_text and doc.undo_stack.count() == 0

    retype(qtbot, edit, "pt(1).igm / tl(1)(1).latency")
    other.setFocus()  # focus out with valid text: applied
    assert proc.combinations["im_spd"].text == "pt(1).igm / tl(1)(1).latency"
    assert doc.undo_stack.count() == 1
    assert value_label(window, "im_spd") == value_text(doc.engine.value("po(1).im_spd"))


def test_a_reference_back_to_the_expression_itself_is_refused(open_window, qtbot):
    window = open_window()
    edit = window.rows["dm_spd"].edit
    retype(qtbot, edit, "po(1).dm_spd * 2")
    assert is_flagged(edit) and "cycle" in edit.toolTip()
    retype(qtbot, edit, "po(1).da_spd * 2")  # another ratio is fine
    assert not is_flagged(edit)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    # and now da_spd may not refer to dm_spd, which refers to it
    da = window.rows["da_spd"].edit
    retype(qtbot, da, "po(1).dm_spd")
    assert is_flagged(da) and "po(1).da_spd" in da.toolTip()


def test_check_expression_without_a_window(sample_copy):
    doc = Document()
    doc.open(sample_copy("parsytec-gcel.machine"))
    m, e = doc.machine, doc.engine
    assert check_expression("pt(1).iga / tl(1)(1).speed", m, e).ok
    assert check_expression("", m, e).ok and check_expression("", m, e).expression is None
    bad = check_expression("ar.bytes * 2", m, e)
    assert not bad.ok and "only defined inside" in bad.message and bad.column == 1
    assert check_expression("ar.bytes * 2", m, e, runtime=True).ok
    division = check_expression("pt(1).iga / 0", m, e)
    assert division.ok and isinstance(division.value, EvalError)  # an error is a value


# --------------------------------------------------------------------------- live values


def test_a_value_follows_a_timing_while_a_slider_is_dragged(open_window, qtbot):
    window = open_window()
    doc = window.document
    ref = "pt(1).iga"
    drag = object()
    seen = []
    for factor in (1.5, 2.0, 3.0):  # three slider steps of one drag
        doc.session.set_value(ref, Timing(7.37e-07 * factor), label="Set iga", merge=drag)
        expected = value_text(doc.engine.value("po(1).ia_spd"))
        assert value_label(window, "ia_spd") == expected
        seen.append(expected)
    assert seen == ["1.21484", "1.61978", "2.42967"]
    assert doc.undo_stack.count() == 1  # the drag is one step
    assert value_label(window, "im_spd") == "1.75824"  # untouched rows stay as they were
    doc.undo_stack.undo()
    assert value_label(window, "ia_spd") == "0.80989"


def test_an_evaluation_error_shows_in_place_of_the_value(open_window, qtbot):
    window = open_window()
    doc = window.document
    doc.session.set_value("tl(1)(1).speed", Timing(0.0), label="zero")
    text = value_label(window, "ia_spd")
    assert text.startswith("error:") and "division by zero" in text
    assert text == value_text(doc.engine.value("po(1).ia_spd"))


def test_the_selected_processor_type_is_followed(open_window, qtbot):
    window = open_window("fwi-csys.machine")
    doc = window.document
    assert window.processor_box.count() == 3
    doc.set_current_processor(3)
    assert window.rows["ia_spd"].edit.text() == "pt(3).iga / tl(1)(1).speed"
    assert value_label(window, "ia_spd") == value_text(doc.engine.value("po(3).ia_spd"))
    assert window.processor_box.currentData() == 3
    window.processor_box.setCurrentIndex(1)
    window.processor_box.activated.emit(1)
    assert doc.current_processor_id == 2
    assert window.rows["ia_spd"].edit.text() == "pt(2).iga / tl(1)(1).speed"
    # an edit in progress was for the other processor type's ratio: switching drops it
    edit = window.rows["dd_spd"].edit
    retype(qtbot, edit, "pt(2).dgd / tl(1)(7).speed")
    assert is_flagged(edit)
    doc.set_current_processor(1)
    assert edit.text() == "pt(1).dgd / tl(1)(1).speed" and not is_flagged(edit)
    retype(qtbot, edit, "pt(1).dgd * 2")
    doc.set_current_processor(2)
    window.rows["ia_spd"].edit.setFocus()  # leaving the field now applies nothing
    assert doc.undo_stack.count() == 0
    assert doc.machine.processor(2).combinations["dd_spd"].text == "pt(2).dgd / tl(1)(1).speed"
    doc.set_current_processor(2)
    # a timing of another processor type does not touch the rows shown
    shown = value_label(window, "ia_spd")
    doc.session.set_value("pt(1).iga", Timing(1e-3), label="Set")
    assert value_label(window, "ia_spd") == shown


# --------------------------------------------------------------------------- adding, removing


def test_a_ratio_the_processor_lacks_is_added_by_typing_it(open_window, qtbot, tmp_path):
    window = open_window("vax-11-785.machine")  # no combinations, no links
    doc = window.document
    proc = doc.machine.processor(1)
    edit = window.rows["ia_spd"].edit
    assert edit.text() == "" and "type an expression" in edit.placeholderText()
    assert value_label(window, "ia_spd") == "—"
    assert window.chart.bar_count() == 0

    retype(qtbot, edit, "pt(1).iga / tl(1)(1).speed")  # this model has no link 1
    assert is_flagged(edit) and "no link" in edit.toolTip()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert "ia_spd" not in proc.combinations

    retype(qtbot, edit, "pt(1).iga / pt(1).dla")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert proc.combinations["ia_spd"].text == "pt(1).iga / pt(1).dla"
    assert value_label(window, "ia_spd") == value_text(doc.engine.value("po(1).ia_spd"))
    assert doc.undo_stack.undoText() == "Add po(1).ia_spd"
    window.redraw_chart()
    assert window.chart.bar_count() == 1

    # it is saved, and undo takes it away again
    doc.save(tmp_path / "saved.machine")
    assert "ia_spd = pt(1).iga / pt(1).dla" in (tmp_path / "saved.machine").read_text()
    doc.undo_stack.undo()
    assert "ia_spd" not in proc.combinations and edit.text() == ""
    assert value_label(window, "ia_spd") == "—"


def test_emptying_an_expression_removes_it(open_window, qtbot):
    window = open_window()
    doc = window.document
    proc = doc.machine.processor(1)
    edit = window.rows["ds_spd"].edit
    retype(qtbot, edit, "")
    assert not is_flagged(edit) and "removes" in window.message.text()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert "ds_spd" not in proc.combinations and value_label(window, "ds_spd") == "—"
    doc.undo_stack.undo()
    assert proc.combinations["ds_spd"].text == "pt(1).sind / tl(1)(1).speed"


def test_maxtotalspd_can_be_added_to_a_model_without_machine_combinations(open_window, qtbot):
    window = open_window("vax-11-785.machine")
    doc = window.document
    assert doc.machine.combinations is None
    edit = window.rows[MAXTOTALSPD].edit
    assert edit.text() == "" and value_label(window, MAXTOTALSPD) == "—"
    retype(qtbot, edit, "to(1).processors / pt(1).iga")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert doc.machine.combinations is not None
    assert doc.machine.combinations.entries["maxtotalspd"].text == "to(1).processors / pt(1).iga"
    assert value_label(window, MAXTOTALSPD) == value_text(doc.engine.value("mc.maxtotalspd"))
    assert value_label(window, MAXTOTALSPD) != "—"
    doc.undo_stack.undo()
    assert doc.machine.combinations is None and edit.text() == ""


# --------------------------------------------------------------------------- the bar chart


def test_the_chart_has_a_bar_group_per_processor_type(open_window, qtbot):
    window = open_window("fwi-csys.machine")
    doc = window.document
    chart = window.chart
    assert len(chart.bars) == 3  # one BarGraphItem (one colour) per processor type
    assert [len(bar.opts["x"]) for bar in chart.bars] == [7, 7, 7]
    brushes = {bar.opts["brush"].color().name() for bar in chart.bars}
    assert len(brushes) == 3
    for p in doc.machine.processors:
        assert p.name in chart.legend.text()
    # x ticks are the ratio names
    ticks = chart.plot.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks] == list(COMBINATION_NAMES)

    # bars follow the engine (log axis: the bar reaches log10 of the ratio)
    top = chart.bars[1].opts["y0"][0] + chart.bars[1].opts["height"][0]
    assert 10**top == pytest.approx(doc.engine.value("po(2).ia_spd"))
    doc.session.set_value("pt(2).iga", Timing(1.7e-06), label="Set")
    qtbot.waitUntil(lambda: not window._chart_timer.isActive())
    top = chart.bars[1].opts["y0"][0] + chart.bars[1].opts["height"][0]
    assert 10**top == pytest.approx(doc.engine.value("po(2).ia_spd"))

    # an evaluation error is a missing bar
    doc.set_current_processor(3)
    retype(qtbot, window.rows["dd_spd"].edit, "pt(3).dgd / 0")
    qtbot.keyClick(window.rows["dd_spd"].edit, Qt.Key.Key_Return)
    assert value_label(window, "dd_spd").startswith("error:")
    assert [len(bar.opts["x"]) for bar in chart.bars] == [7, 7, 6]
    assert "1 value" in chart.note.text()

    # linear scale: bars from zero to the value
    chart.log_scale.setChecked(False)
    assert chart.bars[0].opts["height"][0] == pytest.approx(doc.engine.value("po(1).ia_spd"))


# --------------------------------------------------------------------------- sensitivity


def click_row(qtbot, window: CombinationsWindow, name: str) -> None:
    row = window.rows[name]
    rect = window.table.visualItemRect(window.table.item(row.value.row(), 0))
    qtbot.mouseClick(window.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def sensitivity_rows(window: CombinationsWindow) -> dict[str, str]:
    table = window.sensitivity
    return {table.item(r, 0).text(): table.item(r, 4).text() for r in range(table.rowCount())}


def test_selecting_a_ratio_shows_its_sensitivities(open_window, qtbot):
    window = open_window()
    click_row(qtbot, window, "dp_spd")
    assert window.selected() == "dp_spd"
    assert sensitivity_rows(window) == {"pt(1).dgx": "+1", "tl(1)(1).speed": "-1"}
    click_row(qtbot, window, "ia_spd")
    assert window.selected() == "ia_spd"
    assert "Sensitivity of po(1).ia_spd" in window.sensitivity_title.text()
    assert sensitivity_rows(window) == {"pt(1).iga": "+1", "tl(1)(1).speed": "-1"}
    table = window.sensitivity
    by_name = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    iga = by_name["pt(1).iga"]
    assert table.item(iga, 1).text() == "integer global addition"
    assert table.item(iga, 2).text() == "7.37e-07"
    assert float(table.item(iga, 3).text()) == pytest.approx(1 / 9.1e-07, rel=1e-3)
    assert "pt(1).iga" in window.symbolic.text() and "tl(1)(1).speed" in window.symbolic.text()

    # maxtotalspd uses three parameters
    click_row(qtbot, window, MAXTOTALSPD)
    assert sensitivity_rows(window) == {
        "tl(1)(1).connect(0)": "+1", "to(1).links": "+1", "tl(1)(1).speed": "-1",
    }  # fmt: skip


def test_sensitivity_follows_an_edited_expression_and_values(open_window, qtbot):
    window = open_window()
    doc = window.document
    edit = window.rows["da_spd"].edit
    retype(qtbot, edit, "pt(1).dga ** 2 / tl(1)(1).speed")  # focusing the editor selects
    assert window.selected() == "da_spd"
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert sensitivity_rows(window) == {"pt(1).dga": "+2", "tl(1)(1).speed": "-1"}
    table = window.sensitivity
    before = table.item(0, 3).text()
    doc.session.set_value("pt(1).dga", Timing(2.4e-06), label="Set")
    qtbot.waitUntil(lambda: table.item(0, 3) is not None and table.item(0, 3).text() != before)
    assert sensitivity_rows(window) == {"pt(1).dga": "+2", "tl(1)(1).speed": "-1"}


def test_the_window_is_a_dock_of_the_main_window_and_follows_its_processor(main_window, qtbot):
    window = main_window.panels["combinations"]
    assert isinstance(window, CombinationsWindow)
    main_window.show_panel("combinations")
    doc = main_window.document
    assert window.document is doc and value_label(window, "ia_spd") == "0.80989"
    doc.session.set_value("tl(1)(1).speed", Timing(1.82e-06), label="Set")
    assert value_label(window, "ia_spd") == "0.404945"
    assert value_label(window, MAXTOTALSPD) == value_text(doc.engine.value("mc.maxtotalspd"))
    main_window.undo_action.trigger()
    assert value_label(window, "ia_spd") == "0.80989"


# ---------------------------------------------------------------------- machine combination


def test_the_machine_combination_window_fills_when_shown_and_follows_edits(qtbot, sample_copy):
    """Hidden, it puts off its sum over every link (a large model's tab nobody looks
    at); shown, it has the value and the links' sum, and follows a link edit."""
    from piui.windows.machine_combination import MachineCombinationWindow

    document = Document()
    document.open(sample_copy("parsytec-gcel.machine"))
    window = MachineCombinationWindow(document)
    qtbot.addWidget(window)
    assert window.value.text() == ""  # not worked out while hidden
    window.show()
    qtbot.waitExposed(window)
    assert window.value.text().startswith("2.14505e+09 bytes/s")
    assert "the 976 hardware links of topology 1 summed" in window.explanation.text()
    window.hide()
    document.session.set_value("tl(1)(1).speed", Timing(1.82e-06), label="Set")
    assert window.value.text().startswith("2.14505e+09")  # hidden: not yet
    window.show()
    qtbot.waitExposed(window)
    assert window.value.text().startswith("1.07253e+09 bytes/s")
    # one link: the first link's (1 / 1.82e-06 s per byte), the others at 1 / 9.1e-07
    assert "(one link: 549 kB/s)" in window.explanation.text()
    document.session.set_value("tl(1)(1).speed", Timing(9.1e-07), label="Set")
    assert window.value.text().startswith("2.14505e+09 bytes/s")  # shown: at once


def test_the_machine_combination_tab_behind_another_waits_for_its_tab(main_window, qtbot):
    """In the main window its dock is a tab behind the mapping editor (View > Layout >
    Topology and mapping): Qt keeps such a dock 'visible', so the window looks at its
    visible region; choosing its tab catches up."""
    main_window.apply_layout("topology")
    window = main_window.panels["machine-combination"]  # built, behind the mapping editor
    dock = main_window.docks["machine-combination"]
    qtbot.waitUntil(lambda: window.value.text() != "" or window._stale)
    main_window.document.session.set_value("tl(1)(1).speed", Timing(1.82e-06), label="Set")
    qtbot.wait(50)
    assert window._stale  # behind its tab: not worked out
    dock.raise_()
    qtbot.waitUntil(lambda: window.value.text().startswith("1.07253e+09 bytes/s"))
    assert not window._stale
