"""The reader (parasol_core.syntax.reader) agrees with the grammar run by lark, the
executable specification (tests/lark_reference.py): on every sample, on thousands of
generated expressions and on thousands of mutated model files it gives lark's result
(the same trees with the same positions, the same model, source records and
diagnostics) or refuses the text where lark does, at the same line and column. Its
section layout is the grammar's, its tokens are the grammar's terminals, and loading a
model or parsing an expression does not import lark."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any

import lark_reference
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings
from test_fast_parser_differential import _load, assert_same, mutate, same_error
from test_fast_parser_imports import _run

from parasol_core import ModelSyntaxError, Timing, loads, parse_expression
from parasol_core.syntax import reader
from parasol_core.syntax.build_expr import ExprBuilder
from parasol_core.syntax.expression import grammar_text
from parasol_core.syntax.writer import dumps_canonical

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_section_layout_is_the_grammar() -> None:
    """Each section's items in reader.LAYOUT (derived from the schema in model/machine.py) are
    the alternatives of its `_X_item` rule in grammar/machine.lark: its fields
    (`X_def`), the sections that begin in it, and its named lines."""
    grammar = grammar_text()
    rules = dict(re.findall(r"^(\w+):(.*(?:\n\s+\|.*)*)", grammar, re.M))
    section_of = {"machine": "_machine_item", "linklist": "_linklist_item"}
    for keyword, spec in reader.LAYOUT.items():
        rule = section_of.get(keyword)
        if rule is None:
            body = rules[keyword]  # e.g. `timings: BEGIN "timings" NL _timing_item* END ...`
            rule = re.search(r"(_\w+_item)\*", body).group(1)
        alternatives = {a.strip() for a in rules[rule].split("|")}
        alternatives -= {"NL", f"{keyword}_shape"}  # a line of blanks, a shape comment
        expected = {f"{f}_def" for f in spec.fields if f != "smallloopsspeedup"}
        expected |= set(spec.sections)
        if spec.named is not None:
            expected.add(
                {"timing": "timing_def", "expr": "expr_def"}.get(spec.named, f"{spec.named}_def")
            )
        assert alternatives == expected, keyword
    section_rules = {k for k, v in rules.items() if re.match(r"\s*BEGIN \"", v)}
    assert section_rules == set(reader.LAYOUT) - {"machine"}
    assert "smallloopsspeedup" in reader.LAYOUT["cache"].fields


def test_the_tokens_are_the_grammar_s_terminals() -> None:
    """reader.TERMINALS are grammar/machine.lark's terminals, character for character."""
    grammar = grammar_text()
    found = dict(re.findall(r"^([A-Z_]+)(?:\.\d+)?: /(.*)/$", grammar, re.M))
    words = re.compile(r"\((.*)\)\\b")
    for name, pattern in reader.TERMINALS.items():
        if name in ("FUNC", "REFPREFIX"):  # `(a|b|...)\b`: the same words, in any order
            assert set(words.fullmatch(pattern).group(1).split("|")) == set(
                words.fullmatch(found[name]).group(1).split("|")
            ), name
        else:
            assert pattern == found[name], name


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
    """(lark's tree or where it refuses the text, the reader's likewise)."""
    try:
        ref: Any = _tree(lark_reference.parse_expression(text).tree)
    except ModelSyntaxError as e:
        ref = ("fails", e.line, e.column)
    try:
        got: Any = _tree(reader.expression(text, ExprBuilder()))
    except ModelSyntaxError as e:
        got = ("fails", e.line, e.column)
        assert e.expected or "nested too deeply" in e.message or "out of range" in e.message, e
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
    """4,000 random expressions, most of them well formed, the rest token soup: the
    reader's tree is lark's in every attribute, and where lark refuses one the reader
    refuses it at the same column."""
    rnd = random.Random(8)
    read = refused = 0
    for i in range(4000):
        text = _wellformed(rnd) if i % 4 else _soup(rnd)
        ref, got = _both(text)
        assert got == ref, text
        if ref[:1] == ("fails",):
            refused += 1
        else:
            read += 1
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
    assert got == ref


