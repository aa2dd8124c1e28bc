"""How fast the editor starts and follows a slider, against bare Qt in the same run.

1. Start-up: the wall time from launching a fresh Python process to the Parsytec GCel
   sample shown in the main window (shown, exposed, and its first paint done). The child
   does what ``piui FILE`` does: import, make the QApplication and the MainWindow, open
   the file, show the window, then process events until the window has been painted, and
   reports a monotonic timestamp; the parent measures from just before it started the
   process. Baseline: a fresh process that shows an empty QMainWindow the same way. Both
   take turns, after one discarded warm-up run of each; medians, and the phases inside
   the child (interpreter start-up, imports, QApplication, window, file load, first paint).
   The ratio of the medians is the figure of issue 14's target (at most 3x). PIUI does
   what nobody sees in its first picture just after it (the sensitivity below the fold
   of the combinations window, with sympy): the time until that is done is reported
   too, and which heavy modules (sympy, pyqtgraph, the estimator client, ...) were
   loaded when the window was painted.

2. Slider steps: with the main window open on GCel, the combinations window shown and the
   individual-instructions category window of ``iga`` open, a drag of iga's mantissa
   slider (sliderPressed, a setValue per step, sliderReleased), one step per 60 Hz frame
   as a mouse would move it. Each step is timed from the value change until every value
   it affects on screen has been painted: the slider, the exact field and the ratio in the
   combinations table. The benchmark watches those widgets' paint events and the windows'
   update requests, and stops when all of them have been painted and no window asks for
   more. The same drag again with the combinations window showing its chart of every
   processor type instead of the sensitivity table; and a drag of the global
   instruction-group scaler (its dock floated beside the others), which changes every
   global timing at once. The Ethernet link speed of fwi-csys has no control in PIUI, so
   that case is reported as skipped. Baseline: the same drag on a bare QSlider whose
   valueChanged calls QLabel.setText.

   The combinations window refreshes its sensitivity table and its chart from timers (at
   most every 120 ms and 40 ms) and the document revalidates 250 ms after the last step:
   these deferred refreshes are timed where they run, between steps, with the painting
   that follows them, and reported on rows of their own. A step during which one of them
   happened to run is left out of the step rows (counted as "mixed", the slowest shown).

Everything runs offscreen (QT_QPA_PLATFORM=offscreen unless set), in child processes
with a time limit, with a temporary settings file and every dialog answered.

    .venv/bin/python benchmarks/bench_gui.py [--repeat N] [--steps N] [--drags N] [--profile]
        [--startup-only]

With ``--profile`` one more iga drag is run under cProfile (its steps only) and the
functions with the most time are printed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GCEL = ROOT / "sample_models" / "parsytec-gcel.machine"
FRAME = 1 / 60  # seconds: one frame at 60 Hz
STARTUP_TARGET = 3.0  # issue 14: PIUI paints GCel within 3x an empty QMainWindow


# --------------------------------------------------------------------------- statistics


def _pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.2f}ms"


# --------------------------------------------------------------------------- children


def _child_startup(kind: str) -> dict[str, float]:
    """Runs in a fresh process: show the window, wait for its first paint, report times."""
    t = {"start": time.monotonic()}
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if kind == "piui":  # what `piui FILE` imports, in its order, before the QApplication
        import logging

        from piui.app import import_core, install_exception_hook

        import_core()
    from PySide6.QtCore import QEvent, QEventLoop, QObject
    from PySide6.QtWidgets import QApplication, QMainWindow

    if kind == "piui":
        from piui.main_window import MainWindow
    t["imports"] = time.monotonic()

    app = QApplication.instance() or QApplication(sys.argv[:1])
    if kind == "piui":  # as piui.app.main does
        app.setApplicationName("PIUI")
        app.setOrganizationName("PIUI")
        logging.getLogger("piui").setLevel(logging.DEBUG)
        install_exception_hook()
    t["qapp"] = time.monotonic()

    if kind == "piui":
        window = MainWindow()
        _no_dialogs(window)
    else:
        window = QMainWindow()
        window.resize(1280, 820)
    t["window"] = time.monotonic()

    if kind == "piui" and not window.open_file(GCEL):
        raise SystemExit(f"cannot open {GCEL}")
    t["load"] = time.monotonic()

    class FirstPaint(QObject):
        painted = False

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.painted = True
            return False

    probe = FirstPaint()
    window.installEventFilter(probe)
    loop = QEventLoop()
    window.show()
    deadline = time.monotonic() + 30
    while not (probe.painted and window.windowHandle().isExposed()):
        loop.processEvents()  # returns once the paint that set the flag is done
        if time.monotonic() > deadline:
            raise SystemExit("the window was never painted")
    t["painted"] = time.monotonic()
    t["cpu"] = time.process_time()  # the process's CPU time (all threads) since it began
    t["modules"] = sorted(m for m in HEAVY if m in sys.modules)
    if kind == "piui":
        # what waits for the first paint (the sensitivity, sympy): until it is done
        page = window.panels["combinations"].sensitivity_page
        while page.is_pending():
            loop.processEvents()
            if time.monotonic() > deadline:
                raise SystemExit("the deferred work never ran")
    t["settled"] = time.monotonic()
    return t


# imports PIUI's first screen should not need (loaded when a window that needs them is)
HEAVY = ("sympy", "pyqtgraph", "parasol_core.estimator.client", "piui.windows.runtime")


def _no_dialogs(window) -> None:
    """No modal dialog can block a child: the main window's questions are answered."""
    from PySide6.QtWidgets import QMessageBox

    window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    window.ask_open_path = lambda: ""
    window.ask_save_path = lambda: ""
    window.show_error = lambda title, text: print(f"{title}: {text}", file=sys.stderr)
    for name in ("question", "critical", "warning", "information", "about"):
        setattr(QMessageBox, name, staticmethod(lambda *a, **k: QMessageBox.StandardButton.Ok))


