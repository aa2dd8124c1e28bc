"""Measure the machine this runs on and write a complete PARASOL model of it.

:func:`measure_host` compiles the generated benchmark programs with the C compiler at
hand, runs them one after the other, turns each parameter's runs into a timing or a
refusal (:mod:`parasol_core.measure.stats`), measures the instruction cache curve and
the host's pipe link, and returns a :class:`HostModel` whose ``text`` is a model file
(one processor type named after the CPU, every timing with its standard deviation and
a comment saying how it was measured, the cache, the sample models' combinations and
``maxtotalspd``). Nothing is written to disk unless the caller calls
:meth:`HostModel.write`; a cancel or a signal leaves nothing behind (the child processes
are stopped, the build directory goes; one that a measurement killed with SIGKILL left
is removed by the next: :func:`parasol_core.base.filelock.temporary_directory`). What
comes from outside (the CPU's name, the compiler's, $CC, the flags) is bounded and its
control characters escaped before it goes into the model
(:func:`parasol_core.base.limits.outside_text`).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from parasol_core.base import filelock, params, signals
from parasol_core.base.limits import outside_text
from parasol_core.base.words import counted
from parasol_core.measure import cache as cache_mod
from parasol_core.measure import calibrate as calibrate_mod
from parasol_core.measure import generator, kernels, link, stats, suite, toolchain
from parasol_core.measure import memory as memory_mod
from parasol_core.measure.toolchain import MeasureCancelled
from parasol_core.model import (
    Cache,
    Link,
    Machine,
    MachineCombinations,
    Processor,
    Timing,
    Topology,
)
from parasol_core.model.tree import format_number
from parasol_core.syntax.expression import parse_expression
from parasol_core.syntax.writer import Comments, dumps_canonical

__all__ = [
    "DEFAULT_CFLAGS",
    "HostModel",
    "MeasureOptions",
    "Progress",
    "estimate_seconds",
    "measure_host",
]

BUILD_PREFIX = "parasol-measure-"  # the build directory: parasol-measure-<pid>-XXXXXXXX
DEFAULT_CFLAGS: tuple[str, ...] = ("-O2",)
# The flow-control group keeps the C gotos as jumps: gcc's block reordering would
# otherwise lay the blocks out in order and drop every jump (docs/measure.md).
FLOW_CFLAGS: tuple[str, ...] = ("-fno-reorder-blocks",)
GROUPS = ("arith", "logic", "flow", "array", "intrinsic")
# Groups measured a second time with independent chains (reciprocal throughput); flow
# control has one cost per execution.
THROUGHPUT_GROUPS = ("arith", "logic", "array", "intrinsic")
THROUGHPUT_SUFFIX = "_tp"
THROUGHPUT_CHAINS = 8

# Past 5000 statements gcc's compile time grows faster than the body (10000: ~15 s,
# 20000: minutes); 5000 dependent multiplications (~60 KB of code) already overflow a
# 32 KB first-level instruction cache.
FULL_CACHE_SIZES = (10, 50, 100, 500, 1000, 2000, 5000)
QUICK_CACHE_SIZES = (10, 50, 100, 500, 1000, 2000)

SAMPLE_COMBINATIONS = (
    ("ia_spd", "iga"),
    ("im_spd", "igm"),
    ("da_spd", "dga"),
    ("dm_spd", "dgm"),
    ("dd_spd", "dgd"),
    ("ds_spd", "sind"),
    ("dp_spd", "dgx"),
)
MAXTOTALSPD = "(tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed"


@dataclass
class MeasureOptions:
    """How to measure. ``quick`` gives fewer and shorter runs (wider deviations)."""

    quick: bool = False
    runs: int | None = None  # runs per parameter: 15 full, 5 quick
    run_seconds: float | None = None  # length of one test run: 20 ms full, 3 ms quick
    min_ticks: float = 100  # every timed run lasts at least this many timer ticks
    compiler: str | None = None  # default: $CC, else cc/gcc/clang from PATH
    cflags: Sequence[str] = DEFAULT_CFLAGS
    parameters: Sequence[str] | None = None  # measure only these (default: all)
    cache_sizes: Sequence[int] | None = None  # loop bodies of the cache curve
    cache: bool = True
    link: bool = True
    jobs: int = 2  # parallel compiles (the runs themselves are one at a time)
    throughput: bool = True  # also measure each data operation's reciprocal throughput
    calibrate: bool = True  # fit the written values on the suite's calibration programs
    memory: bool = True  # the growing-array curve and the memory levels
    memory_sizes: Sequence[int] | None = None  # bytes; default memory.FULL/QUICK_SIZES
    fake_tick_ns: int | None = None  # tests: a coarse timer, read in whole ticks
    keep_build: Path | None = None  # copy the build directory here (debugging)

    def resolved_runs(self) -> int:
        return self.runs if self.runs is not None else (5 if self.quick else 15)

    def resolved_run_seconds(self) -> float:
        if self.run_seconds is not None:
            return self.run_seconds
        return 0.003 if self.quick else 0.02

    def resolved_cache_sizes(self) -> tuple[int, ...]:
        if self.cache_sizes is not None:
            return tuple(self.cache_sizes)
        return QUICK_CACHE_SIZES if self.quick else FULL_CACHE_SIZES

    def resolved_memory_sizes(self) -> tuple[int, ...]:
        if self.memory_sizes is not None:
            return tuple(self.memory_sizes)
        return memory_mod.QUICK_SIZES if self.quick else memory_mod.FULL_SIZES

    def selected(self) -> list[kernels.Kernel]:
        if self.parameters is None:
            return list(kernels.KERNELS)
        wanted = []
        for name in self.parameters:
            canonical, _ = params.resolve_name(name)
            if canonical is None:
                raise ValueError(f"unknown timing parameter {name!r}")
            if canonical not in kernels.LEFT_OUT:
                wanted.append(kernels.by_name(canonical))
        return wanted


@dataclass(frozen=True)
class Progress:
    fraction: float  # 0..1
    parameter: str  # what is being measured ("compiling", "dln", "cache x=500", ...)
    seconds_left: float | None
    cache_point: tuple[int, float] | None = None  # (x, seconds per operation) just measured
    memory_point: tuple[int, float] | None = None  # (bytes, seconds per reference) just measured


@dataclass
class HostModel:
    """The measured model: ``text`` loads and validates with no errors."""

    text: str
    cpu: str
    left_out: list[tuple[str, str]]
    cache_curve: list[tuple[int, float]]
    timings: dict[str, stats.Estimate] = field(default_factory=dict)  # as written
    seconds: float = 0.0  # how long the measurement took
    info: dict = field(default_factory=dict)  # compiler, flags, date, timer, runs
    latency: dict[str, stats.Estimate] = field(default_factory=dict)  # dependent chain
    throughput: dict[str, stats.Estimate] = field(default_factory=dict)  # independent
    calibration: calibrate_mod.Calibration | None = None
    suite_runs: list = field(default_factory=list)  # the calibration programs' runs
    # throughputs measured too small to tell from zero (at least 0), written as measured
    throughput_small: dict[str, stats.Estimate] = field(default_factory=dict)
    # latencies measured too small to tell from zero: why (they are in ``latency``, at
    # least 0, as measured)
    latency_small: dict[str, str] = field(default_factory=dict)
    memory_curve: list[tuple[int, float]] = field(default_factory=list)  # bytes, s/ref
    memory_levels: list = field(default_factory=list)  # memory.Level, by level

    def write(self, path: str | os.PathLike) -> None:
        """Write the model atomically (a temporary file renamed over ``path``)."""
        from parasol_core.syntax.writer import write_text_atomic

        write_text_atomic(Path(path), self.text)


# --- time estimate and progress ------------------------------------------------------

_COMPILE_SECONDS = {"arith": 2.0, "logic": 0.5, "flow": 0.5, "array": 0.5, "intrinsic": 2.0}


def _cache_compile_seconds(x: int) -> float:
    return 0.05 + x * 1e-4 + x * x * 1.4e-7


def _kernel_seconds(options: MeasureOptions) -> float:
    # calibration (about three run lengths) + runs x (test + control <= test)
    return (3 + 2 * options.resolved_runs()) * options.resolved_run_seconds() * 1.1


def throughput_runs(runs: int) -> int:
    """Runs per throughput kernel: two thirds of the latency kernels' (at least 3); the
    second measurement of each operation keeps the full run under 5 minutes."""
    return max(3, (2 * runs) // 3)


def suite_runs_of(options: MeasureOptions) -> int:
    """Timed runs per program size of the suite in one process (the minimum is kept)."""
    return 3


def suite_passes_of(options: MeasureOptions) -> int:
    """Passes over every placement of the suite's code, each program a process of its
    own at each placement in each (:func:`parasol_core.measure.suite.run_suite`): two,
    so that each placement's least run comes from two processes some seconds apart
    (docs/measure.md, "Where a loop lands"), ``--quick`` too (one pass moved its fitted
    arithmetic weight by 18 %)."""
    return 2


def suite_need_of(options: MeasureOptions) -> float:
    """Seconds one timed run of a suite program lasts at least."""
    return 0.005 if options.quick else 0.02


def _suite_seconds(options: MeasureOptions, names: Sequence[str]) -> float:
    per = 3 * (suite_runs_of(options) + 2) * suite_need_of(options) * 1.2
    return 1.5 + len(names) * per * suite_passes_of(options) * len(suite.PLACEMENTS)


def _memory_seconds(options: MeasureOptions) -> float:
    sizes = options.resolved_memory_sizes()
    run_s = options.resolved_run_seconds()
    # each size: calibrating (about two run lengths), the runs, and building its cycle
    return sum((3 + max(3, options.resolved_runs() // 3)) * run_s + b * 1.5e-8 for b in sizes)


def estimate_seconds(options: MeasureOptions) -> float:
    """What the measurement is expected to take on this machine, in seconds."""
    ks = options.selected()
    jobs = max(1, options.jobs)
    groups = {k.group for k in ks}
    twice = options.throughput
    total = sum(_COMPILE_SECONDS[g] * (2 if twice and g in THROUGHPUT_GROUPS else 1)
                for g in groups) / jobs  # fmt: skip
    share = (3 + 2 * throughput_runs(options.resolved_runs())) / (3 + 2 * options.resolved_runs())
    total += sum(1 + share if twice and k.group in THROUGHPUT_GROUPS else 1
                 for k in ks) * _kernel_seconds(options) + 0.05 * len(groups)  # fmt: skip
    if options.calibrate:
        total += _suite_seconds(options, suite.CALIBRATION)
    if options.memory:
        total += 0.3 + _memory_seconds(options)
    if options.cache:
        sizes = options.resolved_cache_sizes()
        total += sum(_cache_compile_seconds(x) for x in sizes) / jobs
        total += len(sizes) * (2 + options.resolved_runs()) * options.resolved_run_seconds()
    if options.link:
        total += 0.5 + 2 * (1 + options.resolved_runs()) * options.resolved_run_seconds()
    return total


class _Tracker:
    """Turns the work done into Progress calls, from measured progress.

    The fraction is of the estimated work (each stage weighs its estimated seconds). The
    time left is the estimated work left times the run's *pace*: the seconds the
    finished stages took per estimated second (1 before any has finished). A stage that
    runs past its estimate at that pace shows the machine is slower still: the pace then
    counts it as if it ended now. So a machine twice as slow as the estimate shows twice
    the time left from the first stage on, and the time left rises only while a stage
    runs over, by what that stage says of the machine."""

    def __init__(self, total: float, progress: Callable[[Progress], None] | None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.total = max(total, 1e-9)
        self.done = 0.0
        self.progress = progress
        self.clock = clock
        self.start = clock()
        self.parameter = "starting"
        self.stage_start = self.start
        self.stage_weight = 0.0
        self.finished_estimate = 0.0  # estimated seconds of the stages finished
        self.finished_actual = 0.0  # the seconds they took

    def stage(self, parameter: str, weight: float) -> None:
        """Begin a piece of work of ``weight`` estimated seconds."""
        now = self.clock()
        if self.stage_weight > 0:
            self.finished_estimate += self.stage_weight
            self.finished_actual += now - self.stage_start
        self.done += self.stage_weight
        self.stage_weight = weight
        self.stage_start = now
        self.parameter = parameter
        self.report()

    def estimate(self) -> tuple[float, float]:
        """(fraction of the estimated work done, seconds left at the measured pace)."""
        into = max(self.clock() - self.stage_start, 0.0)
        pace = 1.0
        if self.finished_estimate > 0:
            pace = self.finished_actual / self.finished_estimate
        expected = self.stage_weight * pace  # this stage's length at that pace
        if into > expected and self.stage_weight > 0:  # running over: slower still
            pace = (self.finished_actual + into) / (self.finished_estimate + self.stage_weight)
            expected = into
        part = min(into / expected, 1.0) if expected > 0 else 1.0
        done = min(self.done + self.stage_weight * part, self.total)
        rest = max(self.total - self.done - self.stage_weight, 0.0)
        return done / self.total, max(expected - into, 0.0) + rest * pace

    def relabel(self, parameter: str) -> None:
        """Say what the stage under way does now (no new weight)."""
        self.parameter = parameter
        self.report()

    def report(self, cache_point: tuple[int, float] | None = None,
               memory_point: tuple[int, float] | None = None) -> None:  # fmt: skip
        if self.progress is None:
            return
        fraction, left = self.estimate()
        self.progress(Progress(fraction, self.parameter, left, cache_point, memory_point))

    def finish(self) -> None:
        self.done = self.total
        self.stage_weight = 0.0
        if self.progress is not None:
            self.progress(Progress(1.0, "done", 0.0))


# --- the measurement ------------------------------------------------------------------


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise MeasureCancelled()


def _compile_all(
    cc: list[str],
    jobs: list[tuple[Path, Path, Sequence[str]]],
    workers: int,
    cancel: threading.Event | None,
    tick: Callable[[], None] | None = None,
) -> None:
    """Compile ``jobs`` on ``workers`` threads; ``tick()`` four times a second meanwhile
    (compiling is a step of the progress shown, not a pause in it)."""
    inner = cancel if cancel is not None else threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        try:
            futures = {pool.submit(toolchain.compile_c, cc, s, o, f, inner)
                       for s, o, f in jobs}  # fmt: skip
            while futures:
                finished, futures = wait(futures, timeout=0.25)
                for fut in finished:
                    fut.result()
                if tick is not None:
                    tick()
        except BaseException:
            inner.set()  # stop the other compiles too (a signal, an error): they are
            raise  # waited for as the pool closes, before the build directory goes


def measure_host(
    options: MeasureOptions | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> HostModel:
    """Measure this host (in the caller's thread; the C programs run as child processes).

    Raises :class:`~parasol_core.measure.toolchain.CompilerMissing` without a C
    compiler, :class:`MeasureCancelled` when ``cancel`` is set (checked between
    benchmarks and ten times a second while one runs; its process is killed), and
    RuntimeError when a benchmark fails to build or run.
    """
    options = options or MeasureOptions()
    cc = toolchain.find_compiler(options.compiler)
    _check_cancel(cancel)
    started = time.monotonic()
    chosen = options.selected()
    runs, run_s = options.resolved_runs(), options.resolved_run_seconds()
    tracker = _Tracker(estimate_seconds(options), progress)
    flags = list(options.cflags)
    defines = [f"-DFAKE_TICK_NS={int(options.fake_tick_ns)}"] if options.fake_tick_ns else []
    held = build = None
    try:
        with signals.deferred():  # made and known as one step: a signal never leaks it
            held, build = filelock.temporary_directory(BUILD_PREFIX)
        by_group: dict[str, list[kernels.Kernel]] = {}
        for k in chosen:
            by_group.setdefault(k.group, []).append(k)
        compile_jobs = []
        for group, ks in by_group.items():
            extra = FLOW_CFLAGS if group == "flow" else ()
            variants = [(group, 1)]
            if options.throughput and group in THROUGHPUT_GROUPS:
                variants.append((f"{group}{THROUGHPUT_SUFFIX}", THROUGHPUT_CHAINS))
            for binary, chains in variants:
                src = build / f"{binary}.c"
                src.write_text(generator.program(ks, chains=chains))
                compile_jobs.append((src, build / binary, [*flags, *extra, *defines]))
        weight = sum(
            _COMPILE_SECONDS[g] * (2 if options.throughput and g in THROUGHPUT_GROUPS else 1)
            for g in by_group
        ) / max(1, options.jobs)
        tracker.stage("compiling the benchmarks", weight)
        _compile_all(cc, compile_jobs, options.jobs, cancel, tracker.report)

        results: dict[str, stats.Estimate] = {}  # latency (flow: cost per execution)
        through: dict[str, stats.Estimate] = {}  # reciprocal throughput
        through_refused: dict[str, str] = {}
        # throughputs measured too small to tell from zero: the operation overlaps with
        # the rest, so what was measured (at least 0) stands, not the latency (which
        # wrote igm 48 times another run's value where its throughput was refused)
        through_small: dict[str, stats.Estimate] = {}
        # latencies too small to tell from zero, written as measured: why
        small_why: dict[str, str] = {}
        refused: dict[str, str] = {}
        timer: dict = {}
        per_kernel = _kernel_seconds(options)
        for group in GROUPS:
            ks = by_group.get(group)
            if not ks:
                continue
            binaries: list[tuple[str, dict, dict, str]] = [(group, results, refused, "")]
            if options.throughput and group in THROUGHPUT_GROUPS:
                binaries.append((f"{group}{THROUGHPUT_SUFFIX}", through, through_refused,
                                 " (independent chains)"))  # fmt: skip
            for binary, into, refusals, how_run in binaries:
                _check_cancel(cancel)
                n_runs = runs if into is results else throughput_runs(runs)
                argv = [str(build / binary), repr(run_s), str(n_runs),
                        repr(float(options.min_ticks)), *(k.name for k in ks)]  # fmt: skip
                with closing(toolchain.run_lines(argv, cancel, tracker.report,
                                                 cwd=build)) as lines:  # fmt: skip
                    for line in lines:
                        data = json.loads(line)
                        if "timer" in data:
                            timer = data["timer"]
                        elif "start" in data:
                            tracker.stage(data["start"] + how_run, per_kernel)
                        elif "name" in data:
                            k = kernels.by_name(data["name"])
                            ops = data["iterations"] * data["per_iter"]
                            got = stats.summarise(data["ctl"], data["test"], ops,
                                                  timer["tick"], k.divide)  # fmt: skip
                            small = None
                            if isinstance(got, stats.Refusal):
                                small = (got.small_estimate() if into is results
                                         else got.at_least_zero())  # fmt: skip
                            if small is not None and into is results:
                                # a latency too small to tell from zero is what was
                                # measured too, as a throughput is (the chain does not
                                # wait on the operation: a store of a variable kept in
                                # a register): at least 0, not left out, which took the
                                # chase's calibration from a run on a busy machine; one
                                # the timer could not resolve, at most its bound
                                results[k.name] = small
                                why = got.reason
                                if not got.resolved:
                                    why = f"at most {format_number(_num(got.bound))} s: {why}"
                                small_why[k.name] = why
                            elif isinstance(got, stats.Refusal):
                                refusals[k.name] = got.reason
                                if into is through and small is not None:
                                    through_small[k.name] = small
                            else:
                                into[k.name] = got

        calibration = None
        suite_runs: list = []
        if options.calibrate and results:
            _check_cancel(cancel)
            names = [p for p in suite.CALIBRATION
                     if all(op in results for op in suite.OPS_OF[p])]  # fmt: skip
            if names:
                tracker.stage("program suite (calibration)", _suite_seconds(options, names))
                suite_runs = suite.run_suite(
                    cc, flags, names, runs=suite_runs_of(options),
                    need=suite_need_of(options), passes=suite_passes_of(options), cancel=cancel,
                    on_step=tracker.relabel, on_idle=tracker.report,
                )  # fmt: skip
                calibration = calibrate_mod.calibrate(
                    [(r.program, r.counts, r.seconds, r.chains) for r in suite_runs],
                    {n: e.mean for n, e in results.items()},
                    {n: e.mean for n, e in {**through_small, **through}.items()},
                )  # fmt: skip

        curve: list[tuple[int, float]] = []
        cache_result = None
        if options.cache:
            sizes = options.resolved_cache_sizes()
            jobs = []
            for x in sizes:
                src = build / f"cache{x}.c"
                src.write_text(cache_mod.program(x))
                jobs.append((src, build / f"cache{x}", [*flags, *defines]))
            tracker.stage(
                "compiling the cache curve",
                sum(_cache_compile_seconds(x) for x in sizes) / max(1, options.jobs),
            )
            _compile_all(cc, jobs, options.jobs, cancel, tracker.report)
            for x in sizes:
                _check_cancel(cancel)
                tracker.stage(f"instruction cache, loop of {x}", (2 + runs) * run_s)
                argv = [str(build / f"cache{x}"), repr(max(run_s, 1e-4)), str(runs)]
                with closing(toolchain.run_lines(argv, cancel, tracker.report, cwd=build)) as lines:
                    for line in lines:
                        data = json.loads(line)
                        point = (int(data["x"]), statistics.median(data["per_op"]))
                        curve.append(point)
                        tracker.report(cache_point=point)
            cache_result = cache_mod.analyse(curve)

        memory_curve: list[tuple[int, float]] = []
        if options.memory:
            _check_cancel(cancel)
            src = build / "memory.c"
            src.write_text(memory_mod.program())
            tracker.stage("compiling the memory curve", 0.3)
            toolchain.compile_c(cc, src, build / "memory", [*flags], cancel)
            mem_runs = max(3, runs // 3)  # the minimum of a few runs: a size's figure
            for size in options.resolved_memory_sizes():
                _check_cancel(cancel)
                tracker.stage(f"memory curve, {counted(size, 'byte', grouped=False)}",
                              (3 + mem_runs) * run_s + size * 1.5e-8)  # fmt: skip
                argv = [str(build / "memory"), repr(max(run_s, 1e-4)), str(mem_runs), str(size)]
                with closing(toolchain.run_lines(argv, cancel, tracker.report, cwd=build)) as lines:
                    for line in lines:
                        data = json.loads(line)
                        point = (int(data["bytes"]), min(data["per_ref"]))
                        memory_curve.append(point)
                        tracker.report(memory_point=point)

        link_result = None
        if options.link and (os.cpu_count() or 1) >= 2:
            _check_cancel(cancel)
            src = build / "link.c"
            src.write_text(link.SOURCE)
            tracker.stage("host link (pipe between two processes)",
                          0.5 + 2 * (1 + runs) * run_s)  # fmt: skip
            toolchain.compile_c(cc, src, build / "link", [*flags], cancel)
            argv = [str(build / "link"), repr(max(run_s, 1e-3)), str(runs)]
            with closing(toolchain.run_lines(argv, cancel, tracker.report, cwd=build)) as lines:
                for line in lines:
                    link_result = json.loads(line)
        _check_cancel(cancel)
        if options.keep_build is not None:
            shutil.copytree(build, options.keep_build, dirs_exist_ok=True)
    finally:
        if build is not None:
            shutil.rmtree(build, ignore_errors=True)
        if held is not None:
            os.close(held)

    cpu = toolchain.cpu_name()
    info = {
        "cpu": cpu,
        "compiler": toolchain.compiler_version(cc),
        "cc": outside_text(" ".join(cc)),
        "cflags": outside_text(" ".join(flags)),
        "date": datetime.date.today().isoformat(),
        "runs": runs,
        "run_seconds": run_s,
        "min_ticks": options.min_ticks,
        "timer": timer,
        "quick": options.quick,
        "logical_processors": os.cpu_count() or 1,
    }
    left_out = [(n, kernels.LEFT_OUT[n]) for n in kernels.LEFT_OUT]
    left_out += sorted(refused.items())
    if options.parameters is not None:
        wanted = {params.resolve_name(n)[0] for n in options.parameters}
        left_out = [(n, r) for n, r in left_out if n in wanted]
    written = written_timings(results, {**through_small, **through}, calibration)
    levels, level_source = [], ""
    if memory_curve:
        levels, level_source = memory_mod.levels_from_curve(memory_curve,
                                                            memory_mod.cache_levels())  # fmt: skip
    text = model_text(
        written, refused, info, cache_result, curve, link_result, {n for n, _ in left_out},
        latency=results, throughput=through, calibration=calibration,
        throughput_refused=through_refused, throughput_small=through_small,
        latency_small=small_why, memory_curve=memory_curve,
        memory_levels=levels, memory_source=level_source,
    )  # fmt: skip
    tracker.finish()
    info["seconds"] = time.monotonic() - started
    return HostModel(text, cpu, left_out, curve, written, info["seconds"], info,
                     latency=results, throughput=through, calibration=calibration,
                     suite_runs=suite_runs, throughput_small=through_small,
                     latency_small=small_why, memory_curve=memory_curve,
                     memory_levels=levels)  # fmt: skip


def written_timings(
    latency: dict[str, stats.Estimate],
    throughput: dict[str, stats.Estimate],
    calibration: calibrate_mod.Calibration | None,
) -> dict[str, stats.Estimate]:
    """The model's value of each measured operation: without a calibration its latency
    (cost per execution), with one ``a * throughput + b * latency``, the weights of its
    class (mean, deviation and median alike; an operation without a throughput, one
    that has no throughput kernel, stands for both; a throughput measured too small to
    tell from zero is in ``throughput`` as measured, at least 0)."""
    if calibration is None:
        return dict(latency)
    out = {}
    for name, lat in latency.items():
        thr = throughput.get(name, lat)
        a, b = calibration.weight(name, "throughput"), calibration.weight(name, "latency")
        out[name] = stats.Estimate(
            a * thr.mean + b * lat.mean, a * thr.sd + b * lat.sd,
            a * thr.median + b * lat.median, lat.runs, lat.run_seconds,
            lat.per_op_resolution, lat.rejected,
        )  # fmt: skip
    return out


# --- the model file --------------------------------------------------------------------


def latency_lines(latency: Mapping[str, stats.Estimate], speedup: float = 1.0,
                  processor: int = 1, per_line: int = 6) -> list[str]:  # fmt: skip
    """The header lines giving every measured latency (and its deviation) in the form
    :func:`parasol_core.analysis.block_time.read_latencies` reads back: ``block
    --chain`` charges a loop-carried chain at these (docs/measure.md, "Chains"), the
    written timings being fitted values on the throughput. Multiplied by the small loop
    speedup as the timings are."""
    items = [f"{n} = {format_number(_num(latency[n].mean * speedup))} +- "
             f"{format_number(_num(latency[n].sd * speedup))}"
             for n in (p.name for p in params.PARAMS) if n in latency]  # fmt: skip
    head = [
        "Latencies (`parasol-model block --chain` charges the operations of a "
        'loop-carried chain at these; docs/measure.md, "Chains"):'
    ]
    return head + [f"latency of a dependent operation, processor {processor}: "
                   + ", ".join(items[k:k + per_line]) for k in range(0, len(items), per_line)]  # fmt: skip


def window_line(calibration: calibrate_mod.Calibration, processor: int = 1) -> str:
    """The header line giving the core's window over restarted chains in the form
    :func:`parasol_core.analysis.block_time.read_chain_windows` reads back (``block``
    divides a chain begun afresh every L iterations by 1 + window / L;
    docs/measure.md, "Restarted chains")."""
    return (f"chain window, processor {processor}: {format_number(_num(calibration.window))} "
            f"iterations ahead of a chain's end (`parasol-model block --chain OP=N,starts=S` "
            f"divides a chain begun afresh S times by 1 + window / (N / S); "
            f"{calibration.window_words()})")  # fmt: skip


def _num(x: float) -> float:
    """A measured figure as the model keeps it: four significant digits."""
    return float(f"{x:.4g}")


def model_text(
    results: dict[str, stats.Estimate],
    refused: dict[str, str],
    info: dict,
    cache_result: cache_mod.CacheResult | None,
    curve: list[tuple[int, float]],
    link_result: dict | None,
    never: set[str],
    latency: dict[str, stats.Estimate] | None = None,
    throughput: dict[str, stats.Estimate] | None = None,
    calibration: calibrate_mod.Calibration | None = None,
    throughput_refused: dict[str, str] | None = None,
    throughput_small: dict[str, stats.Estimate] | None = None,
    latency_small: dict[str, str] | None = None,
    memory_curve: Sequence[tuple[int, float]] = (),
    memory_levels: Sequence[memory_mod.Level] = (),
    memory_source: str = "",
) -> str:
    """The model file of a measurement: the model built as objects and written by the
    canonical writer, each value with a comment saying how it was measured. The texts of
    ``info`` from outside (CPU, compiler, command, flags) go in as
    :func:`~parasol_core.base.limits.outside_text` makes them, whatever they hold."""
    info = {**info, **{k: outside_text(str(info[k])) for k in ("cpu", "compiler", "cc", "cflags")}}
    cpu = info["cpu"]
    compiler = f"{info['compiler']} ({info['cc']} {info['cflags']})"
    run_ms = info["run_seconds"] * 1e3
    timer = info.get("timer") or {}
    speedup = cache_result.speedup if cache_result is not None else 1.0
    how = f"{cpu}; {info['cc']} {info['cflags']}; {info['date']}"
    notes = Comments()
    notes.above(
        "Measured model of the host this was written on (`parasol-model measure`"
        + (" --quick" if info["quick"] else "") + ").",
        f"CPU: {cpu}, {counted(info['logical_processors'], 'logical processor', grouped=False)}.",
        f"Compiler: {compiler}. Date: {info['date']}.",
        f"Runs: {info['runs']} per timing, each test run at least {run_ms:g} ms and every "
        f"run at least {info['min_ticks']:g} timer ticks;",
        f"  timer {timer.get('clock', 'CLOCK_THREAD_CPUTIME_ID')}, resolution "
        f"{timer.get('resolution', float('nan')):.3g} s, tick as read "
        f"{timer.get('tick', float('nan')):.3g} s.",
        "A measurement is mean and standard deviation over the runs of (test loop - "
        "control loop) / operations:",
        "  for operations on data, the latency of a dependent operation (the next one "
        "needs its result)",
        "  and the reciprocal throughput of independent ones (8 chains the core overlaps);",
        "  for flow control, the cost of one execution. See docs/measure.md.",
    )  # fmt: skip
    if calibration is not None:
        notes.above(
            "Each written timing is " + calibration.describe() + ":",
            "  the value whose sum over operation counts predicts compiled loops; the "
            "comment after it gives both measurements.",
        )  # fmt: skip
    else:
        notes.above("Each written timing is the latency (no calibration run).")
    if latency:
        notes.above(*latency_lines(latency, speedup))
    if calibration is not None and calibration.window is not None:
        notes.above(window_line(calibration))
    if info["quick"]:
        notes.above("Quick measurement: fewer and shorter runs, wider standard deviations.")
    if memory_levels:
        notes.above(
            "Memory levels (`parasol-model block --working-set BYTES` charges each array "
            "reference the extra time of its level over the first; docs/measure.md):",
            *(memory_mod.annotation(lv, memory_source) for lv in memory_levels),
            "memory curve (bytes: s per array reference, a pointer chased through a random "
            "cycle, minimum of the runs): "
            + ", ".join(f"{b}: {format_number(_num(t))}" for b, t in memory_curve),
        )  # fmt: skip

    proc = Processor(id=1, name=cpu)
    if speedup != 1.0:
        notes.top(proc, f"measured in small loops, multiplied by the small loop speedup "
                  f"{speedup:.3g} (the model's timings are out of the cache)", table="timings")  # fmt: skip
    waiting: list[str] = []  # parameters left out, said where they would stand
    for p in params.PARAMS:
        if p.name in results:
            e = results[p.name]
            proc.timings[p.name] = Timing(_num(e.mean * speedup), _num(e.sd * speedup))
            notes.before(proc, f"timings.{p.name}", *waiting)
            waiting = []
            both = ""
            if latency and p.name in latency:
                lat = latency[p.name]
                thr = (throughput or {}).get(p.name)
                both = f"latency {format_number(_num(lat.mean * speedup))}"
                if latency_small and p.name in latency_small:
                    both += (f" +- {format_number(_num(lat.sd * speedup))}, too small to "
                             f"tell from zero ({latency_small[p.name][:60]}...)")  # fmt: skip
                if thr is not None:
                    both += (f", reciprocal throughput {format_number(_num(thr.mean * speedup))}"
                             f" +- {format_number(_num(thr.sd * speedup))}")  # fmt: skip
                elif throughput_small and p.name in throughput_small:
                    small = throughput_small[p.name]
                    both += (f", reciprocal throughput {format_number(_num(small.mean * speedup))}"
                             f" +- {format_number(_num(small.sd * speedup))}, too small to "
                             "tell from zero (" + (throughput_refused or {}).get(p.name, "")[:60]
                             + "...)")  # fmt: skip
                elif throughput_refused and p.name in throughput_refused:
                    both += ", no throughput (" + throughput_refused[p.name][:60] + "...)"
                both += "; "
            notes.after(proc, f"timings.{p.name}",
                        f"{both}{kernels.by_name(p.name).meaning}; "
                        f"{counted(e.runs, 'run', grouped=False)} x "
                        f"{e.run_seconds * 1e3:.3g} ms"
                        + (f" ({e.rejected} more set aside as outliers)" if e.rejected else "")
                        + ", median "
                        f"{format_number(_num(e.median * speedup))}; {how}")  # fmt: skip
        elif p.name in refused:
            waiting.append(f"{p.name} left out: {refused[p.name]}")
        elif p.name in kernels.LEFT_OUT and p.name in never:
            waiting.append(f"{p.name} left out: {kernels.LEFT_OUT[p.name]}")
    notes.bottom(proc, *waiting, table="timings")
    first = next((lv for lv in memory_levels if lv.seconds is not None), None)
    if cache_result is not None:
        proc.cache = Cache(size=cache_result.size,
                           smallloopspeedup=Timing(_num(cache_result.speedup)))  # fmt: skip
        if first is not None:
            proc.cache.speed = Timing(_num(first.seconds))
        pts = ", ".join(f"{x}: {format_number(_num(t))}" for x, t in curve)
        notes.before(proc.cache, "size",
                     f"curve (loop body size: s per double multiplication): {pts}")  # fmt: skip
        notes.after(proc.cache, "size", f"{cache_result.note}; {how}")
        if first is not None:
            notes.after(proc.cache, "speed", f"seconds per array reference with the data in "
                        f"the first-level data cache ({first.name}, the memory curve at "
                        f"{counted(first.curve_bytes, 'byte', grouped=False)}); the other "
                        f"levels are in the header; "
                        f"{how}")  # fmt: skip
        else:
            notes.before(proc.cache, "smallloopspeedup", "speed left out: no memory curve "
                         "was measured")  # fmt: skip
        notes.after(proc.cache, "smallloopspeedup",
                    ("out-of-cache / in-cache time of the growing loop" if cache_result.knee
                     else "no knee: written as 1.0 (report 4.2.1)")
                    + f"; {counted(info['runs'], 'run', grouped=False)} per point; "
                      f"{how}")  # fmt: skip
    machine = Machine(id=1, name=f"{cpu} (measured host)", processor_count=1,
                      topology_count=1 if link_result else 0, processors=[proc])  # fmt: skip
    if link_result:
        proc.combinations = {c: parse_expression(f"pt(1).{t} / tl(1)(1).speed")
                             for c, t in SAMPLE_COMBINATIONS if t in results}  # fmt: skip
        machine.combinations = MachineCombinations({"maxtotalspd":
                                                    parse_expression(MAXTOTALSPD)})  # fmt: skip
        nproc = info["logical_processors"]
        lat, spd = link_result["latency"], link_result["speed"]

        def timing(v: list[float]) -> Timing:
            return Timing(_num(statistics.fmean(v)),
                          _num(statistics.stdev(v) if len(v) > 1 else 0))  # fmt: skip

        pipe = Link(id=1, latency=timing(lat), speed=timing(spd),
                    connect=list(range(1, nproc + 1)))  # fmt: skip
        machine.topologies = [Topology(
            id=1, name="this host: its logical processors, one pipe between processes",
            setup=Timing(0.0), routing="broadcast", processor_count=nproc, link_count=1,
            types=dict.fromkeys(range(1, nproc + 1), 1), links=[pipe],
        )]  # fmt: skip
        notes.after(pipe, "latency", "half the round trip of 1 byte through a pipe between "
                    f"two processes; {counted(len(lat), 'run')}; {how}")  # fmt: skip
        notes.after(pipe, "speed", "seconds per byte streaming 64 KiB blocks through a pipe; "
                    f"{counted(len(spd), 'run')}; {how}")  # fmt: skip
    text = dumps_canonical(machine, comments=notes)
    _check_model(text)
    return text


def _check_model(text: str) -> None:
    from parasol_core.analysis.validate import validate
    from parasol_core.syntax.loader import loads

    machine = loads(text)
    problems = validate(machine)
    if problems:
        raise AssertionError(f"the measured model does not validate: {problems[:3]}")