def test_deep_nesting() -> None:
    """Up to the limit the reader builds lark's tree; past it both refuse the text, the
    reader at the first level past the limit (lark's builder at the outermost)."""
    for n in (31, 40, 150, 199):
        text = "(" * n + "1" + ")" * n
        ref, got = _both(text)
        assert got == ref and got[:1] != ("fails",), n
    for n in (200, 250, 5000):
        text = "(" * n + "1" + ")" * n
        ref, got = _both(text)
        assert ref[:2] == got[:2] == ("fails", 1), n
        with pytest.raises(ModelSyntaxError, match="nested too deeply"):
            parse_expression(text)


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
    assert count.read == 3  # with the bulk scanners and without, and after an edit


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
    """2,000 mutations of a model with every section: the reader gives what lark gives
    (the same model, records and diagnostics, or a syntax error at the same line and
    column)."""
    rnd = random.Random(15)
    cases = 2000
    models = read = 0  # texts lark reads as a model, and the reader
    with _Count() as count:
        for i in range(cases):
            text = _mutate_expressions(BASE, rnd) if i % 2 else mutate(BASE, rnd)
            before = count.read
            try:
                assert_same(text, thorough=False)
                models += isinstance(_load(text, "lark"), ModelSyntaxError) is False
                read += count.read > before
                if i % 10 == 0 and count.read > before:
                    assert_same(text)  # the validator too, and an edit of a link
            except AssertionError as e:
                raise AssertionError(f"the reader and lark disagree on {text!r}") from e
    # most mutations break the text; of those that do not, the reader reads every one
    assert models > 400 and read == models, (read, models)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(S.machines())
def test_generated_models_are_read_by_the_reader(machine: Any) -> None:
    with _Count() as count:
        assert_same(dumps_canonical(machine), thorough=False)
    assert count.read, "the reader stepped aside from a canonical model"


def test_a_syntax_error_is_lark_s() -> None:
    text = BASE.replace("ia_spd = pt(1).iga", "ia_spd = pt(1).iga +")
    got = _load(text, "bulk")
    ref = _load(text, "lark")
    assert isinstance(got, ModelSyntaxError) and isinstance(ref, ModelSyntaxError)
    same_error(ref, got)
    assert got.expected and "expected" in got.message


@pytest.mark.parametrize(
    ("section", "line"),
    [("cache", "            smallloopsspeedup = 1.5"), ("timings", "            id = 2e-6"),
     ("timings", "            begin = 2e-6"), ("combinations", "            name = 1 + 2")],
)  # fmt: skip
def test_a_shape_comment_changes_nothing_after_it(section: str, line: str) -> None:
    """A word after a shape comment (or a line of blanks the line end before it did not
    take) reads as it does anywhere in its section: the grammar gives each section its
    own rule for them, so the states after them are not shared between sections (they
    were: `smallloopspeedup` and timings named like keywords were refused there)."""
    anchor = f"end {section}"
    head, tail = BASE.split(anchor, 1)
    for before in ("        # piui: shape = 2 1\n", "        \ufeff\n"):
        text = head + before + line.strip() + "\n        " + anchor + tail
        assert_same(text, thorough=False)  # the grammar run by lark reads it too
        p = loads(text).processors[0]
        name = line.split("=")[0].strip()
        if section == "cache":
            assert p.cache.smallloopspeedup == Timing(1.5)
        elif section == "timings":
            assert p.timings[name] == Timing(2e-6)
        else:
            assert p.combinations[name].text == "1 + 2"


# --------------------------------------------------------------------------- no lark


def test_loading_a_model_does_not_import_lark() -> None:
    out = _run(
        "import sys; from parasol_core import load, parse_expression; "
        "m = load('sample_models/parsytec-gcel.machine'); "
        "e = parse_expression('pt(1).iga / tl(1)(1).speed'); "
        "print(len(m.topologies[0].links), e.text, 'lark' in sys.modules)"
    )
    assert out == "976 pt(1).iga / tl(1)(1).speed False"


def test_an_unusual_text_and_a_syntax_error_do_not_import_lark() -> None:
    out = _run(
        "import sys; from parasol_core import loads, parse_expression, ModelSyntaxError; "
        "m = loads('\\ufeffbegin machine\\r\\n  id = 1\\r\\nend machine\\r\\n'); "
        "e = parse_expression('1 +\\f2')\n"
        "try:\n    loads('begin machine\\n  id = = 1\\n')\n"
        "except ModelSyntaxError as x:\n    err = x\n"
        "print(m.id, e.text, err.line, err.column, 'lark' in sys.modules)"
    )
    assert out == "1 1 +\f2 2 8 False"


def test_a_number_out_of_range_is_reported_where_it_stands() -> None:
    """The one place the reader's first error is not lark's: a value out of range on a
    line followed by a line that cannot stand. Lark's parser builds a definition only
    once it has read the token after it, so it reports the later line; the reader
    reports the first error, the number (the differential corpora never meet this)."""
    text = "begin machine\n id = 99999999999999999999999\n colour = 1\nend machine\n"
    with pytest.raises(ModelSyntaxError) as got:
        loads(text)
    with pytest.raises(ModelSyntaxError) as ref:
        lark_reference.loads(text)
    assert (got.value.line, got.value.column) == (2, 7) and "out of range" in got.value.message
    assert (ref.value.line, ref.value.column) == (3, 2)
    # with a good line after it, both report the number
    text = text.replace("colour", "name")
    with pytest.raises(ModelSyntaxError) as ref:
        lark_reference.loads(text)
    assert (ref.value.line, ref.value.column) == (2, 7)
