"""The editing session, headless: operations, undo/redo, merging, grouping, change
records, scalers, processor renumbering and the topology operations."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core.model import Link, Processor, Timing, VirtualTopology
from parasol_core.session import (
    ABSENT,
    EDIT,
    OPEN,
    REDO,
    SAVED,
    UNDO,
    Change,
    Session,
    SessionError,
)
from parasol_core.session.edit import EditError
from parasol_core.syntax.loader import loads
from parasol_core.syntax.writer import dumps
from parasol_core.topology.generators import torus

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

GCEL = SAMPLES / "parsytec-gcel.machine"
FWI = SAMPLES / "fwi-csys.machine"
GRID = SAMPLES / "grid4x4.machine"


@pytest.fixture
def gcel() -> tuple[Session, list[Change]]:
    session = Session.open(GCEL)
    records: list[Change] = []
    session.subscribe(records.append)
    return session, records


def original(path) -> str:
    return path.read_text()


# ---------------------------------------------------------------------- undo and merging


def test_a_merged_run_of_100_sets_is_one_undo_step_back_to_before_the_first(gcel):
    session, records = gcel
    before = session.machine.processor(1).timings["iga"]
    for i in range(100):
        session.set_value("pt(1).iga", Timing(1e-6 * (i + 1)), merge="drag-1")
    assert len(session.history.steps) == 1
    assert len(records) == 100  # one record per step of the drag
    assert session.machine.processor(1).timings["iga"] == Timing(1e-6 * 100)
    session.undo()
    assert session.machine.processor(1).timings["iga"] == before
    assert not session.can_undo
    assert dumps(session.machine) == original(GCEL)


def test_operations_with_different_merge_keys_are_separate_steps(gcel):
    session, _ = gcel
    session.set_value("pt(1).iga", Timing(1e-6), merge="a")
    session.set_value("pt(1).iga", Timing(2e-6), merge="b")
    session.set_value("pt(1).iga", Timing(3e-6))
    session.set_value("pt(1).iga", Timing(4e-6))
    assert len(session.history.steps) == 4


def test_a_merge_window_splits_key_presses_further_apart(gcel, monkeypatch):
    session, _ = gcel
    clock = [100.0]
    monkeypatch.setattr("parasol_core.session.history.time.monotonic", lambda: clock[0])
    session.set_value("pt(1).iga", Timing(1e-6), merge="keys", window=1.0)
    clock[0] += 0.5
    session.set_value("pt(1).iga", Timing(2e-6), merge="keys", window=1.0)
    assert len(session.history.steps) == 1
    clock[0] += 1.5
    session.set_value("pt(1).iga", Timing(3e-6), merge="keys", window=1.0)
    assert len(session.history.steps) == 2


def test_a_save_ends_a_merge(gcel, tmp_path):
    session, _ = gcel
    session.set_value("pt(1).iga", Timing(1e-6), merge="drag")
    session.save(tmp_path / "m.machine")
    session.set_value("pt(1).iga", Timing(2e-6), merge="drag")
    assert len(session.history.steps) == 2
    assert session.is_modified
    session.undo()
    assert not session.is_modified


def test_undo_then_a_new_edit_drops_the_redo_steps(gcel):
    session, _ = gcel
    session.set_value("pt(1).iga", Timing(1e-6))
    session.set_value("pt(1).iga", Timing(2e-6))
    session.undo()
    assert session.can_redo
    session.set_value("pt(1).igm", Timing(5e-6))
    assert not session.can_redo
    assert [s.label for s in session.history.steps] == ["Set pt(1).iga", "Set pt(1).igm"]


def test_setting_a_value_to_what_it_is_makes_no_step(gcel):
    session, records = gcel
    session.set_value("pt(1).iga", session.machine.processor(1).timings["iga"])
    assert not session.history.steps and not records


def test_a_failed_operation_changes_nothing_and_leaves_no_step(gcel):
    session, records = gcel
    with pytest.raises(EditError):
        session.set("pt(1).iga", "fast")
    with pytest.raises(EditError), session.group("two"):
        session.set("pt(1).iga", "1e-6")
        session.set("pt(99).iga", "1e-6")
    assert not session.history.steps and not records
    assert dumps(session.machine) == original(GCEL)


# ---------------------------------------------------------------------- grouping


def test_a_grouped_edit_adds_a_processor_and_repoints_its_ratios_as_one_step(gcel):
    session, records = gcel
    proc = session.machine.processor(1)
    with session.group("Add a copy of processor 1"):
        copy = session.add_processor(Processor(2, "copy", dict(proc.timings)))
        for name, expr in proc.combinations.items():
            session.set_expression(f"po(2).{name}", expr.text.replace("pt(1)", "pt(2)"))
    assert len(session.history.steps) == 1
    assert len(records) == 1 and records[0].structure
    assert session.engine.value("po(2).ia_spd") == session.engine.value("po(1).ia_spd")
    assert session.machine.processor_count == 2 and copy in session.machine.processors
    session.undo()
    assert session.machine.processor(2) is None and session.machine.processor_count == 1
    assert dumps(session.machine) == original(GCEL)
    session.redo()
    assert session.machine.processor(2).combinations["ia_spd"].text == "pt(2).iga / tl(1)(1).speed"


def test_duplicate_repoints_the_copy_s_ratios_at_the_copy(gcel):
    session, _ = gcel
    copy = session.duplicate_processor(1)
    assert copy.id == 2
    assert all("pt(2)" in e.text for e in copy.combinations.values())


# ---------------------------------------------------------------------- change records


def test_the_record_of_a_timing_edit_names_exactly_the_keys_and_values_that_moved(gcel):
    session, records = gcel
    before = session.engine.values()
    session.set("pt(1).dga", "3e-6")
    (change,) = records
    assert change.reason == EDIT and not change.structure
    assert change.keys == {"pt(1).dga"}
    after = session.engine.values()
    moved = {k for k in after if after[k] != before[k]}
    assert set(change.derived) == moved == {"po(1).da_spd"}
    assert change.touches(Processor, "timings")
    assert change.entries(session.machine.processor(1), "timings") == {"dga"}
    assert not change.touches(Processor, "name")


def test_the_record_of_a_link_edit_moves_every_ratio_and_maxtotalspd(gcel):
    session, records = gcel
    session.set("tl(1)(1).speed", "1e-6")
    change = records[-1]
    assert change.keys == {"tl(1)(1).speed"}
    assert "mc.maxtotalspd" in change.derived
    assert {k for k in change.derived if k.startswith("po(1).")} == {
        f"po(1).{n}" for n in ("ia_spd", "im_spd", "da_spd", "dm_spd", "dd_spd", "ds_spd", "dp_spd")
    }


def test_undo_and_redo_publish_records_with_the_values_they_restore(gcel):
    session, records = gcel
    old = session.engine.value("po(1).ia_spd")
    session.set("pt(1).iga", "1e-5")
    new = session.engine.value("po(1).ia_spd")
    session.undo()
    assert records[-1].reason == UNDO and records[-1].derived == {"po(1).ia_spd": old}
    session.redo()
    assert records[-1].reason == REDO and records[-1].derived == {"po(1).ia_spd": new}


def test_a_name_change_touches_the_name_only_and_rebuilds_nothing(gcel):
    session, records = gcel
    session.set("pr(1).name", '"renamed"')
    change = records[-1]
    assert change.touches(Processor, "name") and not change.structure and not change.derived


def test_the_topology_version_moves_with_what_a_replacement_is_made_of_not_its_name():
    """Issue 37: the topology editor's preview holds while the topology is renamed, and
    goes stale when anything it was computed from changes (an undo included)."""
    session = Session.open(GRID)
    hw = session.machine.hardware()
    start = session.topology_version(hw)
    assert session.topology_version(hw) == start  # asked again: the same
    session.set_value(f"to({hw.id}).name", "renamed")
    session.set_value(f"to({hw.id}).routing", hw.routing)  # no change: no step
    assert session.topology_version(hw) == start
    seen = {start}
    for edit in (
        lambda: session.set_links(hw.id, [1], latency=Timing(1e-3)),  # a link's timing
        lambda: session.new_link(hw.id, 1, 16),  # a link added
        lambda: session.set_value(f"tp({hw.id})(3)", 2),  # a processor's type
        lambda: session.set_value(f"to({hw.id}).setup", Timing(1e-5)),
        lambda: session.set_value(f"to({hw.id}).routing", "YX"),
        session.undo,  # the routing back: still not the version before it
        lambda: session.add_processor(Processor(9, "switch", role="switch")),
    ):
        edit()
        version = session.topology_version(hw)
        assert version not in seen
        seen.add(version)


def test_opening_and_saving_publish_their_own_records(gcel, tmp_path):
    session, records = gcel
    session.set("pt(1).iga", "1e-6")
    session.save(tmp_path / "a.machine")
    assert records[-1].reason == SAVED and not session.is_modified
    session.replace(loads(FWI.read_text()), FWI)
    assert records[-1].reason == OPEN and records[-1].touches(Processor)
    assert not session.history.steps and not session.is_modified


def test_unsubscribe_stops_the_records(gcel):
    session, _ = gcel
    seen: list[Change] = []
    stop = session.subscribe(seen.append)
    session.set("pt(1).iga", "1e-6")
    stop()
    session.set("pt(1).iga", "2e-6")
    assert len(seen) == 1


# ---------------------------------------------------------------------- scalers


def test_scaling_then_undo_then_redo_saves_the_same_bytes_as_scaling_once(tmp_path):
    once = Session.open(GCEL)
    once.scale_group("double", 2.5)
    a = tmp_path / "once.machine"
    once.save(a)
    again = Session.open(GCEL)
    again.scale_group("double", 2.5)
    again.undo()
    assert again.text() == original(GCEL)
    again.redo()
    b = tmp_path / "again.machine"
    again.save(b)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != GCEL.read_bytes()


def test_a_scaler_drag_is_one_step_from_its_start_and_undo_brings_the_factor_back(gcel):
    session, records = gcel
    proc = session.machine.processor(1)
    start = dict(proc.timings)
    for f in (1.5, 3.0, 7.0, 2.0):
        session.move_scaler(1, "addition", f, merge="drag")
    assert len(session.history.steps) == 1
    assert session.scaler(1).factor("addition") == 2.0
    assert proc.timings["iga"].mean == pytest.approx(start["iga"].mean * 2.0)
    assert records[-1].scalers
    session.move_scaler(1, "addition", 1.0, merge="drag")  # back to the start: exact
    assert proc.timings == start
    session.undo()
    assert proc.timings == start and session.scaler(1).is_neutral
    session.redo()
    assert proc.timings == start


def test_scalers_compose_and_cancel_returns_to_the_last_ok(gcel):
    session, _ = gcel
    proc = session.machine.processor(1)
    start = dict(proc.timings)
    session.move_scaler(1, "global", 2.0)
    session.move_scaler(1, "addition", 0.5)
    assert proc.timings["iga"].mean == pytest.approx(start["iga"].mean)
    assert proc.timings["dgm"].mean == pytest.approx(start["dgm"].mean * 2.0)
    assert proc.timings["dga"].mean == pytest.approx(start["dga"].mean)
    session.cancel_scalers(1)
    assert proc.timings == start and session.scaler(1).is_neutral
    session.move_scaler(1, "global", 2.0)
    session.accept_scalers(1)
    assert session.scaler(1).is_neutral
    scaled = dict(proc.timings)
    session.move_scaler(1, "global", 3.0)
    session.cancel_scalers(1)
    assert proc.timings == scaled


def test_scaling_that_overflows_is_refused_and_changes_nothing(gcel):
    session, _ = gcel
    session.set("pt(1).iga", "1e300")
    with pytest.raises(SessionError, match="too large"):
        session.scale_group("all", 1e10)
    assert session.machine.processor(1).timings["iga"] == Timing(1e300)
    assert len(session.history.steps) == 1


@pytest.mark.parametrize("factor", [0, -1, float("nan"), float("inf"), True, "2"])
def test_bad_scale_factors_are_refused(gcel, factor):
    session, _ = gcel
    with pytest.raises(SessionError):
        session.scale_group("all", factor)


# ---------------------------------------------------------------------- processors


def test_renumbering_repoints_every_reference_as_one_undoable_step():
    session = Session.open(FWI)
    text = session.text()
    ids = [p.id for p in session.machine.processors]
    old = ids[0]
    users_before = session.processor_users(old)
    assert users_before
    session.renumber_processor(old, 42)
    assert session.machine.processor(42) is not None
    assert not [d for d in session.diagnostics if d.is_error]
    assert session.processor_users(42) and not session.processor_users(old)
    assert len(session.history.steps) == 1
    session.undo()
    assert session.text() == text


def test_setting_pr_id_renumbers_too(gcel):
    session, _ = gcel
    session.set("pr(1).id", "7")
    assert session.engine.value("po(7).ia_spd") == pytest.approx(0.80989, rel=1e-4)
    assert not [d for d in session.diagnostics if d.is_error]


@pytest.mark.parametrize("new_id", [0, -1, 2**31, 99999999999])
def test_ids_outside_what_the_file_format_holds_are_refused(gcel, new_id):
    session, _ = gcel
    with pytest.raises((SessionError, EditError)):
        session.renumber_processor(1, new_id)
    assert session.machine.processor(1) is not None


def test_removing_a_processor_and_undo(gcel):
    session, records = gcel
    assert session.processor_users(1)
    session.remove_processor(1)
    assert session.machine.processors == [] and session.machine.processor_count == 0
    assert records[-1].structure
    session.undo()
    assert session.text() == original(GCEL)


# ---------------------------------------------------------------------- expressions


def test_setting_maxtotalspd_without_a_section_adds_it_and_undo_removes_it():
    session = Session.open(GRID)
    session.set_expression("mc.maxtotalspd", None) if session.machine.combinations else None
    session.history.clear()
    text = session.text()
    assert session.machine.combinations is None
    session.set_expression("mc.maxtotalspd", "1 / tl(1)(1).speed")
    assert session.machine.combinations is not None
    assert isinstance(session.engine.value("mc.maxtotalspd"), float)
    session.undo()
    assert session.machine.combinations is None and session.text() == text


def test_removing_the_last_machine_combination_removes_the_section(gcel):
    session, _ = gcel
    session.set_expression("mc.maxtotalspd", None)
    assert session.machine.combinations is None
    session.undo()
    assert session.text() == original(GCEL)


def test_a_bad_expression_is_refused(gcel):
    session, _ = gcel
    with pytest.raises(EditError):
        session.set_expression("po(1).ia_spd", "pt(1).iga / ")
    assert not session.history.steps


def test_set_creates_a_missing_cache_in_the_same_step():
    session = Session.open(FWI)
    proc = session.machine.processors[0]
    session.set_value(f"pc({proc.id}).cache", None) if False else None
    bare = session.add_processor(Processor(session.next_processor_id(), "bare"))
    session.history.clear()
    session.set(f"pc({bare.id}).size", "4096")
    assert bare.cache is not None and bare.cache.size == 4096
    assert len(session.history.steps) == 1
    session.undo()
    assert bare.cache is None


# ---------------------------------------------------------------------- topologies


def test_link_group_edit_is_one_step_and_moves_maxtotalspd(gcel):
    session, records = gcel
    topo = session.machine.topologies[0]
    before = session.engine.value("mc.maxtotalspd")
    ids = [lk.id for lk in topo.links]
    session.set_links(topo.id, ids, speed=Timing(1e-7))
    assert len(session.history.steps) == 1
    assert records[-1].derived["mc.maxtotalspd"] != before
    session.undo()
    assert session.engine.value("mc.maxtotalspd") == before


def test_a_bulk_link_edit_is_one_mutation_one_field_and_a_drag_one_step(gcel):
    """Issue 22: a group edit of many links is one SetMany (not a SetField per link),
    published as one field that covers every link; a drag merges into one undo step
    back to each link's own value."""
    from parasol_core.session.history import SetMany

    session, records = gcel
    topo = session.machine.topologies[0]
    assert len(topo.links) > Session.BULK
    speeds = [lk.speed for lk in topo.links]
    ids = tuple(lk.id for lk in topo.links)
    drag = object()
    for value in (1e-7, 2e-7, 3e-7):
        session.set_links(topo.id, ids, speed=Timing(value), merge=drag)
    [step] = session.history.steps
    [mutation] = step.mutations
    assert isinstance(mutation, SetMany) and list(mutation.links) == list(topo.links)
    assert all(lk.speed == Timing(3e-7) for lk in topo.links)
    [field] = records[-1].fields
    assert records[-1].touches(topo.links[-1], "speed") and not records[-1].touches(topo)
    assert records[-1].keys == {k for k in session.engine.stored_keys() if k.endswith(".speed")}
    assert "mc.maxtotalspd" in records[-1].derived
    session.undo()
    assert [lk.speed for lk in topo.links] == speeds
    session.redo()
    assert all(lk.speed == Timing(3e-7) for lk in topo.links)


