"""Times past what a double holds, and the value that made them.

Every timing of a model is a finite double, but what is computed from them need not
be: two links of latency 1e308 s add up past the largest double (about 1.8e308), a
link of speed 1e308 s a byte takes longer than that for two bytes, a forwarding cost
of 1e308 (``# piui: forward``) for any message that is forwarded, and a message
shared by 200 others on a link of speed 1e306 s a byte. In IEEE arithmetic those are
``inf``, and ``inf - inf`` on the next step is ``nan``: a makespan of ``nan s``, a
JSON ``NaN``, an estimator ``null``. The other way, a nonzero time a byte times a
nonzero size can underflow to 0 (a message that takes no time).

So a time is refused where it is computed, naming what made it: the link and its
timing, the annotation and its line, the message. :class:`TimeOverflowError` (a
RoutingError) is what the transfer times raise; the phases raise their own
``PhaseOverflowError`` with the same words (:mod:`parasol_core.simulate.phases`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from parasol_core.base.numeric import SMALLEST_NORMAL
from parasol_core.topology.errors import RoutingError

#: what a message says of a double's range
RANGE = "the largest number a double holds, about 1.8e308"


class TimeOverflowError(RoutingError):
    """A time the model's values make too large for a double (or a nonzero one that
    underflows to 0); the message names the values that make it."""


def _link(index: Any, slot: int) -> str:
    return f"link {int(index.link_ids[slot])} of {index.label}"


def forward_note(index: Any, forward: float) -> str:
    """The forwarding annotation of the index's topology, with its line when read from
    a file: ``the '# piui: forward = 1e+308' annotation of topology 1 (line 45)``."""
    topo = index.topology
    src = topo.__dict__.get("src")
    where = ""
    if src is not None and "forward" in src.values:
        where = f" (line {src.values['forward'].line})"
    return f"the '# piui: forward = {forward:g}' annotation of {index.label}{where}"


def latency_cause(index: Any, slots: np.ndarray) -> str:
    """The largest latencies of the link slots ``slots`` (a route's), in words."""
    lat = index.latency[slots]
    order = np.argsort(-lat, kind="stable")[:3]
    parts = [f"{_link(index, int(slots[k]))} has latency {lat[k]:g} s" for k in order]
    more = f" (of {slots.shape[0]} links)" if slots.shape[0] > len(parts) else ""
    return "; ".join(parts) + more


def per_byte_cause(index: Any, slots: np.ndarray, forward: float | None) -> tuple[float, str]:
    """The largest time a byte on the link slots ``slots`` (a route's), and what it is:
    a link's speed, or the forwarding cost on top of one (forwarded messages)."""
    spd = index.speed[slots]
    k = int(np.argmax(spd)) if spd.shape[0] else 0
    worst = float(spd[k]) if spd.shape[0] else 0.0
    words = f"{_link(index, int(slots[k]))} has speed {worst:g} s a byte" if spd.shape[0] else ""
    if forward is not None and slots.shape[0] > 1 and forward + worst > worst:
        total = worst + forward
        words = (f"{forward_note(index, forward)} adds {forward:g} s a byte to every "
                 f"forwarded byte ({words})")  # fmt: skip
        worst = total
    return worst, words


def check_transfer(index: Any, slots: np.ndarray, nbytes: float, per_byte: float,
                   latency: float, what: str, forward: float | None = None,
                   sharing: float = 1.0) -> None:  # fmt: skip
    """Refuse a transfer time ``latency + nbytes * per_byte`` (``per_byte`` with the
    load, up to ``sharing`` messages on a link) that is past a double or underflows,
    naming the values that make it; ``what`` is the message it is of."""
    if not math.isfinite(latency):
        raise TimeOverflowError(f"{what}: its route's latencies add up past {RANGE}: "
                                f"{latency_cause(index, slots)}")  # fmt: skip
    with np.errstate(all="ignore"):
        moving = nbytes * per_byte
        total = latency + moving
    if math.isfinite(total) and not (nbytes > 0 and per_byte > 0 and moving < SMALLEST_NORMAL):
        return
    _, cause = per_byte_cause(index, slots, forward)
    shared = f", shared by {sharing:g} messages on a link" if sharing > 1 else ""
    if not math.isfinite(total):
        raise TimeOverflowError(f"{what}: its {nbytes:g} bytes take longer than {RANGE} s "
                                f"({per_byte:g} s a byte{shared}): {cause}")  # fmt: skip
    raise TimeOverflowError(f"{what}: its {nbytes:g} bytes at {per_byte:g} s a byte take "
                            f"{moving!r} s, too small for a double to hold (below about "
                            f"2.2e-308 s): {cause}")  # fmt: skip


__all__ = [
    "RANGE",
    "TimeOverflowError",
    "check_transfer",
    "forward_note",
    "latency_cause",
    "per_byte_cause",
]
