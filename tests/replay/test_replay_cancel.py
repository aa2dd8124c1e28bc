"""A replay under way is stopped part-way when its cancel event is set from another
thread (a newer edit in the Program window): ``replay(..., cancel=event)`` raises
``Cancelled`` at its next poll, in the C flow kernel (through its callback, by the
work it has done: native/flow.c's CHECK_WORK) and in the Python trace (every 256
events), rather than running to its end.

The cancel event counts the replay's polls, so that the test knows where the replay
is: the other thread sets it once the flow run is well under way, and the replay must
stop at the very poll that sees it, far short of the polls an uncancelled replay of the
same trace makes (the flow run's polls are in its result); in the
Python trace, whose run is the replay's time, its time is also held to a fraction of the
uncancelled replay's, measured in the same test."""

from __future__ import annotations

import threading
import time

import pytest
from replay_platforms import torus_machine

from parasol_core import native
from parasol_core.base import budget
from parasol_core.frontend import program as core
from parasol_core.replay import ReplayOptions, load_trace, replay
from parasol_core.replay import dominates as dom
from parasol_core.simulate import flow


def ring_text(ranks: int, iterations: int) -> str:
    """A ring exchange whose computations differ by rank and iteration, so that the
    ranks fall out of step and the flow run has an event for nearly every message."""
    lines = [f"{r} init" for r in range(ranks)]
    for it in range(iterations):
        for r in range(ranks):
            right, left = (r + 1) % ranks, (r - 1) % ranks
            flops = 1_000_000 + 37_000 * ((r * 7 + it * 13) % 29)
            lines += [f"{r} compute {flops}", f"{r} irecv {left} {it} 8000",
                      f"{r} isend {right} {it} 8000", f"{r} waitall"]  # fmt: skip
    lines += [f"{r} finalize" for r in range(ranks)]
    return "\n".join(lines) + "\n"


class WatchedEvent(threading.Event):
    """A cancel event that counts how often the replay polls it. At poll ``at`` it tells
    the canceller (``reached``) and waits until that thread has set it, so that the
    replay is known to be that far when the cancel comes."""

    def __init__(self, at: int | None = None) -> None:
        super().__init__()
        self.polls = 0
        self.at = at
        self.reached = threading.Event()

    def is_set(self) -> bool:
        self.polls += 1
        if self.polls == self.at:
            self.reached.set()
            assert self.wait(30), "the canceller never set the event"
        return super().is_set()


