"""Screenshots of File > Sweep… (issue 32), for the README: PIUI on the Parsytec GCel
sample, a sweep of two axes (the heat map and what dominates) and one of three (the
parallel coordinates), each run to its end. Runs offscreen or on an X server:

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_sweep.py

Writes sweep-heat-map.png and sweep-parallel.png (the dialog, grabbed).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PIUI_SETTINGS", str(Path(tempfile.mkdtemp()) / "piui.ini"))

from PySide6.QtWidgets import QApplication  # noqa: E402

OUT = Path(__file__).resolve().parent


def settle(seconds: float = 0.6) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.02)


def run(dialog, axes: list[tuple[str, str]], name: str) -> None:  # noqa: ANN001
    while dialog.axes.rowCount():
        dialog.axes.removeRow(0)
    for change, values in axes:
        dialog.add_axis(change, values)
    dialog.run()
    end = time.monotonic() + 120
    while dialog.running:
        if time.monotonic() > end:
            raise TimeoutError("the sweep did not end")
        QApplication.processEvents()
        time.sleep(0.02)
    settle(1.0)
    dialog.grab().save(str(OUT / f"{name}.png"))


def main() -> None:
    app = QApplication.instance() or QApplication([])  # noqa: F841 (kept while it runs)
    from piui.main_window import MainWindow

    window = MainWindow()
    window.ask_save_changes = lambda: 0
    window.open_file(ROOT / "sample_models" / "parsytec-gcel.machine")
    window.show()
    settle(1.0)
    window.show_sweep()
    dialog = window.sweep_dialog
    dialog.resize(1100, 760)
    settle(0.5)
    run(dialog, [("pt(1).iga", "log 1e-7 1e-5 8"), ("tl(1)(*).speed", "log 1e-7 1e-5 8")],
        "sweep-heat-map")  # fmt: skip
    run(dialog, [("pt(1).iga", "log 1e-7 1e-5 4"), ("tl(1)(*).speed", "log 1e-7 1e-5 4"),
                 ("scale arithmetic", "linear 0.5 2 4")], "sweep-parallel")  # fmt: skip
    window.close()


if __name__ == "__main__":
    main()
