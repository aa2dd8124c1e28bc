"""A field that shows a model's value longer than itself shows its beginning, as a reader
starts, after the model is opened, edited and undone: the machine's name in a narrow
panel read "y: 72 AMD EPYC nodes, 9 groups of 4 routers" on a real display (the end,
where the cursor is). The class: every ValueField, the field of PIUI's windows that
shows a model's value (the overview, the processor master, the topology and mapping
editors' names, shapes and mappings, the Program window's flop)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from piui.widgets.number_controls import ValueField

LONG = "A machine whose name is much longer than the field that shows it: " + "x" * 80


def _shown_from_the_start(window) -> list[str]:
    """The fields that show a text but not from its beginning (none has the focus)."""
    QApplication.processEvents()
    return [f"{f.objectName() or type(f.parent()).__name__}: {f.text()[:30]}…"
            for f in window.findChildren(ValueField)
            if f.text() and not f.hasFocus() and f.cursorPosition() != 0]  # fmt: skip


def test_every_value_field_shows_its_beginning(main_window, qtbot):
    main_window.resize(700, 600)
    for key in ("processors", "topology-editor", "mapping-editor", "program"):
        main_window.show_panel(key)
    fields = main_window.findChildren(ValueField)
    assert len(fields) >= 5
    assert not _shown_from_the_start(main_window)
    main_window.document.session.set_value("ma.name", LONG, label="Set ma.name")
    assert main_window.overview.name_field.text() == LONG
    assert not _shown_from_the_start(main_window)
    main_window.document.session.undo()
    assert not _shown_from_the_start(main_window)


def test_the_user_s_cursor_stays_where_they_type(main_window, qtbot):
    field = main_window.overview.name_field
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    field.setCursorPosition(5)
    field.setText(LONG)  # the model's refresh while the user is in the field
    assert field.cursorPosition() == len(LONG)  # Qt's own: at the end of the new text
