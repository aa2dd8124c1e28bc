"""The canonical text of a topology's bulk, written from columns.

A generated million-processor torus has 3,000,000 link sections and 1,000,000 `p[i]`
lines. Written value by value through :func:`~parasol_core.syntax.writer.format_value`
they took longer than reading the file back; here each distinct latency and speed is
formatted once, and every link section is one ``%`` of a template (the id and the
processors are its only changing parts), so the text comes out at the speed of string
joining. The text is exactly that of :func:`~parasol_core.syntax.writer.canonical_lines`
(``tests/test_bulk_text.py`` holds them equal).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parasol_core.model.inttable import int_columns
from parasol_core.model.linkstore import LinkStore
from parasol_core.model.tree import format_number

INDENT = "    "
# Below this many links, the link-by-link writer is as quick.
BULK_LINKS = 64


def timing_texts(means: np.ndarray, sds: np.ndarray | None) -> tuple[np.ndarray, list[str]]:
    """(index by row, texts): each distinct (mean, sd) formatted once. Values are told
    apart by their bits (-0.0 is not 0.0); a NaN sd is none."""
    at, values = distinct_timings(means, sds)
    texts = []
    for mean, sd in values:
        text = format_number(mean)
        if sd is not None:
            text += " " + format_number(sd)
        texts.append(text)
    return at, texts


def distinct_timings(means: np.ndarray, sds: np.ndarray | None
                     ) -> tuple[np.ndarray, list[tuple[float, float | None]]]:  # fmt: skip
    """(index by row, the distinct (mean, sd) pairs; sd None for NaN), told apart by
    their bits."""
    bits = np.ascontiguousarray(means, dtype=np.float64).view(np.int64)
    sd_bits = None
    if sds is not None:
        sd_bits = np.ascontiguousarray(np.where(np.isnan(sds), np.nan, sds)).view(np.int64)
    if (
        bits.shape[0]
        and (bits == bits[0]).all()
        and (sd_bits is None or (sd_bits == sd_bits[0]).all())
    ):  # one value for all (a group edit, a generated topology): no sort
        sd = None if sd_bits is None else float(sd_bits[:1].view(np.float64)[0])
        pair = (float(bits[:1].view(np.float64)[0]), sd if sd == sd else None)
        return np.zeros(bits.shape[0], dtype=np.int64), [pair]
    if sd_bits is None:
        values, inverse = np.unique(bits, return_inverse=True)
        return inverse.reshape(-1), [(m, None) for m in values.view(np.float64).tolist()]
    values, inverse = np.unique(np.column_stack((bits, sd_bits)), axis=0, return_inverse=True)
    pairs = [(m, sd if sd == sd else None) for m, sd in values.view(np.float64).tolist()]
    return inverse.reshape(-1), pairs


def can_write_in_bulk(store: LinkStore) -> bool:
    """Enough links to be worth it, and all their values in the columns (none kept
    aside, as ``None`` or a float where a timing belongs, is)."""
    return len(store) >= BULK_LINKS and not store.odd_rows().shape[0]


def link_sections(store: LinkStore, indent: str) -> str:
    """The link sections of ``store``, canonical, one after another, joined by `\\n`
    (no line end after the last)."""
    inner = indent + INDENT
    off, procs = store.connect_csr()
    sizes = np.diff(off)
    lat_at, lat_texts = timing_texts(store.means("latency"), store.sds("latency"))
    spd_at, spd_texts = timing_texts(store.means("speed"), store.sds("speed"))
    head = f"{indent}begin link\n{inner}id = "
    if (sizes == 2).all() and len(lat_texts) == 1 and len(spd_texts) == 1:
        # the generated case: one latency, one speed, two processors a link
        middle = (
            f"\n{inner}latency = {lat_texts[0]}\n{inner}speed = {spd_texts[0]}\n{inner}connect = 2 "
        )
        pairs = procs[off[0] : off[-1]].reshape(-1, 2)
        return _interleave(
            [head], store.ids, [middle], pairs[:, 0], [" "], pairs[:, 1],
            [f"\n{indent}end link\n"], trim=1,
        )  # fmt: skip
    template = (
        f"{head}%d\n{inner}latency = %s\n{inner}speed = %s\n{inner}connect = %s\n{indent}end link"
    )
    ids = store.ids.tolist()
    lats = [lat_texts[i] for i in lat_at.tolist()]
    spds = [spd_texts[i] for i in spd_at.tolist()]
    flat = procs[off[0] : off[-1]].tolist()
    bounds = (off - off[0]).tolist()
    connects = [
        " ".join(map(str, [b - a, *flat[a:b]])) for a, b in zip(bounds, bounds[1:])
    ]  # fmt: skip
    return "\n".join([template % t for t in zip(ids, lats, spds, connects)])


def _interleave(*columns: Any, trim: int = 0) -> str:
    """The columns' texts joined row by row: a one-element list is the same text in
    every row; the others are numbers (whole numbers from 0 up; a list or an integer
    array) or strings, one a row. With the C kernel (``native/text.c``) rows of texts
    and numbers are written straight into one buffer. Else slice assignments and
    ``str.join`` run in C: about ten times quicker than formatting each row with ``%``;
    numbers are written by looking up the text of each value up to the largest once
    (``str`` of a million numbers, then a list lookup a row, about a third of a ``str``
    call a row). ``trim``: characters left off the end (a last line end), with no copy
    of the whole text to do it."""
    n = max(len(c) for c in columns)
    text = _interleave_native(columns, n, trim)
    if text is not None:
        return text
    columns = tuple(c.tolist() if isinstance(c, np.ndarray) else c for c in columns)
    k = len(columns)
    numeric = [c for c in columns if not (len(c) == 1 and n != 1) and c and type(c[0]) is not str]
    top = max((max(c) for c in numeric), default=-1)
    low = min((min(c) for c in numeric), default=0)
    digits = list(map(str, range(top + 1))) if low >= 0 and top < 4 * n + 1024 else None
    parts: list = [None] * (n * k)
    for j, column in enumerate(columns):
        if len(column) == 1 and n != 1:
            parts[j::k] = column * n
        elif column and type(column[0]) is not str:
            parts[j::k] = map(digits.__getitem__ if digits is not None else str, column)
        else:
            parts[j::k] = column
    if trim:
        parts[-1] = parts[-1][:-trim]
    return "".join(parts)


def _interleave_native(columns: tuple, n: int, trim: int = 0) -> str | None:
    """:func:`_interleave` by the kernel ``parasol_interleave``; None without it (not
    built, or PARASOL_PURE_PYTHON=1) or for a column of strings one a row."""
    kernel = _text_kernel()
    if kernel is None or n < 2:
        return None
    spec: list[int] = []
    consts: list[bytes] = []
    ints: list[np.ndarray] = []
    for c in columns:
        if isinstance(c, list) and len(c) == 1 and type(c[0]) is str:
            spec.append(-len(consts) - 1)
            consts.append(c[0].encode("utf-8"))
        elif (isinstance(c, np.ndarray) and c.dtype.kind == "i") or (
            isinstance(c, list) and c and type(c[0]) is int
        ):  # fmt: skip
            spec.append(len(ints))
            ints.append(np.asarray(c, dtype=np.int64))
        else:
            return None
    import ctypes

    table = np.ascontiguousarray(np.column_stack(ints) if ints else np.zeros((n, 0), np.int64))
    offsets = np.zeros(len(consts) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in consts], out=offsets[1:])
    cap = n * (int(offsets[-1]) + 21 * len(ints)) + 1
    out = np.empty(cap, dtype=np.uint8)  # pages past what is written are never touched
    p64 = ctypes.POINTER(ctypes.c_int64)
    spec_a = np.asarray(spec, dtype=np.int64)
    written = kernel(
        n, len(spec), spec_a.ctypes.data_as(p64), b"".join(consts), offsets.ctypes.data_as(p64),
        table.ctypes.data_as(p64), table.shape[1], out.ctypes.data_as(ctypes.c_char_p), cap,
    )  # fmt: skip
    if written < trim:
        return None
    return str(memoryview(out)[: written - trim], "utf-8")


def _text_kernel() -> Any:
    """The kernel's ``parasol_interleave``, or None (not built, or
    PARASOL_PURE_PYTHON=1)."""
    from parasol_core import native

    i64, p64, chars = native.I64, native.P64, native.CHARS
    return native.function("_text", "parasol_interleave",
                            (i64, i64, p64, chars, p64, p64, i64, chars, i64))  # fmt: skip


def table_columns(items: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(numbers, values) of a big table of plain integers (what `%d` writes as the
    writer does), as columns (an IntTable's own), else None."""
    if len(items) < BULK_LINKS:
        return None
    return int_columns(items)


def table_lines(columns: tuple[np.ndarray, np.ndarray], key_format: str, indent: str) -> str:
    """Integer table entries (`p[i] = t`, `map[v] = h`) from :func:`table_columns`,
    joined by `\n`."""
    prefix, _, suffix = key_format.partition("{}")
    keys, values = columns
    return _interleave([f"{indent}{prefix}"], keys, [f"{suffix} = "], values, ["\n"], trim=1)
