"""The Program window's core: a trace replayed on a sample model, what its timeline
draws and the hover says, the flop a model can give, before -> after in words, and
what dominates (each knob turned on a copy, the model on screen left alone)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from program_traces import write_stencil

from parasol_core.frontend import program as core
from parasol_core.frontend.timeline import COMPUTATION, RECEIVING, SENDING, WAITING
from parasol_core.replay import DEFAULT_FLOP, replay
from parasol_core.session import Session


@pytest.fixture
def gcel(sample_copy):
    return Session.open(sample_copy("parsytec-gcel.machine"))


def test_the_spans_of_each_rank_add_up_to_its_breakdown(tmp_path, gcel):
    program = core.read_program(write_stencil(tmp_path, ranks=8, iterations=6))
    result = replay(gcel.machine, program.trace, program.options_for(gcel.machine))
    rank, code, start, end, op = core.spans(result)
    length = end - start
    assert (length > 0).all()
    for r in range(8):
        mine = rank == r
        assert length[mine & (code == COMPUTATION)].sum() == pytest.approx(result.computation[r])
        assert length[mine & (code == WAITING)].sum() == pytest.approx(result.waiting[r])
        talk = mine & ((code == SENDING) | (code == RECEIVING))
        assert length[talk].sum() == pytest.approx(result.communication[r], abs=1e-12)
    # every span lies within its operation
    assert (start >= result.start[op] - 1e-12).all() and (end <= result.end[op] + 1e-12).all()


def test_the_hover_names_the_operation_and_its_trace_line(tmp_path, gcel):
    path = write_stencil(tmp_path, ranks=4, iterations=2)
    program = core.read_program(path)
    prediction = core.predict(gcel.machine, program)
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text == "2 compute 2000000")
    i = prediction.timeline.at(1e-9, 2)  # rank 2's first computation, at the start
    words = prediction.describe(i)
    assert words.startswith("rank 2: compute")
    assert words.endswith(f"{path}:{line}")


def test_a_model_without_local_timings_computes_with_its_global_ones(gcel, sample_copy):
    assert core.flop_for(gcel.machine) == core.GLOBAL_FLOP
    fat_tree = Session.open(sample_copy("hdr-fat-tree.machine"))
    assert core.flop_for(fat_tree.machine) == DEFAULT_FLOP


def test_before_and_after_in_words():
    assert core.before_after_text(None, 1.5) == "Predicted time: 1.5 s"
    assert core.before_after_text(2.0, 1.5) == "Predicted time: 2 s → 1.5 s (−25 %)"
    assert core.before_after_text(1e-3, 2e-3) == "Predicted time: 1 ms → 2 ms (+100 %)"


def test_what_dominates_turns_each_knob_on_a_copy(tmp_path, gcel):
    program = core.read_program(write_stencil(tmp_path, ranks=8, iterations=4))
    text = gcel.text()
    found = core.dominance(gcel.machine, program)
    assert gcel.text() == text  # the model itself is left alone
    before = core.predict(gcel.machine, program).makespan
    assert found.before == before
    effects = {e.knob: e for e in found.effects}
    # the flop is (dga + dgm) / 2: a global double addition 10 % faster saves the time
    # of half of every flop's time, 1/1.1 of it: measured against a replay of a model
    # scaled by hand
    scaled = Session(copy.deepcopy(gcel.machine), None)
    scaled.set_value("pt(1).dga", gcel.machine.processors[0].timings["dga"].scaled(1 / 1.1))
    by_hand = replay(scaled.machine, program.trace, program.options_for(scaled.machine))
    assert effects["group:addition"].seconds == pytest.approx(by_hand.makespan, rel=1e-12)
    assert effects["group:addition"].seconds < before
    # a group the flop does not use saves nothing; one the model has no timing of is
    # not turned at all (nothing to make faster)
    assert effects["group:division"].seconds == pytest.approx(before, rel=1e-12)
    assert effects["group:complex"].seconds is None
    # faster links: less time, and a faster everything saves the most
    assert effects["links:speed"].seconds < before
    ranked = found.ranked()
    assert ranked[0].knob == "group:all"
    rows = core.dominance_rows(found)
    assert [label for label, _ in rows] == [e.label for e in ranked]
    assert np.all(np.diff([p for _, p in rows]) <= 1e-12)


def test_the_placement_and_the_machine_traced_on_become_the_replay_s_options(
        tmp_path, sample_copy):  # fmt: skip
    grid = Session.open(sample_copy("grid4x4.machine")).machine
    assert core.placement_choices(grid) == [(2, "virtual topology 2 (ring): 16 mapped"),
                                           (3, "virtual topology 3 (2D torus): 16 mapped")]  # fmt: skip
    program = core.read_program(write_stencil(tmp_path, ranks=16, iterations=2))
    plain = program.options_for(grid)
    assert (plain.virtual, plain.hostfile, plain.traced_on) == (None, None, None)
    program.virtual = 2
    assert program.options_for(grid).virtual == 2
    on_ring = replay(grid, program.trace, program.options_for(grid))
    assert list(on_ring.host) == [grid.virtual(2).mapping[v] for v in range(1, 17)]
    # another model: the placement goes, the traced-on model stays with the trace
    program.traced_on = grid
    program.another_model()
    assert program.virtual is None and program.hostfile is None
    assert program.options_for(grid).traced_on is grid


def test_a_traced_on_model_that_cannot_be_read_is_said_with_its_file(tmp_path):
    with pytest.raises(ValueError, match=r"none\.machine: cannot read"):
        core.read_traced_on(tmp_path / "none.machine")
    bad = tmp_path / "bad.machine"
    bad.write_text("begin machine\n  id = \nend machine\n")
    with pytest.raises(ValueError, match=r"bad\.machine:2"):
        core.read_traced_on(bad)
