"""Numeric evaluation of expression trees, with C's semantics (docs/decisions.md,
"Expression semantics are C's").

A tree is compiled once into nested closures; evaluating it is then one call per node
with no tree walk, no dispatch on the operator and no reference resolution, which is
what lets the editor re-evaluate derived figures on every slider step.

Values are Python ``int`` (kept within signed 64 bits) or ``float`` (always finite).
Anything that goes wrong while evaluating (division by zero, a domain error, an
overflow, a bitwise operator on a float, a reference that names nothing) gives an
:class:`EvalError` *value*, which the operators pass on unchanged. No exception leaves
a compiled expression.

References are resolved at compile time by a ``resolver`` that turns each
:class:`~parasol_core.model.tree.Reference` into a key; the compiled expression reads the
key's value from the environment (a mapping) it is called with. The engine keeps one
such environment for a whole model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Union

from parasol_core.expr.refs import UnresolvedReference
from parasol_core.model.tree import (
    Binary,
    Call,
    Expression,
    Node,
    Number,
    Reference,
    Unary,
    format_number,
)
from parasol_core.syntax.expression import parse_expression

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "Compiled",
    "EvalError",
    "Value",
    "compile_expression",
    "evaluate",
    "format_value",
    "is_error",
    "same_value",
]

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
_INF = math.inf


@dataclass(frozen=True)
class EvalError:
    """An evaluation that failed: what went wrong and where.

    ``start``/``end`` are the positions of the node where it arose, in the coordinates
    of the tree's nodes (offsets into the expression's text, or into the whole file for
    an expression loaded from one; subtract ``Expression.offset``). ``source`` is the key
    of the expression the error arose in, when it reached this value through a
    reference (``None``: it arose right here).
    """

    message: str
    start: int | None = None
    end: int | None = None
    source: str | None = None

    def __str__(self) -> str:
        if self.source is not None:
            return f"{self.message} (in {self.source})"
        return self.message


Value = Union[int, float, EvalError]  # noqa: UP007 - a runtime alias, used in isinstance-free code
Env = Mapping[str, Value]
Compiled = Callable[[Env], Value]
Resolver = Callable[[Reference], str]


def is_error(value: object) -> bool:
    return type(value) is EvalError


def same_value(a: object, b: object) -> bool:
    """Equal and of the same type: 1 and 1.0 differ, as the display of them does."""
    return type(a) is type(b) and a == b


def format_value(value: Value) -> str:
    """Integers as integers, floats in shortest round-trip form, errors as ``error: ...``."""
    if type(value) is EvalError:
        return f"error: {value}"
    return format_number(value)


class _Fault(Exception):
    """Raised inside an operator; turned into an EvalError at the node that failed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _num(value: int | float) -> str:
    return format_number(value)


def _int_result(r: int, what: Callable[[], str]) -> int:
    """``r`` if it fits in 64 bits; ``what`` describes the operation (called on failure)."""
    if INT_MIN <= r <= INT_MAX:
        return r
    raise _Fault(f"integer overflow: {what()} is outside the 64-bit range")


def _float_result(r: float, what: Callable[[], str]) -> float:
    if -_INF < r < _INF:
        return r
    raise _not_finite(r, what())


def _not_finite(r: float, what: str) -> _Fault:
    if r != r:
        return _Fault(f"domain error: {what} is not a number")
    return _Fault(f"overflow: {what} is too large")


def _bad(op: str, a: int | float, b: int | float, r: int | float) -> _Fault:
    """The fault for a result out of range; the message is only built when one is."""
    what = f"{_num(a)} {op} {_num(b)}"
    if type(r) is int:
        return _Fault(f"integer overflow: {what} is outside the 64-bit range")
    return _not_finite(r, what)


# --------------------------------------------------------------------------- operators
# Each takes two plain numbers (never errors) and returns a number or raises _Fault.
# They run on every evaluation: the fast path checks ranges with chained comparisons
# and builds no message unless something is wrong.


def _add(a: int | float, b: int | float) -> int | float:
    r = a + b
    if type(r) is int:
        if INT_MIN <= r <= INT_MAX:
            return r
    elif -_INF < r < _INF:
        return r
    raise _bad("+", a, b, r)


def _sub(a: int | float, b: int | float) -> int | float:
    r = a - b
    if type(r) is int:
        if INT_MIN <= r <= INT_MAX:
            return r
    elif -_INF < r < _INF:
        return r
    raise _bad("-", a, b, r)


def _mul(a: int | float, b: int | float) -> int | float:
    r = a * b
    if type(r) is int:
        if INT_MIN <= r <= INT_MAX:
            return r
    elif -_INF < r < _INF:
        return r
    raise _bad("*", a, b, r)


