"""What replacing one topology by another changes, for the editor to show first.

Links are matched by the set of processors they connect (their ids may differ: a
generated topology numbers its links afresh). A link whose processors only the new
topology connects is *added*, one only the old connects is *removed*, and one both
connect but with another latency or speed is *changed*. Two links joining the same
processors are matched in order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parasol_core.base.words import counted
from parasol_core.model import Link, Topology
from parasol_core.topology.shape import processor_count


class _Rows(Sequence):
    """Links of a link store by row, made into views only when looked at (a replaced
    million-link topology adds or removes millions; the preview shows a dozen)."""

    def __init__(self, store: Any, rows: np.ndarray) -> None:
        self.store, self.rows = store, rows

    def __len__(self) -> int:
        return int(self.rows.shape[0])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.store[int(r)] for r in self.rows[i]]
        return self.store[int(self.rows[i])]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, Sequence)) else NotImplemented


class _Pairs(Sequence):
    """(old, new) links by their rows in the two stores, made when looked at."""

    def __init__(self, old: _Rows, new: _Rows) -> None:
        self.old, self.new = old, new

    def __len__(self) -> int:
        return len(self.old)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(zip(self.old[i], self.new[i], strict=True))
        return self.old[i], self.new[i]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, Sequence)) else NotImplemented


@dataclass
class TopologyChange:
    added: Sequence[Link] = field(default_factory=list)  # links of the new topology
    removed: Sequence[Link] = field(default_factory=list)  # links of the old topology
    changed: Sequence[tuple[Link, Link]] = field(default_factory=list)  # (old, new)
    unchanged: int = 0
    processors: tuple[int, int] = (0, 0)  # old count, new count
    routing: tuple[str | None, str | None] = (None, None)
    shape: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)

    @property
    def is_empty(self) -> bool:
        return (
            not (self.added or self.removed or self.changed)
            and self.processors[0] == self.processors[1]
            and self.routing[0] == self.routing[1]
            and self.shape[0] == self.shape[1]
        )

    def summary(self) -> list[str]:
        """One line per kind of change, for a confirmation dialog or the terminal."""
        lines = []
        old, new = self.processors
        if old != new:
            lines.append(f"processors: {old} -> {new}")
        if self.routing[0] != self.routing[1]:
            lines.append(f"routing: {self.routing[0]} -> {self.routing[1]}")
        if self.shape[0] != self.shape[1]:
            lines.append(f"shape: {_shape_text(self.shape[0])} -> {_shape_text(self.shape[1])}")
        for what, links in (("adds", self.added), ("removes", self.removed)):
            if links:
                lines.append(f"{what} {counted(len(links), 'link')}: {_links_text(links)}")
        if self.changed:
            lines.append(
                f"changes the latency or speed of {counted(len(self.changed), 'link')}: "
                f"{_links_text([new for _, new in self.changed[:12]], len(self.changed))}"
            )
        lines.append(f"keeps {counted(self.unchanged, 'link')} as they are")
        return lines


def _shape_text(shape: tuple[int, ...] | None) -> str:
    return " x ".join(map(str, shape)) if shape else "none"


def _links_text(links: Sequence[Link], total: int | None = None, limit: int = 12) -> str:
    total = len(links) if total is None else total
    parts = ["-".join(map(str, link.connect or ())) for link in links[:limit]]
    if total > limit:
        parts.append(f"... ({total - limit} more)")
    return ", ".join(parts)


def compare_topologies(old: Topology, new: Topology) -> TopologyChange:
    """What replacing ``old`` by ``new`` adds, removes and changes."""
    bulk = _compare_in_bulk(old, new)
    if bulk is not None:
        return bulk
    by_set: dict[frozenset[int], list[Link]] = defaultdict(list)
    for link in old.links:
        by_set[frozenset(link.connect or ())].append(link)
    change = TopologyChange(
        processors=(processor_count(old), processor_count(new)),
        routing=(old.routing, new.routing),
        shape=(tuple(old.shape) if old.shape else None, tuple(new.shape) if new.shape else None),
    )
    for link in new.links:
        matches = by_set.get(frozenset(link.connect or ()))
        if not matches:
            change.added.append(link)
            continue
        before = matches.pop(0)
        if _time(before.latency) == _time(link.latency) and _time(before.speed) == _time(
            link.speed
        ):
            change.unchanged += 1
        else:
            change.changed.append((before, link))
    remaining = {id(link) for links in by_set.values() for link in links}
    change.removed = [link for link in old.links if id(link) in remaining]
    return change


def _time(t: object) -> tuple:
    mean = getattr(t, "mean", None)
    return (mean, getattr(t, "sd", None))


def _pair_keys(store: Any) -> np.ndarray | None:
    """Each link's processor pair as one number (the smaller times 2**32 plus the
    larger), or None when a link is not two processors in the columns."""
    if store.odd_rows().shape[0]:
        return None
    off, procs = store.connect_csr()
    if len(store) and not bool((np.diff(off) == 2).all()):
        return None
    flat = procs[off[0] : off[-1]].astype(np.int64).reshape(-1, 2)
    lo, hi = flat.min(axis=1), flat.max(axis=1)
    if lo.shape[0] and (lo.min() < 0 or hi.max() >= 1 << 31):
        return None
    return (lo << 32) | hi


def _ranks(keys: np.ndarray) -> np.ndarray:
    """Each key's occurrence number among the equal keys before it (in row order): the
    k-th link joining a pair in one topology matches the k-th in the other."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    n = sorted_keys.shape[0]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = sorted_keys[1:] != sorted_keys[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - group_start
    return rank


