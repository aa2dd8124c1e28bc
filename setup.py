"""Build script for the optional C kernels; everything else is in pyproject.toml.

Each kernel is plain C (no Python.h, so no Python headers are needed) built by pip into
a shared library beside its package and loaded with ctypes by
:mod:`parasol_core._native`. They are optional: without a C compiler the install still
succeeds and every caller takes its pure-Python path, which the tests hold equal to the
kernel's.
"""

from setuptools import Extension, setup

NATIVE: list[Extension] = [
    Extension("parasol_core._scan", ["parasol_core/native/scan.c"], optional=True),
    # Extension("parasol_core._NAME", ["parasol_core/native/NAME.c"], optional=True,
    #           extra_compile_args=["-O2"]),
]

setup(ext_modules=NATIVE)
