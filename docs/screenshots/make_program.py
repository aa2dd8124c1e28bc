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

import subprocess

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication
from shots import OUT, ROOT, main_window, settle, until

TRACE = ROOT / "sample_models" / "traces" / "stencil.txt"


def main() -> None:
    window = main_window(ROOT / "sample_models" / "parsytec-gcel.machine")
    settle(0.5)
    program = window.panels["program"]
    window.open_program_trace(str(TRACE))
    until(lambda: program.after is not None and not program.live.busy, 30, "the prediction")
    slider = window.panels["groups"].rows["double"].slider
    slider.slider.setValue(slider.slider.value() - 300)  # a drag to x0.5
    until(
        lambda: program.before is not program.after and not program.live.busy, 30, "the prediction"
    )
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
    until(
        lambda: not program.dominates.is_stale() and not program.dominance_job.busy,
        60,
        "what dominates",
    )
    settle(0.8)
    shot = OUT / "program-dominates.png"
    window.docks["program"].grab().save(str(shot))
    print("wrote", shot)
    window.close()


if __name__ == "__main__":
    main()
