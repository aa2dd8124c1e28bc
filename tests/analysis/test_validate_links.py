"""The validator's check of links, on a model read by the fast path: a clean model has
no errors, and each kind of broken link is reported, whichever link it is (the check
takes a quick test for a link nothing is wrong with, then the full checks)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

from parasol_core import Timing, loads
from parasol_core.analysis.validate import validate

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

BASE = loads(torus_text(4))  # 64 processors, 192 links


def _errors(machine) -> list[str]:
    return [d.message for d in validate(machine) if d.is_error]


def test_a_clean_model_has_no_errors() -> None:
    assert _errors(BASE) == []


@pytest.mark.parametrize("which", [0, 100, 191])
@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda m, k: setattr(m, "id", 1 if k else 2), "is used twice in"),
        (lambda m, k: setattr(m, "id", 193), "out of range 1..192"),
        (lambda m, k: setattr(m, "id", None), "has no id"),
        (lambda m, k: setattr(m, "connect", [m.connect[0], m.connect[0]]), "twice"),
        (lambda m, k: setattr(m, "connect", [m.connect[0], 65]), "out of range 1..64"),
        (lambda m, k: setattr(m, "connect", [3]), "at least two processors"),
        (lambda m, k: setattr(m, "connect", None), "has no 'connect'"),
        (lambda m, k: setattr(m, "latency", Timing(-1e-6)), "latency of link"),
        (lambda m, k: setattr(m, "speed", None), "has no speed"),
    ],
)  # fmt: skip
def test_each_broken_link_is_reported(which: int, breakage, message: str) -> None:
    machine = copy.deepcopy(BASE)
    breakage(machine.topologies[0].links[which], which)
    errors = _errors(machine)
    assert any(message in e for e in errors), errors
