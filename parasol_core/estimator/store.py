"""Pushed models on disk: written atomically and durably, read back after a restart.

Layout of a store directory::

    models/<ID>.machine     the text exactly as pushed (UTF-8)
    journal.jsonl           one line per push or drop, in order: names and drops

A push writes the model file (temporary file, fsync, rename, fsync of the directory)
unless it is there already, then appends its journal line and fsyncs the journal. Only
then is the push acknowledged, so a model the server answered for survives a ``kill -9``
(or a power cut, as far as the file system honours fsync). A torn last journal line is
ignored on reading. At start-up the journal is compacted to one line per stored model.

At start-up the temporary files a killed push left (``.tmp-*``) are removed. A store
may have a size limit (``limit``, bytes of model text): a push that would take it past
the limit raises :class:`StoreFull`, naming the sizes, and stores nothing.

The store is used from worker threads: every public method takes the store's lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from parasol_core.base.words import counted

__all__ = ["DEFAULT_LIMIT", "ModelStore", "StoreFull", "StoredText", "model_id"]

ID_LENGTH = 32  # hex digits of SHA-256: 128 bits
DEFAULT_LIMIT = 1024**3  # bytes of model text: 1 GiB


class StoreFull(OSError):
    """A push that would take the store past its size limit; nothing was stored."""

    def __init__(self, size: int, used: int, limit: int) -> None:
        self.size, self.used, self.limit = size, used, limit
        super().__init__(
            f"the store is full: this model is {counted(size, 'byte')}, the store holds "
            f"{used:,} of its limit of {counted(limit, 'byte')}; drop models (model.drop) or "
            "start the estimator with a larger --store-limit"
        )


def model_id(text: str) -> str:
    """The content hash naming a model: the same text always gets the same id."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]


def is_model_id(value: str) -> bool:
    return len(value) == ID_LENGTH and all(c in "0123456789abcdef" for c in value)


@dataclass
class StoredText:
    """One stored model: its text and what the journal says about it."""

    id: str
    text: str
    pushed: float  # seconds since the epoch, of the latest push
    seq: int  # order of the latest push
    # the names it was pushed under, in push order, most recent last (a dict used as an
    # ordered set: a push under a name it has moves the name to the end in O(1))
    names: dict[str, None] = field(default_factory=dict)

    def latest_name(self) -> str | None:
        """The name of the latest push that had one."""
        return next(reversed(self.names), None)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the new one,
    and the new one is on disk when this returns."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


class ModelStore:
    """The models of one store directory, in memory and on disk."""

    def __init__(self, directory: str | os.PathLike[str], limit: int | None = None) -> None:
        self.directory = Path(directory)
        self.limit = limit
        self.used = 0  # bytes of model text stored
        self.models_dir = self.directory / "models"
        self.journal_path = self.directory / "journal.jsonl"
        self._lock = threading.Lock()
        self._models: dict[str, StoredText] = {}
        self._names: dict[str, dict[str, None]] = {}  # name -> model ids, most recent last
        self._seq = 0
        self.models_dir.mkdir(parents=True, exist_ok=True)
        self._load()

    # ------------------------------------------------------------------ start-up

    def _load(self) -> None:
        for folder in (self.directory, self.models_dir):  # left by a killed push
            for tmp in folder.glob(".tmp-*"):
                with contextlib.suppress(OSError):
                    tmp.unlink()
        for path in self.models_dir.glob("*.machine"):
            mid = path.stem
            if not is_model_id(mid):
                continue
            try:
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if model_id(text) != mid:  # not what was pushed: never serve it
                continue
            self._models[mid] = StoredText(mid, text, path.stat().st_mtime, 0)
        dropped: set[str] = set()
        for record in self._journal_records():
            mid = record.get("model")
            if not isinstance(mid, str):
                continue
            if record.get("op") == "drop":
                dropped.add(mid)
                self._forget(mid)
            elif record.get("op") == "push" and mid in self._models:
                dropped.discard(mid)
                self._seq += 1
                self._note_push(self._models[mid], record.get("name"), record.get("time"))
        for mid in dropped:  # killed between the journal line and the unlink
            with contextlib.suppress(OSError):
                (self.models_dir / f"{mid}.machine").unlink()
            self._models.pop(mid, None)
        self.used = sum(_size(s.text) for s in self._models.values())
        self._compact()

    def _journal_records(self) -> list[dict]:
        try:
            lines = self.journal_path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn last line
            if isinstance(record, dict):
                out.append(record)
        return out

    def _compact(self) -> None:
        lines = []
        for stored in sorted(self._models.values(), key=lambda s: s.seq):
            names = stored.names or [None]
            for name in names:
                lines.append(_record("push", stored.id, name, stored.pushed))
        _write_atomic(self.journal_path, "".join(lines).encode("utf-8"))

    # ------------------------------------------------------------------ bookkeeping

    def _note_push(self, stored: StoredText, name: object, when: object) -> None:
        stored.seq = self._seq
        if isinstance(when, (int, float)):
            stored.pushed = float(when)
        if isinstance(name, str):
            stored.names.pop(name, None)
            stored.names[name] = None
            ids = self._names.setdefault(name, {})
            ids.pop(stored.id, None)
            ids[stored.id] = None

    def _forget(self, mid: str) -> None:
        stored = self._models.pop(mid, None)
        if stored is None:
            return
        for name in stored.names:
            ids = self._names.get(name, {})
            ids.pop(mid, None)
            if not ids:
                self._names.pop(name, None)

    def _append(self, line: str) -> None:
        with open(self.journal_path, "ab") as f:
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    # ------------------------------------------------------------------ the API

    def put(self, text: str, name: str | None = None) -> StoredText:
        """Store ``text`` (under ``name``); on disk when this returns."""
        mid = model_id(text)
        data = text.encode("utf-8")
        with self._lock:
            path = self.models_dir / f"{mid}.machine"
            stored = self._models.get(mid)
            if stored is None and self.limit is not None and self.used + len(data) > self.limit:
                raise StoreFull(len(data), self.used, self.limit)
            if stored is None or not path.exists():
                _write_atomic(path, data)
            now = time.time()
            self._append(_record("push", mid, name, now))
            if stored is None:
                stored = StoredText(mid, text, now, 0)
                self._models[mid] = stored
                self.used += len(data)
            self._seq += 1
            self._note_push(stored, name, now)
            return stored

    def get(self, mid: str) -> StoredText | None:
        with self._lock:
            return self._models.get(mid)

    def latest(self, name: str) -> str | None:
        """The newest model id pushed under ``name`` that is still stored."""
        with self._lock:
            ids = self._names.get(name)
            return next(reversed(ids)) if ids else None

    def drop(self, mid: str) -> bool:
        """Remove a model; False if it was not stored."""
        with self._lock:
            if mid not in self._models:
                return False
            self._append(_record("drop", mid, None, time.time()))
            self.used -= _size(self._models[mid].text)
            self._forget(mid)
            with contextlib.suppress(FileNotFoundError):
                (self.models_dir / f"{mid}.machine").unlink()
            _fsync_dir(self.models_dir)
            return True

    def all(self) -> list[StoredText]:
        """Every stored model, oldest push first."""
        with self._lock:
            return sorted(self._models.values(), key=lambda s: s.seq)

    def __len__(self) -> int:
        with self._lock:
            return len(self._models)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _record(op: str, mid: str, name: str | None, when: float) -> str:
    data = {"op": op, "model": mid, "name": name, "time": when}
    return json.dumps(data, ensure_ascii=True) + "\n"
