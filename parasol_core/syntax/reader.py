"""A hand-written reader for model files in their usual form, in front of lark.

Lark's LALR loop costs about 25 microseconds a token; the part of a file the fast path
(:mod:`parasol_core.syntax.fastscan`) leaves to it, the definitions and above all the
expressions, is then most of the time a model of a few thousand lines takes to load,
and importing lark and building its lexer most of what the first load costs. This
module reads that part itself: the grammar's rules written out as code, a line at a
time, with the grammar's own terminal definitions (read from ``grammar/machine.lark``).

It makes the very calls into the object builder (:mod:`parasol_core.syntax.builder`)
that lark's parser makes, in the same order and with tokens of the same type, text,
position, line and column, so the model, its source records and its diagnostics are
those lark gives. It takes only what it is sure of: any line of another form, anything
lark's contextual lexer could read differently, any number out of range and anything
nested deeply raises :class:`Defer`, and the whole text goes to lark, which reads it or
reports the syntax error. ``tests/test_reader.py`` and
``tests/test_fast_parser_differential.py`` hold it to lark on samples, generated
models, thousands of mutated files and generated expressions.

A file that lark reads, this reader either reads the same way or defers; it never
accepts a text lark refuses, since every form it takes is one the grammar derives.
"""

from __future__ import annotations

import re
from typing import Any

from parasol_core.syntax.expression import grammar_text


class Defer(Exception):
    """Not a form this reader takes: the text goes to lark."""


def _terminals() -> dict[str, str]:
    """The grammar's regular-expression terminals, by name."""
    found = {}
    for m in re.finditer(r"^([A-Z_]+)(?:\.\d+)?: /(.*)/$", grammar_text(), re.M):
        found[m.group(1)] = m.group(2)
    return found


_T = _terminals()


def _atomic(name: str) -> str:
    # Lark's lexer takes the first match of a terminal's pattern at a position and never
    # backtracks into it; an atomic group does the same inside a larger pattern.
    return f"(?>{_T[name]})"


# Lark's end of line (blank and comment lines included) and the tokens, as lark's
# contextual lexer reads them where this reader looks for them. Blanks between tokens
# are lark's WS less the form feed and byte-order mark (rare: such text goes to lark).
_NL = re.compile(_T["NL"])
assert _T["NL"].endswith(")+")
_NL_LINE = re.compile(_T["NL"][:-1])  # one line of it
_SHAPE = re.compile(_T["SHAPE"])
_INT = re.compile(r"[ \t]*" + _atomic("INT"))
_TNUM = re.compile(r"[ \t]*" + _atomic("TNUM"))
_STRING = re.compile(r"[ \t]*" + _atomic("STRING"))
_EQ = re.compile(r"[ \t]*=")
_LPAR = re.compile(r"[ \t]*\(")
_RPAR = re.compile(r"[ \t]*\)")
_DOT = re.compile(r"[ \t]*\.")
# `( INT )` of a reference, and `. NAME`: one match each
_INDEX = re.compile(r"[ \t]*(\()[ \t]*(" + _atomic("INT") + r")[ \t]*(\))")
_FIELD = re.compile(r"[ \t]*(\.)[ \t]*(" + _atomic("NAME") + ")")
_LSQB = re.compile(r"[ \t]*\[")
_RSQB = re.compile(r"[ \t]*\]")
_END_OF_TEXT = re.compile(r"[ \t]*\Z")
# The start of a line: `begin X` / `end X`, a word, or a shape comment
_HEAD = re.compile(
    r"[ \t]*(?:(begin|end)[ \t]+([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*)|(#))"
)

