"""Topologies: shapes, generators, routing techniques, mappings and network state.

The parts, one module each:

* :mod:`.shape`: grid shapes and processor coordinates (``Shape``, ``shape_of``);
* :mod:`.generators`: grid, ring, N-D torus, hypercube, bus, clique, fat tree and dragonfly
  topologies (:mod:`.switched`: fat trees and dragonflies, their structure and routing);
* :mod:`.switches`: which processors are switches, and what network a topology says it is;
* :mod:`.compare`: what replacing a topology adds, removes and changes;
* :mod:`.replacement`: replacing a topology with every consequence, planned once for the
  preview and for Apply;
* :mod:`.routing`: routing techniques by name (built-ins, entry-point plug-ins);
* :mod:`.techniques`: the built-in techniques;
* :mod:`.index`: routes through a hardware topology (``route``, ``routes``);
* :mod:`.virtual`: virtual links and routes between virtual processors;
* :mod:`.mapping`: mapping quality (dilation, congestion) and mapping schemes;
* :mod:`.transfer`: route ids, network states and transfer times (:mod:`.resources`: pacing
  and max-min sharing; :mod:`.ragged`: the ragged arrays they gather over);
* :mod:`.steps`: how much work a batch of routes is, before it is plotted;
* :mod:`.shortest`: shortest paths over any link list;
* :mod:`.layout`: where each processor is drawn.

The event simulator that runs phases over these is :mod:`parasol_core.simulate`.

See ``docs/topology.md``.
"""

import importlib
from typing import TYPE_CHECKING

FLOOR = 3

if TYPE_CHECKING:
    from parasol_core.topology.compare import TopologyChange, compare_topologies
    from parasol_core.topology.errors import RoutingError
    from parasol_core.topology.generators import GENERATORS, generate
    from parasol_core.topology.index import (
        Route,
        RouteBatch,
        TopologyIndex,
        index_of,
        invalidate,
        route,
        routes,
    )
    from parasol_core.topology.mapping import (
        MAPPING_SCHEMES,
        MappingQuality,
        make_mapping,
        mapping_quality,
        mapping_schemes,
    )
    from parasol_core.topology.routing import (
        RoutingTechnique,
        available_routings,
        get_routing,
        refresh_routings,
        register_routing,
        unregister_routing,
    )
    from parasol_core.topology.shape import Layout, Shape, infer_shape, shape_of
    from parasol_core.topology.transfer import NetworkState, RouteTable, transfer_time
    from parasol_core.topology.virtual import (
        added_links,
        virtual_layout,
        virtual_links,
        virtual_route,
        virtual_routes,
        virtual_shape,
    )

# Exports resolve on first use (PEP 562), so that `parasol_core.analysis.validate`, which only
# asks `routing` for the known names, does not pay for importing numpy.
_EXPORTS: dict[str, str] = {
    "GENERATORS": "generators",
    "Layout": "shape",
    "MAPPING_SCHEMES": "mapping",
    "MappingQuality": "mapping",
    "NetworkState": "network",
    "Route": "index",
    "RouteBatch": "index",
    "RouteTable": "network",
    "RoutingError": "errors",
    "RoutingTechnique": "routing",
    "Shape": "shape",
    "TopologyChange": "compare",
    "TopologyIndex": "index",
    "added_links": "virtual",
    "available_routings": "routing",
    "compare_topologies": "compare",
    "generate": "generators",
    "get_routing": "routing",
    "index_of": "index",
    "infer_shape": "shape",
    "invalidate": "index",
    "make_mapping": "mapping",
    "mapping_quality": "mapping",
    "mapping_schemes": "mapping",
    "refresh_routings": "routing",
    "register_routing": "routing",
    "route": "index",
    "routes": "index",
    "shape_of": "shape",
    "transfer_time": "network",
    "unregister_routing": "routing",
    "virtual_layout": "virtual",
    "virtual_links": "virtual",
    "virtual_route": "virtual",
    "virtual_routes": "virtual",
    "virtual_shape": "virtual",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "GENERATORS", "MAPPING_SCHEMES", "Layout", "MappingQuality", "NetworkState", "Route",
    "RouteBatch", "RouteTable", "RoutingError", "RoutingTechnique", "Shape",
    "TopologyChange", "TopologyIndex", "added_links", "available_routings",
    "compare_topologies", "generate", "get_routing", "index_of", "infer_shape",
    "invalidate", "make_mapping", "mapping_quality", "mapping_schemes",
    "refresh_routings", "register_routing", "route", "routes", "shape_of",
    "transfer_time", "unregister_routing", "virtual_layout", "virtual_links",
    "virtual_route", "virtual_routes", "virtual_shape",
]  # fmt: skip
