"""The object builder: model objects from the reader's tokens
(:mod:`parasol_core.syntax.reader`; the tests run it inline in lark as well), with the record of where every
value sits in the text (see :mod:`parasol_core.base.source`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from parasol_core.base import params
from parasol_core.base.diagnostics import WARNING, Diagnostic
from parasol_core.base.numeric import ValueRangeError, read_int
from parasol_core.base.source import (
    BlockSource,
    TableSource,
    ValueSource,
    counting_text,
    line_end,
    line_start,
)
from parasol_core.model import BLOCK_CLASSES, EXPR, INT, TIMING, Block, Machine, Timing
from parasol_core.model.inttable import IntTable
from parasol_core.model.tree import Expression
from parasol_core.syntax.build_expr import ExprBuilder, Token, _float, _int

SHAPED = ("topology", "virtual")  # the sections a shape comment belongs to
MAX_SHAPE_DIMS = 6  # a shape comment holds 1 to 6 sizes (N-D meshes and tori)


class _Def(NamedTuple):
    """One `key = value` line: ``kind`` is the keyword, or the table entry kind."""

    kind: str
    key: Any
    value: Any
    source: ValueSource


@dataclass
class _Section:
    """A sub-section that becomes a table or a container of children on its parent."""

    keyword: str
    items: list
    start: int
    end: int
    insert_at: int
    line: int
    column: int
    body_start: int = 0


class _Builder(ExprBuilder):
    """Builds model objects bottom-up while the reader reads."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.diagnostics: list[Diagnostic] = []
        self.bulk: dict[int, Any] = {}

    def reset(self, text: str, bulk: dict[int, Any] | None = None, counted: str | None = None,
              ) -> None:  # fmt: skip
        self.text = text
        # for counting lines: lone `\r` and vertical tabs end lines too (source.py); the
        # loader has made it already
        self.count_text = counting_text(text) if counted is None else counted
        self.diagnostics = []
        # sections read by the fast path (parasol_core.syntax.fastscan), by body start
        self.bulk = bulk or {}

    def warn(self, message: str, line: int, column: int, severity: str = WARNING) -> None:
        self.diagnostics.append(Diagnostic(severity, message, line, column))

    # ---- positions

    def _value_source(self, value: Any, eq: Token, nl: Token) -> ValueSource:
        text = self.text
        start = eq.end_pos
        while text[start] in " \t\f":
            start += 1
        ls = line_start(text, eq.start_pos)
        col = ls
        while text[col] in " \t\f":
            col += 1
        return ValueSource(
            value, start, nl.start_pos, ls, line_end(text, nl.start_pos),
            eq.line, eq.column - (eq.start_pos - col),
        )  # fmt: skip

    def _section(self, keyword: str, children: list) -> _Section:
        begin, end, last_nl = children[0], children[-2], children[-1]
        items = [
            c for c in children[2:-2] if not isinstance(c, str) and not _is_comment(c, keyword)
        ]
        body_start = line_end(self.text, children[1].start_pos)
        if self.bulk and body_start in self.bulk:
            # the body was read by the bulk scanners (syntax.fastscan)
            found = self.bulk.pop(body_start)
            if keyword == "linklist":  # columns (parasol_core.model.linkstore.LinkColumns)
                items = [found, *items]
            else:
                found_items, warnings = found
                for message, line, column in warnings:
                    self.warn(message, line, column)
                if isinstance(found_items, list):
                    items = found_items + items
                else:  # a procid or mapping body (fastscan.BulkTable)
                    items = [found_items, *items]
        return _Section(
            keyword, items, line_start(self.text, begin.start_pos),
            line_end(self.text, last_nl.start_pos), line_start(self.text, end.start_pos),
            begin.line, begin.column, body_start,
        )  # fmt: skip

    # ---- definitions

    def _field(self, kind: str, children: list, value: Any) -> _Def:
        eq, nl = children[0], children[-1]
        return _Def(kind, kind, value, self._value_source(value, eq, nl))

    def id_def(self, c: list) -> _Def:
        return self._field("id", c, _int(c[1]))

    def name_def(self, c: list) -> _Def:
        return self._field("name", c, str(c[1])[1:-1])

    def processors_def(self, c: list) -> _Def:
        return self._field("processors", c, _int(c[1]))

    def topologies_def(self, c: list) -> _Def:
        return self._field("topologies", c, _int(c[1]))

    def links_def(self, c: list) -> _Def:
        return self._field("links", c, _int(c[1]))

    def size_def(self, c: list) -> _Def:
        return self._field("size", c, _int(c[1]))

    def setup_def(self, c: list) -> _Def:
        return self._field("setup", c, c[1])

    def routing_def(self, c: list) -> _Def:
        return self._field("routing", c, str(c[1])[1:-1])

    def speed_def(self, c: list) -> _Def:
        return self._field("speed", c, c[1])

    def latency_def(self, c: list) -> _Def:
        return self._field("latency", c, c[1])

    def smallloopspeedup_def(self, c: list) -> _Def:
        if c[0] == "smallloopsspeedup":
            self.warn("'smallloopsspeedup' is read as 'smallloopspeedup'", c[0].line, c[0].column)
        return self._field("smallloopspeedup", c[1:], c[2])

    def connect_def(self, c: list) -> _Def:
        numbers = [_int(t) for t in c[1:-1]]
        d = self._field("connect", c, numbers[1:])
        d.source.value = tuple(numbers[1:])  # a snapshot: the list on the link may change
        d.source.count = numbers[0]
        return d

    def shape_def(self, c: list) -> _Def:
        tok, nl = c
        text = str(tok)
        eq = text.index("=")
        words = text[eq + 1 :].split()
        why = ""
        try:  # ASCII digits, as every number (base.numeric): '٤' is not 4
            shape = tuple(read_int(w, "a size") for w in words if len(w) <= 8)
            if len(shape) < len(words):
                shape = ()
        except ValueRangeError as e:
            shape, why = (), getattr(e, "reason", "")
        if not 1 <= len(shape) <= MAX_SHAPE_DIMS or any(n < 1 or n > 1_000_000 for n in shape):
            self.warn(
                f"shape comment ignored: expected 1 to {MAX_SHAPE_DIMS} positive sizes, found {text[eq + 1 :].strip()!r}{why}",
                tok.line, tok.column,
            )  # fmt: skip
            shape = None
        start = tok.start_pos + eq + 1
        while self.text[start] in " \t":
            start += 1
        end = tok.end_pos
        while end > start and self.text[end - 1] in " \t\f":
            end -= 1
        ls = line_start(self.text, tok.start_pos)
        vs = ValueSource(
            shape, start, end, ls, line_end(self.text, nl.start_pos), tok.line, tok.column
        )
        return _Def("shape", "shape", shape, vs)

    def timing(self, c: list) -> Timing:
        return Timing(_float(c[0]), _float(c[1]) if len(c) > 1 else None)

    def timing_def(self, c: list) -> _Def:
        name_tok, eq, value, nl = c
        name = str(name_tok)
        canonical, warning = params.resolve_name(name)
        if warning:
            self.warn(warning, name_tok.line, name_tok.column)
        return _Def(TIMING, canonical or name, value, self._value_source(value, eq, nl))

    def expr_def(self, c: list) -> _Def:
        name_tok, eq, tree, nl = c
        vs = self._value_source(None, eq, nl)
        expr = Expression(self.text[vs.start : vs.end], tree, vs.start)
        vs.value = expr
        return _Def(EXPR, str(name_tok), expr, vs)

    def p_def(self, c: list) -> _Def:
        num, eq, value, nl = c
        v = _int(value)
        return _Def(INT, _int(num), v, self._value_source(v, eq, nl))

    map_def = p_def

    # ---- sub-sections that become tables or containers

    def timings(self, c: list) -> _Section:
        return self._section("timings", c)

    def combinations(self, c: list) -> _Section:
        return self._section("combinations", c)

    def procid(self, c: list) -> _Section:
        return self._section("procid", c)

    def mapping(self, c: list) -> _Section:
        return self._section("mapping", c)

    def linklist(self, c: list) -> _Section:
        return self._section("linklist", c)

    # ---- sections that become objects

    def _block(self, keyword: str, children: list) -> Block:
        section = self._section(keyword, children)
        return self.build(BLOCK_CLASSES[keyword], section)

    def processor(self, c: list) -> Block:
        return self._block("processor", c)

    def cache(self, c: list) -> Block:
        return self._block("cache", c)

    def machinecombinations(self, c: list) -> Block:
        return self._block("machinecombinations", c)

    def pvm(self, c: list) -> Block:
        return self._block("pvm", c)

    def express(self, c: list) -> Block:
        return self._block("express", c)

    def mpi(self, c: list) -> Block:
        return self._block("mpi", c)

    def topology(self, c: list) -> Block:
        return self._block("topology", c)

    def virtual(self, c: list) -> Block:
        return self._block("virtual", c)

    def link(self, c: list) -> Block:
        return self._block("link", c)

    def machine_end(self, c: list) -> Token:
        return c[0]  # the END token; `start` takes it apart

    def start(self, c: list) -> Machine:
        text = self.text
        i = next(k for k, x in enumerate(c) if isinstance(x, str) and x.type == "BEGIN")
        begin = c[i]
        end_tok = c[-1] if isinstance(c[-1], str) and c[-1].type == "END" else None
        items = [
            x
            for x in c[i + 2 : len(c) - (1 if end_tok else 0)]
            if not isinstance(x, str) and not _is_comment(x, "machine")
        ]
        if end_tok is not None:
            insert_at, end = line_start(text, end_tok.start_pos), len(text)
        else:
            insert_at = end = len(text)
            line = self.count_text.count("\n") + 1
            self.warn("'end machine' is missing at the end of the file", line, 1)
        section = _Section(
            "machine", items, line_start(text, begin.start_pos), end, insert_at,
            begin.line, begin.column, line_end(text, c[i + 1].start_pos),
        )  # fmt: skip
        return self.build(Machine, section)

    # ---- assembling an object from its items

    def build(self, cls: type[Block], section: _Section) -> Block:
        obj = cls()
        src = BlockSource(
            section.start, section.end, section.line, section.column, section.insert_at,
            section.body_start, self.text,
        )  # fmt: skip
        obj.src = src
        fields = {f.keyword: f for f in cls.FIELDS}
        tables = {t.block: t for t in cls.TABLES}
        direct_table = tables.get(None)
        children = {c.container or c.cls.KEYWORD: c for c in cls.CHILDREN}
        for child in cls.CHILDREN:
            src.children[child.attr] = []
        for table in cls.TABLES:
            src.tables[table.attr] = TableSource(
                insert_at=section.insert_at if table.block is None else None
            )
        if direct_table is not None:
            self._fill_table(obj, direct_table, src.tables[direct_table.attr], section.items, cls)
            return obj
        for item in section.items:
            if isinstance(item, _Def):
                f = fields[item.kind]
                if f.attr in src.values:
                    first = src.values[f.attr]
                    src.shadowed.setdefault(f.attr, []).append((first.line_start, first.line_end))
                    self.warn(
                        f"'{f.keyword}' of {obj.KEYWORD} is defined again (first on line "
                        f"{first.line}); the last definition is used",
                        item.source.line, item.source.column,
                    )  # fmt: skip
                src.values[f.attr] = item.source
                setattr(obj, f.attr, item.value)
            elif isinstance(item, _Section) and item.keyword in tables:
                table = tables[item.keyword]
                ts = src.tables[table.attr]
                if ts.start is not None:
                    self.warn(
                        f"'begin {item.keyword}' appears again in this {obj.KEYWORD} (first on "
                        f"line {self._line_of(ts.start)}); the last one is used",
                        item.line, item.column,
                    )  # fmt: skip
                for key, vs in ts.entries.items():
                    src.shadowed.setdefault(f"{table.attr}.{key}", []).append(
                        (vs.line_start, vs.line_end)
                    )
                ts.start, ts.end, ts.insert_at = item.start, item.end, item.insert_at
                ts.entries = {}
                setattr(obj, table.attr, {})
                self._fill_table(obj, table, ts, item.items, cls)
            elif isinstance(item, _Section):  # a container: linklist
                child = children[item.keyword]
                ts = src.containers.setdefault(child.attr, TableSource())
                ts.start, ts.end, ts.insert_at = item.start, item.end, item.insert_at
                # a LinkStore: what it holds as loaded is its own record (mark_loaded)
                getattr(obj, child.attr).extend(item.items)
            else:  # a child block
                child = children[item.KEYWORD]
                if child.many:
                    getattr(obj, child.attr).append(item)
                    if child.container is None:
                        src.children[child.attr].append(item)
                else:
                    previous = getattr(obj, child.attr)
                    if previous is not None:
                        src.shadowed.setdefault(child.attr, []).append(
                            (previous.src.start, previous.src.end)
                        )
                        self.warn(
                            f"section '{item.KEYWORD}' is defined again (first on line "
                            f"{previous.src.line}); the last one is used",
                            item.src.line, item.src.column,
                        )  # fmt: skip
                    setattr(obj, child.attr, item)
                    src.children[child.attr] = [item]
        for child in cls.CHILDREN:
            if child.container is not None:
                getattr(obj, child.attr).mark_loaded()
        return obj

    def _fill_table(self, obj: Block, table: Any, ts: TableSource, items: list, cls: type) -> None:
        if items and not isinstance(items[0], _Def) and hasattr(items[0], "sources"):
            bulk = items[0]  # a procid or mapping body read in bulk (fastscan.BulkTable)
            if len(items) == 1 and not ts.entries and not getattr(obj, table.attr):
                found = IntTable.from_columns(bulk.rec[:, 2].copy(), bulk.rec[:, 5].copy())
                if found.distinct():
                    setattr(obj, table.attr, found)
                    ts.entries = bulk.sources(found.columns()[0])
                    return
            items = [*bulk.items(), *items[1:]]
        entries = getattr(obj, table.attr)
        shadowed = obj.src.shadowed
        for item in items:
            if item.key in ts.entries:
                first = ts.entries[item.key]
                shadowed.setdefault(f"{table.attr}.{item.key}", []).append(
                    (first.line_start, first.line_end)
                )
                label = table.key_format.format(item.key)
                self.warn(
                    f"'{label}' is defined again (first on line {first.line}); "
                    "the last definition is used",
                    item.source.line, item.source.column,
                )  # fmt: skip
            ts.entries[item.key] = item.source
            entries[item.key] = item.value

    def _line_of(self, offset: int) -> int:
        return self.count_text.count("\n", 0, offset) + 1


# The grammar gives each section a rule of its own for a shape comment (X_shape), so
# that the states after one are not shared between sections; each is a shape_def.
for _keyword in (*BLOCK_CLASSES, "timings", "combinations", "procid", "linklist", "mapping"):
    setattr(_Builder, f"{_keyword}_shape", _Builder.shape_def)


def _is_comment(item: Any, keyword: str) -> bool:
    """A shape comment where no shape belongs is only a comment."""
    return isinstance(item, _Def) and item.kind == "shape" and keyword not in SHAPED
