"""A topology's links as columns: :class:`LinkStore`.

A million-processor torus has three million links. As Python objects (a dataclass with a
dictionary and a source record each) they took about 1.9 KB apiece; as columns (numpy
arrays: ids, latency and speed, connectivity as offsets into one flat array of
processor numbers, and where each link's section starts in the text) they take about
50 bytes. ``Topology.links`` is a :class:`LinkStore`: a ``MutableSequence[Link]`` whose
``Link`` objects are *views* made on demand. Reading a view's field reads the columns,
setting it writes them, so code written for a list of links (the session, the windows,
the tests) works unchanged, while bulk paths (the loader, the index, the validator, the
writer, the JSON dump) read the columns.

A view stays the same object while anyone holds it (``links[i] is links[i]``), and
follows its link when links before it are inserted or removed. A link taken out of the
store becomes a plain ``Link`` holding its values; put back into the same store (undo)
it is a view again, of the same link, with its place in the text.

Values the columns cannot hold exactly (``None``, a float where a timing belongs, an id
past 64 bits, a tuple of processors) are kept aside, per link, and read back as set: a
view gives back exactly what was written to it. Bulk readers see such a link through a
sentinel (id -1, latency or speed NaN, no processors) and read its view.

Lossless saving: each link read by the fast path (:mod:`parasol_core.syntax.fastscan`)
keeps the offset of its ``begin link`` line and its line number; its source record (the
positions of every value) is read from the text when something asks for ``link.src``, as
the editor does for the few links it shows, and then kept. A link whose values were set
since the last load or save is *dirty*; the writer looks only at dirty links and at
links with a record.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Iterable, Iterator, MutableSequence
from typing import Any

import numpy as np

from parasol_core.base.arrays import union
from parasol_core.base.words import counted

# Bound by parasol_core.model (which imports this module, not the other way round).
Link: Any = None
Timing: Any = None

FIELDS = ("id", "latency", "speed", "connect")
_INT64_MAX = 2**63 - 1
_VERSIONS = itertools.count()  # versions are unique across stores: a fingerprint
_INT32_MAX = 2**31 - 1


def bind(link_class: type, timing_class: type) -> None:
    global Link, Timing
    Link, Timing = link_class, timing_class


class LinkColumns:
    """A batch of links as columns (what the fast path reads from one link list, or
    :func:`links_from_arrays` builds): appended to a store in one step."""

    __slots__ = ("ids", "lat", "lat_sd", "spd", "spd_sd", "offsets", "procs", "starts",
                 "lines", "text")  # fmt: skip

    def __init__(self, ids: np.ndarray, lat: np.ndarray, spd: np.ndarray, offsets: np.ndarray,
                 procs: np.ndarray, lat_sd: np.ndarray | None = None,
                 spd_sd: np.ndarray | None = None, starts: np.ndarray | None = None,
                 lines: np.ndarray | None = None, text: str | None = None) -> None:  # fmt: skip
        self.ids = np.asarray(ids, dtype=np.int64)
        n = self.ids.shape[0]
        self.lat = _full(lat, n)
        self.spd = _full(spd, n)
        self.lat_sd = None if lat_sd is None else _full(lat_sd, n)
        self.spd_sd = None if spd_sd is None else _full(spd_sd, n)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.procs = _procs_array(procs)
        self.starts = starts
        self.lines = lines
        self.text = text

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def _full(values: Any, n: int) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim == 0:
        return np.full(n, float(a))
    return a


def _procs_array(procs: Any) -> np.ndarray:
    a = np.asarray(procs, dtype=np.int64)
    if a.shape[0] and int(a.max()) <= _INT32_MAX and int(a.min()) >= 0:
        return a.astype(np.int32)
    return a


def links_from_arrays(ids: Any, a: Any, b: Any, latency: Any, speed: Any,
                      latency_sd: Any = None, speed_sd: Any = None) -> LinkStore:  # fmt: skip
    """A store of two-processor links built straight from arrays (generators use it):
    link ``i`` has id ``ids[i]`` and joins ``a[i]`` and ``b[i]``; ``latency`` and
    ``speed`` (seconds, seconds per byte) are arrays or one number for all."""
    ids = np.asarray(ids, dtype=np.int64)
    n = ids.shape[0]
    procs = np.empty(2 * n, dtype=np.int64)
    procs[0::2] = a
    procs[1::2] = b
    cols = LinkColumns(ids, latency, speed, np.arange(0, 2 * n + 1, 2, dtype=np.int64), procs,
                       latency_sd, speed_sd)  # fmt: skip
    store = LinkStore()
    store.extend(cols)
    return store


class LinkStore(MutableSequence):
    """The links of one topology, as columns, with ``Link`` views made on demand."""

    def __init__(self, links: Iterable[Any] = ()) -> None:
        self._id = np.zeros(0, dtype=np.int64)
        self._lat = np.zeros(0)
        self._spd = np.zeros(0)
        self._lat_sd: np.ndarray | None = None  # NaN: no sd
        self._spd_sd: np.ndarray | None = None
        self._off = np.zeros(1, dtype=np.int64)
        self._procs = np.zeros(0, dtype=np.int32)
        self._start = np.zeros(0, dtype=np.int64)  # offset of the `begin link` line, or -1
        self._line = np.zeros(0, dtype=np.int32)
        self._uid: np.ndarray | None = None  # None: uid == row
        self._next_uid = 0
        self._text: str | None = None  # the text ``_start`` points into
        self._odd: dict[int, dict[str, Any]] = {}  # uid -> values the columns cannot hold
        self._srcs: dict[int, Any] = {}  # uid -> source record (built, or set)
        # by uid: values set since the last load or save (a mask, not a set: a bulk edit
        # of every link of a million-link torus marks them all)
        self._dirty = np.zeros(0, dtype=bool)
        # by uid: set since then through a field other than latency or speed (id,
        # connect): such a link is compared with its text link by link
        self._dirty_shape = np.zeros(0, dtype=bool)
        # latency or speed -> (means, sds) by uid as the text holds them, kept at the
        # first write of that timing since the last load or save: a save compares the
        # links edited only in their timings with these in bulk (a group edit of the
        # 3,000,000 links of a million-processor torus), with no record per link
        self._as_text: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._gone: dict[int, tuple[int, int]] = {}  # removed uid -> (start, line)
        # uids as loaded (None: 0.._n_loaded - 1, the common case, kept as no array)
        self._loaded: np.ndarray | None = np.zeros(0, dtype=np.int64)
        self._n_loaded = 0
        self._views: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._row_of: np.ndarray | None = None  # uid -> row, when uids are not rows
        self._by_id: tuple | None = None
        self._version = next(_VERSIONS)
        if links:
            self.extend(links)

    # ------------------------------------------------------------------ rows and uids

    def __len__(self) -> int:
        return int(self._id.shape[0])

    def uids(self) -> np.ndarray:
        if self._uid is None:
            return np.arange(len(self), dtype=np.int64)
        return self._uid

    def _uids_materialized(self) -> np.ndarray:
        if self._uid is None:
            self._uid = np.arange(len(self), dtype=np.int64)
        return self._uid

    def _row(self, uid: int) -> int:
        if self._uid is None:
            if 0 <= uid < len(self):
                return uid
            raise LookupError(uid)
        if self._row_of is None:
            row_of = np.full(self._next_uid, -1, dtype=np.int64)
            row_of[self._uid] = np.arange(len(self), dtype=np.int64)
            self._row_of = row_of
        row = int(self._row_of[uid]) if uid < self._row_of.shape[0] else -1
        if row < 0:
            raise LookupError(uid)
        return row

    def _structure_changed(self) -> None:
        self._row_of = None
        self._by_id = None
        self._version = next(_VERSIONS)

    def _position(self, i: Any) -> int:
        """The row a list index names (negative from the end), or IndexError."""
        n = len(self)
        i = int(i) if not isinstance(i, int) else i
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("link index out of range")
        return i

    def view(self, row: int) -> Any:
        """The ``Link`` view of a row (the same object while anyone holds it)."""
        uid = row if self._uid is None else int(self._uid[row])
        link = self._views.get(uid)
        if link is None:
            link = object.__new__(Link)
            link.__dict__.update(_store=self, _uid=uid)
            self._views[uid] = link
        return link

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.view(r) for r in range(*i.indices(len(self)))]
        return self.view(self._position(i))

    def __iter__(self) -> Iterator[Any]:
        for r in range(len(self)):
            yield self.view(r)

    def __setitem__(self, i: Any, value: Any) -> None:
        if isinstance(i, slice):
            rows = list(range(*i.indices(len(self))))
            values = list(value)
            if i.step not in (None, 1) and len(values) != len(rows):
                raise ValueError("extended slice assignment of another length")
            for r in reversed(rows):
                del self[r]
            at = rows[0] if rows else (i.indices(len(self))[0])
            for k, v in enumerate(values):
                self.insert(at + k, v)
            return
        i = self._position(i)
        del self[i]
        self.insert(i, value)

    def __delitem__(self, i: Any) -> None:
        if isinstance(i, slice):
            for r in sorted(range(*i.indices(len(self))), reverse=True):
                del self[r]
            return
        i = self._position(i)
        uid = i if self._uid is None else int(self._uid[i])
        view = self._views.get(uid)
        if view is not None:
            self._detach(view, i)
        if self._start[i] >= 0:
            self._gone[uid] = (int(self._start[i]), int(self._line[i]))
        self._odd.pop(uid, None)  # a view taken out holds its own values
        a, b = int(self._off[i]), int(self._off[i + 1])
        self._uids_materialized()
        self._uid = np.delete(self._uid, i)
        self._id = np.delete(self._id, i)
        self._lat = np.delete(self._lat, i)
        self._spd = np.delete(self._spd, i)
        if self._lat_sd is not None:
            self._lat_sd = np.delete(self._lat_sd, i)
        if self._spd_sd is not None:
            self._spd_sd = np.delete(self._spd_sd, i)
        self._start = np.delete(self._start, i)
        self._line = np.delete(self._line, i)
        self._procs = np.concatenate((self._procs[:a], self._procs[b:]))
        off = np.delete(self._off, i + 1)
        off[i + 1 :] -= b - a
        self._off = off
        self._structure_changed()

    def _detach(self, view: Any, row: int) -> None:
        """Make ``view`` a plain link holding the row's values (it is being removed)."""
        uid = view.__dict__["_uid"]
        values = {name: self._get(row, uid, name) for name in FIELDS}
        values["src"] = self.record(uid)  # it keeps where it was, as a removed object did
        d = view.__dict__
        d["_store"] = None
        d["_home"] = weakref.ref(self)
        d.update(values)
        self._views.pop(d["_uid"], None)

    def insert(self, index: int, link: Any) -> None:
        n = len(self)
        if index < 0:
            index = max(0, index + n)
        index = min(index, n)
        d = link.__dict__
        store = d.get("_store")
        if store is not None:  # a view (of this store or another): copy its values
            values = {name: getattr(link, name) for name in FIELDS}
            src = link.src if not store.is_lazy(link) else None
            if store is self:
                raise ValueError("this link is already in the list")
            store._views.pop(d["_uid"], None)
            uid, restored = self._next_uid, None
            self._next_uid += 1
        else:
            values = {name: d.get(name) for name in FIELDS}
            home = d.get("_home")
            src = d.get("src")
            if home is not None and home() is self and d["_uid"] in self._gone:
                uid = d["_uid"]
                restored = self._gone.pop(uid)
            else:
                uid, restored = self._next_uid, None
                self._next_uid += 1
        self._uids_materialized()
        self._uid = np.insert(self._uid, index, uid)
        self._id = np.insert(self._id, index, -1)
        self._lat = np.insert(self._lat, index, np.nan)
        self._spd = np.insert(self._spd, index, np.nan)
        if self._lat_sd is not None:
            self._lat_sd = np.insert(self._lat_sd, index, np.nan)
        if self._spd_sd is not None:
            self._spd_sd = np.insert(self._spd_sd, index, np.nan)
        self._start = np.insert(self._start, index, restored[0] if restored else -1)
        self._line = np.insert(self._line, index, restored[1] if restored else 0)
        self._off = np.insert(self._off, index + 1, self._off[index])
        self._structure_changed()
        for name in FIELDS:
            self._put(index, uid, name, values[name])
        if restored is None and "src" in d and src is not None:
            self._srcs[uid] = src
        elif restored is None and self._start[index] < 0:
            self._srcs.pop(uid, None)
        d.clear()
        d.update(_store=self, _uid=uid)
        self._views[uid] = link
        self._mark(uid)

    def _mark(self, uids: Any, name: str | None = None) -> None:
        """Links set since the last load or save (``name``: the field set; a field other
        than a timing, or None, also marks them for the writer's link-by-link path)."""
        self._dirty = _grown(self._dirty, self._next_uid)
        self._dirty[uids] = True
        if name not in ("latency", "speed"):
            self._dirty_shape = _grown(self._dirty_shape, self._next_uid)
            self._dirty_shape[uids] = True

    def _keep_text_values(self, name: str) -> None:
        """Before the first write of timing ``name`` since the last load or save: keep
        what the column holds, which for every link not yet set is what its text says."""
        if name not in ("latency", "speed") or name in self._as_text or self._text is None:
            return
        n = self._next_uid
        means = np.full(n, np.nan)
        sds = np.full(n, np.nan)
        uids = self.uids()
        means[uids] = self.means(name)
        column = self.sds(name)
        if column is not None:
            sds[uids] = column
        self._as_text[name] = (means, sds)

    def _saved(self) -> None:
        """The text now holds every link as it is (after a load or a save)."""
        self._dirty = np.zeros(0, dtype=bool)
        self._dirty_shape = np.zeros(0, dtype=bool)
        self._as_text = {}

    def timing_edits(self) -> np.ndarray:
        """The rows of the links set since the last load or save in their latency or
        speed only, read by the fast path, with no record built, and holding only values
        the columns hold: the ones a save may compare with their text in bulk
        (:meth:`text_timings`), in order."""
        if self._text is None or not self._dirty.any():
            return np.zeros(0, dtype=np.int64)
        uids = self.uids()
        dirty = _grown(self._dirty, self._next_uid)[uids]
        if self._dirty_shape.any():
            dirty &= ~_grown(self._dirty_shape, self._next_uid)[uids]
        dirty[self.recorded_rows()] = False  # a record of its own, or no place in the text
        dirty[self.odd_rows()] = False
        return np.flatnonzero(dirty)

    def text_timings(self, name: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(means, sds; NaN: none) of timing ``name`` as the text holds it, for rows of
        :meth:`timing_edits`; None when it was not set since the last load or save."""
        kept = self._as_text.get(name)
        if kept is None:
            return None
        uids = self.uids()[rows]
        means, sds = kept
        if uids.shape[0] and int(uids.max()) >= means.shape[0]:  # a link made since: unknown
            inside = uids < means.shape[0]
            out_means, out_sds = np.full(uids.shape[0], np.nan), np.full(uids.shape[0], np.nan)
            out_means[inside], out_sds[inside] = means[uids[inside]], sds[uids[inside]]
            return out_means, out_sds
        return means[uids], sds[uids]

    def _clean(self, uid: int) -> None:
        if uid < self._dirty.shape[0]:
            self._dirty[uid] = False

    def is_dirty(self, uid: int) -> bool:
        return uid < self._dirty.shape[0] and bool(self._dirty[uid])

    def extend(self, links: Iterable[Any]) -> None:
        """Append links: ``Link`` objects, or :class:`LinkColumns` batches (bulk)."""
        if isinstance(links, LinkColumns):
            self._append_columns(links)
            return
        if isinstance(links, LinkStore):
            links = list(links)
        batch: list[Any] = []
        for item in links:
            if isinstance(item, LinkColumns):
                self._append_objects(batch)
                batch = []
                self._append_columns(item)
            else:
                batch.append(item)
        self._append_objects(batch)

    def _append_objects(self, links: list[Any]) -> None:
        if len(links) > 64 and all(
            type(lk) is Link and lk.__dict__.get("_store") is None and _plain(lk) for lk in links
        ):
            self._append_columns(_columns_of(links))
            for k, lk in enumerate(links):  # each object becomes a view of its row
                uid = self._next_uid - len(links) + k
                src = lk.__dict__.get("src")
                if src is not None:
                    self._srcs[uid] = src
                lk.__dict__.clear()
                lk.__dict__.update(_store=self, _uid=uid)
                self._views[uid] = lk
            return
        for lk in links:
            self.insert(len(self), lk)
            self._clean(lk.__dict__["_uid"])  # appended as loaded or built, not edited

    def _append_columns(self, c: LinkColumns) -> None:
        n, k = len(self), len(c)
        if k == 0:
            return
        uids = np.arange(self._next_uid, self._next_uid + k, dtype=np.int64)
        if self._uid is not None or self._next_uid != n:
            self._uid = np.concatenate((self.uids(), uids))
        self._next_uid += k
        self._id = np.concatenate((self._id, c.ids))
        self._lat = np.concatenate((self._lat, c.lat))
        self._spd = np.concatenate((self._spd, c.spd))
        for attr, new in (("_lat_sd", c.lat_sd), ("_spd_sd", c.spd_sd)):
            old = getattr(self, attr)
            if old is None and new is None:
                continue
            old = np.full(n, np.nan) if old is None else old
            new = np.full(k, np.nan) if new is None else new
            setattr(self, attr, np.concatenate((old, new)))
        self._off = np.concatenate((self._off, c.offsets[1:] - c.offsets[0] + self._off[-1]))
        procs = c.procs[c.offsets[0] : c.offsets[-1]]
        if procs.dtype != self._procs.dtype and len(self._procs) == 0:
            self._procs = procs
        else:
            self._procs = np.concatenate((self._procs, procs))
        if c.starts is not None:
            if self._text is not None and self._text is not c.text:
                raise ValueError("links of two texts in one store")
            self._text = c.text
            starts, lines = c.starts, c.lines
        else:
            starts = np.full(k, -1, dtype=np.int64)
            lines = np.zeros(k, dtype=np.int32)
        self._start = np.concatenate((self._start, starts))
        self._line = np.concatenate((self._line, lines))
        self._structure_changed()

    # ------------------------------------------------------------------ values

    def _get(self, row: int, uid: int, name: str) -> Any:
        odd = self._odd.get(uid)
        if odd is not None and name in odd:
            return odd[name]
        if name == "id":
            return int(self._id[row])
        if name == "connect":
            return self._procs[self._off[row] : self._off[row + 1]].tolist()
        mean = float((self._lat if name == "latency" else self._spd)[row])
        sds = self._lat_sd if name == "latency" else self._spd_sd
        sd = None if sds is None else float(sds[row])
        return Timing(mean, None if sd is None or math.isnan(sd) else sd)

    def _put(self, row: int, uid: int, name: str, value: Any) -> None:
        odd = self._odd.get(uid)
        if name == "id":
            ok = type(value) is int and 0 <= value <= _INT64_MAX
            self._id[row] = value if ok else -1
        elif name == "connect":
            ok = type(value) is list and all(
                type(p) is int and 0 <= p <= _INT64_MAX for p in value
            ) and len(value) > 0  # fmt: skip
            self._set_connect(row, value if ok else [])
        else:
            ok = (type(value) is Timing and type(value.mean) is float and not math.isnan(value.mean)
                  and (value.sd is None or (type(value.sd) is float and not math.isnan(value.sd))))  # fmt: skip
            means = self._lat if name == "latency" else self._spd
            means[row] = value.mean if ok else np.nan
            sd_attr = "_lat_sd" if name == "latency" else "_spd_sd"
            sds = getattr(self, sd_attr)
            if ok and value.sd is not None and sds is None:
                sds = np.full(len(self), np.nan)
                setattr(self, sd_attr, sds)
            if sds is not None:
                sds[row] = value.sd if ok and value.sd is not None else np.nan
        if ok:
            if odd is not None:
                odd.pop(name, None)
                if not odd:
                    del self._odd[uid]
        else:
            self._odd.setdefault(uid, {})[name] = value

    def _set_connect(self, row: int, numbers: list[int]) -> None:
        a, b = int(self._off[row]), int(self._off[row + 1])
        new = np.asarray(numbers, dtype=np.int64)
        if new.shape[0] and (int(new.max()) > _INT32_MAX) and self._procs.dtype != np.int64:
            self._procs = self._procs.astype(np.int64)
        if b - a == new.shape[0]:
            self._procs[a:b] = new
            return
        self._procs = np.concatenate(
            (self._procs[:a], new.astype(self._procs.dtype), self._procs[b:])
        )
        self._off[row + 1 :] += new.shape[0] - (b - a)

    def get_field(self, uid: int, name: str) -> Any:
        return self._get(self._row(uid), uid, name)

    def set_field(self, uid: int, name: str, value: Any) -> None:
        self._keep_text_values(name)
        self._put(self._row(uid), uid, name, value)
        self._mark(uid, name)
        self._version = next(_VERSIONS)
        if name == "id":
            self._by_id = None

    def set_many(self, rows: np.ndarray, name: str, value: Any) -> None:
        """``links[r].name = value`` for every row in ``rows`` at once (a timing)."""
        rows = np.asarray(rows, dtype=np.int64)
        ok = (type(value) is Timing and type(value.mean) is float
              and (value.sd is None or type(value.sd) is float))  # fmt: skip
        uids = self.uids()[rows]
        self._keep_text_values(name)
        if not ok or name not in ("latency", "speed"):
            for r, u in zip(rows.tolist(), uids.tolist()):
                self._put(r, u, name, value)
        else:
            (self._lat if name == "latency" else self._spd)[rows] = value.mean
            sd_attr = "_lat_sd" if name == "latency" else "_spd_sd"
            sds = getattr(self, sd_attr)
            if value.sd is not None and sds is None:
                sds = np.full(len(self), np.nan)
                setattr(self, sd_attr, sds)
            if sds is not None:
                sds[rows] = np.nan if value.sd is None else value.sd
            if self._odd:
                for u in uids.tolist():
                    odd = self._odd.get(u)
                    if odd is not None and name in odd:
                        del odd[name]
                        if not odd:
                            del self._odd[u]
        self._mark(uids, name)
        self._version = next(_VERSIONS)
        if name == "id":
            self._by_id = None

    def rows_of_uids(self, uids: np.ndarray) -> np.ndarray:
        """The rows of links by uid (all present)."""
        if self._uid is None:
            return np.asarray(uids, dtype=np.int64)
        if self._row_of is None and len(self):
            self._row(int(self._uid[0]))  # builds the uid -> row table
        return self._row_of[uids]  # type: ignore[index]

    def snapshot(self, uids: np.ndarray, name: str) -> ColumnValues:
        """The latency or speed of these links, to put back later (a bulk undo)."""
        rows = self.rows_of_uids(uids)
        sds = self.sds(name)
        odd = {u: self._odd[u][name] for u in uids.tolist()
               if u in self._odd and name in self._odd[u]} if self._odd else {}  # fmt: skip
        return ColumnValues(uids, self.means(name)[rows].copy(),
                            None if sds is None else sds[rows].copy(), odd)  # fmt: skip

    def restore(self, name: str, values: ColumnValues) -> None:
        """Put back what :meth:`snapshot` took."""
        self._keep_text_values(name)
        rows = self.rows_of_uids(values.uids)
        self.means(name)[rows] = values.means
        sd_attr = "_lat_sd" if name == "latency" else "_spd_sd"
        if values.sds is not None:
            if getattr(self, sd_attr) is None:
                setattr(self, sd_attr, np.full(len(self), np.nan))
            getattr(self, sd_attr)[rows] = values.sds
        elif getattr(self, sd_attr) is not None:
            getattr(self, sd_attr)[rows] = np.nan
        for u in values.uids.tolist():
            odd = self._odd.get(u)
            if odd is not None and name in odd and u not in values.odd:
                del odd[name]
                if not odd:
                    del self._odd[u]
        for u, v in values.odd.items():
            self._odd.setdefault(u, {})[name] = v
        self._mark(values.uids, name)
        self._version = next(_VERSIONS)

    def holds(self, uids: np.ndarray, name: str, value: Any) -> bool:
        """Every one of these links holds ``value`` (a timing) as its ``name`` already."""
        if type(value) is not Timing or type(value.mean) is not float:
            return False
        if self._odd and any(u in self._odd and name in self._odd[u] for u in uids.tolist()):
            return False
        rows = self.rows_of_uids(uids)
        if not (self.means(name)[rows] == value.mean).all():
            return False
        sds = self.sds(name)
        if value.sd is None:
            return sds is None or bool(np.isnan(sds[rows]).all())
        return sds is not None and bool((sds[rows] == value.sd).all())

    # ------------------------------------------------------------------ columns (bulk)

    @property
    def ids(self) -> np.ndarray:
        """Link ids by row (-1 where the link's id is not a plain integer: read its view)."""
        return self._id

    def means(self, name: str) -> np.ndarray:
        """Mean latency or speed by row (NaN where it is missing or not a timing)."""
        return self._lat if name == "latency" else self._spd

    def sds(self, name: str) -> np.ndarray | None:
        """Standard deviations by row (NaN: none), or None when no link has one."""
        return self._lat_sd if name == "latency" else self._spd_sd

    def connect_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, processors): row ``r``'s processors are
        ``processors[offsets[r]:offsets[r + 1]]`` (none where its connect list is not a
        plain list of integers: read its view)."""
        return self._off, self._procs

    def resolved(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ids, has_id, offsets, processors) for bulk readers, with the links whose
        values are not in the columns read from their views: ``has_id[r]`` is False where
        link ``r`` has no integer id, and its processors are empty where its connect
        list is missing or not integers."""
        ids, (off, procs) = self._id, (self._off, self._procs)
        if not self._odd:
            return ids, np.ones(len(self), dtype=bool), off, procs
        ids = ids.copy()
        has = np.ones(len(self), dtype=bool)
        rows = self.odd_rows().tolist()
        lists: dict[int, list[int]] = {}
        for r in rows:
            link = self.view(r)
            lid = link.id
            if (
                type(lid) is int
                and 0 <= lid <= _INT64_MAX
                or type(lid) is int
                and -(2**63) <= lid < 0
            ):
                ids[r] = lid
            else:
                has[r] = False
            conn = link.connect
            try:
                numbers = [int(p) for p in conn] if conn else []
            except (TypeError, ValueError):
                numbers = []
            if any(type(p) is bool or not -(2**63) <= p <= _INT64_MAX for p in numbers):
                numbers = []
            lists[r] = numbers
        counts = np.diff(off).copy()
        for r, numbers in lists.items():
            counts[r] = len(numbers)
        new_off = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(counts, out=new_off[1:])
        new_procs = np.zeros(int(new_off[-1]), dtype=np.int64)
        plain = np.ones(len(self), dtype=bool)
        plain[rows] = False
        sizes = np.diff(off)
        src_rows = np.repeat(plain, sizes)
        dst_rows = np.repeat(plain, counts)
        new_procs[dst_rows] = procs[off[0] + np.flatnonzero(src_rows)] if src_rows.any() else []
        for r, numbers in lists.items():
            new_procs[new_off[r] : new_off[r + 1]] = numbers
        return ids, has, new_off, new_procs

    @property
    def version(self) -> int:
        """Changes with every write to the store (a cheap fingerprint of its content)."""
        return self._version

    def odd_rows(self) -> np.ndarray:
        """Rows holding a value the columns do not (None, a float timing, ...)."""
        if not self._odd:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.fromiter((self._row(u) for u in self._odd), dtype=np.int64))

    def row_of_id(self, link_id: int) -> int | None:
        """The row of the first link with this id (built on demand: O(1) for ids
        1..n in order, a binary search otherwise)."""
        if type(link_id) is not int or not 0 <= link_id <= _INT64_MAX:
            for r in self.odd_rows().tolist():
                if self.view(r).id == link_id:
                    return r
            return None
        if self._by_id is None:
            ids = self._id
            n = ids.shape[0]
            if n and ids[0] == 1 and ids[-1] == n and bool((np.diff(ids) == 1).all()):
                self._by_id = ("range",)
            else:
                order = np.argsort(ids, kind="stable")
                self._by_id = ("sorted", order, ids[order])
        if self._by_id[0] == "range":
            row = link_id - 1
            first = row if 0 <= row < len(self) else None
        else:
            _, order, keys = self._by_id
            at = int(np.searchsorted(keys, link_id))
            first = int(order[at]) if at < keys.shape[0] and keys[at] == link_id else None
        if self._odd:  # a link whose id is not in the column may come first
            for r in self.odd_rows().tolist():
                if first is not None and r > first:
                    break
                if self.view(r).id == link_id:
                    return r
        return first

    def rows_of_ids(self, link_ids: Any) -> np.ndarray:
        """:meth:`row_of_id` for many ids at once: the rows, -1 where no link has the id
        (in bulk, unless some link holds an id the column does not)."""
        wanted = np.asarray(link_ids, dtype=np.int64).reshape(-1)
        if self._odd:
            return np.fromiter((-1 if (r := self.row_of_id(int(i))) is None else r
                                for i in wanted.tolist()), dtype=np.int64, count=wanted.shape[0])  # fmt: skip
        if self._by_id is None:
            self.row_of_id(0)  # builds the lookup
        assert self._by_id is not None
        if self._by_id[0] == "range":
            rows = wanted - 1
            rows[(rows < 0) | (rows >= len(self))] = -1
            return rows
        _, order, keys = self._by_id
        if not keys.shape[0]:
            return np.full(wanted.shape[0], -1, dtype=np.int64)
        at = np.searchsorted(keys, wanted).clip(0, keys.shape[0] - 1)
        return np.where(keys[at] == wanted, order[at], -1).astype(np.int64)

    def link_by_id(self, link_id: int) -> Any:
        row = self.row_of_id(link_id)
        return None if row is None else self.view(row)

    # ------------------------------------------------------------------ records

    def is_lazy(self, link: Any) -> bool:
        """True for a view whose source record is still only an offset into the text."""
        uid = link.__dict__["_uid"]
        return uid not in self._srcs and self._start[self._row(uid)] >= 0

    def is_unedited(self, uid: int) -> bool:
        return not self.is_dirty(uid) and uid not in self._srcs and self._text is not None

    def record(self, uid: int) -> Any:
        """The source record of a link (built from the text and kept, for a link read by
        the fast path), or None."""
        if uid in self._srcs:
            return self._srcs[uid]
        try:
            row = self._row(uid)
            start, line = int(self._start[row]), int(self._line[row])
        except LookupError:
            start, line = self._gone.get(uid, (-1, 0))
        if start < 0 or self._text is None:
            return None
        from parasol_core.model.linktext import link_record

        src = link_record(self._text, start, line)
        self._srcs[uid] = src
        self._clean(uid)
        return src

    def peek_record(self, uid: int) -> Any:
        """:meth:`record` without keeping a record it builds."""
        if uid in self._srcs:
            return self._srcs[uid]
        keep = self.is_dirty(uid)
        src = self.record(uid)
        self._srcs.pop(uid, None)
        if keep:
            self._dirty[uid] = True  # as it was (record() cleaned it), shape flag kept
        return src

    def set_record(self, uid: int, src: Any) -> None:
        self._srcs[uid] = src

    def recorded(self) -> list[Any]:
        """Views of the links that hold a source record of their own."""
        out = []
        for uid, src in self._srcs.items():
            if src is None:
                continue
            try:
                out.append(self.view(self._row(uid)))
            except LookupError:
                continue
        return out

    def records(self) -> list[Any]:
        """Every built source record, of links present or removed."""
        return [s for s in self._srcs.values() if s is not None]

    @property
    def text(self) -> str | None:
        return self._text

    def loaded_uids(self) -> np.ndarray:
        """The links the text holds, in its order (uids)."""
        if self._loaded is None:
            return np.arange(self._n_loaded, dtype=np.int64)
        return self._loaded

    def mark_loaded(self) -> None:
        """The links now present are the ones the text holds (after a load or save)."""
        self._loaded = None if self._uid is None else self._uid.copy()
        self._n_loaded = len(self)
        self._saved()
        self._gone.clear()

    def touched(self) -> np.ndarray:
        """Uids of links that may differ from their text, in order: set since the last
        load or save, or holding a record of their own."""
        dirty = np.flatnonzero(self._dirty)
        if not self._srcs:
            return dirty
        return union(dirty, np.fromiter(self._srcs, dtype=np.int64, count=len(self._srcs)))

    def recorded_rows(self) -> np.ndarray:
        """The rows of links touched since the last load or save that are not plain
        columns over their text: holding a record of their own, or with no place in the
        text (added). What a check reads link by link (the others, however many a group
        edit set, are in the columns)."""
        uids = self.uids()
        mask = _grown(self._dirty, self._next_uid)[uids] & (self._start < 0)
        if self._srcs:
            for uid in self._srcs:
                row = self.row_of_uid(uid)
                if row is not None:
                    mask[row] = True
        return np.flatnonzero(mask)

    def starts(self) -> np.ndarray:
        """By row: the offset of each link's ``begin link`` line in :attr:`text` (-1:
        none)."""
        return self._start

    def moved(self, text: str, shift: Any) -> None:
        """A save replaced spans of the text (``shift``: the ``ends`` of the spans and
        the sums of the moves up to each, or None when nothing moved), giving ``text``.
        Built records are moved by the caller, which sees them among the model's
        sections."""
        if shift is not None and self._text is not None:
            has = self._start >= 0
            starts = self._start[has]
            if getattr(shift, "inserted_at", None):  # lines added by appended links
                points = np.asarray(shift.inserted_at, dtype=np.int64)
                lines = np.asarray(shift.line_moves, dtype=np.int64)
                at = np.searchsorted(points, starts, side="right")
                self._line[has] += np.where(at > 0, lines[np.maximum(at - 1, 0)], 0).astype(
                    self._line.dtype
                )
            ends = np.asarray(shift.ends, dtype=np.int64)
            moves = np.asarray(shift.moves, dtype=np.int64)
            at = np.searchsorted(ends, starts, side="right")
            self._start[has] = starts + np.where(at > 0, moves[np.maximum(at - 1, 0)], 0)
        if self._text is not None:
            self._text = text
        self._saved()

    def placed(self, uid: int, start: int, line: int, text: str) -> None:
        """A save wrote the link ``uid`` at ``start`` (on ``line``) of ``text``."""
        self._text = text
        row = self._row(uid)
        self._start[row] = start
        self._line[row] = line
        self._srcs.pop(uid, None)

    def row_of_uid(self, uid: int) -> int | None:
        try:
            return self._row(uid)
        except LookupError:
            return None

    def forget_sources(self) -> None:
        """Links moved in from another model: written as new."""
        self._srcs = {u: None for u in self.uids().tolist()}
        self._start[:] = -1
        self._text = None
        self._as_text = {}
        self._loaded = np.zeros(0, dtype=np.int64)
        self._gone.clear()

    def rebase(self, fresh: LinkStore) -> None:
        """Take the records of ``fresh`` (the saved text, read back), row for row."""
        if len(fresh) != len(self):
            raise AssertionError("the written text does not read back as the same model")
        mine, theirs = self.uids(), fresh.uids()
        self._start = fresh._start.copy()
        self._line = fresh._line.copy()
        self._text = fresh._text
        by_uid = dict(zip(theirs.tolist(), mine.tolist())) if fresh._srcs else {}
        self._srcs = {by_uid[u]: s for u, s in fresh._srcs.items() if u in by_uid}
        self.mark_loaded()

    # ------------------------------------------------------------------ comparison

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LinkStore):
            if len(self) != len(other):
                return False
            if not self._odd and not other._odd:
                return (
                    np.array_equal(self._id, other._id)
                    and np.array_equal(self._lat, other._lat)
                    and np.array_equal(self._spd, other._spd)
                    and _same_sd(self._lat_sd, other._lat_sd)
                    and _same_sd(self._spd_sd, other._spd_sd)
                    and np.array_equal(self._off - self._off[0], other._off - other._off[0])
                    and np.array_equal(self._procs, other._procs)
                )
            return list(self) == list(other)
        if isinstance(other, list):
            return len(self) == len(other) and list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> list:  # as a list: ``links + more`` is a list
        return list(self) + list(other)

    def __radd__(self, other: Any) -> list:
        return list(other) + list(self)

    def copy(self) -> list:
        return list(self)

    def __repr__(self) -> str:
        if len(self) > 6:
            return f"LinkStore({counted(len(self), 'link')}: {self[0]!r}, ...)"
        return f"LinkStore({list(self)!r})"

    def __copy__(self) -> LinkStore:
        return self._copy()

    def __deepcopy__(self, memo: dict) -> LinkStore:
        return self._copy()

    def _copy(self) -> LinkStore:
        new = LinkStore()
        for attr in ("_id", "_lat", "_spd", "_lat_sd", "_spd_sd", "_off", "_procs", "_start",
                     "_line", "_uid", "_loaded"):  # fmt: skip
            value = getattr(self, attr)
            setattr(new, attr, None if value is None else value.copy())
        new._next_uid = self._next_uid
        new._n_loaded = self._n_loaded
        new._text = self._text
        import copy

        new._odd = copy.deepcopy(self._odd)
        new._srcs = copy.deepcopy(self._srcs)
        new._dirty = self._dirty.copy()
        new._dirty_shape = self._dirty_shape.copy()
        new._as_text = {k: (m.copy(), d.copy()) for k, (m, d) in self._as_text.items()}
        new._gone = dict(self._gone)
        return new

    def __reduce__(self) -> Any:
        return (_rebuilt, (list(map(_plain_copy, self)),))


