"""Every estimator method that takes a processor takes its name too (protocol 1.4, issue
36), through a real server: a host of the model's ``# piui: names`` given by name answers
as given by number, the answer carries a ``names`` map, and a name the topology lacks is
-32602 naming it. A test holds the cases equal to the methods' processor params."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
from estimator_support import SAMPLES, estimator  # noqa: F401
from named_platform import NAMES, named_model_text

from parasol_core.estimator import (
    RemoteError,
    program_methods,  # noqa: F401  (registers estimate.program)
)
from parasol_core.estimator.methods import METHODS

TRACE = "0 send 1 0 100000 6\n1 recv 0 0 100000 6\n"

Spell = Callable[[int], int | str]
# Each case: (client, model id, trace id, how a processor is spelt) -> the answer. The
# processors are 1 and 3 (Tremblay and Fafard), and 2 (Jupiter) where a third is needed.
CASES: dict[str, Callable] = {
    "route.plot src": lambda c, m, t, s: c.call("route.plot", model=m, src=s(1), dst=3),
    "route.plot dst": lambda c, m, t, s: c.call("route.plot", model=m, src=1, dst=s(3)),
    "route.plot_many pairs": lambda c, m, t, s: c.call(
        "route.plot_many", model=m, pairs=[[s(1), s(3)], [2, s(3)]]
    ),
    "estimate.phase messages": lambda c, m, t, s: c.call(
        "estimate.phase",
        model=m,
        messages=[{"src": s(1), "dst": s(3), "bytes": 1e5}, {"src": s(2), "dst": 3, "bytes": 1e5}],
    ),  # fmt: skip
    "estimate.phase root": lambda c, m, t, s: c.call(
        "estimate.phase", model=m, pattern="broadcast", bytes=1e5, root=s(2)
    ),
    "estimate.program hosts": lambda c, m, t, s: c.call(
        "estimate.program", model=m, trace=t, flop="1e-9", hosts=[s(1), s(3)]
    ),
}
# the params that are processors, by method (a new one must be a case above)
PROCESSOR_PARAMS = {"src", "dst", "pairs", "root", "messages", "hosts"}


@pytest.fixture(scope="module")
def pushed(estimator, tmp_path_factory):  # noqa: F811
    trace = tmp_path_factory.mktemp("trace") / "t.txt"
    trace.write_text(TRACE)
    with estimator.client() as c:
        model = c.push(named_model_text())["model"]
        return model, c.push_trace(trace)["trace"]


@pytest.mark.parametrize("case", list(CASES))
def test_a_name_answers_as_its_number_and_the_answer_names_it(case, estimator, pushed):  # noqa: F811
    model, trace = pushed
    with estimator.client() as c:
        by_number = CASES[case](c, model, trace, int)
        by_name = CASES[case](c, model, trace, NAMES.__getitem__)
    assert by_name == by_number
    names = by_name["names"]
    assert names and all(NAMES[int(p)] == name for p, name in names.items())
    assert "1" in names or "2" in names  # Tremblay or Jupiter, whichever the case uses


@pytest.mark.parametrize("case", list(CASES))
def test_an_unknown_name_is_refused_naming_it(case, estimator, pushed):  # noqa: F811
    model, trace = pushed
    with estimator.client() as c, pytest.raises(RemoteError) as info:
        CASES[case](c, model, trace, lambda p: "Saturn")
    assert info.value.code == -32602 and "'Saturn'" in info.value.message


def test_with_a_virtual_topology_processors_are_numbers(estimator, pushed):  # noqa: F811
    model, _ = pushed
    with estimator.client() as c, pytest.raises(RemoteError, match="virtual processor numbers"):
        c.call("route.plot", model=model, src="Tremblay", dst=3, virtual=1)


def test_the_cases_are_every_param_that_takes_a_processor():
    found = set()
    for name, spec in METHODS.items():
        if name == "estimate.block":  # its 'processor' is a processor type's id
            continue
        for param in inspect.signature(spec.func).parameters:
            if param in PROCESSOR_PARAMS:
                found.add(f"{name} {param}")
    assert found == set(CASES)


def test_server_info_says_1_8(estimator):  # noqa: F811
    with estimator.client() as c:
        assert c.call("server.info")["protocol"] == "1.9"


PAIRS = [[1, 3], [2, 3], [3, 1]]


@pytest.mark.parametrize("encoding", ["base64", "binary"])
def test_the_compact_forms_carry_the_names_map_when_asked(encoding, estimator, pushed):  # noqa: F811
    """Protocol 1.5: the field "names" brings the JSON form's map in the compact and
    binary encodings too, the same map, beside the same columns."""
    model, _ = pushed
    with estimator.client() as c:
        as_json = c.plot_many(model, PAIRS)
        fields = ["routes", "processors", "links", "names"]
        compact = c.plot_many(model, PAIRS, encoding=encoding, fields=fields)
        alone = c.plot_many(model, PAIRS, encoding=encoding, fields=["names"])
    assert compact["names"] == as_json["names"] == {"1": "Tremblay", "2": "Jupiter",
                                                    "3": "Fafard", "4": "R"}  # fmt: skip
    assert compact["processors"].tolist() == as_json["processors"]
    assert alone == {"names": as_json["names"]}


@pytest.mark.parametrize("encoding", ["base64", "binary"])
def test_unasked_the_compact_forms_are_as_in_1_4(encoding, estimator, pushed):  # noqa: F811
    """A 1.4 client of the compact forms decodes every object of the answer as a
    column: it never meets the names map, which comes only asked for."""
    import base64

    import numpy as np

    model, _ = pushed
    with estimator.client() as c:
        answer = c.plot_many(model, PAIRS, encoding=encoding)
        raw = c.call("route.plot_many", model=model, encoding="base64", pairs={
            "dtype": "<i8", "data": base64.b64encode(np.array(PAIRS, "<i8").tobytes()).decode()})  # fmt: skip
    assert "names" not in answer and "names" not in raw
    assert sorted(raw) == ["encoding", "link_offsets", "links", "offsets", "processors",
                           "route_prefix"]  # fmt: skip
    assert all(set(v) == {"dtype", "data"} for v in raw.values() if isinstance(v, dict))


def test_names_asked_of_virtual_routes_or_an_unnamed_model_are_absent(estimator):  # noqa: F811
    with estimator.client() as c:
        with_virtual = c.push(named_model_text(virtual=True))["model"]
        virtual = c.plot_many(with_virtual, [[1, 2]], virtual=2, encoding="binary",
                              fields=["processors", "names"])  # fmt: skip
        plain = c.push((SAMPLES / "grid4x4.machine").read_text())["model"]
        unnamed = c.plot_many(plain, [[1, 2]], encoding="base64", fields=["names"])
    assert "names" not in virtual and virtual["processors"].size
    assert unnamed == {}


def test_a_number_sent_as_a_string_is_refused_unless_a_processor_has_that_name(estimator, pushed):  # noqa: F811
    model, _ = pushed
    with estimator.client() as c:
        with pytest.raises(RemoteError, match="integer or a processor's name, not the string '1'"):
            c.call("route.plot", model=model, src="1", dst=3)
        with pytest.raises(RemoteError) as info:
            c.call("route.plot_many", model=model, pairs=[[1, 3], [3, "2"]])
        assert info.value.code == -32602


@pytest.mark.parametrize(
    ("entries", "numbers"),
    [
        (["p1", "p3"], [1, 3]),
        (["Tremblay:1", "Fafard"], [1, 3]),
        (["p3:2"], [3, 3]),
        (["Jupiter:9999999999"], [2, 2]),  # at most the ranks left: two
        (["1", 3], [1, 3]),  # a hostfile's line "1" is processor 1
    ],
)
def test_hosts_are_hostfile_entries_as_everywhere_else(estimator, pushed, entries, numbers):  # noqa: F811
    """estimate.program's hosts took numbers and names only, while --hostfile, a sweep
    file and sweep.run take N, pN, names, each with :RANKS: one syntax everywhere."""
    model, trace = pushed
    with estimator.client() as c:
        by_entries = c.call("estimate.program", model=model, trace=trace, flop="1e-9",
                            hosts=entries)  # fmt: skip
        by_numbers = c.call("estimate.program", model=model, trace=trace, flop="1e-9",
                            hosts=numbers)  # fmt: skip
    assert by_entries == by_numbers


@pytest.mark.parametrize(
    ("entry", "said"),
    [("Saturn:2", "'Saturn'"), ("p9", "9"), ("p1:x", "'p1:x'"), (True, "True"), (1.5, "1.5")],
)
def test_a_bad_host_entry_is_refused_naming_it(estimator, pushed, entry, said):  # noqa: F811
    model, trace = pushed
    with estimator.client() as c, pytest.raises(RemoteError) as info:
        c.call("estimate.program", model=model, trace=trace, flop="1e-9", hosts=[1, entry])
    assert info.value.code == -32602
    assert "hosts[1]" in info.value.message and said in info.value.message
