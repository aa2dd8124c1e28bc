"""The MPI collectives extension, and run-time cost curves (Engine.sweep)."""

from __future__ import annotations

import math

import pytest
from conftest import SAMPLES

from parasol_core.analysis.validate import validate
from parasol_core.expr.engine import Engine
from parasol_core.model import Mpi
from parasol_core.session import Session
from parasol_core.syntax.loader import loads

COLLECTIVES = ("bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall",
               "barrier", "sendrecv")  # fmt: skip
GCEL = SAMPLES / "parsytec-gcel.machine"


def with_mpi(lines: str) -> str:
    head, _, _ = (SAMPLES / "grid4x4.machine").read_text().rpartition("end machine")
    return f"{head}    begin mpi\n{lines}    end mpi\nend machine\n"


def test_every_collective_is_accepted_and_evaluated():
    body = "".join(f"        {n} = {i + 1}e-6 * log(ar.procs) + ar.bytes * 1e-9\n"
                   for i, n in enumerate(COLLECTIVES))  # fmt: skip
    machine = loads(with_mpi(body))
    assert [d for d in validate(machine) if d.is_error] == []
    engine = Engine(machine, {"bytes": 1000, "procs": 16})
    for i, name in enumerate(COLLECTIVES):
        assert math.isclose(engine.value(f"mp.{name}"), (i + 1) * 1e-6 * math.log(16) + 1e-6)


def test_other_names_are_still_refused():
    machine = loads(with_mpi("        scan = 1\n"))
    assert any("unknown name 'scan' in the mpi section" in d.message for d in validate(machine))
    assert set(COLLECTIVES) <= set(Mpi.NAMES)


def test_a_1994_file_saves_byte_identical(tmp_path):
    original = GCEL.read_bytes()
    path = tmp_path / "gcel.machine"
    path.write_bytes(original)
    session = Session.open(path)
    assert set(session.machine.mpi.entries) == {"send", "receive"}
    session.set_expression("mp.bcast", "ar.procs * mp.send")
    session.undo()
    session.save()
    assert path.read_bytes() == original


def test_adding_a_collective_changes_only_its_own_line(tmp_path):
    path = tmp_path / "gcel.machine"
    path.write_bytes(GCEL.read_bytes())
    session = Session.open(path)
    session.set_expression("mp.bcast", "log(ar.procs) * mp.send")
    session.save()
    before = GCEL.read_text().splitlines()
    after = path.read_text().splitlines()
    added = [line for line in after if line not in before]
    assert [a.strip() for a in added] == ["bcast = log(ar.procs) * mp.send"]
    assert [line for line in after if line not in added] == before


def test_sweep_matches_evaluation_at_each_point():
    machine = loads(with_mpi("        send = tl(1)(1).latency + ar.bytes * tl(1)(1).speed\n"
                             "        bcast = log(ar.procs) * mp.send\n"))  # fmt: skip
    engine = Engine(machine)
    points = [{"bytes": b, "procs": p} for b in (1, 1024, 1 << 26) for p in (1, 2, 16)]
    swept = engine.sweep("mp.bcast", points)
    for point, value in zip(points, swept, strict=True):
        assert value == engine.evaluate_text("mp.bcast", runtime=True, args=point)
    assert engine.value("ar.bytes") == 1024  # the engine's own arguments are left alone
    assert engine.sweep("mp.bcast", [{"procs": 4}]) == [math.log(4) * engine.value("mp.send")]


def test_sweep_reports_errors_in_place():
    machine = loads(with_mpi("        bcast = 1 / (ar.procs - 2)\n"))
    values = Engine(machine).sweep("mp.bcast", [{"procs": 1}, {"procs": 2}, {"procs": 3}])
    assert values[0] == -1 and values[2] == 1
    assert "division by zero" in values[1].message


@pytest.mark.parametrize("bad", [{"bytes": "x"}, {"threads": 2}])
def test_sweep_checks_its_arguments(bad):
    machine = loads(with_mpi("        bcast = ar.bytes\n"))
    with pytest.raises(ValueError):
        Engine(machine).sweep("mp.bcast", [bad])


# the data sheet's Large messages table, in microseconds and 8-byte ints
SHEET = {
    "send": lambda p, n: 30 + 0.09 * n,
    "receive": lambda p, n: 60 + 0.5 * n,
    "sendrecv": lambda p, n: 90 + 0.6 * n,
    "alltoall": lambda p, n: 40 * p + 0.3 * p * n,
    "gather": lambda p, n: 200 * math.log(p) + 0.0009 * p * p * n,
    "allgather": lambda p, n: 40 * p + 0.3 * p * n,
    "reduce": lambda p, n: 300 + 2 * p + 0.6 * math.log(p) * n,
    "allreduce": lambda p, n: 300 + 6 * p + 1 * math.log(p) * n,
    "bcast": lambda p, n: 100 + 2 * p + 0.2 * math.log(p) * n,
    "barrier": lambda p, n: 10 + 8 * math.log(p),
}


def test_the_t3d_sample_is_the_data_sheet_in_seconds_and_bytes():
    from parasol_core import load

    machine = load(SAMPLES / "cray-t3d.machine")
    assert validate(machine) == []
    assert set(machine.mpi.entries) == set(SHEET)
    engine = Engine(machine)
    for name, sheet in SHEET.items():
        for p, ints in ((2, 32), (16, 1024), (128, 8192)):
            got = engine.sweep(f"mp.{name}", [{"procs": p, "bytes": 8 * ints}])[0]
            assert got == pytest.approx(sheet(p, ints) * 1e-6, rel=1e-12), name


def test_fitting_the_synthetic_t3d_measurements_recovers_the_sheet_form():
    from parasol_core.analysis.fit import Form, fit, read_csv

    text = (SAMPLES / "measurements" / "cray-t3d.mpi.bcast.csv").read_text()
    assert text.startswith("# SYNTHETIC")
    best = fit(read_csv(text))[0]
    assert best.form == Form("p", "bytes*log(p)")
    for name, sheet in (("c", 100e-6), ("s", 2e-6), ("d", 0.2e-6 / 8)):
        assert abs(best.coefficients[name] - sheet) <= 3 * best.errors[name]
