"""A PARASOL model's hardware topology as a SimGrid platform file (version 4.1).

One ``Full`` zone: a ``<host>`` per compute processor and a ``<router>`` per switch,
named ``p1``, ``p2``, ... by processor number; a ``<link>`` per PARASOL link with
``bandwidth = 1 / speed`` (bytes per second) and its latency; and an explicit
``<route>`` for every ordered pair of compute processors, listing the links PARASOL's
routing technique gives (one symmetrical route where the way back is the same links
reversed, two one-way routes otherwise). So SimGrid moves a message over exactly the
links PARASOL would.

``parasol:`` properties keep what SimGrid has no place for (each link's processors and
exact speed, the routing name, shape, processor types), so that the import gives back
the same model. The explicit routes grow with the square of the compute processors:
past :data:`MAX_ROUTES` routes or :data:`MAX_ROUTE_LINKS` link references the export is
refused before any routing, with a message naming both numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np

from parasol_core.base import budget
from parasol_core.model import Machine
from parasol_core.simgrid.importer import PREFIX

MAX_ROUTES = 1_000_000
"""The most explicit routes an export writes (ordered pairs of compute processors)."""
MAX_ROUTE_LINKS = 5_000_000
"""The most link references (``<link_ctn>``) an export writes, all routes together."""
HOST_SPEED = "1Gf"
"""SimGrid needs a host speed; PARASOL has none in flops. Written as this, and said."""


class ExportError(ValueError):
    """A model that cannot be written as a platform; the message says why."""


# what a property's value is, in words, for the message that refuses it
NAMED = {"machine-name": "the model name", "topology-name": "the topology name",
         "network": "the topology's network annotation"}  # fmt: skip


@dataclass
class Exported:
    text: str
    notes: list[str]


def _xml_illegal(text: str) -> str | None:
    """The first character of ``text`` that no XML 1.0 document can hold, even escaped
    (control characters other than tab and line ends, lone surrogates, U+FFFE, U+FFFF),
    or None."""
    for c in text:
        o = ord(c)
        if not (o in (0x9, 0xA, 0xD) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD
                or 0x10000 <= o <= 0x10FFFF):  # fmt: skip
            return c
    return None


def attribute(value: object, what: str) -> str:
    """``value`` as a quoted XML attribute value, escaped; ExportError naming ``what``
    and the character when it holds one XML cannot hold, so that the export is always
    well-formed XML or refused."""
    text = str(value)
    bad = _xml_illegal(text)
    if bad is not None:
        raise ExportError(f"{what} holds the character U+{ord(bad):04X} ({bad!r}), which an "
                          "XML file cannot hold: rename it before exporting")  # fmt: skip
    return quoteattr(text)


def _num(value: float, what: str = "a value") -> str:
    """A number as the platform file writes it; never ``inf`` or ``nan``, which SimGrid
    would not read as the model's value (ExportError naming ``what``)."""
    number = float(value)
    if not math.isfinite(number):
        raise ExportError(f"{what} would be {number!r}, which a platform file cannot hold")
    return repr(number)


