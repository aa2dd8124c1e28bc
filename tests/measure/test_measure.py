"""Measuring the host (parasol_core.measure): generator, anti-folding, statistics,
refusals, cancel, validation counts and the CLI. Tiny run lengths and a handful of
parameters: the real measurement is for the benchmark and the sample model."""

from __future__ import annotations

import platform
import re
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from parasol_core.analysis.validate import validate
from parasol_core.base import params
from parasol_core.cli import main
from parasol_core.measure import (
    MeasureCancelled,
    MeasureOptions,
    generator,
    kernels,
    measure_host,
    stats,
    toolchain,
    validation,
)
from parasol_core.measure import cache as cache_mod
from parasol_core.syntax.loader import loads

HAVE_CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
X86 = platform.machine() in ("x86_64", "AMD64")

TINY = dict(runs=3, run_seconds=0.0005, min_ticks=100, cache=False, link=False,
            memory_sizes=(4096, 65536))  # fmt: skip


# --- kernels and generator -------------------------------------------------------------


def test_the_api_contract_is_importable_from_the_package():
    import parasol_core.measure as m

    for name in ("MeasureOptions", "measure_host", "HostModel", "Progress", "MeasureCancelled",
                 "validate_host", "ValidationRow", "format_validation_table"):  # fmt: skip
        assert hasattr(m, name), name
    row = m.ValidationRow("GEB", 10000, 2.0, 1.0, 2.0)
    assert (row.experiment, row.size, row.predicted, row.measured, row.ratio) == (
        "GEB", 10000, 2.0, 1.0, 2.0)  # fmt: skip


def test_every_parameter_has_a_kernel_or_a_reason():
    covered = {k.name for k in kernels.KERNELS} | set(kernels.LEFT_OUT)
    assert covered == {p.name for p in params.PARAMS}
    assert len(kernels.KERNELS) >= 120
    assert not {k.name for k in kernels.KERNELS} & set(kernels.LEFT_OUT)


def test_control_and_test_differ_by_the_operation_only():
    k = kernels.by_name("dln")
    assert k.ctl.replace("x = v;", "") == k.test.split("x = ")[0]
    assert "v * $B" in k.test
    src = generator.program([k])
    assert "k_dln_ctl" in src and "k_dln_test" in src
    assert src.count("x = v * kB_dln[b + ") == k.unroll  # unrolled, one operand each


def test_globals_are_file_scope_and_locals_automatic():
    g, loc = kernels.by_name("dga"), kernels.by_name("dla")
    src = generator.program([g, loc])
    assert re.search(r"^double g_dga_a; double g_dga_b;$", src, re.M)
    assert "g_dla" not in src
    assert "BARRIER()" in g.test and "BARRIER()" not in loc.test


def _function_body(asm: str, name: str) -> list[str]:
    m = re.search(rf"^{name}:\n(.*?)(?:\.cfi_endproc|^\s*\.size)", asm, re.S | re.M)
    assert m, f"{name} not in the assembly"
    return [ln.strip() for ln in m.group(1).splitlines()
            if ln.startswith("\t") and not ln.strip().startswith(".")]  # fmt: skip


ANTI_FOLDING = ["dla", "dln", "ild", "igm", "rld", "cld", "sind", "modi", "sqrtd", "arr3",
                "lgdc", "intd"]  # fmt: skip


