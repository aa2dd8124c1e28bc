"""A chooser of where a trace's ranks run (in order, a virtual topology, a hostfile),
as the Program window and the sweep dialog show it: its entries are
:func:`parasol_core.frontend.program.placement_entries`'."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QComboBox, QPushButton, QWidget

from parasol_core.frontend.program import Placement

PLACEMENT_TIP = (
    "Which processor each rank runs on: in order on the compute processors, where a "
    "virtual topology's mapping puts virtual processor r + 1, or as a hostfile says "
    "(parasol-model replay --virtual / --hostfile)"
)
HOSTFILE_TIP = "A file of processors, one a line: N, pN, a name of the topology's, with :RANKS for several ranks"


def placement_controls(chosen: Callable[[int], None],
                       hostfile: Callable[[], Any]) -> tuple[QComboBox, QPushButton]:  # fmt: skip
    """The chooser (``chosen`` called with an entry's index when the user picks one) and
    its Hostfile… button (``hostfile`` called when pressed)."""
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    box.setToolTip(PLACEMENT_TIP)
    box.activated.connect(chosen)
    button = QPushButton("Hostfile…")
    button.setToolTip(HOSTFILE_TIP)
    button.clicked.connect(lambda: hostfile())
    return box, button


def ask_hostfile(parent: QWidget, document: Any) -> str:
    """The hostfile the user chose (its dialog starting where the model is), or ""."""
    from piui.widgets.file_dialogs import ask_path, start_folder

    return ask_path(parent, "Hostfile", str(start_folder(document)), False, "All files (*)")


def placement_of(entry: Placement) -> tuple[int | None, Path | None]:
    """An entry's meaning as (virtual topology, hostfile): (None, None) is in order."""
    kind, value = entry
    return (value if kind == "virtual" else None,  # type: ignore[return-value]
            value if kind == "hostfile" else None)  # fmt: skip


def fill_placements(box: QComboBox, entries: list[tuple[str, Placement]],
                    chosen: Placement) -> list[Placement]:  # fmt: skip
    """Show ``entries`` in ``box`` with ``chosen`` current, without a signal; what each
    entry means, by index."""
    meant = [data for _, data in entries]
    box.blockSignals(True)
    box.clear()
    box.addItems([words for words, _ in entries])
    box.setCurrentIndex(meant.index(chosen))
    box.blockSignals(False)
    return meant
