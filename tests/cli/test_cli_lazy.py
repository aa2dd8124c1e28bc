"""``parasol-model COMMAND`` imports only COMMAND's module (parasol_core/cli/__init__.py):
a process's start is part of every command's time (issue 31: a replay's wall is held
against SimGrid's, start included)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parasol_core import cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def test_the_table_of_commands_is_what_the_modules_register():
    registered = {}
    for name in cli.COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        cli.command_module(name).register(sub)
        registered.update(dict.fromkeys(sub.choices, name))
    assert registered == cli.MODULE_OF


def test_replay_imports_no_other_command_and_no_session():
    code = (
        "import contextlib, io, sys\n"
        "from parasol_core.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    status = main(['replay', *sys.argv[1:]])\n"
        "print(status, *sorted(m for m in sys.modules if m.startswith('parasol_core.')))\n"
    )
    args = [str(SAMPLES / "parsytec-gcel.machine"), str(SAMPLES / "traces" / "stencil.txt"),
            "--flop", "pt(T).dga"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    status, *modules = done.stdout.split()
    assert status == "0", done.stderr
    commands = {m for m in modules if m.endswith("_commands")}
    assert commands == {"parasol_core.cli.replay_commands"}
    assert not [m for m in modules if m.startswith(("parasol_core.session", "parasol_core.sweep"))]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_a_start_makes_no_blas_threads_unless_the_user_asks():
    # OpenBLAS's threads spin at numpy's import: 0.08 s of CPU of every start
    code = ("import parasol_core.cli.replay_commands, parasol_core.replay.run\n"
            "print([w.split()[1] for w in open('/proc/self/status') if w.startswith('Threads')][0])")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.stdout.split() == ["1"], done.stderr
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**env, "OPENBLAS_NUM_THREADS": "2"})  # fmt: skip
    assert done.stdout.split() == ["2"], done.stderr
