"""The Estimate panel, asked by a user of a real estimator: an answer shown answers what
the fields say, and bad counts are refused before anything is asked.

Met before: a message size of -5 was refused and the field went back to 1024, but the
transfer time of 1e6 bytes stayed beside it; counts of NaN or 1e400 were sent and came
back as "the request would hold nan at params.counts.ila; JSON has no such number (...
a result past what a double holds)"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parasol_core.estimator.local import LocalEstimator
from piui.export import EstimatorSettings
from piui.main_window import settings


@pytest.fixture(scope="module")
def estimator(tmp_path_factory):
    est = LocalEstimator(tmp_path_factory.mktemp("est") / "models").start()
    yield est
    est.stop()


def _type(qtbot, field, text: str) -> None:
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    if text.isascii():
        qtbot.keyClicks(field, text)
    else:  # pasted: QTest types Latin-1 only
        field.insert(text)


def test_a_transfer_time_is_shown_only_beside_the_question_it_answers(main_window, qtbot,
                                                                      estimator):  # fmt: skip
    EstimatorSettings(estimator.url).save(settings())
    panel = main_window.estimate
    qtbot.mouseClick(panel.route_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: " link" in panel.route_text.text(), timeout=60_000)

    _type(qtbot, panel.bytes, "1e6")
    qtbot.mouseClick(panel.transfer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.transfer_text.text().endswith(" s"), timeout=60_000)
    one_million = panel.transfer_text.text()

    for bad in ("-5", "", "NaN", "1e400", "１２"):  # refused: no time stays beside 1024
        _type(qtbot, panel.bytes, bad)
        qtbot.mouseClick(panel.transfer_button, Qt.MouseButton.LeftButton)
        assert panel.bytes.text() == "1024"
        assert panel.transfer_text.text() == "", bad
        assert "message size in bytes" in panel.message.text()

    _type(qtbot, panel.bytes, "1e6")
    qtbot.mouseClick(panel.transfer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.transfer_text.text() == one_million, timeout=60_000)
    _type(qtbot, panel.bytes, "2e6")  # another size typed: the time was not of it
    assert panel.transfer_text.text() == ""
    qtbot.mouseClick(panel.transfer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.transfer_text.text().endswith(" s"), timeout=60_000)
    assert panel.transfer_text.text() != one_million
    panel.phase.click()  # with the other routes in flight: another question
    assert panel.transfer_text.text() == ""
    panel.dst.setValue(3)
    qtbot.mouseClick(panel.route_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "→ 3" in panel.route_text.text(), timeout=60_000)
    assert panel.transfer_text.text() == ""  # a time on the route before is not this one's


@pytest.mark.parametrize(
    ("counts", "why"),
    [
        ('{"iga": NaN}', "the count for 'iga' must be finite and non-negative, not nan"),
        ('{"iga": 1e400}', "the count for 'iga' must be finite and non-negative, not inf"),
        ('{"iga": -Infinity}', "must be finite and non-negative, not -inf"),
        ('{"iga": -4}', "must be finite and non-negative, not -4"),
        ('{"iga": "x"}', "the count for 'iga' must be a number, not 'x'"),
        ('{"zzz": 1}', "unknown timing parameter: 'zzz'"),
        ("[1, 2]", "the counts must be an object of mnemonic: count"),
        (
            "{iga: 4}",
            "not JSON: Expecting property name enclosed in double quotes (line 1, column 2)",
        ),  # fmt: skip
        ("iga=4,", "expected OP=N,... (e.g. dla=1000), not ''"),
        ("iga=x", "iga: 'x' is not a number"),
        ("zzz=1", "unknown timing parameter: 'zzz'"),
    ],
)
def test_bad_counts_are_refused_before_anything_is_asked(main_window, qtbot, estimator,
                                                         counts, why):  # fmt: skip
    EstimatorSettings(estimator.url).save(settings())
    panel = main_window.estimate
    panel.counts.setPlainText('{"iga": 4, "dgm": 2}')
    qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
    asked = []  # calls to the estimator from now on
    exporter = main_window.exporter
    call = exporter.call
    exporter.call = lambda method, then: (asked.append(method), call(method, then))

    panel.counts.setPlainText(counts)
    assert panel.block_text.text() == ""  # the counts it answered are gone
    qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
    assert panel.message.text().startswith("counts: ") and why in panel.message.text()
    assert "JSON has no such number" not in panel.message.text()
    qtbot.wait(100)
    assert panel.block_text.text() == "" and asked == []  # nothing was asked


def test_an_answer_in_a_narrow_panel_is_shown_whole(main_window, qtbot, estimator):
    """In the default layout's narrow bottom-left place the Basic block's answer (its
    interval now beside the mean) was cut off at the box's edge: the box had laid its
    question out on one row for the empty answer it held when last resized. A box turns
    again when its answer is shown, and back when the answer goes."""
    from PySide6.QtWidgets import QApplication, QBoxLayout

    EstimatorSettings(estimator.url).save(settings())
    panel = main_window.estimate
    panel.setParent(None)
    panel.resize(440, 420)
    panel.show()
    QApplication.processEvents()
    route, _transfer, block = panel._boxes
    assert block.halves.direction() == QBoxLayout.Direction.LeftToRight  # room enough, empty
    panel.counts.setPlainText('{"iga": 4, "dgm": 2}')
    qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
    for _ in range(3):
        QApplication.processEvents()
    for box in (block, route):
        assert box.halves.direction() == (QBoxLayout.Direction.LeftToRight
                                          if box.width() >= box.one_row_width() else
                                          QBoxLayout.Direction.TopToBottom)  # fmt: skip
    text = panel.block_text
    assert " .. " in text.text()  # the interval
    assert _shown_whole(text), text.text()  # all of it in sight
    assert text.geometry().right() < block.width()
    panel.cached.click()  # the answer goes: one row again
    QApplication.processEvents()
    assert block.halves.direction() == QBoxLayout.Direction.LeftToRight
    panel.close()


def test_counts_written_as_the_command_takes_them_are_answered_alike(main_window, qtbot,
                                                                     estimator):  # fmt: skip
    # 'iga=4,dgm=2', as `parasol-model block` and --chain take counts, said "counts:
    # Expecting value: line 1 column 1 (char 0)"
    EstimatorSettings(estimator.url).save(settings())
    panel = main_window.estimate
    answers = []
    for text in ('{"iga": 4, "dgm": 2}', "iga=4, dgm=2"):
        panel.counts.setPlainText(text)
        qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
        answers.append(panel.block_text.text())
    assert answers[0] == answers[1] and panel.message.text() == ""


def _shown_whole(label) -> bool:
    """All of a label's text is in its rectangle: on one line, or wrapped within it."""
    from PySide6.QtCore import QRect

    room = label.contentsRect()
    metrics = label.fontMetrics()
    if not label.wordWrap():
        return metrics.horizontalAdvance(label.text()) <= room.width()
    wrapped = metrics.boundingRect(QRect(0, 0, room.width(), 10**6),
                                   int(Qt.TextFlag.TextWordWrap), label.text())  # fmt: skip
    return wrapped.height() <= room.height()


