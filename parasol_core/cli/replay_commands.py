"""`replay`: predict a traced MPI program's run on the model (docs/replay.md)."""

from __future__ import annotations

import argparse

from parasol_core.base import jsonout
from parasol_core.base.words import counted
from parasol_core.cli.common import (
    AN_ID,
    BYTES,
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    load_or_fail,
    memory_budget,
    memory_option,
    output_option,
    run,
    write_output,
)

SLOWEST = 8  # ranks listed without --json


def register(sub: argparse._SubParsersAction) -> None:
    from parasol_core.replay import ALGORITHMS, DEFAULT_FLOP, EAGER_BYTES, GLOBAL_FLOP
    from parasol_core.topology.resources import SHARING, SHARING_HELP

    p = sub.add_parser(
        "replay",
        help="predict a traced MPI program's run on the model",
        description="Replay a SimGrid time-independent trace (smpirun -trace-ti: an index "
        "file naming one action file per rank, or one file of every rank's actions) or an "
        "OTF2 archive (its .otf2 file or folder; Score-P's) on "
        "the model: each rank's computations take their flops times a flop's time, its "
        "messages move through the flow engine over the hardware topology with MPI's "
        "semantics (eager below --eager bytes, rendezvous above; matching by source, tag "
        "and order), collectives as SMPI's algorithms or as the model's mpi section "
        "says. Prints the makespan and each rank's finish with its seconds in "
        "computation, communication and waiting; --json gives every operation's start "
        "and end; --timeline writes a Chrome trace-event file (chrome://tracing, "
        "ui.perfetto.dev).",
    )
    p.add_argument("file", metavar="MODEL")
    p.add_argument("trace", metavar="TRACE")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--virtual", type=AN_ID, metavar="ID",
                       help="rank r runs where virtual processor r+1 of this virtual "
                       "topology is mapped")  # fmt: skip
    where.add_argument("--hostfile", metavar="FILE",
                       help="one processor a line (5, p5, a name of the topology's '# piui: "
                       "names', and :4 after it for four ranks), rank 0 "
                       "first, used again from the top if the ranks outnumber it "
                       "(default: rank r on the r-th compute processor)")  # fmt: skip
    p.add_argument("--flop", metavar="EXPR",
                   help=f"a flop's seconds, T standing for the rank's processor type "
                   f"(default: {DEFAULT_FLOP}, or {GLOBAL_FLOP} on a model that times "
                   "only global variables, as the 1994 samples do)")  # fmt: skip
    p.add_argument("--traced-on", metavar="MODEL",
                   help="an OTF2 trace's computation was measured on the machine of this "
                   "model (parasol-model measure's of the traced host): its durations are "
                   "scaled by the flop time here over the flop time there (default: as "
                   "measured)")  # fmt: skip
    p.add_argument("--collectives", choices=("network", "model"), default="network",
                   help="network: SMPI's algorithms on the topology (default); model: the "
                   "model's mpi section, of ar.bytes and ar.procs")  # fmt: skip
    p.add_argument("--algorithm", action="append", default=[], metavar="COLL=ALGO",
                   help="a collective's algorithm: " + "; ".join(
                       f"{k}: {', '.join(v)}" for k, v in ALGORITHMS.items()))  # fmt: skip
    p.add_argument(
        "--eager",
        type=BYTES,
        default=EAGER_BYTES,
        metavar="BYTES",
        help=f"sends of fewer bytes are eager (default {EAGER_BYTES:,.0f}, SMPI's)",
    )
    p.add_argument("--sharing", choices=SHARING, default="max",
                   help="how messages share a link: "
                   + "; ".join(f"{k}: {v}" for k, v in SHARING_HELP.items()))  # fmt: skip
    memory_option(p, "the trace and its replay")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    output_option(p, "--timeline", metavar="FILE",
                  help="write the timeline as Chrome trace-event JSON ('-': stdout)")  # fmt: skip
    p.set_defaults(func=cmd_replay)


