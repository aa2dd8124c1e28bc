"""What the model file format can hold, in one place.

Every value that goes into a model (typed in a window, given to `parasol-model set`,
made by a generator) is checked here before anything is written, so that a saved file
always reads back. The ranges are those of the grammar (``grammar/machine.lark``) and
the loader (:mod:`parasol_core.syntax.parser`):

* an integer is written as decimal digits, with no sign: 0 to 2**63 - 1;
* a timing (a float, and its standard deviation) is a finite number; its shortest
  round-trip text is always one the grammar reads;
* a name is a string in double quotes: no ``"``, no line end, and only characters
  that UTF-8 can store;
* no line may be longer than :data:`MAX_LINE_LENGTH` characters.

Semantic limits (ids above 2**31 - 1, negative timings) are the validator's: a file
holding them loads, with diagnostics. These checks are only about loading at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MAX_INT = 2**63 - 1
MAX_ID = 2**31 - 1
"""The largest id (ids are 32-bit in the PARASOL II tools)."""
MIN_INT = 0
MAX_PHASE_MESSAGES = 1_000_000
"""The most messages one communication phase may have (the estimator refuses more)."""
MAX_LINE_LENGTH = 1_000_000
LINE_ENDS = "\n\r\x0b"


class ValueRangeError(ValueError):
    """A value the file format cannot hold; the message says why."""


def check_int(value: object, what: str = "a number", largest: int = MAX_INT) -> int:
    """``value`` if it is an integer the file can hold (and at most ``largest``: ids
    take :data:`MAX_ID`), else ValueRangeError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueRangeError(f"{what} must be a whole number, not {value!r}")
    if value < MIN_INT:
        raise ValueRangeError(f"{what} cannot be negative ({value}): the file format "
                              "has no sign for whole numbers")  # fmt: skip
    if value > largest:
        shown = str(value) if value.bit_length() < 200 else f"a {len(str(value))}-digit number"
        raise ValueRangeError(f"{what} is too large ({shown}): the largest the file "
                              f"format holds is {largest}")  # fmt: skip
    return value


def check_ints(values: Iterable[object], what: str = "a number") -> list[int]:
    return [check_int(v, what) for v in values]


def check_float(value: object, what: str = "a number") -> float:
    """``value`` as a finite float, else ValueRangeError (inf and nan cannot be written)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueRangeError(f"{what} must be a number, not {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueRangeError(f"{what} is too large for a floating-point number") from None
    if not math.isfinite(number):
        raise ValueRangeError(f"{what} must be a finite number, not {number!r}")
    return number


def check_name(value: object, what: str = "a name") -> str:
    """A string the file can hold between double quotes, else ValueRangeError."""
    text = str(value)
    bad = next((c for c in text if c == '"' or c in LINE_ENDS), None)
    if bad is not None:
        raise ValueRangeError(f"{what} cannot contain {bad!r}")
    check_text(text, what)
    return text


def check_text(text: str, what: str = "a value") -> str:
    """Text the file can store: UTF-8 encodable and within the line length limit."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueRangeError(
            f"{what} holds {text[e.start]!r}, which is not a character a UTF-8 file can hold"
        ) from None
    if len(text) > MAX_LINE_LENGTH - 100:
        raise ValueRangeError(
            f"{what} is too long ({len(text):,} characters; a line of a model file holds "
            f"at most {MAX_LINE_LENGTH:,})"
        )
    return text


# --------------------------------------------------------------------------- reading

MAX_FILE_BYTES = 512 * 1024 * 1024
_CHUNK = 1 << 20


def read_model_bytes(path: str) -> bytes:
    """The bytes of a model file, read in chunks that stop early: at the first byte
    that is not UTF-8, or once a line has grown past the line length limit (the loader
    then reports either at its line and column from what was read), or past
    :data:`MAX_FILE_BYTES` (ValueRangeError). ``check /dev/zero`` reads 4 MB, not
    gigabytes. Raises OSError as ``open`` does."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    chunks: list[bytes] = []
    size = 0
    run = 0  # bytes since the last line break
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                break  # the loader reports the byte where it is
            at = max(chunk.rfind(c) for c in (b"\n", b"\r", b"\x0b", b";"))
            run = len(chunk) - at - 1 if at >= 0 else run + len(chunk)
            # a UTF-8 character has at most 4 bytes: this many is surely too long a line
            if run > 4 * MAX_LINE_LENGTH + 4:
                break
            if size > MAX_FILE_BYTES:
                raise ValueRangeError(
                    f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, the limit "
                    "for a model file; stopped reading"
                )
    return b"".join(chunks)
