"""The errors the core raises reach PIUI, the estimator's callers and a sweep's rows as
well as the command line: none of them names a command-line option (``--flop``), which
means nothing in a window or a JSON answer. The command line adds its own hint where it
catches the error (``push``'s ``--token``). A message about the estimator's own
configuration names its operator's option and says so ("ask the estimator's operator
for a larger --request-timeout").

Found on a real display: the Program window said "give another expression: --flop" for a
bad "A flop takes" field."""

from __future__ import annotations

import ast
import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "parasol_core"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)]  # fmt: skip


def raised_messages() -> list[tuple[str, int, str]]:
    """(file, line, text) of every string in a ``raise`` outside the command line."""
    out = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE).as_posix()
        if rel.startswith("cli/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                for text in _strings(node.exc):
                    out.append((rel, node.lineno, text))
    return out


def test_the_core_raises_no_message_naming_a_command_line_option():
    found = [(f, line, text) for f, line, text in raised_messages()
             if FLAG.search(text) and "operator" not in text]  # fmt: skip
    assert not found, found


def test_the_scan_sees_the_core_s_messages():
    texts = [text for _, _, text in raised_messages()]
    assert len(texts) > 300
    assert any("give another expression for a flop's time" in t for t in texts)
    assert FLAG.search("give another expression: --flop")
    assert not FLAG.search("x = 1e--3; a---b")
