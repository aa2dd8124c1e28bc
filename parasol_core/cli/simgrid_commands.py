"""`export --simgrid` and `import`: SimGrid platform files out and in (docs/simgrid.md).

What does not carry over is listed on stderr, one line each, after ``note:``; the
platform (export) or the model (import) goes to the output file or stdout.
"""

from __future__ import annotations

import argparse
import sys

from parasol_core.cli.common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    checked_text,
    load_or_fail,
    output_option,
    run,
    write_output,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write a model in another format (a SimGrid platform)",
        description="--simgrid OUT.xml: the hardware topology as a SimGrid 4.1 platform: "
        "a Full zone, hosts for compute processors, routers for switches, links with "
        "bandwidth = 1/speed and the latency, and an explicit route per pair of compute "
        "processors. What does not carry over is listed on stderr.",
    )
    p.add_argument("file", metavar="FILE")
    output_option(p, "--simgrid", metavar="OUT.xml", required=True,
                   help="the platform file to write ('-': stdout)")  # fmt: skip
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import",
        help="read a SimGrid platform file as a model",
        description="Reads hosts, routers, links, routes (Full, Floyd, Dijkstra zones) and "
        "clusters (FLAT, TORUS, FAT_TREE, DRAGONFLY) of a SimGrid 4.1 platform; writes the "
        "model. What does not carry over is listed on stderr.",
    )
    p.add_argument("file", metavar="FILE.xml")
    output_option(p, "-o", "--output", metavar="OUT.machine",
                  help="write here instead of stdout")  # fmt: skip
    p.set_defaults(func=cmd_import)


def print_notes(notes: list[str], what: str) -> None:
    if notes:
        print(f"note: does not carry over {what}:", file=sys.stderr)
        for line in notes:
            print(f"note:   {line}", file=sys.stderr)


@run
def cmd_export(args: argparse.Namespace) -> int:
    from parasol_core.simgrid import ExportError, export_platform

    machine = load_or_fail(args.file)
    try:
        exported = export_platform(machine)
    except ExportError as e:
        raise CommandError(f"error: {e}; nothing was written", EXIT_ERRORS) from None
    write_output(exported.text, args.simgrid)
    print_notes(exported.notes, "to SimGrid")
    return EXIT_OK


@run
def cmd_import(args: argparse.Namespace) -> int:
    from parasol_core.simgrid import PlatformError, import_platform

    try:
        imported = import_platform(args.file)
    except PlatformError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    except IsADirectoryError:
        raise CommandError(f"{args.file}: is a directory", EXIT_USAGE) from None
    except OSError as e:
        raise CommandError(f"{args.file}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    write_output(checked_text(imported.machine, canonical=True), args.output)
    print_notes(imported.notes, "from SimGrid")
    return EXIT_OK
