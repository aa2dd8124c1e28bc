"""Bad input: whatever the bytes, loading gives a model or a ModelSyntaxError.

Never another exception, never a hang. A ModelSyntaxError says where (line and column
from 1) and what; a text that loads can be validated (diagnostics, no exception) and
written back byte for byte.

The mutation tests start from a small model embedded here and from every sample in
``sample_models/`` present when the tests run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timing import assert_within, best_of, one_pass, timed

from parasol_core import Diagnostic, Machine, ModelSyntaxError, load, loads, parse_expression
from parasol_core.analysis.validate import validate
from parasol_core.model import Timing
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps, dumps_canonical

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = ROOT / "sample_models"
LIMIT = 1_000_000  # the longest line a model file may have

SMALL = """\
# A small model with one of everything.
begin machine
    id = 1
    name = "Zürich pair"   # a comment; with a semicolon
    processors = 1
    topologies = 2

    begin processor
        id = 1
        name = "T800"
        begin timings
            iga = 1.0e-6 2e-8
            igm = 3.2E-6
            sqrti = 4e-5
        end timings
        begin cache
            size = 0x1000
            speed = 1e-7
            smallloopspeedup = 1.5
        end cache
        begin combinations
            ia_spd = pt(1).iga / tl(1)(1).speed
        end combinations
    end processor

    begin machinecombinations
        maxtotalspd = -(tl(1)(1).connect(0) * to(1).links) ** 2 / tl(1)(1).speed
    end machinecombinations

    begin topology
        # piui: shape = 2 1
        id = 1
        name = "pair"
        setup = 0.5
        routing = "XY"
        processors = 2
        links = 1
        begin procid
            p[1] = 1
            p[2] = 1
        end procid
        begin linklist
            begin link
                id = 1
                latency = 1e-5
                speed = 1e-6
                connect = 2 1 2
            end link
        end linklist
    end topology

    begin virtual
        id = 2
        name = "ring"
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
end machine
"""
# The same model without comments (a comment runs to a real line end, so `;` inside
# one is not a line end: the tests of other line ends need a text without them).
SMALL_NO_COMMENTS = "".join(
    re.sub(r"\s*#(?! piui).*", "", line) + "\n"
    for line in SMALL.splitlines()
    if not line.startswith("# A small")
)


def _samples() -> list:
    params = [pytest.param(SMALL.encode("utf-8"), id="embedded")]
    for path in sorted(SAMPLE_DIR.glob("*.machine")):
        params.append(pytest.param(path.read_bytes(), id=path.name))
    return params


SOURCES = _samples()

# --------------------------------------------------------------------------- the contract


def check_error(e: ModelSyntaxError, data: bytes | str) -> None:
    """A syntax error says where, inside the text, and what."""
    assert isinstance(e.line, int) and isinstance(e.column, int), e
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    lines = re.split(rb"\r\n?|[\n\x0b]", raw)  # physical lines, as positions count them
    assert 1 <= e.line <= len(lines), f"line {e.line} of {len(lines)}: {e}"
    assert 1 <= e.column <= len(lines[e.line - 1]) + 1, f"column {e.column}: {e}"
    assert isinstance(e.message, str) and e.message.strip(), e
    assert isinstance(e.text, str) and isinstance(e.context, str), e
    assert isinstance(e.expected, tuple), e
    assert f":{e.line}:{e.column}: error: " in str(e)
    d = e.as_diagnostic()
    assert (d.line, d.column, d.is_error) == (e.line, e.column, True)


def outcome(data: bytes | str) -> Machine | None:
    """Load ``data``; check whichever way it goes; the model, or None on a syntax error."""
    try:
        m = loads(data)
    except ModelSyntaxError as e:
        check_error(e, data)
        return None
    diagnostics = validate(m)
    assert isinstance(diagnostics, list)
    assert all(isinstance(d, Diagnostic) for d in diagnostics)
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    assert dumps(m) == text, "an unedited model must write back byte for byte"
    assert loads(dumps_canonical(m)) == m
    json.dumps(to_data(m))
    return m


def syntax_error(data: bytes | str) -> ModelSyntaxError:
    with pytest.raises(ModelSyntaxError) as info:
        loads(data)
    check_error(info.value, data)
    return info.value


def position(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """(line, column) of the n-th occurrence of ``needle``."""
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def errors(m: Machine) -> list[Diagnostic]:
    return [d for d in validate(m) if d.is_error]


# --------------------------------------------------------------------------- mutations

TOKENS = (
    b"(", b")", b"\n", b"\r\n", b"\r", b";", b"\x0b", b"#", b"=", b'"', b" ", b"\t",
    b"begin ", b"end ", b"begin foo\n", b"end machine\n", b"begin processor\n", b"-", b"0x",
    b"e", b"E+", b".", b"**", b"pt(1).", b"ar.bytes", b"sqrt(", b"(" * 300, b"9" * 50,
    b"1e999", b"# piui: shape = 2 2\n", b"# piui: shape = x\n", b"\xff", b"\xc3", b"\x00",
    b"\xef\xbb\xbf", "é".encode(),
)  # fmt: skip


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to four byte-level changes."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(("delete", "insert", "replace", "truncate", "duplicate line",
                                   "delete line", "swap lines")))  # fmt: skip
        at = draw(st.integers(0, len(buf)))
        if op == "delete":
            del buf[at : at + draw(st.integers(1, 40))]
        elif op == "insert":
            buf[at:at] = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=8))
        elif op == "replace" and at < len(buf):
            buf[at] = draw(st.integers(0, 255))
        elif op == "truncate":
            del buf[at:]
        else:
            lines = bytes(buf).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == "duplicate line":
                lines.insert(j, lines[i])
            elif op == "delete line":
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            buf = bytearray(b"\n".join(lines))
    return bytes(buf)


@pytest.mark.parametrize("data", SOURCES)
def test_mutated_files_load_or_raise_a_syntax_error(data: bytes) -> None:
    # Fewer examples for the big samples: each load of the GCel model takes a while.
    examples = max(20, min(400, 5_000_000 // max(len(data), 1)))

    @settings(max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(mutations(data))
    def check(mutated: bytes) -> None:
        outcome(mutated)

    assert outcome(data) is not None  # the unmutated file loads
    check()


@pytest.mark.parametrize("data", SOURCES)
def test_every_line_of_a_sample_duplicated_or_deleted(data: bytes) -> None:
    """Deterministic neighbours of the mutations above, for the small samples."""
    lines = data.split(b"\n")
    if len(data) > 6_000:
        pytest.skip("only the small samples: the mutation test above covers the others")
    for i in range(len(lines)):
        outcome(b"\n".join(lines[:i] + lines[i + 1 :]))
        outcome(b"\n".join(lines[: i + 1] + lines[i:]))


# --------------------------------------------------------------------------- truncation


def test_every_prefix_of_a_small_model() -> None:
    """Cut the embedded model at every byte: a model, or an error inside the prefix."""
    data = SMALL.encode("utf-8")
    for cut in range(len(data) + 1):
        outcome(data[:cut])


def _open_sections(text: str) -> list[tuple[str, int]]:
    """The `begin X` sections a prefix of complete lines leaves open, with their lines."""
    stack = []
    for n, line in enumerate(text.split("\n"), 1):
        words = line.split("#")[0].split()
        if words[:1] == ["begin"]:
            stack.append((words[1], n))
        elif words[:1] == ["end"]:
            stack.pop()
    return stack


def test_a_file_cut_after_any_line_says_which_section_is_open() -> None:
    lines = SMALL.split("\n")
    for n in range(len(lines)):
        prefix = "\n".join(lines[:n]) + ("\n" if n else "")
        opened = _open_sections(prefix)
        if not opened:  # nothing but the leading comment, or the whole file
            if "end machine" in prefix:
                assert loads(prefix) == loads(SMALL)
            else:
                assert "begin" in syntax_error(prefix).message
        elif len(opened) == 1:  # only the machine: 'end machine' may be missing
            m = loads(prefix)
            warnings = [d for d in validate(m) if "'end machine' is missing" in d.message]
            assert len(warnings) == 1 and warnings[0].severity == "warning", prefix
        else:
            keyword, line = opened[-1]
            e = syntax_error(prefix)
            assert e.message == (
                f"the file ends inside 'begin {keyword}' (line {line}): 'end {keyword}' is missing"
            ), prefix
            assert e.line <= n


def test_a_cut_inside_a_utf8_character() -> None:
    data = SMALL.encode("utf-8")
    cut = data.index("ü".encode()) + 1
    e = syntax_error(data[:cut])
    assert "UTF-8" in e.message
    assert e.line == position(SMALL, "Zürich")[0]


# --------------------------------------------------------------------------- binary garbage


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000))
def test_random_bytes(data: bytes) -> None:
    outcome(data)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=500))
def test_random_bytes_after_a_valid_start(data: bytes) -> None:
    outcome(b"begin machine\n    id = 1\n" + data)
    outcome(SMALL.encode("utf-8") + data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", id="png"),
        pytest.param(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", id="gzip"),
        pytest.param(b"\xff\xd8\xff\xe0\x00\x10JFIF", id="jpeg"),
        pytest.param(SMALL.encode("utf-16"), id="utf-16"),
        pytest.param(SMALL.encode("latin-1"), id="latin-1"),
    ],
)
def test_binary_files_are_not_text(data: bytes) -> None:
    e = syntax_error(data)
    assert "UTF-8" in e.message
    first_bad = next(i for i in range(len(data)) if _bad_utf8_at(data, i))
    assert e.line == data.count(b"\n", 0, first_bad) + 1


def _bad_utf8_at(data: bytes, i: int) -> bool:
    try:
        data[: i + 1].decode("utf-8")
    except UnicodeDecodeError as e:
        return e.reason != "unexpected end of data"
    return False


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xfe", b"\xc3(", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"],
    ids=["ff", "fe", "broken-pair", "surrogate", "above-10ffff", "overlong", "continuation"],
)
def test_invalid_utf8_is_reported_on_its_line_and_column(bad: bytes) -> None:
    text = SMALL.replace('name = "T800"', 'name = "T8@@00"')
    data = text.encode("utf-8").replace(b"@@", bad)
    e = syntax_error(data)
    assert "UTF-8" in e.message
    assert (e.line, e.column) == position(text, "@@")


@pytest.mark.parametrize("count", [1, 1000])
def test_nul_bytes(count: int) -> None:
    e = syntax_error(b"\x00" * count)
    assert (e.line, e.column) == (1, 1)
    e = syntax_error(SMALL.replace("iga", "i\x00ga").encode())
    line, column = position(SMALL, "iga")
    assert (e.line, e.column) == (line, column + 1) and "\\x00" in e.message


def test_a_byte_order_mark_is_a_clear_error_or_ignored() -> None:
    m = outcome(b"\xef\xbb\xbf" + SMALL.encode("utf-8"))
    if m is not None:
        assert m == loads(SMALL)


def test_load_reports_the_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.machine"
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ModelSyntaxError) as info:
        load(path)
    assert info.value.file == str(path) and str(path) in str(info.value)
    path.write_text(SMALL.replace("begin cache", "begin cash"), encoding="utf-8")
    with pytest.raises(ModelSyntaxError) as info:
        load(path)
    assert info.value.file == str(path)
    assert (info.value.line, info.value.column) == position(SMALL, "cache")


# --------------------------------------------------------------------------- long lines


# A refusal is timed against a baseline measured in the same test (tests/timing.py),
# never against a constant: reading the input once (a large input), or loading the small
# model whole (a small but hostile one). Refusals cost about one pass, or about one small
# load; the ratios allowed are 20 and 50 (what they guard against, work growing faster
# than the input, is a thousand times slower or never ends).
PASSES = 20
SMALL_LOADS = 50


def _timed(fn, *args):
    """What ``fn(*args)`` gives, and the least time of three calls (a single call of a
    millisecond on two busy cores once took 95 ms: the scheduler, not the code)."""
    result, seconds = timed(fn, *args)
    if isinstance(result, Exception) and not isinstance(result, ModelSyntaxError):
        raise result
    return result, min(seconds, best_of(fn, *args, repeat=2))


def _small_load() -> float:
    return best_of(loads, SMALL)


def test_a_line_at_the_limit_loads_and_one_over_it_does_not() -> None:
    head, tail = SMALL.split('        name = "T800"\n')
    name_line = '        name = "' + "x" * (LIMIT - 17) + '"'
    assert len(name_line) == LIMIT
    m = loads(head + name_line + "\n" + tail)
    assert len(m.processors[0].name) == LIMIT - 17
    e = syntax_error(head + name_line[:-1] + 'x"\n' + tail)
    assert "too long" in e.message and "1,000,000" in e.message
    assert e.line == head.count("\n") + 1


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
@pytest.mark.parametrize("where", ["name", "comment", "last line", "first line", "expression"])
def test_a_50_mb_line_is_rejected_fast(where: str, as_bytes: bool) -> None:
    big = "y" * 50_000_000
    if where == "name":
        text = SMALL.replace('"T800"', f'"{big}"')
    elif where == "comment":
        text = SMALL.replace("# a comment", "# " + big)
    elif where == "last line":
        text = SMALL + big
    elif where == "first line":
        text = big + "\n" + SMALL
    else:
        text = SMALL.replace("ia_spd = pt(1).iga", "ia_spd = " + "1 + " * 12_500_000 + "pt(1).iga")
    data = text.encode("utf-8") if as_bytes else text
    e, seconds = _timed(loads, data)
    assert isinstance(e, ModelSyntaxError)
    assert "too long" in e.message and "1,000,000" in e.message
    long_line = text.index("yyyy" if where != "expression" else "1 + 1")
    assert e.line == text.count("\n", 0, long_line) + 1
    assert_within(seconds, best_of(one_pass, data), PASSES, "refusing a 50 MB line")


# --------------------------------------------------------------------------- nesting


def _in_expression(expr: str) -> str:
    return SMALL.replace("pt(1).iga / tl(1)(1).speed", expr)


NESTINGS = {
    "parentheses": lambda n: "(" * n + "1" + ")" * n,
    "parenthesised minus": lambda n: "-(" * n + "1" + ")" * n,
    "minus": lambda n: "-" * n + "1",
    "not": lambda n: "!" * n + "1",
    "calls": lambda n: "sqrt(" * n + "1" + ")" * n,
    "left sums": lambda n: " + ".join(["1"] * n),
    "right powers": lambda n: " ** ".join(["2"] * n),
    "right parentheses": lambda n: "1 + (" * n + "1" + ")" * n,
}


@pytest.mark.parametrize("n", [10_000, 100_000])
@pytest.mark.parametrize("kind", list(NESTINGS))
def test_deep_nesting_is_rejected_fast(kind: str, n: int) -> None:
    expr = NESTINGS[kind](n)
    text = _in_expression(expr)
    e, seconds = _timed(loads, text)
    assert isinstance(e, ModelSyntaxError), f"{kind} x {n} loaded"
    check_error(e, text)
    refused = "too long" if kind == "left sums" else "nested too deeply"  # a flat chain
    assert refused in e.message
    assert e.line == position(SMALL, "ia_spd")[0]
    baseline = _small_load()
    assert_within(seconds, baseline, SMALL_LOADS, f"refusing {kind} x {n} in a model")
    e, seconds = _timed(parse_expression, expr)
    assert isinstance(e, ModelSyntaxError) and refused in e.message
    assert_within(seconds, baseline, SMALL_LOADS, f"refusing {kind} x {n}")


def test_nesting_within_the_limit_loads() -> None:
    m = loads(_in_expression("(" * 150 + "pt(1).iga" + ")" * 150))
    assert m.processors[0].combinations["ia_spd"].tree == parse_expression("pt(1).iga").tree


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_unbalanced_parentheses(n: int) -> None:
    for expr in ("(" * n + "1", "1" + ")" * n):
        e, seconds = _timed(loads, _in_expression(expr))
        assert isinstance(e, ModelSyntaxError)
        assert e.line == position(SMALL, "ia_spd")[0]
        assert_within(seconds, _small_load(), SMALL_LOADS, f"{expr[:3]}... x {n}")


def test_ten_thousand_open_sections() -> None:
    text = "begin machine\n" + "begin processor\n" * 10_000
    e, seconds = _timed(loads, text)
    assert isinstance(e, ModelSyntaxError) and e.line == 3
    assert_within(seconds, _small_load(), SMALL_LOADS, "10,000 open sections")


# --------------------------------------------------------------------------- unknown words

SECTIONS_IN = {
    "machine": ["express", "machinecombinations", "mpi", "processor", "pvm", "topology",
                "virtual"],
    "processor": ["cache", "combinations", "timings"],
    "topology": ["linklist", "procid"],
    "linklist": ["link"],
    "virtual": ["mapping"],
}  # fmt: skip


@pytest.mark.parametrize(
    ("inside", "anchor"),
    [
        ("machine", "    begin pvm"),
        ("processor", "        begin cache"),
        ("topology", "        begin linklist"),
        ("linklist", "            begin link\n"),
        ("virtual", "        begin mapping"),
    ],
)
def test_an_unknown_section_names_it_and_what_may_stand_there(inside: str, anchor: str) -> None:
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    text = SMALL.replace(anchor, f"{indent}begin foo\n{indent}end foo\n{anchor}", 1)
    e = syntax_error(text)
    assert "'foo'" in e.message
    assert (e.line, e.column) == position(text, "foo")
    assert sorted(e.expected) == sorted(f"'{kw}'" for kw in SECTIONS_IN[inside])


def test_a_wrong_end_names_the_open_section() -> None:
    text = SMALL.replace("    end topology", "    end processor")
    e = syntax_error(text)
    assert "'processor'" in e.message and "'topology'" in e.message
    assert e.line == position(SMALL, "end topology")[0]


# What may begin a line in each section, as the error messages name it. A shape comment
# is a comment wherever it is not read as a shape, so it may stand anywhere.
NL = "the end of the line"
ANYWHERE = {"'end'", NL, "a shape comment"}
FIELDS_IN = {
    "machine": {"'begin'", "'id'", "'name'", "'processors'", "'topologies'"} | ANYWHERE,
    "processor": {"'begin'", "'id'", "'name'"} | ANYWHERE,
    "cache": {"'size'", "'speed'", "'smallloopspeedup'"} | ANYWHERE,
    "link": {"'id'", "'latency'", "'speed'", "'connect'"} | ANYWHERE,
    "topology": {"'begin'", "'id'", "'name'", "'setup'", "'routing'", "'processors'",
                 "'links'"} | ANYWHERE,
    "virtual": {"'begin'", "'id'", "'name'", "'setup'", "'routing'", "'processors'"} | ANYWHERE,
}  # fmt: skip


@pytest.mark.parametrize(
    ("inside", "anchor"),
    [
        ("machine", "    id = 1\n"),
        ("machine", "    processors = 1\n"),
        ("processor", '        name = "T800"\n'),
        ("cache", "            speed = 1e-7\n"),
        ("link", "                speed = 1e-6\n"),
        ("topology", '        routing = "XY"\n'),
        ("virtual", '        routing = "1Dtorus"\n'),
    ],
)
def test_an_unknown_field_names_it_and_what_may_stand_there(inside: str, anchor: str) -> None:
    indent = anchor[: len(anchor) - len(anchor.lstrip())]
    text = SMALL.replace(anchor, f"{anchor}{indent}colour = 3\n", 1)
    e = syntax_error(text)
    assert "'colour'" in e.message
    assert (e.line, e.column) == position(text, "colour")
    assert set(e.expected) <= FIELDS_IN[inside], set(e.expected) - FIELDS_IN[inside]


def test_an_unknown_timing_name_is_a_diagnostic_not_a_syntax_error() -> None:
    m = loads(SMALL.replace("igm = 3.2E-6", "colour = 3.2E-6"))
    (d,) = errors(m)
    assert "colour" in d.message and d.line == position(SMALL, "igm")[0]


def test_an_unknown_name_in_an_expression() -> None:
    text = _in_expression("pt(1).iga / colour")
    e = syntax_error(text)
    assert "'colour'" in e.message
    assert (e.line, e.column) == position(text, "colour")


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("igm = 3.2E-6", "igm = 1e999", "1e999"),
        ("igm = 3.2E-6", "igm = -1e999", "-1e999"),
        ("igm = 3.2E-6", "igm = 1.0 1e400", "1e400"),
        ("igm = 3.2E-6", "igm = " + "9" * 5000, "9999"),
        ("igm = 3.2E-6", "igm = " + "9" * 5000 + ".5", "9999"),
        ("setup = 0.5", "setup = 2e308", "2e308"),
        ("ia_spd = pt(1).iga", "ia_spd = 1e999 * pt(1).iga", "1e999"),
        ("ia_spd = pt(1).iga", "ia_spd = 1.8e308 * pt(1).iga", "1.8e308"),
        ("ia_spd = pt(1).iga", "ia_spd = " + "7" * 5000 + " * pt(1).iga", "7777"),
        ("ia_spd = pt(1).iga", "ia_spd = 9223372036854775808 * pt(1).iga", "9223372036854775808"),
        ("ia_spd = pt(1).iga", "ia_spd = pt(" + "1" * 5000 + ").iga", "1111"),
        ("ia_spd = pt(1).iga", "ia_spd = 0x10000000000000000 * pt(1).iga", "0x10000000000000000"),
        ("id = 1\n        name = \"T800\"", "id = " + "8" * 5000 + "\n        name = \"T800\"",
         "8888"),
        ("size = 0x1000", "size = 9223372036854775808", "9223372036854775808"),
        ("size = 0x1000", "size = 0x" + "f" * 5000, "0xfff"),
        ("p[2] = 1", "p[" + "2" * 5000 + "] = 1", "2222"),
        ("map[2] = 1", "map[2] = " + "1" * 5000, "1111"),
        ("connect = 2 1 2", "connect = 2 1 " + "2" * 5000, "2222"),
    ],
)  # fmt: skip
def test_numbers_out_of_range(old: str, new: str, needle: str) -> None:
    assert old in SMALL
    text = SMALL.replace(old, new, 1)
    e, seconds = _timed(loads, text)
    assert isinstance(e, ModelSyntaxError)
    check_error(e, text)
    assert "out of range" in e.message
    assert len(e.message) < 200
    assert (e.line, e.column) == position(text, needle)
    assert_within(seconds, _small_load(), SMALL_LOADS, "a number out of range")


def test_the_largest_numbers_in_range_load() -> None:
    text = SMALL.replace("size = 0x1000", "size = 9223372036854775807")
    text = text.replace("igm = 3.2E-6", "igm = 1.7976931348623157e308 4.9e-324")
    text = text.replace(
        "ia_spd = pt(1).iga", "ia_spd = 0x7fffffffffffffff * 1.7976931348623157e308"
    )
    m = outcome(text)
    assert m.processors[0].cache.size == 2**63 - 1
    assert m.processors[0].timings["igm"].mean == 1.7976931348623157e308
    assert m.processors[0].timings["igm"].sd == 5e-324


def test_a_shape_comment_with_a_huge_number_is_ignored_with_a_warning() -> None:
    text = SMALL.replace("# piui: shape = 2 1", "# piui: shape = " + "9" * 5000 + " 1")
    m = outcome(text)
    assert m.topologies[0].shape is None
    (w,) = [d for d in validate(m) if "shape" in d.message]
    assert w.severity == "warning" and w.line == position(SMALL, "piui")[0]


@pytest.mark.parametrize("shape", ["x", "0 4", "1 2 3 4 5 6 7", "", "2 -1", "2 1;", "2 1 # two"])
def test_an_unreadable_shape_comment_is_kept_when_saved(shape: str) -> None:
    """A shape comment the loader cannot read is ignored with a warning; the file
    still writes back byte for byte, the comment included."""
    text = SMALL.replace("# piui: shape = 2 1", f"# piui: shape = {shape}")
    m = loads(text)
    if shape in ("x", "0 4", "1 2 3 4 5 6 7", "", "2 -1"):
        assert m.topologies[0].shape is None
    assert dumps(m) == text
    m.topologies[0].name = "renamed"  # and an edit elsewhere leaves it alone too
    assert dumps(m) == text.replace('"pair"', '"renamed"')


# --------------------------------------------------------------------------- file ends


@pytest.mark.parametrize("data", ["", b"", " ", "\n", "\n\n\n", "\r\n", ";", "\x0b", "\t \n"])
def test_an_empty_file(data: str | bytes) -> None:
    e = syntax_error(data)
    assert "begin" in e.message
    assert e.line >= 1 and e.column >= 1


@pytest.mark.parametrize("text", ["# only a comment", "# one\n# two\n", "#\n\n#;\n"])
def test_a_file_of_comments(text: str) -> None:
    e = syntax_error(text)
    assert "begin" in e.message


def test_a_missing_end_machine_is_a_warning() -> None:
    for text in (SMALL.replace("end machine\n", ""), SMALL.replace("end machine\n", "")[:-1]):
        m = outcome(text)
        assert m == loads(SMALL)
        diagnostics = validate(m)
        assert [d.severity for d in diagnostics] == ["warning", "warning"]
        assert any("'end machine' is missing" in d.message for d in diagnostics)
        assert not errors(m)


def test_text_after_end_machine_is_an_error() -> None:
    e = syntax_error(SMALL + "id = 2\n")
    assert e.line == SMALL.count("\n") + 1


def test_end_machine_without_a_final_newline() -> None:
    m = outcome(SMALL.rstrip("\n"))
    assert m == loads(SMALL)


# --------------------------------------------------------------------------- line ends


@pytest.mark.parametrize(
    "newline", ["\r\n", "\r", "\x0b", ";", " ; "], ids=["crlf", "cr", "vt", "semicolon", "spaced"]
)
def test_other_line_ends_read_the_same(newline: str) -> None:
    reference = loads(SMALL_NO_COMMENTS)
    text = SMALL_NO_COMMENTS.replace("\n", newline)
    if newline in (";", " ; "):  # a shape comment runs to a real line end
        text = text.replace(f"shape = 2 1{newline}", "shape = 2 1\n")
    m = outcome(text)
    assert m == reference


def test_crlf_keeps_line_numbers_and_byte_for_byte_saving() -> None:
    text = SMALL.replace("\n", "\r\n").replace("igm", "colour")
    m = outcome(text)
    (d,) = errors(m)
    assert d.line == position(SMALL, "igm")[0]
    m.processors[0].timings["iga"] = m.processors[0].timings["iga"].scaled(2)
    m.processors[0].timings["igs"] = Timing(2.5e-6)  # a new line
    written = dumps(m)
    assert "igs = 2.5e-06\r\n" in written
    assert "\n" not in written.replace("\r\n", "")
    assert loads(written) == m


def test_mixed_line_ends() -> None:
    ends = ["\n", "\r\n", "\x0b", "\r"]
    lines = SMALL.split("\n")
    text = "".join(line + ends[i % 4] for i, line in enumerate(lines[:-1]))
    text = text.replace("shape = 2 1\x0b", "shape = 2 1\n")
    assert outcome(text) == loads(SMALL)


@pytest.mark.parametrize("newline", ["\r", "\x0b", ";"], ids=["cr", "vt", "semicolon"])
def test_a_large_file_with_other_line_ends(newline: str) -> None:
    """Over a megabyte in lines of 20,000 characters: no line is too long, whatever
    character ends them."""
    procs = "".join(
        f'begin processor\nid = {i}\nname = "{"n" * 20_000}"\nend processor\n' for i in range(60)
    )
    text = f'begin machine\nid = 1\nname = "big"\nprocessors = 60\ntopologies = 0\n{procs}end machine\n'
    assert len(text) > LIMIT
    reference = loads(text)
    m = outcome(text.replace("\n", newline))
    assert m == reference
