"""The model as plain JSON data (`parasol-model show --json`, the estimator)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parasol_core.base import jsonout
from parasol_core.model import Block, Timing, children_of
from parasol_core.model.inttable import IntTable, int_columns
from parasol_core.model.tree import Expression


def value_data(value: Any) -> Any:
    if isinstance(value, Timing):
        return {"mean": value.mean, "sd": value.sd}
    if isinstance(value, Expression):
        return value.text
    if isinstance(value, tuple):
        return list(value)
    return value


def table_data(table: Any) -> dict[str, Any]:
    """A table as a dict with text keys; a procid or mapping table read in bulk
    (parasol_core.model.inttable) straight from its columns."""
    found = int_columns(table) if isinstance(table, IntTable) else None
    if found is not None:
        return dict(zip(map(str, found[0].tolist()), found[1].tolist()))
    return {str(k): value_data(v) for k, v in table.items()}


def to_data(block: Block, links: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """A section as a dict: fields by attribute name, tables as dicts, children nested.
    ``links``: given a topology's link store, what stands for it instead of its link
    dicts, or None to write them (:func:`dumps` puts a mark there)."""
    data: dict[str, Any] = {}
    for f, value in block.field_items():
        data[f.attr] = value_data(value)
    for table in block.TABLES:
        data[table.attr] = table_data(getattr(block, table.attr))
    for child in block.CHILDREN:
        if links is not None:
            mark = links(getattr(block, child.attr))
            if mark is not None:
                data[child.attr] = mark
                continue
        kids = [to_data(c, links) for c in children_of(block, child)]
        data[child.attr] = kids if child.many else (kids[0] if kids else None)
    return data


def dumps(block: Block, indent: int = 1) -> str:
    """``json.dumps(to_data(block), indent=indent)``, the same text, with big link
    stores written from their columns (a million-link torus as dicts took gigabytes)."""
    import json

    from parasol_core.model.linkstore import LinkStore
    from parasol_core.syntax import bulk_text

    stores: list[LinkStore] = []

    def mark(value: Any) -> str | None:
        if not (isinstance(value, LinkStore) and bulk_text.can_write_in_bulk(value)):
            return None
        stores.append(value)
        return f"\x00links {len(stores) - 1}\x00"

    text = jsonout.dumps(to_data(block, mark), indent=indent)  # no NaN, no infinity
    if not stores:
        return text
    pieces = []
    pos = 0
    for k, store in enumerate(stores):
        mark = json.dumps(f"\x00links {k}\x00")
        at = text.index(mark, pos)
        line_start = text.rindex("\n", 0, at) + 1
        key_indent = len(text[line_start:at]) - len(text[line_start:at].lstrip(" "))
        pieces.append(text[pos:at])
        pieces.append(_links_json(store, key_indent, indent))
        pos = at + len(mark)
    pieces.append(text[pos:])
    return "".join(pieces)


def _links_json(store: Any, key_indent: int, step: int) -> str:
    """The JSON list of a store's links as ``json.dumps(..., indent=step)`` writes it
    under a key indented ``key_indent`` spaces."""
    import numpy as np

    from parasol_core.syntax.bulk_text import _interleave

    if not len(store):
        return "[]"
    i1 = " " * (key_indent + step)  # a link's braces
    i2 = i1 + " " * step  # its keys
    i3 = i2 + " " * step  # mean, sd, connect numbers

    def timing_texts(name: str) -> list[str]:
        means = store.means(name)
        sds = store.sds(name)
        bits = np.ascontiguousarray(means).view(np.int64)
        if sds is None:
            values, inverse = np.unique(bits, return_inverse=True)
            texts = [
                f'{{\n{i3}"mean": {jsonout.number(v)},\n{i3}"sd": null\n{i2}}}'
                for v in values.view(np.float64).tolist()
            ]
        else:
            sd_bits = np.ascontiguousarray(sds).view(np.int64)
            values, inverse = np.unique(np.column_stack((bits, sd_bits)), axis=0,
                                        return_inverse=True)  # fmt: skip
            texts = [
                f'{{\n{i3}"mean": {jsonout.number(m)},\n{i3}"sd": '
                f"{'null' if s != s else jsonout.number(s)}\n{i2}}}"
                for m, s in values.view(np.float64).tolist()
            ]
        return [texts[i] for i in inverse.reshape(-1).tolist()]

    off, procs = store.connect_csr()
    flat = procs[off[0] : off[-1]].tolist()
    bounds = (off - off[0]).tolist()
    sep = f",\n{i3}"
    connects = [
        f"[\n{i3}{sep.join(map(str, flat[a:b]))}\n{i2}]" if b > a else "[]"
        for a, b in zip(bounds, bounds[1:])
    ]
    body = _interleave(
        [f"{i1}{{\n{i2}\"id\": "], store.ids.tolist(), [f",\n{i2}\"latency\": "],
        timing_texts("latency"), [f",\n{i2}\"speed\": "], timing_texts("speed"),
        [f",\n{i2}\"connect\": "], connects, [f"\n{i1}}},\n"],
    )  # fmt: skip
    return "[\n" + body[:-2] + "\n" + " " * key_indent + "]"
