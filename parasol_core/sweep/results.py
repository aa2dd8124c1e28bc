"""The output of a sweep: a CSV file, one row a variant, written as each finishes.

The header is ``spec.columns()``: ``index``, the axes, the answers, ``seconds`` and
``error``. Rows come in the order the variants finish (sort them by ``index`` for the
grid's order). Each row is written whole and flushed before the next: a sweep killed
at any moment leaves every finished row, and at most a part of one more line, which
resuming drops (that variant is run again).

Resuming reads the file back: the header must be the sweep's, and every row's axis
values must be those of the variant of its index (else the file is another sweep's, and
nothing is written to it); the rows found are not run again.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from pathlib import Path

from parasol_core.base.limits import open_input
from parasol_core.base.words import counted, said
from parasol_core.sweep.spec import SweepError, SweepSpec, SweepUnreadable
from parasol_core.sweep.variants import Variant
from parasol_core.sweep.worker import Row


def read_finished(path: str | Path, spec: SweepSpec, variants: Sequence[Variant]) -> set[int]:
    """The indices of the variants ``path`` holds a row of, after dropping a last line
    cut short (the file is truncated to its last whole line). An absent or empty file
    holds none. SweepError when the file is not this sweep's output."""
    path = Path(path)
    try:
        with open_input(path) as f:  # a FIFO or a device named as the output: refused
            data = f.read()
    except FileNotFoundError:
        return set()
    except OSError as e:
        raise SweepUnreadable(f"{path}: cannot read: {e.strerror or e}") from None
    if not data:
        return set()
    whole = data.rfind(b"\n") + 1
    if whole < len(data):  # a row cut short by a kill: it is run again
        with open(path, "r+b") as f:
            f.truncate(whole)
        data = data[:whole]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not a sweep's output (not UTF-8 at byte {e.start})") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    columns = spec.columns()
    if not rows or rows[0] != columns:
        got = ",".join(rows[0]) if rows else ""
        raise SweepError(f"{path}: not this sweep's output: its columns are {got[:200]!r}, "
                         f"the sweep's {','.join(columns)[:200]!r}")  # fmt: skip
    by_index = {v.index: v for v in variants}
    axes = spec.axes
    done: set[int] = set()
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(columns):
            raise SweepError(
                f"{path}: line {line}: {counted(len(row), 'cell')}, not {len(columns)}"
            )
        try:
            index = int(row[0])
        except ValueError:
            raise SweepError(
                f"{path}: line {line}: index {row[0][:40]!r} is not a number"
            ) from None
        variant = by_index.get(index)
        want = None if variant is None else [a.text(p) for a, p in zip(axes, variant.positions,
                                                                     strict=True)]  # fmt: skip
        if want != row[1 : 1 + len(axes)]:
            raise SweepError(f"{path}: line {line}: variant {index} is not this sweep's "
                             "(its axes' values differ): the file is another sweep's output")  # fmt: skip
        # a row kept is one this sweep wrote: its answers numbers or none, its seconds a
        # time (a row edited or damaged is said, not kept as the variant's answer)
        for name, cell in zip(columns[1 + len(axes) : -1], row[1 + len(axes) : -1],
                              strict=True):  # fmt: skip
            if cell and not _number(cell, name == "seconds"):
                raise SweepError(f"{path}: line {line}: {name} {said(cell)} is not "
                                 f"{'a time in seconds' if name == 'seconds' else 'a number'}"
                                 ": the row was not written by this sweep")  # fmt: skip
        done.add(index)
    return done


def _number(cell: str, time: bool) -> bool:
    """Whether ``cell`` is a number (``time``: a finite one, 0 or more)."""
    try:
        x = float(cell)
    except ValueError:
        return False
    return not time or (math.isfinite(x) and x >= 0)


class ResultsWriter:
    """Rows appended to ``path`` one at a time (header first in a new file)."""

    def __init__(self, path: str | Path, spec: SweepSpec) -> None:
        self.path = Path(path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._file = open(self.path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        self._csv = csv.writer(self._file, lineterminator="\n")
        if new:
            self._csv.writerow(spec.columns())
            self._file.flush()

    def write(self, row: Row) -> None:
        self._csv.writerow(row.cells())
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of an output as dicts of column: text, sorted by index."""
    with open_input(path) as f:
        rows = list(csv.DictReader(io.TextIOWrapper(f, encoding="utf-8", newline="")))
    return sorted(rows, key=lambda r: int(r["index"]))


def remove(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
