"""Giving freed memory back to the system after a large piece of work.

Reading a model of a million processors makes and drops hundreds of megabytes of
temporary objects (the decoded text's copies, the scanners' records). glibc's
allocator keeps the freed heap for later use, so the process's resident memory stays
some 200 MB above what the model holds (976 MB against 776 MB for the 570 MB file of
the 100 x 100 x 100 torus). ``malloc_trim(0)`` hands it back; elsewhere than glibc
there is nothing to do here (other allocators return memory themselves, or keep it).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

#: Texts at least this long are followed by a trim: below it the freed heap is small
#: and the trim (a walk over the heap) not worth its time.
TRIM_AFTER_BYTES = 32 * 1024 * 1024

_trim: Any = None
_looked = False


def _malloc_trim() -> Any:
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            try:
                _trim = getattr(ctypes.CDLL("libc.so.6"), "malloc_trim", None)
            except OSError:  # not glibc (musl has no libc.so.6): nothing to trim
                _trim = None
    return _trim


def release_free_memory() -> bool:
    """Return the allocator's free heap to the system; whether there was a way to."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
