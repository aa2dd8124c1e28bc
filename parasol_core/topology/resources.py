"""The network model with its extensions: per-hop forwarding, full-duplex links and
max-min fair sharing (docs/topology.md, "Which model answers what"; docs/decisions.md,
"Per-hop forwarding and duplex links").

A message uses *resources*, each of which can give one second of work per second:

* a **link direction**. A link is one resource, used both ways (1994's links). On a
  topology annotated ``# piui: duplex = A``, a link between two processors is two, one
  per direction; a message uses its own direction for ``speed`` seconds a byte and the
  other for ``A * speed`` (its acknowledgements: 2 bits per 11-bit datum on the T800).
* a **forwarder**: on a topology annotated ``# piui: forward = F``, a processor that
  passes a message on (neither its sender nor its receiver) is busy
  ``speed(l) + F`` seconds a byte, ``l`` the link the message came in by (PAMELA's
  service f: it takes the packet off the link, then spends ``F`` storing and sending it
  on).

**Max sharing** (PARASOL's, the default; docs/decisions.md "Network state and transfer time"):
every message in flight moves ``1 / max(L(r) for r it uses)`` bytes a second, where
``L(r)`` is the work per byte all messages in flight put on ``r``. Without the
annotations ``L(l) = speed(l) * n(l)``: the 1994 formula, unchanged. With a forwarding
cost, a link into a processor also counts the time it stands blocked: after a packet
for the forwarder crosses it, the forwarder is busy ``F`` more and cannot take the
next packet for forwarding; only a packet for the processor itself may cross
meanwhile, one packet a gap (packets are not split). With ``f`` messages forwarded and
``d`` ending there, ``L(l) = speed(l) * (f + d) + F * max(0, f - d)
+ max(0, F - speed(l)) * min(f, d)``. This reproduces all eight rows of PAMELA's
table 4.1.

**Max-min sharing** (SimGrid's flow model, ``sharing="maxmin"``): rates by progressive
filling. All messages moving bytes speed up together until a resource is full; those
using it keep that rate, the others go on, until every message is held by a full
resource. Capacity nobody can use is passed on. A message in its latency holds no
share. The blocked-link term above is not part of it (a fluid model has no packets).

This module says which resources a message uses and how much, per byte
(:class:`Usage`), and the max rule's pace in a network state (transfer times, mapping
metrics); the event trace that runs phases on them is :mod:`parasol_core.simulate.flow`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.ragged import gather

SHARING = ("max", "maxmin", "cm02")
_BLOCK = 1 << 20  # crossings a block where a pass over them all is done in blocks
#: what each sharing model is, for help texts
SHARING_HELP = {
    "max": "PARASOL's: a message moves at 1 / max(load x speed) over its route (default)",
    "maxmin": "max-min fair (progressive filling, SimGrid's flow model): unused "
    "capacity passes on to others",
    "cm02": "SimGrid's CM02: max-min fair, each message weighted by 1 / its route's "
    "latency and capped by its route's slowest link",
}


@dataclass(frozen=True)
class NetOptions:
    """The extensions a topology asks for (None: as in 1994): a forwarding cost, duplex
    links, and the per-link policies (``shared``, ``fatpipe``: link ids as the
    annotation writes them, "3 5-9")."""

    forward: float | None = None
    duplex: float | None = None
    shared: str | None = None
    fatpipe: str | None = None

    @property
    def extended(self) -> bool:
        """Whether the 1994 formula no longer holds (a shared-link list alone changes
        nothing: without duplex every link is shared)."""
        return self.forward is not None or self.duplex is not None or self.fatpipe is not None

    def policy_masks(self, link_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per link slot (positions in ``link_ids``): listed as shared, listed as
        fatpipe."""
        from parasol_core.syntax.annotations import link_list_ids

        out = []
        for text in (self.shared, self.fatpipe):
            runs = np.asarray(link_list_ids(text), dtype=np.int64).reshape(-1, 2)
            # (the written form's runs are ascending and apart: one binary search a link)
            at = np.searchsorted(runs[:, 0], link_ids, side="right") - 1
            inside = at >= 0
            inside[inside] = link_ids[inside] <= runs[at[inside], 1]
            out.append(inside)
        return out[0], out[1]


