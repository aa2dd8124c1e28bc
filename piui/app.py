"""Starting PIUI: `piui [FILE]`, and `piui --screenshots DIR [FILE]`."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication

    from parasol_core.base.signals import Stop
    from piui.main_window import MainWindow

SAMPLE = Path(__file__).resolve().parents[1] / "sample_models" / "parsytec-gcel.machine"

log = logging.getLogger("piui")


def install_exception_hook() -> None:
    """An exception inside a Qt slot is logged to the Terminal, never silently lost."""

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("internal error: %s: %s\n%s", kind.__name__, value,
                  "".join(traceback.format_tb(tb)).rstrip())  # fmt: skip
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = hook


# The shared libraries Qt's xcb platform plugin loads that a desktop system may lack,
# with the Debian/Ubuntu package of each (Qt aborts the process when one is missing).
XCB_LIBRARIES = {
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-image": "libxcb-image0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-shape": "libxcb-shape0",
    "xcb-randr": "libxcb-randr0",
    "xcb-xkb": "libxcb-xkb1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
}


def missing_platform_packages(
    env: Mapping[str, str] | None = None, find: Callable[[str], str | None] | None = None
) -> list[str]:
    """The packages to install before Qt's xcb platform can start (empty when it will
    not be used: another platform is asked for, or there is no X display)."""
    env = os.environ if env is None else env
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return []
    if not env.get("DISPLAY") or (not platform and env.get("WAYLAND_DISPLAY")):
        return []
    if find is None:
        import ctypes.util

        find = ctypes.util.find_library
    return [package for lib, package in XCB_LIBRARIES.items() if find(lib) is None]


# The Qt-free modules that opening a model and PIUI's first screen need, imported before
# PySide6: once shiboken is loaded, it reads the source of every module imported after it
# (to look for ``from __feature__ import``), a millisecond or more each, for the hundred
# or so modules of parasol_core and numpy. What is not listed here (sympy,
# pyqtgraph, the estimator client, the windows behind others) is imported when needed.
CORE_MODULES = (
    "concurrent.futures",
    "parasol_core.syntax.loader",
    "parasol_core.analysis.validate",
    "parasol_core.expr.engine",
    "parasol_core.session",
    "parasol_core.session.edit",
    "parasol_core.analysis.check",
    "parasol_core.frontend.meanings",
    "parasol_core.topology.index",  # numpy: the grid view, in front at start
    "parasol_core.topology.layout",
    "parasol_core.topology.mapping",
)


def import_core() -> None:
    """Import :data:`CORE_MODULES` (before PySide6, for the reason given there)."""
    import importlib

    for name in CORE_MODULES:
        importlib.import_module(name)


def build_parser() -> argparse.ArgumentParser:
    from parasol_core.base.limits import file_name_arg

    parser = argparse.ArgumentParser(prog="piui", description="Edit PARASOL machine models.")
    # an empty name is refused as the commands refuse it (base.limits.file_name_arg):
    # "" was taken as no file (the sample opened), --screenshots "" as no folder (the
    # window opened instead of rendering)
    parser.add_argument("file", nargs="?", type=file_name_arg, help="a model file to open")
    parser.add_argument("--screenshots", metavar="DIR", type=file_name_arg,
                        help="render every window to PNG files in DIR and exit")  # fmt: skip
    parser.add_argument("--install-desktop", action="store_true",
                        help="install PIUI's application-menu entry and icon for this user "
                        "and exit")  # fmt: skip
    return parser


def install_desktop(data_home: Path | None = None) -> list[Path]:
    """Install the desktop entry and the icon under ``$XDG_DATA_HOME`` (default
    ``~/.local/share``), the entry running this installation's ``piui``."""
    import shutil

    from piui.resources import DESKTOP_ENTRY, ICON

    if data_home is None:
        data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    apps = data_home / "applications"
    icons = data_home / "icons" / "hicolor" / "scalable" / "apps"
    apps.mkdir(parents=True, exist_ok=True)
    icons.mkdir(parents=True, exist_ok=True)
    exe = shutil.which("piui") or str(Path(sys.executable).with_name("piui"))
    entry = DESKTOP_ENTRY.read_text().replace("Exec=piui %f", f"Exec={exe} %f")
    written = [apps / "piui.desktop", icons / "piui.svg"]
    written[0].write_text(entry)
    shutil.copyfile(ICON, written[1])
    return written


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.install_desktop:
        for path in install_desktop():
            print(path)
        return 0
    if args.screenshots and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import_core()
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        missing = missing_platform_packages()
        if missing:
            print("piui: Qt cannot open a window on this X display: its xcb platform needs "
                  f"system libraries that are missing.\nInstall them with:\n\n    sudo "
                  f"apt-get install {' '.join(missing)}\n\n(or run without a display: "
                  "QT_QPA_PLATFORM=offscreen piui --screenshots DIR)", file=sys.stderr)  # fmt: skip
            return 1
        app = QApplication(sys.argv[:1])
    from piui.main_window import MainWindow
    from piui.resources import ICON

    app.setApplicationName("PIUI")
    app.setOrganizationName("PIUI")
    app.setDesktopFileName("piui")
    app.setWindowIcon(QIcon(str(ICON)))
    logging.getLogger("piui").setLevel(logging.DEBUG)
    install_exception_hook()
    window = MainWindow()
    if args.file:  # a copy of its unsaved edits is offered once the window is on screen
        if not window.open_file(args.file, offer_copy=False):
            if args.screenshots:
                return 1
            # why was said in a dialog naming the line; the window then starts on a
            # valid blank model, not on an empty one whose every field is an error
            window.document.new_blank()
            window.statusBar().showMessage(f"{args.file} could not be opened: a new blank "
                                           "model instead (File > Open to try again).")  # fmt: skip
    else:
        window.document.open_copy(SAMPLE)
    if args.screenshots:
        from piui.screenshots import render_all

        for path in render_all(window, Path(args.screenshots)):
            print(path)
        window.document.undo_stack.setClean()
        window.close()
        return 0
    stop = stop_on_signals(app, window)
    window.show_at_start()  # the first run: maximised, in the first-run layout
    # unsaved edits a PIUI stopped by a signal kept, offered back over the window: of the
    # model named, then of models never saved
    if args.file:
        QTimer.singleShot(0, lambda: window.offer_copy_beside(args.file))
    QTimer.singleShot(0, window.offer_orphaned_copies)
    status = app.exec()
    stop.uninstall()
    return stop.status(status)  # 128 + the signal that stopped it, as the commands'


def stop_on_signals(app: QApplication, window: MainWindow) -> Stop:
    """SIGINT, SIGTERM and SIGHUP close PIUI in order (``MainWindow.stop_by_signal``:
    no question asked, unsaved edits kept in a copy) and make it exit with 128 + the
    signal (base/signals.py). Qt's loop runs no Python while it waits: the signal's
    wake-up byte on a socket pair, watched by a QSocketNotifier, makes it run the
    handler at once."""
    import signal
    import socket

    from PySide6.QtCore import QSocketNotifier, QTimer

    from parasol_core.base.signals import Stop, name_of

    def request() -> None:  # from the handler: act once Qt's loop has the hand again
        QTimer.singleShot(0, lambda: (window.stop_by_signal(name_of(stop.signum)), app.quit()))

    stop = Stop(request)
    stop.install()
    reader, writer = socket.socketpair()
    for end in (reader, writer):
        end.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)

    def woken() -> None:  # Python runs here, so the handler has run (or runs now)
        with contextlib.suppress(OSError):
            reader.recv(64)

    notifier.activated.connect(woken)
    app.aboutToQuit.connect(lambda: signal.set_wakeup_fd(-1))
    app._signal_sockets = (reader, writer, notifier)  # kept while the app lives
    return stop
