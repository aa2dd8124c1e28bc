"""Program traces pushed to the estimator, on disk beside its models, content-addressed
as models are: the same files always get the same id, and pushing them again stores
nothing new.

A trace is a SimGrid time-independent trace: an index file naming one action file per
rank (or one file holding every rank's actions), pushed as its files by name. Layout::

    traces/<ID>/<name>      each file exactly as pushed
    traces/<ID>/.index      the name of the index file (what is replayed)

The id is SHA-256 over the files' names and contents in name order (the first 32 hex
digits, as a model's). Each file is written atomically and durably, then ``.index``,
which marks the trace complete: a folder without it (a push killed half-way) is removed
at start. A name is a relative path of plain parts (no ``..``, no absolute path, no
hidden part), so that a pushed trace never writes outside its folder. The traces' bytes
count against their own limit (the store's, ``--store-limit``): a push past it raises
:class:`~parasol_core.estimator.store.StoreFull` and stores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parasol_core.base.words import counted
from parasol_core.estimator.store import ID_LENGTH, StoreFull, _fsync_dir, _write_atomic

__all__ = ["StoredTrace", "TraceStore", "trace_id", "traces_of"]

MAX_FILES = 65_536  # files of one trace (one a rank, and the index)
_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}\Z")
INDEX = ".index"


def check_file_name(name: object) -> str:
    """``name`` if it is a relative path of plain parts, else ValueError saying why."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a trace file name must be a non-empty string, not {name!r}")
    parts = name.split("/")
    if len(parts) > 8 or not all(_PART.match(p) for p in parts):
        raise ValueError(f"{name[:80]!r} is not a trace file name: relative parts of "
                         "letters, digits and _ . + = - (not starting with a dot)")  # fmt: skip
    return name


def trace_id(files: dict[str, bytes], index: str) -> str:
    """The content hash naming a trace: its index's name, then every file's name and
    contents, in name order."""
    h = hashlib.sha256()
    h.update(b"index\0" + index.encode("utf-8") + b"\0")
    for name in sorted(files):
        data = files[name]
        h.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:ID_LENGTH]


@dataclass(frozen=True)
class StoredTrace:
    id: str
    folder: Path
    index: str  # the index file's name
    size: int  # bytes of all its files
    lines: int  # lines of all its files: the actions, at most (the budget's estimate)

    @property
    def path(self) -> Path:
        return self.folder / self.index


class TraceStore:
    """The traces of one folder; used from worker threads (each method takes the lock)."""

    def __init__(self, directory: str | Path, limit: int | None = None) -> None:
        self.directory = Path(directory)
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()
        self._traces: dict[str, StoredTrace] = {}
        self.directory.mkdir(parents=True, exist_ok=True)
        self._load()

    def _load(self) -> None:
        for folder in self.directory.iterdir():
            if folder.name.startswith(".tmp-"):
                shutil.rmtree(folder, ignore_errors=True)
                continue
            if not folder.is_dir():
                continue
            try:
                index = (folder / INDEX).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                shutil.rmtree(folder, ignore_errors=True)  # a push killed half-way
                continue
            files = {str(p.relative_to(folder)): p.read_bytes()
                     for p in folder.rglob("*") if p.is_file() and p.name != INDEX
                     and not p.name.startswith(".tmp-")}  # fmt: skip
            if trace_id(files, index) != folder.name:
                continue  # not what was pushed: never replayed
            self._keep(folder.name, folder, index, files)

    def _keep(self, tid: str, folder: Path, index: str, files: dict[str, bytes]) -> StoredTrace:
        size = sum(len(d) for d in files.values())
        lines = sum(d.count(b"\n") + 1 for d in files.values())
        stored = StoredTrace(tid, folder, index, size, lines)
        self._traces[tid] = stored
        self.used += size
        return stored

    def put(self, files: dict[str, bytes], index: str) -> StoredTrace:
        """Store a trace (its files by name, ``index`` the one replayed); on disk when
        this returns. ValueError for bad names; StoreFull past the limit."""
        if not files:
            raise ValueError("a trace needs at least one file")
        if len(files) > MAX_FILES:
            raise ValueError(f"a trace of {counted(len(files), 'file')}: at most {MAX_FILES:,}")
        for name in files:
            check_file_name(name)
        if index not in files:
            raise ValueError(f"the index {index!r} is not one of the files pushed")
        tid = trace_id(files, index)
        size = sum(len(d) for d in files.values())
        with self._lock:
            stored = self._traces.get(tid)
            if stored is not None:
                return stored
            if self.limit is not None and self.used + size > self.limit:
                raise StoreFull(size, self.used, self.limit)
            folder = self.directory / tid
            tmp = self.directory / f".tmp-{tid}"
            shutil.rmtree(tmp, ignore_errors=True)
            try:
                for name, data in files.items():
                    target = tmp / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    _write_atomic(target, data)
                _write_atomic(tmp / INDEX, index.encode("utf-8"))
                if folder.exists():  # left incomplete by an earlier push
                    shutil.rmtree(folder)
                tmp.rename(folder)
                _fsync_dir(self.directory)
            except BaseException:
                with contextlib.suppress(OSError):
                    shutil.rmtree(tmp)
                raise
            return self._keep(tid, folder, index, files)

    def get(self, tid: str) -> StoredTrace | None:
        with self._lock:
            return self._traces.get(tid)

    def __len__(self) -> int:
        with self._lock:
            return len(self._traces)


_of_lock = threading.Lock()


def traces_of(svc: Any) -> TraceStore:
    """The service's trace store, beside its models (made when first needed), with the
    traces it keeps read (``svc.read_traces``): ``trace.push``, ``estimate.program`` and
    ``sweep.run`` share it."""
    with _of_lock:
        store = getattr(svc, "traces", None)
        if store is None:
            store = TraceStore(svc.store.directory / "traces", svc.store.limit)
            svc.traces = store
            svc.read_traces = OrderedDict()
        return store
