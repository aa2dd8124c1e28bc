"""How fast the grid view opens, pans and zooms huge and modern networks (issues 21 and
23), against baselines measured in the same run (offscreen, real paints).

For each model (a torus of the sizes given, Fugaku's 6-D torus, a dragonfly of 9,088
terminals written link by link as tests/handmade_networks.py writes one):

1. Open: from the model file to the grid view built and painted once
   (``GridViewWindow`` + ``repaint``), on a document already open. Baseline: loading
   the file (``parasol_core.load``). Target: at most 2x (issue 21). Also PIUI's whole
   open, ``Document.open`` plus the grid view, against the same baseline (issue 23's
   1.5x for the million-processor torus).
2. Frames: a zoom step (x1.1 about the centre) and a pan step (7, 5 pixels), each the
   view changed and ``repaint()``-ed (a real paint, synchronous), at three zooms: the
   whole model (fitted: the aggregated overview), a zoom where a processor is about
   two pixels (the overview image scaled up, part of it in view) and a close-up
   (processors one by one, with links and numbers). Baseline: repainting an empty
   widget of the same size. Target: the 90th percentile within 16 ms (one 60 Hz frame).

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_grid_view.py
        [--torus 64 64 64] [--no-fugaku] [--no-dragonfly] [--repeat N]

The million-processor torus (``--torus 100 100 100 --no-fugaku --no-dragonfly``) needs
links stored as columns (branch ``columns``): with a Python object per link it needs
some 6 GB.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from parasol_core.syntax.loader import load  # noqa: E402
from piui.document import Document  # noqa: E402
from piui.windows.grid_view import GridViewWindow  # noqa: E402

SIZE = (1000, 800)
FRAME = 16e-3


def torus_file(directory: Path, dims: tuple[int, ...]) -> Path:
    """A model whose hardware is a torus of ``dims``, written here rather than by the
    generator, whose budget (1,000,000 lines) stops at 64 x 64 x 64: the links of each
    dimension, plain then wrap-around (size 3 or more), as the generator orders them."""
    import numpy as np
    from handmade_networks import HEAD

    shape_count = 1
    for n in dims:
        shape_count *= n
    p = np.arange(1, shape_count + 1, dtype=np.int64)
    a_parts, b_parts, stride = [], [], 1
    for n in dims:
        coord = ((p - 1) // stride) % n
        plain = p[coord < n - 1]
        a_parts.append(plain)
        b_parts.append(plain + stride)
        if n >= 3:
            first = p[coord == 0]
            a_parts.append(first)
            b_parts.append(first + (n - 1) * stride)
        stride *= n
    a, b = np.concatenate(a_parts), np.concatenate(b_parts)
    routing = {1: "1Dtorus", 2: "2Dtorus", 3: "3Dtorus"}.get(len(dims), "NDtorus")
    head = HEAD.format(name="torus " + " x ".join(map(str, dims)), count=shape_count,
                       links=a.size, network="")  # fmt: skip
    head = head.replace('routing = "shortest"', f'routing = "{routing}"')
    head = head.replace("        setup = 0.0\n",
                        f"        # piui: shape = {' '.join(map(str, dims))}\n        setup = 0.0\n")  # fmt: skip
    path = directory / ("torus-" + "x".join(map(str, dims)) + ".machine")
    with path.open("w") as out:
        out.write(head)
        out.writelines(f"            p[{i}] = 1\n" for i in range(1, shape_count + 1))
        out.write("        end procid\n        begin linklist\n")
        link = ("            begin link\n                id = {}\n"
                "                latency = 2.85e-05\n                speed = 9.1e-07\n"
                "                connect = 2 {} {}\n            end link\n")  # fmt: skip
        out.writelines(link.format(i, x, y)
                       for i, (x, y) in enumerate(zip(a.tolist(), b.tolist()), start=1))  # fmt: skip
        out.write("        end linklist\n    end topology\nend machine\n")
    return path


def dragonfly_file(directory: Path, g: int, a: int, p: int, h: int) -> Path:
    from handmade_networks import dragonfly_text

    path = directory / f"dragonfly-{g}-{a}-{p}-{h}.machine"
    path.write_text(dragonfly_text(g, a, p, h))
    return path


def show(widget: QWidget) -> QWidget:
    widget.resize(*SIZE)
    widget.show()
    QApplication.processEvents()
    return widget


def p90(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def timed(func) -> float:
    t0 = time.perf_counter()
    func()
    return time.perf_counter() - t0


def rows_for(name: str, path: Path, steps: int, baseline_paint: float) -> list[tuple]:
    rows: list[tuple] = []
    load_times = []
    for _ in range(2):
        gc.collect()
        load_times.append(timed(lambda: load(path)))
    parse = min(load_times)
    gc.collect()
    doc = Document()
    t_doc = timed(lambda: doc.open(path))
    holder: list[GridViewWindow] = []

    def open_view() -> None:
        w = show(GridViewWindow(doc))
        w.canvas.repaint()
        holder.append(w)

    t_view = timed(open_view)
    w = holder[0]
    c = w.canvas
    rows.append((f"{name}: open in the grid view", t_view, None, parse, "<= 2x load",
                 t_view <= 2 * parse))  # fmt: skip
    rows.append((f"{name}: PIUI open (Document.open + grid view)", t_doc + t_view, None,
                 parse, "<= 1.5x load", t_doc + t_view <= 1.5 * parse))  # fmt: skip

    def zoom() -> None:
        c.zoom(1.1)
        c.repaint()

    def zoom_back() -> None:
        c.zoom(1 / 1.1)
        c.repaint()

    def pan() -> None:
        c.pan(7, 5)
        c.repaint()

    def pan_back() -> None:
        c.pan(-7, -5)
        c.repaint()

    def measure(where: str) -> None:
        for case, there, back in (("zoom step", zoom, zoom_back), ("pan step", pan, pan_back)):
            times = []
            for i in range(steps):
                times.append(timed(there if i % 2 == 0 else back))
            worst = p90(times)
            detail = "overview" if c.is_overview() else "detail"
            rows.append((f"{name}: {case}, {where} ({detail})", statistics.median(times), worst,
                         baseline_paint, "16 ms", worst <= FRAME))  # fmt: skip

    def zoom_on_middle(scale: float) -> None:
        """Zoom to ``scale`` pixels a grid unit, the middle processor at the centre."""
        c.zoom(scale / c.scale, c.screen_point(max(1, c.place.count // 2)))
        at = c.screen_point(max(1, c.place.count // 2))
        c.pan(c.width() / 2 - at.x(), c.height() / 2 - at.y())
        c.repaint()

    c.fit()
    c.repaint()
    measure("whole model")
    zoom_on_middle(2.0)  # a processor about two pixels across (a grid unit: 2 px)
    measure("2 px a processor")
    zoom_on_middle(40.0)  # close up: processors, links, numbers
    shown = c.visible_indices().size
    measure(f"close-up, {shown} processors in view")
    w.close()
    w.deleteLater()
    QApplication.processEvents()
    return rows


def report(rows: list[tuple], steps: int) -> None:
    print(f"\n{'case':<88} {'median':>10} {'p90':>10} {'baseline':>10} {'ratio':>7}  "
          f"target  met")  # fmt: skip
    for name, t, worst, base, target, met in rows:
        shown_worst = f"{worst * 1e3:8.2f} ms" if worst is not None else " " * 11
        ratio = t / base if base else float("nan")
        verdict = {True: "yes", False: "NO", None: "-"}[met]
        print(f"{name:<88} {t * 1e3:8.2f} ms {shown_worst} {base * 1e3:8.2f} ms {ratio:7.2f}  "
              f"{target:<7} {verdict}")  # fmt: skip
    print(f"(frames: {steps} steps each, alternating there and back)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--torus", type=int, nargs="+", metavar="N", default=None,
                        help="also a torus of these sizes (1 to 6), e.g. 64 64 64 or 100 100 100")  # fmt: skip
    parser.add_argument("--no-fugaku", action="store_true", help="leave out 24x23x24x2x3x2")
    parser.add_argument("--no-dragonfly", action="store_true",
                        help="leave out the 9,088-terminal dragonfly")  # fmt: skip
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    steps = 2 * args.repeat
    empty = show(QWidget())
    empty.resize(*SIZE)
    baseline_paint = statistics.median(timed(empty.repaint) for _ in range(steps))
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        models: list[tuple[str, Path]] = []
        if not args.no_dragonfly:
            models.append(("dragonfly 71 16 8 8 (9,088 terminals, 1,136 routers)",
                           dragonfly_file(Path(tmp), 71, 16, 8, 8)))  # fmt: skip
        if not args.no_fugaku:
            models.append(("Fugaku torus 24x23x24x2x3x2 (158,976)",
                           torus_file(Path(tmp), (24, 23, 24, 2, 3, 2))))  # fmt: skip
        if args.torus:
            dims = tuple(args.torus)
            count = 1
            for n in dims:
                count *= n
            models.append((f"torus {'x'.join(map(str, dims))} ({count:,})",
                           torus_file(Path(tmp), dims)))  # fmt: skip
        for name, path in models:
            rows.extend(rows_for(name, path, steps, baseline_paint))
            gc.collect()
    app.processEvents()
    report(rows, steps)


if __name__ == "__main__":
    main()
