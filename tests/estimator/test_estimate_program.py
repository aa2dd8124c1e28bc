"""estimate.program through a real estimator: a trace pushed once (content-addressed:
the same files, the same id), predicted on a pushed model as the core predicts it here;
a bad trace refused with its file and line and nothing stored; a batch of replays past
the batch budget refused naming both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from estimator_support import SAMPLES, Estimator, estimator, post_raw  # noqa: F401
from program_traces import stencil_text

from parasol_core.estimator import RemoteError
from parasol_core.frontend import program as core
from parasol_core.replay import replay
from parasol_core.syntax.loader import loads


def _index_trace(folder, ranks: int = 8, iterations: int = 4):
    """The trace as smpirun -trace-ti writes it: an index naming one file per rank."""
    text = stencil_text(ranks=ranks, iterations=iterations)
    (folder / "ranks").mkdir()
    names = []
    for r in range(ranks):
        name = f"ranks/rank{r}.txt"
        mine = [line for line in text.splitlines() if line.split()[0] == str(r)]
        (folder / name).write_text("\n".join(mine) + "\n")
        names.append(name)
    index = folder / "stencil.txt"
    index.write_text("\n".join(names) + "\n")
    return index


def test_a_trace_pushed_once_is_predicted_as_the_core_predicts_it(estimator, tmp_path):  # noqa: F811
    index = _index_trace(tmp_path)
    text = (SAMPLES / "parsytec-gcel.machine").read_text()
    with estimator.client() as c:
        model = c.push(text)["model"]
        pushed = c.push_trace(index)
        assert pushed["ranks"] == 8 and pushed["actions"] > 8 * 4 * 4
        again = c.push_trace(index)
        assert again["trace"] == pushed["trace"]  # the same files: the same trace
        # no flop given: the model's, as everywhere (the GCel times only global variables)
        answer = c.program(model, pushed["trace"])
        assert c.program(model, pushed["trace"], flop=core.GLOBAL_FLOP) == answer
        with_ops = c.program(model, pushed["trace"], operations=True)
    program = core.read_program(index)
    machine = loads(text)
    here = replay(machine, program.trace, program.options_for(machine))
    assert answer["makespan"] == pytest.approx(here.makespan, rel=1e-12)
    assert [r["finish"] for r in answer["ranks"]] == pytest.approx(here.finish.tolist(), rel=1e-12)
    assert [r["waiting"] for r in answer["ranks"]] == pytest.approx(here.waiting.tolist(),
                                                                    rel=1e-12, abs=1e-15)  # fmt: skip
    assert "operations" not in answer
    ops = with_ops["operations"]
    assert len(ops) == len(program.trace)
    # an operation names its file as pushed, relative to the trace
    assert ops[0]["file"] == "ranks/rank0.txt" and ops[0]["line"] == 1


def test_a_trace_that_replays_here_is_pushed_whatever_its_index_names(estimator, tmp_path):  # noqa: F811
    """An index naming its files by absolute paths (as smpirun writes them for a trace
    given so), files outside its folder, names with spaces, a comment: the replay here
    reads it, and the push sent those names, which the estimator refuses to store."""
    (tmp_path / "made").mkdir()
    made = _index_trace(tmp_path / "made")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "my trace"
    folder.mkdir()
    lines = ["# the ranks of the stencil"]
    for r, name in enumerate(made.read_text().split()):
        if r % 3 == 0:  # an absolute path out of the folder
            target = elsewhere / f"rank {r}.txt"
            lines.append(str(target))
        elif r % 3 == 1:  # a relative path up and out
            target = elsewhere / f"r{r}.txt"
            lines.append(f"../elsewhere/r{r}.txt")
        else:  # beside the index, a space in its name
            target = folder / f"rank {r}.txt"
            lines.append(target.name)
        target.write_bytes((made.parent / name).read_bytes())
    index = folder / "the index.txt"
    index.write_text("\n".join(lines) + "\n")
    text = (SAMPLES / "parsytec-gcel.machine").read_text()
    with estimator.client() as c:
        model = c.push(text)["model"]
        pushed = c.push_trace(index)
        assert pushed["ranks"] == 8
        assert c.push_trace(index)["trace"] == pushed["trace"]  # named alike each time
        answer = c.program(model, pushed["trace"])
    program = core.read_program(index)
    here = replay(loads(text), program.trace, program.options_for(loads(text)))
    assert answer["makespan"] == pytest.approx(here.makespan, rel=1e-12)
    assert [r["finish"] for r in answer["ranks"]] == pytest.approx(here.finish.tolist(), rel=1e-12)


def test_a_bad_trace_is_refused_with_its_line_and_nothing_is_stored(estimator, tmp_path):  # noqa: F811
    bad = tmp_path / "bad.txt"
    bad.write_text("0 init\n0 compute 100\n0 send 1 0 notanumber\n0 finalize\n")
    with estimator.client() as c:
        with pytest.raises(RemoteError) as refused:
            c.push_trace(bad)
        assert refused.value.code == -32602
        assert "bad.txt:3" in str(refused.value)
        model = c.push((SAMPLES / "grid4x4.machine").read_text())["model"]
        with pytest.raises(RemoteError, match="no trace"):
            c.program(model, "0" * 32)
        # a name that would write outside the trace's folder
        with pytest.raises(RemoteError, match="not a trace file name"):
            c.call("trace.push", files={"../evil.txt": "0 init\n"}, index="../evil.txt")
    assert not list((estimator.store / "traces").glob("*/bad.txt"))


def test_a_batch_of_replays_past_the_batch_budget_is_refused(tmp_path):
    index = _index_trace(tmp_path, ranks=4, iterations=2)
    lines = sum(len(p.read_text().splitlines()) + 1 for p in (tmp_path / "ranks").iterdir())
    lines += len(index.read_text().splitlines()) + 1
    est = Estimator(tmp_path / "store", "--batch-work", str(lines + lines // 2)).start()
    try:
        with est.client() as c:
            model = c.push((SAMPLES / "parsytec-gcel.machine").read_text())["model"]
            trace = c.push_trace(index)["trace"]
            one = c.program(model, trace, flop=core.GLOBAL_FLOP)  # within the budget
            assert one["makespan"] > 0
            batch = [{"jsonrpc": "2.0", "id": i, "method": "estimate.program",
                      "params": {"model": model, "trace": trace, "flop": core.GLOBAL_FLOP}}
                     for i in range(2)]  # fmt: skip
        status, body = post_raw(est, json.dumps(batch).encode())
    finally:
        est.stop()
    assert status == 200
    answers = json.loads(body)
    assert [a["error"]["code"] for a in answers] == [-32602, -32602]
    for a in answers:  # naming the work and the budget
        assert f"{2 * lines:,}" in a["error"]["message"]
        assert f"{lines + lines // 2:,}" in a["error"]["message"]


def test_an_otf2_archive_is_pushed_as_its_files_and_predicted(estimator, tmp_path, monkeypatch):  # noqa: F811
    pytest.importorskip("otf2", reason="the otf2 package is not installed (pip install otf2)")
    monkeypatch.syspath_prepend(str(Path(__file__).parents[1] / "replay"))
    from test_replay_otf2 import PROGRAM, write_archive  # the replay tests' archive writer

    anchor = write_archive(tmp_path / "run", PROGRAM)
    text = (SAMPLES / "parsytec-gcel.machine").read_text()
    with estimator.client() as c:
        model = c.push(text)["model"]
        pushed = c.push_trace(anchor)
        assert pushed["ranks"] == 2
        assert c.push_trace(anchor)["trace"] == pushed["trace"]
        answer = c.program(model, pushed["trace"], flop=core.GLOBAL_FLOP)
    program = core.read_program(anchor)
    machine = loads(text)
    here = replay(machine, program.trace, program.options_for(machine))
    assert answer["makespan"] == pytest.approx(here.makespan, rel=1e-12)
