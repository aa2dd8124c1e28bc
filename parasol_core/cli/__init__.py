"""The `parasol-model` command: check, format, show and change model files.

Each group of subcommands lives in its own module with a ``register(subparsers)``
function; ``main`` collects them. Exit status: 0 success, 1 errors in the model
(syntax included) or a failed evaluation, 2 usage errors or unreadable files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from parasol_core.cli import (
    eval_commands,
    fit_commands,
    measure_commands,
    model_commands,
    push_commands,
    simgrid_commands,
    simulate_commands,
    topology_commands,
)

FLOOR = 6
COMMAND_MODULES = [
    model_commands,
    eval_commands,
    topology_commands,
    simulate_commands,
    fit_commands,
    push_commands,
    measure_commands,
    simgrid_commands,
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
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `parasol-model show big.machine | head`
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
