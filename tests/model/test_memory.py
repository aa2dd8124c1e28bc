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


# a fresh process makes and drops 25 MB of 64 KB blocks ten times, and says how many
# page faults the last nine rounds took; with ``keep`` it first calls keep_freed_heap
_ROUNDS = """
import resource, sys
from parasol_core.base.memory import keep_freed_heap
kept = keep_freed_heap() if sys.argv[1] == "keep" else None
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def round_():
    blocks = [bytearray(64 * 1024) for _ in range(400)]
    del blocks
round_()
before = faults()
for _ in range(9):
    round_()
print(kept, faults() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_repeating_process_keeps_its_freed_heap_and_faults_it_in_once():
    import platform
    import subprocess

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("keep_freed_heap tunes glibc's allocator only")

    def faults(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _ROUNDS, mode], check=True,
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        assert out[0] == ("True" if mode == "keep" else "None")
        return int(out[1])

    given_back, kept = faults("give"), faults("keep")
    # glibc hands the 25 MB back after each round, and faults it in again (6,400 pages
    # a round); kept, the rounds after the first reuse the same pages
    assert given_back > 9 * 4000
    assert kept * 20 < given_back
