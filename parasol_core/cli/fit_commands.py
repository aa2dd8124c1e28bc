"""`fit`: a run-time system cost fitted from measured times (the data-sheet method)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from parasol_core.analysis.fit import (
    Candidate,
    FitError,
    MeasurementFileTooLarge,
    Measurements,
    OsuLog,
    OsuTable,
    TableChoiceError,
    fit,
    fit_comment,
    read_measurement_file,
    read_source,
)
from parasol_core.base import jsonout
from parasol_core.cli.common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    PROCESSES,
    CommandError,
    allow_errors_option,
    editing,
    error_counts,
    lock_option,
    output_option,
    refuse_new_errors,
    run,
    save_or_fail,
    unchanged,
)
from parasol_core.model import runtime_section
from parasol_core.session import Session, SessionError
from parasol_core.session.edit import EditError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit",
        help="fit a PVM/Express/MPI cost to measured times (data-sheet method)",
        description="Fits t = c + s*startfn(p) + d*datafn(p, bytes) for every startfn in "
        "(p, log p, p^2) and datafn in (bytes, bytes p, bytes log p, bytes p^2) by weighted "
        "least squares, ranks them by chi-squared and prints the best as an expression in "
        "ar.procs and ar.bytes (seconds; log is the natural logarithm). MEASUREMENTS is a "
        "CSV with the header procs,bytes,seconds[,error], or the output of OSU "
        "micro-benchmarks (osu_latency, osu_bw, osu_bcast, ...) with --procs: a log of "
        "several benchmarks is fitted one table at a time (--table), a bandwidth table as "
        "seconds = bytes / bandwidth, and lines that are not part of a table are skipped.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("primitive", metavar="SECTION.PRIMITIVE", help="e.g. mpi.bcast, pvm.send")
    p.add_argument("measurements", metavar="MEASUREMENTS")
    p.add_argument("--procs", type=PROCESSES, metavar="N",
                   help="processes an OSU benchmark ran on")  # fmt: skip
    p.add_argument("--table", metavar="NAME",
                   help="the OSU table to fit when the log holds several: its benchmark "
                   "(osu_latency, allreduce, 'Bandwidth Test') or its number in the list "
                   "the command prints")  # fmt: skip
    g = p.add_mutually_exclusive_group()
    output_option(g, "-o", "--output", metavar="OUT", help="write the model with the fit here")
    g.add_argument("-i", "--in-place", action="store_true", help="write the fit into FILE")
    p.add_argument("--json", action="store_true", help="print the fit as JSON")
    lock_option(p)
    allow_errors_option(p)
    p.set_defaults(func=cmd_fit)


def reference(primitive: str) -> str:
    """``mpi.bcast`` -> ``mp.bcast`` (the reference the session edits)."""
    section, dot, name = primitive.partition(".")
    system = runtime_section(section)
    if not dot or system is None or not name:
        raise CommandError(f"'{primitive}': expected SECTION.PRIMITIVE with SECTION one of "
                           "pvm, express, mpi (e.g. mpi.bcast)", EXIT_USAGE)  # fmt: skip
    return f"{system.PREFIX}.{name}"


def _plus_minus(c: Candidate) -> str:
    return ", ".join(f"{n} = {c.coefficients[n]:.4g} ± {c.errors[n]:.2g}" for n in c.form.names)


def report(candidates: list[Candidate], ref: str) -> str:
    """The ranked table and the chosen expression, as the command prints them."""
    lines = [f"{'rank':>4}  {'form':<34} {'chi2':>11} {'Q':>9}  coefficients (s) ± standard error"]
    for i, c in enumerate(candidates, start=1):
        q = "-" if c.q is None else f"{c.q:.3g}"
        lines.append(f"{i:>4}  {str(c.form):<34} {c.chi2:>11.4g} {q:>9}  {_plus_minus(c)}")
    if candidates and candidates[0].q is None:
        lines.append("(no error column: equal relative errors assumed, Q not defined)")
    lines.append(f"{ref} = {candidates[0].expression()}")
    return "\n".join(lines) + "\n"


@run
def cmd_fit(args: argparse.Namespace) -> int:
    with editing(args.file, args.in_place, args.lock_timeout) as session:
        return _fit(args, session)


def _fit(args: argparse.Namespace, session: Session) -> int:
    ref = reference(args.primitive)
    before = error_counts(session.machine) if args.in_place or args.output else None
    try:
        text = read_measurement_file(args.measurements)
    except OSError as e:
        raise CommandError(f"{args.measurements}: cannot read: {e.strerror or e}",
                           EXIT_USAGE) from None  # fmt: skip
    except MeasurementFileTooLarge as e:  # unreadable, as an oversized counts file
        raise CommandError(f"{args.measurements}: {e}", EXIT_USAGE) from None
    except FitError as e:
        raise CommandError(f"{args.measurements}: {e}", EXIT_ERRORS) from None
    table: OsuTable | None = None
    try:
        source = read_source(text)
        if isinstance(source, OsuLog):
            table, measurements = _osu_table(args, source)
        elif args.table is not None:
            raise CommandError(
                f"{args.measurements}: --table chooses a table of OSU "
                "output; a procs,bytes,seconds CSV has one",
                EXIT_USAGE,
            )
        else:
            measurements = source
        candidates = fit(measurements)
    except FitError as e:
        raise CommandError(f"{args.measurements}: {e}", EXIT_ERRORS) from None
    chosen = candidates[0].expression()
    source = Path(args.measurements).name + (f", {table.name}" if table is not None else "")
    comment = fit_comment(candidates[0], measurements, [source])
    try:  # also checks the name before anything is printed
        session.set_expression(ref, chosen, label=f"Fit {ref}", comment=comment)
    except (EditError, SessionError) as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    if before is not None:  # a model is written: not one the fit adds errors to
        refuse_new_errors(session, before, args.allow_errors, unchanged(args))
    if args.json:
        data = {"expression": chosen, "candidates": [c.to_data() for c in candidates]}
        if table is not None:
            data["table"] = {"name": table.name, "test": table.test, "kind": table.kind,
                             "rows": table.rows, "line": table.line}  # fmt: skip
        sys.stdout.write(jsonout.dumps(data, indent=1) + "\n")
    else:
        sys.stdout.write(report(candidates, ref))
    if args.in_place:
        save_or_fail(session, args.file)
    elif args.output:
        from parasol_core.cli.common import write_output

        if args.output == "-":
            raise CommandError("-o -: the model cannot share stdout with the fit", EXIT_USAGE)
        write_output(session.text(), args.output)
    return EXIT_OK


def _finds(log: OsuLog, table: OsuTable) -> bool:
    """Whether ``--table`` with the table's name finds it (and only it)."""
    try:
        return log.find(table.name) is table
    except TableChoiceError:
        return False


def _osu_table(args: argparse.Namespace, log: OsuLog) -> tuple[OsuTable, Measurements]:
    """The table of an OSU log that --table names (or its only one), as measurements at
    --procs processes; notes on stderr for skipped lines and a bandwidth table. Several
    tables and no --table, or a name that is not there: a usage error listing them."""
    try:
        table = log.choose(args.table)
    except TableChoiceError as e:
        example = next((t.name for t in log.tables if t.program and _finds(log, t)), "1")
        how = ("choose one with --table NAME or --table NUMBER, e.g. "
               f"--table {example}")  # fmt: skip
        which = "the tables it names" if e.candidates else "the tables"
        listing = log.listing(e.candidates or None)
        raise CommandError(f"{args.measurements}: {e}; {which}:\n{listing}\n{how}",
                           EXIT_USAGE) from None  # fmt: skip
    if args.procs is None:
        raise FitError("OSU benchmark output: give the number of processes it ran on "
                       "(--procs N)")  # fmt: skip
    measurements = table.measurements(args.procs)
    notes = [f"fitting {table.describe()}", log.skipped_note(), table.note()]
    for note in filter(None, notes):
        print(f"note: {args.measurements}: {note}", file=sys.stderr)
    return table, measurements
