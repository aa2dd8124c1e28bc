"""The live prediction's worker: requests made while one runs cancel it and replace any
that waited, only the latest request's answer is shown, and answers come in order."""

from __future__ import annotations

import threading

from piui.widgets.live_prediction import Cancelled, LivePrediction


def test_a_request_made_while_one_runs_cancels_it_and_only_the_latest_is_answered(qtbot):
    live = LivePrediction()
    answered: list[tuple[object, int]] = []
    live.answered.connect(lambda answer, serial: answered.append((answer, serial)))
    gate = threading.Event()  # holds the first job until the others are asked
    seen_cancel: list[bool] = []
    ran: list[str] = []

    def first(cancel: threading.Event) -> str:
        ran.append("first")
        gate.wait(30)
        seen_cancel.append(cancel.is_set())
        if cancel.is_set():
            raise Cancelled("replaced")
        return "first"

    def job(name: str):
        def run(cancel: threading.Event) -> str:
            ran.append(name)
            return name

        return run

    live.request(first)
    qtbot.waitUntil(lambda: ran == ["first"])
    live.request(job("second"))  # waits, then is replaced before it starts
    last = live.request(job("third"))
    assert live.busy
    with qtbot.waitSignal(live.busyChanged, check_params_cb=lambda busy: not busy):
        gate.set()
    assert seen_cancel == [True]  # the running job was told
    assert ran == ["first", "third"]  # the replaced request never started
    assert answered == [("third", last)]
    assert live.started == 2
    live.shutdown()


def test_an_error_is_delivered_and_a_cancelled_job_is_silent(qtbot):
    live = LivePrediction()
    failures: list[str] = []
    live.failed.connect(lambda error, _serial: failures.append(str(error)))

    def broken(_cancel: threading.Event) -> None:
        raise ValueError("rank 3 waits on a message nobody sends")

    with qtbot.waitSignal(live.failed):
        live.request(broken)
    assert failures == ["rank 3 waits on a message nobody sends"]

    def cancelled(_cancel: threading.Event) -> None:
        raise Cancelled("gone")

    with qtbot.waitSignal(live.busyChanged, check_params_cb=lambda busy: not busy):
        live.request(cancelled)
    assert live.started == 2
    assert failures == ["rank 3 waits on a message nobody sends"]
    live.shutdown()