def _div(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise _Fault(f"division by zero: {_num(a)} / {_num(b)}")
    if type(a) is int and type(b) is int:
        q = abs(a) // abs(b)  # C truncates toward zero
        if (a < 0) != (b < 0):
            q = -q
        if q <= INT_MAX:
            return q
        raise _bad("/", a, b, q)
    r = a / b
    if -_INF < r < _INF:
        return r
    raise _bad("/", a, b, r)


def _mod(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise _Fault(f"division by zero: {_num(a)} % {_num(b)}")
    if type(a) is int and type(b) is int:
        r = abs(a) % abs(b)  # C: the sign follows the dividend
        return -r if a < 0 else r
    return math.fmod(a, b)  # finite operands, non-zero divisor: always finite


def _pow(a: int | float, b: int | float) -> int | float:
    def what() -> str:
        return f"{_num(a)} ** {_num(b)}"

    if type(a) is int and type(b) is int:
        if b >= 0:
            # Decide before computing: 2 ** 10 ** 10 must fail at once, not hang.
            if a in (0, 1):
                return 1 if b == 0 else a
            if a == -1:
                return -1 if b & 1 else 1
            if b > 63:
                raise _Fault(f"integer overflow: {what()} is outside the 64-bit range")
            return _int_result(a**b, what)
        if a == 0:
            raise _Fault(f"division by zero: {what()} (zero to a negative power)")
    af, bf = float(a), float(b)
    if af == 0.0 and bf < 0:
        raise _Fault(f"division by zero: {what()} (zero to a negative power)")
    try:
        r = math.pow(af, bf)
    except OverflowError:
        raise _Fault(f"overflow: {what()} is too large") from None
    except ValueError:
        raise _Fault(f"domain error: {what()} (a negative number to a non-integer power)") from None
    return _float_result(r, what)


def _need_ints(op: str, a: int | float, b: int | float) -> None:
    if type(a) is not int or type(b) is not int:
        bad = a if type(a) is not int else b
        raise _Fault(f"'{op}' takes integers, not the float {_num(bad)}")


def _shl(a: int | float, b: int | float) -> int:
    _need_ints("<<", a, b)
    if b < 0:
        raise _Fault(f"negative shift count: {_num(a)} << {_num(b)}")
    if a == 0:
        return 0
    if b > 63:  # decide before computing: 1 << 10 ** 9 must not build a huge number
        raise _Fault(f"integer overflow: {_num(a)} << {_num(b)} is outside the 64-bit range")
    return _int_result(a << b, lambda: f"{_num(a)} << {_num(b)}")


def _shr(a: int | float, b: int | float) -> int:
    _need_ints(">>", a, b)
    if b < 0:
        raise _Fault(f"negative shift count: {_num(a)} >> {_num(b)}")
    return a >> min(b, 64)  # arithmetic shift, as C compilers do for signed values


def _band(a: int | float, b: int | float) -> int:
    _need_ints("&", a, b)
    return a & b


def _bor(a: int | float, b: int | float) -> int:
    _need_ints("|", a, b)
    return a | b


def _bxor(a: int | float, b: int | float) -> int:
    _need_ints("^", a, b)
    return a ^ b


def _same_type(a: int | float, b: int | float) -> tuple[int | float, int | float]:
    # C compares an int with a double by converting the int; Python would compare exactly.
    if type(a) is not type(b):
        return float(a), float(b)
    return a, b


def _lt(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a < b else 0


def _le(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a <= b else 0


def _gt(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a > b else 0


def _ge(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a >= b else 0


def _eq(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a == b else 0


def _ne(a: int | float, b: int | float) -> int:
    a, b = _same_type(a, b)
    return 1 if a != b else 0


BINARY_OPERATORS: dict[str, Callable[[int | float, int | float], int | float]] = {
    "+": _add, "-": _sub, "*": _mul, "/": _div, "%": _mod, "**": _pow,
    "<<": _shl, ">>": _shr, "&": _band, "|": _bor, "^": _bxor,
    "<": _lt, "<=": _le, ">": _gt, ">=": _ge, "==": _eq, "!=": _ne,
}  # fmt: skip


def _neg(a: int | float) -> int | float:
    if type(a) is int:
        return _int_result(-a, lambda: f"-({_num(a)})")
    return -a


def _not(a: int | float) -> int:
    return 1 if a == 0 else 0


def _invert(a: int | float) -> int:
    if type(a) is not int:
        raise _Fault(f"'~' takes an integer, not the float {_num(a)}")
    return ~a


UNARY_OPERATORS: dict[str, Callable[[int | float], int | float]] = {
    "-": _neg, "!": _not, "~": _invert,
}  # fmt: skip


# --------------------------------------------------------------------------- functions


def _domain(name: str, x: int | float, why: str) -> _Fault:
    return _Fault(f"domain error: {name}({_num(x)}): {why}")


def _float_fn(name: str, fn: Callable[[float], float]) -> Callable[[int | float], float]:
    def call(x: int | float) -> float:
        try:
            r = fn(float(x))
        except OverflowError:
            raise _Fault(f"overflow: {name}({_num(x)}) is too large") from None
        except ValueError:
            raise _domain(name, x, "outside the function's domain") from None
        return _float_result(r, lambda: f"{name}({_num(x)})")

    return call


def _acos(x: int | float) -> float:
    if not -1 <= x <= 1:
        raise _domain("acos", x, "the argument must lie in [-1, 1]")
    return math.acos(x)


def _asin(x: int | float) -> float:
    if not -1 <= x <= 1:
        raise _domain("asin", x, "the argument must lie in [-1, 1]")
    return math.asin(x)


def _log(x: int | float) -> float:
    if x <= 0:
        raise _domain("log", x, "the logarithm needs a positive argument")
    return math.log(x)


def _log10(x: int | float) -> float:
    if x <= 0:
        raise _domain("log10", x, "the logarithm needs a positive argument")
    return math.log10(x)


def _sqrt(x: int | float) -> float:
    if x < 0:
        raise _domain("sqrt", x, "the square root of a negative number")
    return math.sqrt(x)


def _int(x: int | float) -> int:
    if type(x) is int:
        return x
    return _int_result(math.trunc(x), lambda: f"int({_num(x)})")


def _round(x: int | float) -> int:
    """Half away from zero, as C's round(): round(2.5) is 3, round(-2.5) is -3."""
    if type(x) is int:
        return x
    a = abs(x)
    whole = math.floor(a)
    if a - whole >= 0.5:  # exact: a - floor(a) loses nothing for a double
        whole += 1
    return _int_result(-whole if x < 0 else whole, lambda: f"round({_num(x)})")


def _sgn(x: int | float) -> int:
    return (x > 0) - (x < 0)


FUNCTIONS: dict[str, Callable[[int | float], int | float]] = {
    "abs": _float_fn("abs", abs),
    "acos": _acos,
    "asin": _asin,
    "atan": _float_fn("atan", math.atan),
    "cos": _float_fn("cos", math.cos),
    "cosh": _float_fn("cosh", math.cosh),
    "double": float,
    "exp": _float_fn("exp", math.exp),
    "floor": _float_fn("floor", lambda x: float(math.floor(x))),
    "int": _int,
    "log": _log,
    "log10": _log10,
    "round": _round,
    "sgn": _sgn,
    "sin": _float_fn("sin", math.sin),
    "sinh": _float_fn("sinh", math.sinh),
    "sqrt": _sqrt,
    "tan": _float_fn("tan", math.tan),
    "tanh": _float_fn("tanh", math.tanh),
}


# --------------------------------------------------------------------------- compiling


def _reference_key(ref: Reference) -> str:
    return str(ref)


def compile_expression(tree: Node | Expression, resolver: Resolver | None = None) -> Compiled:
    """Compile a tree into a function of an environment (a mapping from keys to values).

    ``resolver`` maps each reference to the key its value is found under; it may raise
    :class:`~parasol_core.expr.refs.UnresolvedReference`, and the reference then
    evaluates to an EvalError with that message. Without a resolver a reference's key is
    its text. A key missing from the environment at evaluation is an EvalError too.
    """
    if isinstance(tree, Expression):
        tree = tree.tree
    return _compile(tree, resolver or _reference_key)


def evaluate(
    expr: str | Expression | Node,
    env: Env | None = None,
    resolver: Resolver | None = None,
) -> Value:
    """Compile and evaluate once (parse ``expr`` first if it is text).

    A syntax error in the text is returned as an EvalError too.
    """
    if isinstance(expr, str):
        from parasol_core.base.diagnostics import ModelSyntaxError

        try:
            expr = parse_expression(expr)
        except ModelSyntaxError as e:
            return EvalError(e.message, e.column - 1, e.column)
    return compile_expression(expr, resolver)({} if env is None else env)


def _compile(node: Node, resolver: Resolver) -> Compiled:
    if isinstance(node, Number):
        return _compile_number(node)
    if isinstance(node, Reference):
        return _compile_reference(node, resolver)
    if isinstance(node, Binary):
        return _compile_binary(node, resolver)
    if isinstance(node, Unary):
        return _compile_unary(node, resolver)
    if isinstance(node, Call):
        return _compile_call(node, resolver)
    raise TypeError(f"not an expression node: {node!r}")


def _constant(value: Value) -> Compiled:
    def const(env: Env) -> Value:
        return value

    return const


def _compile_number(node: Number) -> Compiled:
    value = node.value
    if type(value) is int and not INT_MIN <= value <= INT_MAX:
        return _constant(
            EvalError(
                f"integer overflow: {node.text or value} is outside the 64-bit range",
                node.start,
                node.end,
            )
        )
    if type(value) is float and not -_INF < value < _INF:
        return _constant(EvalError(f"overflow: {node.text} is too large", node.start, node.end))
    return _constant(value)


def _compile_reference(node: Reference, resolver: Resolver) -> Compiled:
    try:
        key = resolver(node)
    except UnresolvedReference as e:
        return _constant(EvalError(str(e), node.start, node.end))
    start, end = node.start, node.end

    def ref(env: Env) -> Value:
        try:
            value = env[key]
        except KeyError:
            return EvalError(f"'{node}' has no value", start, end)
        if type(value) is EvalError and value.start is None and value.source is None:
            # a stored value that could not be read: point at the reference
            return replace(value, start=start, end=end)
        return value

    return ref


def _compile_binary(node: Binary, resolver: Resolver) -> Compiled:
    left = _compile(node.left, resolver)
    right = _compile(node.right, resolver)
    op = node.op
    start, end = node.start, node.end
    if op == "&&":

        def logical_and(env: Env) -> Value:
            a = left(env)
            if type(a) is EvalError:
                return a
            if a == 0:
                return 0
            b = right(env)
            if type(b) is EvalError:
                return b
            return 0 if b == 0 else 1

        return logical_and
    if op == "||":

        def logical_or(env: Env) -> Value:
            a = left(env)
            if type(a) is EvalError:
                return a
            if a != 0:
                return 1
            b = right(env)
            if type(b) is EvalError:
                return b
            return 0 if b == 0 else 1

        return logical_or
    fn = BINARY_OPERATORS[op]

    def binary(env: Env) -> Value:
        a = left(env)
        if type(a) is EvalError:
            return a
        b = right(env)
        if type(b) is EvalError:
            return b
        try:
            return fn(a, b)
        except _Fault as f:
            return EvalError(f.message, start, end)

    return binary


def _compile_applied(operand_node: Node, fn: Callable, node: Unary | Call,
                     resolver: Resolver) -> Compiled:  # fmt: skip
    """A unary operator or a function: one operand, errors passed through."""
    operand = _compile(operand_node, resolver)
    start, end = node.start, node.end

    def applied(env: Env) -> Value:
        a = operand(env)
        if type(a) is EvalError:
            return a
        try:
            return fn(a)
        except _Fault as f:
            return EvalError(f.message, start, end)

    return applied


def _compile_unary(node: Unary, resolver: Resolver) -> Compiled:
    return _compile_applied(node.operand, UNARY_OPERATORS[node.op], node, resolver)


def _compile_call(node: Call, resolver: Resolver) -> Compiled:
    return _compile_applied(node.arg, FUNCTIONS[node.func], node, resolver)


# --------------------------------------------------------------------------- constant parts


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Call):
        return (node.arg,)
    return ()


def constant_failures(tree: Node | Expression) -> list[tuple[Node, EvalError]]:
    """The largest parts of an expression that refer to nothing (no reference, no
    ``ar.*`` argument) and fail whenever they are evaluated (``7 % 0``, ``10 ** 10 **
    10``, ``exp(1e308)``), each with its error. Each such part is evaluated once, so the
    work is bounded by the expression's size (the evaluator decides a power or a shift
    before computing it). A part that evaluates is not reported, nor anything inside it
    (``0 && 1 / 0`` never divides)."""
    if isinstance(tree, Expression):
        tree = tree.tree
    # post-order without recursion: expressions may nest thousands of levels
    constant: dict[int, bool] = {}
    parent: dict[int, Node | None] = {id(tree): None}
    order: list[Node] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        order.append(node)
        for child in _children(node):
            parent[id(child)] = node
            stack.append(child)
    for node in reversed(order):
        constant[id(node)] = not isinstance(node, Reference) and all(
            constant[id(c)] for c in _children(node)
        )
    out: list[tuple[Node, EvalError]] = []
    for node in order:  # parents before children: the largest constant parts
        up = parent[id(node)]
        if not constant[id(node)] or (up is not None and constant[id(up)]):
            continue
        if isinstance(node, Number):
            continue  # a lone number: the reader has refused those out of range
        value = compile_expression(node)({})
        if type(value) is EvalError:
            out.append((node, value))
    return out
