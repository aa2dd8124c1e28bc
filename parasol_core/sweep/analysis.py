"""What a sweep's rows say: each axis's effect on an answer ("what dominates"), the
answer over two axes as a table (a heat map), the rows' positions on the axes, and a
sweep file written back from its parts (PIUI builds one from the open model).

An axis's **effect** on an answer is the spread of its main effect: the answer
averaged over the rows at each of the axis's values, and the largest of those averages
less the smallest. Over a full grid every value is averaged over the same variants of
the other axes, so the effects compare directly; over a sample they are estimates.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from parasol_core.sweep.spec import SweepSpec
from parasol_core.sweep.variants import variants
from parasol_core.sweep.worker import Row


def positions(spec: SweepSpec) -> dict[int, tuple[int, ...]]:
    """Variant index -> its position on each axis."""
    return {v.index: v.positions for v in variants(spec)}


def _answer(row: Row, k: int) -> float | None:
    value = row.answers[k]
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def effects(spec: SweepSpec, rows: Sequence[Row], k: int) -> list[tuple[str, float]]:
    """Each axis's effect on answer ``k`` (see the module), largest first; an axis with
    one value, or rows with no answer, has effect 0."""
    where = positions(spec)
    out = []
    for i, axis in enumerate(spec.axes):
        sums = np.zeros(len(axis.values))
        counts = np.zeros(len(axis.values))
        for row in rows:
            value = _answer(row, k)
            if value is not None and row.index in where:
                p = where[row.index][i]
                sums[p] += value
                counts[p] += 1
        seen = counts > 0
        means = sums[seen] / counts[seen]
        out.append((axis.name, float(means.max() - means.min()) if means.size > 1 else 0.0))
    return sorted(out, key=lambda e: -e[1])


def table(spec: SweepSpec, rows: Sequence[Row], k: int, x: int, y: int) -> np.ndarray:
    """Answer ``k`` averaged over the rows at each pair of values of axes ``x`` and ``y``:
    an array of ``len(axis y values) x len(axis x values)``, NaN where no row is."""
    where = positions(spec)
    nx, ny = len(spec.axes[x].values), len(spec.axes[y].values)
    sums, counts = np.zeros((ny, nx)), np.zeros((ny, nx))
    for row in rows:
        value = _answer(row, k)
        if value is not None and row.index in where:
            p = where[row.index]
            sums[p[y], p[x]] += value
            counts[p[y], p[x]] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


# --------------------------------------------------------------------------- writing


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def sweep_text(axes: Sequence[Mapping[str, Any]], answers: Sequence[Mapping[str, Any]],
               sample: Mapping[str, Any] | None = None, budget: Mapping[str, Any] | None = None,
               model: str | None = None) -> str:  # fmt: skip
    """A sweep file from its parts: each axis and answer a mapping of its keys as the
    file writes them (``{"set": "pt(1).iga", "log": [1e-7, 1e-5, 5]}``)."""
    lines = [] if model is None else [f"model = {_toml(model)}", ""]
    for title, tables in (("axis", axes), ("answer", answers)):
        for t in tables:
            lines.append(f"[[{title}]]")
            lines.extend(f"{k} = {_toml(v)}" for k, v in t.items())
            lines.append("")
    for title, t in (("sample", sample), ("budget", budget)):
        if t:
            lines.append(f"[{title}]")
            lines.extend(f"{k} = {_toml(v)}" for k, v in t.items())
            lines.append("")
    return "\n".join(lines)
