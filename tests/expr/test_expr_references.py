"""References (report 3.1.10, docs/decisions.md "References"): every prefix, resolved by id,
evaluated live; ``ar.bytes``/``ar.procs`` in the run-time sections; the report's own
examples on the GCel sample.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core import loads
from parasol_core.analysis.validate import validate
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

# Ids differ from positions throughout: processor 5 comes before processor 2, link 2
# before link 1, and the virtual topology has id 9.
EVERY_PREFIX = """\
begin machine
    id = 7
    name = "every prefix"
    processors = 2
    topologies = 2

    begin processor
        id = 5
        name = "second by id, first in the file"
        begin timings
            iga = 2e-06 1e-07
            ila = 5e-07
            ils = 2e-07
            goto = 1e-07
            sqrtr = 3e-06
        end timings
        begin cache
            size = 512
            speed = 4e-08
            smallloopspeedup = 2.0
        end cache
        begin combinations
            ia_spd = pt(5).iga / tl(1)(2).speed
        end combinations
    end processor

    begin processor
        id = 2
        name = "first by id"
        begin timings
            iga = 1e-06
        end timings
        begin combinations
            ia_spd = pt(2).iga / tl(1)(2).speed
            im_spd = po(5).ia_spd * 2
        end combinations
    end processor

    begin machinecombinations
        maxtotalspd = (tl(1)(2).connect(0) * to(1).links) / tl(1)(2).speed
    end machinecombinations

    begin topology
        id = 1
        name = "line of three"
        setup = 0.5
        routing = "XY"
        processors = 3
        links = 2
        begin procid
            p[1] = 5
            p[2] = 2
            p[3] = 5
        end procid
        begin linklist
            begin link
                id = 2
                latency = 1e-05
                speed = 1e-06
                connect = 2 1 2
            end link
            begin link
                id = 1
                latency = 3e-05
                speed = 4e-06
                connect = 2 2 3
            end link
        end linklist
    end topology

    begin virtual
        id = 9
        name = "reversed"
        setup = 0.25
        routing = "1Dtorus"
        processors = 3
        begin mapping
            map[1] = 3
            map[2] = 2
            map[3] = 1
        end mapping
    end virtual

    begin pvm
        send = tl(1)(2).latency + ar.bytes * tl(1)(2).speed
        broadcast = (ar.procs - 1) * pv.send
    end pvm

    begin express
        send = pv.send * 2
        sync = ar.procs * tl(1)(1).latency
    end express

    begin mpi
        send = ex.send + ar.bytes
        receive = mp.send / 2
    end mpi
