"""SimGrid's units (``xbt_parse_get_time``, ``xbt_parse_get_bandwidth`` and
``xbt_parse_get_speed`` in SimGrid 3.32's ``src/xbt/xbt_parse_units.cpp``).

A value is a decimal number followed at once by a unit: ``1us``, ``10GBps``,
``1.25e8``. The number is ASCII (:mod:`parasol_core.base.numeric`: ``١٢٣Bps`` is not
123 bytes a second), and neither it nor its product with the unit may overflow or
underflow a double (``1e400``, ``1e-400s``, ``1e-300ps``): SimGrid would read such a
value as infinite or 0, a link with no latency or no bandwidth. Without a unit a time is in seconds and a bandwidth in bytes per second
(SimGrid warns and accepts). Bandwidths: ``Bps`` (bytes) and ``bps`` (bits, 1/8 byte),
each with the decimal prefixes ``k M G T P E Z Y`` (x1000) or the binary ones
``Ki Mi Gi Ti Pi Ei Zi Yi`` (x1024). Times: ``w d h m s ms us ns ps``. Host speeds:
``f`` or ``flops`` with decimal prefixes (``kf``, ``kiloflops`` ...).
"""

from __future__ import annotations

import re

from parasol_core.base.numeric import (
    ValueRangeError,
    finite_product,
    read_float,
    why_not_number,
)

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _scale(unit: str, value: float, base: int, abbrev: bool) -> dict[str, float]:
    """A unit and its prefixed forms, as SimGrid's ``unit_scale`` builds them."""
    if base == 2:
        mult = 1024.0
        prefixes = (["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"] if abbrev else
                    ["kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi"])  # fmt: skip
    else:
        mult = 1000.0
        prefixes = (["k", "M", "G", "T", "P", "E", "Z", "Y"] if abbrev else
                    ["kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"])  # fmt: skip
    out = {unit: value}
    for prefix in prefixes:
        value *= mult
        out[prefix + unit] = value
    return out


TIME_UNITS: dict[str, float] = {
    "w": 7 * 24 * 3600.0, "d": 24 * 3600.0, "h": 3600.0, "m": 60.0, "s": 1.0,
    "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12,
}  # fmt: skip
BANDWIDTH_UNITS: dict[str, float] = {
    **_scale("bps", 0.125, 2, True), **_scale("bps", 0.125, 10, True),
    **_scale("Bps", 1.0, 2, True), **_scale("Bps", 1.0, 10, True),
}  # fmt: skip
SPEED_UNITS: dict[str, float] = {**_scale("f", 1.0, 10, True), **_scale("flops", 1.0, 10, False)}


class UnitError(ValueError):
    """A value SimGrid would not read; the message says why."""


def _value(text: str, units: dict[str, float], default: str, what: str) -> float:
    s = text.strip(" \t\r\n")
    m = _NUMBER.match(s)
    if m is None:
        raise UnitError(f"{what} {text!r} is not a number with a unit{why_not_number(s[:1])}")
    rest = s[m.end() :] or default
    factor = units.get(rest)
    if factor is None:
        known = ", ".join(sorted(units, key=lambda u: (units[u], u))[:12])
        why = why_not_number(rest[:1])
        raise UnitError(f"{what} {text!r} has an unknown unit {rest!r} (known: {known}, ...){why}")
    try:
        number = read_float(m.group())
        value = number * factor
        if factor != 1.0:
            finite_product(number, value, f"{m.group()} {rest} in {default}")
    except ValueRangeError as e:
        raise UnitError(f"{what} {text!r}: {e}") from None
    return value


def parse_time(text: str, what: str = "a time") -> float:
    """Seconds; SimGrid's time units (``1us``, ``0.5ms``, ``2``)."""
    return _value(text, TIME_UNITS, "s", what)


def parse_bandwidth(text: str, what: str = "a bandwidth") -> float:
    """Bytes per second; SimGrid's bandwidth units (``10GBps``, ``1Gbps``, ``125MiBps``)."""
    return _value(text, BANDWIDTH_UNITS, "Bps", what)


def parse_speed(text: str, what: str = "a speed") -> float:
    """Flops; SimGrid's speed units (``1Gf``, ``98.095Mf``, ``1gigaflops``)."""
    return _value(text, SPEED_UNITS, "f", what)


def parse_speeds(text: str, what: str = "a speed") -> list[float]:
    """A host's speeds, one per power state, separated by commas."""
    return [parse_speed(part, what) for part in text.split(",")]


def flops_text(speed: float) -> str:
    """A speed in flops a second as SimGrid writes one: ``2Gf``, ``500Mf``, ``1.5kf``."""
    for prefix, factor in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if speed >= factor:
            return f"{speed / factor:g}{prefix}f"
    return f"{speed:g}f"
