"""The messages of a communication phase: what a phase is made of, read from JSON or
built as numpy arrays, and the error that names a wrong one. Both the pattern builders
(:mod:`.patterns`) and the event trace (:mod:`.phases`) use them; neither imports the
other for them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class PhaseError(ValueError):
    """A phase that cannot be simulated: an unknown processor or virtual topology, a
    route that cannot be plotted, a negative size or start, a cycle in ``after``, a
    malformed message list. The message says which message is wrong."""


class PhaseOverflowError(PhaseError):
    """A phase whose times would pass the largest double (about 1.8e308 s), or whose
    nonzero time a byte times a size underflows to 0: the message names the message
    and the values (a link's timing, the forwarding annotation and its line, a start)
    that make it. No result of a phase is NaN or infinite; this is raised instead."""


@dataclass(frozen=True)
class Message:
    """One message of a phase (``after``: indices into the phase's message list)."""

    src: int
    dst: int
    bytes: float
    start: float = 0.0
    after: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"src": self.src, "dst": self.dst, "bytes": self.bytes}
        if self.start:
            out["start"] = self.start
        if self.after:
            out["after"] = list(self.after)
        return out


class MessageArrays:
    """Many messages as numpy arrays (what the pattern generators build and the trace
    runs on). ``after``: message ``i`` waits for ``after_idx[after_ptr[i]:after_ptr[i+1]]``;
    both None when no message waits for another. ``delay`` (seconds, None for none):
    message ``i`` starts ``delay[i]`` after it could otherwise start, the later of its
    ``start`` and the end of the last message it waits for (what a replayed program
    computes between two of its messages, :mod:`parasol_core.replay`)."""

    def __init__(
        self,
        src: Any,
        dst: Any,
        nbytes: Any,
        start: Any = None,
        after_ptr: np.ndarray | None = None,
        after_idx: np.ndarray | None = None,
        delay: Any = None,
    ) -> None:
        self.src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        self.dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        n = self.src.shape[0]
        self.nbytes = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), (n,)).copy()
        self.start = (
            np.zeros(n)
            if start is None
            else np.broadcast_to(np.asarray(start, dtype=np.float64), (n,)).copy()
        )
        self.after_ptr = after_ptr
        self.after_idx = after_idx
        self.delay = (
            None
            if delay is None
            else np.broadcast_to(np.asarray(delay, dtype=np.float64), (n,)).copy()
        )
        if self.dst.shape != (n,):
            raise PhaseError("src and dst must have the same length")
        if (after_ptr is None) != (after_idx is None):
            raise PhaseError("after_ptr and after_idx go together")
        if after_ptr is not None and (
            after_ptr.shape != (n + 1,) or after_ptr[-1] != len(after_idx)
        ):
            raise PhaseError("after_ptr must have one entry per message, plus one")

    def __len__(self) -> int:
        return self.src.shape[0]

    @classmethod
    def from_messages(cls, messages: Sequence[Message]) -> MessageArrays:
        n = len(messages)
        src = np.fromiter((m.src for m in messages), dtype=np.int64, count=n)
        dst = np.fromiter((m.dst for m in messages), dtype=np.int64, count=n)
        nbytes = np.fromiter((m.bytes for m in messages), dtype=np.float64, count=n)
        start = np.fromiter((m.start for m in messages), dtype=np.float64, count=n)
        ptr = idx = None
        if any(m.after for m in messages):
            lengths = np.fromiter((len(m.after) for m in messages), dtype=np.int64, count=n)
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=ptr[1:])
            idx = np.fromiter(
                (a for m in messages for a in m.after), dtype=np.int64, count=int(ptr[-1])
            )
        return cls(src, dst, nbytes, start, ptr, idx)

    def after_of(self, i: int) -> tuple[int, ...]:
        if self.after_ptr is None:
            return ()
        return tuple(int(a) for a in self.after_idx[self.after_ptr[i] : self.after_ptr[i + 1]])

    def to_messages(self) -> list[Message]:
        src, dst = self.src.tolist(), self.dst.tolist()
        nbytes, start = self.nbytes.tolist(), self.start.tolist()
        return [
            Message(src[i], dst[i], nbytes[i], start[i], self.after_of(i)) for i in range(len(self))
        ]


# --------------------------------------------------------------------------- input


_KEYS = {"src", "dst", "bytes", "start", "after"}