def options_of(topology: Topology) -> NetOptions:
    """The topology's forwarding cost, duplex overhead and link policies; RoutingError on
    a value set by a program that the file could not hold (negative, not a number, not
    link ids)."""
    from parasol_core.syntax.annotations import check_annotation, check_link_list

    values: dict[str, Any] = {}
    try:
        for key in ("forward", "duplex"):
            values[key] = check_annotation(key, getattr(topology, key, None))
        for key in ("shared", "fatpipe"):
            values[key] = check_link_list(key, getattr(topology, key, None))
    except ValueError as e:
        raise RoutingError(f"topology {topology.id}: {e}") from None
    return NetOptions(**values)


def check_sharing(sharing: str) -> str:
    if sharing not in SHARING:
        raise ValueError(f"sharing must be one of {', '.join(SHARING)}, not {sharing!r}")
    return sharing


# --------------------------------------------------------------------------- resources


class Usage:
    """What the messages on some routes use, flat: entry ``k`` says message
    ``owner[k]`` puts ``weight[k]`` seconds a byte on resource ``res[k]`` (entries by
    message, ``start[i]:start[i + 1]`` message ``i``'s, each resource once). ``gap_res``
    / ``gap_owner`` / ``gap_ends``: the link directions a message crosses into a
    processor, and whether it ends there (else that processor forwards it).

    Per message: ``floor``, the least seconds a byte its fatpipe links allow it (their
    largest speed; 0 without one), which no other message changes; ``slowest``, the
    largest speed of any link it crosses (CM02's cap on its rate is ``1 / slowest``).

    Resources are numbered: ``2 * slot + d`` a link slot's direction ``d`` (0 the way from
    the lower-numbered processor, and the only one of a shared link), ``2 * nslots + p``
    processor ``p``'s forwarder. ``links_only``: the entries are the link directions
    each message crosses, each crossing once, in route order (no forwarder, no
    acknowledgement entry, no fatpipe link, no link crossed twice): a message's link
    slots are its entries' resources // 2."""

    def __init__(self, index: Any, procs: np.ndarray, proc_ends: np.ndarray,
                 slots: np.ndarray, ends: np.ndarray, opts: NetOptions,
                 repeats: bool = True, own: bool = False,
                 ways: np.ndarray | None = None) -> None:  # fmt: skip
        """``own``: ``slots`` and ``ends`` are this usage's to keep or overwrite (the
        caller made them for it). ``ways``: per crossing, whether it goes from the
        higher-numbered of its link's processors, when the caller has it (the
        processors then unread: for the entries of the link directions alone)."""
        n = ends.shape[0] - 1
        nslots = index.link_ids.shape[0]
        self.n = n
        self.nslots = nslots
        self.nres = 2 * nslots + index.count + 1
        self.forward = opts.forward or 0.0
        speed = index.speed[slots]
        listed_shared, listed_fat = opts.policy_masks(index.link_ids)
        fat = listed_fat[slots] if listed_fat.any() else None  # by crossing
        duplex = opts.duplex is not None
        self._owner: np.ndarray | None = None
        if fat is None and not opts.duplex and opts.forward is None and not repeats:
            # the link entries alone, each once, in message order: a resource a crossing,
            # the entries' offsets the routes' (the owners made if asked: :attr:`owner`)
            direction = None
            if duplex:  # split links: a direction each, 1 the way from the higher-numbered end
                direction = ((index.sizes == 2) & ~listed_shared & ~listed_fat)[slots]
                if ways is not None:
                    direction &= ways
                else:
                    _ways_into(direction, procs, proc_ends, ends)
            self.res = np.multiply(slots, 2, out=slots) if own else 2 * slots
            if direction is not None:
                self.res += direction
            self.weight = speed.astype(np.float64, copy=False)
            self.start = ends if own and ends.dtype == np.int64 and (
                not n or ends[0] == 0) else np.asarray(ends - ends[0], dtype=np.int64)  # fmt: skip
            self.floor = np.zeros(n)
            self._slowest(speed, ends)
            self.gap_res = None
            self.links_only = True
            return
        self.links_only = False
        hops = np.diff(ends)
        owner = np.repeat(np.arange(n, dtype=np.int64), hops)
        a = b = last = None
        if duplex or opts.forward is not None:
            # hop k of route i goes from procs[proc_ends[i] + k] to the next one (hop k
            # is entry ends[i] + k): one repeat of the routes' offsets, not two gathers
            at = np.repeat(proc_ends[:-1] - ends[:-1], hops)
            at += np.arange(slots.shape[0], dtype=np.int64)
            last = np.zeros(slots.shape[0], dtype=bool)
            last[ends[1:][hops > 0] - 1] = True  # a route's last hop
            a, b = procs[at], procs[at + 1]
            del at
        link_res = 2 * slots
        two = None
        if duplex:  # split links: a direction each, 1 the way from the higher-numbered end
            two = ((index.sizes == 2) & ~listed_shared & ~listed_fat)[slots]
            direction = two & (a > b)
            link_res += direction
        res = [link_res if fat is None else link_res[~fat]]
        weight = [speed if fat is None else speed[~fat]]
        who = [owner if fat is None else owner[~fat]]
        if duplex and opts.duplex:
            res.append(2 * slots[two] + 1 - direction[two])
            weight.append(opts.duplex * speed[two])
            who.append(owner[two])
        if opts.forward is not None:
            through = ~last
            res.append(2 * nslots + b[through])
            weight.append(speed[through] + self.forward)
            who.append(owner[through])
        if len(res) == 1:  # the link entries alone: already in message order
            res_all, w_all, own_all = res[0], weight[0], who[0]
        else:
            by_owner = np.argsort(np.concatenate(who), kind="stable")
            res_all = np.concatenate(res)[by_owner]
            w_all = np.concatenate(weight)[by_owner]
            own_all = np.concatenate(who)[by_owner]
            del by_owner
        w_all = w_all.astype(np.float64, copy=False)
        # a route uses a resource once (as it counts once per link in 1994's formula):
        # only a route that crosses a link twice, or (with forwarders) visits a processor
        # twice, can name one twice, so only then are the entries sorted to find them
        if repeats or opts.forward is not None:
            key = own_all * self.nres + res_all
            order = np.lexsort((w_all, key))
            key, w_all = key[order], w_all[order]
            keep = np.ones(key.shape[0], dtype=bool)
            keep[:-1] = key[1:] != key[:-1]  # the last of equal keys: the largest weight
            key, w_all = key[keep], w_all[keep]
            own_all, res_all = key // self.nres, key % self.nres
            del key, order, keep
        self._owner = own_all
        self.res = res_all
        self.weight = w_all
        self.start = np.zeros(n + 1, dtype=np.int64)  # the entries are by message
        np.cumsum(np.bincount(self.owner, minlength=n), out=self.start[1:])
        self.floor = np.zeros(n)
        if fat is not None and fat.any():
            np.maximum.at(self.floor, owner[fat], speed[fat])
        self._slowest(speed, ends)
        if self.forward > 0:
            own = np.ones(slots.shape[0], dtype=bool) if fat is None else ~fat
            self.gap_res = link_res[own]
            self.gap_owner = owner[own]
            self.gap_ends = last[own]
            self.gap_speed = np.zeros(self.nres)
            self.gap_speed[link_res[own]] = speed[own]
        else:
            self.gap_res = None

    def _slowest(self, speed: np.ndarray, ends: np.ndarray) -> None:
        """:attr:`slowest`, from each crossing's speed (``ends``: the routes' offsets),
        in blocks of messages (no temporaries of them all: a replay's 10^7)."""
        self.slowest = np.zeros(self.n)
        if not speed.shape[0]:
            return
        for lo in range(0, self.n, _BLOCK):
            hi = min(lo + _BLOCK, self.n)
            a, b = int(ends[lo]), int(ends[hi])
            if a == b:
                continue
            first = ends[lo:hi]
            full = ends[lo + 1 : hi + 1] > first  # a message that crosses a link
            # (the last full one's crossings run to the block's end: the ones after it
            # cross none)
            self.slowest[lo:hi][full] = np.maximum.reduceat(speed[a:b], first[full] - a)

    @property
    def owner(self) -> np.ndarray:
        """Each entry's message (made when first asked where the entries were made
        without it: the flow kernel does without)."""
        if self._owner is None:
            self._owner = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.start))
        return self._owner

    @owner.setter
    def owner(self, value: np.ndarray | None) -> None:
        self._owner = value

    def loads(self, active: np.ndarray) -> np.ndarray:
        """Max sharing: the work per byte on every resource with ``active`` (a count per
        message) in flight, blocked-link time included."""
        load = np.bincount(self.res, weights=self.weight * active[self.owner],
                           minlength=self.nres).astype(np.float64, copy=False)  # fmt: skip
        if self.gap_res is not None:
            times = active[self.gap_owner]
            ending = np.bincount(self.gap_res, weights=times * self.gap_ends, minlength=self.nres)
            passing = np.bincount(self.gap_res, weights=times * ~self.gap_ends,
                                  minlength=self.nres)  # fmt: skip
            f = self.forward
            load += f * np.maximum(passing - ending, 0.0)
            load += np.maximum(f - self.gap_speed, 0.0) * np.minimum(passing, ending)
        return load

    def per_byte(self, load: np.ndarray, which: np.ndarray | None = None) -> np.ndarray:
        """Max sharing: each message's seconds per byte (the largest load it meets, or
        its fatpipe links' floor where larger)."""
        seg = load[self.res]
        out = self.floor.copy()
        full = np.diff(self.start) > 0
        if seg.shape[0]:
            out[full] = np.maximum(out[full], np.maximum.reduceat(seg, self.start[:-1][full]))
        return out if which is None else out[which]

    def alone(self) -> np.ndarray:
        """Each message's seconds per byte alone on the network (both sharing models:
        the largest weight it puts anywhere, plus the blocked-link time of a forwarded
        message when there is a forwarding cost)."""
        # (alone, a forwarded message blocks its link speed + F a byte, which is what
        # it puts on its forwarder too: the largest weight already holds it)
        w = self.weight
        out = self.floor.copy()
        full = np.diff(self.start) > 0
        if w.shape[0]:
            out[full] = np.maximum(out[full], np.maximum.reduceat(w, self.start[:-1][full]))
        return out


