"""Counts in words: "1 variant", "2 variants", "1,000 ranks".

Every message that says how many of something there are (the command line's, the
estimator's and the windows') words the count here, so that one of a thing is never
said as "1 variants".
"""

from __future__ import annotations

import math

# nouns whose plural is not the noun + "s"
_IRREGULAR = {
    "axis": "axes",
    "entry": "entries",
    "process": "processes",
    "switch": "switches",
    "topology": "topologies",
}


def plural(noun: str, n: int | float) -> str:
    """``noun`` as it goes with the count ``n``: singular for exactly one."""
    if n == 1:
        return noun
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    head, _, last = noun.rpartition(" ")  # "problem size" -> "problem sizes"
    word = _IRREGULAR.get(last, last + "s")
    return f"{head} {word}" if head else word


def counted(n: int | float, noun: str, grouped: bool = True, spec: str | None = None) -> str:
    """``n`` and its noun: ``counted(1, "variant")`` is "1 variant",
    ``counted(1200, "rank")`` "1,200 ranks" (``grouped=False``: "1200 ranks");
    ``spec``: the number's format instead (``counted(1.0, "byte", spec="g")``, "1 byte";
    the noun agrees with the number as written)."""
    if spec is not None:
        number = format(n, spec)
        try:
            shown = float(number.replace(",", ""))
        except ValueError:
            shown = n
        return f"{number} {plural(noun, shown)}"
    if isinstance(n, (int, float)) and abs(n) >= LARGEST_IN_FULL and (
            isinstance(n, int) or math.isfinite(n)):  # fmt: skip
        return f"about {_magnitude(n)} {plural(noun, n)}"
    number = f"{n:,}" if grouped else f"{n}"
    return f"{number} {plural(noun, n)}"


LARGEST_IN_FULL = 10**21
"""Counts from here on are said by their magnitude ("about 9e+293 values"): a sweep's
range of 1e-300 steps said its count in 294 grouped digits, and an integer of
thousands of digits cannot even be printed. Below it every digit is said, so that a
count read from a file (a topology of 4,611,686,018,427,387,904 processors) is said as
written and can be found there."""


def _magnitude(n: int | float) -> str:
    try:
        return f"{float(n):.3g}"
    except OverflowError:  # an integer past the largest float: its power of ten
        return f"{'-' if n < 0 else ''}10^{int(math.log10(abs(n)))}"


QUOTED_MOST = 60
"""The most characters of a name or an expression a message quotes."""


def quoted(text: object, most: int = QUOTED_MOST) -> str:
    """``text`` in single quotes as a message quotes what was typed or read: whole when
    it is at most ``most`` characters, else its start and how long it is (a name of
    5,000 characters made every message that named it 5,000 characters long, twice)."""
    s = str(text)
    if len(s) <= most:
        return f"'{s}'"
    return f"'{s[:most]}...' ({counted(len(s), 'character')})"


def said(value: object, most: int = QUOTED_MOST) -> str:
    """``value`` as a message shows what was given (its ``repr``: a text quoted, a number
    or a list as written), whole when short, else its start and how long it is."""
    s = repr(value)
    if len(s) <= most:
        return s
    if isinstance(value, str):  # as quoted() cuts a text: its quotes kept, its length
        head = repr(value[:most])
        return f"{head[:-1]}...{head[-1]} ({counted(len(value), 'character')})"
    return f"{s[:most]}... ({counted(len(s), 'character')})"
