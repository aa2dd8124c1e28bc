"""Start-up (issue 14): PIUI paints its first screen without the heavy modules, and
everything it puts off — the windows in docks behind others, the sensitivity (sympy),
the charts (pyqtgraph), the estimator's client — is there, filled and live, as soon as
the user gets to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QTabWidget

from parasol_core.model import COMBINATION_NAMES, Timing
from piui.document import Document
from piui.windows.combinations import CombinationsWindow

ROOT = Path(__file__).resolve().parents[2]
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
# lark: not a run-time dependency at all (the tests' specification of the syntax);
# numpy.ma: numpy 2's first np.unique imports it (the grid view's first paint used to)
HEAVY = ["sympy", "pyqtgraph", "parasol_core.estimator.client", "piui.windows.runtime",
         "piui.windows.grid_view", "piui.windows.instructions", "piui.windows.cache",
         "importlib.metadata", "lark", "numpy.ma"]  # fmt: skip

CHILD = """
import json, os, sys, time
from PySide6.QtWidgets import QApplication
from piui.app import main  # noqa: F401  (what `piui` imports)
from piui.main_window import MainWindow

heavy = {heavy!r}
seen = {{}}
app = QApplication([])
seen["imported"] = [m for m in heavy if m in sys.modules]
window = MainWindow()
window.ask_save_changes = lambda: None
assert window.open_file({path!r})
seen["opened"] = [m for m in heavy if m in sys.modules]
seen["built"] = [k for k in window.docks if window.panels.is_built(k)]
if {show!r}:
    window.show()
    page = window.panels["combinations"].sensitivity_page
    deadline = time.monotonic() + 60
    while page.is_pending() and time.monotonic() < deadline:
        app.processEvents()
    seen["shown"] = [m for m in heavy if m in sys.modules]
    seen["rows"] = page.table.rowCount()