def _ways_into(out: np.ndarray, procs: np.ndarray, proc_ends: np.ndarray,
               ends: np.ndarray) -> None:  # fmt: skip
    """``out`` (per crossing, routes' crossings ``ends[i]:ends[i + 1]``) and-ed with
    whether the crossing goes from the higher-numbered processor to the lower: hop k of
    route i goes from ``procs[proc_ends[i] + k]`` to the next one."""
    at = np.repeat(proc_ends[:-1] - ends[:-1], np.diff(ends))
    for lo in range(0, at.shape[0], _BLOCK):  # (in blocks: no temporaries of all)
        hi = min(lo + _BLOCK, at.shape[0])
        seg = at[lo:hi]
        seg += np.arange(lo, hi, dtype=np.int64)
        out[lo:hi] &= procs[seg] > procs[seg + 1]


def usage_of(table: Any, route_ids: np.ndarray, opts: NetOptions) -> Usage:
    """The resources the routes ``route_ids`` of a RouteTable use. For the entries of
    the link directions alone (duplex links of no cross-traffic cost, no forwarding
    cost, no fatpipe, no link crossed twice: :attr:`Usage.links_only`) the way each
    hop goes is found once per route of the table and gathered per message as a bit,
    rather than the processors of every message's route gathered (a replay's 10^7
    messages: two arrays of them all and more)."""

    slots, ends, _, uends = table.arrays()
    pos = np.asarray(route_ids, dtype=np.int64) - 1
    flat, _ = gather(slots, ends, pos, which=False)
    after = pos + 1
    hops = ends[after]
    hops -= ends[pos]
    distinct = uends[after]
    distinct -= uends[pos]
    repeats = bool((distinct != hops).any())  # a link crossed twice
    del after, distinct
    which_way = opts.duplex is not None or opts.forward is not None
    ways = None
    fatpipes = opts.policy_masks(table.index.link_ids)[1].any() if which_way else True
    lean = not (opts.duplex or repeats or fatpipes) and opts.forward is None
    if which_way and lean:  # the link directions alone (as Usage decides it)
        procs, proc_ends = table.processor_arrays()
        route_ways = np.ones(slots.shape[0], dtype=bool)
        _ways_into(route_ways, procs, proc_ends, ends)
        ways, _ = gather(route_ways, ends, pos, which=False)
        which_way = False
        del procs, proc_ends, route_ways
    if not which_way:
        del pos  # (not needed for the processors)
    new_ends = np.zeros(hops.shape[0] + 1, dtype=np.int64)
    np.cumsum(hops, out=new_ends[1:])
    del hops
    pflat = new_pends = np.zeros(0, dtype=np.int64)
    if which_way:  # which way each hop goes
        procs, proc_ends = table.processor_arrays()
        pflat, _ = gather(procs, proc_ends, pos, which=False)
        plen = proc_ends[pos + 1] - proc_ends[pos]
        new_pends = np.zeros(pos.shape[0] + 1, dtype=np.int64)
        np.cumsum(plen, out=new_pends[1:])
        del pos
    return Usage(table.index, pflat, new_pends, flat, new_ends, opts, repeats, own=True,
                 ways=ways)  # fmt: skip


