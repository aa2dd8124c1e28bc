"""A flop's time on a model: the expression a replay computes with when it is given
none (docs/replay.md, "Computation"), and what a SimGrid host's speed is written from
and read into (docs/simgrid.md, "Host speeds"): one rule for the replay, the Program
window, a sweep, the estimator and the SimGrid import and export."""

from __future__ import annotations

import math

from parasol_core.expr.engine import Engine
from parasol_core.model import Machine

DEFAULT_FLOP = "(pt(T).dla + pt(T).dln) / 2"
"""A flop's seconds: the mean of a double local addition and multiplication of the
rank's processor type (``T`` stands for its id)."""

GLOBAL_FLOP = "(pt(T).dga + pt(T).dgm) / 2"
"""A flop's seconds on a model that times only global variables (the 1994 samples):
the mean of a double global addition and multiplication."""


def flop_for(*machines: Machine | None) -> str:
    """The flop expression a replay uses when none is given: :data:`DEFAULT_FLOP` when
    every compute processor type of each of ``machines`` (the target, and an OTF2
    trace's traced machine) defines its two timings, else :data:`GLOBAL_FLOP` when
    every one defines those, else :data:`DEFAULT_FLOP` (whose error then names what is
    missing)."""
    timings = [p.timings for m in machines if m is not None
               for p in m.processors if p.role != "switch"]  # fmt: skip
    for expression, names in ((DEFAULT_FLOP, ("dla", "dln")), (GLOBAL_FLOP, ("dga", "dgm"))):
        if timings and all(all(n in t for n in names) for t in timings):
            return expression
    return DEFAULT_FLOP


def flop_value(engine: Engine, expression: str, processor_type: int) -> tuple[str, object]:
    """``expression`` on processor type ``processor_type`` (``T`` standing for it): its
    text, and its value (a number, or the EvalError saying why it has none)."""
    text = expression.replace("(T)", f"({processor_type})")
    return text, engine.evaluate_text(text)


def flop_seconds(machine: Machine, engine: Engine | None = None) -> dict[int, float]:
    """Each compute processor type's seconds a flop (:func:`flop_for`'s expression),
    where that is a positive finite number."""
    expression, engine = flop_for(machine), engine or Engine(machine)
    out = {}
    for proc in machine.processors:
        if proc.id is None or proc.role == "switch":
            continue
        _, value = flop_value(engine, expression, proc.id)
        if isinstance(value, (int, float)) and 0 < value < math.inf:
            out[proc.id] = float(value)
    return out
