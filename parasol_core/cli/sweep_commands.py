"""`sweep`: run every variant of a sweep file, one CSV row each (docs/sweeps.md)."""

from __future__ import annotations

import argparse
import sys
import time

from parasol_core.base.limits import Unreadable, open_input
from parasol_core.base.numeric import OptionNumber
from parasol_core.base.words import counted
from parasol_core.cli.common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    output_option,
    run,
)
from parasol_core.cli.progress import ProgressBar

EXECUTORS = ("auto", "local", "serial", "mpi")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run many variants of a model (a what-if sweep), one CSV row each",
        description="Run every variant of the sweep FILE (TOML: the base model, the axes, "
        "what to compute; docs/sweeps.md) and write one row per variant to OUT as it "
        "finishes: the index, the axes' values, each answer, the seconds it took and its "
        "error. A variant that fails or exceeds its budget is a row with its error. An "
        "OUT that holds rows of this sweep is resumed with --resume (those rows are kept "
        "and not run again). Locally the variants run on a process pool of this "
        "machine's cores; under 'mpiexec -n N python -m mpi4py.futures -m "
        "parasol_core.cli sweep ...' on the other N - 1 ranks, written by rank 0.",
    )
    p.add_argument("file", metavar="FILE", help="the sweep file (TOML)")
    output_option(p, "-o", "--output", required=True, metavar="OUT", help="the CSV to write")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="OUT holds rows of a stopped run of this sweep: keep them and run "
                       "the rest")  # fmt: skip
    again.add_argument("--restart", action="store_true",
                       help="OUT holds rows: drop them and run every variant")  # fmt: skip
    p.add_argument("--workers", type=OptionNumber(int, 1, 4096), metavar="N",
                   help="local worker processes (default: one a core; 1 runs in this process)")  # fmt: skip
    p.add_argument("--executor", choices=EXECUTORS, default="auto",
                   help="auto: MPI under 'python -m mpi4py.futures' with more than one "
                   "rank, else local (default)")  # fmt: skip
    p.set_defaults(func=cmd_sweep)


@run
def cmd_sweep(args: argparse.Namespace) -> int:
    from parasol_core.sweep import runner
    from parasol_core.sweep.results import ResultsWriter, read_finished, remove
    from parasol_core.sweep.spec import SweepError, load_spec
    from parasol_core.sweep.variants import variants

    if args.output == "-":
        raise CommandError("error: -o -: the rows go to a file (a sweep resumes from it)",
                           EXIT_USAGE)  # fmt: skip
    try:
        spec = load_spec(args.file)
    except SweepError as e:  # a file that cannot be read: 2; read and found wrong: 1
        raise CommandError(f"error: {e}", EXIT_USAGE if isinstance(e, Unreadable)
                           else EXIT_ERRORS) from None  # fmt: skip
    executor = args.executor
    if executor == "auto":
        executor = "mpi" if runner.in_mpi_job() else "local"
    elif executor == "mpi" and not runner.in_mpi_job():
        raise CommandError("error: --executor mpi: run under 'mpiexec -n N python -m "
                           "mpi4py.futures -m parasol_core.cli sweep ...' with N > 1",
                           EXIT_USAGE)  # fmt: skip
    todo = variants(spec)
    if args.restart:
        remove(args.output)
    try:
        done = read_finished(args.output, spec, todo) if args.resume else set()
    except SweepError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None
    if not args.resume and not args.restart:
        try:
            with open_input(args.output) as f:
                if f.read(1):
                    raise CommandError(f"error: {args.output} exists: --resume to go on with "
                                       "the sweep it holds, --restart to start anew", EXIT_USAGE)  # fmt: skip
        except FileNotFoundError:
            pass
    total = len(todo)
    left = total - len(done)
    errors = 0
    start = time.monotonic()
    count = 0
    with ResultsWriter(args.output, spec) as out, ProgressBar() as bar:

        def on_row(row: runner.Row) -> None:
            nonlocal count, errors
            out.write(row)
            count += 1
            errors += bool(row.error)
            elapsed = time.monotonic() - start
            seconds_left = elapsed / count * (left - count) if count >= 2 else None
            bar.update((len(done) + count) / total, f"{len(done) + count:,} of {counted(total, 'variant')}",
                       seconds_left)  # fmt: skip

        bar.update(len(done) / total, f"{len(done):,} of {counted(total, 'variant')}", None)
        runner.run_sweep(spec, on_row, skip=done, executor=executor, workers=args.workers,
                         todo=todo)  # fmt: skip
    kept = f", {len(done):,} kept from before" if done else ""
    failed = f", {errors:,} with an error" if errors else ""
    print(f"{args.output}: {counted(count, 'row')} written{failed}{kept}; {counted(total, 'variant')}",
          file=sys.stderr)  # fmt: skip
    return EXIT_OK
