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


def test_a_count_too_long_to_read_is_said_by_its_magnitude():
    assert counted(10**21 - 1, "byte") == "999,999,999,999,999,999,999 bytes"
    assert counted(10**21, "byte") == "about 1e+21 bytes"
    assert counted(9 * 10**293 + 12345, "value") == "about 9e+293 values"
    assert counted(10**5000, "value") == "about 10^5000 values"  # past a float, and print
    assert counted(float("inf"), "value") == "inf values"


def test_a_sweep_range_of_too_many_values_says_how_many_in_a_line(tmp_path):
    # a step of 1e-300 made a count of 294 digits, printed grouped: 390 characters
    from parasol_core.sweep import SweepError, loads_spec

    text = """
model = "{model}"
[[axis]]
set = "pt(1).dga"
range = [1e-7, 1e-6, 1e-300]
[[answer]]
eval = ["po(1).ia_spd"]
"""
    model = Path(__file__).parents[2] / "sample_models" / "parsytec-gcel.machine"
    try:
        loads_spec(text.replace("{model}", str(model)), base=tmp_path)
    except SweepError as e:
        said = str(e)
    assert "axis 1: range: about 9e+293 values, over the limit of 100,000" in said, said


# a count of a collection written straight before a plural noun: "{len(q)} sends"
_RAW_COUNT = re.compile(r"\{len\([^{}]*\)(?::,)?\} (?:[a-z]+ )?[a-z]+s\b")
_VERBS = re.compile(r"\} (?:is|was|has|does)\b")

# any number written straight before a noun that counts: "{size:g} bytes", "{p} ranks"
# (a mismatched collective said "(root 0, 1 bytes)", a read "1,000 lines in 1 files")
_NOUNS = ("bytes|ranks|processors|messages|actions|links|variants|rows|elements|collectives|"
          "files|lines|operations|steps|events|nodes|hosts|switches|layers|sources|values|"
          "timings|types|levels|items|errors|warnings|requests|traces|models|runs|cores|"
          "workers|batches|passes|points|programs|kernels|sends|receives|routes|pairs|groups|"
          "dimensions|axes|cells|entries|digits|characters|words|arguments|hops")  # fmt: skip
_QUALIFIERS = ("compute|virtual|hardware|route|program|node|logical|explicit|more|such|"
               "global|other|distinct|matched|unmatched|pending")  # fmt: skip
_NUMBER_NOUN = re.compile(r"\{(?!counted\()([^{}]+?)(?::[^{}]*)?\} (?:(?:" + _QUALIFIERS
                          + r") )?(?:" + _NOUNS + r")\b(?!/| on | a )")  # fmt: skip
_CONSTANT = re.compile(r"^[A-Z_][A-Z0-9_]*$")
_WORDS_NOT_NUMBERS = {"name", "label", "where", "what", "who", "text", "want", "technique",
                      "head", "colour"}  # fmt: skip


def _said_before_a_noun(line: str) -> bool:
    for m in _NUMBER_NOUN.finditer(line):
        expr = m.group(1).strip()
        if not (_CONSTANT.match(expr) or expr in _WORDS_NOT_NUMBERS or "!r" in expr
                or expr.startswith("**")):  # fmt: skip
            return True
    return False


def test_no_message_says_a_count_before_a_noun_it_does_not_agree_with():
    """Every count said before its noun is worded by counted(): a collection may hold
    one (a replay's one unmatched send said "1 such sends"), a number may be 1 (a
    collective of one byte said "1 bytes"). Constants (a limit) are left alone."""
    found = []
    for package in ("parasol_core", "piui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if (_RAW_COUNT.search(line) and not _VERBS.search(line)) or _said_before_a_noun(
                        line):  # fmt: skip
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_rule_finds_what_it_is_for():
    assert _said_before_a_noun('f"{size:g} bytes"') and _said_before_a_noun('f"{p} ranks"')
    assert _said_before_a_noun('f"{n:,} compute processors"')
    assert not _said_before_a_noun("f\"{counted(size, 'byte', spec='g')}\"")
    assert not _said_before_a_noun('f"at most {MAX_ROWS:,} rows"')  # a limit: never one
    assert not _said_before_a_noun('f"{text} bytes/s"')  # a unit
    assert not _said_before_a_noun('f"rank {r} runs on processor {h}"')  # a verb
    assert counted(1.0, "byte", spec="g") == "1 byte"
    assert counted(8.0, "byte", spec="g") == "8 bytes"
    assert counted(1e20, "byte", spec=".3g") == "1e+20 bytes"


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
