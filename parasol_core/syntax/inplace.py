"""After a save that only changed values: the source records updated in place.

A save used to read the written text back (a whole parse: seconds for a 98,304-link
model) to check it and to give the model the records of its new text. When every edit
the lossless writer made replaces one loaded value's characters with the text of its new
value (the editor's common case: a timing, a name, an id changed), neither needs a parse:

* each new value text is read back on its own, by the reader
  (:func:`parasol_core.syntax.reader.read_value`), and must give the value that was
  written;
* each edit is a span replaced by known text on one line, so every recorded position
  after it moves by the change in length, line numbers stay, and the edited records take
  the values read back, so the next save compares against the saved text.

Anything else (lines added or removed, an expression or shape edited, a value in a form
the strict reader does not take, another definition after the value on its line, whose
column would move) returns None, and the save reads the whole text back as before.
``tests/test_save_inplace.py`` holds the records updated here to those of a fresh parse
of the saved text, after random edits and saves.

Positions of a fast-path link whose record is not built yet are its store's column of
offsets (:class:`~parasol_core.model.linkstore.LinkStore`), moved in one vectorized step.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Any

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.source import BlockSource, TableSource, ValueSource
from parasol_core.model import CONNECT, INT, STR, TIMING, Block, Machine, link_stores
from parasol_core.model.inttable import TableSources
from parasol_core.model.tree import Expression
from parasol_core.syntax.reader import read_value

# After a value: blanks, an ordinary comment, a physical line end (not `;`) or the end.
_REST_OF_LINE = re.compile(r"[ \t\f]*(?:#[^\n\r\x0b]*)?(?:\r\n|\n|\r|\x0b|\Z)")

_NO = object()


def read_back(kind: str, text: str) -> Any:
    """The value ``text`` reads as after `=`, read by the reader; ``_NO`` when it is
    not one value of ``kind`` (the caller then parses the whole text)."""
    if kind not in (TIMING, INT, STR, CONNECT):
        return _NO  # expressions and shapes: the whole text is read back
    try:
        value = read_value(kind, text)
    except ModelSyntaxError:
        return _NO
    if kind == CONNECT:
        if value[0] != len(value) - 1:
            return _NO  # the validator reports a count that disagrees: not in place
        return value[1:]
    return value


def plan(text: str, edits: Any, same: Any) -> list[tuple[int, int, str, ValueSource, Any]] | None:
    """(start, end, new text, record, value read back) for each edit, sorted, when every
    edit replaces one value and reads back as ``same(kind, written, read)`` says it should;
    else None."""
    out = []
    for (start, end, _, new), value in zip(edits.items, edits.values):
        if value is None:
            return None
        vs, kind, current = value
        if kind == "unlink":  # a loaded link's section taken out, whole lines
            if not _whole_lines(text, start, end):
                return None
            out.append((start, end, new, None, ("unlink", *current)))
            continue
        if kind == "link":  # a link inserted after a link of its list
            read = _appended_link(text, start, new, *current, same)
            if read is None:
                return None
            out.append((start, end, new, None, read))
            continue
        if _REST_OF_LINE.match(text, end) is None:
            return None  # something follows on the line: its column would move
        read = read_back(kind, new)
        if read is _NO or not same(kind, current, read):
            return None
        out.append((start, end, new, vs, read))
    for _, _, _, texts, kind, values in edits.bulk:  # values of links with no record
        for new, value in zip(texts, values):
            read = read_back(kind, new)  # (each ends its line: the fast path's form)
            if read is _NO or not same(kind, value, read):
                return None
    out.sort(key=lambda e: (e[0], e[1]))  # a link inserted where one is taken out: first
    return out


def bulk_moves(edits: Any) -> tuple[Any, Any] | None:
    """(starts, ends, changes in length) of the edits made in bulk, or None."""
    if not edits.bulk:
        return None
    import numpy as np

    starts, ends, deltas = [], [], []
    for s, e, codes, texts, _, _ in edits.bulk:
        starts.append(s)
        ends.append(e)
        deltas.append(np.asarray([len(t) for t in texts], dtype=np.int64)[codes] - (e - s))
    return np.concatenate(starts), np.concatenate(ends), np.concatenate(deltas)


def _whole_lines(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is whole lines ending in `\n`, in a text whose line ends
    are `\n` only (so that counting `\n` counts lines)."""
    if start > 0 and text[start - 1] != "\n" or end <= start or text[end - 1] != "\n":
        return False
    return "\r" not in text and "\x0b" not in text


