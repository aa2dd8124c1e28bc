"""The architecture's layering, checked on every run (docs/architecture.md):

- nothing under ``parasol_core`` imports Qt (or anything built on it), statically or when
  every one of its modules is imported;
- a window does not import another window (windows share ``piui.widgets``); only the
  registry and the main window know every window.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "parasol_core"
WINDOWS = ROOT / "piui" / "windows"
QT = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "pyqtgraph", "qtpy", "piui")


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, anywhere in it (functions included)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def core_modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


@pytest.mark.parametrize("path", core_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_core_module_imports_qt(path: Path) -> None:
    bad = [(line, name) for line, name in imports(path) if name.split(".")[0] in QT]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_importing_every_core_module_loads_no_qt() -> None:
    names = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in core_modules()
    ]
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing parasol_core loaded {out.stdout.strip()}"


def window_modules() -> list[Path]:
    return sorted(p for p in WINDOWS.glob("*.py") if p.name not in ("__init__.py", "registry.py"))


@pytest.mark.parametrize("path", window_modules(), ids=lambda p: p.name)
def test_no_window_imports_another_window(path: Path) -> None:
    bad = [(line, name) for line, name in imports(path)
           if name.startswith("piui.windows") or name == "piui.main_window"]  # fmt: skip
    assert not bad, f"{path.name} imports {bad}: share code through piui.widgets instead"


def test_windows_edit_only_through_the_session() -> None:
    """No window writes model objects behind the session's back: the old command
    module is gone and no window builds an edit slot of its own."""
    assert not (ROOT / "piui" / "commands.py").exists()
    for path in window_modules():
        text = path.read_text()
        for needle in ("QUndoCommand", "undo_stack.push", "Slot(", "setattr(machine"):
            assert needle not in text, f"{path.name} uses {needle}"


def test_patterns_and_phases_form_no_cycle() -> None:
    """Issue 23: the messages (``topology.messages``) sit below both the pattern builders
    and the event trace; the patterns never import the trace, and the trace imports the
    patterns (for ``simulate(pattern=...)``)."""
    topo = CORE / "topology"
    names = {name for _, name in imports(topo / "patterns.py")}
    assert "parasol_core.topology.phases" not in names
    names = {name for _, name in imports(topo / "messages.py")}
    assert not {n for n in names if n.startswith("parasol_core.topology")}, names
    assert "parasol_core.topology.patterns" in {name for _, name in imports(topo / "phases.py")}


# --------------------------------------------------------------------------- import cycles


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the parasol_core modules it imports, anywhere in it (functions
    included: an import deferred into a function is still a dependency). ``from pkg
    import sub`` counts the module ``pkg.sub`` where there is one, else ``pkg``."""
    modules = {_module_name(p): p for p in core_modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
                found.update(subs or {node.module})
                if len(subs) < len(node.names):
                    found.add(node.module)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, deps = work[-1]
            for dep in deps:
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(sorted(graph[dep]))))
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.add(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


# Cycles other branches own and are fixing. topology/patterns <-> topology/phases is
# being fixed on branch `phases`; the rest of the topology component (network <-> flow,
# index <-> patterns, virtual -> index -> patterns -> virtual) sits in modules the
# `columns` and `phases` branches are rewriting, and is left to them.
OWNED_ELSEWHERE = {
    frozenset(
        f"parasol_core.topology.{m}"
        for m in ("flow", "index", "network", "patterns", "phases", "virtual")
    ),
}


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [{"a", "b", "c"}]


def test_no_import_cycle_among_core_modules() -> None:
    """No module of parasol_core reaches itself through its imports (counting those
    inside functions), but for the cycles listed as owned by other branches, which may
    only shrink."""
    found = cycles(import_graph())
    unexpected = [c for c in found if not any(c <= owned for owned in OWNED_ELSEWHERE)]
    assert not unexpected, f"import cycles: {[sorted(c) for c in unexpected]}"


def test_the_expression_tree_imports_no_syntax() -> None:
    """expr/tree sits below the reader: the reader builds trees, the tree parses nothing."""
    graph = import_graph()
    assert not {m for m in graph["parasol_core.expr.tree"] if m.startswith("parasol_core.syntax")}
