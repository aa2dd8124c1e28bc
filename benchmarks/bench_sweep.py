"""What a sweep's variant costs, against one ``eval`` on a loaded model.

The sweep: 1,000 variants of the Parsytec GCel sample (10 values of ``pt(1).iga`` x 10
of every link's speed x 10 of the ``arithmetic`` scaler), each answered by an ``eval``
of the eight combination ratios (``po(1).ia_spd`` ... ``po(1).dp_spd``,
``mc.maxtotalspd``). The baseline, in the same run: one ``eval`` of the same eight on
the loaded model (an engine made on it, then the eight evaluated: what
``parasol-model eval`` does after loading). Printed:

* a variant in this process (``serial``), in seconds and as a ratio to the baseline
  (target: at most 2x);
* the whole sweep on a process pool of ``--workers`` processes (default 2, this
  machine's cores), start-up of the pool included, as seconds and as a ratio to 1,000
  baselines (target: under 5 s on two cores).

Then a sweep answered by a program replay: ``--replay`` variants (default 1,000) of the
GCel's link speed and flop time, each replaying ``--trace`` (default the long stencil
sample, ``sample_models/traces/stencil-long.txt``, 16 ranks, 12,032 actions: the
issue's 10^4-action trace; ``stencil.txt`` has 1,232). Baseline: one replay of the
trace, read and compiled, on the loaded model. Printed: the sweep on the pool, start-up
included, as a ratio to (variants x the baseline) / workers (target: within 1.2x).
``--replay-only`` skips the ``eval`` sweep. Every figure is printed with the load
average at its start (the machine is shared: a ratio is only as good as the quiet).

With ``--mpi N``: the replay sweep by the command, ``parasol-model sweep`` on the local
pool and under ``mpiexec -n N python -m mpi4py.futures`` (N - 1 worker ranks), start-up
included (from bytecode compiled once, as an installed package runs), best of
``--repeat``, the two alternated, as a ratio of the two with each side's CPU seconds;
the rows compared apart from the seconds.

    .venv/bin/python benchmarks/bench_sweep.py [--variants 1000] [--workers 2] [--repeat 3]
                                               [--replay 1000] [--trace FILE] [--replay-only]
                                               [--mpi 4]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

from parasol_core.expr.engine import Engine
from parasol_core.sweep import loads_spec, run_sweep
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parent.parent
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
RATIOS = [f"po(1).{n}" for n in ("ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "ds_spd",
                                  "dp_spd")] + ["mc.maxtotalspd"]  # fmt: skip


def sweep_text(per_axis: int) -> str:
    return f"""
model = "{GCEL}"

[[axis]]
set = "pt(1).iga"
log = [1e-7, 1e-5, {per_axis}]

[[axis]]
set = "tl(1)(*).speed"
log = [1e-7, 1e-5, {per_axis}]

[[axis]]
scale = "arithmetic"
log = [0.25, 4, {per_axis}]

[[answer]]
eval = {RATIOS!r}
""".replace("'", '"')


def baseline(repeat: int) -> float:
    """Seconds of one eval of the eight ratios on the loaded model (best of ``repeat``
    runs of 200)."""
    machine = load(str(GCEL))
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(200):
            engine = Engine(machine)
            for text in RATIOS:
                engine.evaluate_text(text, runtime=True)
        best = min(best, (time.perf_counter() - start) / 200)
    return best


STENCIL = ROOT / "sample_models" / "traces" / "stencil.txt"
STENCIL_LONG = ROOT / "sample_models" / "traces" / "stencil-long.txt"


def load_average() -> str:
    import os

    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def replay_case(count: int, workers: int, repeat: int, trace_path: Path = STENCIL_LONG) -> None:
    from parasol_core.replay import ReplayOptions, load_trace, replay

    per_axis = max(1, round(count**0.5))
    spec = loads_spec(f"""
model = "{GCEL}"

[[axis]]
set = "tl(1)(*).speed"
log = [9.1e-8, 9.1e-6, {per_axis}]

[[axis]]
set = "pt(1).dga"
log = [6e-7, 4.8e-6, {per_axis}]

