"""Times a test may compare: against a baseline measured in the same test, never
against a constant (issue 33, item 8: a busy machine slows both alike).

A guard against work that grows faster than its input (a quadratic scan, a hang) times
the operation and a baseline of known, linear cost on the same machine at the same
moment, and asserts a generous ratio: the failures it is for are tens to thousands of
times slower, a busy machine is not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """``fn(*args)`` (or the exception it raised) and the seconds it took."""
    start = time.perf_counter()
    try:
        return fn(*args), time.perf_counter() - start
    except Exception as e:
        return e, time.perf_counter() - start


def best_of(fn: Callable[..., Any], *args: Any, repeat: int = 3) -> float:
    """The least of ``repeat`` timings of ``fn(*args)`` (a baseline: the least is the
    one a busy machine disturbed least)."""
    return min(timed(fn, *args)[1] for _ in range(repeat))


def one_pass(data: str | bytes) -> None:
    """Read every character of ``data`` once: what a linear reader cannot avoid
    costing (a baseline for the refusal of a large input)."""
    if isinstance(data, str):
        data.encode("utf-8")
    else:
        data.decode("utf-8", "replace")


def assert_within(seconds: float, baseline: float, factor: float, what: str) -> None:
    """``seconds`` at most ``factor`` times ``baseline``."""
    assert seconds <= factor * baseline, (
        f"{what}: {seconds:.3f} s, over {factor:g} x the baseline of {baseline:.4f} s "
        "measured in the same test"
    )


def peak_bytes(fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """``fn(*args)`` (or the exception it raised) and the most memory Python and numpy
    held for it at once (tracemalloc): the evidence, not a time, that work refused "at
    once" was refused before it was built."""
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            result = fn(*args)
        except Exception as e:
            result = e
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