def _algorithms(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, eq, algo = item.partition("=")
        if not eq:
            raise CommandError(f"error: --algorithm takes COLLECTIVE=ALGORITHM, got '{item}'",
                               EXIT_USAGE)  # fmt: skip
        out[name.strip()] = algo.strip()
    return out


@run
def cmd_replay(args: argparse.Namespace) -> int:
    from parasol_core.base.budget import BudgetError
    from parasol_core.base.limits import Unreadable
    from parasol_core.replay import (
        DeadlockError,
        ReplayError,
        ReplayOptions,
        TraceError,
        flop_for,
        load_trace,
        replay,
    )

    machine = load_or_fail(args.file)
    traced = load_or_fail(args.traced_on) if args.traced_on else None
    options = ReplayOptions(virtual=args.virtual, hostfile=args.hostfile, flop=args.flop,
                            traced_on=traced,
                            collectives=args.collectives, eager=args.eager,
                            algorithms=_algorithms(args.algorithm), sharing=args.sharing)  # fmt: skip
    try:
        options.semantics()  # a bad --algorithm or --eager: before any work
    except ReplayError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None
    from parasol_core.base.memory import map_large_allocations

    map_large_allocations()  # this process's one replay: its stages' arrays given back
    try:
        with memory_budget(args):
            trace = load_trace(args.trace)
            ranks, actions, timed = trace.ranks, len(trace), trace.timed
            # one replay: each stage let go once the next has it, and the operations
            # only when they are written (docs/replay.md, "Memory")
            result = replay(machine, trace, options, release=True,
                            operations=bool(args.json or args.timeline))  # fmt: skip
            del trace
    except BudgetError as e:
        raise CommandError(f"error: {e}", EXIT_USAGE) from None
    except (TraceError, ReplayError, DeadlockError) as e:  # read and found wrong: 1
        status = EXIT_USAGE if isinstance(e, Unreadable) else EXIT_ERRORS
        raise CommandError(f"error: {e}", status) from None
    if args.timeline:
        write_output(jsonout.dumps(result.chrome_trace()) + "\n", args.timeline)
    from parasol_core.topology.names import names_map

    named = names_map(machine.hardware(), result.host.tolist())  # a platform's hosts' names
    if args.json:
        doc = result.to_json()
        if named:
            doc["names"] = named
        print(jsonout.dumps(doc, indent=1))
        return EXIT_OK
    print(f"ranks: {ranks}")
    print(f"actions: {actions:,}")
    print(f"messages: {result.messages:,}")
    if args.flop is None and not timed:  # the model's: say which, as the Program window does
        print(
            f"a flop takes {flop_for(machine, traced)} seconds (the model's; --flop gives another)"
        )
    if result.runs > 1:  # receives from any source, matched by the simulated times
        print(
            f"receives from any source: matched in {counted(result.runs, 'run', grouped=False)} "
            f"(docs/replay.md)"
        )
    print(f"makespan: {result.makespan:.6g} s")
    parts = result.breakdown()
    whole = sum(parts.values()) or 1.0
    print("time of all ranks: " + ", ".join(
        f"{k} {v:.6g} s ({100 * v / whole:.1f} %)" for k, v in parts.items()))  # fmt: skip
    order = sorted(range(result.ranks), key=lambda r: (-result.finish[r], r))
    shown = order if result.ranks <= SLOWEST else order[:SLOWEST]
    title = "ranks" if result.ranks <= SLOWEST else f"the {SLOWEST} last ranks to finish"
    print(f"{title}:")
    print(f"  {'rank':>5}  {'processor':>9}  {'finish (s)':>12}  {'computation':>12}  "
          f"{'communication':>13}  {'waiting':>12}" + ("  name" if named else ""))  # fmt: skip
    for r in shown:
        name = named.get(str(int(result.host[r])))
        print(f"  {r:>5}  {int(result.host[r]):>9}  {result.finish[r]:>12.6g}  "
              f"{result.computation[r]:>12.6g}  {result.communication[r]:>13.6g}  "
              f"{result.waiting[r]:>12.6g}" + (f"  {name}" if name else ""))  # fmt: skip
    return EXIT_OK
