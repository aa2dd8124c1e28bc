"""Networks drawn so a person can read them (issue 33, item 4), in the grid view
(offscreen, real widgets): terminals big enough to number at fit zoom and numbered when
they fit, the wheel zooms about the cursor and a zoom survives a resize, the drawing
exports as SVG and PNG at any size, buses are bars, a block of terminals is wired as an
org chart."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from network_platforms import machine
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMenu
from test_gui_topology import shown

from parasol_core.syntax.writer import dumps
from piui.document import Document
from piui.widgets import drawing_export
from piui.widgets.drawing_export import ExportDialog
from piui.widgets.topology_canvas import LINK_COLOUR, ROUTE_COLOUR
from piui.windows.grid_view import GridViewWindow

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
VIEW = (534, 420)  # the grid view's drawing in the default layout (issue 33)


def view_of(qtbot, text: str | None = None, sample: str | None = None,
            size=(900, 700)) -> GridViewWindow:  # fmt: skip
    doc = Document()
    if sample is not None:
        doc.open(SAMPLES / sample)
    else:
        doc.new_from_text(text)
    return shown(qtbot, GridViewWindow(doc), size)


def canvas_of(qtbot, sample: str, size=VIEW):
    """The grid view with its drawing ``size`` pixels (the window sized around it)."""
    w = view_of(qtbot, sample=sample)
    c = w.canvas
    c.setFixedSize(*size)
    w.adjustSize()
    QApplication.processEvents()
    assert (c.width(), c.height()) == size
    c.fit()
    return w, c


def wheel(widget, pos: QPointF, notches: int = 1) -> None:
    """Turn the wheel at ``pos`` (widget pixels), as a mouse does: 120 a notch."""
    for _ in range(abs(notches)):
        delta = QPoint(0, 120 if notches > 0 else -120)
        event = QWheelEvent(pos, widget.mapToGlobal(pos), QPoint(), delta,
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                            Qt.ScrollPhase.NoScrollPhase, False)  # fmt: skip
        QApplication.sendEvent(widget, event)


def grid_point(canvas, pos: QPointF) -> tuple[float, float]:
    """The point of the drawing (grid units) under widget position ``pos``."""
    return ((pos.x() - canvas.offset.x()) / canvas.scale,
            (pos.y() - canvas.offset.y()) / canvas.scale)  # fmt: skip


def near(c: QColor, d: QColor, tolerance: int = 40) -> bool:
    return max(abs(c.red() - d.red()), abs(c.green() - d.green()),
               abs(c.blue() - d.blue())) < tolerance  # fmt: skip


def dark_pixels(image: QImage, centre: QPointF, half: float) -> int:
    """Near-black pixels in the square of ``half`` pixels about ``centre`` (a number).
    The square is on the image: a pixel off it reads as black (and Qt warns), which
    once counted a processor drawn off screen as its number written."""
    n = 0
    x0, y0 = int(centre.x() - half), int(centre.y() - half)
    x1, y1 = int(centre.x() + half), int(centre.y() + half)
    assert image.rect().contains(x0, y0) and image.rect().contains(x1, y1), (centre, half)
    for x in range(x0, int(centre.x() + half) + 1):
        for y in range(y0, int(centre.y() + half) + 1):
            if QColor(image.pixel(x, y)).lightness() < 70:
                n += 1
    return n


# --------------------------------------------------------------------------- terminals


def grey_pixels(image: QImage) -> np.ndarray:
    """The image's grey levels, a row per line, copied while the converted image lives:
    a view of its bits outlived it and read freed memory (a segfault in one run)."""
    grey = image.convertToFormat(QImage.Format.Format_Grayscale8)
    rows = np.frombuffer(grey.constBits(), np.uint8).reshape(grey.height(), -1)
    return rows[:, : grey.width()].copy()


def test_fat_tree_terminals_are_boxes_at_fit_zoom_and_numbered_once_they_fit(qtbot):
    """hdr-fat-tree.machine's 192 compute processors were 2-3 pixel dots without
    numbers in a 534 x 420 view: now each leaf's 24 hang below it in a block."""
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    assert c.place.kind == "fattree"
    assert 2 * c.radius() >= 12  # boxes, not dots
    c.grab()
    # zoomed in on processor 1 until its number fits: written, inside its box
    at = c.screen_point(1)
    for _ in range(6):
        if c.labels_drawn:
            break
        wheel(c, at)
        c.grab()
    assert c.labels_drawn > 0
    image = c.grab().toImage()
    r = c.radius()
    at = c.screen_point(1)
    assert dark_pixels(image, at, r * 0.5) > 3  # the "1"
    assert near(QColor(image.pixel((at + QPointF(r * 0.7, 0)).toPoint())),
                QColor("#7fb3e6"))  # its box's colour beside it  # fmt: skip