def _canceller(event: WatchedEvent, order: list[str]) -> threading.Thread:
    def run() -> None:
        if event.reached.wait(30):
            order.append("set")
            event.set()

    thread = threading.Thread(target=run, name="canceller", daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(("engine", "ranks", "iterations", "dims"), [
    ("kernel", 128, 400, (8, 16)),  # about 100,000 events: some 25 polls of the kernel
    ("python", 16, 100, (4, 4)),  # about 3,000 events: some 12 polls of the Python trace
])  # fmt: skip
def test_a_replay_cancelled_from_another_thread_stops_part_way(
    engine, ranks, iterations, dims, tmp_path, monkeypatch
):
    if engine == "python":
        monkeypatch.setenv(native.PURE_ENV, "1")
    else:
        assert flow._kernel() is not None, "the C flow kernel is not built"
    machine = torus_machine(dims)
    path = tmp_path / "ring.txt"
    path.write_text(ring_text(ranks, iterations))
    trace = load_trace(path)
    options = ReplayOptions()
    replay(machine, trace, options)  # compiled once, as the window's trace is

    # the baseline: the same replay, never cancelled, its polls counted
    full = WatchedEvent()
    t = time.perf_counter()
    result = replay(machine, trace, options, cancel=full)
    uncancelled = time.perf_counter() - t
    in_flow = result.polls  # the flow run's polls
    before_flow = full.polls - in_flow  # the polls between the replay's steps
    assert in_flow >= 10, f"the trace is too small to be cancelled part-way ({in_flow} polls)"

    # the same replay, cancelled by another thread a quarter of the way into its flow run
    at = before_flow + in_flow // 4
    cancel = WatchedEvent(at)
    order: list[str] = []
    thread = _canceller(cancel, order)
    t = time.perf_counter()
    with pytest.raises(budget.Cancelled):
        try:
            replay(machine, trace, options, cancel=cancel)
        finally:
            order.append("returned")
    cancelled = time.perf_counter() - t
    thread.join(30)

    assert order == ["set", "returned"]
    assert before_flow < at  # the cancel came in the flow run, not between the steps
    assert cancel.polls == at  # it stopped at the poll that saw it set: no event after
    assert full.polls - cancel.polls >= in_flow // 2  # the run it did not make
    if engine == "python":  # there the flow run is the replay's time
        assert cancelled < 0.6 * uncancelled, (cancelled, uncancelled)


def lockstep_text(ranks: int, iterations: int) -> str:
    """Every rank sends to 8 others and computes the same in every iteration: the ranks
    stay in step, so each event of the flow run starts or ends thousands of messages at
    once and the run has few, heavy events."""
    lines = [f"{r} init" for r in range(ranks)]
    for _ in range(iterations):
        for r in range(ranks):
            for k in range(1, 9):
                lines.append(f"{r} irecv {(r - 37 * k) % ranks} {k} 50000")
            for k in range(1, 9):
                lines.append(f"{r} isend {(r + 37 * k) % ranks} {k} 50000")
            lines += [f"{r} waitall", f"{r} compute 1000000"]
    lines += [f"{r} finalize" for r in range(ranks)]
    return "\n".join(lines) + "\n"


def test_a_lockstep_replay_with_heavy_events_is_stopped_promptly(tmp_path):
    """The kernel polls by the work it did, not by its events: a lockstep trace's run
    has far fewer events than a poll every 4,096 of them would need (it would never have
    been polled), yet it is polled many times, and a cancel set a quarter of the way in
    stops it at the next poll, in a fraction of the uncancelled run's time (measured in
    the same test)."""
    assert flow._kernel() is not None, "the C flow kernel is not built"
    machine = torus_machine((16, 16))
    path = tmp_path / "lockstep.txt"
    path.write_text(lockstep_text(256, 6))
    trace = load_trace(path)
    options = ReplayOptions(sharing="cm02")
    replay(machine, trace, options)  # compiled once

    full = WatchedEvent()
    t = time.perf_counter()
    result = replay(machine, trace, options, cancel=full)
    uncancelled = time.perf_counter() - t
    in_flow = result.polls
    before_flow = full.polls - in_flow
    assert result.events < 4096  # a poll by event count would never have come
    assert in_flow >= 12, f"the run is too light to be cancelled part-way ({in_flow} polls)"

    at = before_flow + in_flow // 4
    cancel = WatchedEvent(at)
    order: list[str] = []
    thread = _canceller(cancel, order)
    t = time.perf_counter()
    with pytest.raises(budget.Cancelled):
        try:
            replay(machine, trace, options, cancel=cancel)
        finally:
            order.append("returned")
    cancelled = time.perf_counter() - t
    thread.join(30)
    assert order == ["set", "returned"]
    assert cancel.polls == at  # stopped at the poll that saw it set
    assert full.polls - cancel.polls >= in_flow // 2
    assert cancelled < 0.75 * uncancelled, (cancelled, uncancelled)


def test_a_cancel_set_before_the_replay_stops_it_before_any_work(tmp_path):
    path = tmp_path / "ring.txt"
    path.write_text(ring_text(4, 5))
    trace = load_trace(path)  # not compiled yet
    cancel = WatchedEvent()
    cancel.set()
    with pytest.raises(budget.Cancelled):
        replay(torus_machine((2, 2)), trace, cancel=cancel)
    assert cancel.polls == 1
    assert trace.compiled == {}  # stopped before the compiler


def test_the_python_compiler_stops_for_a_cancel(tmp_path, monkeypatch):
    monkeypatch.setenv(native.PURE_ENV, "1")
    path = tmp_path / "ring.txt"
    path.write_text(ring_text(16, 300))  # 19,232 actions: the compiler polls 5 times
    trace = load_trace(path)
    cancel = WatchedEvent(at=3)  # the replay's first two polls, then the compiler's
    order: list[str] = []
    thread = _canceller(cancel, order)
    with pytest.raises(budget.Cancelled):
        replay(torus_machine((4, 4)), trace, cancel=cancel)
    thread.join(30)
    assert order == ["set"] and cancel.polls == 3
    assert trace.compiled == {}  # nothing half-compiled kept


def test_a_cancel_context_outside_the_replay_stops_it_too(tmp_path):
    """``budget.cancelled_by`` around a caller's work (what dominates, the estimator)
    stops every replay within it, and a replay's own event adds to it."""
    path = tmp_path / "ring.txt"
    path.write_text(ring_text(4, 5))
    trace = load_trace(path)
    machine = torus_machine((2, 2))
    outer = threading.Event()
    with budget.cancelled_by(outer):
        replay(machine, trace, cancel=threading.Event())  # neither set: it runs
        outer.set()
        with pytest.raises(budget.Cancelled):
            replay(machine, trace, cancel=threading.Event())
    replay(machine, trace)  # out of the block: the outer event is forgotten


def test_predict_and_what_dominates_pass_the_cancel_on(tmp_path):
    path = tmp_path / "ring.txt"
    path.write_text(ring_text(4, 5))
    program = core.read_program(path)
    machine = torus_machine((2, 2))
    cancel = WatchedEvent()
    core.predict(machine, program, cancel)
    assert cancel.polls > 1  # the replay polled it
    cancel.set()
    with pytest.raises(core.Cancelled):
        core.predict(machine, program, cancel)
    # what dominates: its replays run within its cancel event (budget.cancelled_by),
    # so one set as its third replay starts stops that replay, not only the next one
    cancel = threading.Event()
    started: list[bool] = []

    def predict(m) -> float:
        started.append(True)
        if len(started) == 3:
            cancel.set()  # as another thread would, while the replay is under way
        return replay(m, program.trace).makespan  # no event of its own: the context's

    with pytest.raises(core.Cancelled):
        dom.dominance(machine, predict, cancel)
    assert len(started) == 3
