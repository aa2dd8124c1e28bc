"""`measure`: a model of the machine this runs on (docs/measure.md)."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading

from parasol_core.base import signals
from parasol_core.base.numeric import OptionNumber, read_int
from parasol_core.base.words import counted
from parasol_core.cli.common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    check_output,
    output_option,
    run,
)
from parasol_core.cli.progress import ProgressBar

EXIT_CANCELLED = 130
MAX_CACHE_SIZE = 10000  # statements in the cache curve's loop (compile time grows fast)
MAX_MEMORY_SIZE = 1 << 30  # bytes of the memory curve's largest array (it is allocated)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure",
        help="measure this machine and write a model of it (needs a C compiler)",
        description="Compiles generated C benchmarks with the C compiler at hand ($CC, "
        "else cc/gcc/clang), times every timing parameter a C program can exercise, the "
        "instruction cache curve and a pipe between two processes, and writes a model "
        "with one processor type named after the CPU. Parameters that cannot be "
        "measured honestly are left out and named with the reason. --validate then runs "
        "the report's GEB and prime experiments (4.5, table 4.2) and the suite's programs "
        "the measurement never saw, prints their ratios predicted / measured, and records "
        "their range in the model (block's interval reads it). Ctrl-C, "
        "SIGTERM or SIGHUP cancels: the compilers and benchmarks are stopped, the build "
        "directory removed, nothing is written, and the exit status is 128 + the signal.",
    )
    output_option(p, "-o", "--output", metavar="FILE", help="write the model here "
                  "(default: print it on standard output)")  # fmt: skip
    p.set_defaults(_outputs=())  # checked by the command: on rank 0 only with --network
    p.add_argument("--quick", action="store_true",
                   help="fewer and shorter runs (under a minute; wider deviations)")  # fmt: skip
    p.add_argument("--validate", action="store_true",
                   help="also run the report's validation experiments (table 4.2) and the "
                   "held-out programs, and print the ratios")  # fmt: skip
    p.add_argument("--network", action="store_true",
                   help="measure the network between hosts instead (MPI)")  # fmt: skip
    p.add_argument("--runs", type=OptionNumber(int, 2, 10000), metavar="N",
                   help="runs per timing, 2 to 10000")  # fmt: skip
    p.add_argument("--run-ms", type=OptionNumber(float, 0, 60000, above=True), metavar="MS",
                   help="length of one timed run, up to 60000")  # fmt: skip
    p.add_argument("--cflags", metavar="FLAGS", help="compiler flags (default -O2)")
    p.add_argument("--params", metavar="NAMES", help="measure only these (comma-separated)")
    p.add_argument("--cache-sizes", metavar="SIZES",
                   help="loop body sizes of the cache curve (comma-separated; default "
                   "10,50,100,500,1000,2000,5000, --quick up to 2000)")  # fmt: skip
    p.add_argument("--memory-sizes", metavar="BYTES",
                   help="array sizes of the memory curve (comma-separated bytes, 64 to "
                   f"{MAX_MEMORY_SIZE}; default 4 KiB to 64 MiB, --quick to 16 MiB)")  # fmt: skip
    p.set_defaults(func=run_measure)


def _options(args: argparse.Namespace):  # noqa: ANN202 - a MeasureOptions
    """The measurement the options ask for; a CommandError (exit 2) naming a bad one."""
    from parasol_core.measure import MeasureOptions

    options = MeasureOptions(quick=args.quick)
    if args.runs is not None:
        options.runs = args.runs
    if args.run_ms is not None:
        options.run_seconds = args.run_ms / 1000
    # an option given is taken as given, empty too: "" is no flags, and an empty list
    # of names or sizes is refused (it was taken as not given: --params "" with an
    # empty variable ran the whole three-minute measurement)
    if args.cflags is not None:
        options.cflags = tuple(args.cflags.split())
    if args.params is not None:
        options.parameters = [n.strip() for n in args.params.split(",") if n.strip()]
        if not options.parameters:
            raise CommandError("parasol-model measure: --params names no parameter (NAMES "
                               "comma-separated, e.g. dla,ilm; leave the option out to "
                               "measure every one)", EXIT_USAGE)  # fmt: skip
        try:
            options.selected()
        except ValueError as e:
            raise CommandError(f"parasol-model measure: {e}", EXIT_USAGE) from None
    if args.cache_sizes is not None:
        try:  # ASCII digits, as every number read (base.numeric)
            sizes = [read_int(x) for x in args.cache_sizes.split(",") if x.strip()]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 1 or max(sizes) > MAX_CACHE_SIZE:
            raise CommandError("parasol-model measure: --cache-sizes takes whole numbers from "
                               f"1 to {MAX_CACHE_SIZE}", EXIT_USAGE)  # fmt: skip
        options.cache_sizes = sizes
    if args.memory_sizes is not None:
        try:
            sizes = [read_int(x) for x in args.memory_sizes.split(",") if x.strip()]
        except ValueError:
            sizes = []
        if not sizes or min(sizes) < 64 or max(sizes) > MAX_MEMORY_SIZE:
            raise CommandError("parasol-model measure: --memory-sizes takes whole numbers of "
                               f"bytes from 64 to {MAX_MEMORY_SIZE}", EXIT_USAGE)  # fmt: skip
        options.memory_sizes = sorted(set(sizes))
    return options


@run
def run_measure(args: argparse.Namespace) -> int:
    if args.network:  # its ranks check -o on rank 0, before MPI measures anything
        try:
            network = importlib.import_module("parasol_core.measure.mpi_network")
        except ImportError:
            print("parasol-model measure: --network needs parasol_core.measure.mpi_network, "
                  "which this installation does not have", file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
        return int(network.run_cli(args, progress=ProgressBar(sys.stderr, every=0)))

    from parasol_core.measure import (
        CompilerMissing,
        MeasureCancelled,
        estimate_seconds,
        measure_host,
    )
    from parasol_core.measure.toolchain import check_compiler, find_compiler
    from parasol_core.measure.validation import annotate, format_validation_table, validate_host

    options = _options(args)
    if args.output and args.output != "-":
        check_output(args.output)  # before the compiler is tried: no work for nothing
    try:
        check_compiler(find_compiler(options.compiler))
    except CompilerMissing as e:
        raise CommandError(f"parasol-model measure: {e}", EXIT_USAGE) from None

    cancel = threading.Event()
    print(f"parasol-model measure: about {estimate_seconds(options):.0f} s "
          f"({'quick' if options.quick else 'full'} measurement)", file=sys.stderr)  # fmt: skip
    with signals.cancelling(cancel), ProgressBar(sys.stderr) as bar:
        try:
            model = measure_host(options, progress=bar, cancel=cancel)
            bar.close()
            rows = None
            if args.validate:
                rows = validate_host(model.text, options, progress=bar, cancel=cancel)
                bar.close()
                model.text = annotate(model.text, rows)  # block's interval reads it
        except (KeyboardInterrupt, signals.Interrupted, MeasureCancelled) as e:
            bar.close()
            signum = getattr(e, "signum", 0) or signals.received() or signal.SIGINT
            print(f"parasol-model measure: cancelled ({signals.name_of(signum)}); nothing "
                  "written", file=sys.stderr)  # fmt: skip
            return signals.exit_status(signum)
        except (RuntimeError, OSError, ValueError) as e:
            bar.close()
            print(f"parasol-model measure: {e}", file=sys.stderr)
            return EXIT_ERRORS
    n_timings = len(model.timings)
    print(f"parasol-model measure: {counted(n_timings, 'timing')} measured in {model.seconds:.0f} s on "
          f"{model.cpu}; {len(model.left_out)} left out:", file=sys.stderr)  # fmt: skip
    for name, reason in model.left_out:
        print(f"  {name}: {reason}", file=sys.stderr)
    if args.output and args.output != "-":
        try:
            model.write(args.output)
        except OSError as e:
            print(f"parasol-model measure: cannot write {args.output}: {e.strerror or e}; "
                  "nothing written", file=sys.stderr)  # fmt: skip
            return EXIT_ERRORS
        print(f"parasol-model measure: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(model.text)
    if rows is not None:
        to = sys.stderr if not args.output or args.output == "-" else sys.stdout
        print(format_validation_table(rows, model.text), file=to)
    return EXIT_OK
