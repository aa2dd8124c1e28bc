"""`parasol-model measure --network`: a model of the network measured under MPI.

Run as ``mpiexec -n N parasol-model measure --network -o FILE`` (or, on its own and
without the command's progress lines, ``mpiexec -n N python -m
parasol_core.measure.mpi_network -o FILE``); every rank runs this, rank 0 coordinates and
writes. docs/measure.md, "Network", tells the whole story; in short:

**Ping-pong.** Between every pair of ranks (or, past :data:`MAX_ALL_PAIRS` pairs, one
pair per host and per host pair), from 1 byte to 4 MiB. Half the round-trip time is fitted
with the data-sheet fit (:mod:`parasol_core.analysis.fit`) as ``latency + bytes * seconds per
byte`` over the whole range, each time weighted 1/t^2 (equal relative errors, the fit's
rule for times without error estimates), so the 1-byte latency is not drowned by the
4 MiB transfer: the intercept is the pair's latency, the slope its seconds per byte.

**Topology: the rule.** Processor ``r + 1`` is rank ``r``; ranks with the same
``MPI_Get_processor_name`` are on one host. If every measured pair is *alike* (its
latency and its seconds per byte each within :data:`ALIKE` (25%) of the median over all
pairs), the topology is one bus of all processors with the median figures (so: always,
on one host whose pairs agree). Otherwise it has one bus link per host of two or more
ranks, joining them, with the median of that host's pairs, then one link per pair of
hosts, joining every processor of both, with the median of the pairs measured between
them. Routing is ``broadcast`` (one hop over the lowest-id link that holds both ends),
so a message between two ranks of one host takes the host's bus and one between hosts
takes the link of that host pair; traffic between the same two hosts shares it, as it
shares their network adapters.

**Collectives.** barrier, bcast, reduce, allreduce, gather, scatter, allgather and
alltoall, over the ranks ``0..p-1`` for each process count p from 2 to N (past 8, the
powers of 2 and N), from 1 B (4 B for the reductions) to 1 MiB, timed as OSU times them,
are written as OSU-format files (one log of eight tables per process count, and one
osu_latency table per pair) and read back with the fit's OSU reader; each collective's
tables over all process counts are fitted together into ``mp.<collective>``, the fit's Q
in a comment (with one process count the start term cannot be told from the constant,
and the fit takes ``c + d * ar.bytes``).

**Cancel.** SIGINT, SIGTERM or SIGHUP on any rank (mpiexec passes Ctrl-C on to every
rank) stops all ranks at the next point (:mod:`parasol_core.base.signals`: signals are
only noted while MPI runs, and shared at each point); nothing is written, and the exit
status of every rank is 128 + the signal. At the end rank 0 fits and writes every file
beside its place (not yet renamed) while the other ranks wait taking signals; then the
ranks agree once more, and only then are the files renamed into place, the OSU tables
first and the model last. A signal that comes while they are renamed does not cut that
short: the files are whole, and every rank still exits with 128 + the signal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core.analysis.fit import Candidate, FitError, Measurements, fit, read_osu_log
from parasol_core.base import signals
from parasol_core.base.limits import outside_text
from parasol_core.base.words import counted
from parasol_core.measure.host import Progress
from parasol_core.measure.mpi_bench import (
    COLLECTIVES,
    Agreement,
    Cancelled,
    OsuRow,
    PingPong,
    Plan,
    collectives,
    human_size,
    pingpong,
    plan_for,
)
from parasol_core.model import Machine, Mpi, Processor, Timing, Topology
from parasol_core.topology.generators import build, bus

__all__ = [
    "ALIKE",
    "MAX_ALL_PAIRS",
    "Figures",
    "pair_figures",
    "measured_pairs",
    "process_counts",
    "network_topology",
    "osu_collective_log",
    "osu_latency_table",
    "fit_collective",
    "CollectiveFit",
    "model_text",
    "run_cli",
    "main",
]

ALIKE = 0.25
"""Pairs measure alike when latency and seconds per byte are within this fraction of the
median over all pairs."""
MAX_ALL_PAIRS = 28
"""Up to this many rank pairs (8 ranks) every pair is measured; past it, a sample."""
MAX_ALL_COUNTS = 8
"""Up to this many ranks the collectives run at every process count from 2."""
EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
PROCESSOR_NAME = "host CPU"

OSU_TITLES = {
    "barrier": "Barrier Latency Test",
    "bcast": "Bcast Latency Test",
    "reduce": "Reduce Latency Test",
    "allreduce": "Allreduce Latency Test",
    "gather": "Gather Latency Test",
    "scatter": "Scatter Latency Test",
    "allgather": "Allgather Latency Test",
    "alltoall": "All-to-All Personalized Exchange Latency Test",
}
WRITER_NOTE = "# Written by parasol-model measure --network, in the OSU micro-benchmarks' format"


# --------------------------------------------------------------------------- ping-pong fit


@dataclass(frozen=True)
class Figures:
    """A rank pair's (or a link's) figures: latency (s) and seconds per byte, with the
    fit's standard errors, and the largest relative distance of a measured time from the
    fitted line."""

    latency: float
    per_byte: float
    latency_error: float = 0.0
    per_byte_error: float = 0.0
    worst: float = 0.0

    def describe(self) -> str:
        return (f"latency {self.latency:.3g} s ± {self.latency_error:.2g}, "
                f"{self.per_byte:.3g} s/byte ± {self.per_byte_error:.2g} "
                f"(fit within {100 * self.worst:.0f}% of every size)")  # fmt: skip


def pair_figures(sizes: Sequence[float], seconds: Sequence[float]) -> Figures:
    """Latency and seconds per byte of half round-trip times: the fit ``c + d * bytes``
    over every size, each time weighted 1/t^2. A negative coefficient (a curve that
    bends the other way) is written as 0."""
    m = Measurements([2.0] * len(sizes), list(sizes), list(seconds))
    best = fit(m)[0]  # one process count: c + d * bytes comes first
    c, d = best.coefficients["c"], best.coefficients["d"]
    predicted = best.predict(2.0, m.bytes)
    worst = float(max(abs(predicted - m.seconds) / m.seconds))
    return Figures(max(c, 0.0), max(d, 0.0), best.errors["c"], best.errors["d"], worst)


def median_figures(figures: Sequence[Figures]) -> Figures:
    return Figures(statistics.median(f.latency for f in figures),
                   statistics.median(f.per_byte for f in figures),
                   max(f.latency_error for f in figures),
                   max(f.per_byte_error for f in figures),
                   max(f.worst for f in figures))  # fmt: skip


def _alike(figures: Sequence[Figures], reference: Figures) -> bool:
    def near(value: float, ref: float) -> bool:
        return abs(value - ref) <= ALIKE * abs(ref)

    return all(near(f.latency, reference.latency) and near(f.per_byte, reference.per_byte)
               for f in figures)  # fmt: skip


# --------------------------------------------------------------------------- what to measure


def host_groups(hosts: Sequence[str]) -> dict[str, list[int]]:
    """The ranks of each host, hosts in the order of their first rank."""
    groups: dict[str, list[int]] = {}
    for rank, host in enumerate(hosts):
        groups.setdefault(host, []).append(rank)
    return groups


def measured_pairs(hosts: Sequence[str]) -> list[tuple[int, int]]:
    """The rank pairs to ping-pong: every pair up to MAX_ALL_PAIRS; past it, the first two
    ranks of each host and the first ranks of each pair of hosts (what the topology rule
    needs), plus (0, k) pairs while there is room."""
    n = len(hosts)
    every = list(combinations(range(n), 2))
    if len(every) <= MAX_ALL_PAIRS:
        return every
    groups = list(host_groups(hosts).values())
    chosen = [(g[0], g[1]) for g in groups if len(g) >= 2]
    chosen += [(g[0], h[0]) for g, h in combinations(groups, 2)]
    for k in range(1, n):
        if len(chosen) >= MAX_ALL_PAIRS:
            break
        if (0, k) not in chosen:
            chosen.append((0, k))
    return sorted(set(chosen))


def process_counts(n: int, quick: bool) -> list[int]:
    """The process counts the collectives run at: 2..n (past MAX_ALL_COUNTS the powers of
    2 and n); quick: 2 and n."""
    if quick:
        return sorted({2, n})
    if n <= MAX_ALL_COUNTS:
        return list(range(2, n + 1))
    return sorted({2**k for k in range(1, n.bit_length()) if 2**k <= n} | {n})


# --------------------------------------------------------------------------- topology


def network_topology(hosts: Sequence[str], figures: dict[tuple[int, int], Figures]
                     ) -> tuple[Topology, list[str]]:  # fmt: skip
    """The topology the rule of the module's docstring gives for ranks on ``hosts`` (the
    processor name of each rank) and the figures of the measured rank pairs; with the
    comment lines that say which rule applied and with what figures."""
    n = len(hosts)
    groups = host_groups(hosts)
    where = {rank: host for host, ranks in groups.items() for rank in ranks}
    everything = median_figures(list(figures.values()))
    hosts_text = ", ".join(f"{h} ({len(r)})" for h, r in groups.items())
    name = f"measured: {n} ranks on {len(groups)} host{'s' if len(groups) > 1 else ''}"
    if _alike(list(figures.values()), everything):
        topo = bus(n, everything.latency, everything.per_byte, name=name)
        notes = [f"every measured pair alike (within {ALIKE:.0%} of the median): one bus "
                 f"of all {counted(n, 'processor', grouped=False)} (ranks 0..{n - 1}; hosts "
                 f"{hosts_text})",
                 f"bus: median {everything.describe()}"]  # fmt: skip
        return topo, notes
    links: list[list[int]] = []
    timings: list[Figures] = []
    if len(groups) == 1:
        notes = [f"pairs differ by more than {ALIKE:.0%} but share one host: its bus carries "
                 f"the median (processor r+1 is rank r; hosts {hosts_text})"]  # fmt: skip
    else:
        notes = [f"pairs differ by more than {ALIKE:.0%}: one bus per host, then one link per "
                 f"host pair (processor r+1 is rank r; hosts {hosts_text})"]  # fmt: skip
    for host, ranks in groups.items():
        if len(ranks) < 2:
            continue
        inside = [f for (a, b), f in figures.items() if where[a] == host and where[b] == host]
        if not inside:  # not measured: the median over every pair stands in
            inside = [everything]
        link = median_figures(inside)
        links.append([r + 1 for r in ranks])
        timings.append(link)
        notes.append(f"link {len(links)}: host {host}, {link.describe()}")
    for (h1, r1), (h2, r2) in combinations(groups.items(), 2):
        between = [f for (a, b), f in figures.items() if {where[a], where[b]} == {h1, h2}]
        if not between:
            between = [everything]
        link = median_figures(between)
        links.append(sorted(r + 1 for r in r1 + r2))
        timings.append(link)
        notes.append(f"link {len(links)}: hosts {h1} - {h2}, {link.describe()}")
    topo = build(links, n, 0.0, 0.0, routing="broadcast", name=name)
    for lk, f in zip(topo.links, timings, strict=True):
        lk.latency, lk.speed = Timing(f.latency), Timing(f.per_byte)
    return topo, notes


# --------------------------------------------------------------------------- OSU files


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def osu_collective_log(tables: dict[str, list[OsuRow]], procs: int) -> str:
    """The collectives' tables at one process count as an OSU log (``-f`` columns)."""
    out = [WRITER_NOTE, f"# {procs} processes; Min and Max are over the ranks", ""]
    for name in COLLECTIVES:
        rows = tables.get(name)
        if not rows:
            continue
        out.append(f"# OSU MPI {OSU_TITLES[name]}")
        if name == "barrier":
            out.append("# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations")
        else:
            out.append("# Datatype: MPI_FLOAT." if name in ("reduce", "allreduce")
                       else "# Datatype: MPI_CHAR.")  # fmt: skip
            out.append("# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  "
                       "Iterations")  # fmt: skip
        for r in rows:
            cells = [] if r.size is None else [f"{r.size:<10d}"]
            cells += [f"{_us(v):>17}" for v in (r.avg, r.min, r.max)] + [f"{r.iterations:>11d}"]
            out.append(" ".join(cells))
        out.append("")
    return "\n".join(out)


