"""Copies of unsaved edits, kept when a front end is stopped with nobody to ask, and
found again to be offered back.

PIUI stopped by SIGTERM, SIGINT or SIGHUP asks no question: it writes the model as it
would be saved to a copy (:func:`keep`). A model with a file keeps its copy beside it,
``NAME.unsaved``; a model never saved keeps it in the front end's data folder as
``unsaved-PID.machine``, PID the process that wrote it. The next time the model is
opened (a copy newer than its file, :func:`newer_copy`), or at the next start (a copy
in the data folder whose process is gone, :func:`orphans`), the front end asks whether
to restore it (:meth:`Session.restore`); the copy is removed only when the restored
model is saved or its edits are discarded. A copy older than its file is not offered:
the file was saved after it, so the copy holds nothing the user kept working on.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from parasol_core.base.numeric import ValueRangeError, read_int

SUFFIX = ".unsaved"  # beside a model file: NAME.unsaved
ORPHAN_PREFIX = "unsaved-"  # in the data folder: unsaved-PID.machine
ORPHAN_SUFFIX = ".machine"

# What the user may answer when offered a copy.
RESTORE = "restore"  # open the copy's content as unsaved changes of the model
KEEP = "keep"  # open the original (or nothing, for a copy of no file); the copy stays
DISCARD = "discard"  # delete the copy


@dataclass(frozen=True)
class Copy:
    """A copy of unsaved edits on disk."""

    path: Path
    written: float  # when it was written (seconds since the epoch)
    original: Path | None  # the model file it holds edits of; None: a model never saved
    pid: int | None = None  # the process that wrote it, for a copy of no file

    def when(self) -> str:
        """When it was written, in local time (``2026-11-28 13:05:12``)."""
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.written))

    def describe(self) -> str:
        """What the copy is, in a sentence, for the question that offers it back."""
        if self.original is not None:
            return (f"PIUI was stopped with unsaved edits to {self.original.name} and kept "
                    f"them in {self.path.name}, written {self.when()}, after the file was "
                    "last saved.")  # fmt: skip
        return (f"PIUI (process {self.pid}) was stopped with unsaved edits to a model that "
                f"was never saved, and kept them in {self.path}, written {self.when()}.")  # fmt: skip


def copy_beside(model: str | Path) -> Path:
    """Where the unsaved edits of the model file ``model`` are kept: ``NAME.unsaved``."""
    model = Path(model)
    return model.with_name(model.name + SUFFIX)


def orphan_path(folder: str | Path, pid: int) -> Path:
    """Where process ``pid`` keeps the unsaved edits of a model never saved."""
    return Path(folder) / f"{ORPHAN_PREFIX}{pid}{ORPHAN_SUFFIX}"


def copy_path(model: str | Path | None, folder: str | Path, pid: int) -> Path:
    """Where the unsaved edits of a model are kept: beside its file, else in ``folder``."""
    return copy_beside(model) if model is not None else orphan_path(folder, pid)


def keep(text: str, model: str | Path | None, folder: str | Path, pid: int) -> Path:
    """Write ``text`` (the model as it would be saved) to its copy (:func:`copy_path`),
    atomically; returns the copy's path. Raises OSError."""
    from parasol_core.syntax.writer import write_text_atomic

    kept = copy_path(model, folder, pid)
    kept.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(kept, text)
    return kept


def _regular_mtime(path: Path) -> float | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime if stat.S_ISREG(st.st_mode) else None


def newer_copy(model: str | Path) -> Copy | None:
    """The copy of unsaved edits beside ``model`` when there is one (a regular file)
    written after the file was last written; else None."""
    model = Path(model)
    copy = copy_beside(model)
    try:
        copy_st, model_st = os.stat(copy), os.stat(model)
    except OSError:
        return None
    if not stat.S_ISREG(copy_st.st_mode) or copy_st.st_mtime_ns <= model_st.st_mtime_ns:
        return None
    return Copy(copy, copy_st.st_mtime, model)


def pid_running(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def orphans(folder: str | Path, own_pid: int | None = None) -> list[Copy]:
    """The copies of never-saved models in ``folder`` whose process is no longer
    running (not ``own_pid``), newest first. A name that does not read as
    ``unsaved-PID.machine`` (PID in ASCII digits) is not PIUI's and is left alone."""
    folder = Path(folder)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        if not (name.startswith(ORPHAN_PREFIX) and name.endswith(ORPHAN_SUFFIX)):
            continue
        try:
            pid = read_int(name[len(ORPHAN_PREFIX) : -len(ORPHAN_SUFFIX)], "a process id")
        except ValueRangeError:
            continue
        if pid == own_pid or pid_running(pid):
            continue
        written = _regular_mtime(folder / name)
        if written is not None:
            found.append(Copy(folder / name, written, None, pid))
    return sorted(found, key=lambda c: (-c.written, c.path.name))


def discard(path: str | Path) -> None:
    """Delete a copy (gone already: nothing to do)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
