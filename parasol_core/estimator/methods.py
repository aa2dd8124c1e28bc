"""The estimator's methods: one plain function per JSON-RPC method, and the table of them.

Each method is a function ``(service, **params) -> result`` registered with
:func:`method`. The server binds JSON-RPC params to the function's keyword parameters
by name (a missing, extra or misspelt one is -32602 before the function runs), runs it
on a worker thread when ``cpu=True``, and turns :class:`ParamError` into -32602 and
:class:`MethodError` into its own code. A new method is one more decorated function:

    @method("estimate.phase")
    def estimate_phase(svc: Service, model: str, messages: list) -> dict:
        m = svc.model(model)
        ...

Everything model-related is the core's: loading (``parasol_core.syntax``), validation
(``parasol_core.analysis.validate``), evaluation (``parasol_core.expr.engine``), routing and transfer
times (``parasol_core.topology``), block estimates (``parasol_core.analysis.block_time``). What is here
is checking params, naming routes and keeping per-model state between calls.
"""

from __future__ import annotations

import base64
import binascii
import importlib.metadata
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from parasol_core.analysis.block_time import MAX_WORKING_SET, BlockNotes, answer_block
from parasol_core.analysis.validate import validate
from parasol_core.base import budget
from parasol_core.base.arrays import unique
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.numeric import is_whole, read_int
from parasol_core.base.words import counted
from parasol_core.estimator.binary import Binary, ColumnRef
from parasol_core.estimator.protocol import (
    EVALUATION_FAILED,
    MAX_INT,
    PROTOCOL_VERSION,
    STORE_FULL,
    UNKNOWN_MODEL,
    MethodError,
    ParamError,
    check_bool,
    check_bytes,
    check_int,
    check_list,
    check_name,
    check_number,
    check_object,
    check_str,
    diagnostic_data,
)
from parasol_core.estimator.store import ModelStore, StoredText, StoreFull
from parasol_core.expr.engine import Engine
from parasol_core.expr.evaluate import EvalError
from parasol_core.model import Machine
from parasol_core.syntax.loader import loads, parse_expression
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import RouteBatch, TopologyIndex, index_of
from parasol_core.topology.names import names_map, processor_number, table_of
from parasol_core.topology.overflow import TimeOverflowError
from parasol_core.topology.resources import SHARING, forwarders, options_of, route_per_byte
from parasol_core.topology.transfer import RouteTable
from parasol_core.topology.virtual import (
    find_virtual,
    hardware_of,
    hardware_processor,
    virtual_route,
    virtual_routes,
)

__all__ = ["METHODS", "MethodSpec", "Service", "method"]

MAX_NAME = 200
MAX_NAME_LENGTH = 1000  # a processor's name (syntax.annotations.MAX_NAME)
MAX_PAIRS = 1_000_000
# A model's route table (for transfer times) is started afresh past this many routes,
# so a client asking about ever new pairs cannot grow the server without bound.
MAX_TABLE_ROUTES = 200_000


@dataclass(frozen=True)
class MethodSpec:
    name: str
    func: Callable[..., Any]
    cpu: bool  # run on a worker thread, off the event loop
    bulk: bool  # big results: serialize them off the event loop too
    # expensive: in the fair queue of the expensive methods (else the quick ones')
    heavy: bool = False
    # (service, params) -> the work it will do, estimated before it runs (messages,
    # pairs, requests): what a batch is charged against its budget (docs/estimator.md)
    cost: Callable[[Any, dict], int] | None = None


METHODS: dict[str, MethodSpec] = {}


def method(name: str, *, cpu: bool = True, bulk: bool = False, heavy: bool = False,
           cost: Callable[[Any, dict], int] | None = None) -> Callable:  # fmt: skip
    """Register a function as the JSON-RPC method ``name``."""

    def register(func: Callable) -> Callable:
        METHODS[name] = MethodSpec(name, func, cpu, bulk, heavy, cost)
        return func

    return register


def work_of(svc: Any, method_name: Any, params: Any) -> int:
    """The estimated work of one request (0 if it has none or its params are bad: the
    method then says what is wrong)."""
    spec = METHODS.get(method_name) if isinstance(method_name, str) else None
    if spec is None or spec.cost is None or not isinstance(params, dict):
        return 0
    try:
        return max(int(spec.cost(svc, params)), 0)
    except Exception:
        return 0


