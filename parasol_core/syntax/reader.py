"""The model-file reader: text to the object builder's calls, and the syntax errors.

This is the parser. It reads a whole model file (or one expression) by recursive
descent, a line at a time, and makes the calls into the object builder
(:mod:`parasol_core.syntax.builder`) that build the model, with tokens that carry their
type, text, position, line and column. The bulk tables (link lists, ``procid`` and
``mapping`` tables, timings) it hands to the bulk scanners of
:mod:`parasol_core.syntax.fastscan` (a C kernel where built, regular expressions
otherwise), which take a body of the strictest form whole; any other body it reads
itself.

What it reads is declared once:

* the section layout (which fields, tables and sub-sections each section holds) comes
  from the schema in :mod:`parasol_core.model` (``Block.FIELDS``, ``TABLES``,
  ``CHILDREN``): see :func:`_layout`;
* operator precedence comes from :mod:`parasol_core.model.tree` (``BINARY_LEVELS``),
  which the writer's parenthesizing (``tree.unparse``) uses too;
* the lexical forms (numbers, strings, line ends, comments) are those of
  ``grammar/machine.lark``, which the tests hold this module to.

A syntax error is a :class:`ModelSyntaxError` at the first token that cannot stand
where it is, with its line and column and what was expected there. The grammar with
lark is the executable specification in the tests (``tests/lark_reference.py``): the
differential tests hold this reader to it on acceptance, the model, the source records
and the position of the first error.

Tokens are read as the grammar's contextual lexer reads them: blanks (spaces, tabs, form
feeds, a byte-order mark) and ``#`` comments separate tokens; a keyword is matched as a
word where a name may stand (``end`` closes a table of named lines) and as a literal
prefix where only keywords may (``beginmachine`` is ``begin machine``); an end of line
swallows the blank and comment lines after it, but not a shape comment.
"""

from __future__ import annotations

import re
import string
from typing import Any

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.model.tree import BINARY_LEVELS, FUNCTIONS, MAX_DEPTH
from parasol_core.syntax.build_expr import _Fail
from parasol_core.syntax.wording import context, describe_found, or_list, unknown_name

# ---- the lexical forms (grammar/machine.lark's terminals; tests/test_reader.py checks)

REFERENCE_PREFIXES = (
    "ma", "pr", "pt", "pc", "po", "mc", "to", "tp", "tl", "vt", "vm", "pv", "ex", "mp", "ar",
)  # fmt: skip
TERMINALS = {
    "NAME": r"[A-Za-z_][A-Za-z0-9_]*",
    "STRING": r'"[^"\n\r\x0b]*"',
    "INT": r"0x[0-9a-fA-F]+|[0-9]+",
    "FLOAT": r"[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+",
    "TNUM": r"-?([0-9]+\.[0-9]*([eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+|[0-9]+)",
    "FUNC": "(" + "|".join(sorted(FUNCTIONS, key=lambda f: (-len(f), f))) + r")\b",
    "REFPREFIX": "(" + "|".join(REFERENCE_PREFIXES) + r")\b",
    "SHAPE": r"#[ \t]*piui:[ \t]*shape[ \t]*=[^\n\r\x0b]*",
    "NL": r"([ \t\f]*(#(?![ \t]*piui:[ \t]*shape)[^\n\r\x0b]*)?(\r\n|\n|\r|\x0b|;))+",
    "WS": r"[ \t\f\ufeff]+",
    "COMMENT": r"#[^\n\r\x0b]*",
}


def _atomic(name: str) -> str:
    # A lexer takes the first match of a terminal's pattern at a position and never
    # backtracks into it; an atomic group does the same inside a larger pattern.
    return f"(?>{TERMINALS[name]})"


_NL = re.compile(TERMINALS["NL"])
_NL_LINE = re.compile(TERMINALS["NL"][:-1])  # one line of it
_SHAPE = re.compile(TERMINALS["SHAPE"])
_IGNORED = re.compile(f"{TERMINALS['WS']}|{TERMINALS['COMMENT']}")
_WORD = re.compile(TERMINALS["NAME"])
_NAME = re.compile(_atomic("NAME"))
_INT = re.compile(r"[ \t]*" + _atomic("INT"))
_TNUM = re.compile(r"[ \t]*" + _atomic("TNUM"))
_STRING = re.compile(r"[ \t]*" + _atomic("STRING"))
_EQ = re.compile(r"[ \t]*=")
# `( INT )` of a reference, and `. NAME`: one match each
_INDEX = re.compile(r"[ \t]*(\()[ \t]*(" + _atomic("INT") + r")[ \t]*(\))")
_FIELD = re.compile(r"[ \t]*(\.)[ \t]*(" + _atomic("NAME") + ")")
_LEADING = re.compile(r"[ \t]*")
_END_OF_TEXT = re.compile(r"[ \t\f\ufeff]*\Z")

