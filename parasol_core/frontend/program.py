"""A traced program as PIUI's Program window shows it: the trace read once, its replay on
a model (``parasol_core.replay``) turned into what the window draws — the predicted
time before and after an edit in words, each rank's breakdown, the timeline's kinds and
the hover's words for an operation, the "what dominates" bars.

Qt-free, so that what the window says is tested without a window.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from parasol_core.base import budget
from parasol_core.base.words import counted
from parasol_core.frontend.timeline import COMPUTATION, RECEIVING, SENDING, WAITING, Timeline
from parasol_core.model import Machine
from parasol_core.replay import (
    GLOBAL_FLOP,
    KINDS,
    FlopError,
    ReplayOptions,
    ReplayResult,
    Trace,
    TraceError,
    flop_for,
    load_trace,
    replay,
)
from parasol_core.replay import dominates as _dominates
from parasol_core.syntax.annotations import NameTable
from parasol_core.topology.names import table_of

__all__ = [
    "TRACE_FILTER",
    "Cancelled",
    "FlopError",
    "GLOBAL_FLOP",
    "Prediction",
    "Program",
    "TraceError",
    "PLACEMENT_IN_ORDER",
    "before_after_text",
    "dominance",
    "dominance_rows",
    "dominance_summary",
    "flop_for",
    "saved_text",
    "predict",
    "placement_choices",
    "placement_entries",
    "read_program",
    "read_traced_on",
    "seconds_text",
]

TRACE_FILTER = (
    "Program traces (*.txt *.trace *.ti *.otf2);;SimGrid time-independent traces "
    "(*.txt *.trace *.ti);;OTF2 archives (*.otf2);;All files (*)"
)

Cancelled = budget.Cancelled  # a replay (or what dominates) stopped part-way


@dataclass
class Program:
    """A trace read from a file, with the options it is replayed under; ``flop`` None:
    a flop's time is the model's (:func:`flop_for`).

    Where ranks run (``parasol-model replay --virtual`` / ``--hostfile``): ``virtual``, a
    virtual topology id of the model on screen whose mapping places rank r where virtual
    processor r + 1 is, or ``hostfile``, a file of processors (numbers or names); neither:
    rank r on the r-th compute processor. Both are about the model's processors, so
    :meth:`another_model` forgets them. ``traced_on`` (``--traced-on``): the model of the
    machine an OTF2 trace was taken on, read from ``traced_on_path``; it is about the
    trace, so it stays when another model is opened and goes with the trace."""

    path: Path
    trace: Trace
    options: ReplayOptions
    flop: str | None = None
    virtual: int | None = None
    hostfile: Path | None = None
    traced_on: Machine | None = None
    traced_on_path: Path | None = None

    def model_flop(self, machine: Machine) -> str:
        """The flop expression used when none is chosen (``flop`` None): the model's,
        one that the traced machine's model (``traced_on``) can evaluate too."""
        return flop_for(machine, self.traced_on)

    def options_for(self, machine: Machine) -> ReplayOptions:
        flop = self.model_flop(machine) if self.flop is None else self.flop
        options = replace(self.options, flop=flop)
        if self.virtual is not None or self.hostfile is not None:
            options = replace(options, virtual=self.virtual, hostfile=self.hostfile)
        if self.traced_on is not None:
            options = replace(options, traced_on=self.traced_on)
        return options

    def another_model(self) -> None:
        """Another model opened: the placement chosen on the one before goes."""
        self.virtual = None
        self.hostfile = None

    @property
    def timed(self) -> bool:
        """Its computations are measured seconds (OTF2), not flops (a TI trace)."""
        return bool(getattr(self.trace, "timed", False))

    @property
    def title(self) -> str:
        ranks, actions = counted(self.trace.ranks, "rank"), counted(len(self.trace), "action")
        return f"{self.path.name} ({ranks}, {actions})"


def read_program(path: str | Path, options: ReplayOptions | None = None) -> Program:
    """Read a trace (TraceError, OSError on bad input, naming where)."""
    return Program(Path(path), load_trace(path), options or ReplayOptions())


# The placement chooser's first entry: rank r on the r-th compute processor
PLACEMENT_IN_ORDER = "in order: rank r on the r-th compute processor"


def placement_choices(machine: Machine) -> list[tuple[int, str]]:
    """The virtual topologies a trace's ranks can be placed by: (id, words), each with its
    name or routing and how many processors its mapping places."""
    out = []
    for v in machine.virtuals:
        if v.id is None:
            continue
        what = v.name or v.routing or ""
        words = f"virtual topology {v.id}" + (f" ({what})" if what else "")
        out.append((v.id, f"{words}: {len(v.mapping):,} mapped"))
    return out


