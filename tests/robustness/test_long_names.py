"""A name or an expression of thousands of characters, wherever it is typed or read,
is quoted in a message by its first 60 characters and its length: a flop expression of
5,000 characters in a sweep gave a message of 10,182 characters (the expression quoted
whole, then again in the parser's "unknown name"), and every message naming a
reference or a timing quoted it whole. The rule holds where messages are worded
(``base.words.quoted``); these are its places, at the level each caller meets them."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core import ModelSyntaxError, load, loads, parse_expression
from parasol_core.analysis.validate import validate
from parasol_core.cli import main
from parasol_core.expr.engine import Engine
from parasol_core.session import Session
from parasol_core.sweep import SweepError, loads_spec

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
STENCIL = ROOT / "sample_models" / "traces" / "stencil.txt"
LONG = "z" * 5000
MOST = 600  # a message naming one long thing twice, with its words around it


def _bounded(said: str, *words: str, long: str = LONG) -> None:
    assert len(said) < MOST, said[:200]
    assert "(5,000 characters)" in said and long[:60] in said and long[:61] not in said
    for w in words:
        assert w in said, said


def test_an_unknown_name_in_an_expression():
    with pytest.raises(ModelSyntaxError) as info:
        parse_expression(f"1 + {LONG}")
    _bounded(info.value.message, "unknown name")


def test_a_reference_the_model_lacks_when_evaluated_and_when_set():
    machine = load(GCEL)
    _bounded(str(Engine(machine).evaluate_text(f"pt(1).{LONG}")), "is not a timing parameter")
    with pytest.raises(ValueError) as info:
        Session(machine).set(f"pt(1).{LONG}", "1e-6")
    _bounded(str(info.value), "is not a timing parameter")


def test_a_combination_and_a_timing_of_a_long_name_in_a_file():
    text = GCEL.read_text()
    other = "y" * 5000
    text = text.replace("            ia_spd = pt(1).iga / tl(1)(1).speed",
                        f"            ia_spd = pt(1).{other} / tl(1)(1).speed", 1)  # fmt: skip
    text = text.replace(
        "            iga = 7.37e-07", f"            {LONG} = 1e-6\n            iga = 7.37e-07", 1
    )
    said = [d.message for d in validate(loads(text))]
    timing = [m for m in said if LONG[:60] in m]
    reference = [m for m in said if other[:60] in m]
    assert timing and reference  # the unknown timing; the reference to one it lacks
    for message in timing:
        _bounded(message, "unknown timing parameter")
    for message in reference:
        _bounded(message, long=other)


def test_a_flop_in_a_sweep_and_on_the_command_line(capsys):
    sweep = f"""model = "{GCEL}"
[[axis]]
set = "pt(1).dga"
values = [1e-6]
[[answer]]
replay = {{trace = "{STENCIL}", flop = "pt(T).{LONG}"}}
"""
    with pytest.raises(SweepError) as info:
        loads_spec(sweep)
    _bounded(str(info.value), "answer 1: replay: a flop's time")
    assert main(["replay", str(GCEL), str(STENCIL), "--flop", f"pt(T).{LONG}", "--json"]) != 0
    _, err = capsys.readouterr()
    _bounded(err, "flop")


SWEEP = f"""model = "{GCEL}"
[[axis]]
set = "pt(1).iga"
values = [1e-7]
[[answer]]
eval = "po(1).ia_spd"
"""


@pytest.mark.parametrize("edit, words", [
    (("eval = \"po(1).ia_spd\"", f'eval = "{LONG}"'), "answer 1: eval"),
    (("[[answer]]", f'{LONG} = 1\n[[answer]]'), "unknown key"),
    (("eval = \"po(1).ia_spd\"", f'eval = "po(1).ia_spd"\n[sample]\nmethod = "{LONG}"'),
     "[sample] method"),
    (("eval = \"po(1).ia_spd\"", f'replay = {{trace = "{LONG}"}}'),
     "replay: trace"),  # too long for the file system: its reason, not an OSError
    (('set = "pt(1).iga"', f'scale = "{LONG}"'), "axis 1: scale"),
    (("eval = \"po(1).ia_spd\"", f'simulate = {{messages = "{LONG}"}}'), "answer 1"),
])  # fmt: skip
def test_what_a_sweep_file_gives_is_quoted_bounded(edit, words):
    """Each of the sweep reader's messages that repeats what the file gave."""
    with pytest.raises(SweepError) as info:
        loads_spec(SWEEP.replace(*edit), base=ROOT)
    said = str(info.value)
    assert len(said) < MOST and words in said and "characters)" in said, said[:300]
    assert LONG[:61] not in said


def test_a_sweep_file_nested_too_deeply_is_refused_not_a_crash():
    """[[[[...]]]] 500 deep made the TOML reader recurse past Python's limit: a
    RecursionError out of the reader, where every other bad file is a SweepError."""
    with pytest.raises(SweepError, match="nested too deeply"):
        loads_spec(SWEEP.replace("values = [1e-7]", "values = " + "[" * 500 + "1" + "]" * 500))
