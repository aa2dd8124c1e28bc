"""Every command that takes a processor takes its name too (issue 36): a processor of a
topology's ``# piui: names`` line, given by name, answers as given by number; a name the
topology lacks is refused naming it. The cases are every command-line place a processor
is taken (a test below holds the list equal to the parser's options), and the files the
commands read processors from (``simulate --messages``, ``replay --hostfile``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from named_platform import NAMES, named_model_text

from parasol_core.base.numeric import is_whole
from parasol_core.cli import build_parser, main
from parasol_core.cli.common import PROCESSOR


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "small.machine"
    path.write_text(named_model_text())
    return path


def _file(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


# Each case: (model, folder, how a processor is spelt) -> argv. The processors are 1 and
# 3 (Tremblay and Fafard), and 2 (Jupiter) where a case needs a third.
Spell = Callable[[int], str]
CASES: dict[str, Callable[[Path, Path, Spell], list[str]]] = {
    "route SRC": lambda m, d, s: ["route", str(m), s(1), "3"],
    "route DST": lambda m, d, s: ["route", str(m), "1", s(3)],
    "transfer SRC:DST": lambda m, d, s: ["transfer", str(m), f"{s(1)}:{s(3)}", "--bytes", "1e5"],
    "transfer --active": lambda m, d, s: [
        "transfer",
        str(m),
        "1:3",
        "--bytes",
        "1e5",
        "--active",
        f"{s(2)}:{s(3)}",
    ],  # fmt: skip
    "simulate --root": lambda m, d, s: [
        "simulate",
        str(m),
        "--pattern",
        "broadcast",
        "--bytes",
        "1e5",
        "--root",
        s(2),
        "--json",
    ],  # fmt: skip
    "simulate --messages": lambda m, d, s: [
        "simulate",
        str(m),
        "--json",
        "--messages",
        _file(
            d,
            "m.json",
            json.dumps(
                [
                    {"src": _json(s(1)), "dst": _json(s(3)), "bytes": 1e5},
                    {"src": _json(s(2)), "dst": 3, "bytes": 1e5},
                ]
            ),
        ),
    ],  # fmt: skip
    "replay --hostfile": lambda m, d, s: [
        "replay",
        str(m),
        _file(d, "t.txt", "0 send 1 0 100000 6\n1 recv 0 0 100000 6\n"),
        "--flop",
        "1e-9",
        "--json",
        "--hostfile",
        _file(d, "hosts", f"{s(1)}\n{s(3)}:1\n"),
    ],  # fmt: skip
    "set vm(N)(V)": lambda m, d, s: [
        "set",
        _file(d, "v.machine", named_model_text(virtual=True)),
        f"vm(2)(1)={s(3)}",
    ],  # fmt: skip
}


def _json(word: str) -> int | str:
    """A messages file's end: a number as a JSON number, a name as a string."""
    return int(word) if is_whole(word) else word


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("case", list(CASES))
def test_a_name_answers_as_its_number(case, small, tmp_path, capsys):
    by_number = _run(capsys, CASES[case](small, tmp_path, str))
    assert by_number[0] == 0, by_number[2]
    by_name = _run(capsys, CASES[case](small, tmp_path, NAMES.__getitem__))
    assert by_name == by_number
    # and the answer names them: route's names line, the JSON's names map
    shown = by_name[1]
    assert "Tremblay" in shown or "Jupiter" in shown or case.startswith("transfer")


@pytest.mark.parametrize("case", list(CASES))
def test_an_unknown_name_is_refused_naming_it(case, small, tmp_path, capsys):
    status, out, err = _run(capsys, CASES[case](small, tmp_path, lambda p: "Saturn"))
    assert status != 0 and out == ""
    assert "'Saturn'" in err and "Traceback" not in err


def test_the_cases_are_every_option_that_takes_a_processor():
    """Every argument of a PROCESSOR type (or of SRC:DST pairs of them) is a case above,
    and so are the files of processors: a new one must be added to the cases."""
    parser = build_parser()
    found = set()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        for action in p._actions:
            kind = getattr(action.type, "__name__", "")
            if action.type is PROCESSOR or kind == "_pair":
                word = action.option_strings[0] if action.option_strings else action.metavar
                found.add(f"{command} {word}")
    files = {"simulate --messages", "replay --hostfile", "set vm(N)(V)"}
    assert found == set(CASES) - files
