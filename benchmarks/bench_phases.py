"""Speed of the communication-phase event trace (``parasol_core.simulate.phases``).

Every trace runs twice in the same process on the same plotted routes: with the C
kernel (``parasol_core/native/phases.c``) and with the pure-Python path
(``PARASOL_PURE_PYTHON=1``); the two results are checked equal (1e-12 relative) and
the ratio between them shown. Two workloads of issue 11, each against a baseline
measured in the same run:

* **halo**: every processor of a 32 x 32 x 32 torus (3Dtorus routing) sends ``--bytes``
  to each of its 6 neighbours, all at once: 196,608 messages of equal size.
  - ``baseline``: one batch transfer time over the same routes, the network state of
    all of them built in the timing (``table.state(ids).transfer_times(ids, bytes)``),
    what the report's step IV asks once per event;
  - ``trace``: :func:`simulate_routes` on the same plotted routes (the whole event
    trace: start and end of every message, per-link busy times and maximum loads).
  Target: trace within 3x the baseline. Also shown: plotting the routes
  (``RouteTable.add_many``) and :func:`simulate_phase` end to end.
* **random**: ``--messages`` messages between random processor pairs of the Parsytec
  GCel sample (16 x 32 grid, XY routing), sizes uniform in [1 KiB, 64 KiB], start times
  uniform in [0, ``--window``] s (1 s: the network saturates, the makespan is about 10x
  the uncontended one), then the same over 10x the window (little contention). Target:
  under 2 s for 10,000 messages. ``baseline``: one batch transfer time of all those
  routes at once. Wall-clock and CPU time are both shown: on a shared machine the CPU
  time is the part that was ours.

``--scaling`` also runs both random phases at 1/4, 1/2, 2 and 4 times the message count
with the window scaled alike (the same arrival rate), and the halo on 8^3 and 16^3 tori,
to show how the cost grows with the number of messages, and prints the table.

``--patterns`` also runs ``ring-allgather`` and ``alltoall`` on all 512 GCel processors
(261,632 messages each; minutes in Python).

Issue 23 (a million processors):

* ``--side N`` sets the halo's torus to N x N x N (default 32; 64 is 262,144 processors
  and 1,572,864 messages, 100 the million-processor torus). Past the budgets of
  ``parasol_core.base.budget`` (4,000,000 generated lines, 1,000,000 messages, 10,000,000
  route steps) the bench raises them for its own run (``budget.limits``) and says so. ``--no-python``
  leaves out the pure-Python trace, ``--no-loops`` every event loop (for large sides:
  memory; the default path is then the only trace run). The halo also runs with the
  reference kernel (``phases.c``) beside the default one (by bottleneck groups from
  ``GROUPED_MIN_MESSAGES`` messages on, ``phase_groups.c``), and end to end
  (``simulate(pattern="halo")``: pattern, routes and trace) against the routes plotted
  plus the batch transfer time.
* ``--saturated`` runs the random GCel phase saturated (a start every 0.1 ms, as the
  1 s window of 10,000 messages) at 10k, 20k, 50k, 100k and 200k messages (``--counts``)
  with the default kernel, and with the reference kernel up to ``--reference-max``
  messages (50,000), and fits the exponent of the cost (CPU seconds ~ M^k) over the
  counts by least squares on the logarithms. Target: k at most 1.3.

Each figure is the best of ``--repeat`` runs (``--repeat`` // 2, at least 1, for the
scaling rows).

    .venv/bin/python benchmarks/bench_phases.py [--repeat N] [--messages N] [--window S]
        [--scaling] [--patterns] [--side N] [--no-python] [--saturated [--counts M ...]]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import resource
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import numpy as np

from parasol_core import native
from parasol_core.base import budget
from parasol_core.model import Machine
from parasol_core.simulate import phases
from parasol_core.simulate.patterns import make_pattern_arrays
from parasol_core.simulate.phases import (
    MessageArrays,
    PhaseResult,
    _kernel,
    simulate,
    simulate_routes,
)
from parasol_core.syntax.loader import load
from parasol_core.topology import generators
from parasol_core.topology.generators import torus
from parasol_core.topology.transfer import RouteTable

ROOT = Path(__file__).resolve().parent.parent
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
LATENCY, SPEED = 2.85e-05, 9.1e-07  # the GCel's links (report 4.3.2)


def best(func: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The best wall-clock time of ``repeat`` runs (the CPU time of that run is kept in
    ``CPU[0]``: on a shared machine it shows how much of the wall time was ours)."""
    times, result = [], None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = func()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    wall, CPU[0] = min(times)
    return wall, result


CPU = [0.0]


def pure(on: bool) -> None:
    """The pure-Python trace (on) or the kernel (off)."""
    if on:
        os.environ[native.PURE_ENV] = "1"
    else:
        os.environ.pop(native.PURE_ENV, None)


