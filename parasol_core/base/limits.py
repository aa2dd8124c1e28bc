"""What the model file format can hold, in one place.

Every value that goes into a model (typed in a window, given to `parasol-model set`,
made by a generator) is checked here before anything is written, so that a saved file
always reads back. The ranges are those of the grammar (``grammar/machine.lark``) and
the loader (:mod:`parasol_core.syntax.loader`):

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

import errno
import math
import os
import stat
from collections.abc import Iterable
from typing import BinaryIO

# Defined with the number reader (parasol_core.base.numeric) and read here too, by their
# old home's name: a value the format cannot hold, and the one check of a number's text.
from parasol_core.base.numeric import SMALLEST_NORMAL as SMALLEST_NORMAL
from parasol_core.base.numeric import ValueRangeError as ValueRangeError
from parasol_core.base.numeric import finite_product
from parasol_core.base.numeric import float_text as float_text
from parasol_core.base.words import counted

MAX_INT = 2**63 - 1
MAX_ID = 2**31 - 1
"""The largest id (ids are 32-bit in the PARASOL II tools)."""
MIN_INT = 0
MAX_PHASE_MESSAGES = 1_000_000
"""The most messages one communication phase may have (the estimator refuses more)."""
MAX_LINE_LENGTH = 1_000_000
LINE_ENDS = "\n\r\x0b"


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


def check_scaled(before: float | None, after: float | None, what: str) -> None:
    """Refuse a product that overflowed or underflowed (:func:`numeric.finite_product`)."""
    finite_product(before, after, what)


def json_float(text: str) -> float:
    """``parse_float`` for ``json.loads``: a JSON number's float, refusing overflow and
    underflow (:func:`float_text`) with ValueRangeError instead of a silent 0.0."""
    return float_text(text)


_TINY_JSON = None


def json_underflow(body: bytes) -> str | None:
    """Why a JSON text holds a number a double cannot hold (:func:`float_text`), or
    None. orjson refuses 1e400 but reads 1e-400 as 0.0; this finds the latter. Cheap
    unless the text has an exponent of three digits or a long run of zeros."""
    import re

    global _TINY_JSON
    if _TINY_JSON is None:
        _TINY_JSON = re.compile(rb"[eE]-0*[1-9][0-9]{2}|\.0{300}")
    if _TINY_JSON.search(body) is None:
        return None
    import json

    found: list[str] = []

    def number(text: str) -> float:
        try:
            return float_text(text)
        except ValueRangeError as e:
            found.append(str(e))
            raise

    try:
        json.loads(body, parse_float=number)
    except ValueRangeError:
        return found[0] if found else None
    except (ValueError, RecursionError):
        return None  # not JSON: its parser has already said so
    return None


def check_name(value: object, what: str = "a name") -> str:
    """A string the file can hold between double quotes, else ValueRangeError."""
    text = str(value)
    bad = next((c for c in text if c == '"' or c in LINE_ENDS), None)
    if bad is not None:
        raise ValueRangeError(f"{what} cannot contain {bad!r}")
    bad = control_character(text)
    if bad is not None:
        raise ValueRangeError(f"{what} cannot contain {bad!r} (a control character)")
    check_text(text, what)
    return text


def blank_name(value: object, label: str = "name") -> str | None:
    """Why ``value`` cannot be a name because it is blank (empty or only spaces: the
    model, its windows and its file would show nothing for it), or None."""
    if isinstance(value, str) and not value.strip():
        return (f"{label}: a name cannot be blank: the model would show nothing for it; "
                "give it a visible character")  # fmt: skip
    return None


def control_character(text: str) -> str | None:
    """The first control character in ``text`` (NUL, escape, ... ; a tab is allowed), or
    None. A name holding one would print raw to a terminal."""
    return next((c for c in text if (c < " " and c != "\t") or "\x7f" <= c <= "\x9f"), None)


def printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\x00``), for printing a name a
    file holds (the grammar lets a file hold any character but a quote or line end)."""
    if control_character(text) is None:
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if control_character(c)
                   else c for c in text)  # fmt: skip


#: The longest text from outside (a CPU's name, a compiler's version line, $CC, a host's
#: name) a model or a message takes; past it the text is cut, with "..." at the end.
MAX_OUTSIDE_TEXT = 200


def outside_text(value: str | bytes, limit: int = MAX_OUTSIDE_TEXT, lines: bool = False
                 ) -> str:  # fmt: skip
    """Text from outside the program (the environment, the operating system, another
    program's output) as it may go into a model or onto a terminal: bytes that are not
    UTF-8 (or a str holding their surrogate escapes) become U+FFFD; control and format
    characters (escape, NUL, bidirectional overrides, ...) are escaped (``\\x1b``);
    blanks and line ends become single spaces (with ``lines``, line ends stay, for a
    message of several lines); a double quote becomes a single one (a name in a model
    is quoted); the whole is cut to ``limit`` characters. Never raises."""
    import unicodedata

    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
    else:
        text = (
            str(value).encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
        )
    if len(text) > 4 * limit:  # no work in proportion to a 2 MB name
        text = text[: 4 * limit]
    out = []
    for c in text:
        if c == "\n" and lines:
            out.append(c)
        elif c in " \t\n\r\x0b\x0c" or unicodedata.category(c) in ("Zl", "Zp", "Zs"):
            out.append(" ")
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(c.encode("unicode_escape").decode("ascii"))
        else:
            out.append("'" if c == '"' else c)
    text = "".join(out)
    if lines:
        text = "\n".join(" ".join(line.split()) for line in text.split("\n")).strip("\n")
    else:
        text = " ".join(text.split())
    if len(text) > limit:
        text = text[: max(limit - 3, 0)].rstrip() + "..."
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
            f"{what} is too long ({counted(len(text), 'character')}; a line of a model file holds "
            f"at most {MAX_LINE_LENGTH:,})"
        )
    return text


