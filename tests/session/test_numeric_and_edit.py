"""Number representations of the controls, and edits by reference."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modeltext import MINIMAL

from parasol_core import loads
from parasol_core.base.numeric import (
    cache_size_shown,
    join,
    log_position,
    log_value,
    parse_positive,
    split,
)
from parasol_core.model import TIMING, Timing
from parasol_core.session.edit import (
    EditError,
    copy_processor,
    parse_value,
    scale_group,
    set_value,
    slot,
    stored_key,
)


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_split_gives_a_mantissa_in_1_to_10_that_joins_back(value):
    m, e = split(value)
    assert 1 <= m < 10
    assert join(m, e) == pytest.approx(value, rel=1e-5)


@pytest.mark.parametrize("value,expected", [(1e-7, (1.0, -7)), (9.99e-3, (9.99, -3)),
                                            (1000.0, (1.0, 3)), (0.0, (0.0, 0))])  # fmt: skip
def test_split_at_powers_of_ten(value, expected):
    m, e = split(value)
    assert (round(m, 9), e) == expected


def test_join_gives_short_numbers():
    assert join(2.5, -7) == 2.5e-07 and repr(join(2.5, -7)) == "2.5e-07"


def test_log_scale_round_trips_and_clamps():
    for v in (1, 10, 512, 10**7):
        assert log_value(log_position(v, 1, 10**7, 700), 1, 10**7, 700) == pytest.approx(
            v, rel=0.02
        )
    assert log_position(0.5, 1, 10**7, 700) == 0 and log_position(1e9, 1, 10**7, 700) == 700


def test_cache_size_zero_is_shown_as_one():
    assert [cache_size_shown(s) for s in (0, None, 1, 100)] == [1, 1, 1, 100]


@pytest.mark.parametrize("text", ["0", "-1e-7", "abc", "", "nan", "inf"])
def test_parse_positive_rejects_with_a_message(text):
    with pytest.raises(ValueError) as e:
        parse_positive(text)
    assert str(e.value)


def test_parse_value_reads_timings_with_sd():
    assert parse_value(TIMING, "1e-7 2e-9") == Timing(1e-7, 2e-9)
    with pytest.raises(EditError):
        parse_value(TIMING, "1 2 3")


def test_stored_keys_name_values_as_references_do():
    m = loads(MINIMAL)
    assert stored_key(m, slot(m, "pt(1).iga")) == "pt(1).iga"
    assert stored_key(m, slot(m, "pt(1).sqrti")) == "pt(1).sqrtr"
    assert stored_key(m, slot(m, "pc(1).size")) == "pc(1).size"
    assert stored_key(m, slot(m, "tl(1)(1).speed")) == "tl(1)(1).speed"
    assert stored_key(m, slot(m, "tp(1)(2)")) == "tp(1)(2)"
    assert stored_key(m, slot(m, "to(1).links")) == "to(1).links"
    assert stored_key(m, slot(m, "ma.processors")) == "ma.processors"
    # structural: the engine must rebuild
    assert stored_key(m, slot(m, "pr(1).id")) is None
    assert stored_key(m, slot(m, "po(1).ia_spd")) is None
    assert stored_key(m, slot(m, "to(1).routing")) is None
    # the key follows the object, not the label it was made with
    s = slot(m, "pt(1).iga")
    m.processors[0].id = 5
    assert stored_key(m, s) == "pt(5).iga"


def test_copy_processor_points_its_ratios_at_itself():
    m = loads(MINIMAL)
    copy = copy_processor(m.processors[0], 2)
    assert copy.id == 2 and copy.name == "T805 (copy)"
    assert copy.timings == m.processors[0].timings and copy.cache == m.processors[0].cache
    assert copy.cache is not m.processors[0].cache
    assert copy.combinations["ia_spd"].text == "pt(2).iga / tl(1)(1).speed"


def test_set_value_creates_missing_sections():
    m = loads(MINIMAL)
    m.processors[0].cache = None
    set_value(m, "pc(1).size", "64")
    set_value(m, "mp.send", "1e-4 + ar.bytes * 1e-6")
    assert m.processors[0].cache.size == 64 and m.mpi.entries["send"].text.startswith("1e-4")


def test_scale_group_scales_mean_and_sd_of_members_only():
    m = loads(MINIMAL)
    assert scale_group(m, "local", 2.0) == 1
    assert m.processors[0].timings == {"iga": Timing(7.37e-07), "ila": Timing(1e-06, 2e-08)}
    with pytest.raises(EditError):
        scale_group(m, "local", math.inf)


def test_scale_group_that_overflows_changes_nothing():
    m = loads(MINIMAL)
    set_value(m, "pt(1).ila", "1e300")
    before = dict(m.processors[0].timings)
    with pytest.raises(EditError, match="too large"):
        scale_group(m, "all", 1e10)
    assert m.processors[0].timings == before


@pytest.mark.parametrize("factor", [0, -1, float("nan"), True, "2"])
def test_scale_group_refuses_factors_that_are_not_positive_numbers(factor):
    m = loads(MINIMAL)
    with pytest.raises(EditError, match="positive number"):
        scale_group(m, "all", factor)


def test_parse_sd_allows_empty_and_zero_but_not_negative_or_garbage():
    from parasol_core.base.numeric import parse_sd

    assert parse_sd("  ") is None and parse_sd("0") == 0.0 and parse_sd("2e-9") == 2e-9
    for text, message in [("-1e-9", "negative"), ("x", "not a number"), ("inf", "finite")]:
        with pytest.raises(ValueError, match=message):
            parse_sd(text)
