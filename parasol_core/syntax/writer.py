"""Model to text.

Two ways to write:

* **canonical**: indented sections, one definition a line, floats in shortest
  round-trip form. Used for models built from scratch and by `parasol-model format`.
* **lossless** (the default for a loaded model): the loaded text with only the edited
  values changed. The writer compares each object with the record of what was loaded
  (``obj.src``) and turns the differences into text edits: a changed value replaces its
  own characters, a removed definition or section removes its lines, a new one is
  inserted in canonical form beside its siblings. Comments, order, blank lines and
  layout elsewhere stay as they were, and an unedited model writes back byte for byte.

A model built in code can carry comments into its canonical text (:class:`Comments`:
lines above the model, at the top or bottom of a section, before a definition, and after
one on its line), as the measured models say how each value was measured.
"""

from __future__ import annotations

import errno
import operator
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from parasol_core.base import signals
from parasol_core.base.arrays import difference, union
from parasol_core.base.source import BlockSource, ValueSource, indent_of
from parasol_core.model import (
    CONNECT,
    EXPR,
    INT,
    NOTE,
    SHAPE,
    STR,
    TIMING,
    WORD,
    Block,
    Child,
    Field,
    Machine,
    Table,
    Timing,
    all_blocks,
    children_of,
    link_stores,
    walk,
)
from parasol_core.model.inttable import IntTable, TableSources
from parasol_core.model.linkstore import LinkStore
from parasol_core.model.tree import Expression, format_number
from parasol_core.syntax import bulk_text

INDENT = "    "

# --------------------------------------------------------------------------- values


def format_value(kind: str, value: Any) -> str:
    """The text of a value of the given kind, as it stands after `=`."""
    if kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an integer, got {value!r}")
        return str(value)
    if kind == STR:
        text = str(value)
        bad = next((c for c in text if c in '"\n\r\x0b'), None)
        if bad is not None:
            raise ValueError(f"a name cannot contain {bad!r}: {text!r}")
        return f'"{text}"'
    if kind == TIMING:
        if not isinstance(value, Timing):
            value = Timing(float(value))
        text = format_number(float(value.mean))
        if value.sd is not None:
            text += " " + format_number(float(value.sd))
        return text
    if kind == EXPR:
        if isinstance(value, Expression):
            return value.text
        return str(value)
    if kind == CONNECT:
        numbers = list(value)
        return " ".join(str(n) for n in [len(numbers), *numbers])
    if kind == SHAPE:
        return " ".join(str(n) for n in value)
    if kind == NOTE:
        return format_number(float(value))
    if kind == WORD:
        return str(value)
    raise ValueError(f"unknown value kind {kind!r}")


def definition(f: Field, value: Any, comment: bool = True) -> str:
    """A field's line (without indentation); with ``comment``, the comment its value
    carries (:func:`value_comment`) after it."""
    if f.kind == SHAPE:
        return f"# piui: shape = {format_value(SHAPE, value)}"
    if f.kind in (NOTE, WORD):
        return f"# piui: {f.keyword} = {format_value(f.kind, value)}"
    return f"{f.keyword} = {format_value(f.kind, value)}" + _carried(value, comment)


def entry(table: Table, key: Any, value: Any, comment: bool = True) -> str:
    """A table entry's line (without indentation), as :func:`definition`."""
    return f"{table.key_format.format(key)} = {format_value(table.kind, value)}" + _carried(
        value, comment
    )


def value_comment(value: Any) -> str | None:
    """The comment a value carries to its line, or None: an expression written by a fit
    says how it was fitted (:attr:`Expression.comment`), and replaces the comment the
    line had, which was about the value before."""
    return value.comment if isinstance(value, Expression) else None


def _carried(value: Any, comment: bool) -> str:
    text = value_comment(value) if comment else None
    return f"  # {text}" if text else ""


def _same(kind: str, current: Any, loaded: Any) -> bool:
    if kind == CONNECT:
        return tuple(current) == tuple(loaded)
    if kind == TIMING and isinstance(current, Timing) and isinstance(loaded, Timing):
        return current.mean == loaded.mean and current.sd == loaded.sd
    if type(current) is not type(loaded) and kind != EXPR:
        return False
    return current == loaded


# --------------------------------------------------------------------------- canonical


def _layout(cls: type[Block]) -> list[Table | Child]:
    parts: dict[str, Table | Child] = {t.attr: t for t in cls.TABLES}
    parts.update({c.attr: c for c in cls.CHILDREN})
    order = list(cls.ORDER) + [a for a in parts if a not in cls.ORDER]
    return [parts[a] for a in order]


class _Places:
    """The comments of one section: ``top``/``bottom`` by table attribute (None: the
    section itself), ``before``/``after`` by definition (a field's attribute, or
    ``TABLE.KEY`` for a table's entry, as :meth:`Block.location` names them)."""

    __slots__ = ("after", "before", "block", "bottom", "top")

    def __init__(self, block: Block) -> None:
        self.block = block  # held: a link view keeps its identity while it is held
        self.top: dict[str | None, list[str]] = {}
        self.bottom: dict[str | None, list[str]] = {}
        self.before: dict[str, list[str]] = {}
        self.after: dict[str, str] = {}

    def has_table(self, attr: str) -> bool:
        return (attr in self.top or attr in self.bottom
                or any(k.startswith(attr + ".") for k in (*self.before, *self.after)))  # fmt: skip


def comment_text(text: str) -> str:
    """``text`` as it follows `#`; a line break, another control character (written raw
    into the file, it would reach a terminal that shows it) or a `# piui:` annotation's
    start (a reader would take it for one) is refused with ValueError."""
    from parasol_core.base.limits import control_character

    text = str(text)
    bad = next((c for c in text if c in "\n\r\x0b"), None)
    if bad is not None:
        raise ValueError(f"a comment cannot contain {bad!r}: {text!r}")
    bad = control_character(text)
    if bad is not None:
        raise ValueError(f"a comment cannot contain {bad!r} (a control character): {text!r}")
    if text.lstrip(" \t").startswith("piui:"):
        raise ValueError(f"a comment cannot start with 'piui:' (an annotation): {text!r}")
    return text