# --------------------------------------------------------------------------- reading

MAX_FILE_BYTES = 768 * 1024 * 1024
"""The most a model file may hold: room for the 100 x 100 x 100 torus (1,000,000
processors, 3,000,000 links, about 570 MB of text; issue 23)."""
MAX_DATA_FILE_BYTES = 16 * 1024 * 1024
"""The most a data file may hold: a counts file (``block``), a messages file
(``simulate``), a measurement file (``fit``)."""
_CHUNK = 1 << 20


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (from ``st_mode``)."""
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


class Unreadable:
    """Mixed into a command's error raised because an input file could not be read
    (absent, not a regular file, past its size limit): the command line exits 2 for it,
    as for any file that cannot be read (docs/manual.md, "Exit status"), not 1 as for
    a file read and found wrong."""


class NotRegularFileError(OSError):
    """An input that is not a regular file (a FIFO, a device, a socket): reading one can
    block forever or never end, so it is refused before it is read."""

    def __init__(self, path: str | os.PathLike, mode: int) -> None:
        super().__init__(errno.EINVAL, f"it is {file_kind(mode)}, not a regular file (reading "
                         "one can block or never end); give a regular file", str(path))  # fmt: skip
        self.kind = file_kind(mode)


def file_name_arg(text: str) -> str:
    """A command-line argument that names a file (an argparse ``type``): an empty name is
    refused (argparse.ArgumentTypeError, a usage error), as pathlib would take it as the
    current folder: an empty TRACE replayed an OTF2 archive found there, an empty
    ``--store`` meant the default store."""
    import argparse

    if text == "":
        raise argparse.ArgumentTypeError(
            "an empty file name (a path of no characters would be taken as the current "
            "folder); give a file")  # fmt: skip
    return text


def open_input(path: str | os.PathLike) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file. A directory raises
    IsADirectoryError; a FIFO, device or socket :class:`NotRegularFileError`, without
    blocking (the open does not wait for a FIFO's writer). Otherwise OSError as ``open``."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(path, st.st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode  # replaced by a FIFO between the stat and the open
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, mode)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_head(path: str | os.PathLike, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (:func:`open_input`): to
    tell what a file is without reading it whole (``/dev/zero`` never ends)."""
    with open_input(path) as f:
        return f.read(size)


def too_large(path: str | os.PathLike, limit: int, what: str) -> str:
    """The message for a file past its size limit, naming the limit."""
    return (f"{path}: larger than {limit // (1024 * 1024)} MB ({counted(limit, 'byte')}), the "
            f"limit for {what}; stopped reading")  # fmt: skip


def read_capped(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_input`), at most ``limit``;
    a larger file raises ValueRangeError naming the limit and ``what`` it is for, after
    reading ``limit + 1`` bytes and no more."""
    with open_input(path) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueRangeError(too_large(path, limit, what))
    return data


class CutBytes(bytes):
    """The bytes of a model file read up to a line too long to keep: ``line_length`` is
    that line's true length in characters (counted to its end, not stored), so that the
    loader's message says it rather than the length of the part read."""

    line_length: int


def _characters(data: bytes) -> int:
    """How many UTF-8 characters ``data`` holds (continuation bytes not counted)."""
    if data.isascii():
        return len(data)
    return len(data) - sum(data.count(bytes([b])) for b in range(0x80, 0xC0))


_BREAK_BYTES = (b"\n", b"\r", b"\x0b", b";")


def _rest_of_line(f: BinaryIO, budget: int) -> int:
    """Characters from here to the next line break (or the end, or ``budget`` bytes)."""
    count = 0
    while budget > 0:
        chunk = f.read(min(_CHUNK, budget))
        if not chunk:
            break
        budget -= len(chunk)
        ends = [i for i in (chunk.find(c) for c in _BREAK_BYTES) if i >= 0]
        if ends:
            return count + _characters(chunk[: min(ends)])
        count += _characters(chunk)
    return count


def read_model_bytes(path: str) -> bytes:
    """The bytes of a model file, read in chunks that stop early: at the first byte
    that is not UTF-8, or once a line has grown past the line length limit (the loader
    then reports either at its line and column from what was read), or past
    :data:`MAX_FILE_BYTES` (ValueRangeError). Only a regular file is read
    (:func:`open_input`): a FIFO or a device raises NotRegularFileError, an OSError.
    Raises OSError as ``open`` does."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    chunks: list[bytes] = []
    size = 0
    run = 0  # bytes since the last line break
    with open_input(path) as f:
        if os.fstat(f.fileno()).st_size > MAX_FILE_BYTES:  # known before reading any
            raise ValueRangeError(too_large(path, MAX_FILE_BYTES, "a model file"))
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
                data = b"".join(chunks)
                pending = len(decoder.getstate()[0])  # a character cut by the chunk's end
                cut = CutBytes(data[: len(data) - pending])
                cut.line_length = _characters(data[len(data) - run :]) + _rest_of_line(
                    f, MAX_FILE_BYTES - size
                )
                return cut
            if size > MAX_FILE_BYTES:
                raise ValueRangeError(too_large(path, MAX_FILE_BYTES, "a model file"))
    return b"".join(chunks)