class _Session:
    """The open windows and the tools to drive and watch them (in the slider child)."""

    def __init__(self) -> None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtCore import QEvent, QEventLoop, QObject
        from PySide6.QtWidgets import QApplication

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        # QEventLoop.processEvents: QCoreApplication.processEvents is one of the calls
        # that lose a reference to None each time (see the module docstring)
        self.loop = QEventLoop()
        paint, request = QEvent.Type.Paint, QEvent.Type.UpdateRequest

        class Watch(QObject):
            """Paint events of the probe widgets, update requests of the windows."""

            def __init__(self) -> None:
                super().__init__()
                self.painted: set[int] = set()
                self.requests = 0

            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                kind = event.type()
                if kind == paint:
                    self.painted.add(id(watched))
                elif kind == request:
                    self.requests += 1
                return False

        self.watch = Watch()
        self.watched: list = []  # keeps the wrappers (and so their ids) alive
        self.fired: list[str] = []  # deferred refreshes that ran since the last look

    def observe(self, *widgets) -> list[int]:
        """Watch these widgets (and windows); their ids, for ``drag``."""
        for w in widgets:
            if w not in self.watched:
                w.installEventFilter(self.watch)
                self.watched.append(w)
        return [id(w) for w in widgets]

    def mark(self, signal, name: str) -> None:
        """Note when ``signal`` (a timer's timeout) has run its slots."""
        signal.connect(lambda: self.fired.append(name))

    def settle(self, quiet: float = 0.4, limit: float = 10.0) -> None:
        """Process events until nothing has happened for ``quiet`` seconds."""
        start = last = time.perf_counter()
        while (now := time.perf_counter()) - last < quiet and now - start < limit:
            before = (self.watch.requests, len(self.fired))
            a = time.perf_counter()
            self.loop.processEvents()
            if time.perf_counter() - a > 2e-4 or (self.watch.requests, len(self.fired)) != before:
                last = time.perf_counter()
            else:
                time.sleep(5e-4)

    def paint_through(self, probes: set[int], t0: float, limit: float = 2.0) -> float | None:
        """Process events until every probe has been painted and no window asks for
        another update; the time the last of that work ended, or None if it never did."""
        end = None
        while True:
            requests, painted = self.watch.requests, len(self.watch.painted)
            self.loop.processEvents()
            now = time.perf_counter()
            busy = self.watch.requests != requests or len(self.watch.painted) != painted
            if busy:
                end = now
            if not busy and probes <= self.watch.painted:
                return end if end is not None else now
            if now - t0 > limit:
                return None

    def drag(self, slider, values: list[int], probes: list[int], profiler=None) -> dict:
        """Drag ``slider`` through ``values``, one per frame; time each step and every
        deferred refresh that runs in between. A profiler sees the steps only."""
        wanted = set(probes)
        hidden = [
            type(w).__name__
            for w in self.watched
            if id(w) in wanted and w.visibleRegion().isEmpty()
        ]
        if hidden:
            raise SystemExit(f"not on screen, so never painted: {', '.join(hidden)}")
        out: dict[str, list] = {"handler": [], "step": [], "mixed": [], "deferred": []}
        missed = 0
        self.fired.clear()
        slider.setSliderDown(True)  # emits sliderPressed: the drag's merge key
        next_frame = time.perf_counter()
        for value in values:
            self._idle_until(next_frame, out["deferred"])
            next_frame += FRAME
            self.fired.clear()
            self.watch.painted.clear()
            if profiler is not None:
                profiler.enable()
            t0 = time.perf_counter()
            slider.setValue(value)
            t1 = time.perf_counter()
            end = self.paint_through(wanted, t0)
            if profiler is not None:
                profiler.disable()
            if end is None:
                missed += 1
                continue
            if self.fired:  # a deferred refresh ran within this step
                out["mixed"].append(end - t0)
                self.fired.clear()
            else:
                out["handler"].append(t1 - t0)
                out["step"].append(end - t0)
        slider.setSliderDown(False)  # sliderReleased
        self._idle_until(time.perf_counter() + 0.4, out["deferred"])  # validation etc.
        out["missed"] = missed
        return out

    def _idle_until(self, deadline: float, deferred: list) -> None:
        """Run the event loop until ``deadline``, timing each deferred refresh (a timer's
        work plus the painting that follows it)."""
        while time.perf_counter() < deadline:
            self.fired.clear()
            requests = self.watch.requests
            a = time.perf_counter()
            self.loop.processEvents()
            if not self.fired:
                if self.watch.requests == requests:
                    time.sleep(2e-4)
                continue
            names = list(self.fired)
            end = self.paint_through(set(), a)
            deferred.append(("+".join(names), (end or time.perf_counter()) - a))


