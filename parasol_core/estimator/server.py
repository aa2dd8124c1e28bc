"""`parasol-estimator`: the estimator as a JSON-RPC 2.0 service over HTTP.

Two layers, each a maintained library: aiohttp serves HTTP (``POST /rpc``) and pjrpc
dispatches JSON-RPC requests to the methods of :mod:`.methods` (method lookup, params
bound by name, notifications, error objects). This module adds what neither does for
us: the bearer token, the body limit and upload timeout, strict JSON (orjson: no NaN
or infinities, a depth limit), batches whose bad members get their own errors (pjrpc
refuses a whole batch for one bad member), one log line per call, running model work
on worker threads through fair queues with budgets (:mod:`.scheduler`: per request,
per batch, per client), idle connections timed out, and a clean stop on SIGINT, SIGTERM or SIGHUP.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hmac
import inspect
import ipaddress
import itertools
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from pjrpc.common import UNSET
from pjrpc.server import AsyncDispatcher, MethodRegistry
from pjrpc.server import exceptions as rpcx
from pjrpc.server.validators import ValidationError

from parasol_core.base import jsonout
from parasol_core.base.budget import BudgetError
from parasol_core.base.limits import file_name_arg, json_underflow
from parasol_core.base.numeric import (
    OptionNumber,
    read_float,
    read_int,
)
from parasol_core.base.signals import SIGNALS, Stop, name_of
from parasol_core.base.words import counted
from parasol_core.estimator import program_methods  # noqa: F401 (registers its methods)
from parasol_core.estimator.binary import (
    BINARY_TYPE,
    COLUMN_KEYS,
    Binary,
    ColumnRef,
    FramingError,
    frame,
    split,
)
from parasol_core.estimator.methods import (
    DEFAULT_LOADED_LIMIT,
    METHODS,
    MethodSpec,
    Service,
    work_of,
)
from parasol_core.estimator.protocol import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    EVALUATION_FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    OVER_BUDGET,
    PARSE_ERROR,
    RPC_PATH,
    MethodError,
    ParamError,
)
from parasol_core.estimator.scheduler import OverBudget, Scheduler
from parasol_core.estimator.store import DEFAULT_LIMIT, ModelStore

__all__ = ["build_app", "main", "serve"]

log = logging.getLogger("parasol.estimator")

MAX_BODY = 64 * 1024 * 1024
BODY_TIMEOUT = 30.0  # seconds to receive a whole request body
MAX_BATCH = 10_000
BATCH_CONCURRENCY = 8  # members of one batch dispatched at once
WORKERS = 4
JSON_TYPES = ("application/json", "application/json-rpc")


@dataclass(frozen=True)
class Budgets:
    """The server's budgets (docs/estimator.md, "Budgets"); each a `serve` option."""

    request_timeout: float = 30.0  # s from a request's arrival to its answer
    batch_work: int = 1_000_000  # estimated work (messages, pairs, requests) of a batch
    max_work: int = 2_000_000  # estimated work running at once, all clients
    workers: int = WORKERS  # threads for the expensive methods
    per_client: int = 2  # of them, the most one client's calls may hold
    quick_workers: int = 2  # threads for the quick methods (route.plot, ...)
    idle_timeout: float = 30.0  # s a connection may sit idle or dribble its headers
    max_connections: int = 4096  # open at once; lowered below the descriptor limit
    store_limit: int = DEFAULT_LIMIT  # bytes of model text in the store
    loaded_limit: int = DEFAULT_LOADED_LIMIT  # bytes of parsed models kept (methods.loaded_size)


SERVICE = web.AppKey("service", Service)
LANES = web.AppKey("lanes", dict)


@dataclass
class _Context:
    """What a call knows of the HTTP request it came in."""

    request_id: int  # the HTTP request's number
    client: str
    deadline: float  # the event loop's clock
    work: int = 0


_request_ids = itertools.count()


def _dumps(data: Any) -> bytes:
    """JSON of an answer: orjson with numpy arrays, refusing a NaN or an infinity that
    orjson would write as ``null`` (:func:`parasol_core.base.jsonout.dumps_bytes`)."""
    return jsonout.dumps_bytes(data)


