"""The main window ("Machine Model"): menus, the overview, and every other window as a
dock that can be shown, hidden, moved, or floated as a window of its own."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QIcon,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from parasol_core.base.diagnostics import Diagnostic, ModelSyntaxError
from parasol_core.base.words import counted
from parasol_core.frontend import layouts
from parasol_core.model import EXPRESSION_SECTIONS
from parasol_core.session import disk, recovery
from parasol_core.session.session import FileChangedOnDisk
from piui.app_settings import settings
from piui.disk_watch import DiskWatcher
from piui.document import Document
from piui.export import EstimatorSettings, Exporter, ExportResult
from piui.widgets import wheel_guard, window_titles
from piui.widgets.busy import busy
from piui.widgets.deferred import after_first_paint, watch_dock
from piui.widgets.file_bar import FileChangedBar
from piui.widgets.scrolling import in_scroll_area
from piui.widgets.status_messages import confirm, error_box, place_on_screen
from piui.widgets.undo_keys import UndoKeysFallThrough
from piui.windows.diagnostics import DiagnosticsPanel
from piui.windows.overview import MachineOverview
from piui.windows.processor_master import ProcessorMaster
from piui.windows.terminal import TerminalHandler, TerminalWindow

if TYPE_CHECKING:
    from parasol_core.estimator.local import LocalEstimator
    from piui.windows.estimate import EstimatePanel

log = logging.getLogger("piui")

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "sample_models"
MAX_RECENT = 10
LEFT_DOCK_WIDTH = 260
RIGHT_DOCK_WIDTH = 560
# File > Export to file…'s dialog: a copy is written, the open file stays the one edited
EXPORT_TITLE = "Export a copy of the model"
# A saved dock layout is restored only into the same docks and the same scheme of named
# layouts (corners, columns): a state saved by a PIUI of another scheme starts from the
# default layout (View > Layout), as on the first run. Change it with the scheme.
LAYOUT_SCHEME = 2

SHORTCUTS = [
    ("Ctrl+N", "New model from the Parsytec GCel sample"),
    ("Ctrl+Alt+N", "New blank model (one processor type, one processor)"),
    ("Ctrl+O", "Open a model"),
    ("Ctrl+Shift+O", "Open a program trace: predict its run on the model (Program window)"),
    ("Ctrl+S", "Save"),
    ("Ctrl+Shift+S", "Save as"),
    ("Ctrl+Z", "Undo (a whole slider drag is one step)"),
    ("Ctrl+Shift+Z / Ctrl+Y", "Redo"),
    ("Ctrl+H", "History: the undo steps by name; click one to undo or redo to it"),
    ("Ctrl+1 … Ctrl+9", "Show a dock, in View-menu order (processor master, instruction "
     "groups, individual instructions, cache, combinations, run-time systems, …), and put "
     "the keyboard in it, a floating one raised; again, with the keyboard in it, hide it"),
    ("Ctrl+Alt+1 … Ctrl+Alt+4", "View > Layout: processors what-if (scalers and "
     "combinations side by side), topology and mapping, estimating, a program's "
     "what-if (the Program window below the scalers)"),
    ("Ctrl+Shift+E", "Export the model to the estimator"),
    ("Ctrl+Shift+I", "Import a SimGrid platform as a new model"),
    ("Ctrl+,", "Preferences (which estimator Export pushes to)"),
    ("Ctrl+Q", "Quit"),
    ("Arrow keys, Page Up/Down", "Move a focused slider one step / one page"),
    ("Enter", "Apply a typed value; in the topology generator, preview; in the Estimate "
     "panel, ask the route or the transfer time"),
    ("Ctrl+Return", "File > Sweep…: Run; File > Measure this machine…: Measure; the "
     "Estimate panel: Estimate block"),
    ("Esc", "Put back the model's text over an expression being typed; in an instruction "
     "category window, over a value being typed, then close the window; in File > "
     "Sweep… or Measure this machine…, cancel the run under way (the window stays, "
     "saying so), then close the window"),
    ("Ctrl+W", "Close an instruction category window, File > Sweep… or Measure this "
     "machine… (asking first while a run is under way)"),
]  # fmt: skip


# A panel taller than this scrolls in its dock instead of making the main window taller
# than a laptop's screen (docks stack their minimum heights).
TALL_PANEL = 200


def _scrolling(widget: QWidget) -> QWidget:
    """The panel, in a scroll area if it is tall; not a view that zooms (the grid view,
    ``ZOOMS``): scrolled as a whole, its picture was fitted to the part out of sight and
    the words under it were below the fold; it shrinks instead."""
    if widget.minimumSizeHint().height() <= TALL_PANEL or getattr(widget, "ZOOMS", False):
        return widget
    return in_scroll_area(widget)


def _history_panel(document: Document) -> QWidget:
    from piui.windows.history import HistoryPanel

    return HistoryPanel(document)


def _focus_inside(panel: QWidget) -> None:
    """Give the keyboard focus to a panel: to the first control of it that takes Tab
    (a panel of labels and controls takes none itself), else to the panel."""
    if panel.focusPolicy() & Qt.FocusPolicy.TabFocus:
        panel.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return
    widget = panel.nextInFocusChain()
    while widget is not None and widget is not panel and panel.isAncestorOf(widget):
        if (widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.isEnabled()
                and widget.isVisibleTo(panel)):  # fmt: skip
            widget.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return
        widget = widget.nextInFocusChain()
    panel.setFocus(Qt.FocusReason.ShortcutFocusReason)


class Panels(MutableMapping[str, QWidget]):
    """The main window's panels by key, in the order they were docked. A panel whose
    dock has not been on screen yet is built when it is first asked for."""

    def __init__(self, build: Callable[[str], QWidget]) -> None:
        self._widgets: dict[str, QWidget | None] = {}  # None: not built yet
        self._build = build

    def wait(self, key: str) -> None:
        """``key`` is a panel to build when first needed."""
        self._widgets[key] = None

    def is_built(self, key: str) -> bool:
        return self._widgets.get(key) is not None

    def __getitem__(self, key: str) -> QWidget:
        widget = self._widgets[key]
        return self._build(key) if widget is None else widget

    def __setitem__(self, key: str, widget: QWidget) -> None:
        self._widgets[key] = widget

    def __delitem__(self, key: str) -> None:
        del self._widgets[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._widgets)

    def __len__(self) -> int:
        return len(self._widgets)


def _distance(bar: QWidget, docks: QRect) -> int:
    """How far a tab bar is from where a tab group's bar belongs (under its docks)."""
    return abs(bar.geometry().top() - docks.bottom()) + abs(bar.geometry().left() - docks.left())


def saved_version(state: QByteArray) -> int | None:
    """The version a QMainWindow.saveState() was given (its header: a marker, then the
    version), or None for what is not such a state."""
    import struct

    raw = bytes(state.data())
    if len(raw) < 8:
        return None
    marker, version = struct.unpack(">ii", raw[:8])
    return version if marker == 0xFF else None


