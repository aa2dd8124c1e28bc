"""Every field that names something refuses a name the file format cannot hold alike.

A user typed a quote into the topology editor's Name ("16 x 32 \\"GCel\\"") and pressed
Enter: the message line said why, but the field kept the refused text, unmarked, and
every later Enter or Tab tried it again. The rule (docs/decisions.md, message lines and
refusals): a field whose input was refused is pink with the reason at it, holding the
model's value again, and the window's message line says it too. Checked here for every
name field of the windows that edit names: the machine's (overview), a processor
type's (processor master), the hardware topology's (topology editor) and a virtual
topology's (mapping editor)."""

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


@pytest.mark.parametrize("bad", ['16 x 32 "GCel"', "esc\x1bape", "two\nlines"])
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
