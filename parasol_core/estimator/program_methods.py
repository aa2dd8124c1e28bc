"""The estimator's program methods (issue 31): a traced MPI program pushed once, then
predicted on any pushed model (docs/estimator.md, "trace.push", "estimate.program").

* ``trace.push(files, index)``: a SimGrid time-independent trace as its files by name
  (text, or ``{"base64": ...}``), ``index`` the file replayed (an index file naming one
  action file per rank, or one file of every rank's actions). It is read first (a bad
  trace is -32602 with its file and line, and nothing is stored), then stored
  content-addressed (:mod:`.traces`): the same files always get the same id.
* ``estimate.program(model, trace, ...)``: the replay (``parasol_core.replay``) of a
  pushed trace on a pushed model: the makespan and each rank's finish, computation,
  communication and waiting; ``operations=true`` adds every operation's start and end.

A trace read is kept, with the programs its replays compiled, for the next question
about it (:data:`KEEP_TRACES` of them), so a what-if over many models costs the
network trace only. Work is counted before it starts: a request's cost is the
trace's lines (its actions at most), charged against the batch budget and held to
:data:`MAX_ACTIONS`; the replay itself runs under the memory budget in force.
"""

from __future__ import annotations

import base64
import binascii
import shutil
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from parasol_core.base.words import counted
from parasol_core.estimator.methods import (
    MAX_NAME,
    MAX_NAME_LENGTH,
    Service,
    _overflow,
    method,
    with_names,
)
from parasol_core.estimator.protocol import (
    STORE_FULL,
    MethodError,
    ParamError,
    check_bool,
    check_int,
    check_name,
    check_number,
    check_object,
    check_str,
)
from parasol_core.estimator.store import StoreFull
from parasol_core.estimator.traces import StoredTrace, traces_of
from parasol_core.model import Machine
from parasol_core.replay import (
    ALGORITHMS,
    DeadlockError,
    ReplayError,
    ReplayOptions,
    Trace,
    TraceError,
    load_trace,
    replay,
)
from parasol_core.replay.run import host_entry
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.overflow import TimeOverflowError
from parasol_core.topology.resources import SHARING

__all__ = ["MAX_ACTIONS", "estimate_program", "trace_push", "traces_of"]

# lines of one trace a request may replay (10^7 actions on 4,096 ranks is the issue's
# largest case); past it the request is refused before it starts
MAX_ACTIONS = 20_000_000
KEEP_TRACES = 4  # traces kept read, with their compiled programs
_lock = threading.Lock()


def _files(files: Any) -> dict[str, bytes]:
    check_object("files", files)
    out: dict[str, bytes] = {}
    for name, data in files.items():
        if isinstance(data, str):
            out[name] = data.encode("utf-8")
        elif isinstance(data, dict) and set(data) == {"base64"} and isinstance(
                data["base64"], str):  # fmt: skip
            try:
                out[name] = base64.b64decode(data["base64"], validate=True)
            except (binascii.Error, ValueError):
                raise ParamError(f"'files': {name[:80]!r} is not valid base64") from None
        else:
            raise ParamError(f"'files': {name[:80]!r} must be the file's text or "
                             '{"base64": ...}')  # fmt: skip
    return out


