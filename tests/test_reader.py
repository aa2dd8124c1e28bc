"""The hand-written reader (parasol_core.syntax.reader) agrees with lark, the reference
parser: on every sample, on thousands of generated expressions and on thousands of
mutated model files it gives lark's result (the same trees with the same positions, the
same model, source records and diagnostics) or steps aside, and it never accepts a text
lark refuses. Its table of sections is the grammar's, and loading a model in its usual
form, or an expression typed in an editor, does not import lark at all."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings
from test_fast_parser_differential import _load, assert_same, mutate
from test_fast_parser_imports import _run

from parasol_core.syntax import reader
from parasol_core.syntax.build_expr import ExprBuilder, _Fail
from parasol_core.syntax.expression import _get_expr_parser, grammar_text
from parasol_core.syntax.writer import dumps_canonical

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "sample_models").glob("*.machine"))


class _Count:
    """While in use (``with _Count() as count``), counts in ``count.read`` the texts the
    reader read to the end (did not step aside from)."""

    def __enter__(self) -> _Count:
        self.read = 0
        self.original = original = reader.read

        def counting(*args: Any) -> Any:
            result = original(*args)
            self.read += 1
            return result

        reader.read = counting
        return self

    def __exit__(self, *_: object) -> None:
        reader.read = self.original


# --------------------------------------------------------------------------- the grammar


def test_the_sections_table_is_the_grammar() -> None:
    """Each section's items in reader.SECTIONS are the alternatives of its `_X_item`
    rule in grammar/machine.lark: its fields (`X_def`), the sections that begin in it,
    and its named lines."""
    grammar = grammar_text()
    rules = dict(re.findall(r"^(\w+):(.*(?:\n\s+\|.*)*)", grammar, re.M))
    section_of = {"machine": "_machine_item", "linklist": "_linklist_item"}
    for keyword, (fields, sections, named) in reader.SECTIONS.items():
        rule = section_of.get(keyword)
        if rule is None:
            body = rules[keyword]  # e.g. `timings: BEGIN "timings" NL _timing_item* END ...`
            rule = re.search(r"(_\w+_item)\*", body).group(1)
        alternatives = {a.strip() for a in rules[rule].split("|")}
        alternatives.discard("_blank")
        expected = {f"{f}_def" for f in fields if f != "smallloopsspeedup"} | set(sections)
        if named == "timing":
            expected.add("timing_def")
        elif named == "expr":
            expected.add("expr_def")
        elif named == "p":
            expected.add("p_def")
        elif named == "map":
            expected.add("map_def")
        assert alternatives == expected, keyword
    assert "smallloopsspeedup" in reader.SECTIONS["cache"][0]


# --------------------------------------------------------------------------- samples


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_reader_reads_every_sample_as_lark_does(path: Path) -> None:
    with _Count() as count:
        assert_same(path.read_text(encoding="utf-8"))
    assert count.read >= 1, "the reader stepped aside from a sample"


# --------------------------------------------------------------------------- expressions


def _tree(node: Any) -> Any:
    """Every attribute of a tree, positions, depth and nesting included."""
    return dataclasses.astuple(node) if dataclasses.is_dataclass(node) else node


def _both(text: str) -> tuple[Any, Any]:
    """(lark's tree or its failure, the reader's tree or "defer")."""
    try:
        ref: Any = _tree(_get_expr_parser().parse(text))
    except Exception as e:  # lark's syntax errors and the builder's _Fail alike
        ref = ("fails", type(e).__name__)
    try:
        got: Any = _tree(reader.expression(text, ExprBuilder()))
    except (reader.Defer, _Fail, RecursionError):
        got = "defer"
    return ref, got


PIECES = (
    "1", "0", "42", "007", "0x1F", "0xg", "1.5", "1.", "2.e5", "1e5", "1e-5", "1E+2", "1e",
    ".5", "9" * 20, "1e999", "pt(1).iga", "pt(1)", "tl(1)(2).speed", "tl(1)(1).connect(0)",
    "ar.bytes", "ar.procs", "mc.maxtotalspd", "to(1).links", "pt", "ptx", "pt (1) . iga",
    "pt(1).sin", "pt(1.5).iga", "pt(1)(2)(3).x(4)(5)", "sqrt(", "sqrt", "log10(", "log(",
    "cosh (", "sin_(", "abs(", "x", "iga", "(", ")", "+", "-", "*", "/", "%", "**", "<<",
    ">>", "<", "<=", ">", ">=", "==", "!=", "&", "^", "|", "&&", "||", "!", "~", "--", " ",
    "  ", "\t", "=", ".", ",", "é", "\f",
)  # fmt: skip


LEAVES = (
    "1", "0", "42", "007", "0x1F", "1.5", "1.", "2.e5", "1e5", "1e-5", "1E+2", "pt(1).iga",
    "pt(1)", "tl(1)(2).speed", "tl(1)(1).connect(0)", "ar.bytes", "mc.maxtotalspd",
    "to(1).links", "pt (1) . iga", "pt(1)(2)(3).x(4)", "ar . procs",
)  # fmt: skip


def _soup(rnd: random.Random) -> str:
    return "".join(rnd.choice(PIECES) + rnd.choice(("", " ")) for _ in range(rnd.randint(1, 9)))


def _wellformed(rnd: random.Random, depth: int = 0) -> str:
    """A random expression that is one (most of the time), with random spacing."""
    sp = lambda: rnd.choice(("", " ", "  ", "\t"))  # noqa: E731
    r = rnd.random()
    if depth > 5 or r < 0.3:
        return rnd.choice(LEAVES)
    if r < 0.45:
        return f"{rnd.choice('-!~')}{sp()}{_wellformed(rnd, depth + 1)}"
    if r < 0.6:
        return f"({sp()}{_wellformed(rnd, depth + 1)}{sp()})"
    if r < 0.7:
        return f"{rnd.choice(('sqrt', 'abs', 'log10', 'cosh', 'int'))}{sp()}({_wellformed(rnd, depth + 1)})"
    op = rnd.choice(S.BINARY_OPS)
    return f"{_wellformed(rnd, depth + 1)}{sp()}{op}{sp()}{_wellformed(rnd, depth + 1)}"


def test_expressions_read_as_lark_reads_them() -> None:
    """4,000 random expressions, most of them well formed, the rest token soup: where
    the reader reads one, its tree is lark's in every attribute; where lark refuses
    one, the reader steps aside."""
    rnd = random.Random(8)
    read = refused = 0
    for i in range(4000):
        text = _wellformed(rnd) if i % 4 else _soup(rnd)
        ref, got = _both(text)
        if got != "defer":
            assert got == ref, text
            read += 1
        if isinstance(ref, tuple) and ref and ref[0] == "fails":
            assert got == "defer", f"the reader accepted {text!r}, which lark refuses"
            refused += 1
    assert read > 2500 and refused > 500, (read, refused)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(S.expressions(runtime=True))
def test_generated_expressions_are_read_by_the_reader(expr: Any) -> None:
    ref, got = _both(expr.text)
    assert got == ref, expr.text


@pytest.mark.parametrize(
    "text",
    ["-2**2", "2**-3**2", "a", "1 +", "(1", "1)", "pt(1)(2", "- - - 1", "1 < 2 < 3",
     "1 - -1", "1--1", "!1 != ~2", "2 ** 3 ** 4", "(((((1)))))", "sqrt(2)(3)",
     "pt(1).iga(2)(3)", "1 ** 2", "0x10 + 0x1F", "1.e5", "ptx(1)"],
)  # fmt: skip
def test_corner_cases(text: str) -> None:
    ref, got = _both(text)
    assert got in ("defer", ref)
    if not isinstance(ref, tuple) or ref[:1] != ("fails",):
        assert got == ref, "a well-formed corner case should not need lark"


def test_deep_nesting_goes_to_lark() -> None:
    """The reader recurses; past its depth it steps aside, and lark's limits speak."""
    for n in (31, 40, 150, 250):
        text = "(" * n + "1" + ")" * n
        ref, got = _both(text)
        assert got in ("defer", ref)
        assert (got == "defer") == (n > 31), n