Placement = tuple[str, object]
"""Where ranks run, as a chooser's entry means it: ``("order", None)``, ``("virtual",
ID)`` or ``("hostfile", Path)``."""


def placement_entries(machine: Machine, virtual: int | None,
                      hostfile: Path | None) -> tuple[list[tuple[str, Placement]], Placement]:  # fmt: skip
    """A placement chooser's entries on ``machine`` (in order, each virtual topology, the
    hostfile chosen if any), each as (words, :data:`Placement`), and the entry chosen
    now: ``hostfile``, else ``virtual`` (listed as not in the model when it is gone: the
    replay says so), else in order. The Program window and the sweep dialog show it."""
    entries: list[tuple[str, Placement]] = [(PLACEMENT_IN_ORDER, ("order", None))]
    entries += [(words, ("virtual", vid)) for vid, words in placement_choices(machine)]
    chosen: Placement = ("order", None)
    if hostfile is not None:
        chosen = ("hostfile", hostfile)
        entries.append((f"hostfile {hostfile.name}", chosen))
    elif virtual is not None:
        chosen = ("virtual", virtual)
        if chosen not in [data for _, data in entries]:
            entries.append((f"virtual topology {virtual} (not in the model)", chosen))
    return entries, chosen


def read_traced_on(path: str | Path) -> Machine:
    """The model of the machine a trace was taken on (``--traced-on``); ValueError naming
    the file and why when it cannot be read or has errors."""
    from parasol_core.base.diagnostics import ModelSyntaxError
    from parasol_core.base.limits import ValueRangeError, read_model_bytes
    from parasol_core.syntax.loader import decode, loads

    try:
        data = read_model_bytes(path)
        return loads(decode(data, path), str(path), getattr(data, "line_length", None))
    except ValueRangeError as e:
        raise ValueError(str(e)) from None
    except ModelSyntaxError as e:
        raise ValueError(e.format()) from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None


@dataclass
class Prediction:
    """A replay's answer as the window shows it."""

    makespan: float
    finish: np.ndarray
    computation: np.ndarray
    communication: np.ndarray
    waiting: np.ndarray
    timeline: Timeline
    describe: Callable[[int], str]
    # each rank's hardware processor, and its words: ``5``, or ``5 (Tremblay)`` where
    # the topology keeps the platform's host names (issue 36)
    host: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    names: NameTable | None = None

    def processor_text(self, rank: int) -> str:
        p = int(self.host[rank])
        name = self.names.name(p) if self.names is not None else None
        return f"{p} ({name})" if name is not None else str(p)


def predict(machine: Machine, program: Program,
            cancel: threading.Event | None = None) -> Prediction:  # fmt: skip
    """Replay ``program`` on ``machine`` (a copy the caller does not change meanwhile).
    ``cancel`` set (by another thread: a newer edit): :class:`Cancelled`, part-way
    through the replay (``replay``'s ``cancel``)."""
    result = replay(machine, program.trace, program.options_for(machine), cancel=cancel)
    return prediction_of(result, program, table_of(machine.hardware()))


def prediction_of(result: ReplayResult, program: Program,
                  names: NameTable | None = None) -> Prediction:  # fmt: skip
    """The window's view of a replay: the breakdown as it is, and the timeline's spans
    (:func:`spans`) with the hover's words; ``names``: the hardware topology's names of
    its processors (the ranks' processors are shown with them)."""
    rank, code, start, end, op = spans(result)
    named = names if names is not None and len(names) else None

    def describe(i: int) -> str:
        return operation_text(result, int(op[i]), int(code[i]), named)

    return Prediction(result.makespan, result.finish, result.computation,
                      result.communication, result.waiting,
                      Timeline(rank, code, start, end, result.ranks), describe,
                      result.host, named)  # fmt: skip


_COMPUTE = KINDS.index("compute")