def test_a_bulk_edit_of_some_links_keys_only_theirs(gcel):
    session, records = gcel
    topo = session.machine.topologies[0]
    read = {k for k in session.engine.stored_keys() if k.startswith(f"tl({topo.id})(")}
    assert read  # maxtotalspd reads some links
    read_ids = {int(k.split(")(")[1].split(")")[0]) for k in read}
    others = [lk.id for lk in topo.links if lk.id not in read_ids]
    assert len(others) > Session.BULK
    session.set_links(topo.id, others, latency=Timing(1e-3))
    assert records[-1].keys == set() and not records[-1].derived
    some = others[: Session.BULK] + sorted(read_ids)
    session.set_links(topo.id, some, latency=Timing(2e-3))
    assert records[-1].keys == {k for k in read if k.endswith(".latency")}


def test_add_and_remove_links_keep_the_count(gcel):
    session, _ = gcel
    topo = session.machine.topologies[0]
    n = len(topo.links)
    new_id = max(lk.id for lk in topo.links) + 1
    session.add_link(topo.id, Link(new_id, Timing(1e-6), Timing(1e-8), [1, 2]))
    assert topo.link_count == n + 1
    with pytest.raises(SessionError, match="already"):
        session.add_link(topo.id, Link(new_id, Timing(1e-6), Timing(1e-8), [1, 2]))
    session.remove_link(topo.id, new_id)
    assert topo.link_count == n
    session.undo()
    session.undo()
    assert session.text() == original(GCEL)


