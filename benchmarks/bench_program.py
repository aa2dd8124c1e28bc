"""How fast the Program window follows a slider and moves its timeline, against baselines
measured in the same run (offscreen).

1. The prediction following a drag: the main window on the Parsytec GCel sample with
   the Program window open on a stencil trace of about 10,000 actions (64 ranks), a drag
   of the double-precision scaler (five positions, no event processed between them, as a
   fast mouse), timed from the last position to the prediction of that position shown.
   Baseline: the replay alone of the same trace on the same model (``replay``, the
   trace's program compiled already, as the window's is). Target (issue 31): 100 ms.
   Also counted: in how many drags the first position's replay, under way when the
   next position came, was stopped part-way (``LivePrediction.stopped``).
1b. The same drag on a stencil trace of 168,448 actions (256 ranks), whose replay
   outlasts the drag's moves: there the first position's replay is still running when
   the last position is made, and stopping it part-way saves the wait for its end.
2. The timeline at 1,000,000 drawn operations (256 ranks): one pan step and one zoom
   step (the view moved and repainted, synchronously: what a frame costs while the user
   drags or turns the wheel), and the picture made again once the view settles.
   Baseline: the same steps on a timeline of 1,000 operations. Target: 16 ms a frame.

The figures of a busy machine are several times those of an idle one: read the ratios.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_program.py [--repeat N]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PIUI_SETTINGS", str(Path(tempfile.mkdtemp()) / "piui.ini"))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from parasol_core.frontend.timeline import Timeline  # noqa: E402
from parasol_core.replay import replay  # noqa: E402

FRAME_MS = 16.0


def _wait(app: QApplication, done, limit: float = 60.0) -> None:
    t = time.perf_counter()
    while not done():
        app.processEvents()
        if time.perf_counter() - t > limit:
            raise TimeoutError("no answer")
        time.sleep(0.0005)


def follow(app: QApplication, repeat: int, ranks: int = 64, iterations: int = 38,
           case: str = "1.") -> None:  # fmt: skip
    from program_traces import write_stencil

    from piui.main_window import MainWindow

    folder = Path(tempfile.mkdtemp())
    path = write_stencil(folder, ranks=ranks, iterations=iterations)
    window = MainWindow()
    window.ask_save_changes = lambda: 0
    window.open_file(ROOT / "sample_models" / "parsytec-gcel.machine")
    window.show()
    program = window.panels["program"]
    program.ask_trace_path = lambda: str(path)
    window.open_trace_action.trigger()
    _wait(app, lambda: program.after is not None)
    actions = len(program.program.trace)
    slider = window.panels["groups"].rows["double"].slider
    follows, alone = [], []
    shown: list[float] = []
    program.predictionShown.connect(lambda _b, a: shown.append(a))
    stopped = program.live.stopped
    for i in range(repeat):
        shown.clear()
        for step in range(5):
            slider.setValue(1.0)
            slider.slider.setValue(slider.slider.value() - 20 * (step + 1) - i)
        last = time.perf_counter()
        _wait(app, lambda: bool(shown) and not program.live.busy)
        follows.append(time.perf_counter() - last)
        machine = copy.deepcopy(window.document.machine)
        options = program.program.options_for(machine)
        t = time.perf_counter()
        replay(machine, program.program.trace, options)
        alone.append(time.perf_counter() - t)
    f, a = statistics.median(follows) * 1e3, statistics.median(alone) * 1e3
    print(f"{case} prediction following a drag, {actions:,} actions on {ranks} ranks (GCel):")
    print(f"   last move -> prediction shown   {f:8.1f} ms   (target 100 ms: "
          f"{'met' if f <= 100 else 'NOT met'})")  # fmt: skip
    print(f"   baseline: the replay alone      {a:8.1f} ms   ratio {f / a:.2f}x")
    print(f"   the first position's replay stopped part-way in {program.live.stopped - stopped} "
          f"of {repeat} drags")  # fmt: skip
    window.close()


def _ops(n: int, ranks: int) -> Timeline:
    rng = np.random.default_rng(1)
    per = n // ranks
    rank = np.repeat(np.arange(ranks), per)
    length = rng.exponential(1e-4, per * ranks)
    end = np.concatenate([np.cumsum(length[r * per : (r + 1) * per]) for r in range(ranks)])
    return Timeline(rank, rng.integers(1, 5, per * ranks), end - length, end, ranks)


def timeline(app: QApplication, repeat: int) -> None:
    from piui.widgets.timeline_plot import TimelinePlot

    rows = []
    for n, ranks in ((1_000, 256), (1_000_000, 256)):
        plot = TimelinePlot()
        plot.resize(1400, 700)
        plot.show()
        app.processEvents()
        line = _ops(n, ranks)
        plot.set_timeline(line)
        app.processEvents()
        pans, zooms, redraws = [], [], []
        for _ in range(repeat):
            for _step in range(10):
                t = time.perf_counter()
                plot.view.translateBy(x=line.t_end / 300)
                plot.plot.viewport().repaint()
                pans.append(time.perf_counter() - t)
                t = time.perf_counter()
                plot.view.scaleBy((0.95, 1.0))
                plot.plot.viewport().repaint()
                zooms.append(time.perf_counter() - t)
            t = time.perf_counter()
            plot.redraw()
            plot.plot.viewport().repaint()
            redraws.append(time.perf_counter() - t)
            plot.view.setRange(xRange=(0, line.t_end), padding=0)
            plot.redraw()
        rows.append((n, *(statistics.median(x) * 1e3 for x in (pans, zooms, redraws))))
        plot.close()
    base = rows[0]
    print("2. timeline, 256 ranks (ms; ratio to 1,000 operations):")
    for n, pan, zoom, redraw in rows:
        print(f"   {n:>9,} operations   pan {pan:6.2f} ({pan / base[1]:4.2f}x)   zoom "
              f"{zoom:6.2f} ({zoom / base[2]:4.2f}x)   settled redraw {redraw:6.1f} "
              f"({redraw / base[3]:4.1f}x)   frame target {FRAME_MS:g} ms: "
              f"{'met' if max(pan, zoom) <= FRAME_MS else 'NOT met'}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    follow(app, args.repeat)
    follow(app, args.repeat, ranks=256, iterations=160, case="1b.")
    timeline(app, args.repeat)


if __name__ == "__main__":
    main()
