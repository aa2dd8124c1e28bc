"""The command line's memory budget (``parasol_core.base.budget``, ``--max-memory``): on the
user's own command line a phase's messages and route steps are held to the memory they
would take, estimated before any work; the estimator keeps its fixed counts (a shared
server). docs/topology.md, "Budgets"; docs/estimator.md, "Budgets"."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from modeltext import gcel_with_torus
from timing import peak_bytes

from parasol_core.base import budget
from parasol_core.cli import main
from parasol_core.syntax.loader import loads

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"


@pytest.fixture(scope="module")
def torus20(tmp_path_factory) -> Path:
    """The GCel with a 20 x 20 x 20 torus: 8,000 processors, loaded in a blink."""
    path = tmp_path_factory.mktemp("torus") / "torus20.machine"
    path.write_text(gcel_with_torus((20, 20, 20)))
    return path


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``parasol-model ARGS`` in this process: (exit status, stdout, stderr)."""
    try:
        status = main(list(args))
    except SystemExit as e:  # argparse's usage errors
        status = e.code
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_phase_past_max_memory_is_refused_before_anything_is_built(torus20, capsys,
                                                                     monkeypatch) -> None:  # fmt: skip
    """The halo on 20^3 (48,000 messages, 96,000 route steps: 240 and 120 bytes each,
    about 22.0 MiB) under --max-memory 1M: exit 2 naming both figures in bytes; neither
    the messages nor their routes are made."""
    from parasol_core.simulate import patterns
    from parasol_core.topology.transfer import RouteTable

    def built(*args, **kwargs):
        raise AssertionError("work was done past the memory budget")

    monkeypatch.setattr(patterns, "_halo", built)
    monkeypatch.setattr(RouteTable, "add_many", built)
    status, out, err = cli(capsys, "simulate", str(torus20), "--pattern", "halo",
                           "--bytes", "1024", "--max-memory", "1M")  # fmt: skip
    assert status == 2, err
    assert out == ""
    assert ("error: the halo pattern on 8,000 processors (48,000 messages, 96,000 route "
            "steps) would need about 22.0 MiB, over the memory budget of 1.0 MiB "
            "(--max-memory); refused before any work") in err, err  # fmt: skip


def test_a_huge_estimate_is_refused_at_once(torus20, capsys) -> None:
    """alltoall on 8,000 processors: 63,992,000 messages, at least 2 steps each (the
    exact count is never made): refused in well under a second after loading."""
    (status, _, err), peak = peak_bytes(cli, capsys, "simulate", str(torus20), "--pattern",
                                        "alltoall", "--bytes", "1024", "--max-memory", "2G")  # fmt: skip
    # not a twentieth of what the messages would take: refused before they were built
    assert peak < 63_992_000 * budget.BYTES_PER_MESSAGE / 20, peak
    assert status == 2, err
    assert "63,992,000 messages, at least 127,984,000 route steps" in err, err
    assert "would need about 28.6 GiB, over the memory budget of 2.0 GiB (--max-memory)" in err


def test_exact_route_steps_are_checked_before_the_routes_are_plotted(capsys, monkeypatch):
    """alltoall on the GCel passes the pattern's lower bound (2 steps a message, 119.8
    MiB) under 200M, then its exact route steps (17 a message on the 16 x 32 grid) are
    counted before any route is plotted: 568.9 MiB, refused."""
    from parasol_core.topology.transfer import RouteTable

    def built(*args, **kwargs):
        raise AssertionError("routes were plotted past the memory budget")

    monkeypatch.setattr(RouteTable, "add_many", built)
    status, _, err = cli(capsys, "simulate", str(GCEL), "--pattern", "alltoall",
                         "--bytes", "1024", "--max-memory", "200M")  # fmt: skip
    assert status == 2, err
    assert ("the phase (261,632 messages, 4,447,744 route steps) would need about 568.9 "
            "MiB, over the memory budget of 200.0 MiB (--max-memory)") in err, err  # fmt: skip


def test_the_command_line_runs_a_phase_past_the_estimators_counts(capsys, monkeypatch):
    """With the estimator's count limits lowered to 1,000 messages and 2,000 route steps
    (standing in for 1,000,000 and 10,000,000), the GCel's halo (1,952 messages, 3,904
    steps) is past both: the command line runs it under its memory budget, the
    estimator's core still refuses it by count."""
    from parasol_core.simulate.phases import simulate

    monkeypatch.setattr(budget, "MAX_PHASE_MESSAGES", 1_000)
    monkeypatch.setattr(budget, "MAX_ROUTE_STEPS", 2_000)
    status, out, err = cli(capsys, "simulate", str(GCEL), "--pattern", "halo",
                           "--bytes", "1024")  # fmt: skip
    assert status == 0, err
    assert "messages: 1952" in out and "makespan:" in out
    with pytest.raises(budget.BudgetError) as e:  # the defaults: the estimator's counts
        simulate(loads(GCEL.read_text()), pattern="halo", bytes=1024)
    assert e.value.estimate == 1952 and e.value.limit == 1_000 and e.value.unit == "messages"