def _len(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def _pairs_cost(svc: Any, params: dict) -> int:
    pairs = params.get("pairs")
    if isinstance(pairs, list):
        return len(pairs)
    if isinstance(pairs, ColumnRef):
        count = pairs.spec.get("count")
        return count // 2 if isinstance(count, int) else 0
    if isinstance(pairs, dict):
        data, dtype = pairs.get("data"), pairs.get("dtype")
        width = 16 if dtype == "<i8" else 8
        return len(data) * 3 // 4 // width if isinstance(data, str) else 0
    return 0


def _phase_cost(svc: Any, params: dict) -> int:
    from parasol_core.simulate.patterns import pattern_cost

    if params.get("messages") is not None:
        return _len(params.get("messages"))
    pattern, virtual = params.get("pattern"), params.get("virtual")
    if not isinstance(pattern, str) or not (virtual is None or type(virtual) is int):
        return 0
    return pattern_cost(svc.model(params.get("model")).machine, pattern, virtual)


# --------------------------------------------------------------------------- state


class LoadedModel:
    """A stored model, parsed, with what the methods keep between calls."""

    def __init__(self, stored: StoredText, machine: Machine) -> None:
        self.stored = stored
        self.id = stored.id
        self.prefix = stored.id[:8]  # route ids start with it
        self.machine = machine
        # the engine and the route table change as they are used: one user at a time
        self.lock = threading.Lock()
        self._engine: Engine | None = None
        self._index: TopologyIndex | None = None
        self._table: RouteTable | None = None
        self._table_ids: dict[tuple[int, int], int] = {}
        self._block_notes: BlockNotes | None = None

    @property
    def block_notes(self) -> BlockNotes:
        """What the model's text records for block estimates, read once (a scan of the
        whole text each: half a second for every block of a 64 MB model)."""
        if self._block_notes is None:
            self._block_notes = BlockNotes.of(self.machine)
        return self._block_notes

    @property
    def index(self) -> TopologyIndex:
        """The hardware topology's routing index, built once (the model never changes)."""
        if self._index is None:
            self._index = index_of(hardware_of(self.machine))
        return self._index

    @property
    def link_bounds(self) -> tuple[int, int]:
        """The lowest and highest hardware link id."""
        ids = self.index.link_ids
        return (int(ids.min()), int(ids.max())) if ids.size else (0, 0)

    def engine(self) -> Engine:
        """Call with ``lock`` held."""
        if self._engine is None:
            self._engine = Engine(self.machine)
        return self._engine

    def begin_routes(self, pairs: list[tuple[int, int]]) -> None:
        """Make room in the route table for the hardware routes ``pairs`` (``lock``
        held); ids from before a call may not be used after it. The processors they
        visit are counted first (:func:`~parasol_core.topology.steps.route_steps`) and
        held to the route-step budget, whatever their number: a few routes across a
        large ring are as much as many short ones. The table starts afresh past
        :data:`MAX_TABLE_ROUTES` routes or the route-step budget of processors kept."""
        from parasol_core.base import budget
        from parasol_core.topology.steps import route_steps

        wanted = list(dict.fromkeys(pairs))
        steps = 0
        try:
            index = self.index
            ends = np.asarray(wanted, dtype=np.int64).reshape(-1, 2)
            inside = (ends >= 1) & (ends <= index.count)  # the others fail when routed
            ends = ends[inside.all(axis=1)]
            steps = route_steps(index.layout, index.technique, ends[:, 0], ends[:, 1])
        except RoutingError:
            pass  # not routable: table_route says why, route by route
        n = len(wanted)
        budget.check_route_steps(f"{n:,} route{'' if n == 1 else 's'}", steps,
                                 "processors visited, both ends included")  # fmt: skip
        table = self._table
        if (table is None or len(table) + n > MAX_TABLE_ROUTES
                or table.kept_steps + steps > budget.current().step_limit):  # fmt: skip
            self._table = RouteTable(hardware_of(self.machine))
            self._table_ids = {}

    def table_route(self, a: int, b: int) -> int:
        """The id in this model's route table of the hardware route a -> b (``lock``
        held, after :meth:`begin_routes`)."""
        assert self._table is not None
        tid = self._table_ids.get((a, b))
        if tid is None:
            tid = self._table.add(a, b)
            self._table_ids[(a, b)] = tid
        return tid

    @property
    def table(self) -> RouteTable:
        assert self._table is not None
        return self._table

    # route ids: "<model prefix>:<src>-<dst>" or "<model prefix>:v<virtual>:<src>-<dst>"

    def route_id(self, src: int, dst: int, virtual: int | None) -> str:
        if virtual is None:
            return f"{self.prefix}:{src}-{dst}"
        return f"{self.prefix}:v{virtual}:{src}-{dst}"

    def route_ids(self, src: np.ndarray, dst: np.ndarray, virtual: int | None) -> list[str]:
        """:meth:`route_id` of many pairs (one string format and split: 1.5x as fast)."""
        if src.shape[0] == 0:
            return []
        head = self.route_id(0, 0, virtual)[:-3].replace("%", "%%")
        flat = np.column_stack((src, dst)).ravel().tolist()
        return ((head + "%d-%d\n") * src.shape[0] % tuple(flat))[:-1].split("\n")

    def parse_route_id(self, name: str, rid: Any) -> tuple[int | None, int, int]:
        """``(virtual, src, dst)`` of a route id of this model."""
        check_str(name, rid, 100)
        parts = rid.split(":")
        try:
            if len(parts) not in (2, 3) or len(parts[0]) != 8:
                raise ValueError
            virtual = None
            if len(parts) == 3:
                if not parts[1].startswith("v"):
                    raise ValueError
                virtual = read_int(parts[1][1:], sign=True)  # ASCII, as every number read
            src_text, dash, dst_text = parts[-1].partition("-")
            src, dst = read_int(src_text), read_int(dst_text)
            if not dash or not (abs(src) <= MAX_INT and abs(dst) <= MAX_INT):
                raise ValueError
        except ValueError:
            raise ParamError(f"'{name}': {rid!r} is not a route id") from None
        if parts[0] != self.prefix:
            raise ParamError(f"'{name}': route {rid!r} belongs to another model, not {self.id}")
        return virtual, src, dst

    def hardware_ends(self, virtual: int | None, src: int, dst: int) -> tuple[int, int]:
        if virtual is None:
            return src, dst
        virt = find_virtual(self.machine, virtual)
        return hardware_processor(virt, src), hardware_processor(virt, dst)


# What a parsed model is counted as, to bound the parsed models the service keeps: a
# fixed part and a part per byte of its text. Parsing the shipped samples takes 0.6 to 14
# bytes per byte of text plus about 30 KB (tracemalloc, 2026-11); the count is above
# both, so that what the methods add (the engine, the route index) fits in it too.
LOADED_BASE = 256 * 1024
LOADED_PER_BYTE = 32
DEFAULT_LOADED_LIMIT = 2 * 1024**3  # bytes, as counted above


def loaded_size(stored: StoredText) -> int:
    """The bytes a parsed ``stored`` model counts for against the service's limit."""
    return LOADED_BASE + LOADED_PER_BYTE * len(stored.text)


class Service:
    """What the methods share: the store, the parsed models, the start time.

    Parsed models are kept between calls, least recently used first out: past
    ``loaded_limit`` bytes (counted by :func:`loaded_size`) the oldest are let go and
    parsed again from the store when next asked for, so pushing many models never
    makes the process grow past the limit. The model just used is always kept."""

    def __init__(self, store: ModelStore, loaded_limit: int = DEFAULT_LOADED_LIMIT) -> None:
        self.store = store
        self.started = time.monotonic()
        self.in_flight = 0  # HTTP requests being handled (kept by the server)
        # what server.info adds: the queues and the budgets (set by the server)
        self.report: Callable[[], dict] | None = None
        self.stopping = False  # set by the server on SIGINT/SIGTERM/SIGHUP
        self.loaded_limit = loaded_limit
        self.loaded_bytes = 0
        self._loaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, mid: Any, name: str = "model") -> LoadedModel:
        """The stored model ``mid``; -32001 if there is none."""
        check_str(name, mid, 100)
        with self._lock:
            loaded = self._loaded.get(mid)
            if loaded is not None:
                self._loaded.move_to_end(mid)
                return loaded
            stored = self.store.get(mid)
            if stored is None:
                raise MethodError(UNKNOWN_MODEL, f"there is no model {mid!r} in the estimator",
                                  {"model": mid})  # fmt: skip
        # parse outside the lock: another model's request need not wait for this one
        loaded = LoadedModel(stored, loads(stored.text))
        with self._lock:
            return self._add(loaded)

    def _add(self, loaded: LoadedModel) -> LoadedModel:
        """Keep ``loaded`` (or the one another thread kept first); lock held."""
        kept = self._loaded.get(loaded.id)
        if kept is not None:
            self._loaded.move_to_end(loaded.id)
            return kept
        self._loaded[loaded.id] = loaded
        self.loaded_bytes += loaded_size(loaded.stored)
        while self.loaded_bytes > self.loaded_limit and len(self._loaded) > 1:
            _, old = self._loaded.popitem(last=False)
            self.loaded_bytes -= loaded_size(old.stored)
        return loaded

    def loaded_ids(self) -> list[str]:
        """The parsed models kept, least recently used first."""
        with self._lock:
            return list(self._loaded)

    def forget(self, mid: str) -> None:
        with self._lock:
            old = self._loaded.pop(mid, None)
            if old is not None:
                self.loaded_bytes -= loaded_size(old.stored)

    def keep(self, loaded: LoadedModel) -> None:
        with self._lock:
            self._add(loaded)


