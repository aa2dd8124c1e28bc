"""What-if sweeps: many variants of one model, each made by editing it through the
session's operations, each answered (an expression, a block estimate, a phase, a
program replay), on this machine's cores or on the ranks of an MPI job.

* :mod:`.spec` reads a sweep file (TOML): the base model, the axes, the answers, the
  sample and the budget of a variant (``docs/sweeps.md``).
* :mod:`.variants` makes the variants: the full grid, a random or a Latin-hypercube
  sample, the same whoever asks (seeded).
* :mod:`.worker` makes a variant of the base model and answers it: edits as one step
  of a session on the model, undone after the answer (no model is copied or written).
* :mod:`.results` is the CSV of rows: written one row at a time, read back to resume.
* :mod:`.runner` runs the variants in this process, a process pool or an MPI pool.
"""

from parasol_core.sweep.runner import run_sweep
from parasol_core.sweep.spec import Answer, Axis, SweepError, SweepSpec, load_spec, loads_spec
from parasol_core.sweep.variants import Variant, variants
from parasol_core.sweep.worker import Row, Worker

FLOOR = 6
__all__ = [
    "Answer",
    "Axis",
    "Row",
    "SweepError",
    "SweepSpec",
    "Variant",
    "Worker",
    "load_spec",
    "loads_spec",
    "run_sweep",
    "variants",
]
