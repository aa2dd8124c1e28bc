"""The ``# piui: zones`` annotation and the ``zones`` routing technique (issue 36;
topology/zoned.py): read and written as the other annotations, a bad line ignored with a
warning saying why, and routes through each zone's gateway."""

from __future__ import annotations

import numpy as np
import pytest

from parasol_core import loads
from parasol_core.simgrid import import_text
from parasol_core.syntax.annotations import check_zones
from parasol_core.syntax.writer import dumps
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import index_of

PLATFORM = """<?xml version="1.0"?>
<platform version="4.1"><zone id="w" routing="Full">
  <cluster id="A" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,1"/>
  <cluster id="B" prefix="b" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"
           topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,1"/>
  <link id="wan" bandwidth="10MBps" latency="1ms"/>
  <zoneRoute src="A" dst="B" gw_src="a1" gw_dst="b2"><link_ctn id="wan"/></zoneRoute>
</zone></platform>
"""


def test_a_route_between_zones_goes_through_both_gateways():
    hw = import_text(PLATFORM).machine.hardware()
    assert hw.routing == "zones"
    assert hw.zones == "1-4,9-12 updown fattree 2 2 via 2; 5-8,13-16 updown fattree 2 2 via 7"
    route = index_of(hw).route(1, 8)  # a0 -> a1 (up and down), the WAN, b2 -> b3
    assert route.processors[:1] == (1,) and 2 in route.processors and 7 in route.processors
    assert hw.link_count in route.links  # the WAN, the last link of the file
    inside = index_of(hw).route(5, 8)  # within B: its own up/down route, no WAN
    assert hw.link_count not in inside.links and len(inside.links) == 4


@pytest.mark.parametrize(
    ("value", "why"),
    [("1-4 shortest fattree 2 2", "routing must be one of"),
     ("1-4 updown fattree 2", "fattree takes 2 whole numbers"),
     ("1-4 updown fattree 2 2 via 9", "gateway 9 is none of its processors"),
     ("1-4,3-5 updown fattree 2 2", "in two zones"),
     ("x-4 updown fattree 2 2", "is not processor runs"),
     ("1-٤ updown fattree 2 2", "is not processor runs"),
     ("1-4 simgrid-torus shape", "takes its grid"),
     ("1-4 simgrid-torus fattree 2 2", "takes its grid"),
     ("", "expected '# piui: zones")],
)  # fmt: skip
def test_a_bad_zones_line_is_ignored_with_a_warning_saying_why(value, why):
    hw = import_text(PLATFORM).machine
    text = dumps(hw).replace(f"# piui: zones = {hw.hardware().zones}", f"# piui: zones = {value}")
    with pytest.raises(ValueError, match=why):
        check_zones(value)
    machine = loads(text)
    assert machine.hardware().zones is None
    said = [d.message for d in machine.src.diagnostics if "'# piui: zones' ignored" in d.message]
    assert said and why in said[0], said


def test_a_zone_without_a_gateway_routes_inside_but_not_out():
    hw = import_text(PLATFORM).machine.hardware()
    hw.zones = hw.zones.replace(" via 7", "")
    assert len(index_of(hw).route(5, 8).links) == 4
    with pytest.raises(RoutingError, match="zone 2 of .* has no gateway"):
        index_of(hw).route(1, 8)


def test_a_torus_zone_whose_shape_is_not_its_size_is_a_routing_error():
    hw = import_text(PLATFORM).machine.hardware()
    hw.zones = "1-4,9-12 simgrid-torus shape 3 3 via 2; 5-8,13-16 updown fattree 2 2 via 7"
    with pytest.raises(RoutingError, match="zone 1 of .* has 8 processors, not the 9 of its shape"):
        index_of(hw).route(1, 3)


def test_the_route_budget_counts_each_zones_pieces_before_any_route_is_made():
    """What the route batch is charged (topology/steps.py) is at least the processors
    its routes visit, counted from each zone's technique and the shortest tables."""
    from parasol_core.topology.steps import route_steps

    hw = import_text(PLATFORM).machine.hardware()
    index = index_of(hw)
    src = [a for a in range(1, 9) for b in range(1, 9) if a != b]
    dst = [b for a in range(1, 9) for b in range(1, 9) if a != b]
    charged = route_steps(index.layout, index.technique, np.asarray(src), np.asarray(dst))
    visited = int(index.routes(src, dst).processors.shape[0])
    assert visited <= charged <= 2 * visited


def test_a_cluster_reached_through_two_gateways_is_routed_shortest_and_said():
    text = PLATFORM.replace(
        '<zoneRoute src="A"',
        '<link id="wan2" bandwidth="10MBps" latency="1ms"/>\n  <zoneRoute src="A"',
    ).replace(
        "</zone></platform>",
        '  <zoneRoute src="B" dst="A" gw_src="b2" gw_dst="a3" symmetrical="NO">'
        '<link_ctn id="wan2"/></zoneRoute>\n</zone></platform>',
    )
    imported = import_text(text)
    hw = imported.machine.hardware()
    assert hw.routing == "shortest" and hw.zones is None
    said = [n for n in imported.notes if "two gateways" in n]
    assert said and "cluster A: gateways a1" in said[0] and "a3" in said[0]
