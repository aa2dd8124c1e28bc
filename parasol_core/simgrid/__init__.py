"""SimGrid platform files in and out (docs/simgrid.md).

``import_platform(path) -> Imported`` (a model and what did not carry over) and
``export_platform(machine) -> Exported`` (the XML text and what did not carry over).
The XML is untrusted input: :mod:`.xmlread` parses it with entity declarations and
external entities refused, within size and element budgets, with line numbers.
"""

from parasol_core.simgrid.exporter import (
    MAX_ROUTE_LINKS,
    MAX_ROUTES,
    Exported,
    ExportError,
    export_platform,
)
from parasol_core.simgrid.importer import Imported, import_platform, import_text
from parasol_core.simgrid.units import UnitError, parse_bandwidth, parse_speed, parse_time
from parasol_core.simgrid.xmlread import MAX_ELEMENTS, MAX_PLATFORM_BYTES, PlatformError

FLOOR = 5
__all__ = [
    "MAX_ELEMENTS",
    "MAX_PLATFORM_BYTES",
    "MAX_ROUTES",
    "MAX_ROUTE_LINKS",
    "ExportError",
    "Exported",
    "Imported",
    "PlatformError",
    "UnitError",
    "export_platform",
    "import_platform",
    "import_text",
    "parse_bandwidth",
    "parse_speed",
    "parse_time",
]
