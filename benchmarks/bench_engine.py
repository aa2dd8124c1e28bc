"""How long the engine takes to bring derived values up to date after one change.

This runs on every step of a slider, so it must stay well under a millisecond. For each
sample model and each changed value, it times

* ``update``: set the timing in the model, then ``Engine.update([key])`` (re-read it,
  re-evaluate only the affected expressions);
* ``full``: set the timing, then ``Engine.reevaluate_all()`` (re-read every stored value
  an expression uses and re-evaluate every expression, in dependency order);
* ``eval all``: set the timing, update it in the engine's environment, and evaluate every
  expression (``reevaluate_all(reread=False)`` after re-reading the one value): the cost
  of evaluation alone without the graph;
* ``rebuild``: set the timing, then ``Engine.rebuild()`` (resolve every reference,
  compile and evaluate everything: what a tool without a dependency graph would do);

all in the same run, and prints the time per change and the ratios to ``update``.

    .venv/bin/python benchmarks/bench_engine.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from parasol_core.expr.engine import Engine
from parasol_core.model import Machine, Timing
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parent.parent
CASES = [
    # model, what changes, how to set it
    ("parsytec-gcel.machine", "pt(1).iga", lambda m: (m.processors[0].timings, "iga")),
    ("parsytec-gcel.machine", "tl(1)(1).speed", lambda m: (m.topologies[0].links[0], "speed")),
    ("fwi-csys.machine", "tl(1)(1).speed", lambda m: (m.topologies[0].links[0], "speed")),
]


def _setter(machine: Machine, where: Callable) -> Callable[[float], None]:
    obj, name = where(machine)
    if isinstance(obj, dict):

        def set_in_dict(mean: float) -> None:
            obj[name] = Timing(mean, obj[name].sd)

        return set_in_dict

    def set_attr(mean: float) -> None:
        setattr(obj, name, Timing(mean, getattr(obj, name).sd))

    return set_attr


def _best_times(fns: dict[str, Callable[[int], None]], repeat: int) -> dict[str, float]:
    """Seconds per call of each function: the best of several rounds, the functions taking
    turns within each round so that a busy machine slows them all alike."""
    best = {name: float("inf") for name in fns}
    for _ in range(7):
        for name, fn in fns.items():
            n = max(1, repeat // 10) if name == "rebuild" else repeat
            start = time.perf_counter()
            for i in range(n):
                fn(i)
            best[name] = min(best[name], (time.perf_counter() - start) / n)
    return best


def bench(model: str, key: str, where: Callable, repeat: int) -> dict[str, float]:
    machine = load(ROOT / "sample_models" / model)
    engine = Engine(machine)
    set_mean = _setter(machine, where)
    base = engine.value(key)
    steps = [base * (1 + 0.001 * (i % 100)) for i in range(repeat)]

    def update(i: int) -> None:
        set_mean(steps[i])
        engine.update([key])

    def full(i: int) -> None:
        set_mean(steps[i])
        engine.reevaluate_all()

    readers = engine._readers[key]

    def eval_all(i: int) -> None:
        set_mean(steps[i])
        for env_key, read in readers.items():
            engine._env[env_key] = read()
        engine.reevaluate_all(reread=False)

    def rebuild(i: int) -> None:
        set_mean(steps[i])
        engine.rebuild()

    before = engine.evaluations
    update(1)
    affected = engine.evaluations - before
    times = _best_times(
        {"update": update, "full": full, "eval_all": eval_all, "rebuild": rebuild}, repeat
    )
    return {"expressions": len(engine.keys()), "affected": affected, **times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'model':22} {'change':15} {'exprs':>5} {'evals':>5} {'update':>9} {'full':>9} "
          f"{'eval all':>9} {'rebuild':>9}   ratios to update: full, eval all, rebuild")  # fmt: skip
    for model, key, where in CASES:
        r = bench(model, key, where, args.repeat)
        u = r["update"]
        print(
            f"{model:22} {key:15} {r['expressions']:5d} {r['affected']:5d} "
            f"{u * 1e6:7.2f}us {r['full'] * 1e6:7.2f}us {r['eval_all'] * 1e6:7.2f}us "
            f"{r['rebuild'] * 1e6:7.1f}us   {r['full'] / u:.1f}x, {r['eval_all'] / u:.1f}x, "
            f"{r['rebuild'] / u:.1f}x"
        )


if __name__ == "__main__":
    main()