def test_replacing_a_topology_and_undo_restores_the_file_byte_for_byte():
    session = Session.open(GRID)
    hw = session.machine.hardware()
    new = torus([4, 4], 1e-6, 1e-8, id=hw.id)
    session.replace_topology(hw.id, new)
    assert session.machine.hardware() is new
    assert session.text() != original(GRID)
    session.undo()
    assert session.text() == original(GRID)


def test_mapping_edits_and_virtual_topologies():
    session = Session.open(GRID)
    virt = session.machine.virtuals[0]
    a, b = virt.mapping[1], virt.mapping[2]
    session.set_mapping(virt.id, {1: b, 2: a}, label="swap")
    assert (virt.mapping[1], virt.mapping[2]) == (b, a)
    session.undo()
    assert (virt.mapping[1], virt.mapping[2]) == (a, b)
    count = session.machine.topology_count
    added = session.add_virtual(VirtualTopology(id=99, name="ring", routing="1Dtorus",
                                                processor_count=16,
                                                mapping={i: i for i in range(1, 17)}))  # fmt: skip
    assert session.machine.topology_count == count + 1 and added in session.machine.virtuals
    session.remove_virtual(99)
    assert session.machine.topology_count == count
    with pytest.raises(SessionError):
        session.set_mapping(virt.id, {1: 0})


