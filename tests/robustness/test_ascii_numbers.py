"""Every number the project reads is ASCII, and a comment never makes a model unloadable
(issue 35, item 4).

Python's ``int()`` and ``float()`` read any Unicode digit (``'٢'``, ``'３'``), digit
separators (``'1_000'``) and Unicode blanks; ``'²'.isdigit()`` is true and ``int('²')``
fails. The rule: every reader (the model file and its annotations, SimGrid units,
command-line arguments, the estimator's params given as text, CSV and OSU logs) takes
ASCII numbers only, through ``parasol_core.base.numeric``, and says why it refuses one; an
annotation that cannot be read is a warning naming its line, never a failed load; and an
annotation where nothing reads it is a warning that every command using the model prints
(stderr), not only ``check``.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parasol_core.base import numeric
from parasol_core.base.numeric import (
    NotANumberError,
    ValueRangeError,
    parse_number,
    parse_whole,
    read_float,
    read_int,
)
from parasol_core.cli import main
from parasol_core.syntax.loader import loads

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "sample_models" / "grid4x4.machine"
GRID_TEXT = GRID.read_text()
SHAPE_LINE = "        # piui: shape = 4 4\n"  # the hardware topology's (the first)

#: digits of other scripts, superscripts, fractions, full-width forms: every character
#: Python reads as a number that is not ASCII
UNICODE_DIGITS = st.characters(categories=["Nd", "No", "Nl"]).filter(lambda c: not c.isascii())
SOME = ["²", "٢", "٣", "３", "߂", "௪", "½", "Ⅻ", "𝟙"]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as e:  # argparse's usage errors
        status = e.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "please report" not in out.err, out.err
    return status, out.out, out.err


def with_annotation(line: str, after: str = SHAPE_LINE) -> str:
    """grid4x4 with ``line`` added after the hardware topology's shape comment."""
    assert after in GRID_TEXT
    return GRID_TEXT.replace(after, after + line + "\n", 1)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# --------------------------------------------------------------------------- the reader


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_written_in_ascii_reads_back(x):
    assume(x == 0 or abs(x) >= numeric.SMALLEST_NORMAL)
    for text in (repr(x), f"{x:e}", f"  {x!r}\t"):
        assert read_float(text) == float(text)


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_every_whole_number_in_ascii_reads_back(n):
    assert read_int(str(n), sign=True) == n
    assert read_int(str(abs(n))) == abs(n)
    assert numeric.is_whole(str(abs(n)))


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=0), UNICODE_DIGITS,
       st.data())  # fmt: skip
def test_a_unicode_digit_anywhere_in_a_number_is_refused_naming_it(x, digit, data):
    text = repr(x)
    at = data.draw(st.integers(0, len(text)))
    bad = text[:at] + digit + text[at:]
    with pytest.raises(NotANumberError) as e:
        read_float(bad)
    assert digit in str(e.value) and "ASCII" in str(e.value)
    whole = str(int(x) if x < 1e30 else 7)
    bad_whole = whole[: at % (len(whole) + 1)] + digit + whole[at % (len(whole) + 1) :]
    with pytest.raises(NotANumberError):
        read_int(bad_whole)
    assert not numeric.is_whole(bad_whole)


@pytest.mark.parametrize("text", ["1_000", "1_000e-9", "0.000_001", "1e1_0"])
def test_digit_separators_are_not_part_of_a_number(text):
    float(text)  # Python reads them
    with pytest.raises(NotANumberError, match="'_' is not part of a number"):
        read_float(text)


@pytest.mark.parametrize("text", ["\u00a05", "5\u2003", "\u30001e-6"])
def test_unicode_blanks_around_a_number_are_refused(text):
    float(text)  # Python strips them
    with pytest.raises(NotANumberError, match="not an ASCII blank"):
        read_float(text)


@pytest.mark.parametrize("text", ["inf", "-Infinity", "nan", "NaN"])
def test_inf_and_nan_are_not_finite_numbers(text):
    with pytest.raises(ValueRangeError, match="not a finite number"):
        read_float(text)