def test_numbers_are_written_only_when_they_fit_in_their_boxes(qtbot):
    w, c = canvas_of(qtbot, "parsytec-gcel.machine")  # 512 processors: three digits
    c.zoom(0.3)
    c.grab()
    assert c.labels_drawn == 0
    c.zoom(40 / c.scale, c.screen_point(512))  # the widest number, 512, in view
    c.grab()
    assert c.labels_drawn > 0
    image = c.grab().toImage()
    # written inside its box, the box's colour beside it
    at, r = c.screen_point(512), c.radius()
    assert dark_pixels(image, at, r * 0.45) > 3
    assert near(QColor(image.pixel((at + QPointF(r * 0.8, 0)).toPoint())),
                QColor("#7fb3e6"))  # fmt: skip


# --------------------------------------------------------------------------- the wheel


@pytest.mark.parametrize("sample", ["hdr-fat-tree.machine", "grid4x4.machine"])
def test_the_wheel_zooms_about_the_cursor(qtbot, sample):
    w, c = canvas_of(qtbot, sample)
    rng = np.random.default_rng(3)
    for notches in (2, 1, -1, 3, -2):
        pos = QPointF(*rng.uniform((40, 40), (c.width() - 40, c.height() - 40)))
        before, scale = grid_point(c, pos), c.scale
        wheel(c, pos, notches)
        assert c.scale == pytest.approx(scale * 1.25**notches)
        assert grid_point(c, pos) == pytest.approx(before)  # the point stays under it
    # a processor under the cursor stays under it
    p = 5
    pos = c.screen_point(p)
    wheel(c, pos, 2)
    assert c.processor_at(pos) == p
    assert c.screen_point(p).toPoint() == pos.toPoint()


def test_a_zoom_survives_the_view_growing_or_shrinking(qtbot):
    """A hover's text below the drawing wraps to more lines and the drawing gets
    shorter: the zoom stays, the middle stays in the middle. Fit first, and a resize
    fits again."""
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    wheel(c, c.screen_point(30), 3)
    scale = c.scale
    middle = grid_point(c, QPointF(c.width() / 2, c.height() / 2))
    c.setFixedSize(c.width(), c.height() - 40)
    QApplication.processEvents()
    assert c.height() == VIEW[1] - 40 and c.scale == scale
    assert grid_point(c, QPointF(c.width() / 2, c.height() / 2)) == pytest.approx(middle)
    c.setMinimumSize(200, 160)  # free again: the window's layout sizes it
    c.setMaximumSize(16777215, 16777215)
    w._hovered("processor", 30)  # a long line of text below the drawing
    w.info.setText(w.info.text() * 4)
    QApplication.processEvents()
    assert c.scale == scale
    QTest.keyClick(c, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)  # fit
    c.setFixedSize(c.width() + 200, c.height() + 100)
    QApplication.processEvents()
    # fitted again: the whole drawing within what is visible of the new size
    area = c.shown_rect()
    left, top, right, bottom = c.place.bounds()
    for x, y in ((left, top), (right, bottom)):
        sx, sy = c.offset.x() + x * c.scale, c.offset.y() + y * c.scale
        assert (
            area.left() - 1 <= sx <= area.right() + 1 and area.top() - 1 <= sy <= area.bottom() + 1
        )


