"""parasol_core: PARASOL machine models as a library (parse, validate, evaluate, write).

No Qt is imported anywhere in this package.
"""

from parasol_core.expr.tree import Expression
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
from parasol_core.syntax.diagnostics import Diagnostic, ModelSyntaxError
from parasol_core.syntax.parser import load, loads, parse_expression

__version__ = "0.1.0"

__all__ = [
    "Cache", "Diagnostic", "Express", "Expression", "Link", "Machine",
    "MachineCombinations", "ModelSyntaxError", "Mpi", "Processor", "Pvm", "Timing",
    "Topology", "VirtualTopology", "load", "loads", "parse_expression",
]  # fmt: skip