class ColumnValues:
    """Latencies or speeds of some links (by uid), kept for an undo."""

    __slots__ = ("uids", "means", "sds", "odd")

    def __init__(self, uids: np.ndarray, means: np.ndarray, sds: np.ndarray | None,
                 odd: dict[int, Any]) -> None:  # fmt: skip
        self.uids, self.means, self.sds, self.odd = uids, means, sds, odd


def _grown(mask: np.ndarray, n: int) -> np.ndarray:
    """A mask by uid at least ``n`` long (False past its old end)."""
    if mask.shape[0] >= n:
        return mask
    grown = np.zeros(max(n, 2 * mask.shape[0]), dtype=bool)
    grown[: mask.shape[0]] = mask
    return grown


class LinkSet:
    """Some links of one store, by uid (say, every link of a million-link torus that a
    group edit set): what a bulk edit records and publishes, with no view per link.
    ``link in links`` asks about one view; iterating makes views, one at a time."""

    __slots__ = ("store", "uids", "_mask")

    def __init__(self, store: LinkStore, uids: np.ndarray) -> None:
        self.store, self.uids = store, uids
        self._mask: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.uids.shape[0])

    def __contains__(self, link: object) -> bool:
        d = getattr(link, "__dict__", None)
        if type(link) is not Link or d is None or d.get("_store") is not self.store:
            return False
        if self._mask is None:
            self._mask = np.zeros(max(self.store._next_uid, 1), dtype=bool)
            self._mask[self.uids] = True
        uid = d["_uid"]
        return uid < self._mask.shape[0] and bool(self._mask[uid])

    def __iter__(self) -> Iterator[Any]:
        store = self.store
        for row in store.rows_of_uids(self.uids).tolist():
            yield store.view(row)

    def rows(self) -> np.ndarray:
        """Their rows in the store now (links inserted or removed before them move them)."""
        return self.store.rows_of_uids(self.uids)

    def ids(self) -> list[Any]:
        """Their ids (a view's, for a link whose id the column does not hold)."""
        rows = self.rows()
        out: list[Any] = self.store.ids[rows].tolist()
        odd = np.flatnonzero(self.store.ids[rows] < 0)
        for k in odd.tolist():
            out[k] = self.store.view(int(rows[k])).id
        return out

    def same(self, other: LinkSet) -> bool:
        """The same links of the same store."""
        return self.store is other.store and (
            self.uids is other.uids or np.array_equal(self.uids, other.uids)
        )


