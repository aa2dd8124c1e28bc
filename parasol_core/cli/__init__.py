"""The `parasol-model` command: check, format, show and change model files.

Each group of subcommands lives in its own module with a ``register(subparsers)``
function; ``main`` collects them. Exit status: 0 success, 1 errors in the model
(syntax included) or a failed evaluation, 2 usage errors or unreadable files, 128 + the
signal when SIGINT, SIGTERM or SIGHUP stopped it (:mod:`parasol_core.base.signals`:
what the command started is cleaned up first; a file it was replacing is the old one or
the new one, whole). A file a command writes is checked before any work
(:func:`parasol_core.cli.common.check_outputs`).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from parasol_core.base import signals
from parasol_core.cli import (
    eval_commands,
    fit_commands,
    measure_commands,
    model_commands,
    push_commands,
    replay_commands,
    simgrid_commands,
    simulate_commands,
    sweep_commands,
    topology_commands,
)

FLOOR = 6
COMMAND_MODULES = [
    model_commands,
    eval_commands,
    topology_commands,
    simulate_commands,
    replay_commands,
    fit_commands,
    push_commands,
    measure_commands,
    simgrid_commands,
    sweep_commands,
]

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parasol-model",
        description="Check, format, inspect and change PARASOL machine model files.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":
        argv = ["eval", *eval_commands.order_eval_arguments(argv[1:])]
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