def _triangle(start: int, steps: int, low: int, high: int) -> list[int]:
    """``steps`` slider positions away from ``start`` by one each and back again."""
    direction = 1 if start + steps // 2 <= high else -1
    up = [start + direction * (i + 1) for i in range(steps // 2)]
    values = up + up[-2::-1] + [start]
    values = [max(low, min(high, v)) for v in values][:steps]
    return values


def _child_steps(steps: int, drags: int, profile: bool) -> dict:
    session = _Session()
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel, QSlider, QVBoxLayout, QWidget

    from parasol_core.base.params import GROUPS
    from piui.main_window import MainWindow
    from piui.windows.instructions import CATEGORIES

    results: dict = {}

    # ---- the baseline: a bare slider and a label
    bare = QWidget()
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setRange(100, 999)
    slider.setValue(737)
    label = QLabel("7.37")
    slider.valueChanged.connect(lambda v: label.setText(f"{v / 100:.2f}"))
    layout = QVBoxLayout(bare)
    layout.addWidget(slider)
    layout.addWidget(label)
    bare.resize(400, 80)
    bare.show()
    session.observe(bare)
    probes = session.observe(slider, label)
    session.settle()
    values = _triangle(slider.value(), steps, slider.minimum(), slider.maximum())
    results["bare"] = [session.drag(slider, values, probes) for _ in range(drags)]
    bare.close()

    # ---- PIUI on GCel
    window = MainWindow()
    _no_dialogs(window)
    window.setAnimated(False)
    if not window.open_file(GCEL):
        raise SystemExit(f"cannot open {GCEL}")
    window.show()
    window.show_panel("combinations")
    combinations = window.panels["combinations"]
    slug = next(c.slug for c in CATEGORIES if "iga" in c.names)
    category = window.panels["instructions"].open_category(slug)
    session.observe(window, category)
    session.mark(combinations._chart_timer.timeout, "chart")
    session.mark(combinations._sensitivity_timer.timeout, "sensitivity")
    session.mark(window.document._validate_timer.timeout, "validation")
    session.settle()
    if not (category.isVisible() and combinations.isVisible()):
        raise SystemExit("the category or the combinations window is not shown")
    results["tabs"] = combinations.tabs.tabText(combinations.tabs.currentIndex())

    # iga: its slider and exact field, and ia_spd in the combinations table
    row = category.rows["iga"]
    mantissa = row.mean.mantissa
    probes = session.observe(mantissa, row.mean.field, combinations.table.viewport())
    values = _triangle(mantissa.value(), steps, mantissa.minimum(), mantissa.maximum())
    results["iga"] = [session.drag(mantissa, values, probes) for _ in range(drags)]

    # the same with the chart of every processor type in view instead of the sensitivity
    combinations.tabs.setCurrentIndex(combinations.tabs.indexOf(combinations.chart.parentWidget()))
    session.observe(combinations.chart.plot.viewport())
    session.settle()
    results["chart_tab"] = combinations.tabs.tabText(combinations.tabs.currentIndex())
    results["iga_chart"] = [session.drag(mantissa, values, probes) for _ in range(drags)]
    combinations.tabs.setCurrentIndex(0)
    session.settle()

    if profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        session.drag(mantissa, values, probes, profiler)
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(25)
        results["profile"] = text.getvalue()

    # the global scaler: its slider, every global timing the category window shows,
    # and the ratios
    dock = window.docks["groups"]
    dock.setFloating(True)
    dock.resize(max(dock.width(), 480), 760)  # every scaler in view, as on a real screen
    dock.show()
    groups = window.panels["groups"]
    session.observe(dock)
    session.settle()
    if not (groups.isVisible() and category.isVisible() and combinations.isVisible()):
        raise SystemExit("the groups, category or combinations window is not shown")
    scaler = groups.rows["global"].slider.slider
    proc = window.document.current_processor()
    scaled = [n for n in category.rows if n in GROUPS["global"].members and n in proc.timings]
    fields = [category.rows[n].mean.field for n in scaled]
    probes = session.observe(scaler, *fields, combinations.table.viewport())
    values = _triangle(scaler.value(), steps, scaler.minimum(), scaler.maximum())
    results["global"] = [session.drag(scaler, values, probes) for _ in range(drags)]
    results["global_timings"] = len([n for n in GROUPS["global"].members if n in proc.timings])
    results["global_shown"] = scaled

    window.close()
    return results


# --------------------------------------------------------------------------- the parent


def _run_child(args: list[str], env: dict[str, str], timeout: float) -> tuple[float, dict]:
    """Start this file as a child; the time it was started and what it printed (JSON)."""
    launched = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired as e:
        raise SystemExit(f"child {args} took more than {timeout:.0f} s:\n{e.stderr}") from None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"child {args} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return launched, json.loads(lines[-1])


def _startup(env: dict[str, str], repeat: int, timeout: float) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {"qt": [], "piui": []}
    for i in range(repeat + 1):  # the first of each is a warm-up (disk cache, .pyc)
        for kind in runs:
            with tempfile.TemporaryDirectory() as tmp:
                env = {**env, "PIUI_SETTINGS": str(Path(tmp) / "settings.ini")}
                child = ["--child", f"startup-{kind}", "--timeout", str(timeout)]
                launched, t = _run_child(child, env, timeout)
            if i == 0:
                continue
            runs[kind].append(
                {
                    "total": t["painted"] - launched,
                    "python": t["start"] - launched,
                    "imports": t["imports"] - t["start"],
                    "QApplication": t["qapp"] - t["imports"],
                    "window": t["window"] - t["qapp"],
                    "load": t["load"] - t["window"],
                    "paint": t["painted"] - t["load"],
                    "settled": t["settled"] - launched,
                    "cpu": t["cpu"],
                    "modules": t["modules"],
                }
            )
    return runs


def _print_startup(runs: dict[str, list[dict]]) -> None:
    phases = ["total", "python", "imports", "QApplication", "window", "load", "paint"]
    heads = ["total", "python", "imports", "QApp", "window", "load", "paint"]
    n = len(runs["piui"])
    print(
        f"Start-up to the window shown and painted, offscreen; medians of {n} fresh processes "
        "of each kind, taking turns"
    )
    print(f"{'':34}" + "".join(f"{h:>10}" for h in heads) + "   total min-max")
    labels = {"qt": "bare Qt: empty QMainWindow", "piui": "PIUI: MainWindow + GCel"}
    med = {}
    for kind, label in labels.items():
        med[kind] = {p: statistics.median(r[p] for r in runs[kind]) for p in phases}
        totals = [r["total"] for r in runs[kind]]
        print(
            f"{label:34}"
            + "".join(f"{_ms(med[kind][p]):>10}" for p in phases)
            + f"   {min(totals) * 1e3:.0f}-{max(totals) * 1e3:.0f}ms"
        )
    ratio = med["piui"]["total"] / med["qt"]["total"]
    extra = med["piui"]["total"] - med["qt"]["total"]
    best = min(r["total"] for r in runs["piui"]) / min(r["total"] for r in runs["qt"])
    verdict = "met" if ratio <= STARTUP_TARGET else "NOT met"
    print(
        f"{'ratio PIUI / bare Qt':34}{ratio:9.2f}x   (+{extra * 1e3:.0f}ms; best / best "
        f"{best:.2f}x; target <= {STARTUP_TARGET:.0f}x: {verdict})"
    )
    cpu = {k: statistics.median(r["cpu"] for r in runs[k]) for k in runs}
    print(
        f"{'CPU time to the paint':34}{_ms(cpu['qt']):>10} bare Qt, {_ms(cpu['piui'])} PIUI: "
        f"{cpu['piui'] / cpu['qt']:.2f}x (the child's own CPU time: less disturbed by a busy "
        "machine than the wall time)"
    )
    settled = statistics.median(r["settled"] for r in runs["piui"])
    print(
        f"{'PIUI: deferred work done':34}{_ms(settled):>10}   (the sensitivity, worked out "
        "with sympy just after the first paint)"
    )
    loaded = sorted({m for r in runs["piui"] for m in r["modules"]})
    print(f"{'heavy modules loaded at paint':34}   {', '.join(loaded) or 'none'}")
    print(
        "python: interpreter start-up to the child's first line; imports: PySide6 (and what "
        "`piui FILE` imports); load: opening GCel (parse, validate, engine, the windows on "
        "show refreshed); paint: show to the first paint done. Every run is a fresh process, "
        "from bytecode (.pyc) as an installed PIUI."
    )


def _step_row(label: str, drags: list[dict], base: float | None) -> float:
    steps = [s for d in drags for s in d["step"]]
    handler = [s for d in drags for s in d["handler"]]
    mixed = sum(len(d["mixed"]) for d in drags)
    missed = sum(d["missed"] for d in drags)
    med, p95, worst = statistics.median(steps), _pct(steps, 95), max(steps)
    ratio = f"{med / base:7.1f}x" if base else f"{'1.0x':>8}"
    print(
        f"{label:34}{len(steps):6d}{_ms(med)}{_ms(p95)}{_ms(worst)}"
        f"{med / FRAME:8.0%}{p95 / FRAME:7.0%}{worst / FRAME:7.0%}"
        f"{_ms(statistics.median(handler))}{ratio}{mixed:6d}{missed:5d}"
    )
    return med


def _print_steps(r: dict, steps: int) -> None:
    drags = len(r["bare"])
    print()
    print(
        f"Per slider step, value change -> every affected value painted; {drags} drags of "
        f"{steps} steps, one per 60 Hz frame"
    )
    print(
        f"{'':34}{'steps':>6}{'median':>9}{'p95':>9}{'max':>9}"
        f"{'med/fr':>8}{'p95/fr':>7}{'max/fr':>7}{'handler':>9}{'ratio':>8}"
        f"{'mixed':>6}{'lost':>5}"
    )
    base = _step_row("bare QSlider -> QLabel.setText", r["bare"], None)
    _step_row("PIUI iga mantissa", r["iga"], base)
    _step_row("PIUI iga mantissa, chart tab shown", r["iga_chart"], base)
    _step_row(f"PIUI global scaler ({r['global_timings']} timings)", r["global"], base)
    print(
        f"{'PIUI fwi-csys Ethernet link speed':34}  skipped: PIUI has no control for a link speed"
    )
    print()
    print("Deferred refreshes during those drags (timer work + its painting), per run")
    print(f"{'':34}{'runs':>6}{'median':>9}{'p95':>9}{'max':>9}{'med/fr':>8}{'max/fr':>7}")
    cases = {"iga": "iga", "iga_chart": "iga (chart tab)", "global": "global"}
    for case, label in cases.items():
        found: dict[str, list[float]] = {}
        for d in r[case]:
            for name, seconds in d["deferred"]:
                found.setdefault(name, []).append(seconds)
        for name, times in sorted(found.items()):
            med = statistics.median(times)
            print(
                f"{f'{label}: {name}':34}{len(times):6d}{_ms(med)}{_ms(_pct(times, 95))}"
                f"{_ms(max(times))}{med / FRAME:8.0%}{max(times) / FRAME:7.0%}"
            )
    print()
    print(
        f"frame = {FRAME * 1e3:.1f} ms. handler: the median of the synchronous part (model, "
        "engine, widgets told); the rest of a step is painting."
    )
    slowest = ", ".join(
        f"{label} {max(m for d in r[case] for m in d['mixed']) * 1e3:.2f} ms"
        for case, label in cases.items()
        if any(d["mixed"] for d in r[case])
    )
    print(
        "mixed: steps left out because a deferred refresh ran in them (timed above); "
        f"the slowest of them: {slowest or 'none'}. lost: steps never painted."
    )
    print(
        f"shown in the combinations window: the '{r['tabs']}' tab (or '{r['chart_tab']}'); "
        f"global timings shown in the category window: {', '.join(r['global_shown'])}"
    )
    if "profile" in r:
        print()
        print("cProfile of the steps of one more iga drag (painting included):")
        print(r["profile"].rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="start-up runs of each kind")
    parser.add_argument("--steps", type=int, default=120, help="steps per slider drag")
    parser.add_argument("--drags", type=int, default=3, help="drags per slider")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per child")
    parser.add_argument("--profile", action="store_true", help="cProfile an extra iga drag")
    parser.add_argument("--startup-only", action="store_true", help="skip the slider drags")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        import faulthandler

        # a child that hangs says where, and ends before the parent gives up on it
        faulthandler.dump_traceback_later(max(1.0, args.timeout - 5), exit=True)
        if args.child.startswith("startup-"):
            result = _child_startup(args.child.removeprefix("startup-"))
        else:
            result = _child_steps(args.steps, args.drags, args.profile)
        print(json.dumps(result), flush=True)
        os._exit(0)  # the parent has what it needs: no teardown

    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    # As an installed PIUI runs: from bytecode (the warm-up run writes the .pyc files of
    # the repository's modules; site-packages has its own). With PYTHONDONTWRITEBYTECODE
    # set, every piui and parasol_core module would be compiled from source at each start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    _print_startup(_startup(env, args.repeat, args.timeout))
    sys.stdout.flush()
    if args.startup_only:
        return
    with tempfile.TemporaryDirectory() as tmp:
        env["PIUI_SETTINGS"] = str(Path(tmp) / "settings.ini")
        options = f"--steps {args.steps} --drags {args.drags} --timeout {args.timeout}"
        child = ["--child", "steps", *options.split()] + (["--profile"] if args.profile else [])
        _, steps = _run_child(child, env, args.timeout)
    _print_steps(steps, args.steps)


if __name__ == "__main__":
    main()