def _rebuilt(links: list) -> LinkStore:
    return LinkStore(links)


def _plain_copy(link: Any) -> Any:
    return Link(id=link.id, latency=link.latency, speed=link.speed, connect=link.connect)


def _same_sd(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None and b is None:
        return True
    if a is None:
        return bool(np.isnan(b).all())
    if b is None:
        return bool(np.isnan(a).all())
    return np.array_equal(a, b, equal_nan=True)


def _plain(link: Any) -> bool:
    d = link.__dict__
    lat, spd, conn, lid = d.get("latency"), d.get("speed"), d.get("connect"), d.get("id")
    return (
        type(lid) is int and 0 <= lid <= _INT64_MAX
        and type(lat) is Timing and type(lat.mean) is float and not math.isnan(lat.mean)
        and type(spd) is Timing and type(spd.mean) is float and not math.isnan(spd.mean)
        and (lat.sd is None or (type(lat.sd) is float and not math.isnan(lat.sd)))
        and (spd.sd is None or (type(spd.sd) is float and not math.isnan(spd.sd)))
        and type(conn) is list and len(conn) > 0
        and all(type(p) is int and 0 <= p <= _INT64_MAX for p in conn)
    )  # fmt: skip


def _columns_of(links: list[Any]) -> LinkColumns:
    ds = [lk.__dict__ for lk in links]
    ids = np.fromiter((d["id"] for d in ds), dtype=np.int64, count=len(ds))
    lat = np.fromiter((d["latency"].mean for d in ds), dtype=np.float64, count=len(ds))
    spd = np.fromiter((d["speed"].mean for d in ds), dtype=np.float64, count=len(ds))
    lat_sd = spd_sd = None
    if any(d["latency"].sd is not None for d in ds):
        lat_sd = np.array([np.nan if d["latency"].sd is None else d["latency"].sd for d in ds])
    if any(d["speed"].sd is not None for d in ds):
        spd_sd = np.array([np.nan if d["speed"].sd is None else d["speed"].sd for d in ds])
    counts = np.fromiter((len(d["connect"]) for d in ds), dtype=np.int64, count=len(ds))
    offsets = np.zeros(len(ds) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    procs = np.fromiter((p for d in ds for p in d["connect"]), dtype=np.int64,
                        count=int(offsets[-1]))  # fmt: skip
    return LinkColumns(ids, lat, spd, offsets, procs, lat_sd, spd_sd)


class LinkField:
    """A ``Link`` field: the view's column, or the plain link's own value."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return None  # the dataclass default
        d = obj.__dict__
        store = d.get("_store")
        if store is None:
            return d.get(self.name)
        return store.get_field(d["_uid"], self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        d = obj.__dict__
        store = d.get("_store")
        if store is None:
            d[self.name] = value
        else:
            store.set_field(d["_uid"], self.name, value)


class LinkSource:
    """``Link.src``: a view's record (built from the text when first read), or a plain
    link's own."""

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return None
        d = obj.__dict__
        store = d.get("_store")
        if store is None:
            return d.get("src")
        return store.record(d["_uid"])

    def __set__(self, obj: Any, value: Any) -> None:
        d = obj.__dict__
        store = d.get("_store")
        if store is None:
            d["src"] = value
        else:
            store.set_record(d["_uid"], value)


class LinksAttribute:
    """``Topology.links``: always a :class:`LinkStore` (a list assigned is taken in)."""

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            return _NO_DEFAULT
        store = obj.__dict__.get("_links")
        if store is None:
            store = obj.__dict__["_links"] = LinkStore()
        return store

    def __set__(self, obj: Any, value: Any) -> None:
        if not isinstance(value, LinkStore):
            value = LinkStore(value)
        obj.__dict__["_links"] = value


_NO_DEFAULT: Any = None
