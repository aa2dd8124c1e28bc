"""Giving freed memory back to the system after a large piece of work.

Reading a model of a million processors makes and drops hundreds of megabytes of
temporary objects (the decoded text's copies, the scanners' records). glibc's
allocator keeps the freed heap for later use, so the process's resident memory stays
some 200 MB above what the model holds (976 MB against 776 MB for the 570 MB file of
the 100 x 100 x 100 torus). ``malloc_trim(0)`` hands it back; elsewhere than glibc
there is nothing to do here (other allocators return memory themselves, or keep it).

The opposite holds for a process that does the same work again and again, a sweep's
worker: glibc gives the top of its heap back to the system whenever more than
``M_TRIM_THRESHOLD`` of it is free, so the arrays each variant makes and drops are
handed back after every variant and faulted in again for the next, page by page.
Whether that happens depends on the heap's history: a worker forked from a process
that had used its heap kept it; one started afresh (a rank of ``mpiexec``) gave it back
each time, 1,170 page faults a variant against 490, and 0.8 s of system time a worker
in a 1,024-variant sweep. :func:`keep_freed_heap` raises the threshold for such a
worker.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

#: Texts at least this long are followed by a trim: below it the freed heap is small
#: and the trim (a walk over the heap) not worth its time.
TRIM_AFTER_BYTES = 32 * 1024 * 1024

#: The free heap a worker keeps (:func:`keep_freed_heap`) before giving it back.
KEEP_HEAP_BYTES = 256 * 1024 * 1024

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter

_looked = False
_libc: Any = None


def _glibc() -> Any:
    global _libc, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            try:
                _libc = ctypes.CDLL("libc.so.6")
            except OSError:  # not glibc (musl has no libc.so.6): nothing to tune
                _libc = None
    return _libc


def _malloc_trim() -> Any:
    return getattr(_glibc(), "malloc_trim", None)


def release_free_memory() -> bool:
    """Return the allocator's free heap to the system; whether there was a way to."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def keep_freed_heap(nbytes: int = KEEP_HEAP_BYTES) -> bool:
    """Have the allocator keep up to ``nbytes`` of freed heap rather than give it back
    to the system as soon as it is free (see above): for a process that repeats a piece
    of work, so that the next repetition reuses the pages of the last. What is kept is
    at most the repetition's own peak, which the caller's budgets already allow for.
    Whether there was a way to (glibc)."""
    mallopt = getattr(_glibc(), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(_M_TRIM_THRESHOLD, min(int(nbytes), 2**31 - 1)))
