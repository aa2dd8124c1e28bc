"""What replacing one topology by another changes, for the editor to show first.

Links are matched by the set of processors they connect (their ids may differ: a
generated topology numbers its links afresh). A link whose processors only the new
topology connects is *added*, one only the old connects is *removed*, and one both
connect but with another latency or speed is *changed*. Two links joining the same
processors are matched in order.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from parasol_core.model import Link, Topology
from parasol_core.topology.shape import processor_count


@dataclass
class TopologyChange:
    added: list[Link] = field(default_factory=list)  # links of the new topology
    removed: list[Link] = field(default_factory=list)  # links of the old topology
    changed: list[tuple[Link, Link]] = field(default_factory=list)  # (old, new)
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
                lines.append(f"{what} {len(links)} link(s): {_links_text(links)}")
        if self.changed:
            lines.append(
                f"changes the latency or speed of {len(self.changed)} link(s): "
                f"{_links_text([new for _, new in self.changed])}"
            )
        lines.append(f"keeps {self.unchanged} link(s) as they are")
        return lines


def _shape_text(shape: tuple[int, ...] | None) -> str:
    return " x ".join(map(str, shape)) if shape else "none"


def _links_text(links: list[Link], limit: int = 12) -> str:
    parts = ["-".join(map(str, link.connect or ())) for link in links[:limit]]
    if len(links) > limit:
        parts.append(f"... ({len(links) - limit} more)")
    return ", ".join(parts)


def compare_topologies(old: Topology, new: Topology) -> TopologyChange:
    """What replacing ``old`` by ``new`` adds, removes and changes."""
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
