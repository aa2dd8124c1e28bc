"""Expression trees from lark's tokens: the part of the object builder that
:func:`parasol_core.syntax.expression.parse_expression` needs. It does not import the
model objects, so parsing an expression loads no more than the tree module."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from lark import Token, Transformer

from parasol_core.expr.tree import MAX_DEPTH, Binary, Call, Number, Reference, Unary

MAX_INT = 2**63 - 1


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


class ExprBuilder(Transformer):
    """Builds expression trees bottom-up while lark parses (no parse tree is built)."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)

    # ---- expressions

    def _check_depth(self, depth: int, tok: Token) -> int:
        if depth > MAX_DEPTH:
            raise _Fail(f"expression nested too deeply (more than {MAX_DEPTH} levels)", tok)
        return depth

    def integer(self, c: list) -> Number:
        t = c[0]
        return Number(_int(t), str(t), t.start_pos, t.end_pos)

    def float(self, c: list) -> Number:
        t = c[0]
        return Number(_float(t), str(t), t.start_pos, t.end_pos)

    def binary(self, c: list) -> Binary:
        left, op, right = c
        depth = self._check_depth(1 + max(_depth(left), _depth(right)), op)
        return Binary(str(op), left, right, left.start, right.end, depth)

    def unary(self, c: list) -> Unary:
        op, operand = c
        depth = self._check_depth(1 + _depth(operand), op)
        return Unary(str(op), operand, op.start_pos, operand.end, depth)

    def call(self, c: list) -> Call:
        func, _, arg, rpar = c
        depth = self._check_depth(1 + _depth(arg), func)
        return Call(str(func), arg, func.start_pos, rpar.end_pos, depth)

    def paren(self, c: list) -> Any:
        lpar, inner, rpar = c
        depth = self._check_depth(1 + _depth(inner), lpar)
        # Parentheses leave no node; the span widens so messages point at them, and the
        # depth counts them, as a reader counts nesting.
        return _with_span(inner, lpar.start_pos, rpar.end_pos, depth)

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


def _depth(node: Any) -> int:
    return getattr(node, "depth", 1)


def _with_span(node: Any, start: int, end: int, depth: int) -> Any:
    return replace(node, start=start, end=end, depth=depth)
