"""Text to model: the driver. ``loads``/``load`` read a whole model file,
``parse_expression`` one expression.

The reference parser is lark's LALR parser over ``grammar/machine.lark`` with the object
builder (:mod:`parasol_core.syntax.builder`) run inline, so no parse tree is built. Each
definition keeps its `=` and end-of-line tokens; from them the builder records where every
value sits in the text (see :mod:`parasol_core.syntax.source`). Lark's failures become
messages in :mod:`parasol_core.syntax.messages`.

In front of lark, two readers take what they are sure of and step aside otherwise: the
fast path (:mod:`parasol_core.syntax.fastscan`) reads the bulk sections, and the
hand-written reader (:mod:`parasol_core.syntax.reader`) the rest of a file in its usual
form, making the builder calls lark would make. Lark is imported only when a text needs
it (an unusual form, or a syntax error, which lark reports).
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

from parasol_core.limits import MAX_LINE_LENGTH
from parasol_core.model import Machine, all_blocks
from parasol_core.syntax import fastscan, reader
from parasol_core.syntax.annotations import read_annotations
from parasol_core.syntax.build_expr import _Fail
from parasol_core.syntax.builder import _Builder
from parasol_core.syntax.diagnostics import ERROR, WARNING, Diagnostic, ModelSyntaxError
from parasol_core.syntax.expression import GRAMMAR_PATH, make_parser, parse_expression
from parasol_core.syntax.source import BOM, counting_text, position

_BREAKS = "\n;\r\x0b"  # what ends a line


_lock = threading.RLock()
# The fast path and the hand-written reader (tests turn them off to compare with lark)
_fast = True
_parser: Any = None  # lark's, made when first needed
_builder = _Builder()
_line_fix = fastscan.LineFix()


def _get_parser() -> tuple[Any, _Builder]:
    global _parser
    with _lock:
        if _parser is None:
            _parser = make_parser("start", _builder, _line_fix)
    return _parser, _builder


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
    (:class:`~parasol_core.limits.CutBytes`)."""
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
        f"line {line} is too long ({longest:,} characters; the limit is {MAX_LINE_LENGTH:,})",
        line, column, file=file,
    )  # fmt: skip


def loads(text: str | bytes, path: str | None = None) -> Machine:
    """Parse a model from text (or UTF-8 bytes).

    Raises :class:`ModelSyntaxError` when the text is not a model file. Semantic
    problems do not raise: see :func:`parasol_core.validate`.
    """
    # Loading makes hundreds of thousands of objects and no reference cycles worth
    # collecting: the cyclic collector, run every few hundred allocations over an ever
    # larger heap, took a third of the time of a 98,304-link model. Off while loading.
    # The objects made are then moved straight to the oldest generation (freeze, then
    # unfreeze: no scan): left in the youngest, the first collections after loading would
    # each scan all of them, which made the first pass over a big model's links (the
    # grid view's, the index's) up to ten times slower than the next.
    enabled = gc.isenabled()
    gc.disable()
    try:
        machine = _loads(text, path)
        if enabled:
            gc.freeze()
            gc.unfreeze()
        return machine
    finally:
        if enabled:
            gc.enable()


def _loads(text: str | bytes, path: str | None) -> Machine:
    file = str(path) if path is not None else None
    cut_length = getattr(text, "line_length", None)  # limits.CutBytes
    if isinstance(text, (bytes, bytearray)):
        text = _decode(bytes(text), file)
    _check_lines(text, file, cut_length)
    parse_text = text if text.endswith(("\n", "\r", "\x0b", ";")) else text + "\n"
    # The bulk (link lists, procid and mapping tables, timings) is read by the fast path
    # where it is of the strictest form; lark reads the rest, and everything when unsure.
    # lark and the fast path count lines by `\n`: they read a text of the same length
    # whose `\n`s are the physical line ends (source.counting_text); the model keeps the
    # original text, and every offset is the same in both
    counted = counting_text(parse_text)
    lark_text, bulk, fix = fastscan.scan(counted, text) if _fast else (counted, {}, ([], []))
    try:
        machine, found = _parse(parse_text, file, lark_text, bulk, fix, counted)
    except ModelSyntaxError as e:
        raise _bom_shifted(e, text) from None
    diagnostics = [Diagnostic(d.severity, d.message, d.line, d.column, file) for d in found]
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
            records.extend(ts.entries.values())
        for r in records:
            if r.line == 1 and r.column > 1:
                r.column -= 1