def _shown(value: Any) -> str:
    """A number as the message shows it: exact, and a huge integer by its length."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"a {len(str(abs(value)))}-digit number"
    return repr(value)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise PhaseError(f"{what} must be an integer, got {_shown(value)}")
    if not -(2**63) <= value < 2**63:
        raise PhaseError(f"{what} is out of range: {_shown(value)}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PhaseError(f"{what} must be a number, got {_shown(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer past 1.8e308: 10**400 bytes
        raise PhaseError(f"{what} is too large to represent ({_shown(value)}; the largest "
                         "number is about 1.8e308)") from None  # fmt: skip
    if not math.isfinite(x) or x < 0:
        raise PhaseError(f"{what} must be zero or positive, got {_shown(value)}")
    return x


def _processor(value: Any, what: str, names: Mapping[str, int] | None) -> int:
    """A message's end: an integer, or (given ``names``, a topology's
    ``# piui: names`` by name) a processor's name."""
    if isinstance(value, str) and names is not None:
        if value in names:
            return names[value]
        table = getattr(names, "table", None)  # a topology's names (topology.names.ByName)
        if table is not None:  # the one rule's words: the name, and some names there are
            from parasol_core.topology.names import refusal

            raise PhaseError(refusal(table, value[:80], what))
        raise PhaseError(f"{what} {value[:80]!r} is no processor's name in the topology")
    return _int(value, what)


def parse_messages(data: Any, names: Mapping[str, int] | None = None) -> list[Message]:
    """Messages from decoded JSON: a list of ``{"src", "dst", "bytes", "start"?,
    "after"?}`` objects (``Message`` objects pass through); with ``names`` (name ->
    processor number), ``src`` and ``dst`` may be processors' names."""
    if not isinstance(data, list):
        raise PhaseError(f"a message list must be a JSON list, got {type(data).__name__}")
    out = []
    for i, item in enumerate(data):
        if isinstance(item, Message):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise PhaseError(f"message {i}: expected an object, got {item!r}")
        unknown = set(item) - _KEYS
        if unknown:
            raise PhaseError(
                f"message {i}: unknown field(s) {', '.join(sorted(map(str, unknown)))} "
                "(known: src, dst, bytes, start, after)"
            )
        for key in ("src", "dst", "bytes"):
            if key not in item:
                raise PhaseError(f"message {i}: missing {key!r}")
        after = item.get("after", [])
        if not isinstance(after, list):
            raise PhaseError(f"message {i}: 'after' must be a list of message indices")
        out.append(
            Message(
                _processor(item["src"], f"message {i}: src", names),
                _processor(item["dst"], f"message {i}: dst", names),
                _number(item["bytes"], f"message {i}: bytes"),
                _number(item.get("start", 0.0), f"message {i}: start"),
                tuple(_int(a, f"message {i}: after") for a in after),
            )
        )
    return out


def load_messages(path: str | Path, names: Mapping[str, int] | None = None) -> list[Message]:
    """Messages from a JSON file (see :func:`parse_messages`), a regular file of at most
    :data:`~parasol_core.base.limits.MAX_DATA_FILE_BYTES` (a larger one raises ValueRangeError);
    OSError if unreadable."""
    from parasol_core.base.limits import (
        MAX_DATA_FILE_BYTES,
        ValueRangeError,
        json_float,
        read_capped,
    )

    try:
        text = read_capped(path, MAX_DATA_FILE_BYTES, "a messages file").decode("utf-8")
    except UnicodeDecodeError as e:
        raise PhaseError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        data = json.loads(text, parse_float=json_float)
    except ValueRangeError as e:  # 1e-400 bytes: no silent 0.0
        raise PhaseError(f"{path}: {e}") from None
    except json.JSONDecodeError as e:
        raise PhaseError(f"{path}: not valid JSON: {e}") from None
    except (ValueError, RecursionError) as e:  # a 5000-digit integer, [[[[...]]]]
        raise PhaseError(f"{path}: not usable JSON: {str(e)[:200]}") from None
    if isinstance(data, list):
        from parasol_core.base import budget

        budget.check_phase(str(path), len(data))
    return parse_messages(data, names)


def _as_arrays(messages: Any) -> MessageArrays:
    """The messages as arrays; past the phase's limit in force (its message count, or
    its memory): BudgetError, before any is read (parasol_core.base.budget)."""
    from parasol_core.base import budget

    if isinstance(messages, MessageArrays):
        budget.check_phase("the phase", len(messages))
        return messages
    if isinstance(messages, (str, bytes)):
        try:
            messages = json.loads(messages)
        except json.JSONDecodeError as e:
            raise PhaseError(f"not valid JSON: {e}") from None
    if isinstance(messages, tuple):
        messages = list(messages)
    if isinstance(messages, list):
        budget.check_phase("the phase", len(messages))
    return MessageArrays.from_messages(parse_messages(messages))


def _check(arrays: MessageArrays) -> None:
    n = len(arrays)
    checked = [("bytes", arrays.nbytes), ("start", arrays.start)]
    if arrays.delay is not None:
        checked.append(("delay", arrays.delay))
    for name, values in checked:
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise PhaseError(f"message {i}: {name} must be zero or positive, got {values[i]!r}")
    if arrays.after_idx is not None:
        idx = arrays.after_idx
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            at = int(np.argmax(bad))
            i = int(np.searchsorted(arrays.after_ptr, at, side="right") - 1)
            raise PhaseError(
                f"message {i}: 'after' names message {int(idx[at])}, and there are "
                f"messages 0..{n - 1}"
            )