# Where an operand may start (FLOAT before INT: its priority is higher)
_OPERAND_SRC = (
    rf"(?P<FLOAT>{_atomic('FLOAT')})|(?P<INT>{_atomic('INT')})|(?P<FUNC>{_atomic('FUNC')})"
    rf"|(?P<REFPREFIX>{_atomic('REFPREFIX')})"
    r"|(?P<LPAR>\()|(?P<MINUS>-)|(?P<BANG>!)|(?P<TILDE>~)"
)
_OPERAND = re.compile(r"[ \t]*(?:" + _OPERAND_SRC + ")")
_OPERAND_BARE = re.compile(_OPERAND_SRC)
_OPERATOR_NAMES = {
    "**": "POW", "||": "OROR", "&&": "ANDAND", "==": "EQEQ", "!=": "NE", "<=": "LE",
    ">=": "GE", "<<": "SHL", ">>": "SHR", "|": "PIPE", "^": "CARET", "&": "AMP", "<": "LT",
    ">": "GT", "+": "PLUS", "-": "MINUS", "*": "STAR", "/": "SLASH", "%": "PERCENT",
}  # fmt: skip
# Where an operator may follow: the longest operators first
_OPERATOR_SRC = "|".join(
    f"(?P<{_OPERATOR_NAMES[op]}>{re.escape(op)})"
    for op in sorted(_OPERATOR_NAMES, key=lambda o: -len(o))
)
_OPERATOR = re.compile(r"[ \t]*(?:" + _OPERATOR_SRC + ")")
# The binary operators by precedence, loosest first: expr/tree's declaration (`**`
# binds tighter than the unary operators and is read apart)
_BINARY = {_OPERATOR_NAMES[op]: level for level, ops in enumerate(BINARY_LEVELS) for op in ops}
_UNARY = ("MINUS", "BANG", "TILDE")
_WORD_START = frozenset(string.ascii_letters + "_")
_OPERAND_EXPECTED = ("a number", "a reference", "a function", "'('", "'-'", "'!'", "'~'")

# ---- the section layout, from the schema in model/machine.py

_INT_V, _STR_V, _TIMING_V, _CONNECT_V = "int", "str", "timing", "connect"
_VALUE_TOKEN = {_INT_V: (_INT, "INT"), _STR_V: (_STRING, "STRING")}
_BULK = ("linklist", "procid", "mapping", "timings")  # the bulk scanners' sections


class Section:
    """What a section holds: ``fields`` (keyword -> value kind), the ``sections`` that
    may begin in it, and ``named``: the kind of its named lines (``"timing"``,
    ``"expr"``: `NAME = ...`; ``"p"``, ``"map"``: `p[i] = n`), or None."""

    __slots__ = ("keyword", "fields", "sections", "named", "keywords", "expected")

    def __init__(self, keyword: str, fields: dict[str, str], sections: tuple[str, ...],
                 named: str | None) -> None:  # fmt: skip
        self.keyword = keyword
        self.fields = fields
        self.sections = sections
        self.named = named
        # the words that may begin a line, longest first (a keyword is a literal prefix)
        words = [*fields, *(("begin",) if sections else ()), "end"]
        if named in ("p", "map"):
            words.append(named)
        self.keywords = tuple(sorted(words, key=lambda w: (-len(w), w)))
        shown = [w for w in fields if w != "smallloopsspeedup"]
        if named in ("timing", "expr"):
            shown.append("a name")
        elif named is not None:
            shown.append(f"'{named}[...]'")
        self.expected = tuple(
            [f"'{w}'" if w != "a name" and not w.startswith("'") else w for w in shown]
            + (["'begin'"] if sections else [])
            + ["'end'"]
        )


