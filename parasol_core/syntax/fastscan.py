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
links: a link's source record is built from the text only when something reads
``link.src`` (see :class:`LinkRegion`), since an editor opening a 98,304-link model reads
a few of them. ``tests/test_fast_parser_differential.py`` holds the scanners to the
reader and both to the grammar run by lark, source records and diagnostics included, on
samples and generated and mutated files.
"""

from __future__ import annotations

import bisect
import re
import threading
from typing import Any

from parasol_core import params
from parasol_core.model import INT, TIMING, Link, Timing
from parasol_core.syntax.source import BlockSource, ValueSource

# Numbers of bounded length: no integer past 2**63 - 1 and no float that overflows, so
# none of the builder's range errors can arise here.
_INT = r"\d{1,18}"
_NUM = r"-?\d{1,20}(?:\.\d{0,20})?(?:[eE][-+]?\d{1,2})?"
_TIMING = rf"({_NUM})(?:[ \t]+({_NUM}))?"
# The end of a line: blanks, an ordinary comment (not a shape comment), one `\n`.
_EOL = r"[ \t]*(?:#(?![ \t]*piui:[ \t]*shape)[^\n\r\x0b;]*)?\n"


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


LINK_RE = _Pattern(
    r"[ \t]*begin[ \t]+link[ \t]*\n"
    r"[ \t]*id[ \t]*=[ \t]*(\d+)[ \t]*\n"
    rf"[ \t]*latency[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    rf"[ \t]*speed[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    r"[ \t]*connect[ \t]*=[ \t]*(\d+(?:[ \t]+\d+)+)[ \t]*\n"
    r"[ \t]*end[ \t]+link[ \t]*\n"
)
# The same, with the positions a source record needs: (indent, value) of each line.
LINK_POS_RE = _Pattern(
    r"([ \t]*)begin[ \t]+link[ \t]*\n"
    r"([ \t]*)id[ \t]*=[ \t]*(\d+)[ \t]*\n"
    rf"([ \t]*)latency[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    rf"([ \t]*)speed[ \t]*=[ \t]*({_LOOSE})[ \t]*\n"
    r"([ \t]*)connect[ \t]*=[ \t]*(\d+(?:[ \t]+\d+)+)[ \t]*\n"
    r"([ \t]*)end[ \t]+link[ \t]*\n"
)
_TIMING_RE = _Pattern(_TIMING)
LINK_LINES = 6
_LINK_FIELDS = (("id", 2, 3), ("latency", 4, 5), ("speed", 6, 7), ("connect", 8, 9))
_END_INDENT = 10

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


class LinkRegion:
    """The text of one link list read by the fast path; builds a link's source record
    (what the builder would have recorded) when it is first asked for."""

    __slots__ = ("text", "moves")

    def __init__(self, text: str) -> None:
        self.text = text
        # Each save that moved text without a parse (parasol_core.syntax.inplace): the
        # ends of its edits and the sum of the moves up to each, in that save's text
        self.moves: tuple[tuple[list[int], list[int]], ...] = ()

    def __copy__(self) -> LinkRegion:
        return self

    def __deepcopy__(self, memo: dict) -> LinkRegion:
        # one copy for every link of the list (deepcopy's memo), so that a save of the
        # original moving its own region leaves the copy's alone
        copy = LinkRegion(self.text)
        copy.moves = self.moves
        return copy

    def moved(self, text: str, moves: tuple[list[int], list[int]] | None) -> None:
        """The text is now ``text``: a save replaced spans outside the lazy links, which
        moved what follows each by ``moves`` (ends of the spans, sums of the moves)."""
        self.text = text
        if moves is not None:
            self.moves = (*self.moves, moves)

    def offset(self, offset: int) -> int:
        """Where a link read at ``offset`` now starts."""
        for ends, moves in self.moves:
            i = bisect.bisect_right(ends, offset)
            if i:
                offset += moves[i - 1]
        return offset

    def build(self, lazy: tuple) -> BlockSource:
        """The source record of the link at ``lazy`` (see :func:`_scan_links`)."""
        offset = self.offset(lazy[1])
        line = lazy[2]
        text = self.text
        m = LINK_POS_RE.match(text, offset)
        assert m is not None, "the text of a loaded link changed"
        src = BlockSource(
            m.start(), m.end(), line, len(m.group(1)) + 1, m.start(_END_INDENT),
            text.index("\n", offset) + 1, text,
        )  # fmt: skip
        values = src.values
        n = line
        for attr, gi, gv in _LINK_FIELDS:
            n += 1
            ls = m.start(gi)
            if attr == "connect":
                numbers = [int(x) for x in m.group(gv).split()]
                value: Any = tuple(numbers[1:])
            else:
                value = getattr_loaded(lazy, attr)
            vs = ValueSource(
                value, m.start(gv), m.end(gv), ls, text.index("\n", ls) + 1, n,
                len(m.group(gi)) + 1,
            )  # fmt: skip
            if attr == "connect":
                vs.count = numbers[0]
            values[attr] = vs
        return src


def getattr_loaded(lazy: tuple, attr: str) -> Any:
    """A loaded link's value of ``attr`` as read from the file."""
    return lazy[("id", "latency", "speed", "connect").index(attr) + 3]


