"""A built wheel carries everything the installed package reads at run time: the grammar
(copied from grammar/machine.lark, the one definition), PIUI's icon and desktop entry."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_carries_the_grammar_and_resources(tmp_path):
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("piui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "parasol_core/syntax/machine.lark" in names
    with zipfile.ZipFile(wheel) as z:
        packed = z.read("parasol_core/syntax/machine.lark")
    assert packed == (ROOT / "grammar" / "machine.lark").read_bytes()
    assert any(n.startswith("piui/resources/") and n.endswith(".svg") for n in names)
    assert any(n.startswith("piui/resources/") and n.endswith(".desktop") for n in names)
