"""A SimGrid platform whose hosts keep their names (issue 36): SimGrid's small example,
imported. Tremblay is processor 1, Jupiter 2, Fafard 3, the router R 4. Shared by the
tests of every command and estimator method that takes a processor by name."""

from __future__ import annotations

from parasol_core.simgrid import import_text
from parasol_core.syntax.writer import dumps

NAMES = {1: "Tremblay", 2: "Jupiter", 3: "Fafard", 4: "R"}

# SimGrid's small example: Tremblay is processor 1, Jupiter 2, Fafard 3, the router R 4
SMALL = """<?xml version="1.0"?>
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="Tremblay" speed="98.095Mf"/>
    <host id="Jupiter" speed="76.296Mf"/>
    <host id="Fafard" speed="76.296Mf"/>
    <router id="R"/>
    <link id="1" bandwidth="41.279125MBps" latency="59.904us"/>
    <link id="2" bandwidth="34.285625MBps" latency="514.433us"/>
    <link id="3" bandwidth="11.618875MBps" latency="189.98us"/>
    <route src="Tremblay" dst="R"><link_ctn id="1"/></route>
    <route src="Jupiter" dst="R"><link_ctn id="2"/></route>
    <route src="Fafard" dst="R"><link_ctn id="3"/></route>
    <route src="Tremblay" dst="Jupiter"><link_ctn id="1"/><link_ctn id="2"/></route>
    <route src="Tremblay" dst="Fafard"><link_ctn id="1"/><link_ctn id="3"/></route>
    <route src="Jupiter" dst="Fafard"><link_ctn id="2"/><link_ctn id="3"/></route>
  </zone>
</platform>
"""


VIRTUAL = """
    begin virtual
        id = 2
        name = "pair"
        setup = 0.0
        routing = "1Dtorus"
        processors = 2
        begin mapping
            map[1] = 1
            map[2] = 2
        end mapping
    end virtual
end machine
"""


def named_model_text(virtual: bool = False) -> str:
    """The platform as a model file's text, with its ``# piui: names`` line; with
    ``virtual``, a virtual topology of two processors (id 2) mapped onto 1 and 2."""
    text = dumps(import_text(SMALL, "small.xml").machine)
    if virtual:
        text = text.replace("    topologies = 1\n", "    topologies = 2\n", 1)
        text = text[: text.rindex("end machine")].rstrip("\n") + "\n" + VIRTUAL
    return text


# Hosts of three speeds (issue 31: an imported platform keeps them), a star around the
# router R with every pair's route, for SimGrid's Full zone: A is processor 1 (1Gf), B 2
# (2Gf), C 3 (500Mf; its second power state, 100Mf, is not kept), D 4 (1Gf), R 5
THREE_SPEEDS = (
    """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="A" speed="1Gf"/>
    <host id="B" speed="2Gf"/>
    <host id="C" speed="500Mf,100Mf"/>
    <host id="D" speed="1Gf"/>
    <router id="R"/>
    <link id="la" bandwidth="125MBps" latency="50us"/>
    <link id="lb" bandwidth="125MBps" latency="50us"/>
    <link id="lc" bandwidth="125MBps" latency="50us"/>
    <link id="ld" bandwidth="125MBps" latency="50us"/>
"""
    + "".join(
        f'    <route src="{h}" dst="R"><link_ctn id="l{h.lower()}"/></route>\n' for h in "ABCD"
    )
    + "".join(
        f'    <route src="{a}" dst="{b}"><link_ctn id="l{a.lower()}"/><link_ctn id="l{b.lower()}"/></route>\n'
        for i, a in enumerate("ABCD")
        for b in "ABCD"[i + 1 :]
    )
    + """  </zone>
</platform>
"""
)