def _layout() -> dict[str, Section]:
    """Every section keyword's :class:`Section`, derived from the schema: a block's
    FIELDS are its `keyword = value` lines (but a shape or an annotation, which are
    comments), its TABLES with a keyword of their own are sub-sections of named lines
    (a table without one is the block's own lines), its CHILDREN sub-sections (through
    their container, such as `linklist`, where they have one)."""
    from parasol_core.model import BLOCK_CLASSES, CONNECT, EXPR, INT, STR, TIMING

    kinds = {INT: _INT_V, STR: _STR_V, TIMING: _TIMING_V, CONNECT: _CONNECT_V}
    named_of = {TIMING: "timing", EXPR: "expr"}
    layout: dict[str, Section] = {}
    for keyword, cls in BLOCK_CLASSES.items():
        fields = {f.keyword: kinds[f.kind] for f in cls.FIELDS if f.kind in kinds}
        if "smallloopspeedup" in fields:  # the spelling of the report's section 3.1.3
            fields["smallloopsspeedup"] = fields["smallloopspeedup"]
        sections: list[str] = []
        named = None
        for table in cls.TABLES:
            entry = named_of.get(table.kind) or table.key_format.split("[")[0]
            if table.block is None:
                named = entry
            else:
                sections.append(table.block)
                layout[table.block] = Section(table.block, {}, (), entry)
        for child in cls.CHILDREN:
            if child.container:
                sections.append(child.container)
                layout[child.container] = Section(child.container, {}, (child.cls.KEYWORD,), None)
            else:
                sections.append(child.cls.KEYWORD)
        layout[keyword] = Section(keyword, fields, tuple(sections), named)
    return layout


LAYOUT = _layout()


class Tok(str):
    """A token for the builder: the text, with its type, offsets (in the text), line
    and column."""

    __slots__ = ("type", "start_pos", "end_pos", "line", "column")

    type: str
    start_pos: int
    end_pos: int
    line: int
    column: int


