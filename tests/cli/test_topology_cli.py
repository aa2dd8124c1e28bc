"""`parasol-model route`, `transfer`, `generate` and `mapping`."""

from pathlib import Path

import pytest

from parasol_core import load, loads
from parasol_core.cli import main
from parasol_core.model import Machine, Processor
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import grid

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
GRID = str(SAMPLES / "grid4x4.machine")
FWI = str(SAMPLES / "fwi-csys.machine")
LAT, SPD = 2.85e-05, 9.1e-07


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_route_prints_processors_and_links(capsys):
    status, out, err = run(capsys, "route", GRID, "1", "16")
    assert status == 0 and err == ""
    assert out == "processors: 1 2 3 4 8 12 16\nlinks: 1 2 3 16 20 24\n"


def test_route_between_virtual_processors(capsys):
    status, out, _ = run(capsys, "route", GRID, "4", "5", "--virtual", "2")
    assert status == 0
    assert out == "processors: 4 8\nlinks: 16\n"


def test_route_on_the_ethernet(capsys):
    assert run(capsys, "route", FWI, "42", "1")[1] == "processors: 42 1\nlinks: 1\n"


def test_route_over_a_missing_link_fails_naming_the_processors(capsys, tmp_path):
    hw = grid([4, 4], LAT, SPD)
    hw.links = [link for link in hw.links if link.connect != [3, 4]]
    hw.link_count = len(hw.links)
    machine = Machine(
        id=1,
        name="broken grid",
        processor_count=1,
        topology_count=1,
        processors=[Processor(id=1, name="p")],
        topologies=[hw],
    )
    path = tmp_path / "broken.machine"
    path.write_text(dumps(machine))
    status, out, err = run(capsys, "route", str(path), "1", "16")
    assert status == 1 and out == ""
    assert err.strip() == "error: no link connects processor 3 and processor 4 in topology 1"


@pytest.mark.parametrize(
    "argv, status, message",
    [(["route", GRID, "1", "17"], 1, "processor 17 is not in topology 1"),
     (["route", GRID, "1", "2", "--virtual", "9"], 2, "no virtual topology with id 9"),
     (["route", "/nonexistent.machine", "1", "2"], 2, "cannot read")],
)  # fmt: skip
def test_route_errors(capsys, argv, status, message):
    got, _, err = run(capsys, *argv)
    assert got == status and message in err


def test_transfer_alone_and_with_others(capsys):
    status, out, _ = run(capsys, "transfer", GRID, "--bytes", "1000", "1:4")
    assert status == 0
    assert float(out) == pytest.approx(3 * LAT + 1000 * SPD, rel=1e-12)
    _, out, _ = run(
        capsys,
        "transfer",
        GRID,
        "--bytes",
        "1000",
        "1:4",
        "--active",
        "2:3",
        "3:4",
        "--active",
        "2:3",
    )
    assert float(out) == pytest.approx(3 * LAT + 1000 * 3 * SPD, rel=1e-12)  # link 2 carries 3
    _, out, _ = run(capsys, "transfer", GRID, "--bytes", "1000", "1:4", "--active", "5:8")
    assert float(out) == pytest.approx(3 * LAT + 1000 * SPD, rel=1e-12)


def test_transfer_between_virtual_processors(capsys):
    # the 2D torus mapped 1 to 1: virtual 1 -> 4 is three hardware hops
    _, out, _ = run(
        capsys, "transfer", GRID, "--bytes", "10", "1:4", "--virtual", "3", "--active", "4:1"
    )
    assert float(out) == pytest.approx(3 * LAT + 10 * 2 * SPD, rel=1e-12)


@pytest.mark.parametrize("bad", ["1-4", "1", "1:"])
def test_transfer_usage_errors(capsys, bad):
    with pytest.raises(SystemExit) as e:
        main(["transfer", GRID, "--bytes", "10", bad])
    assert e.value.code == 2
    assert "SRC:DST" in capsys.readouterr().err


def test_a_processor_name_the_topology_does_not_have_is_a_usage_error(capsys):
    # a word stands for a processor's name (# piui: names, issue 36); the grid has none
    assert main(["transfer", GRID, "--bytes", "10", "1:x"]) == 2
    assert "processor 'x' is not a processor number" in capsys.readouterr().err


def test_generate_prints_a_topology_section(capsys):
    status, out, _ = run(
        capsys, "generate", "grid", "4", "4", "--latency", "2.85e-05", "--speed", "9.1e-07"
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[:3] == ["begin topology", "    # piui: shape = 4 4", "    id = 1"]
    assert '    routing = "XY"' in lines and lines[-1] == "end topology"
    sample = load(GRID)
    text = dumps(sample)
    start = text.index("    begin topology")
    end = text.index("    end topology") + len("    end topology\n")
    again = loads(text[:start] + "\n".join("    " + ln for ln in lines) + "\n" + text[end:])
    generated = again.hardware()
    assert [link.connect for link in generated.links] == [
        link.connect for link in sample.hardware().links
    ]
    assert generated.shape == (4, 4) and generated.processor_count == 16


@pytest.mark.parametrize(
    "argv, routing, links",
    [(["ring", "6"], "1Dtorus", 6), (["torus", "4", "4"], "2Dtorus", 32),
     (["torus", "3", "3", "3"], "3Dtorus", 81), (["hypercube", "4"], "hypercube", 32),
     (["bus", "42"], "broadcast", 1), (["clique", "5"], "broadcast", 10)],
)  # fmt: skip
def test_generate_kinds(capsys, argv, routing, links):
    status, out, _ = run(
        capsys, "generate", *argv, "--latency", "1e-5", "--speed", "1e-6", "--processor-type", "3"
    )
    assert status == 0
    assert f'    routing = "{routing}"' in out
    assert f"    links = {links}\n" in out
    assert "        p[1] = 3\n" in out


def test_generate_usage_errors(capsys):
    status, _, err = run(capsys, "generate", "ring", "3", "3", "--latency", "1", "--speed", "1")
    assert status == 2 and "one size" in err
    with pytest.raises(SystemExit):
        main(["generate", "star", "5", "--latency", "1", "--speed", "1"])


def test_mapping_prints_dilation_and_congestion(capsys):
    status, out, _ = run(capsys, "mapping", GRID, "--virtual", "2")
    assert status == 0
    assert out == "virtual links: 16\ndilation: max 1, mean 1\ncongestion: 1\n"
    _, out, _ = run(capsys, "mapping", GRID, "--virtual", "3")
    assert out == "virtual links: 32\ndilation: max 3, mean 1.5\ncongestion: 2\n"


def test_mapping_of_a_scheme(capsys):
    status, out, _ = run(
        capsys, "mapping", GRID, "--virtual", "2", "--scheme", "snake", "--print-mapping"
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[1] == "dilation: max 3, mean 1.125"
    assert lines[3:7] == ["map[1] = 1", "map[2] = 2", "map[3] = 3", "map[4] = 4"]
    assert lines[7] == "map[5] = 8"
    status, _, err = run(capsys, "mapping", FWI, "--virtual", "1")
    assert status == 2 and "no virtual topology with id 1" in err