def _compare_in_bulk(old: Topology, new: Topology) -> TopologyChange | None:
    """compare_topologies on the link stores' columns, when every link of both is two
    processors held in the columns (the generated case); None otherwise."""
    a_store, b_store = old.links, new.links
    if not hasattr(a_store, "connect_csr") or not hasattr(b_store, "connect_csr"):
        return None
    ka, kb = _pair_keys(a_store), _pair_keys(b_store)
    if ka is None or kb is None:
        return None
    rank_a, rank_b = _ranks(ka), _ranks(kb)
    # the new links sorted by pair, then occurrence: a pair's k-th old link finds its
    # match k places after the first new link of that pair, if the pair has that many
    ob = np.lexsort((rank_b, kb))
    kb_sorted = kb[ob]
    pos = np.searchsorted(kb_sorted, ka, side="left") + rank_a
    ok = pos < kb_sorted.shape[0]
    ok[ok] = kb_sorted[pos[ok]] == ka[ok]
    rows_a = np.flatnonzero(ok)
    rows_b = ob[pos[ok]]
    same = _equal(a_store.means("latency")[rows_a], b_store.means("latency")[rows_b])
    same &= _equal(a_store.means("speed")[rows_a], b_store.means("speed")[rows_b])
    for name in ("latency", "speed"):
        sda, sdb = a_store.sds(name), b_store.sds(name)
        if sda is not None or sdb is not None:
            none_a = np.full(rows_a.shape[0], np.nan)
            x = sda[rows_a] if sda is not None else none_a
            y = sdb[rows_b] if sdb is not None else none_a
            same &= _equal(x, y)
    differ = np.flatnonzero(~same)
    by_new = differ[np.argsort(rows_b[differ], kind="stable")]  # in the new list's order
    return TopologyChange(
        added=_Rows(b_store, _others(len(b_store), rows_b)),
        removed=_Rows(a_store, _others(len(a_store), rows_a)),
        changed=_Pairs(_Rows(a_store, rows_a[by_new]), _Rows(b_store, rows_b[by_new])),
        unchanged=int(same.sum()),
        processors=(processor_count(old), processor_count(new)),
        routing=(old.routing, new.routing),
        shape=(tuple(old.shape) if old.shape else None, tuple(new.shape) if new.shape else None),
    )


def _others(n: int, rows: np.ndarray) -> np.ndarray:
    """The rows 0..n-1 not among ``rows``, ascending."""
    keep = np.ones(n, dtype=bool)
    keep[rows] = False
    return np.flatnonzero(keep)


def _equal(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Element-wise equality with NaN (no value) equal to NaN."""
    return (x == y) | (np.isnan(x) & np.isnan(y))