def test_the_module_has_no_other_number_reader():
    """No module converts text with int() or float() on what it did not match as ASCII:
    every str.isdigit / isdecimal / isnumeric of the core is gone (they take '²')."""
    import io
    import tokenize

    core = ROOT / "parasol_core"
    found = []
    for path in core.rglob("*.py"):
        if path.name == "numeric.py":  # the reader itself, which names what it refuses
            continue
        text = path.read_text()
        # the code without its comments, by the tokenizer: a '#' inside a string (a
        # pattern of a model's header line, r"^#\s*memory level (?P<size>\d+)") hid the
        # rest of its line from this test when comments were cut at the first '#'
        comments = {}
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.start[1]
        for i, line in enumerate(text.splitlines(), start=1):
            code = line[: comments[i]] if i in comments else line
            if re.search(r"\.(isdigit|isdecimal)\(", code) or (
                ".isnumeric(" in code and "fit.py" not in path.name
            ):
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
            if "\\d" in code:  # a pattern's \d matches every Unicode digit
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "\n".join(found)


# --------------------------------------------------------------------------- annotations


@pytest.mark.parametrize("digit", SOME)
@pytest.mark.parametrize("form", ["network = fattree {d} 2", "network = dragonfly 2 {d} 1 1",
                                  "forward = {d}e-7", "duplex = 0.{d}", "forward = 1{d}"])  # fmt: skip
def test_an_annotation_with_a_unicode_digit_is_a_warning_not_a_value(digit, form):
    line = "        # piui: " + form.format(d=digit)
    text = with_annotation(line)
    m = loads(text, "x.machine")  # loads: a comment never stops a file
    hw = m.hardware()
    assert hw.forward is None and hw.duplex is None and hw.network is None
    found = [d for d in m.src.diagnostics if d.line == line_of(text, line.strip())]
    assert found and found[0].severity == "warning", m.src.diagnostics
    assert digit in found[0].message or "ASCII" in found[0].message


@pytest.mark.parametrize("value", ["1_000e-9", "73e-6/120", "1e-6 s", "1e400", "1e-400",
                                   "inf", "-1e-6", "0x10", "", "1e-6e-6"])  # fmt: skip
def test_an_unreadable_forward_is_a_warning_naming_its_line(value):
    line = f"        # piui: forward = {value}"
    text = with_annotation(line)
    m = loads(text, "x.machine")
    assert m.hardware().forward is None
    lines = [d.line for d in m.src.diagnostics]
    assert line_of(text, line.strip()) in lines


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["forward", "duplex", "network", "role", "shape", "froward", ""]),
       st.sampled_from(["=", " = ", " ", ""]),
       st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
               max_size=30))  # fmt: skip
def test_any_annotation_text_loads_with_at_worst_a_warning(key, eq, rest):
    """Whatever follows '# piui:', in a topology, a processor or at machine level, the
    file loads; every value read is ASCII."""
    for anchor in (SHAPE_LINE, '        name = "T805 Transputer"\n', "    processors = 1\n"):
        line = f"        # piui: {key}{eq}{rest}"
        try:
            text = with_annotation(line, anchor)
            m = loads(text, "x.machine")
        except Exception as e:  # a syntax error may only come from the rest of the file
            from parasol_core.base.diagnostics import ModelSyntaxError

            assert isinstance(e, ModelSyntaxError) and key == "shape", e
            continue
        hw = m.hardware()
        if hw.network is not None:
            assert hw.network.isascii()
        assert all(d.severity == "warning" for d in m.src.diagnostics)


@pytest.mark.parametrize("shape", ["٤ 4", "4 ４", "4_0 1", "²"])
def test_a_shape_comment_with_unicode_digits_is_ignored_with_a_warning(shape):
    text = GRID_TEXT.replace("# piui: shape = 4 4", f"# piui: shape = {shape}", 1)
    m = loads(text, "x.machine")
    assert m.hardware().shape is None
    assert any("shape comment ignored" in d.message for d in m.src.diagnostics)


