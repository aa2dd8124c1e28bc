"""`simulate`: the event trace of a communication phase (docs/topology.md,
"Communication phases")."""

from __future__ import annotations

import argparse

from parasol_core.base import jsonout
from parasol_core.base.limits import ValueRangeError
from parasol_core.cli.common import (
    AN_ID,
    BYTES,
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    PROCESSOR,
    CommandError,
    load_or_fail,
    memory_budget,
    memory_option,
    processor_of,
    run,
)

BUSIEST = 5


def register(sub: argparse._SubParsersAction) -> None:
    from parasol_core.simulate.patterns import PATTERNS
    from parasol_core.topology.resources import SHARING, SHARING_HELP

    p = sub.add_parser(
        "simulate",
        help="how long a communication phase takes (event trace)",
        description="Run the event trace of a phase: every message takes its hardware "
        "route, spends the route's latency, then moves its bytes at 1 / max(speed x "
        "messages in flight) over its links, recomputed whenever a message starts or "
        "ends (a topology's '# piui: forward', '# piui: duplex', '# piui: shared' and "
        "'# piui: fatpipe' annotations add forwarders, link directions and per-link "
        "policies; --sharing maxmin shares max-min fairly, --sharing cm02 as SimGrid's CM02 "
        "model does). Prints the makespan, the time with no contention (each message "
        "alone) and the busiest links; --json prints every message's start and end and "
        "every link's busy time and largest load.",
    )
    p.add_argument("file", metavar="FILE")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--pattern", choices=PATTERNS, metavar="NAME", help=", ".join(PATTERNS))
    what.add_argument(
        "--messages",
        metavar="M.json",
        help='a JSON list of {"src", "dst", "bytes", "start"?, "after"?}',
    )
    p.add_argument("--bytes", type=BYTES, metavar="B", help="message size (with --pattern)")
    p.add_argument("--dim", metavar="D", help="dimension for shift: 0, 1, 2 or x, y, z")
    p.add_argument(
        "--root",
        type=PROCESSOR,
        metavar="R",
        help="root of the broadcasts (default 1): a number, or a processor's name",
    )
    p.add_argument("--virtual", type=AN_ID, metavar="ID", help="a virtual topology's id")
    p.add_argument(
        "--sharing",
        choices=SHARING,
        default="max",
        help="how messages share a link: "
        + "; ".join(f"{k}: {v}" for k, v in SHARING_HELP.items()),
    )
    memory_option(p, "the phase (its messages, routes and trace)")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=cmd_simulate)


@run
def cmd_simulate(args: argparse.Namespace) -> int:
    from parasol_core.simulate.phases import PhaseError, load_messages, simulate

    if args.pattern is not None and args.bytes is None:
        raise CommandError("error: --pattern needs --bytes", EXIT_USAGE)
    if args.messages is not None:
        for option in ("bytes", "dim", "root"):
            if getattr(args, option) is not None:
                raise CommandError(f"error: --{option} goes with --pattern", EXIT_USAGE)
    machine = load_or_fail(args.file)
    if args.virtual is not None and machine.virtual(args.virtual) is None:
        known = ", ".join(str(v.id) for v in machine.virtuals) or "none"
        raise CommandError(
            f"error: there is no virtual topology with id {args.virtual} (ids: {known})",
            EXIT_USAGE,
        )
    try:
        # the phase's messages and routes are held to a memory budget, not to the
        # estimator's fixed counts (parasol_core.base.budget); past it: exit 2 before any work
        with memory_budget(args):
            messages = None
            if args.messages is not None:
                from parasol_core.topology.names import ByName

                named = ByName(machine.hardware())
                try:  # a message's ends: numbers, or the topology's processors' names
                    messages = load_messages(args.messages, named if args.virtual is None else None)
                except OSError as e:
                    raise CommandError(
                        f"{args.messages}: cannot read: {e.strerror or e}", EXIT_USAGE
                    ) from None
                except ValueRangeError as e:
                    raise CommandError(str(e), EXIT_USAGE) from None
            root = args.root
            if isinstance(root, str) and args.virtual is not None:
                raise CommandError(f"error: with --virtual, --root is a virtual processor "
                                   f"number, not a name ({root!r})", EXIT_USAGE)  # fmt: skip
            root = processor_of(machine, root, "--root")
            result = simulate(
                machine,
                messages=messages,
                pattern=args.pattern,
                bytes=args.bytes,
                dim=args.dim,
                root=root,
                virtual=args.virtual,
                sharing=args.sharing,
            )
    except PhaseError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    if args.json:
        doc = result.to_json()
        if args.virtual is None:  # the platform's names of the processors the phase uses
            from parasol_core.topology.names import names_map

            used = set(result.src.tolist()) | set(result.dst.tolist())
            named = names_map(machine.hardware(), used)
            if named:
                doc["names"] = named
        print(jsonout.dumps(doc, indent=2))
        return EXIT_OK
    print(f"messages: {len(result.src)}")
    print(f"makespan: {result.makespan:.6g} s")
    print(f"uncontended: {result.uncontended:.6g} s")
    print(f"ratio: {result.ratio:.4g}")
    busiest = result.busiest(BUSIEST)
    if busiest:
        print("busiest links:")
        print(f"  {'link':>6}  {'busy (s)':>12}  {'max in flight':>13}")
        for link, busy, most in busiest:
            print(f"  {link:>6}  {busy:>12.6g}  {most:>13}")
    return EXIT_OK
