"""Measuring the host: a PARASOL model of the machine this runs on (issue 20).

Qt-free. :func:`measure_host` runs the generated C benchmarks and returns a
:class:`HostModel`; :func:`validate_host` runs the report's two validation programs
(4.5) and the held-out programs of the suite (:mod:`parasol_core.measure.suite`) and
compares their times with the model's block estimates. docs/measure.md says
what a measured timing means and how it is measured.
"""

from parasol_core.measure.host import (
    HostModel,
    MeasureOptions,
    Progress,
    estimate_seconds,
    measure_host,
)
from parasol_core.measure.toolchain import CompilerMissing, MeasureCancelled
from parasol_core.measure.validation import (
    ValidationRow,
    format_validation_table,
    validate_host,
)

FLOOR = 5
__all__ = [
    "CompilerMissing",
    "HostModel",
    "MeasureCancelled",
    "MeasureOptions",
    "Progress",
    "ValidationRow",
    "estimate_seconds",
    "format_validation_table",
    "measure_host",
    "validate_host",
]
