"""The programs that run an event loop stop on SIGINT, SIGTERM and SIGHUP as the
commands do (parasol_core/base/signals.py, ``Stop``): their orderly shutdown first,
then the exit status 128 + the signal, so that a script or a service manager sees
that a signal ended them: ``parasol-estimator serve`` (its asyncio loop) and PIUI (its
Qt loop, which also keeps unsaved edits in a copy, as nobody is there to be asked).

Each signal is sent once the process said it is ready (it answers, or printed so), and
what is checked is what happened in which order, never a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from estimator_support import Estimator
from named_platform import named_model_text

from parasol_core.base.signals import exit_status

ROOT = Path(__file__).resolve().parents[2]
SAFETY = 120  # seconds: only a bound on a wait for an event, never a measured time
STOPPING = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]


@pytest.mark.parametrize("sig", STOPPING, ids=lambda s: s.name)
def test_the_estimator_stopped_by_a_signal_exits_with_128_plus_it(tmp_path, sig) -> None:
    est = Estimator(tmp_path / "models").start()  # ready: it has answered a ping
    try:
        assert est.alive()
        est.proc.send_signal(sig)
        status = est.proc.wait(SAFETY)
    finally:
        est.kill()
    log = est.log()
    assert status == exit_status(sig) == 128 + sig, log
    # the orderly shutdown came first, naming the signal
    stopping = log.index(f"stopping ({sig.name}): finishing the requests in flight")
    assert stopping < log.index("INFO stopped")


# PIUI's own main(), started as `piui MODEL` is; the script only says when the window's
# event loop runs (and, asked, makes an edit it does not save first)
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
    sys.exit(main([sys.argv[1]]))
    """
)


def _piui(tmp_path: Path, model: Path, edit: bool) -> subprocess.Popen:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"),
               PIUI_SETTINGS=str(tmp_path / "settings.ini"))  # fmt: skip
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-c", PIUI, str(model), "edit" if edit else "keep"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _stop_when_ready(proc: subprocess.Popen, sig: int) -> tuple[int, str]:
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


@pytest.mark.parametrize("sig", STOPPING, ids=lambda s: s.name)
def test_piui_stopped_by_a_signal_shuts_down_and_exits_with_128_plus_it(tmp_path, sig) -> None:
    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    status, err = _stop_when_ready(_piui(tmp_path, model, edit=False), sig)
    assert status == 128 + sig, err
    # the usual shutdown ran: the window's place was written to PIUI's settings
    settings = tmp_path / "settings.ini"
    assert settings.exists() and "geometry" in settings.read_text(), err
    assert not (tmp_path / "named.machine.unsaved").exists()  # nothing to keep


def test_piui_stopped_by_sigterm_keeps_unsaved_edits_in_a_copy(tmp_path) -> None:
    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    before = model.read_text()
    status, err = _stop_when_ready(_piui(tmp_path, model, edit=True), signal.SIGTERM)
    assert status == 143, err
    kept = tmp_path / "named.machine.unsaved"
    assert f"piui: stopped by SIGTERM: the unsaved edits of named.machine are in {kept}" in err
    assert model.read_text() == before  # the model file as it was: nobody said to save
    assert "iga = 7.5e-07" in kept.read_text() and "iga" not in before