@needs_cc
def test_the_operation_survives_the_optimiser(tmp_path):
    """Compile at the default flags to assembly: each test loop holds at least `unroll`
    more instructions than its control loop, and (x86-64) the operation's instruction
    `unroll` more times."""
    ks = [kernels.by_name(n) for n in ANTI_FOLDING]
    src = tmp_path / "k.c"
    src.write_text(generator.program(ks))
    cc = toolchain.find_compiler()
    toolchain.compile_c(cc, src, tmp_path / "k.s", ["-O2"], assembly=True)
    asm = (tmp_path / "k.s").read_text()
    for k in ks:
        ctl = _function_body(asm, f"k_{k.name}_ctl")
        test = _function_body(asm, f"k_{k.name}_test")
        assert len(test) >= len(ctl) + k.unroll, k.name
        if X86 and k.expect and "gcc" in toolchain.compiler_version(cc).lower():
            pat = re.compile(rf"^({k.expect})")
            n_test = sum(bool(pat.search(i)) for i in test)
            n_ctl = sum(bool(pat.search(i)) for i in ctl)
            assert n_test - n_ctl >= k.unroll, (k.name, n_test, n_ctl)


@needs_cc
@pytest.mark.skipif(not X86, reason="reads x86-64 assembly")
def test_a_global_operands_kernels_differ_from_their_control_by_the_operation_alone(tmp_path):
    """File-scope operands (issue 34, the iga kernel): the test and control loops
    store and reload the globals alike (the same instructions on them, so the reload is
    never fused into the operation in one loop only), and the test holds the
    operation `unroll` more times."""
    names = ["iga", "igm", "dga", "dgm", "rga", "igd"]
    ks = [kernels.by_name(n) for n in names]
    src = tmp_path / "k.c"
    src.write_text(generator.program(ks))
    cc = toolchain.find_compiler()
    if "clang" in toolchain.compiler_version(cc).lower():  # gcc's may call itself "cc"
        pytest.skip("the instruction patterns are gcc's")
    toolchain.compile_c(cc, src, tmp_path / "k.s", ["-O2"], assembly=True)
    asm = (tmp_path / "k.s").read_text()
    for k in ks:
        ctl = _function_body(asm, f"k_{k.name}_ctl")
        test = _function_body(asm, f"k_{k.name}_test")
        on_globals = re.compile(rf"g_{k.name}_[ab]\b")
        # the instructions on the globals, registers aside (they are allocated)
        mem_test, mem_ctl = (sorted(re.sub(r"%[a-z0-9]+", "%R", i) for i in body
                                    if on_globals.search(i)) for body in (test, ctl))  # fmt: skip
        assert mem_test == mem_ctl, k.name
        assert all(re.match(r"mov", i) for i in test if on_globals.search(i)), k.name
        pat = re.compile(rf"^({k.expect})")
        assert sum(bool(pat.search(i)) for i in test) - sum(
            bool(pat.search(i)) for i in ctl) >= k.unroll, k.name  # fmt: skip


# --- statistics ------------------------------------------------------------------------


def test_summary_is_mean_sd_and_median_per_operation():
    e = stats.summarise([1.0, 1.0, 1.0], [2.0, 2.2, 1.9], ops=1e9, tick=1e-9)
    assert isinstance(e, stats.Estimate)
    assert e.mean == pytest.approx(1.0333e-9, rel=1e-3)
    assert e.median == pytest.approx(1.0e-9)
    assert e.sd == pytest.approx(0.1528e-9, rel=1e-2)
    assert e.runs == 3 and e.per_op_resolution == pytest.approx(1e-18)
    half = stats.summarise([1.0, 1.0], [2.0, 2.0], ops=1e9, tick=1e-9, divide=2)
    assert half.mean == pytest.approx(0.5e-9)


def test_a_disturbed_run_is_set_aside_before_the_mean_and_sd():
    # six runs; the fourth test run was slowed by another process (3.0 s, not about 2)
    ctl = [1.0, 1.02, 1.01, 1.0, 1.03, 1.01]
    test = [2.0, 2.05, 2.02, 3.0, 2.04, 2.01]
    e = stats.summarise(ctl, test, ops=1e9, tick=1e-9)
    assert isinstance(e, stats.Estimate)
    assert e.rejected == 1 and e.runs == 5
    # the same as the five undisturbed runs alone
    quiet = stats.summarise(ctl[:3] + ctl[4:], test[:3] + test[4:], ops=1e9, tick=1e-9)
    assert quiet.rejected == 0
    assert (e.mean, e.sd, e.median) == pytest.approx((quiet.mean, quiet.sd, quiet.median))
    assert e.sd < 0.05e-9
    # runs that merely spread are all kept
    spread = stats.summarise(ctl, [2.0, 2.1, 1.9, 2.05, 1.95, 2.0], ops=1e9, tick=1e-9)
    assert spread.rejected == 0 and spread.runs == 6


