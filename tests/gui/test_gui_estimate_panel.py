"""The Estimate panel offers what the model on screen has, and its route answers are
drawn in the grid view (issue 33, item 7): processor boxes accepted 99999 and, on a
one-processor model, 16; routes between virtual processors were not offered."""

from __future__ import annotations

from pathlib import Path

from parasol_core.base.words import counted
from parasol_core.topology.index import route as core_route
from parasol_core.topology.shape import processor_count
from parasol_core.topology.virtual import virtual_route

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
GRID = SAMPLES / "grid4x4.machine"


def test_the_boxes_take_the_model_on_screen(main_window) -> None:
    panel = main_window.estimate
    machine = main_window.document.machine
    count = processor_count(machine.hardware())
    assert (panel.src.maximum(), panel.dst.maximum()) == (count, count)
    panel.src.setValue(99999)
    assert panel.src.value() == count
    ids = [p.id for p in machine.processors]
    assert (panel.processor.minimum(), panel.processor.maximum()) == (min(ids), max(ids))
    assert panel.between.count() == 1 and not panel.between.isEnabled()  # the GCel: none

    main_window.new_blank()  # one processor: nothing to route
    assert panel.src.maximum() == 1 and panel.dst.maximum() == 1
    assert not panel.route_button.isEnabled() and "one processor" in panel.route_button.toolTip()

    assert main_window.open_file(GRID)
    assert panel.src.maximum() == 16 and panel.route_button.isEnabled()
    machine = main_window.document.machine
    virtuals = [v.id for v in machine.virtuals]
    assert [panel.between.itemData(i) for i in range(panel.between.count())] == [None, *virtuals]
    panel.between.setCurrentIndex(2)
    virt = machine.virtual(virtuals[1])
    assert panel.src.maximum() == processor_count(virt)


def test_a_model_opened_after_choosing_a_virtual_topology_starts_afresh(main_window) -> None:
    panel = main_window.estimate
    assert main_window.open_file(GRID)
    panel.between.setCurrentIndex(1)
    main_window.new_blank()
    assert panel.between.count() == 1 and panel.between.currentData() is None


def _answer_from_the_core(panel, machine) -> None:
    """The estimator's answer, computed by the same core (no server needed here)."""

    def call(ask, done) -> None:
        class Fake:
            def plot(self, model, src, dst, virtual=None):
                if virtual is None:
                    r = core_route(machine.hardware(), src, dst)
                else:
                    r = virtual_route(machine, machine.virtual(virtual), src, dst)
                return {"route": f"x:{src}-{dst}", "processors": list(r.processors),
                        "links": list(r.links)}  # fmt: skip

        done(ask(Fake()), None)

    panel._with_model = lambda ask: ask("model")
    panel.exporter.call = call


def test_a_route_answered_is_drawn_in_the_grid_view(main_window) -> None:
    assert main_window.open_file(GRID)
    machine = main_window.document.machine
    panel = main_window.estimate
    _answer_from_the_core(panel, machine)
    panel.src.setValue(1)
    panel.dst.setValue(16)
    panel.ask_route()  # before the grid view was ever built: it shows it when it is
    grid = main_window.panels["grid-view"]
    expected = core_route(machine.hardware(), 1, 16)
    assert " link" in panel.route_text.text()
    assert grid.canvas.route_processors == set(expected.processors)
    assert grid.canvas.route_links == set(expected.links)

    virtual = machine.virtuals[1]
    panel.between.setCurrentIndex(2)
    panel.src.setValue(1)
    panel.dst.setValue(6)
    panel.ask_route()
    expected = virtual_route(machine, virtual, 1, 6)
    assert f"of {virtual.id}" in panel.route_text.text()
    assert grid.canvas.route_links == set(expected.links)
    assert main_window.document.session.selection.virtual_id == virtual.id


