"""Whole-number tables as columns: :class:`IntTable` and its source records,
:class:`TableSources`.

A topology's ``procid`` table (processor number -> type id) and a virtual topology's
``mapping`` (virtual -> hardware processor) have a line per processor: a million lines
for a million-processor torus. As a dict plus one :class:`ValueSource` per line they
took about 400 bytes a line; here they are numpy columns:

- :class:`IntTable` is a ``MutableMapping[int, int]`` over two int64 arrays (numbers in
  the order the file wrote them, and values). A number is found by its position when
  the numbers are 1..n in order (the usual case), else by a binary search in a sorted
  copy. Setting a number that is there writes its value in place; deleting one marks
  it gone; a number added goes to a small dict after the arrays. Iteration is in
  insertion order, as a dict's.
- :class:`TableSources` is the table's ``TableSource.entries``: a ``MutableMapping`` of
  number -> :class:`ValueSource`, kept as columns of offsets (line start, value start
  and end, line end) and line numbers. A record is made when something asks for it and
  then kept (code may move it), as the link store does for links.

Bulk paths (the loader, the validator, the writer of an unedited table, the JSON dump)
read :meth:`IntTable.columns` and :meth:`TableSources.columns` without a Python loop
per entry.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, MutableMapping, ValuesView
from typing import Any

import numpy as np

from parasol_core.base.source import ValueSource

_EMPTY = np.zeros(0, dtype=np.int64)


class IntTable(MutableMapping):
    """A dict of int -> int backed by numpy arrays (see the module's docstring)."""

    __slots__ = ("_keys", "_vals", "_dense", "_sorted", "_where", "_dead", "_ndead", "_tail")

    def __init__(self, data: Any = None) -> None:
        self._set_arrays(_EMPTY, _EMPTY)
        self._tail: dict[int, int] = {}
        if data is not None:
            if isinstance(data, IntTable):
                keys, vals = data.columns()
                self._set_arrays(keys.copy(), vals.copy())
            else:
                self.update(data)

    @classmethod
    def from_columns(cls, keys: np.ndarray, values: np.ndarray) -> IntTable:
        """A table of ``keys`` -> ``values`` (int64 arrays, taken, not copied); the keys
        must be distinct."""
        table = cls.__new__(cls)
        table._set_arrays(np.asarray(keys, dtype=np.int64), np.asarray(values, dtype=np.int64))
        table._tail = {}
        return table

    def _set_arrays(self, keys: np.ndarray, vals: np.ndarray) -> None:
        self._keys = keys
        self._vals = vals
        n = len(keys)
        self._dense = bool(n == 0 or (keys[0] == 1 and keys[-1] == n and
                                      (n < 2 or bool(np.all(np.diff(keys) == 1)))))  # fmt: skip
        self._sorted: np.ndarray | None = None
        self._where: np.ndarray | None = None
        if not self._dense:
            order = np.argsort(keys, kind="stable")
            self._sorted = keys[order]
            self._where = order
        self._dead: np.ndarray | None = None
        self._ndead = 0

    def distinct(self) -> bool:
        """No number is in the arrays twice (tables made by from_columns must be)."""
        return (
            self._dense
            or self._sorted is None
            or not bool(np.any(self._sorted[1:] == self._sorted[:-1]))
        )

    # ---- lookup

    def _index(self, key: Any) -> int:
        """The position of ``key`` in the arrays, or -1."""
        if type(key) is not int:  # what a dict finds by equal hash: True, 2.0, np.int64(2)
            if (isinstance(key, float) and key.is_integer()) or isinstance(key, (int, np.integer)):
                key = int(key)
            else:
                return -1
        if not -(2**63) <= key < 2**63:
            return -1
        n = len(self._keys)
        if self._dense:
            i = key - 1
            if not 0 <= i < n:
                return -1
        else:
            assert self._sorted is not None and self._where is not None
            j = int(np.searchsorted(self._sorted, key))
            if j >= n or self._sorted[j] != key:
                return -1
            i = int(self._where[j])
        if self._dead is not None and self._dead[i]:
            return -1
        return i

    def __getitem__(self, key: Any) -> int:
        i = self._index(key)
        if i >= 0:
            return int(self._vals[i])
        return self._tail[key]

    def __contains__(self, key: object) -> bool:
        return self._index(key) >= 0 or key in self._tail

    def get(self, key: Any, default: Any = None) -> Any:
        i = self._index(key)
        if i >= 0:
            return int(self._vals[i])
        return self._tail.get(key, default)

    def __setitem__(self, key: int, value: int) -> None:
        i = self._index(key)
        if i >= 0 and type(value) is int and -(2**63) <= value < 2**63:
            self._vals[i] = value
            return
        if i >= 0:  # a value the column cannot hold: the key moves to the tail
            self._kill(i)
        self._tail[key] = value

    def _kill(self, i: int) -> None:
        if self._dead is None:
            self._dead = np.zeros(len(self._keys), dtype=bool)
        self._dead[i] = True
        self._ndead += 1

    def __delitem__(self, key: int) -> None:
        i = self._index(key)
        if i >= 0:
            self._kill(i)
        else:
            del self._tail[key]

    def __len__(self) -> int:
        return len(self._keys) - self._ndead + len(self._tail)

    def __iter__(self) -> Iterator[int]:
        yield from self._alive(self._keys).tolist()
        yield from list(self._tail)

    def _alive(self, column: np.ndarray) -> np.ndarray:
        return column if self._dead is None else column[~self._dead]

    def items(self) -> ItemsView:
        return _Items(self)

    def values(self) -> ValuesView:
        return _Values(self)

    def _value_list(self) -> list:
        return self._alive(self._vals).tolist() + list(self._tail.values())

    # ---- columns

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """(numbers, values) as int64 arrays in insertion order (the arrays themselves
        when nothing was deleted or added: do not write to them)."""
        if self._dead is None and not self._tail:
            return self._keys, self._vals
        keys, vals = self._alive(self._keys), self._alive(self._vals)
        if self._tail:
            bad = ValueError("the table holds what is not a 64-bit integer")
            if not self._alive_tail_ints():
                raise bad
            try:
                tk = np.fromiter(self._tail.keys(), dtype=np.int64, count=len(self._tail))
                tv = np.fromiter(self._tail.values(), dtype=np.int64, count=len(self._tail))
            except OverflowError:
                raise bad from None
            keys, vals = np.concatenate([keys, tk]), np.concatenate([vals, tv])
        return keys, vals

    def is_plain(self) -> bool:
        """Nothing deleted or added since the arrays were made."""
        return self._dead is None and not self._tail

    # ---- dict-like

    def __eq__(self, other: object) -> bool:
        if isinstance(other, IntTable):
            if len(self) != len(other):
                return False
            if self.is_plain() and other.is_plain():
                a, b = self.columns(), other.columns()
                if np.array_equal(a[0], b[0]):
                    return bool(np.array_equal(a[1], b[1]))
            return dict(self.items()) == dict(other.items())
        if isinstance(other, Mapping):
            return len(self) == len(other) and dict(self.items()) == dict(other.items())
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> IntTable:
        table = IntTable.__new__(IntTable)
        table._keys, table._vals = self._keys.copy(), self._vals.copy()
        table._dense, table._sorted, table._where = self._dense, self._sorted, self._where
        table._dead = None if self._dead is None else self._dead.copy()
        table._ndead = self._ndead
        table._tail = dict(self._tail)
        return table

    def __copy__(self) -> IntTable:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> IntTable:
        return self.copy()

    def __reduce__(self) -> Any:
        try:
            keys, vals = self.columns()
        except ValueError:
            return (IntTable, (dict(self.items()),))
        return (IntTable.from_columns, (keys.copy(), vals.copy()))

    def _alive_tail_ints(self) -> bool:
        return all(type(k) is int and type(v) is int for k, v in self._tail.items())

    def __repr__(self) -> str:
        return f"IntTable({dict(self.items())!r})"

    def __or__(self, other: Any) -> dict:
        return {**dict(self.items()), **dict(other)}


class _Items(ItemsView):
    __slots__ = ()

    def __iter__(self) -> Iterator[tuple[int, int]]:
        table = self._mapping
        return iter(list(zip(table, table._value_list())))  # type: ignore[attr-defined]


class _Values(ValuesView):
    __slots__ = ()

    def __iter__(self) -> Iterator[int]:
        return iter(self._mapping._value_list())  # type: ignore[attr-defined]


def int_columns(table: Mapping) -> tuple[np.ndarray, np.ndarray] | None:
    """(numbers, values) of a table as int64 arrays in its order (an IntTable's own
    columns, a dict's read once), or None when it holds what is not a 64-bit integer."""
    if isinstance(table, IntTable):
        try:
            return table.columns()
        except ValueError:
            return None
    n = len(table)
    try:
        if not all(type(k) is int and type(v) is int for k, v in table.items()):
            return None
        return (np.fromiter(table.keys(), dtype=np.int64, count=n),
                np.fromiter(table.values(), dtype=np.int64, count=n))  # fmt: skip
    except OverflowError:
        return None


class TableSources(MutableMapping):
    """The source records of a table read in bulk: number -> :class:`ValueSource`, as
    columns (see the module's docstring). A record asked for is made and kept; records
    set or deleted are kept aside.

    The columns are what a record cannot be made without: the number (the table's own
    array, shared), the value loaded, where the value starts and its length, where the
    line starts and the indentation's column. The lines are consecutive (the bulk
    scanners take only bodies of such lines): a line ends where the next starts, the
    last at ``end``; the line numbers count on from the first's until an edit inside
    the table moves them apart."""

    __slots__ = ("_pos", "_keys", "_loaded", "_starts", "_lens", "_line_starts",
                 "_columns", "_end", "_line0", "_lines", "_made", "_gone", "_added")  # fmt: skip

    def __init__(self, keys: np.ndarray, loaded: np.ndarray, starts: np.ndarray,
                 ends: np.ndarray, line_starts: np.ndarray, end: int, line: int,
                 columns: np.ndarray) -> None:  # fmt: skip
        self._keys = keys
        self._pos = IntTable.from_columns(keys, keys)  # for its positions only
        self._loaded = loaded
        self._starts = starts
        self._lens = (ends - starts).astype(np.int32)
        self._line_starts = line_starts
        self._columns = columns.astype(np.int32)
        self._end = end
        self._line0 = line
        self._lines: np.ndarray | None = None
        self._made: dict[int, ValueSource] = {}
        self._gone: set[int] = set()
        self._added: dict[Any, ValueSource] = {}

    def _row(self, key: Any) -> int:
        if key in self._gone:
            return -1
        return self._pos._index(key)

    def _line_end(self, i: int) -> int:
        return int(self._line_starts[i + 1]) if i + 1 < len(self._keys) else self._end

    def _line(self, i: int) -> int:
        return self._line0 + i if self._lines is None else int(self._lines[i])

    def __getitem__(self, key: Any) -> ValueSource:
        if key in self._added:
            return self._added[key]
        i = self._row(key)
        if i < 0:
            raise KeyError(key)
        vs = self._made.get(i)
        if vs is None:
            s = int(self._starts[i])
            vs = self._made[i] = ValueSource(
                int(self._loaded[i]), s, s + int(self._lens[i]), int(self._line_starts[i]),
                self._line_end(i), self._line(i), int(self._columns[i]),
            )  # fmt: skip
        return vs

    def __contains__(self, key: object) -> bool:
        return key in self._added or self._row(key) >= 0

    def __setitem__(self, key: Any, vs: ValueSource) -> None:
        i = self._row(key)
        if i >= 0:
            self._made[i] = vs
        else:
            self._added[key] = vs

    def __delitem__(self, key: Any) -> None:
        if key in self._added:
            del self._added[key]
            return
        if self._row(key) < 0:
            raise KeyError(key)
        self._gone.add(key)

    def __len__(self) -> int:
        return len(self._keys) - len(self._gone) + len(self._added)

    def __iter__(self) -> Iterator[Any]:
        gone = self._gone
        for k in self._keys.tolist():
            if k not in gone:
                yield k
        yield from list(self._added)

    def is_plain(self) -> bool:
        """No record set, deleted or added (records made may have been moved)."""
        return not self._gone and not self._added

    def numbers(self) -> np.ndarray:
        """The numbers of the rows, in the file's order (do not write to it)."""
        return self._keys

    def first_line_start(self) -> int | None:
        return int(self._line_starts[0]) if len(self._keys) else None

    def loaded_values(self) -> np.ndarray:
        """The value each row's record holds (the loaded one, or what a save wrote)."""
        vals = self._loaded
        if self._made:
            vals = vals.copy()
            for i, vs in self._made.items():
                v = vs.value
                vals[i] = v if type(v) is int and -(2**63) <= v < 2**63 else vals[i] + 1
        return vals

    def _aside(self) -> list[ValueSource]:
        return [*self._made.values(), *self._added.values()]

    def move(self, offset: int, lines: int) -> None:
        """Move every record by ``offset`` characters and ``lines`` lines."""
        self._starts += offset
        self._line_starts += offset
        self._end += offset
        if self._lines is None:
            self._line0 += lines
        else:
            self._lines += lines
        for vs in self._aside():
            vs.start += offset
            vs.end += offset
            vs.line_start += offset
            vs.line_end += offset
            vs.line += lines

    def remap(self, offset: Any, lines: Any) -> None:
        """Move each record: ``offset(x)`` is where offset x goes, ``lines(x)`` how many
        lines are added before it (a loop per record: for a table edited inside)."""
        n = len(self._keys)
        added = np.fromiter((lines(x) for x in self._line_starts.tolist()), dtype=np.int64,
                            count=n)  # fmt: skip
        ends = self._starts + self._lens
        self._starts[:] = [offset(x) for x in self._starts.tolist()]
        self._lens[:] = np.array([offset(x) for x in ends.tolist()], dtype=np.int64) - self._starts
        self._line_starts[:] = [offset(x) for x in self._line_starts.tolist()]
        self._end = offset(self._end)
        if n and self._lines is None and bool(np.all(added == added[0])):
            self._line0 += int(added[0])
        elif n:
            base = (
                self._line0 + np.arange(n, dtype=np.int64) if self._lines is None else self._lines
            )
            self._lines = base + added
        for vs in self._aside():
            vs.line += lines(vs.line_start)
            vs.start, vs.end = offset(vs.start), offset(vs.end)
            vs.line_start, vs.line_end = offset(vs.line_start), offset(vs.line_end)

    def clip(self, n: int) -> None:
        """Line ends past ``n`` are cut to ``n``."""
        self._end = min(self._end, n)
        for vs in self._aside():
            vs.line_end = min(vs.line_end, n)

    def fix_first_line(self) -> None:
        """Columns on line 1 move one left (a byte-order mark taken off)."""
        if len(self._keys):
            lines = self._line0 + np.arange(len(self._keys)) if self._lines is None else self._lines
            self._columns[(lines == 1) & (self._columns > 1)] -= 1
        for vs in self._aside():
            if vs.line == 1 and vs.column > 1:
                vs.column -= 1