def test_absent_removes_a_table_entry(gcel):
    session, _ = gcel
    session.set_value("pt(1).iga", ABSENT)
    assert "iga" not in session.machine.processor(1).timings
    session.undo()
    assert "iga" in session.machine.processor(1).timings


def test_change_says_when_only_mappings_moved():
    """What the topology views rely on to move virtual processors instead of rebuilding."""
    session = Session.open(GRID)
    records: list[Change] = []
    session.subscribe(records.append)
    virt = session.machine.virtuals[0]
    a, b = sorted(virt.mapping)[:2]
    swapped = dict(virt.mapping) | {a: virt.mapping[b], b: virt.mapping[a]}
    session.set_mapping(virt.id, swapped)
    assert records[-1].mapping_only
    session.undo()
    assert records[-1].mapping_only
    session.set_links(session.machine.topologies[0].id, [1], speed=Timing(1e-6))
    assert not records[-1].mapping_only
    session.remove_virtual(virt.id)
    assert not records[-1].mapping_only
    session.replace(loads(GRID.read_text()), GRID)
    assert not records[-1].mapping_only


@pytest.mark.parametrize("ref", ["pr(1).name", "to(1).name", "vt(2).name"])
@pytest.mark.parametrize("name", ['say "hi"', "two\nlines", "bell\x07", "esc\x1b[31m"])
def test_a_name_given_as_a_value_is_refused_as_one_typed_is(ref, name) -> None:
    # set_value takes values as they are (the windows' fields): a name the file cannot
    # hold was accepted and only the save failed; one with a control character was kept
    session = Session.open(GRID)
    text_before = session.text()
    with pytest.raises(EditError, match="cannot contain"):
        session.set_value(ref, name)
    with pytest.raises(EditError, match="cannot contain"):
        session.set(ref, name)
    assert session.text() == text_before and not session.can_undo
    session.set_value(ref, "tab\tis fine")  # as the file allows
    assert "tab\tis fine" in session.text()
