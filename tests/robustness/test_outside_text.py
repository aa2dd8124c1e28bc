"""Text from outside (the CPU's name, $CC, a compiler's output) is bounded and escaped
before it reaches a model or the terminal, and a compiler asked for that is not there or
does not work is an error naming it, never a quiet fall back to cc (issue 35, item 5)."""

from __future__ import annotations

import os
import shutil

import pytest

from parasol_core.base.limits import outside_text
from parasol_core.cli import main

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="no gcc")


def test_a_cc_that_is_not_there_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    out = tmp_path / "m.machine"
    assert main(["measure", "--quick", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "CC='/nonexistent/cc': no such program" in err and "about" not in err
    assert not out.exists()


def test_a_cc_that_does_not_work_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    broken = tmp_path / "broken-cc"
    broken.write_text("#!/bin/sh\necho 'broken-cc: \033[31mno licence\033[0m' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("CC", str(broken))
    assert main(["measure", "--quick"]) == 2
    err = capsys.readouterr().err
    assert f"the C compiler '{broken}' does not work" in err
    assert "no licence" in err and "\033" not in err  # what it said, escaped


@needs_gcc
def test_the_model_names_the_compiler_asked_for_and_outside_text_is_escaped(
    tmp_path, monkeypatch, capsys
):
    """A CPU name that is not UTF-8, holds control characters and is 2 MB long, and a CC
    with a newline: the measurement writes a model that loads, names them escaped and
    bounded, and the terminal gets no control character."""
    from parasol_core import load
    from parasol_core.analysis.validate import errors, validate
    from parasol_core.measure import toolchain

    cpuinfo = tmp_path / "cpuinfo"
    hostile = b"Evil\xff\xfe \x1b[31mCPU\x07 \xe2\x80\xae" + b"x" * 2_000_000
    cpuinfo.write_bytes(b"processor\t: 0\nmodel name\t: " + hostile + b"\n")
    monkeypatch.setattr(toolchain, "CPUINFO", cpuinfo)
    wrapper = tmp_path / "my cc"
    wrapper.write_text(f'#!/bin/sh\nexec {GCC} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", f'"{wrapper}" "-DNOTE=a\nb"')
    out = tmp_path / "m.machine"
    assert main(["measure", "--params", "ila", "--runs", "2", "--run-ms", "0.2",
                 "--cache-sizes", "10", "-o", str(out)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    text = out.read_text()
    assert not errors(validate(load(out)))
    for shown in (err, text):
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "\\x1b[31mCPU\\x07" in shown
    assert len(max(text.splitlines(), key=len)) < 1000
    assert f"{wrapper} -DNOTE=a b" in text  # the compiler asked for, its newline a space
    assert "Compiler: cc " not in text


def test_outside_text_is_bounded_and_escaped_whatever_it_holds():
    for raw in (b"\xff" * 10, "a\x00b\x1b[2Jc\u202ed\u2028e", "x" * 5_000_000, b"",
                os.fsdecode(b"gcc\xff\n-O2"), 'say "hi"'):  # fmt: skip
        text = outside_text(raw)
        assert len(text) <= 200
        assert all(c.isprintable() for c in text), repr(text)
        assert '"' not in text
    assert outside_text("a\nb", lines=True) == "a\nb"
