"""PIUI's own ``main()`` in a process of its own, started as ``piui [MODEL]`` is, and
stopped by a signal once its window's event loop runs: shared by the tests of the
signal's shutdown (tests/robustness) and of what it leaves to restore (tests/gui).

What is checked is what happened in which order, never a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAFETY = 120  # seconds: only a bound on a wait for an event, never a measured time

# The script only says when the window's event loop runs (and, asked, makes an edit it
# does not save first); "-" for MODEL starts PIUI with no file (a copy of the sample).
PIUI = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])

    def ready():
        from piui.main_window import MainWindow
        shown = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not shown:  # events run while the model opens: wait for the window's loop
            QTimer.singleShot(10, ready)
            return
        window = shown[0]
        if sys.argv[2] == "edit":
            window.document.session.set("pt(1).iga", "7.5e-7")
        print("ready", flush=True)

    QTimer.singleShot(0, ready)
    from piui.app import main
    sys.exit(main([] if sys.argv[1] == "-" else [sys.argv[1]]))
    """
)


# PIUI started as `piui MODEL` is, answering Restore when it offers unsaved edits back
# once its window is on screen, then saying what it shows and saving (tests/gui)
RESTORING = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication(sys.argv[:1])

    def window():
        from piui.main_window import MainWindow
        shown = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        return shown[0] if shown else None

    def answer():
        box = app.activeModalWidget()
        if not isinstance(box, QMessageBox) or box.windowTitle() != "Unsaved edits found":
            QTimer.singleShot(10, answer)
            return
        print("offered with the window on screen:", window() is not None, flush=True)
        print("offered:", box.text().replace("\\n", " "), flush=True)
        next(b for b in box.buttons() if b.text() == "Restore").click()
        QTimer.singleShot(0, report)

    def report():
        w = window()
        if app.activeModalWidget() is not None or w is None or not w.document.is_modified:
            QTimer.singleShot(10, report)
            return
        print("title:", w.windowTitle(), flush=True)
        print("iga:", w.document.machine.processor(1).timings["iga"].mean, flush=True)
        print("saved:", w.save(), flush=True)
        app.quit()

    QTimer.singleShot(0, answer)
    from piui.app import main
    sys.exit(main([sys.argv[1]]))
    """
)


def start_piui(tmp_path: Path, model: Path | None, edit: bool, script: str = PIUI
               ) -> subprocess.Popen:  # fmt: skip
    """PIUI on ``model`` (None: no file), its settings, home and data folder in
    ``tmp_path`` (the data folder: :func:`data_home`); ``script`` :data:`PIUI` or
    :data:`RESTORING`."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(data_home(tmp_path)),
               PIUI_SETTINGS=str(tmp_path / "settings.ini"))  # fmt: skip
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-c", script, "-" if model is None else str(model),
         "edit" if edit else "keep"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def data_home(tmp_path: Path) -> Path:
    """``XDG_DATA_HOME`` of a PIUI started by :func:`start_piui`."""
    return tmp_path / "data"


def stop_when_ready(proc: subprocess.Popen, sig: int) -> tuple[int, str]:
    """Send ``sig`` once the window's loop runs; the exit status and stderr."""
    line = proc.stdout.readline()  # blocks until the loop runs (or the process ends)
    if line.strip() != "ready":
        proc.kill()
        _, err = proc.communicate(timeout=SAFETY)
        pytest.fail(f"PIUI did not start (status {proc.returncode}):\n{err}")
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=SAFETY)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"PIUI did not stop on {signal.Signals(sig).name}")
    return proc.returncode, err


def stopped_with_edits(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A model, the copy a PIUI editing it left when SIGTERM stopped it (exit 143), the
    model's text as it was (and is), and what PIUI said on stderr."""
    from named_platform import named_model_text

    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    before = model.read_text()
    status, err = stop_when_ready(start_piui(tmp_path, model, edit=True), signal.SIGTERM)
    assert status == 143, err
    copy = tmp_path / "named.machine.unsaved"
    assert copy.exists() and model.read_text() == before, err
    return model, copy, before, err
