"""The dependency engine: incremental re-evaluation, dependency queries, cycles."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import loads
from parasol_core.analysis.validate import validate
from parasol_core.expr.engine import Engine, key_for_slot
from parasol_core.expr.evaluate import EvalError, same_value
from parasol_core.model import Timing
from parasol_core.session.edit import set_value, slot
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

MODEL = """\
begin machine
    id = 1
    name = "chain"
    processors = 1
    topologies = 1
    begin processor
        id = 1
        name = "p"
        begin timings
            iga = 2e-06
            dga = 3e-06
            sqrtr = 5e-06
        end timings
        begin cache
            size = 64
            smallloopspeedup = 2.0
        end cache
        begin combinations
            ia_spd = pt(1).iga / tl(1)(1).speed
            im_spd = po(1).ia_spd * 2
            da_spd = pt(1).dga * 3
            ds_spd = pt(1).sqrti / pc(1).smallloopspeedup
        end combinations
    end processor
    begin machinecombinations
        maxtotalspd = po(1).im_spd + tl(1)(1).connect(0) + tl(1)(1).connect(2)
    end machinecombinations
    begin topology
        id = 1
        name = "three"
        routing = "broadcast"
        processors = 3
        links = 1
        begin procid
            p[1] = 1
            p[2] = 1
            p[3] = 1
        end procid
        begin linklist
            begin link
                id = 1
                latency = 1e-05
                speed = 1e-06
                connect = 2 1 2
            end link
        end linklist
    end topology
    begin mpi
        send = tl(1)(1).latency + ar.bytes * tl(1)(1).speed
        receive = mp.send * ar.procs
    end mpi
