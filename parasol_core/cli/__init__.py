"""The `parasol-model` command: check, format, show and change model files.

Each group of subcommands lives in its own module with a ``register(subparsers)``
function; ``main`` collects them, importing only the module of the command given when
it names one (``parasol-model replay`` does not import what ``measure`` or ``sweep``
needs: a process's start is part of every command's time). Exit status: 0 success, 1 errors in the model
(syntax included) or a failed evaluation, 2 usage errors or unreadable files, 128 + the
signal when SIGINT, SIGTERM or SIGHUP stopped it (:mod:`parasol_core.base.signals`:
what the command started is cleaned up first; a file it was replacing is the old one or
the new one, whole). A file a command writes is checked before any work
(:func:`parasol_core.cli.common.check_outputs`).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence
from types import ModuleType

from parasol_core.base import signals
from parasol_core.base.limits import file_name_arg

FLOOR = 6
# the modules of subcommands (parasol_core.cli.NAME), in the order of the help
COMMAND_MODULES = (
    "model_commands",
    "eval_commands",
    "topology_commands",
    "simulate_commands",
    "replay_commands",
    "fit_commands",
    "push_commands",
    "measure_commands",
    "simgrid_commands",
    "sweep_commands",
)
# which module registers each command (tests/cli/test_cli_lazy.py holds it to what the
# modules register)
MODULE_OF = {
    **dict.fromkeys(("check", "format", "show", "set", "scale"), "model_commands"),
    **dict.fromkeys(("eval", "deps", "block"), "eval_commands"),
    **dict.fromkeys(("route", "transfer", "generate", "mapping"), "topology_commands"),
    "simulate": "simulate_commands",
    "replay": "replay_commands",
    "fit": "fit_commands",
    "push": "push_commands",
    "measure": "measure_commands",
    "export": "simgrid_commands",
    "import": "simgrid_commands",
    "sweep": "sweep_commands",
}


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"parasol_core.cli.{name}")


EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command``'s alone when it is one (its
    module only imported)."""
    parser = argparse.ArgumentParser(
        prog="parasol-model",
        description="Check, format, inspect and change PARASOL machine model files.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = (MODULE_OF[command],) if command in MODULE_OF else COMMAND_MODULES
    for name in names:
        command_module(name).register(sub)
    for command_parser in sub.choices.values():
        _refuse_empty_file_names(command_parser)
    return parser


# The metavars that show an argument is a file's name (FILE.xml: a name and its kind)
FILE_METAVARS = frozenset({"FILE", "OUT", "MODEL", "TRACE", "COUNTS", "MEASUREMENTS"})


def _refuse_empty_file_names(p: argparse.ArgumentParser) -> None:
    """Every argument a command shows as a file's name refuses an empty one, as a usage
    error before any work: pathlib takes "" as the current folder, so an empty TRACE
    replayed an OTF2 archive found there, and an empty -o was 'a directory'."""
    for action in p._actions:
        metavar = action.metavar if isinstance(action.metavar, str) else None
        if metavar is not None and metavar.split(".")[0] in FILE_METAVARS and \
                action.type is None:  # fmt: skip
            action.type = file_name_arg


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    if argv and argv[0] == "eval":
        argv = ["eval", *command_module("eval_commands").order_eval_arguments(argv[1:])]
    args = parser.parse_args(argv)
    with signals.handled():  # SIGINT, SIGTERM, SIGHUP: one way out (base/signals.py)
        try:
            status = int(args.func(args) or 0)
        except BrokenPipeError:  # `parasol-model show big.machine | head`
            sys.stderr.close()
            status = EXIT_OK
        except KeyboardInterrupt:  # raised by code, not by a signal (handled() takes those)
            status = signals.exit_status(signal.SIGINT)
        except signals.Interrupted as e:  # what the command had started is cleaned up
            status = e.status
            _say(f"parasol-model {args.command}: stopped by {signals.name_of(e.signum)}")
        except OSError:  # a terminal gone with SIGHUP: what stderr could not say
            if not signals.received():
                raise
            status = EXIT_OK
        if signals.received():  # a signal came: the exit says so, whatever else happened
            status = signals.exit_status(signals.received())
    return status


def _say(text: str) -> None:
    try:
        print(text, file=sys.stderr)
    except (OSError, ValueError):
        pass  # stderr gone (the terminal closed)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