class Comments:
    """Comments for :func:`dumps_canonical` to write into a model built in code.

    A place is a section object (a processor, its cache, a link of a topology: the link
    object given to the topology, which stays that link's view while it is held here)
    and, within it, a definition named as :meth:`Block.location` names it: a field's
    attribute (``"size"``, ``"latency"``) or ``"TABLE.KEY"`` for a table's entry
    (``"timings.dla"``, ``"entries.bcast"``). Lines are given without their `#`.
    """

    def __init__(self) -> None:
        self.header: list[str] = []
        self._places: dict[int, _Places] = {}

    def _of(self, block: Block) -> _Places:
        places = self._places.get(id(block))
        if places is None:
            places = self._places[id(block)] = _Places(block)
        return places

    def places(self, block: Block) -> _Places | None:
        return self._places.get(id(block))

    @property
    def any_link(self) -> bool:
        return any(p.block.KEYWORD == "link" for p in self._places.values())

    def above(self, *lines: str) -> None:
        """Lines above the model (before `begin machine`)."""
        self.header += [comment_text(t) for t in lines]

    def top(self, block: Block, *lines: str, table: str | None = None) -> None:
        """Lines first in ``block``'s section (or in its ``table``'s sub-section)."""
        self._of(block).top.setdefault(table, []).extend(comment_text(t) for t in lines)

    def bottom(self, block: Block, *lines: str, table: str | None = None) -> None:
        """Lines last in ``block``'s section (or in its ``table``'s sub-section)."""
        self._of(block).bottom.setdefault(table, []).extend(comment_text(t) for t in lines)

    def before(self, block: Block, key: str, *lines: str) -> None:
        """Lines just before the definition ``key`` of ``block``."""
        self._of(block).before.setdefault(key, []).extend(comment_text(t) for t in lines)

    def after(self, block: Block, key: str, text: str) -> None:
        """A comment after the definition ``key`` of ``block``, on its line."""
        self._of(block).after[key] = comment_text(text)


def _comment_lines(indent: str, lines: list[str] | None) -> list[str]:
    return [f"{indent}# {t}" if t else f"{indent}#" for t in lines or ()]


def _commented(indent: str, text: str, places: _Places | None, key: str) -> list[str]:
    """A definition's line, with the comments ``places`` has for ``key`` around it."""
    if places is None:
        return [indent + text]
    after = places.after.get(key)
    line = f"{indent}{text}  # {after}" if after else indent + text
    return [*_comment_lines(indent, places.before.get(key)), line]


def canonical_lines(block: Block, indent: str = "", comments: Comments | None = None
                    ) -> list[str]:  # fmt: skip
    """The canonical text of a section, as lines without line ends (with the comments
    ``comments`` places in it)."""
    inner = indent + INDENT
    places = comments.places(block) if comments is not None else None
    lines = [f"{indent}begin {block.KEYWORD}"]
    if places is not None:
        lines += _comment_lines(inner, places.top.get(None))
    for f, value in block.field_items():
        if value is not None:
            own = places is None or f.attr not in places.after  # Comments' comment first
            lines += _commented(inner, definition(f, value, own), places, f.attr)
    top = isinstance(block, Machine)
    for part in _layout(type(block)):
        if isinstance(part, Table):
            items = getattr(block, part.attr)
            if not items:
                continue
            commented = places is not None and places.has_table(part.attr)
            bulk = bulk_text.table_columns(items) if part.kind == INT and not commented else None
            at = inner if part.block is None else inner + INDENT
            if part.block is not None:
                lines.append(f"{inner}begin {part.block}")
                if commented:
                    lines += _comment_lines(at, places.top.get(part.attr))
            if bulk is not None:
                lines.append(bulk_text.table_lines(bulk, part.key_format, at))
            elif commented:
                for k, v in items.items():
                    key = f"{part.attr}.{k}"
                    own = key not in places.after  # Comments' comment first
                    lines += _commented(at, entry(part, k, v, own), places, key)
            else:
                lines.extend(at + entry(part, k, v) for k, v in items.items())
            if part.block is not None:
                if commented:
                    lines += _comment_lines(at, places.bottom.get(part.attr))
                lines.append(f"{inner}end {part.block}")
        else:
            value = getattr(block, part.attr)
            if (isinstance(value, LinkStore) and bulk_text.can_write_in_bulk(value)
                    and (comments is None or not comments.any_link)):  # fmt: skip
                # one element holding every link section, lines joined by `\n`
                if top:
                    lines.append("")
                lines.append(f"{inner}begin {part.container}")
                lines.append(bulk_text.link_sections(value, inner + INDENT))
                lines.append(f"{inner}end {part.container}")
                continue
            kids = children_of(block, part)
            if not kids:
                continue
            sub = inner
            if part.container:
                if top:
                    lines.append("")
                lines.append(f"{inner}begin {part.container}")
                sub = inner + INDENT
            for kid in kids:
                if top and not part.container:
                    lines.append("")
                lines.extend(canonical_lines(kid, sub, comments))
            if part.container:
                lines.append(f"{inner}end {part.container}")
    if places is not None:
        lines += _comment_lines(inner, places.bottom.get(None))
    lines.append(f"{indent}end {block.KEYWORD}")
    return lines


def dumps_canonical(machine: Machine, newline: str = "\n", comments: Comments | None = None
                    ) -> str:  # fmt: skip
    """The canonical text of ``machine``, with the comments ``comments`` places."""
    lines = _comment_lines("", comments.header) if comments is not None else []
    text = "\n".join([*lines, *canonical_lines(machine, "", comments)]) + "\n"
    # bulk elements hold several lines joined by `\n`; no value holds a line end
    return text if newline == "\n" else text.replace("\n", newline)


