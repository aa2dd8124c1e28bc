"""Loading the optional C kernels (see ``setup.py``): plain shared libraries that pip
builds from ``parasol_core/native/*.c`` beside this package, called through ctypes.

:func:`load` gives the library, or None when it was not built (no C compiler at install
time) or when ``PARASOL_PURE_PYTHON=1`` is set: callers then take their pure-Python path,
which the tests run too and hold equal to the kernel.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import os
from functools import cache
from pathlib import Path

PURE_ENV = "PARASOL_PURE_PYTHON"


def pure_python() -> bool:
    """True when the kernels are switched off by ``PARASOL_PURE_PYTHON``."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


@cache
def _load_built(name: str) -> ctypes.CDLL | None:
    directory = Path(__file__).resolve().parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"{name}{suffix}"
        if path.is_file():
            try:
                return ctypes.CDLL(str(path))
            except OSError:
                return None
    return None


def load(name: str) -> ctypes.CDLL | None:
    """The kernel library ``parasol_core/<name>`` (``name`` as in setup.py, for example
    ``"_phases"``), or None."""
    if pure_python():
        return None
    return _load_built(name)
