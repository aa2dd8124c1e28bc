"""Text to model: the lark grammar in ``grammar/machine.lark`` and the objects built from it.

The parser is lark's LALR parser with the transformer run inline (no parse tree is
built), which keeps loading a large topology fast. Each definition keeps its `=` and
end-of-line tokens; from them the loader records where every value sits in the text
(see :mod:`parasol_core.syntax.source`).
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from parasol_core import params
from parasol_core.expr.tree import (
    MAX_DEPTH,
    MAX_TREE_DEPTH,
    PRECEDENCE,
    Binary,
    Call,
    Expression,
    Number,
    Reference,
    Unary,
)
from parasol_core.limits import MAX_INT, MAX_LINE_LENGTH
from parasol_core.model import (
    BLOCK_CLASSES,
    EXPR,
    INT,
    TIMING,
    Block,
    Machine,
    Timing,
)
from parasol_core.syntax.diagnostics import ERROR, WARNING, Diagnostic, ModelSyntaxError
from parasol_core.syntax.source import (
    BOM,
    BlockSource,
    TableSource,
    ValueSource,
    counting_text,
    line_end,
    line_start,
    position,
)

GRAMMAR_PATH = Path(__file__).resolve().parents[2] / "grammar" / "machine.lark"
SHAPED = ("topology", "virtual")  # the sections a shape comment belongs to
_LINE_BREAK = re.compile(r"[\n\r\x0b;]")

# --------------------------------------------------------------------------- helpers


class _Fail(Exception):
    """A problem found while building objects that makes the text unreadable."""

    def __init__(self, message: str, token: Token) -> None:
        super().__init__(message)
        self.message = message
        self.token = token


def _int(tok: Token) -> int:
    text = str(tok)
    if len(text) > 40:
        raise _Fail(f"number out of range: {text[:20]}...", tok)
    value = int(text[2:], 16) if text[:2] == "0x" else int(text)
    if value > MAX_INT:
        raise _Fail(f"number out of range: {text}", tok)
    return value


def _float(tok: Token) -> float:
    text = str(tok)
    value = float(text)
    if math.isinf(value):
        raise _Fail(f"number out of range: {text[:40]}", tok)
    return value


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


class _Builder(Transformer):
    """Builds model objects bottom-up while lark parses."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.text = ""
        self.diagnostics: list[Diagnostic] = []

    def reset(self, text: str) -> None:
        self.text = text
        self.diagnostics = []

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
            c for c in children[2:-2] if not isinstance(c, Token) and not _is_comment(c, keyword)
        ]
        return _Section(
            keyword, items, line_start(self.text, begin.start_pos),
            line_end(self.text, last_nl.start_pos), line_start(self.text, end.start_pos),
            begin.line, begin.column, line_end(self.text, children[1].start_pos),
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
        try:
            shape = tuple(int(w) for w in words)
        except ValueError:
            shape = ()
        if not 1 <= len(shape) <= 3 or any(n < 1 or n > 1_000_000 for n in shape):
            self.warn(
                f"shape comment ignored: expected 1 to 3 positive sizes, found {text[eq + 1 :].strip()!r}",
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
        i = next(k for k, x in enumerate(c) if isinstance(x, Token) and x.type == "BEGIN")
        begin = c[i]
        end_tok = c[-1] if isinstance(c[-1], Token) and c[-1].type == "END" else None
        items = [
            x
            for x in c[i + 2 : len(c) - (1 if end_tok else 0)]
            if not isinstance(x, Token) and not _is_comment(x, "machine")
        ]
        if end_tok is not None:
            insert_at, end = line_start(text, end_tok.start_pos), len(text)
        else:
            insert_at = end = len(text)
            line = text.count("\n") + 1
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
                for sub in item.items:
                    getattr(obj, child.attr).append(sub)
                    src.children[child.attr].append(sub)
            else:  # a child block
                child = children[item.KEYWORD]
                if child.many:
                    getattr(obj, child.attr).append(item)
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
        return obj

    def _fill_table(self, obj: Block, table: Any, ts: TableSource, items: list, cls: type) -> None:
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
        return self.text.count("\n", 0, offset) + 1

    # ---- expressions

    def _check_depth(self, depth: int, nesting: int, tok: Token) -> tuple[int, int]:
        if nesting > MAX_DEPTH:
            raise _Fail(f"expression nested too deeply (more than {MAX_DEPTH} levels)", tok)
        if depth > MAX_TREE_DEPTH:
            raise _Fail(f"expression too long: more than {MAX_TREE_DEPTH} operators in one "
                        "chain (split it, or use parentheses)", tok)  # fmt: skip
        return depth, nesting

    def integer(self, c: list) -> Number:
        t = c[0]
        return Number(_int(t), str(t), t.start_pos, t.end_pos)

    def float(self, c: list) -> Number:
        t = c[0]
        return Number(_float(t), str(t), t.start_pos, t.end_pos)

    def binary(self, c: list) -> Binary:
        left, op, right = c
        # a left operand continuing a chain at the same precedence is not nested deeper
        chained = isinstance(left, Binary) and PRECEDENCE[left.op] == PRECEDENCE[str(op)]
        left_nesting = _nesting(left) - 1 if chained else _nesting(left)
        depth, nesting = self._check_depth(
            1 + max(_depth(left), _depth(right)), 1 + max(left_nesting, _nesting(right)), op
        )
        return Binary(str(op), left, right, left.start, right.end, depth, nesting)

    def unary(self, c: list) -> Unary:
        op, operand = c
        depth, nesting = self._check_depth(1 + _depth(operand), 1 + _nesting(operand), op)
        return Unary(str(op), operand, op.start_pos, operand.end, depth, nesting)

    def call(self, c: list) -> Call:
        func, _, arg, rpar = c
        depth, nesting = self._check_depth(1 + _depth(arg), 1 + _nesting(arg), func)
        return Call(str(func), arg, func.start_pos, rpar.end_pos, depth, nesting)

    def paren(self, c: list) -> Any:
        lpar, inner, rpar = c
        depth, nesting = self._check_depth(1 + _depth(inner), 1 + _nesting(inner), lpar)
        # Parentheses leave no node; the span widens so messages point at them, and the
        # depth counts them, as a reader counts nesting.
        return _with_span(inner, lpar.start_pos, rpar.end_pos, depth, nesting)

    def index(self, c: list) -> int:
        return _int(c[1])

    def reference(self, c: list) -> Reference:
        prefix = c[0]
        indices: list[int] = []
        fieldname = None
        field_index = None
        end = prefix.end_pos
        i = 1
        while i < len(c) and not isinstance(c[i], Token):
            indices.append(c[i])
            i += 1
        if i < len(c):  # DOT NAME [index]
            fieldname = str(c[i + 1])
            end = c[i + 1].end_pos
            if i + 2 < len(c):
                field_index = c[i + 2]
        # the span's end is refined by the caller's text if an index follows
        ref = Reference(str(prefix), tuple(indices), fieldname, field_index, prefix.start_pos, end)
        return ref


def _is_comment(item: Any, keyword: str) -> bool:
    """A shape comment where no shape belongs is only a comment."""
    return isinstance(item, _Def) and item.kind == "shape" and keyword not in SHAPED


def _depth(node: Any) -> int:
    return getattr(node, "depth", 1)


def _nesting(node: Any) -> int:
    return getattr(node, "nesting", 1)


def _with_span(node: Any, start: int, end: int, depth: int, nesting: int) -> Any:
    from dataclasses import replace

    return replace(node, start=start, end=end, depth=depth, nesting=nesting)


# --------------------------------------------------------------------------- the parser

_lock = threading.Lock()
_parser: Lark | None = None
_builder: _Builder | None = None
_expr_parser: Lark | None = None


def _get_parsers() -> tuple[Lark, _Builder, Lark]:
    global _parser, _builder, _expr_parser
    if _parser is None:
        grammar = GRAMMAR_PATH.read_text(encoding="utf-8")
        _builder = _Builder()
        _parser = Lark(
            grammar, parser="lalr", lexer="contextual", transformer=_builder,
            start="start", maybe_placeholders=False,
        )  # fmt: skip
        _expr_parser = Lark(
            grammar, parser="lalr", lexer="contextual", transformer=_builder,
            start="expr", maybe_placeholders=False,
        )  # fmt: skip
    assert _builder is not None and _expr_parser is not None
    return _parser, _builder, _expr_parser


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


def _check_lines(text: str, file: str | None) -> None:
    """Refuse a line longer than the limit, whatever character ends it."""
    if len(text) <= MAX_LINE_LENGTH:
        return
    lengths = [len(part) for part in _LINE_BREAK.split(text)]
    longest = max(lengths)
    if longest <= MAX_LINE_LENGTH:
        return
    i = lengths.index(longest)
    start = sum(lengths[:i]) + i
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
    file = str(path) if path is not None else None
    if isinstance(text, (bytes, bytearray)):
        text = _decode(bytes(text), file)
    _check_lines(text, file)
    parse_text = text if text.endswith(("\n", "\r", "\x0b", ";")) else text + "\n"
    parser, _, _ = _get_parsers()
    # lark counts lines by `\n`: give it a text of the same length whose `\n`s are the
    # physical line ends (see source.counting_text); the model keeps the original text
    try:
        machine, found = _parse(parser, counting_text(parse_text), file, "file")
    except ModelSyntaxError as e:
        raise _bom_shifted(e, text) from None
    diagnostics = [Diagnostic(d.severity, d.message, d.line, d.column, file) for d in found]
    if text.startswith(BOM):
        diagnostics = [_bom_shifted(d, text) for d in diagnostics]
        _bom_shift_sources(machine)
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


def parse_expression(text: str) -> Expression:
    """Parse one expression (as typed in an editor); raises ModelSyntaxError."""
    if "\n" in text or "\r" in text or "\x0b" in text or ";" in text:
        pos = min(i for i in (text.find(c) for c in "\n\r\x0b;") if i >= 0)
        raise ModelSyntaxError("an expression must fit on one line", 1, pos + 1, text=text)
    _, _, expr_parser = _get_parsers()
    tree, _ = _parse(expr_parser, text, None, "expression")
    return Expression(text.strip(), tree, len(text) - len(text.lstrip()))


def _parse(parser: Lark, text: str, file: str | None, what: str) -> tuple[Any, list[Diagnostic]]:
    """Run one of the parsers (the builder is shared, hence the lock); lark's and the
    builder's failures become a ModelSyntaxError saying where."""
    _, builder, _ = _get_parsers()
    with _lock:
        builder.reset(text)
        try:
            return parser.parse(text), list(builder.diagnostics)
        except _Fail as e:
            raise _error_at(e.message, e.token, text, file) from None
        except UnexpectedInput as e:
            raise _syntax_error(e, text, parser, file, what) from None
        except RecursionError:
            raise ModelSyntaxError(f"the {what} is nested too deeply", 1, 1, file=file) from None
        finally:
            builder.reset("")  # do not keep the text alive


def _clip(machine: Machine, text: str) -> None:
    """Records refer to the original text; ranges past its end (the newline the loader
    may have added) are cut."""
    n = len(text)
    for block in machine.blocks():
        src = block.src
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


# --------------------------------------------------------------------------- errors

_TERMINAL_NAMES = {
    "NAME": "a name",
    "INT": "an integer",
    "FLOAT": "a number",
    "TNUM": "a number",
    "STRING": 'a string in double quotes ("...")',
    "NL": "the end of the line",
    "FUNC": "a function",
    "REFPREFIX": "a reference",
    "SHAPE": "a shape comment",
    "$END": "the end of the file",
}


_SECTION_WORDS: dict[str, set[str]] = {
    "machine": {"begin", "id", "name", "processors", "topologies"},
    "processor": {"begin", "id", "name"},
    "cache": {"size", "speed", "smallloopspeedup"},
    "topology": {"begin", "id", "name", "setup", "routing", "processors", "links"},
    "virtual": {"begin", "id", "name", "setup", "routing", "processors"},
    "link": {"id", "latency", "speed", "connect"},
    "linklist": {"begin"},
    "procid": {"p"},
    "mapping": {"map"},
}
_KEYWORDS = {f"'{w}'" for words in _SECTION_WORDS.values() for w in words}


def _for_section(expected: tuple[str, ...], section: str | None) -> tuple[str, ...]:
    """LALR merges the states after a definition, so its expected set mixes the words of
    several sections; keep the keywords of the section the error is in."""
    if section not in _SECTION_WORDS:
        return expected
    allowed = {f"'{w}'" for w in _SECTION_WORDS[section]}
    return tuple(e for e in expected if e not in _KEYWORDS or e in allowed)


def _describe_terminal(name: str, parser: Lark) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    if name == "SMALLLOOPSPEEDUP":
        return "'smallloopspeedup'"
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        return f"'{pattern.value}'"
    return name.lower()


def _expected(names: set[str] | frozenset[str] | None, parser: Lark) -> tuple[str, ...]:
    if not names:
        return ()
    described = {_describe_terminal(n, parser) for n in names}
    return tuple(sorted(described))


def _show(text: str) -> str:
    """What was found, as it reads after "unexpected"."""
    if text in ("\n", "\r\n", "\r"):
        return "end of line"
    if text == "\x0b":
        return "a vertical tab"
    if text == ";":
        return "';' (a line end)"
    if text.isprintable():
        return repr(text)
    return "character " + repr(text)


def _context(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    if end < 0:
        end = len(text)
    line = text[start:end][:200]
    return line + "\n" + " " * min(pos - start, 200) + "^"


def _error_at(message: str, tok: Token, text: str, file: str | None) -> ModelSyntaxError:
    return ModelSyntaxError(
        message, tok.line, tok.column, text=str(tok)[:80], file=file,
        context=_context(text, tok.start_pos),
    )  # fmt: skip


def _open_sections(e: UnexpectedInput) -> list[tuple[str, int]]:
    """The `begin X` sections still open where the error happened, innermost last."""
    state = getattr(e, "state", None)
    if state is None:
        ip = getattr(e, "interactive_parser", None)
        state = getattr(ip, "parser_state", None)
    stack = getattr(state, "value_stack", None) or []
    opened: list[tuple[str, int]] = []
    for i, v in enumerate(stack):
        if not isinstance(v, Token):
            continue
        # a section parsed to its end but not reduced yet is on the stack as well
        if v.type == "BEGIN" and i + 1 < len(stack) and isinstance(stack[i + 1], Token):
            opened.append((str(stack[i + 1]), v.line))
        elif v.type == "END" and opened:
            opened.pop()
    return opened


def _syntax_error(
    e: UnexpectedInput, text: str, parser: Lark, file: str | None, what: str = "file"
) -> ModelSyntaxError:
    pos = getattr(e, "pos_in_stream", None) or 0
    line, column = getattr(e, "line", 1) or 1, getattr(e, "column", 1) or 1
    opened = _open_sections(e)
    section = opened[-1][0] if opened else None
    if isinstance(e, UnexpectedCharacters):
        found = text[pos]
        if found.isalpha() or found == "_":
            end = pos
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            found = text[pos:end]
        expected = _for_section(_expected(e.allowed, parser), section)
        if {"a function", "a reference"} <= set(expected) and found[:1].isalpha():
            message = _unknown_name(found)
        else:
            message = f"unexpected {_show(found[:40])}"
            if expected:
                message += "; expected " + _or(expected)
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        expected = _for_section(_expected(e.expected, parser), section)
        if tok.type == "$END":
            body = text.rstrip()
            line = body.count("\n") + 1
            column = len(body) - body.rfind("\n")
            pos = max(len(body) - 1, 0)
            if opened:
                kw, at = opened[-1]
                message = f"the file ends inside 'begin {kw}' (line {at}): 'end {kw}' is missing"
            else:
                message = f"the {what} ends too early; expected " + _or(expected)
            found = ""
        else:
            found = str(tok)
            pos = tok.start_pos if tok.start_pos is not None else pos
            shown = _show(found) if tok.type != "NL" else "end of line"
            message = f"unexpected {shown}"
            if tok.type == "NAME" and {"a function", "a reference"} <= set(expected):
                message = _unknown_name(found)
                expected = ()
            if tok.type == "END" and opened:
                kw, at = opened[-1]
                message = f"unexpected 'end' inside 'begin {kw}' (line {at})"
            if expected:
                message += "; expected " + _or(expected)
    else:  # pragma: no cover - lark raises only the two above from parse()
        found, expected, message = "", (), str(e)
    return ModelSyntaxError(
        message, line, column, text=found[:80], expected=expected, file=file,
        context=_context(text, min(pos, len(text) - 1)) if text else "",
    )  # fmt: skip


def _unknown_name(found: str) -> str:
    return (
        f"unknown name {found!r} in an expression: expected a number, a reference "
        "such as pt(1).iga, a function such as sqrt(...), or '('"
    )


def _or(items: tuple[str, ...]) -> str:
    items = tuple(items)
    if len(items) > 8:
        items = items[:8] + ("...",)
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


__all__ = ["load", "loads", "parse_expression", "ModelSyntaxError", "ERROR", "WARNING"]
