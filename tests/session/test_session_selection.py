"""The selection is model state: refused when it names what the model lacks, pruned after
every structural edit, undo and redo, emptied for another model; and the session's
topology operations check what they are given, so that no front end can build a model
it cannot save."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

from parasol_core.model import Link, Timing, VirtualTopology
from parasol_core.session import SELECTED, Session, SessionError
from parasol_core.session.edit import EditError
from parasol_core.syntax.loader import load, loads
from parasol_core.syntax.writer import dumps


@pytest.fixture
def grid():
    return Session(load(SAMPLES / "grid4x4.machine"), None)


def test_a_selection_of_what_the_model_lacks_is_refused(grid):
    hw = grid.machine.hardware()
    grid.select(hw.id, [1, 2], [1])
    with pytest.raises(SessionError, match=r"processors 1\.\.16, not 17"):
        grid.select(hw.id, [17], [])
    with pytest.raises(SessionError, match="no link 999"):
        grid.select(hw.id, [], [999])
    with pytest.raises(SessionError, match="no hardware topology 77"):
        grid.select(77, [1], [])
    with pytest.raises(SessionError, match="no virtual topology 99"):
        grid.choose_virtual(99)
    assert (grid.selection.processors, grid.selection.links) == ((1, 2), (1,))


def test_another_model_starts_with_nothing_selected(grid, tmp_path):
    """The defect: a 4 x 4 selection applied to a one-processor model (p[16])."""
    grid.select(grid.machine.hardware().id, [3, 16], [1, 2])
    one = load(SAMPLES / "ibm-3090-200.machine")
    grid.replace(one, None)
    assert grid.selection.empty
    with pytest.raises(SessionError):
        grid.select(one.hardware().id, [16], [])


def test_structural_edits_undo_and_redo_prune_the_selection(grid):
    hw = grid.machine.hardware()
    seen = []
    grid.subscribe(lambda c: seen.append(c.reason))
    last = max(lk.id for lk in hw.links)
    grid.select(hw.id, [1, 2], [1, last])
    grid.remove_link(hw.id, last)
    assert grid.selection.links == (1,) and SELECTED in seen
    grid.undo()  # the link is back; a pruned selection is not brought back with it
    assert grid.selection.links == (1,)
    grid.select(hw.id, [1, 2], [1, last])
    grid.redo()
    assert grid.selection.links == (1,)


def test_removing_the_chosen_virtual_topology_chooses_the_first_left(grid):
    first, second = (v.id for v in grid.machine.virtuals[:2])
    assert grid.selection.virtual_id == first
    grid.choose_virtual(second)
    grid.remove_virtual(second)
    assert grid.selection.virtual_id == first
    grid.undo()
    assert grid.machine.virtual(second) is not None and grid.selection.virtual_id == first


# ---------------------------------------------------------------------- checked operations


def test_new_link_picks_the_next_id_and_the_topologys_timings(grid):
    hw = grid.machine.hardware()
    link = grid.new_link(hw.id, 1, 16)
    assert link.id == max(lk.id for lk in hw.links[:-1]) + 1
    assert (link.latency, link.speed) == (hw.links[0].latency, hw.links[0].speed)
    assert hw.link_count == len(hw.links)


@pytest.mark.parametrize(("connect", "message"), [
    ([1, 1], "two or more different processors"),
    ([1], "two or more different processors"),
    ([1, 17], r"processors 1\.\.16, not 17"),
    ([0, 2], "not 0"),
    ([2, True], "not True"),
])  # fmt: skip
def test_a_link_that_joins_what_the_topology_lacks_is_refused(grid, connect, message):
    hw = grid.machine.hardware()
    before = dumps(grid.machine)
    with pytest.raises(SessionError, match=message):
        grid.add_link(hw.id, Link(id=900, latency=Timing(1e-5), speed=Timing(1e-6),
                                  connect=connect))  # fmt: skip
    with pytest.raises(SessionError, match="non-negative"):
        grid.add_link(hw.id, Link(id=900, latency=Timing(-1.0), speed=Timing(1e-6),
                                  connect=[1, 2]))  # fmt: skip
    assert dumps(grid.machine) == before and not grid.history.can_undo


def test_new_virtual_is_valid_and_counts_only_virtual_ids(grid, tmp_path):
    virt = grid.new_virtual("2Dtorus")
    assert virt.id == max(v.id for v in grid.machine.virtuals[:-1]) + 1
    assert (virt.name, virt.processor_count, virt.routing) == ("2Dtorus on 16", 16, "2Dtorus")
    assert not [d for d in grid.revalidate() if d.is_error]
    text = dumps(grid.machine)
    assert loads(text).virtual(virt.id).mapping == {p: p for p in range(1, 17)}
    more = grid.new_virtual("1Dtorus", 20)  # more virtual processors than hardware ones
    assert more.mapping[17] == 1 and more.mapping[20] == 4


@pytest.mark.parametrize(("changes", "message"), [
    ({"routing": False}, "not a routing technique"),
    ({"routing": "evil"}, "not a routing technique"),
    ({"name": 3}, "a name is text"),
    ({"processor_count": 0}, "1 to"),
    ({"mapping": {1: 17}}, "mapped onto 17"),
    ({"mapping": {9: 1}, "processor_count": 4}, "virtual processor 9 is not one of 1..4"),
])  # fmt: skip
def test_a_virtual_topology_that_cannot_be_saved_is_refused(grid, changes, message):
    fields = {"id": 50, "name": "v", "routing": "2Dtorus", "processor_count": 16,
              "mapping": {p: p for p in range(1, 17)}} | changes  # fmt: skip
    before = dumps(grid.machine)
    with pytest.raises(SessionError, match=message):
        grid.add_virtual(VirtualTopology(**fields))
    assert dumps(grid.machine) == before


def test_resize_virtual_keeps_the_mapping_that_stays(grid):
    virt = grid.new_virtual("1Dtorus", 8)
    grid.set_mapping(virt.id, {1: 16})
    grid.resize_virtual(virt.id, 12)
    assert virt.processor_count == 12 and virt.name == "1Dtorus on 12"
    assert virt.mapping[1] == 16 and virt.mapping[12] == 12
    grid.resize_virtual(virt.id, 3)
    assert sorted(virt.mapping) == [1, 2, 3]
    grid.undo()
    assert virt.processor_count == 12 and len(virt.mapping) == 12


def test_a_processor_type_for_a_processor_beyond_the_topology_is_refused(grid):
    with pytest.raises(EditError, match=r"processors 1\.\.16, not 17"):
        grid.set("tp(1)(17)", "1")
    grid.set("tp(1)(16)", "1")
