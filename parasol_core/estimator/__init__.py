"""The estimator service (``parasol-estimator``), its JSON-RPC protocol and its client.

* :mod:`.protocol`: the protocol version, error codes and param checks;
* :mod:`.methods`: one function per JSON-RPC method, and the table of them;
* :mod:`.store`: pushed models on disk, written atomically and durably;
* :mod:`.server`: the HTTP server and the ``parasol-estimator`` command;
* :mod:`.client`: :class:`Client`, for programs that talk to an estimator.

Importing this package loads only the client side (no aiohttp). See ``docs/estimator.md``.
"""

from parasol_core.estimator.client import (
    Client,
    EstimatorError,
    EstimatorTimeout,
    EstimatorUnreachable,
    ModelRefused,
    ProtocolError,
    RemoteError,
    Unauthorized,
    UnknownModel,
    routes_of,
)
from parasol_core.estimator.protocol import PROTOCOL_VERSION

FLOOR = 6
__all__ = [
    "PROTOCOL_VERSION",
    "Client",
    "EstimatorError",
    "EstimatorTimeout",
    "EstimatorUnreachable",
    "ModelRefused",
    "ProtocolError",
    "RemoteError",
    "Unauthorized",
    "UnknownModel",
    "routes_of",
]
