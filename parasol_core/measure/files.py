"""Where measurements are kept beside a model: the one naming rule the run-time systems
window and its fit dialog share (and any command that looks for them should).

The measured times of a run-time primitive (``mp.bcast``: a CSV of
``procs,bytes,seconds[,error]`` or OSU output, as `parasol-model fit` and the fit dialog
read) kept beside the model file ``MODEL.machine`` are
``measurements/MODEL.SECTION.NAME.csv``, the section as the model file names it::

    sample_models/cray-t3d.machine, mp.bcast -> sample_models/measurements/cray-t3d.mpi.bcast.csv

The window opens the fit dialog of the first primitive that has such a file, with the
file loaded, for `piui --screenshots` (the sample Cray T3D model's bcast).
"""

from __future__ import annotations

from pathlib import Path

from parasol_core.model import RUNTIME_SECTIONS

MEASUREMENTS_DIR = "measurements"


def measurements_file(model: str | Path, reference: str) -> Path:
    """The measurements of the run-time primitive ``reference`` (``mp.bcast``) kept
    beside the model file ``model``; ValueError for a reference that names none."""
    prefix, _, name = reference.partition(".")
    system = next((cls for cls in RUNTIME_SECTIONS if cls.PREFIX == prefix), None)
    if system is None or not name or "." in name:
        raise ValueError(f"{reference!r} is not a run-time primitive (pv.NAME, ex.NAME or "
                         "mp.NAME)")  # fmt: skip
    path = Path(model)
    return path.parent / MEASUREMENTS_DIR / f"{path.stem}.{system.ATTR}.{name}.csv"
