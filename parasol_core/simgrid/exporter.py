"""A PARASOL model's hardware topology as a SimGrid platform file (version 4.1), in the
smallest of four forms whose SimGrid routes are PARASOL's (docs/simgrid.md, "Export"):

* a ``<cluster>`` (TORUS, FAT_TREE, or FLAT: a star around one switch) where the
  topology is exactly what SimGrid builds from one and routes as PARASOL does (a torus
  routed ``simgrid-torus``, or with no tie; a fat tree routed ``updown``); the candidate
  is read back by the import and kept only if that gives the same topology;
* a ``DijkstraCache`` zone of layers for a dimension-order routing (meshes, tori,
  hypercubes: :func:`_as_layers`), whose one shortest route is PARASOL's;
* a ``Full`` zone of zones, one a router and its compute processors, with a
  ``zoneRoute`` between every two routers, for a routing whose route between two
  compute processors depends only on their routers (``dragonfly-minimal``:
  :func:`_as_zones`), read back by the import and kept only if that gives the same
  topology and routes; with other than one global link between two groups, one
  ``DijkstraCache`` zone of its links weighted so that SimGrid's shortest route is
  PARASOL's (:func:`_as_weighted`: linear in the links);
* one ``Full`` zone: an explicit ``<route>`` for every ordered pair of compute
  processors, listing the links PARASOL's routing technique gives (one symmetrical
  route where the way back is the same links reversed, two one-way routes otherwise).

Hosts are named ``p1``, ``p2``, ... by processor number; a ``<link>`` per PARASOL link
has ``bandwidth = 1 / speed`` (bytes per second), its latency and its sharing policy.
``parasol:`` properties keep what SimGrid has no place for (each link's processors and
exact speed, the routing name, shape, processor types), so that the import gives back
the same model. The routes are counted before any is made: past :data:`MAX_ROUTES`
routes or :data:`MAX_ROUTE_LINKS` link references the export is refused, with a message
naming both numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np

from parasol_core.base import budget
from parasol_core.base.words import counted
from parasol_core.model import Machine
from parasol_core.simgrid.importer import PREFIX

MAX_ROUTES = 1_000_000
"""The most explicit routes an export writes (ordered pairs of compute processors)."""
MAX_ROUTE_LINKS = 5_000_000
"""The most link references (``<link_ctn>``) an export writes, all routes together."""
HOST_SPEED = "1Gf"
"""A host's speed where the model times no flop (SimGrid needs one). Written, and said."""


def host_speeds(machine: Machine) -> dict[int, str]:
    """Each compute processor type's SimGrid speed, in flops a second: 1 / the seconds a
    flop takes on it, the replay's default flop (``flop_for``), so that SimGrid's replay
    of a time-independent trace computes on the platform as PARASOL's replays on the
    model. A type on which that has no positive finite value is not in the answer."""
    from parasol_core.analysis.flops import flop_seconds

    out = {}
    for t, seconds in flop_seconds(machine).items():
        speed = 1.0 / seconds  # as a reader writes it: 2000000000f, not 1999999999.9999998f
        if math.isfinite(speed):
            short = f"{speed:.15g}"
            out[t] = f"{short if abs(float(short) - speed) <= 1e-15 * speed else _num(speed)}f"
    return out


VALIANT = (
    "Valiant routing sends each pair of processors through its own intermediate group, "
    "and SimGrid 3.32 can say a route that depends on the pair only by an explicit route "
    "for it: its DRAGONFLY cluster routes minimally and a zone route depends on the two "
    "zones alone. Export the model routed 'dragonfly-minimal' for a form that grows "
    "linearly"
)
"""Why a ``dragonfly-valiant`` model exports as one Full zone, and how to avoid it."""


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
    """The platform text of the machine's hardware topology, and what did not carry over:
    a SimGrid cluster where the topology is one (a torus, a fat tree, a star) and SimGrid
    routes it as PARASOL does, else a zone of layers for a dimension-order routing, else
    zones of routers for a dragonfly, else one Full zone of explicit routes (module
    docstring)."""
    from parasol_core.topology.shape import processor_count
    from parasol_core.topology.switches import switch_mask

    topo = machine.hardware()
    if topo is None:
        raise ExportError("the model has no hardware topology")
    count = processor_count(topo)
    mask = switch_mask(machine, topo, count)
    compute = [p for p in range(1, count + 1) if not mask[p]]
    made = _as_cluster(machine, topo, count, mask, compute)
    if made is None:
        made = _as_layers(machine, topo, count, mask, compute)
    if made is None:  # a dragonfly of K != 1 global links a pair of groups: linear
        made = _as_weighted(machine, topo, count, mask, compute)
    if made is None:
        made = _as_zones(machine, topo, count, mask, compute)
    if made is None:
        made = _as_full(machine, topo, count, mask, compute)
    return made


