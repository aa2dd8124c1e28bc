"""A million processors (issue 23): generate, load, validate, dump and save a
SIDE x SIDE x SIDE torus, with every figure against a baseline measured in the same run.

    .venv/bin/python benchmarks/bench_million.py            # 100 x 100 x 100: 1,000,000 processors
    .venv/bin/python benchmarks/bench_million.py --side 64  # 262,144 processors
    .venv/bin/python benchmarks/bench_million.py --side 64 --old /work/main/.venv/bin/python

Each step runs in a subprocess of its own, one model per process, so that each memory
figure is that step's alone:

- generate: the machine text of the torus (``generate`` + the canonical writer), against
  loading that text;
- load + validate: ``load`` then ``validate``, against ``json.loads`` of the model's JSON
  dump (``show --json``'s text, read from a file before the clock starts);
- memory: the resident set added by loading (the text included), against the file's
  size; and the peak (``ru_maxrss``), which also holds the bytes read and the copies of
  the text the reader makes while it works;
- saving: one timing edit, one link's speed, one link added, each followed by a
  lossless save, timed after the load; their undos, one link removed and put back;
  then a group edit of every link (the link groups
  window's "all links"), its check and its save, and undoing it back to the original
  bytes.

``--old PYTHON`` also runs load + validate and its memory with another checkout's
interpreter (main's), on the same file. Its code needs about 6 GB for the 100^3 torus:
use it with ``--side 64`` only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def peak() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# --------------------------------------------------------------------------- steps (subprocesses)


def step_generate(side: int, path: str) -> dict:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_load import TIMINGS

    from parasol_core.model import Machine, Processor, Timing
    from parasol_core.syntax.writer import dumps_canonical
    from parasol_core.topology.generators import generate

    start = time.perf_counter()
    topo = generate("torus", [side] * 3, 2.85e-05, 9.1e-07)
    proc = Processor(id=1, name="T805 Transputer",
                     timings={k: Timing(float(v)) for k, v in TIMINGS.items()})  # fmt: skip
    machine = Machine(id=1, name=f"{side} x {side} x {side} torus", processor_count=1,
                      topology_count=1, processors=[proc], topologies=[topo])  # fmt: skip
    text = dumps_canonical(machine)
    seconds = time.perf_counter() - start
    Path(path).write_text(text, encoding="utf-8")
    return {"seconds": seconds, "bytes": len(text), "peak": peak()}


def step_json(path: str, json_path: str) -> dict:
    from parasol_core.syntax import jsonio
    from parasol_core.syntax.loader import load

    machine = load(path)
    start = time.perf_counter()
    text = jsonio.dumps(machine, indent=1)
    seconds = time.perf_counter() - start
    Path(json_path).write_text(text, encoding="utf-8")
    return {"seconds": seconds, "bytes": len(text), "peak": peak()}


def step_json_loads(json_path: str) -> dict:
    text = Path(json_path).read_text(encoding="utf-8")
    start = time.perf_counter()
    data = json.loads(text)
    seconds = time.perf_counter() - start
    del data
    return {"seconds": seconds}


def step_load(path: str) -> dict:
    import gc

    from parasol_core.analysis.validate import validate
    from parasol_core.syntax.loader import load

    gc.collect()
    before = rss()
    start = time.perf_counter()
    machine = load(path)
    loaded = time.perf_counter()
    found = validate(machine)
    done = time.perf_counter()
    gc.collect()
    return {
        "load": loaded - start, "validate": done - loaded, "seconds": done - start,
        "errors": sum(d.severity == "error" for d in found),
        "resident": rss() - before, "peak": peak(), "links": len(machine.topologies[0].links),
    }  # fmt: skip


def step_save(path: str) -> dict:
    import shutil

    from parasol_core.model import Timing
    from parasol_core.session import Session

    work = path + ".save.machine"
    shutil.copyfile(path, work)
    original = Path(path).read_bytes()
    session = Session.open(work)
    topo = session.machine.topologies[0]
    out = {}

    start = time.perf_counter()
    session.set("pt(1).iga", "1.5e-7")
    session.save(work)
    out["timing edit + save"] = time.perf_counter() - start

    start = time.perf_counter()
    session.set_links(topo.id, (len(topo.links) // 2,), speed=Timing(4e-07))
    session.save(work)
    out["one link's speed + save"] = time.perf_counter() - start

    start = time.perf_counter()
    session.new_link(topo.id, 1, topo.processor_count // 2)
    session.save(work)
    out["one link added + save"] = time.perf_counter() - start

    start = time.perf_counter()
    session.undo()
    session.undo()
    session.undo()
    session.save(work)
    out["three undos + save"] = time.perf_counter() - start
    out["back to the original bytes"] = Path(work).read_bytes() == original

    start = time.perf_counter()
    session.remove_link(topo.id, len(topo.links) // 2)
    session.save(work)
    out["one link removed + save"] = time.perf_counter() - start
    start = time.perf_counter()
    session.undo()  # the link back where it was
    session.save(work)
    out["its undo + save"] = time.perf_counter() - start

    # the link groups window's 'all links': one group edit of every link, as a tuple
    ids = tuple(topo.links.ids.tolist())
    start = time.perf_counter()
    session.set_links(topo.id, ids, speed=Timing(5e-07))
    out["group edit of every link's speed (a first edit)"] = time.perf_counter() - start
    start = time.perf_counter()
    session.revalidate()
    out["  its check"] = time.perf_counter() - start
    start = time.perf_counter()
    session.save(work)
    out["  + save (each value keeps its length)"] = time.perf_counter() - start
    start = time.perf_counter()
    session.set_links(topo.id, ids, latency=Timing(3.125e-05, 1e-07))
    session.save(work)
    out["group edit of every link's latency + save (each value longer)"] = (
        time.perf_counter() - start
    )
    start = time.perf_counter()
    session.undo()
    session.undo()
    session.save(work)
    out["two undos + save"] = time.perf_counter() - start
    out["back to the original bytes again"] = Path(work).read_bytes() == original
    os.unlink(work)
    return out


STEPS = {"generate": step_generate, "json": step_json, "json_loads": step_json_loads,
         "load": step_load, "save": step_save}  # fmt: skip


def run(step: str, *args: object, python: str = sys.executable) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
        "import bench_million as b; "
        f"print('RESULT ' + json.dumps(b.STEPS[{step!r}](*{[str(a) for a in args]!r})))"
    )
    if step in ("generate", "json", "save") and python != sys.executable:
        raise ValueError("only load runs with another interpreter")
    # run from benchmarks/: the interpreter imports its own checkout's parasol_core
    out = subprocess.run([python, "-c", code], capture_output=True, text=True,
                         cwd=ROOT / "benchmarks")  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{step} failed:\n{out.stderr[-3000:]}")
    line = next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--side", type=int, default=100)
    ap.add_argument("--old", help="another checkout's python, for load + validate")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temp dir)")
    args = ap.parse_args()
    side = args.side
    folder = Path(args.dir or tempfile.mkdtemp(prefix="bench_million_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = str(folder / f"torus{side}.machine")
    json_path = str(folder / f"torus{side}.json")
    mb = 1e6

    gen = run("generate", side, path)
    size = os.path.getsize(path)
    print(f"{side} x {side} x {side} torus: {side**3:,} processors, file {size / mb:.0f} MB")
    dump = run("json", path, json_path)
    jl = run("json_loads", json_path)
    ld = run("load", path)
    print(f"  links: {ld['links']:,}; errors found by validate: {ld['errors']}")
    print(f"  json.loads of the JSON dump ({dump['bytes'] / mb:.0f} MB): {jl['seconds']:.2f} s"
          f"  (the dump written from the columns in {dump['seconds']:.2f} s)")  # fmt: skip
    print(f"  load + validate: {ld['seconds']:.2f} s (load {ld['load']:.2f}, validate "
          f"{ld['validate']:.2f}) = {ld['seconds'] / jl['seconds']:.2f}x json.loads"
          "  (target: 1x or less)")  # fmt: skip
    print(f"  generate: {gen['seconds']:.2f} s = {gen['seconds'] / ld['load']:.2f}x loading the "
          "text  (target: 1x or less)")  # fmt: skip
    print(f"  resident after load (text included): {ld['resident'] / mb:.0f} MB = "
          f"{ld['resident'] / size:.2f}x the file  (target: under 1.5x; 300 MB for 64^3); "
          f"peak {ld['peak'] / mb:.0f} MB")  # fmt: skip
    if args.old:
        old = run("load", path, python=args.old)
        print(f"  old code ({args.old}): load + validate {old['seconds']:.2f} s = "
              f"{old['seconds'] / jl['seconds']:.2f}x json.loads; resident "
              f"{old['resident'] / mb:.0f} MB = {old['resident'] / size:.2f}x the file; "
              f"peak {old['peak'] / mb:.0f} MB")  # fmt: skip
        print(f"  new against old: load + validate {ld['seconds'] / old['seconds']:.2f}x the "
              f"time, {ld['resident'] / old['resident']:.2f}x the resident memory")  # fmt: skip
    sv = run("save", path)
    for what, value in sv.items():
        if isinstance(value, bool):
            print(f"  {what}: {value}")
        else:
            limit = 2 if what.startswith("timing") else 3
            target = (
                f"  (target: under {limit} s)"
                if what.startswith(("timing", "one link'", "one link a"))
                else ""
            )
            print(f"  {what}: {value:.2f} s{target}")
    if args.dir is None:
        for p in (path, json_path):
            os.unlink(p)


if __name__ == "__main__":
    main()
