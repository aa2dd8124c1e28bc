"""The optional C kernels: built by the install wherever a C compiler exists, and
switched off by PARASOL_PURE_PYTHON."""

import re
import shutil
from pathlib import Path

import pytest

from parasol_core import native

ROOT = Path(__file__).resolve().parents[2]
KERNELS = re.findall(
    r'^\s*Extension\(\s*"parasol_core\.native\.(_\w+)"', (ROOT / "setup.py").read_text(), re.M
)


def test_unknown_kernel_is_none():
    assert native.load("_no_such_kernel") is None


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_is_built_where_a_compiler_exists(name):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler: the pure-Python path is used")
    assert native.load(name) is not None, f"{name} was not built: run `make` again"


@pytest.mark.parametrize("name", KERNELS)
def test_pure_python_switch(name, monkeypatch):
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.load(name) is None


def test_a_kernel_function_is_switched_off_on_every_call(monkeypatch):
    """native.function gives a kernel's function with its signature, and None as soon
    as PARASOL_PURE_PYTHON is set (it is looked at on each call, not cached)."""
    if native.load("_text") is None:
        pytest.skip("the kernels are not built")
    args = (native.I64,) * 9
    assert native.function("_text", "parasol_interleave", args) is not None
    monkeypatch.setenv(native.PURE_ENV, "1")
    assert native.function("_text", "parasol_interleave", args) is None
    monkeypatch.delenv(native.PURE_ENV)
    assert native.function("_no_such_kernel", "f", ()) is None


def test_a_kernel_older_than_its_sources_is_not_loaded(tmp_path, capsys):
    """After a `git pull` that changes a kernel's C source and no rebuild, its callers'
    signatures may no longer match the library: calling it read past its arrays (a
    segmentation fault in a PIUI test). A library older than a source beside it is not
    loaded, said once with how to build it again; the pure-Python path runs."""
    import os

    built = next(Path(native.__file__).parent.glob("_text.*"), None)
    if built is None:
        pytest.skip("the C kernels are not built here")
    library = tmp_path / built.name
    shutil.copy2(built, library)
    source = tmp_path / "text.c"
    source.write_text("/* the source, as the library was built from it */\n")
    os.utime(source, (1_000, 1_000))  # older than the library: it is used
    assert native.stale_source(library) is None
    assert native.load_from(tmp_path, "_text") is not None
    assert capsys.readouterr().err == ""
    os.utime(source, None)  # changed since the build
    os.utime(library, (1_000, 1_000))
    assert native.stale_source(library) == source
    assert native.load_from(tmp_path, "_text") is None
    err = capsys.readouterr().err
    assert f"{built.name} is older than text.c" in err and "built again (make" in err
    # an installed package ships no sources: never stale
    source.unlink()
    assert native.stale_source(library) is None
