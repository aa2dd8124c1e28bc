"""The reader agrees with the grammar run by lark (tests/lark_reference.py), the
executable specification, and the bulk scanners (parasol_core.syntax.fastscan) with
the reader.

Every text here is loaded by lark, by the reader with the bulk scanners and by the
reader alone, and must give the same outcome: a syntax error at the same line and
column (the reader's saying what was expected there), or an equal model with equal
source records for every section (the bulk scanners' lazily built link records
included), the same diagnostics from the loader and from the validator, and the same
text written back, unedited and after an edit of a link. The texts: the samples,
generated models (in canonical form, which the bulk scanners take, and in varied
layouts, which they mostly leave to the reader), and thousands of mutations of a model
whose bulk sections the scanners read.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import lark_reference
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings

import parasol_core.syntax.loader as parser_module
from parasol_core import Machine, ModelSyntaxError, Timing, loads
from parasol_core.analysis.validate import validate
from parasol_core.syntax import fastscan
from parasol_core.syntax.writer import dumps, dumps_canonical

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

SAMPLES = sorted((ROOT / "sample_models").glob("*.machine"))


@pytest.fixture(autouse=True)
def _fast_path_on_small_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the bulk scanners take sections of any size, so small texts exercise them."""
    monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)


class _Scanned:
    """Counts the bodies the bulk scanners took (``scanned.bodies``) while in use."""

    def __enter__(self) -> _Scanned:
        self.bodies = 0
        self.original = original = fastscan.scan_section

        def counting(*args: Any) -> Any:
            found = original(*args)
            self.bodies += found is not None
            return found

        fastscan.scan_section = counting
        return self

    def __exit__(self, *_: object) -> None:
        fastscan.scan_section = self.original


def _load(text: str, how: str) -> Machine | ModelSyntaxError:
    """``how``: "lark" (the specification), "bulk" (the reader with the bulk scanners,
    as parasol_core loads) or "reader" (the reader alone)."""
    try:
        if how == "lark":
            return lark_reference.loads(text)
        parser_module._bulk = how == "bulk"
        return loads(text)
    except ModelSyntaxError as e:
        return e
    finally:
        parser_module._bulk = True


def says_what_was_expected(e: ModelSyntaxError) -> bool:
    """A syntax error of the reader names what was expected, or is one of the
    builder's range and depth errors, which say what is wrong with the token."""
    return (
        bool(e.expected)
        and "expected" in e.message.replace("unexpected", "")
        or any(
            w in e.message for w in ("out of range", "nested too deeply", "too long", "is missing")
        )
    )


def same_error(ref: ModelSyntaxError, got: ModelSyntaxError) -> None:
    """The reader's error is lark's first error: the same line and column; the
    message may differ, but says what was expected."""
    assert (got.line, got.column) == (ref.line, ref.column), (got.format(), ref.format())
    assert says_what_was_expected(got), got.format()


def _same_records(ref: Machine, got: Machine) -> None:
    blocks_ref, blocks_got = list(ref.blocks()), list(got.blocks())
    assert len(blocks_ref) == len(blocks_got)
    for a, b in zip(blocks_ref, blocks_got):
        assert type(a) is type(b)
        assert b.src == a.src, f"{a.label()}: the source records differ"