def export_platform(machine: Machine) -> Exported:
    """The platform text of the machine's hardware topology, and what did not carry over."""
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of
    from parasol_core.topology.shape import processor_count
    from parasol_core.topology.switches import switch_mask

    topo = machine.hardware()
    if topo is None:
        raise ExportError("the model has no hardware topology")
    count = processor_count(topo)
    mask = switch_mask(machine, topo, count)
    compute = [p for p in range(1, count + 1) if not mask[p]]
    c = len(compute)
    budget.check(f"explicit routes between {c:,} compute processors", c * (c - 1), MAX_ROUTES,
                 "routes", "a SimGrid Full zone lists every ordered pair")  # fmt: skip
    notes: list[str] = []
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        "<!-- Written by PIUI from a PARASOL model (docs/simgrid.md). -->",
        '<platform version="4.1">',
        f'  <zone id={attribute(topo.name or "parasol", "the topology name")} routing="Full">',
    ]

    def prop(key: str, value: object, indent: str = "    ", what: str | None = None) -> None:
        what = what or NAMED.get(key, f"the value of {key}")
        lines.append(f"{indent}<prop id={attribute(PREFIX + key, 'a property name')} "
                     f"value={attribute(value, what)}/>")  # fmt: skip

    prop("machine-id", machine.id if machine.id is not None else 1)
    if machine.name is not None:
        prop("machine-name", machine.name)
    prop("topology-id", topo.id if topo.id is not None else 1)
    if topo.name is not None:
        prop("topology-name", topo.name)
    prop("routing", topo.routing or "")
    if topo.setup is not None:
        prop("setup", _num(topo.setup.mean))
    if topo.shape is not None:
        prop("shape", " ".join(map(str, topo.shape)))
    if topo.network is not None:
        prop("network", topo.network)
    if topo.forward is not None:
        prop("forward", _num(topo.forward))
        notes.append(f"the forwarding cost ({topo.forward:g} s a byte): SimGrid routers "
                     "forward for free (kept as a property for the import)")  # fmt: skip
    if topo.duplex is not None:
        prop("duplex", _num(topo.duplex))
        if topo.duplex != 0:
            notes.append(f"duplex acknowledgement traffic ({topo.duplex:g}): SimGrid's "
                         "split-duplex links carry none")  # fmt: skip
    for proc in machine.processors:
        if proc.id is not None:
            prop(
                f"type:{proc.id}",
                f"{proc.role or ''}:{proc.name or ''}",
                what=f"the name of processor type {proc.id}",
            )
    routers = [p for p in range(1, count + 1) if mask[p]]
    if routers:
        prop("routers", " ".join(f"p{p}={topo.types.get(p, 0)}" for p in routers))
    if any(p.timings for p in machine.processors):
        notes.append("processor timings (SimGrid hosts have a speed in flops, written as "
                     f"{HOST_SPEED})")  # fmt: skip
    if machine.virtuals:
        notes.append(f"virtual topologies and their mappings ({len(machine.virtuals)})")
    if machine.runtime_sections():
        notes.append("run-time system costs (PVM, Express, MPI)")
    if len(machine.topologies) > 1:
        notes.append("hardware topologies other than the one with the lowest id")

    for p in compute:
        lines.append(f'    <host id="p{p}" speed="{HOST_SPEED}">')
        prop("type", topo.types.get(p, 0), "      ")
        lines.append("    </host>")
    for p in routers:
        lines.append(f'    <router id="p{p}"/>')
    split = topo.duplex is not None
    ids = [link.id for link in topo.links if link.id is not None]
    fatpipe, shared = (_ids(getattr(topo, key, None), ids) for key in ("fatpipe", "shared"))
    sd = False
    usable: dict[int, list[int]] = {}
    directed: set[int] = set()  # the split-duplex links: a route names their direction
    for link in topo.links:
        if link.id is None or not link.connect:
            continue
        speed = link.speed.mean if link.speed is not None else None
        if speed is None or not speed > 0:
            raise ExportError(f"link {link.id} has speed {speed!r}: SimGrid needs a finite, "
                              "positive bandwidth (1 / speed)")  # fmt: skip
        lat = link.latency.mean if link.latency is not None else 0.0
        sd = sd or any(t is not None and t.sd for t in (link.latency, link.speed))
        policy = ""
        if link.id in fatpipe:
            policy = ' sharing_policy="FATPIPE"'
        elif split and len(link.connect) == 2 and link.id not in shared:
            policy = ' sharing_policy="SPLITDUPLEX"'
            directed.add(link.id)
        bandwidth = _num(1.0 / speed, f"the bandwidth of link {link.id} (1 / its speed {speed!r})")
        lines.append(f'    <link id="l{link.id}" bandwidth="{bandwidth}Bps" '
                     f'latency="{_num(lat)}s"{policy}>')  # fmt: skip
        prop("id", link.id, "      ")
        prop("connect", " ".join(map(str, link.connect)), "      ")
        prop("speed", _num(speed), "      ")
        lines.append("    </link>")
        usable[link.id] = link.connect
    if sd:
        notes.append("standard deviations of link latencies and speeds")

    if c > 1:
        src = np.repeat(np.asarray(compute, dtype=np.int64), c)
        dst = np.tile(np.asarray(compute, dtype=np.int64), c)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        try:
            index = index_of(topo)
            batch = index.routes(src, dst)
        except RoutingError as e:
            raise ExportError(
                f"PARASOL cannot route the model ({e}); SimGrid needs every route"
            ) from None
        budget.check(f"explicit routes between {c:,} compute processors",
                     int(batch.link_offsets[-1]), MAX_ROUTE_LINKS, "link references")  # fmt: skip
        position = {p: i for i, p in enumerate(compute)}
        routes = {}
        for i in range(len(batch)):
            r = batch[i]
            routes[(r.processors[0], r.processors[-1])] = r
        for (a, b), r in routes.items():
            if position[a] > position[b]:
                continue
            back = routes[(b, a)]
            same = back.links == tuple(reversed(r.links)) and back.processors == tuple(
                reversed(r.processors)
            )
            _route(lines, r, usable, directed, symmetrical=same)
            if not same:
                _route(lines, back, usable, directed, symmetrical=False)
    lines += ["  </zone>", "</platform>", ""]
    return Exported("\n".join(lines), notes)


def _ids(text: str | None, ids: list[int]) -> set[int]:
    """Those of ``ids`` a policy annotation lists (``# piui: fatpipe = 3 5-9``)."""
    from bisect import bisect_right

    from parasol_core.syntax.annotations import link_list_ids

    runs = link_list_ids(text)
    if not runs:
        return set()
    firsts = [lo for lo, _ in runs]  # ascending, disjoint, as the annotation is kept
    out = set()
    for i in ids:
        at = bisect_right(firsts, i) - 1
        if at >= 0 and i <= runs[at][1]:
            out.add(i)
    return out


def _route(lines: list[str], r, usable: dict[int, list[int]], directed: set[int],  # noqa: ANN001
           symmetrical: bool) -> None:  # fmt: skip
    sym = "" if symmetrical else ' symmetrical="NO"'
    lines.append(f'    <route src="p{r.processors[0]}" dst="p{r.processors[-1]}"{sym}>')
    for k, lid in enumerate(r.links):
        direction = ""
        ends = usable[lid]
        if lid in directed:  # UP is from the first processor listed to the second
            direction = ' direction="UP"' if r.processors[k] == ends[0] else ' direction="DOWN"'
        lines.append(f'      <link_ctn id="l{lid}"{direction}/>')
    lines.append("    </route>")