# --------------------------------------------------------------------------- lossless


class _Edits:
    def __init__(self, text: str) -> None:
        self.text = text
        self._newline: str | None = None
        self.items: list[tuple[int, int, int, str]] = []  # start, end, seq, replacement
        # For each edit (by seq): (record, kind, value) when it replaces one loaded value
        # with the value's new text, None for any other edit (lines added or removed).
        # The save updates the source records in place from these (see inplace.py).
        self.values: list[tuple[ValueSource, str, Any] | None] = []
        # Values replaced in bulk (links edited in their timings only, with no record):
        # (starts, ends, text codes, texts, kind, values), the value of code i values[i]
        self.bulk: list[tuple[np.ndarray, np.ndarray, np.ndarray, list[str], str, list]] = []

    @property
    def newline(self) -> str:
        """The line end new lines take: the text's own (`\r\n` if it holds one), found
        only when an edit adds lines (a scan of the whole text)."""
        if self._newline is None:
            text = self.text  # one character is found by memchr, two by a slower search
            self._newline = "\r\n" if "\r" in text and "\r\n" in text else "\n"
        return self._newline

    def replace(self, start: int, end: int, new: str) -> None:
        self.items.append((start, end, len(self.items), new))
        self.values.append(None)

    def replace_value(self, vs: ValueSource, kind: str, value: Any) -> None:
        """Replace a loaded value's text with that of ``value`` (of the given kind)."""
        self.items.append((vs.start, vs.end, len(self.items), format_value(kind, value)))
        self.values.append((vs, kind, value))

    def insert_lines(self, at: int, lines: list[str]) -> None:
        nl = self.newline
        text = nl.join(lines) + nl
        if nl != "\n":  # bulk elements of canonical_lines hold several lines
            text = text.replace("\r\n", "\n").replace("\n", nl)
        if at > 0 and self.text[at - 1] not in "\n\r\x0b;":
            text = nl + text
        self.replace(at, at, text)

    def append_link(self, at: int, lines: list[str], store: LinkStore, uid: int,
                    after: Any) -> None:  # fmt: skip
        """Insert a new link's section after a link of its list (whose record is
        ``after``, ending at ``at``): recorded so that the save can read it back on its
        own (see parasol_core.syntax.inplace), with the line ``at`` is on, counted from
        that link's line rather than from the start of the text."""
        self.insert_lines(at, lines)
        line = after.line + self.text.count("\n", after.start, at)
        self.values[-1] = (None, "link", (store, uid, line))

    def replace_bulk(self, starts: np.ndarray, ends: np.ndarray, codes: np.ndarray,
                     texts: list[str], kind: str, values: list) -> None:  # fmt: skip
        """Replace the loaded values' texts ``text[starts[i]:ends[i]]`` with
        ``texts[codes[i]]``, the text of ``values[codes[i]]`` (of ``kind``)."""
        self.bulk.append((starts, ends, codes, texts, kind, values))

    @property
    def empty(self) -> bool:
        return not self.items and not self.bulk

    def spans(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Every edit, in order: (starts, ends, new texts)."""
        texts: list[str] = [new for _, _, _, new in self.items]
        starts = [np.asarray([it[0] for it in self.items], dtype=np.int64)]
        ends = [np.asarray([it[1] for it in self.items], dtype=np.int64)]
        seqs = [np.asarray([it[2] for it in self.items], dtype=np.int64)]
        codes = [np.arange(len(texts), dtype=np.int64)]
        for s, e, c, table, _, _ in self.bulk:
            starts.append(s)
            ends.append(e)
            seqs.append(np.full(s.shape[0], len(self.items), dtype=np.int64))
            codes.append(c + len(texts))
            texts.extend(table)
        start, end = np.concatenate(starts), np.concatenate(ends)
        order = np.lexsort((np.concatenate(seqs), end, start))
        code = np.concatenate(codes)[order]
        return start[order], end[order], [texts[i] for i in code.tolist()]

    def remove_link(self, rec: BlockSource, store: LinkStore, uid: int) -> None:
        """Take out a loaded link's section (its record ``rec``): recorded so that the
        save can move what follows in place (see parasol_core.syntax.inplace), its lines
        counted."""
        self.replace(rec.start, rec.end, "")
        self.values[-1] = (None, "unlink", (store, uid, self.text.count("\n", rec.start, rec.end)))

    def apply(self) -> str:
        if not self.bulk:
            out = []
            pos = 0
            for start, end, _, new in sorted(self.items):
                if start < pos:  # overlapping edits cannot happen; guard against losing text
                    raise AssertionError("overlapping edits")
                out.append(self.text[pos:start])
                out.append(new)
                pos = end
            out.append(self.text[pos:])
            return "".join(out)
        starts, ends, news = self.spans()
        if starts.shape[0] > 1 and (starts[1:] < ends[:-1]).any():
            raise AssertionError("overlapping edits")
        text = self.text
        cuts = [0, *ends.tolist()]
        gaps = [text[a:b] for a, b in zip(cuts, [*starts.tolist(), len(text)])]
        out = [None] * (2 * len(news) + 1)
        out[0::2] = gaps
        out[1::2] = news
        return "".join(out)  # type: ignore[arg-type]


def _inner_indent(src: BlockSource) -> str:
    text = src.text
    for vs in src.values.values():
        return indent_of(text, vs.line_start)
    return indent_of(text, src.insert_at) + INDENT


def _fields_insert_point(src: BlockSource) -> int:
    ends = [vs.line_end for vs in src.values.values()]
    return max(ends) if ends else src.body_start


def _edit_block(block: Block, edits: _Edits) -> None:
    src: BlockSource = block.src
    inner = _inner_indent(src)

    new_fields: list[str] = []
    for f in block.FIELDS:
        current = getattr(block, f.attr)
        vs: ValueSource | None = src.values.get(f.attr)
        if vs is None:
            if current is not None:
                new_fields.append(inner + definition(f, current))
        elif current is None and vs.value is None:
            pass  # e.g. a shape comment the loader could not read: left as it is
        elif current is None:
            edits.replace(vs.line_start, vs.line_end, "")
            _remove_shadowed(src, f.attr, edits)
        elif vs.value is None:
            edits.replace(vs.start, vs.end, format_value(f.kind, current))
        else:
            _edit_value(src.text, vs, f.kind, current, edits)
    if new_fields:
        edits.insert_lines(_fields_insert_point(src), new_fields)

    for table in block.TABLES:
        _edit_table(block, table, src, inner, edits)
    for child in block.CHILDREN:
        _edit_children(block, child, src, inner, edits)


# After a value: blanks and the comment that ends its line, if any (an annotation is not
# a comment about the value: `# piui:` is left alone)
_LINE_COMMENT = re.compile(r"[ \t\f]*(?P<comment>#[^\n\r\x0b]*)?(?=\r\n|\n|\r|\x0b|\Z)")


def _edit_value(text: str, vs: ValueSource, kind: str, current: Any, edits: _Edits) -> None:
    """Replace a loaded value's text if it changed. A value that carries a comment
    (:func:`value_comment`) and ends its line takes the line's comment with it: the
    comment there was about the value before."""
    comment = value_comment(current)
    rest = _LINE_COMMENT.match(text, vs.end) if comment else None
    if rest is not None:
        old = rest.group("comment")
        if old is not None and old[1:].lstrip(" \t").startswith("piui:"):
            rest = None  # an annotation on the value's line: kept, with no comment added
        elif old is not None and old[1:].strip() == comment and _same(kind, current, vs.value):
            return  # the line says it already
    if rest is not None:
        edits.replace(vs.start, rest.end(), f"{format_value(kind, current)}  # {comment}")
    elif not _same(kind, current, vs.value):
        edits.replace_value(vs, kind, current)


def _remove_shadowed(src: BlockSource, key: str, edits: _Edits) -> None:
    """Earlier definitions of a removed value go with it (see BlockSource.shadowed)."""
    for start, end in src.shadowed.get(key, ()):
        edits.replace(start, end, "")


def _edit_table(block: Block, table: Table, src: BlockSource, inner: str, edits: _Edits) -> None:
    ts = src.tables[table.attr]
    current: dict = getattr(block, table.attr)
    if table.block is not None and ts.start is None:
        if current:
            lines = [f"{inner}begin {table.block}"]
            lines += [inner + INDENT + entry(table, k, v) for k, v in current.items()]
            lines.append(f"{inner}end {table.block}")
            edits.insert_lines(src.insert_at, lines)
        return
    if isinstance(ts.entries, TableSources) and _edit_bulk_table(block, table, src, inner, edits):
        return
    if not isinstance(ts.entries, TableSources) and _table_unchanged(
        table.kind, current, ts.entries
    ):
        return  # (a large table read entry by entry: compared as lists)
    entry_indent = None
    for key, vs in ts.entries.items():
        if entry_indent is None:
            entry_indent = indent_of(src.text, vs.line_start)
        if key not in current:
            edits.replace(vs.line_start, vs.line_end, "")
            _remove_shadowed(src, f"{table.attr}.{key}", edits)
        else:
            _edit_value(src.text, vs, table.kind, current[key], edits)
    added = [k for k in current if k not in ts.entries]
    if added:
        if entry_indent is None:
            entry_indent = inner if table.block is None else inner + INDENT
        assert ts.insert_at is not None
        edits.insert_lines(
            ts.insert_at, [entry_indent + entry(table, k, current[k]) for k in added]
        )


def _table_unchanged(kind: str, current: dict, entries: dict) -> bool:
    """Whether an integer or string table holds exactly the keys, in order, and values
    (of the same types, as ``_same`` compares them) it was loaded with: compared as
    lists, without a call per entry. False means only "compare entry by entry"."""
    if kind not in (INT, STR) or len(current) != len(entries):
        return False
    loaded = [vs.value for vs in entries.values()]
    values = list(current.values())
    return (
        list(current) == list(entries)
        and values == loaded
        and list(map(type, values)) == list(map(type, loaded))
    )


def _edit_bulk_table(
    block: Block, table: Table, src: BlockSource, inner: str, edits: _Edits
) -> bool:
    """_edit_table for a table read in bulk (parasol_core.model.inttable): the lines whose
    numbers went or whose values changed, and the numbers added, found on the columns.
    False when the table or its records hold what the columns do not (then the loop
    per entry does it)."""
    ts = src.tables[table.attr]
    entries = ts.entries
    current = getattr(block, table.attr)
    if not isinstance(current, IntTable) or not entries.is_plain():
        return False
    try:
        keys, vals = current.columns()
    except ValueError:
        return False
    rows = entries.numbers()
    loaded = entries.loaded_values()
    if len(keys) == len(rows) and np.array_equal(keys, rows):
        found = np.ones(len(rows), dtype=bool)
        now = vals
    else:
        order = np.argsort(keys, kind="stable")
        pos = np.searchsorted(keys, rows, sorter=order).clip(0, max(len(keys) - 1, 0))
        found = keys[order[pos]] == rows if len(keys) else np.zeros(len(rows), dtype=bool)
        now = vals[order[pos]] if len(keys) else loaded
    for key in rows[~found].tolist():
        vs = entries[key]
        edits.replace(vs.line_start, vs.line_end, "")
        _remove_shadowed(src, f"{table.attr}.{key}", edits)
    for key in rows[found & (now != loaded)].tolist():
        edits.replace_value(entries[key], table.kind, current[key])
    added = keys[~np.isin(keys, rows)].tolist() if len(keys) != int(found.sum()) else []
    if added:
        if len(rows):
            entry_indent = indent_of(src.text, entries.first_line_start())
        else:
            entry_indent = inner if table.block is None else inner + INDENT
        assert ts.insert_at is not None
        edits.insert_lines(
            ts.insert_at, [entry_indent + entry(table, k, current[k]) for k in added]
        )
    return True


def _edit_children(block: Block, child: Child, src: BlockSource, inner: str, edits: _Edits) -> None:
    value = getattr(block, child.attr)
    if isinstance(value, LinkStore):
        _edit_links(value, child, src, inner, edits)
        return
    current = children_of(block, child)
    loaded = src.children.get(child.attr, [])
    if len(current) == len(loaded) and all(map(operator.is_, current, loaded)):
        for c in current:  # the common case: none added, removed or moved
            _edit_block(c, edits)
        return
    loaded_ids = {id(c) for c in loaded}
    current_ids = {id(c) for c in current}
    kept = [c for c in current if id(c) in loaded_ids]
    if [id(c) for c in kept] != [id(c) for c in loaded if id(c) in current_ids]:
        # Reordered: the loaded ones are rewritten in their new order.
        kept_ids: set[int] = set()
    else:
        kept_ids = {id(c) for c in kept}
    for c in loaded:
        if id(c) not in kept_ids:
            edits.replace(c.src.start, c.src.end, "")
            if not child.many:
                _remove_shadowed(src, child.attr, edits)
    container = src.containers.get(child.attr)
    child_indent = inner + INDENT if child.container else inner
    for c in loaded:
        if id(c) in kept_ids:
            child_indent = indent_of(src.text, c.src.start)
            break
    for i, c in enumerate(current):
        if id(c) in kept_ids:
            _edit_block(c, edits)
            continue
        at = None
        for prev in reversed(current[:i]):
            if id(prev) in kept_ids:
                at = prev.src.end
                break
        if at is None:
            for nxt in current[i + 1 :]:
                if id(nxt) in kept_ids:
                    at = nxt.src.start
                    break
        at, lines = _new_child_place(block, child, src, container, inner, at,
                                     canonical_lines(c, child_indent))  # fmt: skip
        edits.insert_lines(at, lines)


def _edit_links(store: LinkStore, child: Child, src: BlockSource, inner: str,
                edits: _Edits) -> None:  # fmt: skip
    """The edits of a topology's links, from its store: only links set since the load
    (or the last save) or holding a record are compared with their text; links added,
    removed or moved are found by comparing the store's link identities (uids) with
    those it held as loaded, in bulk."""
    current = store.uids()
    loaded = store.loaded_uids()
    if current.shape == loaded.shape and np.array_equal(current, loaded):
        done = _edit_link_timings(store, store.timing_edits(), edits)
        for uid in difference(store.touched(), done).tolist():
            row = store.row_of_uid(uid)
            if row is not None and not store.is_unedited(uid):
                _edit_block(store.view(row), edits)
        return
    kept = np.isin(current, loaded)
    if not np.array_equal(current[kept], loaded[np.isin(loaded, current)]):
        kept[:] = False  # reordered: the loaded ones are rewritten in their new order
    bulk = store.timing_edits()
    done = _edit_link_timings(store, bulk[kept[bulk]], edits)
    removed = loaded[~np.isin(loaded, current[kept])]
    for uid in removed.tolist():
        rec = store.peek_record(uid)
        if rec is not None:
            edits.remove_link(rec, store, uid)
    container = src.containers.get(child.attr)
    kept_rows = np.flatnonzero(kept)
    child_indent = inner + INDENT if child.container else inner
    if kept_rows.shape[0]:
        first = store.peek_record(int(current[kept_rows[0]]))
        child_indent = indent_of(src.text, first.start)
    for uid in difference(store.touched(), done).tolist():
        row = store.row_of_uid(uid)
        if row is not None and kept[row] and not store.is_unedited(uid):
            _edit_block(store.view(row), edits)
    for row in np.flatnonzero(~kept).tolist():
        j = int(np.searchsorted(kept_rows, row))
        if j > 0:
            at = store.peek_record(int(current[kept_rows[j - 1]])).end
        elif j < kept_rows.shape[0]:
            at = store.peek_record(int(current[kept_rows[j]])).start
        else:
            at = None
        lines = canonical_lines(store.view(row), child_indent)
        if at is not None and j > 0:  # after a link kept (the last one, or any)
            after = store.peek_record(int(current[kept_rows[j - 1]]))
            edits.append_link(at, lines, store, int(current[row]), after)
            continue
        at, lines = _new_child_place(None, child, src, container, inner, at, lines)
        edits.insert_lines(at, lines)


BULK_LINKS = 64
"""From this many links edited in their timings only, a save compares them with their
text in bulk (:func:`_edit_link_timings`); fewer take the link-by-link path."""


def _edit_link_timings(store: LinkStore, rows: np.ndarray, edits: _Edits) -> np.ndarray:
    """The edits of links set since the load (or the last save) in their latency or
    speed only (``rows``, from :meth:`LinkStore.timing_edits`): their columns compared
    with the values their text holds, and the changed values' texts replaced, in bulk,
    with no record per link (a group edit of the 3,000,000 links of a million-processor
    torus). Returns the uids it dealt with; the others take the link-by-link path."""
    none = np.zeros(0, dtype=np.int64)
    if rows.shape[0] < BULK_LINKS or store.text is None:
        return none
    n = rows.shape[0]
    unknown = np.zeros(n, dtype=bool)
    changed = {}
    for name in ("latency", "speed"):
        kept = store.text_timings(name, rows)
        if kept is None:
            continue
        old_mean, old_sd = kept
        mean = store.means(name)[rows]
        sds = store.sds(name)
        sd = sds[rows] if sds is not None else np.full(n, np.nan)
        unknown |= np.isnan(old_mean)  # not a plain timing when kept: link by link
        same_sd = (sd == old_sd) | (np.isnan(sd) & np.isnan(old_sd))
        changed[name] = ~((mean == old_mean) & same_sd)
    if not changed:
        return none
    need = np.zeros(n, dtype=bool)
    for mask in changed.values():
        need |= mask
    need &= ~unknown
    at = np.flatnonzero(need)  # the rows whose text changes, and their values' spans
    from parasol_core.model.linktext import timing_spans

    spans = timing_spans(store.text, store.starts()[rows[at]])
    unknown[at[spans[:, 0] < 0]] = True  # not of the fast path's form: link by link
    for name, column in (("latency", 0), ("speed", 2)):
        mask = changed.get(name)
        if mask is None:
            continue
        pick = np.flatnonzero(mask & ~unknown)
        if not pick.shape[0]:
            continue
        where = spans[np.searchsorted(at, pick)]
        sds = store.sds(name)
        codes, pairs = bulk_text.distinct_timings(store.means(name)[rows[pick]],
                                                  None if sds is None else sds[rows[pick]])  # fmt: skip
        values = [Timing(mean, sd) for mean, sd in pairs]
        texts = [format_value(TIMING, v) for v in values]
        edits.replace_bulk(where[:, column], where[:, column + 1], codes, texts, TIMING,
                           values)  # fmt: skip
    return store.uids()[rows[~unknown]]


def _new_child_place(block: Block | None, child: Child, src: BlockSource, container: Any,
                     inner: str, at: int | None, lines: list[str]) -> tuple[int, list[str]]:  # fmt: skip
    """Where the lines of a new child section go when no kept sibling places them
    (``at`` None), wrapped in its container section when the block has none yet."""
    if at is not None:
        return at, lines
    if child.container and container is None:
        wrapped = [f"{inner}begin {child.container}", *(INDENT + line for line in lines),
                   f"{inner}end {child.container}"]  # fmt: skip
        return src.insert_at, wrapped
    if container is not None:
        return container.insert_at, lines
    if block is None:  # (a link store's links always sit in their container)
        return src.insert_at, lines
    return _child_insert_point(block, child, src), lines


def _child_insert_point(block: Block, child: Child, src: BlockSource) -> int:
    """A new single or first child goes after the last loaded sibling section of a
    kind that comes before it in canonical order, else before the `end` line."""
    layout = [p.attr for p in _layout(type(block))]
    best = None
    for attr in layout[: layout.index(child.attr)]:
        for c in src.children.get(attr, []):
            best = max(best or 0, c.src.end)
        ts = src.containers.get(attr) or src.tables.get(attr)
        if ts is not None and ts.end is not None:
            best = max(best or 0, ts.end)
    return best if best is not None else src.insert_at


def dumps(machine: Machine, canonical: bool = False) -> str:
    """The text of a model: lossless for a loaded model, canonical otherwise."""
    if canonical or machine.src is None:
        return dumps_canonical(machine)
    return _lossless(machine).apply()


def _lossless(machine: Machine) -> _Edits:
    """The edits that turn the loaded text into the model's text."""
    _check_sources(machine)
    edits = _Edits(machine.src.text)
    _edit_block(machine, edits)
    return edits


def _check_sources(machine: Machine) -> None:
    """Objects moved in from another model carry another text's positions: write them
    as new."""
    text = machine.src.text
    for block in all_blocks(machine):
        src = block.src
        if src is not None and src.text is not text:
            _forget(block)
    for store in link_stores(machine):
        if store.text is not None and store.text is not text:
            store.forget_sources()


def _forget(block: Block) -> None:
    for b in walk(block, links=False):
        b.src = None
    for store in link_stores(block):
        store.forget_sources()


# --------------------------------------------------------------------------- saving


def save(machine: Machine, path: str | Path, canonical: bool = False) -> str:
    """Write a model to ``path`` atomically: a temporary file beside it, then a rename,
    so a crash never leaves half a file. The text is checked *before* anything is
    written, and nothing is written unless it reads as the same model (a value the
    format cannot hold raises ValueError and leaves the file as it was). The model
    then records the saved text, so the next save again changes only what is edited
    after this one. A symbolic link is followed: the file it points to is replaced and
    the link kept.

    When every edit replaces values (the editor's common case), each new value's text
    is read back on its own and the records are updated in place (see
    :mod:`parasol_core.syntax.inplace`); otherwise the whole text is read back.
    Returns the text written."""
    from parasol_core.syntax import inplace

    if canonical or machine.src is None:
        text = dumps(machine, canonical=canonical)
    else:
        edits = _lossless(machine)
        steps = inplace.plan(edits.text, edits, _reads_back)
        text = edits.text if edits.empty else edits.apply()
        if steps is not None:
            write_text_atomic(Path(path), text)
            if steps or edits.bulk:
                inplace.apply(machine, all_blocks(machine), steps, text,
                              inplace.bulk_moves(edits))  # fmt: skip
            _saved_as(machine, str(path))
            return text
    _save_read_back(machine, path, text)
    return text


def _saved_as(machine: Machine, file: str) -> None:
    """The path a save wrote to, as a fresh load of it would record it."""
    from dataclasses import replace

    src = machine.src
    src.path = file
    src.diagnostics = [d if d.file == file else replace(d, file=file) for d in src.diagnostics]


def _save_read_back(machine: Machine, path: str | Path, text: str) -> None:
    """Save ``text`` after reading it back whole: it must load as the same model, whose
    records the model then takes."""
    from parasol_core.base.diagnostics import ModelSyntaxError
    from parasol_core.syntax.loader import loads

    try:
        fresh = loads(text, str(path))  # the read-back rebase needs anyway, done first
    except ModelSyntaxError as e:  # a ValueError, as callers (the editor) expect
        raise ValueError(f"the text would not load back (line {e.line}: {e.message}); "
                         "not saved") from None  # fmt: skip
    check_same_model(machine, fresh)
    write_text_atomic(Path(path), text)
    rebase(machine, fresh)


def check_same_model(machine: Machine, fresh: Machine) -> None:
    """Raise ValueError unless ``fresh`` (the written text, read back) holds the same
    sections and values as ``machine``, compared as the writer sees them (``_same``)."""
    a, b = list(walk(machine, links=False)), list(walk(fresh, links=False))
    stores_a, stores_b = link_stores(machine), link_stores(fresh)
    same = len(stores_a) == len(stores_b) and all(map(_same_links, stores_a, stores_b))
    same = same and len(a) == len(b) and all(
        type(x) is type(y)
        and all(_reads_back(f.kind, v, getattr(y, f.attr)) for f, v in x.field_items())
        and all(_same_table(t.kind, getattr(x, t.attr), getattr(y, t.attr)) for t in x.TABLES)
        for x, y in zip(a, b)
    )  # fmt: skip
    if not same:
        raise ValueError("the written text does not read back as the same model; not saved")


def _same_links(current: LinkStore, loaded: LinkStore) -> bool:
    """The links of ``current`` read back as ``loaded``'s: compared in bulk, and link by
    link (as the writer sees values) only where a value is not in the columns."""
    if len(current) != len(loaded):
        return False
    odd = union(current.odd_rows(), loaded.odd_rows())
    plain = np.ones(len(current), dtype=bool)
    plain[odd] = False
    for name in ("latency", "speed"):
        if not np.array_equal(current.means(name)[plain], loaded.means(name)[plain]):
            return False
        sa, sb = current.sds(name), loaded.sds(name)
        if sa is not None or sb is not None:
            sa = np.full(len(current), np.nan) if sa is None else sa
            sb = np.full(len(loaded), np.nan) if sb is None else sb
            if not np.array_equal(sa[plain], sb[plain], equal_nan=True):
                return False
    if not np.array_equal(current.ids[plain], loaded.ids[plain]):
        return False
    (oa, pa), (ob, pb) = current.connect_csr(), loaded.connect_csr()
    if not np.array_equal(np.diff(oa)[plain], np.diff(ob)[plain]):
        return False
    if not odd.shape[0]:
        if not np.array_equal(pa[oa[0] : oa[-1]], pb[ob[0] : ob[-1]]):
            return False
    else:
        for r in np.flatnonzero(plain).tolist():
            if not np.array_equal(pa[oa[r] : oa[r + 1]], pb[ob[r] : ob[r + 1]]):
                return False
    for r in odd.tolist():
        x, y = current.view(r), loaded.view(r)
        if not all(_reads_back(f.kind, getattr(x, f.attr), getattr(y, f.attr)) for f in x.FIELDS):
            return False
    return True


def _reads_back(kind: str, current: Any, loaded: Any) -> bool:
    if current is None or loaded is None:
        return current is loaded
    if kind == TIMING and not isinstance(current, Timing):
        current = Timing(float(current))
    elif kind == SHAPE:
        return tuple(current) == tuple(loaded)
    elif kind == NOTE:
        return float(current) == float(loaded)
    elif kind == EXPR and isinstance(current, str):
        return current.strip() == loaded.text
    return _same(kind, current, loaded)


def _same_table(kind: str, current: dict, loaded: dict) -> bool:
    return current.keys() == loaded.keys() and all(
        _reads_back(kind, v, loaded[k]) for k, v in current.items()
    )


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename
    (:func:`stage_text`, then :meth:`Staged.commit`).

    A symbolic link is resolved first, so the file it points to is replaced and the link
    stays. The new file gets the old one's permission bits (a read-only file stays
    read-only) and its owner and group; when they cannot be kept (the file belongs to
    someone else), nothing is replaced and PermissionError says why.

    A target that exists and is not a regular file is never replaced: a character
    device or a FIFO is written through in place, anything else refused (see
    :func:`write_through`).

    Whatever stops the write (an error, a signal: :mod:`parasol_core.base.signals`)
    before the rename removes the temporary and leaves the file as it was; after it,
    the file is the new one, whole. Temporaries that writers of the same file left when
    killed (SIGKILL, a power cut) are removed first
    (:func:`parasol_core.base.filelock.remove_stale_temporaries`)."""
    stage_text(path, text).commit()


class Staged:
    """A text written beside its target and not yet in place: :meth:`commit` renames
    it over the target, :meth:`discard` removes it. Several files can be staged first
    and committed together, the most important last (a measurement's model after its
    tables)."""

    def __init__(self, path: Path, tmp: Path | None, fd: int | None, data: bytes | None = None
                 ) -> None:  # fmt: skip
        self.path = path  # the real target
        self.tmp = tmp  # None for a character device or FIFO, written through at commit
        self._fd = fd  # holds the temporary's lock until it is renamed or removed
        self._data = data

    def commit(self) -> None:
        try:
            if self.tmp is None:
                assert self._data is not None
                write_through(self.path, self._data)
            else:
                with signals.deferred():  # renamed and known to be: one step
                    os.replace(self.tmp, self.path)
                    self.tmp = None
        except BaseException:
            self.discard()
            raise
        finally:
            self._close()

    def discard(self) -> None:
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None
        self._data = None
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def stage_text(path: Path, text: str) -> Staged:
    """``text`` written to a temporary beside ``path`` (see :func:`write_text_atomic`),
    synced, with the target's permission bits, owner and group; not yet renamed."""
    from parasol_core.base import filelock

    path = Path(os.path.realpath(path))
    if _is_special(path):
        return Staged(path, None, None, text.encode("utf-8"))
    filelock.remove_stale_temporaries(path)
    staged = None
    try:
        with signals.deferred():  # made and known as one step: a signal never leaks it
            fd, tmp = _temporary_beside(path, str(path))
            staged = Staged(path, tmp, fd)
        with os.fdopen(fd, "wb", closefd=False) as f:
            # encoded a piece at a time: no whole encoded copy of the text in memory
            for i in range(0, len(text), _CHUNK):
                f.write(text[i : i + _CHUNK].encode("utf-8"))
            f.flush()
            os.fsync(fd)
        try:
            st = path.stat()
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        else:
            mode = st.st_mode & 0o777
            _keep_owner(str(tmp), path, st)
        os.chmod(tmp, mode)
    except BaseException:
        if staged is not None:
            staged.discard()
        raise
    return staged


