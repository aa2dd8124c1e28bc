"""Every file a command writes is checked before any work (issue 35, item 5): a missing
directory, one that cannot be written in, a directory in its place, are exit 2 at once,
naming the output: not after a measurement, not even after reading the input."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES

from parasol_core.base import filelock
from parasol_core.cli import build_parser, main

GCC = shutil.which("gcc")


def compiler_wrapper(tmp_path: Path) -> tuple[Path, Path]:
    """A CC that notes every call in MARKS, then becomes gcc."""
    marks = tmp_path / "marks"
    marks.mkdir()
    cc = tmp_path / "cc-wrapper"
    cc.write_text(f'#!/bin/sh\necho $$ > "{marks}/cc.$$"\nexec {GCC} "$@"\n')
    cc.chmod(0o755)
    return cc, marks


def output_commands() -> dict[str, list[str]]:
    """Every subcommand that writes a file, with arguments that would read a file that
    does not exist: an output checked first is what the command complains about."""
    missing = "/nonexistent/input.machine"
    return {
        "format -o": ["format", missing, "-o"],
        "set -o": ["set", missing, "pt(1).iga=1", "-o"],
        "scale -o": ["scale", missing, "arithmetic", "2", "-o"],
        "fit -o": ["fit", missing, "mpi.bcast", missing, "-o"],
        "import -o": ["import", missing, "-o"],
        "export --simgrid": ["export", missing, "--simgrid"],
        "measure -o": ["measure", "--quick", "--params", "ila", "-o"],
        "sweep -o": ["sweep", "/nonexistent/sweep.toml", "-o"],
    }


def test_every_command_that_writes_a_file_is_in_the_list():
    """The list above is every subcommand with an output option (a new one joins it)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None))
    writers = set()
    for name, p in sub.choices.items():
        for action in p._actions:
            if {"-o", "--output", "--simgrid"} & set(action.option_strings):
                writers.add(name)
    assert writers == {key.split()[0] for key in output_commands()}


def unwritable_targets(tmp_path: Path) -> dict[str, Path]:
    directory = tmp_path / "a-directory"
    directory.mkdir()
    targets = {"missing directory": tmp_path / "no" / "such" / "out.machine",
               "a directory": directory}  # fmt: skip
    if os.geteuid() != 0:
        locked = tmp_path / "read-only"
        locked.mkdir()
        locked.chmod(0o555)
        targets["read-only directory"] = locked / "out.machine"
    elif os.path.isdir("/sys") and _refuses("/sys"):
        targets["read-only directory"] = Path("/sys/out.machine")  # refused even to root
    return targets


def _refuses(directory: str) -> bool:
    try:
        fd, tmp = filelock.temporary_beside(Path(directory) / "probe")
    except OSError:
        return True
    os.close(fd)
    os.unlink(tmp)
    return False


@pytest.mark.parametrize("command", list(output_commands()))
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path, command,
                                                                     monkeypatch, capsys):  # fmt: skip
    cc, marks = compiler_wrapper(tmp_path) if GCC else (None, None)
    if cc is not None:
        monkeypatch.setenv("CC", str(cc))
    for what, target in unwritable_targets(tmp_path).items():
        status = main([*output_commands()[command], str(target)])
        err = capsys.readouterr().err
        assert status == 2, (what, err)
        assert f"{target}: cannot write" in err, (what, err)
        assert "/nonexistent/input.machine" not in err  # the input was not even read
        if marks is not None:
            assert list(marks.iterdir()) == []  # nothing compiled
        assert "about" not in err  # measure: no measuring started


def test_in_place_into_a_directory_that_cannot_be_written_is_refused_before_any_work(
    tmp_path, capsys
):
    if os.geteuid() == 0:
        pytest.skip("root writes in a directory of mode 0555")
    folder = tmp_path / "ro"
    folder.mkdir()
    model = folder / "m.machine"
    shutil.copy(SAMPLES / "grid4x4.machine", model)
    folder.chmod(0o555)
    try:
        assert main(["set", str(model), "pt(1).iga=2e-7", "-i"]) == 2
        assert f"{model}: cannot write" in capsys.readouterr().err
    finally:
        folder.chmod(0o755)
