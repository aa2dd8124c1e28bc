"""The protocol's binary framing: a JSON-RPC message with its arrays as raw bytes.

A body of type :data:`BINARY_TYPE` is the JSON text of a JSON-RPC request or response
(a batch too), padded with spaces, then one newline byte (LF), then the **attachment**:
raw little-endian arrays. The JSON text never holds a raw LF (JSON escapes it in
strings), so the first LF ends it. The attachment starts at a multiple of 8 bytes from
the start of the body, and so does every column in it.

Inside the JSON, a **column** is an object with exactly the keys ``dtype`` (``"<i2"``,
``"<i4"`` or ``"<i8"``: little-endian signed integers of 2, 4 or 8 bytes), ``offset``
(bytes from the start of the attachment) and ``count`` (elements), which is
``numpy.frombuffer(attachment, dtype, count, offset)``. A server answers in this form
only when a request asked for it (``route.plot_many``'s ``encoding: "binary"``); a
client may send its own arrays this way (``pairs``), with the same content type.

Shared by the server and the client; numpy is the only import beyond the standard
library. See ``docs/estimator.md``, "Binary framing".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from parasol_core.base.words import counted

__all__ = [
    "BINARY_TYPE",
    "COLUMN_KEYS",
    "DTYPES",
    "Binary",
    "ColumnRef",
    "FramingError",
    "frame",
    "narrow",
    "split",
]

BINARY_TYPE = "application/vnd.parasol-estimator.binary"
DTYPES = ("<i2", "<i4", "<i8")
COLUMN_KEYS = frozenset(("dtype", "offset", "count"))
ALIGN = 8


class FramingError(ValueError):
    """A body in the binary framing that is not one."""


class Binary:
    """A method's result whose ``columns`` travel in the attachment.

    ``result`` is the JSON part; each column goes into it, by name, as a column object.
    The attachment is built here, on the method's worker thread, so that the event loop
    only has to join it to the JSON text. ``bounds`` may give a column's lowest and
    highest value where the caller knows them (else the values are scanned) to pick the
    narrowest dtype; a bound that is wrong would corrupt the column, so give only
    bounds that hold by construction."""

    __slots__ = ("attachment", "refs", "result")

    def __init__(
        self,
        result: dict[str, Any],
        columns: Mapping[str, np.ndarray],
        bounds: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        self.result = result
        layout: list[tuple[int, np.ndarray, str]] = []
        self.refs: dict[str, dict[str, Any]] = {}
        size = 0
        for name, values in columns.items():
            dtype = narrow(values, (bounds or {}).get(name))
            self.refs[name] = {"dtype": dtype, "offset": size, "count": int(values.size)}
            layout.append((size, values, dtype))
            size += values.size * np.dtype(dtype).itemsize
            size += _pad(size)
        self.attachment = bytearray(size)
        for offset, values, dtype in layout:
            view = np.frombuffer(self.attachment, dtype=dtype, count=values.size, offset=offset)
            view[...] = values  # narrowed in the copy: no intermediate array


class ColumnRef:
    """A column object of a binary request, not yet checked against the attachment."""

    __slots__ = ("attachment", "spec")
    protocol_kind = "a binary column"

    def __init__(self, attachment: memoryview, spec: dict) -> None:
        self.attachment = attachment
        self.spec = spec

    def array(self, name: str) -> np.ndarray:
        """The column as a read-only array; ValueError (saying what) if it is not one."""
        dtype, offset, count = (self.spec.get(k) for k in ("dtype", "offset", "count"))
        if dtype not in DTYPES:
            raise ValueError(f"'{name}': dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
        for key, value in (("offset", offset), ("count", count)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"'{name}': {key} must be an integer, 0 or more")
        size = np.dtype(dtype).itemsize
        if offset + count * size > len(self.attachment):
            raise ValueError(
                f"'{name}': bytes {offset} to {offset + count * size} are beyond the "
                f"attachment ({counted(len(self.attachment), 'byte')})"
            )
        return np.frombuffer(self.attachment, dtype=dtype, count=count, offset=offset)


def narrow(values: np.ndarray, bounds: tuple[int, int] | None = None) -> str:
    """The narrowest of :data:`DTYPES` that holds every value of a whole-number array
    (``bounds``: its lowest and highest value, if known)."""
    if values.size == 0:
        return "<i2"
    low, high = bounds if bounds is not None else (int(values.min()), int(values.max()))
    if -(2**15) <= low and high < 2**15:
        return "<i2"
    if -(2**31) <= low and high < 2**31:
        return "<i4"
    return "<i8"


def _pad(n: int) -> int:
    return -n % ALIGN


def frame(message: Any, dumps: Any) -> bytes:
    """``message`` (a response object or a batch of them, whose results may be
    :class:`Binary`) as a body in the binary framing; ``dumps`` serializes JSON."""
    answers = message if isinstance(message, list) else [message]
    parts: list[bytes | bytearray] = []
    size = 0
    framed = []  # new answer objects: ``message`` is left as it was (encoded again if
    for answer in answers:  # ``dumps`` refuses it)
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, Binary):
            framed.append(answer)
            continue
        out = dict(result.result)
        for name, ref in result.refs.items():
            out[name] = ref | {"offset": ref["offset"] + size}
        framed.append({**answer, "result": out})
        parts.append(result.attachment)
        size += len(result.attachment)  # a multiple of ALIGN
    text = dumps(framed if isinstance(message, list) else framed[0])
    return b"".join((text, b" " * _pad(len(text) + 1), b"\n", *parts))


def split(body: bytes | bytearray) -> tuple[memoryview, memoryview]:
    """A binary-framed body as ``(JSON text, attachment)``, both views of ``body``."""
    end = body.find(b"\n")
    if end < 0:
        raise FramingError("a binary body must hold JSON text, a newline, then the attachment")
    view = memoryview(body)
    return view[:end], view[end + 1 :]


def columns_of(result: Any, attachment: memoryview) -> Any:
    """``result`` with each top-level column object replaced by its array (read-only,
    a view of the attachment)."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    for key, value in result.items():
        if isinstance(value, dict) and value.keys() == COLUMN_KEYS:
            out[key] = ColumnRef(attachment, value).array(key)
    return out
