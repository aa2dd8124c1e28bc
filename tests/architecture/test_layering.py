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

ROOT = Path(__file__).resolve().parents[2]
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


# --------------------------------------------------------------------------- edits

PIUI = ROOT / "piui"
# What PIUI may take from the core's edit module: errors and parsing, nothing that
# writes (``slot``, ``set_value``, ``scale_group`` ... are the session's).
EDIT_READ_ONLY = {"EditError", "parse_value", "parse_reference", "check_int"}
# Calls that change a list or dict in place.
MUTATORS = {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update",
            "setdefault", "sort", "reverse", "__setitem__", "__delitem__"}  # fmt: skip


def model_fields() -> set[str]:
    """The attribute names of the model's objects (``parasol_core.model``'s blocks and
    the values they hold): ``timings``, ``mean``, ``links``, ``mapping``, ``speed`` ..."""
    import dataclasses

    import parasol_core.model as model

    names: set[str] = set()
    for value in vars(model).values():
        if not (isinstance(value, type) and dataclasses.is_dataclass(value)):
            continue
        if issubclass(value, model.Block) or value.__name__ == "Timing":
            names |= {f.name for f in dataclasses.fields(value)}
    return names


# Names PIUI gives objects that are not the model's although they have fields of the
# same names (an export's ``result.name``): writing those is no edit.
NOT_MODEL = {"self", "cls", "result"}


def _owner_is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in NOT_MODEL


def _is_edit_module(name: str | None) -> bool:
    parts = (name or "").split(".")
    return parts[0] == "parasol_core" and parts[-1] == "edit"


def edits_outside_the_session(source: str, fields: set[str]) -> list[tuple[int, str]]:
    """Where ``source`` changes a model object itself instead of asking the session:
    assignments, deletions and in-place changes of a model attribute of anything but
    ``self`` (``proc.timings["iga"] = ...``, ``t.mean = ...``, ``topo.links.append``),
    ``setattr`` on anything but ``self``, Qt undo commands of its own
    (``QUndoCommand``, ``undo_stack.push``) and the core's writing edit functions."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    edit_names = set()  # what the core's edit module is called here, if it is imported
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            edit_names |= {a.asname for a in node.names if a.asname and _is_edit_module(a.name)}
        elif isinstance(node, ast.ImportFrom) and node.module:
            edit_names |= {a.asname or a.name for a in node.names
                           if _is_edit_module(f"{node.module}.{a.name}")}  # fmt: skip

    def written(target: ast.expr, how: str) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                written(t, how)
        elif isinstance(target, ast.Starred):
            written(target.value, how)
        elif isinstance(target, ast.Attribute):
            if target.attr in fields and not _owner_is_self(target.value):
                found.append((target.lineno, f"{how} .{target.attr}"))
        elif isinstance(target, ast.Subscript):
            table = target.value
            if (isinstance(table, ast.Attribute) and table.attr in fields
                    and not _owner_is_self(table.value)):  # fmt: skip
                found.append((target.lineno, f"{how} .{table.attr}[...]"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                written(target, "assigns")
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
            not isinstance(node, ast.AnnAssign) or node.value is not None
        ):
            written(node.target, "assigns")
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                written(target, "deletes")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("setattr", "delattr"):
                if node.args and not _owner_is_self(node.args[0]):
                    found.append((node.lineno, f"{func.id}() on a model object"))
            elif isinstance(func, ast.Attribute):
                owner = func.value
                if (func.attr in MUTATORS and isinstance(owner, ast.Attribute)
                        and owner.attr in fields and not _owner_is_self(owner.value)):  # fmt: skip
                    found.append((node.lineno, f"changes .{owner.attr} with .{func.attr}()"))
                elif (
                    func.attr == "push"
                    and isinstance(owner, ast.Attribute)
                    and (owner.attr == "undo_stack")
                ):
                    found.append((node.lineno, "undo_stack.push"))
                elif (func.attr not in EDIT_READ_ONLY and isinstance(owner, ast.Name)
                      and owner.id in edit_names):  # fmt: skip
                    found.append((node.lineno, f"edit.{func.attr}()"))
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name == "QUndoCommand":
                found.append((node.lineno, "QUndoCommand"))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "QUndoCommand":
                    found.append((node.lineno, "imports QUndoCommand"))
                elif _is_edit_module(node.module) and alias.name not in EDIT_READ_ONLY:
                    found.append((node.lineno, f"imports {alias.name} from {node.module}"))
    return sorted(set(found))


def test_the_edit_finder_finds_edits_behind_the_sessions_back() -> None:
    fields = model_fields()
    assert {"timings", "mean", "links", "mapping", "speed", "connect"} <= fields
    bad = """
from parasol_core.session.edit import EditError, set_value
from parasol_core.session.edit import slot
from PySide6.QtGui import QUndoCommand
proc.timings["iga"] = t
machine.processor(1).timings["igm"] = t
timing.mean = 3.0
topology.links = []
doc.machine.virtuals[0].mapping[2] = 5
link.speed *= 2
del proc.timings["iga"]
topo.links.append(link)
virt.mapping.update({1: 2})
setattr(machine, "name", "x")
self.document.undo_stack.push(command)
from parasol_core import edit
edit.scale_group(machine, "all", 2)
class C(QUndoCommand):
    pass
"""
    found = edits_outside_the_session(bad, fields)
    lines = {line for line, _ in found}
    assert lines == set(range(2, 19)) - {16}, found  # all but the import of the module
    good = """
