"""Changing stored values by reference, and group scalers.

``set_value(machine, "pt(1).iga", "7.4e-7")`` is what `parasol-model set` does and what
the editor's commands do: the reference names the stored value as an expression would
(ids, not positions), and the text is read the way the file format reads that value.
"""

from __future__ import annotations

import math
import re
from typing import Any

from parasol_core.base import limits, params
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.numeric import read_int

# The reference table's writing side, re-exported: what a reference names and its key.
from parasol_core.expr.refs import EditError, Slot, slot, stored_key  # noqa: F401
from parasol_core.model import (
    CONNECT,
    EXPR,
    INT,
    ROLES,
    STR,
    TIMING,
    WORD,
    Cache,
    Machine,
    Processor,
    Timing,
)
from parasol_core.model.tree import Expression, Reference
from parasol_core.syntax.expression import parse_expression


def parse_value(kind: str, text: str, label: str = "value") -> Any:
    """Read ``text`` as a value of ``kind``, as the file format would: its numbers in
    ASCII (:mod:`parasol_core.base.numeric`), separated and surrounded by ASCII blanks."""
    if kind in (INT, TIMING, CONNECT):
        text = text.strip(" \t\r\n")
        words = [w for w in re.split(r"[ \t]+", text) if w]
    else:
        text = text.strip()
    try:
        if kind == INT:
            from parasol_core.base.numeric import parse_whole

            return limits.check_int(parse_whole(text, 0, INT_LIMIT), "the number")
        if kind == STR:
            if len(text) >= 2 and text[0] == text[-1] == '"':
                text = text[1:-1]
            if any(c in text for c in '"\n\r\x0b'):
                raise ValueError("a name cannot contain quotes or line ends")
            return limits.check_name(text)
        if kind == TIMING:
            parts = words
            if not 1 <= len(parts) <= 2:
                raise ValueError("expected a mean and optionally a standard deviation")
            numbers = [limits.float_text(p) for p in parts]
            return Timing(numbers[0], numbers[1] if len(numbers) > 1 else None)
        if kind == EXPR:
            return parse_expression(limits.check_text(text, "the expression"))
        if kind == WORD:  # a processor type's role: a known word, or none to clear it
            word = text.strip('"').strip()
            if word.lower() in ("", "none"):
                return None
            if word not in ROLES:
                raise ValueError(f"the roles are: {', '.join(ROLES)} (or none)")
            return word
        if kind == CONNECT:
            numbers = limits.check_ints(
                (read_int(p, "a connect number") for p in words if len(p) <= 40),
                "a connect number",
            )
            if len(numbers) < len(words):
                raise ValueError("a connect number is too long")
            if not numbers or numbers[0] != len(numbers) - 1:
                raise ValueError("expected a count followed by that many processor numbers")
            return numbers[1:]
    except ModelSyntaxError as e:
        raise EditError(f"{label}: {e.message} (column {e.column})") from None
    except ValueError as e:
        raise EditError(f"{label}: cannot read {text!r}: {e}") from None
    raise EditError(f"{label}: unknown kind {kind}")


INT_LIMIT = limits.MAX_INT
"""The largest integer the file format reads (a 64-bit signed integer)."""
ID_LIMIT = limits.MAX_ID


def check_int(attr: str, value: Any, label: str = "value") -> None:
    """Refuse an integer the file format cannot read back (:func:`limits.check_int`;
    ids within 32 bits). Raises EditError."""
    try:
        limits.check_int(value, label, ID_LIMIT if attr == "id" else INT_LIMIT)
    except limits.ValueRangeError as e:
        raise EditError(str(e)) from None


def check_name(value: Any, label: str = "name") -> None:
    """Refuse a name the file format cannot hold, or one holding a control character
    (:func:`limits.check_name`): a value given as it is, not typed as text. Raises
    EditError."""
    try:
        limits.check_name(value, label)
    except limits.ValueRangeError as e:
        raise EditError(str(e)) from None


