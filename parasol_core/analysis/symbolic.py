"""Expressions as sympy expressions: for display and for sensitivities.

:func:`to_sympy` turns a model expression into a sympy expression over *named
parameters*: each stored value is a real Symbol named by its key (``pt(1).iga``,
``tl(1)(1).speed``, ``to(1).links``, ``tl(1)(1).connect(0)``), each run-time argument
one named ``ar.bytes`` or ``ar.procs``. References to other expressions are inlined by
default, so that a derivative is taken with respect to stored parameters.

This module is for display and analysis only. Live numeric evaluation goes through
the compiled closures of :mod:`parasol_core.expr.evaluate`; sympy is far too slow for it.

How C's semantics are rendered (the types come from the model's current values, so
``to(1).links`` is an integer and every timing a float):

* ``a / b`` with two integer operands is C's truncating division:
  ``trunc(a/b)``, where ``trunc`` is a sympy function that rounds toward zero. With a
  float operand it is plain division.
* ``a % b`` is ``a - b*trunc(a/b)``: C's ``%`` on integers and ``fmod`` on floats alike.
* ``int(x)`` is ``trunc(x)``, ``round(x)`` a ``round`` function (half away from zero),
  ``sgn(x)`` sympy's ``sign``, ``double(x)`` just ``x``.
* ``a << b`` is ``a*2**b``, ``a >> b`` is ``floor(a/2**b)``, ``~a`` is ``-a - 1``; ``&``, ``|``
  and ``^`` are the functions ``bitand``, ``bitor`` and ``bitxor``.
* comparisons, ``!``, ``&&`` and ``||`` are ``Piecewise`` expressions giving 1 or 0.

For derivatives every step function (``trunc``, ``round``, ``floor``, ``sign``, the
bitwise functions, the comparisons) counts as locally constant: its derivative is 0,
as it is everywhere except at its jumps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sympy as sp

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.expr.refs import UnresolvedReference, resolve
from parasol_core.model import Machine
from parasol_core.model.tree import (
    Binary,
    Call,
    Expression,
    Node,
    Number,
    Reference,
    Unary,
    unparse,
)
from parasol_core.syntax.expression import parse_expression

__all__ = [
    "Sensitivity",
    "SymbolicError",
    "derivatives",
    "latex",
    "pretty",
    "sensitivities",
    "symbol",
    "to_sympy",
]


class SymbolicError(ValueError):
    """An expression that cannot be converted or differentiated; the message says why."""


# --------------------------------------------------------------------------- functions


def _integer_args(*args: sp.Basic) -> list[int] | None:
    if all(a.is_Number for a in args):
        return [int(a) for a in args]
    return None


class trunc(sp.Function):
    """Rounding toward zero (C's integer division and ``int(x)``)."""

    @classmethod
    def eval(cls, x: sp.Basic) -> sp.Basic | None:
        if x.is_Number:
            return sp.Integer(math.trunc(x)) if x.is_finite else None
        return None

    def fdiff(self, argindex: int = 1) -> sp.Basic:
        return sp.S.Zero


class cround(sp.Function):
    """Rounding half away from zero (the model's ``round``)."""

    @classmethod
    def eval(cls, x: sp.Basic) -> sp.Basic | None:
        if x.is_Number and x.is_finite:
            a = abs(x)
            whole = sp.floor(a)
            if a - whole >= sp.Rational(1, 2):
                whole += 1
            return -whole if x < 0 else whole
        return None

    def fdiff(self, argindex: int = 1) -> sp.Basic:
        return sp.S.Zero

    def _sympystr(self, printer: Any) -> str:
        return f"round({printer._print(self.args[0])})"

    def _latex(self, printer: Any) -> str:
        return rf"\operatorname{{round}}\left({printer._print(self.args[0])}\right)"

    def _pretty(self, printer: Any) -> Any:
        return printer._print_Function(self, func_name="round")


def _bitwise(name: str, op: Any) -> type[sp.Function]:
    def eval_(cls: type, a: sp.Basic, b: sp.Basic) -> sp.Basic | None:
        ints = _integer_args(a, b)
        return None if ints is None else sp.Integer(op(*ints))

    def fdiff(self: sp.Function, argindex: int = 1) -> sp.Basic:
        return sp.S.Zero

    return type(name, (sp.Function,), {"eval": classmethod(eval_), "fdiff": fdiff, "nargs": 2})


bitand = _bitwise("bitand", lambda a, b: a & b)
bitor = _bitwise("bitor", lambda a, b: a | b)
bitxor = _bitwise("bitxor", lambda a, b: a ^ b)

_FUNCTIONS = {
    "abs": sp.Abs, "acos": sp.acos, "asin": sp.asin, "atan": sp.atan, "cos": sp.cos,
    "cosh": sp.cosh, "exp": sp.exp, "floor": sp.floor, "log": sp.log,
    "log10": lambda x: sp.log(x, 10), "round": cround, "sgn": sp.sign, "sin": sp.sin,
    "sinh": sp.sinh, "sqrt": sp.sqrt, "tan": sp.tan, "tanh": sp.tanh, "int": trunc,
}  # fmt: skip
_INT_RESULT = {"int", "round", "sgn"}


def symbol(key: str) -> sp.Symbol:
    """The Symbol standing for a stored value or run-time argument."""
    return sp.Symbol(key, real=True)


def _boolean(condition: sp.Basic) -> sp.Basic:
    return sp.Piecewise((sp.S.One, condition), (sp.S.Zero, True))


# --------------------------------------------------------------------------- conversion


class _Converter:
    def __init__(self, engine: Engine, inline: bool) -> None:
        self.engine = engine
        self.machine = engine.machine
        self.inline = inline
        self.stack: list[str] = []
        self.params: dict[str, sp.Symbol] = {}

    def expression(self, expr: Expression, runtime: bool) -> tuple[sp.Basic, bool]:
        return self.node(expr.tree, runtime)

    def node(self, n: Node, runtime: bool) -> tuple[sp.Basic, bool]:
        if isinstance(n, Number):
            if isinstance(n.value, int):
                return sp.Integer(n.value), True
            return sp.Float(n.value), False
        if isinstance(n, Reference):
            return self.reference(n, runtime)
        if isinstance(n, Unary):
            a, is_int = self.node(n.operand, runtime)
            if n.op == "-":
                return -a, is_int
            if n.op == "!":
                return _boolean(sp.Eq(a, 0)), True
            return -a - 1, True  # ~
        if isinstance(n, Call):
            a, is_int = self.node(n.arg, runtime)
            if n.func == "double":
                return a, False
            return _FUNCTIONS[n.func](a), n.func in _INT_RESULT
        return self.binary(n, runtime)

    def binary(self, n: Binary, runtime: bool) -> tuple[sp.Basic, bool]:
        a, ai = self.node(n.left, runtime)
        b, bi = self.node(n.right, runtime)
        both = ai and bi
        op = n.op
        if op == "+":
            return a + b, both
        if op == "-":
            return a - b, both
        if op == "*":
            return a * b, both
        if op == "/":
            return (trunc(a / b) if both else a / b), both
        if op == "%":
            return a - b * trunc(a / b), both
        if op == "**":
            exponent_negative = both and self._value(n.right) < 0
            return sp.Pow(a, b), both and not exponent_negative
        if op == "<<":
            return a * 2**b, True
        if op == ">>":
            return sp.floor(a / 2**b), True
        if op in ("&", "|", "^"):
            return {"&": bitand, "|": bitor, "^": bitxor}[op](a, b), True
        if op == "&&":
            return _boolean(sp.And(sp.Ne(a, 0), sp.Ne(b, 0))), True
        if op == "||":
            return _boolean(sp.Or(sp.Ne(a, 0), sp.Ne(b, 0))), True
        relation = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}
        return _boolean(relation[op](a, b)), True

    def _value(self, n: Node) -> int | float:
        value = self.engine.evaluate_text(unparse(n), runtime=True)
        return 0 if isinstance(value, EvalError) else value

    def reference(self, ref: Reference, runtime: bool) -> tuple[sp.Basic, bool]:
        try:
            target = resolve(self.machine, ref, runtime)
        except UnresolvedReference as e:
            raise SymbolicError(str(e)) from None
        key = target.key
        if target.kind == "expr" and self.inline:
            if key in self.stack:
                cycle = " -> ".join([*self.stack[self.stack.index(key) :], key])
                raise SymbolicError(f"a cycle of references: {cycle}")
            self.stack.append(key)
            entry = self.engine.entry(key)
            inner_runtime = entry.runtime if entry is not None else key[:3] in ("pv.", "ex.", "mp.")
            try:
                return self.expression(target.expr, inner_runtime)
            finally:
                self.stack.pop()
        value = self.engine.value(key)
        sym = symbol(key)
        if target.kind != "expr":
            self.params[sym.name] = sym
        return sym, type(value) is int


