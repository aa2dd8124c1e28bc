"""Parsing one expression, as typed in an editor: the grammar's ``expr`` rule.

This module does not import the model objects (:mod:`parasol_core.model`), so
:meth:`parasol_core.expr.tree.Expression.parse` can use it without an import cycle. The
hand-written reader (:mod:`parasol_core.syntax.reader`) reads an expression in its usual
form; lark is imported only for one it steps aside from (or that is not an expression:
lark says what is wrong).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from parasol_core.expr.tree import Expression
from parasol_core.syntax.diagnostics import ModelSyntaxError

# The one definition of the syntax is the repository's grammar/machine.lark; an installed
# (non-editable) package carries a copy beside this module, made by setup.py's build.
_HERE = Path(__file__).resolve().parent
_IN_REPO = _HERE.parents[1] / "grammar" / "machine.lark"
GRAMMAR_PATH = _IN_REPO if _IN_REPO.is_file() else _HERE / "machine.lark"

_lock = threading.Lock()
_expr_parser: Any = None


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def _cache_file(start: str) -> str | bool:
    """Where lark keeps its analysis of the grammar between runs (building it takes about
    a second; loading it a tenth of that). Lark checks the grammar's hash stored in the
    file, so an edited grammar is analysed afresh. In the user's own cache directory,
    not the shared temporary one, since the file is a pickle."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "parasol_core")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.join(folder, f"lark-{start}-{sys.version_info[0]}.{sys.version_info[1]}.tmp")


def make_parser(start: str, transformer: Any, postlex: Any = None) -> Any:
    """Lark's LALR parser for the grammar's ``start`` rule, with ``transformer`` inline
    (and a post-lexer that only fixes token lines, see fastscan.LineFix)."""
    from lark import Lark

    return Lark(
        grammar_text(), parser="lalr", lexer="contextual", transformer=transformer,
        start=start, maybe_placeholders=False, cache=_cache_file(start), postlex=postlex,
    )  # fmt: skip


def _get_expr_parser() -> Any:
    global _expr_parser
    with _lock:
        if _expr_parser is None:
            from parasol_core.syntax.build_expr import ExprBuilder

            _expr_parser = make_parser("expr", ExprBuilder())
    return _expr_parser


def parse_expression(text: str) -> Expression:
    """Parse one expression (as typed in an editor); raises ModelSyntaxError."""
    if "\n" in text or "\r" in text or "\x0b" in text or ";" in text:
        pos = min(i for i in (text.find(c) for c in "\n\r\x0b;") if i >= 0)
        raise ModelSyntaxError("an expression must fit on one line", 1, pos + 1, text=text)
    if "#" in text:  # lark would read the rest as a comment, and the file the same way:
        # the expression kept (with "# ..." in its text) would not be what reads back
        raise ModelSyntaxError(
            "an expression cannot hold a comment ('#'); a comment in the file stays as it is",
            1, text.index("#") + 1, text=text,
        )  # fmt: skip
    from parasol_core.syntax import reader
    from parasol_core.syntax.build_expr import ExprBuilder, _Fail

    # The hand-written reader first (no lark to import); lark where it steps aside, and
    # for the message of an expression that is not one
    try:
        tree = reader.expression(text, ExprBuilder())
        return Expression(text.strip(), tree, len(text) - len(text.lstrip()))
    except (reader.Defer, _Fail, RecursionError):
        pass
    from lark.exceptions import UnexpectedInput

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
