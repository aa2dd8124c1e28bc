"""How long loading, validating and writing a model take, against json in the same run.

For the Parsytec GCel sample and a generated 32 x 32 x 32 3D torus (32,768 processors,
98,304 links), it times

* ``load``: ``parasol_core.loads(text)`` (lexing, parsing, building the objects and the
  source record the lossless writer needs);
* ``validate``: ``validate(machine)`` on the loaded model;
* ``load + validate``: both, as opening a file in the editor does;
* ``dumps``: ``dumps(machine)`` on the unedited model (lossless: the loaded text, checked
  to come back byte for byte);
* ``json.loads``: the baseline, ``json.loads`` of ``json.dumps(to_data(machine))``, the
  same model as JSON (what the estimator is sent);
* ``json.dumps``: ``json.dumps(to_data(machine))``, the baseline for writing;

taking turns within each repetition, and prints the median of each with its ratio to
``json.loads`` of the same model. For the torus it also measures

* ``edit + save``: one link's latency changed and the model saved (lossless) to a
  temporary file, as the editor does (the saved text differs from the loaded one in that
  value's characters only, which is checked); and an unedited save, checked to give the
  loaded bytes;
* how load time grows: load + validate per link of a smaller torus (``--small-side``,
  15 x 15 x 15: 10,125 links) against the large one's;
* memory (tracemalloc, in a separate pass since it slows everything): the peak while
  loading, and what the loaded model holds (the text itself included).

``--no-bulk`` also times the GCel sample with the bulk scanners off (the reader alone). At the end
it lists each target of issue 14 with its figure and whether it is met. The C kernel for
link lists is used when built; ``PARASOL_PURE_PYTHON=1`` times the pure-Python path.

    .venv/bin/python benchmarks/bench_load.py [--repeat N] [--side N] [--torus-repeat N]
        [--small-side N] [--no-bulk]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import parasol_core.syntax.loader as parser_module
from parasol_core import Machine, Timing, loads
from parasol_core.analysis.validate import validate
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps, save

ROOT = Path(__file__).resolve().parent.parent
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"

# T805 figures as in the GCel sample (report 4.3.2); the benchmark needs realistic text,
# not exact values.
TIMINGS = {
    "iga": "7.37e-07", "igm": "1.6e-06", "dga": "1.2e-06", "dgm": "1.5e-06",
    "dgd": "2e-06", "dgx": "7e-05", "sind": "3e-05",
}  # fmt: skip


def torus_text(side: int = 32) -> str:
    """A ``side`` x ``side`` x ``side`` 3D torus: processors numbered
    p = 1 + x + side*y + side*side*z, a link from every processor to its +x, +y and +z
    neighbour with wrap-around (X links first, then Y, then Z), one processor type."""
    n = side**3
    out = [
        f"# A generated {side} x {side} x {side} 3D torus of T805 transputers.",
        "begin machine",
        "    id = 1",
        f'    name = "{side} x {side} x {side} 3D torus"',
        "    processors = 1",
        "    topologies = 1",
        "",
        "    begin processor",
        "        id = 1",
        '        name = "T805 Transputer"',
        "        begin timings",
        *(f"            {name} = {value}" for name, value in TIMINGS.items()),
        "        end timings",
        "        begin cache",
        "            size = 1",
        "            speed = 5e-08",
        "            smallloopspeedup = 1.0",
        "        end cache",
        "        begin combinations",
        "            ia_spd = pt(1).iga / tl(1)(1).speed",
        "            dd_spd = pt(1).dgd / tl(1)(1).speed",
        "        end combinations",
        "    end processor",
        "",
        "    begin machinecombinations",
        "        maxtotalspd = (tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed",
        "    end machinecombinations",
        "",
        "    begin topology",
        f"        # piui: shape = {side} {side} {side}",
        "        id = 1",
        f'        name = "{side} x {side} x {side} torus"',
        "        setup = 0.0",
        '        routing = "3Dtorus"',
        f"        processors = {n}",
        f"        links = {3 * n}",
        "        begin procid",
        *(f"            p[{p}] = 1" for p in range(1, n + 1)),
        "        end procid",
        "        begin linklist",
    ]
    link_id = 0
    for axis in range(3):
        step = side**axis
        for p in range(n):
            coordinate = (p // step) % side
            neighbour = p + step if coordinate < side - 1 else p - (side - 1) * step
            link_id += 1
            out += [
                "            begin link",
                f"                id = {link_id}",
                "                latency = 2.85e-05",
                "                speed = 9.1e-07",
                f"                connect = 2 {p + 1} {neighbour + 1}",
                "            end link",
            ]
    out += ["        end linklist", "    end topology", "end machine", ""]
    return "\n".join(out)


def _timed(fn: Callable[..., object], *args: object) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def measure(text: str, repeat: int) -> tuple[dict[str, float], dict[str, int]]:
    """Median seconds of each operation over ``repeat`` rounds, and facts about the model."""
    machine = loads(text)
    problems = [d for d in validate(machine) if d.is_error]
    if problems:
        raise SystemExit(f"the benchmark model has errors: {problems[:3]}")
    json_text = json.dumps(to_data(machine))
    times: dict[str, list[float]] = {}

    def record(name: str, seconds: float) -> None:
        times.setdefault(name, []).append(seconds)

    for _ in range(repeat):
        t_load, machine = _timed(loads, text)
        t_validate, _ = _timed(validate, machine)
        record("load", t_load)
        record("validate", t_validate)
        record("load + validate", t_load + t_validate)
        t_dumps, written = _timed(dumps, machine)
        if written != text:
            raise SystemExit("dumps of the unedited model is not the loaded text")
        record("dumps (lossless)", t_dumps)
        record("json.loads", _timed(json.loads, json_text)[0])
        record("json.dumps", _timed(_to_json, machine)[0])
    facts = {
        "bytes": len(text.encode("utf-8")),
        "json bytes": len(json_text),
        "processors": sum(t.processor_count or 0 for t in machine.topologies),
        "links": sum(len(t.links) for t in machine.topologies),
    }
    return {name: statistics.median(values) for name, values in times.items()}, facts


def _to_json(machine: Machine) -> str:
    return json.dumps(to_data(machine))


def report(label: str, medians: dict[str, float], facts: dict[str, int], repeat: int) -> None:
    base = medians["json.loads"]
    print(
        f"\n{label}: {facts['bytes']:,} bytes ({facts['json bytes']:,} as JSON), "
        f"{facts['processors']:,} processors, {facts['links']:,} links; "
        f"median of {repeat}"
    )
    print(f"  {'operation':<18} {'time':>10}  {'x json.loads':>12}")
    for name, seconds in medians.items():
        print(f"  {name:<18} {_format(seconds):>10}  {seconds / base:>12.1f}")


def _format(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def edit_and_save(text: str, repeat: int) -> dict[str, float]:
    """Median seconds of an unedited save and of one timing edit plus a save."""
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.machine"
        for _ in range(repeat):
            machine = loads(text)
            t, _ = _timed(save, machine, path)
            if path.read_text(encoding="utf-8") != text:
                raise SystemExit("an unedited save changed the file")
            times.setdefault("save (unedited)", []).append(t)
            link = machine.topologies[0].links[len(machine.topologies[0].links) // 2]
            gc.collect()
            start = time.perf_counter()
            link.latency = Timing(3.25e-05)
            save(machine, path)
            times.setdefault("edit + save", []).append(time.perf_counter() - start)
            saved = path.read_text(encoding="utf-8")
            if len(saved) != len(text) or sum(a != b for a, b in zip(saved, text)) > 8:
                raise SystemExit("the edit changed more than its value's characters")
    return {name: statistics.median(values) for name, values in times.items()}


def memory(text: str) -> tuple[float, float]:
    """(peak MB while loading, MB the loaded model holds), by tracemalloc; the text is
    counted in the model (its records refer to it)."""
    gc.collect()
    tracemalloc.start()
    machine = loads(text)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del machine
    size = len(text)  # one byte a character (ASCII)
    return (peak + size) / 1e6, (current + size) / 1e6


def per_link(text: str, repeat: int) -> float:
    """Median seconds of load + validate per link."""
    seconds = []
    for _ in range(repeat):
        t_load, machine = _timed(loads, text)
        t_validate, _ = _timed(validate, machine)
        seconds.append(t_load + t_validate)
    links = sum(len(t.links) for t in machine.topologies)
    return statistics.median(seconds) / links


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21, help="rounds for the GCel sample")
    parser.add_argument("--torus-repeat", type=int, default=3, help="rounds for the torus")
    parser.add_argument("--side", type=int, default=32, help="torus side (default 32)")
    parser.add_argument("--small-side", type=int, default=15, help="torus for the growth")
    parser.add_argument("--no-bulk", action="store_true",
                        help="also time GCel without the bulk scanners (the reader alone)")  # fmt: skip
    args = parser.parse_args()

    targets: list[tuple[str, str, bool]] = []
    if GCEL.exists():
        medians, facts = measure(GCEL.read_text(encoding="utf-8"), args.repeat)
        report(GCEL.name, medians, facts, args.repeat)
        ratio = medians["load + validate"] / medians["json.loads"]
        targets.append(("GCel load + validate <= 3x json.loads", f"{ratio:.1f}x", ratio <= 3))
        if args.no_bulk:
            parser_module._bulk = False
            medians, facts = measure(GCEL.read_text(encoding="utf-8"), args.repeat)
            parser_module._bulk = True
            report(GCEL.name + " read by the reader alone (no bulk scanners)", medians, facts,
                   args.repeat)  # fmt: skip
    else:
        print(f"({GCEL} is missing: only the torus is measured)")
    start = time.perf_counter()
    text = torus_text(args.side)
    generated = time.perf_counter() - start
    side = args.side
    medians, facts = measure(text, args.torus_repeat)
    report(f"{side} x {side} x {side} 3D torus (text generated in {generated:.2f} s)",
           medians, facts, args.torus_repeat)  # fmt: skip
    base = medians["json.loads"]
    ratio = medians["load + validate"] / base
    targets.append(("torus load + validate <= 2x json.loads", f"{ratio:.1f}x", ratio <= 2))
    saves = edit_and_save(text, args.torus_repeat)
    for name, seconds in saves.items():
        print(f"  {name:<18} {_format(seconds):>10}  {seconds / base:>12.1f}")
    edit = saves["edit + save"]
    targets.append(("torus timing edit + save < 0.5 s", _format(edit), edit < 0.5))
    targets.append(("torus unedited save gives the same bytes", "checked", True))
    small = torus_text(args.small_side)
    large_per_link = per_link(text, args.torus_repeat)
    small_per_link = per_link(small, args.torus_repeat)
    small_links = 3 * args.small_side**3
    print(f"\n  load + validate per link: {large_per_link * 1e6:.2f} us at {facts['links']:,} "
          f"links, {small_per_link * 1e6:.2f} us at {small_links:,} links: "
          f"{large_per_link / small_per_link:.2f}x")  # fmt: skip
    growth = large_per_link / small_per_link
    targets.append(("time per link, large / small torus <= 1.3", f"{growth:.2f}x", growth <= 1.3))
    peak, held = memory(text)
    print(f"  memory: {peak:.0f} MB at the peak of loading, {held:.0f} MB held by the "
          f"loaded model (text included; tracemalloc)")  # fmt: skip
    targets.append(("torus peak memory while loading < 300 MB", f"{peak:.0f} MB", peak < 300))
    targets.append(("torus loaded model < 150 MB", f"{held:.0f} MB", held < 150))
    print("\ntargets (issue 14):")
    for what, figure, met in targets:
        print(f"  {what:<46} {figure:>9}  {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
