"""Sweeps answered by a program replay (parasol_core.replay): each row is the replay of
the edited model, and the trace is read once a worker, not once a variant."""

from __future__ import annotations

from pathlib import Path

import pytest

import parasol_core.replay as replay_package
from parasol_core.replay import ReplayOptions, load_trace, replay
from parasol_core.session import Session
from parasol_core.sweep import SweepError, loads_spec, run_sweep
from parasol_core.syntax.loader import load

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
STENCIL = ROOT / "sample_models" / "traces" / "stencil.txt"

SWEEP = f"""
model = "{GCEL}"

[[axis]]
set = "tl(1)(*).speed"
log = [9.1e-8, 9.1e-6, 3]

[[axis]]
set = "pt(1).dga"
values = [1.2e-6, 2.4e-6]

[[answer]]
replay = {{trace = "{STENCIL}", flop = "pt(T).dga"}}
name = "stencil"
"""


def test_each_row_is_the_replay_of_its_variant_and_the_trace_is_read_once(monkeypatch):
    reads = []
    real = replay_package.load_trace

    def counted(*args, **kw):
        reads.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(replay_package, "load_trace", counted)
    spec = loads_spec(SWEEP)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert len(rows) == 6 and not any(r.error for r in rows)
    assert len(reads) == 1  # one worker: one read for the six variants
    for row in rows:
        speed, dga = (float(x) for x in row.values)
        session = Session(load(str(GCEL)))
        session.set_links(1, [link.id for link in session.machine.topology(1).links],
                          speed=type(session.machine.topology(1).links[0].speed)(speed, None))  # fmt: skip
        session.set("pt(1).dga", repr(dga))
        alone = replay(session.machine, load_trace(STENCIL), ReplayOptions(flop="pt(T).dga"))
        assert row.answers[0] == pytest.approx(alone.makespan, rel=1e-12)
    # slower links and slower flops both lengthen the program
    by = {r.values: r.answers[0] for r in rows}
    assert by[("9.1e-06", "1.2e-06")] > by[("9.1e-08", "1.2e-06")]
    assert by[("9.1e-08", "2.4e-06")] > by[("9.1e-08", "1.2e-06")]


def test_a_replay_the_model_cannot_run_is_each_rows_error():
    # a flop time below zero on half the variants: the others replay
    spec = loads_spec(SWEEP.replace("values = [1.2e-6, 2.4e-6]", "values = [-1.2e-6, 2.4e-6]"))
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    bad = [r for r in rows if r.values[1] == "-1.2e-06"]
    assert len(bad) == 3 and all("it must be zero or more seconds" in r.error for r in bad)
    assert all(r.answers == (None,) for r in bad)
    assert all(not r.error and r.answers[0] > 0 for r in rows if r not in bad)
    with pytest.raises(SweepError, match="answer 1: replay: trace 'nothing.txt': no such file"):
        loads_spec(SWEEP.replace(str(STENCIL), "nothing.txt"), base=ROOT)
    with pytest.raises(SweepError, match="names a file"):
        loads_spec(SWEEP.replace(f'model = "{GCEL}"', ""), model_text=GCEL.read_text(),
                   files=False)  # fmt: skip


@pytest.mark.parametrize("option, why", [
    ('flop = "pt(T).dla"', "answer 1: replay: a flop's time on processor type 1, "
                           "'pt(1).dla': processor 1 has no timing 'dla'"),  # GCel has none
    ('flop = "pt(T).dga *"', "answer 1: replay: a flop's time, 'pt(T).dga *': syntax error"),
    ('flop = ""', "answer 1: replay: a flop's time must be an expression, not ''"),
    ('flop = 3', "answer 1: replay: a flop's time must be an expression, not 3"),
    # naming nothing, it is the same time on every variant
    ('flop = "-1e-9"', "answer 1: replay: a flop's time on processor type 1, '-1e-9', is "
                       "-1e-09: it must be zero or more seconds"),
    ('flop = "1e-9 - 2e-9"', "a flop's time on processor type 1, '1e-9 - 2e-9', is -1e-09"),
    ('collectives = "fast"', "answer 1: replay: collectives must be 'network' or 'model'"),
    ('eager = -1', "answer 1: replay: the eager threshold must be zero or more bytes"),
    ('eager = "big"', "answer 1: replay: the eager threshold must be a number of bytes"),
    ('algorithms = {bcast = "flat"}', "answer 1: replay: bcast has no algorithm 'flat'"),
    ('algorithms = {gossip = "ring"}', "answer 1: replay: no collective 'gossip'"),
    ('sharing = "fair"', "answer 1: replay: sharing must be one of max, maxmin, cm02"),
])  # fmt: skip
def test_an_option_no_variant_can_replay_with_is_refused_before_any_runs(option, why):
    """A flop expression the dialog's field took as typed failed on every row of the
    sweep, after all of them ran; so did every other option no variant can change."""
    text = SWEEP.replace('flop = "pt(T).dga"', option)
    with pytest.raises(SweepError) as info:
        loads_spec(text)
    assert str(info.value).startswith("the sweep: ") and why in str(info.value)


