"""The one JSON writer of every answer the project gives: the command line's ``--json``
output and the estimator's responses.

JSON has no NaN and no infinity. Python's ``json.dumps`` writes them as ``NaN`` and
``Infinity``, which no JSON reader takes, and orjson (the estimator's encoder) as
``null``, which a client reads as "no value". Neither is called directly on an answer:
:func:`dumps` (text, for the command line) and :func:`dumps_bytes` (orjson with numpy
arrays, for the estimator) refuse a number that is not finite with
:class:`NonFiniteError`, which names where it is (``messages[3].end``). An answer that
would hold one is a bug or a value past what a double holds: the computations check
their results before they answer (a phase's ends, a transfer time), and this is the
guard that nothing slips past them.

The check costs nothing on the common path: ``json.dumps`` refuses by itself
(``allow_nan=False``), and orjson's output is searched for ``null`` (a fast byte search)
before the data is walked to tell a true null from a number that became one.
"""

from __future__ import annotations

import json
import math
from typing import Any


class NonFiniteError(ValueError):
    """An answer holding a number that is NaN or infinite; ``path`` is where
    (``result.makespan``, ``messages[3].end``) and ``value`` the number."""

    def __init__(self, path: str, value: float) -> None:
        super().__init__(f"the answer would hold {value!r} at {path or 'its top'}; JSON "
                         "has no such number (it is NaN or infinite: a result past what a "
                         "double holds)")  # fmt: skip
        self.path = path
        self.value = value


def find_non_finite(data: Any, path: str = "") -> tuple[str, float] | None:
    """``(path, value)`` of the first number in ``data`` (dicts, lists, tuples, floats,
    numpy scalars and arrays) that is NaN or infinite, or None."""
    stack: list[tuple[str, Any]] = [(path, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return where, value
        elif isinstance(value, dict):
            items = list(value.items())
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(items))
        elif isinstance(value, (list, tuple)):
            # a long list of plain floats: one pass in C, then the items only if needed
            if value and all(type(v) is float for v in value[:8]):
                try:
                    if all(map(math.isfinite, value)):
                        continue
                except TypeError:
                    pass
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        else:
            found = _numpy_non_finite(value, where)
            if found is not None:
                return found
    return None


def _numpy_non_finite(value: Any, where: str) -> tuple[str, float] | None:
    np = _numpy()
    if np is None:
        return None
    if isinstance(value, np.floating):
        return None if np.isfinite(value) else (where, float(value))
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and value.size:
        bad = ~np.isfinite(value)
        if bad.any():
            at = np.unravel_index(int(np.argmax(bad)), value.shape)
            return f"{where}[{']['.join(map(str, at))}]", float(value[at].real)
    return None


def _numpy() -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    return np


def check_finite(data: Any, path: str = "") -> None:
    """Raise :class:`NonFiniteError` if ``data`` holds a NaN or an infinity."""
    found = find_non_finite(data, path)
    if found is not None:
        raise NonFiniteError(*found)


def dumps(data: Any, indent: int | None = None) -> str:
    """``json.dumps(data, indent=indent)`` that refuses NaN and infinities
    (:class:`NonFiniteError` naming where), for the command line's JSON output."""
    try:
        return json.dumps(data, indent=indent, allow_nan=False)
    except ValueError:
        check_finite(data)
        raise


def number(value: float) -> str:
    """One JSON number's text (as ``json.dumps`` writes a float); NonFiniteError for
    NaN and infinities."""
    if not math.isfinite(value):
        raise NonFiniteError("", value)
    return json.dumps(value)


def dumps_bytes(data: Any) -> bytes:
    """``orjson.dumps`` with numpy arrays, refusing what it would write as ``null`` from a
    NaN or an infinity (:class:`NonFiniteError` naming where), for the estimator."""
    import orjson

    out = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)
    if b"null" in out:  # a None, a NaN or an infinity: only the data tells which
        check_finite(data)
    return out