[[answer]]
replay = {{trace = "{trace_path}", flop = "pt(T).dga"}}
""")
    machine, trace = load(str(GCEL)), load_trace(trace_path)
    options = ReplayOptions(flop="pt(T).dga")
    replay(machine, trace, options)  # the program compiled, as a worker's is after one
    one = one_cpu = math.inf
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(10):
            replay(machine, trace, options)
        one = min(one, (time.perf_counter() - start) / 10)
        one_cpu = min(one_cpu, (time.process_time() - cpu) / 10)
    n = spec.size
    pooled = serial = pool_cpu = serial_cpu = math.inf
    loads = []
    for _ in range(repeat):
        loads.append(load_average())
        rows: list = []
        start, cpu = time.perf_counter(), time.process_time()
        run_sweep(spec, rows.append, executor="serial")
        serial = min(serial, time.perf_counter() - start)
        serial_cpu = min(serial_cpu, time.process_time() - cpu)
        rows = []
        start, cpu = time.perf_counter(), _children_cpu()
        run_sweep(spec, rows.append, executor="local", workers=workers)
        pooled = min(pooled, time.perf_counter() - start)
        pool_cpu = min(pool_cpu, _children_cpu() - cpu)  # the pool's processes, reaped
        assert len(rows) == n and not any(r.error for r in rows), rows[0]
    ideal = n * one / workers
    print(
        f"GCel, {n:,} variants x a replay of {trace_path.name} ({len(trace):,} actions, "
        f"{trace.ranks} ranks; best of {repeat}; {'; '.join(loads)} at the runs' starts)"
    )
    print(f"  baseline: one replay, trace compiled, on the loaded model {one * 1e3:8.3f} ms")
    print(f"  a variant, in this process              {serial / n * 1e3:8.3f} ms  "
          f"{serial / n / one:5.2f}x the baseline")  # fmt: skip
    print(f"  the sweep, {workers} worker processes        {pooled:8.3f} s   "
          f"{pooled / ideal:5.2f}x (variants x baseline) / workers (target <= 1.2x)")  # fmt: skip
    print(f"  CPU of the pool's processes, start-up included {pool_cpu:8.3f} s   "
          f"{pool_cpu / (n * one_cpu):5.2f}x variants x the baseline's CPU "
          f"({one_cpu * 1e3:.3f} ms): what the load cannot inflate; "
          f"{pool_cpu / serial_cpu:4.2f}x the CPU of the sweep in one process")  # fmt: skip


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def mpi_case(count: int, workers: int, ranks: int, trace: Path, repeat: int,
             settings: tuple[dict[str, str], ...] = ({},)) -> None:  # fmt: skip
    """The replay sweep by the command, locally and under ``mpiexec -n ranks`` once for
    each of ``settings`` (environment variables of the MPI job, such as MPICH's): each
    run a process timed from outside (start-up included), the runs alternated, best of
    ``repeat``; each side's CPU seconds (its processes', user + system) beside."""
    import csv
    import os
    import resource
    import subprocess
    import sys
    import tempfile

    def children_cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_CHILDREN)
        return use.ru_utime + use.ru_stime

    per_axis = max(1, round(count**0.5))
    python = Path(sys.executable)
    mpiexec = python.parent / "mpiexec"
    with tempfile.TemporaryDirectory() as tmp:
        # as an installed package runs: from bytecode compiled once (this machine's
        # environment sets PYTHONDONTWRITEBYTECODE, which would make each of the MPI
        # job's processes compile some 90 modules at every start, where a local pool's
        # forked workers inherit them compiled)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=f"{tmp}/pycache")
        sweep = Path(tmp) / "s.toml"
        sweep.write_text(f"""
model = "{GCEL}"

[[axis]]
set = "tl(1)(*).speed"
log = [9.1e-8, 9.1e-6, {per_axis}]

[[axis]]
set = "pt(1).dga"
log = [6e-7, 4.8e-6, {per_axis}]

