"""The parser's place in the import graph: no cycle through the model, and the model
objects load without lark (issue 8); the driver still exports what other code imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "parasol_core"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module_level_only: bool) -> set[str]:
    """The parasol_core modules ``path`` imports (``from a import b`` counts a.b when
    that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found.update(n for n in names if n.startswith("parasol_core"))
    return found


def _graph(module_level_only: bool) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: {m for m in _imports(path, module_level_only) if m in modules and m != name}
        for name, path in modules.items()
    }


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph.get(node, ()))
    return False


def test_the_model_does_not_reach_the_parser_nor_the_tree_the_model() -> None:
    """The cycle expr/tree -> syntax/parser -> model -> expr/tree is gone (the tree imports no syntax at all): counting
    function-level imports too, nothing the tree imports leads back to the model, and
    the model does not lead to the parser."""
    graph = _graph(module_level_only=False)
    assert not {m for m in graph["parasol_core.model.tree"] if m.startswith("parasol_core.syntax")}
    assert not _reaches(graph, "parasol_core.model.tree", "parasol_core.model")
    assert not _reaches(graph, "parasol_core.model", "parasol_core.syntax.loader")
    assert not _reaches(graph, "parasol_core.model", "parasol_core.syntax.builder")


def test_no_cycle_in_module_level_imports_of_the_syntax_package() -> None:
    graph = _graph(module_level_only=True)
    for name in graph:
        if name.startswith(("parasol_core.syntax", "parasol_core.model", "parasol_core.expr")):
            for dep in graph[name]:
                assert not _reaches(graph, dep, name), f"{name} -> {dep} -> ... -> {name}"


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()


def test_importing_the_model_does_not_import_lark() -> None:
    out = _run(
        "import sys, parasol_core.model, parasol_core.model.tree, parasol_core.analysis.validate; "
        "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))"
    )
    assert out == "[]"


def test_parsing_still_works_through_the_old_names() -> None:
    out = _run(
        "from parasol_core.syntax.loader import load, loads, parse_expression; "
        "from parasol_core import parse_expression as p2, loads as l2; "
        "print(parse_expression('1 + 2').text, p2('pt(1).iga').text, "
        "loads is l2)"
    )
    assert out == "1 + 2 pt(1).iga True"


def test_nothing_imports_lark_at_run_time() -> None:
    """Lark is the tests' specification, not a run-time dependency: with every module of
    parasol_core and piui imported (the CLI, the estimator, the windows), every sample
    loaded, broken texts refused and bad expressions reported, lark is not loaded."""
    code = """
import importlib, io, contextlib, os, sys, pathlib
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
root = pathlib.Path(".")
for base in ("parasol_core", "piui"):
    for p in sorted((root / base).rglob("*.py")):
        parts = list(p.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__":
            continue
        importlib.import_module(".".join(parts))
from parasol_core import ModelSyntaxError, load, loads, parse_expression
from parasol_core.cli import main
samples = sorted((root / "sample_models").glob("*.machine"))
broken = 0
for s in samples:
    text = s.read_text(encoding="utf-8")
    load(s)
    for bad in (text[: len(text) // 2], text.replace("end", "ned", 3), text + "x = (",
                text.replace("=", "= =", 1), "\\ufeff" + text.replace("\\n", "\\r", 5)):
        try:
            loads(bad)
        except ModelSyntaxError:
            broken += 1
for e in ("1 +", "pt(1).iga / (2", "sqrt 2", "99999999999999999999999", "(" * 300 + "1"):
    try:
        parse_expression(e)
    except ModelSyntaxError:
        broken += 1
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(["check", str(samples[0])])
print(len(samples), broken > 2 * len(samples), "lark" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    count, refused, lark = out.stdout.split()
    assert int(count) >= 5 and refused == "True" and lark == "False", out.stdout