def test_a_blocks_chains_and_working_set_are_asked_as_the_command_asks_them(
    main_window, qtbot, estimator, tmp_path
):
    """Issue 34's block from PIUI: a chain begun afresh and a working set, on the measured
    sample, answered as `parasol-model block --chain ... --working-set ...` answers (the
    bound and the memory level in the answer's words); bad chains and sizes refused in
    place before anything is asked."""
    import shutil
    from pathlib import Path

    from PySide6.QtWidgets import QApplication

    from parasol_core.analysis.block_time import answer_block
    from parasol_core.syntax.loader import load

    sample = Path(__file__).resolve().parents[2] / "sample_models" / "amd-epyc-host.machine"
    path = tmp_path / sample.name
    shutil.copy(sample, path)
    assert main_window.open_file(path)
    EstimatorSettings(estimator.url).save(settings())
    panel = main_window.estimate
    counts = {"loopoh1": 4096, "arr1": 8192, "dln": 4096, "dla": 4096}
    chain = {"dla": 4096, "starts": 64}
    want = answer_block(load(path), 1, counts, chains=[chain], working_set=8 << 20)
    panel.counts.setPlainText("loopoh1=4096, arr1=8192, dln=4096, dla=4096")
    assert not panel.chains.isVisibleTo(panel)  # a disclosure: the low dock keeps its height
    qtbot.mouseClick(panel.more, Qt.MouseButton.LeftButton)
    assert panel.chains.isVisibleTo(panel) and panel.working_set.isVisibleTo(panel)
    panel.chains.setPlainText("dla=4096,starts=64\n\n")
    _type(qtbot, panel.working_set, str(8 << 20))
    qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
    assert float(panel.block_text.text().split()[0]) == pytest.approx(want.estimate.mean, 1e-5)
    assert panel.block_text.text().endswith(", chain-bound") == (want.estimate.bound == "chain")
    # all of the answer in sight in a wide panel, the boxes side by side (the answer,
    # with its interval and bound, was cut at the edge of the box's third)
    panel.setParent(None)
    panel.resize(1030, 320)
    panel.show()
    for _ in range(3):
        QApplication.processEvents()
    assert _shown_whole(panel.block_text), panel.block_text.text()
    tip = panel.block_text.toolTip()
    assert f"Bound: {want.bound_words()}." in tip  # the command's bound: line
    assert "of its runs at once (the model's chain window)" in tip
    assert f"Memory level: {want.level_words()}." in tip
    asked = []
    exporter = main_window.exporter
    call = exporter.call
    exporter.call = lambda method, then: (asked.append(method), call(method, then))
    for field, text, why in (
        (panel.chains, "dla=10,starts=11", "chains: 'starts' in the chain must be from 0"),
        (panel.chains, "dla=1\nzzz=2", "chains: unknown timing parameter in chain 2: 'zzz'"),
        (panel.chains, "dla", "chains: expected OP=N"),
        (panel.working_set, "-1", "working set: '-1' is too small"),
        (panel.working_set, "8M", "working set: '8M' is not a number"),
    ):
        panel.chains.setPlainText("dla=4096,starts=64")
        _type(qtbot, panel.working_set, "4096")
        if field is panel.chains:
            field.setPlainText(text)
        else:
            _type(qtbot, field, text)
        assert panel.block_text.text() == ""  # the question changed: its answer went
        qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
        assert panel.message.text().startswith(why), (text, panel.message.text())
    qtbot.wait(100)
    assert asked == []
    # hidden again, they are no part of the question: the block alone is asked
    panel.chains.setPlainText("dla=4096,starts=64")
    qtbot.mouseClick(panel.more, Qt.MouseButton.LeftButton)
    assert not panel.chains.isVisibleTo(panel)
    qtbot.mouseClick(panel.block_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "±" in panel.block_text.text(), timeout=60_000)
    alone = answer_block(load(path), 1, counts)
    assert float(panel.block_text.text().split()[0]) == pytest.approx(alone.estimate.mean, 1e-5)
    assert "Bound:" not in panel.block_text.toolTip()


