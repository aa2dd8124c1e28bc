"""`parasol-model replay MODEL TRACE` (issue 31): the summary, --json, --timeline,
--hostfile, --virtual, --flop, --collectives model, --algorithm, --max-memory, and bad
input with its line (exit 1) or a bad option (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_platforms import flat_cluster

from parasol_core.cli import main
from parasol_core.syntax.writer import dumps

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
STENCIL = SAMPLES / "traces" / "stencil.txt"
PIPELINE = SAMPLES / "traces" / "pipeline.txt"


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "cluster.machine"
    path.write_text(dumps(flat_cluster(16)))
    return str(path)


def run(capsys, *argv):
    status = main(["replay", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_summary_names_the_makespan_and_the_last_ranks(cluster, capsys):
    status, out, err = run(capsys, cluster, STENCIL, "--sharing", "cm02")
    assert status == 0, err
    assert "ranks: 16" in out and "actions: 1,232" in out
    makespan = float(out.split("makespan: ")[1].split()[0])
    status, out2, _ = run(capsys, cluster, STENCIL, "--sharing", "cm02", "--json")
    data = json.loads(out2)
    assert data["makespan"] == pytest.approx(makespan, rel=1e-5)
    assert max(r["finish"] for r in data["ranks"]) == data["makespan"]
    ops = data["operations"]
    assert len(ops) == 1232 and {"start", "end", "file", "line"} <= set(ops[0])
    assert all(o["start"] <= o["end"] for o in ops)


def test_a_timeline_file_chrome_opens(cluster, capsys, tmp_path):
    timeline = tmp_path / "run.json"
    status, _, err = run(capsys, cluster, PIPELINE, "--timeline", timeline)
    assert status == 0, err
    events = json.loads(timeline.read_text())["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X"}
    assert {e["tid"] for e in events if e["ph"] == "X"} == set(range(16))


def test_faster_flops_and_another_placement_change_the_prediction(cluster, capsys, tmp_path):
    def makespan(*extra):
        status, out, err = run(capsys, cluster, PIPELINE, "--json", *extra)
        assert status == 0, err
        return json.loads(out)["makespan"]

    base = makespan()
    assert makespan("--flop", "pt(T).dla / 2") < base
    # every rank on processor 1: messages to itself take no time
    hosts = tmp_path / "hosts"
    hosts.write_text("p1:16\n")
    assert makespan("--hostfile", hosts) < base
    assert makespan("--eager", "1e9") < base  # no rendezvous: a send never waits


def test_collectives_by_the_model_need_its_mpi_section(cluster, capsys):
    status, _, err = run(capsys, cluster, STENCIL, "--collectives", "model")
    assert status == 1
    assert "mpi section" in err


def test_bad_input_names_its_line_and_bad_options_exit_2(cluster, capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 send 1 0 10\n0 dance\n")
    status, _, err = run(capsys, cluster, bad)
    assert status == 1 and f"{bad}:3: unknown action 'dance'" in err
    status, _, err = run(capsys, cluster, STENCIL, "--algorithm", "bcast=fast")
    assert status == 2 and "bcast has no algorithm 'fast'" in err
    status, _, err = run(capsys, cluster, STENCIL, "--algorithm", "bcast")
    assert status == 2
    status, _, err = run(capsys, cluster, STENCIL, "--max-memory", "1K")
    assert status == 2 and "over the memory budget" in err
    status, _, err = run(capsys, cluster, tmp_path / "none.txt")
    assert status == 2 and "cannot read" in err  # a file that cannot be read: 2, as for any


def test_a_virtual_topology_s_mapping_places_the_ranks(capsys):
    grid = SAMPLES / "grid4x4.machine"
    common = ("--flop", "pt(T).dga", "--json")
    status, out, err = run(capsys, grid, STENCIL, *common)
    assert status == 0, err
    plain = json.loads(out)
    status, out, err = run(capsys, grid, STENCIL, "--virtual", "2", *common)
    assert status == 0, err
    ring = json.loads(out)
    # the ring's mapping follows a Hamiltonian cycle: each rank's neighbours one hop away
    from parasol_core.syntax.loader import load

    mapping = load(grid).virtual(2).mapping
    assert [r["processor"] for r in ring["ranks"]] == [mapping[v] for v in range(1, 17)]
    assert ring["makespan"] < plain["makespan"]
    status, _, err = run(capsys, grid, STENCIL, "--virtual", "9", *common)
    assert status == 1 and "no virtual topology with id 9" in err


def test_a_trace_past_the_memory_budget_is_refused_naming_both_figures(tmp_path, capsys):
    # the reading is charged by the file's lines, the replay by the actions read: a
    # budget between the two lets the trace be read and refuses its replay, before it
    # compiles, naming its estimate and the budget; one under the reading's charge
    # refuses the reading
    from parasol_core.base.budget import format_size
    from parasol_core.replay.tifile import (
        BYTES_PER_RANK,
        ONCE_BYTES_PER_ACTION,
        READ_BYTES_PER_ACTION,
    )

    path = tmp_path / "cluster.machine"
    path.write_text(dumps(flat_cluster(16)))
    trace = tmp_path / "ring.txt"
    lines = [f"{r} {w}" for r in range(16) for _ in range(200)
             for w in (f"send {(r + 1) % 16} 0 8 6", f"recv {(r - 1) % 16} 0 8 6")]  # fmt: skip
    trace.write_text("\n".join(lines) + "\n")
    read = (len(lines) + 1) * READ_BYTES_PER_ACTION  # (the count after the last newline)
    need = len(lines) * ONCE_BYTES_PER_ACTION + 16 * BYTES_PER_RANK
    limit = (read + need) // 2
    assert read < limit < need
    status, out, err = run(capsys, path, trace, "--max-memory", str(limit))
    assert status == 2 and not out
    assert (f"replaying the trace ({len(lines):,} actions; a one-shot replay, "
            f"{ONCE_BYTES_PER_ACTION} bytes an action and {BYTES_PER_RANK:,} a rank) would "
            "need about ") in err  # fmt: skip
    assert f"over the memory budget of {format_size(limit)} (--max-memory)" in err
    assert run(capsys, path, trace, "--max-memory", str(2 * need))[0] == 0
    status, out, err = run(capsys, path, trace, "--max-memory", str(read - 1))
    assert status == 2 and not out
    assert (f"reading the trace ({len(lines) + 1:,} lines in 1 file, {READ_BYTES_PER_ACTION} "
            "bytes a line) would need about ") in err  # fmt: skip
