"""What the subcommands share: loading a file with clean errors, writing output, and
turning every failure into a message and an exit status (never a traceback)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from parasol_core.base import budget, filelock
from parasol_core.base.budget import BudgetError
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.jsonout import NonFiniteError
from parasol_core.base.limits import MAX_ID, ValueRangeError, read_model_bytes
from parasol_core.base.numeric import OptionNumber, is_whole
from parasol_core.model import Machine
from parasol_core.syntax.loader import decode, loads

if TYPE_CHECKING:  # imported where a command edits a model: `replay` does without it
    from parasol_core.session import Session

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2

# The numbers options take (argparse ``type=``): finite and in range, or a usage error
# naming the option (base.numeric.OptionNumber)
AN_ID = OptionNumber(int, 0, MAX_ID)
PROCESSES = OptionNumber(int, 1, MAX_ID)
SECONDS = OptionNumber(float, 0, 86400)  # a wait: up to a day
BYTES = OptionNumber(float, 0)


def PROCESSOR(text: str) -> int | str:
    """A processor as a command takes it: a number (as AN_ID), or a name of the
    topology's ``# piui: names`` line, resolved once the model is loaded
    (:func:`processor_of`)."""
    word = text.strip()
    if is_whole(word.lstrip("+-")):
        return AN_ID(word)
    if not word:
        raise argparse.ArgumentTypeError("expected a processor number or name, got ''")
    return word


def processor_of(machine: Machine, value: int | str | None, what: str) -> int | None:
    """A PROCESSOR argument as the processor number it names in the machine's hardware
    topology (a usage error naming ``what`` for a name it does not have)."""
    if value is None or isinstance(value, int):
        return value
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.names import processor_number

    try:
        return processor_number(machine.hardware(), value, what)
    except RoutingError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None


class CommandError(Exception):
    """Ends a command with a message on stderr and an exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def load_or_fail(path: str, warn: bool = True) -> Machine:
    """Load a model; an unreadable file exits 2, a syntax error exits 1. The warnings
    of the load (an annotation that cannot be read or stands where nothing reads it, a
    shape comment ignored, ...) go to stderr, one ``FILE:LINE:COL: warning: ...`` line
    each, unless not ``warn`` (``check``, which prints them with the others): whatever
    a command does with the model, the user learns that the file does not say what it
    seems to."""
    try:
        data = read_model_bytes(path)
        cut = getattr(data, "line_length", None)  # limits.CutBytes
        text = decode(data, path)
        del data  # not held through the reading (loader.loads)
        machine = loads(text, path, cut)
    except ValueRangeError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    except ModelSyntaxError as e:
        raise CommandError(e.format() + (("\n" + e.context) if e.context else ""),
                           EXIT_ERRORS) from None  # fmt: skip
    except IsADirectoryError:
        raise CommandError(f"{path}: is a directory", EXIT_USAGE) from None
    except OSError as e:
        raise CommandError(f"{path}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    if warn:
        print_load_warnings(machine, path)
    return machine


def print_load_warnings(machine: Machine, path: str | None = None) -> None:
    """The loader's diagnostics of ``machine`` on stderr (they are warnings: a file
    with an error does not load)."""
    for d in machine.src.diagnostics if machine.src is not None else ():
        print(d.format(path), file=sys.stderr)


def checked_text(machine: Machine, canonical: bool = False) -> str:
    """The text of a model, read back before it is written anywhere: a value the file
    cannot hold ends the command (exit 1) with the file, stdout or -o target untouched."""
    from parasol_core.syntax.loader import loads as read_back
    from parasol_core.syntax.writer import check_same_model, dumps

    try:
        text = dumps(machine, canonical=canonical)
        check_same_model(machine, read_back(text))
    except ModelSyntaxError as e:
        raise CommandError(f"error: the result would not load ({e.message}, line {e.line}); "
                           "nothing was written", EXIT_ERRORS) from None  # fmt: skip
    except (ValueError, TypeError) as e:
        raise CommandError(f"error: the result cannot be written: {e}; nothing was written",
                           EXIT_ERRORS) from None  # fmt: skip
    return text


@contextmanager
def editing(path: str, in_place: bool, lock_timeout: float) -> Iterator[Session]:
    """The model a `set`, `scale` or `fit` edits. In place, the file's lock (see
    :mod:`parasol_core.base.filelock`) is held from the read to the replace, so that
    concurrent in-place edits all land, one after another."""
    from parasol_core.session import Session

    if not in_place:
        yield Session(load_or_fail(path), path)
        return
    try:
        with filelock.locked(path, lock_timeout):
            yield Session(load_or_fail(path), path)
    except filelock.LockTimeout as e:
        raise CommandError(f"{path}: {e.strerror}", EXIT_USAGE) from None


_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")


def _error_key(message: str) -> str:
    """An error with its numbers masked: scaling a timing that is already negative
    changes the value in its message, not the error."""
    return _NUMBER.sub("#", message)


def error_counts(machine: Machine) -> Counter:
    """The model's errors (:func:`~parasol_core.analysis.validate.validate`), counted by message
    (numbers masked): what an edit is compared against, so that only the errors it
    adds are reported."""
    from parasol_core.analysis.validate import validate

    return Counter(_error_key(d.message) for d in validate(machine) if d.is_error)


def refuse_new_errors(session: Session, before: Counter, allow: bool, where: str) -> None:
    """End the command (exit 1, nothing written; ``where`` says what is unchanged) when
    the edits made in ``session`` add errors to the model, printing them; unless
    ``allow`` (``--allow-errors``), when they are printed on stderr as warnings."""
    from parasol_core.analysis.validate import validate

    left = Counter(before)
    new = []
    for d in validate(session.machine):
        if not d.is_error:
            continue
        key = _error_key(d.message)
        if left[key] > 0:
            left[key] -= 1
        else:
            new.append(d)
    if not new:
        return
    listing = "\n".join(d.format(str(session.path) if session.path else None) for d in new)
    count = f"{len(new)} error" + ("s" if len(new) > 1 else "")
    if allow:
        print(f"warning: the edit adds {count} (written, as --allow-errors asks):\n{listing}",
              file=sys.stderr)  # fmt: skip
        return
    raise CommandError(f"error: the edit would add {count} to the model; {where} "
                       f"(--allow-errors writes it anyway):\n{listing}", EXIT_ERRORS)  # fmt: skip


def allow_errors_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-errors", action="store_true",
                   help="write the result even if the edit adds errors to the model (by "
                   "default such an edit is refused, exit 1, and nothing is written)")  # fmt: skip