class _Reader:
    def __init__(self, text: str, builder: Any, source: str | None = None,
                 bulk: bool = False) -> None:  # fmt: skip
        # ``text``: lone `\r` and vertical tabs made `\n` (source.counting_text), so
        # counting `\n` counts lines; ``source``: the text as it was (links' records)
        self.text = text
        self.source = text if source is None else source
        self.b = builder
        self.bulk = bulk
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.nesting = 0
        self.opened: list[tuple[str, int]] = []  # `begin X` sections open, with lines
        self._op_at = -1  # the operator looked at last, and where
        self._op: Any = None
        self.line_end = "the end of the line"  # what ends an expression, in messages

    # ---- tokens

    def tok(self, kind: str, start: int, end: int) -> Tok:
        t = Tok(self.text[start:end])
        t.type = kind
        t.start_pos = start
        t.end_pos = end
        t.line = self.line
        t.column = start - self.line_start + 1
        return t

    def next_token(self, pos: int, nl: bool = False, shape: bool = False) -> int:
        """Where the next token starts at or after ``pos``: blanks and comments passed,
        but not an end of line (where ``nl``) or a shape comment (where ``shape``),
        which are tokens of their own there."""
        text = self.text
        while True:
            if shape and _SHAPE.match(text, pos):
                return pos
            if nl and _NL.match(text, pos):
                return pos
            m = _IGNORED.match(text, pos)
            if m is None:
                return pos
            pos = m.end()

    def fail(self, pos: int, expected: tuple[str, ...], message: str | None = None) -> Any:
        """The syntax error of a token at ``pos`` that cannot stand there."""
        text = self.text
        if pos >= len(text):
            body = text.rstrip()
            line = text.count("\n", 0, len(body)) + 1
            column = len(body) - (body.rfind("\n") + 1) + 1
            if self.opened and self.opened[-1][0] != "machine":
                kw, at = self.opened[-1]
                message = f"the file ends inside 'begin {kw}' (line {at}): 'end {kw}' is missing"
            elif message is None:
                message = "the text ends too early; expected " + or_list(expected)
            raise ModelSyntaxError(
                message, line, column, expected=expected,
                context=context(text, max(len(body) - 1, 0)),
            )  # fmt: skip
        found = describe_found(text, pos)
        if message is None:
            message = f"unexpected {found[1]}"
            if expected:
                message += "; expected " + or_list(expected)
        raise ModelSyntaxError(
            message, self.line, pos - self.line_start + 1, text=found[0][:80],
            expected=expected, context=context(text, pos),
        )  # fmt: skip

    def match(self, pattern: re.Pattern, kind: str, expected: str) -> Tok:
        """The token ``pattern`` reads after blanks at the position, which it passes."""
        m = pattern.match(self.text, self.pos)
        if m is None:
            pos = self.next_token(self.pos)
            m = pattern.match(self.text, pos)
            if m is None:
                self.fail(pos, (expected,))
        end = m.end()
        start = end - len(m.group(0).lstrip(" \t"))
        self.pos = end
        return self.tok(kind, start, end)

    def literal(self, words: tuple[str, ...], expected: tuple[str, ...]) -> Tok:
        """The first of ``words`` (keywords, longest first) the text holds after
        blanks, as a literal prefix."""
        text = self.text
        pos = self.next_token(self.pos)
        for w in words:
            if text.startswith(w, pos):
                self.pos = pos + len(w)
                return self.tok(w, pos, pos + len(w))
        return self.fail(pos, expected)

    def nl(self, expected: tuple[str, ...] = ("the end of the line",)) -> Tok:
        """The end-of-line token here (with the blank and comment lines after it)."""
        text = self.text
        at = self.pos
        m = _NL.match(text, at)
        if m is None:
            at = self.next_token(at, nl=True)
            m = _NL.match(text, at)
            if m is None:
                self.fail(at, expected)
        end = m.end()
        t = self.tok("NL", at, end)
        last = text.rfind("\n", at, end)
        if last >= 0:
            self.line += text.count("\n", at, end)
            self.line_start = last + 1
        self.pos = end
        return t

    # ---- the file and its sections

    def file(self) -> Any:
        text = self.text
        children: list = []
        while True:  # blank lines and shape comments, then `begin machine`
            pos = self.next_token(self.pos, nl=True, shape=True)
            self.pos = pos
            if _SHAPE.match(text, pos):
                children.append(self.shape())
            elif _NL.match(text, pos):
                children.append(self.nl())
            else:
                break
        begin = self.literal(("begin",), ("'begin'",))
        begin.type = "BEGIN"
        self.literal(("machine",), ("'machine'",))
        self.opened.append(("machine", begin.line))
        children += [begin, self.nl()]
        children += self.items(LAYOUT["machine"])
        if self.pos < len(text):  # at `end machine`: its line, then blank lines only
            end = self.literal(("end",), ("'end'",))
            end.type = "END"
            self.literal(("machine",), ("'machine'",))
            children.append(end)
            self.nl()
            while True:
                pos = self.next_token(self.pos, nl=True, shape=True)
                self.pos = pos
                if pos >= len(text):
                    break
                if _SHAPE.match(text, pos):
                    self.shape()  # a shape comment after the machine: read (it may warn)
                elif _NL.match(text, pos):
                    self.nl()
                else:
                    self.fail(pos, ("the end of the file",))
        return self.b.start(children)

    def shape(self) -> Any:
        """A shape comment line: its `#` is at the position."""
        m = _SHAPE.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()
        return self.b.shape_def([self.tok("SHAPE", m.start(), m.end()), self.nl()])

    def section(self, keyword: str, begin: Tok) -> Any:
        """The section whose `begin` line starts at ``begin``, the position after its
        keyword: what the builder makes of it."""
        self.opened.append((keyword, begin.line))
        scanned = None
        if self.bulk and keyword in _BULK:
            from parasol_core.syntax import fastscan

            scanned = fastscan.scan_section(
                keyword, self.text, self.source, begin.start_pos, self.line + 1
            )
        children: list = [begin, self.nl()]
        if scanned is not None:
            items, body, end, lines = scanned
            assert self.pos == body
            self.b.bulk[body] = items
            self.pos = self.line_start = end
            self.line += lines
        children += self.items(LAYOUT[keyword])
        end_tok = self.literal(("end",), ("'end'",))
        end_tok.type = "END"
        self.literal((keyword,), (f"'{keyword}'",))
        children += (end_tok, self.nl())
        self.opened.pop()
        return getattr(self.b, keyword)(children)

    def items(self, spec: Section) -> list:
        """The items of a section, up to its `end` line (or the end of the text, for
        the machine, whose `end machine` may be missing)."""
        text = self.text
        n = len(text)
        fields = spec.fields
        named = spec.named
        words = spec.keywords
        out: list = []
        append = out.append
        while True:
            pos = self.pos
            m = _LEADING.match(text, pos)
            at = m.end()
            if at >= n or text[at] not in _WORD_START:  # a blank or comment line, a shape
                at = self.next_token(pos, nl=True, shape=True)
                if at >= n:
                    if spec.keyword == "machine":
                        self.pos = at
                        return out
                    self.fail(at, spec.expected)
                if _SHAPE.match(text, at):
                    self.pos = at
                    append(self.shape())
                    continue
                if _NL.match(text, at):
                    self.pos = at
                    self.nl()  # a line of blanks the last end of line did not take
                    continue
                if text[at] not in _WORD_START:
                    self.fail(at, spec.expected)
            if named in ("timing", "expr"):  # a name, or `end`
                word = _WORD.match(text, at).group(0)
            else:
                for word in words:
                    if text.startswith(word, at):
                        break
                else:
                    self.fail(at, spec.expected)
            if word == "end":
                self.pos = at
                return out
            if named in ("timing", "expr"):
                append(self.named(named, at, at + len(word)))
                continue
            self.pos = at + len(word)
            if word == "begin":
                begin = self.tok("BEGIN", at, at + 5)
                child = self.literal(
                    tuple(sorted(spec.sections, key=lambda s: (-len(s), s))),
                    tuple(sorted(f"'{s}'" for s in spec.sections)),
                )
                append(self.section(str(child), begin))
            elif word == named:  # `p[i] = n` / `map[i] = n`
                append(self.table_line(named))
            else:
                append(self.field(word, fields[word], at))

    # ---- definitions

    def field(self, keyword: str, kind: str, start: int) -> Any:
        """`keyword = value`, the keyword at ``start``, the position after it."""
        b = self.b
        eq = self.match(_EQ, "EQ", "'='")
        if kind == _TIMING_V:
            timing = self.timing()
            if keyword.startswith("smallloop"):  # a named terminal: the builder sees it
                word = self.tok("SMALLLOOPSPEEDUP", start, start + len(keyword))
                return b.smallloopspeedup_def([word, eq, timing, self.nl()])
            return getattr(b, f"{keyword}_def")([eq, timing, self.nl()])
        if kind == _CONNECT_V:  # connect = INT+
            numbers = [self.match(_INT, "INT", "an integer")]
            while not self.at_nl():
                numbers.append(self.match(_INT, "INT", "an integer"))
            return b.connect_def([eq, *numbers, self.nl(("an integer", "the end of the line"))])
        pattern, token = _VALUE_TOKEN[kind]
        value = self.match(pattern, token, _DESCRIBE[token])  # an INT or a STRING
        return getattr(b, f"{keyword}_def")([eq, value, self.nl()])

    def at_nl(self) -> bool:
        """Whether an end of line is next (blanks passed where it is not right here)."""
        text = self.text
        if _NL.match(text, self.pos):
            return True
        pos = self.next_token(self.pos, nl=True)
        return _NL.match(text, pos) is not None

    def timing(self) -> Any:
        values = [self.match(_TNUM, "TNUM", "a number")]
        if not self.at_nl():
            values.append(self.match(_TNUM, "TNUM", "a number"))
            if not self.at_nl():
                self.nl()  # fails, saying an end of line was expected
        return self.b.timing(values)

    def table_line(self, named: str) -> Any:
        """`p[i] = n` or `map[i] = n`, the position after the word."""
        self.match(_LSQB, "LSQB", "'['")
        key = self.match(_INT, "INT", "an integer")
        self.match(_RSQB, "RSQB", "']'")
        eq = self.match(_EQ, "EQ", "'='")
        value = self.match(_INT, "INT", "an integer")
        return getattr(self.b, f"{named}_def")([key, eq, value, self.nl()])

    def named(self, named: str, start: int, end: int) -> Any:
        """`NAME = timing` or `NAME = expr`."""
        b = self.b
        name = self.tok("NAME", start, end)
        self.pos = end
        eq = self.match(_EQ, "EQ", "'='")
        if named == "timing":
            return b.timing_def([name, eq, self.timing(), self.nl()])
        tree = self.expression()
        return b.expr_def([name, eq, tree, self.nl(("an operator", "the end of the line"))])

    # ---- expressions: expr/tree's precedence levels by precedence climbing

    def expression(self, loosest: int = 0) -> Any:
        left = self.unary()
        b = self.b
        while True:
            op = self.operator()
            if op is None:
                return left
            level = _BINARY.get(op.type)
            if level is None or level < loosest:
                return left
            self.pos = op.end_pos
            self.deeper(op)
            right = self.expression(level + 1)
            self.nesting -= 1
            left = b.binary([left, op, right])

    def operator(self) -> Tok | None:
        """The operator after blanks here, if any (not passed)."""
        pos = self.pos
        if self._op_at == pos:
            return self._op
        text = self.text
        m = _OPERATOR.match(text, pos)
        if m is None:
            at = self.next_token(pos, nl=True)
            if at != pos:
                m = _OPERATOR.match(text, at)
        op = None
        if m is not None:
            kind = m.lastgroup
            assert kind is not None
            op = self.tok(kind, m.start(kind), m.end())
        self._op_at, self._op = pos, op
        return op

    def deeper(self, tok: Tok) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise _Fail(f"expression nested too deeply (more than {MAX_DEPTH} levels)", tok)

    def unary(self) -> Any:
        text = self.text
        m = _OPERAND.match(text, self.pos)
        if m is None:
            pos = self.next_token(self.pos)
            m = _OPERAND_BARE.match(text, pos)
            if m is None:
                word = _WORD.match(text, pos)
                if word is not None:
                    self.fail(pos, _OPERAND_EXPECTED, unknown_name(word.group(0)))
                self.fail(pos, _OPERAND_EXPECTED)
        kind = m.lastgroup
        assert kind is not None
        tok = self.tok(kind, m.start(kind), m.end())
        self.pos = m.end()
        b = self.b
        if kind in _UNARY:
            self.deeper(tok)
            operand = self.unary()
            self.nesting -= 1
            return b.unary([tok, operand])
        atom = self.atom(tok)
        op = self.operator()
        if op is None or op.type != "POW":
            return atom
        self.pos = op.end_pos
        self.deeper(op)
        right = self.unary()
        self.nesting -= 1
        return b.binary([atom, op, right])

    def atom(self, tok: Tok) -> Any:
        b = self.b
        kind = tok.type
        if kind == "INT":
            self.follows()
            return b.integer([tok])
        if kind == "FLOAT":
            self.follows()
            return b.float([tok])
        if kind == "REFPREFIX":
            return self.reference(tok)
        self.deeper(tok)
        if kind == "FUNC":
            lpar = self.match(_LPAR, "LPAR", "'('")
            arg = self.expression()
            rpar = self.match(_RPAR, "RPAR", "')'") if self._closing() else None
            node = b.call([tok, lpar, arg, rpar])
        else:  # LPAR
            inner = self.expression()
            rpar = self.match(_RPAR, "RPAR", "')'") if self._closing() else None
            node = b.paren([tok, inner, rpar])
        self.nesting -= 1
        return node

    def follows(self, more: str = "") -> None:
        """Refuse what follows a number (or an index) when it cannot follow one: the
        grammar builds a number's value (which may be out of range) only once the
        token after it is known to fit. ``more``: other characters that may follow."""
        if self.operator() is not None:
            return
        text = self.text
        pos = self.next_token(self.pos, nl=True)
        if pos >= len(text) or text[pos] in ")" + more or _NL.match(text, pos):
            return
        self.fail(pos, ("an operator", "')'", self.line_end))

    def _closing(self) -> bool:
        """Whether a `)` follows; else the error that an operator or one was expected."""
        pos = self.next_token(self.pos)
        if self.text.startswith(")", pos):
            return True
        return self.fail(pos, ("an operator", "')'"))

    def reference(self, prefix: Tok) -> Any:
        """REFPREFIX index* (DOT NAME index?)?"""
        text = self.text
        children: list = [prefix]
        while True:
            m = _INDEX.match(text, self.pos)
            if m is not None:
                children.append(self.index_of(m))
            elif self._next_is("("):
                children.append(self.index())
            else:
                break
        m = _FIELD.match(text, self.pos)
        if m is not None:
            self.pos = m.end()
            children += (self.tok("DOT", *m.span(1)), self.tok("NAME", *m.span(2)))
        elif self._next_is("."):
            dot = self.match(_DOT, "DOT", "'.'")
            children += (dot, self.match(_NAME, "NAME", "a name"))
        else:
            return self.b.reference(children)
        m = _INDEX.match(text, self.pos)
        if m is not None:
            children.append(self.index_of(m))
        elif self._next_is("("):
            children.append(self.index())
        return self.b.reference(children)

    def _next_is(self, char: str) -> bool:
        return self.text.startswith(char, self.next_token(self.pos))

    def index_of(self, m: re.Match) -> Any:
        """An index `( INT )`, matched by ``m``."""
        self.pos = m.end()
        self.follows("(.")
        tok = self.tok
        return self.b.index(
            [tok("LPAR", *m.span(1)), tok("INT", *m.span(2)), tok("RPAR", *m.span(3))]
        )

    def index(self) -> Any:
        """An index `( INT )` in any spacing."""
        lpar = self.match(_LPAR, "LPAR", "'('")
        number = self.match(_INT, "INT", "an integer")
        rpar = self.match(_RPAR, "RPAR", "')'")
        self.follows("(.")
        return self.b.index([lpar, number, rpar])


