"""The estimator protocol's constants and the checks every method applies to its params.

Shared by the server and the client; imports neither aiohttp nor the JSON-RPC library.
See ``docs/estimator.md`` for the protocol itself.
"""

from __future__ import annotations

import math
from typing import Any

from parasol_core.base.words import counted

#: Bumped on any incompatible change; new methods or result fields bump the minor part.
PROTOCOL_VERSION = "1.9"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7911
DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
RPC_PATH = "/rpc"

# JSON-RPC 2.0's own codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# the estimator's (-32000 to -32099 are for the implementation)
UNKNOWN_MODEL = -32001
EVALUATION_FAILED = -32002
OVER_BUDGET = -32003  # not answered within the request's time budget
STORE_FULL = -32004  # a push past the store's size limit

#: ``bytes`` of a message: at most 2**53, the largest integer a double holds exactly.
MAX_BYTES = float(2**53)
#: processor numbers, ids and counts of things: 32-bit, as in model files
MAX_INT = 2**31 - 1


class ParamError(ValueError):
    """A parameter the method cannot take (becomes -32602 with this message)."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


class MethodError(Exception):
    """Any other JSON-RPC error a method raises: code, message, data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def check_int(name: str, value: Any, low: int = -MAX_INT, high: int = MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"'{name}' must be an integer, not {_kind(value)}")
    if not low <= value <= high:
        raise ParamError(f"'{name}' must be between {low} and {high}, not {value}")
    return value


def check_str(name: str, value: Any, max_length: int | None = None) -> str:
    if not isinstance(value, str):
        raise ParamError(f"'{name}' must be a string, not {_kind(value)}")
    if max_length is not None and len(value) > max_length:
        raise ParamError(
            f"'{name}' is longer than {counted(max_length, 'character', grouped=False)}"
        )
    return value


def check_name(name: str, value: Any, max_length: int) -> str:
    """A name to find a model by: a string without control characters (NUL and the like
    would be stored and listed raw)."""
    from parasol_core.base.limits import control_character

    check_str(name, value, max_length)
    bad = control_character(value)
    if bad is not None:
        raise ParamError(f"'{name}' cannot contain {bad!r} (a control character)")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParamError(f"'{name}' must be true or false, not {_kind(value)}")
    return value


def check_number(name: str, value: Any, low: float, high: float) -> float:
    """A finite JSON number in [low, high] (an integer counts)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"'{name}' must be a number, not {_kind(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ParamError(f"'{name}' must be finite")
    if not low <= value <= high:
        raise ParamError(f"'{name}' must be between {_exact(low)} and {_exact(high)}, "
                         f"not {_exact(value)}")  # fmt: skip
    return value


def _exact(x: float) -> str:
    """A number as a message shows it, every digit true: 2**53 + 1 is not 9.0072e+15."""
    if isinstance(x, int):
        return str(x) if x.bit_length() < 200 else f"a {len(str(abs(x)))}-digit number"
    if x.is_integer() and abs(x) < 1e17:
        return str(int(x))
    return repr(x)


def check_bytes(name: str, value: Any) -> float:
    return check_number(name, value, 0.0, MAX_BYTES)


def check_list(name: str, value: Any) -> list:
    if not isinstance(value, list):
        raise ParamError(f"'{name}' must be an array, not {_kind(value)}")
    return value


def check_object(name: str, value: Any) -> dict:
    if not isinstance(value, dict):
        raise ParamError(f"'{name}' must be an object, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    # a column of a binary request (binary.ColumnRef), where the method wants no array
    return getattr(value, "protocol_kind", type(value).__name__)


def diagnostic_data(d: Any) -> dict[str, Any]:
    """A :class:`~parasol_core.base.diagnostics.Diagnostic` as protocol data."""
    return {"severity": d.severity, "message": d.message, "line": d.line, "column": d.column}
