"""The Program window's controls of where the ranks run and of the machine a trace was
taken on, as a user meets them (issue 31): choosing a virtual topology places the ranks
by its mapping and the prediction changes as ``parasol-model replay --virtual`` says;
a hostfile places them as ``--hostfile`` does; an OTF2 trace's measured computation is
scaled by the model it was traced on (``--traced-on``). Each choice reruns the
prediction; the placement goes when another model opens, everything when another trace
does."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from program_traces import write_archive, write_stencil
from PySide6.QtCore import Qt

from parasol_core.cli import main
from parasol_core.frontend import program as core
from parasol_core.syntax.writer import dumps

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _cli_makespan(capsys, *argv) -> float:
    """What ``parasol-model replay ... --json`` predicts, a flop's time as the window
    takes it on the grid (whose processors time global variables only)."""
    status = main(["replay", *map(str, argv), "--flop", core.GLOBAL_FLOP, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)["makespan"]


@pytest.fixture
def on_grid(main_window, qtbot, sample_copy, tmp_path):
    """The Program window on the 4 x 4 grid (two virtual topologies: a ring mapped on a
    Hamiltonian cycle, a torus) with a 16-rank ring stencil, its first prediction shown."""
    grid = sample_copy("grid4x4.machine")
    assert main_window.open_file(grid)
    path = write_stencil(tmp_path, ranks=16, iterations=6)
    window = main_window.panels["program"]
    window.ask_trace_path = lambda: str(path)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
    window.model_path, window.trace_path = grid, path
    assert window.program.options_for(main_window.document.machine).flop == core.GLOBAL_FLOP
    return window


def _choose(window, qtbot, index: int) -> None:
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        window.placement.setCurrentIndex(index)
        window.placement.activated.emit(index)


def test_a_virtual_topology_chosen_places_the_ranks_as_replay_virtual_does(on_grid, qtbot,
                                                                           capsys):  # fmt: skip
    window = on_grid
    box = window.placement
    entries = [box.itemText(i) for i in range(box.count())]
    assert entries[0].startswith("in order")
    assert window._placements[1:] == [("virtual", 2), ("virtual", 3)]
    assert entries[1:] == ["virtual topology 2 (ring): 16 mapped",
                           "virtual topology 3 (2D torus): 16 mapped"]  # fmt: skip
    in_order = window.after.makespan
    assert in_order == pytest.approx(_cli_makespan(capsys, window.model_path,
                                                   window.trace_path), rel=1e-12)  # fmt: skip
    # the ring mapped on the grid: every neighbour one hop away, as the CLI says
    _choose(window, qtbot, 1)
    ring = window.after.makespan
    assert ring == pytest.approx(_cli_makespan(capsys, window.model_path, window.trace_path,
                                               "--virtual", "2"), rel=1e-12)  # fmt: skip
    assert ring < in_order
    # another question: its own before, shown alone
    assert window.before.makespan == ring
    # back in order: the first answer again
    _choose(window, qtbot, 0)
    assert window.after.makespan == in_order


def test_the_mapping_editor_decides_where_the_ranks_of_a_virtual_topology_run(
        on_grid, qtbot, main_window, tmp_path, capsys):  # fmt: skip
    window = on_grid
    _choose(window, qtbot, 1)  # the ring, on a Hamiltonian cycle of the grid
    ring = window.after.makespan
    editor = main_window.panels["mapping-editor"]
    editor.select_virtual(2)
    # the ring laid row by row instead: 4 -> 5 and 16 -> 1 are three and six hops apart
    editor.mapping_edit.setText(" ".join(str(p) for p in range(1, 17)))
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert editor.type_mapping()
    assert window.program.virtual == 2 and window.placement.currentIndex() == 1
    edited = tmp_path / "edited.machine"
    edited.write_text(dumps(main_window.document.machine))
    expected = _cli_makespan(capsys, edited, window.trace_path, "--virtual", "2")
    assert window.after.makespan == pytest.approx(expected, rel=1e-12)
    assert window.after.makespan > ring
    assert list(window.after.host) == list(range(1, 17))


def test_a_hostfile_places_the_ranks_as_replay_hostfile_does(on_grid, qtbot, tmp_path, capsys):
    window = on_grid
    in_order = window.after.makespan
    hosts = tmp_path / "hosts"
    hosts.write_text("p1:8\n2:8\n")  # half the ranks on processor 1, half on 2
    window.ask_hostfile_path = lambda: str(hosts)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert window.choose_hostfile()
    assert window.placement.currentText() == "hostfile hosts"
    expected = _cli_makespan(capsys, window.model_path, window.trace_path, "--hostfile", hosts)
    assert window.after.makespan == pytest.approx(expected, rel=1e-12)
    assert window.after.makespan != in_order
    # a hostfile naming a processor the model lacks: said, with the file's line
    bad = tmp_path / "bad"
    bad.write_text("1\n99\n")
    window.ask_hostfile_path = lambda: str(bad)
    with qtbot.waitSignal(window.live.failed, timeout=30_000):
        window.choose_hostfile()
    assert f"{bad}:2: host '99': processor 99 is not in" in window.message.text()


def test_the_placement_goes_when_another_model_opens(on_grid, qtbot, main_window, sample_copy):
    window = on_grid
    _choose(window, qtbot, 1)
    assert window.program.virtual == 2
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert main_window.open_file(sample_copy("grid4x4.machine"))
    assert window.program.virtual is None
    assert window.placement.currentIndex() == 0


otf2 = pytest.importorskip("otf2", reason="the otf2 package is not installed (pip install otf2)")

# two ranks: rank 0 computes 1 us, sends 100 B, computes 5 us, receives 80,000 B; rank 1
# receives, computes 2 us, sends (test_replay_otf2.py's ping-pong, measured)
PING_PONG = [
    [("MPI_Send", 1000, 1500, [("MpiSend", 1, 5, 100)]),
     ("MPI_Recv", 6500, 90000, [("MpiRecv", 1, 7, 80000)])],
    [("MPI_Recv", 0, 2100, [("MpiRecv", 0, 5, 100)]),
     ("MPI_Send", 4100, 90000, [("MpiSend", 0, 7, 80000)])],
]  # fmt: skip


def test_an_otf2_trace_s_computation_scales_by_the_model_it_was_traced_on(
        main_window, qtbot, tmp_path, capsys, sample_copy):  # fmt: skip
    grid = sample_copy("grid4x4.machine")
    assert main_window.open_file(grid)
    window = main_window.panels["program"]
    archive = write_archive(tmp_path / "run", PING_PONG)
    window.ask_trace_path = lambda: str(archive)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
    assert window.traced_on_row.isVisible() and not window.flop_row.isVisible()
    assert window.traced_on.text() == "the computation as measured"
    measured = window.after
    # traced on a machine whose every timing is twice the grid's: the grid computes in half
    traced = copy.deepcopy(main_window.document.machine)
    for p in traced.processors:
        p.timings = {name: t.scaled(2.0) for name, t in p.timings.items()}
    model = tmp_path / "traced.machine"
    model.write_text(dumps(traced))
    window.ask_traced_on_path = lambda: str(model)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert window.choose_traced_on()
    assert window.traced_on.text() == str(model)
    scaled = window.after
    assert scaled.computation.sum() == pytest.approx(measured.computation.sum() / 2, rel=1e-9)
    expected = _cli_makespan(capsys, grid, archive, "--traced-on", model)
    assert scaled.makespan == pytest.approx(expected, rel=1e-12)
    # a model that cannot be read: said, and the one chosen stays
    broken = tmp_path / "broken.machine"
    broken.write_text("begin nonsense\n")
    window.ask_traced_on_path = lambda: str(broken)
    assert not window.choose_traced_on()
    assert "broken.machine" in window.message.text()
    assert window.program.traced_on_path == model
    # as measured again
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        window.traced_on_clear.click()
    assert window.after.makespan == measured.makespan
    # another trace: nothing chosen for the one before
    window.ask_traced_on_path = lambda: str(model)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        window.choose_traced_on()
    path = write_stencil(tmp_path, ranks=16, iterations=2)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert window.open_trace(path)
    assert window.program.traced_on is None and not window.traced_on_row.isVisible()


def test_a_hostfile_may_name_the_platform_s_hosts_and_the_table_names_them(
        main_window, qtbot, tmp_path, capsys):  # fmt: skip
    from parasol_core.syntax.loader import load

    machine = load(SAMPLES / "grid4x4.machine")
    machine.hardware().names = "1=alpha 2=beta 16=omega"
    model = tmp_path / "named.machine"
    model.write_text(dumps(machine))
    assert main_window.open_file(model)
    window = main_window.panels["program"]
    trace = write_stencil(tmp_path, ranks=16, iterations=4)
    window.ask_trace_path = lambda: str(trace)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        main_window.open_trace_action.trigger()
    table = window.table.model()
    assert table.headerData(1, Qt.Orientation.Horizontal) == "Proc."
    assert "processor" in table.headerData(
        1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert [table.index(r, 1).data() for r in (0, 1, 2, 15)] == [
        "1 (alpha)", "2 (beta)", "3", "16 (omega)"]  # fmt: skip
    hosts = tmp_path / "hosts"
    hosts.write_text("beta:8\nomega:8\n")
    window.ask_hostfile_path = lambda: str(hosts)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert window.choose_hostfile()
    assert [table.index(r, 1).data() for r in (0, 7, 8, 15)] == [
        "2 (beta)", "2 (beta)", "16 (omega)", "16 (omega)"]  # fmt: skip
    expected = _cli_makespan(capsys, model, trace, "--hostfile", hosts)
    assert window.after.makespan == pytest.approx(expected, rel=1e-12)
    # the hover names the host an operation runs on
    assert window.after.describe(0).startswith("rank ")
    assert any(" on beta: " in window.after.describe(i) for i in range(20))
    # a name the platform does not have: said, with the hostfile's line
    hosts.write_text("beta:8\ngamma:8\n")
    window.set_placement(None, None)
    with qtbot.waitSignal(window.live.failed, timeout=30_000):
        window.choose_hostfile()
    assert "hosts:2" in window.message.text() and "'gamma'" in window.message.text()


# --------------------------------------------------------------------------- the sweep's


def _sweep_dialog(main_window):
    action = next(a for a in main_window.menuBar().actions()[0].menu().actions()
                  if a.text() == "S&weep…")  # fmt: skip
    action.trigger()
    return main_window.sweep_dialog


def _base_answer(dialog, qtbot) -> float:
    dialog.axes.setRowCount(0)
    dialog.add_axis("scale global", "1, 2")
    dialog.expressions.setText("")
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    base = next(r for r in dialog.rows if r.values == ("1",))
    assert base.error == "", base.error
    return base.answers[0]


def test_the_sweep_replays_where_the_program_window_places_the_ranks(on_grid, qtbot,
                                                                     main_window, tmp_path):  # fmt: skip
    """Found using the sweep: *Program window's* took the trace and the flop but ran the
    ranks in order where the window placed them by a virtual topology, so the base
    variant's answer was not the window's prediction. The dialog now has the window's
    chooser, filled in by the button, and a hostfile of its own."""
    window = on_grid
    _choose(window, qtbot, 1)  # virtual topology 2: the ring on a Hamiltonian cycle
    dialog = _sweep_dialog(main_window)
    assert dialog.placement.currentIndex() == 0  # in order until the button says
    assert [d for d in dialog._placements[1:]] == [("virtual", 2), ("virtual", 3)]
    dialog.program_button.click()
    assert dialog.placement.currentText() == window.placement.currentText()
    assert "virtual = 2" in dialog.sweep_text()
    assert _base_answer(dialog, qtbot) == window.after.makespan
    # a hostfile chosen here: the sweep replays as the window does with the same file
    hosts = tmp_path / "hosts"
    hosts.write_text("p1:8\n2:8\n")
    dialog.ask_hostfile_path = lambda: str(hosts)
    assert dialog.choose_hostfile() and dialog.placement.currentText() == "hostfile hosts"
    window.ask_hostfile_path = lambda: str(hosts)
    with qtbot.waitSignal(window.predictionShown, timeout=30_000):
        assert window.choose_hostfile()
    assert _base_answer(dialog, qtbot) == window.after.makespan
    # in order again, chosen in the dialog's chooser
    dialog.placement.setCurrentIndex(0)
    dialog.placement.activated.emit(0)
    assert "hostfile" not in dialog.sweep_text() and "virtual" not in dialog.sweep_text()


def test_the_sweeps_placement_goes_when_another_model_opens(on_grid, qtbot, main_window,
                                                           sample_copy):  # fmt: skip
    _choose(on_grid, qtbot, 2)
    dialog = _sweep_dialog(main_window)
    dialog.program_button.click()
    assert dialog._placements[dialog.placement.currentIndex()] == ("virtual", 3)
    assert main_window.open_file(sample_copy("parsytec-gcel.machine"))
    assert dialog.placement.currentIndex() == 0 and dialog._placements == [("order", None)]
    assert "virtual" not in dialog.sweep_text()


def test_the_sweeps_chooser_follows_virtual_topologies_removed_and_undone(on_grid, main_window):
    dialog = _sweep_dialog(main_window)
    session = main_window.document.session
    session.remove_virtual(3)
    assert dialog._placements == [("order", None), ("virtual", 2)]
    session.undo()
    assert dialog._placements == [("order", None), ("virtual", 2), ("virtual", 3)]
