"""What a session knows of its file on disk: the bytes it read or last wrote, so that it
can tell when another program (a text editor, `parasol-model set -i`, a checkout) has
changed the file since, and never save over that change without asking.

A :class:`Stamp` holds the file's identity and size and modification time, which a
``stat`` compares cheaply, and a digest of its content, read only when the ``stat``
differs: a file touched but not changed is not reported.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from parasol_core.base.words import counted

UNKNOWN = "unknown"  # the session has no file, or did not read the one it names
UNCHANGED = "unchanged"
CHANGED = "changed"
MISSING = "missing"  # deleted or moved away

#: The longest texts (in lines, the two together) a difference is computed for: difflib
#: takes time quadratic in the lines that differ.
MAX_DIFF_LINES = 200_000


class Stamp:
    """The file's ``stat`` identity (device, inode, size, modification time) and a
    digest of its bytes.

    The digest of a file the session has just written is computed from the text it
    wrote when first asked for (``status`` asks only when the ``stat`` differs): a save
    does not read its file back or hash a text it may never need to compare."""

    __slots__ = ("dev", "ino", "size", "mtime_ns", "_digest", "_text")

    def __init__(self, dev: int, ino: int, size: int, mtime_ns: int,
                 digest: bytes | None = None, text: str | None = None) -> None:  # fmt: skip
        if digest is None and text is None:
            raise ValueError("a stamp needs the digest or the text it is of")
        self.dev, self.ino, self.size, self.mtime_ns = dev, ino, size, mtime_ns
        self._digest = digest
        self._text = text  # the text written (UTF-8), until its digest is computed

    @property
    def digest(self) -> bytes:
        if self._digest is None:
            assert self._text is not None
            self._digest = _digest_text(self._text)
            self._text = None
        return self._digest

    @classmethod
    def of(cls, data: bytes, st: os.stat_result) -> Stamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, _digest(data))

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.dev, self.ino, self.size, self.mtime_ns) == (
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stamp):
            return NotImplemented
        return (self.dev, self.ino, self.size, self.mtime_ns, self.digest) == (
            other.dev, other.ino, other.size, other.mtime_ns, other.digest)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Stamp(dev={self.dev}, ino={self.ino}, size={self.size}, "
                f"mtime_ns={self.mtime_ns})")  # fmt: skip


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


#: Characters of text encoded and hashed at a time: one piece at a time in memory.
_CHUNK = 1 << 16


def _digest_text(text: str) -> bytes:
    """The digest of ``text`` encoded as UTF-8, equal to ``_digest(text.encode())``,
    without a whole encoded copy (a surrogate pair is never split: the text is
    UTF-8-encodable, so it holds no lone surrogate, and a str holds no pairs)."""
    h = hashlib.blake2b(digest_size=16)
    for i in range(0, len(text), _CHUNK):
        h.update(text[i : i + _CHUNK].encode("utf-8"))
    return h.digest()


def read_with_stat(path: str | Path) -> tuple[bytes, os.stat_result]:
    """The bytes of ``path`` and the ``stat`` of the file they were read from (one
    open: a writer replacing the file meanwhile cannot make the two disagree)."""
    from parasol_core.base.limits import MAX_FILE_BYTES, open_input, too_large

    with open_input(path) as f:  # a regular file only: a FIFO would block, /dev/zero not end
        st = os.fstat(f.fileno())
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, too_large(path, MAX_FILE_BYTES, "a model file"), str(path))
    return data, st


def read_stamped(path: str | Path) -> tuple[bytes, Stamp]:
    """The bytes of ``path`` and the stamp of exactly those bytes."""
    data, st = read_with_stat(path)
    return data, Stamp.of(data, st)


def stamp_read(data: bytes, st: os.stat_result, text: str | None) -> Stamp:
    """The stamp of ``data`` as read (``st``), given the text it was decoded to: when
    that text is ASCII and as long as the bytes it is the very bytes, so the digest is
    computed from it when first asked for (as for a file just written; opening the
    1,000,000-processor model spent 0.8 s hashing 570 MB it may never compare); else
    now, from the bytes."""
    if text is not None and len(text) == len(data) and text.isascii():
        return Stamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, text=text)
    return Stamp.of(data, st)


def stamp_written(path: str | Path, text: str) -> Stamp | None:
    """The stamp of a file just written with ``text`` (UTF-8, as the writer writes): its
    digest is computed from ``text`` when first needed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Stamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, text=text)


def status(path: str | Path | None, known: Stamp | None) -> str:
    """How the file at ``path`` stands against what was read or written (``known``)."""
    if path is None or known is None:
        return UNKNOWN
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    if known.same_stat(st):
        return UNCHANGED
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device put in its place: never read
        return CHANGED
    try:
        data, _ = read_stamped(path)
    except FileNotFoundError:
        return MISSING
    return UNCHANGED if _digest(data) == known.digest else CHANGED


def refreshed(path: str | Path, known: Stamp) -> Stamp:
    """``known`` with the file's present ``stat`` (the same content, touched)."""
    st = os.stat(path)
    if known.same_stat(st):
        return known
    # the digest as known (computed or not yet)
    return Stamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, known._digest, known._text)


class DiffTooLarge(ValueError):
    """The texts are too long to compare within the budget."""


def difference(disk: str, mine: str, name: str, mine_label: str = "edited",
               limit: int = MAX_DIFF_LINES) -> str:  # fmt: skip
    """A unified difference from the text on disk to the text that would be saved
    (``name (mine_label)``). Refused (DiffTooLarge, naming both counts) past ``limit``
    lines."""
    import difflib  # only when a difference is asked for: not at start-up

    a, b = disk.splitlines(keepends=True), mine.splitlines(keepends=True)
    if len(a) + len(b) > limit:
        raise DiffTooLarge(f"the two texts have {counted(len(a) + len(b), 'line')} together, more "
                           f"than the {limit:,} that are compared")  # fmt: skip
    lines = difflib.unified_diff(a, b, f"{name} (on disk)", f"{name} ({mine_label})")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
