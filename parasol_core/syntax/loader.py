"""Text to model: the driver. ``loads``/``load`` read a whole model file,
``parse_expression`` one expression.

The reader (:mod:`parasol_core.syntax.reader`) reads the text, handing the bulk tables
to the bulk scanners (:mod:`parasol_core.syntax.fastscan`), and makes the calls of the
object builder (:mod:`parasol_core.syntax.builder`), which records where every value
sits in the text (see :mod:`parasol_core.base.source`). Each load has a builder of its
own: loads in several threads do not wait for each other.
"""

from __future__ import annotations

import errno
import gc
from pathlib import Path
from typing import Any

from parasol_core.base.diagnostics import ERROR, WARNING, Diagnostic, ModelSyntaxError
from parasol_core.base.limits import MAX_LINE_LENGTH, ValueRangeError, read_model_bytes
from parasol_core.base.memory import TRIM_AFTER_BYTES, release_free_memory
from parasol_core.base.source import BOM, counting_text, position
from parasol_core.base.words import counted
from parasol_core.model import Machine, all_blocks
from parasol_core.model.inttable import TableSources
from parasol_core.syntax import reader
from parasol_core.syntax.annotations import read_annotations
from parasol_core.syntax.builder import _Builder
from parasol_core.syntax.expression import GRAMMAR_PATH, parse_expression

_BREAKS = "\n;\r\x0b"  # what ends a line

# Bulk tables to the bulk scanners (tests turn it off to hold the scanners to the reader)
_bulk = True


def _decode(data: bytes, file: str | None) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start].decode("utf-8")  # valid up to there: count characters
        line, col = position(before, len(before))
        raise ModelSyntaxError(
            f"this is not a text file: byte 0x{data[e.start]:02x} is not valid UTF-8",
            line, col, file=file,
        ) from None  # fmt: skip
    return text


def _long_lines(text: str) -> list[tuple[int, int]]:
    """(start, length) of every line longer than the limit, in order, with a few
    ``str.find`` calls a megabyte: such a line holds a whole stretch of half the limit
    without a line end, and only the lines around those stretches are measured."""
    step = MAX_LINE_LENGTH // 2
    found: list[tuple[int, int]] = []
    line_end = 0
    for a in range(0, len(text), step):
        b = a + step
        if a < line_end or any(text.find(c, a, b) >= 0 for c in _BREAKS):
            continue
        start = 0
        for c in _BREAKS:
            start = max(start, text.rfind(c, start, a) + 1)
        line_end = len(text)
        for c in _BREAKS:
            e = text.find(c, b, line_end)
            if e >= 0:
                line_end = e
        if line_end - start > MAX_LINE_LENGTH:
            found.append((start, line_end - start))
    return found


def _check_lines(text: str, file: str | None, cut_length: int | None = None) -> None:
    """Refuse a line longer than the limit, whatever character ends it. ``cut_length``:
    the true length of the last line when the text was read only up to part of it
    (:class:`~parasol_core.base.limits.CutBytes`)."""
    if len(text) <= MAX_LINE_LENGTH:
        return
    long_lines = _long_lines(text)
    if not long_lines:
        return
    if cut_length is not None and long_lines[-1][0] + long_lines[-1][1] == len(text):
        long_lines[-1] = (long_lines[-1][0], max(cut_length, long_lines[-1][1]))
    longest = max(length for _, length in long_lines)
    start = next(at for at, length in long_lines if length == longest)
    line, column = position(text, start)
    raise ModelSyntaxError(
        f"line {line} is too long ({counted(longest, 'character')}; the limit is "
        f"{MAX_LINE_LENGTH:,})",
        line, column, file=file,
    )  # fmt: skip


def loads(text: str | bytes, path: str | None = None, cut_length: int | None = None) -> Machine:
    """Parse a model from text (or UTF-8 bytes).

    Raises :class:`ModelSyntaxError` when the text is not a model file. Semantic
    problems do not raise: see :func:`parasol_core.analysis.validate`. A caller holding
    a large file's bytes should :func:`decode` them, let them go and pass the text (with
    ``cut_length``, the :class:`~parasol_core.base.limits.CutBytes` ``line_length`` the
    bytes had, if any): bytes held through the reading are the file's size more at its
    peak.
    """
    # Loading makes hundreds of thousands of objects and no reference cycles worth
    # collecting: the cyclic collector, run every few hundred allocations over an ever
    # larger heap, took a third of the time of a 98,304-link model. Off while loading.
    # The objects made are then moved straight to the oldest generation (freeze, then
    # unfreeze: no scan): left in the youngest, the first collections after loading would
    # each scan all of them, which made the first pass over a big model's links (the
    # grid view's, the index's) up to ten times slower than the next.
    # The freeze moves every object of the young generations, not only the model's: the
    # garbage of earlier work (an Engine and its closures are a cycle) would go to the
    # oldest generation unexamined, where collections come ever more rarely. A server
    # that loads a model per request then grew by the garbage of every request (an
    # Engine: 65 KB a load, never freed). The young generations are collected first
    # (a few thousand objects at most: a millisecond), so only live objects move.
    enabled = gc.isenabled()
    if enabled:
        gc.collect(1)
    gc.disable()
    try:
        machine = _loads(text, path, cut_length)
        if enabled:
            gc.freeze()
            gc.unfreeze()
    finally:
        if enabled:
            gc.enable()
    if len(text) >= TRIM_AFTER_BYTES:  # the reading's temporaries back to the system
        release_free_memory()
    return machine


