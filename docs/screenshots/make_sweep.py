"""Screenshots of File > Sweep… (issue 32), for the README: PIUI on the Parsytec GCel
sample, a sweep of two axes (the heat map and what dominates) and one of three (the
parallel coordinates), each run to its end. Runs offscreen or on an X server:

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_sweep.py

Writes sweep-heat-map.png and sweep-parallel.png (the dialog, grabbed).
"""

from __future__ import annotations

from shots import OUT, ROOT, main_window, settle, until


def run(dialog, axes: list[tuple[str, str]], name: str) -> None:  # noqa: ANN001
    while dialog.axes.rowCount():
        dialog.axes.removeRow(0)
    for change, values in axes:
        dialog.add_axis(change, values)
    dialog.run()
    until(lambda: not dialog.running, 120, "the sweep")
    settle(1.0)
    dialog.grab().save(str(OUT / f"{name}.png"))


def main() -> None:
    window = main_window(ROOT / "sample_models" / "parsytec-gcel.machine")
    window.show_sweep()
    dialog = window.sweep_dialog
    dialog.resize(1100, 760)
    settle(0.5)
    run(dialog, [("pt(1).iga", "log 1e-7 1e-5 8"), ("tl(1)(*).speed", "log 1e-7 1e-5 8")],
        "sweep-heat-map")  # fmt: skip
    run(dialog, [("pt(1).iga", "log 1e-7 1e-5 4"), ("tl(1)(*).speed", "log 1e-7 1e-5 4"),
                 ("scale arithmetic", "linear 0.5 2 4")], "sweep-parallel")  # fmt: skip
    window.close()


if __name__ == "__main__":
    main()
