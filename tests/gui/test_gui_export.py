"""Export to the estimator, Preferences and the Estimate panel, against a real estimator
process (127.0.0.1, a free port; every wait bounded)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from PySide6.QtCore import QTimer

from parasol_core.estimator import Client
from parasol_core.estimator.local import LocalEstimator, free_port
from parasol_core.syntax.loader import loads
from parasol_core.topology.index import route as core_route
from piui.export import EstimatorSettings, push_name, set_push_name
from piui.main_window import settings


@pytest.fixture(scope="module")
def estimator(tmp_path_factory):
    est = LocalEstimator(tmp_path_factory.mktemp("est") / "models").start()
    yield est
    est.stop()


def use(url: str, **kw) -> None:
    EstimatorSettings(url, **kw).save(settings())


def export_and_wait(qtbot, window, timeout: int = 60_000):
    with qtbot.waitSignal(window.exporter.finished, timeout=timeout) as blocker:
        assert window.export()
    return blocker.args[0]


def test_export_pushes_the_model_and_the_estimator_holds_the_same_text(
    main_window, qtbot, estimator
):
    use(estimator.url)
    doc = main_window.document
    set_push_name(doc, "gcel-test")
    doc.session.set("pt(1).iga", "1e-6")  # an edit not yet saved is exported too
    result = export_and_wait(qtbot, main_window)
    assert result.ok, result.error
    with Client(estimator.url) as c:
        assert c.get(result.model) == doc.session.text()
        assert c.latest("gcel-test") == result.model
    assert result.model in main_window.statusBar().currentMessage()
    assert any(result.model in line for line in main_window.terminal.lines())
    assert doc.is_modified  # exporting is not saving


def test_a_field_being_typed_is_exported_too(main_window, qtbot, estimator):
    use(estimator.url)
    master = main_window.processor_master
    master.name_field.setFocus()
    qtbot.waitUntil(master.name_field.hasFocus, timeout=60_000)
    master.name_field.selectAll()
    qtbot.keyClicks(master.name_field, "typed not entered")
    result = export_and_wait(qtbot, main_window)
    assert result.ok
    assert main_window.document.machine.processor(1).name == "typed not entered"
    with Client(estimator.url) as c:
        assert 'name = "typed not entered"' in c.get(result.model)


def test_a_model_with_semantic_errors_is_refused_and_its_diagnostics_shown(
    main_window, qtbot, estimator
):
    use(estimator.url)
    doc = main_window.document
    doc.session.set_expression("po(1).ia_spd", "pt(7).iga / tl(1)(1).speed")
    result = export_and_wait(qtbot, main_window)
    assert not result.ok and "refused" in result.error and estimator.url in result.error
    assert any("pt(7)" in d.message for d in result.diagnostics)
    panel = main_window.diagnostics
    messages = [panel.diagnostic_at(i).message for i in range(panel.tree.topLevelItemCount())]
    assert any(m.startswith("estimator: ") and "pt(7)" in m for m in messages)
    assert doc.session.machine.processor(1).combinations["ia_spd"].text.startswith("pt(7)")


def test_with_the_estimator_down_nothing_is_lost_and_export_can_be_retried(
    main_window, qtbot, tmp_path
):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    use(url)
    doc = main_window.document
    doc.session.set("pt(1).iga", "2e-6")
    result = export_and_wait(qtbot, main_window)
    assert not result.ok and result.error.count(url) == 1  # the address said once
    assert url in main_window.statusBar().currentMessage()
    assert main_window.export_action.isEnabled()
    doc.session.set("pt(1).igm", "3e-6")  # still editable
    est = LocalEstimator(tmp_path / "models")
    est.port, est.url = port, url
    est.start()
    try:
        result = export_and_wait(qtbot, main_window)
        assert result.ok
        with Client(url) as c:
            assert c.get(result.model) == doc.session.text()
    finally:
        est.stop()


class SlowServer:
    """Accepts one request and answers it, correctly, after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.delay = delay
        self.received = self.answered = None  # when (time.perf_counter) it did each
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        self.sock.settimeout(10)
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(10)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))  # fmt: skip
            while len(body) < length:
                body += conn.recv(65536)
            rid = json.loads(body)["id"]
            self.received = time.perf_counter()
            time.sleep(self.delay)
            answer = json.dumps({"jsonrpc": "2.0", "id": rid,
                                 "result": {"model": "slow01", "name": "slow",
                                            "diagnostics": []}}).encode()  # fmt: skip
            self.answered = time.perf_counter()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(answer)).encode() + b"\r\n\r\n" + answer)  # fmt: skip

    def close(self) -> None:
        self.sock.close()