def _routing(e: RoutingError) -> ParamError | MethodError:
    """A routing error as the answer's error: a time past a double (the model's values
    make it, not the params) is -32002, evaluation failed; any other is -32602."""
    if isinstance(e, TimeOverflowError):
        return _overflow(e)
    return ParamError(str(e))


def _overflow(e: Exception) -> MethodError:
    """-32002 for a time the model's values make past a double (or underflow to 0): the
    message names the values (links, annotation, message)."""
    return MethodError(EVALUATION_FAILED, f"evaluation failed: {e}")


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise MethodError(EVALUATION_FAILED, f"{what} is not a finite number ({value})")
    return value


# --------------------------------------------------------------------------- models


@method("model.push", heavy=True)
def model_push(svc: Service, text: str, name: str | None = None) -> dict:
    check_str("text", text)
    if name is not None:
        check_name("name", name, MAX_NAME)
    try:
        machine = loads(text)
    except ModelSyntaxError as e:
        diagnostics = [diagnostic_data(e.as_diagnostic())]
        raise ParamError(f"the model was refused: line {e.line}, column {e.column}: {e.message}",
                         {"diagnostics": diagnostics}) from None  # fmt: skip
    diagnostics = validate(machine)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        first = errors[0]
        where = f"line {first.line}, column {first.column}: " if first.line else ""
        more = (
            f" (and {counted(len(errors) - 1, 'more error', grouped=False)})"
            if len(errors) > 1
            else ""
        )
        raise ParamError(f"the model was refused: {where}{first.message}{more}",
                         {"diagnostics": [diagnostic_data(d) for d in diagnostics]})  # fmt: skip
    try:
        stored = svc.store.put(text, name)
    except StoreFull as e:
        raise MethodError(STORE_FULL, str(e), {"size": e.size, "used": e.used,
                                               "limit": e.limit}) from None  # fmt: skip
    except OSError as e:
        raise MethodError(STORE_FULL, f"the model cannot be stored: {e.strerror or e}; "
                          "nothing was stored") from None  # fmt: skip
    svc.keep(LoadedModel(stored, machine))
    return {
        "model": stored.id,
        "name": name,
        "diagnostics": [diagnostic_data(d) for d in diagnostics],
    }


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@method("model.list")
def model_list(svc: Service) -> list:
    return [
        {
            "model": s.id,
            "name": s.latest_name(),
            "names": list(s.names),
            "pushed": _iso(s.pushed),
            "size": len(s.text.encode("utf-8")),
        }
        for s in svc.store.all()
    ]


