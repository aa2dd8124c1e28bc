"""The executable specification: ``grammar/machine.lark`` run by lark, with the object
builder of ``parasol_core.syntax.builder`` inline, the reference the differential tests
hold the reader (``parasol_core.syntax.reader``) to. Lark is a test dependency only:
nothing in ``parasol_core`` or ``piui`` imports it.

:func:`loads` is ``parasol_core.loads`` with lark in the reader's place: the same
decoding, line checks, builder, annotations and clipping around it, so the two give
equal models, source records and diagnostics when they agree. A syntax error is lark's,
turned into a :class:`ModelSyntaxError` at lark's line and column.
"""

from __future__ import annotations

import threading
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from parasol_core.base.diagnostics import Diagnostic, ModelSyntaxError
from parasol_core.base.source import BOM, counting_text, position
from parasol_core.model import Machine
from parasol_core.model.tree import Expression
from parasol_core.syntax import loader as driver
from parasol_core.syntax.annotations import read_annotations
from parasol_core.syntax.build_expr import ExprBuilder, _Fail
from parasol_core.syntax.builder import _Builder
from parasol_core.syntax.expression import grammar_text
from parasol_core.syntax.wording import context, or_list, show, unknown_name

_lock = threading.Lock()
_parsers: dict[str, tuple[Lark, Any]] = {}


def parser(start: str) -> tuple[Lark, Any]:
    """Lark's LALR parser for the grammar's ``start`` rule and the builder it runs
    inline (one of each: the caller holds ``_lock``)."""
    if start not in _parsers:
        builder = _Builder() if start == "start" else ExprBuilder()
        lark = Lark(grammar_text(), parser="lalr", lexer="contextual", transformer=builder,
                    start=start, maybe_placeholders=False)  # fmt: skip
        _parsers[start] = (lark, builder)
    return _parsers[start]


def loads(text: str | bytes) -> Machine:
    """``parasol_core.loads`` with lark as the parser."""
    if isinstance(text, (bytes, bytearray)):
        text = driver._decode(bytes(text), None)
    driver._check_lines(text, None)
    parse_text = text if text.endswith(("\n", "\r", "\x0b", ";")) else text + "\n"
    counted = counting_text(parse_text)
    with _lock:
        lark, builder = parser("start")
        builder.reset(parse_text, {}, counted)
        try:
            machine = lark.parse(counted)
        except _Fail as e:
            raise driver._bom_shifted(_error_at(e.message, e.token, counted), text) from None
        except UnexpectedInput as e:
            raise driver._bom_shifted(_syntax_error(e, counted, "file"), text) from None
        found = list(builder.diagnostics)
        builder.reset("")
    diagnostics = [Diagnostic(d.severity, d.message, d.line, d.column, None) for d in found]
    if text.startswith(BOM):
        diagnostics = [driver._bom_shifted(d, text) for d in diagnostics]
        driver._bom_shift_sources(machine)
    diagnostics += read_annotations(machine, text, None)
    driver._clip(machine, text)
    machine.src.diagnostics = diagnostics
    machine.src.path = None
    return machine


def expression_tree(text: str) -> Any:
    """Lark's tree of one expression (raises what lark or the builder raises)."""
    with _lock:
        lark, _ = parser("expr")
        return lark.parse(text)


def parse_expression(text: str) -> Expression:
    """``parasol_core.parse_expression`` with lark as the parser."""
    try:
        tree = expression_tree(text)
    except _Fail as e:
        raise _error_at(e.message, e.token, text) from None
    except UnexpectedInput as e:
        raise _syntax_error(e, text, "expression") from None
    return Expression(text.strip(), tree, len(text) - len(text.lstrip()))


# ---- the reader held to the specification


