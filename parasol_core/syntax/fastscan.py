"""The bulk scanners: link lists, `procid`/`mapping` tables and timings.

A large model is almost all link sections (`begin link` ... `end link`, six lines each)
and `p[i] = t` lines. The reader (:mod:`parasol_core.syntax.reader`) hands each
`begin linklist|procid|mapping|timings` section to :func:`scan_section`, which takes its
body whole when it is, line for line, items of the strictest form (decimal numbers of
bounded length, `\\n` line ends, nothing the grammar would read differently) followed by
its `end` line, and reads its items with one strict regular expression per item, or a C
kernel (``parasol_core/native/scan.c``) for link lists and `procid`/`mapping` tables
where it is built. A body with anything else in it is left to the reader, line by line:
when unsure, the scanners step aside. The builder (:mod:`parasol_core.syntax.builder`)
takes the items read here when it builds the section.

The items are the builder's own (``_Def`` records with their ``ValueSource``), except
links: a link list becomes columns (:class:`~parasol_core.model.linkstore.LinkColumns`), and a
link's source record is built from the text only when something reads ``link.src``
(:func:`link_record`), since an editor opening a million-link model reads a few of them.
``tests/test_fast_parser_differential.py`` holds the scanners to the reader and both to
the grammar run by lark, source records and diagnostics included, on samples and
generated and mutated files.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import numpy as np

from parasol_core.base import params
from parasol_core.base.source import ValueSource
from parasol_core.model import INT, TIMING, Timing
from parasol_core.model.linkstore import LinkColumns
from parasol_core.model.linktext import (
    _LOOSE,
    _TIMING,
    _Pattern,
    _timing,
)

# Numbers of bounded length: no integer past 2**63 - 1 and no float that overflows, so
# none of the builder's range errors can arise here.
_INT = r"[0-9]{1,18}"
# The end of a line: blanks, an ordinary comment (not a shape comment), one `\n`.
_EOL = r"[ \t]*(?:#(?![ \t]*piui:[ \t]*shape)[^\n\r\x0b;]*)?\n"


LINK_RE = _Pattern(
    r"[ \t]*begin[ \t]+link[ \t]*\n"
    r"[ \t]*id[ \t]*=[ \t]*([0-9]+)[ \t]*\n"
    rf"[ \t]*latency[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    rf"[ \t]*speed[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    r"[ \t]*connect[ \t]*=[ \t]*([0-9]+(?:[ \t]+[0-9]+)+)[ \t]*\n"
    r"[ \t]*end[ \t]+link[ \t]*\n"
)
LINK_LINES = 6

_TABLE_RES = {
    "procid": _Pattern(rf"([ \t]*)p[ \t]*\[[ \t]*({_INT})[ \t]*\][ \t]*=[ \t]*({_INT}){_EOL}"),
    "mapping": _Pattern(rf"([ \t]*)map[ \t]*\[[ \t]*({_INT})[ \t]*\][ \t]*=[ \t]*({_INT}){_EOL}"),
    "timings": _Pattern(
        # a name, but not `end`, which ends the section
        r"([ \t]*)(?!end\b)([A-Za-z_][A-Za-z0-9_]*)"
        rf"[ \t]*=[ \t]*({_TIMING}){_EOL}"
    ),
}
_BEGIN_RE = re.compile(rf"begin[ \t]+(linklist|procid|mapping|timings){_EOL}")
_END_RES = {k: re.compile(rf"end[ \t]+{k}{_EOL}") for k in ("linklist", *_TABLE_RES)}
_INDENT = " \t"
MIN_ITEMS = 8  # smaller bodies are left to the reader (the tests lower it to 1)


def _scan_links(text: str, start: int, end: int, line: int) -> LinkColumns | None:
    """The links of a link-list body, or None when it is not all strict link sections.
    ``line`` is the line number of ``start``. The C kernel reads the body when it is
    built and the text is ASCII; the regular expression otherwise, and whenever the
    kernel is unsure."""
    found = _scan_links_native(text, start, end)
    if found is not None:
        return _make_links(text, line, *found)
    return _scan_links_re(text, start, end, line)


def _scan_links_native(text: str, start: int, end: int) -> tuple | None:
    """(records, numbers) from the C kernel (see parasol_core/native/scan.c), or None
    when it is not built, the text is not ASCII or the body is not of its plainest form."""
    kernel = _kernel("links")
    data = None if kernel is None else _ascii(text)
    if data is None:
        return None

    # Room for as many links as the body could hold; np.empty, not zeros: the system
    # gives the pages as the kernel writes them, so what is resident is what the links
    # take (a 64^3 torus's body would hold 2.8 million sections of 50 characters; it
    # has 786,432 of 180, and the records of the rest were 180 MB, zeroed, twice over).
    cap = (end - start) // 50 + 1  # a link section takes more than 50 characters
    room = 4 * cap + 16
    for _ in range(2):
        rec = np.empty(8 * cap, dtype=np.int64)
        numbers = np.empty(room, dtype=np.int64)
        n = kernel(
            data, start, end, cap, _p64(rec), room, _p64(numbers),
        )  # fmt: skip
        if n != -2:
            break
        # room enough for any body: a link section takes more than 50 characters, and
        # its connect numbers are 2 characters apart
        cap = max(cap, (end - start) // 50 + 1)
        room = (end - start) // 2 + 1
    if n < 0:
        return None
    rec = rec[: 8 * n]
    # a copy of what was written: the model keeps the numbers, not the room around them
    return rec, numbers[: (int(rec[-2] + rec[-1]) if n else 0)].copy()


def _p64(array: np.ndarray) -> Any:
    """An ``int64_t *`` to ``array``'s data, for a kernel (the caller holds the array
    while the kernel runs). Not ``array.ctypes.data_as``: ``ctypes.cast`` from a ctypes
    object makes a reference cycle (bpo-12836), which a load, run with the collector off
    and its objects then frozen into the oldest generation, left there: 2 KB a load that
    no collection came to free."""
    import ctypes

    from parasol_core import native

    return ctypes.cast(array.ctypes.data, native.P64)


def _kernel(name: str) -> Any:
    """The kernel's scan function for ``"links"`` or ``"table"``, or None (not built, or
    PARASOL_PURE_PYTHON=1)."""
    from parasol_core import native

    i64, p64, chars = native.I64, native.P64, native.CHARS
    if name == "links":
        return native.function("_scan", "parasol_scan_links",
                                (chars, i64, i64, i64, p64, i64, p64))  # fmt: skip
    return native.function("_scan", "parasol_scan_table", (chars, i64, i64, chars, i64, p64))


def _scan_links_re(text: str, start: int, end: int, line: int) -> LinkColumns | None:
    """_scan_links by the regular expression LINK_RE: the definition of what the fast
    path takes as a link. It makes the kernel's records, for the one builder."""
    rec: list[int] = []
    numbers: list[int] = []
    pos = start
    for m in LINK_RE.finditer(text, start, end):
        offset = m.start()
        if offset != pos:
            return None
        pos = m.end()
        lid, conn = m.group(1, 4)
        words = conn.split()
        if len(lid) > 18 or max(map(len, words)) > 18:
            return None  # perhaps out of range (the builder's error): the reader's
        count, *connect = map(int, words)
        if count != len(connect):
            return None  # the builder records it; the validator reports it
        rec += (offset, int(lid), *m.span(2), *m.span(3), len(numbers), len(connect))
        numbers += connect
    if pos != end:
        return None
    return _make_links(text, line, rec, numbers)


