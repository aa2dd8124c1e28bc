"""A window holds nothing that outlives the model it shows. Each window is put in a state
derived from one model (a selection, a route, a pending preview, a refused field, an open
dialog, an answer), then another model is opened: every window shows the new model only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolTip

from piui.widgets.number_controls import ValueField
from piui.widgets.topology_selection import selection_of


def _every_panel(window) -> dict:
    return {key: window.panels[key] for key in list(window.panels)}


def test_opening_a_second_model_leaves_nothing_of_the_first(main_window, sample_copy):
    window = main_window
    assert window.open_file(sample_copy("grid4x4.machine"))
    panels = _every_panel(window)
    doc = window.document

    # the grid view: a selection and a route clicked
    grid = panels["grid-view"]
    grid.canvas.select([3, 16], [1, 2])
    grid.canvas.processorClicked.emit(1, Qt.KeyboardModifier.NoModifier)
    grid.canvas.processorClicked.emit(16, Qt.KeyboardModifier.NoModifier)
    assert "Route 1 → 16" in grid.info.text()
    # the topology editor: the selection shown, a preview pending
    editor = panels["topology-editor"]
    assert editor.set_type.isEnabled() and editor.sizes.text() == "4 4"
    editor.sizes.setText("8 8")
    editor.preview()
    assert editor.apply_button.isEnabled()
    # the link groups: the selected links offered
    groups = panels["link-groups"]
    assert groups.group_box.currentData() == "selected"
    # the mapping editor: a scheme highlighted
    mapping = panels["mapping-editor"]
    mapping.apply_scheme("snake")
    assert mapping.schemes.currentItem() is not None
    # a refused field in every window that has one
    refused = [f for p in panels.values() for f in p.findChildren(ValueField) if f.isEnabled()]
    for f in refused:
        f.reject_input("refused for the test", f.text())
    assert len(refused) >= 5 and all(f.is_refused() for f in refused)
    # the fit dialog open on a primitive
    runtime = panels["runtime"]
    page = next(iter(runtime.pages.values()))
    page.select(next(iter(page.rows)))
    fit = page.open_fit_dialog()
    assert fit is not None and fit.isVisible()
    # an answer of the Estimate panel
    estimate = panels["estimate"]
    estimate.routes = [{"route": 1, "links": [1], "processors": [1, 2]}]
    estimate.route_text.setText("1 link(s): 1 → 2")

    assert window.open_file(sample_copy("cray-t3d.machine"))
    hw = doc.machine.hardware()

    assert selection_of(doc).processors == () and selection_of(doc).links == ()
    assert grid.canvas.selected_processors() == [] and not grid.canvas.selected_links
    assert grid.info.text() == "" and grid.click_route == ((), ())
    assert not editor.set_type.isEnabled()
    assert editor.type_note.text().startswith("Select processors")
    assert editor.sizes.text() == "8 4 4"  # the T3D's, not the grid's
    assert editor.gen_latency.text() == f"{hw.links[0].latency.mean:g}"
    assert editor.kind.currentText() == "torus"
    assert not editor.apply_button.isEnabled() and editor.preview_text.toPlainText() == ""
    assert groups.group_box.findData("selected") < 0 and groups.group_box.currentIndex() == 0
    virt = mapping.virtual()
    assert virt is None or virt is doc.machine.virtual(virt.id)
    assert grid.virtual_box.currentData() == (virt.id if virt is not None else None)
    assert not any(f.is_refused() for f in refused if f is not None)
    assert not fit.isVisible()
    assert estimate.routes == [] and estimate.route_text.text() == ""
    assert "cray-t3d.machine" in estimate.model_label.text()


def test_a_structural_edit_prunes_what_windows_show(main_window, sample_copy):
    window = main_window
    assert window.open_file(sample_copy("grid4x4.machine"))
    doc = window.document
    grid, groups = window.panels["grid-view"], window.panels["link-groups"]
    editor = window.panels["topology-editor"]
    hw = doc.machine.hardware()
    last = hw.links[-1]
    grid.canvas.select([1], [1, last.id])
    a, b = last.connect
    grid.canvas.processorClicked.emit(a, Qt.KeyboardModifier.NoModifier)
    grid.canvas.processorClicked.emit(b, Qt.KeyboardModifier.NoModifier)
    assert last.id in grid.click_route[1]
    editor.preview()
    doc.session.remove_link(hw.id, last.id)
    assert selection_of(doc).links == (1,)  # pruned
    assert sorted(grid.canvas.selected_links) == [1]
    assert list(groups._groups["selected"]) == [1]
    assert last.id not in grid.click_route[1]  # routed again without the link, or not at all
    assert not editor.apply_button.isEnabled()  # a preview of the topology before the edit
    assert "changed since the preview" in editor.preview_text.toPlainText()


def test_a_refusals_tooltip_goes_when_its_window_is_resized(main_window, qtbot):
    field = main_window.overview.id_field
    field.setFocus()
    field.reject_input("a number is needed", field.text())
    QApplication.processEvents()
    assert QToolTip.isVisible() and QToolTip.text() == "a number is needed"
    main_window.resize(main_window.width() - 40, main_window.height())
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=60_000)


def test_the_estimate_panels_transfer_time_is_in_sight_without_scrolling(main_window, qtbot):
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QScrollArea

    main_window.apply_layout("estimating")  # its place: across the window's bottom
    main_window.show_panel("estimate")
    panel = main_window.estimate
    panel.transfer_text.setText("0.000123 s")
    QApplication.processEvents()
    viewport = panel.findChild(QScrollArea).viewport()
    seen = QRect(viewport.mapToGlobal(viewport.rect().topLeft()), viewport.size())
    for w in (panel.bytes, panel.transfer_button, panel.transfer_text, panel.route_button,
              panel.route_text, panel.block_button):  # fmt: skip
        top_left = w.mapToGlobal(w.rect().topLeft())
        assert seen.contains(QRect(top_left, w.size())), w


def test_a_refusals_pink_goes_when_the_user_comes_back_to_the_field(main_window, qtbot):
    field = main_window.overview.id_field
    other = main_window.overview.name_field
    field.setFocus()
    qtbot.keyClicks(field, "abc")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert field.is_refused() and field.text() == str(main_window.document.machine.id)
    other.setFocus()
    assert field.is_refused()  # still telling, elsewhere
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)  # back at the field: the old value
    assert not field.is_refused()
    qtbot.keyClicks(field, "x")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert field.is_refused()
    qtbot.keyClicks(field, "1")  # typing again
    assert not field.is_refused()


def test_every_field_has_its_own_tooltip_back_once_a_refusal_is_mended(main_window):
    """A refusal's reason replaced a field's own tooltip, and accepting the field's text
    again left it with none (the Program window's flop lost what it is for): every
    field with a tooltip of its own gets it back."""
    panels = main_window.panels
    fields = [f for p in panels.values() for f in p.findChildren(ValueField)
              if f.isEnabled() and f.toolTip()]  # fmt: skip
    own = {f: f.toolTip() for f in fields}
    assert len(fields) >= 3
    for f in fields:
        f.reject_input("refused for the test", f.text())
        assert f.toolTip() == "refused for the test"
        f.accept_input()
    assert {f: f.toolTip() for f in fields} == own
