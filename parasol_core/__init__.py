"""parasol_core: PARASOL machine models as a library (parse, validate, evaluate, write).

No Qt is imported anywhere in this package.
"""

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
