"""Predicting a whole MPI program: a traced run replayed on a machine model (issue 31;
docs/replay.md).

The public API::

    from parasol_core.replay import load_trace, replay, ReplayOptions

    trace = load_trace("run.txt")                    # read once (an index file, or one file)
    result = replay(machine, trace, ReplayOptions(sharing="cm02"))
    result.makespan, result.finish                   # seconds; per rank
    result.computation, result.communication, result.waiting   # per rank, seconds
    result.start, result.end, result.rank, result.kind, result.peer, result.nbytes,
    result.file, result.line                         # per operation (numpy columns)
    result.to_json(), result.chrome_trace()          # JSON; Chrome trace-event timeline

* :func:`load_trace` (:mod:`.reading`) reads a SimGrid time-independent trace
  (``smpirun -trace-ti``, :mod:`.tifile`) or an OTF2 archive (:mod:`.otf2file`) into
  a :class:`Trace` of numpy columns; bad input raises :class:`TraceError` naming the
  file and line.
* :func:`replay` (:mod:`.run`) compiles the trace into a program of messages with
  ``after`` dependencies and delays (:mod:`.program`: MPI's matching, eager and
  rendezvous sends, collectives by SMPI's algorithms or the model's ``mpi`` costs) and
  runs it through the flow engine (:mod:`parasol_core.simulate.flow`) under any
  sharing rule. The compiled program is kept on the trace (one per
  :class:`Semantics`), so replaying the same trace after a timing changed costs the
  network trace only: parse once, replay many. :class:`ReplayOptions` says where the
  ranks run (``virtual``, ``hostfile``), what a flop costs (``flop``, an expression of
  the processor's timings), ``collectives`` (``network`` or ``model``), ``eager``,
  ``algorithms`` and ``sharing``.
* ``replay(..., cancel=event)`` stops part-way once another thread sets ``event``
  (a ``threading.Event``): it raises :class:`parasol_core.base.budget.Cancelled` at its
  next poll (between its steps, in the Python compiler every 4,096 actions, in the flow
  run every 256 events in Python and in C every 8,192 units of its work), the mechanism of an estimator
  request's deadline (``budget.check_deadline``); a caller's own
  ``budget.cancelled_by(event)`` block stops every replay within it too (docs/replay.md,
  "Stopping a replay part-way").
* ``replay(..., release=True, operations=False)`` is a one-shot replay (what
  ``parasol-model replay`` runs without ``--json`` or ``--timeline``): each stage let
  go once the next has it (the trace's columns, :meth:`Trace.release`; the program's
  nodes), the per-rank figures only, in about two thirds of the memory
  (docs/replay.md, "Memory"; :func:`.tifile.replay_memory` charges it).
* A program that cannot finish raises :class:`DeadlockError` naming each stuck rank
  and the operation it waits in; one the model cannot run, :class:`ReplayError`.

It stands on the flow engine (``simulate``), routing (``topology``) and the expression
engine (``expr``); ``parasol-model replay`` (``cli``) and PIUI's Program window use it.
"""

FLOOR = 6

from parasol_core.replay.program import (  # noqa: E402
    ALGORITHMS,
    DEFAULT_ALGORITHMS,
    EAGER_BYTES,
    DeadlockError,
    Program,
    Semantics,
    compile_program,
)
from parasol_core.replay.reading import load_trace  # noqa: E402
from parasol_core.replay.result import ReplayResult  # noqa: E402
from parasol_core.replay.run import (  # noqa: E402
    DEFAULT_FLOP,
    GLOBAL_FLOP,
    FlopError,
    ReplayError,
    ReplayOptions,
    flop_for,
    hosts_of,
    replay,
)
from parasol_core.replay.tifile import KINDS, Trace, TraceError  # noqa: E402

__all__ = [
    "ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "DEFAULT_FLOP",
    "EAGER_BYTES",
    "KINDS",
    "DeadlockError",
    "FlopError",
    "GLOBAL_FLOP",
    "Program",
    "ReplayError",
    "ReplayOptions",
    "ReplayResult",
    "Semantics",
    "Trace",
    "TraceError",
    "compile_program",
    "flop_for",
    "hosts_of",
    "load_trace",
    "replay",
]
