"""Every estimator method that takes a processor takes its name too (protocol 1.4, issue
36), through a real server: a host of the model's ``# piui: names`` given by name answers
as given by number, the answer carries a ``names`` map, and a name the topology lacks is
-32602 naming it. A test holds the cases equal to the methods' processor params."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest
from estimator_support import estimator  # noqa: F401
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


def test_server_info_says_1_4(estimator):  # noqa: F811
    with estimator.client() as c:
        assert c.call("server.info")["protocol"] == "1.4"


def test_a_number_sent_as_a_string_is_refused_unless_a_processor_has_that_name(estimator, pushed):  # noqa: F811
    model, _ = pushed
    with estimator.client() as c:
        with pytest.raises(RemoteError, match="integer or a processor's name, not the string '1'"):
            c.call("route.plot", model=model, src="1", dst=3)
        with pytest.raises(RemoteError) as info:
            c.call("route.plot_many", model=model, pairs=[[1, 3], [3, "2"]])
        assert info.value.code == -32602
