"""The run-time systems (PVM, Express, MPI) as a window shows them: their primitives, the
message sizes and process counts their costs are plotted over, and the cost curves.

A curve is :meth:`parasol_core.expr.engine.Engine.sweep` over a grid of one argument with
the other held; a point whose evaluation fails is NaN in the curve (a plot leaves a gap)
and its message is kept beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from parasol_core.expr.engine import Engine
from parasol_core.model import RUNTIME_SECTIONS, ExprSection, Machine

MAX_BYTES = 64 * 1024 * 1024  # 64 MiB: the top of the message-size axis
STEPS_PER_OCTAVE = 4
MAX_PROCESS_POINTS = 256


@dataclass(frozen=True)
class RuntimeSystem:
    """A run-time system as its window shows it; who it is (title, the Machine attribute,
    the reference prefix) is its section class's (``Mpi.TITLE``, ``.ATTR``, ``.PREFIX``)."""

    section: type[ExprSection]

    @property
    def title(self) -> str:
        return self.section.TITLE

    @property
    def attr(self) -> str:
        return self.section.ATTR

    @property
    def prefix(self) -> str:
        return self.section.PREFIX

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def names(self, machine: Machine) -> list[str]:
        """The primitives the format knows, then any others the file defines (which the
        validator reports), so that everything in the file is shown."""
        known = list(self.section.NAMES)
        section = getattr(machine, self.attr)
        extra = [n for n in (section.entries if section else {}) if n not in known]
        return known + extra

    def expression_text(self, machine: Machine, name: str) -> str | None:
        section = getattr(machine, self.attr)
        if section is None or name not in section.entries:
            return None
        return section.entries[name].text


SYSTEMS: tuple[RuntimeSystem, ...] = tuple(RuntimeSystem(cls) for cls in RUNTIME_SECTIONS)


def message_sizes(max_bytes: int = MAX_BYTES, steps: int = STEPS_PER_OCTAVE) -> list[int]:
    """Message sizes from 1 byte to ``max_bytes``, ``steps`` per doubling, as integers."""
    top = math.log2(max_bytes)
    sizes = {round(2 ** (i / steps)) for i in range(int(top * steps) + 1)}
    return sorted(sizes | {max_bytes})


def process_counts(max_procs: int, limit: int = MAX_PROCESS_POINTS) -> list[int]:
    """Process counts from 1 to ``max_procs``: every one, or ``limit`` spread evenly."""
    max_procs = max(1, int(max_procs))
    if max_procs <= limit:
        return list(range(1, max_procs + 1))
    return sorted({round(x) for x in np.linspace(1, max_procs, limit)})


def machine_processes(machine: Machine) -> int:
    """The machine's processor count (the hardware topology's), at least 1."""
    hw = machine.hardware()
    if hw is None or not isinstance(hw.processor_count, int) or hw.processor_count < 1:
        return 1
    return hw.processor_count


@dataclass
class Curve:
    x: np.ndarray
    y: np.ndarray  # NaN where the evaluation failed
    errors: dict[int, str]  # index -> message

    def at(self, x: float) -> float:
        """The value at the grid point nearest ``x`` (on a log scale for sizes)."""
        if len(self.x) == 0:
            return math.nan
        i = int(np.argmin(np.abs(np.log(self.x) - math.log(max(x, 1e-300)))))
        return float(self.y[i])


def curve(engine: Engine, key: str, vary: str, grid: Sequence[int],
          fixed: dict[str, int | float]) -> Curve:  # fmt: skip
    """``key`` evaluated at each value of ``vary`` ("bytes" or "procs") in ``grid``, the
    other argument taken from ``fixed``."""
    points = [{**fixed, vary: v} for v in grid]
    values = engine.sweep(key, points)
    y = np.full(len(grid), np.nan)
    errors: dict[int, str] = {}
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            errors[i] = getattr(v, "message", str(v))
        else:
            y[i] = float(v)
    return Curve(np.asarray(grid, dtype=float), y, errors)


def whole_argument(x: float) -> int:
    """A message size or process count read off a plot's axis: the whole number nearest
    ``x``, at least 1 (the arguments the costs are written for are counts)."""
    return max(1, round(x)) if math.isfinite(x) else 1


def value_at(engine: Engine, key: str, vary: str, x: float,
             fixed: dict[str, int | float]) -> float:  # fmt: skip
    """``key`` evaluated exactly at ``vary`` = :func:`whole_argument` (``x``), the other
    argument from ``fixed``: what a plot's read-out shows at its cursor (not the value of
    the nearest plotted point). NaN when the evaluation fails."""
    [value] = engine.sweep(key, [{**fixed, vary: whole_argument(x)}])
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def size_text(nbytes: float) -> str:
    """1, 512 B, 4 KiB, 1.5 MiB, 64 MiB."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.4g} {unit}"
        value /= 1024
    return f"{value:.4g} GiB"  # pragma: no cover


def time_text(seconds: float) -> str:
    """A time in the unit that reads best: 12.3 us, 4.56 ms, 1.2 s."""
    if not math.isfinite(seconds):
        return "—"
    a = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if a >= scale or unit == "ns":
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds:.4g} s"  # pragma: no cover
