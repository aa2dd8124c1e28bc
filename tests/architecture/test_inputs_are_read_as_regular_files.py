"""Every file a user names is read through ``parasol_core.base.limits`` (``open_input``,
``read_capped``, ``read_head``, ``read_model_bytes``): a regular file only, never
blocking on a FIFO nor reading ``/dev/zero`` until the memory is gone, and capped.

``parasol-model replay MODEL /dev/zero`` read until the kernel killed it (its trace's
first 4 KiB were taken from the whole file read first), and a FIFO named as a sweep
file, a hostfile or a trace's index blocked for ever. The rule, for the whole core: no
``Path.read_bytes``, ``Path.read_text`` or builtin ``open`` for reading, except on the
files the program keeps itself or the system's (each listed below with why)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "parasol_core"

# module -> why it may read files directly (none of them a file a user names)
ALLOWED = {
    "base/limits.py": "the readers themselves",
    "base/budget.py": "/proc/meminfo",
    "measure/memory.py": "/sys/devices/system/cpu: the OS's cache sizes",
    "measure/toolchain.py": "/proc/cpuinfo",
    "syntax/expression.py": "the grammar shipped with the package",
    "estimator/local.py": "the estimator's own log file",
    "estimator/store.py": "the estimator's own store of models",
    "estimator/traces.py": "the estimator's own store of traces",
}


def _reads(tree: ast.AST) -> list[int]:
    """Lines of ``x.read_bytes()``, ``x.read_text()`` and ``open(...)`` for reading."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("read_bytes", "read_text"):
            lines.append(node.lineno)
        elif isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)  # fmt: skip
            text = mode.value if isinstance(mode, ast.Constant) else "r"
            if not any(c in str(text) for c in "wax+"):
                lines.append(node.lineno)
    return lines


def test_the_core_reads_input_files_only_through_base_limits():
    found = []
    for path in sorted(CORE.rglob("*.py")):
        name = path.relative_to(CORE).as_posix()
        if name in ALLOWED:
            continue
        for line in _reads(ast.parse(path.read_text(encoding="utf-8"))):
            found.append(f"parasol_core/{name}:{line}")
    assert not found, ("read a user's file through base.limits (open_input, read_capped, "
                       "read_head, read_model_bytes): " + ", ".join(found))  # fmt: skip


def test_the_rule_finds_what_it_forbids():
    tree = ast.parse("p.read_bytes()\nopen(x)\nopen(x, 'rb')\nopen(x, 'w')\nq.read_text()\n")
    assert _reads(tree) == [1, 2, 3, 5]