# Where an operand may start (FLOAT before INT: its priority is higher)
_OPERAND = re.compile(
    r"[ \t]*(?:"
    rf"(?P<FLOAT>{_atomic('FLOAT')})|(?P<INT>{_atomic('INT')})|(?P<FUNC>{_atomic('FUNC')})"
    rf"|(?P<REFPREFIX>{_atomic('REFPREFIX')})"
    r"|(?P<LPAR>\()|(?P<MINUS>-)|(?P<BANG>!)|(?P<TILDE>~))"
)
# Where an operator may follow: the longest operators first, as lark orders them
_OPERATOR = re.compile(
    r"[ \t]*(?:(?P<POW>\*\*)|(?P<OROR>\|\|)|(?P<ANDAND>&&)|(?P<EQEQ>==)|(?P<NE>!=)"
    r"|(?P<LE><=)|(?P<GE>>=)|(?P<SHL><<)|(?P<SHR>>>)|(?P<PIPE>\|)|(?P<CARET>\^)"
    r"|(?P<AMP>&)|(?P<LT><)|(?P<GT>>)|(?P<PLUS>\+)|(?P<MINUS>-)|(?P<STAR>\*)"
    r"|(?P<SLASH>/)|(?P<PERCENT>%))"
)
# The binary operators by precedence, loosest first (the grammar's or_expr ... product;
# `**` binds tighter than the unary operators and is read apart)
_BINARY = {
    "OROR": 0, "ANDAND": 1, "PIPE": 2, "CARET": 3, "AMP": 4, "EQEQ": 5, "NE": 5,
    "LT": 6, "LE": 6, "GT": 6, "GE": 6, "SHL": 7, "SHR": 7, "PLUS": 8, "MINUS": 8,
    "STAR": 9, "SLASH": 9, "PERCENT": 9,
}  # fmt: skip
_UNARY = ("MINUS", "BANG", "TILDE")
_MAX_NESTING = 32  # deeper expressions go to lark (this reader recurses; lark does not)

# What each section holds: its fields (keyword -> value kind), the sections that may
# begin in it, and the kind of its named lines (`NAME = ...`, `p[i] = n`). The
# grammar's `_X_item` rules; tests/test_reader.py holds this table to them.
_INT_V, _STR_V, _TIMING_V, _CONNECT_V = "int", "str", "timing", "connect"
_VALUE_TOKEN = {_INT_V: (_INT, "INT"), _STR_V: (_STRING, "STRING")}
SECTIONS: dict[str, tuple[dict[str, str], tuple[str, ...], str | None]] = {
    "machine": (
        {"id": _INT_V, "name": _STR_V, "processors": _INT_V, "topologies": _INT_V},
        ("processor", "machinecombinations", "topology", "virtual", "pvm", "express", "mpi"),
        None,
    ),
    "processor": ({"id": _INT_V, "name": _STR_V}, ("timings", "cache", "combinations"), None),
    "timings": ({}, (), "timing"),
    "cache": (
        {
            "size": _INT_V,
            "speed": _TIMING_V,
            "smallloopspeedup": _TIMING_V,
            "smallloopsspeedup": _TIMING_V,
        },
        (),
        None,
    ),  # fmt: skip
    "combinations": ({}, (), "expr"),
    "machinecombinations": ({}, (), "expr"),
    "pvm": ({}, (), "expr"),
    "express": ({}, (), "expr"),
    "mpi": ({}, (), "expr"),
    "topology": (
        {
            "id": _INT_V,
            "name": _STR_V,
            "setup": _TIMING_V,
            "routing": _STR_V,
            "processors": _INT_V,
            "links": _INT_V,
        },
        ("procid", "linklist"),
        None,
    ),  # fmt: skip
    "procid": ({}, (), "p"),
    "linklist": ({}, ("link",), None),
    "link": (
        {"id": _INT_V, "latency": _TIMING_V, "speed": _TIMING_V, "connect": _CONNECT_V},
        (),
        None,
    ),  # fmt: skip
    "virtual": (
        {"id": _INT_V, "name": _STR_V, "setup": _TIMING_V, "routing": _STR_V, "processors": _INT_V},
        ("mapping",),
        None,
    ),  # fmt: skip
    "mapping": ({}, (), "map"),
}
# The grammar's words: its keywords, and the function names and reference prefixes of
# its FUNC and REFPREFIX patterns. A `NAME = ...` line whose name is one of them is left
# to lark (here and by the fast path): where the grammar reads a name, lark's lexer turns
# `end` into the END keyword, and no other such word is worth the doubt.
KEYWORDS = frozenset(
    re.findall(r'"([a-z]+)"', grammar_text())
    + [w for t in ("FUNC", "REFPREFIX") for w in re.match(r"\((.*?)\)", _T[t]).group(1).split("|")]
)


