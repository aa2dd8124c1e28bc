"""Group scalers (docs/decisions.md "Group scalers"): factors relative to the values at 1.0,
composing by multiplication, without drift."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parasol_core.base.params import GROUPS, PARAMS
from parasol_core.model import Timing
from parasol_core.session.scalers import ScalerState, move_factor, reset_factors

# integer global/local addition, double global/local multiplication, two outside arithmetic
TIMINGS = {
    "iga": Timing(7.37e-07, 1.1e-08),
    "ila": Timing(6.1e-07),
    "dgm": Timing(1.5e-06, 2e-08),
    "dln": Timing(1.3e-06),
    "sind": Timing(3e-05),
    "goto": Timing(0.0),
}


def apply(timings: dict, new: dict) -> dict:
    return {**timings, **new}


def test_scaling_a_group_multiplies_mean_and_sd_of_its_defined_members_only():
    new, state = move_factor(TIMINGS, ScalerState(), "global", 2.0)
    assert set(new) == {"iga", "dgm"}  # the global timings this processor defines
    assert new["iga"] == Timing(7.37e-07 * 2, 1.1e-08 * 2)
    assert new["dgm"] == Timing(1.5e-06 * 2, 2e-08 * 2)
    assert state.factor("global") == 2.0
    assert state.factor("local") == 1.0


def test_every_group_of_design_md_can_be_scaled():
    timings = {p.name: Timing(1e-6) for p in PARAMS}
    for group in GROUPS.values():
        new, _ = move_factor(timings, ScalerState(), group.id, 3.0)
        assert set(new) == set(group.members)
        assert all(t.mean == pytest.approx(3e-6) for t in new.values())


def test_global_x2_then_addition_x_half_composes_by_multiplication():
    timings = dict(TIMINGS)
    new, state = move_factor(timings, ScalerState(), "global", 2.0)
    timings = apply(timings, new)
    new, state = move_factor(timings, state, "addition", 0.5)
    timings = apply(timings, new)
    assert timings["iga"] == TIMINGS["iga"]  # global addition: x2 x0.5, exactly as it was
    assert timings["ila"] == Timing(6.1e-07 * 0.5)  # local addition: halved
    assert timings["dgm"] == TIMINGS["dgm"].scaled(2.0)  # global multiplication: doubled
    assert timings["dln"] == TIMINGS["dln"]
    assert state.product("iga") == 1.0
    assert state.product("ila") == 0.5


def test_a_drag_that_returns_to_its_start_restores_the_exact_starting_values():
    start, state0 = dict(TIMINGS), ScalerState()
    # a drag: every step computed from the values at the start of the drag
    for factor in (1.3, 2.7, 0.37, 9.99, 0.1003, 1.0):
        new, state = move_factor(start, state0, "all", factor)
    assert apply(start, new) == TIMINGS
    assert state.is_neutral


def test_drags_back_to_one_restore_the_reference_exactly_across_groups():
    timings, state = dict(TIMINGS), ScalerState()
    for group, factor in [("all", 1.37), ("global", 0.73), ("multiplication", 3.1),
                          ("all", 1.0), ("double", 0.2), ("global", 1.0),
                          ("multiplication", 1.0), ("double", 1.0)]:  # fmt: skip
        new, state = move_factor(timings, state, group, factor)
        timings = apply(timings, new)
    assert timings == TIMINGS
    assert state.is_neutral


def test_moving_a_group_to_its_present_factor_changes_nothing():
    new, state = move_factor(TIMINGS, ScalerState(), "global", 2.0)
    timings = apply(TIMINGS, new)
    again, state2 = move_factor(timings, state, "global", 2.0)
    assert all(timings[name] == t for name, t in again.items())
    assert state2.factors == state.factors


def test_a_timing_edited_meanwhile_is_taken_as_already_scaled():
    new, state = move_factor(TIMINGS, ScalerState(), "global", 2.0)
    timings = apply(TIMINGS, new)
    timings["iga"] = Timing(4e-06)  # typed in the individual instructions window
    new, state = move_factor(timings, state, "global", 1.0)
    assert new["iga"] == Timing(2e-06)
    assert new["dgm"] == TIMINGS["dgm"]


def test_reset_factors_gives_back_the_values_at_one():
    timings, state = dict(TIMINGS), ScalerState()
    for group, factor in [("global", 2.0), ("addition", 0.5), ("intrinsic", 4.2)]:
        new, state = move_factor(timings, state, group, factor)
        timings = apply(timings, new)
    new, state = reset_factors(timings, state)
    assert apply(timings, new) == TIMINGS
    assert state.is_neutral
    assert "iga" not in new  # x2 x0.5 left it unchanged: nothing to write


def test_timings_not_defined_stay_undefined():
    new, _ = move_factor({"iga": Timing(1e-6)}, ScalerState(), "arithmetic", 2.0)
    assert set(new) == {"iga"}
    new, _ = move_factor({}, ScalerState(), "complex", 2.0)
    assert new == {}


@pytest.mark.parametrize("factor", [0, -1.0, float("nan"), float("inf"), "2"])
def test_a_factor_must_be_a_positive_number(factor):
    with pytest.raises(ValueError):
        move_factor(TIMINGS, ScalerState(), "global", factor)


def test_an_unknown_group_is_refused():
    with pytest.raises(ValueError, match="unknown group"):
        move_factor(TIMINGS, ScalerState(), "fast", 2.0)


_factor = st.floats(0.1, 10.0, allow_nan=False)
_moves = st.lists(st.tuples(st.sampled_from(list(GROUPS)), _factor), max_size=12)


@settings(max_examples=200, deadline=None)
@given(_moves)
def test_any_sequence_of_moves_undone_by_reset_or_by_ones_gives_the_exact_values(moves):
    timings, state = dict(TIMINGS), ScalerState()
    for group, factor in moves:
        new, state = move_factor(timings, state, group, factor)
        timings = apply(timings, new)
    for name, t in timings.items():  # each timing is its reference times its factors
        assert t.mean == pytest.approx(TIMINGS[name].mean * state.product(name), rel=1e-12)
    reset, neutral = reset_factors(timings, state)
    assert apply(timings, reset) == TIMINGS
    assert neutral.is_neutral
    for group in list(state.factors):
        new, state = move_factor(timings, state, group, 1.0)
        timings = apply(timings, new)
    assert timings == TIMINGS