def test_the_window_never_blocks_while_a_slow_estimator_answers(main_window, qtbot):
    server = SlowServer(delay=1.5)
    use(server.url)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    try:
        qtbot.wait(100)
        start = time.perf_counter()
        result = export_and_wait(qtbot, main_window)
        took = time.perf_counter() - start
        qtbot.wait(50)
    finally:
        timer.stop()
        server.close()
    assert result.ok and result.model == "slow01"
    # the order of events: the window's timer went on ticking between the estimator's
    # receiving the request and its answer (a blocked event loop ticks not once)
    during = [t for t in ticks if server.received < t < server.answered]
    assert len(during) >= 2, (len(during), server.received, server.answered)
    # and no pause of the event loop came near the estimator's delay, as measured
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    wait = server.answered - server.received
    assert max(gaps) < wait / 3, f"the event loop stalled {max(gaps):.3f} s of {wait:.3f} s"
    assert took >= wait  # the export waited for the answer


def test_auto_export_pushes_a_second_after_the_last_edit(main_window, qtbot, estimator):
    use(estimator.url, auto=True)
    doc = main_window.document
    set_push_name(doc, "auto")
    # the second edit comes well within the wait, however busy the machine: the push is
    # one, after it (the delay is the product's; 300 ms against it failed under load)
    main_window.exporter._auto.setInterval(5000)
    with qtbot.waitSignal(main_window.exporter.finished, timeout=60_000) as blocker:
        doc.session.set("pt(1).iga", "5e-6")
        qtbot.wait(300)
        assert main_window.exporter._auto.isActive()  # nothing pushed yet
        doc.session.set("pt(1).iga", "6e-6")  # restarts the wait
    result = blocker.args[0]
    assert result.ok
    with Client(estimator.url) as c:
        assert "iga = 6e-06" in c.get(c.latest("auto"))


def test_export_to_a_file_writes_the_model_and_keeps_the_open_file(main_window, tmp_path):
    doc = main_window.document
    doc.session.set("pt(1).iga", "4e-6")
    target = tmp_path / "exported.machine"
    main_window.ask_export_path = lambda: str(target)
    assert main_window.export_to_file()
    assert loads(target.read_text()).processor(1).timings["iga"].mean == 4e-6
    assert doc.path != target and doc.is_modified


