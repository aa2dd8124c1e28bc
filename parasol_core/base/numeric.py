"""Number representations the editor's controls use, kept here so they are tested
without a display: mantissa x 10^exponent, and logarithmic scales."""

from __future__ import annotations

import math


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
    """A typed number, refusing overflow and underflow (:func:`limits.float_text`, the
    one check every entry point shares)."""
    from parasol_core.base.limits import ValueRangeError, float_text

    try:
        return float_text(text, what)
    except ValueRangeError as e:
        raise ValueError(str(e)) from None


def parse_number(text: str, what: str) -> float:
    """A finite number typed by a user (``what`` it is, for the message); ValueError
    with a message for text that is not one, or too large or small for a double."""
    text = text.strip()
    if not text:
        raise ValueError(f"empty: {what} is needed")
    return _parse_finite(text, f": {what} is needed")


def parse_positive(text: str) -> float:
    """A positive finite number typed by a user; ValueError with a message otherwise."""
    text = text.strip()
    value = _parse_finite(text, "")
    if value <= 0:
        raise ValueError(f"{text} is not a positive number")
    return value


def parse_whole(text: str, low: int = 0, high: int = 2**63 - 1, what: str = "a whole number",
                ) -> int:  # fmt: skip
    """A whole number typed by a user, as the user meant it: ``4096``, ``1e3`` (1000),
    ``0x10``. Refuses with the reason: ``1.5`` is not whole, ``-3`` is below ``low``,
    ``abc`` is not a number. ValueError with a message."""
    text = text.strip()
    if not text:
        raise ValueError(f"empty: {what} is needed")
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
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
    text = text.strip()
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
        low = None if self.low is None else f"{self.low:g}"
        high = None if self.high is None else f"{self.high:g}"
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
