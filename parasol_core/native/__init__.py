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

FLOOR = 0
PURE_ENV = "PARASOL_PURE_PYTHON"


def pure_python() -> bool:
    """True when the kernels are switched off by ``PARASOL_PURE_PYTHON``."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


@cache
def _load_built(name: str) -> ctypes.CDLL | None:
    return load_from(Path(__file__).resolve().parent, name)


def stale_source(library: Path) -> Path | None:
    """A C source beside the built ``library`` that is newer than it, or None. In a
    source tree (an editable install, a clone) a source changed since the build (a
    ``git pull``) means the library may no longer match what its callers pass: a
    kernel called with another signature reads and writes past its arrays. An installed
    package ships no sources and is never stale."""
    try:
        built = library.stat().st_mtime
        sources = sorted(library.parent.glob("*.[ch]"))
        return next((s for s in sources if s.stat().st_mtime > built), None)
    except OSError:
        return None


def load_from(directory: Path, name: str) -> ctypes.CDLL | None:
    """The library ``name`` built in ``directory``; None when it was not built, cannot
    be loaded, or is older than a source beside it (said once on stderr, with how to
    build it again: the callers then take their pure-Python path, slower but right)."""
    import sys

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"{name}{suffix}"
        if path.is_file():
            newer = stale_source(path)
            if newer is not None:
                print(f"parasol_core: the C kernel {path.name} is older than {newer.name}: "
                      "it is not used until it is built again (make, or pip install -e "
                      ". in the source tree); the pure-Python path runs meanwhile",
                      file=sys.stderr)  # fmt: skip
                return None
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


# Argument types of the kernels' signatures, by short name.
I64, P64, CHARS = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p


def function(library: str, name: str, argtypes: tuple, restype: object = I64) -> object | None:
    """The kernel function ``name`` of ``library`` (``"_scan"``, ``"_text"``), its
    signature set, or None when the library was not built or ``PARASOL_PURE_PYTHON=1``
    (looked at on every call, so that the tests can switch the kernels off)."""
    if pure_python():
        return None
    return _function(library, name, argtypes, restype)


@cache
def _function(library: str, name: str, argtypes: tuple, restype: object) -> object | None:
    lib = _load_built(library)
    if lib is None:
        return None
    found = lib[name]  # a function object of its own: another signature cannot change it
    found.argtypes = list(argtypes)
    found.restype = restype
    return found
