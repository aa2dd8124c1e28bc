"""Edit > Preferences refuses an estimator address typed wrong, where it is typed: OK
kept "abc" (or a port of 99999) and every later Export failed, and Check said "the
estimator at abc answered with an error" when nothing had been asked. An address that
is one is kept; an empty one is the default estimator's, and Check names it."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from parasol_core.estimator.client import default_url
from piui.export import EstimatorSettings
from piui.main_window import settings
from piui.windows.preferences import PreferencesDialog

WRONG = [
    ("abc", "must start with http:// or https://"),
    ("ftp://host", "must start with http:// or https://"),
    ("http://", "names no host"),
    ("http://127.0.0.1:99999", "port is not a number from 1 to 65535"),
    ("http://127.0.0.1:0", "port is not a number from 1 to 65535"),
    ("http://127.0.0.1:-1", "port is not a number from 1 to 65535"),
    ("http://[::1", "Invalid IPv6 URL"),
    ("http://my host:7911", "blank or a control character"),
    ("http://h\x00st", "blank or a control character"),
]


def _preferences(main_window, qtbot, act) -> None:
    """Edit > Preferences… (modal), with ``act(dialog)`` done while it is open."""
    seen = []

    def drive() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, PreferencesDialog):
            QTimer.singleShot(20, drive)
            return
        seen.append(dialog)
        try:
            act(dialog, qtbot)
        finally:
            if dialog.isVisible():
                dialog.reject()

    QTimer.singleShot(0, drive)
    edit = main_window.menuBar().actions()[1].menu()
    next(a for a in edit.actions() if a.text() == "&Preferences…").trigger()
    assert seen, "the Preferences dialog was not shown"


def test_ok_refuses_an_address_typed_wrong_and_says_why(main_window, qtbot):
    EstimatorSettings("http://127.0.0.1:7911").save(settings())
    said = []

    def act(dialog, qtbot) -> None:
        for url, _why in WRONG:
            dialog.url.setText(url)
            qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
            check = dialog.status.text()
            dialog.url.setFocus()
            qtbot.keyClick(dialog.url, Qt.Key.Key_Return)  # OK, as Enter presses it
            said.append((check, dialog.status.text(), dialog.isVisible()))

    _preferences(main_window, qtbot, act)
    assert len(said) == len(WRONG)
    for (url, why), (check, ok, still_open) in zip(WRONG, said, strict=True):
        assert still_open, f"OK closed the dialog on {url!r}"
        for text in (check, ok):
            assert "is not an estimator's address" in text and why in text, (url, text)
            assert "answered" not in text  # nothing was asked
    assert main_window.estimator_settings().url == "http://127.0.0.1:7911"  # kept as it was


def test_an_address_that_is_one_is_kept_and_an_empty_one_is_the_default(main_window, qtbot):
    said = {}

    def act(dialog, qtbot) -> None:
        dialog.url.setText("")
        qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
        said["asking"] = dialog.status.text()
        dialog.url.setText("https://estimator.example:8443/rpc")
        qtbot.keyClick(dialog.url, Qt.Key.Key_Return)
        said["open"] = dialog.isVisible()

    _preferences(main_window, qtbot, act)
    assert said["asking"] == f"Asking {default_url()}…"  # the address asked, never blank
    assert not said["open"]
    assert main_window.estimator_settings().url == "https://estimator.example:8443/rpc"
