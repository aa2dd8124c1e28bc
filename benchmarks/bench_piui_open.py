"""How long PIUI takes to open a large model, against loading it in the same process.

In one process (offscreen unless QT_QPA_PLATFORM is set): the main window is made and
shown on the small grid4x4 sample first (so that imports and the windows'
first painting are not counted), then for the generated 32 x 32 x 32 torus of
``bench_load.py`` (32,768 processors, 98,304 links), taking turns:

* ``load``: ``parasol_core.load(path)`` (read, parse; the baseline);
* ``load + validate``: as the command line and the estimator open a file;
* ``open in PIUI``: ``MainWindow.open_file(path)`` and the events that follow it until
  the window has painted again (the document's load, validation, engine and every
  window's refresh).

The window has PIUI's default layout (a settings file of its own, in a temporary folder).

Medians, with the ratio to ``load``. The target of issue 14 is ``open in PIUI`` within
1.5 x ``load``.

    .venv/bin/python benchmarks/bench_piui_open.py [--side N] [--repeat N] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load import torus_text

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "sample_models" / "grid4x4.machine"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile one PIUI open")
    args = parser.parse_args()
    # a settings file of its own: the default layout, and the user's recent files and
    # window layout left alone
    settings = tempfile.TemporaryDirectory()
    os.environ["PIUI_SETTINGS"] = str(Path(settings.name) / "settings.ini")

    from PySide6.QtWidgets import QApplication

    from parasol_core import load
    from parasol_core.analysis.validate import validate
    from piui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow()
    window.show()
    window.open_file(str(SMALL))
    for _ in range(20):
        app.processEvents()

    def settle() -> None:
        deadline = time.perf_counter() + 0.05
        while time.perf_counter() < deadline:
            app.processEvents()

    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "torus.machine"
        path.write_text(torus_text(args.side), encoding="utf-8")
        for _ in range(args.repeat):
            gc.collect()
            start = time.perf_counter()
            machine = load(path)
            times.setdefault("load", []).append(time.perf_counter() - start)
            start = time.perf_counter()
            validate(machine)
            times.setdefault("load + validate", []).append(
                times["load"][-1] + time.perf_counter() - start
            )
            del machine
            window.open_file(str(SMALL))
            settle()
            gc.collect()
            start = time.perf_counter()
            if not window.open_file(str(path)):
                raise SystemExit("PIUI did not open the model")
            app.processEvents()
            times.setdefault("open in PIUI", []).append(time.perf_counter() - start)
            settle()
        if args.profile:
            window.open_file(str(SMALL))
            settle()
            profiler = cProfile.Profile()
            profiler.enable()
            window.open_file(str(path))
            app.processEvents()
            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    window.document.undo_stack.setClean()
    window.close()

    base = statistics.median(times["load"])
    n = args.side
    print(f"{n} x {n} x {n} torus ({3 * n**3:,} links), median of {args.repeat}:")
    print(f"  {'operation':<18} {'time':>10}  {'x load':>8}")
    for name, values in times.items():
        seconds = statistics.median(values)
        print(f"  {name:<18} {seconds:>8.2f} s  {seconds / base:>8.2f}")


if __name__ == "__main__":
    main()