_LPAR = re.compile(r"[ \t]*\(")
_RPAR = re.compile(r"[ \t]*\)")
_DOT = re.compile(r"[ \t]*\.")
_LSQB = re.compile(r"[ \t]*\[")
_RSQB = re.compile(r"[ \t]*\]")
_DESCRIBE = {"INT": "an integer", "STRING": 'a string in double quotes ("...")'}


def read(text: str, builder: Any, source: str | None = None, bulk: bool = True) -> Any:
    """What ``builder`` makes of the model file ``text`` (its lone `\\r` and vertical
    tabs made `\\n`: :func:`parasol_core.base.source.counting_text`; ``source`` is the
    text as it was). ``bulk``: hand bulk tables to the bulk scanners. Raises
    :class:`ModelSyntaxError`."""
    r = _Reader(text, builder, source, bulk)
    try:
        return r.file()
    except _Fail as e:
        raise error_at(e.message, e.token, text) from None
    finally:
        if bulk:
            from parasol_core.syntax import fastscan

            fastscan.release()


def expression(text: str, builder: Any) -> Any:
    """The tree of one expression (on one line, the whole of ``text``) that
    ``builder`` builds. Raises :class:`ModelSyntaxError`."""
    r = _Reader(text, builder)
    r.line_end = "the end of the expression"
    try:
        tree = r.expression()
        if not _END_OF_TEXT.match(text, r.pos):
            pos = r.next_token(r.pos)
            if text.startswith(")", pos):
                r.fail(pos, ("an operator", "the end of the expression"),
                       "unexpected ')': it closes no '('")  # fmt: skip
            r.fail(pos, ("an operator", "the end of the expression"))
    except _Fail as e:
        raise error_at(e.message, e.token, text) from None
    return tree


