"""Numeric evaluation with C's semantics (docs/decisions.md "Expression semantics are C's").

The expected values come from a small independent model of C integer arithmetic
(``c_op`` below), not from the evaluator itself.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from timing import peak_bytes

from parasol_core.expr.evaluate import (
    INT_MAX,
    INT_MIN,
    EvalError,
    compile_expression,
    evaluate,
    format_value,
)
from parasol_core.syntax.expression import parse_expression

# --------------------------------------------------------------------------- an oracle


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: int, b: int) -> int:
    return a - b * c_div(a, b)


def c_op(op: str, a: int | float, b: int | float) -> int | float:
    """C's operators (plus `**`) on small integers; raises where C has no value."""
    if op in ("/", "%") and b == 0:
        raise ZeroDivisionError
    if op in ("<<", ">>", "&", "^", "|") and (type(a) is float or type(b) is float):
        raise ValueError  # integers only: an error in C's terms
    if op in ("<<", ">>") and b < 0:
        raise ValueError
    if type(a) is float or type(b) is float:
        if op == "/":
            return a / b
        if op == "%":
            return math.fmod(a, b)
    if op == "**" and b < 0:
        if a == 0:
            raise ZeroDivisionError
        return float(a) ** b  # integer to a negative power is a float
    return {
        "**": lambda: a**b,
        "*": lambda: a * b, "/": lambda: c_div(a, b), "%": lambda: c_mod(a, b),
        "+": lambda: a + b, "-": lambda: a - b,
        "<<": lambda: a << b, ">>": lambda: a >> b,
        "<": lambda: int(a < b), "<=": lambda: int(a <= b),
        ">": lambda: int(a > b), ">=": lambda: int(a >= b),
        "==": lambda: int(a == b), "!=": lambda: int(a != b),
        "&": lambda: a & b, "^": lambda: a ^ b, "|": lambda: a | b,
        "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b)),
    }[op]()  # fmt: skip


def same(x: object, y: object) -> bool:
    return type(x) is type(y) and x == y


def lit(v: int) -> str:
    """A literal as an atom: negative ones in parentheses, so no unary minus sneaks in."""
    return f"({v})" if v < 0 else str(v)


def c_unary(op: str, a: int) -> int:
    return {"-": -a, "!": int(a == 0), "~": ~a}[op]


# Tightest first, as docs/decisions.md lists them (unary - ! ~ sits between ** and *).
BINARY_LEVELS = [
    ["**"], ["*", "/", "%"], ["+", "-"], ["<<", ">>"], ["<", "<=", ">", ">="],
    ["==", "!="], ["&"], ["^"], ["|"], ["&&"], ["||"],
]  # fmt: skip
VALUES = range(-2, 5)


def ev(text: str, env: dict | None = None):
    return evaluate(text, env)


def grouping_witness(tight: str, loose: str):
    """Small a, b, c for which `a loose (b tight c)` and `(a loose b) tight c` differ
    (in value or in type)."""
    for a, b, c in itertools.product(VALUES, repeat=3):
        try:
            right = c_op(loose, a, c_op(tight, b, c))
            left = c_op(tight, c_op(loose, a, b), c)
        except (ZeroDivisionError, ValueError):
            continue
        if not same(right, left):
            return a, b, c, right
    return None


PAIRS = [
    (tight, loose)
    for i, tight_level in enumerate(BINARY_LEVELS)
    for loose_level in BINARY_LEVELS[i + 1 :]
    for tight in tight_level
    for loose in loose_level
]


# --------------------------------------------------------------------------- precedence


@pytest.mark.parametrize(("tight", "loose"), PAIRS)
def test_every_pair_of_levels_groups_by_precedence(tight, loose):
    # `a loose b tight c` must group as `a loose (b tight c)` ...
    witness = grouping_witness(tight, loose)
    assert witness is not None, "no values tell the two groupings apart"
    a, b, c, expected = witness
    assert same(ev(f"{lit(a)} {loose} {lit(b)} {tight} {lit(c)}"), expected)
    # ... and `a tight b loose c` as `(a tight b) loose c`.
    for a, b, c in itertools.product(range(-1, 3), repeat=3):
        try:
            expected = c_op(loose, c_op(tight, a, b), c)
        except (ZeroDivisionError, ValueError):
            continue
        assert same(ev(f"{lit(a)} {tight} {lit(b)} {loose} {lit(c)}"), expected), (a, b, c)


SAME_LEVEL = [(first, second) for level in BINARY_LEVELS[1:] for first in level for second in level]
ASSOCIATIVE = {("*", "*"), ("+", "+"), ("+", "-"), ("&", "&"), ("^", "^"), ("|", "|"),
               ("&&", "&&"), ("||", "||")}  # fmt: skip