def _temporary_beside(path: Path, shown: str) -> tuple[int, Path]:
    """:func:`parasol_core.base.filelock.temporary_beside`, its failure worded as the
    directory's (OSError, its filename ``shown``)."""
    from parasol_core.base import filelock

    try:
        return filelock.temporary_beside(path)
    except OSError as e:
        parent = path.parent
        # no such file, in a directory that is there: a file system whose files are the
        # kernel's (/proc, /sys) takes no new one, nor a file in place of one
        if e.errno == errno.ENOENT and parent.is_dir():
            why = (f"{str(parent)!r} takes no new files (a file system of the system's own, "
                   "such as /proc or /sys); nothing was written")  # fmt: skip
        else:
            why = f"cannot write in {str(parent)!r}: {e.strerror or e}"
        raise OSError(e.errno, why, shown) from None


def check_writable(path: str | Path) -> None:
    """Raise OSError (its filename ``path``, its strerror saying why) when
    :func:`write_text_atomic` could not write ``path``, for what can be known before
    the text exists: a directory or a node that is not a file in its place, a missing
    directory, one this process cannot write in (read-only, not its own, a read-only
    file system: tried by making a temporary there), a file whose owner the new one
    could not keep. A command checks its outputs with it before any work."""

    shown = str(path)
    real = Path(os.path.realpath(path))
    try:
        st: os.stat_result | None = real.stat()
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise NotADirectoryError(errno.ENOTDIR, "a part of its path is not a directory",
                                 shown) from None  # fmt: skip
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return  # written through in place (write_through)
        from parasol_core.base.limits import file_kind

        raise OSError(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL,
                      f"it is {file_kind(st.st_mode)}, not a file to write to; nothing was "
                      "written", shown)  # fmt: skip
    parent = real.parent
    if not parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"no such directory {str(parent)!r}", shown)
    with signals.deferred():  # a probe, made and removed as one step
        fd, tmp = _temporary_beside(real, shown)
        try:
            if st is not None:
                _keep_owner(str(tmp), real, st)
        finally:
            os.close(fd)
            try:
                os.unlink(tmp)
            except OSError:
                pass