def _engine(source: Machine | Engine, args: Mapping[str, int | float] | None = None) -> Engine:
    if isinstance(source, Engine):
        if args:
            engine = Engine(source.machine, {**source.args, **args})
            return engine
        return source
    return Engine(source, args)


def _parse(expression: Expression | str) -> Expression:
    if isinstance(expression, Expression):
        return expression
    try:
        return parse_expression(expression)
    except ModelSyntaxError as e:
        raise SymbolicError(f"syntax error: {e.message} (column {e.column})") from None


def to_sympy(
    expression: Expression | str,
    machine: Machine | Engine,
    inline: bool = True,
    runtime: bool = True,
) -> sp.Basic:
    """``expression`` (an Expression, or text such as ``po(1).ia_spd``) as sympy.

    With ``inline`` a reference to another expression is replaced by that expression,
    recursively; without, it stays a Symbol named by its key. ``runtime`` allows
    ``ar.bytes`` and ``ar.procs`` in it. Raises SymbolicError for a reference that names
    nothing, a cycle, or text that does not parse.
    """
    converter = _Converter(_engine(machine), inline)
    return _convert(converter, _parse(expression), runtime)


def _convert(converter: _Converter, expression: Expression, runtime: bool) -> sp.Basic:
    try:
        return converter.expression(expression, runtime)[0]
    except RecursionError:  # inlining chains of deep expressions
        raise SymbolicError("the expression is nested too deeply to convert") from None


