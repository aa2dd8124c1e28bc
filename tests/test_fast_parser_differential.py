"""The fast path (parasol_core.syntax.fastscan) agrees with lark, the reference parser.

Every text here is loaded twice, by lark alone and with the fast path, and must give
the same outcome: the same syntax error (message, line, column, found text, expected
tokens, context), or an equal model with equal source records for every section (the
fast path's lazily built link records included), the same diagnostics from the loader
and from the validator, and the same text written back, unedited and after an edit of a
link. The texts: the samples, generated models (in canonical form, which the fast path
takes, and in varied layouts, which it mostly leaves to lark), and thousands of mutations
of a model whose bulk sections the fast path reads.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings

import parasol_core.syntax.parser as parser_module
from parasol_core import Machine, ModelSyntaxError, Timing, loads
from parasol_core.syntax import fastscan
from parasol_core.syntax.source import is_lazy
from parasol_core.syntax.writer import dumps, dumps_canonical
from parasol_core.validate import validate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

SAMPLES = sorted((ROOT / "sample_models").glob("*.machine"))


@pytest.fixture(autouse=True)
def _fast_path_on_small_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the fast path take sections of any size, so small texts exercise it."""
    monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)


def _load(text: str, fast: bool) -> Machine | tuple:
    parser_module._fast = fast
    try:
        return loads(text)
    except ModelSyntaxError as e:
        return ("syntax error", e.message, e.line, e.column, e.text, e.expected, e.context)
    finally:
        parser_module._fast = True


def _used_fast_path(m: Machine) -> bool:
    return any(is_lazy(link) for t in m.topologies for link in t.links) or any(
        fastscan.scan(m.src.text)[1]
    )


def _same_records(ref: Machine, got: Machine) -> None:
    blocks_ref, blocks_got = list(ref.blocks()), list(got.blocks())
    assert len(blocks_ref) == len(blocks_got)
    for a, b in zip(blocks_ref, blocks_got):
        assert type(a) is type(b)
        assert b.src == a.src, f"{a.label()}: the source records differ"


def assert_same(text: str, thorough: bool = True) -> bool:
    """Check both parsers agree on ``text``; True when the fast path read part of it.
    ``thorough`` adds the validator's diagnostics and an edit of a link."""
    ref = _load(text, fast=False)
    got = _load(text, fast=True)
    if isinstance(ref, tuple) or isinstance(got, tuple):
        assert got == ref
        return False
    fast = _used_fast_path(got)
    assert got == ref
    assert got.src.diagnostics == ref.src.diagnostics
    assert dumps(got) == dumps(ref) == text
    if thorough:
        assert validate(got) == validate(ref)
        # an edit of a link, before any record is built, changes the same characters
        for m in (ref, got):
            for topo in m.topologies:
                if topo.links:
                    topo.links[len(topo.links) // 2].latency = Timing(1.25e-5)
                    topo.links[-1].connect = [*(topo.links[-1].connect or []), 1]
        assert dumps(got) == dumps(ref)
        ref, got = _load(text, fast=False), _load(text, fast=True)
        assert isinstance(ref, Machine) and isinstance(got, Machine)
    _same_records(ref, got)
    return fast


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    used = assert_same(text)
    if "begin linklist" in text or "begin timings" in text:
        assert used, "the fast path did not read this sample"


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
    assert fast > cases // 4, f"only {fast} of {cases} mutated models used the fast path"