def test_the_estimate_panel_asks_routes_transfer_times_and_blocks(main_window, qtbot, estimator):
    use(estimator.url)
    panel = main_window.estimate
    result = export_and_wait(qtbot, main_window)
    assert result.ok and panel.model == result.model
    machine = main_window.document.machine
    panel.src.setValue(1)
    panel.dst.setValue(18)
    panel.route_button.click()
    qtbot.waitUntil(lambda: " link" in panel.route_text.text(), timeout=60_000)
    route = panel.routes[-1]
    hw = machine.hardware()
    expected = core_route(hw, 1, 18)
    assert list(route["links"]) == list(expected.links)
    assert list(route["processors"]) == list(expected.processors)
    panel.bytes.setText("4096")
    panel.transfer_button.click()
    qtbot.waitUntil(lambda: panel.transfer_text.text().endswith(" s"), timeout=60_000)
    seconds = float(panel.transfer_text.text().split()[0])
    with Client(estimator.url) as c:
        assert seconds == pytest.approx(c.transfer_time(result.model, route["route"], 4096), 1e-5)
    panel.counts.setPlainText('{"iga": 4, "nosuch": 1}')
    panel.block_button.click()
    qtbot.waitUntil(lambda: "nosuch" in panel.message.text(), timeout=60_000)  # said, in place
    panel.counts.setPlainText('{"iga": 4, "dga": 2}')
    panel.block_button.click()
    qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
    mean = float(panel.block_text.text().split()[0])
    timings = machine.processor(1).timings
    assert mean == pytest.approx(4 * timings["iga"].mean + 2 * timings["dga"].mean, 1e-5)
    # and where the time lies, with what that is made of (the command's interval)
    with Client(estimator.url) as c:
        lo, hi = c.block(result.model, 1, {"iga": 4, "dga": 2})["interval"]
    assert panel.block_text.text().endswith(f", {lo:.3g} .. {hi:.3g} s")
    assert "2 sd of the measured timings; the model records no validation" in \
        panel.block_text.toolTip()  # fmt: skip
    panel.cached.click()  # another question: its answer and the answer's words go
    assert panel.block_text.text() == "" and panel.block_text.toolTip() == ""


def test_preferences_start_a_local_estimator_that_stops_with_piui(main_window, qtbot):
    from piui.windows.preferences import PreferencesDialog

    dialog = PreferencesDialog(main_window.estimator_settings(), None, main_window)
    qtbot.addWidget(dialog)
    started = []
    dialog.start_local(then=started.append)
    qtbot.waitUntil(lambda: bool(started), timeout=60_000)
    assert started == [True] and dialog.local.running()
    assert dialog.url.text() == dialog.local.url
    checked = []
    dialog.check(then=checked.append)
    qtbot.waitUntil(lambda: bool(checked), timeout=60_000)
    assert checked == [True] and "answers" in dialog.status.text()
    dialog.settings().save(settings())
    main_window.local_estimator = dialog.local
    proc = dialog.local.proc
    main_window.close()
    assert proc.poll() is not None  # stopped with PIUI


def _alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
    except (FileNotFoundError, StopIteration):
        return False
    return "Z" not in state.split()[1]


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="prctl is Linux's")
def test_a_local_estimator_dies_with_the_process_that_started_it(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from parasol_core.estimator.local import LocalEstimator\n"
        "est = LocalEstimator(Path(sys.argv[1])).start()\n"
        "print(est.proc.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "models")],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    child = None
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.kill()  # no chance to clean up
        parent.wait(10)
        deadline = time.monotonic() + 60  # only stops a test whose child lives on
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.1)
        assert not _alive(child), "the estimator outlived the process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()
        if child is not None and _alive(child):
            import os

            os.kill(child, 9)


def test_the_preferences_buttons_work_when_clicked(main_window, qtbot, estimator):
    from PySide6.QtCore import Qt

    from piui.windows.preferences import PreferencesDialog

    dialog = PreferencesDialog(EstimatorSettings(estimator.url), None, main_window)
    qtbot.addWidget(dialog)
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "answers" in dialog.status.text(), timeout=60_000)


