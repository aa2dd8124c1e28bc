"""The model as plain JSON data (`parasol-model show --json`, the estimator)."""

from __future__ import annotations

from typing import Any

from parasol_core.expr.tree import Expression
from parasol_core.model import Block, Timing, children_of


def value_data(value: Any) -> Any:
    if isinstance(value, Timing):
        return {"mean": value.mean, "sd": value.sd}
    if isinstance(value, Expression):
        return value.text
    if isinstance(value, tuple):
        return list(value)
    return value


def to_data(block: Block) -> dict[str, Any]:
    """A section as a dict: fields by attribute name, tables as dicts, children nested."""
    data: dict[str, Any] = {}
    for f, value in block.field_items():
        data[f.attr] = value_data(value)
    for table in block.TABLES:
        data[table.attr] = {str(k): value_data(v) for k, v in getattr(block, table.attr).items()}
    for child in block.CHILDREN:
        kids = [to_data(c) for c in children_of(block, child)]
        data[child.attr] = kids if child.many else (kids[0] if kids else None)
    return data
