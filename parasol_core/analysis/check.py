"""Checking an expression as a user types it: syntax, references, cycles.

The editor's expression field calls this on every keystroke; it lives here, without Qt,
so the rules are tested directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import Value
from parasol_core.expr.refs import UnresolvedReference, resolve
from parasol_core.model import Machine
from parasol_core.model.tree import Expression
from parasol_core.syntax.expression import parse_expression


@dataclass(frozen=True)
class Check:
    """What typed text amounts to: a parsed expression, or a problem and where it is.

    An empty text is valid with ``expression`` None (it removes the expression, where
    the owner allows that). ``value`` is what a valid expression evaluates to now (an
    EvalError is a value too: errors are shown, not refused).
    """

    expression: Expression | None = None
    message: str = ""
    column: int | None = None
    value: Value | None = None

    @property
    def ok(self) -> bool:
        return not self.message

    def describe(self) -> str:
        """The problem for a tooltip or message line: ``column 12: ...``."""
        if self.ok:
            return ""
        return f"column {self.column}: {self.message}" if self.column else self.message


def check_expression(
    text: str,
    machine: Machine,
    engine: Engine | None = None,
    runtime: bool = False,
    own_key: str | None = None,
) -> Check:
    """Parse ``text`` and resolve its references in ``machine``.

    ``runtime`` allows ``ar.bytes``/``ar.procs`` (the PVM, Express and MPI sections).
    With ``own_key`` (the key of the expression being edited, ``po(1).ia_spd``) and an
    ``engine``, a reference that leads back to that expression is a problem: a cycle.
    """
    if not text.strip():
        return Check()
    try:
        expr = parse_expression(text)
    except ModelSyntaxError as e:
        return Check(message=e.message, column=e.column)
    for ref in expr.references():
        column = ref.start + 1  # references hold offsets into ``text`` as typed
        try:
            target = resolve(machine, ref, runtime)
        except UnresolvedReference as e:
            return Check(message=str(e), column=column)
        if own_key is not None and target.kind == "expr":
            uses = [] if engine is None else engine.dependencies(target.key)
            if target.key == own_key or own_key in uses:
                return Check(
                    message=f"'{ref}' leads back to {own_key}: a cycle of references",
                    column=column,
                )
    value = None if engine is None else engine.evaluate_text(text, runtime=runtime)
    return Check(expression=expr, value=value)