# --------------------------------------------------------------------------- export


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("size", [(3000, 2000), (200, 900), (534, 420)])
def test_a_png_export_has_the_size_asked(qtbot, tmp_path, whole, size):
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    path = tmp_path / "view.png"
    assert c.export_png(str(path), *size, whole=whole)
    image = QImage(str(path))
    assert (image.width(), image.height()) == size
    assert not image.isNull()
    if whole:  # every processor drawn: the corners of the drawing are not white
        ink = grey_pixels(image)
        rows, cols = np.nonzero(ink < 200)
        assert rows.size and cols.min() < size[0] * 0.2 and cols.max() > size[0] * 0.8


def test_a_large_png_is_the_screen_drawing_enlarged(qtbot, tmp_path):
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    small = c.render_image(534, 420, whole=True)
    large = c.render_image(534 * 4, 420 * 4, whole=True)
    # the same picture at four times the pixels: numbers too (not 22-pixel boxes lost
    # in a sea of white)
    shrunk = large.scaled(534, 420, Qt.AspectRatioMode.IgnoreAspectRatio,
                          Qt.TransformationMode.SmoothTransformation)  # fmt: skip

    assert np.abs(grey_pixels(shrunk).astype(int) - grey_pixels(small).astype(int)).mean() < 20


def test_an_svg_export_is_xml_of_the_size_asked_with_shapes_and_numbers(qtbot, tmp_path):
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    path = tmp_path / "view.svg"
    c.export_svg(str(path), 2400, 1600, whole=True)
    root = ET.parse(path).getroot()  # well-formed XML
    assert root.tag.endswith("svg")
    assert root.get("viewBox").split() == ["0", "0", "2400", "1600"]
    text = path.read_text()
    assert "<image" not in text
    assert ">192</text>" in text and ">212</text>" in text  # numbered: it is large


def test_the_export_dialog_writes_the_format_and_size_chosen(qtbot, tmp_path, monkeypatch):
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine")
    dialog = ExportDialog(c)
    qtbot.addWidget(dialog)
    assert dialog.whole and dialog.kind == "png"
    # a width offered: the height follows the drawing's proportions
    dialog.size_box.setCurrentIndex(2)  # 1920 px wide
    width, height = dialog.size()
    assert width == 1920 and height == c.export_size(1920, True)[1]
    dialog.width_box.setValue(2500)
    assert dialog.size() == c.export_size(2500, True)
    dialog.height_box.setValue(700)  # typed: kept
    dialog.width_box.setValue(2600)
    assert dialog.size() == (2600, 700)
    assert dialog.save(tmp_path / "a.png")
    assert QImage(str(tmp_path / "a.png")).size().toTuple() == (2600, 700)
    # through the grid view's button: the dialog, then where to save
    chosen = {}

    def answer(self):
        self.format_box.setCurrentIndex(1)  # SVG
        self.what_box.setCurrentIndex(1)  # the view as shown
        self.width_box.setValue(1068)
        chosen["size"] = self.size()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", answer)
    monkeypatch.setattr(drawing_export, "ask_path",
                        lambda parent, title, start, saving, filt, suffix: str(
                            tmp_path / "b"))  # fmt: skip
    written = w.export_drawing()
    assert written == str(tmp_path / "b.svg")
    assert chosen["size"] == (1068, 840)  # the view's proportions, doubled
    root = ET.parse(written).getroot()
    assert root.get("viewBox").split() == ["0", "0", "1068", "840"]