def unchanged(args: argparse.Namespace) -> str:
    """What a refused edit leaves as it was, for its message."""
    return f"{args.file} is unchanged" if args.in_place else "nothing was written"


def save_or_fail(session: Session, path: str) -> None:
    """Save in place (verified before the rename); every failure a CommandError."""
    try:
        session.save(path)
    except ModelSyntaxError as e:
        raise CommandError(f"error: the result would not load ({e.message}, line {e.line}); "
                           f"{path} is unchanged", EXIT_ERRORS) from None  # fmt: skip
    except OSError as e:
        raise CommandError(f"{path}: cannot write: {e.strerror or e}", EXIT_USAGE) from None
    except (ValueError, TypeError) as e:
        raise CommandError(f"error: the result cannot be written: {e}; {path} is unchanged",
                           EXIT_ERRORS) from None  # fmt: skip


def memory_size(text: str) -> int:
    """``--max-memory``'s value in bytes (:func:`parasol_core.base.budget.parse_size`); bad
    text is a usage error (exit 2) saying what a size is."""
    try:
        return budget.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def memory_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--max-memory``, for the commands that run a phase or a batch of routes in
    this process (``what``: which work)."""
    p.add_argument(
        "--max-memory", type=memory_size, metavar="SIZE",
        help=f"the memory {what} may take, estimated before it starts: bytes, or 2G, "
        "500M, 1.5GiB (K, M, G, T: powers of 1024; KB, MB, GB, TB: of 1000). Past it "
        "the command stops at once, exit 2, naming both. Default: half the physical "
        "memory, or the memory available when the work starts if that is less",
    )  # fmt: skip


@contextmanager
def memory_budget(args: argparse.Namespace) -> Iterator[budget.Limits]:
    """The work of this block under the memory budget of ``--max-memory`` or its
    default (:func:`parasol_core.base.budget.default_memory`, read now: after the model is
    loaded, when the work starts), instead of the estimator's fixed counts."""
    size = getattr(args, "max_memory", None)
    if size is not None:
        source = "--max-memory"
    else:
        size, how = budget.default_memory()
        source = f"by default {how}; --max-memory sets it"
    with budget.limits(memory=size, source=source) as limits:
        yield limits


