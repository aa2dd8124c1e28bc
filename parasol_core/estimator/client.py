"""A client for the estimator: one Python method per protocol method.

``Client`` keeps one HTTP/1.1 connection open (and opens a new one when the server has
closed it), so it is cheap to call in a loop. It is not thread-safe: give each thread
its own. Failures raise subclasses of :class:`EstimatorError`:

* :class:`EstimatorUnreachable`: nothing answers at the URL (refused, unknown host);
* :class:`EstimatorTimeout`: no answer within ``timeout`` seconds;
* :class:`Unauthorized`: the server wants a token, or another one;
* :class:`ProtocolError`: an answer that is not a JSON-RPC 2.0 response;
* :class:`RemoteError` (``code``, ``message``, ``data``): the server's JSON-RPC error,
  as :class:`ModelRefused` (with ``diagnostics``) for a refused push and
  :class:`UnknownModel` for a model id or name the estimator does not hold.
"""

from __future__ import annotations

import http.client
import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from parasol_core.base import jsonout
from parasol_core.estimator.binary import BINARY_TYPE, FramingError, columns_of, narrow, split
from parasol_core.estimator.protocol import (
    DEFAULT_URL,
    INVALID_PARAMS,
    RPC_PATH,
    UNKNOWN_MODEL,
)

__all__ = [
    "Client",
    "EstimatorError",
    "EstimatorTimeout",
    "EstimatorUnreachable",
    "ModelRefused",
    "ProtocolError",
    "RemoteError",
    "Unauthorized",
    "UnknownModel",
    "default_url",
]


def default_url() -> str:
    """``$PARASOL_ESTIMATOR_URL``, or the estimator's default address."""
    return os.environ.get("PARASOL_ESTIMATOR_URL") or DEFAULT_URL


def naming(url: str, lead: str, error: object) -> str:
    """``lead``, the estimator's address and ``error``'s words, the address said once:
    ``LEAD at URL: ERROR``, or ``LEAD: ERROR`` where the error names it already (the
    client's errors do: "cannot reach the estimator at URL: Connection refused")."""
    text = str(error)
    return f"{lead}: {text}" if url in text else f"{lead} at {url}: {text}"