def test_a_right_click_offers_the_export(qtbot, monkeypatch):
    w, c = canvas_of(qtbot, "grid4x4.machine")
    asked = []
    monkeypatch.setattr(w, "export_drawing", lambda: asked.append(True))
    c.exportRequested.disconnect()
    c.exportRequested.connect(w.export_drawing)
    QTest.mouseClick(c, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(5, 5))  # fmt: skip
    menu = next(m for m in c.findChildren(QMenu) if m.isVisible())
    action = next(a for a in menu.actions() if a.text().startswith("Export"))
    action.trigger()
    assert asked == [True]
    menu.close()
    # a right drag pans and offers nothing
    before = QPointF(c.offset)
    QTest.mousePress(c, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(100, 100))  # fmt: skip
    QTest.mouseMove(c, QPoint(160, 130))
    QTest.mouseRelease(c, Qt.MouseButton.RightButton, Qt.KeyboardModifier.NoModifier,
                       QPoint(160, 130))  # fmt: skip
    assert c.offset != before
    assert not [m for m in c.findChildren(QMenu) if m.isVisible()]


# --------------------------------------------------------------------------- buses


def test_buses_are_bars_in_the_view_found_hovered_and_routed_over(qtbot):
    w = view_of(qtbot, dumps(machine("buses")))
    c = w.canvas
    assert c.bus_ids.tolist() == [1, 2] and not c.seg_ids.size
    assert "bars: buses" in w.legend.text()
    image = c.grab().toImage()
    for lid in (1, 2):
        mid = c.bus_midpoint(lid)
        assert near(QColor(image.pixel(mid.toPoint())), LINK_COLOUR)
        assert c.link_at(mid) == lid
    # a stub: between processor 1 and its bar
    stub = (c.screen_point(1) + QPointF(*c._bus_pieces({1}, {1})[1][0, 2:])) / 2
    assert c.link_at(stub) == 1
    # a route from 1 to 4 crosses both bars and the switch
    for p in (1, 4):
        QTest.mouseClick(c, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         c.screen_point(p).toPoint())  # fmt: skip
    assert w.click_route[1] == (1, 2)
    image = c.grab().toImage()
    for lid in (1, 2):
        bar = c.bus_bars[lid - 1] * c.scale + np.tile([c.offset.x(), c.offset.y()], 2)
        # on the bar between processor 1's foot (4's) and the switch's: route colour
        x = (bar[0] + bar[2]) / 2
        assert near(QColor(image.pixel(int(x), int(bar[1]))), ROUTE_COLOUR, 60)
    # the links window's "show" finds a bus
    w.show_item("link", 2)
    assert c.selected_links == {2}


def test_the_backbone_and_the_dragonfly_are_named_as_drawn(qtbot):
    w = view_of(qtbot, dumps(machine("backbone")))
    assert w.canvas.place.kind == "levels" and w.canvas.bus_ids.size == 1
    assert "switches by level" in w.title.text()
    w = view_of(qtbot, dumps(machine("dragonfly")))
    assert w.canvas.place.kind == "force"
    assert "drawn force-directed" in w.title.text()


def test_a_block_of_terminals_is_wired_as_an_org_chart(qtbot):
    w, c = canvas_of(qtbot, "hdr-fat-tree.machine", size=(900, 700))
    assert (c.seg_bend >= 0).sum() == 192  # every compute processor's link
    hw = w.hardware
    # processor 3's link: found on its stub, and routed along the spine
    link = next(lk.id for lk in hw.links if 3 in lk.connect)
    i = int(np.flatnonzero(c.seg_ids == link)[0])
    pieces = c._bent_pieces(np.array([i]))[0]
    stub = QPointF((pieces[0, 0] + pieces[0, 2]) / 2, (pieces[0, 1] + pieces[0, 3]) / 2)
    assert c.link_at(stub) == link
    # no straight line from the switch runs over processor 1's box: the middle of the
    # way up from processor 23 (bottom left) passes to its right, in the gap
    image = c.grab().toImage()
    r = c.radius()
    for p in (1, 3, 21):
        inside = c.screen_point(p) + QPointF(-r * 0.6, 0)
        assert near(QColor(image.pixel(inside.toPoint())), QColor("#7fb3e6"))
