"""A SimGrid platform file (version 4.1) as a PARASOL model (docs/simgrid.md).

Hosts become compute processors, routers and the switches of clusters become switch
processors (``# piui: role = switch``), SimGrid links become PARASOL links with
``latency`` in seconds and ``speed = 1 / bandwidth`` in seconds per byte. A SimGrid link
has no ends of its own: routes list the links they cross. The ends are read from the
routes (a route of one link joins its two ends; along a route of several, each link
starts where the previous one ended; where that cannot be told, an implicit switch
stands between two links) or, in a file PIUI exported, from the link's
``parasol:connect`` property. Clusters are expanded as SimGrid 3.32 builds them (FLAT,
TORUS, FAT_TREE, DRAGONFLY). What has no PARASOL counterpart is listed in
``Imported.notes``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from parasol_core.base import budget
from parasol_core.base.limits import printable
from parasol_core.base.numeric import (
    SMALLEST_NORMAL,
    ValueRangeError,
    is_whole,
    read_float,
    read_int,
    why_not_number,
)
from parasol_core.base.words import counted
from parasol_core.model import Link, Machine, Processor, Timing, Topology
from parasol_core.simgrid.units import (
    UnitError,
    flops_text,
    parse_bandwidth,
    parse_speeds,
    parse_time,
)
from parasol_core.simgrid.xmlread import Element, PlatformError, parse_bytes, parse_file
from parasol_core.syntax.annotations import (
    Zone,
    check_names,
    check_network,
    check_zones,
    link_list_text,
)
from parasol_core.topology import generators
from parasol_core.topology.shape import declared_shape

ROUTED_ZONES = ("Full", "Floyd", "Dijkstra", "DijkstraCache")
CLUSTER_TOPOLOGIES = ("FLAT", "TORUS", "FAT_TREE", "DRAGONFLY")
PREFIX = "parasol:"  # properties PIUI's export writes, read back by the import
_NODE_NAME = re.compile(r"p([1-9][0-9]{0,17})")
#: the most digits a whole number of a platform file is read with (numbers past any
#: budget; int() of a 5,000-digit text is refused by Python itself)
_MAX_DIGITS = 18


@dataclass
class Imported:
    """A platform read as a model, and what did not carry over (one line each)."""

    machine: Machine
    notes: list[str]
    #: each processor's name in the platform (host, router or implicit switch), by number
    names: dict[int, str] = field(default_factory=dict)


@dataclass
class _Link:
    name: str
    latency: float
    bandwidth: float
    policy: str
    line: int
    ends: list[str] = field(default_factory=list)
    fixed: bool = False  # ends known from the construction, not inferred
    props: dict[str, str] = field(default_factory=dict)


@dataclass
class _Chain:
    """A route: from ``src`` over ``links`` to ``dst`` (link names in order)."""

    src: str
    dst: str
    links: list[str]
    line: int
    explicit: bool  # a Full zone's route between hosts (compared with PARASOL's)
    symmetrical: bool = True  # the way back is the same links reversed


SHOWN_CHARS = 80  # the most of a name from the file a note or message repeats


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    """A name from the file as a note or message repeats it: control characters escaped
    (a '&#10;' in a host id cannot start a line of its own), at most SHOWN_CHARS of it
    (a 60 MB host id is not echoed whole)."""
    text = str(text)
    if len(text) <= limit:
        return printable(text)
    return f"{printable(text[:limit])}… ({counted(len(text), 'character')})"


class _Notes:
    """What does not carry over, counted by kind so a large file gives a short list."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.examples: dict[str, str] = {}

    def add(self, kind: str, example: str = "") -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if example and kind not in self.examples:
            self.examples[kind] = shown(example)

    def lines(self) -> list[str]:
        out = []
        for kind, n in self.counts.items():
            ex = self.examples.get(kind)
            out.append(f"{kind}" + (f" ({n}; first: {ex})" if ex and n > 1 else
                                    f" ({ex})" if ex else f" ({n})" if n > 1 else ""))  # fmt: skip
        return out


class _Platform:
    def __init__(self, source: str) -> None:
        self.source = source
        self.hosts: list[str] = []
        self.switches: list[str] = []
        self.kind: dict[str, str] = {}  # node name -> "host" | "switch"
        self.host_props: dict[str, dict[str, str]] = {}
        self.host_speed: dict[str, float] = {}  # flops a second (its first power state)
        self.links: dict[str, _Link] = {}
        self.chains: list[_Chain] = []
        self.zone_props: dict[str, str] = {}
        self.notes = _Notes()
        self.size = 0  # processors + links made so far (budget.MAX_IMPORTED)
        self.spelt = 0  # characters of the names made so far (budget.MAX_IMPORT_NAMES)
        self.clusters: list[tuple[str, str, dict]] = []  # (id, topology, facts)
        self.special_zones: set[str] = set()  # TORUS, FAT_TREE and DRAGONFLY clusters
        # a TORUS, FAT_TREE or DRAGONFLY cluster's hosts -> its id, and its gateway (a host of
        # it a zone route names) with the route's line: the cluster routes itself
        # inside a larger platform (a '# piui: zones' region, topology/zoned.py)
        self.cluster_of_host: dict[str, str] = {}
        self.gateways: dict[str, tuple[str, int]] = {}
        self.gateway_clash: str | None = None
        self.zones: set[str] = set()  # ids of the zones and clusters read so far
        self.zone_of_router: dict[str, str] = {}
        self.floyd = False

    def error(self, message: str, el: Element | None) -> PlatformError:
        return PlatformError(message, el.line if el is not None else None, self.source)

    def grow(self, n: int, what: str) -> None:
        """Count ``n`` more processors and links, before they are made."""
        self.size += n
        budget.check(what, self.size, budget.current().imported, "processors and links",
                     "a platform's hosts, routers and links together")  # fmt: skip

    def spell(self, chars: int, what: str) -> None:
        """Count ``chars`` more characters of names the import makes (a cluster's, the
        implicit switches'), before they are made: the memory they take grows with
        their length, which a count of elements does not see."""
        self.spelt += chars
        budget.check(what, self.spelt, budget.current().import_names, "characters of names",
                     "the names of the hosts, switches and links a platform's clusters "
                     "and routes make, together")  # fmt: skip

    def node(self, name: str, kind: str, el: Element) -> None:
        if name in self.kind:
            raise self.error(f"{name!r} is defined twice (hosts and routers share names)", el)
        self.kind[name] = kind
        (self.hosts if kind == "host" else self.switches).append(name)

    def link(self, link: _Link, el: Element) -> _Link:
        if link.name in self.links:
            raise self.error(f"link {link.name!r} is defined twice", el)
        self.links[link.name] = link
        return link


# --------------------------------------------------------------------------- values


def _attr(p: _Platform, el: Element, name: str) -> str:
    value = el.get(name)
    if value is None:
        raise p.error(f"<{el.tag}> needs the attribute {name!r}", el)
    return value