def assert_same(text: str, thorough: bool = True) -> bool:
    """Check lark, the reader and the bulk scanners agree on ``text``; True when the
    bulk scanners read part of it. ``thorough`` adds the reader alone, the validator's
    diagnostics and an edit of a link."""
    ref = _load(text, "lark")
    with _Scanned() as scanned:
        got = _load(text, "bulk")
    if isinstance(ref, ModelSyntaxError) or isinstance(got, ModelSyntaxError):
        assert isinstance(ref, ModelSyntaxError), f"lark reads it; the reader: {got}"
        assert isinstance(got, ModelSyntaxError), f"the reader reads it; lark: {ref}"
        same_error(ref, got)
        return False
    assert got == ref
    assert got.src.diagnostics == ref.src.diagnostics
    assert dumps(got) == dumps(ref) == text
    if thorough:
        alone = _load(text, "reader")
        assert isinstance(alone, Machine) and alone == ref
        assert alone.src.diagnostics == ref.src.diagnostics
        _same_records(ref, alone)
        assert validate(got) == validate(ref)
        # an edit of a link, before any record is built, changes the same characters
        for m in (ref, got):
            for topo in m.topologies:
                if topo.links:
                    topo.links[len(topo.links) // 2].latency = Timing(1.25e-5)
                    topo.links[-1].connect = [*(topo.links[-1].connect or []), 1]
        assert dumps(got) == dumps(ref)
        ref, got = _load(text, "lark"), _load(text, "bulk")
        assert isinstance(ref, Machine) and isinstance(got, Machine)
    _same_records(ref, got)
    return scanned.bodies > 0


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    used = assert_same(text)
    if "begin linklist" in text or "begin timings" in text:
        assert used, "the bulk scanners did not read this sample"


def test_generated_torus() -> None:
    assert assert_same(torus_text(4))


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(S.machines())
def test_generated_models_in_canonical_form(machine: Machine) -> None:
    assert_same(dumps_canonical(machine))


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(S.model_texts())
def test_generated_models_in_varied_layouts(model: S.ModelText) -> None:
    assert_same(model.text)


# --------------------------------------------------------------------------- mutations

BASE = """\
begin machine
    id = 1
    name = "m"
    processors = 1
    topologies = 2
    begin processor
        id = 1
        name = "p"
        begin timings
            iga = 1e-06
            igm = 2.5e-06 1e-08
            sqrti = 3e-05  # read as sqrtr
            dln = 4.
        end timings
    end processor
    begin topology
        # piui: shape = 3 1
        id = 1
        name = "line"
        setup = 0.0
        routing = "XY"
        processors = 3
        links = 2
        begin procid
            p[1] = 1
            p[2] = 1
            p[3] = 1
        end procid
        begin linklist
            begin link
                id = 1
                latency = 2.85e-05
                speed = 9.1e-07
                connect = 2 1 2
            end link
            begin link
                id = 2
                latency = 2.85e-05
                speed = 9.1e-07 1e-9
                connect = 2 2 3
            end link
        end linklist
    end topology
    begin virtual
        id = 2
        name = "v"
        routing = "1Dtorus"
        processors = 2
        begin mapping
            map[1] = 2
            map[2] = 1
        end mapping
    end virtual
end machine
"""

# pieces that change how a line reads: line ends, comments, number forms, keywords
PIECES = (
    "\n", "\r\n", "\r", ";", "\x0b", "\f", "\t", " ", "#", "# piui: shape = 2 2", "=", "-", "+",
    ".", "e", "E", "e-", "0x", "1", "0", "9" * 19, "9" * 25, "1e999", "end", "begin", "link",
    "end link\n", "begin link\n", "id = 3\n", "latency = 1\n", "connect = 3 1 2 3\n", "p[4] = 1\n",
    "map[3] = 1\n", "x", "_", "[", "]", '"', "(", "\ufeff", "é", "end linklist\n",
    "begin linklist\n", "iga = 1\n", "end timings\n", "end procid\n",
)  # fmt: skip


def mutate(text: str, rnd: random.Random) -> str:
    """``text`` with one to three small changes, most of them in the bulk sections."""
    for _ in range(rnd.randint(1, 3)):
        lines = text.split("\n")
        op = rnd.randrange(7)
        i = rnd.randrange(len(lines))
        if op == 0:  # insert a piece
            at = rnd.randint(0, len(lines[i]))
            lines[i] = lines[i][:at] + rnd.choice(PIECES) + lines[i][at:]
        elif op == 1 and lines[i]:  # delete a few characters
            at = rnd.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + lines[i][at + rnd.randint(1, 4) :]
        elif op == 2:  # duplicate a line
            lines.insert(rnd.randrange(len(lines)), lines[i])
        elif op == 3:  # delete a line
            del lines[i]
        elif op == 4:  # swap two lines
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 5:  # change a number
            words = lines[i].split(" ")
            k = rnd.randrange(len(words))
            if words[k][:1].isdigit():
                words[k] = rnd.choice(("0", "007", "1.", "1e5", "-1", "0x1F", "99999", "9" * 19))
            lines[i] = " ".join(words)
        else:  # change the indentation or a gap
            lines[i] = rnd.choice(("", "\t", "  ")) + lines[i].lstrip(" ")
        text = "\n".join(lines)
    return text


def test_mutated_models() -> None:
    rnd = random.Random(14)
    fast = 0
    cases = 1500
    for i in range(cases):
        text = mutate(BASE, rnd)
        try:
            fast += assert_same(text, thorough=i % 10 == 0)
        except AssertionError as e:
            raise AssertionError(f"the parsers disagree on {text!r}") from e
    assert fast > cases // 4, f"only {fast} of {cases} mutated models used the bulk scanners"