end machine
"""


@pytest.fixture
def engine():
    machine = loads(EVERY_PREFIX)
    assert [d for d in validate(machine) if d.is_error] == []
    return Engine(machine)


@pytest.mark.parametrize(
    ("ref", "value"),
    [
        ("ma.id", 7), ("ma.processors", 2), ("ma.topologies", 2),
        ("pr(5).id", 5), ("pr(2).id", 2),
        ("pt(5).iga", 2e-06), ("pt(2).iga", 1e-06), ("pt(5).ila", 5e-07),
        ("pt(5).sqrti", 3e-06),  # the alias reads the canonical sqrtr
        ("pc(5).size", 512), ("pc(5).speed", 4e-08), ("pc(5).smallloopspeedup", 2.0),
        ("po(5).ia_spd", 2.0), ("po(2).ia_spd", 1.0), ("po(2).im_spd", 4.0),
        ("mc.maxtotalspd", 4e6),
        ("to(1).id", 1), ("to(1).setup", 0.5), ("to(1).processors", 3), ("to(1).links", 2),
        ("tp(1)(1)", 5), ("tp(1)(2)", 2), ("tp(1)(3)", 5),
        ("tl(1)(2).id", 2), ("tl(1)(2).latency", 1e-05), ("tl(1)(2).speed", 1e-06),
        ("tl(1)(1).speed", 4e-06), ("tl(1)(1).latency", 3e-05),
        ("tl(1)(2).connect(0)", 2), ("tl(1)(2).connect(1)", 1), ("tl(1)(2).connect(2)", 2),
        ("tl(1)(1).connect(1)", 2), ("tl(1)(1).connect(2)", 3),
        ("vt(9).id", 9), ("vt(9).setup", 0.25), ("vt(9).processors", 3),
        ("vm(9)(1)", 3), ("vm(9)(2)", 2), ("vm(9)(3)", 1),
        ("pv.send", 1e-05 + 1024 * 1e-06), ("pv.broadcast", 2 * (1e-05 + 1024 * 1e-06)),
        ("ex.send", 2 * (1e-05 + 1024 * 1e-06)), ("ex.sync", 3 * 3e-05),
        ("mp.send", 2 * (1e-05 + 1024 * 1e-06) + 1024),
        ("mp.receive", (2 * (1e-05 + 1024 * 1e-06) + 1024) / 2),
    ],
)  # fmt: skip
def test_every_reference_prefix_evaluates(engine, ref, value):
    result = engine.evaluate_text(ref)
    assert type(result) is type(value), (ref, result)
    assert result == pytest.approx(value, rel=1e-15)


def test_all_fourteen_prefixes_and_the_arguments_are_covered():
    prefixes = {"ma", "pr", "pt", "pc", "po", "mc", "to", "tp", "tl", "vt", "vm", "pv", "ex", "mp"}
    from parasol_core.expr.refs import PREFIXES

    assert set(PREFIXES) == prefixes | {"ar"}


def test_integer_fields_stay_integers_in_arithmetic(engine):
    assert engine.evaluate_text("to(1).links * tl(1)(2).connect(0)") == 4
    assert engine.evaluate_text("to(1).processors / 2") == 1  # C division of two ints


def test_run_time_arguments_default_to_1024_bytes_and_the_hardware_processor_count(engine):
    assert engine.args == {"bytes": 1024, "procs": 3}
    assert engine.evaluate_text("ar.bytes", runtime=True) == 1024
    assert engine.evaluate_text("ar.procs", runtime=True) == 3


def test_run_time_arguments_can_be_given(engine):
    args = {"bytes": 10, "procs": 5}
    assert engine.evaluate_text("ar.bytes * ar.procs", runtime=True, args=args) == 50
    # the run-time expressions an expression uses follow the arguments too
    send = 1e-05 + 10 * 1e-06
    assert engine.evaluate_text("pv.broadcast", args=args) == pytest.approx(4 * send)
    assert engine.evaluate_text("mp.receive", args=args) == pytest.approx((2 * send + 10) / 2)
    assert engine.value("pv.send") == pytest.approx(1e-05 + 1024e-06)  # engine unchanged


def test_an_engine_can_use_other_default_arguments():
    engine = Engine(loads(EVERY_PREFIX), {"bytes": 0})
    assert engine.value("pv.send") == pytest.approx(1e-05)
    assert engine.args == {"bytes": 0, "procs": 3}
    with pytest.raises(ValueError, match="unknown run-time argument"):
        Engine(loads(EVERY_PREFIX), {"size": 1})


def test_run_time_arguments_are_errors_outside_the_run_time_sections(engine):
    result = engine.evaluate_text("ar.bytes")
    assert isinstance(result, EvalError)
    assert "only defined inside the pvm, express and mpi sections" in result.message
    machine = loads(EVERY_PREFIX.replace("maxtotalspd = (", "maxtotalspd = ar.bytes + ("))
    diagnostics = [d for d in validate(machine) if d.is_error]
    assert len(diagnostics) == 1 and "ar.bytes" in diagnostics[0].message
    assert isinstance(Engine(machine).value("mc.maxtotalspd"), EvalError)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pt(1).iga", "no processor with id 1"),  # ids, not positions
        ("pt(5).xyz", "'xyz' is not a timing parameter"),
        ("pt(2).ila", "processor 2 has no timing 'ila'"),
        ("pc(2).size", "processor 2 has no cache size"),
        ("po(2).dd_spd", "defines no combination 'dd_spd'"),
        ("tl(1)(3).speed", "topology 1 has no link with id 3"),
        ("tl(1)(2).connect(3)", "connects 2 processors"),
        ("to(2).links", "no hardware topology with id 2"),
        ("tp(1)(4)", "gives no type for processor 4"),
        ("vt(1).id", "no virtual topology with id 1"),
        ("vm(9)(4)", "maps no processor 4"),
        ("mp.sync", "the MPI section defines no 'sync'"),
        ("ar.size", "the run-time arguments are ar.bytes and ar.procs"),
    ],
)  # fmt: skip
def test_unknown_references_are_errors_naming_them(engine, text, words):
    result = engine.evaluate_text(text, runtime=True)
    assert isinstance(result, EvalError)
    assert words in result.message


def test_an_unknown_reference_is_a_diagnostic_at_its_line_and_column():
    text = EVERY_PREFIX.replace("im_spd = po(5).ia_spd * 2", "im_spd = 2 * po(7).ia_spd")
    machine = loads(text)
    line_no = next(i for i, line in enumerate(text.splitlines(), 1) if "po(7)" in line)
    column = text.splitlines()[line_no - 1].index("po(7)") + 1
    for diagnostics in (validate(machine), Engine(machine).diagnostics()):
        errors = [d for d in diagnostics if d.is_error]
        assert [(d.line, d.column) for d in errors] == [(line_no, column)]
        assert "po(7).ia_spd" in errors[0].message
    value = Engine(machine).value("po(2).im_spd")
    assert isinstance(value, EvalError) and "no processor with id 7" in value.message


def test_references_to_expressions_evaluate_those_expressions(engine):
    # po(2).im_spd = po(5).ia_spd * 2, po(5).ia_spd = pt(5).iga / tl(1)(2).speed
    assert engine.value("po(2).im_spd") == pytest.approx(2 * 2e-06 / 1e-06)
    assert engine.dependencies("po(2).im_spd") == ["po(5).ia_spd", "pt(5).iga", "tl(1)(2).speed"]


# --------------------------------------------------------------------------- the report


@pytest.fixture(scope="module")
def gcel():
    return Engine(load(SAMPLES / "parsytec-gcel.machine"))


def test_gcel_ia_spd_is_the_reports_0_81(gcel):
    # report 3.1.3: ia_spd = pt(1).iga / tl(1)(1).speed "actually evaluates to 0.81"
    assert round(gcel.value("po(1).ia_spd"), 2) == 0.81


def test_gcel_maxtotalspd_is_the_reports_2_145e9(gcel):
    # report 3.1.4: (tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed = 2.145e+9
    assert f"{gcel.value('mc.maxtotalspd'):.4g}" == "2.145e+09"
    assert gcel.evaluate_text("tl(1)(1).connect(0) * to(1).links") == 2 * 976


LOOP_MODEL = EVERY_PREFIX.replace("smallloopspeedup = 2.0", "smallloopspeedup = 1.25")


def test_the_section_3_1_9_loop_example():
    # "(4*pt(1).ila + 2*pt(1).ils + pt(1).goto) / pc(1).smallloopspeedup": four integer
    # additions, two assignments and a goto, in cache (here processor id 5).
    engine = Engine(loads(LOOP_MODEL))
    text = "(4*pt(5).ila + 2*pt(5).ils + pt(5).goto) / pc(5).smallloopspeedup"
    expected = (4 * 5e-07 + 2 * 2e-07 + 1e-07) / 1.25
    assert engine.evaluate_text(text) == pytest.approx(expected, rel=1e-15)
    from parasol_core.analysis.block_time import estimate_block

    block = estimate_block(engine.machine, 5, {"ila": 4, "ils": 2, "goto": 1}, cached=True)
    assert block.mean == pytest.approx(expected, rel=1e-15)