def both(func: Callable[[], PhaseResult], repeat: int) -> tuple[float, float, float, PhaseResult]:
    """``func`` with the kernel and with the pure-Python path: (best wall time with the
    kernel, its CPU time, best wall time in Python, the kernel's result), the results
    checked equal."""
    if _kernel() is None:
        raise SystemExit("the C kernel was not built (run `make .venv/.installed`)")
    t_c, fast = best(func, repeat)
    cpu_c = CPU[0]
    pure(True)
    try:
        t_py, slow = best(func, repeat)
    finally:
        pure(False)
    CPU_PY[0] = CPU[0]
    CPU[0] = cpu_c
    for name in ("start", "end", "busy"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert np.allclose(a, b, rtol=1e-12, atol=0), f"kernel and Python differ in {name}"
    assert np.array_equal(fast.max_in_flight, slow.max_in_flight)
    assert fast.events == slow.events
    SAME[0] = SAME[0] and all(
        np.array_equal(getattr(fast, n), getattr(slow, n)) for n in ("start", "end", "busy")
    )
    return t_c, cpu_c, t_py, fast


CPU_PY = [0.0]  # the CPU time of the pure-Python run of the last both()
SAME = [True]  # every result bit-identical between the two paths


@contextlib.contextmanager
def limits_for(side: int) -> Iterator[None]:
    """The budgets raised for this thread when a ``side``^3 torus and its halo pass them
    (``budget.limits``: the bench measures; the library keeps its limits)."""
    size = side**3
    lines = generators.generator_size("torus", [side] * 3)
    messages = budget.pattern_messages("halo", size, (side,) * 3, True)
    now = budget.current()
    if (
        lines <= now.generated
        and 2 * messages <= now.route_steps
        and (messages <= now.phase_messages)
    ):
        yield
        return
    print(
        f"(the {side}^3 torus: {lines:,} generated lines, {messages:,} halo messages, "
        f"{2 * messages:,} route steps; budgets raised for this run)"
    )
    with budget.limits(
        generated=max(lines, now.generated),
        phase_messages=max(messages, now.phase_messages),
        route_steps=max(2 * messages, now.route_steps),
    ):
        yield


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextlib.contextmanager
def reference_kernel() -> Iterator[None]:
    """The reference kernel's loop (``phases.c``) whatever the phase's size, and no bulk
    path (``_Trace.run_together``)."""
    with (
        mock.patch.object(phases, "GROUPED_MIN_MESSAGES", 1 << 62),
        mock.patch.object(phases._Trace, "run_together", lambda self: False),
    ):
        yield


@contextlib.contextmanager
def grouped_kernel() -> Iterator[None]:
    """The kernel by bottleneck groups (``phase_groups.c``), and no bulk path."""
    with (
        mock.patch.object(phases, "GROUPED_MIN_MESSAGES", 0),
        mock.patch.object(phases, "GROUPED_MIN_LOAD", 0.0),
        mock.patch.object(phases._Trace, "run_together", lambda self: False),
    ):
        yield


def halo(
    side: int,
    nbytes: float,
    repeat: int,
    end_to_end: bool,
    python: bool = True,
    loops: bool = True,
) -> tuple[float, float, float]:
    with limits_for(side):
        return _halo(side, nbytes, repeat, end_to_end, python, loops)


def _halo(
    side: int, nbytes: float, repeat: int, end_to_end: bool, python: bool, loops: bool
) -> tuple[float, float, float]:
    machine = Machine(topologies=[torus([side] * 3, LATENCY, SPEED)])
    msgs = make_pattern_arrays(machine, "halo", nbytes)
    table = RouteTable(machine.hardware())
    t_plot, ids = best(lambda: RouteTable(machine.hardware()).add_many(msgs.src, msgs.dst), 1)
    ids = table.add_many(msgs.src, msgs.dst)
    t_base, times = best(lambda: table.state(ids).transfer_times(ids, msgs.nbytes), repeat)
    took = []
    real = phases._Trace.run_together
    with mock.patch.object(
        phases._Trace, "run_together", lambda self: took.append(real(self)) or took[-1]
    ):
        t_c, result = best(lambda: simulate_routes(table, ids, msgs), repeat)
    way = "bulk path, no event loop" if took[-1] else "event loop"
    t_ref = t_grp = t_py = math.nan
    ref = grp = result
    if loops:
        with reference_kernel():
            t_ref, ref = best(lambda: simulate_routes(table, ids, msgs), repeat)
        with grouped_kernel():
            t_grp, grp = best(lambda: simulate_routes(table, ids, msgs), repeat)
    if python and loops:
        pure(True)
        try:
            with reference_kernel():
                t_py, slow = best(lambda: simulate_routes(table, ids, msgs), repeat)
        finally:
            pure(False)
        assert np.array_equal(slow.end, ref.end)
    # every message shares its link with the one coming the other way: n = 2 throughout
    assert np.allclose(result.end, times), "the trace disagrees with the batch transfer time"
    assert np.array_equal(ref.end, result.end) and np.array_equal(ref.busy, result.busy)
    assert np.allclose(grp.end, result.end, rtol=1e-9, atol=0)
    print(
        f"halo {side}^3 torus, {len(msgs):,} messages ({result.events} events): batch "
        f"transfer_time {t_base * 1e3:.1f} ms; simulate_routes ({way}) {t_c * 1e3:.1f} ms "
        f"(**{t_c / t_base:.2f}x** the batch); event loops: reference kernel "
        f"{t_ref * 1e3:.1f} ms ({t_ref / t_base:.2f}x), kernel by groups {t_grp * 1e3:.1f} ms "
        f"({t_grp / t_base:.2f}x), Python {t_py * 1e3:.1f} ms ({t_py / t_base:.2f}x); "
        f"plotting the routes {t_plot * 1e3:.1f} ms"
    )
    if end_to_end:
        t_all, _ = best(lambda: simulate(machine, pattern="halo", bytes=nbytes), 1)
        print(
            f"  simulate(pattern='halo') end to end with the kernel (pattern, routes, trace): "
            f"{t_all * 1e3:.1f} ms, {t_all / (t_plot + t_base):.2f}x plotting the routes plus "
            f"the batch transfer_time ({(t_plot + t_base) * 1e3:.1f} ms); peak resident "
            f"{peak_mb():.0f} MB"
        )
    return t_base, t_c, t_py


def random_phase(
    machine: Machine, count: int, window: float, repeat: int, seed: int = 1
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    n = machine.hardware().processor_count
    src = rng.integers(1, n + 1, count)
    dst = rng.integers(1, n, count)
    dst[dst >= src] += 1  # another processor
    msgs = MessageArrays(src, dst, rng.uniform(1024, 65536, count), rng.uniform(0, window, count))
    table = RouteTable(machine.hardware())
    ids = table.add_many(msgs.src, msgs.dst)
    t_base, _ = best(lambda: table.state(ids).transfer_times(ids, msgs.nbytes), repeat)
    t_c, cpu_c, t_py, result = both(lambda: simulate_routes(table, ids, msgs), repeat)
    busy = float(result.busy.max())
    inflight = float(((result.end - result.start).sum()) / result.makespan)
    ev = result.events
    print(
        f"random phase on the GCel, {count:,} messages over {window:g} s ({ev:,} events): "
        f"kernel {t_c * 1e3:.0f} ms (CPU {cpu_c * 1e3:.0f} ms, {t_c / ev * 1e6:.1f} us an event), "
        f"Python {t_py * 1e3:.0f} ms (CPU {CPU_PY[0] * 1e3:.0f} ms, {t_py / ev * 1e6:.0f} us an event), Python / kernel "
        f"{t_py / t_c:.1f}x; batch transfer_time {t_base * 1e3:.1f} ms; makespan "
        f"{result.makespan:.3f} s, uncontended {result.uncontended:.3f} s, ratio "
        f"{result.ratio:.2f}, {inflight:.0f} in flight on average, busiest link busy {busy:.3f} s"
    )
    return cpu_c, CPU_PY[0]


def saturated(machine: Machine, counts: list[int], reference_max: int) -> None:
    """The random phase at a constant arrival rate (a start every 0.1 ms: saturated)
    at each count, with the default kernel and (up to ``reference_max``) the reference
    kernel; the fitted exponent of the CPU time."""
    rows = []
    for count in counts:
        rng = np.random.default_rng(1)
        n = machine.hardware().processor_count
        src = rng.integers(1, n + 1, count)
        dst = rng.integers(1, n, count)
        dst[dst >= src] += 1
        window = count * 1e-4
        msgs = MessageArrays(
            src, dst, rng.uniform(1024, 65536, count), rng.uniform(0, window, count)
        )
        table = RouteTable(machine.hardware())
        ids = table.add_many(msgs.src, msgs.dst)
        run = lambda t=table, i=ids, m=msgs: simulate_routes(t, i, m)  # noqa: E731
        _, result = best(run, 1)
        cpu = CPU[0]
        ref_cpu = math.nan
        if count <= reference_max:
            with reference_kernel():
                _, ref = best(run, 1)
            ref_cpu = CPU[0]
            assert np.allclose(ref.end, result.end, rtol=1e-9, atol=0)
            assert np.array_equal(ref.max_in_flight, result.max_in_flight)
        inflight = float(((result.end - result.start).sum()) / result.makespan)
        rows.append((count, cpu, ref_cpu, result.events, result.ratio, inflight))
        print(
            f"saturated GCel phase, {count:,} messages over {window:g} s ({result.events:,} "
            f"events, ratio {result.ratio:.2f}, {inflight:,.0f} in flight on average): kernel "
            f"{cpu:.3f} s CPU, reference kernel {ref_cpu:.3f} s CPU",
            flush=True,
        )
    print("\n| messages | " + " | ".join(f"{r[0]:,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    print("| kernel (s CPU) | " + " | ".join(f"{r[1]:.3g}" for r in rows) + " |")
    print("| reference kernel (s CPU) | " + " | ".join(f"{r[2]:.3g}" for r in rows) + " |")
    if len(rows) > 1:
        x = np.log([r[0] for r in rows])
        k = np.polyfit(x, np.log([r[1] for r in rows]), 1)[0]
        ends = math.log(rows[-1][1] / rows[0][1]) / math.log(rows[-1][0] / rows[0][0])
        print(
            f"cost ~ M^{k:.2f} (least squares over {rows[0][0]:,}..{rows[-1][0]:,}; "
            f"first to last {ends:.2f}); target: at most 1.3"
        )
        have = [r for r in rows if not math.isnan(r[2])]
        if len(have) > 1:
            kr = np.polyfit(np.log([r[0] for r in have]), np.log([r[2] for r in have]), 1)[0]
            print(f"reference kernel ~ M^{kr:.2f} over {have[0][0]:,}..{have[-1][0]:,}")


def big_pattern(machine: Machine, name: str) -> None:
    msgs = make_pattern_arrays(machine, name, 1024.0)
    table = RouteTable(machine.hardware())
    ids = table.add_many(msgs.src, msgs.dst)
    t_c, cpu_c, t_py, result = both(lambda: simulate_routes(table, ids, msgs), 1)
    print(
        f"{name} on the GCel, {len(msgs):,} messages of 1 KiB ({result.events:,} events): "
        f"kernel {t_c:.2f} s (CPU {cpu_c:.2f} s), Python {t_py:.1f} s (CPU {CPU_PY[0]:.1f} s); "
        f"makespan {result.makespan:.3f} s, ratio {result.ratio:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--window", type=float, default=1.0, help="start times, seconds")
    parser.add_argument("--bytes", type=float, default=4096.0, help="halo message size")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--patterns", action="store_true")
    parser.add_argument("--side", type=int, default=32, help="the halo's torus: N x N x N")
    parser.add_argument("--no-python", action="store_true", help="no pure-Python trace")
    parser.add_argument(
        "--no-loops", action="store_true", help="halo: no event-loop comparisons (memory)"
    )
    parser.add_argument("--saturated", action="store_true", help="the M^k scaling (issue 23)")
    parser.add_argument(
        "--counts", type=int, nargs="+", default=[10_000, 20_000, 50_000, 100_000, 200_000]
    )
    parser.add_argument("--reference-max", type=int, default=50_000)
    parser.add_argument("--only", choices=("halo", "saturated"), help="run only this part")
    args = parser.parse_args()

    gcel = load(GCEL)
    if args.only != "saturated":
        halo(
            args.side,
            args.bytes,
            args.repeat,
            end_to_end=True,
            python=not args.no_python,
            loops=not args.no_loops,
        )
    if args.saturated or args.only == "saturated":
        saturated(gcel, args.counts, args.reference_max)
    if args.only:
        return
    rows: dict[tuple[int, int], tuple[float, float]] = {}
    rows[1, args.messages] = random_phase(gcel, args.messages, args.window, args.repeat)
    # the same messages spread over 10x the time: little contention, few in flight
    rows[10, args.messages] = random_phase(gcel, args.messages, args.window * 10, args.repeat)
    if args.scaling:
        for side in (8, 16):
            halo(side, args.bytes, args.repeat, end_to_end=False)
        for spread in (1, 10):
            for factor in (0.25, 0.5, 2, 4):
                count = int(args.messages * factor)
                window = args.window * spread * factor
                rows[spread, count] = random_phase(gcel, count, window, max(1, args.repeat // 2))
        counts = sorted({c for _, c in rows})
        print("\nCPU seconds, kernel / Python, at a constant arrival rate:")
        print("| messages | " + " | ".join(f"{c:,}" for c in counts) + " |")
        print("|---|" + "---|" * len(counts))
        for spread, name in ((1, "saturated"), (10, "light")):
            cells = [f"{rows[spread, c][0]:.3g} / {rows[spread, c][1]:.3g}" for c in counts]
            print(f"| {name} | " + " | ".join(cells) + " |")
    if args.patterns:
        for name in ("ring-allgather", "alltoall"):
            big_pattern(gcel, name)
    print(
        "kernel and Python results: "
        + ("bit-identical" if SAME[0] else "equal to 1e-12 (relative), not bit-identical")
    )


if __name__ == "__main__":
    main()
