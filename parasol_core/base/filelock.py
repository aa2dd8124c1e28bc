"""An advisory lock on a model file, so that writers that read, edit and replace it
(`parasol-model set -i`, `scale -i`, `fit -i`, PIUI's save) take turns instead of each
replacing the file with its own stale copy.

The lock is ``flock`` on the file itself. A writer replaces the file by renaming a new
one over it, so the path then names another inode than the one a waiting writer holds
open: after taking the lock, a writer checks that the path still names the file it
locked, and otherwise starts again on the new one. No lock file is left beside the
model. Other programs (a text editor, ``git checkout``) do not take the lock; PIUI
notices what they write by watching the file (see :mod:`parasol_core.session.disk`).

Where it holds: Linux, macOS and the BSDs on local file systems; NFS on Linux, where
the kernel maps ``flock`` to NFS byte-range locks (the file is then opened for writing
to lock it). Where ``fcntl`` is missing (Windows) there is no lock and writers behave
as before it existed: atomic replace, last writer wins.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from parasol_core.base.numeric import is_whole

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: How long a writer waits for another one to finish, in seconds, unless told otherwise.
DEFAULT_TIMEOUT = 10.0

LOCKS_SUPPORTED = fcntl is not None

_held = threading.local()  # the real paths this thread holds the lock of


class LockTimeout(TimeoutError):
    """Another writer held the file for longer than the caller would wait."""

    def __init__(self, path: str | Path, timeout: float) -> None:
        super().__init__(
            errno.EWOULDBLOCK,
            f"another program is writing it (it held the lock for more than {timeout:g} s); "
            "nothing was changed, try again",
        )
        self.filename = str(path)
        self.timeout = timeout


@contextmanager
def locked(path: str | Path, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the advisory lock of the file at ``path`` (a symbolic link is followed)
    while the block runs. A file that does not exist, or is not a regular file, has
    nothing to lose to a concurrent replace and is not locked. Raises
    :class:`LockTimeout` when another writer keeps it past ``timeout`` seconds. A
    thread that holds the lock may ask for it again (a save inside an edit)."""
    if not math.isfinite(timeout) or timeout < 0:
        raise ValueError(
            f"a lock timeout is a finite number of seconds, 0 or more, not {timeout!r}"
        )
    real = os.path.realpath(path)
    held: set[str] = _held.__dict__.setdefault("paths", set())
    if fcntl is None or real in held:  # no locks here, or this thread holds it already
        yield
        return
    deadline = time.monotonic() + max(timeout, 0.0)
    while True:
        fd = _open_regular(real)
        if fd is None:
            yield
            return
        try:
            if not _wait_for(fd, real, deadline, timeout):
                # NFS: an exclusive lock needs a descriptor open for writing
                os.close(fd)
                fd = None
                fd = _open_regular(real, os.O_RDWR)
                if fd is None:
                    continue
                _wait_for(fd, real, deadline, timeout, again=False)
            if _still_names(real, fd):
                held.add(real)
                try:
                    yield
                finally:
                    held.discard(real)
                return
        finally:
            if fd is not None:
                os.close(fd)  # releases the lock
        # replaced while we waited: lock the file the path names now