def _appended_link(text: str, at: int, new: str, store: Any, uid: int, line: int,
                   same: Any) -> Any:  # fmt: skip
    """("link", store, uid, lines, line) when ``new`` (to go at ``at``) is one link section
    at a line start that reads back as the link's values, the file's line ends are
    `\n` only, and no built record ends at ``at`` (it would have to stay put); else
    None."""
    from parasol_core.model.linktext import link_record

    if at > 0 and text[at - 1] != "\n" or not new.endswith("\n"):
        return None
    if "\r" in text or "\x0b" in text or "\r" in new or "\x0b" in new:
        return None
    if any(src.end == at for src in store.records()):
        return None
    try:
        src = link_record(new, 0, 1)
    except AssertionError:
        return None
    if src.end != len(new):
        return None
    view = store.view(store.row_of_uid(uid))
    for name in ("id", "latency", "speed", "connect"):
        kind = {"id": INT, "latency": TIMING, "speed": TIMING, "connect": CONNECT}[name]
        if not same(kind, getattr(view, name), src.values[name].value):
            return None
    return ("link", store, uid, new.count("\n"), line)


class _Shift:
    """Where a position of the old text is in the new one (positions inside a replaced
    span do not occur: records start and end at span boundaries)."""

    def __init__(self, steps: list[tuple[int, int, str, ValueSource, Any]],
                 bulk: tuple[Any, Any, Any] | None = None) -> None:  # fmt: skip
        self.ends: Any = []  # a list, or with edits made in bulk an array
        self.moves: Any = []
        move = 0
        # lines added by appended links: where, and the sums of lines up to each
        self.inserted_at: list[int] = []
        self.line_moves: list[int] = []
        lines = 0
        for start, end, new, _, read in steps:
            move += len(new) - (end - start)
            self.ends.append(end)
            self.moves.append(move)
            if isinstance(read, tuple) and read and read[0] in ("link", "unlink"):
                lines += read[3] if read[0] == "link" else -read[3]
                self.inserted_at.append(start)
                self.line_moves.append(lines)
        if bulk is not None:  # merged with the others, as arrays (millions of them)
            import numpy as np

            starts = np.concatenate(([st[0] for st in steps], bulk[0])).astype(np.int64)
            ends = np.concatenate(([st[1] for st in steps], bulk[1])).astype(np.int64)
            deltas = np.concatenate(
                ([len(st[2]) - (st[1] - st[0]) for st in steps], bulk[2])
            ).astype(np.int64)  # fmt: skip
            order = np.lexsort((ends, starts))
            self.ends, self.moves = ends[order], np.cumsum(deltas[order])

    @property
    def still(self) -> bool:
        """No position moves (every replacement kept its length)."""
        return not any(self.moves) if isinstance(self.moves, list) else not self.moves.any()

    def _edits_to(self, pos: int) -> int:
        """How many edits end at or before ``pos``."""
        if isinstance(self.ends, list):
            return bisect.bisect_right(self.ends, pos)
        return int(self.ends.searchsorted(pos, side="right"))

    def __call__(self, pos: int) -> int:
        i = self._edits_to(pos)
        return pos + int(self.moves[i - 1]) if i else pos

    def untouched(self, start: int, end: int) -> bool:
        """No edit ends and no line is added or removed within ``start..end``: all
        that is in it moves by the same characters and lines."""
        points = self.inserted_at
        return self._edits_to(start) == self._edits_to(end) and (
            bisect.bisect_right(points, start) == bisect.bisect_right(points, end)
        )

    def lines(self, pos: int) -> int:
        """The lines added before ``pos`` (a record starting at an insertion point is
        after what was inserted there)."""
        i = bisect.bisect_right(self.inserted_at, pos)
        return self.line_moves[i - 1] if i else 0


def apply(machine: Machine, blocks: list[Block], steps: list, new_text: str,
          bulk: tuple[Any, Any, Any] | None = None) -> None:  # fmt: skip
    """Give every record of ``machine`` (whose sections are ``blocks``) the positions and
    values of ``new_text``, the text the edits in ``steps`` (from :func:`plan`) and
    those made in bulk (:func:`bulk_moves`) made."""
    moving: _Shift | None = _Shift(steps, bulk)
    if moving.still:  # type: ignore[union-attr]
        moving = None  # every value kept its length: no position moves
    shift = moving
    # where each appended link goes in the new text (before anything moves)
    appended = []
    delta = lines = 0  # characters, and lines added by the links appended before
    before = _bulk_before(bulk)  # characters the edits made in bulk add before a point
    changed = {}  # the stores that gained or lost links
    for start, end, new, _, read in steps:
        if isinstance(read, tuple) and read and read[0] == "link":
            appended.append((read[1], read[2], start + delta + before(start), read[4] + lines))
            lines += read[3]
            changed[id(read[1])] = read[1]
        elif isinstance(read, tuple) and read and read[0] == "unlink":
            lines -= read[3]
            changed[id(read[1])] = read[1]
        delta += len(new) - (end - start)
    for block in blocks:
        src = block.src
        if src is None:
            continue
        src.text = new_text
        if shift is not None:
            _shift_block(src, shift)
    for store in link_stores(machine):  # the offsets of links whose records are not built
        store.moved(new_text, shift)
    for store, uid, start, line in appended:  # read back as loaded links from now on
        store.placed(uid, start, line, new_text)
    for store in changed.values():
        store.mark_loaded()
    for _, _, _, vs, read in steps:  # their ends moved with the rest
        if vs is None:
            continue
        vs.value = read
        if isinstance(read, tuple):  # connect: the writer wrote the count
            vs.count = len(read)