def _time(p: _Platform, el: Element, name: str, default: str | None = None) -> float:
    text = el.get(name, default)
    if text is None:
        raise p.error(f"<{el.tag}> needs the attribute {name!r}", el)
    try:
        value = parse_time(text, f"{name}")
    except UnitError as e:
        raise p.error(str(e), el) from None
    if value < 0:
        raise p.error(f"{name} {text!r} is negative", el)
    return value


def _bandwidth(p: _Platform, el: Element, name: str) -> float:
    text = _attr(p, el, name)
    try:
        values = [parse_bandwidth(part, name) for part in re.split(r"[;,]", text)]
    except UnitError as e:
        raise p.error(str(e), el) from None
    if len(values) > 1:
        p.notes.add("links with several bandwidths (Wifi rates): the first is used", text)
    if not values[0] > 0:
        raise p.error(f"{name} {text!r} must be positive", el)
    return values[0]


def _radicals(p: _Platform, el: Element) -> list[tuple[int, int]]:
    """``0-99`` or ``0-3,5,8-9``: the runs ``(first, last)``, their numbers counted
    (not made) as they are read."""
    text = _attr(p, el, "radical")
    parts = []
    total = 0
    for part in text.split(","):
        m = re.fullmatch(r"[ \t]*([0-9]{1,18})[ \t]*(?:-[ \t]*([0-9]{1,18})[ \t]*)?", part)
        if m is None:
            raise p.error(f"radical {text!r}: {part!r} is not N or N-M{why_not_number(part)}", el)
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise p.error(f"radical {text!r}: {part!r} goes downwards", el)
        total += b - a + 1
        budget.check(f"cluster {el.get('id')!r}", total, budget.current().imported, "hosts")
        parts.append((a, b))
    return parts


def _digit_count(a: int, b: int) -> int:
    """The digits of the numbers ``a`` to ``b`` written out, together (without writing
    them: a run of numbers of the same length at a time)."""
    total, lo = 0, a
    while lo <= b:
        width = len(str(lo))
        hi = min(b, 10**width - 1)
        total += (hi - lo + 1) * width
        lo = hi + 1
    return total


def _whole(text: str | None) -> int | None:
    """The whole number ``text`` writes in ASCII digits, or None (not one, or longer
    than any count a platform may hold)."""
    if text is None or not is_whole(text) or len(text) > _MAX_DIGITS:
        return None
    return int(text)


def _ints(p: _Platform, el: Element, text: str, what: str) -> list[int]:
    try:
        values = [_read_whole(x, "a whole number") for x in text.split(",")]
    except ValueRangeError as e:
        raise p.error(f"{what} {text!r} must be whole numbers separated by commas "
                      f"({e})", el) from None  # fmt: skip
    if any(v < 1 for v in values):
        raise p.error(f"{what} {text!r} must be positive", el)
    return values


# --------------------------------------------------------------------------- elements


_HOST_EXTRAS = {
    "core": "multi-core hosts (core > 1)",
    "pstate": "host power states (pstate)",
    "availability_file": "host availability and state traces",
    "speed_file": "host availability and state traces",
    "state_file": "host availability and state traces",
    "coordinates": "Vivaldi coordinates",
}


def _host(p: _Platform, el: Element) -> None:
    name = _attr(p, el, "id")
    p.grow(1, "the platform")
    p.node(name, "host", el)
    try:
        speeds = parse_speeds(_attr(p, el, "speed"), "speed")
    except UnitError as e:
        raise p.error(str(e), el) from None
    if len(speeds) > 1:
        p.notes.add("host power states after the first (each a speed)", name)
    p.host_speed[name] = speeds[0]
    if el.get("core", "1").strip() != "1":
        p.notes.add(_HOST_EXTRAS["core"], name)
    for key in ("pstate", "availability_file", "speed_file", "state_file", "coordinates"):
        if el.get(key):
            p.notes.add(_HOST_EXTRAS[key], name)
    props: dict[str, str] = {}
    for child in el.children:
        if child.tag == "prop":
            key, value = _attr(p, child, "id"), child.get("value", "")
            if key.startswith(PREFIX):
                props[key] = value
            else:
                p.notes.add("host properties (<prop>)", f"{name}: {key}")
        elif child.tag == "disk":
            p.notes.add("disks", f"{name}: {child.get('id')}")
        else:
            p.notes.add(f"<{child.tag}> in a host", name)
    p.host_props[name] = props


def _link(p: _Platform, el: Element) -> None:
    name = _attr(p, el, "id")
    p.grow(1, "the platform")
    bandwidth = _bandwidth(p, el, "bandwidth")
    latency = _time(p, el, "latency", "0")
    policy = el.get("sharing_policy", "SHARED")
    if policy == "FULLDUPLEX":
        policy = "SPLITDUPLEX"
    if policy not in ("SHARED", "SPLITDUPLEX", "FATPIPE", "WIFI"):
        raise p.error(f"sharing_policy {policy!r} is not one SimGrid knows", el)
    link = p.link(_Link(name, latency, bandwidth, policy, el.line), el)
    for child in el.children:
        if child.tag == "prop":
            key, value = _attr(p, child, "id"), child.get("value", "")
            if key.startswith(PREFIX):
                link.props[key] = value
            else:
                p.notes.add("link properties (<prop>)", f"{name}: {key}")
        else:
            p.notes.add(f"<{child.tag}> in a link", name)
    for key in ("bandwidth_file", "latency_file", "state_file"):
        if el.get(key):
            p.notes.add("link bandwidth, latency and state traces", name)
    connect = link.props.get(PREFIX + "connect")
    if connect is not None:
        link.ends = [f"p{n}" for n in connect.split()]
        link.fixed = True


def _route(p: _Platform, el: Element, zone: str, explicit: bool, gateway: bool) -> None:
    if gateway:
        src, dst = _attr(p, el, "gw_src"), _attr(p, el, "gw_dst")
        for zname in (_attr(p, el, "src"), _attr(p, el, "dst")):
            if zname not in p.zones:  # a reference to nothing, not a route over nothing
                raise p.error(f"the zone route names zone {shown(zname)!r}, which is no zone "
                              "or cluster defined before it", el)  # fmt: skip
        for zname, gw in ((_attr(p, el, "src"), src), (_attr(p, el, "dst"), dst)):
            if zname in p.special_zones and p.cluster_of_host.get(gw) != zname:
                raise p.error(f"the zone route's gateway {shown(gw)!r} of cluster {zname!r} "
                              "is none of its hosts", el)  # fmt: skip
            cid = p.cluster_of_host.get(gw)
            if cid is not None:
                first = p.gateways.setdefault(cid, (gw, el.line))
                if first[0] != gw and p.gateway_clash is None:
                    p.gateway_clash = (f"cluster {cid}: gateways {first[0]} (line {first[1]}) "
                                       f"and {gw} (line {el.line})")  # fmt: skip
    else:
        src, dst = _attr(p, el, "src"), _attr(p, el, "dst")
    links = []
    for child in el.children:
        if child.tag != "link_ctn":
            p.notes.add(f"<{child.tag}> in a route", f"line {child.line}")
            continue
        lname = child.attrs.get("id")
        if lname not in p.links:
            raise p.error(f"the route from {src!r} to {dst!r} crosses link {lname!r}, which is "
                          "not defined before it", child)  # fmt: skip
        links.append(lname)
    for end in (src, dst):
        if end not in p.kind:
            raise p.error(f"the route names {end!r}, which is no host or router defined "
                          "before it", el)  # fmt: skip
    symmetrical = el.get("symmetrical", "YES").upper() != "NO"
    p.chains.append(_Chain(src, dst, links, el.line, explicit and src != dst, symmetrical))