def test_refuses_what_the_timer_cannot_resolve():
    # 5 ms of difference per run on a 1 ms clock: 5 ticks, fewer than 10
    r = stats.summarise([0.100] * 4, [0.105] * 4, ops=1e6, tick=1e-3)
    assert isinstance(r, stats.Refusal) and "cannot resolve" in r.reason
    ok = stats.summarise([0.100] * 4, [0.105] * 4, ops=1e6, tick=1e-6)
    assert isinstance(ok, stats.Estimate)
    # a difference of a tick or none, either way, is the timer's too, not the sign's (a
    # coarse clock's median of 0 ticks said "not slower", one run in four)
    for test in ([0.100] * 4, [0.099] * 4, [0.100, 0.101, 0.099, 0.100]):
        r = stats.summarise([0.100] * 4, test, ops=1e6, tick=1e-3)
        assert isinstance(r, stats.Refusal) and "cannot resolve" in r.reason, test
        assert r.seen is not None and r.seen.runs == 4  # what the runs gave, kept


def test_a_difference_the_timer_cannot_resolve_bounds_the_operation_on_a_fine_timer():
    """Runs of 10 ms differing by 0-3 ns on a 1 ns clock: under 10 ticks, which are a
    millionth of a run, so the operation costs at most 10 ns / 1e7 operations. On a 1 ms
    clock and runs of 20 ms the same refusal bounds nothing: the ticks are half a run."""
    ctl = [0.010] * 4
    fine = stats.summarise(ctl, [0.010 + d for d in (3e-9, 1e-9, 0.0, 2e-9)], ops=1e7, tick=1e-9)
    assert isinstance(fine, stats.Refusal) and not fine.resolved
    assert fine.bound == pytest.approx(1e-15) and fine.ticks_of_run == pytest.approx(1e-6)
    small = fine.small_estimate()
    assert small is not None and 0 <= small.median <= small.mean <= fine.bound
    assert small.mean == pytest.approx(1.5e-16)  # what the runs gave, within the bound
    below = stats.summarise(ctl, [0.010 - 3e-9] * 4, ops=1e7, tick=1e-9).small_estimate()
    assert below is not None and below.mean == 0  # no lower than 0
    coarse = stats.summarise([0.020] * 4, [0.020, 0.021, 0.020, 0.019], ops=1e7, tick=1e-3)
    assert isinstance(coarse, stats.Refusal) and not coarse.resolved
    assert coarse.ticks_of_run == pytest.approx(0.5) and coarse.small_estimate() is None
    assert coarse.at_least_zero() is not None  # a throughput still takes what was seen


def test_refuses_a_value_that_is_not_positive_or_is_noise():
    r = stats.summarise([1.0, 1.0, 1.0], [0.99, 1.0, 0.98], ops=1e6, tick=1e-9)
    assert isinstance(r, stats.Refusal) and "not slower" in r.reason
    noisy = stats.summarise([1, 1, 1, 1], [1.5, 0.6, 1.5, 0.6], ops=1e6, tick=1e-9)
    assert isinstance(noisy, stats.Refusal) and "standard errors" in noisy.reason


# --- the cache curve -------------------------------------------------------------------


def test_knee_and_speedup_from_the_curve():
    curve = [(10, 2.1e-7), (50, 2.13e-7), (100, 2.13e-7), (500, 3.46e-7), (1000, 3.5e-7)]
    r = cache_mod.analyse(curve)
    assert r.knee and r.size == 100 and r.speedup == pytest.approx(3.48e-7 / 2.12e-7, rel=0.01)