end machine
"""

CYCLE = MODEL.replace("da_spd = pt(1).dga * 3", "da_spd = mc.maxtotalspd * 0 + pt(1).dga").replace(
    "maxtotalspd = po(1).im_spd", "maxtotalspd = po(1).da_spd + po(1).im_spd"
)


@pytest.fixture
def machine():
    m = loads(MODEL)
    assert [d for d in validate(m) if d.is_error] == []
    return m


@pytest.fixture
def engine(machine):
    return Engine(machine)


def fresh_values(machine):
    return Engine(machine).values()


def assert_current(engine):
    """The engine agrees with one built from scratch on the model as it is now."""
    expected = fresh_values(engine.machine)
    actual = engine.values()
    assert list(actual) == list(expected)
    for key in expected:
        assert same_value(actual[key], expected[key]), (key, actual[key], expected[key])


# --------------------------------------------------------------------------- values


def test_values_of_every_expression_in_file_order(engine):
    assert engine.keys() == [
        "po(1).ia_spd", "po(1).im_spd", "po(1).da_spd", "po(1).ds_spd",
        "mc.maxtotalspd", "mp.send", "mp.receive",
    ]  # fmt: skip
    v = engine.values()
    assert v["po(1).ia_spd"] == pytest.approx(2.0)
    assert v["po(1).im_spd"] == pytest.approx(4.0)
    assert v["mc.maxtotalspd"] == pytest.approx(4.0 + 2 + 2)
    assert v["mp.receive"] == pytest.approx((1e-05 + 1024e-06) * 3)
    assert engine.value("pt(1).iga") == 2e-06
    assert engine.value("pt(1).sqrti") == 5e-06  # alias spelling of a stored value


def test_update_re_evaluates_only_what_depends_on_the_change(machine, engine):
    before = engine.evaluations
    set_value(machine, "pt(1).iga", "4e-06")
    changed = engine.update(["pt(1).iga"])
    # ia_spd, im_spd (through ia_spd) and maxtotalspd (through im_spd); not the other four
    assert engine.evaluations - before == 3
    assert set(changed) == {"po(1).ia_spd", "po(1).im_spd", "mc.maxtotalspd"}
    assert changed["po(1).ia_spd"] == pytest.approx(4.0)
    assert changed["mc.maxtotalspd"] == pytest.approx(8.0 + 4)
    assert_current(engine)

    before = engine.evaluations
    set_value(machine, "pt(1).dga", "1e-06")
    assert set(engine.update("pt(1).dga")) == {"po(1).da_spd"}
    assert engine.evaluations - before == 1


def test_an_unchanged_value_costs_nothing(machine, engine):
    before = engine.evaluations
    set_value(machine, "pt(1).iga", "2e-06")  # the value it already has
    assert engine.update(["pt(1).iga"]) == {}
    assert engine.evaluations == before
    assert engine.update(["pt(1).igm"]) == {}  # used by nothing
    assert engine.evaluations == before


def test_only_values_that_actually_change_are_reported(machine, engine):
    # doubling speed and iga together leaves ia_spd as it was
    machine.processors[0].timings["iga"] = Timing(4e-06)
    machine.topologies[0].links[0].speed = Timing(2e-06)
    changed = engine.update(["pt(1).iga", "tl(1)(1).speed"])
    assert "po(1).ia_spd" not in changed and "po(1).im_spd" not in changed
    assert set(changed) == {"mp.send", "mp.receive"}
    assert_current(engine)


def test_update_takes_the_slots_edits_went_through(machine, engine):
    s = set_value(machine, "pt(1).sqrti", "1e-05")  # alias: stored as sqrtr
    assert key_for_slot(s) == "pt(1).sqrtr"
    assert engine.update([s]) == {"po(1).ds_spd": pytest.approx(5e-06)}
    s = set_value(machine, "pc(1).smallloopspeedup", "4.0")
    assert key_for_slot(s) == "pc(1).smallloopspeedup"
    assert engine.update(s)["po(1).ds_spd"] == pytest.approx(2.5e-06)


def test_a_new_connect_list_reaches_every_connect_reference(machine, engine):
    s = set_value(machine, "tl(1)(1).connect", "3 2 3 1")
    assert key_for_slot(s) == "tl(1)(1).connect"
    changed = engine.update([s])
    # connect(0) went from 2 to 3 and connect(2) from 2 to 3
    assert changed == {"mc.maxtotalspd": pytest.approx(4.0 + 3 + 3)}
    # any spelling of a connect reference names the list
    set_value(machine, "tl(1)(1).connect", "2 1 3")
    assert engine.update(["tl(1)(1).connect(2)"]) == {"mc.maxtotalspd": pytest.approx(4.0 + 5)}


def test_a_value_that_disappears_and_comes_back(machine, engine):
    del machine.processors[0].timings["dga"]
    changed = engine.update(["pt(1).dga"])
    assert isinstance(changed["po(1).da_spd"], EvalError)
    assert "has no timing 'dga'" in changed["po(1).da_spd"].message
    set_value(machine, "pt(1).dga", "1e-06")
    assert engine.update(["pt(1).dga"]) == {"po(1).da_spd": pytest.approx(3e-06)}


def test_a_missing_value_from_the_start_heals_when_it_is_set():
    machine = loads(MODEL.replace("dga = 3e-06", "igm = 1e-06"))
    engine = Engine(machine)
    assert isinstance(engine.value("po(1).da_spd"), EvalError)
    set_value(machine, "pt(1).dga", "2e-06")
    assert engine.update(["pt(1).dga"]) == {"po(1).da_spd": pytest.approx(6e-06)}


def test_errors_propagate_through_references_and_say_where_they_arose(machine, engine):
    set_value(machine, "tl(1)(1).speed", "0.0")
    changed = engine.update(["tl(1)(1).speed"])
    ia, im = changed["po(1).ia_spd"], changed["po(1).im_spd"]
    assert isinstance(ia, EvalError) and "division by zero" in ia.message
    assert ia.source == "po(1).ia_spd"
    assert im.source == "po(1).ia_spd" and im.message == ia.message
    assert "(in po(1).ia_spd)" in str(im)
    # the error points at the division in ia_spd's own text
    entry = engine.entry("po(1).ia_spd")
    text = entry.expr.text
    start, end = ia.start - entry.expr.offset, ia.end - entry.expr.offset
    assert text[start:end] == text


def test_an_expression_edit_rebuilds(machine, engine):
    s = set_value(machine, "po(1).da_spd", "po(1).ia_spd + 1")
    assert key_for_slot(s) == "po(1).da_spd"
    changed = engine.update([s])
    assert changed == {"po(1).da_spd": pytest.approx(3.0)}
    assert engine.dependencies("po(1).da_spd") == ["po(1).ia_spd", "pt(1).iga", "tl(1)(1).speed"]
    # a new expression is picked up too
    set_value(machine, "po(1).dd_spd", "2 * po(1).da_spd")
    assert engine.update(["po(1).dd_spd"]) == {"po(1).dd_spd": pytest.approx(6.0)}
    assert_current(engine)


def test_an_id_edit_rebuilds(machine, engine):
    set_value(machine, "pr(1).id", "4")
    changed = engine.update(["pr(1).id"])
    # pt(1) and pc(1) name nothing now; the po(1) expressions are now po(4) ones
    assert "mc.maxtotalspd" in changed and isinstance(changed["mc.maxtotalspd"], EvalError)
    assert "po(4).ia_spd" in changed and isinstance(changed["po(4).ia_spd"], EvalError)
    assert_current(engine)


def test_rebuild_after_a_structural_edit(machine, engine):
    machine.combinations.entries.clear()
    engine.rebuild()
    assert "mc.maxtotalspd" not in engine.values()
    assert engine.dependents("po(1).im_spd") == []


# --------------------------------------------------------------------------- arguments


def test_set_args_re_evaluates_the_run_time_expressions_only(engine):
    before = engine.evaluations
    changed = engine.set_args({"bytes": 0})
    assert set(changed) == {"mp.send", "mp.receive"}
    assert engine.evaluations - before == 2
    assert engine.value("mp.send") == pytest.approx(1e-05)
    assert engine.set_args({"bytes": 0}) == {}
    assert engine.args == {"bytes": 0, "procs": 3}


def test_the_default_process_count_follows_the_hardware_topology(machine, engine):
    assert engine.dependencies("mp.receive") == [
        "ar.bytes", "ar.procs", "mp.send", "tl(1)(1).latency", "tl(1)(1).speed",
        "to(1).processors",
    ]  # fmt: skip
    set_value(machine, "to(1).processors", "6")
    changed = engine.update(["to(1).processors"])
    assert changed == {"mp.receive": pytest.approx((1e-05 + 1024e-06) * 6)}
    engine.set_args({"procs": 2})  # an explicit count no longer follows the topology
    set_value(machine, "to(1).processors", "5")
    assert engine.update(["to(1).processors"]) == {}
    assert "to(1).processors" not in engine.dependencies("mp.receive")


def test_evaluate_text_with_arguments_leaves_the_engine_alone(engine):
    value = engine.evaluate_text("mp.receive", args={"bytes": 1, "procs": 10})
    assert value == pytest.approx((1e-05 + 1e-06) * 10)
    assert engine.value("mp.receive") == pytest.approx((1e-05 + 1024e-06) * 3)
    assert engine.evaluate_text("ar.bytes + 1", runtime=True) == 1025
    with pytest.raises(ValueError, match="must be a number"):
        engine.evaluate_text("mp.send", args={"bytes": "many"})


def test_evaluate_text_reports_syntax_errors_as_values(engine):
    value = engine.evaluate_text("po(1).ia_spd +")
    assert isinstance(value, EvalError) and value.message.startswith("syntax error")
    with pytest.raises(ValueError):
        engine.update(["not a reference"])


# --------------------------------------------------------------------------- the graph


def test_dependencies_direct_and_transitive(engine):
    assert engine.dependencies("mc.maxtotalspd", transitive=False) == [
        "po(1).im_spd", "tl(1)(1).connect",
    ]  # fmt: skip
    assert engine.dependencies("mc.maxtotalspd") == [
        "po(1).ia_spd", "po(1).im_spd", "pt(1).iga", "tl(1)(1).connect", "tl(1)(1).speed",
    ]  # fmt: skip
    assert engine.dependencies("po(1).ds_spd") == ["pc(1).smallloopspeedup", "pt(1).sqrtr"]
    assert engine.dependencies("pt(1).iga") == []


def test_dependents_direct_and_transitive(engine):
    assert engine.dependents("pt(1).iga", transitive=False) == ["po(1).ia_spd"]
    assert engine.dependents("pt(1).iga") == ["mc.maxtotalspd", "po(1).ia_spd", "po(1).im_spd"]
    assert engine.dependents("tl(1)(1).speed") == [
        "mc.maxtotalspd", "mp.receive", "mp.send", "po(1).ia_spd", "po(1).im_spd",
    ]  # fmt: skip
    assert engine.dependents("po(1).ia_spd") == ["mc.maxtotalspd", "po(1).im_spd"]
    # any spelling of the reference
    assert engine.dependents("pt(1).sqrti") == ["po(1).ds_spd"]
    assert engine.dependents("tl(1)(1).connect(0)") == ["mc.maxtotalspd"]
    assert engine.dependents("ar.bytes") == ["mp.receive", "mp.send"]
    assert engine.dependents("pt(1).igm") == []


def test_order_puts_every_expression_after_what_it_uses(engine):
    order = engine.order()
    for key in order:
        for dep in engine.dependencies(key, transitive=False):
            if dep in order:
                assert order.index(dep) < order.index(key)


# --------------------------------------------------------------------------- cycles


def test_a_cycle_names_every_member_and_poisons_what_uses_it():
    machine = loads(CYCLE)
    engine = Engine(machine)
    assert engine.cycles() == [["mc.maxtotalspd", "po(1).da_spd"]]
    for key in ("mc.maxtotalspd", "po(1).da_spd"):
        value = engine.value(key)
        assert isinstance(value, EvalError)
        assert "cycle" in value.message
        assert "mc.maxtotalspd" in value.message and "po(1).da_spd" in value.message
    assert not isinstance(engine.value("po(1).im_spd"), EvalError)
    before = engine.evaluations
    set_value(machine, "pt(1).dga", "1e-06")
    assert engine.update(["pt(1).dga"]) == {}
    assert engine.evaluations == before


def test_a_longer_cycle_and_a_self_reference():
    text = MODEL.replace("ia_spd = pt(1).iga / tl(1)(1).speed", "ia_spd = mc.maxtotalspd / 2")
    text = text.replace("da_spd = pt(1).dga * 3", "da_spd = po(1).da_spd + 1")
    engine = Engine(loads(text))
    cycles = sorted(engine.cycles())
    assert cycles == [
        ["mc.maxtotalspd", "po(1).im_spd", "po(1).ia_spd"],  # in the order they refer
        ["po(1).da_spd"],
    ]
    value = engine.value("po(1).ia_spd")
    assert "mc.maxtotalspd -> po(1).im_spd -> po(1).ia_spd -> mc.maxtotalspd" in value.message
    assert "po(1).da_spd -> po(1).da_spd" in engine.value("po(1).da_spd").message


def test_the_validator_reports_a_cycle_at_each_member_naming_all_of_them():
    machine = loads(CYCLE)
    errors = [d for d in validate(machine) if d.is_error]
    lines = CYCLE.splitlines()
    assert len(errors) == 2
    for d, name in zip(errors, ("da_spd", "maxtotalspd"), strict=True):
        assert lines[d.line - 1].strip().startswith(f"{name} =")
        assert "po(1).da_spd" in d.message and "mc.maxtotalspd" in d.message
        assert "cycle" in d.message
    assert [d.message for d in Engine(machine).diagnostics()] == [d.message for d in errors]


# --------------------------------------------------------------------------- consistency

EDITS = st.lists(
    st.tuples(
        st.sampled_from(
            ["pt(1).iga", "pt(1).dga", "pt(1).sqrti", "tl(1)(1).speed", "tl(1)(1).latency",
             "pc(1).smallloopspeedup", "to(1).processors", "tl(1)(1).connect"]
        ),
        st.integers(0, 4),
    ),
    min_size=1,
    max_size=8,
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_updates_always_agree_with_a_fresh_engine(edits):
    machine = loads(MODEL)
    engine = Engine(machine)
    for ref, n in edits:
        if ref == "tl(1)(1).connect":
            text = ["2 1 2", "3 1 2 3", "2 3 1", "2 2 3", "3 3 2 1"][n]
        elif ref == "to(1).processors":
            text = str(n + 1)
        else:
            text = ["0.0", "1e-06", "2.5e-06", "3", "1e-06 1e-07"][n]
        s = slot(machine, ref)
        before = engine.values()
        set_value(machine, ref, text)
        changed = engine.update([s])
        assert_current(engine)
        after = engine.values()
        assert set(changed) == {k for k in after if not same_value(before[k], after[k])}


# --------------------------------------------------------------------------- speed


def test_an_update_on_the_gcel_sample_is_incremental(monkeypatch):
    """An update re-reads the changed value and evaluates only what uses it: it never
    rebuilds the graph nor evaluates the rest (which is what keeps it well under a
    millisecond; benchmarks/bench_engine.py times it against a full re-evaluation and
    a rebuild, in the same run)."""
    machine = load(SAMPLES / "parsytec-gcel.machine")
    engine = Engine(machine)
    link = machine.topologies[0].links[0]
    rebuilt: list[int] = []
    monkeypatch.setattr(Engine, "rebuild", lambda self: rebuilt.append(1))
    before = engine.evaluations
    n = 300
    changed = set()
    for i in range(n):
        link.speed = Timing(9.1e-07 * (1 + 0.001 * (i % 50 + 1)))
        changed |= set(engine.update(["tl(1)(1).speed"]))
    per_update = (engine.evaluations - before) / n
    assert rebuilt == []
    assert changed and len(changed) <= per_update < len(engine.keys()), (changed, per_update)
    monkeypatch.undo()
    assert_current(engine)
