"""The windows the main window docks beside its fixed ones, in View-menu order.

Each entry is (key, title, factory(document) -> QWidget, dock area). A panel may offer
``extra_windows() -> list[(name, QWidget)]``: top-level windows it opens (the
instruction category windows), which `piui --screenshots` renders too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from PySide6.QtCore import Qt

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea
# The topology windows' place: the right area too, in a tab group of their own that the
# main window splits off beside the processor windows' (eleven tabs in one group would
# leave no room for their names).
TOPOLOGY = "topology"


def _lazy(module: str, name: str) -> Callable:
    """A factory that imports its window's module when it is first called: the main
    window builds a window only when its dock is first shown, and the modules of the
    windows nobody has opened (and what they import: pyqtgraph, numpy) stay unloaded."""

    def make(document):  # noqa: ANN001, ANN202
        return getattr(importlib.import_module(f"piui.windows.{module}"), name)(document)

    make.__qualname__ = make.__name__ = name
    return make


def panels() -> list[tuple[str, str, Callable, Qt.DockWidgetArea]]:
    return [
        ("groups", "Instruction groups", _lazy("groups", "InstructionGroupsWindow"), RIGHT),
        ("instructions", "Individual instructions", _lazy("instructions", "InstructionsWindow"),
         RIGHT),
        ("cache", "Cache", _lazy("cache", "CacheWindow"), RIGHT),
        ("combinations", "Combinations", _lazy("combinations", "CombinationsWindow"), RIGHT),
        ("runtime", "Run-time systems", _lazy("runtime", "RuntimeSystemsWindow"), RIGHT),
        # the topology windows: a tab group of their own beside the processor windows
        ("grid-view", "Grid view", _lazy("grid_view", "GridViewWindow"), TOPOLOGY),
        ("link-groups", "Link groups", _lazy("link_groups", "LinkGroupsWindow"), TOPOLOGY),
        ("topology-editor", "Topology editor", _lazy("topology_editor", "TopologyEditorWindow"),
         TOPOLOGY),
        ("mapping-editor", "Mapping editor", _lazy("mapping_editor", "MappingEditorWindow"),
         TOPOLOGY),
        ("machine-combination", "Machine combination",
         _lazy("machine_combination", "MachineCombinationWindow"), TOPOLOGY),
        # a traced program predicted on the model (File > Open program trace…): below,
        # where the timeline gets the window's width
        ("program", "Program", _lazy("program", "ProgramWindow"), BOTTOM),
    ]  # fmt: skip
