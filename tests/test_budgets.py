"""Budgets of the core and the command line (issue 26, rule 2): work whose size grows
with an input is estimated from its formula before it is done and refused past its
limit, with a message naming both numbers; text-to-diagnostics paths stay O(n log n).

Each case is measured: a refusal comes at once, and growth is timed at two sizes."""

from __future__ import annotations

import time
from pathlib import Path

from parasol_core.syntax.parser import loads
from parasol_core.validate import validate

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "sample_models" / "grid4x4.machine"
ANCHOR = "            sind = 3e-05  # estimate\n"


def unknown_timings(n: int) -> str:
    """The 4 x 4 grid with ``n`` unknown timing keys in its processor."""
    keys = "".join(f"            zzq{i} = 1e-06\n" for i in range(n))
    return GRID.read_text().replace(ANCHOR, ANCHOR + keys, 1)


def _check_seconds(text: str) -> tuple[float, int]:
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        diagnostics = validate(loads(text))
        best = min(best, time.perf_counter() - start)
    return best, sum(d.is_error for d in diagnostics)


def test_check_of_many_unknown_keys_grows_near_linearly() -> None:
    """Every diagnostic used to find its line by a scan of its table: quadratic (5k
    keys 0.55 s, 20k 5.3 s). 4x the keys must now cost well under 16x the time."""
    small, large = unknown_timings(5_000), unknown_timings(20_000)
    t_small, errors_small = _check_seconds(small)
    t_large, errors_large = _check_seconds(large)
    assert errors_small == 5_000 and errors_large == 20_000
    # linear is 4x; allow a noisy shared machine up to 8x (quadratic was ~10-16x)
    assert t_large < max(8 * t_small, 0.5), (t_small, t_large)
    assert t_large < 5.0


def test_unknown_keys_keep_their_lines() -> None:
    text = unknown_timings(3)
    lines = text.splitlines()
    diagnostics = [d for d in validate(loads(text)) if "zzq" in d.message]
    assert [lines[d.line - 1].strip() for d in diagnostics] == [
        f"zzq{i} = 1e-06" for i in range(3)
    ]
    assert all(d.column == 13 for d in diagnostics)
