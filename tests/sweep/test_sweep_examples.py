"""The sweep files of docs/sweeps/ run, and docs/sweeps.md shows them as they are."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from parasol_core.sweep import load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "docs" / "sweeps").glob("*.toml"))


def test_the_document_shows_each_example_file():
    text = (ROOT / "docs" / "sweeps.md").read_text()
    shown = [tomllib.loads(block) for block in re.findall(r"```toml\n(.*?)```", text, re.S)]
    assert len(EXAMPLES) >= 3
    for path in EXAMPLES:
        assert f"(sweeps/{path.name})" in text
        assert tomllib.loads(path.read_text()) in shown, path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_each_example_runs_without_an_error(path):
    spec = load_spec(path)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert len(rows) == spec.size
    assert [r.error for r in rows if r.error] == []
    assert all(a is not None for r in rows for a in r.answers)