def osu_latency_table(pp: PingPong, hosts: Sequence[str]) -> str:
    """A pair's ping-pong as an osu_latency table (half the round trip, microseconds)."""
    out = [WRITER_NOTE,
           f"# ranks {pp.a} ({hosts[pp.a]}) and {pp.b} ({hosts[pp.b]}); half the round "
           "trip, the mean over every repetition", "",
           "# OSU MPI Latency Test", "# Size          Latency (us)"]  # fmt: skip
    out += [f"{s:<10d} {_us(t):>17}" for s, t in zip(pp.sizes, pp.seconds, strict=True)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- collective fits


@dataclass
class CollectiveFit:
    name: str
    candidate: Candidate | None
    rows: int
    counts: list[int]
    error: str = ""

    def comment(self) -> str:
        """What the expression's comment says: Q, and what was fitted."""
        counts = ", ".join(map(str, self.counts))
        what = f"{self.rows} time{'s' if self.rows != 1 else ''} at {counts} processes"
        if self.candidate is None:
            return f"not fitted ({self.error})"
        c = self.candidate
        if c.q is None:
            q = "Q not defined (no spread over the ranks)"
        elif c.dof == 0:
            q = "exactly determined (no Q)"
        else:
            q = f"Q {c.q:.3g}"
        return f"{q}; {c.form}, fitted to {what}"


def fit_collective(name: str, logs: dict[int, str]) -> CollectiveFit:
    """Fit one collective's tables from the OSU logs of each process count (read back with
    :func:`parasol_core.analysis.fit.read_osu_log`, one table at a time, all counts together).

    The errors: every time is given the same relative error, the median over the rows of
    half the min-max range over the ranks relative to the mean. So every size counts
    alike (the fit's own rule for times without errors: the 1 MiB times do not drown the
    1-byte latency, as they do when each row's own spread, a few percent at 1 MiB and
    half the time at 1 byte, is its error) and Q says whether the form fits within the
    spread the ranks typically show."""
    parts = []
    spreads: list[float] = []
    for procs, text in sorted(logs.items()):
        table = read_osu_log(text).choose(f"osu_{name}")
        parts.append(table.measurements(procs))
        if len(table.spread) == len(table.values):
            spreads += [s / v for s, v in zip(table.spread, table.values, strict=True) if v > 0]
    counts = sorted(logs)
    m = Measurements.concat(parts)
    relative = float(np.median(spreads)) if spreads else 0.0
    if relative > 0 and np.all(m.seconds > 0):  # rows whose Min = Max count as spread 0
        m = Measurements(m.procs, m.bytes, m.seconds, relative * m.seconds)
    else:
        m = Measurements(m.procs, m.bytes, m.seconds)  # no spread: equal relative errors
    try:
        best = fit(m)[0]
    except FitError as e:
        return CollectiveFit(name, None, len(m), counts, str(e))
    return CollectiveFit(name, best, len(m), counts)


# --------------------------------------------------------------------------- the model


def build_machine(hosts: Sequence[str], topology: Topology, fits: Sequence[CollectiveFit]
                  ) -> Machine:  # fmt: skip
    from parasol_core import parse_expression

    entries = {f.name: parse_expression(f.candidate.expression())
               for f in fits if f.candidate is not None}  # fmt: skip
    groups = host_groups(hosts)
    return Machine(id=1, name=f"network measured under MPI: {counted(len(hosts), 'rank')} on "
                   f"{len(groups)} host{'s' if len(groups) > 1 else ''}",
                   processor_count=1, topology_count=1,
                   processors=[Processor(1, PROCESSOR_NAME)],
                   topologies=[topology], mpi=Mpi(entries) if entries else None)  # fmt: skip


def model_text(hosts: Sequence[str], pairs: Sequence[PingPong], topology: Topology,
               notes: Sequence[str], fits: Sequence[CollectiveFit], header: Sequence[str]
               ) -> str:  # fmt: skip
    """The model file: a comment header (how it was measured, every pair's figures), the
    machine written by the canonical writer with the rule at the top of the topology
    section and each fit's Q after its expression (a collective without one says why at
    the end of the mpi section). Checked to load back and validate with no error."""
    from parasol_core import loads
    from parasol_core.analysis.validate import errors, validate
    from parasol_core.syntax.writer import Comments, dumps_canonical

    machine = build_machine(hosts, topology, fits)
    comments = Comments()
    comments.above(*header)
    for pp in pairs:
        f = pair_figures(pp.sizes, pp.seconds)
        comments.above(f"  ranks {pp.a}-{pp.b} ({hosts[pp.a]} - {hosts[pp.b]}): {f.describe()}")
    comments.top(topology, *notes)
    if machine.mpi is not None:
        for f in fits:
            if f.candidate is None:
                comments.bottom(machine.mpi, f"{f.name}: {f.comment()}")
            else:
                comments.after(machine.mpi, f"entries.{f.name}", f.comment())
    text = dumps_canonical(machine, comments=comments)
    problems = errors(validate(loads(text)))
    if problems:  # a bug here, not the user's: say so rather than write a bad model
        raise RuntimeError("the measured model does not validate: "
                           + "; ".join(d.message for d in problems))  # fmt: skip
    return text


# --------------------------------------------------------------------------- running


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def osu_directory(output: str | None) -> Path | None:
    """Where the OSU files go: beside ``-o FILE``, in ``FILE`` without its suffix plus
    ``.osu`` (net.machine -> net.osu/); None without -o (they are not kept)."""
    if not output or output == "-":
        return None
    path = Path(output)
    return path.with_name(path.stem + ".osu")


def _check_output(output: str | None) -> str | None:
    """Why ``-o`` cannot be written (checked before minutes of measuring, as every
    command checks its outputs: :func:`parasol_core.syntax.writer.check_writable`), or
    None."""
    from parasol_core.syntax.writer import check_writable

    if not output or output == "-":
        return None
    try:
        check_writable(output)
    except OSError as e:
        return f"{output}: {e.strerror or e}"
    osu = osu_directory(output)
    if osu is not None and osu.exists() and not osu.is_dir():
        return f"{osu}: exists and is not a directory (the OSU tables go there)"
    return None


def shown_hosts(names: Sequence[str | bytes]) -> list[str]:
    """The processor names of the ranks as the model and the terminal show them
    (:func:`~parasol_core.base.limits.outside_text`: bounded, control characters
    escaped), two different names never shown alike (the topology groups ranks by
    them)."""
    shown: dict[str | bytes, str] = {}
    taken: set[str] = set()
    for name in names:
        if name in shown:
            continue
        text = outside_text(name, 64) or "(no name)"
        candidate, n = text, 2
        while candidate in taken:
            candidate, n = f"{text} ({n})", n + 1
        shown[name] = candidate
        taken.add(candidate)
    return [shown[name] for name in names]


def _measure(comm: Any, agreement: Agreement, plan: Plan, hosts: list[str]
             ) -> tuple[list[PingPong], dict[int, dict[str, list[OsuRow]]]]:  # fmt: skip
    pairs = measured_pairs(hosts)
    counts = process_counts(comm.size, plan.quick)
    agreement.start(comm, plan.points(len(pairs), len(counts)))
    if comm.rank == 0:
        groups = host_groups(hosts)
        _say(f"measure --network: {comm.size} ranks on {len(groups)} host"
             f"{'s' if len(groups) > 1 else ''} ({', '.join(groups)}); ping-pong of "
             f"{len(pairs)} pair{'s' if len(pairs) > 1 else ''}, collectives at "
             f"{', '.join(map(str, counts))} processes"
             f"{' (quick)' if plan.quick else ''}")  # fmt: skip
    agreement.agree()
    results: list[PingPong] = []
    sizes = plan.pingpong_sizes
    for a, b in pairs:
        agreement.step(f"ping-pong ranks {a}-{b} ({hosts[a]} - {hosts[b]}), "
                       f"{human_size(sizes[0])}..{human_size(sizes[-1])}")  # fmt: skip
        pp = pingpong(comm, agreement, plan, a, b)
        if pp is not None:
            results.append(pp)
            _say(f"       ranks {a}-{b}: {pair_figures(pp.sizes, pp.seconds).describe()}")
    tables: dict[int, dict[str, list[OsuRow]]] = {}
    for p in counts:
        got = collectives(comm, agreement, plan, p)
        if got is not None:
            tables[p] = got
    agreement.agree()
    return results, tables


class _Output:
    """What rank 0 writes at the end: every file staged beside its place (written and
    synced, not yet renamed), the OSU tables first and the model last, or the model's
    text for stdout."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.staged: list[Any] = []
        self.made: Path | None = None  # the OSU directory, if this run made it

    def discard(self) -> None:
        for staged in self.staged:
            staged.discard()
        self.staged = []
        if self.made is not None:
            try:
                self.made.rmdir()  # only if empty: nothing of ours was renamed into it
            except OSError:
                pass
            self.made = None

    def commit(self) -> None:
        for staged in self.staged:
            staged.commit()
        self.staged = []
        self.made = None


def _prepare(args: argparse.Namespace, hosts: list[str], pairs: list[PingPong],
             tables: dict[int, dict[str, list[OsuRow]]], header: list[str]
             ) -> _Output:  # fmt: skip
    """On rank 0: the fits, the model's text, and every file staged (OSError if one
    cannot be written)."""
    from parasol_core.syntax.writer import stage_text

    output = getattr(args, "output", None)
    logs = {p: osu_collective_log(t, p) for p, t in tables.items()}
    fits = [fit_collective(name, logs) for name in COLLECTIVES]
    figures = {(pp.a, pp.b): pair_figures(pp.sizes, pp.seconds) for pp in pairs}
    topology, notes = network_topology(hosts, figures)
    osu = osu_directory(output)
    where = f"OSU tables: {osu}/" if osu is not None else "OSU tables not kept (no -o)"
    out = _Output(model_text(hosts, pairs, topology, notes, fits, [*header, where]))
    for f in fits:
        _say(f"mp.{f.name} = {f.candidate.expression() if f.candidate else '(none)'}"
             f"  # {f.comment()}")  # fmt: skip
    if not output or output == "-":
        return out
    try:
        if osu is not None:
            if not osu.is_dir():
                osu.mkdir()
                out.made = osu
            for p, log in logs.items():
                out.staged.append(stage_text(osu / f"osu-collectives-np{p}.txt", log))
            for pp in pairs:
                out.staged.append(stage_text(osu / f"osu_latency-ranks{pp.a}-{pp.b}.txt",
                                             osu_latency_table(pp, hosts)))  # fmt: skip
        out.staged.append(stage_text(Path(output), out.text))
    except BaseException:
        out.discard()
        raise
    return out


def _commit(args: argparse.Namespace, out: _Output) -> int:
    """On rank 0, once every rank agreed to go on: the files renamed into place (the
    model last), or the model on stdout."""
    output = getattr(args, "output", None)
    if not output or output == "-":
        sys.stdout.write(out.text)
        sys.stdout.flush()
        return EXIT_OK
    osu = osu_directory(output)
    try:
        out.commit()
    except OSError as e:
        out.discard()
        _say(f"error: {e.filename or output}: cannot write: {e.strerror or e}")
        return EXIT_USAGE
    _say(f"wrote {output}" + (f" and the OSU tables in {osu}/" if osu else ""))
    return EXIT_OK


def run_cli(args: argparse.Namespace,
            progress: Callable[[Progress], None] | None = None) -> int:  # fmt: skip
    """`measure --network` on this rank: ``args.output`` (the model file, or None for
    stdout) and ``args.quick``; rank 0 reports each step to ``progress`` (the command's
    progress display). Every rank returns the same exit status."""
    # signals are caught from here, before MPI starts, and only noted while it runs
    with signals.handled(), signals.deferred(raise_at_end=False):
        return _run(args, Agreement(progress))


def _run(args: argparse.Namespace, agreement: Agreement) -> int:
    try:
        from mpi4py import MPI
    except ImportError:
        _say("error: measuring the network needs mpi4py and an MPI: pip install "
             "'piui[mpi]' (or `pip install -e .[mpi]` in a clone), then run "
             "mpiexec -n 2 parasol-model measure --network -o FILE")  # fmt: skip
        return EXIT_USAGE
    signals.reinstall()  # MPI's start-up put its own SIGHUP handler in place of ours
    comm = MPI.COMM_WORLD
    rank = comm.rank
    if comm.size < 2:
        _say("error: the network is measured between MPI processes: run it under mpiexec "
             "with 2 or more, e.g. mpiexec -n 2 parasol-model measure --network -o FILE")  # fmt: skip
        return EXIT_USAGE
    output = getattr(args, "output", None)
    problem = comm.bcast(_check_output(output) if rank == 0 else None, root=0)
    if problem:
        if rank == 0:
            _say(f"error: {problem}")
        return EXIT_USAGE
    plan = plan_for(bool(getattr(args, "quick", False)))
    hosts = shown_hosts(comm.allgather(MPI.Get_processor_name()))
    started = time.monotonic()
    status = EXIT_OK
    out: _Output | None = None
    try:
        pairs, tables = _measure(comm, agreement, plan, hosts)
        if rank == 0:
            seconds = time.monotonic() - started
            try:
                out = _prepare(args, hosts, pairs, tables, _header(comm, plan, hosts, seconds))
            except OSError as e:
                _say(f"error: {e.filename or output}: cannot write: {e.strerror or e}")
                status = EXIT_USAGE
        agreement.gather()  # rank 0's fits and files done; signals taken meanwhile
        agreement.agree()  # a signal on any rank up to here: nothing is written
        if rank == 0 and out is not None:
            status = _commit(args, out)
            out = None
        agreement.gather()
        signum, worst = agreement.share(status)
    except Cancelled as e:
        if rank == 0:
            _say(f"cancelled (signal {e.signum}): nothing written")
        return signals.exit_status(e.signum)
    except Exception as e:  # a bug or a full disk: say it, and end every rank
        _say(f"error on rank {rank}: {type(e).__name__}: {e}")
        sys.stderr.flush()
        comm.Abort(EXIT_ERRORS)
    finally:
        if out is not None:
            out.discard()
    if signum:  # it came while the files were renamed: they are whole, the exit says it
        if rank == 0:
            _say(f"stopped by {signals.name_of(signum)} as the files were written "
                 "(they are whole)")  # fmt: skip
        return signals.exit_status(signum)
    return int(worst)


def _header(comm: Any, plan: Plan, hosts: list[str], seconds: float) -> list[str]:
    from mpi4py import MPI

    try:
        library = outside_text(MPI.Get_library_version().splitlines()[0])
    except Exception:
        library = "MPI"
    import mpi4py

    pp = plan.pingpong_sizes
    cs = plan.collective_sizes
    return [
        f"Network measured by `mpiexec -n {comm.size} parasol-model measure --network"
        f"{' --quick' if plan.quick else ''}` on {datetime.now():%Y-%m-%d %H:%M} in "
        f"{seconds:.0f} s",
        f"({' '.join(library.split())}, mpi4py {mpi4py.__version__}; processor names: "
        f"{', '.join(dict.fromkeys(hosts))}).",
        f"Ping-pong, {human_size(pp[0])} to {human_size(pp[-1])}: half the round trip fitted "
        "as latency + bytes * seconds per byte over the whole range, each time weighted 1/t^2.",
        f"Collectives, {human_size(cs[0])} to {human_size(cs[-1])} (ar.bytes per process, per "
        "peer for alltoall), timed as OSU does: the mean over the ranks of each one's average;",
        "fitted with the data-sheet fit, every time's error the median relative half min-max",
        "range over the ranks (all sizes count alike; Q: does the form fit within that spread?).",
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parasol_core.measure.mpi_network",
        description="Measure the network under MPI (run under mpiexec -n N) and write a "
        "model of it: a topology with the measured links and the MPI section fitted from "
        "the collectives.",
    )
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the model file (default: stdout); the OSU tables go beside it, "
                        "in FILE without its suffix plus .osu/")  # fmt: skip
    parser.add_argument("--quick", action="store_true",
                        help="fewer sizes and repetitions (the tests' run, a few seconds)")  # fmt: skip
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
