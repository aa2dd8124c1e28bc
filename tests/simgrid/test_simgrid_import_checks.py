"""What is imported is checked (issue 35, item 6): a zoneRoute naming zones that do not
exist turned a backbone into a bus; an import the model check rejects exited 0; a 60 MB
host id was echoed whole in the notes, and '&#10;' in one forged note lines."""

from __future__ import annotations

import pytest

from parasol_core.simgrid import import_text
from parasol_core.simgrid.importer import SHOWN_CHARS
from parasol_core.simgrid.xmlread import PlatformError

HEAD = '<?xml version="1.0"?>\n<platform version="4.1">\n'


def two_zones(route_src: str = "z1", route_dst: str = "z2") -> str:
    return (
        HEAD
        + f"""<zone id="top" routing="Full">
  <zone id="z1" routing="Full"><host id="a" speed="1Gf"/><router id="r1"/>
    <link id="la" bandwidth="1GBps" latency="1us"/>
    <route src="a" dst="r1"><link_ctn id="la"/></route></zone>
  <zone id="z2" routing="Full"><host id="b" speed="1Gf"/><router id="r2"/>
    <link id="lb" bandwidth="1GBps" latency="1us"/>
    <route src="b" dst="r2"><link_ctn id="lb"/></route></zone>
  <link id="wan" bandwidth="1GBps" latency="1ms"/>
  <zoneRoute src="{route_src}" dst="{route_dst}" gw_src="r1" gw_dst="r2">
    <link_ctn id="wan"/></zoneRoute>
</zone></platform>
"""
    )


def test_a_zone_route_between_zones_that_exist_imports() -> None:
    assert import_text(two_zones(), "ok.xml").machine.hardware() is not None


@pytest.mark.parametrize("src,dst", [("z1", "nowhere"), ("ghost", "z2"), ("top", "z9")])
def test_a_zone_route_naming_no_zone_is_refused_with_its_line(src, dst) -> None:
    with pytest.raises(PlatformError) as e:
        import_text(two_zones(src, dst), "bad.xml")
    assert "bad.xml:" in str(e.value) and "no zone or cluster defined before it" in str(e.value)
    assert e.value.line is not None


@pytest.mark.parametrize("prop,value", [("routing", "nosuchrouting"), ("shape", "3 7 11"),
                                        ("topology-id", "-4"), ("network", "fattree 4 x"),
                                        ("network", "nosuch 1 2")])  # fmt: skip
def test_an_import_the_model_check_would_reject_is_refused(prop, value) -> None:
    text = (
        HEAD
        + f"""<zone id="z" routing="Full">
  <prop id="parasol:{prop}" value="{value}"/>
  <host id="p1" speed="1Gf"/><host id="p2" speed="1Gf"/>
  <link id="l1" bandwidth="1GBps" latency="1us"/>
  <route src="p1" dst="p2"><link_ctn id="l1"/></route>
</zone></platform>
"""
    )
    from parasol_core.analysis.validate import validate

    try:
        imported = import_text(text, "p.xml")
    except PlatformError as e:  # an error the model would have: refused, naming it
        assert "p.xml" in str(e) and ("would not be valid" in str(e) or f"parasol:{prop}" in str(e))
        return
    found = validate(imported.machine)  # else valid, and what was dropped said
    assert not [d for d in found if d.is_error]
    assert all(any(d.message in n for n in imported.notes) for d in found)
    assert any(f"parasol:{prop}" in n and "ignored" in n for n in imported.notes), imported.notes


def _with_host(host_id: str) -> str:
    return (
        HEAD
        + f"""<zone id="z" routing="Full">
  <host id="{host_id}" speed="1Gf" core="4"/><host id="q" speed="1Gf"/>
  <link id="l1" bandwidth="1GBps" latency="1us"/>
  <route src="{host_id}" dst="q"><link_ctn id="l1"/></route>
</zone></platform>
"""
    )


def test_notes_repeat_a_long_name_in_part() -> None:
    long_id = "h" * 200_000
    notes = import_text(_with_host(long_id), "long.xml").notes
    assert notes and all(len(n) < SHOWN_CHARS + 200 for n in notes), [len(n) for n in notes]
    assert any("200,000 characters" in n for n in notes), notes


def test_a_line_end_in_a_name_cannot_forge_a_note() -> None:
    notes = import_text(_with_host("a&#10;note: forged"), "forge.xml").notes
    assert notes and all("\n" not in n for n in notes), notes