STRAY = {
    "at machine level": ("    processors = 1\n", "    # piui: forward = 73e-6", "at machine level"),
    "after end topology": (
        "    end topology\n",
        "    # piui: forward = 73e-6",
        "after 'end topology'",
    ),
    "in a processor": (
        '        name = "T805 Transputer"\n',
        "        # piui: forward = 1e-6",
        "in a processor section",
    ),
    "nested in a link list": (
        "        begin linklist\n",
        "        # piui: shape = 2 8",
        "nested in a topology section",
    ),
    "role at machine level": (
        "    processors = 1\n",
        "    # piui: role = switch",
        "at machine level",
    ),
    "unknown key": (SHAPE_LINE, "        # piui: froward = 1e-6", "unknown annotation"),
    "after a value": ('        routing = "XY"\n', None, "on its line"),
}


@pytest.mark.parametrize("case", sorted(STRAY))
def test_an_annotation_where_nothing_reads_it_is_warned_about(case):
    anchor, line, words = STRAY[case]
    if line is None:
        text = GRID_TEXT.replace('        routing = "XY"\n',
                                 '        routing = "XY"  # piui: forward = 1e-6\n', 1)  # fmt: skip
        needle = 'routing = "XY"  #'
    else:
        text = with_annotation(line, anchor)
        needle = line.strip()
    m = loads(text, "x.machine")
    assert m.hardware().forward is None
    found = [d for d in m.src.diagnostics if words in d.message]
    assert found and found[0].line == line_of(text, needle), m.src.diagnostics


@pytest.mark.parametrize("text", [
    GRID_TEXT.replace('name = "4 x 4 grid"', 'name = "a # piui: forward grid"', 1),
    GRID_TEXT.replace("    processors = 1\n", "    processors = 1\n    # see piui: forward\n", 1),
])  # fmt: skip
def test_piui_in_a_name_or_an_ordinary_comment_is_no_annotation(text):
    assert loads(text).src.diagnostics == []


COMMANDS = [
    ("show", "{f}"),
    ("eval", "{f}", "1 + 1"),
    ("route", "{f}", "1", "16"),
    ("transfer", "{f}", "1:16", "--bytes", "1000"),
    ("simulate", "{f}", "--pattern", "shift", "--bytes", "1000"),
    ("mapping", "{f}", "--virtual", "2"),
    ("format", "{f}"),
    ("deps", "{f}", "tl(1)(1).speed"),
    ("export", "--simgrid", "{out}", "{f}"),
]


@pytest.mark.parametrize("line,words", [
    ("        # piui: network = fattree ² 2", "SUPERSCRIPT TWO"),
    ("        # piui: forward = ٣e-7", "ARABIC-INDIC DIGIT THREE"),
    ("        # piui: forward = 73e-6/120", "expected one number"),
])  # fmt: skip
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_runs_and_prints_the_annotation_warning(tmp_path, capsys, command,
                                                               line, words):  # fmt: skip
    path = tmp_path / "m.machine"
    text = with_annotation(line)
    path.write_text(text)
    args = [a.format(f=path, out=tmp_path / "out.xml") for a in command]
    status, _, err = cli(capsys, *args)
    assert status == 0, err
    where = f"{path}:{line_of(text, line.strip())}:"
    assert any(w.startswith(where) and "warning" in w and words in w for w in err.splitlines()), err


def test_check_prints_the_warning_once_on_stdout(tmp_path, capsys):
    path = tmp_path / "m.machine"
    path.write_text(with_annotation("        # piui: network = fattree ² 2"))
    status, out, err = cli(capsys, "check", str(path))
    assert status == 0 and err == ""
    assert out.count("SUPERSCRIPT TWO") == 1


def test_simulate_says_the_forwarding_cost_it_ignored(tmp_path, capsys):
    """The issue's case: '73e-6/120' meant 1.508 s, and simulate silently gave 0.9 s."""
    path = tmp_path / "m.machine"
    line = "    # piui: forward = 73e-6"
    text = GRID_TEXT.replace("    end topology\n", "    end topology\n" + line + "\n", 1)
    path.write_text(text)
    status, out, err = cli(capsys, "simulate", str(path), "--pattern", "alltoall",
                           "--bytes", "1000")  # fmt: skip
    assert status == 0 and "makespan" in out
    assert f"{path}:{line_of(text, line.strip())}:5: warning:" in err
    assert "after 'end topology'" in err


