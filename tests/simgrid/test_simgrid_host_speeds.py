"""A SimGrid host's speed and a PARASOL model's flop time, both ways (issue 31: "a
platform imported from SimGrid keeps its hosts' speeds so a TI trace replays on it as
SimGrid replays it"). The import gives each host speed a processor type whose double
local addition and multiplication, the replay's default flop, take 1 / speed; the
export writes each host's speed as 1 / its type's flop time (1Gf, said, where the
model times no flop). Against SimGrid itself: tests/replay/test_replay_simgrid.py."""

from __future__ import annotations

import re

from named_platform import THREE_SPEEDS

from parasol_core.analysis.validate import validate
from parasol_core.model import Machine, Processor, Timing
from parasol_core.replay import ReplayOptions, flop_for, load_trace, replay
from parasol_core.simgrid import export_platform, import_text
from parasol_core.topology import generators

CLUSTER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <cluster id="c" prefix="node-" suffix="" radical="0-3" speed="{speed}" bw="125MBps"
             lat="50us"/>
  </zone>
</platform>
"""


def _trace(tmp_path, text: str):
    path = tmp_path / "trace.txt"
    path.write_text(text)
    return load_trace(path)


def test_each_host_speed_is_a_processor_type_whose_flop_takes_its_inverse(tmp_path):
    imported = import_text(THREE_SPEEDS, "hosts.xml")
    m, hw = imported.machine, imported.machine.hardware()
    assert [d.message for d in validate(m) if d.is_error] == []
    # types in the hosts' order, one a speed; the router's after them
    assert hw.types == {1: 1, 2: 2, 3: 3, 4: 1, 5: 4}
    assert [(p.id, p.name, p.role) for p in m.processors] == [
        (1, "SimGrid host, 1Gf", None), (2, "SimGrid host, 2Gf", None),
        (3, "SimGrid host, 500Mf", None), (4, "SimGrid router", "switch")]  # fmt: skip
    for t, speed in ((1, 1e9), (2, 2e9), (3, 5e8)):
        timings = m.processors[t - 1].timings
        assert timings["dla"].mean == timings["dln"].mean == 1 / speed
    assert m.processors[3].timings == {}
    notes = "\n".join(imported.notes)
    assert "host speeds" not in notes
    assert "host power states after the first (each a speed) (C)" in notes  # 100Mf, not kept
    # a computation of 10^9 flops takes 1 / speed a flop on each rank's host
    trace = _trace(tmp_path, "".join(f"{r} compute 1000000000\n" for r in range(4)))
    assert flop_for(m) == "(pt(T).dla + pt(T).dln) / 2"
    result = replay(m, trace, ReplayOptions())
    assert result.finish.tolist() == [1.0, 0.5, 2.0, 1.0]


def test_a_clusters_speed_is_its_one_processor_type(tmp_path):
    m = import_text(CLUSTER.format(speed="2Gf")).machine
    assert [p.name for p in m.processors] == ["SimGrid host", "SimGrid router"]
    assert m.processors[0].timings["dla"].mean == 5e-10
    assert replay(m, _trace(tmp_path, "0 compute 4e9\n"), ReplayOptions()).makespan == 2.0


def test_a_speed_with_no_flop_time_is_said_and_writes_none():
    imported = import_text(CLUSTER.format(speed="0f"))
    assert imported.machine.processors[0].timings == {}
    notes = "\n".join(imported.notes)
    assert "no flop timing written (0.0 flops a second) (processor type 1)" in notes


def _host_speeds(text: str) -> list[str]:
    return re.findall(r'<host id="[^"]+" speed="([^"]+)"', text) or re.findall(
        r'<cluster [^>]*speed="([^"]+)"', text)  # fmt: skip


def test_the_export_writes_each_hosts_speed_from_its_flop_time():
    m = _torus()
    for name in ("dla", "dln"):
        m.processors[0].timings[name] = Timing(5e-10)
    made = export_platform(m)
    assert set(_host_speeds(made.text)) == {"2000000000f"}
    assert not any("1Gf" in note for note in made.notes)
    # read back as SimGrid would: 2 Gf, a flop 0.5 ns
    back = import_text(made.text.replace("parasol:", "other:"))
    assert back.machine.processors[0].timings["dla"].mean == 5e-10


def test_a_model_that_times_no_flop_exports_1gf_and_says_so():
    m = _torus()
    made = export_platform(m)
    assert set(_host_speeds(made.text)) == {"1Gf"}
    assert any("1Gf for the hosts of processor type 1, which time no flop" in note
               for note in made.notes)  # fmt: skip
    # PIUI's own export read back: its processor types as the model had them, no
    # timing made up from the placeholder
    assert import_text(made.text).machine.processors[0].timings == {}


def _torus() -> Machine:
    return Machine(id=1, name="torus", processor_count=1, topology_count=1,
                   processors=[Processor(id=1, name="node")],
                   topologies=[generators.torus([4, 4], 1e-6, 1e-9)])  # fmt: skip
