"""File > Sweep…: an axis value no double holds is refused at Run, naming the axis and
why, before any variant runs. Met before: "1e400", "NaN, 1", "1e-400" or "１, 2" typed as
a timing's values were taken as words, the sweep ran (a process pool started for it)
and each such variant came back as a row with an error at the far end of the table;
the status said only "Done: 1 variants, 1 with an error"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ("1e400", "'1e400' is too large to represent"),
        ("7e-7, -1e999", "'-1e999' is too large to represent"),
        ("NaN, 1e-6", "'NaN' is not a finite number"),
        ("1e-6, inf", "'inf' is not a finite number"),
        ("1e-400", "'1e-400' is too small to represent"),
        ("１, 2", "'１' (U+FF11 FULLWIDTH DIGIT ONE) is not an ASCII digit"),
    ],
)
def test_a_value_no_double_holds_is_refused_at_run(main_window, qtbot, values, why):
    main_window.show_sweep()
    dialog = main_window.sweep_dialog
    dialog.add_suggested("pt(1).iga")
    dialog.axes.item(0, 1).setText(values)  # as typed into the Values cell
    qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
    assert not dialog.running  # nothing ran
    assert dialog.rows == [] and dialog.table.rowCount() == 0
    assert dialog.message.text().startswith("axis 1: ")
    assert why in dialog.message.text()
