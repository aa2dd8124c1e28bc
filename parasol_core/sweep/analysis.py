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
    one value, or rows with no answer, has effect 0. The same whatever order the rows
    came in (a pool's): they are summed in the order of their index."""
    where = positions(spec)
    rows = sorted(rows, key=lambda r: r.index)
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


# --------------------------------------------------------------------------- a form's axes


def axis_from_form(change: str, values: str) -> dict[str, Any]:
    """An axis table from the two texts a form holds: what changes (``pt(1).iga``,
    ``tl(1)(*).speed``, ``scale arithmetic``, ``scale arithmetic pr(2)``, ``topology 1``)
    and its values (``7e-7, 1.4e-6``; ``log 1e-7 1e-5 5``; ``linear 0 1 11``;
    ``range 1 10 1``; a generated topology's separated by ``;``: ``torus 4 4 4; grid 8 8``).
    ValueError saying what is wrong; the sweep's reader checks the rest."""
    from parasol_core.base.numeric import (
        NotANumberError,
        ValueRangeError,
        is_whole,
        read_float,
        read_int,
        shown,
        why_not_digits,
    )

    said = repr(shown(change))  # a message shows at most 40 characters of what was typed

    def whole(text: str, what: str) -> int:  # as every whole number is read (5,000 digits)
        try:
            return read_int(text, what)  # digits only: is_whole has matched it
        except ValueRangeError as e:
            raise ValueError(f"{said}: {e}") from None

    words = change.split()
    if not words:
        raise ValueError("say what changes: a reference, scale GROUP or topology ID")
    if words[0] == "scale":
        if len(words) not in (2, 3):
            raise ValueError(f"{said}: scale GROUP, or scale GROUP pr(N)")
        table: dict[str, Any] = {"scale": words[1]}
        if len(words) == 3:
            inner = words[2].removeprefix("pr(").removesuffix(")")
            if not is_whole(inner):
                raise ValueError(f"{said}: the processor as pr(N)")
            table["processor"] = whole(inner, "a processor type's id")
    elif words[0] == "topology":
        if len(words) != 2 or not is_whole(words[1]):
            raise ValueError(f"{said}: topology ID")
        table = {"generate": whole(words[1], "a topology's id")}
        items = [v.strip() for v in values.split(";") if v.strip()]
        if not items:
            raise ValueError("give the generated topologies, separated by ';'")
        table["values"] = items
        return table
    else:
        table = {"set": change.strip()}

    def read(text: str) -> int | float:  # a whole number as an int, any other as a float
        return read_int(text, sign=True) if is_whole(text.lstrip("-")) else read_float(text)

    def number(text: str) -> int | float:
        try:
            return read(text)
        except ValueRangeError as e:
            raise ValueError(f"{shown(text)!r}: {e}") from None

    spec = values.replace(",", " ").split()
    if spec and spec[0] in ("log", "linear", "range"):
        if len(spec) != 4:
            raise ValueError(f"{spec[0]} START STOP {'STEP' if spec[0] == 'range' else 'COUNT'}")
        table[spec[0]] = [number(x) for x in spec[1:]]
        return table
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not items:
        raise ValueError("give the values: a list, or log/linear/range START STOP N")
    out: list[Any] = []
    for item in items:
        try:
            out.append(read(item))
        except NotANumberError as e:
            if why_not_digits(item):  # '１': a number in other digits, not a name
                raise ValueError(str(e)) from None
            out.append(item)  # a word (a routing's name): as the file format reads it
        except ValueRangeError as e:  # 1e400, 1e-400, NaN: a number no double holds
            raise ValueError(str(e)) from None
    table["values"] = out
    return table


def suggestions(machine: Any) -> list[tuple[str, str]]:
    """What a sweep of ``machine`` can change, as (change, a first guess at its values)
    for a form's menu: the scaler groups, every link's speed and latency and each
    generated topology, the timings of each processor type, the run-time systems'
    entries."""
    from parasol_core.base import params

    out: list[tuple[str, str]] = []
    for topo in machine.topologies:
        if len(topo.links):
            first = topo.links[0]
            for attr in ("speed", "latency"):
                t = getattr(first, attr)
                if t is not None and t.mean > 0:
                    out.append((f"tl({topo.id})(*).{attr}",
                                f"log {t.mean / 4:.4g} {t.mean * 4:.4g} 5"))  # fmt: skip
        out.append((f"topology {topo.id}", "torus 4 4 4; torus 8 8 8; torus 16 16 16"))
    for group in params.GROUPS:
        out.append((f"scale {group}", "log 0.25 4 5"))
    for proc in machine.processors:
        for name, t in proc.timings.items():
            if t.mean > 0:
                out.append((f"pt({proc.id}).{name}", f"log {t.mean / 4:.4g} {t.mean * 4:.4g} 5"))
    for section in machine.runtime_sections():
        for name, expr in section.entries.items():
            out.append((f"{section.PREFIX}.{name}", expr.text))
    return out


def suggested_values(machine: Any, change: str, engine: Any = None) -> str:
    """A first guess at the values of an axis ``change`` (a window's "Sweep …" menu):
    :func:`suggestions`' where it has one, else for a reference with a number (a single
    link's timing, a cache's) a quarter to 4x its value, "" when there is no guess."""
    found = dict(suggestions(machine))
    if change in found:
        return found[change]
    if change.split(" pr(")[0] in found:  # a scaler group on one processor type
        return found[change.split(" pr(")[0]]
    if engine is None:
        from parasol_core.expr.engine import Engine

        engine = Engine(machine)
    try:
        value = engine.value(change)
    except Exception:  # not a reference with a value: the user says the values
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return ""
    if isinstance(value, int):  # a whole number (a cache's size): whole numbers
        return ", ".join(str(v) for v in sorted({max(1, value // 4), max(1, value // 2), value,
                                                 2 * value, 4 * value}))  # fmt: skip
    return f"log {value / 4:.4g} {value * 4:.4g} 5"
