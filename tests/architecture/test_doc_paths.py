"""Every file of the repository a document names exists: the README, docs/ and the
packages' notes cite tests, benchmarks and modules by path, and a path left behind by a
move (tests/test_x.py before the test folders) sends a reader nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("tests", "benchmarks", "parasol_core", "piui", "docs", "sample_models")
# a path as documents write it: a top folder, then path characters; one followed by a
# pattern character (parasol_core/_<name>.so, tests/*/x.py) is a pattern, not a path
PATH = re.compile(rf"(?<![\w/.-])((?:{'|'.join(FOLDERS)})/[\w./-]*\w)(?![\w<*{{])")


def _documents() -> list[Path]:
    found = set(ROOT.glob("*.md"))
    for folder in FOLDERS:
        found |= set((ROOT / folder).glob("**/*.md"))
    return sorted(found)


def test_every_path_a_document_names_exists() -> None:
    missing = []
    for doc in _documents():
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in PATH.finditer(line):
                if not (ROOT / m.group(1)).exists():
                    missing.append(f"{doc.relative_to(ROOT)}:{number}: {m.group(1)}")
    assert missing == []


def test_the_check_sees_a_path_that_moved() -> None:
    line = "see tests/test_layering.py and tests/architecture/test_layering.py"
    paths = [m.group(1) for m in PATH.finditer(line)]
    assert paths == ["tests/test_layering.py", "tests/architecture/test_layering.py"]
    assert [p for p in paths if not (ROOT / p).exists()] == ["tests/test_layering.py"]
    assert [m.group(1) for m in PATH.finditer("parasol_core/_<name>.so")] == []
