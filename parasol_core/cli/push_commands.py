"""`push`: send a model file to a running estimator (``parasol-estimator serve``)."""

from __future__ import annotations

import argparse
import os
import sys

from parasol_core.base.limits import MAX_FILE_BYTES, ValueRangeError, read_capped
from parasol_core.base.numeric import OptionNumber
from parasol_core.cli.common import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, CommandError, run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="push a model to a running estimator and print its id",
        description="Send FILE, byte for byte, to the estimator's model.push and print the "
        "model id it answers with (warnings go to stderr). Exit 1 with the diagnostics if "
        "the estimator refuses the model, 2 if it cannot be reached.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--url", help="the estimator (default: $PARASOL_ESTIMATOR_URL or "
                   "http://127.0.0.1:7911)")  # fmt: skip
    p.add_argument("--name", help="a name to find the model by later (model.latest)")
    p.add_argument("--token", help="the estimator's token (default: $PARASOL_ESTIMATOR_TOKEN)")
    p.add_argument(
        "--timeout",
        type=OptionNumber(float, 0, 86400, above=True),
        default=60.0,
        metavar="S",
        help=argparse.SUPPRESS,
    )
    p.set_defaults(func=cmd_push)


@run
def cmd_push(args: argparse.Namespace) -> int:
    from parasol_core.estimator.client import (
        Client,
        EstimatorError,
        EstimatorTimeout,
        EstimatorUnreachable,
        ModelRefused,
        Unauthorized,
        default_url,
        naming,
    )

    try:
        data = read_capped(args.file, MAX_FILE_BYTES, "a model file")
    except ValueRangeError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    except IsADirectoryError:
        raise CommandError(f"{args.file}: is a directory", EXIT_USAGE) from None
    except OSError as e:
        raise CommandError(f"{args.file}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CommandError(f"{args.file}: not UTF-8 (byte {e.start})", EXIT_ERRORS) from None
    url = args.url or default_url()
    token = args.token or os.environ.get("PARASOL_ESTIMATOR_TOKEN") or None
    try:
        client = Client(url, token=token, timeout=args.timeout)
    except ValueError as e:
        raise CommandError(f"--url: {e}", EXIT_USAGE) from None
    try:
        with client:
            answer = client.push(text, name=args.name)
    except ModelRefused as e:
        lines = [f"{args.file}: refused by the estimator at {url}"]
        for d in e.diagnostics:
            where = f":{d['line']}:{d['column'] or 1}" if d.get("line") else ""
            lines.append(f"{args.file}{where}: {d['severity']}: {d['message']}")
        raise CommandError("\n".join(lines), EXIT_ERRORS) from None
    except (EstimatorUnreachable, EstimatorTimeout, Unauthorized) as e:
        hint = ("; give one with --token or $PARASOL_ESTIMATOR_TOKEN"
                if isinstance(e, Unauthorized) and not token else "")  # fmt: skip
        raise CommandError(naming(url, "error: cannot push to the estimator", e) + hint,
                           EXIT_USAGE) from None  # fmt: skip
    except EstimatorError as e:
        raise CommandError(naming(url, "error: the estimator", e), EXIT_ERRORS) from None
    for d in answer.get("diagnostics", []):
        where = f":{d['line']}:{d['column'] or 1}" if d.get("line") else ""
        print(f"{args.file}{where}: {d['severity']}: {d['message']}", file=sys.stderr)
    print(answer["model"])
    return EXIT_OK