def load(path: str | Path) -> Machine:
    """Read and parse a model file. Raises ModelSyntaxError or OSError."""
    data = Path(path).read_bytes()
    return loads(data, str(path))


def _parse(
    text: str,
    file: str | None,
    lark_text: str,
    bulk: dict[int, Any],
    fix: tuple[list[int], list[int]],
    counted: str,
) -> tuple[Any, list[Diagnostic]]:
    """Run the hand-written reader, or lark where it steps aside (the builder is shared,
    hence the lock); lark's and the builder's failures become a ModelSyntaxError saying
    where. Both read ``lark_text``, which is ``text`` with the bodies in ``bulk``
    blanked out (same length, one line each); ``fix`` says how many lines each left out,
    for lark's post-lexer to add back, and ``counted`` (``text`` with its real line
    ends) gives the reader its lines."""
    builder = _builder
    with _lock:
        try:
            if _fast:
                builder.reset(text, dict(bulk), counted)
                try:
                    result = reader.read(lark_text, counted, builder, _blanks(bulk, fix))
                    return _used_bulk(result, builder)
                except (reader.Defer, _Fail, RecursionError):
                    pass  # lark reads it, or says what is wrong with it
            builder.reset(text, dict(bulk), counted)  # afresh: the reader may have used it
            return _lark_parse(text, file, lark_text, fix)
        finally:
            builder.reset("")  # do not keep the text alive


def _blanks(bulk: dict[int, Any], fix: tuple[list[int], list[int]]) -> dict:
    """Where each blanked body starts: (where it ends, the lines it holds)."""
    ends, missing = fix
    blanks = {}
    before = 0
    for start, end, left_out in zip(bulk, ends, missing):
        blanks[start] = (end, left_out - before + 1)  # a body leaves out all but one line
        before = left_out
    return blanks


def _used_bulk(result: Any, builder: _Builder) -> tuple[Any, list[Diagnostic]]:
    if builder.bulk:  # pragma: no cover - a body the builder did not take
        raise AssertionError(f"sections read by the fast path were not used: {builder.bulk}")
    return result, list(builder.diagnostics)


def _lark_parse(
    text: str, file: str | None, lark_text: str, fix: tuple[list[int], list[int]]
) -> tuple[Any, list[Diagnostic]]:
    from lark.exceptions import UnexpectedInput

    from parasol_core.syntax.messages import _error_at, _syntax_error

    parser, builder = _get_parser()
    _line_fix.ends, _line_fix.missing = fix
    try:
        return _used_bulk(parser.parse(lark_text), builder)
    except _Fail as e:
        raise _error_at(e.message, e.token, text, file) from None
    except UnexpectedInput as e:
        _fix_error_line(e, lark_text)
        raise _syntax_error(e, text, parser, file, "file") from None
    except RecursionError:
        raise ModelSyntaxError("the file is nested too deeply", 1, 1, file=file) from None
    finally:
        _line_fix.ends, _line_fix.missing = [], []


def _fix_error_line(e: Any, lark_text: str) -> None:
    """Lark's error counted the lines of ``lark_text``, unless its token came through the
    post-lexer (which adds the lines blanked bodies left out): add them."""
    pos = getattr(e, "pos_in_stream", None)
    if not _line_fix.ends or pos is None or not isinstance(getattr(e, "line", None), int):
        return
    left_out = _line_fix.left_out(pos)
    if left_out and e.line == lark_text.count("\n", 0, pos) + 1:
        e.line += left_out


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
            for vs in ts.entries.values():
                vs.line_end = min(vs.line_end, n)
            if ts.end is not None:
                ts.end = min(ts.end, n)


__all__ = [
    "GRAMMAR_PATH", "load", "loads", "parse_expression", "ModelSyntaxError", "ERROR", "WARNING",
]  # fmt: skip