@method("model.get", bulk=True)
def model_get(svc: Service, model: str) -> dict:
    loaded = svc.model(model)
    return {"model": loaded.id, "text": loaded.stored.text, "names": list(loaded.stored.names)}


@method("model.latest")
def model_latest(svc: Service, name: str) -> str:
    check_name("name", name, MAX_NAME)
    mid = svc.store.latest(name)
    if mid is None:
        raise MethodError(UNKNOWN_MODEL, f"no model was pushed under the name {name!r}",
                          {"name": name})  # fmt: skip
    return mid


@method("model.drop")
def model_drop(svc: Service, model: str) -> bool:
    check_str("model", model, 100)
    if not svc.store.drop(model):
        raise MethodError(UNKNOWN_MODEL, f"there is no model {model!r} in the estimator",
                          {"model": model})  # fmt: skip
    svc.forget(model)
    return True


@method("model.evaluate")
def model_evaluate(
    svc: Service, model: str, expression: str, args: dict | None = None
) -> int | float:
    loaded = svc.model(model)
    check_str("expression", expression, 100_000)
    run_args: dict[str, int | float] = {}
    if args is not None:
        for key, value in check_object("args", args).items():
            if key not in ("bytes", "procs"):
                raise ParamError(f"'args' may hold bytes and procs, not {key!r}")
            run_args[key] = check_number(f"args.{key}", value, -(2.0**63), 2.0**63 - 1)
    try:
        parse_expression(expression)
    except ModelSyntaxError as e:
        raise ParamError(f"the expression has a syntax error at column {e.column}: {e.message}",
                         {"diagnostics": [diagnostic_data(e.as_diagnostic())]}) from None  # fmt: skip
    with loaded.lock:
        value = loaded.engine().evaluate_text(expression, runtime=True, args=run_args or None)
    if isinstance(value, EvalError):
        data: dict[str, Any] = {"message": str(value)}
        if value.source is None and value.start is not None:
            data["column"] = value.start + 1
        raise MethodError(EVALUATION_FAILED, f"evaluation failed: {value}", data)
    if isinstance(value, float):
        _finite(value, "the value")
    return value


# --------------------------------------------------------------------------- routes


def _virtual_param(virtual: Any) -> int | None:
    return None if virtual is None else check_int("virtual", virtual)


def processor_param(machine: Machine, name: str, value: Any, virtual: int | None = None) -> int:
    """A param that is a processor: an integer, or (since 1.4) a name of the hardware
    topology's ``# piui: names`` (a SimGrid platform's host), by the one rule of names
    and numbers (:func:`parasol_core.topology.names.processor_number`). With ``virtual``
    processors are virtual ones, numbers only. A name the topology lacks: -32602 naming
    it and some of the names there are."""
    if isinstance(value, str) and virtual is None:
        check_str(name, value, MAX_NAME_LENGTH)
        hw = machine.hardware()
        named = table_of(hw).number(value)
        if named is not None:  # a string is a name (even one of digits)
            return named
        if is_whole(value.strip()):
            # JSON says what a value is: a number is sent as a number, a string is a name
            raise ParamError(f"'{name}' must be an integer or a processor's name, not the "
                             f"string {value[:40]!r}")  # fmt: skip
        try:
            return processor_number(hw, value, f"'{name}'")
        except RoutingError as e:
            raise ParamError(str(e)) from None
    if isinstance(value, str):
        raise ParamError(f"'{name}': with 'virtual', processors are virtual processor numbers, "
                         f"not names ({value[:40]!r})")  # fmt: skip
    return check_int(name, value)


def with_names(out: dict, machine: Machine, numbers: Any) -> dict:
    """``out`` with a ``"names"`` map (since 1.4: processor number as text -> name) of
    those of ``numbers`` the hardware topology names; unchanged where it names none."""
    named = names_map(machine.hardware(), numbers)
    if named:
        out["names"] = named
    return out


@method("route.plot")
def route_plot(svc: Service, model: str, src: int | str, dst: int | str,
               virtual: int | None = None) -> dict:  # fmt: skip
    loaded = svc.model(model)
    virtual = _virtual_param(virtual)
    src = processor_param(loaded.machine, "src", src, virtual)
    dst = processor_param(loaded.machine, "dst", dst, virtual)
    try:
        if virtual is None:
            r = loaded.index.route(src, dst)
        else:
            r = virtual_route(loaded.machine, virtual, src, dst)
    except RoutingError as e:
        raise _routing(e) from None
    out = {
        "route": loaded.route_id(src, dst, virtual),
        "processors": list(r.processors),
        "links": list(r.links),
    }
    opts = options_of(hardware_of(loaded.machine))
    if opts.forward is not None:  # only then: other models answer as before
        out["forwarders"] = forwarders(r)
        try:
            out["seconds_per_byte"] = route_per_byte(loaded.index, r, opts)
        except RoutingError as e:
            raise _routing(e) from None
    if virtual is None:
        with_names(out, loaded.machine, r.processors)
    return out


