"""Screenshots of the Program window (issue 31), taken on a real X server: PIUI on the
Parsytec GCel sample, the SimGrid stencil trace of sample_models/traces opened with
File > Open program trace…, the double-precision scaler dragged to x0.5 (the prediction
shows before -> after), the mouse over an operation; then its What dominates tab.

    Xvfb :93 -screen 0 1600x1000x24 &   DISPLAY=:93 openbox &
    DISPLAY=:93 .venv/bin/python docs/screenshots/make_program.py

Writes program-window.png (the main window, the screen grabbed with ImageMagick's
``import -window root`` and cut to it) and program-dominates.png (the Program dock).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PIUI_SETTINGS", str(Path(tempfile.mkdtemp()) / "piui.ini"))

from PySide6.QtCore import QEvent, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QMouseEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

OUT = Path(__file__).resolve().parent
TRACE = ROOT / "sample_models" / "traces" / "stencil.txt"


def settle(seconds: float = 0.6) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.02)


def until(done, limit: float = 30.0) -> None:  # noqa: ANN001
    end = time.monotonic() + limit
    while not done():
        if time.monotonic() > end:
            raise TimeoutError("no prediction")
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> None:
    app = QApplication.instance() or QApplication([])  # noqa: F841 (kept while it runs)
    from piui.main_window import MainWindow

    window = MainWindow()
    window.setAnimated(False)
    window.ask_save_changes = lambda: 0
    window.open_file(ROOT / "sample_models" / "parsytec-gcel.machine")
    window.setGeometry(0, 0, 1600, 1000)
    window.show()
    settle(1.5)
    program = window.panels["program"]
    window.open_program_trace(str(TRACE))
    until(lambda: program.after is not None and not program.live.busy)
    slider = window.panels["groups"].rows["double"].slider
    slider.slider.setValue(slider.slider.value() - 300)  # a drag to x0.5
    until(lambda: program.before is not program.after and not program.live.busy)
    settle(0.8)
    # the mouse over an operation of rank 5 (its hover line under the timeline)
    plot = program.timeline
    timeline = program.after.timeline
    i = list(timeline.order).index(timeline.at(timeline.t_end * 0.45, 5))
    at = plot.view.mapViewToScene(QPointF((timeline.start[i] + timeline.end[i]) / 2, 5.5))
    where = plot.plot.mapFromScene(at)
    viewport = plot.plot.viewport()
    QApplication.sendEvent(viewport, QMouseEvent(
        QEvent.Type.MouseMove, QPointF(where), QPointF(viewport.mapToGlobal(where)),
        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))  # fmt: skip
    settle(1.0)
    geometry = window.frameGeometry()
    shot = OUT / "program-window.png"
    subprocess.run(["import", "-window", "root", "-crop",
                    f"{geometry.width()}x{geometry.height()}+{geometry.x()}+{geometry.y()}",
                    "+repage", str(shot)], check=True)  # fmt: skip
    print("wrote", shot)
    program.tabs.setCurrentWidget(program.dominates)
    until(lambda: not program.dominates.is_stale() and not program.dominance_job.busy)
    settle(0.8)
    shot = OUT / "program-dominates.png"
    window.docks["program"].grab().save(str(shot))
    print("wrote", shot)
    window.close()


if __name__ == "__main__":
    main()
