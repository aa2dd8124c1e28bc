"""Reading a trace, whatever its format: SimGrid's time-independent traces
(:mod:`.tifile`) or OTF2 archives (:mod:`.otf2file`)."""

from __future__ import annotations

import os

from parasol_core.replay.otf2file import is_otf2, load_otf2
from parasol_core.replay.tifile import Trace, TraceUnreadable, load_ti_trace


def load_trace(path: str | os.PathLike, ranks: int | None = None) -> Trace:
    """Read a trace: an OTF2 archive (its ``.otf2`` anchor file, or the folder holding
    it), else a SimGrid time-independent trace (an index file naming one action file per
    rank, or one file of every rank's actions). ``ranks``: how many the program had
    (default: from the trace). TraceError names the file and line of bad input; an
    empty path is unreadable (pathlib would take it as the current folder)."""
    if os.fspath(path) in ("", b""):
        raise TraceUnreadable("an empty file name names no trace")
    trace = load_otf2(path, ranks) if is_otf2(path) else load_ti_trace(path, ranks)
    trace.source = (path, ranks)
    return trace
