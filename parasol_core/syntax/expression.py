"""Parsing one expression, as typed in an editor: the grammar's ``expr`` rule.

This module does not import the model objects (:mod:`parasol_core.model`), so
:meth:`parasol_core.expr.tree.Expression.parse` can use it without an import cycle; lark
is imported when the first expression is parsed, not before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from parasol_core.expr.tree import Expression
from parasol_core.syntax.diagnostics import ModelSyntaxError

GRAMMAR_PATH = Path(__file__).resolve().parents[2] / "grammar" / "machine.lark"

_lock = threading.Lock()
_expr_parser: Any = None


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def _get_expr_parser() -> Any:
    global _expr_parser
    with _lock:
        if _expr_parser is None:
            from lark import Lark

            from parasol_core.syntax.build_expr import ExprBuilder

            _expr_parser = Lark(
                grammar_text(), parser="lalr", lexer="contextual", transformer=ExprBuilder(),
                start="expr", maybe_placeholders=False,
            )  # fmt: skip
    return _expr_parser


def parse_expression(text: str) -> Expression:
    """Parse one expression (as typed in an editor); raises ModelSyntaxError."""
    if "\n" in text or "\r" in text or "\x0b" in text or ";" in text:
        pos = min(i for i in (text.find(c) for c in "\n\r\x0b;") if i >= 0)
        raise ModelSyntaxError("an expression must fit on one line", 1, pos + 1, text=text)
    from lark.exceptions import UnexpectedInput

    from parasol_core.syntax.build_expr import _Fail
    from parasol_core.syntax.messages import _error_at, _syntax_error

    parser = _get_expr_parser()
    try:
        tree = parser.parse(text)
    except _Fail as e:
        raise _error_at(e.message, e.token, text, None) from None
    except UnexpectedInput as e:
        raise _syntax_error(e, text, parser, None, "expression") from None
    except RecursionError:
        raise ModelSyntaxError("the expression is nested too deeply", 1, 1) from None
    return Expression(text.strip(), tree, len(text) - len(text.lstrip()))