def test_a_flop_a_set_axis_gives_the_model_is_not_refused():
    """A timing the base model lacks but every variant's set axis gives it: the flop
    replays on each variant."""
    text = SWEEP.replace('flop = "pt(T).dga"', 'flop = "pt(T).dla"').replace(
        'set = "pt(1).dga"', 'set = "pt(1).dla"')  # fmt: skip
    rows = []
    run_sweep(loads_spec(text), rows.append, executor="serial")
    assert len(rows) == 6 and not any(r.error for r in rows)


# --------------------------------------------------------------------------- hostfiles

TWO_RANKS = "0 send 1 0 100000 6\n1 recv 0 0 100000 6\n"
FOUR_RANKS = "".join(f"{r} compute 1e6\n" for r in range(4))


def _named_sweep(tmp_path: Path, hostfile: str, trace: str = TWO_RANKS) -> str:
    from named_platform import named_model_text

    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    (tmp_path / "t.txt").write_text(trace)
    return f"""
model = "{model}"

[[axis]]
set = "tl(1)(*).speed"
values = [2.9e-8, 5.8e-8]

[[answer]]
replay = {{trace = "{tmp_path / "t.txt"}", flop = "1e-9", hostfile = {hostfile}}}
name = "program"
"""


def _cli_makespans(tmp_path: Path, hostfile_text: str, capsys) -> list[float]:
    """`parasol-model replay --hostfile` on each variant of the named sweep."""
    import json

    from parasol_core.cli import main

    (tmp_path / "hosts").write_text(hostfile_text)
    out = []
    for speed in ("2.9e-8", "5.8e-8"):
        variant = tmp_path / f"v{speed}.machine"
        session = Session(load(str(tmp_path / "named.machine")))
        hw = session.machine.topology(1)
        session.set_links(1, [link.id for link in hw.links],
                          speed=type(hw.links[0].speed)(float(speed), None))  # fmt: skip
        session.save(variant)
        status = main(["replay", str(variant), str(tmp_path / "t.txt"), "--flop", "1e-9",
                       "--json", "--hostfile", str(tmp_path / "hosts")])  # fmt: skip
        captured = capsys.readouterr()
        assert status == 0, captured.err
        out.append(json.loads(captured.out)["makespan"])
    return out


@pytest.mark.parametrize(
    ("listed", "lines", "trace"),
    [
        ('["Tremblay", "Fafard"]', "Tremblay\nFafard\n", TWO_RANKS),
        ('[1, "p3"]', "1\np3\n", TWO_RANKS),
        ('["Tremblay:2", "Jupiter", 3]', "Tremblay:2\nJupiter\n3\n", FOUR_RANKS),
    ],
    ids=["names", "numbers", "ranks"],
)
def test_a_sweeps_hostfile_list_takes_what_replay_hostfile_takes(tmp_path, capsys, listed,
                                                                  lines, trace):  # fmt: skip
    """A sweep's ``hostfile = [...]`` reads its entries as ``replay --hostfile`` reads its
    lines (names, ``pN``, ``:RANKS``), by the same function: each row is the command
    line's makespan on that variant."""
    spec = loads_spec(_named_sweep(tmp_path, listed, trace))
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert not any(r.error for r in rows), [r.error for r in rows]
    expected = _cli_makespans(tmp_path, lines, capsys)
    assert [r.answers[0] for r in rows] == pytest.approx(expected, rel=1e-12)
    assert expected[1] > expected[0] or trace is FOUR_RANKS  # slower links, a longer program