CHUNK = 16_384


def _array_in_chunks(items: list) -> np.ndarray:
    """``np.array(items)`` a slice at a time: numpy holds the interpreter lock through
    one conversion (half a second for a million pairs), and meanwhile no other thread
    of the server runs; between slices the others get their turn."""
    if len(items) <= CHUNK:
        return np.array(items)
    parts = [np.array(items[i : i + CHUNK]) for i in range(0, len(items), CHUNK)]
    if len({(p.ndim, p.shape[1:], p.dtype.kind) for p in parts}) != 1:
        return np.array(items)  # ragged or mixed: as one, for the same error
    return np.concatenate(parts)


def _pairs_array(pairs: Any, machine: Machine | None = None) -> np.ndarray:
    """``pairs`` as given in JSON: integers, or (``machine`` given: hardware pairs)
    processors' names among them, each resolved by :func:`processor_param`."""
    check_list("pairs", pairs)
    if len(pairs) > MAX_PAIRS:
        raise ParamError(f"'pairs' holds more than {MAX_PAIRS} pairs")
    if not pairs:
        return np.zeros((0, 2), dtype=np.int64)
    try:
        arr = _array_in_chunks(pairs)
    except (ValueError, TypeError, OverflowError):
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind != "i":
        named = []
        for i, pair in enumerate(pairs):  # names resolved; else say which one is wrong
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ParamError(f"'pairs[{i}]' must be an array [src, dst]")
            if machine is None:
                check_int(f"pairs[{i}][0]", pair[0])
                check_int(f"pairs[{i}][1]", pair[1])
            else:
                named.append([processor_param(machine, f"pairs[{i}][{j}]", pair[j])
                              for j in (0, 1)])  # fmt: skip
        if machine is None or len(named) != len(pairs):
            raise ParamError("'pairs' must be an array of [src, dst] integer pairs")
        arr = np.array(named, dtype=np.int64)
    bad = np.abs(arr) > MAX_INT
    if bad.any():
        i, j = np.argwhere(bad)[0]
        check_int(f"pairs[{i}][{j}]", int(arr[i, j]))
    return arr.astype(np.int64)


ENCODINGS = ("json", "base64", "binary")
FIELDS = ("routes", "processors", "links", "hops", "names")
DEFAULT_FIELDS = ("routes", "processors", "links")


def encode_array(values: np.ndarray) -> dict:
    """A whole-number array as ``{"dtype": "<i4", "data": base64}``: the protocol's
    compact form (little-endian, 32-bit when the values fit)."""
    dtype = (
        "<i4" if values.size == 0 or (values.min() >= -(2**31) and values.max() < 2**31) else "<i8"
    )
    return {"dtype": dtype, "data": base64.b64encode(values.astype(dtype).tobytes()).decode()}


def decode_pairs(pairs: dict | ColumnRef) -> np.ndarray:
    """``pairs`` in the compact form (``{"dtype", "data"}`` of 2n integers) or as a
    column of a binary request."""
    if isinstance(pairs, ColumnRef):
        try:
            flat = pairs.array("pairs")
        except ValueError as e:
            raise ParamError(str(e)) from None
        if flat.shape[0] % 2:
            raise ParamError("'pairs': the column does not hold whole [src, dst] pairs")
        if flat.shape[0] > 2 * MAX_PAIRS:
            raise ParamError(f"'pairs' holds more than {MAX_PAIRS} pairs")
        return flat.astype(np.int64).reshape(-1, 2)
    dtype = pairs.get("dtype")
    data = pairs.get("data")
    if set(pairs) != {"dtype", "data"} or dtype not in ("<i4", "<i8") or not isinstance(data, str):
        raise ParamError("'pairs' in the compact form is {\"dtype\": \"<i4\" | \"<i8\", "
                         "\"data\": base64} (columns {dtype, offset, count} only in a binary "
                         "request)")  # fmt: skip
    if len(data) > MAX_PAIRS * 2 * 8 * 4 // 3 + 8:
        raise ParamError(f"'pairs' holds more than {MAX_PAIRS} pairs")
    try:
        raw = base64.b64decode(data, validate=True)
    except (ValueError, binascii.Error):
        raise ParamError("'pairs': the data is not base64") from None
    width = 2 * np.dtype(dtype).itemsize
    if len(raw) % width:
        raise ParamError("'pairs': the data does not hold whole [src, dst] pairs")
    return np.frombuffer(raw, dtype=dtype).astype(np.int64).reshape(-1, 2)


def _fields_param(fields: Any) -> tuple[str, ...]:
    if fields is None:
        return DEFAULT_FIELDS
    check_list("fields", fields)
    if not fields:
        raise ParamError(f"'fields' must name at least one of {', '.join(FIELDS)}")
    for i, name in enumerate(fields):
        if name not in FIELDS:
            shown = repr(name)[:40] if isinstance(name, str) else "a " + type(name).__name__
            raise ParamError(f"'fields[{i}]' must be one of {', '.join(FIELDS)}, not {shown}")
    if len(set(fields)) != len(fields):
        raise ParamError("'fields' names a field twice")
    return tuple(fields)