def _make_links(text: str, line: int, rec: Any, numbers: Any) -> LinkColumns | None:
    """The links of a link list as columns, from its records (the kernel's, or the
    regular expression's): for each link, flat, the offset of its `begin` line, its id,
    the start and end of its latency text and of its speed text, and where its connect
    numbers start in ``numbers`` and how many there are. The first is at ``line``. Each
    distinct timing text is read once (the kernel gives equal texts the span of the
    first). None when a timing is not of the strict form."""
    import numpy as np

    r = np.asarray(rec, dtype=np.int64).reshape(-1, 8)
    n = r.shape[0]
    cache: dict[str, Timing | None] = {}
    columns = []
    for s_col in (2, 4):
        starts, first, inverse = np.unique(r[:, s_col], return_index=True, return_inverse=True)
        ends = r[first, s_col + 1]
        timings = [_timing(text[a:b], cache) for a, b in zip(starts.tolist(), ends.tolist())]
        if any(t is None for t in timings):
            return None
        means = np.array([t.mean for t in timings], dtype=np.float64)  # type: ignore[union-attr]
        sd = None
        if any(t.sd is not None for t in timings):  # type: ignore[union-attr]
            sds = [np.nan if t.sd is None else t.sd for t in timings]  # type: ignore[union-attr]
            sd = np.array(sds, dtype=np.float64)[inverse]
        columns.append((means[inverse], sd))
    numbers = np.asarray(numbers, dtype=np.int64)
    counts = r[:, 7]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if n and not np.array_equal(offsets[:-1], r[:, 6]):  # the records are in order
        numbers = np.concatenate([numbers[a : a + k] for a, k in zip(r[:, 6], counts)])
    (lat, lat_sd), (spd, spd_sd) = columns
    return LinkColumns(
        r[:, 1].copy(), lat, spd, offsets, numbers, lat_sd, spd_sd, r[:, 0].copy(),
        line + LINK_LINES * np.arange(n, dtype=np.int32), text,
    )  # fmt: skip