@pytest.mark.parametrize(("first", "second"), SAME_LEVEL)
def test_operators_of_one_level_group_to_the_left(first, second):
    distinguished = False
    for a, b, c in itertools.product(VALUES, repeat=3):
        try:
            expected = c_op(second, c_op(first, a, b), c)
        except (ZeroDivisionError, ValueError):
            continue
        try:
            distinguished |= not same(c_op(first, a, c_op(second, b, c)), expected)
        except (ZeroDivisionError, ValueError):
            pass
        assert same(ev(f"{lit(a)} {first} {lit(b)} {second} {lit(c)}"), expected), (a, b, c)
    assert distinguished or (first, second) in ASSOCIATIVE


def test_power_groups_to_the_right_and_binds_tighter_than_unary():
    assert ev("2**3**2") == 512
    assert ev("(2**3)**2") == 64
    assert ev("-2**2") == -4
    assert ev("(-2)**2") == 4
    assert ev("~1**2") == -2  # ~(1**2), not (~1)**2 == 4
    assert ev("!0**2") == 1
    assert ev("2**-1") == 0.5  # the exponent may itself be unary


@pytest.mark.parametrize("level", BINARY_LEVELS[1:])
def test_unary_operators_bind_tighter_than_every_binary_level(level):
    found = False
    for op, un, a, b in itertools.product(level, "-!~", VALUES, VALUES):
        try:
            expected = c_op(op, c_unary(un, a), b)
        except (ZeroDivisionError, ValueError):
            continue
        assert same(ev(f"{un}{lit(a)} {op} {lit(b)}"), expected), (un, a, op, b)
        try:
            found |= not same(c_unary(un, c_op(op, a, b)), expected)
        except (ZeroDivisionError, ValueError):
            pass
    assert found


def test_parentheses_override_precedence():
    assert ev("(1 + 2) * 3") == 9
    assert ev("1 + 2 * 3") == 7
    assert ev("(1 || 0) && 0") == 0
    assert ev("1 || 0 && 0") == 1


# --------------------------------------------------------------------------- int and float


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7 / 2", 3), ("-7 / 2", -3), ("7 / -2", -3), ("-7 / -2", 3),
        ("-7 % 3", -1), ("7 % -3", 1), ("-7 % -3", -1), ("7 % 3", 1),
        ("7 / 2.0", 3.5), ("7.0 / 2", 3.5), ("-7.5 % 2", -1.5), ("7.5 % -2", 1.5),
        ("1 + 2", 3), ("1 + 2.0", 3.0), ("3 * 4", 12), ("3 * 4.0", 12.0), ("1 - 3", -2),
        ("2 ** 3", 8), ("2.0 ** 3", 8.0), ("2 ** 3.0", 8.0), ("2 ** -1", 0.5),
        ("(-2) ** 3", -8), ("(-1) ** 1000001", -1), ("0 ** 0", 1), ("4 ** 0.5", 2.0),
        ("0x10 + 1", 17), ("0xfF", 255), ("1e3", 1000.0), ("1.5e-3 * 2", 0.003),
        ("-8 >> 1", -4), ("5 >> 1", 2), ("1 << 4", 16), ("-1 << 3", -8), ("1 >> 100", 0),
        ("6 & 3", 2), ("6 | 3", 7), ("6 ^ 3", 5), ("~0", -1), ("~-1", 0),
        ("1 < 2.0", 1), ("2.5 >= 3", 0), ("3 == 3.0", 1), ("1 != 1", 0), ("!0.0", 1),
        ("!2.5", 0), ("0.5 && 2", 1), ("0.0 || 0", 0),
        ("9007199254740993 == 9007199254740992.0", 1),  # C converts the int to double
        ("9223372036854775807", INT_MAX), ("-9223372036854775807 - 1", INT_MIN),
        ("(-2) ** 63", INT_MIN), ("2 ** 62", 2**62), ("-1 << 63", INT_MIN),
        ("(-9223372036854775807 - 1) % -1", 0),
    ],
)  # fmt: skip
def test_integer_and_float_results(text, value):
    result = ev(text)
    assert type(result) is type(value), (text, result)
    assert result == value


