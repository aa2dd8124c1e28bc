"""Parsing one expression, as typed in an editor: the grammar's ``expr`` rule, read by
the reader (:mod:`parasol_core.syntax.reader`).

This module does not import the model objects (:mod:`parasol_core.model`), so parsing an
expression loads no more than the tree, the reader and the expression builder.
"""

from __future__ import annotations

from pathlib import Path

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.model.tree import Expression
from parasol_core.syntax import reader
from parasol_core.syntax.build_expr import ExprBuilder

# The definition of the syntax is the repository's grammar/machine.lark, the executable
# specification the tests hold the reader to; an installed (non-editable) package
# carries a copy beside this module, made by setup.py's build.
_HERE = Path(__file__).resolve().parent
_IN_REPO = _HERE.parents[1] / "grammar" / "machine.lark"
GRAMMAR_PATH = _IN_REPO if _IN_REPO.is_file() else _HERE / "machine.lark"


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def parse_expression(text: str) -> Expression:
    """Parse one expression (as typed in an editor); raises ModelSyntaxError."""
    if "\n" in text or "\r" in text or "\x0b" in text or ";" in text:
        pos = min(i for i in (text.find(c) for c in "\n\r\x0b;") if i >= 0)
        raise ModelSyntaxError("an expression must fit on one line", 1, pos + 1, text=text)
    if "#" in text:  # the rest would read as a comment, and the file the same way:
        # the expression kept (with "# ..." in its text) would not be what reads back
        raise ModelSyntaxError(
            "an expression cannot hold a comment ('#'); a comment in the file stays as it is",
            1, text.index("#") + 1, text=text,
        )  # fmt: skip
    try:
        tree = reader.expression(text, ExprBuilder())
    except RecursionError:
        raise ModelSyntaxError("the expression is nested too deeply", 1, 1) from None
    return Expression(text.strip(), tree, len(text) - len(text.lstrip()))
