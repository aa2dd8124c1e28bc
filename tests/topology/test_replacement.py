"""What the preview shows is what Apply does (issue 33, item 2), in the core.

A generated topology is planned once (``Session.plan_generation``: the new topology and
every consequence) and the same plan is applied (``Session.apply_replacement``). For any
generator over any model with virtual topologies, and any answer to the choices it
leaves: the count it announces is the count after Apply, every processor whose type
changes and every mapping that moves or goes is named before, nothing else changes,
Apply leaves no new error unless the plan said which, and one undo brings back the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import loads
from parasol_core.session import Session, SessionError
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import generate_over
from parasol_core.topology.replacement import (
    KEEP_SWITCHES,
    LEAVE,
    REMAP,
    REMOVE,
    Choices,
    plan_replacement,
    ranges_text,
)
from parasol_core.topology.shape import processor_count
from parasol_core.topology.switches import compute_processors, count_text, with_unit

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

GENERATED = st.sampled_from([
    ("grid", (4, 4)), ("grid", (3, 5)), ("grid", (2, 2, 2)), ("torus", (4, 3, 2, 2, 3, 2)),
    ("torus", (3, 3)), ("torus", (6, 6, 3)), ("ring", (20,)), ("hypercube", (3,)),
    ("bus", (6,)), ("clique", (5,)), ("fattree", (2, 3)), ("fattree", (4, 3)),
    ("fattree2", (4, 2, 3)), ("dragonfly", (5, 2, 2, 2)), ("dragonfly", (3, 2, 1, 1)),
])  # fmt: skip


def model(name: str) -> Session:
    """A sample with virtual topologies: the grid's own, or on the dragonfly a ring and a
    2D torus of its 72 compute processors."""
    s = Session.open(SAMPLES / name)
    if not s.machine.virtuals:
        s.new_virtual("1Dtorus", 72)
        s.new_virtual("2Dtorus", 72)
        s.mark_saved()
    return s


def errors(session: Session) -> set[str]:
    return {d.message for d in session.revalidate() if d.is_error}


def types_of(session: Session) -> dict[int, int]:
    return dict(session.machine.hardware().types.items())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["grid4x4.machine", "slingshot-dragonfly.machine"]), GENERATED,
       st.sampled_from([Choices(), Choices(switches=KEEP_SWITCHES), Choices(mappings=LEAVE),
                        Choices(mappings=REMOVE)]))  # fmt: skip
def test_what_the_plan_says_is_what_apply_does(name, generated, choices):
    s = model(name)
    m = s.machine
    text, before_errors = dumps(m), errors(s)
    old = m.hardware()
    old_types = types_of(s)
    mappings = {v.id: dict(v.mapping) for v in m.virtuals}
    plan = s.plan_generation(old.id, *generated, 1e-6, 1e-9, choices)
    said = "\n".join(plan.summary())
    assert dumps(m) == text  # planning changes nothing

    s.apply_replacement(plan)
    hw = m.hardware()
    assert hw is plan.new
    # the count it announced is the count the model has
    assert said.splitlines()[0] == f"{plan.new.name}: {with_unit(count_text(m, hw))}"
    assert [p for p in m.processors if p.id in {q.id for q in plan.add_processors}] == list(
        plan.add_processors
    )
    # every processor whose type changed was named, with its old and new type
    new_types = types_of(s)
    changed = {p for p in range(1, min(len(old_types), processor_count(hw)) + 1)
               if p in old_types and new_types.get(p) != old_types[p]}  # fmt: skip
    named = {int(p) for change in plan.types for p in change.numbers.tolist()}
    assert changed == named
    for change in plan.types:
        assert change.text in said and ranges_text(change.numbers) in change.text
    # every mapping that moved or went was named, and nothing else about them changed
    fixes = {fix.virtual.id: fix for fix in plan.mappings}
    for vid, before in mappings.items():
        virt = m.virtual(vid)
        fix = fixes.get(vid)
        if fix is None:
            assert virt is not None and dict(virt.mapping) == before
            continue
        assert fix.text in said
        if fix.action == REMOVE:
            assert virt is None
        elif fix.action == REMAP:
            assert dict(virt.mapping) == {**before, **fix.moves}
            assert set(fix.moves) == set(fix.unfit)
            assert set(fix.moves.values()) <= set(compute_processors(m, hw).tolist())
        else:
            assert dict(virt.mapping) == before
    # no new error, unless the plan said which
    new_errors = errors(s) - before_errors
    if not plan.problems():
        assert not new_errors, (said, new_errors)
    else:
        left = sum(len(fix.unfit) for fix in plan.mappings if fix.action == LEAVE)
        assert sum("map[" in e for e in new_errors) == left
        assert choices != Choices()  # the defaults never break the model
    # one step back is the file
    s.undo()
    assert dumps(m) == text and m.hardware() is old


def test_a_torus_over_the_dragonfly_is_the_count_the_preview_said():
    """The instance of the issue: the preview said "288 processors"; Apply gave "252
    processors and 36 switches" (the old routers stayed switches inside the torus)."""
    s = model("slingshot-dragonfly.machine")
    plan = s.plan_generation(1, "torus", (4, 3, 2, 2, 3, 2), 3.5e-7, 4e-11)
    assert plan.count == "288 processors"
    assert ('processors 73..108 were switches (type 2 "Rosetta switch"): they become compute '
            'processors (type 1 "AMD EPYC")') in plan.summary()  # fmt: skip
    [option] = [o for o in plan.options if o.key == "switches"]
    assert option.chosen == "drop" and [a for a, _ in option.answers] == ["drop", "keep"]
    s.apply_replacement(plan)
    assert count_text(s.machine, s.machine.hardware()) == "288"
    s.undo()
    kept = s.plan_generation(1, "torus", (4, 3, 2, 2, 3, 2), 3.5e-7, 4e-11,
                             Choices(switches=KEEP_SWITCHES))  # fmt: skip
    assert kept.count == "252 compute processors + 36 switches"
    assert any("73..108 stay switches" in line for line in kept.summary())
    s.apply_replacement(kept)
    assert count_text(s.machine, s.machine.hardware()) == "252 compute + 36 switches"


