"""Issue 33, item 5: the default layout shows the work.

View > Layout offers a named layout for each of the three jobs (processors what-if,
topology and mapping, estimating), each with its shortcut. Each shows its windows on
screen at once, none behind another's tab, at 1280 x 800 and at 1920 x 1080; the first
run is maximised in the first; a saved layout of another version starts from it. The
grid view's Fit fits what is visible and its words are in view, and a floating dock is
a window of its own (minimised, it goes alone).

The signal tests switch the layouts at several moments — before the window is shown,
after another model is opened, after an edit and its undo, after a new blank model — and
check that every window a layout brings to the front shows the model on screen then, and
that no window holds an object of a model no longer open."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from conftest import SAMPLES
from PySide6.QtCore import QByteArray, QEvent, QObject, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QScrollArea, QTabBar

from parasol_core.frontend import layouts
from parasol_core.model import Machine, Processor, Topology, VirtualTopology
from piui.widgets.labels import processor_title, value_text

SCREENS = [(1280, 800), (1920, 1080)]
KEYS = [named.key for named in layouts.LAYOUTS]


def settle(qtbot, window) -> None:
    for _ in range(4):
        QApplication.processEvents()
        qtbot.wait(15)


def choose(window, key: str) -> None:
    """View > Layout > …, as a user picks it."""
    (action,) = [a for a in window.layout_menu.actions() if a is window.layout_actions[key]]
    action.trigger()


def on_screen(window, key: str) -> bool:
    """A dock in the window, shown, and not behind another's tab."""
    dock = window.docks[key]
    return dock.isVisible() and not dock.isFloating() and not dock.visibleRegion().isEmpty()


# ---------------------------------------------------------------------- each layout


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("key", KEYS)
def test_each_layout_shows_its_windows_side_by_side(main_window, qtbot, key, size):
    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    main_window.resize(*size)
    choose(main_window, key)
    settle(qtbot, main_window)
    named = layouts.layout(key)
    front = named.front()
    for k in front:
        assert on_screen(main_window, k), (key, k)
        assert main_window.panels.is_built(k) and main_window.panels[k].isVisible(), (key, k)
    rects = {k: main_window.docks[k].geometry() for k in front}
    for a in front:  # side by side: none over another
        for b in front:
            if a < b:
                assert not rects[a].intersects(rects[b]), (key, a, b, rects[a], rects[b])
    for k in named.hidden():
        assert not main_window.docks[k].isVisible(), (key, k)
    for k in set(named.shown()) - set(front):  # the others are tabs behind the fronts
        assert main_window.docks[k].isVisible() and main_window.docks[k].visibleRegion().isEmpty()
    assert main_window.width() == size[0] and main_window.layout_key == key
    # the window is not wider or taller than the screen it was made for
    hint = main_window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 800, (key, hint)


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_what_if_layout_has_the_scalers_and_the_ratios_side_by_side(main_window, qtbot,
                                                                         size):  # fmt: skip
    main_window.resize(*size)
    choose(main_window, "what-if")
    settle(qtbot, main_window)
    groups, combinations = main_window.docks["groups"], main_window.docks["combinations"]
    assert groups.geometry().right() < combinations.geometry().left()
    assert abs(groups.geometry().top() - combinations.geometry().top()) < 4
    window = main_window.panels["groups"]
    shown = [r for r in window.rows.values() if not r.slider.visibleRegion().isEmpty()]
    assert len(shown) >= 12, len(shown)  # not one slider: most of them in view
    # the combinations' values in view while a slider is dragged
    table = main_window.panels["combinations"].table
    assert not table.visibleRegion().isEmpty()


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("key", ["topology", "estimating"])
def test_the_grid_view_fits_what_is_visible_and_its_words_are_in_view(main_window, qtbot, key,
                                                                       size):  # fmt: skip
    assert main_window.open_file(SAMPLES / "grid4x4.machine")
    main_window.resize(*size)
    choose(main_window, key)
    settle(qtbot, main_window)
    grid = main_window.panels["grid-view"]
    assert not isinstance(main_window.docks["grid-view"].widget(), QScrollArea)
    canvas = grid.canvas
    shown = canvas.visibleRegion().boundingRect()
    for p in range(1, 17):  # all four rows of the 4 x 4 grid, in what is visible
        assert shown.contains(canvas.screen_point(p).toPoint()), p
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=canvas.screen_point(1).toPoint())
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=canvas.screen_point(16).toPoint())
    assert grid.info.text().startswith("Route 1 → 16")
    info = grid.info.visibleRegion().boundingRect()  # the route's words, not below the fold
    assert info.height() >= grid.info.fontMetrics().height() and info.width() > 100