class FloatingWindows(QObject):
    """A floating dock is a window of its own: minimised, it goes alone. Qt shows it as
    a tool window transient for the main window, and window managers minimise such a
    window with the one it belongs to (openbox took the main window down with it). As
    each dock is shown floating (dragged out, floated, restored floating), before it is
    mapped, it is made transient for nothing (Qt then names the application's group)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QDockWidget) and (
                watched.isFloating()):  # fmt: skip
            handle = watched.windowHandle()
            if handle is not None and handle.transientParent() is not None:
                handle.setTransientParent(None)
        return False


class MainWindow(QMainWindow):
    def __init__(self, document: Document | None = None, handler: TerminalHandler | None = None,
                 ) -> None:  # fmt: skip
        super().__init__()
        self.resize(1280, 820)  # before the docks, so they are laid out once, at this size
        self.document = document or Document(self)
        self.setObjectName("MainWindow")
        from piui.resources import ICON

        self.setWindowIcon(QIcon(str(ICON)))
        self.handler = handler or TerminalHandler()
        if handler is None:
            for name in ("piui", "parasol_core"):
                logger = logging.getLogger(name)
                logger.addHandler(self.handler)
                if logger.level == logging.NOTSET or logger.level > logging.INFO:
                    logger.setLevel(logging.DEBUG)
        self.docks: dict[str, QDockWidget] = {}
        self._floating_windows = FloatingWindows(self)
        self.layout_key: str | None = None  # the named layout on screen, as it was put
        self._arranging = True  # PIUI places the docks, not the user (as it makes them)
        self._sizing = False  # a resize of the layout's docks is due
        self.first_run = True  # no saved layout was restored: maximised at start
        self._clean_bars: set = set()  # the dock tab bars on show when last cleaned
        self.panels = Panels(self._build_panel)
        self._factories: dict[str, Callable[[Document], QWidget]] = {}  # panels not built
        self._groups: dict[str, list[QDockWidget]] = {}  # named tab groups (registry)
        self._grouped: set[str] = set()

        self.overview = MachineOverview(self.document)
        self.file_bar = FileChangedBar()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.file_bar)
        column.addWidget(self.overview, 1)
        self.setCentralWidget(central)
        self.processor_master = ProcessorMaster(self.document)
        self.diagnostics = DiagnosticsPanel(self.document)
        self.terminal = TerminalWindow(self.handler)
        self.add_panel("processors", "Processor master", self.processor_master,
                       Qt.DockWidgetArea.LeftDockWidgetArea)  # fmt: skip
        for key, title, factory, area in self.panel_factories():
            self.add_lazy_panel(key, title, factory, area)
        # Export and the estimator it pushes to (Preferences say which)
        self.local_estimator: LocalEstimator | None = None
        self.measure_dialog: QWidget | None = None  # File > Measure this machine…
        self.sweep_dialog: QWidget | None = None  # File > Sweep…
        self.document.sweepRequested.connect(self.sweep_axis)  # a window's "Sweep …"
        self._stopped_by_signal = False  # closing without a question (stop_by_signal)
        self.carry_notes: QMessageBox | None = None  # what a SimGrid import/export left out
        self.exporter = Exporter(self.document, self.estimator_settings, self)
        self.exporter.started.connect(self._export_started)
        self.exporter.finished.connect(self._export_finished)
        after_first_paint(self, self.exporter.preload)
        # the wheel's rule, for every control of every panel (after the paint: its cost)
        after_first_paint(self, wheel_guard.install)
        after_first_paint(self, window_titles.install)  # every dialog's title in full
        self.estimate_panel_area = Qt.DockWidgetArea.BottomDockWidgetArea
        self.add_panel("diagnostics", "Diagnostics", self.diagnostics,
                       Qt.DockWidgetArea.BottomDockWidgetArea)  # fmt: skip
        self.add_panel(
            "terminal", "Terminal", self.terminal, Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self.add_lazy_panel("estimate", "Estimate", self._estimate_panel, self.estimate_panel_area)
        self.add_lazy_panel("history", "History", _history_panel,
                            Qt.DockWidgetArea.BottomDockWidgetArea)  # fmt: skip
        self.apply_layout(layouts.DEFAULT.key)
        # The panels in front are built now, so that the first layout is made with them;
        # those behind them, or closed, are built when their docks are first shown.
        for key, dock in self.docks.items():
            if key in self._factories and not dock.isHidden() and (
                    key in layouts.DEFAULT.front() or not self.tabifiedDockWidgets(dock)):  # fmt: skip
                self._build_panel(key)

        # dialogs, replaceable so tests can answer them
        self.ask_save_changes: Callable[[], QMessageBox.StandardButton] = self._ask_save_changes
        self.show_diff: Callable[[str, str], None] = self._show_diff  # tests answer it
        self.ask_open_path: Callable[[], str] = self._ask_open_path
        self.ask_save_path: Callable[[], str] = self._ask_save_path
        self.ask_export_path: Callable[[], str] = lambda: self._ask_save_path(EXPORT_TITLE)
        self.ask_platform_path: Callable[[bool], str] = self._ask_platform_path
        self.show_error: Callable[..., None] = self._show_error
        self.show_information: Callable[[str, str], None] = self._show_information
        from PySide6.QtGui import QDesktopServices

        self.open_url: Callable[..., bool] = QDesktopServices.openUrl  # Help > Documentation
        self.ask_overwrite_changed: Callable[[Path], bool] = self._ask_overwrite_changed
        # a copy of unsaved edits found: recovery.RESTORE, KEEP or DISCARD
        self.ask_restore: Callable[[recovery.Copy], str] = self._ask_restore
        # a model, a SimGrid platform or a program trace dropped on the window opens
        self.setAcceptDrops(True)
        self.confirm: Callable[[str, str, list[str]], bool] = lambda title, text, details: confirm(
            self, title, text, details
        )

        self._build_menus()
        self.processor_master.openRequested.connect(self.show_panel)
        self.overview.processorActivated.connect(self._processor_activated)
        self.overview.topologyActivated.connect(self._topology_activated)
        self.diagnostics.activated.connect(self.go_to)
        self.document.undo_stack.cleanChanged.connect(self._update_title)
        self.document.pathChanged.connect(self._update_title)
        self.document.modelReset.connect(self._update_title)
        self.document.modelReset.connect(self._close_carry_notes)  # about the model before
        self.disk_watcher = DiskWatcher(self.document, self)
        self.disk_watcher.statusChanged.connect(self._disk_status_changed)
        self.document.undo_stack.cleanChanged.connect(
            lambda _clean: self.file_bar.isVisible() and self._show_disk_status()
        )
        self.file_bar.reloadRequested.connect(self.reload_from_disk)
        self.file_bar.diffRequested.connect(self.show_difference)
        self.file_bar.saveRequested.connect(self.save)
        self.resize(1280, 820)
        self._restore_settings()
        self._update_title()

    # ---- panels

    def panel_factories(self) -> list[tuple[str, str, Callable, Qt.DockWidgetArea | str]]:
        """The windows beyond the fixed ones, as (key, title, factory, area)."""
        from piui.windows import registry

        return registry.panels()

    @property
    def estimate(self) -> EstimatePanel:
        """The Estimate panel (built when its dock is first shown or it is asked for)."""
        return self.panels["estimate"]

    def _estimate_panel(self, _document: Document) -> EstimatePanel:
        from piui.windows.estimate import EstimatePanel

        return EstimatePanel(self.exporter)

    def add_panel(self, key: str, title: str, widget: QWidget, area: Qt.DockWidgetArea | str,
                  ) -> QDockWidget:  # fmt: skip
        """Dock a panel. ``area`` is a dock area (panels sharing one share a tab group)
        or the name of a tab group of its own, split off below the right area's."""
        dock = self._dock(key, title, _scrolling(widget), area)
        self.panels[key] = widget
        self._tell_when_shown(dock, widget)
        return dock

    def add_lazy_panel(self, key: str, title: str, factory: Callable[[Document], QWidget],
                       area: Qt.DockWidgetArea | str) -> QDockWidget:  # fmt: skip
        """Dock a panel that is built (``factory(document)``) when its dock is first
        shown or the panel is first asked for (``panels[key]``)."""
        dock = self._dock(key, title, QWidget(), area)
        self._factories[key] = factory
        self.panels.wait(key)
        dock.visibilityChanged.connect(
            lambda visible, k=key: visible and k in self._factories and self._build_panel(k)
        )
        return dock

    def _build_panel(self, key: str) -> QWidget:
        factory = self._factories.pop(key)
        widget = factory(self.document)
        self.panels[key] = widget
        dock = self.docks[key]
        placeholder = dock.widget()
        dock.setWidget(_scrolling(widget))
        if placeholder is not None:
            placeholder.deleteLater()
        self._tell_when_shown(dock, widget)
        return widget

    @staticmethod
    def _tell_when_shown(dock: QDockWidget, widget: QWidget) -> None:
        """A panel that puts off work behind a tab (see widgets.deferred.on_screen) hears
        when its tab is chosen: Qt shows no new showEvent for that."""
        shown = getattr(widget, "dock_shown", None)
        if shown is not None:
            # after the tab switch has laid the dock out (its visible region is known)
            dock.visibilityChanged.connect(
                lambda visible: visible and QTimer.singleShot(0, widget, shown)
            )

    def _dock(self, key: str, title: str, content: QWidget, area: Qt.DockWidgetArea | str,
              ) -> QDockWidget:  # fmt: skip
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{key}")
        watch_dock(dock)
        dock.installEventFilter(self._floating_windows)
        # the user moving or floating a dock makes the layout theirs (not resized again)
        dock.topLevelChanged.connect(self._docks_moved)
        dock.dockLocationChanged.connect(self._docks_moved)
        dock.setWidget(content)
        if isinstance(area, str):
            group = self._groups.setdefault(area, [])
            if group:
                self.tabifyDockWidget(group[-1], dock)
            else:  # a new item of the right area, below what is there (splitDockWidget
                # would only add a tab to a dock that is already in a tab group)
                self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock,
                                   Qt.Orientation.Vertical)  # fmt: skip
            group.append(dock)
            self._grouped.add(key)
            self.docks[key] = dock
            return dock
        # Panels sharing an area share one tab group; tabifying as each is added (rather
        # than stacking them first) leaves no stray tab bar behind.
        same_area = [d for k, d in self.docks.items()
                     if self.dockWidgetArea(d) == area and k not in self._grouped]  # fmt: skip
        if same_area and area != Qt.DockWidgetArea.LeftDockWidgetArea:
            self.tabifyDockWidget(same_area[-1], dock)
        else:
            self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def extra_windows(self) -> list[tuple[str, QWidget]]:
        """Top-level windows the panels open (for screenshots)."""
        out: list[tuple[str, QWidget]] = []
        for panel in self.panels.values():
            out.extend(getattr(panel, "extra_windows", lambda: [])())
        return out

    def show_panel(self, key: str) -> None:
        """Bring a panel in front and give it the keyboard focus: its dock shown, its
        tab chosen; a floating dock raised and its window made the active one."""
        dock = self.docks[key]
        if not dock.isVisible() and not dock.isFloating():
            # shown into a place where nothing else may be on show: room once laid out
            QTimer.singleShot(0, lambda: self._give_room(dock))
        dock.show()
        if dock.isFloating() and dock.isMinimized():  # a window of its own, minimised
            dock.showNormal()
        dock.raise_()
        panel = self.panels[key]  # built now if it was waiting
        if dock.isFloating():
            dock.activateWindow()
        _focus_inside(panel)

    def _give_room(self, dock: QDockWidget) -> None:
        """A dock just shown gets at least ``layouts.RETURNING_SHARE`` of its column's
        height (of the bottom row's width), and alone in a column, the width its window
        asks for (:meth:`_widen_new_column`): Qt gives a dock shown into a place where
        nothing was on show only its minimum size. A dock that took a place on show (a
        tab behind another) already has its place's size and is left as it is."""
        if not dock.isVisible() or dock.isFloating():
            return
        area = self.dockWidgetArea(dock)
        vertical = area != Qt.DockWidgetArea.BottomDockWidgetArea
        g = dock.geometry()
        along = [d for d in self.docks.values()
                 if d.isVisible() and not d.isFloating() and self.dockWidgetArea(d) == area
                 and not d.visibleRegion().isEmpty()]  # fmt: skip
        if vertical:  # its column: the docks across from it
            line = [d for d in along
                    if d.geometry().left() < g.right() and g.left() < d.geometry().right()]  # fmt: skip
            total, have = sum(d.height() for d in line), dock.height()
        else:  # its row
            line = [d for d in along
                    if d.geometry().top() < g.bottom() and g.top() < d.geometry().bottom()]  # fmt: skip
            total, have = sum(d.width() for d in line), dock.width()
        if vertical and line == [dock]:
            self._widen_new_column(dock)
        want = round(layouts.RETURNING_SHARE * total)
        if len(line) > 1 and have < want:
            # the others give up the room in proportion to what they have (Qt shares a
            # single dock's growth out in its own way, short of the size asked)
            others = [d for d in line if d is not dock]
            rest = total - want
            sizes = [round(rest * (d.height() if vertical else d.width()) / (total - have))
                     for d in others]  # fmt: skip
            orientation = Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal
            self.resizeDocks([*others, dock], [*sizes, want], orientation)
        if not vertical:  # the bottom row: as tall as the panel asks, up to a third
            title = dock.height() - dock.widget().height()  # its title bar and tab bar
            tall = min(dock.widget().sizeHint().height() + title, self.height() // 3)
            if dock.height() < tall:
                self.resizeDocks([dock], [tall], Qt.Orientation.Vertical)

    def _widen_new_column(self, dock: QDockWidget, again: bool = True) -> None:
        """A dock alone in its column, where nothing was on show, gets the width its
        window asks for, up to a third of the main window's and to a fair share of the
        side columns' room: Qt gives it its minimum, its buttons and fields cut off.
        The room comes from the central widget as far as it can spare it, then from the
        other side columns, each down to its minimum, in proportion to what they can
        give. Once laid out, a dock still short of it (the central widget gave a few
        pixels less than it seemed to spare) is widened ``again``, once."""
        sides = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea)
        columns: dict[tuple, list[QDockWidget]] = {}
        for d in self.docks.values():
            area = self.dockWidgetArea(d)
            if (d is not dock and d.isVisible() and not d.isFloating() and area in sides
                    and not d.visibleRegion().isEmpty()):  # fmt: skip
                columns.setdefault((area, d.geometry().left()), []).append(d)
        firsts = [docks[0] for docks in columns.values()]
        widths = [d.width() for d in firsts]
        central = self.centralWidget()
        spare = max(0, central.width() - central.minimumSizeHint().width())
        # no wider than a fair share of the side columns' room: the others stay usable
        fair = (sum(widths) + dock.width() + spare) // (len(firsts) + 1)
        wide = min(dock.sizeHint().width(), self.width() // 3, max(fair, dock.width()))
        need = wide - dock.width() - spare
        if wide <= dock.width():
            return
        give = [max(0, w - max(x.minimumSizeHint().width() for x in docks))
                for w, docks in zip(widths, columns.values())]  # fmt: skip
        can = sum(give)
        if need > 0 and can > 0:
            taken = min(need, can)
            widths = [w - round(taken * g / can) for w, g in zip(widths, give)]
            wide = dock.width() + spare + taken
        self.resizeDocks([*firsts, dock], [*widths, wide], Qt.Orientation.Horizontal)
        if again:
            QTimer.singleShot(0, dock, lambda: self._widen_short(dock, wide))

    def _widen_short(self, dock: QDockWidget, wide: int) -> None:
        if dock.isVisible() and not dock.isFloating() and dock.width() < wide - 1:
            self._widen_new_column(dock, again=False)

    def panel_has_focus(self, key: str) -> bool:
        """Whether the keyboard focus is in the panel's dock, the dock on show."""
        dock = self.docks[key]
        focus = QApplication.focusWidget()
        if not dock.isVisible() or focus is None or not dock.isAncestorOf(focus):
            return False
        if dock.isFloating():  # a window of its own: the active one, not minimised
            return dock.isActiveWindow() and not dock.isMinimized()
        return not dock.visibleRegion().isEmpty()  # not behind another dock's tab

    def toggle_panel(self, key: str) -> None:
        """What a View key does (Ctrl+1 … Ctrl+9): a hidden panel, or one on show without
        the focus (behind a tab, in a floating window behind others, or just not where
        the user is typing), is brought to the keyboard (:meth:`show_panel`); pressed
        again, while the panel has the focus, it hides it."""
        if self.panel_has_focus(key):
            self.docks[key].hide()
        else:
            self.show_panel(key)

    # ---- menus

    def _action(self, text: str, slot: Callable, shortcut: QKeySequence | str | None = None,
                ) -> QAction:  # fmt: skip
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        new = file.addMenu("&New from sample")
        for path in sorted(SAMPLES_DIR.glob("*.machine")):
            shortcut = (
                QKeySequence.StandardKey.New if path.name == "parsytec-gcel.machine" else None
            )
            new.addAction(self._action(path.stem, lambda _=False, p=path: self.new_from(p),
                                       shortcut))  # fmt: skip
        self.new_blank_action = self._action("New &blank model", self.new_blank, "Ctrl+Alt+N")
        self.new_blank_action.setToolTip("A new model of one processor type on a one-processor "
                                         "topology, valid as it is")  # fmt: skip
        file.insertAction(new.menuAction(), self.new_blank_action)
        file.addAction(self._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open))
        self.recent_menu = file.addMenu("Open &recent")
        self.import_simgrid_action = self._action("&Import SimGrid platform…",
                                                  lambda _checked=False: self.import_simgrid(),
                                                  "Ctrl+Shift+I")  # fmt: skip
        self.import_simgrid_action.setToolTip("A SimGrid platform as a new model; what does "
                                              "not carry over is said beside it")  # fmt: skip
        file.addAction(self.import_simgrid_action)
        self.open_trace_action = self._action("Open program &trace…",
                                              lambda _checked=False: self.open_program_trace(),
                                              "Ctrl+Shift+O")  # fmt: skip
        self.open_trace_action.setToolTip("Predict a traced MPI program on this model")
        file.addAction(self.open_trace_action)
        file.addSeparator()
        file.addAction(self._action("&Save", self.save, QKeySequence.StandardKey.Save))
        file.addAction(self._action("Save &as…", self.save_as, QKeySequence.StandardKey.SaveAs))
        file.addSeparator()
        self.export_action = self._action("&Export to estimator", self.export, "Ctrl+Shift+E")
        self.export_action.setToolTip("Push the model to the estimator set in Preferences")
        file.addAction(self.export_action)
        file.addAction(self._action("Export to &file…", self.export_to_file))
        export_menu = file.addMenu("E&xport")
        self.export_simgrid_action = self._action("&SimGrid platform…", self.export_simgrid)
        export_menu.addAction(self.export_simgrid_action)
        file.addSeparator()
        file.addAction(self._action("&Measure this machine…", self.show_measure))
        file.addAction(self._action("S&weep…", self.show_sweep))
        file.addSeparator()
        file.addAction(self._action("&Quit", self.close, QKeySequence.StandardKey.Quit))

        edit = bar.addMenu("&Edit")
        undo = self.document.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcuts(QKeySequence.StandardKey.Undo)
        redo = self.document.undo_stack.createRedoAction(self, "&Redo")
        # every platform binding of Redo, and both common ones whatever the platform says
        # (a list holding StandardKey.Redo took only its first binding: on some platforms
        # Ctrl+Y twice, an ambiguous shortcut that did nothing, and no Ctrl+Shift+Z)
        redo_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)
        for extra in (QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")):
            if extra not in redo_keys:
                redo_keys.append(extra)
        redo.setShortcuts(redo_keys)
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        self.history_action = self._action("&History", lambda: self.show_panel("history"),
                                           "Ctrl+H")  # fmt: skip
        self.history_action.setToolTip("The undo steps, by name: click one to undo or redo "
                                       "to it")  # fmt: skip
        edit.addAction(self.history_action)
        edit.addSeparator()
        edit.addAction(self._action("&Preferences…", self.show_preferences, "Ctrl+,"))
        self.undo_action, self.redo_action = undo, redo

        view = bar.addMenu("&View")
        self.layout_menu = view.addMenu("&Layout")
        self.layout_actions: dict[str, QAction] = {}
        for named in layouts.LAYOUTS:
            action = self._action(named.title, lambda _=False, k=named.key: self.apply_layout(k),
                                  named.shortcut)  # fmt: skip
            action.setToolTip(named.purpose)
            action.setStatusTip(named.purpose)
            self.layout_menu.addAction(action)
            self.layout_actions[named.key] = action
        self.layout_menu.setToolTipsVisible(True)
        view.addSeparator()
        self.view_actions: dict[str, QAction] = {}
        for n, (key, dock) in enumerate(self.docks.items(), start=1):
            view.addAction(self._view_action(key, dock, f"Ctrl+{n}" if n <= 9 else None))
        self.view_menu = view

        toolbar = self.addToolBar("Export")
        toolbar.setObjectName("toolbar-export")
        toolbar.addAction(self.export_action)

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self._action("&Keyboard shortcuts", self.show_shortcuts,
                                         QKeySequence.StandardKey.HelpContents))  # fmt: skip
        self.documentation_menu = help_menu.addMenu("&Documentation")
        self._fill_documentation()
        help_menu.addAction(self._action("&About PIUI", self.show_about))
        # Every window of the application answers these shortcuts: the instruction
        # category windows and floating docks are windows of their own.
        for menu in (file, new, edit, view, self.layout_menu, help_menu):
            for action in menu.actions():
                action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        # ... and a text field keeps Ctrl+Z only while it has typing of its own to undo
        self._undo_keys = UndoKeysFallThrough(self)
        self._fill_recent()

    def _view_action(self, key: str, dock: QDockWidget, shortcut: str | None) -> QAction:
        """A View-menu entry: checked while its dock is shown (as the dock's own toggle
        action is), and triggered it does :meth:`toggle_panel`, which reaches a floating
        dock or one behind a tab instead of hiding it."""
        action = QAction(dock.windowTitle(), self)
        action.setCheckable(True)
        toggle = dock.toggleViewAction()
        action.setChecked(toggle.isChecked())
        toggle.toggled.connect(action.setChecked)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"Show {dock.windowTitle()} and put the keyboard in it; again, "
                          "with the keyboard in it, hide it")  # fmt: skip

        def triggered(_checked: bool = False) -> None:
            self.toggle_panel(key)
            action.setChecked(toggle.isChecked())  # whatever the click made of the check

        action.triggered.connect(triggered)
        self.view_actions[key] = action
        return action

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for path in files:
            self.recent_menu.addAction(
                self._action(path, lambda _=False, p=path: self.open_file(p))
            )
        self.recent_menu.setEnabled(bool(files))

    # ---- files

    def recent_files(self) -> list[str]:
        from piui.app_settings import recent_files

        return recent_files()

    def _remember(self, path: Path) -> None:
        files = [str(path.resolve())] + [f for f in self.recent_files()
                                         if f != str(path.resolve())]  # fmt: skip
        settings().setValue("recentFiles", files[:MAX_RECENT])
        self._fill_recent()

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current model (saved, discarded)."""
        if not self.document.is_modified:
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        if answer == QMessageBox.StandardButton.Discard:
            self._discard_recovered()  # edits restored from a copy: dropped, and the copy
            return True
        return False

    def _discard_recovered(self) -> None:
        copy = self.document.session.recovered_from
        try:
            self.document.session.discard_recovered()
        except OSError as e:
            log.warning("the copy %s could not be deleted: %s", copy, e.strerror or e)

    def open_file(self, path: str | Path, offer_copy: bool = True) -> bool:
        """Open a model file (File > Open, a recent file). When a copy of unsaved edits
        newer than the file lies beside it (``NAME.unsaved``, kept when PIUI was stopped
        by a signal), offer it first: restored, the model opens with them as unsaved
        changes. The command line opens without the offer (``offer_copy`` False), before
        the window is on screen, and makes it once it is (:meth:`offer_copy_beside`)."""
        if not self.maybe_save():
            return False
        copy = recovery.newer_copy(path) if offer_copy else None
        restored = False
        if copy is not None:
            answer = self.ask_restore(copy)
            if answer == recovery.RESTORE:
                restored = self.restore_copy(copy)  # not read: the file as it is, below
            elif answer == recovery.DISCARD:
                self._discard_copy(copy)
        if not restored:
            try:
                with busy(self, f"Opening {Path(path).name}…"):
                    self.document.open(path)
            except ModelSyntaxError as e:
                log.error("%s", e.format())
                self.show_error("Cannot open the model", e.format(), e.context)
                return False
            except OSError as e:
                log.error("cannot open %s: %s", path, e.strerror or e)
                self.show_error("Cannot open the model", f"{path}: {e.strerror or e}")
                return False
        self._remember(Path(path))
        self._show_errors_of(Path(path).name)
        return True

    def _show_errors_of(self, name: str) -> None:
        """A model just opened with errors: say so, and show them."""
        errors = sum(d.is_error for d in self.document.diagnostics)
        if errors:
            log.warning("%s has %d error(s): see Diagnostics", name, errors)
            self.show_panel("diagnostics")

    def restore_copy(self, copy: recovery.Copy) -> bool:
        """Open the unsaved edits kept in ``copy`` as unsaved changes of its model (of
        a model never saved, for a copy in the data folder). A copy that cannot be read
        is reported, where and why, and left on disk."""
        try:
            with busy(self, f"Restoring {copy.path.name}…"):
                self.document.restore(copy.path, copy.original)
        except ModelSyntaxError as e:
            log.error("%s", e.format())
            self.show_error("Cannot restore the unsaved edits", f"{e.format()}\n\nThe copy "
                            f"is left on disk as it is: {copy.path}", e.context)  # fmt: skip
            return False
        except OSError as e:
            log.error("cannot read %s: %s", copy.path, e.strerror or e)
            self.show_error("Cannot restore the unsaved edits", f"{copy.path}: "
                            f"{e.strerror or e}\n\nThe copy is left on disk as it is.")  # fmt: skip
            return False
        target = (f"Save writes them to {copy.original.name}" if copy.original is not None
                  else "Save as to keep them")  # fmt: skip
        self.statusBar().showMessage(f"Restored the unsaved edits kept in {copy.path.name} "
                                     f"({copy.when()}): {target}, and removes the copy.")  # fmt: skip
        return True

    def _discard_copy(self, copy: recovery.Copy) -> None:
        try:
            recovery.discard(copy.path)
        except OSError as e:
            self.show_error("Cannot delete the copy", f"{copy.path}: {e.strerror or e}")
        else:
            log.info("deleted the unsaved edits kept in %s", copy.path)

    @staticmethod
    def data_folder() -> Path:
        """PIUI's data folder: where the edits of a model never saved are kept."""
        from PySide6.QtCore import QStandardPaths

        return Path(QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.AppDataLocation))  # fmt: skip

    def offer_copy_beside(self, path: str | Path) -> bool:
        """At start, the window on screen: offer the copy of unsaved edits beside the
        model file the command line named, if one is newer than it (as File > Open
        does). True when it was restored."""
        copy = recovery.newer_copy(path)
        if copy is None:
            return False
        answer = self.ask_restore(copy)
        if answer == recovery.RESTORE and self.maybe_save() and self.restore_copy(copy):
            self._remember(Path(path))
            self._show_errors_of(Path(path).name)
            return True
        if answer == recovery.DISCARD:
            self._discard_copy(copy)
        return False

    def offer_orphaned_copies(self, folder: Path | None = None) -> bool:
        """At start: offer the copies of never-saved models that a PIUI stopped by a
        signal left in the data folder (its process gone), newest first, until one is
        restored; those kept stay for the next start. True when one was restored."""
        for copy in recovery.orphans(folder or self.data_folder(), os.getpid()):
            answer = self.ask_restore(copy)
            if answer == recovery.RESTORE:
                if not self.maybe_save():
                    return False  # the model on screen is kept: the copies stay for later
                if self.restore_copy(copy):
                    self._show_errors_of(copy.path.name)
                    return True
            elif answer == recovery.DISCARD:
                self._discard_copy(copy)
        return False

    def new_blank(self) -> None:
        """File > New blank model: the smallest valid model, after asking to save unsaved
        changes."""
        if self.maybe_save():
            self.document.new_blank()
            self.statusBar().showMessage(
                "A new blank model: one processor type on a one-processor topology. Save as "
                "to keep it.", 10000)  # fmt: skip

    def show_measure(self) -> None:
        """File > Measure this machine…: one dialog, kept (a measurement goes on when it
        is hidden behind other windows; closing it cancels one under way)."""
        if self.measure_dialog is None:
            from piui.widgets.measure_dialog import MeasureDialog

            self.measure_dialog = MeasureDialog(self, self.document)
            self.document.modelReset.connect(self.measure_dialog._show_validate)
            self.measure_dialog.opened.connect(self.open_measured)
        self.measure_dialog.show()
        self.measure_dialog.raise_()
        self.measure_dialog.activateWindow()

    def show_sweep(self) -> None:
        """File > Sweep…: one dialog, kept (a sweep goes on when it is hidden; closing it
        cancels one under way); its variants open as new unsaved models."""
        if self.sweep_dialog is None:
            from piui.widgets.sweep_dialog import SweepDialog

            self.sweep_dialog = SweepDialog(self, self.document, self._open_program)
            self.sweep_dialog.opened.connect(self.open_variant)
        self.sweep_dialog.show()
        self.sweep_dialog.raise_()
        self.sweep_dialog.activateWindow()

    def _open_program(self) -> Any:
        """The program open in the Program window (None: none, or the window not built)."""
        return self.panels["program"].program if self.panels.is_built("program") else None

    def sweep_axis(self, change: str) -> None:
        """A window's context menu asked to sweep ``change``: File > Sweep… with it as an axis."""
        self.show_sweep()
        self.sweep_dialog.add_suggested(change)

    def open_variant(self, text: str, said: str) -> bool:
        """A sweep's variant, opened as a new unsaved model (after asking to save changes)."""
        if not self.maybe_save():
            return False
        self.document.new_from_text(text)
        self.statusBar().showMessage(f"A variant of the sweep ({said}): Save as to keep it.")
        return True

    def open_measured(self, text: str) -> bool:
        """A measured model, opened as a new unsaved one (after asking to save changes)."""
        if not self.maybe_save():
            return False
        self.document.new_from_text(text)
        self.statusBar().showMessage(f"A measured model of this machine "
                                     f"({self.document.machine.name}): Save as to keep it.")  # fmt: skip
        return True

    def open_program_trace(self, path: str | None = None) -> bool:
        """File > Open program trace…: the Program window, on show, reading a trace (the
        window asks which, unless ``path`` says)."""
        # the timeline needs room: a Program window squeezed in a corner gets its layout
        dock = self.docks["program"]
        if not dock.isFloating() and (dock.isHidden() or dock.height() < 320):
            self.apply_layout(layouts.PROGRAM.key)
        self.show_panel("program")
        program = self.panels["program"]
        opened = program.open_trace(path) if path else program.open_dialog()
        if opened:
            self._predicting = f"Predicting {program.program.title} on this model."
            self.statusBar().showMessage(self._predicting, 8000)
            unique = Qt.ConnectionType.UniqueConnection  # once, however many traces
            program.predictionShown.connect(self._prediction_in, unique)
            program.predictionFailed.connect(self._prediction_in, unique)
        return opened

    def _prediction_in(self, *_: object) -> None:
        """The Program window's answer (or its failure) is in: the status bar's
        "Predicting …" is no longer true."""
        if self.statusBar().currentMessage() == getattr(self, "_predicting", None):
            self.statusBar().clearMessage()

    # ---- SimGrid platforms (the conversion is parasol_core.simgrid)

    def import_simgrid(self, path: str | None = None) -> bool:
        """File > Import SimGrid platform…: the platform as a new unsaved model, and what
        did not carry over in a window beside it (the window asks which platform,
        unless ``path`` says)."""
        path = path or self.ask_platform_path(False)
        if not path or not self.maybe_save():
            return False
        from parasol_core.base.budget import BudgetError
        from parasol_core.simgrid import PlatformError, import_platform

        try:
            with busy(self, f"Importing {Path(path).name}…"):
                imported = import_platform(path)
        except (PlatformError, BudgetError) as e:
            self.show_error("Cannot import the platform", str(e))
            return False
        except OSError as e:
            self.show_error("Cannot import the platform", f"{path}: {e.strerror or e}")
            return False
        self.document.new_from_machine(imported.machine, f"SimGrid platform {path}")
        self._show_carry_notes("Imported from SimGrid", f"{Path(path).name} is open as a new "
                               "model (Save as to keep it).", imported.notes)  # fmt: skip
        self.statusBar().showMessage(f"Imported the SimGrid platform {Path(path).name}: "
                                     "Save as to keep it.", 10000)  # fmt: skip
        return True

    def export_simgrid(self) -> bool:
        """File > Export > SimGrid platform…: the hardware topology as a platform file."""
        path = self.ask_platform_path(True)
        if not path:
            return False
        from parasol_core.base.budget import BudgetError
        from parasol_core.simgrid import ExportError, export_platform
        from parasol_core.syntax.writer import write_text_atomic

        self.document.commit_pending()
        try:
            with busy(self, f"Exporting {Path(path).name}…"):
                exported = export_platform(self.document.machine)
                write_text_atomic(Path(path), exported.text)
        except (ExportError, BudgetError) as e:
            self.show_error("Cannot export a SimGrid platform", str(e))
            return False
        except OSError as e:
            self.show_error("Cannot export a SimGrid platform", f"{path}: {e.strerror or e}")
            return False
        self._show_carry_notes("Exported to SimGrid", f"Wrote {Path(path).name}.",
                               exported.notes)  # fmt: skip
        self.statusBar().showMessage(f"Exported a SimGrid platform to {path}.", 8000)
        return True

    def _show_carry_notes(self, title: str, text: str, notes: list[str]) -> None:
        """What did not carry over, in a window that does not block (kept in
        ``self.carry_notes``)."""
        box = QMessageBox(QMessageBox.Icon.Information, title, text, parent=self)
        if notes:
            box.setInformativeText("What does not carry over:\n" + "\n".join(
                f"• {n}" for n in notes))  # fmt: skip
        else:
            box.setInformativeText("Everything carried over.")
        box.setModal(False)
        self._close_carry_notes()  # one at a time: the last import's or export's
        box.show()
        self.carry_notes = box

    def _close_carry_notes(self) -> None:
        """What did not carry over is about the model it was said with: it goes when
        another model opens (an import opens its own before its notes are shown)."""
        if self.carry_notes is not None:
            self.carry_notes.close()
            self.carry_notes.deleteLater()
            self.carry_notes = None

    def _ask_platform_path(self, saving: bool) -> str:
        from piui.widgets.file_dialogs import PLATFORM_FILTER, ask_path, start_file, start_folder

        if saving:
            start = start_file(self.document, ".xml")
            return ask_path(self, "Export a SimGrid platform", start, True, PLATFORM_FILTER, "xml")
        start = str(start_folder(self.document))
        return ask_path(self, "Import a SimGrid platform", start, False, PLATFORM_FILTER, "xml")

    def new_from(self, path: Path) -> None:
        if self.maybe_save():
            self.document.open_copy(path)
            self.statusBar().showMessage(
                f"A new model, copied from the sample {path.name}: Save as to keep it."
            )

    def open_dialog(self) -> None:
        path = self.ask_open_path()
        if path:
            self.open_file(path)

    def save(self) -> bool:
        if self.document.path is None:
            return self.save_as()
        return self._save_to(self.document.path)

    def save_as(self) -> bool:
        path = self.ask_save_path()
        if not path:
            return False
        return self._save_to(Path(path))

    def _save_to(self, path: Path) -> bool:
        self.document.commit_pending()
        errors = [d for d in self.document.diagnostics if d.is_error]
        if errors and not self.confirm(
            "Save a model with errors",
            f"The model has {counted(len(errors), 'error')}; PIUI and other readers will report them "
            "when it is opened again. Save it anyway?",
            [d.format(str(path)) for d in errors],  # where they will be: the file saved
        ):
            return False
        try:
            try:
                with busy(self, f"Saving {path.name}…"):
                    self.document.save(path)
            except FileChangedOnDisk:
                if not self.ask_overwrite_changed(path):
                    self._show_disk_status()  # the bar's choices again, reload among them
                    return False
                with busy(self, f"Saving {path.name}…"):
                    self.document.save(path, overwrite=True)
        except (OSError, ValueError) as e:
            message = getattr(e, "strerror", None) or str(e)
            log.error("cannot save %s: %s", path, message)
            self.show_error("Cannot save the model", f"{path}: {message}\n\nThe model is "
                            "unchanged in PIUI; save it somewhere else.")  # fmt: skip
            return False
        self._remember(path)
        return True

    # ---- export

    def estimator_settings(self) -> EstimatorSettings:
        return EstimatorSettings.load(settings())

    def export(self) -> bool:
        """Push the model to the estimator (off the GUI thread); False if one is under way."""
        if not self.exporter.export():
            self.statusBar().showMessage("An export is under way already.", 4000)
            return False
        return True

    def _export_started(self, url: str) -> None:
        self.export_action.setEnabled(False)
        self.statusBar().showMessage(f"Exporting to {url}…")

    def _export_finished(self, result: ExportResult) -> None:
        self.export_action.setEnabled(True)
        if result.ok:
            warnings = (
                f", {counted(len(result.diagnostics), 'warning')}" if result.diagnostics else ""
            )
            self.statusBar().showMessage(
                f"Exported to {result.url} as model {result.model} ({result.name}){warnings}.",
                10000,
            )
        else:
            self.statusBar().showMessage(f"Export failed: {result.error}. Nothing is lost; "
                                         "Ctrl+Shift+E tries again.")  # fmt: skip
            if result.diagnostics:
                self.diagnostics.show_external("estimator", result.diagnostics)
                self.show_panel("diagnostics")

    def export_to_file(self) -> bool:
        """Write the model to a file of the user's choice; the open file stays as it is
        (chosen as the target, it is saved, with a save's checks)."""
        path = self.ask_export_path()
        if not path:
            return False
        own = self.document.path
        if own is not None and os.path.realpath(path) == os.path.realpath(own):
            return self._save_to(own)
        from parasol_core.base.filelock import locked
        from parasol_core.syntax.writer import write_text_atomic

        self.document.commit_pending()
        try:
            with locked(path):
                write_text_atomic(Path(path), self.document.session.text())
        except OSError as e:
            self.show_error("Cannot export the model", f"{path}: {e.strerror or e}")
            return False
        log.info("exported the model to %s", path)
        self.statusBar().showMessage(f"Exported to {path}.", 8000)
        return True

    # ---- the file on disk, changed by another program

    def _disk_status_changed(self, status: str) -> None:
        path = self.document.path
        if status != disk.UNCHANGED and path is not None:
            log.warning("%s %s", path, "was changed on disk by another program"
                        if status == disk.CHANGED else "was deleted or moved away")  # fmt: skip
        self._show_disk_status()

    def _show_disk_status(self, *_: object) -> None:
        """The bar above the overview, for the file's state on disk and whether the model
        has unsaved edits (which changes what it offers)."""
        path = self.document.path
        status = self.disk_watcher.status if path is not None else disk.UNCHANGED
        self.file_bar.show_status(status, path.name if path else "", self.document.is_modified)

    def reload_from_disk(self) -> bool:
        """Read the open file again, keeping the current processor where it still exists
        (the grid view keeps its view and selection for the same processor count);
        unsaved edits are dropped (the bar said so)."""
        try:
            with busy(self, f"Reloading {self.document.title()}…"):
                self.document.reload()
        except ModelSyntaxError as e:
            self.show_error("Cannot reload the model", e.format(), e.context)
            return False
        except OSError as e:
            self.show_error("Cannot reload the model", f"{self.document.path}: {e.strerror or e}")
            return False
        self.statusBar().showMessage(f"Reloaded {self.document.title()} from disk.", 8000)
        return True

    def show_difference(self) -> None:
        """The difference between the file on disk and the model as PIUI would save it."""

        path = self.document.path
        if path is None:
            return
        try:
            text = disk.difference(self.document.session.disk_text(),
                                   self.document.session.text(), path.name, "in PIUI")  # fmt: skip
        except (OSError, ValueError) as e:
            self.show_error("Cannot compare", f"{path}: {getattr(e, 'strerror', None) or e}")
            return
        if not text and self.document.is_modified:
            # edits that cancel out: the model is the file again, and says so
            self.document.session.mark_saved()
            text = ("The two are the same: the edits since the file was read or saved "
                    "cancel out, so the model is no longer marked as modified.")  # fmt: skip
        self.show_diff(text, path.name)

    def _show_diff(self, text: str, name: str) -> None:
        from piui.widgets.diff_view import DiffDialog

        DiffDialog(text, name, self).exec()

    def _ask_overwrite_changed(self, path: Path) -> bool:
        """Another program changed ``path`` since PIUI read it: overwrite it?"""
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("File changed on disk")
        box.setText(f"{path.name} was changed by another program since PIUI read it. "
                    "Saving replaces that version with yours.")  # fmt: skip
        box.setInformativeText("Overwrite it? Cancel leaves the file as it is and keeps "
                               "your changes here: Save As puts them elsewhere.")  # fmt: skip
        overwrite = box.addButton("Overwrite", QMessageBox.ButtonRole.DestructiveRole)
        diff = box.addButton("Show difference", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        while True:
            box.exec()
            if box.clickedButton() is diff:
                self.show_difference()
                continue
            return box.clickedButton() is overwrite

    def show_preferences(self) -> None:
        from piui.export import default_push_name, push_name, set_push_name
        from piui.windows.preferences import PreferencesDialog  # the estimator's client

        doc = self.document
        given = push_name(doc) if push_name(doc) != default_push_name(doc) else ""
        dialog = PreferencesDialog(self.estimator_settings(), self.local_estimator, self,
                                   given, default_push_name(doc))  # fmt: skip
        if dialog.exec() == PreferencesDialog.DialogCode.Accepted:
            dialog.settings().save(settings())
            set_push_name(doc, dialog.push_name())
        if dialog.local is not None:
            self.local_estimator = dialog.local

    # ---- dialogs (replaced in tests)

    def _ask_restore(self, copy: recovery.Copy) -> str:
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved edits found", copy.describe(),
                          parent=self)  # fmt: skip
        restore = box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)
        kept = box.addButton("Keep original" if copy.original is not None else "Not now",
                             QMessageBox.ButtonRole.RejectRole)  # fmt: skip
        drop = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        if copy.original is not None:
            box.setInformativeText(
                f"Restore opens {copy.original.name} with the kept edits as unsaved changes "
                "(Save writes them to it). Keep original opens the file as it is and leaves "
                f"the copy for later. Discard deletes the copy.")  # fmt: skip
        else:
            box.setInformativeText("Restore opens the kept edits as a model not saved yet. "
                                   "Not now leaves the copy for the next start. Discard "
                                   "deletes it.")  # fmt: skip
        box.setDefaultButton(restore)
        box.setEscapeButton(kept)
        box.exec()
        clicked = box.clickedButton()
        return {restore: recovery.RESTORE, drop: recovery.DISCARD}.get(clicked, recovery.KEEP)

    def _ask_save_changes(self) -> QMessageBox.StandardButton:
        title = self.document.title()
        question = (f"{title} exists only in PIUI, in no file: save it?"
                    if self.document.session.only_in_memory and not self.document.path
                    else f"Save the changes to {title}?")  # fmt: skip
        return QMessageBox.question(
            self, "Unsaved changes", question,
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save,
        )  # fmt: skip

    # Every file dialog starts where widgets.file_dialogs.start_folder says (the model's
    # folder; parasol_core.frontend.folders holds the rule).

    def _ask_open_path(self) -> str:
        from piui.widgets.file_dialogs import ask_path, start_folder  # QFileDialog: when asked

        start = str(start_folder(self.document, fallback=SAMPLES_DIR))
        return ask_path(self, "Open model", start, saving=False)

    def _ask_save_path(self, title: str = "Save model as") -> str:
        from piui.widgets.file_dialogs import ask_path, start_file

        start = str(self.document.path or start_file(self.document, ".machine"))
        return ask_path(self, title, start, saving=True)

    def _show_error(self, title: str, text: str, source: str = "") -> None:
        error_box(self, title, text, source).exec()

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{v}</td></tr>" for k, v in SHORTCUTS)
        QMessageBox.information(self, "Keyboard shortcuts", f"<table>{rows}</table>")

    # ---- the documentation (widgets.documentation: the README's "Where to go next")

    def _fill_documentation(self) -> None:
        from piui.widgets.documentation import DOCS, pages

        menu = self.documentation_menu
        menu.clear()
        group = None
        for page in pages():
            if group is not None and page.group != group:
                menu.addSeparator()
            group = page.group
            action = self._action(
                page.title, lambda _=False, p=page.path: self.show_documentation(p)
            )
            action.setToolTip(f"{page.path.name}, in the web browser")
            menu.addAction(action)
        menu.addSeparator()
        folder = self._action("The documentation folder", lambda: self.show_documentation(DOCS))
        folder.setToolTip(str(DOCS))
        menu.addAction(folder)

    def documentation_cache(self) -> Path:
        """Where the documentation's pages are written as HTML for the browser."""
        from PySide6.QtCore import QStandardPaths

        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.CacheLocation)
        return Path(base or Path.home() / ".cache" / "piui") / "documentation"

    def show_documentation(self, page: Path) -> bool:
        """Help > Documentation: a page (Markdown, written as HTML first) or the docs
        folder in the desktop's browser (``open_url``); when none can be started, or the
        documentation is not there, a message says where it is."""
        from PySide6.QtCore import QUrl

        from piui.widgets.documentation import DOCS, html_of

        if not page.exists():
            log.warning("documentation not found: %s", page)
            self.show_error("Documentation not found", f"{page} is not there: this copy of "
                            "PIUI was installed without its source tree. The documentation "
                            "is the docs folder of PIUI's source (README.md, \"Where to go "
                            "next\").")  # fmt: skip
            return False
        shown = page
        if page.is_file():
            try:
                shown = html_of(page, self.documentation_cache())
            except OSError as e:  # no cache folder: the Markdown itself
                log.warning("cannot write %s as HTML: %s", page.name, e.strerror or e)
        if self.open_url(QUrl.fromLocalFile(str(shown))):
            self.statusBar().showMessage(f"Opened {page.name} in the web browser.", 8000)
            return True
        where = (f"The page is {shown}" + (f", written from {page}" if shown != page else "")
                 + f".\n\nAll of PIUI's documentation is in {DOCS} (Markdown: any text "
                 "editor reads it).")  # fmt: skip
        log.warning("no web browser could be started for %s; %s", page.name,
                    where.replace("\n\n", " "))  # fmt: skip
        self.show_information("No web browser", "No web browser could be started to show "
                              f"{page.name}.\n\n{where}")  # fmt: skip
        return False

    def _show_information(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, title, text, parent=self)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.exec()

    def show_about(self) -> None:
        from piui import __version__

        QMessageBox.about(
            self, "About PIUI",
            f"<b>PIUI {__version__}</b><p>An editor for PARASOL machine models of parallel "
            "computers, after the PARASOL I user interface of 1994.</p>",
        )  # fmt: skip

    # ---- navigation

    def _processor_activated(self, proc_id: int) -> None:
        self.document.set_current_processor(proc_id)
        self.show_panel("processors")

    def go_to(self, diagnostic: Diagnostic) -> None:
        """Show the thing a diagnostic is about."""
        target = diagnostic.target or ()
        if target[:1] == ("processor",) and len(target) > 1 and target[1] is not None:
            self.document.set_current_processor(target[1])
            self.show_panel("processors")
        elif target[:1] in (("topology",), ("virtual",)) and self._show_topology(target):
            pass
        elif target[:1] in (("topology",), ("virtual",)):
            kind = "hardware" if target[0] == "topology" else "virtual"
            self.overview.select_topology(kind, target[1] if len(target) > 1 else None)
        elif target[:1] in {(cls.KEYWORD,) for cls in EXPRESSION_SECTIONS}:
            if "combinations" in self.docks:
                self.show_panel("combinations")
        else:
            self.overview.id_field.setFocus()

    def _show_topology(self, target: tuple) -> bool:
        """A link or a mapping in the grid view (its dock registered by the topology
        windows); False when there is no grid view."""
        if "grid-view" not in self.docks:
            return False
        from piui.widgets.topology_selection import selection_of

        self.show_panel("grid-view")
        if target[0] == "topology" and len(target) >= 4 and target[2] == "link":
            selection_of(self.document).showRequested.emit("link", target[3])
        elif target[0] == "virtual" and len(target) >= 2:
            selection_of(self.document).showRequested.emit("virtual", target[1])
        return True

    def _topology_activated(self, kind: str, ident: int) -> None:
        from piui.widgets.topology_selection import selection_of

        key = "mapping-editor" if kind == "virtual" else "grid-view"
        if key in self.docks:
            self.show_panel(key)
            if kind == "virtual":
                selection_of(self.document).showRequested.emit("virtual", ident)

    # ---- window state

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._hide_stale_tab_bars)

    def _hide_stale_tab_bars(self) -> None:
        """Qt can leave dock tab bars of earlier states of the tab groups on screen (of
        a group's first two docks, of a group whose docks are all closed, a second bar
        of a group): a bar is kept only if its tabs are those of a tab group of docks on
        show, one bar a group, the one beside the group's docks."""
        # only bars a user sees: Qt keeps a spare bar, empty, shown outside the window, and
        # shows it again at each layout: hiding it asked for another layout, without end
        # (the window took a core while idle)
        room = self.rect()
        bars = [b for b in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
                if b.isVisible() and b.count() and b.geometry().intersects(room)]  # fmt: skip
        shown = {(id(b), b.geometry().getRect(), tuple(map(b.tabText, range(b.count()))))
                 for b in bars}  # fmt: skip
        if shown == self._clean_bars:
            return  # as they were left last time (a slider drag asks each step)
        groups: dict[frozenset[str], QRect] = {}
        for dock in self.docks.values():
            if dock.isHidden() or dock.isFloating():
                continue
            tabs = [
                d for d in self.tabifiedDockWidgets(dock) if not d.isHidden() and not d.isFloating()
            ]
            if tabs:
                titles = frozenset([dock.windowTitle(), *(d.windowTitle() for d in tabs)])
                groups[titles] = groups.get(titles, dock.geometry()) | dock.geometry()
        kept: dict[frozenset[str], QTabBar] = {}
        for bar in bars:
            titles = frozenset(bar.tabText(i) for i in range(bar.count()))
            if titles not in groups:
                bar.hide()
                continue
            place = groups[titles]
            other = kept.get(titles)
            if other is None:
                kept[titles] = bar
            elif _distance(bar, place) < _distance(other, place):
                other.hide()
                kept[titles] = bar
            else:
                bar.hide()
        self._clean_bars = {(id(b), b.geometry().getRect(), tuple(map(b.tabText, range(b.count()))))
                            for b in kept.values()}  # fmt: skip

    # ---- named layouts (parasol_core.frontend.layouts: which docks, where, how large)

    def apply_layout(self, key: str) -> None:
        """View > Layout: put every dock where the named layout says — docked (a
        floating one too), in its column and stack, in front, behind a tab or closed —
        and size the columns and stacks as fractions of the window. Until the user
        moves a dock or a separator, the layout keeps its proportions as the window is
        resized (maximised at the first start, restored, another screen)."""
        chosen = layouts.layout(key)
        placed = [k for stack in chosen.stacks() for k in stack.all() if k in self.docks]
        self._arranging = True
        try:
            for k in placed:
                dock = self.docks[k]
                if dock.isFloating():
                    dock.setFloating(False)
                self.removeDockWidget(dock)
            # the side columns run the window's full height (a what-if study's scalers
            # and ratios get the height they need), the bottom row lies under the centre
            # only; or, where the layout says, the bottom row runs across the window
            for corner, side in ((Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea),
                                 (Qt.Corner.BottomRightCorner,
                                  Qt.DockWidgetArea.RightDockWidgetArea)):  # fmt: skip
                self.setCorner(corner, Qt.DockWidgetArea.BottomDockWidgetArea
                               if chosen.bottom_across else side)  # fmt: skip
            # the places first: columns side by side, stacks one above the other (Qt
            # splits a dock that is in a tab group by adding a tab), then the tabs
            for area, columns in ((Qt.DockWidgetArea.LeftDockWidgetArea, chosen.left),
                                  (Qt.DockWidgetArea.RightDockWidgetArea, chosen.right)):  # fmt: skip
                self._place([c.stacks for c in columns], area)
            self._place([(stack,) for stack in chosen.bottom],
                        Qt.DockWidgetArea.BottomDockWidgetArea)  # fmt: skip
            for stack in chosen.stacks():
                docks = self._stack_docks(stack)
                for other in docks[1:]:
                    self.tabifyDockWidget(docks[0], other)
                for dock in docks:
                    dock.setVisible(dock.objectName().removeprefix("dock-") in stack.windows)
            self._raise_fronts(chosen, key)
        finally:
            self._arranging = False
        self.layout_key = key
        self._size_layout()
        # once Qt has made the tab bars of the new groups: the fronts in front of them
        QTimer.singleShot(0, lambda: self._raise_fronts(chosen, self.layout_key))
        if self.isVisible():
            QTimer.singleShot(50, self._hide_stale_tab_bars)
            self.statusBar().showMessage(f"Layout: {chosen.title.replace('&', '')}.", 4000)

    def _place(self, columns: list[tuple[layouts.Stack, ...]], area: Qt.DockWidgetArea) -> None:
        """Columns side by side in ``area`` (each first one dock, split off the one
        before), then each column's stacks one above the other."""
        tops: list[tuple[QDockWidget, tuple[layouts.Stack, ...]]] = []
        for stacks in columns:
            firsts = [docks[0] for docks in map(self._stack_docks, stacks) if docks]
            if not firsts:
                continue
            if tops:
                self.splitDockWidget(tops[-1][0], firsts[0], Qt.Orientation.Horizontal)
            else:
                self.addDockWidget(area, firsts[0], Qt.Orientation.Horizontal)
            tops.append((firsts[0], stacks))
        for _top, stacks in tops:
            firsts = [docks[0] for docks in map(self._stack_docks, stacks) if docks]
            for above, below in zip(firsts, firsts[1:]):
                self.splitDockWidget(above, below, Qt.Orientation.Vertical)

    def _raise_fronts(self, chosen: layouts.Layout, key: str | None) -> None:
        if key != chosen.key:
            return  # another layout since, or the user's own
        for front in chosen.front():
            if front in self.docks:
                self.docks[front].raise_()

    def _stack_docks(self, stack: layouts.Stack) -> list[QDockWidget]:
        return [self.docks[k] for k in stack.all() if k in self.docks]

    def _size_layout(self) -> None:
        """The named layout's proportions, at the window's present size."""
        self._sizing = False
        if self.layout_key is None:
            return
        chosen = layouts.layout(self.layout_key)
        chrome = self.menuBar().height() + self.statusBar().height() + sum(
            bar.height() for bar in self.findChildren(QToolBar) if bar.isVisible())  # fmt: skip
        centre = self.centralWidget().minimumSizeHint().width() + 10
        sizes = layouts.pixels(chosen, self.width(), max(self.height() - chrome, 100), centre)
        self._arranging = True
        try:
            for kind, orientation in (("columns", Qt.Orientation.Horizontal),
                                      ("bottom", Qt.Orientation.Vertical),
                                      ("bottom_row", Qt.Orientation.Horizontal)):  # fmt: skip
                pairs = [(self.docks[k], n) for k, n in sizes[kind] if k in self.docks]
                if pairs:
                    self.resizeDocks([d for d, _ in pairs], [n for _, n in pairs], orientation)
            for column in sizes["rows"]:
                pairs = [(self.docks[k], n) for k, n in column if k in self.docks]
                if pairs:
                    self.resizeDocks([d for d, _ in pairs], [n for _, n in pairs],
                                     Qt.Orientation.Vertical)  # fmt: skip
        finally:
            self._arranging = False

    def _docks_moved(self, *_: object) -> None:
        if not self._arranging:
            self.layout_key = None  # the user's own arrangement from now on

    def event(self, event: QEvent) -> bool:
        # a press on the main window itself is on a separator between docks: the user
        # sizes the docks, the named layout's proportions are not put back again
        if event.type() == QEvent.Type.MouseButtonPress:
            self.layout_key = None
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest and self.isVisible():
            self._hide_stale_tab_bars()  # Qt has just laid the docks and their tab bars out
        return handled

    def show_at_start(self) -> None:
        """Show the window as PIUI starts: as it was left, or, on the first run (or
        after a layout scheme change), maximised in the first-run layout."""
        if self.first_run:
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)
        self.show()

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A named layout keeps its proportions (until the user moves a dock or a
        separator). Otherwise, when the window grows, side docks squeezed by an earlier
        shrink get their width back (Qt gives all new room to the central widget), as
        far as the central widget can spare it."""
        super().resizeEvent(event)
        if self.layout_key is not None:
            if not self._sizing:  # once the resizing has settled
                self._sizing = True
                QTimer.singleShot(0, self._size_layout)
        elif event.size().width() > event.oldSize().width() > 0:
            self._restore_dock_widths()

    def _restore_dock_widths(self) -> None:
        central = self.centralWidget()
        spare = central.width() - central.minimumSizeHint().width()
        for area, wanted in ((Qt.DockWidgetArea.RightDockWidgetArea, RIGHT_DOCK_WIDTH),
                             (Qt.DockWidgetArea.LeftDockWidgetArea, LEFT_DOCK_WIDTH)):  # fmt: skip
            # the docks on show (a tab behind another keeps a stale width)
            docks = [d for d in self.docks.values() if d.isVisible() and not d.isFloating()
                     and self.dockWidgetArea(d) == area
                     and not d.visibleRegion().isEmpty()]  # fmt: skip
            if not docks or spare <= 0:
                continue
            width = max(d.width() for d in docks)
            if width < wanted:
                grow = min(wanted - width, spare)
                self.resizeDocks([docks[0]], [width + grow], Qt.Orientation.Horizontal)
                spare -= grow

    def _update_title(self, *_: object) -> None:
        self.setWindowTitle(f"{self.document.title()}[*] — PIUI")
        self.setWindowModified(self.document.is_modified)

    def layout_version(self) -> int:
        """A saved dock layout is restored only into the same set of docks and the same
        scheme of layouts (:data:`LAYOUT_SCHEME`): a version made from both, so that
        docks added since, or layouts redesigned, start from the default layout instead
        of landing wherever Qt puts unknown docks."""
        import zlib

        names = ",".join(sorted(self.docks)) + f";layouts {LAYOUT_SCHEME}"
        return zlib.crc32(names.encode()) & 0x7FFFFFFF

    def _restore_settings(self) -> None:
        """The window as it was left; a state of other docks or another layout scheme
        is not restored, and the window starts as on the first run: the default layout,
        maximised."""
        s = settings()
        geometry = s.value("geometry")
        state = s.value("windowState")
        if not isinstance(state, QByteArray):
            return
        if saved_version(state) != self.layout_version():
            log.info("the window layout saved last is of another version: the default layout")
            return
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)  # first: the docks' sizes are the window's
        self._arranging = True
        try:
            restored = self.restoreState(state, self.layout_version())
        finally:
            self._arranging = False
        if not restored:
            return
        self.first_run = False
        self.layout_key = None  # the user's arrangement, as it was left
        for dock in self.docks.values():
            if dock.isFloating():
                place_on_screen(dock)
                if dock.isVisible():
                    dock.raise_()

    def stop_by_signal(self, name: str) -> Path | None:
        """Close as a signal asks (SIGTERM from a session's end or a service manager,
        Ctrl-C in the terminal): nobody is there to answer a question, so none is asked;
        unsaved edits are written to a copy beside the model (``NAME.unsaved``, or
        ``unsaved-PID.machine`` in PIUI's data folder for a model never saved), said on
        stderr and returned, and the rest of the shutdown (settings, the estimator and
        measurements started) is the usual one."""
        import sys

        kept = None
        self.document.commit_pending()  # a field being typed in is an edit too, as in Save
        session = self.document.session
        if self.document.is_modified:
            try:
                kept = recovery.keep(session.text(), self.document.path, self.data_folder(),
                                     os.getpid())  # fmt: skip
            except OSError as e:
                where = recovery.copy_path(self.document.path, self.data_folder(), os.getpid())
                print(f"piui: stopped by {name}: the unsaved edits of "
                      f"{self.document.title()} could not be kept in {where}: "
                      f"{e.strerror or e}", file=sys.stderr)  # fmt: skip
            else:
                print(f"piui: stopped by {name}: the unsaved edits of "
                      f"{self.document.title()} are in {kept}", file=sys.stderr)  # fmt: skip
                restored = session.recovered_from
                if restored is not None and os.path.realpath(restored) != os.path.realpath(kept):
                    with contextlib.suppress(OSError):  # the new copy holds its edits
                        recovery.discard(restored)
        # a copy restored from stays unless written over: nobody discarded its edits
        session.recovered_from = None
        self.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
        self._stopped_by_signal = True  # a sweep or a measurement under way: stopped unasked
        self.close()
        return kept

    # ---- files dropped on the window

    @staticmethod
    def _dropped_file(event: QDragEnterEvent | QDropEvent) -> Path | None:
        """The one local file (or folder: an OTF2 archive) a drag carries, else None."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if len(urls) != 1 or not urls[0].isLocalFile():
            return None
        return Path(urls[0].toLocalFile())

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        """A file dropped on the window: a model opens (as File > Open), a SimGrid
        platform is imported, a program trace opens in the Program window
        (``parasol_core.frontend.dropped`` says which)."""
        path = self._dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        from parasol_core.frontend import dropped

        kind = dropped.kind_of(path)
        # after the drop has ended: what it opens may ask a question in a dialog
        if kind == dropped.PLATFORM:
            QTimer.singleShot(0, lambda: self.import_simgrid(str(path)))
        elif kind == dropped.TRACE:
            QTimer.singleShot(0, lambda: self.open_program_trace(str(path)))
        else:
            QTimer.singleShot(0, lambda: self.open_file(path))

    def closeEvent(self, event: QCloseEvent) -> None:
        # a sweep or a measurement under way is stopped only if the user agrees, asked
        # before the unsaved changes (a Cancel there must not have stopped a run)
        runs = [d for d in (self.sweep_dialog, self.measure_dialog) if d is not None]
        asked = not self._stopped_by_signal  # nobody is there to answer (stop_by_signal)
        if (asked and not all(d.may_close() for d in runs)) or not self.maybe_save():  # type: ignore[attr-defined]
            event.ignore()
            return
        s = settings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("windowState", self.saveState(self.layout_version()))
        s.sync()
        for logger in ("piui", "parasol_core"):
            logging.getLogger(logger).removeHandler(self.handler)
        self.exporter.shutdown()
        if self.local_estimator is not None:
            self.local_estimator.stop()
        for d in runs:  # a measurement's C programs are killed, nothing is written; a
            d.cancel()  # sweep's pool ends
        event.accept()
