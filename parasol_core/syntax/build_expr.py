"""Expression trees from the reader's tokens: the part of the object builder that
:func:`parasol_core.syntax.expression.parse_expression` needs. It does not import the
model objects, so parsing an expression loads no more than the tree module."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from parasol_core.base.limits import MAX_INT, SMALLEST_NORMAL, ValueRangeError, float_text
from parasol_core.model.tree import (
    MAX_DEPTH,
    MAX_TREE_DEPTH,
    PRECEDENCE,
    Binary,
    Call,
    Number,
    Reference,
    Unary,
)

# A token: the reader's (parasol_core.syntax.reader.Tok), or lark's in the tests'
# reference (tests/lark_reference.py). Both are str subclasses with .type, .start_pos,
# .end_pos, .line and .column; being a str is how the builders tell a token from what
# they built.
Token = Any


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
    if math.isinf(value) or (abs(value) < SMALLEST_NORMAL and value == value):
        try:  # overflow, or underflow: 1e-400 is no 0.0 (a timing's "not detected")
            float_text(text)
        except ValueRangeError as e:
            raise _Fail(f"number out of range: {e}", tok) from None
    return value


class ExprBuilder:
    """Builds expression trees bottom-up while a parser runs (no parse tree is built):
    the reader calls a method by the name of each grammar rule it has read, with the
    rule's children, as lark calls an inline transformer's (the tests run it so)."""

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
        while i < len(c) and not isinstance(c[i], str):
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


def _depth(node: Any) -> int:
    return getattr(node, "depth", 1)


def _nesting(node: Any) -> int:
    return getattr(node, "nesting", 1)


def _with_span(node: Any, start: int, end: int, depth: int, nesting: int) -> Any:
    return replace(node, start=start, end=end, depth=depth, nesting=nesting)