def spans(result: ReplayResult) -> tuple[np.ndarray, ...]:
    """The timeline's spans of a replay: each operation's waiting first (its seconds not
    computing nor moving a message of its own on its critical path), its computation
    last (a ``compute`` is all computation; a reduction computes after its messages),
    and between them its communication: what it received (messages to its rank on its
    critical path, ``receiving_op``: a reduce's from its children, a waitall's
    receives) and what it sent, in the order they began (``receives_first``). Spans of
    no length are left out. Returns the columns ``rank, code, start, end, operation``."""
    start, end = result.start, result.end
    wait = result.waiting_op
    comp = np.where(result.kind == _COMPUTE, end - start, result.computation_op)
    talk0, talk1 = start + wait, end - comp
    got = result.received()
    first = result.receives_first
    cut = np.where(first, talk0 + got, talk1 - got)  # between receiving and sending
    parts = (
        (start, talk0, np.full(len(start), WAITING)),
        (talk0, cut, np.where(first, RECEIVING, SENDING)),
        (cut, talk1, np.where(first, SENDING, RECEIVING)),
        (talk1, end, np.full(len(start), COMPUTATION)),
    )
    ops = np.arange(len(start))
    cols: list[list[np.ndarray]] = [[], [], [], [], []]
    for a, b, code in parts:
        keep = b > a
        for col, values in zip(cols, (result.rank[keep], code[keep], a[keep], b[keep],
                                      ops[keep])):  # fmt: skip
            col.append(values)
    return tuple(np.concatenate(c) for c in cols)


def operation_text(result: ReplayResult, i: int, code: int | None = None,
                   names: NameTable | None = None) -> str:  # fmt: skip
    """The hover's words for operation ``i``: its rank (and the name of the host it runs
    on, where the topology names it), action, peer and bytes, its times, and where the
    trace says it."""
    kind = KINDS[int(result.kind[i])]
    r = int(result.rank[i])
    host = names.name(int(result.host[r])) if names is not None else None
    words = [f"rank {r}" + (f" on {host}" if host is not None else "") + f": {kind}"]
    peer = int(result.peer[i])
    if peer in (-555, -333):
        words.append("from any source")
    elif peer >= 0:
        words.append(("to " if kind in ("send", "isend") else "from " if kind in (
            "recv", "irecv") else "peer ") + str(peer))  # fmt: skip
    nbytes = float(result.nbytes[i])
    if nbytes > 0:
        words.append(f"{nbytes:,.0f} B")
    part = f" ({KIND_WORDS[code]})" if code is not None and kind != "compute" else ""
    start, end = float(result.start[i]), float(result.end[i])
    waited = ""
    late = int(result.waited_for[i])
    if late >= 0 and result.waiting_op[i] > 0:  # the rank its wait leads back to
        waited = f", waited {seconds_text(float(result.waiting_op[i]))} for rank {late}"
    return (f"{' '.join(words)}{part}, {seconds_text(start)} – {seconds_text(end)} "
            f"({seconds_text(end - start)}){waited}, {result.where(i)}")  # fmt: skip


KIND_WORDS = {COMPUTATION: "computing", SENDING: "sending", RECEIVING: "receiving",
              WAITING: "waiting"}  # fmt: skip


def seconds_text(x: float) -> str:
    """A time as a reader takes it in: 3 significant figures, in s, ms, µs or ns."""
    if not np.isfinite(x):
        return str(x)
    a = abs(x)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if a >= scale or unit == "ns":
            return f"{x / scale:.4g} {unit}"
    return f"{x:g} s"


def before_after_text(before: float | None, after: float) -> str:
    """``Predicted time: 1.23 s → 1.10 s (−10.6 %)``; one time when nothing changed."""
    if before is None or before == after:
        return f"Predicted time: {seconds_text(after)}"
    change = (after - before) / before * 100 if before else float("inf")
    sign = "+" if change > 0 else "−"
    return (f"Predicted time: {seconds_text(before)} → {seconds_text(after)} "
            f"({sign}{abs(change):.3g} %)")  # fmt: skip


def dominance(machine: Machine, program: Program,
              cancel: threading.Event | None = None) -> _dominates.Dominance:  # fmt: skip
    options = program.options_for(machine)
    return _dominates.dominance(
        machine, lambda m: replay(m, program.trace, options, cancel=cancel).makespan, cancel
    )


def dominance_rows(found: _dominates.Dominance) -> list[tuple[str, float]]:
    """(label, % of the time saved) of every knob that changes something, largest first."""
    return [(e.label, 100.0 * (e.saved(found.before) or 0.0)) for e in found.ranked()]


def saved_text(percent: float) -> str:
    """A bar's own figure in *What dominates*: the share of the time saved."""
    return f"{percent:.3g} %"


def dominance_summary(found: _dominates.Dominance) -> str:
    ranked = found.ranked()
    if not ranked:
        return "Nothing to make faster: the model defines no timings or links the program uses."
    top = ranked[0]
    saved = 100.0 * (top.saved(found.before) or 0.0)
    return (f"Predicted time {seconds_text(found.before)}; {top.label} 10 % faster saves the "
            f"most: {saved:.3g} %.")  # fmt: skip
