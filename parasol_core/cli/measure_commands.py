"""`measure`: a model of the machine this runs on (docs/measure.md)."""

from __future__ import annotations

import argparse
import importlib
import sys
import threading
import time
from typing import TextIO

from parasol_core.base.numeric import argument_float, argument_int, read_int
from parasol_core.cli.common import EXIT_ERRORS, EXIT_OK, EXIT_USAGE

EXIT_CANCELLED = 130


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure",
        help="measure this machine and write a model of it (needs a C compiler)",
        description="Compiles generated C benchmarks with the C compiler at hand ($CC, "
        "else cc/gcc/clang), times every timing parameter a C program can exercise, the "
        "instruction cache curve and a pipe between two processes, and writes a model "
        "with one processor type named after the CPU. Parameters that cannot be "
        "measured honestly are left out and named with the reason. --validate then runs "
        "the report's GEB and prime experiments (4.5) and prints table 4.2. Ctrl-C "
        "cancels: nothing is written.",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the model here "
                   "(default: print it on standard output)")  # fmt: skip
    p.add_argument("--quick", action="store_true",
                   help="fewer and shorter runs (under a minute; wider deviations)")  # fmt: skip
    p.add_argument("--validate", action="store_true",
                   help="also run the report's validation experiments and print table 4.2")  # fmt: skip
    p.add_argument("--network", action="store_true",
                   help="measure the network between hosts instead (MPI)")  # fmt: skip
    p.add_argument("--runs", type=argument_int, metavar="N", help="runs per timing")
    p.add_argument("--run-ms", type=argument_float, metavar="MS", help="length of one timed run")
    p.add_argument("--cflags", metavar="FLAGS", help="compiler flags (default -O2)")
    p.add_argument("--params", metavar="NAMES", help="measure only these (comma-separated)")
    p.add_argument("--cache-sizes", metavar="SIZES",
                   help="loop body sizes of the cache curve (comma-separated; default "
                   "10,50,100,500,1000,2000,5000, --quick up to 2000)")  # fmt: skip
    p.set_defaults(func=run_measure)


class _Bar:
    """Progress on stderr: one redrawn line on a terminal, else a line every few seconds."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last = 0.0
        self.last_param = ""

    def __call__(self, p: object) -> None:
        now = time.monotonic()
        fraction = getattr(p, "fraction", 0.0)
        param = getattr(p, "parameter", "")
        left = getattr(p, "seconds_left", None)
        left_s = f"{left:.0f} s left" if left is not None else "estimating"
        if self.tty:
            if now - self.last < 0.1 and param == self.last_param:
                return
            width = 30
            full = int(fraction * width)
            line = f"\r[{'#' * full}{'.' * (width - full)}] {fraction * 100:3.0f} % {param[:32]:<32} {left_s}"
            self.stream.write(line + "\x1b[K")
            self.stream.flush()
        elif now - self.last >= 5 or fraction >= 1.0 and self.last_param != "done":
            self.stream.write(f"measure: {fraction * 100:3.0f} % {param}, {left_s}\n")
            self.stream.flush()
        else:
            return
        self.last = now
        self.last_param = param

    def end(self) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def run_measure(args: argparse.Namespace) -> int:
    if args.network:
        try:
            network = importlib.import_module("parasol_core.measure.mpi_network")
        except ImportError:
            print("parasol-model measure: --network needs parasol_core.measure.mpi_network, "
                  "which this installation does not have", file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
        return int(network.run_cli(args))

    from parasol_core.measure import (
        CompilerMissing,
        MeasureCancelled,
        MeasureOptions,
        estimate_seconds,
        measure_host,
    )
    from parasol_core.measure.validation import format_validation_table, validate_host

    options = MeasureOptions(quick=args.quick)
    if args.runs is not None:
        if args.runs < 2:
            print("parasol-model measure: --runs must be at least 2", file=sys.stderr)
            return EXIT_USAGE
        options.runs = args.runs
    if args.run_ms is not None:
        if not args.run_ms > 0:
            print("parasol-model measure: --run-ms must be positive", file=sys.stderr)
            return EXIT_USAGE
        options.run_seconds = args.run_ms / 1000
    if args.cflags:
        options.cflags = tuple(args.cflags.split())
    if args.params:
        options.parameters = [n.strip() for n in args.params.split(",") if n.strip()]
        try:
            options.selected()
        except ValueError as e:
            print(f"parasol-model measure: {e}", file=sys.stderr)
            return EXIT_USAGE
    if args.cache_sizes:
        try:  # ASCII digits, as every number read (base.numeric)
            sizes = [read_int(x) for x in args.cache_sizes.split(",") if x.strip()]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 1:
            print("parasol-model measure: --cache-sizes takes positive integers",
                  file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
        options.cache_sizes = sizes
    try:
        from parasol_core.measure.toolchain import find_compiler

        find_compiler(options.compiler)
    except CompilerMissing as e:
        print(f"parasol-model measure: {e}", file=sys.stderr)
        return EXIT_USAGE

    cancel = threading.Event()
    bar = _Bar(sys.stderr)
    print(f"parasol-model measure: about {estimate_seconds(options):.0f} s "
          f"({'quick' if options.quick else 'full'} measurement)", file=sys.stderr)  # fmt: skip
    try:
        model = measure_host(options, progress=bar, cancel=cancel)
        bar.end()
        rows = None
        if args.validate:
            rows = validate_host(model.text, options, progress=bar, cancel=cancel)
            bar.end()
    except KeyboardInterrupt:
        cancel.set()
        bar.end()
        print("parasol-model measure: cancelled; nothing written", file=sys.stderr)
        return EXIT_CANCELLED
    except MeasureCancelled:
        bar.end()
        print("parasol-model measure: cancelled; nothing written", file=sys.stderr)
        return EXIT_CANCELLED
    except (RuntimeError, OSError) as e:
        bar.end()
        print(f"parasol-model measure: {e}", file=sys.stderr)
        return EXIT_ERRORS
    n_timings = len(model.timings)
    print(f"parasol-model measure: {n_timings} timings measured in {model.seconds:.0f} s on "
          f"{model.cpu}; {len(model.left_out)} left out:", file=sys.stderr)  # fmt: skip
    for name, reason in model.left_out:
        print(f"  {name}: {reason}", file=sys.stderr)
    if args.output:
        try:
            model.write(args.output)
        except OSError as e:
            print(f"parasol-model measure: cannot write {args.output}: {e}", file=sys.stderr)
            return EXIT_ERRORS
        print(f"parasol-model measure: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(model.text)
    if rows is not None:
        print(format_validation_table(rows, model.text), file=sys.stderr if not args.output
              else sys.stdout)  # fmt: skip
    return EXIT_OK