def test_fit_fits_the_part_of_the_view_that_is_visible(qtbot):
    """A view in a scroll area that shows only its top (as a short dock did): Fit puts
    every processor in the part on screen, not in the whole canvas."""
    from piui.document import Document
    from piui.windows.grid_view import GridViewWindow

    doc = Document()
    doc.open(SAMPLES / "grid4x4.machine")
    grid = GridViewWindow(doc)
    scroll = QScrollArea()
    scroll.setWidget(grid)
    scroll.setWidgetResizable(True)
    qtbot.addWidget(scroll)
    grid.setMinimumHeight(700)
    scroll.resize(500, 380)
    scroll.show()
    qtbot.waitExposed(scroll)
    canvas = grid.canvas
    shown = canvas.visibleRegion().boundingRect()
    assert shown.height() < canvas.height()  # the canvas runs below the fold
    canvas.fit()
    for p in range(1, 17):
        assert shown.contains(canvas.screen_point(p).toPoint()), p


# ---------------------------------------------------------------------- shortcuts, menu


def test_the_layouts_are_in_the_view_menu_with_their_shortcuts(main_window, qtbot):
    qtbot.waitExposed(main_window)
    titles = [a.text() for a in main_window.layout_menu.actions()]
    assert titles == [named.title for named in layouts.LAYOUTS]
    for named in reversed(layouts.LAYOUTS):
        action = main_window.layout_actions[named.key]
        assert action.shortcut().toString() == named.shortcut
        assert action.shortcutContext() == Qt.ShortcutContext.ApplicationShortcut
        combo = action.shortcut()[0]
        QTest.keyClick(QApplication.focusWidget() or main_window, combo.key(),
                       combo.keyboardModifiers())  # fmt: skip
        settle(qtbot, main_window)
        assert main_window.layout_key == named.key
        assert all(on_screen(main_window, k) for k in named.front())


def test_every_window_has_a_place_in_every_layout(main_window):
    for named in layouts.LAYOUTS:
        assert named.problems(list(main_window.docks)) == []


class _LayoutWork(QObject):
    """Counts the layout passes of ``window`` and the shows and hides of its tab bars."""

    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.events: list[str] = []

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if obj is self.window and kind == QEvent.Type.LayoutRequest:
            self.events.append("layout")
        elif isinstance(obj, QTabBar) and obj.parent() is self.window and kind in (
                QEvent.Type.Show, QEvent.Type.Hide):  # fmt: skip
            self.events.append(f"{kind.name} {[obj.tabText(i) for i in range(obj.count())]}")
        return False


def _idle_work(qtbot, window) -> list[str]:
    """What the window does while nobody touches it, once it has settled."""
    settle(qtbot, window)
    qtbot.wait(100)
    work = _LayoutWork(window)
    QApplication.instance().installEventFilter(work)
    try:
        for _ in range(10):
            QApplication.processEvents()
            qtbot.wait(20)
    finally:
        QApplication.instance().removeEventFilter(work)
    return work.events


def test_an_idle_window_lays_nothing_out_in_any_layout(qtbot):
    """A window nobody touches does no work: hiding a tab bar Qt keeps on show (a spare
    one, outside the window) asked for another layout, which showed it again, without
    end: PIUI took a whole core while idle."""
    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: None
    window.show_at_start()  # the first run, as `piui` starts
    qtbot.waitExposed(window)
    assert _idle_work(qtbot, window) == [], "the first run"
    for key in KEYS:
        choose(window, key)
        assert _idle_work(qtbot, window) == [], key


# ---------------------------------------------------------------------- first run, saved


def test_the_first_run_is_maximised_in_the_what_if_layout(qtbot):
    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: None
    assert window.first_run
    window.show_at_start()  # what `piui` does
    qtbot.waitExposed(window)
    qtbot.waitUntil(window.isMaximized)
    settle(qtbot, window)
    assert window.layout_key == layouts.DEFAULT.key == "what-if"
    assert all(on_screen(window, k) for k in layouts.DEFAULT.front())


def test_the_next_start_is_as_the_user_left_it(qtbot):
    from piui.main_window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.ask_save_changes = lambda: None
    first.show()
    first.apply_layout("topology")
    settle(qtbot, first)
    first.docks["link-groups"].setFloating(True)  # the user's own arrangement
    settle(qtbot, first)
    first.close()
    again = MainWindow()
    qtbot.addWidget(again)
    again.ask_save_changes = lambda: None
    assert not again.first_run
    again.show_at_start()
    settle(qtbot, again)
    assert not again.isMaximized() and again.layout_key is None
    assert again.docks["link-groups"].isFloating()
    assert all(on_screen(again, k) for k in ["grid-view", "topology-editor", "mapping-editor"])


