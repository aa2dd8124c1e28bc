"""How fast the topology windows open, zoom, pan and swap, against baselines measured in
the same run (offscreen).

1. Opening the 32 x 32 x 32 torus (32,768 processors, 98,304 links) in the grid view:
   the time from an opened document to the grid view built and painted once. Baseline:
   loading the model file (``Document.open``). Target: at most 3x.
2. One zoom step and one pan step in the grid view (the view changed and repainted,
   synchronously) on the 4 x 4 grid, on GCel (512 processors) and on the 32,768 torus.
   Baseline: repainting an empty widget of the same size. Target: 16 ms (one 60 Hz
   frame) up to 512 processors.
3. One mapping swap in the mapping editor (a drop: the session operation, dilation and
   congestion recomputed by the core, the labels and the view repainted): on the 4 x 4
   grid's 2D torus, on a 2D torus over GCel (and with ``--big-swap`` a 3D torus over
   the 32,768 torus).
   Baseline: the same repaint without the swap. Target: 16 ms up to 512 processors.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_topology_gui.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from parasol_core.syntax.parser import load  # noqa: E402
from parasol_core.syntax.writer import dumps_canonical  # noqa: E402
from parasol_core.topology import generate  # noqa: E402
from piui.document import Document  # noqa: E402
from piui.windows.grid_view import GridViewWindow  # noqa: E402
from piui.windows.mapping_editor import MappingEditorWindow  # noqa: E402

SIZE = (800, 700)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f} ms"


def median_time(func, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def big_torus_file(directory: Path) -> Path:
    """The 4 x 4 sample with its hardware replaced by a 32 x 32 x 32 torus (written from
    the model, not through a session: an undoable replace is not what is measured)."""
    machine = load(ROOT / "sample_models" / "grid4x4.machine")
    hw = machine.hardware()
    machine.topologies = [generate("torus", (32, 32, 32), 2.85e-5, 9.1e-7, id=hw.id)]
    machine.virtuals = []
    machine.topology_count = 1
    path = directory / "torus32k.machine"
    path.write_text(dumps_canonical(machine))
    return path


def show(widget: QWidget) -> QWidget:
    widget.resize(*SIZE)
    widget.show()
    QApplication.processEvents()
    return widget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--big-swap",
        action="store_true",
        help="also time a swap on the 32,768-processor torus (slow to set up)",
    )
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        big = big_torus_file(Path(tmp))
        models = {
            "4x4 grid (16)": ROOT / "sample_models" / "grid4x4.machine",
            "GCel (512)": ROOT / "sample_models" / "parsytec-gcel.machine",
            "32x32x32 torus (32768)": big,
        }

        # 1. open the big torus: the model is loaded once (Document.open of this file is
        # slow in the session, not in the windows: reported on its own row)
        t0 = time.perf_counter()
        big_doc = Document()
        big_doc.open(big)
        doc_open = time.perf_counter() - t0
        parse = median_time(lambda: load(big), 2)
        opens = []
        for _ in range(2):
            t1 = time.perf_counter()
            w = show(GridViewWindow(big_doc))
            w.canvas.repaint()
            opens.append(time.perf_counter() - t1)
            w.close()
            w.deleteLater()
        rows.append(("open 32768 torus in the grid view", statistics.median(opens), parse,
                     "<= 3x"))  # fmt: skip
        rows.append(("(Document.open of that file, for reference)", doc_open, parse, "-"))
        documents = {"32x32x32 torus (32768)": big_doc}

        empty = show(QWidget())
        baseline = median_time(empty.repaint, args.repeat * 4)

        # 2. zoom and pan steps
        for name, path in models.items():
            doc = documents.get(name) or Document()
            if name not in documents:
                doc.open(path)
            w = show(GridViewWindow(doc))
            c = w.canvas

            def zoom(c=c) -> None:
                c.zoom(1.1)
                c.repaint()

            def pan(c=c) -> None:
                c.pan(7, 5)
                c.repaint()

            target = "16 ms" if "32768" not in name else "-"
            rows.append((f"zoom step, {name}", median_time(zoom, args.repeat * 4), baseline,
                         target))  # fmt: skip
            rows.append((f"pan step, {name}", median_time(pan, args.repeat * 4), baseline,
                         target))  # fmt: skip
            c.fit()
            c.zoom(40.0)  # close up on a corner: the detailed drawing of links and numbers
            rows.append((f"pan step zoomed in, {name}", median_time(pan, args.repeat * 4),
                         baseline, target))  # fmt: skip
            w.close()

        # 3. swaps
        for name, path in models.items():
            if "32768" in name and not args.big_swap:
                continue
            doc = documents.get(name) or Document()
            if name not in documents:
                doc.open(path)
            hw = doc.machine.hardware()
            ndim = sum(n > 1 for n in (hw.shape or ()))
            m = show(MappingEditorWindow(doc))
            if "4x4" in name:
                m.select_virtual(3)  # the 2D torus of the sample
            else:
                m.add_virtual(f"{max(ndim, 1)}Dtorus")
            m.apply_scheme("random")
            repaint = median_time(m.canvas.repaint, args.repeat)
            count = m.canvas.place.count
            pairs = [(1 + (7 * i) % count, 1 + (13 * i + 5) % count) for i in range(args.repeat)]
            pairs = [(a, b) for a, b in pairs if a != b]
            times = []
            for a, b in pairs:
                t0 = time.perf_counter()
                m.swap(a, b)
                QApplication.processEvents()
                m.canvas.repaint()
                times.append(time.perf_counter() - t0)
            target = "16 ms" if "32768" not in name else "-"
            rows.append((f"swap + dilation/congestion, {name}", statistics.median(times),
                         repaint, target))  # fmt: skip
            m.close()
    app.processEvents()

    print(f"{'case':52} {'time':>11} {'baseline':>11} {'ratio':>7}  target")
    for case, t, base, target in rows:
        print(f"{case:52} {ms(t)} {ms(base)} {t / base:7.2f}  {target}")


if __name__ == "__main__":
    main()
