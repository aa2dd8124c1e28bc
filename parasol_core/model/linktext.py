"""The text of one link section, read back: the strict forms the fast path
(:mod:`parasol_core.syntax.fastscan`) takes, and the source record of a link it read,
built from the text when something first asks for ``link.src`` (a link store keeps only
where each link's section starts: :mod:`parasol_core.model.linkstore`).

Kept apart from the fast path so that the model (through its link store) reaches no
parser module."""

from __future__ import annotations

import re
from typing import Any

from parasol_core.base.source import BlockSource, ValueSource
from parasol_core.base.values import Timing

# Numbers of bounded length: no integer past 2**63 - 1 and no float that overflows, so
# none of the builder's range errors can arise here.
_NUM = r"-?[0-9]{1,20}(?:\.[0-9]{0,20})?(?:[eE][-+]?[0-9]{1,2})?"
_TIMING = rf"({_NUM})(?:[ \t]+({_NUM}))?"


# A link section as the fast path takes it: six lines, no comments. The timings are
# captured loosely and checked strictly (against _TIMING_RE) the first time each text is
# seen; most links of a large model share their latency and speed texts.
_LOOSE = r"[^\s#;]+(?:[ \t]+[^\s#;]+)?"


class _Pattern:
    """A regular expression compiled when first used: these are needed only by the
    pure-Python path and for the records of edited links, and compiling them all took a
    few milliseconds of every start-up."""

    __slots__ = ("_source", "_compiled")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return getattr(self._compiled, name)


# The same, with the positions a source record needs: (indent, value) of each line.
LINK_POS_RE = _Pattern(
    r"([ \t]*)begin[ \t]+link[ \t]*\n"
    r"([ \t]*)id[ \t]*=[ \t]*([0-9]+)[ \t]*\n"
    rf"([ \t]*)latency[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    rf"([ \t]*)speed[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    r"([ \t]*)connect[ \t]*=[ \t]*([0-9]+(?:[ \t]+[0-9]+)+)[ \t]*\n"
    r"([ \t]*)end[ \t]+link[ \t]*\n"
)
_TIMING_RE = _Pattern(_TIMING)
_TIMING_RE = _Pattern(_TIMING)
_LINK_FIELDS = (("id", 2, 3), ("latency", 4, 5), ("speed", 6, 7), ("connect", 8, 9))
_END_INDENT = 10


def _timing(text: str, cache: dict[str, Timing | None]) -> Timing | None:
    """The timing a value text reads as, or None when it is not of the strict form."""
    try:
        return cache[text]
    except KeyError:
        pass
    t = None
    if _TIMING_RE.fullmatch(text):
        parts = text.split()
        t = Timing(float(parts[0]), float(parts[1]) if len(parts) > 1 else None)
    cache[text] = t
    return t


def link_record(text: str, offset: int, line: int) -> BlockSource:
    """The source record (what the lark builder would have recorded) of the link whose
    section starts at ``offset`` of ``text``, on line ``line``: built when something
    first reads ``link.src`` of a link the fast path read (its store keeps only the
    offset and the line)."""
    m = LINK_POS_RE.match(text, offset)
    assert m is not None, "the text of a loaded link changed"
    src = BlockSource(
        m.start(), m.end(), line, len(m.group(1)) + 1, m.start(_END_INDENT),
        text.index("\n", offset) + 1, text,
    )  # fmt: skip
    values = src.values
    n = line
    cache: dict[str, Timing | None] = {}
    for attr, gi, gv in _LINK_FIELDS:
        n += 1
        ls = m.start(gi)
        count = None
        if attr == "connect":
            numbers = [int(x) for x in m.group(gv).split()]
            value: Any = tuple(numbers[1:])
            count = numbers[0]
        elif attr == "id":
            value = int(m.group(gv))
        else:
            value = _timing(m.group(gv), cache)
        vs = ValueSource(
            value, m.start(gv), m.end(gv), ls, text.index("\n", ls) + 1, n,
            len(m.group(gi)) + 1,
        )  # fmt: skip
        vs.count = count
        values[attr] = vs
    return src


def timing_spans(text: str, starts: Any) -> Any:
    """For links whose sections start at ``starts`` (offsets into ``text``, read by the
    fast path), the spans of their latency and speed texts: an (n, 4) array of latency
    start, end, speed start, end, with -1s for a section not of the fast path's form. By
    the C kernel (``parasol_link_timing_spans``) when the text is ASCII, else (and where
    the kernel is unsure) by :data:`LINK_POS_RE`."""
    import numpy as np

    starts = np.ascontiguousarray(starts, dtype=np.int64)
    out = np.full((starts.shape[0], 4), -1, dtype=np.int64)
    kernel = _spans_kernel()
    if kernel is not None and starts.shape[0] and text.isascii():
        import ctypes

        p64 = ctypes.POINTER(ctypes.c_int64)
        data = text.encode("ascii")
        kernel(data, len(data), starts.ctypes.data_as(p64), starts.shape[0],
               out.ctypes.data_as(p64))  # fmt: skip
    for i in np.flatnonzero(out[:, 0] < 0).tolist():
        m = LINK_POS_RE.match(text, int(starts[i]))
        if m is not None:
            out[i] = (m.start(5), m.end(5), m.start(7), m.end(7))
    return out


def _spans_kernel() -> Any:
    """The kernel's ``parasol_link_timing_spans``, or None (not built, or
    PARASOL_PURE_PYTHON=1)."""
    from parasol_core import native

    return native.function("_scan", "parasol_link_timing_spans",
                            (native.CHARS, native.I64, native.P64, native.I64,
                             native.P64), None)  # fmt: skip