@pytest.mark.parametrize("saved_by", ["older PIUI", "other version", "not a state"])
def test_a_saved_layout_of_another_version_starts_from_the_default(qtbot, saved_by):
    """Saved layouts do not break: one PIUI cannot restore (docks added since, the
    layouts redesigned) is not half restored: the default layout, maximised."""
    import zlib

    from piui.app_settings import settings
    from piui.main_window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.docks["cache"].setFloating(True)  # something a wrong restore would show
    first.apply_layout("estimating")
    if saved_by == "older PIUI":  # the version before the named layouts: dock names only
        version = zlib.crc32(",".join(sorted(first.docks)).encode()) & 0x7FFFFFFF
        state = first.saveState(version)
    elif saved_by == "other version":
        state = first.saveState(first.layout_version() + 1)
    else:
        state = QByteArray(b"\x00\x01garbage")
    s = settings()
    s.setValue("geometry", first.saveGeometry())
    s.setValue("windowState", state)
    s.sync()
    again = MainWindow()
    qtbot.addWidget(again)
    again.ask_save_changes = lambda: None
    assert again.first_run
    again.show_at_start()
    qtbot.waitUntil(again.isMaximized)
    settle(qtbot, again)
    assert again.layout_key == "what-if"
    assert all(on_screen(again, k) for k in layouts.WHAT_IF.front())
    assert not again.docks["cache"].isFloating()


def test_a_layout_kept_until_the_user_moves_a_dock(main_window, qtbot):
    choose(main_window, "topology")
    settle(qtbot, main_window)
    main_window.resize(1600, 900)  # the layout keeps its proportions as the window grows
    settle(qtbot, main_window)
    width = main_window.docks["grid-view"].width()
    assert width >= 0.38 * 1600 - 40
    main_window.docks["link-groups"].setFloating(True)  # the user's own arrangement now
    assert main_window.layout_key is None
    choose(main_window, "topology")  # a layout docks a floating window again
    settle(qtbot, main_window)
    assert not main_window.docks["link-groups"].isFloating()
    assert main_window.layout_key == "topology"


# ---------------------------------------------------------------------- floating docks


def test_a_floating_dock_is_a_window_of_its_own(main_window, qtbot):
    """Minimising a floating dock minimised the main window (it was transient for it)."""
    qtbot.waitExposed(main_window)
    dock = main_window.docks["combinations"]
    dock.setFloating(True)
    qtbot.waitUntil(dock.isVisible)
    assert dock.windowHandle().transientParent() is None
    dock.showMinimized()
    qtbot.waitUntil(dock.isMinimized)
    assert not main_window.isMinimized()
    # its View key brings it back (a minimised window does not have the keyboard, even
    # if the window manager left it the active one: the key does not hide it)
    sequence = next(a for a in main_window.view_menu.actions()
                    if a.text() == dock.windowTitle()).shortcut()  # fmt: skip
    assert not main_window.panel_has_focus("combinations")
    QTest.keyClick(main_window, sequence[0].key(), sequence[0].keyboardModifiers())
    qtbot.waitUntil(lambda: not dock.isMinimized())
    assert dock.isVisible() and dock.isFloating()


# ---------------------------------------------------------------------- signals, moments


def _shows_the_model(window, key: str) -> str:
    """Why the panel ``key`` does not show the model on screen ("" when it does)."""
    doc = window.document
    machine = doc.machine
    panel = window.panels[key]
    hw = machine.hardware()
    if key in ("groups", "instructions", "cache"):
        want = processor_title(doc.current_processor())
        return "" if panel.title.text() == want else f"title {panel.title.text()!r}, not {want!r}"
    if key == "combinations":
        if panel.processor_box.currentData() != doc.current_processor_id:
            return "another processor type"
        for name, row in panel.rows.items():
            k = panel.key(name)
            shown, want = row.value.text(), value_text(doc.engine.value(k)) if k else ""
            if k is not None and panel.expression(name) is not None and shown != want:
                return f"{name} = {shown}, not {want}"
        return ""
    if key == "grid-view":
        return "" if panel.canvas.topology is hw else "another topology"
    if key == "topology-editor":
        want = hw.name or "" if hw is not None else ""
        return "" if panel.name_edit.text() == want else f"name {panel.name_edit.text()!r}"
    if key == "mapping-editor":
        ids = [panel.virtual_box.itemData(i) for i in range(panel.virtual_box.count())]
        ids = [i for i in ids if i is not None]
        return "" if ids == [v.id for v in machine.virtuals] else f"virtuals {ids}"
    if key == "estimate":
        return "" if doc.title() in panel.model_label.text() else panel.model_label.text()
    if key == "runtime":
        page = panel.tabs.currentWidget()
        for name, row in page.rows.items():
            text = page.system.expression_text(machine, name) or ""
            if row.edit.model_text() != text:
                return f"{name}: {row.edit.model_text()!r}, not {text!r}"
        return ""
    if key == "processors":
        return "" if panel.list.count() == len(machine.processors) else "other processors"
    return ""