def test_comparisons_and_logic_give_int_zero_or_one():
    for text in ("1.5 < 2.5", "2.5 == 2.5", "0.1 && 0.2", "0.0 || 3.5", "!0.0"):
        assert ev(text) == 1 and type(ev(text)) is int


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1 / 0", "division by zero"), ("1 % 0", "division by zero"),
        ("1.0 / 0", "division by zero"), ("1 / 0.0", "division by zero"),
        ("1.5 % 0.0", "division by zero"), ("0 ** -1", "division by zero"),
        ("0.0 ** -2", "division by zero"), ("(-8.0) ** 0.5", "domain error"),
        ("9223372036854775807 + 1", "overflow"), ("-9223372036854775807 - 2", "overflow"),
        ("4611686018427387904 * 2", "overflow"), ("2 ** 63", "overflow"),
        ("1 << 63", "overflow"), ("2 ** 10 ** 10", "overflow"), ("1 << 10 ** 9", "overflow"),
        ("-(-9223372036854775807 - 1)", "overflow"),
        ("(-9223372036854775807 - 1) / -1", "overflow"),
        ("18446744073709551616", "out of range"), ("0x10000000000000000", "out of range"),
        ("1e308 * 10", "overflow"), ("1e308 + 1e308", "overflow"), ("10.0 ** 400", "overflow"),
        ("1e-308 / 1e100 / 1e300 * 0 + 1e308 / 1e-10", "overflow"),
        ("1.0 & 1", "'&' takes integers"), ("1 | 2.0", "'|' takes integers"),
        ("3 ^ 0.5", "'^' takes integers"), ("~1.0", "'~' takes an integer"),
        ("1 << 1.0", "'<<' takes integers"), ("1.5 >> 1", "'>>' takes integers"),
        ("1 << -1", "negative shift count"), ("1 >> -2", "negative shift count"),
    ],
)  # fmt: skip
def test_evaluation_errors_are_values_with_messages(text, words):
    result = ev(text)
    assert isinstance(result, EvalError), (text, result)
    assert words in result.message
    assert format_value(result).startswith("error: ")


def test_overflow_guards_decide_before_computing():
    # computed, the smallest of these would take 125 MB (1 << 10 ** 9): the guards
    # answer from the operands' sizes, so the memory taken, not a time, shows it
    for text in ("2 ** 10 ** 10", "1 << 10 ** 9", "3 ** 9223372036854775807", "7 << 2 ** 40"):
        result, peak = peak_bytes(ev, text)
        assert isinstance(result, EvalError), (text, result)
        assert peak < 1_000_000, (text, peak)


def test_short_circuit_skips_the_right_operand():
    assert ev("0 && 1 / 0") == 0
    assert ev("1 || 1 / 0") == 1
    assert ev("0.0 && sqrt(-1)") == 0
    assert isinstance(ev("1 && 1 / 0"), EvalError)
    assert isinstance(ev("0 || 1 / 0"), EvalError)
    assert isinstance(ev("1 / 0 && 0"), EvalError)  # an error on the left is not false


def test_errors_propagate_and_the_first_one_wins():
    result = ev("1 / 0 + sqrt(-1)")
    assert "division by zero" in result.message
    result = ev("2 * (3 + sqrt(-1)) - 1")
    assert "sqrt(-1)" in result.message


def test_an_error_knows_where_it_arose():
    text = "1 + 2 * (3 / 0)"
    result = ev(text)
    assert isinstance(result, EvalError)
    assert text[result.start : result.end] == "(3 / 0)"
    result = ev("abs(1) + log(0)")
    assert "abs(1) + log(0)"[result.start : result.end] == "log(0)"


def test_a_syntax_error_is_a_value_too():
    result = ev("1 +")
    assert isinstance(result, EvalError)
    assert result.start == 3


# --------------------------------------------------------------------------- functions


@pytest.mark.parametrize(
    ("func", "arg", "expected"),
    [
        ("abs", -3, 3.0), ("abs", -2.5, 2.5), ("acos", 1, 0.0), ("acos", -1, math.pi),
        ("asin", 1, math.pi / 2), ("atan", 1, math.pi / 4), ("cos", 0, 1.0),
        ("cosh", 0, 1.0), ("exp", 1, math.e), ("floor", -1.5, -2.0), ("floor", 3, 3.0),
        ("log", 1, 0.0), ("log", math.e, 1.0), ("log10", 1000, 3.0), ("sin", 0, 0.0),
        ("sinh", 0, 0.0), ("sqrt", 16, 4.0), ("sqrt", 2.25, 1.5), ("tan", 0, 0.0),
        ("tanh", 0, 0.0), ("double", 3, 3.0),
        ("int", 7.9, 7), ("int", -7.9, -7), ("int", 5, 5),
        ("round", 2.5, 3), ("round", -2.5, -3), ("round", 2.4999, 2), ("round", 1.5, 2),
        ("round", 0.49999999999999994, 0), ("round", -0.5, -1), ("round", 4, 4),
        ("sgn", -3.2, -1), ("sgn", 0, 0), ("sgn", 0.0, 0), ("sgn", 7, 1),
    ],
)  # fmt: skip
def test_functions(func, arg, expected):
    result = ev(f"{func}({arg!r})")
    assert type(result) is type(expected), (func, arg, result)
    assert result == pytest.approx(expected, abs=1e-15)