@method("route.plot_many", bulk=True, heavy=True, cost=_pairs_cost)
def route_plot_many(svc: Service, model: str, pairs: Any, virtual: int | None = None,
                    encoding: str = "json", fields: list | None = None) -> Any:  # fmt: skip
    loaded = svc.model(model)
    if encoding not in ENCODINGS:
        shown = repr(encoding)[:40]
        raise ParamError(f"'encoding' must be one of {', '.join(ENCODINGS)}, not {shown}")
    wanted = _fields_param(fields)
    virtual = _virtual_param(virtual)
    if isinstance(pairs, (dict, ColumnRef)):
        arr = decode_pairs(pairs)
    else:
        arr = _pairs_array(pairs, loaded.machine if virtual is None else None)
    src, dst = arr[:, 0], arr[:, 1]
    try:
        if virtual is None:
            batch: RouteBatch = loaded.index.routes(src, dst)
        else:
            batch = virtual_routes(loaded.machine, virtual, src, dst)
    except RoutingError as e:
        raise _routing(e) from None
    columns: dict[str, np.ndarray] = {}
    if "processors" in wanted:
        columns["offsets"] = batch.offsets
        columns["processors"] = batch.processors
    if "links" in wanted:
        columns["link_offsets"] = batch.link_offsets
        columns["links"] = batch.links
    if "hops" in wanted:
        columns["hops"] = batch.hops
    # the names of the hardware processors on the routes (1.4): in the JSON form with
    # its processors, in every form when asked for (1.5: an old client of the compact
    # forms decodes every object of the answer as a column, so they come only asked)
    names: dict[str, str] = {}
    hw = loaded.machine.hardware()
    asked = "names" in wanted or (encoding == "json" and "processors" in wanted)
    if asked and virtual is None and hw is not None and hw.names:
        with_names(names, loaded.machine, unique(batch.processors).tolist())
    if encoding == "json":
        out: dict[str, Any] = {}
        if "routes" in wanted:
            out["routes"] = loaded.route_ids(src, dst, virtual)
        return out | columns | names
    # route i's id is route_prefix + "<src>-<dst>" of pair i: nothing more to send
    head: dict[str, Any] = {"encoding": encoding} | names
    if "routes" in wanted:
        head["route_prefix"] = loaded.route_id(0, 0, virtual)[:-3]
    if encoding == "binary":
        # Bounds that hold by construction spare a scan of the values: offsets rise from
        # 0; every link is one of the hardware index's (virtual routes cross hardware
        # links); every processor is a hardware one (the core checks both ends, and
        # each step of a route is a link between two processors of the index).
        bounds = {k: (0, int(columns[k][-1])) for k in ("offsets", "link_offsets") if k in columns}
        if "links" in columns:
            bounds["links"] = loaded.link_bounds
        if "processors" in columns:
            bounds["processors"] = (1, loaded.index.count)
        return Binary(head, columns, bounds)
    return head | {name: encode_array(values) for name, values in columns.items()}


# --------------------------------------------------------------------------- network


def _route_ends(loaded: LoadedModel, name: str, rids: list) -> list[tuple[int, int]]:
    """Route ids -> the hardware processors at their ends."""
    out = []
    for i, rid in enumerate(rids):
        virtual, src, dst = loaded.parse_route_id(f"{name}[{i}]" if name else "route", rid)
        try:
            out.append(loaded.hardware_ends(virtual, src, dst))
        except RoutingError as e:
            raise ParamError(f"route {rid!r}: {e}") from None
    return out


def _table_ids(loaded: LoadedModel, rids: list, ends: list[tuple[int, int]]) -> list[int]:
    """Route ids (with their :func:`_route_ends`) -> ids in the model's route table
    (``lock`` held, after :meth:`LoadedModel.begin_routes`)."""
    out = []
    for rid, (a, b) in zip(rids, ends):
        try:
            out.append(loaded.table_route(a, b))
        except RoutingError as e:
            raise ParamError(f"route {rid!r}: {e}") from None
    return out


@method("network.transfer_time")
def network_transfer_time(
    svc: Service, model: str, route: str, bytes: float, active: list | None = None
) -> float:
    loaded = svc.model(model)
    nbytes = check_bytes("bytes", bytes)
    active = check_list("active", active) if active is not None else []
    mine_ends = _route_ends(loaded, "", [route])
    active_ends = _route_ends(loaded, "active", active)
    with loaded.lock:
        # every route id first: a later table reset would invalidate earlier ones
        loaded.begin_routes(mine_ends + active_ends)
        (mine,) = _table_ids(loaded, [route], mine_ends)
        others = _table_ids(loaded, active, active_ends)
        if mine in others:  # the message's own route counts once
            others.remove(mine)
        try:
            seconds = loaded.table.transfer_time(mine, others, nbytes)
        except RoutingError as e:
            raise _routing(e) from None
    return _finite(seconds, "the transfer time")


@method("network.transfer_times", bulk=True, heavy=True,
        cost=lambda svc, p: _len(p.get("requests")) + _len(p.get("active")))  # fmt: skip