def test_the_estimator_takes_the_model_and_returns_the_warning(tmp_path):
    from parasol_core.estimator import methods
    from parasol_core.estimator.store import ModelStore

    svc = methods.Service(ModelStore(tmp_path))
    text = with_annotation("        # piui: network = fattree ² 2")
    answer = methods.model_push(svc, text)
    warnings = [d for d in answer["diagnostics"] if d["severity"] == "warning"]
    assert warnings and "SUPERSCRIPT TWO" in warnings[0]["message"]
    assert warnings[0]["line"] == line_of(text, "# piui: network")
    result = methods.estimate_phase(svc, answer["model"], pattern="shift", bytes=1000)
    assert result["makespan"] > 0


# --------------------------------------------------------------------------- the model file


def _non_ascii(text: str) -> str:
    """``text`` with a non-ASCII name: the bulk scanners' C kernel takes only ASCII
    text, so the regular expressions read it."""
    return text.replace('name = "4 x 4 grid"', 'name = "4 x 4 grid — é"', 1)


@pytest.mark.parametrize("old,new", [
    ("                id = 3\n", "                id = ٣\n"),
    ("latency = 2.85e-05\n                speed = 9.1e-07\n                connect = 2 3 4",
     "latency = ٢.85e-05\n                speed = 9.1e-07\n                connect = 2 3 4"),
    ("connect = 2 3 4", "connect = 2 ٣ 4"),
    ("            p[3] = 1\n", "            p[3] = ١\n"),
    ("            p[3] = 1\n", "            p[٣] = 1\n"),
])  # fmt: skip
@pytest.mark.parametrize("bulk", [True, False])
def test_a_unicode_digit_in_the_model_file_is_a_syntax_error(monkeypatch, old, new, bulk):
    from parasol_core.base.diagnostics import ModelSyntaxError
    from parasol_core.syntax import fastscan, loader

    monkeypatch.setattr(loader, "_bulk", bulk)
    monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)
    for text in (GRID_TEXT, _non_ascii(GRID_TEXT)):
        assert old in text
        with pytest.raises(ModelSyntaxError):
            loads(text.replace(old, new, 1))


# --------------------------------------------------------------------------- other readers


@pytest.mark.parametrize("digit", ["٣", "３", "²"])
@pytest.mark.parametrize("args", [
    ("simulate", "{f}", "--pattern", "shift", "--bytes", "{d}"),
    ("simulate", "{f}", "--pattern", "broadcast", "--bytes", "1", "--root", "{d}"),
    ("simulate", "{f}", "--pattern", "shift", "--bytes", "1", "--dim", "{d}"),
    ("route", "{f}", "{d}", "2"),
    ("transfer", "{f}", "1:{d}", "--bytes", "1"),
    ("transfer", "{f}", "1:2", "--bytes", "1{d}"),
    ("eval", "{f}", "ar.bytes", "--arg", "bytes={d}"),
    ("simulate", "{f}", "--pattern", "shift", "--bytes", "1", "--max-memory", "{d}G"),
    ("generate", "torus", "4", "{d}", "--latency", "1e-6", "--speed", "1e-9"),
    ("generate", "torus", "4", "4", "--latency", "{d}e-6", "--speed", "1e-9"),
    ("set", "{f}", "tl(1)(1).latency={d}e-6"),
    ("set", "{f}", "tl(1)(1).connect=2 1 {d}"),
    ("scale", "{f}", "all", "{d}"),
])  # fmt: skip
def test_a_command_line_number_with_a_unicode_digit_is_refused(capsys, args, digit):
    status, out, err = cli(capsys, *(a.format(f=GRID, d=digit) for a in args))
    assert status == 2 or (status == 1 and "error" in err), (status, out, err)
    assert digit in err or "is not" in err, err


