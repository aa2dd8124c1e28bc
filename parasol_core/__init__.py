"""parasol_core: PARASOL machine models as a library (parse, validate, evaluate, write).

No Qt is imported anywhere in this package.
"""

import os as _os
import sys as _sys

# numpy's OpenBLAS starts a thread per core when imported, and they spin: 0.08 s of CPU
# of every process that imports parasol_core (half its start). The library does no
# linear algebra large enough to gain by them (fits of a few parameters): one thread,
# unless the user says otherwise (docs/decisions.md, "Replay speed").
if "numpy" not in _sys.modules:
    _os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from parasol_core.base.diagnostics import Diagnostic, ModelSyntaxError
from parasol_core.model import (
    Cache,
    Express,
    Link,
    Machine,
    MachineCombinations,
    Mpi,
    Processor,
    Pvm,
    Timing,
    Topology,
    VirtualTopology,
)
from parasol_core.model.tree import Expression

__version__ = "0.1.0"

# The parser is imported when first used, so that importing the model objects alone
# stays light.
_LAZY = {"load": "loader", "loads": "loader", "parse_expression": "expression"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"parasol_core.syntax.{_LAZY[name]}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'parasol_core' has no attribute {name!r}")


__all__ = [
    "Cache", "Diagnostic", "Express", "Expression", "Link", "Machine",
    "MachineCombinations", "ModelSyntaxError", "Mpi", "Processor", "Pvm", "Timing",
    "Topology", "VirtualTopology", "load", "loads", "parse_expression",
]  # fmt: skip
