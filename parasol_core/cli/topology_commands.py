"""`route`, `transfer`, `generate` and `mapping`: the topology library from the shell."""

from __future__ import annotations

import argparse
import math

from parasol_core.base import limits
from parasol_core.base.limits import MAX_ID, MAX_INT
from parasol_core.base.numeric import OptionNumber
from parasol_core.base.words import counted
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
from parasol_core.model import Machine

A_TIME = OptionNumber(float)  # finite (a negative one is the validator's to report)
AN_INT = OptionNumber(int, 0, MAX_INT)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "route",
        help="the route of a message between two processors",
        description="Print the processors a message visits and the hardware links it "
        "crosses, by the topology's routing technique. With --virtual, SRC and DST are "
        "virtual processors and the route is the hardware route between the processors "
        "they are mapped to.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument(
        "src",
        metavar="SRC",
        type=PROCESSOR,
        help="a processor number, or a name of the topology's '# piui: names'",
    )
    p.add_argument("dst", metavar="DST", type=PROCESSOR)
    p.add_argument("--virtual", type=AN_ID, metavar="ID", help="a virtual topology's id")
    p.set_defaults(func=cmd_route)

    p = sub.add_parser(
        "transfer",
        help="the transfer time of a message while others are under way",
        description="t = sum of the latencies on the route + bytes * the largest "
        "(speed x messages sharing the link) on it; the first message's own route counts.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("message", metavar="SRC:DST", type=_pair)
    p.add_argument("--bytes", type=BYTES, required=True, metavar="B", help="message size")
    p.add_argument(
        "--active",
        type=_pair,
        nargs="+",
        action="extend",
        default=[],
        metavar="SRC:DST",
        help="other messages under way (repeatable)",
    )
    p.add_argument("--virtual", type=AN_ID, metavar="ID", help="a virtual topology's id")
    p.set_defaults(func=cmd_transfer)

    from parasol_core.topology.generators import GENERATORS

    p = sub.add_parser(
        "generate",
        help="print a generated topology section",
        description="Sizes: grid and torus 1 to 6 sizes (W [H [D ...]]; 4 to 6 route by "
        "NDmesh/NDtorus; Fugaku: torus 24 23 24 2 3 2), ring N, hypercube D "
        "(2**D processors), bus N, clique N; fat trees: fattree K N (k-ary n-tree), "
        "fattree2 D1 U1 D2, fattree3 D1 U1 D2 U2 D3 (switch ports down and up by level), "
        "routed updown; dragonfly G A P H (groups, routers per group, terminals per "
        "router, global links per router), routed dragonfly-minimal. A fat tree or "
        "dragonfly is printed after the switch processor type its switches use "
        "(--switch-type, a section marked '# piui: role = switch'), unless --no-switch-section.",
    )
    p.add_argument("kind", metavar="KIND", choices=list(GENERATORS))
    p.add_argument("dims", metavar="DIMS", type=OptionNumber(int, 1, MAX_ID), nargs="+")
    p.add_argument("--latency", type=A_TIME, required=True, metavar="S", help="per link, seconds")
    p.add_argument("--speed", type=A_TIME, required=True, metavar="S", help="seconds per byte")
    p.add_argument("--processor-type", type=AN_INT, default=1, metavar="ID")
    p.add_argument("--id", type=AN_INT, default=1, metavar="ID", help="the topology's id")
    p.add_argument("--name", help="the topology's name")
    p.add_argument("--setup", type=A_TIME, metavar="S", help="setup time, seconds")
    p.add_argument("--switch-type", type=AN_INT, metavar="ID",
                   help="the switches' processor type (fat trees, dragonflies; default: "
                   "--processor-type + 1)")  # fmt: skip
    p.add_argument(
        "--no-switch-section",
        action="store_true",
        help="print the topology section only (the model has its switch type)",
    )
    p.set_defaults(func=cmd_generate)

    from parasol_core.topology.mapping import MAPPING_SCHEMES

    p = sub.add_parser(
        "mapping",
        help="dilation and congestion of a virtual topology's mapping",
        description="Dilation: hardware hops per virtual link (max, mean). Congestion: "
        "the most virtual links routed over one hardware link. With --scheme, of the "
        "mapping that scheme makes instead of the one in the file.",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--virtual", type=AN_ID, required=True, metavar="ID")
    p.add_argument("--scheme", choices=list(MAPPING_SCHEMES), help="evaluate this scheme")
    p.add_argument("--seed", type=OptionNumber(int, 0, 2**63 - 1), help="for --scheme random")
    p.add_argument("--print-mapping", action="store_true", help="also print map[v] = p lines")
    memory_option(p, "the routes of the virtual links")
    p.set_defaults(func=cmd_mapping)


def _pair(text: str) -> tuple[int | str, int | str]:
    src, sep, dst = text.rpartition(":")
    try:
        if not sep:
            raise ValueError
        return PROCESSOR(src), PROCESSOR(dst)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"expected SRC:DST (two processor numbers or names), got {text!r}"
        ) from None


def _processors(machine: Machine, virt, *values: int | str) -> list[int]:  # noqa: ANN001
    """Processor arguments as numbers: names are the hardware topology's, so a virtual
    processor is given by its number."""
    if virt is not None:
        for v in values:
            if isinstance(v, str):
                raise CommandError(f"error: with --virtual, processors are virtual processor "
                                   f"numbers, not names ({v!r})", EXIT_USAGE)  # fmt: skip
    return [processor_of(machine, v, "processor") for v in values]


def _numbers(values: tuple[int, ...]) -> str:
    return " ".join(map(str, values))


def _virtual(machine: Machine, virt_id: int | None):  # noqa: ANN202
    if virt_id is None:
        return None
    virt = machine.virtual(virt_id)
    if virt is None:
        known = ", ".join(str(v.id) for v in machine.virtuals) or "none"
        raise CommandError(
            f"error: there is no virtual topology with id {virt_id} (ids: {known})", EXIT_USAGE
        )
    return virt


def _hardware(machine: Machine):  # noqa: ANN202
    if machine.hardware() is None:
        raise CommandError("error: the model has no hardware topology", EXIT_ERRORS)
    return machine.hardware()


@run
def cmd_route(args: argparse.Namespace) -> int:
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of, route
    from parasol_core.topology.names import labelled
    from parasol_core.topology.resources import forwarders, options_of, route_per_byte
    from parasol_core.topology.virtual import virtual_route

    machine = load_or_fail(args.file)
    virt = _virtual(machine, args.virtual)
    hw = _hardware(machine)
    src, dst = _processors(machine, virt, args.src, args.dst)
    try:
        r = route(hw, src, dst) if virt is None else virtual_route(machine, virt, src, dst)
    except RoutingError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    opts = options_of(hw)
    pace = None
    if opts.forward is not None:  # a forwarding cost: who pays it, and the pace alone
        try:
            pace = route_per_byte(index_of(hw), r, opts)
        except RoutingError as e:  # a speed and the forwarding cost past a double
            raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    print(f"processors: {_numbers(r.processors)}")
    if hw.names:  # the platform's names, where the topology keeps them
        print(f"names: {', '.join(labelled(hw, r.processors))}")
    print(f"links: {_numbers(r.links)}")
    if pace is not None:
        print(f"forwarded by: {_numbers(forwarders(r)) or '-'}")
        print(f"seconds per byte alone: {pace:.12g}")
    return EXIT_OK


@run
def cmd_transfer(args: argparse.Namespace) -> int:
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.transfer import RouteTable

    if not (args.bytes >= 0 and math.isfinite(args.bytes)):
        raise CommandError("error: --bytes must be a finite number, zero or positive",
                           EXIT_USAGE)  # fmt: skip
    machine = load_or_fail(args.file)
    virt = _virtual(machine, args.virtual)
    _hardware(machine)
    try:
        table = RouteTable.for_machine(machine, virt)
        first = table.add(*_processors(machine, virt, *args.message))
        others = [table.add(*_processors(machine, virt, src, dst)) for src, dst in args.active]
        seconds = table.transfer_time(first, others, args.bytes)
    except RoutingError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    if not math.isfinite(seconds):
        raise CommandError(f"error: the transfer time of "
                           f"{counted(args.bytes, 'byte', spec='g')} is too large "
                           "for a floating-point number", EXIT_ERRORS)  # fmt: skip
    print(f"{seconds:.12g}")
    return EXIT_OK


@run
def cmd_generate(args: argparse.Namespace) -> int:
    from parasol_core.syntax.writer import canonical_lines
    from parasol_core.topology.generators import NETWORKS, generate, switch_type_for

    switch_type = args.switch_type
    if switch_type is None:
        switch_type = switch_type_for(None, args.processor_type)[0]
    options = {"processor_type": args.processor_type, "id": args.id, "setup": args.setup,
               "switch_type": switch_type}  # fmt: skip
    if args.name is not None:
        options["name"] = args.name
    try:  # what the file format can hold, as for every value (parasol_core.base.limits)
        limits.check_int(args.id, "--id")
        limits.check_int(args.processor_type, "--processor-type")
        limits.check_int(switch_type, "--switch-type")
        if args.kind in NETWORKS and switch_type == args.processor_type:
            raise ValueError("--switch-type must differ from --processor-type")
        for option in ("latency", "speed", "setup"):
            if getattr(args, option) is not None:
                limits.check_float(getattr(args, option), f"--{option}")
        if args.name is not None:
            limits.check_name(args.name, "--name")
    except ValueError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None
    try:
        topology = generate(args.kind, args.dims, args.latency, args.speed, **options)
        text = "\n".join(canonical_lines(topology))
        if args.kind in NETWORKS and not args.no_switch_section:
            _, switch = switch_type_for(None, args.processor_type)
            switch.id = switch_type
            text = "\n".join(canonical_lines(switch)) + "\n\n" + text
    except ValueError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None
    print(text)
    return EXIT_OK


@run
def cmd_mapping(args: argparse.Namespace) -> int:
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.mapping import make_mapping, mapping_quality

    machine = load_or_fail(args.file)
    virt = _virtual(machine, args.virtual)
    _hardware(machine)
    try:
        with memory_budget(args):  # its route batch: a memory budget (parasol_core.base.budget)
            mapping = None
            if args.scheme is not None:
                mapping = make_mapping(machine, virt, args.scheme, seed=args.seed)
            q = mapping_quality(machine, virt, mapping)
    except RoutingError as e:
        raise CommandError(f"error: {e}", EXIT_ERRORS) from None
    print(f"virtual links: {q.virtual_links}")
    print(f"dilation: max {q.dilation_max}, mean {q.dilation_mean:.4g}")
    print(f"congestion: {q.congestion}")
    if args.print_mapping:
        from parasol_core.topology.names import table_of

        table = table_of(machine.hardware())  # a hardware processor's name, if it has one
        for v, h in sorted((mapping if mapping is not None else virt.mapping).items()):
            name = table.name(h)
            print(f"map[{v}] = {h}" + (f"  # {name}" if name is not None else ""))
    return EXIT_OK