def test_the_nineteen_functions_are_all_covered():
    from parasol_core.model.tree import FUNCTIONS

    assert len(FUNCTIONS) == 19
    for name in FUNCTIONS:
        assert not isinstance(ev(f"{name}(0.5)"), EvalError), name


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("sqrt(-1)", "sqrt(-1)"), ("log(0)", "log(0)"), ("log(-2.5)", "log(-2.5)"),
        ("log10(0)", "log10(0)"), ("acos(2)", "acos(2)"), ("asin(-1.5)", "asin(-1.5)"),
        ("exp(1000)", "exp(1000)"), ("cosh(1000)", "cosh(1000)"), ("sinh(-1000)", "sinh(-1000)"),
        ("int(1e300)", "int(1e+300)"), ("round(-1e300)", "round(-1e+300)"),
    ],
)  # fmt: skip
def test_function_domain_and_range_errors_name_the_function_and_argument(text, named):
    result = ev(text)
    assert isinstance(result, EvalError), text
    assert named in result.message


# --------------------------------------------------------------------------- compiling


def test_a_compiled_expression_reads_its_environment_each_call():
    fn = compile_expression(parse_expression("(4*pt(1).ila + pt(1).goto) / pc(1).speed"))
    assert fn({"pt(1).ila": 1, "pt(1).goto": 2, "pc(1).speed": 2}) == 3
    assert fn({"pt(1).ila": 1.0, "pt(1).goto": 2, "pc(1).speed": 4}) == 1.5
    missing = fn({"pt(1).ila": 1})
    assert isinstance(missing, EvalError) and "pt(1).goto" in missing.message


def test_a_resolver_maps_references_to_keys_and_reports_unknown_ones():
    from parasol_core.expr.refs import UnresolvedReference

    def resolver(ref):
        if ref.prefix == "pt":
            return "x"
        raise UnresolvedReference(f"'{ref}': nothing there")

    fn = compile_expression(parse_expression("pt(1).iga * 2 + 0 * pc(1).size"), resolver)
    result = fn({"x": 4})
    assert isinstance(result, EvalError) and result.message == "'pc(1).size': nothing there"
    assert compile_expression(parse_expression("pt(9).iga * 2"), resolver)({"x": 4}) == 8


def test_compile_never_raises_for_an_evaluation_problem():
    # errors are values: compiling and calling with odd environments does not raise
    fn = compile_expression(parse_expression("pt(1).iga / pt(1).ila"))
    assert isinstance(fn({"pt(1).iga": 1.0, "pt(1).ila": 0}), EvalError)
    err = EvalError("boom")
    assert fn({"pt(1).iga": err, "pt(1).ila": 1}).message == "boom"


# --------------------------------------------------------------------------- properties

ints = st.integers(min_value=INT_MIN, max_value=INT_MAX)
finite = st.floats(allow_nan=False, allow_infinity=False)


@given(ints, ints.filter(lambda b: b != 0))
def test_integer_division_and_remainder_follow_c(a, b):
    env = {"ar.bytes": a, "ar.procs": b}
    q = ev("ar.bytes / ar.procs", env)
    r = ev("ar.bytes % ar.procs", env)
    if a == INT_MIN and b == -1:
        assert isinstance(q, EvalError) and r == 0
        return
    assert q == c_div(a, b) and type(q) is int
    assert r == c_mod(a, b)
    assert q * b + r == a
    assert abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))


@given(ints, ints)
def test_integer_sums_are_exact_or_overflow_errors(a, b):
    env = {"ar.bytes": a, "ar.procs": b}
    for op, exact in (("+", a + b), ("-", a - b), ("*", a * b)):
        result = ev(f"ar.bytes {op} ar.procs", env)
        if INT_MIN <= exact <= INT_MAX:
            assert result == exact
        else:
            assert isinstance(result, EvalError) and "overflow" in result.message


@given(finite, finite.filter(lambda y: y != 0))
def test_float_remainder_is_fmod(x, y):
    result = ev("ar.bytes % ar.procs", {"ar.bytes": x, "ar.procs": y})
    assert result == math.fmod(x, y) or (result == 0 and math.fmod(x, y) == 0)


@given(st.integers(-(2**20), 2**20), st.integers(0, 70))
def test_shifts_match_64_bit_arithmetic(a, n):
    env = {"ar.bytes": a, "ar.procs": n}
    left = ev("ar.bytes << ar.procs", env)
    exact = a << n
    if INT_MIN <= exact <= INT_MAX:
        assert left == exact
    else:
        assert isinstance(left, EvalError)
    assert ev("ar.bytes >> ar.procs", env) == a >> n


@given(finite, finite)
def test_float_arithmetic_is_finite_or_an_error(x, y):
    env = {"ar.bytes": x, "ar.procs": y}
    for op in "+-*/":
        result = ev(f"ar.bytes {op} ar.procs", env)
        assert isinstance(result, EvalError) or math.isfinite(result)