def test_no_knee_means_speedup_one():
    r = cache_mod.analyse([(10, 2.6e-9), (100, 2.5e-9), (5000, 2.62e-9)])
    assert not r.knee and r.speedup == 1.0 and r.size == 5000 and "no knee" in r.note


def test_cache_program_repeats_the_operation_x_times():
    src = cache_mod.program(50)
    assert src.count("x = v * b") == 50


# --- measure_host end to end (tiny) ---------------------------------------------------


@needs_cc
def test_measure_a_few_parameters_gives_a_valid_model():
    seen = []
    m = measure_host(
        MeasureOptions(parameters=["dla", "igd", "sind", "iga", "cmplxc"], runs=3,
                       run_seconds=0.001, cache_sizes=(10, 100)),
        progress=seen.append,
    )  # fmt: skip
    machine = loads(m.text)
    assert validate(machine) == []
    proc = machine.processors[0]
    assert proc.name == m.cpu
    for name in ("dla", "igd", "sind"):
        t = proc.timings[name]
        assert t.mean > 0 and t.sd is not None
    assert ("cmplxc", kernels.LEFT_OUT["cmplxc"]) in m.left_out
    assert "# cmplxc left out" in m.text
    assert [x for x, _ in m.cache_curve] == [10, 100]
    assert proc.cache.smallloopspeedup.mean >= 1.0
    assert {p.parameter for p in seen} >= {"dla", "igd", "sind"}
    assert any(p.cache_point for p in seen) and seen[-1].fraction == 1.0
    assert all(0 <= p.fraction <= 1 for p in seen)
    if "iga" in proc.timings:  # a combination only for a timing that was written
        assert "ia_spd = pt(1).iga / tl(1)(1).speed" in m.text
    assert "im_spd" not in m.text
    # every value says how it was measured
    for line in m.text.splitlines():
        if re.match(r"\s+(dla|igd|sind|size|smallloopspeedup|latency|speed) = ", line):
            assert "#" in line and m.info["date"] in line and "-O2" in line


@needs_cc
def test_a_coarse_timer_refuses_a_cheap_operation():
    """A 1 ms clock and runs of 2 ticks: an integer add's difference is under 10 ticks."""
    m = measure_host(MeasureOptions(parameters=["ila"], runs=3, run_seconds=0.0001,
                                    min_ticks=2, cache=False, link=False,
                                    fake_tick_ns=1_000_000))  # fmt: skip
    assert "ila" not in m.timings
    [(name, reason)] = m.left_out
    assert name == "ila" and "cannot resolve" in reason
    assert m.info["timer"]["tick"] == pytest.approx(1e-3)
    assert validate(loads(m.text)) == []


@needs_cc
def test_cancel_stops_kills_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cancel = threading.Event()

    def progress(p):
        if p.parameter == "dla":  # the first benchmark is running: cancel mid-run
            cancel.set()

    from parasol_core.measure import toolchain

    killed = []
    stop = toolchain._stop  # every child is stopped when its block ends: count the live

    def spy(proc, *args, **kwargs):
        if proc.poll() is None:  # still running when its block ended: it was stopped
            killed.append(proc.args)
        return stop(proc, *args, **kwargs)

    monkeypatch.setattr(toolchain, "_stop", spy)
    with pytest.raises(MeasureCancelled):
        measure_host(MeasureOptions(parameters=["dla", "igd", "sind"], runs=50,
                                    run_seconds=0.05, cache=False, link=False),
                     progress=progress, cancel=cancel)  # fmt: skip
    # 50 runs of 2 x 50 ms take 5 s: the running benchmark was killed, not waited for
    # (the order of events, not a time: a busy machine slows both alike)
    assert len(killed) == 1, killed
    assert list(tmp_path.iterdir()) == []  # the build directory is gone


