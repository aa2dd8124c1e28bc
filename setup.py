"""Build steps pyproject.toml cannot say: the optional C kernels, and the grammar copied
into the package. Everything else is in pyproject.toml.

Each kernel is plain C (no Python.h, so no Python headers are needed) built by pip into
a shared library beside its package and loaded with ctypes by
:mod:`parasol_core.native`. They are optional: without a C compiler the install still
succeeds and every caller takes its pure-Python path, which the tests hold equal to the
kernel's.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

GRAMMAR = Path("grammar") / "machine.lark"


class BuildWithGrammar(build_py):
    """Copy grammar/machine.lark, the one definition of the syntax, into the built
    package (parasol_core/syntax/machine.lark), so that a non-editable install parses."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "parasol_core" / "syntax" / GRAMMAR.name
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(GRAMMAR), str(target))


NATIVE: list[Extension] = [
    # link lists read exactly as the fast path's regular expression reads them
    Extension(
        "parasol_core.native._scan",
        ["parasol_core/native/scan.c"],
        optional=True,
        extra_compile_args=["-O2"],
    ),
    # the event trace of a communication phase; no fused multiply-add, so that it rounds
    # exactly as the Python path does
    # the canonical text of many rows (link sections, `p[i]` lines) written at once
    Extension(
        "parasol_core.native._text",
        ["parasol_core/native/text.c"],
        optional=True,
        extra_compile_args=["-O2"],
    ),
    Extension(
        "parasol_core.native._phases",
        ["parasol_core/native/phases.c", "parasol_core/native/phase_groups.c"],
        depends=["parasol_core/native/phase_io.h"],
        optional=True,
        extra_compile_args=["-O2", "-ffp-contract=off"],
    ),
    # the flow engine: a phase over link directions and forwarders under every sharing
    # rule; no fused multiply-add either
    # a replayed trace compiled into a program of messages (parasol_core/replay)
    Extension(
        "parasol_core.native._replay",
        ["parasol_core/native/replay.c"],
        optional=True,
        extra_compile_args=["-O2"],
    ),
    Extension(
        "parasol_core.native._flow",
        ["parasol_core/native/flow.c"],
        optional=True,
        extra_compile_args=["-O2", "-ffp-contract=off"],
    ),
]

setup(ext_modules=NATIVE, cmdclass={"build_py": BuildWithGrammar})
