"""Issue 35, item 2: every budget applies at every size.

Work and memory are estimated from every dimension of the input before the work (the
processors routes visit, however few the routes) and refused past the budget, the
message naming both; the docs state the numbers the code applies.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from estimator_support import Estimator

from parasol_core.base import budget
from parasol_core.base.budget import BudgetError
from parasol_core.estimator import methods
from parasol_core.estimator.client import RemoteError
from parasol_core.estimator.store import ModelStore
from parasol_core.model import Machine, Processor, Timing
from parasol_core.syntax.writer import dumps_canonical
from parasol_core.topology.generators import generate
from parasol_core.topology.index import index_of

DOCS = Path(__file__).resolve().parents[1] / "docs"


def machine_text(kind: str, dims: list[int]) -> str:
    topo = generate(kind, dims, 1e-6, 1e-9)
    proc = Processor(id=1, name="p", timings={"iga": Timing(1e-7)})
    return dumps_canonical(Machine(id=1, name=f"{kind} {dims}", processor_count=1,
                                   topology_count=1, processors=[proc], topologies=[topo]))  # fmt: skip


def ring_steps(n: int, src: np.ndarray, dst: np.ndarray) -> int:
    """The processors routes on a ring of ``n`` visit (the shorter way round)."""
    d = np.abs(src - dst)
    return int((np.minimum(d, n - d) + 1).sum())


# --------------------------------------------------------------------------- route steps


def test_a_few_long_routes_are_refused_like_many_short_ones() -> None:
    """300 routes 100,000 hops apart on a 200,000-processor ring: 30,000,300 steps,
    refused before any is plotted (it used to run 3-8 s and grow by 1.4 GB, since
    batches of 1,000 routes or fewer were not counted)."""
    ring = generate("ring", [200_000], 1e-6, 1e-9)
    index = index_of(ring)
    src = np.arange(1, 301)
    tracemalloc.start()
    try:
        with pytest.raises(BudgetError) as e:
            index.routes(src, src + 100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "300 routes would need 30,000,300 route steps" in str(e.value)
    assert "over the limit of 10,000,000 route steps" in str(e.value)
    assert peak < 8 << 20  # nothing the size of the routes was made


@pytest.mark.parametrize("n", [1, 2, 7, 999, 1000, 1001, 4000])
def test_the_route_step_budget_holds_at_every_batch_size(n) -> None:
    """At every number of routes, a batch exactly at the limit is plotted and one step
    over it is refused, naming both."""
    index = index_of(ring := generate("ring", [64], 1e-6, 1e-9))
    rng = np.random.default_rng(n)
    src, dst = rng.integers(1, 65, n), rng.integers(1, 65, n)
    steps = ring_steps(64, src, dst)
    with budget.limits(route_steps=steps):
        assert int(index.routes(src, dst).hops.sum()) + n == steps
    with budget.limits(route_steps=steps - 1), pytest.raises(BudgetError) as e:
        index.routes(src, dst)
    assert f"would need {steps:,} route steps, over the limit of {steps - 1:,}" in str(e.value)
    del ring


def test_transfer_times_hold_their_routes_to_the_step_budget(tmp_path) -> None:
    """network.transfer_time(s) plot into the model's route table: the call's routes are
    counted first (however few), and the table starts afresh rather than keep more
    steps than the budget."""
    svc = methods.Service(ModelStore(tmp_path))
    mid = svc.store.put(machine_text("ring", [64])).id
    rid = lambda a, b: f"{mid[:8]}:{a}-{b}"  # noqa: E731
    long_ones = [(i, i + 32) for i in range(1, 33)]  # 33 steps each
    with budget.limits(route_steps=33 * 4):
        requests = [{"route": rid(a, b), "bytes": 100} for a, b in long_ones[:4]]
        assert len(methods.network_transfer_times(svc, mid, requests)) == 4
        requests = [{"route": rid(a, b), "bytes": 100} for a, b in long_ones[:5]]
        with pytest.raises(BudgetError, match="5 routes would need 165 route steps, over "
                           "the limit of 132"):  # fmt: skip
            methods.network_transfer_times(svc, mid, requests)
        with pytest.raises(BudgetError, match="5 routes would need 165 route steps"):
            methods.network_transfer_time(svc, mid, rid(1, 33), 100,
                                          [rid(a, b) for a, b in long_ones[1:5]])  # fmt: skip
        for a, b in long_ones:  # one at a time: the table never holds more than the budget
            methods.network_transfer_time(svc, mid, rid(a, b), 100, [rid(*long_ones[0])])
            assert svc.model(mid).table.kept_steps <= 33 * 4


@pytest.mark.slow
def test_the_estimator_refuses_few_long_routes_before_any_work(tmp_path) -> None:
    """A real server with the 200,000-processor ring: route.plot_many of 300 pairs and
    network.transfer_times of 101 routes, 100,000 hops each, are -32602 at once, naming
    the steps and the limit; the server does not grow (it grew by 367 MB and took 17 s
    and 28 s before) and answers the next call."""
    est = Estimator(tmp_path / "store").start()
    try:
        with est.client(timeout=120) as c:
            mid = c.push(machine_text("ring", [200_000]))["model"]
            before = _rss_mb(est.proc.pid)
            with pytest.raises(RemoteError) as e:
                c.plot_many(mid, [(i, i + 100_000) for i in range(1, 301)])
            assert e.value.code == -32602
            assert "30,000,300 route steps, over the limit of 10,000,000" in e.value.message
            with pytest.raises(RemoteError) as e:
                c.transfer_times(mid, [(f"{mid[:8]}:{i}-{i + 100_000}", 1000)
                                       for i in range(1, 102)])  # fmt: skip
            assert e.value.code == -32602
            assert "10,100,101 route steps, over the limit of 10,000,000" in e.value.message
            assert len(c.transfer_times(mid, [(f"{mid[:8]}:1-100001", 1000)])) == 1
            assert _rss_mb(est.proc.pid) - before < 64
    finally:
        est.kill()


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")  # pragma: no cover


def test_the_docs_state_the_route_step_budget_the_code_applies() -> None:
    estimator = (DOCS / "estimator.md").read_text()
    assert f"| {budget.MAX_ROUTE_STEPS:,} | `parasol_core.base.budget.MAX_ROUTE_STEPS`" in estimator
    assert f"{budget.MAX_ROUTE_STEPS:,} processors together, counted before plotting" in estimator