def test_cancel_before_start_compiles_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cancel = threading.Event()
    cancel.set()
    if not HAVE_CC:
        pytest.skip("no C compiler")
    with pytest.raises(MeasureCancelled):
        measure_host(MeasureOptions(parameters=["dla"], **TINY), cancel=cancel)
    assert list(tmp_path.iterdir()) == []


# --- validation ------------------------------------------------------------------------


def _python_counts(experiment: str, size: int) -> dict[str, int]:
    c = dict.fromkeys(validation.OPS, 0)
    c["loopi1"] = 1
    if experiment == "GEB":
        for n in range(2, size + 1):
            c["loopoh1"] += 1
            c["ilt"] += 1
            x = n
            while True:
                c["modi"] += 1
                c["llic"] += 2
                if x % 2 == 0:
                    x //= 2
                    c["ild"] += 1
                else:
                    x = 3 * x + 1
                    c["ilm"] += 1
                    c["ila"] += 1
                c["ils"] += 2
                c["ila"] += 1
                c["goto"] += 1
                if x == 1:
                    break
    else:
        for n in range(max(2, size - 9999), size + 1):
            c["loopoh1"] += 1
            c["ils"] += 2
            d, prime = 2, True
            while True:
                c["ilm"] += 1
                c["llic"] += 1
                if d * d > n:
                    break
                c["modi"] += 1
                c["llic"] += 1
                if n % d == 0:
                    prime = False
                    c["ils"] += 1
                    break
                d += 1
                c["ila"] += 1
                c["ils"] += 1
                c["goto"] += 1
            c["llic"] += 1
            if prime:
                c["ila"] += 1
                c["ils"] += 1
    return c


@needs_cc
def test_instrumented_counts_match_the_programs(tmp_path):
    src = tmp_path / "v.c"
    src.write_text(validation.source())
    cc = toolchain.find_compiler()
    toolchain.compile_c(cc, src, tmp_path / "counted", ["-O2", "-DCOUNT"])
    import json

    for exp, mode, size in (("GEB", "geb", 300), ("primes", "primes", 10300)):
        [line] = toolchain.run_lines([str(tmp_path / "counted"), mode, "1", "0", str(size)])
        assert json.loads(line)["counts"] == _python_counts(exp, size), exp


@needs_cc
def test_validate_host_predicts_each_size_from_the_model():
    text = (Path(__file__).resolve().parents[2] / "sample_models" /
            "vax-11-785.machine").read_text()  # fmt: skip
    rows = validation.validate_host(
        text, MeasureOptions(quick=True), sizes=(2000, 4000), programs=()
    )
    assert [(r.experiment, r.size) for r in rows] == [
        ("GEB", 2000), ("GEB", 4000), ("primes", 2000), ("primes", 4000)]  # fmt: skip
    for r in rows:
        assert r.predicted > 0 and r.measured > 0
        assert r.ratio == pytest.approx(r.predicted / r.measured)
    # the VAX model has no ilm, ild, modi...: counted but charged 0, and said so
    assert "ild" in rows[0].missing
    table = validation.format_validation_table(rows, text)
    assert "problem size" in table and "not in the model, charged 0" in table
    assert "varies by" in table


# --- the command line ------------------------------------------------------------------


def test_cli_without_a_compiler_exits_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    out = tmp_path / "m.machine"
    assert main(["measure", "--quick", "-o", str(out)]) == 2
    assert "no C compiler" in capsys.readouterr().err
    assert not out.exists()


def test_cli_network_without_the_module_exits_2(monkeypatch, capsys):
    import importlib

    real = importlib.import_module

    def fake(name, *a, **k):
        if name == "parasol_core.measure.mpi_network":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake)
    assert main(["measure", "--network"]) == 2
    assert "network" in capsys.readouterr().err