@pytest.mark.parametrize("cell", ["٣", "1_000", "３.5", "1e999"])
def test_a_measurement_log_with_a_non_ascii_number_is_refused_naming_the_line(cell):
    from parasol_core.analysis.fit import FitError, read_csv, read_osu

    with pytest.raises(FitError, match="line 3"):
        read_csv(f"procs,bytes,seconds\n2,1,1e-6\n2,{cell},2e-6\n")
    with pytest.raises(FitError, match="line 4"):
        read_osu(f"# OSU MPI Latency Test v7.3\n# Size  Latency (us)\n1  1.5\n{cell}  2.5\n", 2)


def test_a_mapping_typed_with_unicode_digits_is_refused():
    from parasol_core.topology.mapping import mapping_text, parse_mapping

    m = loads(GRID_TEXT)
    virt = m.virtuals[0]
    words = mapping_text(virt)
    assert parse_mapping(words, virt, 16) == dict(virt.mapping)  # as it is
    with pytest.raises(ValueError, match="ARABIC-INDIC"):
        parse_mapping(words.replace("1", "١", 1), virt, 16)


def test_an_estimator_route_id_with_unicode_digits_is_refused(tmp_path):
    from parasol_core.estimator import methods
    from parasol_core.estimator.protocol import ParamError
    from parasol_core.estimator.store import ModelStore

    svc = methods.Service(ModelStore(tmp_path))
    mid = methods.model_push(svc, GRID_TEXT)["model"]
    good = methods.route_plot(svc, mid, 1, 3)["route"]
    assert methods.network_transfer_time(svc, mid, good, 1000) > 0
    for bad in (good.replace("1-3", "١-3"), good.replace("1-3", "1-３")):
        with pytest.raises(ParamError, match="is not a route id"):
            methods.network_transfer_time(svc, mid, bad, 1000)


@pytest.mark.parametrize("text", ["٢G", "2\u00a0G", "1_000M"])
def test_a_memory_size_with_non_ascii_digits_is_refused(text):
    from parasol_core.base.budget import parse_size

    with pytest.raises(ValueError, match="is not a size"):
        parse_size(text)


def test_unicode_digits_are_named_by_their_unicode_names():
    for c in SOME:
        assert unicodedata.name(c) in read_error(c)


def read_error(text: str) -> str:
    try:
        read_float(text)
    except ValueRangeError as e:
        return str(e)
    raise AssertionError(f"{text!r} was read")


# --------------------------------------------------------------------------- SimGrid


def _platform(link: str = 'bandwidth="1GBps" latency="1us"', cluster: str | None = None) -> str:
    if cluster is not None:
        body = f"<cluster {cluster}/>"
    else:
        body = ('<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
                f'<link id="l" {link}/><route src="a" dst="b"><link_ctn id="l"/></route>')  # fmt: skip
    return f'<platform version="4.1"><zone id="w" routing="Full">{body}</zone></platform>'


@pytest.mark.parametrize("digit", SOME)
@pytest.mark.parametrize("where", ["bandwidth", "latency", "radical", "topo_parameters",
                                   "machine-id", "shape"])  # fmt: skip
def test_a_simgrid_number_with_a_unicode_digit_is_refused(digit, where):
    from parasol_core.simgrid import PlatformError, UnitError, import_text

    if where == "bandwidth":
        text = _platform(f'bandwidth="12{digit}Bps" latency="1us"')
    elif where == "latency":
        text = _platform(f'bandwidth="1GBps" latency="{digit}us"')
    elif where in ("radical", "topo_parameters"):
        radical, params = ("0-3", f"2,1;1,1;2,{digit};1")
        if where == "radical":
            radical, params = f"0-{digit}", "2,1;1,1;2,1;1"
        text = _platform(cluster=f'id="d" prefix="n" suffix="" radical="{radical}" speed="1Gf" '
                         f'bw="1GBps" lat="1us" topology="DRAGONFLY" '
                         f'topo_parameters="{params}"')  # fmt: skip
    else:
        prop = f'<prop id="parasol:{where}" value="{digit}"/>'
        text = _platform().replace('routing="Full">', f'routing="Full">{prop}', 1)
    with pytest.raises((PlatformError, UnitError), match="ASCII|not N or N-M|not a "):
        import_text(text)