def _open_regular(path: str, mode: int = os.O_RDONLY) -> int | None:
    """A descriptor of the regular file at ``path``, or None when there is none. Opened
    without blocking: a FIFO put there must not hang the writer."""
    try:
        fd = os.open(path, mode | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENXIO:  # a socket (or a device with nothing behind it)
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _wait_for(fd: int, path: str, deadline: float, timeout: float, again: bool = True) -> bool:
    """Take the lock of ``fd`` by ``deadline``; False when the file system wants the
    file open for writing to lock it (and ``again``: the caller reopens it)."""
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError as e:
            if again and e.errno == errno.EBADF:
                return False
            raise OSError(e.errno, f"cannot lock it against other writers: {e.strerror}",
                          path) from None  # fmt: skip
        if time.monotonic() >= deadline:
            raise LockTimeout(path, timeout)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _still_names(path: str, fd: int) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


# --------------------------------------------------------------------------- temporaries
#
# A writer replaces a file by writing a temporary beside it and renaming it over the
# file (parasol_core.syntax.writer.write_text_atomic); a measurement builds in a
# temporary directory. A writer killed with SIGKILL (or a power cut) cannot remove
# its temporary, so the next writer of the same file removes those whose writer is
# gone. A temporary's name holds its writer's process id, and its writer holds an
# ``flock`` on it (released by the kernel when the process dies, however it dies):
# a temporary is its writer's while that process lives and the lock is held; when the
# lock is free and the process is gone, nothing will ever finish it.


def temporary_beside(path: str | Path, suffix: str = ".tmp") -> tuple[int, Path]:
    """A new temporary file in the directory of ``path``, for its writer:
    ``.NAME.PID.XXXXXXXX.tmp``, open for writing (the descriptor is returned) and locked
    by this process until that descriptor is closed."""
    import tempfile

    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=suffix,
                                dir=path.parent)  # fmt: skip
    try:
        hold(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    return fd, Path(name)


def temporary_directory(prefix: str, where: str | Path | None = None) -> tuple[int, Path]:
    """A new temporary directory ``PREFIX<PID>-XXXXXXXX`` (in the system's temporary
    directory unless ``where``), and a descriptor of it holding its lock: close the
    descriptor when the directory is removed. Stale directories of the same prefix
    (:func:`remove_stale_directories`) are removed first."""
    import tempfile

    remove_stale_directories(prefix, where)
    name = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=where)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    hold(fd)
    return fd, Path(name)


def hold(fd: int) -> None:
    """Take the lock of a temporary this process has just made (nobody else holds it)."""
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a file system without locks: the process id still tells
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return False
    return True


def writer_gone(path: str | Path, pid: int | None) -> bool:
    """Whether the temporary at ``path`` (a file or a directory) was left by a writer
    that is gone: its process ``pid`` (None: the name gives none) is not running here
    and nobody holds its lock."""
    if pid is not None and _alive(pid):
        return False
    if fcntl is None:
        return pid is not None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0))  # fmt: skip
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: its writer is at work (on another host, perhaps)
    finally:
        os.close(fd)
    return True


def _pid_in(middle: str) -> int | None:
    """The process id in the middle of a temporary's name ("1234.k3j9x2_a"), if any."""
    first, dot, _ = middle.partition(".")
    return int(first) if dot and is_whole(first) and len(first) < 10 else None


def stale_temporaries(path: str | Path) -> list[Path]:
    """The temporaries beside ``path`` that writers of it left and will never finish:
    ``.NAME.*.tmp`` whose writer is gone (:func:`writer_gone`)."""
    path = Path(path)
    head, tail = f".{path.name}.", ".tmp"
    found = []
    try:
        entries = list(os.scandir(path.parent if str(path.parent) else "."))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith(head) and name.endswith(tail)) or len(name) <= len(head + tail):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
        except OSError:
            continue
        if writer_gone(entry.path, _pid_in(name[len(head) : -len(tail)])):
            found.append(Path(entry.path))
    return found


def remove_stale_temporaries(path: str | Path) -> list[tuple[Path, int]]:
    """Remove :func:`stale_temporaries` of ``path``; the ones removed, with their sizes
    (a directory that cannot be written in removes none; never raises)."""
    removed = []
    for tmp in stale_temporaries(path):
        try:
            size = tmp.stat().st_size
            tmp.unlink()
        except OSError:
            continue
        removed.append((tmp, size))
    return removed


def remove_stale_directories(prefix: str, where: str | Path | None = None) -> list[Path]:
    """Remove this user's temporary directories ``PREFIX<PID>-*`` whose maker is gone (a
    measurement killed with SIGKILL); never raises."""
    import shutil
    import tempfile

    folder = Path(where) if where is not None else Path(tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not name.startswith(prefix):
            continue
        pid_text, dash, _ = name[len(prefix) :].partition("-")
        if not (dash and is_whole(pid_text) and len(pid_text) < 10):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != getattr(os, "geteuid", lambda: -1)():
            continue
        if writer_gone(entry.path, int(pid_text)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed
