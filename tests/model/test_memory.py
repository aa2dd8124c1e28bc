"""Freed memory goes back to the system after a large load (parasol_core/base/memory.py)."""

from __future__ import annotations

import sys

import pytest

from parasol_core.base import memory
from parasol_core.syntax import loader

GCEL = "sample_models/parsytec-gcel.machine"


def test_a_large_load_hands_the_freed_heap_back(monkeypatch):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / GCEL).read_text()
    calls = []
    monkeypatch.setattr(loader, "release_free_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(loader, "TRIM_AFTER_BYTES", len(text))
    loader.loads(text)
    assert calls == [1]
    monkeypatch.setattr(loader, "TRIM_AFTER_BYTES", len(text) + 1)
    loader.loads(text)
    assert calls == [1]  # a smaller text: no trim


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_release_free_memory_trims_where_glibc_is():
    import platform

    libc, _ = platform.libc_ver()
    assert memory.release_free_memory() == (libc == "glibc")
