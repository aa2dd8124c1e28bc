"""The programs that run an event loop stop on SIGINT, SIGTERM and SIGHUP as the
commands do (parasol_core/base/signals.py, ``Stop``): their orderly shutdown first,
then the exit status 128 + the signal, so that a script or a service manager sees
that a signal ended them: ``parasol-estimator serve`` (its asyncio loop) and PIUI (its
Qt loop, which also keeps unsaved edits in a copy, as nobody is there to be asked).

Each signal is sent once the process said it is ready (it answers, or printed so), and
what is checked is what happened in which order, never a time."""

from __future__ import annotations

import signal

import pytest
from estimator_support import Estimator
from named_platform import named_model_text
from piui_process import SAFETY, start_piui, stop_when_ready, stopped_with_edits

from parasol_core.base.signals import exit_status

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


@pytest.mark.parametrize("sig", STOPPING, ids=lambda s: s.name)
def test_piui_stopped_by_a_signal_shuts_down_and_exits_with_128_plus_it(tmp_path, sig) -> None:
    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    status, err = stop_when_ready(start_piui(tmp_path, model, edit=False), sig)
    assert status == 128 + sig, err
    # the usual shutdown ran: the window's place was written to PIUI's settings
    settings = tmp_path / "settings.ini"
    assert settings.exists() and "geometry" in settings.read_text(), err
    assert not (tmp_path / "named.machine.unsaved").exists()  # nothing to keep


def test_piui_stopped_by_sigterm_keeps_unsaved_edits_in_a_copy(tmp_path) -> None:
    model, kept, before, err = stopped_with_edits(tmp_path)
    assert f"piui: stopped by SIGTERM: the unsaved edits of named.machine are in {kept}" in err
    assert model.read_text() == before  # the model file as it was: nobody said to save
    assert "iga = 7.5e-07" in kept.read_text() and "iga" not in before