def test_return_in_a_field_asks_its_question(main_window, qtbot) -> None:
    """Return in a processor box asks the route, in the bytes field the transfer time,
    as the buttons beside them do."""
    from PySide6.QtCore import Qt

    assert main_window.open_file(GRID)
    panel = main_window.estimate
    _answer_from_the_core(panel, main_window.document.machine)
    asked = []
    panel.route_button.clicked.connect(lambda: asked.append("route"))
    panel.transfer_button.clicked.connect(lambda: asked.append("transfer"))
    panel.src.setValue(1)
    panel.dst.setFocus()
    panel.dst.selectAll()
    qtbot.keyClicks(panel.dst, "16")
    qtbot.keyClick(panel.dst, Qt.Key.Key_Return)
    assert asked == ["route"]
    assert panel.dst.value() == 16  # what was typed, taken before the question
    expected = core_route(main_window.document.machine.hardware(), 1, 16)
    assert counted(len(expected.links), "link") + ":" in panel.route_text.text()
    panel.dst.selectAll()
    qtbot.keyClicks(panel.dst, "Saturn")
    qtbot.keyClick(panel.dst, Qt.Key.Key_Return)  # refused: its reason stays in view
    assert asked == ["route"] and panel.dst.value() == 16
    assert panel.dst.field.is_refused()
    panel.ask_transfer = lambda: None  # the core's stand-in answers routes only
    panel.bytes.setFocus()
    qtbot.keyClick(panel.bytes, Qt.Key.Key_Return)
    assert asked == ["route", "transfer"]


def test_a_size_that_is_no_number_is_refused_at_its_field_before_the_route_is_asked(
    main_window, qtbot
) -> None:
    """The bytes field's own error comes first: "abc" typed before any route was asked
    said "ask for a route first" and left the field unmarked."""
    from PySide6.QtCore import Qt

    assert main_window.open_file(GRID)
    panel = main_window.estimate
    assert not panel.routes
    panel.bytes.setFocus()
    panel.bytes.selectAll()
    qtbot.keyClicks(panel.bytes, "abc")
    panel.transfer_button.click()
    assert panel.bytes.is_refused()
    assert "message size" in panel.message.text() and "route" not in panel.message.text()
    panel.bytes.selectAll()
    qtbot.keyClicks(panel.bytes, "4096")
    qtbot.keyClick(panel.bytes, Qt.Key.Key_Return)  # a good size: now the route is lacking
    assert not panel.bytes.is_refused()
    assert "ask for a route first" in panel.message.text()


def test_a_narrow_panel_stacks_a_question_s_halves_and_never_scrolls_sideways(
    main_window, qtbot
) -> None:
    """A 385-pixel place scrolled the panel 14 pixels sideways: the Route box's one row
    wanted 399, the Basic block's 387. A box's question is now one row where it fits and
    its two halves stacked where it does not, so that down to the widest half nothing
    scrolls sideways, and every field stays on screen."""
    from PySide6.QtWidgets import QApplication, QBoxLayout

    assert main_window.open_file(GRID)
    panel = main_window.estimate
    panel.setParent(None)
    route, _transfer, block = panel._boxes
    least = max(b.minimumSizeHint().width() for b in panel._boxes) + 12 + 20
    for width in (least, 300, 385, 700, 1400):
        panel.resize(width, 420)
        panel.show()
        for _ in range(3):
            QApplication.processEvents()
        assert panel._scroll.horizontalScrollBar().maximum() == 0, width
        for box in (route, block):
            one_row = box.halves.direction() == QBoxLayout.Direction.LeftToRight
            assert one_row == (box.width() >= box.one_row_width()), width
            parts = [half.itemAt(i).widget() for half in (box._left, box._right)
                     for i in range(half.count())]  # fmt: skip
            for w in filter(None, parts):  # each part whole inside its box
                r = w.geometry()
                assert r.left() >= 0 and r.right() < box.width(), (width, w)
        if width <= 300:
            assert route.halves.direction() == QBoxLayout.Direction.TopToBottom
            # stacked, the fields keep their width (not stretched over the row)
            assert panel.src.width() < route.width() // 2
    panel.close()
