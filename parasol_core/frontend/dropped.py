"""What a file dropped on PIUI's window is: a machine model to open, a SimGrid platform
to import, or a program trace for the Program window.

Decided by the name where it says (``.machine``, ``.xml``, ``.otf2``), else by the first
lines: a model begins ``begin machine`` (report appendix A) after its comments, a
platform is XML, a time-independent trace is an index of rank files or one rank's
actions (``0 init``). Anything else is taken as a model: its diagnostics say, line by
line, what is wrong with it.
"""

from __future__ import annotations

import os
from pathlib import Path

from parasol_core.base.limits import read_head

MODEL, PLATFORM, TRACE = "model", "platform", "trace"
_HEAD = 64 * 1024  # the first bytes read to decide


def kind_of(path: str | os.PathLike) -> str:
    """``MODEL``, ``PLATFORM`` or ``TRACE``: what ``path`` most likely holds."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".otf2" or (p.is_dir() and any(p.glob("*.otf2"))):
        return TRACE  # an OTF2 archive (its anchor or its folder)
    if p.is_dir():
        return MODEL  # opening it says it is a folder
    if suffix == ".machine":
        return MODEL
    if suffix == ".xml":
        return PLATFORM
    try:
        head = read_head(p, _HEAD).decode("utf-8", errors="replace")
    except OSError:
        return MODEL  # opening it says why it cannot be read (a FIFO, a device: refused)
    lines = [line.strip() for line in head.splitlines()]
    meaningful = [line for line in lines if line and not line.startswith("#")]
    if not meaningful:
        return MODEL
    first = meaningful[0]
    if first.lower().startswith(("<?xml", "<platform", "<!doctype platform")):
        return PLATFORM
    if first.lower().split()[:2] == ["begin", "machine"]:
        return MODEL
    words = first.split()
    if len(words) >= 2 and words[1].lower() == "init":
        return TRACE  # one rank's actions: "0 init"
    if _names_files(p.parent, meaningful[:4]):
        return TRACE  # an index: one rank file a line
    return MODEL


def _names_files(folder: Path, lines: list[str]) -> bool:
    """Whether every line names a file that exists (relative to ``folder``)."""
    return all(len(line.split()) == 1 and (folder / line).is_file() for line in lines)
