"""`sweep.run` on a running estimator: the same rows as the command line, budgeted per
request as the other methods."""

from __future__ import annotations

from estimator_support import SAMPLES, estimator  # noqa: F401

from parasol_core.estimator.client import RemoteError
from parasol_core.estimator.protocol import INVALID_PARAMS
from parasol_core.sweep import loads_spec, run_sweep

GCEL = SAMPLES / "parsytec-gcel.machine"

SWEEP = """
[[axis]]
set = "tl(1)(*).speed"
values = [4.55e-7, 9.1e-7]

[[axis]]
generate = 1
values = ["torus 4 4 4", "grid 16 32", "torus 10 10 10 10 10 10"]

[[answer]]
eval = ["po(1).ia_spd", "to(1).processors"]

[[answer]]
simulate = {pattern = "halo", bytes = 4096}
name = "halo"
"""


def test_the_estimator_answers_the_rows_of_the_core(estimator):  # noqa: F811
    with estimator.client() as c:
        model = c.push(GCEL.read_text())["model"]
        answer = c.sweep(model, SWEEP)
    spec = loads_spec(SWEEP, model_text=GCEL.read_text(), files=False)
    core = []
    run_sweep(spec, core.append, executor="serial")
    assert answer["columns"] == spec.columns() and answer["variants"] == 6
    assert [r[0] for r in answer["rows"]] == list(range(6))
    for got, row in zip(answer["rows"], core, strict=True):
        assert got[1:3] == [float(row.values[0]), row.values[1]]
        assert got[3:6] == list(row.answers)
        assert got[-1] == row.error
    assert answer["rows"][0][4] == 64 and answer["rows"][1][4] == 512
    assert "7,000,000 lines, over the limit of 4,000,000" in answer["rows"][2][-1]


def test_a_sweep_past_its_budget_or_naming_a_file_is_refused(estimator):  # noqa: F811
    with estimator.client() as c:
        model = c.push(GCEL.read_text())["model"]
        big = SWEEP.replace("values = [4.55e-7, 9.1e-7]", "linear = [1e-7, 1e-6, 1000]")
        try:
            c.sweep(model, big)
            raise AssertionError("refused")
        except RemoteError as e:
            assert e.code == INVALID_PARAMS
            assert "over the limit of 1,000,000 messages and evaluations" in e.message
            assert "3,000 variants" in e.message
        try:
            named = SWEEP.replace('pattern = "halo", bytes = 4096', 'messages = "/etc/passwd"')
            assert named != SWEEP
            c.sweep(model, named)
            raise AssertionError("refused")
        except RemoteError as e:
            assert e.code == INVALID_PARAMS and "names a file" in e.message
            # the answer it is about, as data (the file's numbering), and why apart
            why = "names a file; a sweep sent here names none (give it inline)"
            assert e.message == f"sweep: answer 2: {why}"  # said once, not wrapped again
            assert e.data == {"part": ["answer", 2], "why": why}
        # a client cannot lift the server's limits with a memory budget of its own
        try:
            c.sweep(model, SWEEP + '\n[budget]\nmemory = "1T"\n')
            raise AssertionError("refused")
        except RemoteError as e:
            assert e.code == INVALID_PARAMS and "[budget] memory" in e.message
        assert c.evaluate(model, "po(1).ia_spd") > 0  # the stored model unchanged


TRACE = SAMPLES / "traces" / "stencil.txt"
REPLAY = """
[[axis]]
set = "tl(1)(*).speed"
values = [9.1e-8, 9.1e-7, 9.1e-6]

[[answer]]
eval = ["po(1).ia_spd"]

[[answer]]
replay = {{trace = "{trace}", flop = "pt(T).dga"}}
"""


def test_a_replay_names_a_trace_pushed_before_and_is_budgeted_by_its_lines(estimator):  # noqa: F811
    with estimator.client() as c:
        model = c.push(GCEL.read_text())["model"]
        pushed = c.push_trace(TRACE)
        answer = c.sweep(model, REPLAY.format(trace=pushed["trace"]))
        # the core's rows for the same sweep, its trace read from the file
        spec = loads_spec(REPLAY.format(trace=TRACE), model_text=GCEL.read_text())
        core = []
        run_sweep(spec, core.append, executor="serial")
        assert answer["columns"] == spec.columns()  # "replay stencil.txt" on both
        assert [r[0] for r in answer["rows"]] == [0, 1, 2]
        for got, row in zip(answer["rows"], core, strict=True):
            assert got[2:4] == list(row.answers) and got[-1] == row.error == ""
        makespans = [r[3] for r in answer["rows"]]
        assert makespans[0] < makespans[1] < makespans[2]  # slower links, a longer program
        # a trace the estimator does not hold is said, naming the answer
        try:
            c.sweep(model, REPLAY.format(trace="0" * 32))
            raise AssertionError("refused")
        except RemoteError as e:
            assert e.code == INVALID_PARAMS
            assert "answer 2: replay: there is no trace '000" in e.message
            assert "trace.push" in e.message
        # each variant is charged the trace's lines: 1,000 of them are over the budget
        big = REPLAY.format(trace=pushed["trace"]).replace("values = [9.1e-8, 9.1e-7, 9.1e-6]",
                                                           "linear = [1e-8, 1e-5, 1000]")  # fmt: skip
        try:
            c.sweep(model, big)
            raise AssertionError("refused")
        except RemoteError as e:
            assert e.code == INVALID_PARAMS
            assert "over the limit of 1,000,000 messages, evaluations and trace lines" in e.message
            assert "1,000 variants" in e.message
        # and under it, with fewer variants, it runs
        small = big.replace("1000]", "20]")
        assert len(c.sweep(model, small)["rows"]) == 20
