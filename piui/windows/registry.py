"""The windows the main window docks beside its fixed ones, in View-menu order.

Each entry is (key, title, factory(document) -> QWidget, dock area). A panel may offer
``extra_windows() -> list[(name, QWidget)]``: top-level windows it opens (the
instruction category windows), which `piui --screenshots` renders too.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
# The topology windows' place: the right area too, in a tab group of their own that the
# main window splits off beside the processor windows' (eleven tabs in one group would
# leave no room for their names).
TOPOLOGY = "topology"


def panels() -> list[tuple[str, str, Callable, Qt.DockWidgetArea]]:
    from piui.windows.cache import CacheWindow
    from piui.windows.combinations import CombinationsWindow
    from piui.windows.grid_view import GridViewWindow
    from piui.windows.groups import InstructionGroupsWindow
    from piui.windows.instructions import InstructionsWindow
    from piui.windows.link_groups import LinkGroupsWindow
    from piui.windows.machine_combination import MachineCombinationWindow
    from piui.windows.mapping_editor import MappingEditorWindow
    from piui.windows.runtime import RuntimeSystemsWindow
    from piui.windows.topology_editor import TopologyEditorWindow

    return [
        ("groups", "Instruction groups", InstructionGroupsWindow, RIGHT),
        ("instructions", "Individual instructions", InstructionsWindow, RIGHT),
        ("cache", "Cache", CacheWindow, RIGHT),
        ("combinations", "Combinations", CombinationsWindow, RIGHT),
        ("runtime", "Run-time systems", RuntimeSystemsWindow, RIGHT),
        # the topology windows: a tab group of their own beside the processor windows
        ("grid-view", "Grid view", GridViewWindow, TOPOLOGY),
        ("link-groups", "Link groups", LinkGroupsWindow, TOPOLOGY),
        ("topology-editor", "Topology editor", TopologyEditorWindow, TOPOLOGY),
        ("mapping-editor", "Mapping editor", MappingEditorWindow, TOPOLOGY),
        ("machine-combination", "Machine combination", MachineCombinationWindow, TOPOLOGY),
    ]