class _Writer:
    """The lines of a platform file: the head, the zone and its ``parasol:`` properties
    (what SimGrid has no place for, read back by the import), and the notes."""

    def __init__(self, machine: Machine, topo, count: int, mask, compute: list[int],  # noqa: ANN001
                 routing: str) -> None:  # fmt: skip
        self.notes: list[str] = []
        self.policies: tuple[set[int], set[int]] | None = None  # the FATPIPE and SHARED links
        self.lines = [
            "<?xml version='1.0'?>",
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
            "<!-- Written by PIUI from a PARASOL model (docs/simgrid.md). -->",
            '<platform version="4.1">',
            f"  <zone id={attribute(topo.name or 'parasol', 'the topology name')} "
            f'routing="{routing}">',
        ]
        prop, notes = self.prop, self.notes
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
        if topo.zones is not None:  # the regions of a 'zones' routing (topology/zoned.py)
            prop("zones", topo.zones)
        # hosts are pN (a cluster's switches its own): the names come back from here
        prop("names", topo.names or "", what="the processors' names")
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
                prop(f"type:{proc.id}", f"{proc.role or ''}:{proc.name or ''}",
                     what=f"the name of processor type {proc.id}")  # fmt: skip
        self.routers = [p for p in range(1, count + 1) if mask[p]]
        if self.routers:
            prop("routers", " ".join(f"p{p}={topo.types.get(p, 0)}" for p in self.routers))
        self.speeds = host_speeds(machine)
        computing = sorted({topo.types.get(p, 0) for p in compute})
        unspeeded = [t for t in computing if t not in self.speeds]
        if any(p.timings for p in machine.processors) or unspeeded:
            said = ("processor timings other than a flop's (each host's speed is 1 / its "
                    "type's flop time, the replay's default flop)")  # fmt: skip
            if unspeeded:
                said += (f"; {HOST_SPEED} for the hosts of processor "
                         f"{'type' if len(unspeeded) == 1 else 'types'} "
                         f"{', '.join(map(str, unspeeded))}, which time no flop")  # fmt: skip
            notes.append(said)
        if machine.virtuals:
            notes.append(f"virtual topologies and their mappings ({len(machine.virtuals)})")
        if machine.runtime_sections():
            notes.append("run-time system costs (PVM, Express, MPI)")
        if len(machine.topologies) > 1:
            notes.append("hardware topologies other than the one with the lowest id")

    def prop(self, key: str, value: object, indent: str = "    ", what: str | None = None) -> None:
        what = what or NAMED.get(key, f"the value of {key}")
        self.lines.append(f"{indent}<prop id={attribute(PREFIX + key, 'a property name')} "
                          f"value={attribute(value, what)}/>")  # fmt: skip

    def speed(self, processor_type: int) -> str:
        """A host's speed: its processor type's (``host_speeds``), else :data:`HOST_SPEED`."""
        return self.speeds.get(processor_type, HOST_SPEED)

    def hosts(self, topo, compute: list[int]) -> None:  # noqa: ANN001
        for p in compute:
            self.lines.append(f'    <host id="p{p}" speed="{self.speed(topo.types.get(p, 0))}">')
            self.prop("type", topo.types.get(p, 0), "      ")
            self.lines.append("    </host>")
        for p in self.routers:
            self.lines.append(f'    <router id="p{p}"/>')

    def links(self, topo, only=None, indent: str = "    ") -> tuple[dict[int, list[int]], set[int]]:  # noqa: ANN001
        """A ``<link>`` per PARASOL link (or per link of ``only``); the links'
        processors, and the split-duplex ones (a route names their direction)."""
        split = topo.duplex is not None
        if self.policies is None:  # once: the zones of routers write their links in parts
            ids = [link.id for link in topo.links if link.id is not None]
            self.policies = tuple(
                _ids(getattr(topo, key, None), ids) for key in ("fatpipe", "shared")
            )
        fatpipe, shared = self.policies
        sd = False
        usable: dict[int, list[int]] = {}
        directed: set[int] = set()
        for link in topo.links if only is None else only:
            if link.id is None or not link.connect:
                continue
            speed = _speed_of(link)
            lat = link.latency.mean if link.latency is not None else 0.0
            sd = sd or any(t is not None and t.sd for t in (link.latency, link.speed))
            policy = ""
            if link.id in fatpipe:
                policy = ' sharing_policy="FATPIPE"'
            elif split and len(link.connect) == 2 and link.id not in shared:
                policy = ' sharing_policy="SPLITDUPLEX"'
                directed.add(link.id)
            bandwidth = _num(1.0 / speed, f"the bandwidth of link {link.id} (1 / its speed "
                             f"{speed!r})")  # fmt: skip
            self.lines.append(f'{indent}<link id="l{link.id}" bandwidth="{bandwidth}Bps" '
                              f'latency="{_num(lat)}s"{policy}>')  # fmt: skip
            self.prop("id", link.id, indent + "  ")
            self.prop("connect", " ".join(map(str, link.connect)), indent + "  ")
            self.prop("speed", _num(speed), indent + "  ")
            self.lines.append(f"{indent}</link>")
            usable[link.id] = link.connect
        note = "standard deviations of link latencies and speeds"
        if sd and note not in self.notes:
            self.notes.append(note)
        return usable, directed

    def done(self) -> Exported:
        self.lines += ["  </zone>", "</platform>", ""]
        return Exported("\n".join(self.lines), self.notes)


def _speed_of(link) -> float:  # noqa: ANN001
    speed = link.speed.mean if link.speed is not None else None
    if speed is None or not speed > 0:
        raise ExportError(f"link {link.id} has speed {speed!r}: SimGrid needs a finite, "
                          "positive bandwidth (1 / speed)")  # fmt: skip
    return speed


# --------------------------------------------------------------------------- the Full zone


