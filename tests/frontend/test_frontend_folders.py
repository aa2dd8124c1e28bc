"""Where a file dialog opens (parasol_core.frontend.folders): the model's folder, else
the folder of the file used last, else the dialog's fallback; never the working
directory."""

from __future__ import annotations

from pathlib import Path

from parasol_core.frontend.folders import dialog_folder, dialog_start, file_name


def test_the_models_folder_comes_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    models = tmp_path / "study"
    models.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    assert dialog_folder(models / "a.machine", [other / "b.machine"]) == models
    assert dialog_start(models / "a.machine", "a.xml") == models / "a.xml"


def test_without_a_file_the_last_file_used_then_the_fallback_then_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    recent = tmp_path / "recent"
    recent.mkdir()
    gone = tmp_path / "gone" / "x.machine"  # a folder deleted since: skipped
    assert dialog_folder(None, [gone, recent / "r.machine"]) == recent
    samples = tmp_path / "samples"
    samples.mkdir()
    assert dialog_folder(None, [gone], samples) == samples
    assert dialog_folder(None, [], None) == Path.home()
    assert dialog_folder(None, ["relative/y.machine"], None) != Path.cwd()


def test_file_names_come_from_the_model():
    assert file_name(Path("/m/grid4x4.machine"), "4 x 4 grid", ".xml") == "grid4x4.xml"
    assert file_name(None, "4 x 4 grid", ".machine") == "4-x-4-grid.machine"
    assert file_name(None, "  ", ".png", "-topology") == "untitled-topology.png"
    assert file_name(None, "a/b: c", ".xml") == "a-b--c.xml"