from parasol_core.session.edit import EditError, parse_value
self.mean = MantissaExponentEdit()
self.links = [1, 2]
self.timings["x"] = 1
self.links.append(3)
setattr(self, "_named", True)
value = proc.timings["iga"].mean
names = [link.speed for link in topo.links]
doc.session.set("pt(1).iga", "3e-6")
self.document.undo_stack.createUndoAction(self, "&Undo")
edit.setText("a QLineEdit called edit")
result.name = "an export's name"
"""
    assert edits_outside_the_session(good, fields) == []


def test_piui_edits_only_through_the_session() -> None:
    """No part of PIUI (windows, widgets, the main window, the document ...) writes
    model objects behind the session's back: the old command module is gone, and no
    module changes a model attribute, builds an undo command or an edit slot of its
    own (test_the_edit_finder_finds_edits_behind_the_sessions_back shows the check can
    fail)."""
    assert not (PIUI / "commands.py").exists()
    fields = model_fields()
    bad = []
    for path in sorted(PIUI.rglob("*.py")):
        for line, what in edits_outside_the_session(path.read_text(), fields):
            bad.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not bad, "edit through the session (doc.session) instead:\n" + "\n".join(bad)


def test_patterns_and_phases_form_no_cycle() -> None:
    """Issue 23: the messages (``simulate.messages``) sit below both the pattern builders
    and the event trace; the patterns never import the trace, and the trace imports the
    patterns (for ``simulate(pattern=...)``)."""
    sim = CORE / "simulate"
    names = {name for _, name in imports(sim / "patterns.py")}
    assert "parasol_core.simulate.phases" not in names
    names = {name for _, name in imports(sim / "messages.py")}
    assert not {n for n in names if n.startswith("parasol_core.simulate")}, names
    assert "parasol_core.simulate.patterns" in {name for _, name in imports(sim / "phases.py")}


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
def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [{"a", "b", "c"}]


def test_no_import_cycle_among_core_modules() -> None:
    """No module of parasol_core reaches itself through its imports (counting those
    inside functions)."""
    found = cycles(import_graph())
    assert not found, f"import cycles: {[sorted(c) for c in found]}"


def test_the_expression_tree_imports_no_syntax() -> None:
    """expr/tree sits below the reader: the reader builds trees, the tree parses nothing."""
    graph = import_graph()
    assert not {m for m in graph["parasol_core.model.tree"] if m.startswith("parasol_core.syntax")}


# --------------------------------------------------------------------------- floors

# The core's floors are its packages (docs/architecture.md): every entry of
# parasol_core/ is a package whose __init__.py says ``FLOOR = N``, and a module imports
# only modules of its own floor or below, functions included.


def package_floors() -> dict[str, int]:
    """Package name -> the FLOOR its ``__init__.py`` declares (read with ast, not
    imported, so that a package that fails to import is still checked)."""
    floors: dict[str, int] = {}
    for init in sorted(CORE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(), str(init))
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "FLOOR"
                    and isinstance(node.value, ast.Constant)):  # fmt: skip
                floors[init.parent.name] = node.value.value
    return floors


def test_every_entry_of_the_core_is_a_package_on_a_floor() -> None:
    """No loose modules beside the packages (only the front door, ``__init__.py``), and
    every package says its floor, a whole number from 0."""
    loose = sorted(p.name for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules outside a package: {loose}"
    packages = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
    floors = package_floors()
    missing = [name for name in packages if name not in floors]
    assert not missing, f"packages with no FLOOR in their __init__.py: {missing}"
    assert all(isinstance(f, int) and f >= 0 for f in floors.values()), floors
    # 16 since issues 31 and 32 added replay/ and sweep/ (docs/architecture.md's map)
    assert len(packages) <= 16, f"{len(packages)} packages at the top: {packages}"


def floor_of(module: str, floors: dict[str, int] | None = None) -> int:
    """The floor of a module: its top-level package's."""
    floors = package_floors() if floors is None else floors
    package = module.removeprefix("parasol_core.").split(".")[0]
    if package not in floors:
        raise AssertionError(f"{module} is in no package with a FLOOR")
    return floors[package]


def upward_imports(graph: dict[str, set[str]], floors: dict[str, int]) -> list[str]:
    above = []
    for module, deps in graph.items():
        if module == "parasol_core":
            continue  # the package's front door re-exports from several floors
        for dep in deps:
            if dep != "parasol_core" and floor_of(dep, floors) > floor_of(module, floors):
                above.append(f"{module} (floor {floor_of(module, floors)}) imports {dep} "
                             f"(floor {floor_of(dep, floors)})")  # fmt: skip
    return sorted(above)


def test_the_floor_check_finds_an_upward_import() -> None:
    floors = {"base": 0, "model": 1, "cli": 6}
    graph = {"parasol_core.base.limits": {"parasol_core.model.machine"},
             "parasol_core.model.machine": {"parasol_core.base.limits"},
             "parasol_core.cli.common": {"parasol_core.model.machine"}}  # fmt: skip
    assert upward_imports(graph, floors) == [
        "parasol_core.base.limits (floor 0) imports parasol_core.model.machine (floor 1)"
    ]


def test_every_core_module_imports_only_its_floor_and_below() -> None:
    above = upward_imports(import_graph(), package_floors())
    assert not above, "\n".join(above)
