"""Counts in words, singular for one (parasol_core.base.words): a sweep of one variant
said "1 variants", a model with one error "1 error(s), 0 warning(s)", a replay of one
unmatched send "(1 such sends unmatched)"."""

from __future__ import annotations

import re
from pathlib import Path

from parasol_core.base.words import counted

ROOT = Path(__file__).resolve().parents[2]


def test_one_is_singular_and_every_other_count_plural():
    assert counted(1, "variant") == "1 variant"
    assert [counted(n, "variant") for n in (0, 2, 1024)] == ["0 variants", "2 variants",
                                                              "1,024 variants"]  # fmt: skip
    assert counted(1, "process") == "1 process"
    assert counted(16, "process") == "16 processes"
    assert counted(2, "hardware topology") == "2 hardware topologies"


# a count of a collection written straight before a plural noun: "{len(q)} sends"
_RAW_COUNT = re.compile(r"\{len\([^{}]*\)(?::,)?\} (?:[a-z]+ )?[a-z]+s\b")
_VERBS = re.compile(r"\} (?:is|was|has|does)\b")


def test_no_message_says_a_count_before_a_noun_it_does_not_agree_with():
    """Every count of a collection said before its noun is worded by counted(): the
    collection may hold one (a replay's one unmatched send said "1 such sends")."""
    found = []
    for package in ("parasol_core", "piui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _RAW_COUNT.search(line) and not _VERBS.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_a_replay_of_one_unmatched_send_says_so_in_the_singular(tmp_path):
    from parasol_core.replay import load_trace
    from parasol_core.replay.program import Semantics, TraceError, compile_python

    (tmp_path / "r0.txt").write_text("0 init\n0 send 1 8 0\n0 finalize\n")
    (tmp_path / "r1.txt").write_text("1 init\n1 send 0 8 0\n1 finalize\n")
    index = tmp_path / "trace.txt"
    index.write_text(f"{tmp_path / 'r0.txt'}\n{tmp_path / 'r1.txt'}\n")
    try:
        compile_python(load_trace(index), Semantics.make())
    except TraceError as e:
        said = str(e)
    else:
        raise AssertionError("two sends and no receive compiled")
    assert "(1 such send unmatched)" in said, said