class Tok(str):
    """A token as lark's would be for the builder: the text, with its type, offsets
    (in the text), line and column."""

    __slots__ = ("type", "start_pos", "end_pos", "line", "column")

    type: str
    start_pos: int
    end_pos: int
    line: int
    column: int


class _Reader:
    def __init__(self, text: str, counted: str, builder: Any, blanks: dict | None = None) -> None:
        self.text = text  # what lark would read: the fast path's bodies blanked
        self.counted = counted  # the text with its real line ends, for counting lines
        self.b = builder
        self.blanks = blanks or {}  # start -> (end, lines) of each blanked body
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.nesting = 0
        self._op_at = -1  # the operator looked at last, and where
        self._op: Any = None

    # ---- tokens

    def tok(self, kind: str, start: int, end: int) -> Tok:
        t = Tok(self.text[start:end])
        t.type = kind
        t.start_pos = start
        t.end_pos = end
        t.line = self.line
        t.column = start - self.line_start + 1
        return t

    def match(self, pattern: re.Pattern, kind: str) -> Tok:
        """The token ``pattern`` reads after blanks at the position, which it passes."""
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise Defer
        end = m.end()
        start = end - len(m.group(0).lstrip(" \t"))
        self.pos = end
        return self.tok(kind, start, end)

    def nl(self) -> Tok:
        """The end-of-line token here (with the blank and comment lines after it)."""
        at = self.pos
        text = self.text
        m = _NL_LINE.match(text, at)
        if m is None:
            raise Defer
        first = rest = m.end()
        blank = self.blanks.get(first)
        if blank is not None:  # a blanked body follows: one line of blanks, passed at once
            rest = blank[0]
        m = _NL.match(text, rest)
        end = rest if m is None else m.end()
        t = self.tok("NL", at, end)
        if blank is None:
            self._count(at, end)
        else:  # the body's lines are known: not counted again
            self._count(at, first)
            self.line += blank[1]
            self.line_start = rest
            self._count(rest, end)
        self.pos = end
        return t

    def _count(self, start: int, end: int) -> None:
        """Count the line ends in text[start:end]."""
        counted = self.counted
        last = counted.rfind("\n", start, end)
        if last >= 0:
            self.line += counted.count("\n", start, end)
            self.line_start = last + 1

    # ---- the file and its sections

    def file(self) -> Any:
        children: list = []
        if _NL.match(self.text, 0):
            children.append(self.nl())
        while True:
            m = _HEAD.match(self.text, self.pos)
            if m is None:
                raise Defer
            if m.group(4):
                children.append(self.shape(m.start(4)))
                continue
            if m.group(1) != "begin" or m.group(2) != "machine":
                raise Defer
            break
        begin = self.tok("BEGIN", m.start(1), m.end(1))
        self.pos = m.end()
        children += [begin, self.nl()]
        children += self.items("machine")
        text = self.text
        if self.pos < len(text):  # at `end machine`: its line, then blank lines only
            children.append(self.end("machine"))
            self.nl()
            while self.pos < len(text):
                m = _HEAD.match(text, self.pos)
                if m is None or not m.group(4):
                    raise Defer
                # a shape comment after the machine: still read (it may warn)
                self.shape(m.start(4))
        return self.b.start(children)

    def shape(self, at: int) -> Any:
        """A shape comment line: its `#` is at ``at``."""
        m = _SHAPE.match(self.text, at)
        if m is None:
            raise Defer
        self.pos = m.end()
        return self.b.shape_def([self.tok("SHAPE", m.start(), m.end()), self.nl()])

    def section(self, keyword: str, begin: Tok) -> Any:
        """The section whose `begin` line starts at ``begin``, ``self.pos`` after its
        keyword: what the builder makes of it."""
        children: list = [begin, self.nl(), *self.items(keyword)]
        children += (self.end(keyword), self.nl())
        return getattr(self.b, keyword)(children)

    def end(self, keyword: str) -> Tok:
        """The END token of the `end keyword` line here, passed (not its end of line)."""
        m = _HEAD.match(self.text, self.pos)
        if m is None or m.group(1) != "end" or m.group(2) != keyword:
            raise Defer
        self.pos = m.end()
        return self.tok("END", m.start(1), m.end(1))

    def items(self, keyword: str) -> list:
        """The items of a section, up to its `end` line (or the end of the text, for the
        machine, whose `end machine` may be missing)."""
        fields, sections, named = SECTIONS[keyword]
        text = self.text
        out: list = []
        append = out.append
        after_shape = False
        while True:
            if self.pos >= len(text):
                if keyword == "machine":
                    return out
                raise Defer
            m = _HEAD.match(text, self.pos)
            if m is None:
                raise Defer
            word = m.group(1)
            if word == "end":
                return out
            if word == "begin":
                child = m.group(2)
                if child not in sections:
                    raise Defer
                begin = self.tok("BEGIN", m.start(1), m.end(1))
                self.pos = m.end()
                append(self.section(child, begin))
                continue
            if m.group(4):
                append(self.shape(m.start(4)))
                after_shape = True
                continue
            word = m.group(3)
            kind = fields.get(word)
            if kind is not None and after_shape and word.startswith("smallloop"):
                # After a shape comment lark's parser is in a state it shares with every
                # section (LALR), whose lexer reads a word as a NAME before it tries
                # SMALLLOOPSPEEDUP, a pattern rather than a keyword: lark refuses it
                raise Defer
            after_shape = False
            if kind is not None:
                self.pos = m.end()
                append(self.field(word, kind, m.start(3)))
            elif named is not None:
                append(self.named(named, word, m.start(3), m.end(3)))
            else:
                raise Defer

    # ---- definitions

    def field(self, keyword: str, kind: str, start: int) -> Any:
        """`keyword = value`, the keyword at ``start``, ``self.pos`` after it."""
        b = self.b
        eq = self.match(_EQ, "EQ")
        if kind == _TIMING_V:
            timing = self.timing()
            if keyword.startswith("smallloop"):  # a named terminal: the builder sees it
                word = self.tok("SMALLLOOPSPEEDUP", start, start + len(keyword))
                return b.smallloopspeedup_def([word, eq, timing, self.nl()])
            return getattr(b, f"{keyword}_def")([eq, timing, self.nl()])
        if kind == _CONNECT_V:  # connect = INT+
            numbers = [self.match(_INT, "INT")]
            while not _NL.match(self.text, self.pos):
                numbers.append(self.match(_INT, "INT"))
            return b.connect_def([eq, *numbers, self.nl()])
        value = self.match(*_VALUE_TOKEN[kind])  # an INT or a STRING
        return getattr(b, f"{keyword}_def")([eq, value, self.nl()])

    def timing(self) -> Any:
        values = [self.match(_TNUM, "TNUM")]
        if not _NL.match(self.text, self.pos):
            values.append(self.match(_TNUM, "TNUM"))
        return self.b.timing(values)

    def named(self, named: str, word: str, start: int, end: int) -> Any:
        """`NAME = timing` or `NAME = expr`, or `p[i] = n` / `map[i] = n`."""
        b = self.b
        if named in ("p", "map"):
            if word != named:
                raise Defer
            self.pos = end
            self.match(_LSQB, "LSQB")
            key = self.match(_INT, "INT")
            self.match(_RSQB, "RSQB")
            eq = self.match(_EQ, "EQ")
            value = self.match(_INT, "INT")
            return getattr(b, f"{named}_def")([key, eq, value, self.nl()])
        if word in KEYWORDS:
            raise Defer
        name = self.tok("NAME", start, end)
        self.pos = end
        eq = self.match(_EQ, "EQ")
        if named == "timing":
            return b.timing_def([name, eq, self.timing(), self.nl()])
        tree = self.expression()
        return b.expr_def([name, eq, tree, self.nl()])

    # ---- expressions: the grammar's precedence levels by precedence climbing

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
            right = self.expression(level + 1)
            left = b.binary([left, op, right])

    def operator(self) -> Tok | None:
        """The operator after blanks here, if any (not passed)."""
        pos = self.pos
        if self._op_at == pos:
            return self._op
        m = _OPERATOR.match(self.text, pos)
        op = None
        if m is not None:
            kind = m.lastgroup
            assert kind is not None
            op = self.tok(kind, m.start(kind), m.end())
        self._op_at, self._op = pos, op
        return op

    def deeper(self) -> None:
        self.nesting += 1
        if self.nesting > _MAX_NESTING:
            raise Defer

    def unary(self) -> Any:
        m = _OPERAND.match(self.text, self.pos)
        if m is None:
            raise Defer
        kind = m.lastgroup
        assert kind is not None
        tok = self.tok(kind, m.start(kind), m.end())
        self.pos = m.end()
        b = self.b
        if kind in _UNARY:
            self.deeper()
            operand = self.unary()
            self.nesting -= 1
            return b.unary([tok, operand])
        atom = self.atom(tok)
        op = self.operator()
        if op is None or op.type != "POW":
            return atom
        self.pos = op.end_pos
        self.deeper()
        right = self.unary()
        self.nesting -= 1
        return b.binary([atom, op, right])

    def atom(self, tok: Tok) -> Any:
        b = self.b
        kind = tok.type
        if kind == "INT":
            return b.integer([tok])
        if kind == "FLOAT":
            return b.float([tok])
        if kind == "REFPREFIX":
            return self.reference(tok)
        self.deeper()
        if kind == "FUNC":
            lpar = self.match(_LPAR, "LPAR")
            arg = self.expression()
            rpar = self.match(_RPAR, "RPAR")
            node = b.call([tok, lpar, arg, rpar])
        else:  # LPAR
            inner = self.expression()
            rpar = self.match(_RPAR, "RPAR")
            node = b.paren([tok, inner, rpar])
        self.nesting -= 1
        return node

    def reference(self, prefix: Tok) -> Any:
        """REFPREFIX index* (DOT NAME index?)?"""
        text = self.text
        children: list = [prefix]
        index = self.index
        while (m := _INDEX.match(text, self.pos)) is not None:
            children.append(index(m))
        m = _FIELD.match(text, self.pos)
        if m is not None:
            self.pos = m.end()
            children += (self.tok("DOT", *m.span(1)), self.tok("NAME", *m.span(2)))
            m = _INDEX.match(text, self.pos)
            if m is not None:
                children.append(index(m))
        elif _DOT.match(text, self.pos):
            raise Defer  # a `.` not followed by a name
        if _LPAR.match(text, self.pos):
            raise Defer  # `(` not holding just a number: lark reads it as an index
        return self.b.reference(children)

    def index(self, m: re.Match) -> Any:
        """An index `( INT )`, matched by ``m``."""
        self.pos = m.end()
        tok = self.tok
        return self.b.index(
            [tok("LPAR", *m.span(1)), tok("INT", *m.span(2)), tok("RPAR", *m.span(3))]
        )


def read(
    text: str, counted: str, builder: Any, blanks: dict[int, tuple[int, int]] | None = None
) -> Any:
    """What ``builder`` makes of ``text`` (the text lark would parse: bodies the fast
    path read blanked out, from each key of ``blanks`` to the end its value gives with
    the lines it holds), read as lark would.
    ``counted`` is the same text with its real line ends (see
    :func:`parasol_core.syntax.source.counting_text`), for lines. Raises :class:`Defer`
    where it is not sure, and whatever the builder raises."""
    return _Reader(text, counted, builder, blanks).file()


def expression(text: str, builder: Any) -> Any:
    """The tree of one expression (the grammar's ``expr`` rule over the whole of
    ``text``, on one line), as lark's expression parser builds it with ``builder``.
    Raises :class:`Defer` where it is not sure."""
    r = _Reader(text, text, builder)
    tree = r.expression()
    if not _END_OF_TEXT.match(text, r.pos):
        raise Defer
    return tree
