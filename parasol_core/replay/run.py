"""Replaying a compiled trace on a model: where the ranks run, what a flop and a
collective cost, the flow engine's run, and the result (docs/replay.md)."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core.analysis.flops import DEFAULT_FLOP, GLOBAL_FLOP, flop_for, flop_value
from parasol_core.base import budget
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.limits import (
    MAX_DATA_FILE_BYTES,
    Unreadable,
    ValueRangeError,
    read_capped,
)
from parasol_core.base.numeric import is_whole, read_int
from parasol_core.base.words import counted, quoted, said
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.model import Machine
from parasol_core.replay.communicators import check_world
from parasol_core.replay.matching import settle, wildcards
from parasol_core.replay.program import (
    EAGER_BYTES,
    DeadlockError,
    Program,
    Semantics,
    compile_program,
)
from parasol_core.replay.result import ReplayResult
from parasol_core.replay.tifile import (
    BYTES_PER_ACTION,
    BYTES_PER_RANK,
    KINDS,
    ONCE_BYTES_PER_ACTION,
    Trace,
    TraceError,
    replay_memory,
)
from parasol_core.simulate import flow
from parasol_core.simulate.messages import MessageArrays
from parasol_core.simulate.trace import Phase
from parasol_core.syntax.expression import parse_expression
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.names import processor_number
from parasol_core.topology.resources import check_sharing, usage_of
from parasol_core.topology.switches import compute_processors
from parasol_core.topology.transfer import RouteTable
from parasol_core.topology.virtual import find_virtual, hardware_of


class ReplayError(ValueError):
    """A replay that cannot run on this model: a rank with no processor, a flop time or
    a collective cost the model cannot give, a route that cannot be plotted."""


class FlopError(ReplayError):
    """The flop expression (``--flop``, the Program window's field, a sweep's ``flop``)
    gives no time on this model: which expression, on which processor type, and why."""


class ReplayUnreadable(ReplayError, Unreadable):
    """A file a replay reads besides its trace (a hostfile) that cannot be read."""


@dataclass(frozen=True)
class ReplayOptions:
    """How a trace is replayed.

    ``virtual``: rank r runs on virtual processor r + 1 of this virtual topology (its
    mapping decides the hardware processor); ``hostfile``: a file of processors
    (``5``, ``p5`` or a name of the topology's ``# piui: names``; ``p5:4`` for 4 ranks;
    used again from its top if the ranks outnumber its lines, as smpirun does), or the
    numbers (or names) as a list; neither: rank r on the r-th compute processor.
    ``flop``: the seconds of a flop, an expression in which ``T`` is the rank's
    processor type; None: the model's (:func:`flop_for`). ``collectives``:
    ``network`` (SMPI's algorithms on the network, ``algorithms`` per collective) or
    ``model`` (the model's ``mpi`` section). ``eager``: bytes below which a send is
    eager. ``sharing``: the flow engine's rule (``max``, ``maxmin``, ``cm02``)."""

    virtual: int | None = None
    hostfile: str | Path | Sequence[int | str] | None = None
    flop: str | None = None
    collectives: str = "network"
    eager: float = EAGER_BYTES
    algorithms: Mapping[str, str] = field(default_factory=dict)
    sharing: str = "max"
    traced_on: Machine | None = None

    def semantics(self) -> Semantics:
        try:
            return Semantics.make(self.eager, self.algorithms, self.collectives)
        except ValueError as e:
            raise ReplayError(str(e)) from None

    def check(self, machine: Machine | None = None) -> None:
        """Raise :class:`ReplayError` for an option no trace can replay with: the
        collectives, eager threshold and algorithms, the sharing rule, and the flop
        expression's syntax; with ``machine``, a flop expression that gives no time on
        one of its processor types (a name it lacks: a value out of range is the
        variant's). A sweep says so once before its variants run, not on every row."""
        if isinstance(self.eager, bool) or not isinstance(self.eager, (int, float)):
            raise ReplayError(
                f"the eager threshold must be a number of bytes, not {said(self.eager)}"
            )
        if not isinstance(self.algorithms, Mapping):
            raise ReplayError("algorithms must name an algorithm per collective")
        self.semantics()
        try:
            check_sharing(self.sharing)
        except ValueError as e:
            raise ReplayError(str(e)) from None
        if self.flop is None:
            return
        if not isinstance(self.flop, str) or not self.flop.strip():
            raise FlopError(f"a flop's time must be an expression, not {said(self.flop)}")
        try:
            parsed = parse_expression(self.flop.replace("(T)", "(1)"))  # T: the rank's type
        except ModelSyntaxError as e:
            raise FlopError(
                f"a flop's time, {quoted(self.flop)}: syntax error: {e.message}"
            ) from None
        if machine is not None:
            # a time below zero is refused here only when the expression names nothing:
            # a variant of the model (a sweep's) may give another time where it names
            constant = not parsed.references()
            engine = Engine(machine)
            for t in sorted(set(hardware_of(machine).types.values())):
                text, value = flop_value(engine, self.flop, t)
                why = _flop_time_error(t, text, value)
                if why is not None and (constant or not isinstance(value, (int, float))):
                    raise FlopError(why)


def _flop_time_error(ptype: int, text: str, value: Any) -> str | None:
    """Why ``value``, the flop expression ``text`` on processor type ``ptype``, is no
    time a flop can take (None: it is one)."""
    if isinstance(value, EvalError) or not isinstance(value, (int, float)):
        why = value.message if isinstance(value, EvalError) else f"{value!r} is no number"
        why = why.removeprefix(f"{quoted(text)}: ")  # the part that failed, when not the whole
        return (f"a flop's time on processor type {ptype}, {quoted(text)}: {why} (give "
                "another expression for a flop's time)")  # fmt: skip
    if not (math.isfinite(value) and value >= 0):
        return (f"a flop's time on processor type {ptype}, {quoted(text)}, is {value!r}: it "
                "must be zero or more seconds")  # fmt: skip
    return None


# --------------------------------------------------------------------------- where ranks run


def hosts_of(machine: Machine, options: ReplayOptions, ranks: int) -> np.ndarray:
    """Each rank's hardware processor number."""
    try:
        hw = hardware_of(machine)
    except RoutingError as e:
        raise ReplayError(str(e)) from None
    if options.virtual is not None and options.hostfile is not None:
        raise ReplayError("give a virtual topology or a hostfile, not both")
    if options.virtual is not None:
        try:
            virt = find_virtual(machine, options.virtual)
        except RoutingError as e:
            raise ReplayError(str(e)) from None
        out = np.zeros(ranks, dtype=np.int64)
        for r in range(ranks):
            h = virt.mapping.get(r + 1)
            if h is None:
                raise ReplayError(f"rank {r} runs on virtual processor {r + 1} of virtual "
                                  f"topology {virt.id}, which maps no processor there "
                                  f"({len(virt.mapping)} mapped)")  # fmt: skip
            out[r] = h
        return out
    if options.hostfile is not None:
        hosts = _hostfile(options.hostfile, hw, ranks)
        if not hosts:
            raise ReplayError(f"the hostfile {options.hostfile} names no processor")
        # every entry is one of hw's processors: host_entry refused any other, naming it
        return np.asarray([hosts[r % len(hosts)] for r in range(ranks)], dtype=np.int64)
    computes = compute_processors(machine, hw)
    if computes.shape[0] < ranks:
        raise ReplayError(f"the trace has {counted(ranks, 'rank', grouped=False)} and "
                          f"{_label(hw)} {computes.shape[0]} "
                          "compute processors (give a hostfile to put several ranks on "
                          "one)")  # fmt: skip
    return computes[:ranks].astype(np.int64)


def _label(hw: Any) -> str:
    return f"hardware topology {hw.id}" if hw.id is not None else "the hardware topology"


def _hostfile(source: str | Path | Sequence[int | str], hw: Any = None,
              ranks: int | None = None) -> list[int]:  # fmt: skip
    """A hostfile's processors: a file, one entry a line, or a list of entries (a sweep
    file's ``hostfile = [...]``), each read by :func:`host_entry`; the first ``ranks``
    of them (each entry is still checked): more would place no rank, and an entry's
    ``:RANKS`` of ten billion would otherwise be a list of ten billion."""
    if not isinstance(source, (str, Path)):
        out: list[int] = []
        for i, h in enumerate(source):
            try:
                got = host_entry(h, hw, f"hostfile[{i}]", most=_left(out, ranks))
            except (ValueError, RoutingError) as e:
                raise ReplayError(str(e)) from None
            out.extend(got)
        return out
    try:
        data = read_capped(source, MAX_DATA_FILE_BYTES, "a hostfile")
        text = data.decode("utf-8", errors="replace")
    except ValueRangeError as e:
        raise ReplayUnreadable(str(e)) from None
    except OSError as e:
        raise ReplayUnreadable(f"{source}: cannot read: {e.strerror or e}") from None
    hosts: list[int] = []
    for n, raw in enumerate(text.splitlines(), 1):
        word = raw.split("#")[0].strip()
        if not word:
            continue
        try:
            hosts.extend(host_entry(word, hw, most=_left(hosts, ranks)))
        except (ValueError, RoutingError) as e:
            raise ReplayError(f"{source}:{n}: {e}") from None
    return hosts


def check_hostfile(source: str | Path | Sequence[int | str], hw: Any = None) -> None:
    """Read the hostfile ``source`` (a file, or a list of its entries) and check each
    entry (against ``hw``'s processors when given), expanding none:
    :class:`ReplayUnreadable` or :class:`ReplayError` naming the line or the entry, as a
    replay would say it."""
    _hostfile(source, hw, ranks=0)


def _left(hosts: list[int], ranks: int | None) -> int | None:
    """How many more processors a hostfile's entries may add (None: no bound)."""
    return None if ranks is None else max(0, ranks - len(hosts))


def host_entry(entry: int | str, hw: Any = None, what: str = "host",
               most: int | None = None) -> list[int]:  # fmt: skip
    """The processors one entry of a hostfile gives, a rank each: a number, ``pN``, or a
    name of the hardware topology's ``# piui: names`` (a SimGrid platform's host, as
    smpirun's hostfiles name them), each optionally ``:RANKS`` (``Tremblay:4``); an
    integer is that processor. The words are resolved by the one rule of names and
    numbers (:func:`parasol_core.topology.names.processor_number`: a name the topology
    has wins over reading ``pN`` as processor N). The one reader of hostfile entries:
    ``--hostfile``'s lines, a sweep's ``hostfile`` lists. At most ``most`` processors
    (the ranks left to place). With ``hw``, a processor it lacks is refused here, so that
    every reader says which entry named it (a file's line, ``hostfile[i]``,
    ``hosts[i]``). ValueError or RoutingError saying ``what`` and why otherwise."""
    if isinstance(entry, int) and not isinstance(entry, bool):
        return [_in_topology(processor_number(hw, entry, what), hw, f"{what} {entry}")][:most]
    if not isinstance(entry, str):
        raise ValueError(f"{what}: a processor is a number or a name, not {str(entry)[:40]!r}")
    word = entry.strip()
    name, colon, times = word.rpartition(":")
    if not colon or not is_whole(times):  # a name with ':' in it
        name, times = word, ""
    try:
        k = read_int(times, "a rank count") if times else 1
        p = processor_number(hw, name, what, prefixed=True)
    except (ValueError, RoutingError) as e:
        raise ValueError(f"{e} (an entry is N, pN, a processor's name, each optionally "
                         ":RANKS)") from None  # fmt: skip
    _in_topology(p, hw, f"{what} {word!r}")
    return [p] * (k if most is None else min(k, most))


def _in_topology(p: int, hw: Any, what: str) -> int:
    """``p``, or ValueError saying ``what`` names a processor ``hw`` has not (no check
    without ``hw``)."""
    if hw is not None:
        count = hw.processor_count or 0
        if not 1 <= p <= count:
            raise ValueError(f"{what}: processor {p} is not in {_label(hw)} (processors "
                             f"1..{count})")  # fmt: skip
    return p


# --------------------------------------------------------------------------- timings


def flop_times(machine: Machine, engine: Engine, hosts: np.ndarray, flop: str) -> np.ndarray:
    """Each rank's seconds a flop, the expression ``flop`` of its processor's type."""
    hw = hardware_of(machine)
    types = hw.types
    out = np.zeros(hosts.shape[0])
    cache: dict[int, float] = {}
    for r, h in enumerate(hosts.tolist()):
        t = types.get(h)
        if t is None:
            raise ReplayError(f"rank {r} runs on processor {h}, which has no processor type")
        if t not in cache:
            text, value = flop_value(engine, flop, t)
            why = _flop_time_error(t, text, value)
            if why is not None:
                raise FlopError(why)
            cache[t] = float(value)
        out[r] = cache[t]
    return out


def time_scale(machine: Machine, engine: Engine, hosts: np.ndarray,
               options: ReplayOptions) -> np.ndarray:  # fmt: skip
    """For measured computation (OTF2): each rank's factor, ``flop`` on its processor's
    type over ``flop`` on the traced machine's first compute processor's type (1
    without ``traced_on``: the durations as measured)."""
    if options.traced_on is None:
        return np.ones(hosts.shape[0])
    traced = options.traced_on
    ttype = None
    try:
        thw = hardware_of(traced)
        ttype = thw.types.get(int(compute_processors(traced, thw)[0]))
    except (RoutingError, IndexError):
        pass
    if ttype is None:  # a model of one host (measure's): its first processor type
        if not traced.processors:
            raise ReplayError("the traced machine's model has no processor type")
        ttype = traced.processors[0].id
    text, value = flop_value(Engine(traced), options.flop, ttype)
    if isinstance(value, EvalError) or not isinstance(value, (int, float)) or not value > 0:
        raise FlopError(f"the traced machine's {quoted(text)}: {value} (it must be a positive "
                          "time; give another expression for a flop's time)")  # fmt: skip
    return flop_times(machine, engine, hosts, options.flop) / float(value)


def model_costs(machine: Machine, engine: Engine, keys: list[tuple[str, float, int]]) -> np.ndarray:
    """The model's ``mpi`` cost of each (name, bytes, procs)."""
    out = np.zeros(len(keys))
    if keys and (machine.mpi is None or not machine.mpi.entries):
        raise ReplayError(
            "collectives costed by the model need the model's mpi section, and it has none"
        )
    for i, (name, nbytes, procs) in enumerate(keys):
        if name not in machine.mpi.entries:
            have = ", ".join(machine.mpi.entries) or "none"
            raise ReplayError(f"collectives costed by the model: its mpi section gives no "
                              f"'{name}' (it gives: {have})")  # fmt: skip
        value = engine.evaluate_text(f"mp.{name}", runtime=True,
                                     args={"bytes": nbytes, "procs": procs})  # fmt: skip
        if isinstance(value, EvalError) or not isinstance(value, (int, float)):
            raise ReplayError(f"mp.{name} with ar.bytes = {nbytes:g}, ar.procs = {procs}: {value}")
        if not (math.isfinite(value) and value >= 0):
            raise ReplayError(f"mp.{name} with ar.bytes = {nbytes:g}, ar.procs = {procs} is "
                              f"{value!r}: a cost must be zero or more seconds")  # fmt: skip
        out[i] = value
    return out


# --------------------------------------------------------------------------- the replay


def replay(machine: Machine, trace: Trace, options: ReplayOptions | None = None,
           engine: Engine | None = None, cancel: threading.Event | None = None, *,
           operations: bool = True, release: bool = False) -> ReplayResult:  # fmt: skip
    """Predict the traced program's run on ``machine`` (see the package's docstring).
    The trace's program is compiled once per semantics and kept on ``trace``; ``engine``
    (the session's, if there is one) evaluates the flop time and the collectives'
    costs. ``cancel``: an event another thread may set to stop the replay part-way
    (:func:`parasol_core.base.budget.cancelled_by`; an outer ``cancelled_by`` block
    stops it too): it is polled between the replay's steps, in the Python compiler's
    loop and in the flow engine's run, and :class:`~parasol_core.base.budget.Cancelled`
    is raised at the first poll that finds it set. Raises TraceError (bad trace),
    ReplayError (the model cannot run it), DeadlockError, BudgetError (past the limits
    in force), Cancelled.

    For a one-shot replay of a large trace (docs/replay.md, "Memory"):
    ``operations=False`` gives the makespan and the per-rank figures only (the result's
    per-operation columns are empty; the same per-rank figures, bit for bit), and
    ``release=True`` lets go of each stage once the next has what it needs: the trace's
    columns once it is compiled (:meth:`Trace.release`: the trace cannot be replayed
    again), the program's nodes once the flow engine has its phase; the program is not
    kept on the trace. A trace with receives from any source is matched by several runs
    (:mod:`.matching`) and keeps its columns."""
    with budget.cancelled_by(cancel):
        return _replay(machine, trace, options or ReplayOptions(), engine, operations, release)


def _replay(machine: Machine, trace: Trace, options: ReplayOptions, engine: Engine | None,
            operations: bool = True, release: bool = False) -> ReplayResult:  # fmt: skip
    poll = budget.check_deadline  # a cancel (or a deadline) stops the replay here
    poll()
    if trace.released >= 0:
        raise ReplayError("this trace's columns were let go by a replay (release=True): "
                          "read it again to replay it")  # fmt: skip
    try:
        check_sharing(options.sharing)
    except ValueError as e:
        raise ReplayError(str(e)) from None
    sem = options.semantics()
    if options.flop is None:  # the model's: the same expression on the traced machine
        options = replace(options, flop=flop_for(machine, options.traced_on))
    check_world(trace)  # only MPI_COMM_WORLD: refuse what cannot be (about 1 ms)
    hosts = hosts_of(machine, options, trace.ranks)
    engine = engine if engine is not None else Engine(machine)
    if trace.timed:  # measured seconds, scaled from the traced machine to this one
        per_flop = time_scale(machine, engine, hosts, options)
    else:
        per_flop = flop_times(machine, engine, hosts, options.flop)
    hw = hardware_of(machine)
    table = RouteTable(hw)
    matched = not wildcards(trace).size  # no receive from any source: one run
    once = release and not operations and matched
    _charge(len(trace), None, once, len(hw.links), trace.ranks)  # before compiling: by its actions
    if release and matched:
        return _replay_once(machine, engine, hw, table, hosts, per_flop, trace, sem, options,
                            operations)  # fmt: skip

    def run(tr: Trace) -> tuple[np.ndarray, np.ndarray, ReplayResult | Exception]:
        poll()
        prog = compile_program(tr, sem)
        poll()
        end, t0, (events, polls), delay, path = _run_program(
            machine, engine, hw, table, hosts, per_flop, prog, options.sharing, len(tr)
        )
        if np.isnan(end).any():
            return prog.op_start, end, _deadlock(tr, prog, end)
        if not np.isfinite(end).all():
            raise ReplayError("the predicted times overflow (past 1.8e308 s): a link or a "
                              "processor timing is too slow for this trace")  # fmt: skip
        return prog.op_start, end, ReplayResult.of(tr, prog, hosts, t0, end, delay, events, polls,
                                                   operations=operations, path=path)  # fmt: skip

    if matched:
        _, _, outcome = run(trace)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    # receives from any source: matched by the simulated times, to a fixed point
    seconds = trace.flops * per_flop[trace.rank]
    _, outcome = settle(trace, seconds, (sem, options.flop, options.sharing), run, sem.eager)
    return outcome


def _replay_once(machine: Machine, engine: Engine, hw: Any, table: RouteTable,
                 hosts: np.ndarray, per_flop: np.ndarray, trace: Trace, sem: Semantics,
                 options: ReplayOptions, operations: bool) -> ReplayResult:  # fmt: skip
    """One replay that lets each stage go once the next has what it needs: the trace's
    columns after compiling (``operations=False``), the program's nodes once the flow
    engine has its phase, the phase after the run. The same result as :func:`run`'s."""
    poll = budget.check_deadline
    poll()
    actions = len(trace)
    # the per-rank figures only: the trace's columns let go as soon as the compiler has
    # its inputs (a trace the compiler finds bad is read again, for its error's words)
    early = not operations and trace.source is not None
    prog = compile_program(trace, sem, keep=False, release=early)
    if prog is None:
        prog = compile_program(_read_again(trace), sem, keep=False)
    if not operations:
        trace.release()
    _narrow(prog)
    poll()
    end, t0, (events, polls), delay, path = _run_program(
        machine,
        engine,
        hw,
        table,
        hosts,
        per_flop,
        prog,
        options.sharing,
        actions,
        consume=True,
        once=not operations,
    )
    if np.isnan(end).any():
        if trace.released >= 0:  # worded from the trace read again, its program compiled again
            again = _read_again(trace)
            raise _deadlock(again, compile_program(again, sem), end)
        raise _deadlock(trace, compile_program(trace, sem), end)
    if not np.isfinite(end).all():
        raise ReplayError("the predicted times overflow (past 1.8e308 s): a link or a "
                          "processor timing is too slow for this trace")  # fmt: skip
    return ReplayResult.of(trace, prog, hosts, t0, end, delay, events, polls,
                           operations=operations, path=path)  # fmt: skip


def _narrow(prog: Program) -> None:
    """A program's per-action columns in the fewest bytes that hold them, for the rest
    of a one-shot replay: node numbers as int32 (when they fit), of ``op_flops`` only
    whether it is > 0 (all the result reads of it), and no ``op_start`` (None: an
    action starts where its rank's previous one ended, the first at 0, so the result
    takes each start from the ``op_end`` before it)."""
    prog.op_start = None  # type: ignore[assignment]
    if prog.nodes < 2**31 - 1:  # (no copy when the compiler made them so)
        prog.op_end, prog.op_msg = (a.astype(np.int32, copy=False) for a in (
            prog.op_end, prog.op_msg))  # fmt: skip
    if prog.op_flops.dtype != bool:
        prog.op_flops = prog.op_flops > 0


def _charge(actions: int, nodes: int | None, once: bool, links: int, ranks: int) -> None:
    """A replay's memory against the budget in force (tifile.replay_memory: by its
    actions and ranks, and once compiled by its program's nodes too), before the work it charges;
    without a memory budget, the program's nodes against the count of messages."""
    limit = budget.current().memory
    if limit is None:
        if nodes is not None:
            budget.check_phase("replaying the trace", nodes, hint=f"{counted(nodes, 'node')} for "
                               f"{counted(actions, 'action')}", flow=True, links=links)  # fmt: skip
        return
    need = replay_memory(actions, nodes, once, ranks) + links * budget.FLOW_BYTES_PER_LINK
    if need > limit:
        per = ONCE_BYTES_PER_ACTION if once else BYTES_PER_ACTION
        how = (f"{'a one-shot' if once else 'a kept'} replay, "
               f"{counted(per, 'byte', grouped=False)} an action and "
               f"{BYTES_PER_RANK:,} a rank")  # fmt: skip
        told = f"replaying the trace ({counted(actions, 'action')}"
        told += f", {counted(nodes, 'program node')}; {how})" if nodes is not None else f"; {how})"
        raise budget.MemoryBudgetError(told, need, limit, budget.current().source)


def _read_again(trace: Trace) -> Trace:
    """The trace read again from where it was read (:attr:`Trace.source`)."""
    from parasol_core.replay.reading import load_trace

    if trace.source is None:
        raise ReplayError("the trace's columns were let go and it has no file to read again")
    return load_trace(*trace.source)


def _run_program(machine: Machine, engine: Engine, hw: Any, table: RouteTable, hosts: np.ndarray,
                 per_flop: np.ndarray, prog: Program, sharing: str, actions: int,
                 consume: bool = False, once: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, tuple[int, int], np.ndarray,
                            tuple[np.ndarray, np.ndarray, np.ndarray]]:  # fmt: skip
    """The program through the flow engine: each node's end (NaN: never), its start,
    the engine's events and polls for a stop, each node's delay, and for the result's
    waiting (:class:`ReplayResult` ``path``) each node's critical predecessor (the flow
    engine's ``crit``) and its source and destination ranks (16-bit up to 32,767 ranks). ``consume``: the
    program is this replay's alone (not kept on a trace): its node columns are let go
    once the phase has what it needs of them (what stays: the per-action columns, the
    count of transfers); ``once``: charged as a one-shot replay (:func:`_charge`)."""
    poll = budget.check_deadline
    costs = model_costs(machine, engine, prog.cost_keys)
    n = prog.nodes
    src, dst = hosts[prog.src], hosts[prog.dst]
    with np.errstate(all="ignore"):
        delay = prog.flops * per_flop[prog.src]
        if prog.cost_keys:
            has = prog.cost >= 0
            delay[has] += costs[prog.cost[has]]
    if not np.isfinite(delay).all():
        i = int(np.argmax(~np.isfinite(delay)))
        raise ReplayError(f"rank {int(prog.src[i])}: a computation's time overflows "
                          f"({counted(prog.flops[i], 'flop', spec='g')} at "
                          f"{per_flop[prog.src[i]]:g} s)")  # fmt: skip
    # each node's ranks, for the result: an operation communicates while a message to or
    # from its rank moves on its critical path (result._waiting); 16-bit up to 32,767
    # ranks (4 bytes a node for both: the flow engine's run, the peak, holds them)
    narrow = np.int16 if hosts.shape[0] <= np.iinfo(np.int16).max else np.int32
    ends = (prog.src.astype(narrow), prog.dst.astype(narrow))
    if consume:
        prog.transfers = int(prog.transfer.sum())
        prog.src = prog.dst = prog.flops = prog.cost = prog.transfer = None  # type: ignore[assignment]
    _charge(actions, n, once, len(hw.links), int(hosts.shape[0]))
    ids = _routes(table, src, dst, machine)
    poll()
    msgs = MessageArrays(src, dst, prog.nbytes, None, prog.after_ptr, prog.after_idx, delay)
    del src, dst, delay  # the messages hold their own (delay: a copy)
    if consume:
        prog.nbytes = prog.after_ptr = prog.after_idx = None  # type: ignore[assignment]
    with np.errstate(all="ignore"):
        phase = Phase.of(table, ids, msgs)
        if consume:  # the flow engine reads the phase's waits and dependents, not these
            msgs.src = msgs.dst = msgs.after_ptr = msgs.after_idx = None  # type: ignore[assignment]
            if not msgs.start.any():  # every node's start 0 (its delay counts): one zero
                msgs.start = np.broadcast_to(np.zeros(1), msgs.start.shape)
        del ids
        usage = usage_of(table, phase.route_ids, table.options)
        if consume:  # what the kernel does not read of the phase let go
            phase = flow.lighten(phase, usage)
        poll()
        # each node's critical predecessor (4 bytes a node): the result's waiting
        out = flow.run(phase, usage, sharing, consume=consume, crit=True)
        del phase, usage
    delay = msgs.delay
    return out.end, out.t0, (int(out.events), int(out.polls)), delay, (out.crit, *ends)


def _routes(table: RouteTable, src: np.ndarray, dst: np.ndarray, machine: Machine) -> np.ndarray:
    """Route ids, one route plotted per distinct pair of processors."""
    base = int(max(src.max(initial=0), dst.max(initial=0))) + 1
    key = src * base + dst
    pairs, inverse = np.unique(key, return_inverse=True)
    try:
        ids = table.add_many(pairs // base, pairs % base)
    except RoutingError as e:
        raise ReplayError(f"a route of the replay: {e}") from None
    return ids[inverse]


def _deadlock(trace: Trace, prog: Program, end: np.ndarray) -> DeadlockError:
    """The ranks that never finish and the operation each is stuck in."""
    stuck: dict[int, int] = {}
    lines = []
    for r in range(trace.ranks):
        for i in range(int(trace.first[r]), int(trace.first[r + 1])):
            e = int(prog.op_end[i])
            if e >= 0 and math.isnan(end[e]):
                stuck[r] = i
                msg = int(prog.op_msg[i])
                what = KINDS[int(trace.kind[i])]
                if what == "waitall" and msg >= 0 and not math.isnan(end[msg]):
                    # its first message came: the first of those its end awaits that did not
                    deps = prog.after_idx[prog.after_ptr[e] : prog.after_ptr[e + 1]]
                    never = [int(d) for d in deps if prog.transfer[d] and math.isnan(end[d])]
                    msg = never[0] if never else msg
                peer = int(trace.peer[i])
                on = ""
                if msg >= 0 and math.isnan(end[msg]):
                    a, b = int(prog.src[msg]), int(prog.dst[msg])
                    other = b if a == r else a
                    on = f", waiting for rank {other}"
                elif peer >= 0:
                    on = f", waiting for rank {peer}"
                lines.append(f"rank {r} in {what} at {trace.where(i)}{on}")
                break
    head = f"the program deadlocks: {len(stuck)} of {counted(trace.ranks, 'rank')} never finish"
    return DeadlockError(head + ": " + "; ".join(lines[:20]) + (
        f"; and {len(lines) - 20} more" if len(lines) > 20 else ""), stuck)  # fmt: skip


__all__ = [
    "DEFAULT_FLOP",
    "GLOBAL_FLOP",
    "FlopError",
    "ReplayError",
    "ReplayOptions",
    "TraceError",
    "flop_for",
    "replay",
]