def _refuse_non_finite(result: Any) -> Any:
    """``result`` (one response object or a batch) with every answer that holds a NaN
    or an infinity replaced by an error object of its id (-32002, naming where): no
    answer holds such a number, nor the null orjson would write for it."""
    answers = result if isinstance(result, list) else [result]
    out = []
    for answer in answers:
        found = jsonout.find_non_finite(answer.get("result"), "result") if isinstance(
            answer, dict) else None  # fmt: skip
        if found is None:
            out.append(answer)
            continue
        e = jsonout.NonFiniteError(*found)
        log.warning("refused an answer holding %r at %s", e.value, e.path)
        out.append({"jsonrpc": "2.0", "id": answer.get("id"), "error": {
            "code": EVALUATION_FAILED, "message": f"evaluation failed: {e}",
            "data": {"path": e.path}}})  # fmt: skip
    return out if isinstance(result, list) else out[0]


def _error_body(code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


def _short(value: Any) -> str:
    return value[:12] if isinstance(value, str) else "-"


# --------------------------------------------------------------------------- dispatch


def _wrap(spec: MethodSpec, service: Service, lanes: dict[str, Scheduler],
          budgets: Budgets) -> Any:  # fmt: skip
    """An async pjrpc method calling ``spec.func(service, **params)``, on a worker
    thread of its lane's fair queue if it is CPU work; our errors become JSON-RPC
    error objects."""
    params = list(inspect.signature(spec.func).parameters.values())[1:]
    lane = lanes["heavy" if spec.heavy else "quick"]

    async def call(context: Any, **kwargs: Any) -> Any:
        try:
            if spec.cpu:
                job = functools.partial(spec.func, service, **kwargs)
                ctx = context if isinstance(context, _Context) else None
                return await lane.run(
                    job,
                    client=ctx.client if ctx else "-",
                    request_id=ctx.request_id if ctx else None,
                    work=ctx.work if ctx else 0,
                    deadline=ctx.deadline if ctx else None,
                )
            return spec.func(service, **kwargs)
        except OverBudget as e:
            seconds = budgets.request_timeout
            raise rpcx.JsonRpcError(
                OVER_BUDGET,
                f"the request {e} of {seconds:g} s and was cancelled; split the work or "
                "ask the estimator's operator for a larger --request-timeout",
                {"budget_seconds": seconds},
            ) from None
        except BudgetError as e:  # work past a limit, refused before it began
            raise rpcx.InvalidParamsError(str(e)) from None
        except ParamError as e:
            raise rpcx.InvalidParamsError(
                e.message, e.data if e.data is not None else UNSET
            ) from None
        except MethodError as e:
            data = e.data if e.data is not None else UNSET
            raise rpcx.JsonRpcError(e.code, e.message, data) from None
        except RecursionError:
            raise rpcx.InvalidParamsError("the params are nested too deeply") from None
        except MemoryError:
            log.warning("%s: out of memory", spec.name)
            raise rpcx.JsonRpcError(OVER_BUDGET, "the request needs more memory than the "
                                    "estimator has; split the work") from None  # fmt: skip
        except Exception:
            log.exception("%s failed", spec.name)
            raise rpcx.InternalError("internal error (the estimator's log says more)") from None

    context_param = inspect.Parameter("context", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    call.__signature__ = inspect.Signature([context_param, *params])  # type: ignore[attr-defined]
    call.__name__ = spec.func.__name__
    return call


async def _per_call(request: Any, context: Any, handler: Any) -> Any:
    """pjrpc middleware: params by name only, readable binding errors, one log line."""
    start = time.perf_counter()
    params = request.params
    outcome = "ok"
    try:
        if isinstance(params, list):  # even [] (docs/estimator.md: arrays are refused)
            raise rpcx.InvalidParamsError("params must be an object (by name), not an array")
        response = await handler(request, context)
        return response
    except rpcx.InvalidParamsError as e:
        if isinstance(e.data, ValidationError):  # the signature did not bind
            detail = str(e.data)
            outcome = f"error {INVALID_PARAMS}"
            raise rpcx.InvalidParamsError(f"invalid params: {detail}") from None
        outcome = f"error {e.code}"
        raise
    except rpcx.MethodNotFoundError:
        outcome = "error -32601"
        raise rpcx.MethodNotFoundError(f"method not found: {str(request.method)[:100]!r}") from None
    except rpcx.JsonRpcError as e:
        outcome = f"error {e.code}"
        raise
    finally:
        model = params.get("model") if isinstance(params, dict) else None
        ms = (time.perf_counter() - start) * 1000
        log.info("rpc %s model=%s %.2fms %s", request.method[:60], _short(model), ms, outcome)


def make_dispatcher(service: Service, lanes: dict[str, Scheduler],
                    budgets: Budgets) -> AsyncDispatcher:  # fmt: skip
    registry = MethodRegistry()
    for spec in METHODS.values():
        registry.add_method(_wrap(spec, service, lanes, budgets), spec.name,
                            pass_context="context")  # fmt: skip
    dispatcher = AsyncDispatcher(
        json_loader=lambda data, cls=None: data,  # parsed already (strictly, by orjson)
        json_dumper=lambda data, cls=None: data,  # serialized by us (orjson, numpy)
        middlewares=[_per_call],
    )
    dispatcher.add_methods(registry)
    return dispatcher


# --------------------------------------------------------------------------- HTTP


def _json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=_dumps(data), status=status, content_type="application/json")


def make_lanes(budgets: Budgets) -> dict[str, Scheduler]:
    """The fair queues (:mod:`.scheduler`): the expensive methods', the quick ones',
    and a pool that parses and encodes big bodies."""
    return {
        "heavy": Scheduler(budgets.workers, budgets.per_client, budgets.max_work, "estimator"),
        "quick": Scheduler(budgets.quick_workers, 1, None, "estimator-quick"),
        "codec": Scheduler(2, 1, None, "estimator-codec"),
    }


def build_app(
    service: Service,
    lanes: dict[str, Scheduler],
    token: str | None = None,
    max_body: int = MAX_BODY,
    body_timeout: float = BODY_TIMEOUT,
    budgets: Budgets = Budgets(),
) -> web.Application:
    dispatcher = make_dispatcher(service, lanes, budgets)
    codec = lanes["codec"]

    def report() -> dict:
        return {
            "queues": {"expensive": lanes["heavy"].status(), "quick": lanes["quick"].status()},
            "budgets": asdict(budgets),
            "store": {"bytes": service.store.used, "limit": service.store.limit},
            "loaded": {
                "models": len(service.loaded_ids()),
                "bytes": service.loaded_bytes,
                "limit": service.loaded_limit,
            },  # fmt: skip
        }

    service.report = report
    expected = f"Bearer {token}".encode() if token else None

    @web.middleware
    async def auth(request: web.Request, handler: Any) -> web.StreamResponse:
        if expected is not None:
            given = request.headers.get("Authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):
                log.info("http %s %s 401 (no or wrong token)", request.method, request.path)
                return web.json_response(
                    _error_body(INVALID_REQUEST, "unauthorized: send Authorization: Bearer TOKEN"),
                    status=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
        return await handler(request)

    async def rpc(request: web.Request) -> web.StreamResponse:
        if service.stopping:
            log.info("http POST %s 503 (stopping)", RPC_PATH)
            return _json_response(_error_body(INVALID_REQUEST, "the estimator is stopping"), 503)
        service.in_flight += 1
        try:
            return await handle(request)
        finally:
            service.in_flight -= 1

    async def handle(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budgets.request_timeout
        client = client_of(request)
        request_id = next(_request_ids)  # this HTTP request, for the fair queues

        async def off_loop(func: Any, *args: Any) -> Any:  # big parsing and encoding
            return await codec.run(functools.partial(func, *args), client=client,
                                   request_id=request_id)  # fmt: skip

        binary = request.content_type == BINARY_TYPE
        if request.content_type not in JSON_TYPES and not binary:
            log.info("http POST %s 415 (content type %s)", RPC_PATH, request.content_type)
            return _json_response(
                _error_body(INVALID_REQUEST, f"the request must be application/json "
                            f"(or {BINARY_TYPE})"), 415)  # fmt: skip
        try:
            async with asyncio.timeout(body_timeout):
                body = await request.read()
        except TimeoutError:
            log.info("http POST %s 408 (body not received in %gs)", RPC_PATH, body_timeout)
            return _json_response(
                _error_body(INVALID_REQUEST, f"the body did not arrive within {body_timeout:g} s"),
                408,
            )
        except web.HTTPRequestEntityTooLarge:
            log.info("http POST %s 413 (body over %d bytes)", RPC_PATH, max_body)
            return _json_response(
                _error_body(
                    INVALID_REQUEST,
                    f"the body is larger than {counted(max_body, 'byte', grouped=False)}",
                ),
                413,
            )
        attachment = None
        try:
            if binary:  # JSON text, LF, raw arrays (parasol_core.estimator.binary)
                body, attachment = split(body)
            if len(body) > 256 * 1024:
                data = await off_loop(orjson.loads, body)
            else:
                data = orjson.loads(body)
        except FramingError as e:
            log.info("rpc - parse error: %s", e)
            return _json_response(_error_body(PARSE_ERROR, f"parse error: {e}"))
        except orjson.JSONDecodeError as e:
            log.info("rpc - parse error: %s", e)
            return _json_response(_error_body(PARSE_ERROR, f"parse error: {e}"))
        tiny = json_underflow(body)  # orjson refuses 1e400 but reads 1e-400 as 0.0
        if tiny is not None:
            log.info("rpc - parse error: %s", tiny)
            return _json_response(_error_body(PARSE_ERROR, f"parse error: {tiny}"))
        bulk = False
        if isinstance(data, list):
            if not data:
                return _json_response(_error_body(INVALID_REQUEST, "an empty batch"))
            if len(data) > MAX_BATCH:
                return _json_response(
                    _error_body(INVALID_REQUEST, f"a batch of more than {MAX_BATCH} requests")
                )
            works = [0] * len(data)
            if any(_costly(m) for m in data):  # may load models: off the event loop
                works = await off_loop(_works, service, data)
            total = sum(works)
            if total > budgets.batch_work:
                log.info("rpc - batch refused: about %d work units, budget %d", total,
                         budgets.batch_work)  # fmt: skip
                # a valid batch is answered by an array, one response per request
                # (JSON-RPC 2.0, section 6): each member is refused, with its own id
                message = (
                    f"the batch would do about {total:,} units of work (messages, pairs "
                    f"or route requests), over the batch budget of {budgets.batch_work:,}; "
                    "refused before any work: send fewer or smaller requests per batch")  # fmt: skip
                refused = [_refused_member(m, message) for m in data]
                refused = [r for r in refused if r is not None]
                return _json_response(refused) if refused else web.Response(status=204)
            # a few members at a time: dispatching thousands at once would hold the
            # event loop (and so every other client) for as long
            room = asyncio.Semaphore(BATCH_CONCURRENCY)

            async def member(m: Any, w: int) -> Any:
                async with room:
                    return await _one(dispatcher, m, _Context(request_id, client, deadline, w),
                                      attachment)  # fmt: skip

            answers = await asyncio.gather(*(member(m, w) for m, w in zip(data, works)))
            result: Any = [a for a in answers if a is not None]
            bulk = True
            if not result:  # only notifications
                return web.Response(status=204)
        else:
            context = _Context(request_id, client, deadline)
            if _costly(data):
                context.work = await off_loop(work_of, service, data.get("method"),
                                              data.get("params"))  # fmt: skip
            result = await _one(dispatcher, data, context, attachment)
            if result is None:
                return web.Response(status=204)
            spec = METHODS.get(data.get("method")) if isinstance(data, dict) else None
            bulk = spec is not None and spec.bulk
        answers = result if isinstance(result, list) else [result]
        framed = any(isinstance(a.get("result"), Binary) for a in answers if isinstance(a, dict))
        encode = functools.partial(frame, dumps=_dumps) if framed else _dumps
        try:  # a single binary answer's attachment is built: only the envelope is left
            try:
                if bulk and not (framed and len(answers) == 1):
                    out = await off_loop(encode, result)
                else:
                    out = encode(result)
            except jsonout.NonFiniteError:  # those answers are errors, the others stand
                out = encode(_refuse_non_finite(result))
        except (TypeError, ValueError, orjson.JSONEncodeError):
            log.exception("cannot serialize a result")
            out = _dumps(_error_body(INTERNAL_ERROR, "internal error: the result is not JSON"))
            framed = False
        return web.Response(body=out, content_type=BINARY_TYPE if framed else "application/json")

    app = web.Application(client_max_size=max_body, middlewares=[auth])
    app[SERVICE] = service
    app[LANES] = lanes
    app.router.add_post(RPC_PATH, rpc)
    return app


def _refused_member(member: Any, message: str) -> dict | None:
    """The answer to one member of a batch refused whole for its work: -32602 with the
    member's id; None for a notification (never answered); a member that is not a valid
    request gets -32600, as it would have in the batch."""
    valid = (
        isinstance(member, dict)
        and member.get("jsonrpc") == "2.0"
        and isinstance(member.get("method"), str)
        and isinstance(member.get("params", {}), (dict, list))
    )
    ident = member.get("id") if isinstance(member, dict) else None
    if valid and ident is not None and (isinstance(ident, bool)
                                        or not isinstance(ident, (str, int))):  # fmt: skip
        valid = False
    if not valid:
        return _error_body(INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 request object")
    if "id" not in member:
        return None
    body = _error_body(INVALID_PARAMS, message)
    body["id"] = ident
    return body


def client_of(request: web.Request) -> str:
    """Who a request comes from, for the fair queues. Its remote address, except on
    loopback, where every local program has the same address: there a client is its
    connection (address and port), so that one local program's flood does not count
    against another's. A program holds its connection across requests (keep-alive), so
    its calls are counted together; one that opens many connections is many clients,
    which the connection cap (``--max-connections``) bounds."""
    remote = request.remote or "-"
    if is_loopback(remote) and request.transport is not None:
        peer = request.transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            return f"{peer[0]}:{peer[1]}"
    return remote


def _costly(member: Any) -> bool:
    if not isinstance(member, dict) or not isinstance(member.get("method"), str):
        return False
    spec = METHODS.get(member["method"])
    return spec is not None and spec.cost is not None


def _works(service: Service, members: list) -> list[int]:
    return [
        work_of(service, m.get("method"), m.get("params")) if _costly(m) else 0 for m in members
    ]


async def _one(
    dispatcher: AsyncDispatcher, member: Any, context: Any, attachment: memoryview | None = None
) -> Any:
    """The response to one request object (None for a notification); ``attachment``:
    a binary request's raw arrays, which its column params point into."""
    if isinstance(member, list):  # pjrpc would take it for a batch of its own
        log.info("rpc - invalid request: an array inside a batch")
        return _error_body(INVALID_REQUEST, "invalid request: a request must be an object")
    if attachment is not None and isinstance(member, dict):
        params = member.get("params")
        if isinstance(params, dict):  # checked by the method that takes the column
            member = member | {"params": {
                k: ColumnRef(attachment, v) if isinstance(v, dict) and v.keys() == COLUMN_KEYS
                else v
                for k, v in params.items()
            }}  # fmt: skip
    # pjrpc takes "id": null for a notification; JSON-RPC 2.0 answers it, with id null
    if isinstance(member, dict) and "id" in member and member["id"] is None:
        answer = await dispatcher.dispatch(member | {"id": "\0null"}, context=context)
        if answer is None:
            return None
        answer[0]["id"] = None
        return answer[0]
    answer = await dispatcher.dispatch(member, context=context)
    if answer is None:
        return None
    data = answer[0]
    if "error" in data and data["error"]["code"] == INVALID_REQUEST:
        log.info("rpc - invalid request: %s", data["error"].get("data", ""))
        data["error"]["message"] = f"invalid request: {data['error'].get('data', '')}".rstrip(": ")
    return data


# --------------------------------------------------------------------------- running


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Refused(asyncio.Protocol):
    """A connection past the cap: answered 503 and closed at once, so that its
    descriptor is free again and the server never runs out of them."""

    BODY = _dumps(_error_body(INVALID_REQUEST, "too many connections: the estimator holds "
                              "its maximum; try again"))  # fmt: skip

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(self.BODY)}\r\nConnection: close\r\n\r\n")  # fmt: skip
        assert isinstance(transport, asyncio.Transport)
        transport.write(head.encode() + self.BODY)
        transport.close()


class CappedSite(web.TCPSite):
    """aiohttp's TCP site with at most ``max_connections`` connections open: past it a new
    connection is answered 503 and closed (logged, rate-limited), instead of the server
    accepting until the process runs out of descriptors and every accept fails."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, *, max_connections: int,
                 backlog: int = 2048) -> None:  # fmt: skip
        super().__init__(runner, host, port, backlog=backlog)
        self.max_connections = max_connections
        self.refused = 0

    def _factory(self) -> asyncio.Protocol:
        server = self._runner.server
        assert server is not None
        if len(server.connections) >= self.max_connections:
            self.refused += 1
            log.warning("connection refused: %d open, the cap (--max-connections)",
                        self.max_connections)  # fmt: skip
            return _Refused()
        return server()

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with the runner
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._factory, self._host, self._port,
                                                backlog=self._backlog)  # fmt: skip
        self._bound_port = self._server.sockets[0].getsockname()[1] if self._server.sockets \
            else self._port  # fmt: skip


def connection_cap(wanted: int, reserve: int = 256) -> int:
    """The most connections the server holds: ``wanted``, but below the process's
    descriptor limit by ``reserve`` (the store's files, the worker threads' files, the
    log), so that accepting never fails for want of a descriptor."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on this platform
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - reserve))


class RateLimit(logging.Filter):
    """At most ``burst`` warnings of one kind (logger, level and message template) in a
    window of ``seconds``; past it they are counted, not written, and the next record
    of that kind written says how many were left out. A flood of connections refused or
    of failing accepts then costs the log a few lines, not megabytes of tracebacks. The
    one line per call (INFO) is the access log and is always written: it grows with the
    calls served, which the budgets bound."""

    def __init__(self, burst: int = 20, seconds: float = 10.0,
                 clock: Any = time.monotonic) -> None:  # fmt: skip
        super().__init__()
        self.burst, self.seconds, self.clock = burst, seconds, clock
        self._kinds: dict[tuple, list] = {}  # kind -> [window start, written, left out]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        kind = (record.name, record.levelno, record.msg)
        now = self.clock()
        state = self._kinds.get(kind)
        if state is None or now - state[0] >= self.seconds:
            left_out = state[2] if state is not None else 0
            if len(self._kinds) > 10_000:  # kinds are templates; bounded all the same
                self._kinds.clear()
            self._kinds[kind] = [now, 1, 0]
            if left_out:
                record.msg = f"{record.msg} ({left_out} more like this left out)"
            return True
        if state[1] < self.burst:
            state[1] += 1
            return True
        state[2] += 1
        record.exc_info = None
        return False


def default_store() -> Path:
    import platformdirs

    return platformdirs.user_data_path("parasol-estimator", appauthor=False)


def _raise_file_limit() -> None:
    """Let the server hold a thousand connections and more."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on this platform
        pass


async def serve(
    host: str,
    port: int,
    store_dir: Path,
    token: str | None = None,
    *,
    max_body: int = MAX_BODY,
    body_timeout: float = BODY_TIMEOUT,
    shutdown_timeout: float = 30.0,
    budgets: Budgets = Budgets(),
) -> int:
    """Run until SIGINT, SIGTERM or SIGHUP; requests in flight are finished first. The
    exit status that says so: 128 + the signal (base/signals.py)."""
    _raise_file_limit()
    # Build the model parser now, on one thread: its lazy construction in
    # parasol_core.syntax.loader is not safe when two worker threads race to do it.
    from parasol_core.syntax.loader import parse_expression

    parse_expression("1")
    store = ModelStore(store_dir, budgets.store_limit)
    service = Service(store, budgets.loaded_limit)
    lanes = make_lanes(budgets)
    app = build_app(service, lanes, token, max_body, body_timeout, budgets)
    # keepalive_timeout: aiohttp closes a connection that has not sent a whole request
    # within it, from its opening or its last answer: idle and header-dribbling
    # connections alike (a body has --body-timeout)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout,
                           keepalive_timeout=budgets.idle_timeout)  # fmt: skip
    await runner.setup()
    cap = connection_cap(budgets.max_connections)
    site = CappedSite(runner, host, port, max_connections=cap)
    try:
        await site.start()
    except OSError as e:
        await runner.cleanup()
        for lane in lanes.values():
            lane.shutdown()
        message = f"parasol-estimator: cannot listen on {host}:{port}: {e.strerror or e}"
        raise SystemExit(message) from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    stopping = Stop(stop.set)  # the commands' signals (base/signals.py): SIGHUP too
    for sig in SIGNALS:
        loop.add_signal_handler(sig, stopping, sig)
    log.info("listening on http://%s:%d%s (store %s, %d models%s)", host, port, RPC_PATH,
             store_dir, len(store), ", token required" if token else "")  # fmt: skip
    await stop.wait()
    log.info("stopping (%s): finishing the requests in flight", name_of(stopping.signum))
    # Finish every request first, uploads included (aiohttp's own graceful shutdown
    # stops reading request bodies), answering new ones 503 meanwhile; then close.
    service.stopping = True
    deadline = loop.time() + shutdown_timeout
    while service.in_flight and loop.time() < deadline:
        await asyncio.sleep(0.01)
    await runner.cleanup()
    for lane in lanes.values():
        lane.shutdown()
    log.info("stopped")
    return stopping.status()


# --------------------------------------------------------------------------- the command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parasol-estimator",
        description="The PARASOL estimator: routes, transfer times and block estimates for "
        "pushed machine models, over JSON-RPC 2.0 (docs/estimator.md).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = sub.add_parser("serve", help="run the estimator until SIGINT, SIGTERM or SIGHUP")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    p.add_argument("--port", type=OptionNumber(int, 0, 65535), default=DEFAULT_PORT,
                   help=f"default {DEFAULT_PORT}")  # fmt: skip
    p.add_argument("--store", metavar="DIR", type=file_name_arg, help="where pushed models are kept "
                   "(default: the user data directory)")  # fmt: skip
    p.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (default: "
                   "$PARASOL_ESTIMATOR_TOKEN); needed to listen beyond loopback")  # fmt: skip
    p.add_argument("--max-body", type=_positive(int), default=MAX_BODY, metavar="BYTES",
                   help="largest request body (default 64 MiB)")  # fmt: skip
    p.add_argument("--body-timeout", type=_positive(float), default=BODY_TIMEOUT, metavar="S",
                   help="seconds to receive a request body (default 30)")  # fmt: skip
    d = Budgets()
    budget = p.add_argument_group("budgets (docs/estimator.md, 'Budgets')")
    budget.add_argument(
        "--request-timeout",
        type=_positive(float),
        metavar="S",
        default=d.request_timeout,
        help="seconds from a request's arrival "
        f"to its answer, batches included (default {d.request_timeout:g})",
    )
    budget.add_argument(
        "--batch-work",
        type=_positive(int),
        metavar="N",
        default=d.batch_work,
        help="estimated work of one batch: messages, pairs and route "
        f"requests of its members together (default {d.batch_work:,})",
    )
    budget.add_argument(
        "--max-work",
        type=_positive(int),
        metavar="N",
        default=d.max_work,
        help=f"estimated work running at once, over all clients (default {d.max_work:,})",
    )
    budget.add_argument(
        "--workers",
        type=_positive(int),
        metavar="N",
        default=d.workers,
        help=f"threads for the expensive methods (default {d.workers})",
    )
    budget.add_argument(
        "--per-client",
        type=_positive(int),
        metavar="N",
        default=d.per_client,
        help=f"of those, the most one client (remote address) may hold (default {d.per_client})",
    )
    budget.add_argument(
        "--quick-workers",
        type=_positive(int),
        metavar="N",
        default=d.quick_workers,
        help=f"threads for the quick methods (default {d.quick_workers})",
    )
    budget.add_argument(
        "--idle-timeout",
        type=_positive(float),
        metavar="S",
        default=d.idle_timeout,
        help="seconds a connection may stay open "
        f"without sending a whole request (default {d.idle_timeout:g})",
    )
    budget.add_argument(
        "--max-connections",
        type=_positive(int),
        metavar="N",
        default=d.max_connections,
        help="connections open at once; past it a new one is answered 503 and closed "
        f"(default {d.max_connections:,}, and always below the descriptor limit)",
    )
    budget.add_argument("--store-limit", type=_positive(int), metavar="BYTES",
                        default=d.store_limit, help="bytes of model text the store may hold "
                        f"(default {d.store_limit:,}, 1 GiB)")  # fmt: skip
    budget.add_argument("--loaded-limit", type=_positive(int), metavar="BYTES",
                        default=d.loaded_limit, help="bytes the parsed models kept between "
                        "calls may count for; past it the least recently used are parsed "
                        f"again when next used (default {d.loaded_limit:,}, 2 GiB)")  # fmt: skip
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("status", help="say whether an estimator is running and what it holds")
    p.add_argument("--url", default=None, help="default: $PARASOL_ESTIMATOR_URL or "
                   f"http://{DEFAULT_HOST}:{DEFAULT_PORT}")  # fmt: skip
    p.add_argument("--token", help="default: $PARASOL_ESTIMATOR_TOKEN")
    p.set_defaults(func=cmd_status)
    return parser


def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:  # ASCII, as every number read (base.numeric)
            value = read_int(text) if kind is int else read_float(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"not a number: {text!r} ({e})") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
        return value

    return parse


def cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("PARASOL_ESTIMATOR_TOKEN") or None
    if not is_loopback(args.host) and not token:
        print(f"parasol-estimator: refusing to listen on {args.host} (not loopback) without "
              "--token", file=sys.stderr)  # fmt: skip
        return 2
    if not 0 <= args.port <= 65535:
        print(f"parasol-estimator: bad port {args.port}", file=sys.stderr)
        return 2
    store_dir = Path(args.store) if args.store else default_store()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")  # fmt: skip
    for handler in logging.getLogger().handlers:  # asyncio's and aiohttp's lines too
        handler.addFilter(RateLimit())
    logging.getLogger("pjrpc").setLevel(logging.WARNING)  # we log each call ourselves
    try:
        budgets = Budgets(
            request_timeout=args.request_timeout,
            batch_work=args.batch_work,
            max_work=args.max_work,
            workers=args.workers,
            per_client=args.per_client,
            quick_workers=args.quick_workers,
            idle_timeout=args.idle_timeout,
            max_connections=args.max_connections,
            store_limit=args.store_limit,
            loaded_limit=args.loaded_limit,
        )
        # 0, or 128 + the signal that stopped it (a service manager sees which)
        return asyncio.run(serve(args.host, args.port, store_dir, token,
                                 max_body=args.max_body, body_timeout=args.body_timeout,
                                 budgets=budgets))  # fmt: skip
    except OSError as e:
        print(f"parasol-estimator: {store_dir}: {e.strerror or e}", file=sys.stderr)
        return 2


def cmd_status(args: argparse.Namespace) -> int:
    from parasol_core.estimator.client import Client, EstimatorError, default_url, naming

    url = args.url or default_url()
    token = args.token or os.environ.get("PARASOL_ESTIMATOR_TOKEN") or None
    client = Client(url, token=token, timeout=10.0)
    try:
        info = client.info()
        models = client.list()
    except EstimatorError as e:
        print(naming(url, "no estimator answering", e))
        return 1
    finally:
        client.close()
    print(f"estimator at {url}: running for {info['uptime']:.0f} s, protocol "
          f"{info['protocol']}, package {info['package']}")  # fmt: skip
    print(f"models: {len(models)}")
    for m in models:
        names = ", ".join(m["names"]) or "(no name)"
        print(
            f"  {m['model']}  {names}  {counted(m['size'], 'byte', grouped=False)}  pushed "
            f"{m['pushed']}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        return int(args.func(args) or 0)
    return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
