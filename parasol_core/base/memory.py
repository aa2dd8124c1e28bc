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

A one-shot piece of work that makes and drops arrays of every size as it goes (a
one-shot replay, ``parasol-model replay``: each stage's arrays let go once the next
has what it needs) meets a third habit: glibc maps an allocation of its own only above
a threshold it raises, up to 32 MiB, each time such a mapping is freed; past the first
few, arrays of megabytes come from the heap, and the holes they leave when freed stay
resident beside the arrays made later. :func:`map_large_allocations` fixes the
threshold, so that every large array is a mapping of its own, given back when freed:
the replay's peak at 2.5 million actions on 4,096 ranks fell from 559 to 509 MiB.
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

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters
_M_MMAP_THRESHOLD = -3

#: Allocations at least this large are mappings of their own (:func:`map_large_allocations`;
#: glibc's starting threshold, kept).
MAP_FROM_BYTES = 128 * 1024

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


def map_large_allocations(nbytes: int = MAP_FROM_BYTES) -> bool:
    """Have every allocation of at least ``nbytes`` be a mapping of its own, given back
    to the system when freed, for the rest of the process (see above): for a process
    doing one large piece of work whose arrays come and go by stages, so that a freed
    array's pages are not kept beside the next stage's. Whether there was a way to
    (glibc)."""
    mallopt = getattr(_glibc(), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, min(int(nbytes), 2**31 - 1)))