def checked_loads(text: str | bytes) -> Machine:
    """``parasol_core.loads(text)``, having checked that lark gives the same: an equal
    model with the same diagnostics and source records, or a syntax error at the same
    line and column (the reader's saying what was expected)."""
    from parasol_core import loads as reader_loads

    try:
        ref: Machine | ModelSyntaxError = loads(text)
    except ModelSyntaxError as e:
        ref = e
    try:
        got = reader_loads(text)
    except ModelSyntaxError as e:
        assert isinstance(ref, ModelSyntaxError), f"lark reads it; the reader: {e}"
        assert (e.line, e.column) == (ref.line, ref.column), (e.format(), ref.format())
        assert e.expected or any(w in e.message for w in _BUILDER_ERRORS), e.format()
        raise
    assert not isinstance(ref, ModelSyntaxError), f"the reader reads it; lark: {ref}"
    assert got == ref and got.src.diagnostics == ref.src.diagnostics
    for a, b in zip(ref.blocks(), got.blocks(), strict=True):
        assert a.src == b.src, a.label()
    return got


def checked_parse_expression(text: str) -> Expression:
    """``parasol_core.parse_expression(text)``, having checked that lark gives the same
    tree, or refuses the text at the same column."""
    from parasol_core import parse_expression as reader_parse

    try:
        ref: Expression | ModelSyntaxError = parse_expression(text)
    except ModelSyntaxError as e:
        ref = e
    try:
        got = reader_parse(text)
    except ModelSyntaxError as e:
        if "\n" in text or "#" in text or ";" in text or "\r" in text or "\x0b" in text:
            raise  # refused before it is read: one line, no comment
        assert isinstance(ref, ModelSyntaxError), f"lark reads it; the reader: {e}"
        assert (e.line, e.column) == (ref.line, ref.column), (e.format(), ref.format())
        raise
    assert not isinstance(ref, ModelSyntaxError), f"the reader reads it; lark: {ref}"
    assert got == ref and got.text == ref.text
    return got


# errors that say what is wrong with what was found: the decoder's, the line limit's and
# the builder's range and depth checks
_BUILDER_ERRORS = ("out of range", "nested too deeply", "too long", "is missing", "UTF-8")


# ---- lark's failures as syntax errors (where; the wording is the reader's business)


def _error_at(message: str, tok: Token, text: str) -> ModelSyntaxError:
    return ModelSyntaxError(message, tok.line, tok.column, text=str(tok)[:80],
                            context=context(text, tok.start_pos))  # fmt: skip


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
        if v.type == "BEGIN" and i + 1 < len(stack) and isinstance(stack[i + 1], Token):
            opened.append((str(stack[i + 1]), v.line))
        elif v.type == "END" and opened:
            opened.pop()
    return opened


def _syntax_error(e: UnexpectedInput, text: str, what: str) -> ModelSyntaxError:
    pos = getattr(e, "pos_in_stream", None) or 0
    line, column = getattr(e, "line", 1) or 1, getattr(e, "column", 1) or 1
    opened = _open_sections(e)
    expected: tuple[str, ...] = tuple(
        sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    )
    if isinstance(e, UnexpectedToken) and e.token.type == "$END":
        body = text.rstrip()
        line, column = position(body, len(body))
        if opened:
            kw, at = opened[-1]
            message = f"the file ends inside 'begin {kw}' (line {at}): 'end {kw}' is missing"
        else:
            message = f"the {what} ends too early; expected " + or_list(expected)
        found = ""
        pos = max(len(body) - 1, 0)
    elif isinstance(e, UnexpectedToken):
        found = str(e.token)
        pos = e.token.start_pos if e.token.start_pos is not None else pos
        message = f"unexpected {show(found)}"
        if e.token.type == "NAME" and {"FUNC", "REFPREFIX"} <= set(expected):
            message = unknown_name(found)
    else:
        assert isinstance(e, UnexpectedCharacters)
        found = text[pos]
        message = f"unexpected {show(found)}"
    return ModelSyntaxError(message, line, column, text=found[:80], expected=expected,
                            context=context(text, min(pos, len(text) - 1)) if text else "")  # fmt: skip