def _bulk_before(bulk: tuple[Any, Any, Any] | None) -> Any:
    """``before(pos)``: the characters the edits made in bulk (value replacements, none
    at a point where a link is appended) add before ``pos``."""
    if bulk is None:
        return lambda pos: 0
    import numpy as np

    order = np.argsort(bulk[1], kind="stable")
    ends, sums = bulk[1][order], np.cumsum(bulk[2][order])

    def before(pos: int) -> int:
        i = int(ends.searchsorted(pos, side="right"))
        return int(sums[i - 1]) if i else 0

    return before


def _shift_block(src: BlockSource, shift: _Shift) -> None:
    src.line += shift.lines(src.start)
    src.start = shift(src.start)
    src.end = shift(src.end)
    src.insert_at = shift(src.insert_at)
    src.body_start = shift(src.body_start)
    for vs in src.values.values():
        _shift_value(vs, shift)
    for ts in src.tables.values():
        _shift_table(ts, shift)
    for ts in src.containers.values():
        _shift_table(ts, shift)
    for key, ranges in src.shadowed.items():
        src.shadowed[key] = [(shift(a), shift(b)) for a, b in ranges]


def _shift_table(ts: TableSource, shift: _Shift) -> None:
    if isinstance(ts.entries, TableSources):
        _shift_columns(ts, shift)
        return
    entries = ts.entries.values()
    # No edit inside the sub-section: every record in it moves by the same offset and
    # lines (often none). The `procid` table of a million processors is a million
    # records, moved here without a search each.
    if (
        ts.start is not None
        and ts.end is not None
        and entries
        and (shift.untouched(ts.start, ts.end))
    ):
        move = shift(ts.start) - ts.start
        lines = shift.lines(ts.start)
        if move or lines:
            for vs in entries:
                if isinstance(vs.value, Expression):
                    _shift_value(vs, shift)
                    continue
                vs.start += move
                vs.end += move
                vs.line_start += move
                vs.line_end += move
                vs.line += lines
        entries = ()
    for vs in entries:
        _shift_value(vs, shift)
    _shift_bounds(ts, shift)


def _shift_bounds(ts: TableSource, shift: _Shift) -> None:
    """Where a sub-section starts, ends and takes new entries."""
    if ts.start is not None:
        ts.start = shift(ts.start)
    if ts.end is not None:
        ts.end = shift(ts.end)
    if ts.insert_at is not None:
        ts.insert_at = shift(ts.insert_at)


def _shift_columns(ts: TableSource, shift: _Shift) -> None:
    """_shift_table for a table read in bulk (parasol_core.model.inttable.TableSources): one
    move of its columns when no edit is inside it, else a shift per record."""
    entries = ts.entries
    assert isinstance(entries, TableSources)
    if ts.start is not None and ts.end is not None and shift.untouched(ts.start, ts.end):
        entries.move(shift(ts.start) - ts.start, shift.lines(ts.start))
    else:
        entries.remap(shift, shift.lines)
    _shift_bounds(ts, shift)


def _shift_value(vs: ValueSource, shift: _Shift) -> None:
    vs.line += shift.lines(vs.line_start)
    start = shift(vs.start)
    if start != vs.start and isinstance(vs.value, Expression):
        vs.value = _moved_expression(vs.value, start - vs.start)
    vs.start = start
    vs.end = shift(vs.end)
    vs.line_start = shift(vs.line_start)
    vs.line_end = shift(vs.line_end)


def _moved_expression(expr: Expression, move: int) -> Expression:
    """``expr`` with the positions of its nodes (offsets into the file) moved."""
    return dataclasses.replace(expr, tree=_moved_node(expr.tree, move), offset=expr.offset + move)


def _moved_node(node: Any, move: int) -> Any:
    changes: dict[str, Any] = {"start": node.start + move, "end": node.end + move}
    for f in dataclasses.fields(node):
        v = getattr(node, f.name)
        if dataclasses.is_dataclass(v) and hasattr(v, "start"):
            changes[f.name] = _moved_node(v, move)
    return dataclasses.replace(node, **changes)
