"""Counts in words, singular for one (parasol_core.base.words): a sweep of one variant
said "1 variants", a model with one error "1 error(s), 0 warning(s)"."""

from __future__ import annotations

from parasol_core.base.words import counted


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "variant") == "1 variant"
    assert [counted(n, "variant") for n in (0, 2, 1024)] == ["0 variants", "2 variants",
                                                              "1,024 variants"]  # fmt: skip
    assert counted(1, "process") == "1 process"
    assert counted(16, "process") == "16 processes"