[[answer]]
replay = {{trace = "{trace}", flop = "pt(T).dga"}}
""")
        runs = {
            "local": [str(python), "-m", "parasol_core.cli", "sweep", str(sweep), "-o",
                      f"{tmp}/local.csv", "--workers", str(workers)],
        }  # fmt: skip
        envs = {"local": env}
        for i, setting in enumerate(settings):
            name = " ".join(f"{k}={v}" for k, v in setting.items()) or "mpi"
            runs[name] = [str(mpiexec), "-n", str(ranks), str(python), "-m", "mpi4py.futures",
                          "-m", "parasol_core.cli", "sweep", str(sweep), "-o",
                          f"{tmp}/mpi{i}.csv"]  # fmt: skip
            envs[name] = {**env, **setting}
        warm = [str(python), "-m", "compileall", "-q", str(ROOT / "parasol_core")]
        subprocess.run(warm, env=env, check=True, capture_output=True)
        took = {name: math.inf for name in runs}
        cpu = dict.fromkeys(runs, math.inf)
        walls: dict[str, list[float]] = {name: [] for name in runs}  # per round
        loads = []
        for _ in range(repeat):
            loads.append(load_average())
            for name, command in runs.items():
                Path(command[command.index("-o") + 1]).unlink(missing_ok=True)
                before = children_cpu()
                start = time.perf_counter()
                subprocess.run(command, env=envs[name], check=True, capture_output=True)
                walls[name].append(time.perf_counter() - start)
                took[name] = min(took[name], walls[name][-1])
                cpu[name] = min(cpu[name], children_cpu() - before)

        def rows(name: str) -> list:
            with open(runs[name][runs[name].index("-o") + 1], newline="") as f:
                return sorted((r[:-2] + r[-1:] for r in list(csv.reader(f))[1:]),
                              key=lambda r: int(r[0]))  # fmt: skip

        same = {name: rows(name) == rows("local") for name in runs if name != "local"}
    n = per_axis * per_axis
    print(
        f"GCel, {n:,} replay variants of {trace.name} by the command (start-up included; "
        f"best of {repeat}, local and MPI alternated; {'; '.join(loads)} at the rounds' starts)"
    )
    print(
        f"  local pool of {workers}                      {took['local']:8.3f} s   "
        f"CPU {cpu['local']:6.2f} s"
    )
    for name in same:
        # each round's MPI run against the local run just before it: a spell of the
        # machine's that slows one round slows both (the best of each side may come
        # from different spells)
        paired = sorted(m / lo for m, lo in zip(walls[name], walls["local"]))
        print(
            f"  mpiexec -n {ranks} ({ranks - 1} worker ranks)         {took[name]:8.3f} s   "
            f"CPU {cpu[name]:6.2f} s   {took[name] / took['local']:5.2f}x local "
            f"(target <= 1.3x); rows {'the same' if same[name] else 'DIFFERENT'} apart "
            f"from the seconds{'' if name == 'mpi' else '; with ' + name}\n"
            f"    round by round {', '.join(f'{x:.2f}x' for x in paired)}: median "
            f"{statistics.median(paired):.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--replay", type=int, default=1000, help="replay variants (0: none)")
    ap.add_argument("--trace", type=Path, default=STENCIL_LONG, help="the trace replayed")
    ap.add_argument("--replay-only", action="store_true", help="skip the eval sweep")
    ap.add_argument("--mpi", type=int, default=0, metavar="N", help="also under mpiexec -n N")
    ap.add_argument("--mpi-env", action="append", default=[], metavar="NAME=VALUE",
                    help="also under mpiexec with this in the environment (repeatable: "
                         "one run each; 'A=1,B=2' sets two at once)")  # fmt: skip
    a = ap.parse_args()
    settings = ({},) + tuple(dict(kv.split("=", 1) for kv in item.split(",")) for item in a.mpi_env)
    print(f"{load_average()} at the start")
    if a.replay_only:
        replay_case(a.replay, a.workers, a.repeat, a.trace)
        if a.mpi:
            mpi_case(a.replay or 200, a.workers, a.mpi, a.trace, a.repeat, settings)
        return
    per_axis = round(a.variants ** (1 / 3))
    spec = loads_spec(sweep_text(per_axis))
    n = spec.size
    one = baseline(a.repeat)
    serial = pooled = math.inf
    for _ in range(a.repeat):
        rows: list = []
        start = time.perf_counter()
        run_sweep(spec, rows.append, executor="serial")
        serial = min(serial, time.perf_counter() - start)
        assert len(rows) == n and not any(r.error for r in rows)
        rows = []
        start = time.perf_counter()
        run_sweep(spec, rows.append, executor="local", workers=a.workers)
        pooled = min(pooled, time.perf_counter() - start)
        assert len(rows) == n
    print(f"GCel, {n:,} variants x eval of the 8 combination ratios (best of {a.repeat})")
    print(f"  baseline: one eval on the loaded model   {one * 1e3:8.3f} ms")
    print(f"  a variant, in this process              {serial / n * 1e3:8.3f} ms  "
          f"{serial / n / one:5.2f}x the baseline (target <= 2x)")  # fmt: skip
    print(f"  the sweep, {a.workers} worker processes        {pooled:8.3f} s   "
          f"{pooled / (n * one):5.2f}x {n:,} baselines; {pooled / n / one:5.2f}x a baseline "
          "a variant (target: under 5 s)")  # fmt: skip
    if a.replay:
        replay_case(a.replay, a.workers, a.repeat, a.trace)
    if a.mpi:
        mpi_case(a.replay or 200, a.workers, a.mpi, a.trace, a.repeat, settings)


if __name__ == "__main__":
    main()
