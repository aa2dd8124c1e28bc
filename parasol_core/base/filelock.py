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
