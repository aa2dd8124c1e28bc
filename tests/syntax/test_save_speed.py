"""Saving a large model fast (issue 23) keeps its guarantees: the stamp a save leaves
(its digest computed from the text written, only when first needed) equals the stamp
of a fresh read of the file; a save after each kind of edit reads back as the same
model; a table compared in bulk still sees every kind of change; a text with `\\r\\n`
line ends keeps them on lines added; a text longer than one written piece is written
whole."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from parasol_core import loads
from parasol_core.model import Timing
from parasol_core.session import Session, disk
from parasol_core.syntax import writer
from parasol_core.syntax.writer import check_same_model, dumps

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402


def _fresh_stamp(path: Path) -> disk.Stamp:
    return disk.read_stamped(path)[1]


def _edits(session: Session):
    topo = session.machine.topologies[0]
    yield "timing", lambda: session.set("pt(1).iga", "1.5e-7")
    yield "link speed", lambda: session.set_links(topo.id, (len(topo.links) // 2,),
                                                  speed=Timing(4e-07))  # fmt: skip
    yield "link added", lambda: session.new_link(topo.id, 1, topo.processor_count // 2)
    yield "undo", session.undo


@pytest.mark.parametrize("crlf", [False, True])
def test_each_kind_of_edit_saves_and_reads_back_with_a_true_stamp(
    tmp_path: Path, crlf: bool
) -> None:
    text = torus_text(4)
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path / "t.machine"
    path.write_bytes(text.encode("utf-8"))
    session = Session.open(path)
    for what, edit in _edits(session):
        edit()
        session.save()
        on_disk = path.read_bytes()
        assert on_disk.decode("utf-8") == session.machine.src.text, what
        assert on_disk == dumps(session.machine).encode("utf-8"), what
        # the stamp a save leaves is that of a fresh read of the file, digest included
        assert session.disk_stamp == _fresh_stamp(path), what
        assert session.disk_status() == disk.UNCHANGED, what
        check_same_model(session.machine, loads(on_disk, str(path)))
        if crlf:
            assert b"\n" not in on_disk.replace(b"\r\n", b""), what


def test_the_lazy_digest_is_the_digest_of_the_bytes_written(tmp_path: Path) -> None:
    path = tmp_path / "m.machine"
    text = 'begin machine\n    name = "\u00e9t\u00e9 \u2603"\nend machine\n' * 3
    path.write_text(text, encoding="utf-8")
    st = os.stat(path)
    lazy = disk.Stamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, text=text)
    assert lazy.digest == disk._digest(path.read_bytes())
    assert lazy == disk.stamp_written(path, text) == _fresh_stamp(path)
    with pytest.raises(ValueError):
        disk.Stamp(1, 2, 3, 4)


def test_a_touched_file_after_a_save_is_unchanged_and_an_edited_one_changed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.machine"
    path.write_text(torus_text(3), encoding="utf-8")
    session = Session.open(path)
    session.set("pt(1).iga", "2.5e-7")
    session.save()
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000_000))
    assert session.disk_status() == disk.UNCHANGED  # the digest, from the text written
    data = path.read_bytes()
    path.write_bytes(data.replace(b"2.5e-07", b"2.6e-07", 1))
    assert session.disk_status() == disk.CHANGED


def test_a_text_of_several_written_pieces_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "_CHUNK", 7)
    monkeypatch.setattr(disk, "_CHUNK", 5)
    text = 'begin machine\n    name = "caf\u00e9 \U0001f600"\nend machine\n'
    path = tmp_path / "x.machine"
    writer.write_text_atomic(path, text)
    assert path.read_bytes() == text.encode("utf-8")
    assert disk.stamp_written(path, text).digest == disk._digest(text.encode("utf-8"))


def test_a_table_compared_in_bulk_still_sees_each_change(tmp_path: Path) -> None:
    path = tmp_path / "t.machine"
    path.write_text(torus_text(3), encoding="utf-8")
    for change in ("value", "type", "removed", "added"):
        machine = loads(path.read_text(encoding="utf-8"), str(path))
        holder = next(b for b in _blocks_with_tables(machine))
        table = holder.types
        key = next(iter(table))
        if change == "value":
            table[key] = table[key] + 1
        elif change == "type":
            table[key] = bool(table[key])
        elif change == "removed":
            del table[key]
        else:
            table[max(table) + 1] = 1
        if change == "type":  # True == 1, yet not an integer: seen and refused
            with pytest.raises(TypeError):
                dumps(machine)
            continue
        assert dumps(machine) != path.read_text(encoding="utf-8"), change
        check_same_model(machine, loads(dumps(machine), str(path)))


def _blocks_with_tables(machine):
    from parasol_core.model import all_blocks

    for b in all_blocks(machine):
        if getattr(b, "types", None):
            yield b


@pytest.mark.parametrize("extra", ["", "# déjà vu: not ASCII\n", "\ufeff"])
def test_the_stamp_of_a_file_opened_is_the_digest_of_its_bytes(tmp_path, extra):
    """Opening keeps the digest of an ASCII file to be computed from the text when first
    asked (a 570 MB file's hash is 0.8 s of its open); any file's stamp equals a fresh
    read's, and a changed file is told from a touched one."""
    import os

    from parasol_core.session import disk
    from parasol_core.session.session import read_model

    path = tmp_path / "m.machine"
    text = (extra + GCEL.read_text()) if extra != "\ufeff" else "\ufeff" + GCEL.read_text()
    path.write_text(text, encoding="utf-8")
    _, stamp = read_model(path)
    assert (stamp._digest is None) == text.isascii()
    assert stamp == disk.read_stamped(path)[1]
    os.utime(path, ns=(1, 1))
    assert disk.status(path, stamp) == disk.UNCHANGED
    path.write_text(text.replace("GCel", "GCeL", 1), encoding="utf-8")
    assert disk.status(path, stamp) == disk.CHANGED
