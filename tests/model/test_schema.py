"""One source for names: the function names, the reference prefixes and the fields a
reference can name are each defined once, and the grammar, the evaluator, the symbolic
view, the resolver and ``edit`` agree with that definition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from parasol_core.analysis import symbolic
from parasol_core.expr import evaluate, refs
from parasol_core.model import REFERENCE_FIELDS, reference_fields
from parasol_core.model.tree import FUNCTIONS
from parasol_core.session import edit
from parasol_core.syntax.loader import loads

GRAMMAR = (Path(__file__).resolve().parents[2] / "grammar" / "machine.lark").read_text()
GRID = Path(__file__).resolve().parents[2] / "sample_models" / "grid4x4.machine"


def grammar_alternatives(terminal: str) -> set[str]:
    match = re.search(rf"^{terminal}: /\(([^)]*)\)\\b/", GRAMMAR, re.M)
    assert match, f"{terminal} not found in the grammar"
    return set(match.group(1).split("|"))


def test_the_grammar_knows_exactly_the_function_table():
    assert grammar_alternatives("FUNC") == set(FUNCTIONS)


def test_the_evaluator_and_the_symbolic_view_implement_every_function():
    assert set(evaluate.FUNCTIONS) == set(FUNCTIONS)
    # double(x) is x itself in symbolic form; every other function has a sympy form
    assert set(symbolic._FUNCTIONS) | {"double"} == set(FUNCTIONS)


def test_the_grammar_knows_exactly_the_reference_prefixes():
    assert grammar_alternatives("REFPREFIX") == set(refs.PREFIXES) == set(refs.ARITY)


@pytest.mark.parametrize("prefix", sorted(REFERENCE_FIELDS))
def test_edit_and_the_resolver_derive_their_fields_from_the_schema(prefix):
    machine = loads(GRID.read_text())
    numbers = {"ma": "", "pr": "(1)", "pc": "(1)", "to": "(1)", "tl": "(1)(1)", "vt": "(2)"}
    for name, f in reference_fields(prefix).items():
        ref = f"{prefix}{numbers[prefix]}.{name}"
        assert edit.slot(machine, ref, create=False).attr == f.attr
        readable = name in reference_fields(prefix, readable=True)
        if name == "connect":
            ref += "(0)"
        try:
            refs.resolve(machine, refs.parse_reference(ref))
            resolved = True
        except refs.UnresolvedReference as e:
            resolved = "not defined" in str(e)  # readable, but absent in this model
        assert resolved == readable, ref
    with pytest.raises(edit.EditError, match="no settable field"):
        edit.slot(machine, f"{prefix}{numbers[prefix]}.nosuchfield", create=False)