def test_arabic_indic_digits_are_no_bandwidth_of_123():
    """The issue's case: '١٢٣Bps' was read as 123 bytes a second."""
    from parasol_core.simgrid import UnitError, parse_bandwidth

    assert parse_bandwidth("123Bps") == 123.0
    with pytest.raises(UnitError, match="ARABIC-INDIC DIGIT ONE"):
        parse_bandwidth("١٢٣Bps")


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1e-400", "1.2345678e-318"])
@pytest.mark.parametrize("read", [parse_number, parse_whole])
def test_a_number_a_double_cannot_hold_names_what_it_was_typed_for(text, read):
    """Every refusal of a typed number says what the field wanted, past a double's
    range too ('1e400' in a message size named no message size)."""
    with pytest.raises(ValueError) as e:
        read(text, what="a message size in bytes")
    assert "a message size in bytes is needed" in str(e.value)
    assert str(e.value).startswith(f"'{text}'")


# --------------------------------------------------------------------------- long numbers

_LONG = "7" * 5000  # past Python's own limit for int() of a string (4,300 digits)


def _sweep_with_links_of(topology: str) -> str:
    return (f'model = "{GRID}"\n[[axis]]\nset = "tl({topology})(*).speed"\n'
            'values = [1.0, 2.0]\n[[answer]]\neval = "mc.maxtotalspd"\n')  # fmt: skip


def _long_numbers() -> dict:
    from parasol_core.sweep.analysis import axis_from_form
    from parasol_core.sweep.spec import loads_spec
    from parasol_core.topology.names import processor_number
    from parasol_core.topology.shape import parse_shape

    return {
        "a shape": lambda: parse_shape("4x" + _LONG),
        "a processor": lambda: processor_number(None, _LONG),
        "pN": lambda: processor_number(None, "p" + _LONG, prefixed=True),
        "an axis's topology": lambda: axis_from_form("topology " + _LONG, "torus 4 4"),
        "an axis's pr(N)": lambda: axis_from_form(f"scale arithmetic pr({_LONG})", "1, 2"),
        "an axis's range": lambda: axis_from_form("pt(1).iga", f"range 1 {_LONG} 1"),
        "a sweep file's tl(N)": lambda: loads_spec(_sweep_with_links_of(_LONG)),
    }


@pytest.mark.parametrize("where", list(_long_numbers()))
def test_a_whole_number_of_five_thousand_digits_is_refused_in_the_project_s_words(where):
    """A processor, a size or an id of 5,000 digits said Python's own limit ("Exceeds
    the limit (4300 digits) ... use sys.set_int_max_str_digits()"), and `parasol-model
    sweep` called it an unexpected error to report: every whole number read from text is
    read by read_int, which says it is too long and shows 40 of its digits."""
    with pytest.raises(ValueError) as info:
        _long_numbers()[where]()
    said = str(info.value)
    assert "too long" in said and "5,000 digits" in said, said
    assert "set_int_max_str_digits" not in said and len(said) < 400


def test_a_sweep_file_with_a_topology_id_of_five_thousand_digits_is_an_error_not_a_crash(
    tmp_path, capsys
):
    sweep = tmp_path / "s.toml"
    sweep.write_text(_sweep_with_links_of(_LONG))
    assert main(["sweep", str(sweep), "-o", str(tmp_path / "out.csv")]) == 1
    said = capsys.readouterr().err
    assert "too long for a topology's id" in said and "please report" not in said


@pytest.mark.parametrize("shape", ["٤x٤", "4x1_000", "４ ４"])
def test_a_shape_typed_in_other_digits_or_with_separators_is_refused(shape):
    """The mapping editor's and Add virtual topology's shape field took '٤x٤' as 4 x 4
    and '4x1_000' as 4 x 1000: Python's int() reads them; read_int does not."""
    from parasol_core.topology.shape import parse_shape

    with pytest.raises(ValueError, match="is not a size"):
        parse_shape(shape)
    assert parse_shape("4 x 3") == (4, 3)