def _zone(p: _Platform, el: Element, top: bool) -> None:
    zid = el.get("id", "?")
    p.zones.add(zid)
    routing = el.get("routing", "None")
    if routing not in ROUTED_ZONES and routing != "None":
        raise p.error(f"zone {zid!r}: routing {routing!r} is not read (Full, Floyd, Dijkstra, "
                      "DijkstraCache and clusters are)", el)  # fmt: skip
    if routing in ("Floyd", "Dijkstra", "DijkstraCache") and not any(
        c.tag == "prop" and c.get("id") in (PREFIX + "layers", PREFIX + "weighted")
        for c in el.children
    ):
        p.floyd = True
    explicit = routing == "Full"
    layered = False  # PIUI's zone of layers: its helper routers, link and routes skipped
    for child in el.children:
        tag = child.tag
        if layered and (
            tag == "route"
            or (tag in ("router", "link") and (child.get("id") or "").startswith("parasol-"))
        ):
            continue  # fmt: skip
        if tag == "prop":
            key, value = _attr(p, child, "id"), child.get("value", "")
            if key.startswith(PREFIX) and top:
                p.zone_props[key] = value
                if key in (PREFIX + "layers", PREFIX + "weighted"):  # weighted: pad links
                    layered = True
            else:
                p.notes.add("zone properties (<prop>)", f"{zid}: {key}")
        elif tag == "host":
            _host(p, child)
        elif tag == "router":
            p.grow(1, "the platform")
            p.node(_attr(p, child, "id"), "switch", child)
        elif tag == "link":
            _link(p, child)
        elif tag in ("route", "zoneRoute", "ASroute"):
            _route(p, child, zid, explicit and tag == "route", gateway=tag != "route")
        elif tag in ("zone", "AS"):
            _zone(p, child, False)
        elif tag == "cluster":
            _cluster(p, child)
        elif tag in ("bypassRoute", "bypassZoneRoute", "bypassASroute"):
            p.notes.add("bypass routes", f"line {child.line}")
        elif tag in ("trace", "trace_connect"):
            p.notes.add("traces", f"line {child.line}")
        elif tag == "backbone":
            raise p.error("<backbone> outside a cluster is not read", child)
        else:
            p.notes.add(f"<{tag}> elements", f"line {child.line}")


# --------------------------------------------------------------------------- clusters

# A name a cluster makes beyond its hosts (``{id}_link_{k}``, ``{id}_switch_{level}_{j}``,
# ``{id}_port_{i}``, ``{id}_router_{i}``): the cluster's id and at most this much more
# (a word and two numbers of at most as many digits as the limits allow).
_NAME_EXTRA = 32


@dataclass
class _FatTree:
    levels: int
    m: list[int]  # children by level
    w: list[int]  # parents by level
    ports: list[int]  # links between a child and each parent, by level
    by_level: list[int]  # nodes by level: the hosts, then the switches of each level
    below: list[int]  # below[i]: the product of w[:i]
    links: int


@dataclass
class _Dragonfly:
    groups: int
    blue: int
    chassis: int
    black: int
    blades: int
    green: int
    nodes: int
    links: int


def _cluster(p: _Platform, el: Element) -> None:
    """A cluster, as SimGrid builds it. Everything it makes (hosts, switches, links and
    their names) is counted from its attributes before anything is made."""
    cid = _attr(p, el, "id")
    p.zones.add(cid)
    prefix, suffix = _attr(p, el, "prefix"), _attr(p, el, "suffix")
    spans = _radicals(p, el)
    topology = el.get("topology", "FLAT")
    if topology not in CLUSTER_TOPOLOGIES:
        raise p.error(f"cluster {cid!r}: topology {topology!r} is not one of "
                      f"{', '.join(CLUSTER_TOPOLOGIES)}", el)  # fmt: skip
    try:
        speeds = parse_speeds(_attr(p, el, "speed"), "speed")
    except UnitError as e:
        raise p.error(str(e), el) from None
    if len(speeds) > 1:
        p.notes.add("host power states after the first (each a speed)", f"cluster {cid}")
    if el.get("core", "1").strip() != "1":
        p.notes.add(_HOST_EXTRAS["core"], f"cluster {cid}")
    bw = _bandwidth(p, el, "bw")
    lat = _time(p, el, "lat")
    policy = el.get("sharing_policy", "SPLITDUPLEX")
    if policy == "FULLDUPLEX":
        policy = "SPLITDUPLEX"
    if el.get("limiter_link"):
        p.notes.add("cluster limiter links (a per-host bandwidth cap)", cid)
    if el.get("loopback_bw") or el.get("loopback_lat"):
        p.notes.add("loopback links (a message to oneself takes no time in PARASOL)", cid)
    for child in el.children:
        p.notes.add(f"<{child.tag}> in a cluster", cid)

    # what it makes besides its hosts, from its parameters alone
    params = el.get("topo_parameters", "")
    n = sum(b - a + 1 for a, b in spans)
    extra_chars = 0
    if topology == "FLAT":
        bb = el.get("bb_bw")
        bb_lat = _time(p, el, "bb_lat", "0s")
        router = el.get("router_id") or f"{prefix}{cid}_router{suffix}"
        has_bb = (bb is not None and bb != "") or bb_lat > 0
        bb_bw = _bandwidth(p, el, "bb_bw") if has_bb else None
        others = 1 + (2 * n + 1 if has_bb else n)  # the router (and ports), the links
        extra_chars = len(router)
    elif topology == "TORUS":
        dims = _torus_dims(p, el, cid, n, params)
        others = generators.generator_size("torus", dims) - n  # its links
    elif topology == "FAT_TREE":
        tree = _fat_tree_shape(p, el, cid, n, params)
        others = sum(tree.by_level[1:]) + tree.links
    else:
        fly = _dragonfly_shape(p, el, cid, n, params)
        routers = fly.groups * fly.chassis * fly.blades
        others = routers + fly.links
    p.grow(n + others, f"cluster {cid!r}")
    # the names: a 100,000-character prefix on 30,000 hosts is 3 GB of them
    p.spell(n * (len(prefix) + len(suffix)) + sum(_digit_count(a, b) for a, b in spans)
            + others * (len(cid) + _NAME_EXTRA) + extra_chars,
            f"the names of the hosts, switches and links of cluster {cid!r}")  # fmt: skip

    radicals = [i for a, b in spans for i in range(a, b + 1)]
    hosts = [f"{prefix}{i}{suffix}" for i in radicals]
    for name in hosts:
        p.node(name, "host", el)
        p.host_props[name] = {}
        p.host_speed[name] = speeds[0]
    facts: dict = {"hosts": hosts}

    def new_link(name: str, ends: list[str], bandwidth: float = bw, latency: float = lat,
                 pol: str = policy) -> None:  # fmt: skip
        p.link(_Link(name, latency, bandwidth, pol, el.line, ends, fixed=True), el)

    if topology == "FLAT":
        if bb_bw is None:
            p.node(router, "switch", el)
            for i, h in zip(radicals, hosts):
                new_link(f"{cid}_link_{i}", [h, router])
        else:
            ports = [f"{cid}_port_{i}" for i in radicals]
            for port in ports:
                p.node(port, "switch", el)
            p.node(router, "switch", el)
            for i, h, port in zip(radicals, hosts, ports):
                new_link(f"{cid}_link_{i}", [h, port])
            bb_policy = el.get("bb_sharing_policy", "SHARED")
            if bb_policy not in ("SHARED", "FATPIPE"):
                raise p.error(f"cluster {cid!r}: bb_sharing_policy {bb_policy!r} is not "
                              "SHARED or FATPIPE", el)  # fmt: skip
            new_link(f"{cid}_backbone", [*ports, router], bb_bw, bb_lat, bb_policy)
            facts["backbone"] = True
        p.zone_of_router[router] = cid
    elif topology == "TORUS":
        from parasol_core.topology.generators import grid_pair_array

        for k, (a, b) in enumerate(grid_pair_array(dims, wrap=True).tolist()):
            new_link(f"{cid}_link_{k + 1}", [hosts[a - 1], hosts[b - 1]])
        facts["dims"] = dims
        p.special_zones.add(cid)
        p.cluster_of_host.update(dict.fromkeys(hosts, cid))
    elif topology == "FAT_TREE":
        _fat_tree(p, el, cid, hosts, tree, new_link, facts)
        p.special_zones.add(cid)
        p.cluster_of_host.update(dict.fromkeys(hosts, cid))
    else:
        _dragonfly(p, el, cid, hosts, fly, bw, new_link, facts)
        p.special_zones.add(cid)
        p.cluster_of_host.update(dict.fromkeys(hosts, cid))
    p.clusters.append((cid, topology, facts))


