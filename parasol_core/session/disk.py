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
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "unknown"  # the session has no file, or did not read the one it names
UNCHANGED = "unchanged"
CHANGED = "changed"
MISSING = "missing"  # deleted or moved away

#: The longest texts (in lines, the two together) a difference is computed for: difflib
#: takes time quadratic in the lines that differ.
MAX_DIFF_LINES = 200_000


@dataclass(frozen=True)
class Stamp:
    dev: int
    ino: int
    size: int
    mtime_ns: int
    digest: bytes

    @classmethod
    def of(cls, data: bytes, st: os.stat_result) -> Stamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, _digest(data))

    def same_stat(self, st: os.stat_result) -> bool:
        return (self.dev, self.ino, self.size, self.mtime_ns) == (
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # fmt: skip


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def read_stamped(path: str | Path) -> tuple[bytes, Stamp]:
    """The bytes of ``path`` and the stamp of exactly those bytes (one open: a writer
    replacing the file meanwhile cannot make the two disagree)."""
    from parasol_core.limits import MAX_FILE_BYTES, open_input, too_large

    with open_input(path) as f:  # a regular file only: a FIFO would block, /dev/zero not end
        st = os.fstat(f.fileno())
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, too_large(path, MAX_FILE_BYTES, "a model file"), str(path))
    return data, Stamp.of(data, st)


def stamp_written(path: str | Path, text: str) -> Stamp | None:
    """The stamp of a file just written with ``text`` (UTF-8, as the writer writes)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Stamp.of(text.encode("utf-8"), st)


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
    return Stamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, known.digest)


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
        raise DiffTooLarge(f"the two texts have {len(a) + len(b):,} lines together, more "
                           f"than the {limit:,} that are compared")  # fmt: skip
    lines = difflib.unified_diff(a, b, f"{name} (on disk)", f"{name} ({mine_label})")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
