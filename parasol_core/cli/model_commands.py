"""`check`, `format`, `show`, `set` and `scale`."""

from __future__ import annotations

import argparse
import sys

from parasol_core.analysis.validate import validate
from parasol_core.base import filelock, params
from parasol_core.base.limits import ValueRangeError, float_text, printable
from parasol_core.base.words import counted
from parasol_core.cli.common import (
    AN_ID,
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    allow_errors_option,
    checked_text,
    editing,
    error_counts,
    load_or_fail,
    lock_option,
    output_option,
    refuse_new_errors,
    run,
    save_or_fail,
    unchanged,
    write_output,
)
from parasol_core.model import Machine, Timing
from parasol_core.session import Session, SessionError
from parasol_core.session.edit import EditError
from parasol_core.syntax import jsonio


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="report errors and warnings in model files",
                       description="Report errors and warnings. Temporary files that a "
                       "writer of FILE killed before it finished left beside it "
                       "(.FILE.*.tmp) are removed, with a note.")  # fmt: skip
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("format", help="write a model in canonical layout")
    p.add_argument("file", metavar="FILE")
    output_option(p, "-o", "--output", metavar="OUT", help="write here instead of stdout")
    p.set_defaults(func=cmd_format)

    p = sub.add_parser("show", help="summarize a model (or dump it as JSON)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="the whole model as JSON")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "set",
        help="change stored values by reference, keeping the rest of the file as it is",
        description="Examples: pt(1).iga=7.4e-7  pc(1).size=512  tl(1)(3).speed=1e-6  "
        "'po(1).ia_spd=pt(1).iga / tl(1)(1).speed'",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("assignments", nargs="+", metavar="REF=VALUE")
    _output_options(p)
    p.set_defaults(func=cmd_set)

    p = sub.add_parser(
        "scale",
        help="multiply a group of timings by a factor",
        description="Groups: " + ", ".join(params.GROUPS),
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("group", metavar="GROUP", choices=list(params.GROUPS))
    p.add_argument("factor", metavar="FACTOR")
    p.add_argument("--processor", type=AN_ID, metavar="ID", help="only this processor type")
    _output_options(p)
    p.set_defaults(func=cmd_scale)


def _output_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    output_option(g, "-o", "--output", metavar="OUT", help="write here instead of stdout")
    g.add_argument("-i", "--in-place", action="store_true", help="rewrite FILE itself")
    lock_option(p)
    allow_errors_option(p)


@run
def cmd_check(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in args.files:
        for tmp, size in filelock.remove_stale_temporaries(path):
            print(f"note: {path}: removed {printable(tmp.name)} ({counted(size, 'byte')}), left by "
                  "a writer of it that was killed before it finished", file=sys.stderr)  # fmt: skip
        try:
            machine = load_or_fail(path, warn=False)  # validate() holds the load's warnings
        except CommandError as e:
            print(str(e), file=sys.stderr if e.status == EXIT_USAGE else sys.stdout)
            status = max(status, e.status)
            continue
        diagnostics = validate(machine)
        for d in diagnostics:
            print(d.format(path))
        if any(d.is_error for d in diagnostics):
            status = max(status, EXIT_ERRORS)
    return status


@run
def cmd_format(args: argparse.Namespace) -> int:
    machine = load_or_fail(args.file)
    write_output(checked_text(machine, canonical=True), args.output)
    return EXIT_OK


def _timing_text(t: Timing | None) -> str:
    if t is None:
        return "-"
    return f"{t.mean:g} s" + ("" if t.sd is None else f" (sd {t.sd:g})")


def summary(machine: Machine) -> str:
    """The model in a few lines; names with control characters escaped (a file may hold
    a NUL in a name; printed raw it would reach the terminal)."""
    lines = [f"machine {machine.id}: {printable(str(machine.name))}"]
    lines.append(f"  processor types: {len(machine.processors)}")
    for proc in machine.processors:
        role = "switch, " if proc.is_switch else ""
        lines.append(
            f"    {proc.id}: {printable(str(proc.name))}  ({role}{counted(len(proc.timings), 'timing')})"
        )
        if proc.cache is not None:
            c = proc.cache
            sls = c.smallloopspeedup.mean if c.smallloopspeedup else None
            lines.append(f"       cache: size {c.size}, speed {_timing_text(c.speed)}, "
                         f"small loop speedup {sls}")  # fmt: skip
        for name, expr in proc.combinations.items():
            lines.append(f"       {name} = {expr.text}")
    if machine.combinations is not None:
        for name, expr in machine.combinations.entries.items():
            lines.append(f"  {name} = {expr.text}")
    lines.append(f"  topologies: {len(machine.topologies)} hardware, "
                 f"{len(machine.virtuals)} virtual")  # fmt: skip
    from parasol_core.topology.switches import count_text, has_switches, with_unit

    for topo in machine.topologies:
        shape = " x ".join(map(str, topo.shape)) if topo.shape else "-"
        count = (with_unit(count_text(machine, topo))
                 if has_switches(machine, topo) else counted(topo.processor_count, "processor"))  # fmt: skip
        network = f", network {topo.network}" if topo.network else ""
        lines.append(f"    topology {topo.id}: {printable(str(topo.name))}, "
                     f"routing {printable(str(topo.routing))}, "
                     f"{count}, {counted(len(topo.links), 'link')}, "
                     f"shape {shape}{network}")  # fmt: skip
    for virt in machine.virtuals:
        lines.append(f"    virtual {virt.id}: {printable(str(virt.name))}, "
                     f"routing {printable(str(virt.routing))}, "
                     f"{counted(virt.processor_count, 'processor')}")  # fmt: skip
    for section in machine.runtime_sections():
        lines.append(f"  {section.KEYWORD}: {', '.join(section.entries) or '-'}")
    return "\n".join(lines) + "\n"


@run
def cmd_show(args: argparse.Namespace) -> int:
    machine = load_or_fail(args.file)
    if args.json:
        sys.stdout.write(jsonio.dumps(machine, indent=1) + "\n")
    else:
        sys.stdout.write(summary(machine))
    return EXIT_OK


def _finish(session: Session, args: argparse.Namespace) -> int:
    if args.in_place:
        save_or_fail(session, args.file)
    else:
        write_output(checked_text(session.machine), args.output)
    return EXIT_OK


@run
def cmd_set(args: argparse.Namespace) -> int:
    assignments = []
    for assignment in args.assignments:
        ref, eq, value = assignment.partition("=")
        if not eq:
            raise CommandError(f"'{assignment}': expected REF=VALUE", EXIT_USAGE)
        assignments.append((ref, value))
    with editing(args.file, args.in_place, args.lock_timeout) as session:
        before = error_counts(session.machine)
        try:
            with session.group("set"):  # all or nothing
                for ref, value in assignments:
                    session.set(ref, value)
        except (EditError, SessionError) as e:
            raise CommandError(f"error: {e}", EXIT_ERRORS) from None
        refuse_new_errors(session, before, args.allow_errors, unchanged(args))
        return _finish(session, args)


@run
def cmd_scale(args: argparse.Namespace) -> int:
    try:  # read as typed: 1e-400 is refused as too small, not called 0.0
        factor = float_text(args.factor)
    except ValueRangeError as e:  # not a number at all: a usage error, as argparse's
        status = EXIT_USAGE if str(e).endswith("is not a number") else EXIT_ERRORS
        raise CommandError(f"error: FACTOR: {e}", status) from None
    with editing(args.file, args.in_place, args.lock_timeout) as session:
        before = error_counts(session.machine)
        try:
            session.scale_group(args.group, factor, args.processor)
        except (EditError, SessionError) as e:
            raise CommandError(f"error: {e}", EXIT_ERRORS) from None
        refuse_new_errors(session, before, args.allow_errors, unchanged(args))
        return _finish(session, args)