def network_transfer_times(
    svc: Service, model: str, requests: list, active: list | None = None
) -> list:
    loaded = svc.model(model)
    check_list("requests", requests)
    active = check_list("active", active) if active is not None else []
    rids, sizes = [], []
    for i, req in enumerate(requests):
        check_object(f"requests[{i}]", req)
        extra = set(req) - {"route", "bytes"}
        if extra or "route" not in req or "bytes" not in req:
            raise ParamError(f"'requests[{i}]' must be an object with 'route' and 'bytes'")
        rids.append(req["route"])
        sizes.append(check_bytes(f"requests[{i}].bytes", req["bytes"]))
    mine_ends = _route_ends(loaded, "requests", rids)
    active_ends = _route_ends(loaded, "active", active)
    with loaded.lock:
        loaded.begin_routes(mine_ends + active_ends)
        mine = _table_ids(loaded, rids, mine_ends)
        others = _table_ids(loaded, active, active_ends)
        state = loaded.table.state(others)
        out = np.empty(len(mine), dtype=np.float64)
        try:
            # routes already active: one state for all of them, in one batch
            listed = [i for i, tid in enumerate(mine) if tid in state]
            if listed:
                out[listed] = state.transfer_times([mine[i] for i in listed],
                                                   np.asarray(sizes)[listed])  # fmt: skip
            # the others: the state with that one message added
            for i in sorted(set(range(len(mine))) - set(listed)):
                tid = mine[i]
                state.add(tid)
                out[i] = state.transfer_time(tid, sizes[i])
                state.remove(tid)
        except RoutingError as e:
            raise _routing(e) from None
    if not np.isfinite(out).all():
        raise MethodError(EVALUATION_FAILED, "a transfer time is not a finite number")
    return out.tolist()


# --------------------------------------------------------------------------- blocks


@method("estimate.block")
def estimate_block_method(
    svc: Service,
    model: str,
    processor: int,
    counts: dict,
    cached: bool = False,
    chains: list | None = None,
    working_set: int | None = None,
) -> dict:
    loaded = svc.model(model)
    check_int("processor", processor)
    check_object("counts", counts)
    check_bool("cached", cached)
    chains = check_list("chains", chains) if chains is not None else []
    for k, chain in enumerate(chains):
        check_object(f"chains[{k}]", chain)
    if working_set is not None:
        check_int("working_set", working_set, 0, MAX_WORKING_SET)
    try:
        answer = answer_block(loaded.machine, processor, counts, cached,
                              working_set=working_set, chains=chains,
                              notes=loaded.block_notes)  # fmt: skip
    except ValueError as e:
        raise ParamError(str(e)) from None
    estimate = answer.estimate
    out = {"mean": _finite(estimate.mean, "the mean"), "sd": _finite(estimate.sd, "the sd"),
           "interval": [_finite(answer.low, "the interval"), _finite(answer.high, "the interval")],
           "interval_from": answer.interval_basis()}  # fmt: skip
    if answer.level is not None:
        out.update(level=answer.level.name, level_words=answer.level_words(),
                   array_extra=_finite(estimate.array_extra, "the array reference's extra"))  # fmt: skip
    if chains:
        out.update(bound=estimate.bound,
                   throughput=_finite(estimate.throughput_bound, "the throughput sum"),
                   chain=_finite(estimate.chain_bound, "the chain"),
                   chain_at=estimate.chain_source, bound_words=answer.bound_words(),
                   chain_at_once=_finite(estimate.chain_at_once, "the runs at once"))  # fmt: skip
    return out


# --------------------------------------------------------------------------- phases


@method("estimate.phase", bulk=True, heavy=True, cost=_phase_cost)
def estimate_phase(
    svc: Service,
    model: str,
    messages: list | None = None,
    pattern: str | None = None,
    bytes: float | None = None,
    dim: int | str | None = None,
    root: int | str | None = None,
    virtual: int | None = None,
    sharing: str = "max",
) -> dict:
    """The event trace of a communication phase (docs/topology.md): ``messages`` as
    ``parasol-model simulate --messages`` reads them, or a ``pattern`` with ``bytes``;
    ``sharing`` ``"max"`` (PARASOL's, the default), ``"maxmin"`` (max-min fair) or
    ``"cm02"`` (SimGrid's CM02: max-min weighted by 1 / a route's latency)."""
    from parasol_core.simulate.phases import PhaseError, PhaseOverflowError, simulate

    loaded = svc.model(model)
    virtual = _virtual_param(virtual)
    if messages is not None:
        if not isinstance(messages, list):
            raise ParamError("messages must be a list of {src, dst, bytes, start?, after?}")
        most = budget.current().phase_messages  # the fixed limit: no memory budget here
        if len(messages) > most:
            raise ParamError(f"at most {counted(most, 'message', grouped=False)} in one phase")
    if pattern is not None and not isinstance(pattern, str):
        raise ParamError("pattern must be a pattern name")
    if bytes is not None:
        if isinstance(bytes, bool) or not isinstance(bytes, (int, float)):
            raise ParamError("bytes must be a number")
        if not math.isfinite(bytes) or bytes < 0:
            raise ParamError("bytes must be a finite number, 0 or more")
    if root is not None:
        root = processor_param(loaded.machine, "root", root, virtual)
    hw = loaded.machine.hardware()
    if messages is not None and virtual is None and hw is not None and hw.names:
        from parasol_core.simulate.messages import parse_messages
        from parasol_core.topology.names import ByName

        try:  # a message's ends may be the hardware topology's processors' names
            messages = parse_messages(messages, ByName(hw))
        except (PhaseError, ValueError) as e:
            raise ParamError(str(e)) from None
    if not isinstance(sharing, str) or sharing not in SHARING:
        raise ParamError(f"sharing must be one of {', '.join(SHARING)}")
    try:
        result = simulate(loaded.machine, messages=messages, pattern=pattern, bytes=bytes,
                          dim=dim, root=root, virtual=virtual, sharing=sharing)  # fmt: skip
    except PhaseOverflowError as e:
        raise _overflow(e) from None
    except RoutingError as e:
        raise _routing(e) from None
    except (PhaseError, ValueError) as e:
        raise ParamError(str(e)) from None
    out = result.to_json()
    if virtual is None and hw is not None and hw.names:
        with_names(out, loaded.machine, unique(np.concatenate((result.src, result.dst))).tolist())
    return out


