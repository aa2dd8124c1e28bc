"""The Diagnostics panel shows each message whole, on as many lines as its width needs:
cut to one line, a long message's reason lay past the panel's edge ("pt(1).iga: the
expression 'pt(1).igm / tl(1)…"), readable only in its tooltip."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from parasol_core.base.diagnostics import Diagnostic
from piui.windows.diagnostics import DiagnosticsPanel

LONG = ("pt(1).iga: the expression 'pt(1).igm / tl(1)(1).speed * ar.bytes' refers to "
        "ar.bytes, which exists only in the mpi section's expressions; give a number or a "
        "timing")  # fmt: skip


def settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


def test_a_long_message_wraps_to_the_panel_s_width_and_unwraps_when_it_widens(qtbot, document):
    panel = DiagnosticsPanel(document())
    qtbot.addWidget(panel)
    panel.show_diagnostics([Diagnostic("error", LONG, 12, 5), Diagnostic("warning", "short", 3)])
    panel.resize(420, 300)
    panel.show()
    settle()
    tree = panel.tree
    line = tree.fontMetrics().height()
    long_row, short_row = (tree.visualItemRect(tree.topLevelItem(i)) for i in (0, 1))
    assert long_row.height() >= 3 * line  # the whole message, on several lines
    assert short_row.height() < 2 * line
    panel.resize(2400, 300)
    settle()
    assert tree.visualItemRect(tree.topLevelItem(0)).height() < 2 * line  # room: one line
    assert panel.diagnostic_at(0).message == LONG