def _latex_name(name: str) -> str:
    return r"\mathtt{" + name.replace("_", r"\_") + "}"


def latex(expression: Expression | str, machine: Machine | Engine, inline: bool = True) -> str:
    """LaTeX for an expression; parameter names are set in typewriter type."""
    expr = to_sympy(expression, machine, inline)
    names = {s: _latex_name(s.name) for s in expr.free_symbols}
    return sp.latex(expr, symbol_names=names)


def pretty(expression: Expression | str, machine: Machine | Engine, inline: bool = True) -> str:
    """A multi-line text rendering of an expression (sympy's pretty printer)."""
    return sp.pretty(to_sympy(expression, machine, inline), use_unicode=True)


# --------------------------------------------------------------------------- sensitivity


@dataclass(frozen=True)
class Sensitivity:
    """How a derived figure f responds to one parameter x, at the current values.

    ``partial`` is df/dx; ``relative`` is d ln f / d ln x = (df/dx) * x / f, the
    percentage change of f per percent change of x (None where f is 0).
    """

    parameter: str
    value: float
    partial: float
    relative: float | None


def _locally_constant(expr: sp.Basic) -> sp.Basic:
    """Zero the derivatives sympy leaves of step functions (floor, sign)."""
    expr = expr.replace(lambda e: isinstance(e, sp.Derivative), lambda e: sp.S.Zero)
    expr = expr.replace(lambda e: isinstance(e, sp.Subs), lambda e: e.doit())
    return expr.replace(lambda e: isinstance(e, sp.DiracDelta), lambda e: sp.S.Zero)


def _numeric(expr: sp.Basic, values: dict[sp.Symbol, sp.Basic], what: str) -> float:
    result = sp.sympify(expr).subs(values)
    try:
        return float(sp.N(result))
    except (TypeError, ValueError):
        raise SymbolicError(f"{what} does not evaluate to a number here: {result}") from None


def _analyse(
    source: Machine | Engine, key: str, args: Mapping[str, int | float] | None
) -> tuple[float, dict[str, tuple[float, float]]]:
    engine = _engine(source, args)
    converter = _Converter(engine, inline=True)
    f_expr = _convert(converter, _parse(key), True)
    f_value = engine.evaluate_text(key, runtime=True)
    if isinstance(f_value, EvalError):
        raise SymbolicError(f"{key} has no value to differentiate at: {f_value}")
    values: dict[sp.Symbol, sp.Basic] = {}
    for name, sym in converter.params.items():
        v = engine.value(name)
        if isinstance(v, EvalError):
            raise SymbolicError(f"{name} has no value: {v}")
        values[sym] = sp.Integer(v) if isinstance(v, int) else sp.Float(v)
    out: dict[str, tuple[float, float]] = {}
    for name, sym in sorted(converter.params.items()):
        partial = _numeric(_locally_constant(sp.diff(f_expr, sym)), values, f"d {key} / d {name}")
        out[name] = (float(values[sym]), partial)
    return float(f_value), out


def derivatives(
    source: Machine | Engine, key: str, args: Mapping[str, int | float] | None = None
) -> dict[str, float]:
    """The partial derivative of ``key`` (an expression key or any expression text) with
    respect to each stored parameter and run-time argument it uses, at the current
    values (and ``args``, for the run-time arguments)."""
    _, partials = _analyse(source, key, args)
    return {name: partial for name, (_, partial) in partials.items()}


def sensitivities(
    source: Machine | Engine, key: str, args: Mapping[str, int | float] | None = None
) -> dict[str, Sensitivity]:
    """For each parameter ``key`` uses: its value, the partial derivative and the
    relative sensitivity d ln f / d ln x, at the current values."""
    f_value, partials = _analyse(source, key, args)
    out = {}
    for name, (x, partial) in partials.items():
        relative = None if f_value == 0 else partial * x / f_value
        out[name] = Sensitivity(name, x, partial, relative)
    return out