# --------------------------------------------------------------------------- files

BASE = """\
# a model with every kind of section the reader takes
begin machine
    id = 1
    name = "m; with a semicolon"
    processors = 2
    topologies = 2

    begin processor
        id = 1
        name = "p"
        begin timings
            iga = 1e-06
            igm = 2.5e-06 1e-08  # mean and sd
            sqrti = 3e-05
        end timings
        begin cache
            size = 0x10
            speed = 3.3e-08
            smallloopsspeedup = 1.0
        end cache
        begin combinations
            ia_spd = pt(1).iga / tl(1)(1).speed
            mix = -(pt(1).igm ** 2) + sqrt(abs(pt(1).iga - 1e-6)) % 3
        end combinations
    end processor
    begin processor
        id = 2; name = "q"
    end processor
    begin machinecombinations
        maxtotalspd = (tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed
    end machinecombinations
    begin topology
        # piui: shape = 2 1
        id = 1
        name = "line"
        setup = 0.0
        routing = "XY"
        processors = 2
        links = 1
        begin procid
            p[1] = 1
            p [2] = 2
        end procid
        begin linklist
            begin link
                id = 1
                latency = 2.85e-05
                speed = 9.1e-07
                connect = 2 1 2
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
    begin pvm
        send = tl(1)(1).latency + ar.bytes * tl(1)(1).speed
    end pvm
    begin express
        send = 1e-4 << 2 >= 1 && !0 || ~1
    end express
    begin mpi
        send = tl(1)(1).latency + ar.bytes * tl(1)(1).speed  # one hop
        receive = tl(1)(1).latency
    end mpi
end machine
"""


