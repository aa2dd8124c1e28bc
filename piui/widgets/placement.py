"""A chooser of where a trace's ranks run (in order, a virtual topology, a hostfile),
as the Program window and the sweep dialog show it: its entries are
:func:`parasol_core.frontend.program.placement_entries`'."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from parasol_core.frontend.program import Placement

PLACEMENT_TIP = (
    "Which processor each rank runs on: in order on the compute processors, where a "
    "virtual topology's mapping puts virtual processor r + 1, or as a hostfile says "
    "(parasol-model replay --virtual / --hostfile)"
)
HOSTFILE_TIP = "A file of processors, one a line: N, pN, a name of the topology's, with :RANKS for several ranks"


def placement_box() -> QComboBox:
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    box.setToolTip(PLACEMENT_TIP)
    return box


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