def set_value(machine: Machine, ref: str, text: str) -> Slot:
    """Set the value ``ref`` names from ``text``; returns the slot. Raises EditError."""
    s = slot(machine, ref)
    s.set(parse_value(s.kind, text, s.label))
    return s


# --------------------------------------------------------------------------- scalers


def group_scaling(
    machine: Machine, group: str, factor: float, processor_id: int | None = None
) -> list[tuple[Processor, str, Timing]]:
    """What multiplying every timing of ``group`` (mean and standard deviation) by
    ``factor`` gives, on one processor type or on all, without changing anything:
    (processor, instruction, scaled timing) for each member a processor has. Raises
    EditError for an unknown group or processor, a factor that is not a positive finite
    number, or a result too large to represent."""
    if group not in params.GROUPS:
        raise EditError(f"unknown group '{group}' (known: {', '.join(params.GROUPS)})")
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or not math.isfinite(factor)
        or factor <= 0
    ):
        raise EditError(f"a scale factor must be a positive number, not {factor!r}")
    procs: list[Processor]
    if processor_id is None:
        procs = list(machine.processors)
    else:
        proc = machine.processor(processor_id)
        if proc is None:
            raise EditError(f"there is no processor with id {processor_id}")
        procs = [proc]
    members = params.GROUPS[group].members
    scaled: list[tuple[Processor, str, Timing]] = []
    for proc in procs:
        for name in members:
            timing = proc.timings.get(name)
            if timing is None:
                continue
            new = timing.scaled(factor)
            what = f"scaling '{name}' of processor {proc.id} by {factor:g}"
            try:
                limits.check_scaled(timing.mean, new.mean, what)
                limits.check_scaled(timing.sd, new.sd, what + " (its standard deviation)")
            except limits.ValueRangeError as e:
                raise EditError(str(e)) from None
            scaled.append((proc, name, new))
    return scaled


def scale_group(
    machine: Machine, group: str, factor: float, processor_id: int | None = None
) -> int:
    """Multiply every timing of ``group`` by ``factor`` (:func:`group_scaling`), all or
    nothing. Returns how many timings changed."""
    scaled = group_scaling(machine, group, factor, processor_id)
    for proc, name, timing in scaled:
        proc.timings[name] = timing
    return len(scaled)


# --------------------------------------------------------------------------- structure


def retarget(node: Any, old_id: int, new_id: int) -> Any:
    """A tree with processor references to ``old_id`` pointed at ``new_id``."""
    from dataclasses import replace

    from parasol_core.model.tree import Binary, Call, Unary

    if isinstance(node, Reference):
        if node.prefix in ("pr", "pt", "pc", "po") and node.indices == (old_id,):
            return replace(node, indices=(new_id,))
        return node
    if isinstance(node, Binary):
        return replace(node, left=retarget(node.left, old_id, new_id),
                       right=retarget(node.right, old_id, new_id))  # fmt: skip
    if isinstance(node, Unary):
        return replace(node, operand=retarget(node.operand, old_id, new_id))
    if isinstance(node, Call):
        return replace(node, arg=retarget(node.arg, old_id, new_id))
    return node


def copy_processor(proc: Processor, new_id: int, name: str | None = None) -> Processor:
    """A new processor type with the timings, cache and combinations of ``proc``; its
    combinations refer to the copy itself where the original's referred to the original."""
    cache = None
    if proc.cache is not None:
        c = proc.cache
        cache = Cache(c.size, c.speed, c.smallloopspeedup)
    combinations = {}
    for key, expr in proc.combinations.items():
        if proc.id is None:
            combinations[key] = Expression(expr.text, expr.tree, expr.offset)
        else:
            tree = retarget(expr.tree, proc.id, new_id)
            combinations[key] = (
                Expression(expr.text, expr.tree, expr.offset)
                if tree == expr.tree
                else Expression.from_tree(tree)
            )
    return Processor(
        new_id,
        name if name is not None else f"{proc.name or 'processor'} (copy)",
        dict(proc.timings),
        cache,
        combinations,
    )
