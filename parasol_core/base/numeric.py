"""Reading numbers as the file format writes them, and the number representations the
editor's controls use (kept here so they are tested without a display: mantissa x
10^exponent, and logarithmic scales).

**Every number the project reads is ASCII**, as the grammar (``grammar/machine.lark``)
says: a model file, a ``# piui:`` annotation, a SimGrid unit, a command-line argument, an
estimator parameter given as text, a measurement log. Python's own ``int()`` and
``float()`` read more than that: any Unicode digit (``'²'``, ``'٢'``, ``'３'``), digit
separators (``'1_000'``), surrounding Unicode blanks, and ``float()`` ``'inf'`` and
``'nan'``; ``str.isdigit()`` is true for ``'²'``, which ``int()`` then refuses. So no
module converts text to a number with those: it calls :func:`read_float` or
:func:`read_int` here (or :func:`is_whole` where it only asks), which take exactly the
ASCII forms and say, naming the character, why anything else is not a number.
:func:`float_text` (the same as :func:`read_float`) also refuses what a double cannot hold:
overflow and underflow.
"""

from __future__ import annotations

import math
import re
import unicodedata

from parasol_core.base.words import counted

SMALLEST_NORMAL = 2.2250738585072014e-308
"""The smallest positive double held to full precision; below it a number loses digits
(a subnormal) and then becomes 0.0."""
LARGEST = 1.7976931348623157e308
"""The largest finite double."""

#: the forms read: decimal digits; an optional sign, digits with an optional point, an
#: optional exponent (``1``, ``-2.5``, ``.5``, ``3.``, ``1e-9``); hexadecimal ``0x1F``
_WHOLE = re.compile(r"[0-9]+")
_SIGNED_WHOLE = re.compile(r"[-+]?[0-9]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[-+]?(?:inf|infinity|nan)", re.IGNORECASE)
_BLANKS = " \t\r\n"
#: the longest text a whole number is read from (2**63 has 19 digits; far past any limit,
#: short of the cost of converting a million digits)
MAX_WHOLE_DIGITS = 100


class ValueRangeError(ValueError):
    """A value the file format cannot hold, or text that is not a number; the message
    says why."""


