"""Where things sat in a loaded file: the record the lossless writer works from.

A loaded object's ``src`` is a :class:`BlockSource`. It remembers, for every value,
the value as loaded and the character ranges of the value and of its whole line; for
every sub-section, where new entries would go; and for child lists, which children
came from the file. The writer compares the current object with this record and edits
only where they differ.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from parasol_core.base.numeric import is_whole

NEWLINE_CHARS = "\n\r\x0b;"
_LINE_END = re.compile(r"[ \t\f]*(#[^\n\r\x0b]*)?(\r\n|\n|\r|\x0b|;)")


# Where lines are, for every position a user is shown: a physical line ends at `\r\n`,
# `\n`, a lone `\r` or a vertical tab (`;` ends a definition, not a line on screen), and
# a byte-order mark at the start of the file takes no column.
PHYSICAL_LINE_END = re.compile(r"\r\n?|[\n\x0b]")
BOM = "\ufeff"
_LONE_BREAK = re.compile(r"\r(?!\n)|\x0b")


class LineIndex:
    """Offsets to 1-based (line, column) in characters, by the rule above."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        if "\r" in text or "\x0b" in text:
            self.starts += [m.end() for m in PHYSICAL_LINE_END.finditer(text)]
        else:  # the common case, faster than the regex
            find = text.find
            pos = find("\n")
            while pos >= 0:
                self.starts.append(pos + 1)
                pos = find("\n", pos + 1)
        self.bom = text.startswith(BOM)

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        column = offset - self.starts[line - 1] + 1
        if line == 1 and self.bom and offset > 0:
            column -= 1
        return line, column


def position(text: str, offset: int) -> tuple[int, int]:
    """(line, column) of ``offset`` in ``text``, without building an index."""
    return LineIndex(text[:offset]).position(offset)


def counting_text(text: str) -> str:
    """``text`` with every lone `\r` and vertical tab made a `\n`: the same length (every
    offset stays), and a counter of `\n` (the reader's) now counts physical lines as
    :class:`LineIndex` does. Only for counting: the model keeps the text as it was."""
    if "\r" not in text and "\x0b" not in text:
        return text
    return _LONE_BREAK.sub("\n", text)


@dataclass
class ValueSource:
    """A definition in the text: the loaded value, the value's range and its line's."""

    value: Any
    start: int  # value text
    end: int
    line_start: int  # the whole definition line, indentation and newline included
    line_end: int
    line: int
    column: int
    count: int | None = None  # `connect = N ...`: the N the file wrote


@dataclass
class TableSource:
    """A sub-section of entries (`begin timings` ... `end timings`), or the entries
    directly in a block when the table has no sub-section of its own."""

    entries: dict[Any, ValueSource] = field(default_factory=dict)
    start: int | None = None  # whole sub-section, None when it is not in the file
    end: int | None = None
    insert_at: int | None = None  # start of its `end` line: where new entries go


@dataclass
class BlockSource:
    start: int
    end: int
    line: int
    column: int
    insert_at: int  # start of the `end X` line
    body_start: int = 0  # just after the `begin X` line
    text: str = field(repr=False, default="")
    values: dict[str, ValueSource] = field(default_factory=dict)
    tables: dict[str, TableSource] = field(default_factory=dict)
    children: dict[str, list] = field(default_factory=dict)  # attr -> loaded children
    containers: dict[str, TableSource] = field(default_factory=dict)  # e.g. linklist
    # Earlier definitions a later one overrode (last wins), as line ranges, by field,
    # table entry (``timings.iga``) or child attribute: removing the value removes these
    # too, or reading the file again would bring the earlier one back.
    shadowed: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # set on the machine's record only
    path: str | None = None
    diagnostics: list = field(default_factory=list)

    def location(self, key: str | None = None) -> tuple[int, int]:
        if key is None:
            return self.line, self.column
        if key in self.values:
            v = self.values[key]
            return v.line, v.column
        table, _, entry = key.partition(".")
        if table in self.tables:
            found = _entry(self.tables[table].entries, entry)
            if found is not None:
                return found.line, found.column
        return self.line, self.column


def _entry(entries: dict[Any, ValueSource], entry: str) -> ValueSource | None:
    """The entry whose key reads as ``entry``: by dictionary lookup (a key is a name or
    a whole number), so that a diagnostic per entry costs O(1), not a scan of the table
    (20,000 unknown timings took 7 s to report, 40,000 over 15 s)."""
    found = entries.get(entry)
    if found is not None:
        return found
    if is_whole(entry) and len(entry) <= 20:
        found = entries.get(int(entry))
        if found is not None and str(int(entry)) == entry:
            return found
    return None


def line_start(text: str, pos: int) -> int:
    """Start of the (logical) line holding ``pos``: just after the previous newline."""
    i = pos
    while i > 0 and text[i - 1] not in NEWLINE_CHARS:
        i -= 1
    return i


def line_end(text: str, nl_start: int) -> int:
    """End of the line whose NL token starts at ``nl_start`` (through its first newline)."""
    m = _LINE_END.match(text, nl_start)
    return m.end() if m else nl_start


def indent_of(text: str, start: int) -> str:
    """The indentation at the start of the line beginning at ``start``."""
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def is_lazy(block: Any) -> bool:
    """True for a link read by the fast path whose source record is not built yet
    (reading ``block.src`` builds it; see :mod:`parasol_core.model.linkstore`)."""
    store = block.__dict__.get("_store")
    return store is not None and store.is_lazy(block)


def loaded_connect(link: Any) -> ValueSource | None:
    """The record of a link's `connect` line as loaded, or None. A link the fast path
    read wrote as many numbers as its count says (else the reader would have read it), so
    there is nothing to report and its record is not built just to be looked at."""
    if is_lazy(link):
        return None
    src = link.src
    return src.values.get("connect") if src is not None else None
