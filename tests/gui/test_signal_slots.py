"""A button's ``clicked(bool)`` and an action's ``triggered(bool)`` pass ``checked`` to the
slot. Connected to a method with an optional parameter, ``checked`` lands in it: the
mapping editor's Add… made a virtual topology with routing ``False`` that way. Every such
connection in PIUI goes to a method that takes nothing (or a parameter named
``checked``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = ("clicked", "triggered")


def _methods(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _slots(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, method name) of every ``<x>.clicked/triggered.connect(self.method)`` and
    ``self._action(text, self.method, ...)`` (which connects ``triggered``)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        f = node.func
        target = None
        if f.attr == "connect" and isinstance(f.value, ast.Attribute) and f.value.attr in SIGNALS:
            target = node.args[0] if node.args else None
        elif f.attr == "_action" and len(node.args) >= 2:
            target = node.args[1]
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self"):  # fmt: skip
            found.append((node.lineno, target.attr))
    return found


@pytest.mark.parametrize("path", sorted((ROOT / "piui").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_checked_never_lands_in_a_parameter(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    methods = _methods(tree)
    bad = []
    for line, name in _slots(tree):
        method = methods.get(name)
        if method is None:
            continue  # a Qt method (close, hide): they take no argument
        params = [a.arg for a in method.args.args[1:]]
        if params and params != ["checked"]:
            bad.append(f"line {line}: {name}({', '.join(params)})")
    assert not bad, f"{path.name}: clicked/triggered would pass 'checked' into: {bad}"