@needs_cc
def test_cli_ctrl_c_exits_130_and_writes_nothing(monkeypatch, tmp_path, capsys):
    import parasol_core.measure as m

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(m, "measure_host", interrupted)
    out = tmp_path / "m.machine"
    assert main(["measure", "--quick", "-o", str(out)]) == 130
    assert not out.exists()
    assert "cancelled" in capsys.readouterr().err


@needs_cc
def test_cli_writes_a_model_with_periodic_progress(tmp_path, capsys):
    out = tmp_path / "m.machine"
    rc = main(["measure", "--params", "dla,ilm", "--runs", "3", "--run-ms", "0.5",
               "--cache-sizes", "10,50", "--memory-sizes", "4096,65536",
               "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "about" in err and "wrote" in err
    assert validate(loads(out.read_text())) == []
    assert "dla = " in out.read_text()


@needs_cc
def test_cli_progress_off_a_terminal_is_plain_lines_that_name_the_steps(
    tmp_path, capsys, monkeypatch
):
    """capsys's stderr is not a terminal, as in CI or a pipe: no carriage returns or
    terminal codes, each progress line says how far and what; the last says done. (A line
    per step here; the command spaces them 5 s apart.)"""
    import functools

    from parasol_core.cli import measure_commands, progress

    monkeypatch.setattr(measure_commands, "ProgressBar",
                        functools.partial(progress.ProgressBar, every=0))  # fmt: skip
    out = tmp_path / "m.machine"
    rc = main(["measure", "--params", "dla,ilm", "--runs", "3", "--run-ms", "0.5",
               "--cache-sizes", "10,50", "--memory-sizes", "4096", "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 0, err
    assert not re.search(r"[\r\x1b\x08]", err), repr(err)
    steps = [line for line in err.splitlines() if line.startswith("[")]
    assert all(re.fullmatch(r"\[\s*\d+%\] \S.*", line) for line in steps), steps
    assert steps[0].startswith("[  0%] compiling") and steps[0].endswith(" left"), steps
    named = " ".join(steps)
    for step in ("] dla; ", "] ilm; ", "] instruction cache, loop of 50; "):
        assert step in named, steps
    assert steps[-1] == "[100%] done" and steps.count("[100%] done") == 1, steps


def test_cli_rejects_unknown_parameters(capsys):
    assert main(["measure", "--params", "nosuch"]) == 2
    assert "unknown timing parameter" in capsys.readouterr().err
    assert main(["measure", "--memory-sizes", "32"]) == 2  # below one 64-byte line
    assert "--memory-sizes takes whole numbers" in capsys.readouterr().err


@pytest.mark.parametrize("given", ["", ",", " , "])
@pytest.mark.parametrize("option, said", [
    ("--params", "--params names no parameter"),
    ("--cache-sizes", "--cache-sizes takes whole numbers from 1 to"),
    ("--memory-sizes", "--memory-sizes takes whole numbers of bytes from 64 to"),
])  # fmt: skip
def test_an_option_given_an_empty_list_is_refused_not_taken_as_absent(capsys, option, said,
                                                                      given):  # fmt: skip
    # --params "" (an empty shell variable) ran the whole three-minute measurement
    assert main(["measure", option, given]) == 2
    assert said in capsys.readouterr().err


def test_empty_cflags_are_no_flags():
    from parasol_core.cli import build_parser, measure_commands

    args = build_parser().parse_args(["measure", "--cflags", ""])
    assert measure_commands._options(args).cflags == ()
    args = build_parser().parse_args(["measure"])
    assert measure_commands._options(args).cflags == ("-O2",)


def test_the_validation_table_of_a_model_that_times_none_of_the_counted_operations():
    from parasol_core.measure import ValidationRow, format_validation_table

    rows = [ValidationRow("GEB", n, 0.0, 1e-3 * n, 0.0, missing=("modi",)) for n in (10, 20)]
    text = format_validation_table(rows)
    assert "predicts 0 s" in text and "modi" in text
