"""The screenshot of File > Measure this machine… after Validate (docs/manual.md): PIUI on
the measured sample of this machine (sample_models/amd-epyc-host.machine), its measure
dialog's Validate run to the end (the report's two experiments and the five programs
the measurement never saw, each at its sizes: about a minute), the dialog grabbed.

    Xvfb :93 -screen 0 1600x1000x24 &   DISPLAY=:93 openbox &
    DISPLAY=:93 .venv/bin/python docs/screenshots/make_measure.py [MODEL]

MODEL: the model to validate (default: the sample). Writes measure-validation.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shots import OUT, ROOT, main_window, settle, until

MODEL = ROOT / "sample_models" / "amd-epyc-host.machine"


def main() -> None:
    window = main_window(Path(sys.argv[1]) if len(sys.argv) > 1 else MODEL)
    window.show_measure()
    dialog = window.measure_dialog
    dialog.resize(900, 760)
    settle(0.5)
    dialog.validate()
    until(lambda: not dialog.running, 600, "the validation")
    settle(1.0)
    shot = OUT / "measure-validation.png"
    dialog.grab().save(str(shot))
    print("wrote", shot, "-", dialog.status.text())
    window.close()


if __name__ == "__main__":
    main()