def _scan_table(kind: str, text: str, start: int, end: int, line: int) -> tuple | None:
    """(items, warnings) of a table body, or None when it is not all strict lines."""
    if kind == "timings":
        return _scan_timings(text, start, end, line)
    rec = _table_records_array(kind, text, start, end)
    if rec is None:
        rec = _table_records_re(kind, text, start, end)
        if rec is None:
            return None
        try:
            rec = np.asarray(rec, dtype=np.int64)
        except OverflowError:  # a number past 64 bits: a line each, as the reader does
            rec = np.asarray(rec, dtype=object)
    bulk = BulkTable(rec.reshape(-1, 6), end, line)
    return (bulk if rec.dtype == np.int64 else bulk.items()), []


class BulkTable:
    """The lines of a `procid` or `mapping` body read in bulk, as one record each
    (line start, indentation length, key, value start, value end, value; an (n, 6)
    int64 array); the builder makes the table's columns of them
    (:mod:`parasol_core.model.inttable`), or, when a number is written twice, the items of
    :meth:`items`."""

    __slots__ = ("rec", "end", "line")

    def __init__(self, rec: Any, end: int, line: int) -> None:
        self.rec, self.end, self.line = rec, end, line

    def __len__(self) -> int:
        return len(self.rec)

    def items(self) -> list:
        from parasol_core.syntax.builder import _Def

        items = []
        append = items.append
        line = self.line
        rec = self.rec.tolist()
        n = len(rec)
        for i, (ls, indent, key, vs, ve, value) in enumerate(rec):
            le = rec[i + 1][0] if i + 1 < n else self.end
            append(_Def(INT, key, value, ValueSource(value, vs, ve, ls, le, line, indent + 1)))
            line += 1
        return items

    def sources(self, keys: Any = None) -> Any:
        """The records as :class:`parasol_core.model.inttable.TableSources` (``keys``: the
        numbers' array to share, the table's)."""
        from parasol_core.model.inttable import TableSources

        r = self.rec
        return TableSources(
            keys if keys is not None else r[:, 2].copy(), r[:, 5].copy(), r[:, 3].copy(),
            r[:, 4].copy(), r[:, 0].copy(), self.end, self.line, r[:, 1] + 1,
        )  # fmt: skip


def _table_records_re(kind: str, text: str, start: int, end: int) -> list[int] | None:
    """The lines of a `procid` or `mapping` body as _TABLE_RES[kind] reads them, the
    definition of what the fast path takes: (line start, indentation length, key, value
    start, value end, value) each, flat; None when the body is not all such lines."""
    rec: list[int] = []
    pos = start
    for m in _TABLE_RES[kind].finditer(text, start, end):
        ls = m.start()
        if ls != pos:
            return None
        pos = m.end()
        rec += (ls, m.end(1) - ls, int(m.group(2)), m.start(3), m.end(3), int(m.group(3)))
    return rec if pos == end else None


def _table_records_native(kind: str, text: str, start: int, end: int) -> list[int] | None:
    """_table_records_array as a list."""
    rec = _table_records_array(kind, text, start, end)
    return None if rec is None else rec.tolist()


def _table_records_array(kind: str, text: str, start: int, end: int) -> Any:
    """_table_records_re by the C kernel (parasol_core/native/scan.c), or None when it
    is not built, the text is not ASCII or the body is not of its plainest form
    (comments, ...)."""
    kernel = _kernel("table")
    data = None if kernel is None else _ascii(text)
    if data is None:
        return None

    cap = (end - start) // 7 + 1  # a line takes at least 7 characters: `p[1]=1\n`
    rec = np.empty(6 * cap, dtype=np.int64)  # resident as written (see _scan_links_native)
    n = kernel(
        data, start, end, b"p" if kind == "procid" else b"map", cap,
        _p64(rec),
    )  # fmt: skip
    if n < 0:  # -2 cannot happen: a line ends with a \n
        return None
    return rec[: 6 * n]