def state_per_byte(table: Any, counts: dict[int, int], route_ids: np.ndarray,
                   opts: NetOptions) -> np.ndarray:  # fmt: skip
    """Max sharing in a network state (route id -> copies in flight): seconds per byte
    of each of ``route_ids`` (all in the state)."""
    ids = np.asarray(sorted(counts), dtype=np.int64)
    usage = usage_of(table, ids, opts)
    active = np.asarray([counts[int(i)] for i in ids], dtype=np.float64)
    per = usage.per_byte(usage.loads(active))
    return per[np.searchsorted(ids, np.asarray(route_ids, dtype=np.int64))]


# --------------------------------------------------------------------------- one route


def route_per_byte(index: Any, route: Any, opts: NetOptions) -> float:
    """Seconds per byte of a message alone on ``route`` (a :class:`~.index.Route`):
    the slowest link's speed, or a forwarder's ``speed + forward`` where larger."""
    if not route.links:
        return 0.0
    slots = [index.slot_of[lid] for lid in route.links]
    worst = max(float(index.speed[s]) for s in slots)
    if opts.forward is not None:
        for s in slots[:-1]:
            worst = max(worst, float(index.speed[s]) + opts.forward)
    if not math.isfinite(worst):  # a speed and the forwarding cost add up past a double
        from parasol_core.topology.overflow import RANGE, TimeOverflowError, per_byte_cause

        _, cause = per_byte_cause(index, np.asarray(slots), opts.forward)
        raise TimeOverflowError(f"the time a byte of the route from processor "
                                f"{route.processors[0]} to {route.processors[-1]} is past "
                                f"{RANGE}: {cause}")  # fmt: skip
    return worst


def forwarders(route: Any) -> list[int]:
    """The processors that pass a message on (all but its two ends)."""
    return list(route.processors[1:-1])