def test_the_estimator_refuses_a_phase_past_a_million_messages(tmp_path) -> None:
    """estimate.phase keeps the fixed limit, even called from a thread that is under a
    memory budget: alltoall on a ring of 1,001 (1,001,000 messages) is -32602, naming
    both counts."""
    from parasol_core.estimator import methods, server
    from parasol_core.estimator.protocol import ParamError
    from parasol_core.estimator.scheduler import _within
    from parasol_core.estimator.store import ModelStore

    svc = methods.Service(ModelStore(tmp_path))
    model = svc.store.put(gcel_with_torus((1001,))).id
    with budget.limits(memory=1 << 50, source="test"), pytest.raises(ParamError) as e:
        _within(None, lambda: methods.estimate_phase(svc, model, pattern="alltoall",
                                                     bytes=1024))  # fmt: skip
    assert "would need 1,001,000 messages, over the limit of 1,000,000" in e.value.message
    spec = dataclasses.replace(methods.METHODS["estimate.phase"], cpu=False)
    call = server._wrap(spec, svc, {"heavy": None, "quick": None}, None)
    with pytest.raises(server.rpcx.InvalidParamsError) as answer:
        asyncio.run(call(None, model=model, pattern="alltoall", bytes=1024))
    assert answer.value.code == -32602
    assert "1,001,000 messages" in answer.value.message
    assert "over the limit of 1,000,000 messages" in answer.value.message


@pytest.mark.parametrize("text,why", [
    ("abc", "'abc' is not a size"),
    ("2X", "'2X' is not a size"),
    ("-1G", "'-1G' is not a size"),
    ("0", "no memory at all"),
    ("9" * 400, "more memory than any machine has"),
])  # fmt: skip
def test_bad_max_memory_is_a_usage_error(capsys, text, why) -> None:
    status, out, err = cli(capsys, "simulate", str(GCEL), "--pattern", "halo",
                           "--bytes", "1", f"--max-memory={text}")  # fmt: skip
    assert status == 2 and out == ""
    assert "argument --max-memory:" in err and why in err, err


@pytest.mark.parametrize("text,size", [
    ("1500000000", 1_500_000_000), ("2G", 2 << 30), ("500M", 500 << 20),
    ("1.5GiB", 3 << 29), ("2GB", 2_000_000_000), ("64k", 64 << 10), (" 1 TiB ", 1 << 40),
    ("100b", 100),
])  # fmt: skip
def test_sizes(text, size) -> None:
    assert budget.parse_size(text) == size


def test_sizes_are_shown_readably() -> None:
    assert budget.format_size(5_583_457_484) == "5.2 GiB"
    assert budget.format_size(2 << 30) == "2.0 GiB"
    assert budget.format_size(999) == "999 bytes"


def test_the_default_budget_is_at_most_half_the_memory() -> None:
    import os

    size, how = budget.default_memory()
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < size <= physical // 2
    assert "half the physical memory" in how or "MemAvailable" in how


def test_limits_nest_per_thread_and_come_back() -> None:
    import threading

    assert budget.current().memory is None
    with budget.limits(memory=1 << 30, source="x") as outer:
        assert outer.step_limit == (1 << 30) // budget.BYTES_PER_STEP
        with budget.limits(phase_messages=5):
            assert budget.current().memory == 1 << 30 and budget.current().phase_messages == 5
            with budget.fixed():
                assert budget.current() == budget._defaults()
        seen = []
        other = threading.Thread(target=lambda: seen.append(budget.current().memory))
        other.start()
        other.join(10)
        assert seen == [None]  # another thread: the defaults
        assert budget.current().phase_messages == budget.MAX_PHASE_MESSAGES
    assert budget.current() == budget._defaults()


def test_mapping_takes_the_memory_budget_too(capsys) -> None:
    """`mapping` routes every virtual link in one batch in this process: it takes
    --max-memory as `simulate` does (a batch of over 1,000 routes is held to it)."""
    grid = str(ROOT / "sample_models" / "grid4x4.machine")
    status, out, err = cli(capsys, "mapping", grid, "--virtual", "3", "--max-memory", "1G")
    assert status == 0, err
    assert "virtual links: 32" in out
    status, _, err = cli(capsys, "mapping", grid, "--virtual", "3", "--max-memory", "lots")
    assert status == 2 and "'lots' is not a size" in err, err


def test_a_route_batch_under_a_memory_budget_is_held_to_it() -> None:
    """The GCel's 1,000,000 corner-to-corner routes (47,000,000 steps; the estimator
    refuses past 10,000,000) are refused under 1 GiB by their memory, naming the 5.3 GiB
    they would take (120 bytes a step), before any is plotted."""
    import numpy as np

    from parasol_core.topology.index import index_of
    from parasol_core.topology.virtual import hardware_of

    index = index_of(hardware_of(loads(GCEL.read_text())))
    src, dst = np.ones(1_000_000, dtype=np.int64), np.full(1_000_000, 512, dtype=np.int64)
    with budget.limits(memory=1 << 30, source="--max-memory"):
        with pytest.raises(budget.MemoryBudgetError) as e:
            index.routes(src, dst)
        assert budget.check_route_steps("x", 47_000_000 // 6) == 47_000_000 // 6
    assert "(47,000,000 route steps) would need about 5.3 GiB" in str(e.value)
    assert "over the memory budget of 1.0 GiB (--max-memory)" in str(e.value)