def test_a_name_the_topology_lacks_is_refused_where_and_why(tmp_path):
    with pytest.raises(SweepError) as info:
        loads_spec(_named_sweep(tmp_path, '["Tremblay", "Saturn:2"]'))
    said = str(info.value)
    assert "answer 1: replay: hostfile[1] 'Saturn' is no processor number" in said
    assert "Tremblay" in said and ":RANKS" in said  # some names there are; what an entry is
    for bad, why in (("[]", "a file or a list of processors"),
                     ("[1.5]", "hostfile[0]: a processor is a number or a name"),
                     ('["Fafard:x2"]', "hostfile[0] 'Fafard:x2' is no processor")):  # fmt: skip
        with pytest.raises(SweepError, match=why.replace("[", r"\[").replace("]", r"\]")):
            loads_spec(_named_sweep(tmp_path, bad))


def test_a_hostfile_entry_of_ten_billion_ranks_is_checked_not_expanded(tmp_path):
    """Reading the sweep file checked '"Tremblay:9999999999"' by making the list of ten
    billion processors it names; it is read, not expanded, and the variants place the
    trace's ranks as '"Tremblay:2"' does."""
    import tracemalloc

    tracemalloc.start()
    try:
        spec = loads_spec(_named_sweep(tmp_path, '["Tremblay:9999999999"]', TWO_RANKS))
        rows = []
        run_sweep(spec, rows.append, executor="serial")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 * 1024 * 1024 and not any(r.error for r in rows)
    same = []
    run_sweep(loads_spec(_named_sweep(tmp_path, '["Tremblay:2"]', TWO_RANKS)), same.append,
              executor="serial")  # fmt: skip
    assert [r.answers for r in rows] == [r.answers for r in same]


@pytest.mark.parametrize("virtual, why", [
    ('"x"', "answer 1: replay: virtual = ID, the id of a virtual topology of the model (a "
            "whole number from 1), not 'x'"),
    ("1.5", "not 1.5"),
    ("0", "not 0"),
    ("true", "not True"),
    ("99", "answer 1: replay: the model has no virtual topology 99 (its virtual topologies: "
           "none)"),
])  # fmt: skip
def test_a_virtual_topology_no_variant_has_is_refused_before_any_runs(virtual, why):
    """Every row said "there is no virtual topology with id x" after all of them ran."""
    with pytest.raises(SweepError) as info:
        loads_spec(SWEEP.replace('flop = "pt(T).dga"', f'flop = "pt(T).dga", virtual = {virtual}'))
    assert why in str(info.value)


def test_a_virtual_topology_a_generated_topology_may_take_away_is_each_rows_to_say():
    text = SWEEP.replace('flop = "pt(T).dga"', 'flop = "pt(T).dga", virtual = 99').replace(
        '[[axis]]\nset = "pt(1).dga"', '[[axis]]\ngenerate = 1\nvalues = ["grid 16 32"]\n\n[[axis]]\nset = "pt(1).dga"')  # fmt: skip
    spec = loads_spec(text)
    assert any(a.kind == "generate" for a in spec.axes)
    rows = []
    run_sweep(spec, rows.append, executor="serial")
    assert rows and all("no virtual topology with id 99" in r.error for r in rows)


@pytest.mark.parametrize("lines, why", [
    ("1\n9999\n", "hosts:2: host '9999': processor 9999 is not in hardware topology 1"),
    ("Tremblay\nx:y:z\n", "hosts:2: host 'x:y:z' is no processor number and no name"),
])  # fmt: skip
def test_a_hostfile_files_wrong_line_is_refused_before_any_runs(tmp_path, lines, why):
    """A hostfile list was checked when the sweep was read, a hostfile file only on each
    row: every row said its wrong line after all of them ran."""
    hosts = tmp_path / "hosts"
    hosts.write_text(lines)
    with pytest.raises(SweepError) as info:
        loads_spec(_named_sweep(tmp_path, f'"{hosts}"'))
    assert "answer 1: replay: " in str(info.value) and why in str(info.value)
    hosts.write_text("Tremblay\nJupiter\n")  # mended, it runs
    rows = []
    run_sweep(loads_spec(_named_sweep(tmp_path, f'"{hosts}"')), rows.append, executor="serial")
    assert len(rows) == 2 and not any(r.error for r in rows)
