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

import numpy as np

from parasol_core.expr.tree import format_number
from parasol_core.linkstore import LinkStore

INDENT = "    "
# Below this many links, the link-by-link writer is as quick.
BULK_LINKS = 64


def _timing_texts(means: np.ndarray, sds: np.ndarray | None) -> tuple[np.ndarray, list[str]]:
    """(index by row, texts): each distinct (mean, sd) formatted once. Values are told
    apart by their bits (-0.0 is not 0.0); a NaN sd is none."""
    bits = np.ascontiguousarray(means, dtype=np.float64).view(np.int64)
    if sds is None:
        values, inverse = np.unique(bits, return_inverse=True)
        floats = values.view(np.float64).tolist()
        return inverse.reshape(-1), [format_number(v) for v in floats]
    sd_bits = np.ascontiguousarray(np.where(np.isnan(sds), np.nan, sds)).view(np.int64)
    values, inverse = np.unique(np.column_stack((bits, sd_bits)), axis=0, return_inverse=True)
    texts = []
    for mean, sd in values.view(np.float64).tolist():
        text = format_number(mean)
        if sd == sd:  # not NaN
            text += " " + format_number(sd)
        texts.append(text)
    return inverse.reshape(-1), texts


def can_write_in_bulk(store: LinkStore) -> bool:
    """Enough links to be worth it, and all their values in the columns (none kept
    aside, as ``None`` or a float where a timing belongs, is)."""
    return len(store) >= BULK_LINKS and not store.odd_rows().shape[0]


def link_sections(store: LinkStore, indent: str) -> str:
    """The link sections of ``store``, canonical, one after another, joined by `\\n`
    (no line end after the last)."""
    inner = indent + INDENT
    ids = store.ids.tolist()
    off, procs = store.connect_csr()
    sizes = np.diff(off)
    lat_at, lat_texts = _timing_texts(store.means("latency"), store.sds("latency"))
    spd_at, spd_texts = _timing_texts(store.means("speed"), store.sds("speed"))
    head = f"{indent}begin link\n{inner}id = "
    if (sizes == 2).all() and len(lat_texts) == 1 and len(spd_texts) == 1:
        # the generated case: one latency, one speed, two processors a link
        middle = (
            f"\n{inner}latency = {lat_texts[0]}\n{inner}speed = {spd_texts[0]}\n{inner}connect = 2 "
        )
        pairs = procs[off[0] : off[-1]].reshape(-1, 2)
        return _interleave(
            [head], ids, [middle], pairs[:, 0].tolist(), [" "], pairs[:, 1].tolist(),
            [f"\n{indent}end link\n"],
        )[:-1]  # fmt: skip
    template = (
        f"{head}%d\n{inner}latency = %s\n{inner}speed = %s\n{inner}connect = %s\n{indent}end link"
    )
    lats = [lat_texts[i] for i in lat_at.tolist()]
    spds = [spd_texts[i] for i in spd_at.tolist()]
    flat = procs[off[0] : off[-1]].tolist()
    bounds = (off - off[0]).tolist()
    connects = [
        " ".join(map(str, [b - a, *flat[a:b]])) for a, b in zip(bounds, bounds[1:])
    ]  # fmt: skip
    return "\n".join([template % t for t in zip(ids, lats, spds, connects)])


def _interleave(*columns: list) -> str:
    """The columns' texts joined row by row: a one-element list is the same text in
    every row; the others are numbers (whole numbers from 0 up) or strings, one a row.
    Slice assignments and ``str.join`` run in C: about ten times quicker than formatting
    each row with ``%``. Numbers are written by looking up the text of each value up to
    the largest once (``str`` of a million numbers, then a list lookup a row, about a
    third of a ``str`` call a row)."""
    n = max(len(c) for c in columns)
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
    return "".join(parts)


def table_in_bulk(items: dict) -> bool:
    """A big table of plain integers (what `%d` writes as the writer does)."""
    return len(items) >= BULK_LINKS and all(
        type(k) is int and type(v) is int for k, v in items.items()
    )


def table_lines(items: dict, key_format: str, indent: str) -> str:
    """Integer table entries (`p[i] = t`, `map[v] = h`), joined by `\\n`."""
    prefix, _, suffix = key_format.partition("{}")
    return _interleave(
        [f"{indent}{prefix}"], list(items.keys()), [f"{suffix} = "], list(items.values()), ["\n"]
    )[:-1]