print(json.dumps(seen))
os._exit(0)
"""


def run_child(tmp_path: Path, show: bool) -> dict:
    code = CHILD.format(heavy=HEAVY, path=str(GCEL), show=show)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "PIUI_SETTINGS": str(tmp_path / "settings.ini")}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_piui_and_opening_a_model_loads_no_heavy_module(tmp_path):
    seen = run_child(tmp_path, show=False)
    assert seen["imported"] == []
    assert seen["opened"] == []
    # the windows in front (the first-run layout: the scalers and the ratios side by
    # side) are built; those behind them, or closed, wait
    assert {"groups", "combinations", "diagnostics"} <= set(seen["built"])
    assert not {"instructions", "cache", "runtime", "grid-view"} & set(seen["built"])


def test_sympy_comes_after_the_first_paint_and_fills_the_sensitivity(tmp_path):
    seen = run_child(tmp_path, show=True)
    assert "sympy" in seen["shown"]  # the sensitivity is on the first screen's dock
    assert "pyqtgraph" not in seen["shown"]  # the chart tab is behind the sensitivity's
    assert "lark" not in seen["shown"] and "numpy.ma" not in seen["shown"]  # painting, too
    assert seen["rows"] == 2  # ia_spd: pt(1).iga and tl(1)(1).speed


# ---------------------------------------------------------------------- docks behind others


def test_a_dock_behind_another_is_built_when_shown_and_follows_edits(main_window, qtbot):
    window = main_window
    doc = window.document
    assert not window.panels.is_built("cache")
    # an edit before the window exists: it is built from the model as it is then
    doc.session.set_value("pc(1).size", 64, label="Set cache size")
    window.show()
    qtbot.waitExposed(window)
    assert not window.panels.is_built("cache")
    window.docks["cache"].raise_()
    qtbot.waitUntil(lambda: window.panels.is_built("cache"))
    cache = window.panels["cache"]
    assert window.docks["cache"].widget() in (cache, cache.parentWidget().parentWidget())
    assert cache.isVisible()
    assert cache.size_edit.field.text() == "64"
    doc.session.set_value("pc(1).size", 4096, label="Set cache size")  # live from now on
    assert cache.size_edit.field.text() == "4096"
    doc.undo_stack.undo()
    assert cache.size_edit.field.text() == "64"


def test_asking_for_a_panel_builds_it_without_showing_it(main_window):
    assert not main_window.panels.is_built("runtime")
    runtime = main_window.panels["runtime"]
    assert main_window.panels.is_built("runtime")
    assert runtime is main_window.panels["runtime"]  # built once
    assert list(main_window.panels) == list(main_window.docks)


def test_show_panel_builds_and_focuses_a_waiting_panel(main_window, qtbot):
    main_window.show()
    qtbot.waitExposed(main_window)
    main_window.show_panel("groups")
    assert main_window.panels.is_built("groups")
    qtbot.waitUntil(lambda: main_window.panels["groups"].isVisible())


# ---------------------------------------------------------------------- the sensitivity


@pytest.fixture
def combinations(qtbot, sample_copy):
    document = Document()
    document.open(sample_copy("parsytec-gcel.machine"))
    window = CombinationsWindow(document)
    qtbot.addWidget(window)
    window.resize(760, 900)
    return window


def sensitivity_rows(window: CombinationsWindow) -> dict[str, str]:
    table = window.sensitivity
    return {table.item(r, 0).text(): table.item(r, 4).text() for r in range(table.rowCount())}


def test_the_sensitivity_waits_until_shown_then_fills(combinations, qtbot):
    window = combinations
    page = window.sensitivity_page
    assert page.is_pending() and window.sensitivity.rowCount() == 0
    assert "Sensitivity of po(1).ia_spd" in window.sensitivity_title.text()
    window.show()
    qtbot.waitUntil(lambda: not page.is_pending())
    assert sensitivity_rows(window) == {"pt(1).iga": "+1", "tl(1)(1).speed": "-1"}
    assert "pt(1).iga" in window.symbolic.text()


def test_a_sensitivity_behind_the_chart_tab_follows_edits_when_shown_again(combinations, qtbot):
    window = combinations
    doc = window.document
    window.show()
    qtbot.waitUntil(lambda: not window.sensitivity_page.is_pending())
    tabs: QTabWidget = window.tabs
    tabs.setCurrentIndex(1)  # the chart in front: the sensitivity is hidden
    window.select("da_spd")
    doc.session.set_expression("po(1).da_spd", "pt(1).dga ** 2 / tl(1)(1).speed", label="Edit")
    qtbot.wait(SENSITIVITY_WAIT_MS)
    assert window.sensitivity_page.is_pending()
    tabs.setCurrentIndex(0)  # filled before it is painted: no stale table on screen
    assert not window.sensitivity_page.is_pending()
    assert sensitivity_rows(window) == {"pt(1).dga": "+2", "tl(1)(1).speed": "-1"}
    before = window.sensitivity.item(0, 3).text()
    doc.session.set_value("pt(1).dga", Timing(2.4e-06), label="Set")  # live while shown
    qtbot.waitUntil(lambda: window.sensitivity.item(0, 3).text() != before)


SENSITIVITY_WAIT_MS = 300  # longer than the combinations window's refresh timer


# ---------------------------------------------------------------------- the chart


def test_the_chart_is_built_when_its_tab_is_shown_and_follows_edits(combinations, qtbot):
    window = combinations
    doc = window.document
    window.show()
    qtbot.waitExposed(window)
    chart = window.chart
    assert not chart.is_built()
    assert chart.bar_count() == len(COMBINATION_NAMES)  # its data is kept meanwhile
    doc.session.set_value("pt(1).iga", Timing(1.7e-06), label="Set")  # before it is built
    qtbot.waitUntil(lambda: not window._chart_timer.isActive())
    window.tabs.setCurrentIndex(1)
    assert chart.is_built()
    bar = chart.bars[0]
    top = 10 ** (bar.opts["y0"][0] + bar.opts["height"][0])
    assert top == pytest.approx(doc.engine.value("po(1).ia_spd"))
    doc.session.set_value("pt(1).iga", Timing(3.4e-06), label="Set")  # live from now on
    qtbot.waitUntil(lambda: not window._chart_timer.isActive())
    top = 10 ** (bar.opts["y0"][0] + bar.opts["height"][0])
    assert top == pytest.approx(doc.engine.value("po(1).ia_spd"))


# ---------------------------------------------------------------------- the Estimate panel


def test_the_estimate_panel_built_after_an_export_knows_the_exported_model(main_window):
    from piui.export import ExportResult

    assert not main_window.panels.is_built("estimate")
    doc = main_window.document  # exported as it is now (an export records which state)
    main_window.exporter.last = ExportResult(
        "http://127.0.0.1:1",
        model="m0042",
        name="gcel",
        generation=doc.generation,
        revision=doc.revision,
    )
    panel = main_window.estimate  # built now, after the export
    assert panel.model == "m0042"
    assert panel.route_button.isEnabled()


# ---------------------------------------------------------------------- opening another model


def test_opening_another_model_shows_its_current_processor_then_follows_changes(
    combinations, sample_copy
):
    window = combinations
    doc = window.document
    doc.open(sample_copy("fwi-csys.machine"))  # one refresh, for its first processor type
    assert window.processor_box.count() == len(doc.machine.processors) == 3
    first = doc.machine.processors[0]
    assert window.rows["ia_spd"].edit.text() == first.combinations["ia_spd"].text
    second = doc.machine.processors[1]
    doc.set_current_processor(second.id)
    assert window.rows["ia_spd"].edit.model_text() == second.combinations["ia_spd"].text
    assert window.key("ia_spd") == f"po({second.id}).ia_spd"


def test_a_sensitivity_behind_another_dock_waits_for_its_tab(main_window, qtbot):
    """Qt keeps a dock behind another's tab 'visible': the sensitivity (sympy) waits
    for its visible region, and is worked out when the Combinations tab is chosen."""
    window = main_window.panels["combinations"]
    page = window.sensitivity_page
    qtbot.waitUntil(lambda: not page.is_pending())  # in front at start: worked out
    main_window.show_panel("runtime")  # the run-time systems' tab, in front of it
    qtbot.waitUntil(lambda: window.visibleRegion().isEmpty())
    window.select("da_spd")
    qtbot.wait(100)
    assert page.is_pending()
    main_window.docks["combinations"].raise_()
    qtbot.waitUntil(lambda: not page.is_pending())
    assert "Sensitivity of po(1).da_spd" in window.sensitivity_title.text()
    assert window.sensitivity.rowCount() == 2
