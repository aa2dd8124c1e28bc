"""Copies of unsaved edits (parasol_core/session/recovery.py): which are offered back,
and a session restored from one, saved or discarded. The windows' side, with a PIUI
really stopped by a signal, is tests/gui/test_gui_restore_unsaved.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from named_platform import named_model_text

from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.numeric import read_int
from parasol_core.session import OPEN, SAVED, Session, recovery


def _model(tmp_path: Path) -> Path:
    model = tmp_path / "named.machine"
    model.write_text(named_model_text())
    return model


def _kept_edit(model: Path, after_ns: int = 1_000_000_000) -> Path:
    """The model with pt(1).iga set, kept as a front end stopped by a signal keeps it,
    written ``after_ns`` after the model file."""
    session = Session.open(model)
    session.set("pt(1).iga", "7.5e-7")
    copy = recovery.keep(session.text(), model, model.parent / "data", os.getpid())
    st = model.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + after_ns))
    return copy


def _gone_pids() -> list[int]:
    """Process ids no process has: past the kernel's largest."""
    top = read_int(Path("/proc/sys/kernel/pid_max").read_text(), "pid_max")
    return [top + 1, top + 2, top + 3]


def test_a_copy_is_kept_beside_its_file_or_in_the_data_folder(tmp_path) -> None:
    model = _model(tmp_path)
    assert recovery.keep("x", model, tmp_path / "data", 42) == tmp_path / "named.machine.unsaved"
    kept = recovery.keep("y", None, tmp_path / "data", 42)  # the folder is made
    assert kept == tmp_path / "data" / "unsaved-42.machine" and kept.read_text() == "y"


@pytest.mark.parametrize("after_ns", [1_000_000_000, 0, -1_000_000_000],
                         ids=["newer", "same time", "older"])  # fmt: skip
def test_only_a_copy_newer_than_its_file_is_offered(tmp_path, after_ns) -> None:
    model = _model(tmp_path)
    copy = _kept_edit(model, after_ns)
    found = recovery.newer_copy(model)
    if after_ns > 0:
        assert found is not None and (found.path, found.original) == (copy, model)
        assert found.written == copy.stat().st_mtime
        assert model.name in found.describe() and found.when() in found.describe()
    else:  # the file was saved after it: nothing the user went on working on
        assert found is None


def test_a_copy_that_is_not_a_regular_file_is_not_offered(tmp_path) -> None:
    model = _model(tmp_path)
    os.mkfifo(recovery.copy_beside(model))
    assert recovery.newer_copy(model) is None
    assert recovery.newer_copy(tmp_path / "absent.machine") is None


def test_orphans_are_the_copies_whose_process_is_gone_newest_first(tmp_path) -> None:
    folder = tmp_path / "data"
    gone_a, gone_b, gone_c = _gone_pids()
    old = recovery.keep("a", None, folder, gone_a)
    new = recovery.keep("b", None, folder, gone_b)
    os.utime(old, (1_000_000, 1_000_000))
    running = recovery.keep("c", None, folder, os.getppid())  # a process that runs
    own = recovery.keep("d", None, folder, os.getpid())
    for name in ("unsaved-\u0663.machine", "unsaved-1_000.machine", "unsaved-.machine",
                 "unsaved-12.txt", "notes.machine"):  # fmt: skip
        (folder / name).write_text("not PIUI's")
    (folder / f"unsaved-{gone_c}.machine").mkdir()  # not a file
    found = recovery.orphans(folder, own_pid=os.getpid())
    assert [c.path for c in found] == [new, old]
    assert [c.pid for c in found] == [gone_b, gone_a] and found[0].original is None
    assert str(new) in found[0].describe() and str(gone_b) in found[0].describe()
    assert running.exists() and own.exists()
    assert recovery.orphans(tmp_path / "no such folder") == []


def test_a_restored_session_is_modified_and_saves_to_its_file_removing_the_copy(
        tmp_path) -> None:  # fmt: skip
    model = _model(tmp_path)
    before = model.read_text()
    copy = _kept_edit(model)
    session = Session.open(model)
    records = []
    session.subscribe(records.append)
    session.restore(copy, model)
    assert records[-1].reason == OPEN
    assert session.path == model and session.is_modified
    assert session.machine.processor(1).timings["iga"].mean == 7.5e-7
    assert model.read_text() == before and copy.exists()  # nothing written yet
    session.set("pt(1).iga", "8e-7")  # undo works on it as on any model
    session.undo()
    assert session.machine.processor(1).timings["iga"].mean == 7.5e-7
    assert session.is_modified  # the restored edits are not in the file
    session.save()
    assert records[-1].reason == SAVED
    assert not copy.exists() and not session.is_modified
    assert Session.open(model).machine.processor(1).timings["iga"].mean == 7.5e-7
    assert recovery.newer_copy(model) is None


def test_discarding_restored_edits_deletes_the_copy_and_opening_another_keeps_it(
        tmp_path) -> None:  # fmt: skip
    model = _model(tmp_path)
    copy = _kept_edit(model)
    session = Session.open(model)
    session.restore(copy, model)
    session.replace(Session.open(model).machine, model)  # another model: no answer given
    assert session.recovered_from is None and copy.exists()
    session.restore(copy, model)
    session.discard_recovered()
    assert not copy.exists() and session.recovered_from is None


def test_a_copy_that_does_not_parse_is_refused_where_and_why_and_left_alone(tmp_path) -> None:
    model = _model(tmp_path)
    copy = recovery.copy_beside(model)
    bad = named_model_text().replace("processor", "processr", 1)
    copy.write_text(bad)
    session = Session.open(model)
    machine = session.machine
    with pytest.raises(ModelSyntaxError) as caught:
        session.restore(copy, model)
    assert caught.value.file == str(copy) and caught.value.line >= 1
    assert caught.value.format().startswith(f"{copy}:{caught.value.line}:")
    assert session.machine is machine and session.recovered_from is None
    assert copy.read_text() == bad
