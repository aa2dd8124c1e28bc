"""The fit dialog fits logs as they are labelled (issue 35, item 8): an MPI_Put latency
table is osu_put_latency, never merged with osu_latency; a written fit says on its line
what it was fitted to, replacing the comment the line had."""

from __future__ import annotations

import pytest

from piui.widgets.fit_dialog import FitDialog


def osu_table(title: str, base: float) -> str:
    rows = [f"{size:<10d}{base + size / 1000:>18.2f}" for size in (1, 8, 64, 512, 4096)]
    return "\n".join([f"# OSU {title} v7.4", "# Datatype: MPI_CHAR.",
                      "# Size          Latency (us)", *rows]) + "\n"  # fmt: skip


@pytest.fixture
def dialog(qtbot, document):
    doc = document("cray-t3d.machine")
    d = FitDialog(doc, "mp.send")
    qtbot.addWidget(d)
    return d


def test_an_mpi_put_latency_file_is_not_fitted_with_an_osu_latency_file(dialog):
    assert dialog.add_text(osu_table("MPI Latency Test", 2.0), "latency.txt", procs=2)
    assert len(dialog.measurements) == 5 and dialog.candidates
    assert dialog.add_text(osu_table("MPI_Put Latency Test", 3.0), "put.txt", procs=2)
    assert dialog.candidates == [] and dialog.measurements is None
    text = dialog.status.text()
    assert text.startswith("Not fitted: the tables are of different benchmarks"), text
    assert "osu_latency (latency.txt)" in text and "osu_put_latency (put.txt)" in text
    assert not dialog.write_button.isEnabled()
    # the same one-sided benchmark from another file is fitted with it
    dialog.source_list.setCurrentRow(0)
    dialog.remove_current()
    assert dialog.add_text(osu_table("MPI_Put Latency Test", 3.1), "put-2.txt", procs=4)
    assert len(dialog.measurements) == 10 and dialog.candidates


def test_a_written_fit_replaces_the_comment_of_the_line(dialog, tmp_path):
    doc = dialog.document
    assert "# 30 + 0.09 x ndata (Q 0.98)" in doc.path.read_text()
    assert dialog.add_text(osu_table("MPI Latency Test", 2.0), "latency.txt", procs=2)
    assert dialog.write()
    doc.save()
    [line] = [ln for ln in doc.path.read_text().splitlines() if ln.strip().startswith("send =")]
    expression = dialog.candidates[0].expression()
    assert line.strip() == (f"send = {expression}  # fitted to 5 times at 2 processes "
                            "(latency.txt, osu_latency): c + d*bytes, no Q (no errors given: "
                            "equal relative errors assumed)")  # fmt: skip
    assert "30 + 0.09 x ndata" not in doc.path.read_text()
