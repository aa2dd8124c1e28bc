"""How long the budgets and guards take to refuse what they refuse, and the largest work
they let through: the figures the tests no longer compare with a constant.

The tests (tests/test_bad_input.py, tests/test_budgets.py, tests/test_reliability.py,
tests/test_expr_evaluate.py) hold each refusal to a baseline measured in the same test,
or show by the memory it took that nothing was built (issue 33, item 8: a time compared
with a constant fails on a busy machine). The times themselves are here, each beside
the limit the tests once asserted, for a person to read on a quiet machine:

* a 50 MB line in a model (str and bytes), and one pass over the same text (the
  baseline the test uses);
* 100,000-deep nesting in an expression (parentheses, minus, calls, left sums);
* 10,000 ``begin processor`` never closed;
* ``alltoall`` on a 32 x 32 x 32 torus (1.07e9 messages) refused by the core;
* a million corner-to-corner routes on the GCel (47 million route steps) refused;
* the overflow guards (``2 ** 10 ** 10`` and three more);
* ``generate hypercube 16``, the largest hypercube within the generator's budget.

Each figure is the median of ``--repeat`` runs.

    .venv/bin/python benchmarks/bench_refusals.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests' model texts

from modeltext import gcel_with_torus  # noqa: E402

from parasol_core.base import budget  # noqa: E402
from parasol_core.expr.evaluate import evaluate  # noqa: E402
from parasol_core.syntax.expression import parse_expression  # noqa: E402
from parasol_core.syntax.loader import loads  # noqa: E402
from parasol_core.topology.generators import generate  # noqa: E402
from parasol_core.topology.index import index_of  # noqa: E402
from parasol_core.topology.virtual import hardware_of  # noqa: E402

SAMPLES = ROOT / "sample_models"
SMALL = (SAMPLES / "grid4x4.machine").read_text()


def seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            fn()
        except Exception:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat

    rows: list[tuple[str, float, str]] = []

    def row(what: str, fn: Callable[[], object], limit: str) -> None:
        rows.append((what, seconds(fn, repeat), limit))
        print(f"{what:<52} {rows[-1][1] * 1000:10.1f} ms   (once asserted: {limit})", flush=True)

    big = "y" * 50_000_000
    line = (
        SMALL.replace("# a comment", "# " + big) if "# a comment" in SMALL else big + "\n" + SMALL
    )
    row("one pass over 50 MB (the baseline)", lambda: line.encode("utf-8"), "-")
    row("refuse a 50 MB line (str)", lambda: loads(line), "< 2 s")
    data = line.encode()
    row("refuse a 50 MB line (bytes)", lambda: loads(data), "< 2 s")
    row("load the 4 x 4 grid (the small baseline)", lambda: loads(SMALL), "-")
    n = 100_000
    for name, text in [
        ("parentheses", "(" * n + "1" + ")" * n),
        ("minus", "-" * n + "1"),
        ("calls", "sqrt(" * n + "1" + ")" * n),
        ("left sums", " + ".join(["1"] * n)),
    ]:
        row(f"refuse {n:,}-deep {name}", lambda text=text: parse_expression(text), "< 15 s")
    sections = "begin machine\n" + "begin processor\n" * 10_000
    row("refuse 10,000 open sections", lambda: loads(sections), "< 2 s")

    from parasol_core.simulate.phases import simulate

    torus = loads(gcel_with_torus((32, 32, 32)))
    row("refuse alltoall on a 32^3 torus (core)",
        lambda: simulate(torus, pattern="alltoall", bytes=1024), "< 2 s")  # fmt: skip
    index = index_of(hardware_of(loads((SAMPLES / "parsytec-gcel.machine").read_text())))
    src, dst = np.ones(1_000_000, dtype=np.int64), np.full(1_000_000, 512, dtype=np.int64)
    row("refuse 1,000,000 GCel routes (47M steps)", lambda: index.routes(src, dst), "< 1 s")
    guards = ["2 ** 10 ** 10", "1 << 10 ** 9", "3 ** 9223372036854775807", "7 << 2 ** 40"]
    row("the four overflow guards", lambda: [evaluate(t, None) for t in guards], "< 0.5 s")
    row("generate hypercube 16 (65,536 processors)",
        lambda: generate("hypercube", [16], 1e-6, 1e-8), "< 30 s")  # fmt: skip
    assert budget.MAX_ROUTE_STEPS == 10_000_000


if __name__ == "__main__":
    main()
