"""Counts in words, singular for one: "1 variant", "1,024 variants", "0 variants"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and ``noun``, singular for exactly one; the
    plural adds "s" unless ``plural`` says otherwise ("process", "processes")."""
    word = noun if n == 1 else (plural if plural is not None else noun + "s")
    return f"{n:,} {word}"