_encoded = threading.local()  # (text, its characters or None) while scan() runs here


def _ascii(text: str) -> Any:
    """``text``'s characters for the kernels (a ``char *``) when it is ASCII (byte
    offsets are then character offsets), else None. Looked at once for all the bulk
    sections of one scan. The caller holds ``text`` while a kernel reads them."""
    held = getattr(_encoded, "pair", None)
    if held is None or held[0] is not text:
        held = _encoded.pair = (text, _characters(text) if text.isascii() else None)
    return held[1]


def _characters(text: str) -> Any:
    """The characters of an ASCII ``text`` as a ``char *``: in CPython its own (a
    compact ASCII string holds them as bytes, and ``PyUnicode_AsUTF8AndSize`` gives
    them without a copy), elsewhere an encoded copy. The copy was as large as the file:
    570 MB more at the peak of loading the million-processor torus."""
    import ctypes
    import sys

    if sys.implementation.name != "cpython":
        return text.encode("ascii")
    size = ctypes.c_ssize_t()
    address = _as_utf8(text, ctypes.byref(size))
    if not address or size.value != len(text):  # pragma: no cover - not a compact str
        return text.encode("ascii")
    return ctypes.c_char_p(address)


def _utf8_function() -> Any:
    import ctypes

    f = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    f.restype = ctypes.c_void_p
    f.argtypes = [ctypes.py_object, ctypes.POINTER(ctypes.c_ssize_t)]
    return f


def _as_utf8(text: str, size: Any) -> int | None:
    global _AS_UTF8
    if _AS_UTF8 is None:
        _AS_UTF8 = _utf8_function()
    return _AS_UTF8(text, size)


_AS_UTF8: Any = None


def _scan_timings(text: str, start: int, end: int, line: int) -> tuple | None:
    from parasol_core.syntax.builder import _Def

    items: list = []
    warnings: list[tuple[str, int, int]] = []
    pos = start
    cache: dict[str, Timing | None] = {}
    resolve = params.resolve_name
    for m in _TABLE_RES["timings"].finditer(text, start, end):
        ls = m.start()
        if ls != pos:
            return None
        pos = m.end()
        name, value_text = m.group(2, 3)
        canonical, warning = resolve(name)
        name_col = m.end(1) - ls + 1
        if warning:
            warnings.append((warning, line, name_col))
        value = _timing(value_text, cache)
        if value is None:
            return None
        vs = ValueSource(value, m.start(3), m.end(3), ls, pos, line, name_col)
        items.append(_Def(TIMING, canonical or name, value, vs))
        line += 1
    if pos != end:
        return None
    return items, warnings


def release() -> None:
    """Forget the text the kernels were given (do not keep a copy of it alive)."""
    _encoded.pair = None


def scan_section(
    kind: str, text: str, source_text: str, begin: int, line: int
) -> tuple[Any, int, int, int] | None:
    """The body of the `begin KIND` section whose `begin` is at ``begin``, when it is
    of the strictest form: (its items, where the body starts, where it ends (the start
    of the `end KIND` line), the lines it holds); else None. ``line`` is the line number
    of the body's first line; ``source_text`` the text the model records (``text`` may
    have a line end added, and lone `\r` made `\n`): the links' records are built
    from it.

    A body is taken only when it has at least ``MIN_ITEMS`` items: below that, the
    reader (:mod:`parasol_core.syntax.reader`) is as quick.
    """
    m = _BEGIN_RE.match(text, begin)
    if m is None or m.group(1) != kind:
        return None
    # `begin` must start a line of its own (after `\n` and blanks only)
    ls = begin
    while ls > 0 and text[ls - 1] in _INDENT:
        ls -= 1
    if ls > 0 and text[ls - 1] != "\n":
        return None
    body = m.end()
    end_m = _END_RES[kind].search(text, body)
    if end_m is None:
        return None
    end = end_m.start()
    while end > body and text[end - 1] in _INDENT:
        end -= 1
    if end > body and text[end - 1] != "\n":
        return None
    if kind == "linklist":
        found: Any = _scan_links(source_text, body, end, line)
        items = -1 if found is None else len(found)
        lines = LINK_LINES * items
    elif text.count("=", body, end) < MIN_ITEMS:  # a line an item
        return None
    else:
        found = _scan_table(kind, text, body, end, line)
        items = lines = -1 if found is None else len(found[0])
    if items < MIN_ITEMS:
        return None
    return found, body, end, lines
