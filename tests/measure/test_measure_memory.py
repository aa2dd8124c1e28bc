"""Memory levels (the growing-array curve, the levels from the OS or the curve), `block
--working-set` choosing a level, and `block`'s interval from the measured deviations
and the validation (issue 34)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from parasol_core.analysis.block_time import (
    BlockEstimate,
    MemoryLevel,
    estimate_block,
    interval,
    level_for,
    read_memory_levels,
    read_validation_ratios,
)
from parasol_core.cli import main
from parasol_core.measure import memory, suite, toolchain, validation
from parasol_core.measure.validation import ValidationRow
from parasol_core.syntax.loader import loads

HAVE_CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")
ROOT = Path(__file__).resolve().parents[2]

# A curve with three plateaus: 1 ns up to 32 KiB, 5 ns up to 1 MiB, 80 ns beyond.
CURVE = [(1 << k, 1e-9 if k <= 15 else 5e-9 if k <= 20 else 80e-9) for k in range(12, 27)]
OS_CACHES = [("L1", 48 << 10), ("L2", 2 << 20), ("L3", 8 << 20)]


def _fake_sys(root: Path, caches: list[tuple[int, str, str]]) -> Path:
    for i, (level, kind, size) in enumerate(caches):
        d = root / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    return root


def test_cache_sizes_come_from_the_os_data_and_unified_caches(tmp_path):
    root = _fake_sys(tmp_path / "cache", [(1, "Data", "48K"), (1, "Instruction", "32K"),
                                          (2, "Unified", "2048K"), (3, "Unified", "32M")])  # fmt: skip
    assert memory.cache_levels(root) == [("L1", 48 << 10), ("L2", 2 << 20), ("L3", 32 << 20)]
    assert memory.cache_levels(tmp_path / "absent") == []


def test_each_level_takes_the_curve_where_the_data_fits_it():
    levels, source = memory.levels_from_curve(CURVE, OS_CACHES)
    assert [lv.name for lv in levels] == ["L1", "L2", "L3", "memory"]
    l1, l2, l3, mem = levels
    assert (l1.seconds, l1.curve_bytes) == (1e-9, 16 << 10)  # at most half of 48 KiB
    assert (l2.seconds, l2.curve_bytes) == (5e-9, 1 << 20)
    assert l3.curve_bytes == 4 << 20 and l3.seconds == 80e-9
    assert mem.size is None and mem.curve_bytes == 64 << 20  # past 4 x the last level
    assert "from /sys" in source


def test_without_the_os_the_levels_are_read_from_the_curve():
    levels, source = memory.levels_from_curve(CURVE, [])
    assert [(lv.name, lv.size, lv.seconds) for lv in levels] == [
        ("L1", 64 << 10, 1e-9), ("L2", 2 << 20, 5e-9), ("memory", None, 80e-9)]  # fmt: skip
    assert "read from the curve" in source
    with pytest.raises(ValueError):
        memory.levels_from_curve([], OS_CACHES)


def test_the_annotation_reads_back_as_the_levels_written():
    levels, source = memory.levels_from_curve(CURVE[:10], OS_CACHES)  # memory not reached
    text = "".join(f"# {memory.annotation(lv, source)}\n" for lv in levels)
    back = read_memory_levels(text)
    assert back == [MemoryLevel(lv.name, lv.size, lv.seconds) for lv in levels]
    assert back[-1] == MemoryLevel("memory", None, None)


def test_level_for_picks_the_first_level_the_working_set_fits():
    levels = [MemoryLevel("L1", 1000, 1e-9), MemoryLevel("L2", 10000, 4e-9),
              MemoryLevel("memory", None, 9e-8)]  # fmt: skip
    assert level_for(levels, 0).name == "L1"
    assert level_for(levels, 1000).name == "L1"
    assert level_for(levels, 1001).name == "L2"
    assert level_for(levels, 10**9).name == "memory"
    unmeasured = [*levels[:2], MemoryLevel("memory", None, None)]
    assert level_for(unmeasured, 10**9).name == "L2"  # the last measured one
    with pytest.raises(ValueError, match="no measured memory level"):
        level_for([], 10)
    with pytest.raises(ValueError, match="finite"):
        level_for(levels, -1)


def _model_with_levels(validated: bool = False) -> str:
    text = (ROOT / "sample_models" / "amd-epyc-host.machine").read_text()
    text = (
        "\n".join(
            ln
            for ln in text.splitlines()  # its own annotations, if any, go
            if not ln.startswith(("# memory level", "# validation:"))
        )
        + "\n"
    )
    levels = [MemoryLevel("L1", 1000, 1e-9), MemoryLevel("L2", 10000, 4e-9),
              MemoryLevel("memory", None, 9e-8)]  # fmt: skip
    head = "".join(
        f"# {memory.annotation(memory.Level(lv.name, lv.size, lv.seconds), 'test')}\n"
        for lv in levels
    )
    text = head + text
    if validated:
        rows = [ValidationRow(n, s, r * 1e-3, 1e-3, r)
                for n, r in (("matmul", 0.8), ("poly", 1.25))
                for s in suite.PROGRAMS[n].sizes]  # fmt: skip
        text = validation.annotate(text, rows, date="2026-11-28")
    return text


def test_a_working_set_charges_array_references_at_its_level():
    text = _model_with_levels()
    machine = loads(text)
    pid = machine.processors[0].id
    levels = read_memory_levels(text)
    counts = {"arr1": 100, "ila": 10}
    base = estimate_block(machine, pid, counts)
    in_l1 = estimate_block(machine, pid, counts, levels=levels, working_set=500)
    in_l2 = estimate_block(machine, pid, counts, levels=levels, working_set=5000)
    beyond = estimate_block(machine, pid, counts, levels=levels, working_set=10**8)
    assert in_l1.mean == pytest.approx(base.mean) and in_l1.level == "L1"
    assert in_l2.mean == pytest.approx(base.mean + 100 * 3e-9) and in_l2.level == "L2"
    assert beyond.mean == pytest.approx(base.mean + 100 * 89e-9) and beyond.level == "memory"
    no_arrays = estimate_block(machine, pid, {"ila": 10}, levels=levels, working_set=10**8)
    assert no_arrays.mean == pytest.approx(estimate_block(machine, pid, {"ila": 10}).mean)


def test_the_interval_takes_the_deviations_and_the_validation_ratios():
    e = BlockEstimate(1.0, 0.1)
    assert interval(e, None) == pytest.approx((0.8, 1.2))
    # predictions were 0.8 .. 1.25 times the measured time: the time is mean / 1.25 ..
    assert interval(e, (0.8, 1.25)) == pytest.approx((0.8 / 1.25, 1.2 / 0.8))
    assert interval(BlockEstimate(1.0, 1.0), None)[0] == 0.0  # never below 0
    text = _model_with_levels(validated=True)
    assert read_validation_ratios(text) == (0.8, 1.25)
    assert read_validation_ratios(_model_with_levels()) is None
    assert text.index("# validation:") < text.index("begin machine")


def test_block_prints_the_level_and_the_interval(tmp_path, capsys):
    path = tmp_path / "host.machine"
    path.write_text(_model_with_levels(validated=True))
    counts = json.dumps({"arr1": 100, "ila": 10})
    assert main(["block", str(path), "--processor", "1", counts, "--working-set", "5000"]) == 0
    out = capsys.readouterr().out
    assert "memory level: L2 (the working set of 5000 bytes fits 10000 bytes" in out
    assert "interval: " in out and "ratios predicted / measured 0.8 .. 1.25" in out
    mean = float(out.split("mean: ")[1].split()[0])
    lo, hi = (float(x) for x in out.split("interval: ")[1].split(" (")[0].split(" .. "))
    assert lo < mean / 1.25 * 1.0001 and hi > mean / 0.8 * 0.9999
    # a model without memory levels: the working set cannot be placed
    plain, ila = str(ROOT / "sample_models" / "vax-11-785.machine"), '{"ila": 10}'
    assert main(["block", plain, "--processor", "1", ila, "--working-set", "5"]) == 1
    assert "no measured memory level" in capsys.readouterr().err
    assert main(["block", plain, "--processor", "1", ila]) == 0
    assert "records no validation" in capsys.readouterr().out


@needs_cc
def test_the_growing_array_is_slower_past_the_first_level(tmp_path):
    src = tmp_path / "memory.c"
    src.write_text(memory.program())
    toolchain.compile_c(toolchain.find_compiler(), src, tmp_path / "memory", ["-O2"])
    small, big = 4 << 10, 32 << 20
    lines = list(toolchain.run_lines([str(tmp_path / "memory"), "0.002", "3", str(small),
                                      str(big)]))  # fmt: skip
    points = [json.loads(ln) for ln in lines]
    assert [p["bytes"] for p in points] == [small, big]
    t_small, t_big = (min(p["per_ref"]) for p in points)
    assert t_big > 3 * t_small  # memory against the first-level cache
