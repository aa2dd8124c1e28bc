"""The sample models: each loads clean and says what the sources say."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core import load
from parasol_core.analysis.validate import validate
from parasol_core.model import Timing

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
ALL = sorted(SAMPLES.glob("*.machine"))


def test_the_required_samples_exist():
    names = {p.name for p in ALL}
    assert {
        "parsytec-gcel.machine",
        "fwi-csys.machine",
        "grid4x4.machine",
        "vax-11-785.machine",
        "ibm-3090-200.machine",
    } <= names


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_sample_loads_with_no_diagnostics(path):
    assert validate(load(path)) == []


def test_gcel_is_512_transputers_on_a_16_by_32_xy_grid():
    m = load(SAMPLES / "parsytec-gcel.machine")
    [topo] = m.topologies
    assert (topo.processor_count, topo.link_count, len(topo.links)) == (512, 976, 976)
    assert topo.routing == "XY" and topo.shape == (16, 32)
    assert {link.latency for link in topo.links} == {Timing(2.85e-05)}
    assert {link.speed for link in topo.links} == {Timing(9.1e-07)}
    assert all(len(link.connect) == 2 for link in topo.links)
    [proc] = m.processors
    assert proc.cache.smallloopspeedup == Timing(1.0)
    assert set(proc.combinations) == {
        "ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "ds_spd", "dp_spd",
    }  # fmt: skip
    assert proc.combinations["ia_spd"].text == "pt(1).iga / tl(1)(1).speed"
    assert (
        m.combinations.entries["maxtotalspd"].text
        == "(tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed"
    )
    # section 3.1.3: ia_spd evaluates to 0.81
    assert round(proc.timings["iga"].mean / topo.links[0].speed.mean, 2) == 0.81


def test_gcel_grid_links_join_neighbours():
    topo = load(SAMPLES / "parsytec-gcel.machine").topologies[0]
    width = 16
    for link in topo.links:
        a, b = sorted(link.connect)
        assert b - a == 1 and (a - 1) % width != width - 1 or b - a == width


def test_fwi_cluster_is_one_ethernet_for_42_sparcs():
    m = load(SAMPLES / "fwi-csys.machine")
    [topo] = m.topologies
    [link] = topo.links
    assert topo.routing == "broadcast" and topo.processor_count == 42
    assert sorted(link.connect) == list(range(1, 43))
    assert (link.latency, link.speed) == (Timing(0.03), Timing(8.6e-07))
    assert len(m.processors) >= 2
    lx = next(p for p in m.processors if "LX" in (p.name or ""))
    assert lx.cache.size == 100 and lx.cache.smallloopspeedup == Timing(1.62)
    assert lx.timings["dln"].mean == 3.46e-07


def test_grid4x4_has_the_figure_2_2_ring_and_a_2d_torus():
    m = load(SAMPLES / "grid4x4.machine")
    [grid] = m.topologies
    assert grid.shape == (4, 4) and grid.routing == "XY" and len(grid.links) == 24
    ring = next(v for v in m.virtuals if v.routing == "1Dtorus")
    torus = next(v for v in m.virtuals if v.routing == "2Dtorus")
    assert torus.mapping == {i: i for i in range(1, 17)}

    def xy(p):
        return ((p - 1) % 4, (p - 1) // 4)

    for v in range(1, 17):
        (x1, y1), (x2, y2) = xy(ring.mapping[v]), xy(ring.mapping[v % 16 + 1])
        assert abs(x1 - x2) + abs(y1 - y2) == 1  # every ring link one grid hop


@pytest.mark.parametrize("name", ["vax-11-785.machine", "ibm-3090-200.machine"])
def test_saavedra_machines_carry_measured_timings_only(name):
    m = load(SAMPLES / name)
    [proc] = m.processors
    assert len(proc.timings) >= 40
    assert all(0 <= t.mean < 1e-2 for t in proc.timings.values())
    readme = (SAMPLES / "README.md").read_text()
    assert m.name in readme


def test_vax_values_match_saavedra_figure_6_1():
    proc = load(SAMPLES / "vax-11-785.machine").processors[0]
    # figure 6.1 cross-checks: real local add and integer local add, in seconds
    assert proc.timings["rla"].mean == pytest.approx(1.47e-06)
    assert proc.timings["ila"].mean == pytest.approx(1.182e-06)