def _loads(text: str | bytes, path: str | None, cut_length: int | None = None) -> Machine:
    file = str(path) if path is not None else None
    if cut_length is None:
        cut_length = getattr(text, "line_length", None)  # limits.CutBytes
    if isinstance(text, (bytes, bytearray)):
        text = _decode(bytes(text), file)
    _check_lines(text, file, cut_length)
    parse_text = text if text.endswith(("\n", "\r", "\x0b", ";")) else text + "\n"
    # The reader counts lines by `\n`: it reads a text of the same length whose `\n`s
    # are the physical line ends (source.counting_text); the model keeps the original
    # text, and every offset is the same in both
    counted = counting_text(parse_text)
    builder = _Builder()
    builder.reset(parse_text, {}, counted)
    try:
        machine = reader.read(counted, builder, text, _bulk)
    except ModelSyntaxError as e:
        raise _bom_shifted(e.with_file(file) if file else e, text) from None
    except RecursionError:
        raise ModelSyntaxError("the file is nested too deeply", 1, 1, file=file) from None
    if builder.bulk:  # pragma: no cover - a body the builder did not take
        raise AssertionError(f"sections read by the bulk scanners were not used: {builder.bulk}")
    diagnostics = [
        Diagnostic(d.severity, d.message, d.line, d.column, file) for d in builder.diagnostics
    ]
    if text.startswith(BOM):
        diagnostics = [_bom_shifted(d, text) for d in diagnostics]
        _bom_shift_sources(machine)
    diagnostics += read_annotations(machine, text, file)
    _clip(machine, text)
    machine.src.diagnostics = diagnostics
    machine.src.path = file
    return machine


def _bom_shifted(where: Any, text: str) -> Any:
    """A diagnostic or syntax error on line 1 of a text that starts with a byte-order
    mark, one column to the left: the mark takes no column on screen."""
    if not (text.startswith(BOM) and where.line == 1 and (where.column or 1) > 1):
        return where
    if isinstance(where, ModelSyntaxError):
        return ModelSyntaxError(
            where.message, 1, where.column - 1, text=where.text, expected=where.expected,
            file=where.file, context=where.context,
        )  # fmt: skip
    from dataclasses import replace

    return replace(where, column=where.column - 1)


def _bom_shift_sources(machine: Machine) -> None:
    for block in machine.blocks():
        records = [block.src, *block.src.values.values()]
        for ts in list(block.src.tables.values()) + list(block.src.containers.values()):
            if isinstance(ts.entries, TableSources):
                ts.entries.fix_first_line()
                continue
            records.extend(ts.entries.values())
        for r in records:
            if r.line == 1 and r.column > 1:
                r.column -= 1


def decode(data: bytes, path: str | Path | None = None) -> str:
    """The text of a model file's bytes; ModelSyntaxError (with its line and column) at
    the first byte that is not UTF-8, as :func:`loads` would say."""
    return _decode(bytes(data), str(path) if path is not None else None)


def load(path: str | Path) -> Machine:
    """Read and parse a model file. Raises ModelSyntaxError or OSError (a FIFO or a
    device, a file past the size limit: ``base.limits.read_model_bytes``)."""
    try:
        data = read_model_bytes(str(path))
    except ValueRangeError as e:
        raise OSError(errno.EFBIG, str(e), str(path)) from None
    # decoded here, and the bytes dropped before the reading: held through it, they
    # were the file's size more at the peak of loading (the 570 MB file of the
    # 100 x 100 x 100 torus: 2,829 MB at the peak before, 1,119 MB now)
    text = decode(data, path)
    del data
    return loads(text, str(path))


def _clip(machine: Machine, text: str) -> None:
    """Records refer to the original text; ranges past its end (the newline the loader
    may have added) are cut."""
    n = len(text)
    for block in all_blocks(machine):
        src = block.src  # links read in bulk are not here: never at the end, and on ``text``
        if src is None:
            continue
        src.text = text
        src.end = min(src.end, n)
        src.insert_at = min(src.insert_at, n)
        for vs in src.values.values():
            vs.line_end = min(vs.line_end, n)
        for ts in list(src.tables.values()) + list(src.containers.values()):
            if isinstance(ts.entries, TableSources):
                ts.entries.clip(n)
                continue
            for vs in ts.entries.values():
                vs.line_end = min(vs.line_end, n)
            if ts.end is not None:
                ts.end = min(ts.end, n)


__all__ = [
    "GRAMMAR_PATH", "decode", "load", "loads", "parse_expression", "ModelSyntaxError", "ERROR", "WARNING",
]  # fmt: skip