# --------------------------------------------------------------------------- sweeps

MAX_SWEEP_WORK = 1_000_000
"""The most work one ``sweep.run`` may do, estimated before it starts (its variants x
the messages and evaluations of each: :func:`parasol_core.sweep.cost.work`, and a
replay's trace lines, as ``estimate.program`` counts them): a sweep is charged as a batch
of its variants, against the batch budget's default."""


def _sweep_spec(svc: Service, model: Any, sweep: Any) -> tuple[Any, LoadedModel, int]:
    """The sweep read on the stored model, and the lines of its replays' traces (one
    variant's)."""
    from parasol_core.estimator.traces import traces_of
    from parasol_core.sweep.spec import SweepError, loads_spec

    loaded = svc.model(model)
    check_str("sweep", sweep)
    store = traces_of(svc)
    lines: dict[str, int] = {}  # a replayed trace's index path -> its lines

    def pushed(trace_id: str) -> Any:  # a replay's trace: one pushed with trace.push
        stored = store.get(trace_id)
        if stored is None:
            return None
        lines[str(stored.path.resolve())] = stored.lines
        return stored.path

    try:
        spec = loads_spec(sweep, model_text=loaded.stored.text, files=False, source="sweep",
                          traces=pushed)  # fmt: skip
    except SweepError as e:  # the table it is about, as data: a client's form names it
        data = None if e.part is None else {"part": list(e.part), "why": e.why}
        raise ParamError(str(e), data) from None
    trace_lines = sum(lines.get(a.options["trace"], 0) for a in spec.answers
                      if a.kind == "replay")  # fmt: skip
    if spec.memory is not None:  # the server's fixed counts hold, whatever a client asks
        raise ParamError("sweep: [budget] memory is the command line's: the estimator holds "
                         "every variant to its own limits (docs/estimator.md, Budgets)")  # fmt: skip
    return spec, loaded, trace_lines


def _sweep_cost(svc: Any, params: dict) -> int:
    return _sweep_work(*_sweep_spec(svc, params.get("model"), params.get("sweep")))


def _sweep_work(spec: Any, loaded: LoadedModel, trace_lines: int) -> int:
    """A sweep's work: its answers' (``sweep.cost.work``) and each variant's replays, a
    trace's lines each (``estimate.program``'s cost)."""
    from parasol_core.sweep.cost import work

    return work(spec, loaded.machine) + spec.size * trace_lines


def _json_value(value: Any) -> Any:
    """An axis value or an answer as JSON: a number, a text, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@method("sweep.run", bulk=True, heavy=True, cost=_sweep_cost)
def sweep_run(svc: Service, model: str, sweep: str) -> dict:
    """A what-if sweep (docs/sweeps.md) of a stored model: ``sweep`` is the sweep
    file's text (its ``model`` is this one; it names no files: a ``replay`` answer's
    ``trace`` is the id of a trace pushed with ``trace.push``). Every variant, in index
    order, as a row of the file's columns."""
    from parasol_core.sweep.runner import run_sweep
    from parasol_core.sweep.variants import variants

    spec, loaded, trace_lines = _sweep_spec(svc, model, sweep)
    budget.check("the sweep", _sweep_work(spec, loaded, trace_lines), MAX_SWEEP_WORK,
                 "messages, evaluations and trace lines" if trace_lines
                 else "messages and evaluations", counted(spec.size, "variant"))  # fmt: skip
    todo = variants(spec)
    rows: list[list[Any]] = []

    def take(row: Any) -> None:
        variant = todo[len(rows)]
        answers, error = [], row.error
        for a, value in zip(spec.answers, row.answers, strict=True):
            if isinstance(value, float) and not math.isfinite(value):
                error = "; ".join(filter(None, (error, f"{a.name}: not a finite number ({value})")))
            answers.append(_json_value(value))
        values = [_json_value(a.values[p]) for a, p in zip(spec.axes, variant.positions,
                                                           strict=True)]  # fmt: skip
        rows.append([row.index, *values, *answers, row.seconds, error])
        budget.check_deadline()  # past the request's time: stop here (-32003)

    run_sweep(spec, take, executor="serial", todo=todo)
    return {"columns": spec.columns(), "variants": spec.size, "rows": rows}


# --------------------------------------------------------------------------- the server


@method("server.info", cpu=False)
def server_info(svc: Service) -> dict:
    try:
        package = importlib.metadata.version("piui")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - not installed
        package = None
    return {
        "protocol": PROTOCOL_VERSION,
        "package": package,
        "uptime": round(time.monotonic() - svc.started, 3),
        "models": len(svc.store),
        "in_flight": svc.in_flight,
        "methods": sorted(METHODS),
        **(svc.report() if svc.report is not None else {}),
    }


@method("server.ping", cpu=False)
def server_ping(svc: Service) -> bool:
    """Does nothing: the cost of a request itself (the benchmarks' baseline)."""
    return True