def _objects_of(machine: Machine) -> dict[int, str]:
    """The objects of a model a window could hold, by id."""
    found = {id(machine): "the machine"}
    for p in machine.processors:
        found[id(p)] = f"processor type {p.id}"
    for t in machine.topologies:
        found[id(t)] = f"topology {t.id}"
    return found


def _holders(window, gone: dict[int, str]) -> list[str]:
    """Where the windows' Python objects still hold one of ``gone``."""
    from PySide6.QtCore import QObject

    out: list[str] = []
    seen: set[int] = set()

    def walk(value, path: str, depth: int) -> None:
        if id(value) in gone:
            out.append(f"{path}: {gone[id(value)]}")
            return
        if depth > 4 or id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, dict):
            for k, v in list(value.items())[:200]:
                walk(v, f"{path}[{k!r}]", depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for i, v in enumerate(list(value)[:200]):
                walk(v, f"{path}[{i}]", depth + 1)
        elif isinstance(value, (QObject, Processor, Topology, VirtualTopology)) or hasattr(
                value, "__dict__") and type(value).__module__.startswith("piui"):  # fmt: skip
            for name, v in list(getattr(value, "__dict__", {}).items()):
                if name != "document":
                    walk(v, f"{path}.{name}", depth + 1)

    for key in window.docks:
        if window.panels.is_built(key):
            panel = window.panels[key]
            walk(panel, key, 0)
            for child in panel.findChildren(QObject):
                walk(child, f"{key}/{type(child).__name__}", 1)
    return out


MOMENTS = ["before the window is shown", "after opening another model",
           "after an edit and its undo", "after a new blank model", "after a reload"]  # fmt: skip


@pytest.mark.parametrize("key", KEYS)
def test_a_layout_chosen_at_any_moment_shows_the_model_on_screen(qtbot, sample_copy, key):
    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.errors = []
    window.show_error = lambda title, text, source="": window.errors.append((title, text))
    window.confirm = lambda title, text, details: True
    assert window.open_file(sample_copy("parsytec-gcel.machine"))
    order = [k for k in KEYS if k != key] + [key]  # every layout once, this one last
    for moment in MOMENTS:
        before = window.document.machine
        if moment == "before the window is shown":
            pass
        elif moment == "after opening another model":
            window.show()
            assert window.open_file(sample_copy("grid4x4.machine"))
        elif moment == "after an edit and its undo":
            proc = window.document.current_processor()
            window.document.session.set(f"pt({proc.id}).iga", "3.5e-6")
            window.document.undo_stack.undo()
            window.document.session.set(f"pt({proc.id}).ild", "2.5e-6")
        elif moment == "after a new blank model":
            window.new_blank()
        else:
            assert window.open_file(sample_copy("fwi-csys.machine"))
            assert window.reload_from_disk()
        for each in order:
            window.apply_layout(each)
            settle(qtbot, window)
            for k in layouts.layout(each).front():
                why = _shows_the_model(window, k)
                assert not why, (moment, each, k, why)
        if window.document.machine is not before:
            gc.collect()
            held = _holders(window, _objects_of(before))
            assert not held, (moment, held[:5])


def test_a_window_built_by_a_layout_after_edits_shows_them(qtbot, sample_copy):
    """A window first shown by a layout is built from the model as it is then, and
    follows it: the estimating layout builds the Estimate and the run-time windows."""
    from piui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    assert window.open_file(sample_copy("fwi-csys.machine"))
    window.show()
    assert not window.panels.is_built("runtime") and not window.panels.is_built("grid-view")
    window.document.session.set("pt(1).iga", "4.5e-6")
    assert window.open_file(sample_copy("grid4x4.machine"))
    choose(window, "estimating")
    settle(qtbot, window)
    for k in layouts.ESTIMATING.front():
        assert window.panels.is_built(k)
        assert not _shows_the_model(window, k), k
    window.document.session.set_expression("pv.send", "tl(1)(1).latency + ar.bytes * 2e-9")
    settle(qtbot, window)
    assert not _shows_the_model(window, "runtime")
    assert Path(window.document.path).name == "grid4x4.machine"