@method("trace.push", heavy=True)
def trace_push(svc: Service, files: dict, index: str, name: str | None = None) -> dict:
    check_str("index", index, 1000)
    if name is not None:
        check_name("name", name, MAX_NAME)
    data = _files(files)
    store = traces_of(svc)
    # read before it is stored: a trace the replay cannot read is refused, naming where
    folder = Path(tempfile.mkdtemp(prefix=".tmp-read-", dir=store.directory))
    try:
        from parasol_core.estimator.traces import check_file_name

        for file_name, content in data.items():
            target = folder / check_file_name(file_name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        if index not in data:
            raise ParamError(f"'index': {index[:80]!r} is not one of the files pushed")
        trace = load_trace(folder / index)
    except ValueError as e:  # TraceError and bad names alike
        raise ParamError(f"the trace was refused: {_relative(str(e), folder)}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        stored = store.put(data, index)
    except StoreFull as e:
        raise MethodError(STORE_FULL, str(e), {"size": e.size, "used": e.used,
                                               "limit": e.limit}) from None  # fmt: skip
    except OSError as e:
        raise MethodError(STORE_FULL, f"the trace cannot be stored: {e.strerror or e}; "
                          "nothing was stored") from None  # fmt: skip
    return {"trace": stored.id, "name": name, "ranks": trace.ranks, "actions": len(trace),
            "size": stored.size}  # fmt: skip


def _relative(message: str, folder: Path) -> str:
    """A reader's message about files in a temporary folder, naming them as pushed."""
    return message.replace(f"{folder}/", "").replace(str(folder), ".")


def _stored(svc: Service, trace: Any) -> StoredTrace:
    check_str("trace", trace, 100)
    stored = traces_of(svc).get(trace)
    if stored is None:
        raise ParamError(f"there is no trace {trace!r} in the estimator (push it: trace.push)")
    return stored


def _program_cost(svc: Any, params: dict) -> int:
    trace = params.get("trace")
    if not isinstance(trace, str):
        return 0
    stored = traces_of(svc).get(trace)
    return stored.lines if stored is not None else 0


def _read(svc: Service, stored: StoredTrace) -> Trace:
    """The trace read, kept for the next question (its compiled programs with it)."""
    kept: OrderedDict = svc.read_traces
    with _lock:
        trace = kept.get(stored.id)
        if trace is not None:
            kept.move_to_end(stored.id)
            return trace
    trace = load_trace(stored.path)
    trace.files = [_relative(f, stored.folder) for f in trace.files]
    with _lock:
        kept[stored.id] = trace
        while len(kept) > KEEP_TRACES:
            kept.popitem(last=False)
    return trace


def _options(params: dict, machine: Machine | None = None) -> ReplayOptions:
    kwargs: dict[str, Any] = {}
    if params.get("flop") is not None:
        kwargs["flop"] = check_str("flop", params["flop"], 1000)
    if params.get("collectives") is not None:
        if params["collectives"] not in ("network", "model"):
            raise ParamError("collectives must be 'network' or 'model'")
        kwargs["collectives"] = params["collectives"]
    if params.get("eager") is not None:
        kwargs["eager"] = check_number("eager", params["eager"], 0.0, 2.0**53)
    if params.get("sharing") is not None:
        if params["sharing"] not in SHARING:
            raise ParamError(f"sharing must be one of {', '.join(SHARING)}")
        kwargs["sharing"] = params["sharing"]
    if params.get("virtual") is not None:
        kwargs["virtual"] = check_int("virtual", params["virtual"])
    hosts = params.get("hosts")
    if hosts is not None:
        if not isinstance(hosts, list) or not hosts or len(hosts) > MAX_ACTIONS:
            raise ParamError("hosts must be a non-empty list of hostfile entries (N, pN, a "
                             "processor's name, each optionally :RANKS)")  # fmt: skip
        kwargs["hostfile"] = _host_entries(hosts, machine)
    algorithms = params.get("algorithms")
    if algorithms is not None:
        check_object("algorithms", algorithms)
        for name, algo in algorithms.items():
            if name not in ALGORITHMS or algo not in ALGORITHMS[name]:
                raise ParamError(f"algorithms: {name!r}: {algo!r} is not one of "
                                 f"{', '.join(ALGORITHMS.get(name, ()))}")  # fmt: skip
        kwargs["algorithms"] = dict(algorithms)
    return ReplayOptions(**kwargs)


def _host_entries(hosts: list, machine: Machine | None) -> list[int | str]:
    """``hosts`` as a hostfile's lines, read by the one reader of hostfile entries
    (:func:`parasol_core.replay.host_entry`: ``--hostfile``, a sweep's ``hostfile``,
    ``sweep.run``): a number, ``pN`` or a name, each optionally ``:RANKS``; each entry
    checked here (-32602 naming it), the ranks placed by the replay."""
    hw = machine.hardware() if machine is not None else None
    for i, h in enumerate(hosts):
        what = f"hosts[{i}]"
        if isinstance(h, str):
            check_str(what, h, MAX_NAME_LENGTH + 24)  # a name and its :RANKS
        try:
            host_entry(h, hw, what, most=1)  # a processor the topology lacks too
        except (ValueError, RoutingError) as e:
            raise ParamError(str(e)) from None
    return list(hosts)


@method("estimate.program", bulk=True, heavy=True, cost=_program_cost)
def estimate_program(svc: Service, model: str, trace: str, flop: str | None = None,
                     collectives: str | None = None, eager: float | None = None,
                     sharing: str | None = None, virtual: int | None = None,
                     hosts: list | None = None, algorithms: dict | None = None,
                     operations: bool = False) -> dict:  # fmt: skip
    loaded = svc.model(model)
    stored = _stored(svc, trace)
    check_bool("operations", operations)
    if stored.lines > MAX_ACTIONS:
        raise ParamError(f"a trace of {counted(stored.lines, 'line')}: at most {MAX_ACTIONS:,} "
                         f"in one request")  # fmt: skip
    options = _options(dict(flop=flop, collectives=collectives, eager=eager, sharing=sharing,
                            virtual=virtual, hosts=hosts, algorithms=algorithms),
                       loaded.machine)  # fmt: skip
    try:
        read = _read(svc, stored)
        with loaded.lock:  # the engine is the model's, one user at a time
            result = replay(loaded.machine, read, options, loaded.engine())
    except TimeOverflowError as e:
        raise _overflow(e) from None
    except (TraceError, ReplayError, DeadlockError) as e:
        raise ParamError(str(e)) from None
    out = with_names(result.to_json(operations=operations), loaded.machine, result.host.tolist())
    out["trace"] = stored.id
    out["model"] = loaded.id
    return out
