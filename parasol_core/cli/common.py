"""What the subcommands share: loading a file with clean errors, writing output."""

from __future__ import annotations

import sys
from pathlib import Path

from parasol_core.model import Machine
from parasol_core.syntax.diagnostics import ModelSyntaxError
from parasol_core.syntax.parser import load

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class CommandError(Exception):
    """Ends a command with a message on stderr and an exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def load_or_fail(path: str) -> Machine:
    """Load a model; an unreadable file exits 2, a syntax error exits 1."""
    try:
        return load(path)
    except ModelSyntaxError as e:
        raise CommandError(e.format() + (("\n" + e.context) if e.context else ""),
                           EXIT_ERRORS) from None  # fmt: skip
    except IsADirectoryError:
        raise CommandError(f"{path}: is a directory", EXIT_USAGE) from None
    except OSError as e:
        raise CommandError(f"{path}: cannot read: {e.strerror or e}", EXIT_USAGE) from None


def write_output(text: str, out: str | None) -> None:
    """Text to a file (atomically) or to stdout."""
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    from parasol_core.syntax.writer import write_text_atomic

    try:
        write_text_atomic(Path(out), text)
    except OSError as e:
        raise CommandError(f"{out}: cannot write: {e.strerror or e}", EXIT_USAGE) from None


def run(func):  # noqa: ANN001, ANN201 - decorator for command functions
    """Turn CommandError into a message and an exit status."""

    def wrapper(args):  # noqa: ANN001, ANN202
        try:
            return func(args)
        except CommandError as e:
            print(str(e), file=sys.stderr)
            return e.status

    return wrapper
