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

from parasol_core.base.limits import MAX_PHASE_MESSAGES
from parasol_core.base.numeric import LARGEST, SMALLEST_NORMAL
from parasol_core.base.words import counted
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
    more = (
        f" (of {counted(slots.shape[0], 'link', grouped=False)})"
        if slots.shape[0] > len(parts)
        else ""
    )
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
        raise TimeOverflowError(f"{what}: its {counted(nbytes, 'byte', spec='g')} take longer "
                                f"than {RANGE} s "
                                f"({per_byte:g} s a byte{shared}): {cause}")  # fmt: skip
    raise TimeOverflowError(f"{what}: its {counted(nbytes, 'byte', spec='g')} at {per_byte:g} s "
                            f"a byte take {moving!r} s, too small for a double to hold "
                            f"(below about "
                            f"2.2e-308 s): {cause}")  # fmt: skip


# --------------------------------------------------------------------------- check

#: How far a phase within the project's limits can multiply a time a byte: a message of
#: up to 2**53 bytes (the estimator's largest), sharing a link with up to
#: MAX_PHASE_MESSAGES others, in a chain of as many messages one after another. A link
#: speed or forwarding cost whose product with it passes a double makes such phases
#: overflow: ``check`` warns about it (:func:`overflow_warnings`).
PER_BYTE_SCALE = 2.0**53 * MAX_PHASE_MESSAGES * MAX_PHASE_MESSAGES


def overflow_warnings(topology: Any) -> list[tuple[int | None, str, str]]:
    """What ``check`` says of a topology's timings that make times overflow (or
    underflow) within the project's limits: ``(row, attr, message)``, ``row`` the link
    store row the message is about (None: the forwarding annotation). One message per
    timing and kind, naming the worst link and how many more are like it."""
    out: list[tuple[int | None, str, str]] = []
    store = topology.links
    count = max(int(getattr(topology, "processor_count", 0) or 0), len(topology.types), 2)
    label = topology.label()
    latency_scale = float(count) * MAX_PHASE_MESSAGES  # a route's hops, a chain of messages
    with np.errstate(all="ignore"):
        for attr, scale, unit in (("latency", latency_scale, "s"),
                                  ("speed", PER_BYTE_SCALE, "s a byte")):  # fmt: skip
            values = store.means(attr) if len(store) else np.zeros(0)
            values = np.where(np.isfinite(values), values, 0.0)
            large = values * scale > LARGEST
            if large.any():
                row = int(np.argmax(values))
                v = float(values[row])
                more = int(large.sum()) - 1
                n = LARGEST / v
                what = (
                    f"a route or a chain of more than {counted(n, 'hop', spec='.3g')} over "
                    "such links"
                    if attr == "latency"
                    else f"a message of more than {counted(n, 'byte', spec='.3g')}"
                )
                out.append((row, attr, _too_large(
                    f"link {store.view(row).id} of "
                    f"{label}", attr, v, unit, what, more)))  # fmt: skip
            if attr == "speed":
                tiny = (values > 0) & (values < SMALLEST_NORMAL)
                if tiny.any():
                    row = int(np.argmax(tiny))
                    v = float(values[row])
                    more = int(tiny.sum()) - 1
                    also = f" ({more} more link{'s' if more > 1 else ''} like it)" if more else ""
                    out.append((row, attr, f"link {store.view(row).id} of {label}: speed = "
                                f"{v!r} s a byte is so small that the time of a message of "
                                f"fewer than {counted(SMALLEST_NORMAL / v, 'byte', spec='.3g')} "
                                f"over it underflows (below about 2.2e-308 s, where a double loses "
                                "digits); simulate, transfer and the estimator refuse such "
                                f"messages{also}"))  # fmt: skip
    forward = getattr(topology, "forward", None)
    if forward is not None and forward * PER_BYTE_SCALE > LARGEST:
        out.append((None, "forward", _too_large(
            f"'# piui: forward' of {label}", "forward", forward, "s a byte",
            f"a forwarded message of more than "
            f"{counted(LARGEST / forward, 'byte', spec='.3g')}", 0)))  # fmt: skip
    return out


def _too_large(who: str, attr: str, v: float, unit: str, what: str, more: int) -> str:
    also = f" ({more} more link{'s' if more > 1 else ''} like it)" if more else ""
    return (
        f"{who}: {attr} = {v:g} {unit} makes times past {RANGE} s for {what}; "
        "simulate, transfer and the estimator refuse such messages" + also
    )


__all__ = [
    "PER_BYTE_SCALE",
    "RANGE",
    "TimeOverflowError",
    "check_transfer",
    "forward_note",
    "latency_cause",
    "overflow_warnings",
    "per_byte_cause",
]
