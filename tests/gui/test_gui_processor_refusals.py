"""Every field of PIUI that takes "a number or a name" of a processor says why it
refuses one the topology does not have, with the core's words (the unknown name and
some names the topology has, ``topology.names.processor_number``), in the window's
message line and at the field (pink, tooltip), and keeps the last good value: the
Estimate panel's *from* and *to*, the topology editor's link ends and the mapping
editor's typed mapping. Typed as a user does: keys into the field, then the field is
left (focus elsewhere) or Enter pressed."""

from __future__ import annotations

import pytest
from named_platform import named_model_text
from PySide6.QtCore import Qt

from parasol_core.topology.errors import RoutingError
from parasol_core.topology.names import processor_number


def _open_named(main_window, tmp_path):
    path = tmp_path / "named.machine"
    path.write_text(named_model_text(virtual=True))
    assert main_window.open_file(path)
    return main_window.document.machine


def _core_words(machine, word: str, what: str) -> str:
    """What the core says of ``word`` (the command line and the hostfile say the same)."""
    with pytest.raises(RoutingError) as e:
        processor_number(machine.hardware(), word, what)
    return str(e.value)


def _type_and_leave(qtbot, box, text: str, leave_to) -> None:
    """Click into the box, replace its text by ``text`` key by key, and leave it by
    giving the focus to ``leave_to`` (the box's editingFinished happens then); text that
    is not ASCII is pasted."""
    box.setFocus()
    box.lineEdit().selectAll()
    if text.isascii():
        qtbot.keyClicks(box.lineEdit(), text)
    else:  # pasted (QTest types ASCII keys only)
        box.lineEdit().insert(text)
    leave_to.setFocus()
    qtbot.waitUntil(lambda: not box.hasFocus())


def _boxes(main_window):
    """(window, its message line, [(box, what, another widget to leave to)])."""
    est = main_window.estimate
    main_window.show_panel("topology-editor")
    topo = main_window.panels["topology-editor"]
    return [
        (est, est.message, [(est.src, "from", est.dst), (est.dst, "to", est.src)]),
        (
            topo,
            topo.message,
            [(topo.link_a, "link end", topo.link_b), (topo.link_b, "link end", topo.link_a)],
        ),  # fmt: skip
    ]


def test_every_processor_box_says_why_it_refuses_an_unknown_name(main_window, qtbot,
                                                                 tmp_path) -> None:  # fmt: skip
    machine = _open_named(main_window, tmp_path)
    main_window.activateWindow()
    for window, message, boxes in _boxes(main_window):
        main_window.show_panel("estimate" if window is main_window.estimate else
                               "topology-editor")  # fmt: skip
        for box, what, other in boxes:
            box.setValue(3)
            good = box.text()
            assert good == "3 (Fafard)"
            _type_and_leave(qtbot, box, "Saturn", other)
            said = _core_words(machine, "Saturn", what)
            assert "'Saturn'" in said and "Tremblay" in said  # the name, and some there are
            assert message.text() == said, (window, what)
            assert message.isVisible()
            assert box.field.is_refused() and box.field.toolTip() == said
            assert box.value() == 3 and box.text() == good  # the last good value kept
            # coming back to the field takes the pink away (the message stays)
            box.setFocus()
            qtbot.waitUntil(lambda b=box: not b.field.is_refused())
            assert message.text() == said
            # Enter refuses as leaving does; a good name then is taken
            box.lineEdit().selectAll()
            qtbot.keyClicks(box.lineEdit(), "Jupitre")
            qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
            assert message.text() == _core_words(machine, "Jupitre", what)
            assert box.value() == 3
            box.lineEdit().selectAll()
            qtbot.keyClicks(box.lineEdit(), "Jupiter")
            qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
            assert box.value() == 2 and box.text() == "2 (Jupiter)"
            other.setFocus()


def test_a_number_out_of_range_and_nothing_are_refused_too(main_window, qtbot,
                                                           tmp_path) -> None:  # fmt: skip
    _open_named(main_window, tmp_path)
    main_window.activateWindow()
    panel = main_window.estimate
    panel.src.setValue(1)
    top = panel.src.maximum()
    _type_and_leave(qtbot, panel.src, str(top + 5), panel.dst)
    assert panel.message.text() == (f"from {top + 5} is out of range: the topology has "
                                    f"processors 1..{top}")  # fmt: skip
    assert panel.src.value() == 1
    _type_and_leave(qtbot, panel.src, "١", panel.dst)  # a digit, but not 0-9
    assert "is not an ASCII digit" in panel.message.text()
    assert panel.src.value() == 1


def test_between_virtual_processors_a_name_is_refused_saying_there_are_none(
    main_window, qtbot, tmp_path
) -> None:
    _open_named(main_window, tmp_path)
    main_window.activateWindow()
    panel = main_window.estimate
    panel.between.setCurrentIndex(1)  # a virtual topology: its processors are numbers
    panel.dst.setValue(2)
    _type_and_leave(qtbot, panel.dst, "Fafard", panel.src)
    assert panel.message.text() == ("to 'Fafard' is not a processor number (the topology "
                                    "names no processors)")  # fmt: skip
    assert panel.dst.value() == 2


def test_the_refusal_goes_when_the_model_changes(main_window, qtbot, tmp_path) -> None:
    _open_named(main_window, tmp_path)
    main_window.activateWindow()
    panel = main_window.estimate
    _type_and_leave(qtbot, panel.src, "Saturn", panel.dst)
    assert panel.src.field.is_refused() and panel.message.text()
    main_window.new_blank()  # another model: what was said was about the last one
    assert not panel.src.field.is_refused()
    assert panel.message.text() == ""


def test_the_typed_mapping_refuses_an_unknown_name_with_the_core_words(
    main_window, qtbot, tmp_path
) -> None:
    machine = _open_named(main_window, tmp_path)
    main_window.show_panel("mapping-editor")
    editor = main_window.panels["mapping-editor"]
    before = dict(machine.virtual(2).mapping)
    editor.mapping_edit.setFocus()
    editor.mapping_edit.selectAll()
    qtbot.keyClicks(editor.mapping_edit, "Fafard Saturn")
    qtbot.keyClick(editor.mapping_edit, Qt.Key.Key_Return)
    said = editor.message.text()
    assert said == "mapping not applied: " + _core_words(
        machine, "Saturn", "virtual processor 2: hardware processor"
    )
    assert "Tremblay" in said  # some names the topology has
    assert dict(machine.virtual(2).mapping) == before  # nothing changed