def test_a_fat_tree_under_a_72_processor_virtual_topology_moves_what_no_longer_fits():
    """The instance of the issue: fat tree 4 3 under a 72-processor virtual topology
    left 8 errors "map[v] ... is a switch", with no word in the preview."""
    s = Session.open(SAMPLES / "slingshot-dragonfly.machine")
    virt = s.new_virtual("1Dtorus", 72)
    plan = s.plan_generation(1, "fattree", (4, 3), 3.5e-7, 4e-11)
    said = plan.summary()
    assert 'virtual topology 1 "1Dtorus on 72": map[65..72] would be on switches (65..72): ' \
           "moved onto 1..8" in said  # fmt: skip
    assert 'processors 65..72 (type 1 "AMD EPYC") become switches (type 2 "Rosetta switch")' in said
    assert not plan.problems()
    s.apply_replacement(plan)
    assert not [d for d in s.revalidate() if d.is_error]
    assert [virt.mapping[v] for v in range(65, 73)] == list(range(1, 9))
    s.undo()
    left = s.plan_generation(1, "fattree", (4, 3), 3.5e-7, 4e-11, Choices(mappings=LEAVE))
    assert len(left.problems()) == 1 and "8 errors" in left.problems()[0]
    s.apply_replacement(left)
    assert sum(d.is_error for d in s.revalidate()) == 8


def test_a_plan_made_before_an_edit_is_refused():
    s = model("slingshot-dragonfly.machine")
    plan = s.plan_generation(1, "fattree", (4, 3), 3.5e-7, 4e-11)
    virt = s.machine.virtuals[0]
    s.set_mapping(virt.id, {1: virt.mapping[2], 2: virt.mapping[1]})  # a mapping edit
    text = dumps(s.machine)
    with pytest.raises(SessionError, match="changed since the preview"):
        s.apply_replacement(plan)
    assert dumps(s.machine) == text


def test_replace_topology_applies_the_same_rules():
    """The session's plain replace (a topology made elsewhere) plans the same way: the
    mappings that no longer fit move, in the same undo step."""
    s = model("slingshot-dragonfly.machine")
    m = s.machine
    new = generate_over(m.hardware(), "fattree", (4, 3), 1e-6, 1e-9, machine=m)
    done = s.replace_topology(1, new)
    assert done.mappings and not [d for d in s.revalidate() if d.is_error]
    assert s.history.undo_label == "Replace topology 1"
    s.undo()
    assert plan_replacement(m, 1, new).summary() == done.summary()


def test_a_virtual_topology_that_took_the_hardware_shape_keeps_it():
    """The grid's ring has no shape of its own: a 2Dtorus with the hardware's shape
    would lose its virtual links over a 16-processor ring; it keeps its 4 x 4."""
    s = Session.open(SAMPLES / "grid4x4.machine")
    m = s.machine
    ring = m.virtual(2)
    s.set_virtual_routing(ring.id, "XY")  # its links come from the hardware's 4 x 4 shape
    assert ring.shape is None
    plan = s.plan_generation(1, "ring", (16,), 1e-6, 1e-9)
    assert (ring, (4, 4)) in plan.shapes
    assert 'virtual topology 2 "ring" keeps the 4 x 4 shape it took from the hardware' in (
        plan.summary()
    )
    s.apply_replacement(plan)
    assert ring.shape == (4, 4)


def test_ranges_in_words():
    assert ranges_text([65, 66, 67, 68]) == "65..68"
    assert ranges_text([1, 2, 5, 7, 8, 9]) == "1, 2, 5, 7..9"
    assert ranges_text(range(1, 40, 2), limit=3) == "1, 3, 5 and 17 more runs"


@pytest.mark.parametrize(
    "kind, sizes",
    [("torus", (4, 4)), ("fattree", (4, 3)), ("dragonfly", (3, 2, 1, 1)), ("ring", (16,))],
)
def test_a_generated_topology_keeps_the_forwarding_cost_and_duplex_note(kind, sizes):
    """Regenerating keeps what the links are made of (issue 33's notes): the forwarding
    cost and the duplex fraction, saved in the file; one undo brings back the old
    topology with them."""
    text = (SAMPLES / "grid4x4.machine").read_text()
    notes = "# piui: forward = 2e-09\n        # piui: duplex = 0.25\n        "
    text = text.replace("# piui: shape = 4 4\n        id = 1", notes + "# piui: shape = 4 4\n"
                        "        id = 1")  # fmt: skip
    s = Session(loads(text))
    assert (s.machine.hardware().forward, s.machine.hardware().duplex) == (2e-9, 0.25)
    before = dumps(s.machine)
    s.apply_replacement(s.plan_generation(1, kind, sizes, 1e-6, 1e-9))
    hw = s.machine.hardware()
    assert (hw.forward, hw.duplex) == (2e-9, 0.25)
    text = dumps(s.machine)
    assert "# piui: forward = 2e-09" in text and "# piui: duplex = 0.25" in text
    s.undo()
    assert dumps(s.machine) == before