def _as_full(machine: Machine, topo, count: int, mask, compute: list[int]) -> Exported:  # noqa: ANN001
    """One Full zone: an explicit route for every ordered pair of compute processors."""
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of

    c = len(compute)
    hint = "a SimGrid Full zone lists every ordered pair"
    if topo.routing == "dragonfly-valiant":
        hint = VALIANT
    budget.check(f"explicit routes between "
                 f"{counted(c, 'compute processor')}", c * (c - 1), MAX_ROUTES,
                 "routes", hint)  # fmt: skip
    out = _Writer(machine, topo, count, mask, compute, "Full")
    if topo.routing == "dragonfly-valiant":
        out.notes.append(f"dragonfly-valiant routing: {counted(c * (c - 1), 'explicit route')} "
                         f"in one Full zone, growing as processors squared "
                         f"({VALIANT})")  # fmt: skip
    out.hosts(topo, compute)
    usable, directed = out.links(topo)
    lines = out.lines
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
        budget.check(f"explicit routes between {counted(c, 'compute processor')}",
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
    return out.done()


# --------------------------------------------------------------------------- clusters

#: the routings a TORUS cluster is routed by in SimGrid: its own tie-break always, and
#: PARASOL's (ties the positive way) where no dimension has a tie (no even size over 2)
_TORI = ("1Dtorus", "2Dtorus", "3Dtorus", "NDtorus")


def _as_cluster(machine: Machine, topo, count: int, mask, compute: list[int]) -> Exported | None:  # noqa: ANN001
    """The topology as one SimGrid ``<cluster>`` (TORUS, FAT_TREE, or FLAT: a star), or
    None where it is not one that SimGrid routes as PARASOL does. The candidate is read
    back by the import and kept only if that gives the same topology (links, ids, ends,
    timings, routing, annotations): nothing is promised that is not checked."""
    from parasol_core.simgrid.importer import import_text
    from parasol_core.topology.shape import declared_shape
    from parasol_core.topology.switched import FAT_TREE_KINDS, FatTree
    from parasol_core.topology.switches import network_of

    links = [lk for lk in topo.links if lk.connect]
    if not links or len(links) != len(topo.links) or not compute:
        return None
    backbone = _backbone(topo, links, count, len(compute))
    if backbone is not None:
        links = links[:-1]  # the backbone has a latency and a bandwidth of its own
    lat = {lk.latency.mean if lk.latency is not None else 0.0 for lk in links}
    speed = {lk.speed.mean if lk.speed is not None else None for lk in links}
    if len(lat) != 1 or len(speed) != 1 or None in speed or not next(iter(speed)) > 0:
        return None  # a cluster's links all have one latency and one bandwidth
    if any(t is not None and t.sd for lk in links for t in (lk.latency, lk.speed)):
        return None
    if topo.shared or (topo.fatpipe and (backbone is None or topo.fatpipe != str(backbone.id))):
        return None
    routing = topo.routing or ""
    c = len(compute)
    if compute != list(range(1, c + 1)):
        return None
    kind = None
    if not topo.network and routing in (*_TORI, "simgrid-torus") and c == count:
        shape = declared_shape(topo)
        dims = shape.dims if shape is not None else (count,)
        if routing == "1Dtorus":
            dims = (count,)
        if routing != "simgrid-torus" and any(n % 2 == 0 and n > 2 for n in dims):
            return None  # a tie SimGrid takes the other way from n/2
        kind = f'topology="TORUS" topo_parameters="{",".join(map(str, dims))}"'
    elif routing == "updown" and (said := network_of(topo)) is not None:
        if said[0] not in FAT_TREE_KINDS:
            return None
        try:
            tree = FatTree.of(said[0], tuple(said[1].values()))
        except ValueError:
            return None
        lists = [tree.down, tree.w, tree.p]
        kind = (f'topology="FAT_TREE" topo_parameters="{tree.levels};'
                + ";".join(",".join(map(str, x)) for x in lists) + '"')  # fmt: skip
    elif routing == "simgrid-dragonfly" and (said := network_of(topo)) is not None:
        q = said[1]
        if said[0] != "simgrid-dragonfly" or q["c"] != 1:
            return None  # over several chassis SimGrid's route is not always a chain
        kind = (f'topology="DRAGONFLY" topo_parameters="{q["g"]},1;1,1;{q["b"]},1;'
                f'{q["n"]}"')  # fmt: skip
    elif backbone is not None:  # FLAT with a backbone: host i - port i, ports - router
        bb = backbone.speed.mean if backbone.speed is not None else 0.0
        if backbone.speed is None or backbone.speed.sd or not bb > 0:
            return None
        bb_lat = backbone.latency.mean if backbone.latency is not None else 0.0
        bb_policy = "FATPIPE" if topo.fatpipe else "SHARED"
        kind = (f'router_id="p{count}" bb_bw="{_num(1.0 / bb)}Bps" bb_lat="{_num(bb_lat)}s" '
                f'bb_sharing_policy="{bb_policy}"')  # fmt: skip
    elif count == c + 1 and all(lk.connect == [i, count] for i, lk in enumerate(links, 1)):
        if len(links) != c:
            return None
        kind = f'router_id="p{count}"'  # FLAT: each host's link to the one router
    if kind is None:
        return None
    sp = next(iter(speed))
    policy = "SPLITDUPLEX" if topo.duplex is not None else "SHARED"
    out = _Writer(machine, topo, count, mask, compute, "Full")
    speeds = [_num(sp)]  # the exact time per byte of every cluster link (and backbone)
    if backbone is not None:
        speeds.append(_num(backbone.speed.mean))
    out.prop("speed", " ".join(speeds))
    types = {topo.types.get(p, 0) for p in compute}
    switch_types = {topo.types.get(p, 0) for p in out.routers}
    if len(types) != 1 or len(switch_types) > 1:
        return None
    host_type = types.pop()
    out.prop("host-type", host_type)
    if switch_types:
        out.prop("switch-type", switch_types.pop())
    bandwidth = _num(1.0 / sp, f"the links' bandwidth (1 / their speed {sp!r})")
    out.lines.append(f'    <cluster id="cluster" prefix="p" suffix="" radical="1-{c}" '
                     f'speed="{out.speed(host_type)}" bw="{bandwidth}Bps" '
                     f'lat="{_num(next(iter(lat)))}s" '
                     f'sharing_policy="{policy}" {kind}/>')  # fmt: skip
    made = out.done()
    try:
        back = import_text(made.text, "the export")
    except (ValueError, budget.BudgetError):
        return None
    if back.machine.hardware() != topo:
        return None
    return made


def _backbone(topo, links: list, count: int, c: int):  # noqa: ANN001, ANN202
    """The backbone link of a FLAT cluster with one, as the import builds it: compute
    ``i`` linked to switch ``c + i`` (its port), then one link over the ports and the
    router ``2c + 1``, last; or None."""
    if count != 2 * c + 1 or len(links) != c + 1 or c < 1:
        return None
    if any(lk.connect != [i, c + i] for i, lk in enumerate(links[:c], 1)):
        return None
    if links[c].connect != list(range(c + 1, 2 * c + 2)):
        return None
    return links[c]


# --------------------------------------------------------------------------- layers


def _as_layers(machine: Machine, topo, count: int, mask, compute: list[int]) -> Exported | None:  # noqa: ANN001
    """A dimension-order routing (a mesh, a torus, a hypercube) as a ``DijkstraCache``
    zone of layers whose one shortest route is PARASOL's, or None for another routing.

    With D the dimensions a route corrects (in its order ``a_1 .. a_D``), every processor
    ``p`` has a helper router in each layer 1..D-1, and there are routes from ``p`` in
    layer k - 1 (layer 0: the host) to each ``q`` in layer k (layer D: the host) that
    differs from ``p`` only along ``a_k``, crossing PARASOL's links from ``p`` to ``q``
    and one more link, ``parasol-hop-k-q`` (a FATPIPE link a thousand times wider than
    the widest link, of no latency: it bounds no flow and adds no time; one a layer's
    processor, not one for all: a link every flow crosses makes SimGrid's default lazy
    update miss rates, tests/simgrid/test_flow_simgrid.py). A route from host to host
    through the layers corrects each dimension once, in order: PARASOL's route, with D
    more links. Any other way through the layers goes round them
    again and crosses at least D more links, so SimGrid's shortest route (fewest links)
    is that one, whatever its tie-break."""
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of
    from parasol_core.topology.routing import get_routing
    from parasol_core.topology.steps import grid_of
    from parasol_core.topology.techniques import (
        HypercubeRouting,
        MeshRouting,
        NDRouting,
        TorusRouting,
    )

    if len(compute) != count or count < 2:
        return None
    try:
        index = index_of(topo)
        technique = get_routing(topo.routing or "")
        if not isinstance(technique, (MeshRouting, TorusRouting, NDRouting, HypercubeRouting)):
            return None
        shape, _ = grid_of(index.layout, technique)
    except RoutingError:
        return None
    if shape.size != count:
        return None
    axes = getattr(technique, "axes", tuple(range(shape.ndim)))
    axes = tuple(a for a in axes if a < shape.ndim and shape.dims[a] > 1)
    if isinstance(technique, HypercubeRouting):
        axes = tuple(range(shape.ndim))
    if not axes:
        return None
    d = len(axes)
    segments = sum(count * shape.dims[a] for a in axes)
    budget.check(f"the routes of {counted(d, 'layer', grouped=False)} over "
                 f"{counted(count, 'processor')}", segments, MAX_ROUTES,
                 "routes", "a layer has a route from each processor to each along its "
                 "dimension")  # fmt: skip
    procs = np.arange(1, count + 1, dtype=np.int64)
    coords = shape.coordinates_array(procs)
    strides = np.asarray(shape.strides, dtype=np.int64)
    parts_src, parts_dst, parts_layer = [], [], []
    for k, a in enumerate(axes):
        n = shape.dims[a]
        src = np.repeat(procs, n)
        target = np.tile(np.arange(n, dtype=np.int64), count)
        dst = src + (target - np.repeat(coords[:, a], n)) * strides[a]
        parts_src.append(src)
        parts_dst.append(dst)
        parts_layer.append(np.full(src.shape[0], k, dtype=np.int64))
    src, dst = np.concatenate(parts_src), np.concatenate(parts_dst)
    layer = np.concatenate(parts_layer)
    moving = src != dst
    try:
        batch = index.routes(src[moving], dst[moving])
    except RoutingError as e:
        raise ExportError(
            f"PARASOL cannot route the model ({e}); SimGrid needs every route"
        ) from None
    budget.check(f"the routes of {counted(d, 'layer', grouped=False)} over "
                 f"{counted(count, 'processor')}",
                 int(batch.link_offsets[-1]) + segments, MAX_ROUTE_LINKS, "link references")  # fmt: skip
    out = _Writer(machine, topo, count, mask, compute, "DijkstraCache")
    out.prop("layers", " ".join(map(str, axes)))
    out.hosts(topo, compute)
    for k in range(1, d):
        out.lines.extend(f'    <router id="parasol-via-{k}-{p}"/>' for p in range(1, count + 1))
    usable, directed = out.links(topo)
    widest = max(1.0 / _speed_of(lk) for lk in topo.links if lk.connect) if usable else 1.0
    for k in range(1, d + 1):  # one into each processor of each layer
        out.lines.extend(f'    <link id="parasol-hop-{k}-{p}" bandwidth="{_num(widest * 1000)}Bps" '
                         'latency="0s" sharing_policy="FATPIPE"/>' for p in range(1, count + 1))  # fmt: skip

    def node(p: int, k: int) -> str:
        return f"p{p}" if k in (0, d) else f"parasol-via-{k}-{p}"

    lines = out.lines
    routed = iter(batch)
    for a, b, k, moves in zip(src.tolist(), dst.tolist(), layer.tolist(), moving.tolist()):
        if d == 1 and not moves:
            continue  # from a host to itself
        lines.append(f'    <route src="{node(a, k)}" dst="{node(b, k + 1)}" symmetrical="NO">')
        # SimGrid's Dijkstra zone gives each route's links in the reverse of the file's
        # order: written last link first (the hop before them), so that SimGrid's route
        # is PARASOL's, with a hop after each dimension
        lines.append(f'      <link_ctn id="parasol-hop-{k + 1}-{b}"/>')
        if moves:
            r = next(routed)
            for j in range(len(r.links) - 1, -1, -1):
                lid = r.links[j]
                way = ""
                if lid in directed:  # UP from the first processor of connect to the second
                    way = (
                        ' direction="UP"'
                        if r.processors[j] == usable[lid][0]
                        else ' direction="DOWN"'
                    )
                lines.append(f'      <link_ctn id="l{lid}"{way}/>')
        lines.append("    </route>")
    out.notes.append(f"PARASOL's {topo.routing} routing as a DijkstraCache zone of {d} "
                     f"layers ({d - 1} helper router{'s' if d != 2 else ''} a processor, and "
                     "'parasol-hop' links that bound no flow): SimGrid's shortest route "
                     "through them is PARASOL's")  # fmt: skip
    return out.done()


# --------------------------------------------------------------------------- router zones

#: routings whose route between two compute processors is the link from the first to
#: its router, a route between the two routers that depends on nothing else, and the
#: link from there to the second (tests/simgrid/test_simgrid_router_zones.py)
_BY_ROUTER = ("dragonfly-minimal",)


def _as_zones(machine: Machine, topo, count: int, mask, compute: list[int]) -> Exported | None:  # noqa: ANN001
    """A dragonfly routed ``dragonfly-minimal`` as a ``Full`` zone of zones, one a router
    (a ``Full`` zone of the router, its compute processors and their links, with explicit
    routes between them), and a ``zoneRoute`` between every two routers' zones, gateways
    the two routers, over PARASOL's links between them; or None for another topology.

    SimGrid routes host ``s`` to host ``d`` of another zone by the route in ``s``'s zone
    from ``s`` to the gateway (its one link), the zoneRoute, and the route from the other
    gateway to ``d`` (its one link): PARASOL's route, whose router-to-router part depends
    only on the two routers under this routing (checked on two processors of each router
    where it has two). R routers make R (R - 1) / 2 zone routes, not C (C - 1) of C
    compute processors: a 17 x 8 x 8 x 4 dragonfly 9,180 routes, not 1,182,656.

    Where every two groups share one global link (:func:`_groups_of`), one level more:
    a zone a group, of its routers' zones (a zone route between every two of its
    routers), and a zone route between every two groups whose gateways are the ends of
    their link: G (G - 1) / 2 + G A (A - 1) / 2 zone routes, the route so composed
    compared with PARASOL's first (:func:`_composed`). The candidate is read back by
    the import and kept only if that gives the same topology and no route between
    hosts that differs from PARASOL's."""
    from parasol_core.simgrid.importer import import_text
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of

    if (topo.routing or "") not in _BY_ROUTER or len(compute) < 2:
        return None
    if (topo.name or "").startswith("parasol-"):
        return None  # a name the zones of routers take
    router_of: dict[int, int] = {}
    own: dict[int, object] = {}  # compute processor -> its one link
    for link in topo.links:
        ends = link.connect
        if link.id is None or not ends:
            return None
        hosts = [p for p in ends if not mask[p]]
        if not hosts:
            continue
        if len(ends) != 2 or len(hosts) != 1 or hosts[0] in own:
            return None  # a compute processor on one link, to one router, only
        own[hosts[0]] = link
        router_of[hosts[0]] = ends[0] if ends[1] == hosts[0] else ends[1]
    if len(own) != len(compute):
        return None
    routers = sorted(set(router_of.values()))
    if routers != _switches(mask, count):
        return None  # a router with no compute processor has no zone to be in
    terminals: dict[int, list[int]] = {r: [] for r in routers}
    for p in compute:
        terminals[router_of[p]].append(p)
    n = len(routers)
    groups, gateways = _groups_of(topo, count, routers, len(compute))
    if groups is None:  # a zone route between every two routers
        ra, rb = np.triu_indices(n, 1)
        pa, pb = np.asarray(routers)[ra], np.asarray(routers)[rb]
        what = f"the zone routes between {n:,} routers"
    else:  # between the routers of each group, and between every two groups
        pa = [g[i] for g in groups for i in range(len(g)) for _ in range(i + 1, len(g))]
        pb = [g[j] for g in groups for i in range(len(g)) for j in range(i + 1, len(g))]
        pa += [x for x, _ in gateways.values()]
        pb += [y for _, y in gateways.values()]
        pa, pb = np.asarray(pa, dtype=np.int64), np.asarray(pb, dtype=np.int64)
        what = f"the zone routes of {counted(len(groups), 'group')} of {counted(n // len(groups), 'router')}"
    pairs = int(pa.shape[0])
    budget.check(what, pairs, MAX_ROUTES, "routes",
                 "a SimGrid Full zone lists every pair of its zones")  # fmt: skip
    first = {r: terminals[r][0] for r in routers}
    last = {r: terminals[r][-1] for r in routers}
    fa = np.asarray([first[r] for r in pa.tolist()], dtype=np.int64)
    fb = np.asarray([first[r] for r in pb.tolist()], dtype=np.int64)
    la = np.asarray([last[r] for r in pa.tolist()], dtype=np.int64)
    lb = np.asarray([last[r] for r in pb.tolist()], dtype=np.int64)
    try:
        index = index_of(topo)
        there = index.routes(np.concatenate((fa, la)), np.concatenate((fb, lb)))
        back = index.routes(fb, fa)
    except RoutingError as e:
        raise ExportError(
            f"PARASOL cannot route the model ({e}); SimGrid needs every route"
        ) from None
    budget.check(what, int(there.link_offsets[-1]) + int(back.link_offsets[-1]),
                 MAX_ROUTE_LINKS, "link references")  # fmt: skip
    # the route from router a to router b: (processors, links), PARASOL's
    seg: dict[tuple[int, int], tuple[tuple, tuple]] = {}
    for k, (a, b) in enumerate(zip(pa.tolist(), pb.tolist())):
        r, r2, w = there[k], there[pairs + k], back[k]
        if r.links[1:-1] != r2.links[1:-1] or r.processors[1:-1] != r2.processors[1:-1]:
            return None  # the route between the routers depends on more than them
        seg[(a, b)] = (r.processors[1:-1], r.links[1:-1])
        seg[(b, a)] = (w.processors[1:-1], w.links[1:-1])
    own_id = {q: lk.id for q, lk in own.items()}
    if groups is not None and not _composed(
        index, compute, router_of, own_id, groups, gateways, seg
    ):
        return None
    out = _Writer(machine, topo, count, mask, compute, "Full")
    lines = out.lines
    usable: dict[int, list[int]] = {}
    directed: set[int] = set()

    def add_links(links: list, indent: str) -> None:
        u, d = out.links(topo, links, indent)
        usable.update(u)
        directed.update(d)

    def router_zone(r: int, ind: str, with_links: bool) -> None:
        lines.append(f'{ind}<zone id="parasol-router-p{r}" routing="Full">')
        for p in terminals[r]:
            lines.append(f'{ind}  <host id="p{p}" speed="{out.speed(topo.types.get(p, 0))}">')
            out.prop("type", topo.types.get(p, 0), ind + "    ")
            lines.append(f"{ind}  </host>")
        lines.append(f'{ind}  <router id="p{r}"/>')
        if with_links:
            add_links([own[p] for p in terminals[r]], ind + "  ")
        for i, p in enumerate(terminals[r]):
            lid = own[p].id
            _chain(lines, f'<route src="p{p}" dst="p{r}">', (p, r), (lid,), usable, directed,
                   ind + "  ")  # fmt: skip
            for q in terminals[r][i + 1 :]:
                _chain(lines, f'<route src="p{p}" dst="p{q}">', (p, r, q), (lid, own[q].id),
                       usable, directed, ind + "  ")  # fmt: skip
        lines.append(f"{ind}</zone>")

    def zone_route(za: str, zb: str, a: int, b: int, ind: str) -> None:
        procs, links = seg[(a, b)]
        bprocs, blinks = seg[(b, a)]
        same = blinks == tuple(reversed(links))
        sym = "" if same else ' symmetrical="NO"'
        head = f'<zoneRoute src="{za}" dst="{zb}" gw_src="p{a}" gw_dst="p{b}"{sym}>'
        _chain(lines, head, procs, links, usable, directed, ind)
        if not same:
            head = (f'<zoneRoute src="{zb}" dst="{za}" gw_src="p{b}" gw_dst="p{a}" '
                    'symmetrical="NO">')  # fmt: skip
            _chain(lines, head, bprocs, blinks, usable, directed, ind)

    if groups is None:
        for r in routers:
            router_zone(r, "    ", True)
        add_links([lk for lk in topo.links if lk.id not in usable], "    ")
        for a, b in zip(pa.tolist(), pb.tolist()):
            zone_route(f"parasol-router-p{a}", f"parasol-router-p{b}", a, b, "    ")
        said = f"a Full zone of {n:,} zones, one a router and its processors"
    else:
        # a link is defined in the zone whose routes cross it, after the zones in it (as
        # SimGrid's DTD wants): the import puts them back in the order of their ids
        out.prop("link-order", "id")
        group_of = {r: g for g, members in enumerate(groups) for r in members}
        local: list[list] = [[] for _ in groups]  # the links between a group's routers
        for lk in topo.links:
            ends = lk.connect
            if mask[ends[0]] and all(group_of[p] == group_of[ends[0]] for p in ends):
                local[group_of[ends[0]]].append(lk)
        for g, members in enumerate(groups, 1):
            lines.append(f'    <zone id="parasol-group-{g}" routing="Full">')
            for r in members:
                router_zone(r, "      ", True)
            add_links(local[g - 1], "      ")
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    zone_route(f"parasol-router-p{a}", f"parasol-router-p{b}", a, b, "      ")
            lines.append("    </zone>")
        add_links([lk for lk in topo.links if lk.id not in usable], "    ")
        for (i, j), (x, y) in gateways.items():
            zone_route(f"parasol-group-{i + 1}", f"parasol-group-{j + 1}", x, y, "    ")
        said = (f"a Full zone of {counted(len(groups), 'zone')}, one a group, each of zones of one "
                "router and its processors")  # fmt: skip
    out.notes.append(f"PARASOL's {topo.routing} routing as {said}, with a zone route between "
                     "every two: SimGrid's routes are PARASOL's")  # fmt: skip
    made = out.done()
    try:
        again = import_text(made.text, "the export")
    except (ValueError, budget.BudgetError):
        return None
    if again.machine.hardware() != topo or any("differ from PARASOL" in n for n in again.notes):
        return None  # (the import compares the routes between hosts with PARASOL's)
    return made


# --------------------------------------------------------------------------- weighted zone


def _as_weighted(machine: Machine, topo, count: int, mask, compute: list[int]) -> Exported | None:  # noqa: ANN001
    """A dragonfly routed ``dragonfly-minimal`` as one SimGrid ``DijkstraCache`` zone whose
    routes are its links, weighted so that SimGrid's shortest route is PARASOL's (issue 36,
    docs/simgrid.md "Export"): linear in the links, for any number K of global links
    between two groups (the zones of routers it replaces grew as the routers squared and
    were refused past about 1,414 routers).

    SimGrid 3.32's Dijkstra zone takes the route of the fewest link references
    (``DijkstraZone::get_local_route``: an edge costs its route's ``link_list_.size()``),
    a strictly cheaper one only replacing another. Each PARASOL link is one route (an edge)
    between its two processors, crossing the link and, but for a compute processor's own
    link, ``parasol-pad-ID`` again and again: a FATPIPE link of no latency a thousand times
    wider than the widest link, which bounds no flow and adds no time. A local link costs
    ``L = K + 1``, the global link ``k`` (0-based, the ``k``-th between its two groups)
    ``W + k`` with ``W = 2 L + K``. A route from router ``a`` to router ``b`` of another
    group over global link ``k`` costs ``L h + W + k``, ``h`` the local hops (0 to 2):
    ordered by ``h`` and then by ``k``, as ``dragonfly-minimal`` chooses (fewest hops, then
    the lowest ``k``: topology/switched.py); a route over two global links costs at least
    ``2 W``, more than any minimal one (``2 L + W + K - 1``); within a group one local hop
    (``L``) is cheaper than any way out of it and back. So the one cheapest route is
    PARASOL's (every pair of 2,000 to 3,000 checked against SimGrid). Of
    links joining the same two routers only the lowest ``k`` is an edge (no route takes the
    others; they are written with their ends, for the import). Routes: one a link; link
    references: about ``L`` a local link and ``3 L`` a global one.

    None for another topology, or where the import does not give the same topology
    back."""
    from parasol_core.simgrid.importer import import_text
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of
    from parasol_core.topology.switched import dragonfly_of

    if (topo.routing or "") != "dragonfly-minimal" or len(compute) < 2:
        return None
    try:
        fly = dragonfly_of(index_of(topo).layout, "dragonfly-minimal")
    except RoutingError:
        return None
    if fly.per_pair == 1 or compute != list(range(1, fly.terminals + 1)):
        return None  # (one link a pair: zones of groups; terminals must be the hosts)
    links = [lk for lk in topo.links if lk.id is not None and lk.connect]
    pairs = fly.pairs().tolist()
    if (
        len(links) != len(topo.links)
        or len(links) != len(pairs)
        or any(sorted(lk.connect) != sorted(pq) for lk, pq in zip(links, pairs))
    ):
        return None  # not the generator's links, in its order
    t = fly.terminals
    k_most = max(fly.per_pair, 1)
    local, wide = k_most + 1, 2 * (k_most + 1) + k_most
    group = [0] * (count + 1)
    for p in range(t + 1, count + 1):
        group[p] = (p - t - 1) // fly.a
    edges: list[tuple[object, int]] = []  # (link, references of its pad link)
    taken: set[tuple[int, int]] = set()
    nth: dict[tuple[int, int], int] = {}
    for lk in links:
        a, b = lk.connect
        ends = (min(a, b), max(a, b))
        if a <= t or b <= t:
            cost = 1
        elif group[a] == group[b]:
            cost = local
        else:
            key = (min(group[a], group[b]), max(group[a], group[b]))
            k = nth.get(key, 0)
            nth[key] = k + 1
            cost = wide + k
        if ends in taken:
            continue  # a parallel link of a higher k: no route takes it
        taken.add(ends)
        edges.append((lk, cost - 1))
    what = f"the weighted routes of a dragonfly of {counted(len(links), 'link')}"
    budget.check(what, len(edges), MAX_ROUTES, "routes", "one a link")
    budget.check(what, sum(1 + pads for _, pads in edges), MAX_ROUTE_LINKS, "link references")
    out = _Writer(machine, topo, count, mask, compute, "DijkstraCache")
    out.prop("weighted", "pads")
    out.hosts(topo, compute)
    _, directed = out.links(topo)
    widest = max(1.0 / _speed_of(lk) for lk in links)
    lines = out.lines
    pad_bw = _num(widest * 1000, "the pad links' bandwidth")
    for lk, pads in edges:
        if pads:
            lines.append(f'    <link id="parasol-pad-{lk.id}" bandwidth="{pad_bw}Bps" '
                         'latency="0s" sharing_policy="FATPIPE"/>')  # fmt: skip
    for lk, pads in edges:
        a, b = lk.connect
        way = ' direction="UP"' if lk.id in directed else ""
        pad = f'<link_ctn id="parasol-pad-{lk.id}"/>' * pads
        lines.append(
            f'    <route src="p{a}" dst="p{b}"><link_ctn id="l{lk.id}"{way}/>{pad}</route>'
        )
    out.notes.append(
        f"PARASOL's dragonfly-minimal routing as one DijkstraCache zone of {len(edges):,} "
        "routes, one a link, weighted by 'parasol-pad' links that bound no flow: SimGrid's "
        "shortest route is PARASOL's"
    )
    made = out.done()
    try:
        again = import_text(made.text, "the export")
    except (ValueError, budget.BudgetError):
        return None
    if again.machine.hardware() != topo:
        return None
    return made


#: the most pairs of compute processors on which a zone of groups is checked
CHECKED_PAIRS = 20_000


def _groups_of(topo, count: int, routers: list[int], c: int):  # noqa: ANN001, ANN202
    """A PARASOL dragonfly with one global link between every two groups: its routers
    by group, and the two ends of the link from group i to group j (i < j); else
    (None, None). There the route between two groups always crosses that link, from
    wherever it leaves to wherever it lands, so SimGrid's zone route between the two
    groups' zones, whose gateways are its ends, is PARASOL's."""
    from parasol_core.topology.switched import Dragonfly
    from parasol_core.topology.switches import network_of

    said = network_of(topo)
    if said is None or said[0] != "dragonfly":
        return None, None
    try:
        fly = Dragonfly.of(tuple(said[1].values()))
    except ValueError:
        return None, None
    t = fly.terminals
    if fly.g < 2 or fly.per_pair != 1 or fly.count != count or t != c:
        return None, None
    if routers != list(range(t + 1, count + 1)):
        return None, None
    ids = [link.id for link in topo.links]
    if any(b <= a for a, b in zip(ids, ids[1:])):
        return None, None  # the import would put them in the order of their ids
    groups = [routers[g * fly.a : (g + 1) * fly.a] for g in range(fly.g)]
    gateways = {}
    for i in range(fly.g):
        for j in range(i + 1, fly.g):
            x = int(fly.gateway(np.int64(i), np.int64(j), 0))
            y = int(fly.gateway(np.int64(j), np.int64(i), 0))
            gateways[(i, j)] = (t + x + 1, t + y + 1)
    return groups, gateways


def _composed(index, compute: list[int], router_of: dict, own: dict, groups, gateways,  # noqa: ANN001
              seg: dict) -> bool:  # fmt: skip
    """Whether SimGrid's route through the zones of groups (the zone route's gateways
    reached within each group) is PARASOL's on every ordered pair of compute processors,
    or on :data:`CHECKED_PAIRS` of them drawn at random (seeded) where there are more."""
    group_of = {r: g for g, members in enumerate(groups) for r in members}
    c = len(compute)
    procs = np.asarray(compute, dtype=np.int64)
    if c * (c - 1) <= CHECKED_PAIRS:
        a, b = np.meshgrid(procs, procs, indexing="ij")
        keep = a != b
        src, dst = a[keep], b[keep]
    else:
        rng = np.random.default_rng(36)
        i = rng.integers(0, c, CHECKED_PAIRS)
        j = (i + rng.integers(1, c, CHECKED_PAIRS)) % c
        src, dst = procs[i], procs[j]
    batch = index.routes(src, dst)

    def within(a: int, b: int) -> tuple:
        return () if a == b else seg[(a, b)][1]

    for s, d, route in zip(src.tolist(), dst.tolist(), batch):
        ra, rb = router_of[s], router_of[d]
        gi, gj = group_of[ra], group_of[rb]
        if gi == gj:
            middle = within(ra, rb)
        else:
            x, y = gateways[(min(gi, gj), max(gi, gj))]
            if gi > gj:
                x, y = y, x
            middle = within(ra, x) + seg[(x, y)][1] + within(y, rb)
        if tuple(route.links) != (own[s], *middle, own[d]):
            return False
    return True


def _switches(mask, count: int) -> list[int]:  # noqa: ANN001
    """The switches' numbers, ascending."""
    return [p for p in range(1, count + 1) if mask[p]]


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
    head = f'<route src="p{r.processors[0]}" dst="p{r.processors[-1]}"{sym}>'
    _chain(lines, head, r.processors, r.links, usable, directed)


def _chain(lines: list[str], head: str, procs, links, usable: dict[int, list[int]],  # noqa: ANN001
           directed: set[int], indent: str = "    ") -> None:  # fmt: skip
    """A ``<route>`` or ``<zoneRoute>`` (its opening tag ``head``) over ``links``, the
    ``k``-th crossed from ``procs[k]``; a split-duplex link names its direction."""
    lines.append(indent + head)
    for k, lid in enumerate(links):
        direction = ""
        if lid in directed:  # UP is from the first processor listed to the second
            direction = ' direction="UP"' if procs[k] == usable[lid][0] else ' direction="DOWN"'
        lines.append(f'{indent}  <link_ctn id="l{lid}"{direction}/>')
    lines.append(indent + head[: head.index(" ")].replace("<", "</") + ">")