#: Characters encoded and written at a time (a str holds no surrogate pair to split):
#: small pieces stay in the processor's cache and reuse their memory (4 MB pieces,
#: each new memory, took four times as long).
_CHUNK = 1 << 16


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists and is not a regular file (see :func:`write_through`)."""
    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def write_through(path: Path, data: bytes) -> bool:
    """Write ``data`` into ``path`` in place when it is a character device (``/dev/null``,
    a terminal) or a FIFO, and return True; return False for a regular file or none
    (the caller replaces it atomically). A directory, socket or block device raises
    OSError and is left alone: renaming a file over any of these would destroy a node
    that is not the caller's to destroy.

    The open does not block: a FIFO with no reader raises OSError (ENXIO) with a
    message instead of waiting forever; once open, writes block as usual, so a slow
    reader gets every byte. A device that refuses the bytes (``/dev/full``) raises
    the OSError it gives (ENOSPC)."""
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISREG(st.st_mode):
        return False
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        from parasol_core.base.limits import file_kind

        raise OSError(errno.EINVAL, f"it is {file_kind(st.st_mode)}, not a file to write "
                      "to; nothing was written", str(path))  # fmt: skip
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "it is a FIFO (named pipe) that no program is "
                          "reading; nothing was written", str(path)) from None  # fmt: skip
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):  # replaced since the stat
            raise OSError(errno.EAGAIN, "it changed while it was being opened; nothing "
                          "was written", str(path))  # fmt: skip
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
    return True


def _keep_owner(tmp: str, path: Path, st: os.stat_result) -> None:
    new = os.stat(tmp)
    if (new.st_uid, new.st_gid) == (st.st_uid, st.st_gid):
        return
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
    except OSError:
        raise PermissionError(
            f"{path} belongs to user {st.st_uid}, group {st.st_gid}; the new file could "
            "not be given the same owner, so the file was not replaced"
        ) from None


def rebase(machine: Machine, fresh: Machine) -> None:
    """Give ``machine`` the source records of ``fresh`` (its own text, re-read), keeping
    the objects themselves, which windows may hold."""
    old_blocks = list(walk(machine, links=False))
    new_blocks = list(walk(fresh, links=False))
    if len(old_blocks) != len(new_blocks) or any(
        type(a) is not type(b) for a, b in zip(old_blocks, new_blocks)
    ):
        raise AssertionError("the written text does not read back as the same model")
    by_new = {id(b): a for a, b in zip(old_blocks, new_blocks)}
    for old, new in zip(old_blocks, new_blocks):
        src = new.src
        src.children = {k: [by_new[id(c)] for c in v] for k, v in src.children.items()}
        old.src = src
    for old_store, new_store in zip(link_stores(machine), link_stores(fresh), strict=True):
        old_store.rebase(new_store)  # records (built or not), link for link