def _torus_dims(p: _Platform, el: Element, cid: str, n: int, params: str) -> list[int]:
    dims = _ints(p, el, params, "topo_parameters")
    size = 1
    for d in dims:
        size *= d
        if size > n:  # no larger numbers than the hosts: they are counted
            break
    if size != n:
        shown = f"{size}" if size <= n else f"more than {n}"
        raise p.error(f"cluster {cid!r}: the torus {params} has "
                      f"{counted(shown, 'node', grouped=False)}, the "
                      f"radical gives {counted(n, 'host', grouped=False)}", el)  # fmt: skip
    if len(dims) > 6:
        raise p.error(f"cluster {cid!r}: a torus of {counted(len(dims), 'dimension')}; PARASOL's "
                      "tori have 1 to 6", el)  # fmt: skip
    return dims


def _fat_tree_shape(p: _Platform, el: Element, cid: str, n: int, params: str) -> _FatTree:
    """A FAT_TREE's levels and what they hold, in O(levels): the hosts are the product
    of m (checked against the radical as it grows), level i + 1 the product of
    w[:i + 1] and m[i + 1:]. Each count is held to the budget as soon as it is known, so
    neither a long list of levels nor large factors make numbers (or work) past it."""
    parts = params.split(";")
    if len(parts) != 4:
        raise p.error(f"cluster {cid!r}: FAT_TREE topo_parameters are "
                      f"'levels;children,...;parents,...;ports,...', got {params!r}", el)  # fmt: skip
    try:
        h = _read_whole(parts[0], "a number of levels")
    except ValueRangeError as e:
        raise p.error(f"cluster {cid!r}: {e}", el) from None
    m, w, ports = (_ints(p, el, x, "topo_parameters") for x in parts[1:])
    if h < 1 or not len(m) == len(w) == len(ports) == h:
        raise p.error(f"cluster {cid!r}: a fat tree of {counted(h, 'level', grouped=False)} "
                      f"needs {h} numbers in each "
                      f"list, got {params!r}", el)  # fmt: skip
    hosts_made = 1
    for x in m:
        hosts_made *= x
        if hosts_made > n:
            break
    if hosts_made != n:
        shown = f"{hosts_made}" if hosts_made <= n else f"more than {n}"
        raise p.error(f"cluster {cid!r}: the fat tree {params} has "
                      f"{counted(shown, 'node', grouped=False)}, the "
                      f"radical gives {counted(n, 'host', grouped=False)}", el)  # fmt: skip
    limit = budget.current().imported
    above = [1] * (h + 1)  # above[i]: the product of m[i:] (at most the hosts)
    for i in range(h - 1, -1, -1):
        above[i] = above[i + 1] * m[i]
    below = [1]  # below[i]: the product of w[:i]
    by_level = [n]
    made = n
    for i in range(h):
        below.append(below[i] * w[i])
        by_level.append(below[i + 1] * above[i + 1])
        made += by_level[i + 1] + by_level[i] * w[i] * ports[i]  # its switches, its links
        if p.size + made > limit:  # at least this many: the rest is not worked out
            budget.check(f"cluster {cid!r} (a fat tree of {counted(h, 'level')}, counted up to "
                         f"level {i + 1:,})", p.size + made, limit, "processors and links",
                         "a platform's hosts, routers and links together")  # fmt: skip
    links = sum(by_level[i] * w[i] * ports[i] for i in range(h))
    return _FatTree(h, m, w, ports, by_level, below, links)