def test_the_blocks_fields_say_what_they_take_in_sight(main_window, qtbot):
    """The placeholders of the counts and chains (two lines each) are shown whole in a
    wide panel, the boxes side by side: the counts' third line ('"ils": 2}') was cut."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QApplication

    panel = main_window.estimate
    panel.setParent(None)
    panel.resize(1030, 320)
    panel.show()
    qtbot.mouseClick(panel.more, Qt.MouseButton.LeftButton)
    for _ in range(3):
        QApplication.processEvents()
    for field in (panel.counts, panel.chains):
        room = field.viewport().rect()
        margin = int(field.document().documentMargin())
        text = field.fontMetrics().boundingRect(
            QRect(0, 0, room.width() - 2 * margin, 10**6), int(Qt.TextFlag.TextWordWrap),
            field.placeholderText())  # fmt: skip
        assert text.height() + 2 * margin <= room.height(), field.placeholderText()


def test_tab_leaves_every_editable_text_field_of_every_panel(main_window, qtbot):
    """Tab moves to the next field from a multi-line field too: it typed a tab into the
    Basic block's counts, and the chains… button beside them could not be reached from
    the keyboard."""
    from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextEdit

    main_window.show()
    for name in list(main_window.panels):
        main_window.show_panel(name)
    fields = [f for p in main_window.panels.values() for kind in (QPlainTextEdit, QTextEdit)
              for f in p.findChildren(kind) if not f.isReadOnly()]  # fmt: skip
    assert {id(main_window.estimate.counts), id(main_window.estimate.chains)} <= {
        id(f) for f in fields}  # fmt: skip
    main_window.estimate.more.setChecked(True)
    for field in fields:
        field.setPlainText("dla=1")
        field.setFocus()
        QApplication.processEvents()
        qtbot.keyClick(field, Qt.Key.Key_Tab)
        assert field.toPlainText() == "dla=1", field.objectName() or type(field).__name__
        assert not field.hasFocus()
