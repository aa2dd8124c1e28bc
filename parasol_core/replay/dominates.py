"""What dominates a program's predicted time: how much shorter the run gets when one
part of the machine is made 10 % faster, each part on its own.

The parts ("knobs") are each instruction group of the group scalers (every processor
type's timings of the group; :data:`parasol_core.base.params.GROUPS`), the speed of the
hardware topology's links and their latency. *10 % faster* is the same for all: the
part's times divided by :data:`FASTER` (1.1) — a timing's mean and standard deviation,
a link's seconds per byte, a link's latency — so that the work it does goes at 1.1
times the rate. Each knob is applied through the session's own operations
(``scale_group``, ``set_links``) to a copy of the model, never to the model on screen,
and the trace is replayed on the copy.

The answer is, per knob, the predicted time after and the time saved as a fraction of
the time before; knobs that touch nothing the model has (a group none of whose timings
are defined, a topology without links) say so rather than show a saving of zero that
would read as "does not matter".
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from parasol_core.base import budget
from parasol_core.base.params import GROUPS
from parasol_core.model import Machine, Timing
from parasol_core.session.session import Session, SessionError

__all__ = ["FASTER", "Dominance", "Knob", "dominance", "knobs"]

FASTER = 1.1


Cancelled = budget.Cancelled
"""The work was cancelled (its cancel event was set): between two replays, or part-way
through one (:func:`parasol_core.base.budget.cancelled_by`)."""


@dataclass(frozen=True)
class Knob:
    key: str  # "group:addition", "links:speed", "links:latency"
    label: str  # what a chart names it by
    apply: Callable[[Session], int]  # makes the part faster on a session; how many values


@dataclass
class Effect:
    knob: str
    label: str
    seconds: float | None  # the predicted time with the knob turned (None: nothing to turn)
    values: int  # how many values the knob changed

    def saved(self, before: float) -> float | None:
        """The time saved, as a fraction of ``before`` (positive: shorter)."""
        if self.seconds is None or before <= 0:
            return None
        return (before - self.seconds) / before


@dataclass
class Dominance:
    before: float  # the predicted time of the model as it is
    effects: list[Effect] = field(default_factory=list)

    def ranked(self) -> list[Effect]:
        """The knobs that change something, the largest saving first."""
        found = [e for e in self.effects if e.seconds is not None]
        return sorted(found, key=lambda e: -(e.saved(self.before) or 0.0))


def _faster(t: Timing | None) -> Timing | None:
    if t is None:
        return None
    return t.scaled(1.0 / FASTER)


def _group_knob(group: str) -> Knob:
    def apply(session: Session) -> int:
        try:
            return session.scale_group(group, 1.0 / FASTER)
        except SessionError:
            return 0

    return Knob(f"group:{group}", GROUPS[group].label, apply)


def _links_knob(attr: str, label: str) -> Knob:
    def apply(session: Session) -> int:
        topo = session.machine.hardware()
        if topo is None or not len(topo.links):
            return 0
        changed = 0
        # links of one value are set together (a generated network: one value for all)
        by_value: dict[Timing, list[int]] = {}
        for link in topo.links:
            value = getattr(link, attr)
            if value is not None and link.id is not None:
                by_value.setdefault(value, []).append(link.id)
        for value, ids in by_value.items():
            session.set_links(topo.id, ids, **{attr: _faster(value)})
            changed += len(ids)
        return changed

    return Knob(f"links:{attr}", label, apply)


def knobs() -> list[Knob]:
    """Every knob, in the order the group scalers list the groups, then the links."""
    return [_group_knob(g) for g in GROUPS] + [
        _links_knob("speed", "Link speed"),
        _links_knob("latency", "Link latency"),
    ]


def dominance(machine: Machine, predict: Callable[[Machine], float],
              cancel: threading.Event | None = None,
              chosen: list[Knob] | None = None) -> Dominance:  # fmt: skip
    """The predicted time of ``machine`` (``predict(machine)``: the replay of a trace)
    and of each knob turned on a copy of it. ``machine`` is not changed. ``cancel`` set:
    :class:`Cancelled`, before the next replay or part-way through the one under way
    (the replays run within :func:`~parasol_core.base.budget.cancelled_by`, whose event
    :func:`~parasol_core.replay.replay` polls)."""
    with budget.cancelled_by(cancel):
        found = Dominance(predict(machine))
        for knob in knobs() if chosen is None else chosen:
            budget.check_deadline()  # a cancel (or a time budget) between two replays
            session = Session(copy.deepcopy(machine), None)
            values = knob.apply(session)
            seconds = predict(session.machine) if values else None
            found.effects.append(Effect(knob.key, knob.label, seconds, values))
    return found
