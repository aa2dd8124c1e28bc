"""Every field that names something refuses a name the file format cannot hold alike.

A user typed a quote into the topology editor's Name ("16 x 32 \\"GCel\\"") and pressed
Enter: the message line said why, but the field kept the refused text, unmarked, and
every later Enter or Tab tried it again. The rule (docs/decisions.md, message lines and
refusals): a field whose input was refused is pink with the reason at it, holding the
model's value again, and the window's message line says it too. Checked here for every
name field of the windows that edit names: the machine's (overview), a processor
type's (processor master), the hardware topology's (topology editor) and a virtual
topology's (mapping editor). A blank name is refused alike: the model, its windows
and its file would show nothing for it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from piui.document import Document

WINDOWS = {
    "overview": ("piui.windows.overview", "MachineOverview", "name_field",
                 lambda m: m.name),
    "processor-master": ("piui.windows.processor_master", "ProcessorMaster", "name_field",
                         lambda m: m.processors[0].name),
    "topology-editor": ("piui.windows.topology_editor", "TopologyEditorWindow", "name_edit",
                        lambda m: m.topologies[0].name),
    "mapping-editor": ("piui.windows.mapping_editor", "MappingEditorWindow", "name_edit",
                       lambda m: m.virtuals[0].name),
}  # fmt: skip


# "" and "   ": a blank name, which the model would show as nothing, refused alike
@pytest.mark.parametrize("bad", ['16 x 32 "GCel"', "esc\x1bape", "two\nlines", "", "   "])
@pytest.mark.parametrize("key", list(WINDOWS))
def test_a_name_the_format_cannot_hold_is_refused_at_its_field(qtbot, sample_copy, key, bad):
    import importlib

    module, cls, attr, name_of = WINDOWS[key]
    document = Document()
    document.open(sample_copy("grid4x4.machine"))
    window = getattr(importlib.import_module(module), cls)(document)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    field = getattr(window, attr)
    before = name_of(document.machine)
    field.setFocus()
    field.selectAll()
    field.insert(bad)  # as pasted: a line end cannot be typed into a line
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert name_of(document.machine) == before  # nothing changed, no undo step
    assert not document.session.history.can_undo
    assert field.is_refused()  # pink, the reason at it ...
    assert "cannot" in field.toolTip()
    assert field.text() == before  # ... holding the model's name again
    message = getattr(window, "message", None)
    if message is not None:  # and the window's message line says it too
        assert "cannot" in message.text()
    # the user comes back to it: the name they type now is taken
    qtbot.keyClicks(field, " 2")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert name_of(document.machine) == before + " 2"
    assert not field.is_refused()


def test_the_add_virtual_dialog_refuses_a_blank_name(qtbot, sample_copy):
    """Add virtual topology's Name emptied: OK is off and the note says why."""
    from piui.windows.mapping_editor import MappingEditorWindow

    document = Document()
    document.open(sample_copy("grid4x4.machine"))
    window = MappingEditorWindow(document)
    qtbot.addWidget(window)
    hw = document.machine.hardware()
    dialog = window.add_dialog(16, hw.routing)
    qtbot.addWidget(dialog)
    dialog.show()
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert ok.isEnabled()
    dialog.name.clear()
    qtbot.keyClicks(dialog.name, "  ")
    assert not ok.isEnabled() and "cannot be blank" in dialog.note.text()
    qtbot.keyClicks(dialog.name, "ring")
    assert ok.isEnabled()
