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
