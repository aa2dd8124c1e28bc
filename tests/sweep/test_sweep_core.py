"""The sweep core: a sweep file in, rows out (parasol_core/sweep)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parasol_core.expr.engine import Engine
from parasol_core.session import Session
from parasol_core.sweep import SweepError, Worker, loads_spec, run_sweep, variants
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
RATIOS = [f"po(1).{n}" for n in ("ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "ds_spd",
                                  "dp_spd")] + ["mc.maxtotalspd"]  # fmt: skip


def spec_of(body: str, **kw):
    return loads_spec(f'model = "{GCEL}"\n' + textwrap.dedent(body), **kw)


GRID = """
[[axis]]
set = "pt(1).iga"
values = [7e-7, 1.4e-6]

[[axis]]
set = "tl(1)(*).speed"
log = [1e-7, 1e-5, 3]

[[axis]]
scale = "arithmetic"
range = [0.5, 1.5, 0.5]

[[answer]]
eval = ["po(1).ia_spd", "po(1).im_spd", "po(1).da_spd", "po(1).dm_spd", "po(1).dd_spd",
        "po(1).ds_spd", "po(1).dp_spd", "mc.maxtotalspd"]
"""


def fresh_answers(edits) -> list:
    """The ratios of the GCel model after ``edits(session)`` on a session of its own."""
    session = Session(load(str(GCEL)))
    edits(session)
    engine = Engine(session.machine)
    return [engine.evaluate_text(x, runtime=True) for x in RATIOS]


def test_the_grid_is_every_combination_in_order():
    spec = spec_of(GRID)
    assert spec.axes[1].values == (1e-7, 1e-6, 1e-5)
    assert spec.axes[2].values == (0.5, 1.0, 1.5)
    vs = variants(spec)
    assert len(vs) == spec.size == 18
    assert [v.positions for v in vs[:4]] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0)]
    assert spec.columns() == ["index", "pt(1).iga", "tl(1)(*).speed", "scale arithmetic",
                              *RATIOS, "seconds", "error"]  # fmt: skip


def test_each_variant_is_the_model_edited_as_the_command_line_edits_it():
    spec = spec_of(GRID)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert [r.index for r in rows] == list(range(18))
    for row in rows:
        iga, speed, factor = (float(x) for x in row.values)

        def edits(s, iga=iga, speed=speed, factor=factor):
            s.set("pt(1).iga", repr(iga))
            topo = s.machine.topology(1)
            s.set_links(1, [link.id for link in topo.links],
                        speed=type(topo.links[0].speed)(speed, None))  # fmt: skip
            s.scale_group("arithmetic", factor)

        assert list(row.answers) == fresh_answers(edits), row
        assert row.error == ""
    # the variants differ from each other and from nothing else
    assert len({r.answers for r in rows}) == 18


def test_the_base_model_is_unchanged_after_the_variants():
    spec = spec_of(GRID)
    worker = Worker(spec)
    before = worker.session.text()
    values = dict(worker.session.engine.values())
    for v in variants(spec):
        worker.run(v)
    assert worker.session.text() == before
    assert dict(worker.session.engine.values()) == values
    assert not worker.session.is_modified


def test_a_variant_that_fails_is_a_row_with_its_error_and_the_sweep_goes_on():
    spec = spec_of("""
        [[axis]]
        set = "pt(1).iga"
        values = [7e-7, -1, "not a number", 2e-6]

        [[answer]]
        eval = "po(1).ia_spd"

        [[answer]]
        eval = "1 / (pt(1).iga - 2e-6)"
        name = "pole"
    """)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert len(rows) == 4
    assert rows[0].error == "" and rows[0].answers[0] == pytest.approx(7e-7 / 9.1e-7)
    assert "pt(1).iga = not a number" in rows[2].error and rows[2].answers == (None, None)
    # a negative timing is the file's to hold: the session takes it, as `set` does
    assert rows[1].answers[0] == pytest.approx(-1 / 9.1e-7)
    assert rows[3].answers[0] is not None and rows[3].answers[1] is None
    assert rows[3].error.startswith("pole: ") and "zero" in rows[3].error


def test_generated_topologies_and_a_variant_past_its_budget():
    spec = spec_of("""
        [[axis]]
        generate = 1
        values = ["torus 4 4 4", "torus 10 10 10 10 10 10", "grid 8 8"]

        [[axis]]
        set = "tl(1)(*).speed"
        values = [1e-6, 2e-6]

        [[answer]]
        eval = "to(1).processors"
        name = "processors"

        [[answer]]
        simulate = {pattern = "alltoall", bytes = 1024}

        [budget]
        memory = "64M"
    """)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    by = {(r.values[0], r.values[1]): r for r in rows}
    assert by[("torus 4 4 4", "1e-06")].answers[0] == 64
    assert by[("grid 8 8", "2e-06")].answers[0] == 64
    refused = by[("torus 10 10 10 10 10 10", "1e-06")]
    assert "7,000,000" in refused.error and "limit" in refused.error
    assert refused.answers == (None, None)
    # the alltoall of 64 processors fits 64M; its time doubles with the links' time a byte
    t1, t2 = by[("torus 4 4 4", "1e-06")].answers[1], by[("torus 4 4 4", "2e-06")].answers[1]
    assert t2 > 1.5 * t1
    # the memory budget refuses a phase too large for it, naming both
    big = spec_of("""
        [[axis]]
        generate = 1
        values = ["torus 8 8 8"]

        [[answer]]
        simulate = {pattern = "alltoall", bytes = 1024}

        [budget]
        memory = "16M"
    """)
    rows = []
    run_sweep(big, rows.append, executor="serial")
    assert "memory budget of 16.0 MiB" in rows[0].error and "[budget] memory" in rows[0].error


def test_block_answers_follow_the_scaled_timings():
    spec = spec_of("""
        [[axis]]
        scale = "arithmetic"
        values = [1, 2]

        [[answer]]
        block = {processor = 1, counts = {iga = 10, dga = 4}}
    """)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert rows[1].answers[0] == pytest.approx(2 * rows[0].answers[0])


def test_samples_are_seeded_and_latin_hypercubes_balance_each_axis():
    body = """
        [[axis]]
        set = "pt(1).iga"
        linear = [1e-7, 1e-6, 10]

        [[axis]]
        scale = "global"
        log = [0.1, 10, 5]

        [[answer]]
        eval = "po(1).ia_spd"

        [sample]
        method = "{method}"
        count = 20
        seed = {seed}
    """
    rand = variants(spec_of(body.format(method="random", seed=1)))
    assert len({v.positions for v in rand}) == 20  # distinct grid points
    assert rand == variants(spec_of(body.format(method="random", seed=1)))
    assert rand != variants(spec_of(body.format(method="random", seed=2)))
    latin = variants(spec_of(body.format(method="latin", seed=3)))
    assert sorted(v.positions[0] for v in latin) == sorted(list(range(10)) * 2)
    assert sorted(v.positions[1] for v in latin) == sorted(list(range(5)) * 4)


@pytest.mark.parametrize(("body", "said"), [
    ("[[axis]]\nset = \"pt(9).iga\"\nvalues = [1]\n[[answer]]\neval = \"1\"",
     "axis 1: 'pt(9).iga': there is no processor with id 9"),
    ("[[axis]]\nscale = \"nothing\"\nvalues = [1]\n[[answer]]\neval = \"1\"",
     "axis 1: scale 'nothing': a group"),
    ("[[axis]]\nset = \"pt(1).iga\"\nrange = [1, 2, -1]\n[[answer]]\neval = \"1\"",
     "axis 1: range: a step of -1 never goes from 1 to 2"),
    ("[[axis]]\nset = \"pt(1).iga\"\nvalues = [1]\n", "no [[answer]]"),
    ("[[answer]]\neval = \"1 +\"", "answer 1: eval '1 +': syntax error"),
    ("[[axis]]\ngenerate = 1\nvalues = [\"donut 3\"]\n[[answer]]\neval = \"1\"",
     "axis 1: 'donut 3': a generator and its sizes"),
    ("[[axis]]\nset = \"pt(1).iga\"\nlinear = [0, 1, 1001]\n[[axis]]\nscale = \"global\"\n"
     "linear = [1, 2, 1000]\n[[answer]]\neval = \"1\"",
     "would run 1,001,000 variants, over the limit of 1,000,000 variants"),
    ("[sample]\nmethod = \"latin\"\n[[answer]]\neval = \"1\"", "needs count = N"),
    ("colour = 1\n[[answer]]\neval = \"1\"", "the file: unknown key 'colour'"),
])  # fmt: skip
def test_bad_sweep_files_say_where_and_why(body, said):
    with pytest.raises(SweepError) as e:
        spec_of(body, source="s.toml")
    assert said in str(e.value)
    assert str(e.value).startswith("s.toml: ")


@pytest.mark.parametrize(("body", "part", "why"), [
    ("[[axis]]\nset = \"pt(1).iga\"\nvalues = [1]\n[[axis]]\nscale = \"nothing\"\n"
     "values = [1]\n[[answer]]\neval = \"1\"", ("axis", 2), "scale 'nothing': a group"),
    ("[[answer]]\neval = \"1\"\n[[answer]]\neval = \"1 +\"", ("answer", 2),
     "eval '1 +': syntax error"),
    ("[[answer]]\neval = \"1\"\n[[answer]]\nreplay = {trace = \"no-such.txt\"}",
     ("answer", 2), "replay: trace 'no-such.txt': no such file"),
    ("[[answer]]\nreplay = {trace = \"TRACE\", flop = \"pt(T).dla\"}", ("answer", 1),
     "replay: a flop's time on processor type 1, 'pt(1).dla'"),
    ("colour = 1\n[[answer]]\neval = \"1\"", None, "unknown key 'colour'"),
    # a key of the answer's own table: still the answer's
    ("[[answer]]\nreplay = {trace = \"TRACE\", colour = 1}", ("answer", 1),
     "replay: unknown key 'colour'"),
])  # fmt: skip
def test_a_sweep_error_names_its_table_apart_from_its_words(body, part, why):
    """A form that numbers no table (the sweep dialog) says the error at its own row from
    ``part`` and ``why``, not by reading the message; they cross a process pool."""
    import pickle

    trace = ROOT / "sample_models" / "traces" / "stencil.txt"
    with pytest.raises(SweepError) as e:
        spec_of(body.replace("TRACE", str(trace)), source="s.toml")
    assert e.value.part == part
    assert e.value.why.startswith(why)
    where = f"{part[0]} {part[1]}: " if part else "the file: "
    assert str(e.value) == f"s.toml: {where}{e.value.why}"
    again = pickle.loads(pickle.dumps(e.value))
    assert (type(again), str(again), again.part, again.why) == (
        type(e.value),
        str(e.value),
        e.value.part,
        e.value.why,
    )


@pytest.mark.parametrize("answer", [
    'block = {processor = 1, counts = "nosuch.json"}',
    'simulate = {messages = "nosuch.json"}',
])  # fmt: skip
def test_a_data_file_that_cannot_be_read_is_said_once_as_unreadable(answer, tmp_path):
    """The reader's own error about a data file was caught as a ValueError by the JSON
    reading around it and said again inside another ('block counts: not JSON: s.toml:
    answer 1: ...'), a file that cannot be read then a file found wrong (exit 1, not 2)."""
    from parasol_core.sweep.spec import SweepUnreadable

    with pytest.raises(SweepUnreadable) as e:
        spec_of(f"[[answer]]\n{answer}", source="s.toml", base=tmp_path)
    assert str(e.value) == ("s.toml: answer 1: 'nosuch.json': cannot read: No such file or "
                            "directory")  # fmt: skip
    assert e.value.part == ("answer", 1)


def test_the_estimator_form_names_no_files():
    with pytest.raises(SweepError, match="names a file"):
        loads_spec('model = "x.machine"\n[[answer]]\neval = "1"', files=False)
    spec = loads_spec('[[answer]]\neval = "po(1).ia_spd"', model_text=GCEL.read_text(),
                      files=False)  # fmt: skip
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert rows[0].answers[0] == pytest.approx(7.37e-07 / 9.1e-07)


def test_a_process_pool_makes_the_same_rows():
    spec = spec_of(GRID)
    serial, pooled = [], []
    run_sweep(spec, serial.append, executor="serial")
    run_sweep(spec, pooled.append, executor="local", workers=2)
    key = lambda r: (r.index, r.values, r.answers, r.error)  # noqa: E731
    assert sorted(map(key, pooled)) == sorted(map(key, serial))


def test_a_pools_workers_keep_their_freed_heap(tmp_path, monkeypatch):
    # each variant makes and drops the same arrays: a worker keeps their pages rather
    # than fault them in again for every variant (parasol_core/base/memory.py)
    import os

    from parasol_core.sweep import runner

    said = tmp_path / "kept"

    def keep() -> bool:
        with open(said, "a") as f:
            f.write(f"{os.getpid()}\n")
        return True

    monkeypatch.setattr(runner, "keep_freed_heap", keep)  # the forked workers have it
    rows: list = []
    run_sweep(spec_of(GRID), rows.append, executor="local", workers=2, start="fork")
    workers = set(said.read_text().split())
    assert len(workers) == 2 and str(os.getpid()) not in workers
    assert len(rows) == spec_of(GRID).size


def test_batches_hold_as_many_variants_as_take_their_target_seconds():
    from parasol_core.sweep.runner import BATCH_SECONDS, batch_cap, batch_size

    assert batch_size(0, 0.0, 8) == 1  # nothing back yet: one at a time
    assert batch_size(3, 3 * BATCH_SECONDS * 2, 8) == 1  # slower than a batch's target
    assert batch_size(100, 100 * BATCH_SECONDS / 4, 8) == 4
    assert batch_size(100, 100 * BATCH_SECONDS / 1000, 8) == 8  # fast: up to the cap
    assert batch_cap(1000, 2) == 32 and batch_cap(40, 2) == 3 and batch_cap(40, 2, 2) == 2


@pytest.mark.parametrize("target, sent_as", [(1e-12, [1] * 64), (1e3, [1] * 4 + [4] * 15)])
def test_a_pools_batches_follow_the_variants_seconds(monkeypatch, target, sent_as):
    """Variants slower than a batch's target go to the pool one at a time (each row back
    as soon as it is made); faster ones in batches up to the cap; the rows the same."""
    from parasol_core.sweep import runner

    sent: list[int] = []
    made = runner._pool

    def pool(*args):
        p = made(*args)
        submit = p.submit

        def counted(fn, batch):
            sent.append(len(batch))
            return submit(fn, batch)

        p.submit = counted
        return p

    monkeypatch.setattr(runner, "_pool", pool)
    monkeypatch.setattr(runner, "BATCH_SECONDS", target)
    spec = spec_of("""
        [[axis]]
        set = "tl(1)(*).speed"
        log = [1e-7, 1e-5, 64]

        [[answer]]
        eval = ["po(1).ia_spd", "mc.maxtotalspd"]
        """)  # 64 variants on 2 workers: at most 64 / (2 x 8) = 4 a batch
    pooled, serial = [], []
    run_sweep(spec, pooled.append, executor="local", workers=2)
    run_sweep(spec, serial.append, executor="serial")
    # two a worker in flight, one variant each before any row is back; then the target's
    assert sent == sent_as
    key = lambda r: (r.index, r.values, r.answers, r.error)  # noqa: E731
    assert sorted(map(key, pooled)) == sorted(map(key, serial))


@pytest.mark.parametrize("environment, given", [(None, {"backoff": 0.003}),
                                                 ("0.0005", {})])  # fmt: skip
def test_an_mpi_pool_polls_at_its_backoff_unless_the_user_sets_one(monkeypatch, environment,
                                                                   given):  # fmt: skip
    """An MPI pool's ranks sleep up to MPI_BACKOFF between polls (mpi4py's 1 ms took a
    core from the busy ranks: docs/speed.md); the user's MPI4PY_FUTURES_BACKOFF, read by
    mpi4py itself, wins. (mpi4py.futures stands in: importing it starts MPI.)"""
    import sys
    import types

    from parasol_core.sweep import runner

    pytest.importorskip("mpi4py")
    made: list[dict] = []
    fake = types.ModuleType("mpi4py.futures")
    fake.MPIPoolExecutor = lambda **options: made.append(options)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mpi4py.futures", fake)
    if environment is None:
        monkeypatch.delenv("MPI4PY_FUTURES_BACKOFF", raising=False)
    else:
        monkeypatch.setenv("MPI4PY_FUTURES_BACKOFF", environment)
    spec = spec_of(GRID)
    runner._pool("mpi", spec, None, None)
    assert made == [{"initializer": runner._start, "initargs": (spec,), **given}]


def test_what_dominates_and_the_table_of_two_axes():
    from parasol_core.sweep.analysis import effects, table

    spec = spec_of(GRID)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    # ia_spd = scaled iga / speed: the link speed (100x) dominates iga (2x) and the
    # scaler (3x); mc.maxtotalspd reads only the links
    order = [name for name, _ in effects(spec, rows, 0)]
    assert order == ["tl(1)(*).speed", "scale arithmetic", "pt(1).iga"]
    last = dict(effects(spec, rows, 7))
    assert last["pt(1).iga"] == 0 and last["scale arithmetic"] == 0
    assert last["tl(1)(*).speed"] > 0
    grid = table(spec, rows, 0, 0, 1)  # ia_spd over iga (x) and speed (y)
    assert grid.shape == (3, 2)
    assert grid[0, 1] == pytest.approx(2 * grid[0, 0])  # twice the iga, twice the ratio
    assert grid[0, 0] == pytest.approx(100 * grid[2, 0])  # 100x the time a byte


def test_a_variant_opens_as_model_text_and_a_sweep_is_written_back():
    from parasol_core.sweep.analysis import sweep_text
    from parasol_core.syntax.loader import loads

    spec = spec_of(GRID)
    worker = Worker(spec)
    before = worker.session.text()
    v = variants(spec)[17]
    machine = loads(worker.variant_text(v))
    assert machine.processor(1).timings["iga"].mean == pytest.approx(1.4e-6 * 1.5)
    assert worker.session.text() == before
    text = sweep_text([{"set": "pt(1).iga", "values": [7e-7, 1.4e-6]},
                       {"set": "tl(1)(*).speed", "log": [1e-7, 1e-5, 3]},
                       {"scale": "arithmetic", "range": [0.5, 1.5, 0.5]}],
                      [{"eval": RATIOS}], model=str(GCEL))  # fmt: skip
    again = loads_spec(text)
    assert again.axes == spec.axes and again.columns() == spec.columns()


def test_a_sweep_smaller_than_a_pools_start_up_is_small():
    from parasol_core.sweep.cost import SMALL_WORK, small

    machine = load(str(GCEL))
    axis = '[[axis]]\nset = "pt(1).iga"\nlinear = [1e-7, 1e-6, {n}]\n'
    evals = '[[answer]]\neval = ["po(1).ia_spd", "mc.maxtotalspd"]\n'
    assert small(spec_of(axis.format(n=10) + evals), machine)  # 20 evaluations
    n = SMALL_WORK // 2 + 1  # one evaluation past the limit
    assert not small(spec_of(axis.format(n=n) + evals), machine)
    phase = '[[answer]]\nsimulate = {pattern = "broadcast", bytes = 64}\n'
    assert not small(spec_of(axis.format(n=10) + phase), machine)  # 10 x 511 messages
    replay = f'[[answer]]\nreplay = {{trace = "{ROOT}/sample_models/traces/stencil.txt"}}\n'
    assert not small(spec_of(axis.format(n=2) + replay), machine)  # a replay: never


def test_block_answers_take_chains_and_a_working_set_as_the_command_does(tmp_path, capsys):
    """`block = {..., chains = [...], working_set = B}`: each variant's answer is what
    `parasol-model block --chain ... --working-set B` says of the model with the
    variant's value set (the chain at the latencies the model's text records, the array
    references at the memory level the working set fits in)."""
    from parasol_core.cli import main

    header = ("# latency of a dependent operation, processor 1: iga = 4e-06 +- 1e-07\n"
              "# memory level L1: 32768 bytes, 1e-09 s per array reference\n"
              "# memory level L2: 1048576 bytes, 4e-09 s per array reference\n")  # fmt: skip
    model = tmp_path / "m.machine"
    sample = (ROOT / "sample_models" / "amd-epyc-host.machine").read_text()
    own = ("# latency of a dependent operation", "# memory level ")  # the sample's: this test's
    model.write_text(header + "".join(line for line in sample.splitlines(keepends=True)
                                      if not line.startswith(own)))  # fmt: skip
    spec = loads_spec(textwrap.dedent(f"""
        model = "{model}"

        [[axis]]
        set = "pt(1).iga"
        values = [1e-7, 1e-6]

        [[answer]]
        block = {{processor = 1, counts = {{iga = 10, arr1 = 20}}, chains = [{{iga = 2}}], working_set = 500000}}
    """))  # fmt: skip
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert not [r.error for r in rows if r.error]
    for row in rows:
        variant = tmp_path / f"v{row.index}.machine"
        assert main(["set", str(model), f"pt(1).iga={row.values[0]}", "-o", str(variant)]) == 0
        capsys.readouterr()
        assert main(["block", str(variant), "--processor", "1", '{"iga": 10, "arr1": 20}',
                     "--chain", "iga=2", "--working-set", "500000"]) == 0  # fmt: skip
        out = capsys.readouterr().out
        assert row.answers[0] == float(out.splitlines()[0].removeprefix("mean: ")), out
    # at 1e-7 the chain (2 x 4e-6 measured) bounds the block; at 1e-6 the sum does
    assert rows[0].answers[0] == pytest.approx(8e-6)
    assert rows[1].answers[0] > 1e-5
    for bad, why in (("chains = [1]", "chains = [{mnemonic = count"),
                     ("chains = [{}]", "chains = [{mnemonic = count"),
                     ("working_set = -1", "working_set = BYTES"),
                     ("working_set = true", "working_set = BYTES")):  # fmt: skip
        with pytest.raises(
            SweepError, match=r"block: " + why.replace("[", r"\[").replace("{", r"\{")
        ):
            spec_of(f"""
                [[answer]]
                block = {{processor = 1, counts = {{iga = 1}}, {bad}}}
            """)
