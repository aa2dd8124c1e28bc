"""`eval`, `deps` and `block`: evaluate expressions, show dependencies, estimate a block."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from parasol_core.analysis.block_time import MAX_WORKING_SET, answer_block, parse_counts
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.limits import (
    MAX_DATA_FILE_BYTES,
    ValueRangeError,
    json_float,
    open_input,
    too_large,
)
from parasol_core.base.numeric import OptionNumber, read_float, read_int
from parasol_core.cli.common import (
    AN_ID,
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    load_or_fail,
    run,
)
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError, format_value
from parasol_core.expr.refs import (
    ARGUMENTS,
    UnresolvedReference,
    canonical_key,
    reference_key,
    resolve,
)
from parasol_core.model.tree import Reference, format_number
from parasol_core.syntax.expression import parse_expression

EVAL_OPTIONS = ("-h", "--help", "--arg")
MAX_COUNTS_BYTES = MAX_DATA_FILE_BYTES


def order_eval_arguments(args: Sequence[str]) -> list[str]:
    """The arguments of ``eval`` (after the word ``eval``) in the form plain argparse
    reads: its options first, then ``--`` and the file and expressions in their order.

    An expression may start with ``-`` (``-7/2``, ``-2**2``, ``-x``), which argparse
    would take for an unknown option; and options may come between expressions
    (``eval FILE EXPR --arg bytes=8 EXPR``). Only ``-h``/``--help`` and ``--arg``
    (``--arg V`` or ``--arg=V``) are options here; everything else is positional.
    """
    options: list[str] = []
    positionals: list[str] = []
    it = iter(args)
    for token in it:
        if token == "--":
            positionals.extend(it)
            break
        if token in ("-h", "--help") or token.startswith("--arg="):
            options.append(token)
        elif token == "--arg":
            options.append(token)
            value = next(it, None)
            if value is not None:
                options.append(value)
        else:
            positionals.append(token)
    return [*options, "--", *positionals]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate expressions against a model",
        description="Print one value per expression: integers as integers, floats in "
        "shortest round-trip form. Without EXPR, print every expression of the model. "
        "Examples: 'po(1).ia_spd'  'mc.maxtotalspd / 1e9'  'mp.send' --arg bytes=4096",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("exprs", nargs="*", metavar="EXPR")
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a run-time argument: bytes=N (default 1024) or procs=P (default: the "
        "hardware topology's processor count)",
    )
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "deps",
        help="what a reference depends on, and what depends on it",
        description="Examples: 'po(1).ia_spd'  'tl(1)(1).speed'  'pt(1).iga'",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("ref", metavar="REF")
    p.set_defaults(func=cmd_deps)

    p = sub.add_parser(
        "block",
        help="estimate the time of a basic block from instruction counts",
        description="COUNTS is a JSON object mapping timing mnemonics to how often each "
        "executes, given as the JSON text itself (an argument starting with '{', e.g. "
        """'{"ila": 4, "ils": 2, "goto": 1}'), as the path of a file holding it, as "-" """
        "to read it from stdin, or as OP=N,... the way --chain takes them (ila=4,ils=2,"
        "goto=1). Prints the mean and the standard deviation in seconds, "
        "and the interval the time lies in: 2 standard deviations of the measured timings, "
        "widened by the ratios predicted / measured that `measure --validate` found on "
        "programs the measurement never saw (where the model file records them).",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--processor", type=AN_ID, required=True, metavar="ID",
                   help="the processor type's id")  # fmt: skip
    p.add_argument("counts", metavar="COUNTS",
                   help="JSON text starting with '{', a file of it, - for stdin, or "
                        "OP=N,...")  # fmt: skip
    p.add_argument("--cached", action="store_true",
                   help="the block fits in the instruction cache: divide by the small "
                        "loop speedup")  # fmt: skip
    p.add_argument("--working-set", type=OptionNumber(int, 0, MAX_WORKING_SET), metavar="BYTES",
                   help="bytes of data the block touches: each array reference is charged "
                        "the extra time of the memory level that holds them (a measured "
                        "model's memory levels, docs/measure.md)")  # fmt: skip
    p.add_argument("--chain", action="append", default=[], metavar="OP=N,...",
                   help="the operations on one loop-carried dependence chain of the block "
                        "(each waits for the one before), e.g. dla=1000 or dln=500,dla=500; "
                        "repeat for each chain. The chain is charged at the model's measured "
                        "latencies (its timings where it records none), and the estimate is "
                        "the larger of the sum of count x timing and the longest chain "
                        "(docs/measure.md, \"Chains\"). starts=S says the chain begins "
                        "afresh S times (dla=4096,starts=64: 64 dot products of 64), and the "
                        "core runs several of its runs at once by the model's chain window")  # fmt: skip
    p.set_defaults(func=cmd_block)


def parse_chain_option(item: str, what: str = "--chain") -> dict[str, int | float]:
    """``--chain OP=N,...`` (or ``block``'s COUNTS so written, ``what``): mnemonic ->
    count (:func:`~parasol_core.analysis.block_time.parse_counts`); a usage error naming
    the item and why."""
    try:
        return parse_counts(item)
    except ValueError as e:
        raise CommandError(f"{what} {item}: {e}", EXIT_USAGE) from None


def parse_args_option(items: list[str]) -> dict[str, int | float]:
    out: dict[str, int | float] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or name not in ARGUMENTS:
            raise CommandError(f"--arg {item}: expected bytes=N or procs=P", EXIT_USAGE)
        text = text.strip(" \t")
        try:  # ASCII, as every number read (base.numeric): an integer, else a float
            value: int | float = read_int(text, sign=True, hex=True)
        except ValueRangeError:
            try:
                value = read_float(text)
            except ValueRangeError as e:
                raise CommandError(f"--arg {item}: {e}", EXIT_USAGE) from None
        least = 0 if name == "bytes" else 1
        if value < least:
            what = "a message size is 0 bytes or more" if name == "bytes" else (
                "a process count is 1 or more")  # fmt: skip
            raise CommandError(f"--arg {item}: {what}", EXIT_USAGE)
        out[name] = value
    return out


def _error_text(text: str, value: EvalError, prefix: bool) -> str:
    """``error: MESSAGE``, saying where in ``text`` when the error is in a part of it."""
    where = ""
    if value.source is None and value.start is not None:
        lead = len(text) - len(text.lstrip())
        if (value.start, value.end) != (lead, len(text.rstrip())):
            where = f" (column {value.start + 1} of '{text}')"
    head = f"{text.strip()}: " if prefix else ""
    message = value.message if value.source == text.strip() else str(value)
    return f"error: {head}{message}{where}"


@run
def cmd_eval(args: argparse.Namespace) -> int:
    machine = load_or_fail(args.file)
    run_args = parse_args_option(args.arg)
    try:
        engine = Engine(machine, run_args)
    except ValueError as e:
        raise CommandError(f"--arg: {e}", EXIT_USAGE) from None
    status = EXIT_OK
    if not args.exprs:
        for key, value in engine.values().items():
            if isinstance(value, EvalError):
                print(_error_text(key, value, True), file=sys.stderr)
                status = EXIT_ERRORS
            else:
                print(f"{key} = {format_value(value)}")
        return status
    for text in args.exprs:
        value = engine.evaluate_text(text, runtime=True)
        if isinstance(value, EvalError):
            print(_error_text(text, value, len(args.exprs) > 1), file=sys.stderr)
            status = EXIT_ERRORS
        else:
            print(format_value(value))
    return status


def _parse_ref(text: str) -> Reference:
    try:
        tree = parse_expression(text.strip()).tree
    except ModelSyntaxError as e:
        raise CommandError(
            f"error: '{text}' is not a reference: {e.message}", EXIT_ERRORS
        ) from None
    if not isinstance(tree, Reference):
        raise CommandError(f"error: '{text}' is not a reference such as pt(1).iga", EXIT_ERRORS)
    return tree


@run
def cmd_deps(args: argparse.Namespace) -> int:
    machine = load_or_fail(args.file)
    ref = _parse_ref(args.ref)
    engine = Engine(machine)
    key = canonical_key(ref)
    if not engine.knows(key):
        try:
            resolve(machine, ref, runtime_section=True)
        except UnresolvedReference as e:
            raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    lines = [reference_key(ref)]
    entry = engine.entry(key)
    if entry is not None:
        lines[0] = f"{key} = {entry.expr.text}"
    value = engine.value(str(ref))
    lines.append(f"value: {format_value(value)}")
    for title, transitive, direct in (
        ("depends on", engine.dependencies(key), set(engine.dependencies(key, False))),
        ("used by", engine.dependents(key), set(engine.dependents(key, False))),
    ):
        lines.append(f"{title}:" + ("" if transitive else " nothing"))
        for k in transitive:
            lines.append(f"  {k}" + ("" if k in direct else "  (indirectly)"))
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _read_counts(path: str) -> dict:
    """The counts object from COUNTS: JSON text (starting with ``{``), ``-`` (stdin), a
    file's path, or ``OP=N,...`` as ``--chain`` takes them (an argument with ``=`` that
    names no file: ``dla=3`` said "dla=3: cannot read: No such file or directory")."""
    if "=" in path and not path.lstrip().startswith("{") and not os.path.lexists(path):
        if len(path) > MAX_COUNTS_BYTES:
            raise CommandError(f"COUNTS: longer than {MAX_COUNTS_BYTES:,} bytes", EXIT_USAGE)
        return parse_chain_option(path, "COUNTS")
    if path.lstrip().startswith("{"):  # the JSON itself, as the help says it may be
        data = path.encode("utf-8", "surrogateescape")
        path = "COUNTS"
        if len(data) > MAX_COUNTS_BYTES:
            raise CommandError(f"COUNTS: longer than {MAX_COUNTS_BYTES:,} bytes", EXIT_USAGE)
        return _counts_json(data, path)
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)  # None: a text stream (tests)
            if stream is None:
                data = sys.stdin.read(MAX_COUNTS_BYTES + 1).encode("utf-8", "surrogateescape")
            else:
                data = stream.read(MAX_COUNTS_BYTES + 1)
        else:
            with open_input(path) as f:
                data = f.read(MAX_COUNTS_BYTES + 1)
    except OSError as e:
        raise CommandError(f"{path}: cannot read: {e.strerror or e}", EXIT_USAGE) from None
    if len(data) > MAX_COUNTS_BYTES:
        raise CommandError(too_large(path, MAX_COUNTS_BYTES, "a counts file"), EXIT_USAGE)
    return _counts_json(data, path)


def _counts_json(data: bytes, path: str) -> dict:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CommandError(f"{path}: not a UTF-8 text file (byte 0x{data[e.start]:02x} at "
                           f"offset {e.start})", EXIT_USAGE) from None  # fmt: skip
    try:
        data = json.loads(text, parse_float=json_float)
    except ValueRangeError as e:  # a count of 1e-400: no silent 0
        raise CommandError(f"{path}: {e}", EXIT_USAGE) from None
    except json.JSONDecodeError as e:
        raise CommandError(f"{path}: not JSON: {e.msg} (line {e.lineno}, column {e.colno})",
                           EXIT_USAGE) from None  # fmt: skip
    except (ValueError, RecursionError) as e:  # a 5000-digit number, [[[[...]]]]
        raise CommandError(f"{path}: not usable JSON: {str(e)[:200]}", EXIT_USAGE) from None
    if not isinstance(data, dict):
        raise CommandError(f"{path}: expected a JSON object of mnemonic: count", EXIT_USAGE)
    return data


@run
def cmd_block(args: argparse.Namespace) -> int:
    machine = load_or_fail(args.file)
    counts = _read_counts(args.counts)
    chains = [parse_chain_option(item) for item in args.chain]
    try:
        answer = answer_block(machine, args.processor, counts, args.cached,
                              working_set=args.working_set, chains=chains)  # fmt: skip
    except ValueError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    estimate = answer.estimate
    out = f"mean: {format_number(estimate.mean)}\nsd: {format_number(estimate.sd)}\n"
    level = answer.level_words()
    if level is not None:
        out += f"memory level: {level}\n"
    bound = answer.bound_words()
    if bound is not None:
        out += f"bound: {bound}\n"
    lo, hi, why = answer.low, answer.high, answer.interval_basis()
    out += f"interval: {lo:.4g} .. {hi:.4g} ({why})\n"
    sys.stdout.write(out)
    return EXIT_OK