def link_is_unedited(link: Link) -> bool:
    """True when ``link`` was read by the fast path, its source record was never built
    and it still holds the very values it was loaded with, so the writer can leave its
    text as it is without looking closer. (False only means "look closer".)"""
    d = link.__dict__
    lazy = d.get("_lazy_src")
    return (
        lazy is not None
        and "src" not in d
        and d["latency"] is lazy[4]
        and d["speed"] is lazy[5]
        and d["id"] is lazy[3]
        and d["connect"] == lazy[6]
    )


def rebased_lazy(old: Link, new: Link) -> tuple:
    """The lazy record for ``old`` after a save read its text back as ``new``: ``new``'s,
    holding ``old``'s own values where they equal the ones read (as they do when the text
    was written from them), so that ``old`` counts as unedited until it is edited."""
    region, offset, line, lid, lat, spd, conn = new.__dict__["_lazy_src"]
    d = old.__dict__
    if type(d["id"]) is int and d["id"] == lid:
        lid = d["id"]
    if d["latency"] == lat:
        lat = d["latency"]
    if d["speed"] == spd:
        spd = d["speed"]
    return (region, offset, line, lid, lat, spd, conn)


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


def _scan_links(text: str, start: int, end: int, line: int) -> list[Link] | None:
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
    import array
    import ctypes

    cap = (end - start) // 50 + 1  # a link section takes more than 50 characters
    room = 4 * cap + 16
    for _ in range(2):
        rec = array.array("q", bytes(8 * 8 * cap))
        numbers = array.array("q", bytes(8 * room))
        n = kernel(
            data, start, end, cap,
            (ctypes.c_int64 * len(rec)).from_buffer(rec), room,
            (ctypes.c_int64 * len(numbers)).from_buffer(numbers),
        )  # fmt: skip
        if n != -2:
            break
        # room enough for any body: a link section takes more than 50 characters, and
        # its connect numbers are 2 characters apart
        cap = max(cap, (end - start) // 50 + 1)
        room = (end - start) // 2 + 1
    if n < 0:
        return None
    del rec[8 * n :]
    del numbers[(rec[-2] + rec[-1] if n else 0) :]
    return rec.tolist(), numbers.tolist()


_KERNELS: list = []


def _kernel(name: str) -> Any:
    """The kernel's scan function for ``"links"`` or ``"table"``, or None (not built, or
    PARASOL_PURE_PYTHON=1)."""
    from parasol_core import _native

    if _native.pure_python():
        return None
    if not _KERNELS:
        import ctypes

        lib = _native.load("_scan")
        found = {}
        if lib is not None:
            p64 = ctypes.POINTER(ctypes.c_int64)
            i64 = ctypes.c_int64
            links = lib.parasol_scan_links
            links.argtypes = [ctypes.c_char_p, i64, i64, i64, p64, i64, p64]
            links.restype = i64
            table = lib.parasol_scan_table
            table.argtypes = [ctypes.c_char_p, i64, i64, ctypes.c_char_p, i64, p64]
            table.restype = i64
            found = {"links": links, "table": table}
        _KERNELS.append(found)
    return _KERNELS[0].get(name)


def _scan_links_re(text: str, start: int, end: int, line: int) -> list[Link] | None:
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


def _make_links(text: str, line: int, rec: Any, numbers: list[int]) -> list[Link] | None:
    """Fast-path Link objects from the records of a link list (the kernel's, or the
    regular expression's): for each link, flat, the offset of its `begin` line, its id,
    the start and end of its latency text and of its speed text, and where its connect
    numbers start in ``numbers`` and how many there are. The first is at ``line``; each
    builds its source record only when read. None when a timing is not of the strict
    form."""
    region = LinkRegion(text)
    cache: dict[str, Timing | None] = {}
    # by where its text starts: the kernel gives equal texts the span of the first
    by_start: dict[int, Timing | None] = {}
    at = by_start.get
    links: list[Link] = []
    append = links.append
    new = object.__new__
    it = iter(rec)
    for offset, ident, ls, le, ss, se, cs, cn in zip(it, it, it, it, it, it, it, it):
        latency = at(ls)
        if latency is None:
            latency = by_start[ls] = _timing(text[ls:le], cache)
        speed = at(ss)
        if speed is None:
            speed = by_start[ss] = _timing(text[ss:se], cache)
        if latency is None or speed is None:
            return None
        connect = numbers[cs : cs + cn]
        link = new(Link)
        link.__dict__ = {
            "id": ident, "latency": latency, "speed": speed, "connect": connect,
            "_lazy_src": (region, offset, line, ident, latency, speed, connect.copy()),
        }  # fmt: skip
        append(link)
        line += LINK_LINES
    return links


def _scan_table(kind: str, text: str, start: int, end: int, line: int) -> tuple | None:
    """(items, warnings) of a table body, or None when it is not all strict lines."""
    if kind == "timings":
        return _scan_timings(text, start, end, line)
    rec = _table_records_native(kind, text, start, end)
    if rec is None:
        rec = _table_records_re(kind, text, start, end)
        if rec is None:
            return None
    from parasol_core.syntax.builder import _Def

    items = []
    append = items.append
    n = len(rec)
    for i in range(0, n, 6):
        ls, indent, key, vs, ve, value = rec[i : i + 6]
        le = rec[i + 6] if i + 6 < n else end
        append(_Def(INT, key, value, ValueSource(value, vs, ve, ls, le, line, indent + 1)))
        line += 1
    return items, []


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
    """_table_records_re by the C kernel (parasol_core/native/scan.c), or None when it
    is not built, the text is not ASCII or the body is not of its plainest form
    (comments, ...)."""
    kernel = _kernel("table")
    data = None if kernel is None else _ascii(text)
    if data is None:
        return None
    import array
    import ctypes

    cap = (end - start) // 7 + 1  # a line takes at least 7 characters: `p[1]=1\n`
    rec = array.array("q", bytes(8 * 6 * cap))
    n = kernel(
        data, start, end, b"p" if kind == "procid" else b"map", cap,
        (ctypes.c_int64 * len(rec)).from_buffer(rec),
    )  # fmt: skip
    if n < 0:  # -2 cannot happen: a line ends with a \n
        return None
    del rec[6 * n :]
    return rec.tolist()


_encoded = threading.local()  # (text, its bytes or None) while scan() runs in this thread


def _ascii(text: str) -> bytes | None:
    """``text`` as bytes for the kernels when it is ASCII (byte offsets are then
    character offsets), else None. Looked at and encoded once for all the bulk sections
    of one scan."""
    held = getattr(_encoded, "pair", None)
    if held is None or held[0] is not text:
        held = _encoded.pair = (text, text.encode("ascii") if text.isascii() else None)
    return held[1]


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
