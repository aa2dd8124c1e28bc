"""`fit`: a run-time system cost fitted from measured times (the data-sheet method)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from parasol_core.cli.common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    editing,
    lock_option,
    run,
    save_or_fail,
)
from parasol_core.edit import EditError
from parasol_core.fit import Candidate, FitError, fit, read_measurements
from parasol_core.session import Session, SessionError

SECTION_PREFIXES = {"pvm": "pv", "express": "ex", "mpi": "mp", "pv": "pv", "ex": "ex", "mp": "mp"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit",
        help="fit a PVM/Express/MPI cost to measured times (data-sheet method)",
        description="Fits t = c + s*startfn(p) + d*datafn(p, bytes) for every startfn in "
        "(p, log p, p^2) and datafn in (bytes, bytes p, bytes log p, bytes p^2) by weighted "
        "least squares, ranks them by chi-squared and prints the best as an expression in "
        "ar.procs and ar.bytes (seconds; log is the natural logarithm). MEASUREMENTS is a "
        "CSV with the header procs,bytes,seconds[,error], or the output of an OSU "
        "micro-benchmark (osu_latency, osu_bcast, ...) with --procs.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("primitive", metavar="SECTION.PRIMITIVE", help="e.g. mpi.bcast, pvm.send")
    p.add_argument("measurements", metavar="MEASUREMENTS")
    p.add_argument("--procs", type=int, metavar="N", help="processes an OSU benchmark ran on")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-o", "--output", metavar="OUT", help="write the model with the fit here")
    g.add_argument("-i", "--in-place", action="store_true", help="write the fit into FILE")
    p.add_argument("--json", action="store_true", help="print the fit as JSON")
    lock_option(p)
    p.set_defaults(func=cmd_fit)


def reference(primitive: str) -> str:
    """``mpi.bcast`` -> ``mp.bcast`` (the reference the session edits)."""
    section, dot, name = primitive.partition(".")
    prefix = SECTION_PREFIXES.get(section.lower())
    if not dot or prefix is None or not name:
        raise CommandError(f"'{primitive}': expected SECTION.PRIMITIVE with SECTION one of "
                           "pvm, express, mpi (e.g. mpi.bcast)", EXIT_USAGE)  # fmt: skip
    return f"{prefix}.{name}"


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
    try:
        text = Path(args.measurements).read_text(encoding="utf-8-sig")
    except OSError as e:
        raise CommandError(f"{args.measurements}: cannot read: {e.strerror or e}",
                           EXIT_USAGE) from None  # fmt: skip
    try:
        candidates = fit(read_measurements(text, args.procs))
    except FitError as e:
        raise CommandError(f"{args.measurements}: {e}", EXIT_ERRORS) from None
    chosen = candidates[0].expression()
    try:  # also checks the name before anything is printed
        session.set_expression(ref, chosen, label=f"Fit {ref}")
    except (EditError, SessionError) as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    if args.json:
        data = {"expression": chosen, "candidates": [c.to_data() for c in candidates]}
        sys.stdout.write(json.dumps(data, indent=1) + "\n")
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