def test_the_base_model_is_read_by_the_reader() -> None:
    with _Count() as count:
        assert_same(BASE)
    assert count.read == 2  # once for the text, once after the edit of a link


EXPR_PIECES = (
    " ", "+", "-", "*", "**", "(", ")", ".", "1", "0x", "e", "1e5", "pt(1)", "tl(1)(1)", "sqrt(",
    "#", "# piui: shape = 1", ";", "=", "end", "begin", "\t", '"', "\r\n", "\r", "\ufeff", "x",
)  # fmt: skip


def _mutate_expressions(text: str, rnd: random.Random) -> str:
    """A change inside a line: in an expression, a definition or a section line."""
    lines = text.split("\n")
    i = rnd.randrange(len(lines))
    at = rnd.randint(0, len(lines[i]))
    lines[i] = lines[i][:at] + rnd.choice(EXPR_PIECES) + lines[i][at:]
    return "\n".join(lines)


def test_mutated_models() -> None:
    """2,000 mutations of a model with every section: the loader, reader first, gives
    what lark alone gives (the same model, records and diagnostics, or the same syntax
    error), and the reader reads a good share of them itself."""
    rnd = random.Random(15)
    cases = 2000
    models = read = 0  # texts lark reads as a model, and the reader itself
    with _Count() as count:
        for i in range(cases):
            text = _mutate_expressions(BASE, rnd) if i % 2 else mutate(BASE, rnd)
            before = count.read
            try:
                fast = assert_same(text, thorough=False)
                models += fast or not isinstance(_load(text, fast=False), tuple)
                read += count.read > before
                if i % 10 == 0 and count.read > before:
                    assert_same(text)  # the validator too, and an edit of a link
            except AssertionError as e:
                raise AssertionError(f"the reader and lark disagree on {text!r}") from e
    # most mutations break the text; of those that do not, the reader reads nearly all
    # itself (it steps aside from byte-order marks, form feeds, `endmapping`, timings
    # named like keywords, ...)
    assert models > 400 and read > 0.85 * models, (read, models)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(S.machines())
def test_generated_models_are_read_by_the_reader(machine: Any) -> None:
    with _Count() as count:
        assert_same(dumps_canonical(machine), thorough=False)
    assert count.read, "the reader stepped aside from a canonical model"


def test_a_syntax_error_is_lark_s() -> None:
    text = BASE.replace("ia_spd = pt(1).iga", "ia_spd = pt(1).iga +")
    got = _load(text, fast=True)
    assert isinstance(got, tuple) and got[0] == "syntax error"
    assert got == _load(text, fast=False)  # message, line, column, found, expected, context


# --------------------------------------------------------------------------- no lark


def test_loading_a_model_in_its_usual_form_does_not_import_lark() -> None:
    out = _run(
        "import sys; from parasol_core import load, Expression; "
        "m = load('sample_models/parsytec-gcel.machine'); "
        "e = Expression.parse('pt(1).iga / tl(1)(1).speed'); "
        "print(len(m.topologies[0].links), e.text, 'lark' in sys.modules)"
    )
    assert out == "976 pt(1).iga / tl(1)(1).speed False"


def test_a_text_the_reader_steps_aside_from_still_loads() -> None:
    out = _run(
        "import sys; from parasol_core import loads, Expression; "
        "m = loads('\\ufeffbegin machine\\r\\n  id = 1\\r\\nend machine\\r\\n'); "
        "e = Expression.parse('1 +\\f2'); "
        "print(m.id, e.text, 'lark' in sys.modules)"
    )
    assert out == "1 1 +\f2 True"