def error_at(message: str, tok: Any, text: str) -> ModelSyntaxError:
    """A syntax error at a token (one the builder refused: a number out of range, an
    expression nested too deeply)."""
    return ModelSyntaxError(
        message, tok.line, tok.column, text=str(tok)[:80], context=context(text, tok.start_pos),
    )  # fmt: skip


def read_value(kind: str, text: str) -> Any:
    """The value ``text`` reads as after `keyword =` in a file: ``kind`` is ``"int"``,
    ``"str"``, ``"timing"`` or ``"connect"`` (model/machine.py's kinds). Raises
    :class:`ModelSyntaxError` when ``text`` is not one such value and nothing else
    (or a number in it is out of range). For the in-place saver
    (:mod:`parasol_core.syntax.inplace`), which checks a value it wrote reads back."""
    from parasol_core.syntax.build_expr import _int
    from parasol_core.syntax.builder import _Builder

    line = text + "\n"
    if "\n" in text or "\r" in text or "\x0b" in text:
        raise ModelSyntaxError("a value must fit on one line", 1, 1, text=text)
    r = _Reader(line, _Builder())
    try:
        if kind == _TIMING_V:
            value = r.timing()
        elif kind == _CONNECT_V:
            numbers = [r.match(_INT, "INT", "an integer")]
            while not r.at_nl():
                numbers.append(r.match(_INT, "INT", "an integer"))
            value = tuple(_int(t) for t in numbers)
        else:
            pattern, token = _VALUE_TOKEN[kind]
            tok = r.match(pattern, token, _DESCRIBE[token])
            value = _int(tok) if kind == _INT_V else str(tok)[1:-1]
        r.nl()
        if r.pos != len(line):  # a `;` ended the value, and more follows
            r.fail(r.pos, ("the end of the line",))
    except _Fail as e:
        raise error_at(e.message, e.token, line) from None
    return value
