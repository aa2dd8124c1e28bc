"""Issue 33, item 6: the docked terminal follows new messages — the newest in view —
unless the user scrolled up to read, until they scroll back to the bottom; also when
the messages came while its dock was behind another's tab."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QAbstractSlider, QApplication

log = logging.getLogger("piui")


def _bar(main_window):
    return main_window.terminal.text.verticalScrollBar()


def _newest_in_view(main_window) -> bool:
    text = main_window.terminal.text
    last = text.document().lastBlock()
    QApplication.processEvents()
    # the last line's place in the viewport: within it
    cursor = text.textCursor()
    cursor.setPosition(last.position())
    rect = text.cursorRect(cursor)
    return 0 <= rect.top() and rect.bottom() <= text.viewport().height() + 2


def _top_line(main_window) -> str:
    """The message at the top of the view: what the user is reading."""
    from PySide6.QtCore import QPoint

    text = main_window.terminal.text
    QApplication.processEvents()
    return text.cursorForPosition(QPoint(2, 2)).block().text()


def test_the_terminal_shows_each_new_message(main_window, qtbot):
    main_window.show_panel("terminal")
    qtbot.waitUntil(lambda: not main_window.docks["terminal"].visibleRegion().isEmpty())
    for n in range(120):
        log.info("message %d", n)
    QApplication.processEvents()
    bar = _bar(main_window)
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    assert main_window.terminal.lines()[-1].endswith("message 119")
    assert _newest_in_view(main_window)


def test_messages_that_came_behind_a_tab_are_in_view_when_it_is_shown(main_window, qtbot):
    main_window.show_panel("diagnostics")  # the terminal's tab behind it
    for n in range(150):
        log.warning("while hidden %d", n)
    main_window.show_panel("terminal")
    qtbot.waitUntil(lambda: not main_window.docks["terminal"].visibleRegion().isEmpty())
    bar = _bar(main_window)
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    assert _newest_in_view(main_window)


def test_scrolled_up_it_stays_put_and_at_the_bottom_it_follows_again(main_window, qtbot):
    main_window.show_panel("terminal")
    qtbot.waitUntil(lambda: not main_window.docks["terminal"].visibleRegion().isEmpty())
    for n in range(120):
        log.info("first %d", n)
    bar = _bar(main_window)
    bar.triggerAction(QAbstractSlider.SliderAction.SliderPageStepSub)  # the user reads
    QApplication.processEvents()
    kept = _top_line(main_window)
    assert bar.value() < bar.maximum() and not main_window.terminal.following
    for n in range(40):
        log.info("more %d", n)
    QApplication.processEvents()
    assert _top_line(main_window) == kept and bar.value() < bar.maximum()  # the page read
    assert not _newest_in_view(main_window)
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)  # back to the bottom
    QApplication.processEvents()
    log.error("the newest")
    QApplication.processEvents()
    assert main_window.terminal.following and bar.value() == bar.maximum()
    assert _newest_in_view(main_window)


def test_a_new_level_filter_shows_its_newest(main_window, qtbot):
    main_window.show_panel("terminal")
    for n in range(120):
        log.warning("w %d", n)
    bar = _bar(main_window)
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)
    main_window.terminal.set_threshold(logging.WARNING)
    QApplication.processEvents()
    assert bar.value() == bar.maximum() and _newest_in_view(main_window)


def test_the_wheel_up_stops_following_and_the_text_edit_moving_its_bar_does_not(
        main_window, qtbot):  # fmt: skip
    """Only the user's scrolling decides: the text edit sets its bar short of the end
    as it lays text out (a dock shown from behind a tab), which is not reading."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent

    main_window.show_panel("terminal")
    qtbot.waitUntil(lambda: not main_window.docks["terminal"].visibleRegion().isEmpty())
    for n in range(120):
        log.info("line %d", n)
    bar = _bar(main_window)
    bar.setValue(bar.maximum() - 3)  # as the text edit does when it relays its text
    log.info("after the relayout")
    QApplication.processEvents()
    assert main_window.terminal.following and bar.value() == bar.maximum()
    viewport = main_window.terminal.text.viewport()
    centre = QPointF(viewport.rect().center())
    wheel = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)  # fmt: skip
    QApplication.sendEvent(viewport, wheel)  # the wheel, up: the user reads
    QApplication.processEvents()
    assert not main_window.terminal.following
    kept = _top_line(main_window)
    log.info("while reading")
    QApplication.processEvents()
    assert _top_line(main_window) == kept and not _newest_in_view(main_window)
