"""Starting PIUI: `piui [FILE]`, and `piui --screenshots DIR [FILE]`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

SAMPLE = Path(__file__).resolve().parents[1] / "sample_models" / "parsytec-gcel.machine"

log = logging.getLogger("piui")


def install_exception_hook() -> None:
    """An exception inside a Qt slot is logged to the Terminal, never silently lost."""

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("internal error: %s: %s\n%s", kind.__name__, value,
                  "".join(traceback.format_tb(tb)).rstrip())  # fmt: skip
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = hook


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="piui", description="Edit PARASOL machine models.")
    parser.add_argument("file", nargs="?", help="a model file to open")
    parser.add_argument("--screenshots", metavar="DIR",
                        help="render every window to PNG files in DIR and exit")  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.screenshots and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtWidgets import QApplication

    from piui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PIUI")
    app.setOrganizationName("PIUI")
    logging.getLogger("piui").setLevel(logging.DEBUG)
    install_exception_hook()
    window = MainWindow()
    if args.file:
        if not window.open_file(args.file) and args.screenshots:
            return 1
    else:
        window.document.open_copy(SAMPLE)
    if args.screenshots:
        from piui.screenshots import render_all

        for path in render_all(window, Path(args.screenshots)):
            print(path)
        window.document.undo_stack.setClean()
        window.close()
        return 0
    window.show()
    return app.exec()
