"""parasol_core.base.arrays: ``unique`` is ``np.unique`` by a sort, and the core and the
windows call it rather than numpy's hash-based ``np.unique(x)``, which took 2.4-3.4 s
for the 3,000,000 link ids of a million-processor torus (a sort: under 0.2 s)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parasol_core.base.arrays import difference, union, unique

ROOT = Path(__file__).resolve().parents[2]


@given(st.lists(st.integers(-(2**62), 2**62), max_size=60))
def test_unique_is_numpys_for_integers(values: list[int]) -> None:
    a = np.asarray(values, dtype=np.int64)
    got = unique(a)
    assert got.dtype == a.dtype and np.array_equal(got, np.unique(a))


@given(st.lists(st.floats(allow_infinity=True, allow_nan=True, width=64), max_size=60))
def test_unique_is_numpys_for_floats_nans_folded(values: list[float]) -> None:
    a = np.asarray(values, dtype=float)
    assert np.array_equal(unique(a), np.unique(a), equal_nan=True)


def test_unique_takes_any_shape_and_sequence() -> None:
    assert unique([3, 1, 3]).tolist() == [1, 3]
    assert unique(np.array([[2, 1], [1, 2]])).tolist() == [1, 2]
    assert unique(np.zeros(0, dtype=np.int64)).shape == (0,)


def test_union_and_difference_are_numpys() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b = (
            rng.integers(-20, 20, rng.integers(0, 30)),
            rng.integers(-20, 20, rng.integers(0, 30)),
        )
        assert np.array_equal(union(a, b), np.union1d(a, b))
        assert np.array_equal(difference(a, b), np.setdiff1d(a, b))


def test_no_plain_np_unique_in_the_core_or_the_windows() -> None:
    """``np.unique(x)`` with no return_... or axis argument takes numpy's hash path, and
    so do ``np.union1d`` and ``np.setdiff1d`` inside: the bulk code calls
    parasol_core.base.arrays' unique, union and difference instead."""
    plain = re.compile(r"np\.unique\(|np\.union1d\(|np\.setdiff1d\(")
    found = []
    for folder in ("parasol_core", "piui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "arrays.py":
                continue  # its own docstring names what it replaces
            text = path.read_text(encoding="utf-8")
            for m in plain.finditer(text):
                call = text[m.end() : text.find(")\n", m.end()) + 1]
                if m.group().startswith("np.unique") and re.search(
                    r"return_(inverse|index|counts)|axis=", call
                ):
                    continue
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}")
    assert not found, f"numpy's hashing unique (use parasol_core.base.arrays): {found}"