def _fat_tree(p, el, cid, hosts, tree, new_link, facts) -> None:  # noqa: ANN001
    h, m, w, ports, by_level, below = (
        tree.levels,
        tree.m,
        tree.w,
        tree.ports,
        tree.by_level,
        tree.below,
    )
    names = [hosts]
    for level in range(1, h + 1):
        row = [f"{cid}_switch_{level}_{j}" for j in range(by_level[level])]
        for name in row:
            p.node(name, "switch", el)
        names.append(row)
    facts["switches"] = [x for row in names[1:] for x in row]
    # Parents as SimGrid's generate_labels and label rule give them: a node's label has
    # digit j counting to m[j] (j >= its level) or w[j] (below), digit 0 the fastest;
    # child c at level L and parent q at level L + 1 are joined when their labels are
    # equal but at digit L. With P the product of w[:L], that is c % P == q % P and
    # c // (P m[L]) == q // (P w[L]): child c's parents are q = (c // (P m[L])) P w[L] +
    # c % P + t P, t = 0 .. w[L] - 1, in SimGrid's order (ascending). No label is made
    # (h digits a node: h^2 work for h levels of one switch each).
    k = 0
    for level in range(h):
        step = below[level]
        child_span, parent_span = step * m[level], step * w[level]
        lower, upper = names[level], names[level + 1]
        for c in range(by_level[level]):
            first = (c // child_span) * parent_span + c % step
            for t in range(w[level]):
                parent = upper[first + t * step]
                for _ in range(ports[level]):
                    new_link(f"{cid}_link_{k}", [lower[c], parent])
                    k += 1
    facts.update(levels=h, m=m, w=w, ports=ports)
    k0 = m[0]
    if all(x == k0 for x in m) and w == [1] + [k0] * (h - 1) and all(x == 1 for x in ports):
        facts["network"] = f"fattree {k0} {h}"  # d-mod-k updown is SimGrid's routing there
    else:  # SimGrid's general fat tree: updown routes it as SimGrid does, parallel links too
        facts["network"] = " ".join(map(str, ["xgft", h, *m, *w, *ports]))


def _dragonfly_shape(p: _Platform, el: Element, cid: str, n: int, params: str) -> _Dragonfly:
    parts = params.split(";")
    try:
        if len(parts) != 4:
            raise ValueError
        (g, blue), (c, black), (b, green) = (
            tuple(_read_whole(x, "a whole number") for x in s.split(",")) for s in parts[:3]
        )
        nodes = _read_whole(parts[3], "a whole number")
    except ValueRangeError as e:
        raise p.error(f"cluster {cid!r}: DRAGONFLY topo_parameters: {e}", el) from None
    except ValueError:
        shown = params if len(params) <= 80 else params[:80] + "..."
        raise p.error(f"cluster {cid!r}: DRAGONFLY topo_parameters are 'groups,blue;"
                      f"chassis,black;routers,green;nodes', got {shown!r}", el) from None  # fmt: skip
    if min(g, blue, c, black, b, green, nodes) < 1:
        raise p.error(f"cluster {cid!r}: DRAGONFLY parameters must be positive: {params!r}", el)
    per_group = c * b
    if g * per_group * nodes != n:
        raise p.error(f"cluster {cid!r}: the dragonfly {params} has {g * per_group * nodes} "
                      f"nodes, the radical gives "
                      f"{counted(n, 'host', grouped=False)}", el)  # fmt: skip
    if g > per_group:
        raise p.error(f"cluster {cid!r}: {counted(g, 'group', grouped=False)} but {per_group} "
                      f"routers a group; SimGrid "
                      "links router n of each group to group n, so it needs as many routers "
                      "a group as groups", el)  # fmt: skip
    routers = g * per_group
    links = routers * nodes + g * c * b * (b - 1) // 2 + g * b * c * (c - 1) // 2 + g * (g - 1) // 2
    return _Dragonfly(g, blue, c, black, b, green, nodes, links)


def _dragonfly(p, el, cid, hosts, fly, bw, new_link, facts) -> None:  # noqa: ANN001
    g, blue, c, black = fly.groups, fly.blue, fly.chassis, fly.black
    b, green, nodes = fly.blades, fly.green, fly.nodes
    # the links of each colour have bw times their count: a bandwidth a double holds,
    # whose time per byte (its reciprocal) does too
    wide = {
        colour: _bandwidth_times(p, el, cid, bw, n, colour)
        for colour, n in (("green", green), ("black", black), ("blue", blue))
    }
    per_group = c * b
    routers = g * per_group
    rnames = [f"{cid}_router_{i}" for i in range(routers)]
    for name in rnames:
        p.node(name, "switch", el)
    facts["switches"] = rnames
    k = 0
    for i in range(routers):  # local links: router i to its nodes
        for j in range(nodes):
            new_link(f"{cid}_link_{k}", [rnames[i], hosts[i * nodes + j]])
            k += 1
    for i in range(g * c):  # green: all-to-all within a chassis
        for j in range(b):
            for kk in range(j + 1, b):
                new_link(f"{cid}_link_{k}", [rnames[i * b + j], rnames[i * b + kk]],
                         bandwidth=wide["green"])  # fmt: skip
                k += 1
    for i in range(g):  # black: same blade, other chassis of the group
        for j in range(c):
            for kk in range(j + 1, c):
                for blade in range(b):
                    a = i * per_group + j * b + blade
                    z = i * per_group + kk * b + blade
                    new_link(f"{cid}_link_{k}", [rnames[a], rnames[z]],
                             bandwidth=wide["black"])  # fmt: skip
                    k += 1
    for i in range(g):  # blue: router j of group i to router i of group j
        for j in range(i + 1, g):
            new_link(f"{cid}_link_{k}", [rnames[i * per_group + j], rnames[j * per_group + i]],
                     bandwidth=wide["blue"])  # fmt: skip
            k += 1
    facts.update(groups=g, chassis=c, blades=b, nodes=nodes)
    if g <= b:  # SimGrid's routing goes to blade g of a chassis: it needs g blades
        facts["network"] = f"simgrid-dragonfly {g} {c} {b} {nodes}"
    else:
        p.notes.add(f"a dragonfly of {counted(g, 'group', grouped=False)} and {b} blades a "
                    f"chassis: SimGrid's routing "
                    "goes to blade G of a chassis, which there is not; routed by 'shortest'",
                    cid)  # fmt: skip
    if c > 1:
        p.notes.add("SimGrid 3.32's dragonfly routing within a group, from a router outside "
                    "chassis 0, crosses a green link then routes on as if in chassis 0 (a "
                    "black hop too few or too many), which no chain of links does: PARASOL "
                    "takes the chain there", cid)  # fmt: skip


def _read_whole(text: str, what: str) -> int:
    """A whole number of a platform's parameters: ASCII digits, blanks around them
    allowed, at most :data:`_MAX_DIGITS` of them; ValueRangeError saying why not."""
    value = read_int(text, what)
    if len(text.strip(" \t\r\n")) > _MAX_DIGITS:
        raise ValueRangeError(f"'{text.strip()[:40]}' is too large for {what}")
    return value


def _bandwidth_times(p: _Platform, el: Element, cid: str, bw: float, count: int,
                     colour: str) -> float:  # fmt: skip
    """``bw * count`` (a dragonfly's links of one colour bundle ``count`` links), refused
    where it or the time per byte it makes (1 / it) is past what a double holds."""
    try:
        wide = bw * count
    except OverflowError:
        wide = float("inf")
    if not wide < float("inf") or 1.0 / wide < SMALLEST_NORMAL:
        shown = str(count) if count < 10**15 else f"a {len(str(count))}-digit number"
        raise p.error(f"cluster {cid!r}: the {colour} links' bandwidth, {bw:g} Bps times "
                      f"{shown}, is too large: its time per byte (PARASOL's speed, 1 / "
                      "bandwidth) would be too small for a double to hold", el)  # fmt: skip
    return wide


# --------------------------------------------------------------------------- ends


def _infer_ends(p: _Platform) -> None:
    """Give every link its ends from the routes (module docstring)."""
    free = {name for name, link in p.links.items() if not link.fixed}
    if not free:
        return  # every link's ends are known (clusters, a PIUI export)

    def add(name: str, node: str) -> None:
        if name in free:
            ends = p.links[name].ends
            if node not in ends:
                ends.append(node)

    for chain in p.chains:
        if len(chain.links) == 1:
            add(chain.links[0], chain.src)
            add(chain.links[0], chain.dst)
    implicit: dict[frozenset, str] = {}
    for chain in p.chains:
        if len(chain.links) < 2:
            continue
        cur = chain.src
        for i, name in enumerate(chain.links):
            ends = p.links[name].ends
            if i == len(chain.links) - 1:
                nxt = chain.dst
            elif len(ends) == 2 and cur in ends:
                nxt = ends[1] if ends[0] == cur else ends[0]
            else:
                key = frozenset((name, chain.links[i + 1]))
                nxt = implicit.get(key)
                if nxt is None:
                    p.grow(1, "the platform")
                    p.spell(len(name) + len(chain.links[i + 1]) + 13,
                            "the names of the implicit switches between links")  # fmt: skip
                    nxt = implicit[key] = f"between {name} and {chain.links[i + 1]}"
                    p.kind[nxt] = "switch"
                    p.switches.append(nxt)
            add(name, cur)
            add(name, nxt)
            cur = nxt
    if implicit:
        p.notes.add("links whose ends no route tells: an implicit switch joins consecutive "
                    "links of a route", next(iter(implicit.values())))  # fmt: skip


# --------------------------------------------------------------------------- building


def _ordered_links(p: _Platform) -> list[_Link]:
    """The links in the model's order: the file's, or that of their ``parasol:id`` where
    the file says ``parasol:link-order = id`` (PIUI's zones of groups define a link in
    the zone whose routes cross it, not in the model's order)."""
    links = list(p.links.values())
    if p.zone_props.get(PREFIX + "link-order") == "id":
        ids = [_whole(link.props.get(PREFIX + "id")) for link in links]
        if None not in ids:
            order = sorted(range(len(links)), key=ids.__getitem__)
            links = [links[i] for i in order]
    return links


def _numbers(p: _Platform) -> dict[str, int]:
    """Processor numbers: a file PIUI wrote names its nodes p1, p2, ... (kept);
    otherwise compute processors first, in the file's order, then switches."""
    names = p.hosts + p.switches
    found = [_NODE_NAME.fullmatch(n) for n in names]
    if all(found) and sorted(int(m.group(1)) for m in found) == list(range(1, len(names) + 1)):
        return {n: int(m.group(1)) for n, m in zip(names, found)}
    return {n: i for i, n in enumerate(names, start=1)}


def _prop(p: _Platform, props: dict, key: str, text: str, read, what: str):  # noqa: ANN001, ANN202
    """A number of the zone property ``parasol:KEY`` read by ``read`` (ASCII, within a
    double); a PlatformError naming the property otherwise."""
    try:
        return read(text, what)
    except ValueRangeError as e:
        raise p.error(f"property {PREFIX}{key}: {e}", None) from None


def build(p: _Platform, name: str) -> Imported:
    _infer_ends(p)
    number = _numbers(p)
    props = p.zone_props
    compute_type, switch_type = 1, 2
    types: dict[int, int] = {}
    kinds: dict[int, tuple[str, str | None]] = {}  # type id -> (name, role)
    for key, value in props.items():
        m = re.fullmatch(re.escape(PREFIX) + r"type:([0-9]{1,18})", key)
        if m:
            role, _, tname = value.partition(":")
            kinds[int(m.group(1))] = (tname, role or None)
    host_type = _whole(props.get(PREFIX + "host-type"))  # a cluster's, in a PIUI export
    if host_type is not None:
        compute_type = host_type
    given_switch = _whole(props.get(PREFIX + "switch-type"))
    if given_switch is not None:
        switch_type = given_switch
    for host in p.hosts:
        given = p.host_props.get(host, {}).get(PREFIX + "type")
        given_type = _whole(given)
        types[number[host]] = given_type if given_type is not None else compute_type
    # A platform of SimGrid's (not PIUI's export, whose hosts name their processor types
    # and whose model file holds the timings): a processor type per host speed, in the
    # order of the hosts' numbers, with a flop's time, 1 / the speed, as its double local
    # addition and multiplication (the replay's flop), so that a time-independent
    # trace's `compute F` takes F / speed seconds, as SimGrid's replay takes it.
    flop: dict[int, float] = {}  # processor type -> seconds a flop
    by_speed: dict[float, int] = {}  # a host speed -> its processor type
    foreign = host_type is None and not any(PREFIX + "type" in p.host_props.get(h, {})
                                            for h in p.hosts)  # fmt: skip
    if foreign:
        for host in sorted(p.hosts, key=number.__getitem__):
            speed = p.host_speed.get(host, 0.0)
            if speed not in by_speed:
                by_speed[speed] = compute_type + len(by_speed)
            types[number[host]] = by_speed[speed]
        if by_speed and given_switch is None:
            switch_type = compute_type + len(by_speed)
        for speed, t in by_speed.items():
            seconds = 1.0 / speed if speed > 0 else math.inf
            if SMALLEST_NORMAL <= seconds < math.inf:
                flop[t] = seconds
            else:
                p.notes.add(f"a host speed whose flop time, 1 / speed, is not a positive "
                            f"normal number: no flop timing written ({speed!r} flops a "
                            "second)", f"processor type {t}")  # fmt: skip
    router_types = {}
    for item in props.get(PREFIX + "routers", "").split():
        r, _, t = item.partition("=")
        router_type = _whole(t)
        if router_type is not None:
            router_types[r] = router_type
    for sw in p.switches:
        types[number[sw]] = router_types.get(sw, switch_type)
    if not kinds:
        if any(t == compute_type for t in types.values()) or not types:
            kinds[compute_type] = ("SimGrid host", None)
        if len(by_speed) > 1:  # hosts of several speeds: each type named by its speed
            for speed, t in by_speed.items():
                kinds[t] = (f"SimGrid host, {flops_text(speed)}", None)
        if p.switches:
            kinds[switch_type] = ("SimGrid router", "switch")
    processors = [Processor(id=t, name=tn, role=role) for t, (tn, role) in sorted(kinds.items())]
    for t in sorted(set(types.values()) - set(kinds)):
        processors.append(Processor(id=t, name=f"type {t}"))
    for proc in processors:
        if proc.id in flop and proc.role != "switch":
            proc.timings["dla"] = Timing(flop[proc.id])
            proc.timings["dln"] = Timing(flop[proc.id])

    links: list[Link] = []
    split = 0
    shared: list[int] = []
    fatpipe: list[int] = []
    next_id = 1
    for link in _ordered_links(p):
        if len(link.ends) < 2:
            p.notes.add("links on no route between two points: left out", f"link {link.name}")
            continue
        given_id = _whole(link.props.get(PREFIX + "id"))
        lid = given_id if given_id is not None else next_id
        next_id = max(next_id, lid) + 1
        speed = 1.0 / link.bandwidth
        if not SMALLEST_NORMAL <= speed < math.inf:  # 1 / bandwidth under- or overflows
            why = (f"too large: its time per byte, 1 / bandwidth, would be {speed!r}, below "
                   "the smallest number a double holds to full precision (about 2.2e-308)"
                   if speed < SMALLEST_NORMAL else "too small: its time per byte, 1 / "
                   "bandwidth, would be too large for a double")  # fmt: skip
            raise PlatformError(f"link {link.name!r}: a bandwidth of {link.bandwidth!r} Bps "
                                f"is {why}", link.line, p.source)  # fmt: skip
        given = link.props.get(PREFIX + "speed", props.get(PREFIX + "speed"))
        # its own, or the zone's for the links of a PIUI cluster (a backbone's too: the
        # one of the values whose reciprocal is the link's bandwidth)
        for text in (given or "").split()[:2]:
            try:
                exact = read_float(text)
                if exact > 0 and abs(1.0 / exact - link.bandwidth) <= 1e-12 * link.bandwidth:
                    speed = exact  # the value PIUI wrote, not its reciprocal's reciprocal
                    break
            except ValueRangeError:
                pass
        lat = Timing(link.latency)
        links.append(Link(id=lid, latency=lat, speed=Timing(speed),
                          connect=[number[e] for e in link.ends]))  # fmt: skip
        if link.policy == "FATPIPE":
            fatpipe.append(lid)  # each flow bounded alone: '# piui: fatpipe'
        elif link.policy == "WIFI":
            p.notes.add("Wifi links: read as shared links", f"link {link.name}")
        if len(link.ends) == 2:
            if link.policy == "SPLITDUPLEX":
                split += 1
            elif link.policy != "FATPIPE":
                shared.append(lid)
    duplex = None
    if split:
        duplex = 0.0  # split-duplex links full duplex, nothing added by the other way
    # Each link keeps its policy (issue 36): among split-duplex links, a SHARED (or
    # Wifi) two-ended link is one resource both ways, '# piui: shared'; a FATPIPE link
    # bounds each flow alone, '# piui: fatpipe'.
    shared_text = link_list_text(shared) if split and shared else None
    fatpipe_text = link_list_text(fatpipe) if fatpipe else None
    if PREFIX + "duplex" in props:
        try:
            duplex = read_float(props[PREFIX + "duplex"]) if props[PREFIX + "duplex"] else None
        except ValueRangeError:
            pass

    count = len(p.hosts) + len(p.switches)
    routing, shape, network = "shortest", None, None
    if len(p.clusters) == 1 and len(p.kind) == count and not p.chains:
        cid, topology, facts = p.clusters[0]
        if topology == "TORUS":
            dims = facts["dims"]
            shape = tuple(dims)
            routing = "simgrid-torus"  # SimGrid's tie-break (topology/techniques.py)
        elif topology == "DRAGONFLY" and "network" in facts:
            network, routing = facts["network"], "simgrid-dragonfly"
        elif topology == "FAT_TREE":
            network, routing = facts["network"], "updown"
            try:  # numbers past what the annotation holds (a count over 10^6, 9 levels)
                network = check_network(network)
            except ValueError as e:
                p.notes.add(f"a fat tree the '# piui: network' line cannot describe ({e}): "
                            "routed by 'shortest'", cid)  # fmt: skip
                network, routing = None, "shortest"
    zones = None
    if routing == "shortest":
        zones = _zones(p, number)
        if zones is not None:
            routing = "zones"
    if PREFIX + "routing" in props:
        routing = props[PREFIX + "routing"] or None
        zones = None
    if PREFIX + "zones" in props:
        try:  # as the model file's annotation is read: a bogus one is said, not kept
            zones = check_zones(props[PREFIX + "zones"] or None)
        except ValueError as e:
            p.notes.add(f"the {PREFIX}zones property, ignored: {shown(e, 200)}")
            zones = None
    if PREFIX + "shape" in props:
        shape = tuple(_prop(p, props, "shape", x, _read_whole, "a size")
                      for x in props[PREFIX + "shape"].split()) or None  # fmt: skip
    if PREFIX + "network" in props:
        try:  # as the model file's annotation is read: a bogus one is said, not kept
            network = check_network(props[PREFIX + "network"] or None)
        except ValueError as e:
            p.notes.add(f"the {PREFIX}network property, ignored: {shown(e, 200)}")
            network = None
    forward = None
    if props.get(PREFIX + "forward"):
        forward = _prop(p, props, "forward", props[PREFIX + "forward"], read_float, "")
    ours = PREFIX + "routing" in props  # written by PIUI's export
    setup = Timing(0.0)  # a platform has no setup time; a PIUI export may say one
    if ours:
        setup = (Timing(_prop(p, props, "setup", props[PREFIX + "setup"], read_float, ""))
                 if props.get(PREFIX + "setup") else None)  # fmt: skip
    names = _names(p, number, props)
    topo = Topology(
        shape=shape, forward=forward, duplex=duplex, network=network,
        shared=shared_text, fatpipe=fatpipe_text, names=names, zones=zones,
        id=_prop(p, props, "topology-id", props.get(PREFIX + "topology-id", "1"), _read_whole, "an id"),
        name=props.get(PREFIX + "topology-name", None if ours else name),
        setup=setup,
        routing=routing, processor_count=count, link_count=len(links),
        types=dict(sorted(types.items())), links=links,
    )  # fmt: skip
    if topo.shape and declared_shape(topo) is None:
        p.notes.add(f"the {PREFIX}shape property ({shown(' '.join(map(str, topo.shape)))}), "
                    f"ignored: it does not fit {counted(count, 'processor')}")  # fmt: skip
        topo.shape = None
    machine = Machine(
        id=_prop(
            p, props, "machine-id", props.get(PREFIX + "machine-id", "1"), _read_whole, "an id"
        ),
        name=props.get(PREFIX + "machine-name", None if ours else name),
        processor_count=len(processors),
        topology_count=1,
        processors=processors,
        topologies=[topo],
    )
    if p.floyd:
        p.notes.add(
            "Floyd and Dijkstra zones: SimGrid picks among equal routes by its own "
            "costs; PARASOL routes the links by 'shortest' (fewest hops, its own tie-break)"
        )
    _compare_routes(p, topo, number)
    return Imported(machine, p.notes.lines(), {n: name for name, n in number.items()})


def _zones(p: _Platform, number: dict[str, int]) -> str | None:
    """The ``# piui: zones`` line of a platform whose TORUS, FAT_TREE and DRAGONFLY clusters
    sit in a larger platform (topology/zoned.py): each cluster routed by its own
    routing, between zones through its gateway, the host its zone routes name; None
    where there are none, or (said) where a cluster has two gateways."""
    found = []
    for cid, topology, facts in p.clusters:
        if topology == "TORUS":
            network = " ".join(["shape", *map(str, facts["dims"])])
        elif topology not in ("FAT_TREE", "DRAGONFLY") or "network" not in facts:
            continue
        else:
            try:
                network = check_network(facts["network"])
            except ValueError:
                continue  # said where the cluster was read
        procs = [number[x] for x in facts["hosts"]] + [number[x] for x in facts.get("switches", [])]
        runs: list[tuple[int, int]] = []
        for q in procs:
            if runs and runs[-1][1] + 1 == q:
                runs[-1] = (runs[-1][0], q)
            else:
                runs.append((q, q))
        routing = {"FAT_TREE": "updown", "DRAGONFLY": "simgrid-dragonfly"}.get(
            topology, "simgrid-torus"
        )
        gw = p.gateways.get(cid)
        found.append(Zone(tuple(runs), routing, network, None if gw is None else number[gw[0]]))
    if not found:
        return None
    if p.gateway_clash is not None:
        p.notes.add("a cluster reached through two gateways: PARASOL's zones have one; the "
                    "platform is routed by 'shortest'", p.gateway_clash)  # fmt: skip
        return None
    return check_zones(found)


def _names(p: _Platform, number: dict[str, int], props: dict[str, str]) -> str | None:
    """The ``# piui: names`` text: the platform's names of its hosts and routers (and
    of the implicit switches), unless each is ``pN`` for its own number N (a file PIUI
    wrote, whose own names come back from its ``parasol:names`` property)."""
    if PREFIX + "names" in props:
        try:
            return check_names(props[PREFIX + "names"] or None)
        except ValueError as e:
            p.notes.add(f"the {PREFIX}names property, ignored: {shown(e, 200)}")
            return None
    if all(name == f"p{n}" for name, n in number.items()):
        return None
    try:
        return check_names({n: name for name, n in number.items()})
    except ValueError as e:
        p.notes.add(f"the processors' names, not kept: {shown(e, 200)}")
        return None


def _compare_routes(p: _Platform, topo: Topology, number: dict[str, int]) -> None:
    """Say how many of a Full zone's explicit routes PARASOL's routing does not give."""
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.index import index_of

    chains = [c for c in p.chains if c.explicit]
    chains += [_Chain(c.dst, c.src, c.links[::-1], c.line, True) for c in chains if c.symmetrical]
    if not chains:
        return
    if len(chains) > budget.current().route_pairs:
        p.notes.add(f"{counted(len(chains), 'explicit route')} not compared with PARASOL's (over "
                    f"{budget.current().route_pairs:,})")  # fmt: skip
        return
    kept = [ln for ln in _ordered_links(p) if len(ln.ends) >= 2]  # as build() kept them
    by_name = {link.name: model.id for link, model in zip(kept, topo.links)}
    try:
        index = index_of(topo)
        try:
            batch = index.routes([number[c.src] for c in chains], [number[c.dst] for c in chains])
        except RoutingError:
            # a routing between compute processors only (a dragonfly's): a route to a
            # router is a zone route's way to its gateway, which PARASOL has no route
            # of its own to compare with; those between hosts are compared
            chains = [c for c in chains if p.kind[c.src] == p.kind[c.dst] == "host"]
            if not chains:
                return
            batch = index.routes([number[c.src] for c in chains], [number[c.dst] for c in chains])
    except (RoutingError, budget.BudgetError) as e:
        p.notes.add(f"explicit routes not compared with PARASOL's: {e}")
        return
    differ = 0
    first = ""
    for chain, route in zip(chains, batch):
        want = tuple(by_name.get(n, -1) for n in chain.links)
        if tuple(route.links) != want:
            differ += 1
            if not first:
                first = f"{chain.src} -> {chain.dst}, line {chain.line}"
    if differ:
        p.notes.add(f"explicit routes that differ from PARASOL's {topo.routing!r} routes: "
                    f"{differ} of {len(chains)}", first)  # fmt: skip


# --------------------------------------------------------------------------- entry points


def read_platform(root: Element, source: str = "", name: str | None = None) -> Imported:
    p = _Platform(source)
    if root.tag != "platform":
        raise p.error(f"the root element is <{root.tag}>, not <platform>", root)
    version = root.get("version", "")
    if not version.startswith("4."):
        raise p.error(f"platform version {version!r}: this reader takes version 4.1 files "
                      "(SimGrid's simgrid_update_xml converts older ones)", root)  # fmt: skip
    zones = [c for c in root.children if c.tag in ("zone", "AS")]
    for child in root.children:
        if child.tag in ("zone", "AS"):
            _zone(p, child, top=len(zones) == 1)
        elif child.tag == "cluster":
            _cluster(p, child)
        elif child.tag in ("config", "actor", "process"):
            p.notes.add(f"<{child.tag}> elements (configuration and deployment)",
                        f"line {child.line}")  # fmt: skip
        else:
            p.notes.add(f"<{child.tag}> elements", f"line {child.line}")
    if not p.kind:
        raise p.error("the platform has no host", root)
    try:
        imported = build(p, name or (Path(source).stem if source else "SimGrid platform"))
    except (PlatformError, budget.BudgetError):
        raise
    except (ValueError, KeyError, OverflowError) as e:
        # only the parasol: properties a PIUI export writes are read as numbers here
        raise PlatformError(f"a '{PREFIX}' property does not hold what PIUI writes "
                            f"({type(e).__name__}: {e})", None, source) from None  # fmt: skip
    imported.notes.extend(_check_model(imported.machine, source))
    return imported


def _check_model(machine: Machine, source: str) -> list[str]:
    """The model an import writes is checked as any load is: one a model file could not
    hold without errors (a parasol: property naming a routing of nothing, an id out of
    range) is refused, naming the first errors, rather than written for `check` to
    reject later; its warnings (a shape that does not fit, ignored) are returned as
    notes, so that nothing is dropped without a word."""
    from parasol_core.analysis.validate import validate

    found = validate(machine)
    errors = [d for d in found if d.is_error]
    if errors:
        listed = "; ".join(shown(d.message, 300) for d in errors[:3])
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise PlatformError(f"the model it makes would not be valid: {listed}{more}", None,
                            source)  # fmt: skip
    return [f"the model: {shown(d.message, 300)}" for d in found if not d.is_error]


def import_platform(path: str | Path) -> Imported:
    """Read a platform file: PlatformError (with its line) for what cannot be read,
    BudgetError past the size limits, OSError when it cannot be opened."""
    return read_platform(parse_file(path), str(path))


def import_text(text: str | bytes, source: str = "", name: str | None = None) -> Imported:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return read_platform(parse_bytes(data, source), source, name)
