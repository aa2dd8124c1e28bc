"""Small SimGrid platforms of the kinds issue 33 found drawn unreadably, written here
(SimGrid's own examples are not installed): a dragonfly cluster of 60 routers, a flat
cluster with a backbone, two buses joined through an implicit switch as an explicit
Full zone routes them, and a 4 x 4 x 4 torus cluster. :func:`machine` imports one."""

from __future__ import annotations

from parasol_core.model import Machine
from parasol_core.simgrid import import_text

HEAD = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n<zone id="world" routing="Full">\n')  # fmt: skip
TAIL = "</zone>\n</platform>\n"

PLATFORMS = {
    # 5 groups, 2 chassis of 6 routers each, 2 hosts a router: 120 hosts, 60 routers
    "dragonfly": '<cluster id="df" prefix="node-" suffix=".simgrid.org" radical="0-119" '
                 'speed="1Gf" bw="125MBps" lat="50us" topology="DRAGONFLY" '
                 'topo_parameters="5,1;2,1;6,1;2"/>\n',
    # 8 hosts, each on a port switch of the backbone (a bus), and the cluster's router
    "backbone": '<cluster id="acme" prefix="node-" suffix=".acme.org" radical="0-7" '
                'speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/>\n',
    # two shared links, each carrying the routes among its three hosts, and the routes
    # between the two groups over both: two buses and the switch that joins them
    "buses": """<host id="a1" speed="1Gf"/><host id="a2" speed="1Gf"/><host id="a3" speed="1Gf"/>
<host id="b1" speed="1Gf"/><host id="b2" speed="1Gf"/><host id="b3" speed="1Gf"/>
<link id="busA" bandwidth="10MBps" latency="100us" sharing_policy="SHARED"/>
<link id="busB" bandwidth="10MBps" latency="100us" sharing_policy="SHARED"/>
<route src="a1" dst="a2"><link_ctn id="busA"/></route>
<route src="a1" dst="a3"><link_ctn id="busA"/></route>
<route src="a2" dst="a3"><link_ctn id="busA"/></route>
<route src="b1" dst="b2"><link_ctn id="busB"/></route>
<route src="b1" dst="b3"><link_ctn id="busB"/></route>
<route src="b2" dst="b3"><link_ctn id="busB"/></route>
<route src="a1" dst="b1"><link_ctn id="busA"/><link_ctn id="busB"/></route>
<route src="a2" dst="b2"><link_ctn id="busA"/><link_ctn id="busB"/></route>
<route src="a3" dst="b3"><link_ctn id="busA"/><link_ctn id="busB"/></route>
""",
    "torus": '<cluster id="t" prefix="h" suffix="" radical="0-63" speed="1Gf" bw="1GBps" '
             'lat="1us" topology="TORUS" topo_parameters="4,4,4"/>\n',
}  # fmt: skip


def platform_text(name: str) -> str:
    return HEAD + PLATFORMS[name] + TAIL


def machine(name: str) -> Machine:
    return import_text(platform_text(name), f"{name}.xml").machine