def test_the_export_shortcut_works_even_from_a_text_field(main_window, qtbot, estimator):
    # Ctrl+E is a text field's "end of line" on X11; the shortcut must not collide with
    # any text-editing key binding there
    from PySide6.QtCore import Qt

    use(estimator.url)
    main_window.activateWindow()
    field = main_window.overview.name_field
    field.setFocus()
    qtbot.waitUntil(field.hasFocus, timeout=60_000)
    from PySide6.QtGui import QKeySequence

    bound = {
        QKeySequence(k).toString()
        for k in (
            QKeySequence.StandardKey.MoveToEndOfLine,
            QKeySequence.StandardKey.SelectEndOfLine,
        )
    }
    assert main_window.export_action.shortcut().toString() not in bound
    with qtbot.waitSignal(main_window.exporter.finished, timeout=60_000) as blocker:
        qtbot.keyClick(field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier
                       | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    assert blocker.args[0].ok


def test_the_estimate_panel_answers_about_the_model_on_screen(main_window, qtbot, estimator,
                                                              sample_copy):  # fmt: skip
    """Exported GCel, then opened the Cray T3D: Route 1 -> 100 is the T3D's route (the
    question pushes the T3D first), named as the T3D's."""
    use(estimator.url)
    panel = main_window.estimate
    gcel = export_and_wait(qtbot, main_window)
    assert gcel.ok and gcel.name == "parsytec-gcel"
    assert main_window.open_file(sample_copy("cray-t3d.machine"))
    assert panel.model is None and "cray-t3d.machine" in panel.model_label.text()
    panel.src.setValue(1)
    panel.dst.setValue(100)
    panel.route_button.click()
    qtbot.waitUntil(lambda: " link" in panel.route_text.text(), timeout=60_000)
    expected = core_route(main_window.document.machine.hardware(), 1, 100)
    assert list(panel.routes[-1]["processors"]) == list(expected.processors)
    assert "“cray-t3d”" in panel.model_label.text() and panel.model is not None
    with Client(estimator.url) as c:  # each model under its own name
        assert c.latest("parsytec-gcel") == gcel.model
        assert c.latest("cray-t3d") == panel.model
    main_window.document.session.set("pt(1).iga", "1e-6")  # edited: asked again, pushed again
    assert panel.model is None and "edited since" in panel.model_label.text()
    before = panel.routes[-1]
    panel.route_button.click()
    qtbot.waitUntil(lambda: panel.model is not None, timeout=60_000)
    qtbot.waitUntil(lambda: panel.routes[-1] is not before, timeout=60_000)


def test_an_answer_about_a_model_no_longer_open_is_dropped(main_window, sample_copy):
    panel = main_window.estimate
    shown = []
    late = panel._answer(shown.append)  # asked about GCel ...
    assert main_window.open_file(sample_copy("cray-t3d.machine"))
    late({"route": 1}, None)  # ... answered after the T3D was opened
    assert shown == [] and panel.message.text() == ""
    stale = main_window.exporter.last
    assert stale is None or stale.generation == main_window.document.generation


def test_a_push_name_belongs_to_its_model(main_window, sample_copy):
    doc = main_window.document
    assert push_name(doc) == "parsytec-gcel"  # from the file name
    set_push_name(doc, "gcel-whatif")
    gcel = doc.path
    assert main_window.open_file(sample_copy("cray-t3d.machine"))
    assert push_name(doc) == "cray-t3d"
    assert main_window.open_file(gcel)
    assert push_name(doc) == "gcel-whatif"  # kept with its file


def test_preferences_check_says_what_is_true_of_a_wrong_token(main_window, qtbot, tmp_path):
    from parasol_core.estimator.local import LocalEstimator
    from piui.windows.preferences import PreferencesDialog

    est = LocalEstimator(tmp_path / "models", token="right").start()
    try:
        for token, words in (("wrong", "answers, but refuses this token"),
                             ("", "answers, but wants a token")):  # fmt: skip
            dialog = PreferencesDialog(EstimatorSettings(est.url, token), None, main_window)
            qtbot.addWidget(dialog)
            checked = []
            dialog.check(then=checked.append)
            qtbot.waitUntil(lambda checked=checked: bool(checked), timeout=60_000)
            assert checked == [False] and words in dialog.status.text()
            assert "No estimator answers" not in dialog.status.text()
    finally:
        est.stop()


def test_an_auto_export_waiting_when_the_window_closes_never_starts(main_window, qtbot):
    """An auto-export waiting for its second when the window closed fired after the
    worker was shut down: 'cannot schedule new futures after shutdown' in Qt's loop."""
    use("http://127.0.0.1:9", auto=True)
    main_window.document.session.set("pt(1).iga", "5e-6")
    assert main_window.exporter._auto.isActive()
    main_window.close()
    assert not main_window.exporter._auto.isActive()
    main_window.exporter.export()  # asked after all: nothing starts, nothing raises
    assert not main_window.exporter.busy