class EstimatorError(Exception):
    """Talking to the estimator failed."""

    def __init__(self, message: str, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class EstimatorUnreachable(EstimatorError):
    """No estimator answers at the URL."""


class EstimatorTimeout(EstimatorError):
    """The estimator did not answer in time."""


class Unauthorized(EstimatorError):
    """The estimator refused the request's token (HTTP 401)."""


class ProtocolError(EstimatorError):
    """The answer is not a JSON-RPC 2.0 response to the request."""


class RemoteError(EstimatorError):
    """A JSON-RPC error object from the estimator."""

    def __init__(self, code: int, message: str, data: Any = None, url: str | None = None) -> None:
        super().__init__(f"{message} (error {code})", url)
        self.code = code
        self.message = message
        self.data = data


class ModelRefused(RemoteError):
    """``model.push`` refused the model: ``diagnostics`` say where and why."""

    @property
    def diagnostics(self) -> list[dict]:
        data = self.data if isinstance(self.data, dict) else {}
        return list(data.get("diagnostics", []))


class UnknownModel(RemoteError):
    """The estimator holds no model with that id (or name)."""


def check_url(url: str) -> tuple[bool, str, int]:
    """An estimator's address as a client reaches it: (https, host, port). Raises
    ValueError saying what is wrong with ``url`` (not http(s), no host, a port outside
    1-65535, a malformed IPv6 host, a blank or control character in it): an address
    typed wrong is refused where it is given, not found out at the first question."""
    from parasol_core.base.limits import outside_text

    shown = repr(outside_text(url, 120))
    example = f"like {DEFAULT_URL}"
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ValueError(f"{shown} is not an estimator's address: it holds a blank or a "
                         f"control character ({example})")  # fmt: skip
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:  # "Port out of range 0-65535", "Invalid IPv6 URL"
        why = "its port is not a number from 1 to 65535" if "Port" in str(e) else str(e)
        raise ValueError(f"{shown} is not an estimator's address: {why} ({example})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{shown} is not an estimator's address: not an http(s) URL, it "
                         f"must start with http:// or https:// ({example})")  # fmt: skip
    if not parts.hostname:
        raise ValueError(f"{shown} is not an estimator's address: not an http(s) URL, it "
                         f"names no host ({example})")  # fmt: skip
    if port == 0:
        raise ValueError(f"{shown} is not an estimator's address: its port is not a number "
                         f"from 1 to 65535 ({example})")  # fmt: skip
    https = parts.scheme == "https"
    return https, parts.hostname, port or (443 if https else 80)


class Client:
    """``Client("http://127.0.0.1:7911")``; ``token`` for an estimator started with one."""

    def __init__(self, url: str | None = None, token: str | None = None,
                 timeout: float = 60.0) -> None:  # fmt: skip
        self.url = url or default_url()
        self._https, self._host, self._port = check_url(self.url)
        parts = urlsplit(self.url)
        self._path = parts.path if parts.path not in ("", "/") else RPC_PATH
        self.token = token
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ transport

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.timeout)
        return self._conn

    def _post(self, body: bytes, content_type: str = "application/json") -> tuple[int, str, bytes]:
        """``(HTTP status, content type, body)`` of the answer to a POST of ``body``."""
        headers = {"Content-Type": content_type, "Accept": f"application/json, {BINARY_TYPE}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (1, 2):
            reused = self._conn is not None
            conn = self._connection()
            try:
                conn.request("POST", self._path, body, headers)
                response = conn.getresponse()
                data = response.read()
                if response.will_close:
                    self.close()
                kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
                return response.status, kind, data
            except TimeoutError:
                self.close()
                raise EstimatorTimeout(
                    f"the estimator at {self.url} did not answer within {self.timeout:g} s",
                    self.url,
                ) from None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self.close()
                if reused and attempt == 1:
                    continue  # the server closed an idle connection: once more, anew
                raise EstimatorUnreachable(
                    f"the estimator at {self.url} closed the connection: {e}", self.url
                ) from None
            except OSError as e:
                self.close()
                raise EstimatorUnreachable(
                    f"cannot reach the estimator at {self.url}: {e.strerror or e}", self.url
                ) from None
            except http.client.HTTPException as e:
                self.close()
                raise ProtocolError(f"bad HTTP answer from {self.url}: {e!r}", self.url) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def call(self, method: str, *, attachment: bytes | None = None, **params: Any) -> Any:
        """Call any method by name; its result.

        With ``attachment`` the request goes in the binary framing (docs/estimator.md),
        and params given as column objects ``{"dtype", "offset", "count"}`` point into
        it. An answer in the binary framing comes back with its columns as read-only
        numpy arrays (views of the answer's body)."""
        rid = next(self._ids)
        request = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        try:  # no NaN or infinity sent as the null orjson would write for it
            text = jsonout.dumps_bytes(request)
        except jsonout.NonFiniteError as e:
            raise ValueError(
                f"{method}: the request {str(e).removeprefix('the answer ')}"
            ) from None
        if attachment is None:
            status, kind, data = self._post(text)
        else:
            pad = b" " * (-(len(text) + 1) % 8)
            status, kind, data = self._post(b"".join((text, pad, b"\n", attachment)), BINARY_TYPE)
        attached = None
        if kind == BINARY_TYPE:
            try:
                data, attached = split(data)
            except FramingError as e:
                raise ProtocolError(f"the answer from {self.url}: {e}", self.url) from None
        if status == 401:
            raise Unauthorized(
                f"the estimator at {self.url} wants a token"
                + (" (the one given is wrong)" if self.token else " (none was given)"),
                self.url,
            )
        try:
            answer = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ProtocolError(
                f"the answer from {self.url} (HTTP {status}) is not JSON: {bytes(data[:200])!r}",
                self.url,
            ) from None
        if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
            raise ProtocolError(f"the answer from {self.url} is not JSON-RPC 2.0", self.url)
        if "error" in answer:
            error = answer["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise ProtocolError(f"a malformed error object from {self.url}", self.url)
            code, message, edata = error["code"], str(error.get("message", "")), error.get("data")
            if method == "model.push" and code == INVALID_PARAMS and isinstance(edata, dict) \
                    and "diagnostics" in edata:  # fmt: skip
                raise ModelRefused(code, message, edata, self.url)
            if code == UNKNOWN_MODEL:
                raise UnknownModel(code, message, edata, self.url)
            raise RemoteError(code, message, edata, self.url)
        if answer.get("id") != rid or "result" not in answer:
            raise ProtocolError(f"the answer from {self.url} is not for this request", self.url)
        if attached is not None:
            try:
                return columns_of(answer["result"], attached)
            except ValueError as e:
                raise ProtocolError(f"the answer from {self.url}: {e}", self.url) from None
        return answer["result"]

    # ------------------------------------------------------------------ methods

    def info(self) -> dict:
        return self.call("server.info")

    def ping(self) -> bool:
        return self.call("server.ping")

    def push(self, text: str, name: str | None = None) -> dict:
        """``{"model": ID, "name": NAME, "diagnostics": [...]}``; ModelRefused if refused."""
        return self.call("model.push", text=text, name=name)

    def list(self) -> list[dict]:
        return self.call("model.list")

    def get(self, model: str) -> str:
        """The model's text, exactly as pushed."""
        return self.call("model.get", model=model)["text"]

    def latest(self, name: str) -> str:
        return self.call("model.latest", name=name)

    def drop(self, model: str) -> bool:
        return self.call("model.drop", model=model)

    def evaluate(self, model: str, expression: str,
                 args: Mapping[str, float] | None = None) -> int | float:  # fmt: skip
        params: dict[str, Any] = {"model": model, "expression": expression}
        if args is not None:
            params["args"] = dict(args)
        return self.call("model.evaluate", **params)

    def plot(self, model: str, src: int | str, dst: int | str, virtual: int | None = None) -> dict:
        """``route.plot``: ``src`` and ``dst`` processor numbers, or (protocol 1.4) names
        of the topology's processors; the answer's ``names`` maps numbers to names."""
        params: dict[str, Any] = {"model": model, "src": src, "dst": dst}
        if virtual is not None:
            params["virtual"] = virtual
        return self.call("route.plot", **params)

    def plot_many(self, model: str, pairs: Iterable[Sequence[int]], virtual: int | None = None,
                  compact: bool = False, encoding: str | None = None,
                  fields: Sequence[str] | None = None) -> dict:  # fmt: skip
        """The columnar answer of ``route.plot_many``; :func:`routes_of` unpacks it.

        ``encoding`` is how it travels: ``"json"`` (the default: Python lists and the
        route ids), or ``"binary"`` (``compact=True`` says the same) or ``"base64"``, the
        compact forms: columns come back as numpy int64 arrays, equal to the core's
        ``index.routes()``, with ``route_prefix`` instead of the ids (route i's id is
        ``route_prefix + f"{src}-{dst}"``). ``"binary"`` sends the pairs and the columns
        as raw bytes: several times less to encode and to parse than the others.
        ``fields`` picks what comes back, from ``routes``, ``processors`` (with
        ``offsets``), ``links`` (with ``link_offsets``), ``hops`` (links per route) and
        ``names`` (protocol 1.5: ``{"3": "Fafard"}`` of the processors on the routes that
        the topology names, in every encoding); the default is the first three."""
        import numpy as np

        encoding = encoding or ("binary" if compact else "json")
        params: dict[str, Any] = {"model": model}
        if virtual is not None:
            params["virtual"] = virtual
        if fields is not None:
            params["fields"] = list(fields)
        if encoding == "json":
            return self.call("route.plot_many", pairs=_pairs(pairs), **params)
        arr = np.asarray(pairs if isinstance(pairs, np.ndarray) else list(pairs), dtype=np.int64)
        arr = arr.reshape(-1, 2) if arr.size else np.zeros((0, 2), np.int64)
        if encoding == "binary":
            dtype = narrow(arr)
            column = {"dtype": dtype, "offset": 0, "count": int(arr.size)}
            answer = self.call("route.plot_many", pairs=column, encoding=encoding,
                               attachment=arr.astype(dtype).tobytes(), **params)  # fmt: skip
        else:
            import base64

            wire = {"dtype": "<i8", "data": base64.b64encode(arr.astype("<i8").tobytes()).decode()}
            answer = self.call("route.plot_many", pairs=wire, encoding=encoding, **params)
        out: dict[str, Any] = {}
        for key, value in answer.items():
            if key == "encoding":
                continue
            if isinstance(value, dict) and encoding == "base64" and key != "names":
                value = np.frombuffer(base64.b64decode(value["data"]), dtype=value["dtype"])
            # the core's dtype; a copy of its own, not a view of the whole answer
            out[key] = value.astype(np.int64) if isinstance(value, np.ndarray) else value
        return out

    def transfer_time(self, model: str, route: str, nbytes: float,
                      active: Iterable[str] = ()) -> float:  # fmt: skip
        return self.call("network.transfer_time", model=model, route=route, bytes=nbytes,
                         active=list(active))  # fmt: skip

    def transfer_times(self, model: str, requests: Iterable[tuple[str, float]],
                       active: Iterable[str] = ()) -> list[float]:  # fmt: skip
        reqs = [{"route": r, "bytes": b} for r, b in requests]
        return self.call("network.transfer_times", model=model, requests=reqs,
                         active=list(active))  # fmt: skip

    def phase(self, model: str, messages: Sequence[Mapping[str, Any]] | None = None,
              pattern: str | None = None, nbytes: float | None = None,
              dim: int | str | None = None, root: int | None = None,
              virtual: int | None = None) -> dict:  # fmt: skip
        """The event trace of a phase: ``messages``, or a ``pattern`` with ``nbytes``."""
        return self.call("estimate.phase", **_phase_params(
            model=model, messages=None if messages is None else list(messages),
            pattern=pattern, bytes=nbytes, dim=dim, root=root, virtual=virtual))  # fmt: skip

    def push_trace(self, path: str | os.PathLike[str], name: str | None = None) -> dict:
        """Push a trace: a SimGrid time-independent trace's ``path`` (an index file
        naming one action file per rank, or one file of every rank's actions) and the
        files its lines name, relative to its folder; or an OTF2 archive's anchor
        (``.otf2``) and every file in its folder. ``{"trace": ID, "ranks", "actions",
        ...}``."""
        import base64
        from pathlib import Path

        from parasol_core.base.limits import MAX_FILE_BYTES, read_capped

        def read(p: Path) -> bytes:  # a regular file, at most the model files' limit
            return read_capped(p, MAX_FILE_BYTES, "a trace file")

        index = Path(path)
        head = read(index)
        files = {index.name: head}
        if index.suffix == ".otf2":  # an OTF2 archive: its anchor and what lies beside it
            for part in sorted(index.parent.rglob("*")):
                if part.is_file():
                    files[part.relative_to(index.parent).as_posix()] = read(part)
        else:  # a time-independent trace: its files as the replay here reads them
            from parasol_core.replay.tifile import ti_files

            named = ti_files(index)
            if named == [index]:  # the actions
                files = {upload_name(index.name, "trace.txt"): head}
            else:  # an index: sent naming the files as they are sent
                names = upload_names(index, named)
                head = ("\n".join(names) + "\n").encode("utf-8")
                files = {upload_name(index.name, "index.txt"): head}
                for part, sent in zip(named, names):
                    files[sent] = read(part)
        payload: dict[str, Any] = {}
        for key, data in files.items():
            try:
                payload[key] = data.decode("utf-8")
            except UnicodeDecodeError:  # binary (OTF2's): as base64
                payload[key] = {"base64": base64.b64encode(data).decode("ascii")}
        return self.call("trace.push", files=payload, index=next(iter(files)), name=name)

    def program(self, model: str, trace: str, **options: Any) -> dict:
        """The replay of a pushed trace on a pushed model (docs/estimator.md,
        ``estimate.program``): ``flop``, ``collectives``, ``eager``, ``sharing``,
        ``virtual``, ``hosts``, ``algorithms``, ``operations``."""
        return self.call("estimate.program", model=model, trace=trace, **options)

    def block(self, model: str, processor: int, counts: Mapping[str, float],
              cached: bool = False, chains: Sequence[Mapping[str, float]] | None = None,
              working_set: int | None = None) -> dict:  # fmt: skip
        extra: dict = {} if chains is None else {"chains": [dict(c) for c in chains]}
        if working_set is not None:
            extra["working_set"] = working_set
        return self.call("estimate.block", model=model, processor=processor,
                         counts=dict(counts), cached=cached, **extra)  # fmt: skip

    def sweep(self, model: str, sweep: str) -> dict:
        """A what-if sweep of a stored model (``sweep``: a sweep file's text)."""
        return self.call("sweep.run", model=model, sweep=sweep)


def upload_name(name: str, instead: str) -> str:
    """``name`` if the estimator stores a trace file so named, else ``instead``."""
    from parasol_core.estimator.traces import check_file_name

    try:
        return check_file_name(name)
    except ValueError:
        return instead


def upload_names(index: Path, files: list[Path]) -> list[str]:
    """The names the action files of a trace's ``index`` are sent under: each one's path
    from the index's folder where the estimator takes it as a name (files beside the
    index keep theirs), else ``files/N-NAME``, N its place in the index and NAME its own
    name in the letters a name may hold. An index naming absolute paths, files outside
    its folder or names with spaces (which the replay here reads) is pushed so."""
    import re

    names = []
    for n, part in enumerate(files, 1):
        rel = os.path.relpath(part, index.parent)
        plain = re.sub(r"[^A-Za-z0-9_.+=-]", "_", part.name).lstrip(".") or "file"
        names.append(upload_name(Path(rel).as_posix(), f"files/{n}-{plain}"[:200]))
    return names


def _phase_params(**params: Any) -> dict:
    return {k: v for k, v in params.items() if v is not None}


def _pairs(pairs: Any) -> Any:
    try:
        import numpy as np

        if isinstance(pairs, np.ndarray):
            return pairs.astype(np.int64)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    return [list(p) for p in pairs]


def routes_of(result: Mapping[str, Any]) -> list[dict]:
    """``route.plot_many``'s columns as one ``{"route", "processors", "links"}`` per route."""
    off, loff = result["offsets"], result["link_offsets"]
    procs, links = result["processors"], result["links"]
    return [
        {
            "route": rid,
            "processors": procs[off[i] : off[i + 1]],
            "links": links[loff[i] : loff[i + 1]],
        }
        for i, rid in enumerate(result["routes"])
    ]