def lock_option(p: argparse.ArgumentParser) -> None:
    """``--lock-timeout``, for the commands that can rewrite a file in place."""
    p.add_argument(
        "--lock-timeout", type=SECONDS, default=filelock.DEFAULT_TIMEOUT, metavar="SECONDS",
        help="with -i: how long to wait while another program writes FILE, 0 to 86400 "
        f"(default {filelock.DEFAULT_TIMEOUT:g}); past it nothing is changed (exit 2)",
    )  # fmt: skip


def output_option(p: argparse._ActionsContainer, *flags: str, **kwargs: object
                  ) -> argparse.Action:  # fmt: skip
    """An option naming a file the command writes (``-o OUT``; '-' for stdout). The
    command's :func:`run` checks it can be written (:func:`check_outputs`) before any
    work: a missing directory or one that cannot be written in, a directory in its place,
    are usage errors (exit 2) at once, not after the work."""
    action = p.add_argument(*flags, **kwargs)
    p.set_defaults(_outputs=(*(p.get_default("_outputs") or ()), action.dest))
    return action


def check_output(path: str) -> None:
    """CommandError (exit 2) if ``path`` cannot be written
    (:func:`parasol_core.syntax.writer.check_writable`)."""
    from parasol_core.syntax.writer import check_writable

    try:
        check_writable(path)
    except OSError as e:
        raise CommandError(f"{path}: cannot write: {e.strerror or e}", EXIT_USAGE) from None


def check_outputs(args: argparse.Namespace) -> None:
    r"""Every file the command will write (its :func:`output_option`\ s, and FILE with
    ``-i``), checked before any work."""
    for dest in getattr(args, "_outputs", ()):
        out = getattr(args, dest, None)
        if out and out != "-":
            check_output(out)
    if getattr(args, "in_place", False) and _regular_or_none(args.file):
        check_output(args.file)  # (a FIFO, a device: refused as an input, unread)


def _regular_or_none(path: str) -> bool:
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


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


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's flush at exit does not fail
    again on what could not be written (and turn the exit status into 120)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test's StringIO)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


class OutputError(OSError):
    """Standard output could not be written (a full disk, ``> /dev/full``)."""


class _GuardedOutput:
    """Standard output, telling its own failures apart from any other OSError."""

    def __init__(self, stream) -> None:  # noqa: ANN001 - any text stream
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise  # `| head`: main() ends quietly
        except OSError as e:
            raise OutputError(e.errno, e.strerror) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(e.errno, e.strerror) from None

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._stream, name)


def run(func):  # noqa: ANN001, ANN201 - decorator for command functions
    """Turn CommandError into a message and an exit status."""

    def wrapper(args):  # noqa: ANN001, ANN202
        stdout = sys.stdout
        sys.stdout = _GuardedOutput(stdout)
        try:
            check_outputs(args)  # before any work
            status = func(args)
            sys.stdout.flush()  # a full disk or device shows here, not after exit
            return status
        except CommandError as e:
            print(str(e), file=sys.stderr)
            return e.status
        except BudgetError as e:  # work past a limit, refused before it began
            print(f"error: {e}", file=sys.stderr)
            return EXIT_USAGE
        except (BrokenPipeError, KeyboardInterrupt):
            raise  # main() handles these
        except OutputError as e:  # `show > /dev/full`: unwritable output, exit 2
            _drop_stdout()
            print(f"error: cannot write the output: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        except OSError as e:  # a file a command did not name in its own message
            where = f"{e.filename}: " if e.filename else ""
            print(f"error: {where}{e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        except ModelSyntaxError as e:
            print(e.format(), file=sys.stderr)
            return EXIT_ERRORS
        except NonFiniteError as e:  # the JSON writer's guard: a result past a double
            print(f"error: {e}", file=sys.stderr)
            return EXIT_ERRORS
        except (MemoryError, RecursionError):
            print("error: the input is too large or too deeply nested to process",
                  file=sys.stderr)  # fmt: skip
            return EXIT_ERRORS
        except Exception as e:
            print(f"error: {e or type(e).__name__} (an unexpected {type(e).__name__}; "
                  "please report it)", file=sys.stderr)  # fmt: skip
            return EXIT_ERRORS
        finally:
            sys.stdout = stdout

    return wrapper
