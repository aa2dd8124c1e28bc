"""The mapping editor's Remove is offered only while there is a virtual topology to remove.

A user who opened a model without virtual topologies (the FWI sample) saw Remove enabled
beside an empty list; a click did nothing and said nothing. The rule, as the processor
master's Remove and the topology editor's buttons keep it: a button that can do nothing
now is disabled, and follows the model through open, remove and undo."""

from __future__ import annotations

from piui.document import Document
from piui.windows.mapping_editor import MappingEditorWindow


def test_remove_follows_whether_there_is_a_virtual_topology(qtbot, sample_copy):
    document = Document()
    document.open(sample_copy("grid4x4.machine"))
    window = MappingEditorWindow(document)
    qtbot.addWidget(window)
    window.show()
    assert window.remove_button.isEnabled()
    count = len(document.machine.virtuals)
    for _ in range(count):  # a click each, as a user removes them
        window.remove_button.click()
    assert not document.machine.virtuals
    assert not window.remove_button.isEnabled()
    document.session.undo()
    assert window.remove_button.isEnabled()
    document.open(sample_copy("fwi-csys.machine"))  # none in this model
    assert not document.machine.virtuals
    assert not window.remove_button.isEnabled()
    assert window.add_button.isEnabled()  # what can be done is offered
    document.open(sample_copy("grid4x4.machine"))
    assert window.remove_button.isEnabled()
