"""What a file dropped on PIUI's window is taken for (parasol_core.frontend.dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core.frontend.dropped import MODEL, PLATFORM, TRACE, kind_of
from parasol_core.simgrid import export_platform
from parasol_core.syntax.loader import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.mark.parametrize(
    ("name", "kind"),
    [("grid4x4.machine", MODEL), ("traces/stencil-long.txt", TRACE),
     ("traces/stencil-long/rank-0.txt", TRACE)],
)  # fmt: skip
def test_the_samples_are_taken_for_what_they_are(name, kind):
    assert kind_of(SAMPLES / name) == kind


def test_the_contents_decide_where_the_name_does_not(tmp_path):
    model = tmp_path / "gcel.txt"
    model.write_text((SAMPLES / "grid4x4.machine").read_text())
    assert kind_of(model) == MODEL  # comments, then "begin machine"
    platform = tmp_path / "platform"
    platform.write_text(export_platform(load(SAMPLES / "grid4x4.machine")).text)
    assert kind_of(platform) == PLATFORM
    index = tmp_path / "trace"
    (tmp_path / "r0").write_text("0 init\n0 finalize\n")
    (tmp_path / "r1").write_text("1 init\n1 finalize\n")
    index.write_text("r0\nr1\n")
    assert kind_of(index) == TRACE
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "traces.otf2").write_bytes(b"")
    assert kind_of(archive) == TRACE
    assert kind_of(tmp_path / "x.otf2") == TRACE


@pytest.mark.parametrize("text", ["", "hello\n", "\x00\xff\xfe binary", "r0\nmissing\n"])
def test_anything_else_is_a_model_whose_diagnostics_say_what_is_wrong(tmp_path, text):
    odd = tmp_path / "odd"
    odd.write_bytes(text.encode("latin-1"))
    (tmp_path / "r0").write_text("0 init\n")
    assert kind_of(odd) == MODEL
    assert kind_of(tmp_path / "absent") == MODEL
    assert kind_of(tmp_path) == MODEL  # a folder without an OTF2 archive
