"""A field's error describes its current text. Met in the Program window: a flop typed
wrong and entered showed its error; Ctrl+Z put the old text back in the field but the
old error stayed (and the prediction stayed of the refused flop) until Return."""

from __future__ import annotations

import pytest
from program_traces import write_stencil
from PySide6.QtCore import Qt

from parasol_core.frontend import program as core


@pytest.fixture
def program_window(main_window, qtbot, sample_copy, tmp_path):
    assert main_window.open_file(sample_copy("grid4x4.machine"))
    path = write_stencil(tmp_path, ranks=16, iterations=6)
    window = main_window.panels["program"]
    window.ask_trace_path = lambda: str(path)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
    return window


def test_ctrl_z_after_a_refused_flop_clears_its_error(program_window, qtbot):
    window = program_window
    field = window.flop
    good = field.text()
    assert good == core.GLOBAL_FLOP and window.message.text() == ""
    window.activateWindow()
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, "pt(1).nosuch")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.message.text() != "", timeout=30_000)
    assert "pt(1).nosuch" in window.message.text()
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert field.text() == good
    assert window.message.text() == ""  # the error was of the text undone
    assert window.program.flop is None  # the model's flop again, as the field says
    # redo brings the wrong entry back, and its error with it
    with qtbot.waitSignal(window.predictionShown, raising=False, timeout=3_000):
        qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
                       | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    assert field.text() == "pt(1).nosuch"
    qtbot.waitUntil(lambda: "pt(1).nosuch" in window.message.text(), timeout=30_000)


def test_ctrl_z_in_a_name_field_enters_the_name_it_brings_back(main_window, qtbot,
                                                                sample_copy):  # fmt: skip
    """The processor master's Name: typed, entered (the model renamed), then Ctrl+Z:
    what the field shows and what the model holds agree (the field, shown the model's
    name again, hands the key to the model's Undo; its own undo must not take it)."""
    assert main_window.open_file(sample_copy("grid4x4.machine"))
    from piui.windows.processor_master import ProcessorMaster

    window = ProcessorMaster(main_window.document)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    proc = main_window.document.machine.processors[0]
    old = proc.name
    field = window.name_field
    field.setFocus()
    qtbot.keyClick(field, Qt.Key.Key_End)
    qtbot.keyClicks(field, " B")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert proc.name == old + " B"
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert field.text() == old and proc.name == old  # what the field says, the model has
