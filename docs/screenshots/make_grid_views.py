"""Screenshots of the grid view's newer drawings (issues 21 and 23), taken on a real X
server: the window shown at the top left of the screen, then the screen grabbed with
ImageMagick's ``import -window root`` and cut to the window.

    Xvfb :97 -screen 0 1600x1000x24 &   DISPLAY=:97 openbox &
    DISPLAY=:97 .venv/bin/python docs/screenshots/make_grid_views.py [NAME ...]

NAME: t3d, torus6d, fattree, dragonfly, fugaku-out, fugaku-in (default: all).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from PySide6.QtWidgets import QApplication  # noqa: E402

from piui.document import Document  # noqa: E402
from piui.windows.grid_view import GridViewWindow  # noqa: E402

OUT = Path(__file__).resolve().parent
SIZE = (1100, 820)


def settle(seconds: float = 0.6) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.02)


def snap(window: GridViewWindow, name: str) -> None:
    settle()
    geo = window.frameGeometry()
    crop = f"{geo.width()}x{geo.height()}+{geo.x()}+{geo.y()}"
    target = OUT / f"{name}.png"
    subprocess.run(["import", "-window", "root", "-crop", crop, "+repage", str(target)],
                   check=True)  # fmt: skip
    print("wrote", target)


def view(doc: Document, title: str) -> GridViewWindow:
    w = GridViewWindow(doc)
    w.setWindowTitle(title)
    w.resize(*SIZE)
    w.move(0, 0)
    w.show()
    settle()
    w.canvas.fit()
    return w


def text_doc(text: str) -> Document:
    doc = Document()
    doc.new_from_text(text)
    return doc


def zoom_on(w: GridViewWindow, p: int, scale: float) -> None:
    c = w.canvas
    c.zoom(scale / c.scale)
    at = c.screen_point(p)
    c.pan(c.width() / 2 - at.x(), c.height() / 2 - at.y())


def main(names: list[str]) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    from bench_grid_view import torus_file
    from handmade_networks import dragonfly_text, fattree_text

    tmp = Path(tempfile.mkdtemp())
    if "t3d" in names:
        doc = Document()
        doc.open(ROOT / "sample_models" / "cray-t3d.machine")
        w = view(doc, "Grid view — Cray T3D, 8 × 4 × 4 torus")
        snap(w, "grid-view-t3d")
        w.close()
    if "torus6d" in names:
        doc = Document()
        doc.open(torus_file(tmp, (4, 3, 2, 2, 3, 2)))
        w = view(doc, "Grid view — a 4 × 3 × 2 × 2 × 3 × 2 torus (6-D)")
        w.canvas.select([1])
        w._clicked(1, None)
        w._clicked(288, None)
        snap(w, "grid-view-torus6d")
        w.close()
    if "fattree" in names:
        w = view(text_doc(fattree_text(4, 3)), "Grid view — a 4-ary 3-tree (fat tree)")
        w._clicked(1, None)
        w._clicked(64, None)
        snap(w, "grid-view-fattree")
        w.close()
    if "dragonfly" in names:
        w = view(text_doc(dragonfly_text(9, 4, 2, 2)), "Grid view — dragonfly 9 4 2 2")
        w._clicked(1, None)
        w._clicked(40, None)
        snap(w, "grid-view-dragonfly")
        w.close()
    if {"fugaku-out", "fugaku-in"} & set(names):
        doc = Document()
        doc.open(torus_file(tmp, (24, 23, 24, 2, 3, 2)))
        w = view(doc, "Grid view — Fugaku's 24 × 23 × 24 × 2 × 3 × 2 torus")
        if "fugaku-out" in names:
            snap(w, "grid-view-fugaku-out")
        if "fugaku-in" in names:
            zoom_on(w, 24 * 23, 24.0)  # the corner of the first block and its neighbours
            snap(w, "grid-view-fugaku-in")
        w.close()
    app.processEvents()


if __name__ == "__main__":
    main(sys.argv[1:] or ["t3d", "torus6d", "fattree", "dragonfly", "fugaku-out", "fugaku-in"])