class NotANumberError(ValueRangeError):
    """Text that is not a number in the forms read (ASCII); ``reason`` is why, as the
    message adds it (``" ('٢' (U+0662 ...) is not an ASCII digit ...)"``), or ""."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


def shown(text: str) -> str:
    """``text`` for a message: blanks trimmed, at most 40 characters."""
    text = text.strip(_BLANKS)
    return text if len(text) <= 40 else text[:40] + "..."


def why_not_number(text: str) -> str:
    """Why ``text`` (not of an ASCII form) is not a number, in parentheses with a
    leading blank, or "" when nothing more than "not a number" can be said: a character
    that is not ASCII (a Unicode digit, a blank), a ``_`` separator."""
    for c in text:
        if c.isascii():
            continue
        name = unicodedata.name(c, "")
        label = f"{c!r} (U+{ord(c):04X}{' ' + name if name else ''})"
        if c.isdigit() or c.isnumeric() or unicodedata.numeric(c, None) is not None:
            return f" ({label} is not an ASCII digit: numbers are written with 0-9)"
        if c.isspace():
            return f" ({label} is not an ASCII blank)"
        return f" ({label} is not part of a number, which is written in ASCII)"
    if "_" in text:
        return " ('_' is not part of a number: write the digits without separators)"
    return ""


def why_not_digits(text: str) -> str:
    """:func:`why_not_number`'s words for text that holds a digit other than 0-9
    (``'١٢'``, ``'²'``), or "": what a refusal of a word that may also be a name (a
    processor's) adds, without calling every name with an accent a bad number."""
    if any(not c.isascii() and unicodedata.numeric(c, None) is not None for c in text):
        return why_not_number(text)
    return ""


def is_whole(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII decimal digits (what ``str.isdigit()``
    is taken to mean, but ``'²'.isdigit()`` is true and ``int('²')`` fails)."""
    return _WHOLE.fullmatch(text) is not None


def is_number(text: str) -> bool:
    """Whether ``text`` is a decimal number in the ASCII form :func:`read_float` reads
    (overflow and underflow not checked)."""
    return _DECIMAL.fullmatch(text.strip(_BLANKS)) is not None


def read_int(text: str, what: str = "a whole number", *, sign: bool = False,
             hex: bool = False) -> int:  # fmt: skip
    """The whole number ``text`` writes in ASCII decimal digits (``sign``: with an
    optional ``-`` or ``+``; ``hex``: or ``0x`` and hexadecimal digits), ASCII blanks
    around it allowed. Anything else (``'٢'``, ``'1_000'``, ``'1.5'``, ``'abc'``,
    ``''``) raises :class:`ValueRangeError` saying that it is not ``what`` and why."""
    s = text.strip(_BLANKS)
    if hex and _HEX.fullmatch(s):
        if len(s) > MAX_WHOLE_DIGITS:
            raise ValueRangeError(f"'{shown(s)}' is too long for {what}")
        return int(s[2:], 16)
    if (_SIGNED_WHOLE if sign else _WHOLE).fullmatch(s):
        if len(s) > MAX_WHOLE_DIGITS:
            raise ValueRangeError(
                f"'{shown(s)}' is too long for {what} ({counted(len(s), 'digit')})"
            )
        return int(s)
    if not s:
        raise NotANumberError(f"empty: {what} is needed")
    why = why_not_number(s)
    raise NotANumberError(f"'{shown(s)}' is not {what}{why}", why)


def read_float(text: str, what: str = "") -> float:
    """The float a decimal number's ASCII text means (``1``, ``-2.5``, ``.5``, ``1e-9``;
    ASCII blanks around it allowed), refusing what a double cannot hold: overflow
    (``1e400``) and underflow, a nonzero number that would be stored as 0.0
    (``1e-400``, which in a timing means "not detected") or as a subnormal that has
    lost digits (``1.2345678e-318`` would be ``1.234566e-318``). A subnormal that gives
    back the digits typed (``5e-324``, ``4.9e-324``, ``1e-320``) is kept: the writer
    writes such forms, and a saved file must load. Text in any other form (Unicode
    digits, ``1_000``, ``inf``, ``nan``) is not a number. ValueRangeError names the text
    and why; ``what`` is added to the message (``": a size is needed"``)."""
    s = text.strip(_BLANKS)
    if _DECIMAL.fullmatch(s) is None:
        if _NOT_FINITE.fullmatch(s):
            raise ValueRangeError(f"'{shown(s)}' is not a finite number{what}")
        why = why_not_number(s)
        raise NotANumberError(f"'{shown(text)}' is not a number{why}{what}", why)
    value = float(s)
    if math.isinf(value):
        raise ValueRangeError(f"'{shown(s)}' is too large to represent (the largest "
                              f"number is about 1.8e308){what}")  # fmt: skip
    if abs(value) < SMALLEST_NORMAL and _underflows(s, value):
        stored = "as 0.0" if value == 0 else f"with lost digits, as {value!r}"
        raise ValueRangeError(f"'{shown(s)}' is too small to represent: it would be "
                              f"stored {stored} (the smallest number held to full "
                              f"precision is about 2.2e-308){what}")  # fmt: skip
    return value


float_text = read_float
"""The name the loader, the editor and the estimator have long used for :func:`read_float`."""


def _underflows(text: str, value: float) -> bool:
    """Whether ``text`` (whose float is 0.0 or subnormal) means a number the float does
    not hold to double precision."""
    mantissa = text.strip().lower().split("e")[0]
    if not any(c in "123456789" for c in mantissa):
        return False  # a zero, written as 0, 0.0, 0e-999
    if value == 0:
        return True
    # A subnormal is kept when, rounded to as many digits as were typed, it gives back
    # the number typed: 5e-324, 4.9e-324, 1e-320 and the writer's shortest forms read,
    # 1.2345678e-318 (stored as 1.234566e-318) does not: it lost digits.
    from decimal import Decimal, InvalidOperation, localcontext

    digits = mantissa.lstrip("+-").replace(".", "").lstrip("0")
    try:
        typed = Decimal(text.strip())
        with localcontext() as ctx:
            ctx.prec = min(max(len(digits), 1), 800)
            return +Decimal(value) != typed
    except InvalidOperation:  # pragma: no cover - float() read it
        return True


def argument_float(text: str) -> float:
    """An ``argparse`` type: a number in ASCII (:func:`read_float`); the usage error
    says why anything else is not one (``'٣'``, ``'1_000'``, ``'1e-400'``, which would
    be 0). ``inf``, ``nan`` and a number past a double (``1e400``) are given as the
    infinity or NaN they are, for the command to refuse in its own words ("--bytes must
    be a finite number"), as it always has."""
    import argparse

    s = text.strip(_BLANKS)
    if _NOT_FINITE.fullmatch(s):
        return float(s)
    try:
        return read_float(text)
    except NotANumberError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    except ValueRangeError as e:
        if math.isinf(float(s)):
            return float(s)
        raise argparse.ArgumentTypeError(str(e)) from None


def argument_int(text: str) -> int:
    """An ``argparse`` type: a whole number in ASCII digits, with an optional sign
    (:func:`read_int`); the usage error says why anything else is not one."""
    import argparse

    try:
        return read_int(text, sign=True)
    except ValueRangeError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def finite_product(before: float | None, after: float | None, what: str) -> None:
    """Refuse a product that overflowed or underflowed: ``after`` (a value scaled from
    ``before``) infinite, or 0.0 or subnormal where ``before`` was not. ValueRangeError
    naming ``what``."""
    if before is None or after is None:
        return
    if not math.isfinite(after):
        raise ValueRangeError(f"{what} gives a number too large to represent")
    if before != 0 and abs(after) < SMALLEST_NORMAL:
        raise ValueRangeError(f"{what} gives a number too small to represent ({after!r}; "
                              "the smallest number held to full precision is about "
                              "2.2e-308)")  # fmt: skip


def split(value: float) -> tuple[float, int]:
    """``value`` as (mantissa in [1, 10), exponent); 0 gives (0.0, 0)."""
    if value == 0 or not math.isfinite(value):
        return 0.0, 0
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10.0**exponent
    # log10 can land one off at exact powers of ten
    if abs(mantissa) >= 10:
        mantissa /= 10
        exponent += 1
    elif abs(mantissa) < 1:
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def join(mantissa: float, exponent: int) -> float:
    """mantissa x 10^exponent, rounded to the digits a mantissa slider can set so that
    a slider value reads back as a short number (2.5e-07, not 2.4999999999999998e-07)."""
    return float(f"{mantissa:.6g}e{exponent}")


def log_position(value: float, low: float, high: float, steps: int) -> int:
    """Slider position (0..steps) of ``value`` on a log scale from low to high."""
    value = min(max(value, low), high)
    span = math.log10(high) - math.log10(low)
    return round((math.log10(value) - math.log10(low)) / span * steps)


def log_value(position: int, low: float, high: float, steps: int) -> float:
    span = math.log10(high) - math.log10(low)
    return 10 ** (math.log10(low) + span * position / steps)


def cache_size_shown(size: int | None) -> int:
    """The report's logarithmic scale cannot show 0: a size of 0 is shown as 1."""
    return 1 if not size or size < 1 else size


def _parse_finite(text: str, what: str) -> float:
    """A typed number, refusing overflow and underflow (:func:`read_float`, the one
    check every entry point shares)."""
    try:
        return read_float(text, what)
    except ValueRangeError as e:
        raise ValueError(str(e)) from None


def parse_number(text: str, what: str) -> float:
    """A finite number typed by a user (``what`` it is, for the message); ValueError
    with a message for text that is not one, or too large or small for a double."""
    text = text.strip(_BLANKS)
    if not text:
        raise ValueError(f"empty: {what} is needed")
    return _parse_finite(text, f": {what} is needed")


def parse_positive(text: str) -> float:
    """A positive finite number typed by a user; ValueError with a message otherwise."""
    text = text.strip(_BLANKS)
    value = _parse_finite(text, "")
    if value <= 0:
        raise ValueError(f"{text} is not a positive number")
    return value


def parse_whole(text: str, low: int = 0, high: int = 2**63 - 1, what: str = "a whole number",
                ) -> int:  # fmt: skip
    """A whole number typed by a user, as the user meant it: ``4096``, ``1e3`` (1000),
    ``0x10``. Refuses with the reason: ``1.5`` is not whole, ``-3`` is below ``low``,
    ``abc`` is not a number. ValueError with a message."""
    text = text.strip(_BLANKS)
    if not text:
        raise ValueError(f"empty: {what} is needed")
    if _HEX.fullmatch(text) or _WHOLE.fullmatch(text) or _SIGNED_WHOLE.fullmatch(text):
        try:
            value = read_int(text, what, sign=True, hex=True)
        except ValueRangeError as e:
            raise ValueError(str(e)) from None
    else:
        number = _parse_finite(text, f": {what} is needed")
        if number != int(number):
            raise ValueError(f"'{text}' is not {what}") from None
        value = int(number)
    if value < low:
        if low == 1:
            raise ValueError(f"'{text}' is not a positive whole number ({what} is needed)")
        raise ValueError(f"'{text}' is too small: {what} of at least {low} is needed")
    if value > high:
        raise ValueError(f"'{text}' is too large: {what} of at most {high} is needed")
    return value


def parse_sd(text: str) -> float | None:
    """A standard deviation as typed: empty for none, else a finite number >= 0."""
    text = text.strip(_BLANKS)
    if not text:
        return None
    value = _parse_finite(
        text, ": a standard deviation is a number of seconds, 0 or more (or nothing)"
    )
    if value < 0:
        raise ValueError(f"{text} is negative: a standard deviation is 0 or more")
    return value


class OptionNumber:
    """An option's number, for argparse's ``type=``: a whole number (``kind`` int) or a
    finite float, from ``low`` to ``high`` (either may be None: no bound; with
    ``above``, more than ``low`` rather than at least). NaN, infinities, overflow and
    anything out of range are refused with a message naming the range: every numeric
    option of the commands is one of these (``tests/test_signals.py`` checks)."""

    def __init__(self, kind: type, low: float | None = None, high: float | None = None,
                 above: bool = False) -> None:  # fmt: skip
        if kind not in (int, float):
            raise TypeError(f"an option's number is an int or a float, not {kind!r}")
        self.kind, self.low, self.high, self.above = kind, low, high, above
        self.__name__ = "whole number" if kind is int else "number"  # argparse's messages

    def range_text(self) -> str:
        what = "a whole number" if self.kind is int else "a finite number"
        # a whole number's bound as a whole number: 2,147,483,647, not 2.14748e+09
        form = "{:,}" if self.kind is int else "{:g}"
        low = None if self.low is None else form.format(self.low)
        high = None if self.high is None else form.format(self.high)
        if low is not None and high is not None:
            return f"{what} {'above' if self.above else 'from'} {low} {'up ' if self.above else ''}to {high}"
        if low is not None:
            return f"{what} {'above' if self.above else 'of at least'} {low}"
        if high is not None:
            return f"{what} of at most {high}"
        return what

    def __call__(self, text: str) -> int | float:
        import argparse

        shown = text if len(text) <= 40 else text[:40] + "..."
        try:
            if self.kind is int:
                value: int | float = parse_whole(text, -(2**63), 2**63 - 1, "a whole number")
            else:
                value = _parse_finite(text.strip(), "")
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown!r}: expected {self.range_text()}") from None
        low_fails = self.low is not None and (value <= self.low if self.above else value < self.low)
        if low_fails or (self.high is not None and value > self.high):
            raise argparse.ArgumentTypeError(f"{shown!r}: expected {self.range_text()}")
        return value
