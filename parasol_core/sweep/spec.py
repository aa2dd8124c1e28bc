"""A sweep file (TOML, read with :mod:`tomllib`): the base model, the axes, the answers,
the sample and the budget of one variant. The format is ``docs/sweeps.md``; every
mistake is a :class:`SweepError` saying where (``axis 2``, ``answer 1``) and why.

An axis is anything the session can change, written as the command line writes it:

* ``set = "pt(1).iga"``: a stored value or a named expression by reference, as
  ``parasol-model set`` takes it (values: numbers, or text as the file format reads it);
  ``set = "tl(1)(*).speed"`` sets the latency or speed of every link of a topology (the
  session's group link edit);
* ``scale = "arithmetic"``: a scaler group, as ``parasol-model scale`` (values: factors;
  ``processor = N`` for one processor type only);
* ``generate = 1``: hardware topology 1 replaced by a generated one, as the topology
  editor does (values: ``"torus 8 8 8"``, ``"grid 16 32"``, ...; ``latency`` and ``speed``
  default to those of the old topology's first link).

Values: ``values = [...]``, ``range = [start, stop, step]`` (stop included when a step
lands on it), ``linear = [start, stop, count]`` or ``log = [start, stop, count]``.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parasol_core.base import params
from parasol_core.base.budget import parse_size
from parasol_core.base.diagnostics import ModelSyntaxError
from parasol_core.base.limits import (
    MAX_DATA_FILE_BYTES,
    Unreadable,
    ValueRangeError,
    open_input,
    read_model_bytes,
)
from parasol_core.base.numeric import read_int, shown
from parasol_core.base.words import counted, said
from parasol_core.syntax.expression import parse_expression
from parasol_core.syntax.loader import decode, loads

MAX_SWEEP_FILE_BYTES = 1 << 20
MAX_AXIS_VALUES = 100_000
"""The most values one axis takes (a range of more is refused as it is read)."""
MAX_VARIANTS = 1_000_000
"""The most variants one sweep runs (rows of its output); a larger grid is sampled."""
METHODS = ("grid", "random", "latin")
KINDS = ("eval", "block", "simulate", "replay")
"""What an answer computes."""
REPLAY_OPTIONS = {"trace", "virtual", "hostfile", "flop", "collectives", "eager", "algorithms",
                  "sharing"}  # fmt: skip
GENERATOR_RE = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*)((?:\s+[0-9]+)+)\s*")
# a table's where as the reader names it, alone or before the part of it ("answer 2: replay")
PART_RE = re.compile(r"(axis|answer) ([0-9]+)(?:$|: )")
LINKS_RE = re.compile(r"\s*tl\(\s*([0-9]+)\s*\)\(\s*\*\s*\)\.(latency|speed)\s*")


class SweepError(ValueError):
    """A sweep file that cannot be run: the message says where and why. ``part``: the
    table it is about, ``("axis", N)`` or ``("answer", N)`` (the file's numbering, from
    1), when it is one; ``why``: the message without the file and the table, so that a
    form that numbers nothing can say it at its own row."""

    def __init__(self, message: str, *, part: tuple[str, int] | None = None,
                 why: str | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.part = part
        self.why = message if why is None else why

    def __reduce__(self) -> tuple:  # across a process pool, with its part and why
        return (_sweep_error, (type(self), str(self), self.part, self.why))


def _sweep_error(cls: type, message: str, part: tuple[str, int] | None, why: str) -> SweepError:
    return cls(message, part=part, why=why)


class SweepUnreadable(SweepError, Unreadable):
    """A file a sweep names (itself, its model, a data file, its output) that cannot be
    read."""


@dataclass(frozen=True)
class Axis:
    """One axis: ``kind`` is ``set``, ``links``, ``scale`` or ``generate``; ``target`` the
    reference (``set``), ``(topology, attr)`` (``links``), ``(group, processor or
    None)`` (``scale``) or ``(topology, latency, speed)`` (``generate``)."""

    name: str
    kind: str
    target: tuple
    values: tuple

    def text(self, i: int) -> str:
        """Value ``i`` as the output writes it."""
        return value_text(self.values[i])


@dataclass(frozen=True)
class Answer:
    """One column of answers: ``kind`` (:data:`KINDS`) and its options."""

    name: str
    kind: str
    options: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class SweepSpec:
    model_text: str
    model_name: str
    axes: tuple[Axis, ...]
    answers: tuple[Answer, ...]
    method: str = "grid"
    count: int | None = None
    seed: int = 0
    seconds: float | None = None
    memory: int | None = None
    source: str = "the sweep"

    @property
    def grid_size(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    @property
    def size(self) -> int:
        """How many variants the sweep runs."""
        return self.grid_size if self.method == "grid" else int(self.count or 0)

    def columns(self) -> list[str]:
        return ["index", *(a.name for a in self.axes), *(a.name for a in self.answers),
                "seconds", "error"]  # fmt: skip


def value_text(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return str(value)


# --------------------------------------------------------------------------- reading


def load_spec(path: str | Path, *, files: bool = True) -> SweepSpec:
    """The sweep of a file; its model and data files are found beside it."""
    path = Path(path)
    try:
        with open_input(path) as f:  # a regular file: a FIFO would block
            data = f.read(MAX_SWEEP_FILE_BYTES + 1)
        if len(data) > MAX_SWEEP_FILE_BYTES:
            raise SweepError(
                f"{path}: longer than {MAX_SWEEP_FILE_BYTES:,} bytes, too long for a sweep file"
            )
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not a UTF-8 text file (offset {e.start})") from None
    except (OSError, ValueRangeError) as e:
        raise SweepUnreadable(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return loads_spec(text, base=path.parent, source=str(path), files=files)


def loads_spec(text: str, *, base: str | Path | None = None, source: str = "the sweep",
               model_text: str | None = None, files: bool = True,
               traces: Callable[[str], Path | None] | None = None) -> SweepSpec:  # fmt: skip
    """A sweep from its TOML text. ``model_text``: the base model itself (the estimator,
    PIUI's open model), in place of the file's ``model``. ``files`` False: nothing may
    name a file (the estimator reads none of its host's files). ``traces``: where a
    replay's ``trace`` is found when it names no file (the estimator's pushed traces, by
    id: the index file's path, None when there is no such trace)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{source}: not TOML: {e}") from None
    except RecursionError:  # [[[[...]]]]: the reader recurses once a level
        raise SweepError(f"{source}: not TOML this reader can read: arrays or tables nested "
                         "too deeply") from None  # fmt: skip
    r = _Reader(doc, source, Path(base) if base is not None else Path.cwd(), files, traces)
    r.keys(doc, "the file", {"model", "axis", "answer", "sample", "budget"})
    if model_text is None:
        model = doc.get("model")
        if not isinstance(model, str):
            raise SweepError(f"{source}: 'model' (the path of the base model) is missing")
        path = r.path(model, "model")
        try:
            data = read_model_bytes(str(path))
            model_text = decode(data, str(path))
        except (OSError, ValueRangeError) as e:
            raise SweepUnreadable(f"{source}: model {said(model)}: cannot read: "
                                  f"{getattr(e, 'strerror', None) or e}") from None  # fmt: skip
        except ModelSyntaxError as e:
            raise SweepError(f"{source}: model {said(model)}: cannot read: "
                             f"{getattr(e, 'strerror', None) or e}") from None  # fmt: skip
        model_name = str(path)
    else:
        model_name = str(doc.get("model", "the open model"))
    try:
        machine = loads(model_text, model_name)
    except ModelSyntaxError as e:
        raise SweepError(f"{source}: model: {e.format()}") from None
    axes = tuple(r.axis(i + 1, t, machine) for i, t in enumerate(r.tables("axis")))
    # a generated topology may have processors the base model lacks: a hostfile's are
    # then each variant's to check
    r.generates = any(axis.kind == "generate" for axis in axes)
    answers: list[Answer] = []
    numbers: list[int] = []  # each answer's [[answer]] table, as errors name it
    for i, t in enumerate(r.tables("answer")):
        made = r.answer(i + 1, t, machine)
        answers.extend(made)
        numbers += [i + 1] * len(made)
    if not answers:
        raise SweepError(f"{source}: no [[answer]]: say what to compute for each variant")
    _check_flops(machine, axes, list(zip(numbers, answers, strict=True)), source)
    names = [a.name for a in axes] + [a.name for a in answers]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise SweepError(f"{source}: two columns are named {said(dup)}: give one a 'name'")
    if any(n in ("index", "seconds", "error") for n in names):
        raise SweepError(f"{source}: 'index', 'seconds' and 'error' are the output's own "
                         "columns: name an axis or answer otherwise")  # fmt: skip
    sample = r.table("sample")
    r.keys(sample, "[sample]", {"method", "count", "seed"})
    method = sample.get("method", "grid")
    if method not in METHODS:
        raise SweepError(f"{source}: [sample] method {said(method)}: one of {', '.join(METHODS)}")
    count = sample.get("count")
    if method != "grid" and not (isinstance(count, int) and count >= 1):
        raise SweepError(f"{source}: [sample] method {said(method)} needs count = N (1 or more)")
    if method == "grid" and count is not None:
        raise SweepError(f"{source}: [sample] count goes with method 'random' or 'latin'")
    seed = sample.get("seed", 0)
    if not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SweepError(f"{source}: [sample] seed: a whole number from 0")
    b = r.table("budget")
    r.keys(b, "[budget]", {"seconds", "memory"})
    seconds = b.get("seconds")
    if seconds is not None and (not isinstance(seconds, (int, float)) or not seconds > 0):
        raise SweepError(f"{source}: [budget] seconds: a time over 0, per variant")
    memory = b.get("memory")
    if memory is not None:
        try:
            memory = parse_size(str(memory))
        except ValueError as e:
            raise SweepError(f"{source}: [budget] memory: {e}") from None
    spec = SweepSpec(model_text, model_name, axes, tuple(answers), method, count, seed,
                     None if seconds is None else float(seconds), memory, source)  # fmt: skip
    if spec.size > MAX_VARIANTS:
        raise SweepError(f"{source}: the sweep would run {counted(spec.size, 'variant')}, over the "
                         f"limit of {MAX_VARIANTS:,} variants; refused before any work "
                         "(sample it: [sample] method = \"random\" or \"latin\", count = N)")  # fmt: skip
    return spec


def _check_flops(machine: Any, axes: tuple[Axis, ...], answers: list[tuple[int, Answer]],
                 source: str) -> None:  # fmt: skip
    """A replay's flop expression that names what no variant has fails here, once: on
    the base model with each ``set`` axis at its first value (the only axes that can give
    the model a timing it lacks), as each variant's replay would evaluate it."""
    flops = [(n, a) for n, a in answers if a.kind == "replay" and a.options.get("flop")]
    if not flops:
        return
    from parasol_core.expr.refs import EditError
    from parasol_core.replay import ReplayError, ReplayOptions
    from parasol_core.session import Session, SessionError

    session = Session(machine)
    for axis in axes:
        if axis.kind == "set":
            try:
                session.set(axis.target[0], value_text(axis.values[0]))
            except (EditError, SessionError, ValueError):
                return  # a value the variant's row will refuse: the rows say it
    for n, answer in flops:
        try:
            ReplayOptions(flop=answer.options["flop"]).check(session.machine)
        except ReplayError as e:
            raise SweepError(f"{source}: answer {n}: replay: {e}", part=("answer", n),
                             why=f"replay: {e}") from None  # fmt: skip


def _tidy(x: float) -> float:
    """A computed value to 12 significant digits: a range's 1e-06, not 1.0000000000000004e-06."""
    return float(f"{x:.12g}")


class _Reader:
    def __init__(self, doc: dict, source: str, base: Path, files: bool,
                 traces: Callable[[str], Path | None] | None = None) -> None:  # fmt: skip
        self.traces = traces
        self.doc, self.source, self.base, self.files = doc, source, base, files
        self.generates = False  # an axis generates a topology (set once the axes are read)

    def fail(self, where: str, why: str, unreadable: bool = False) -> SweepError:
        """The error of the file at ``where`` (``axis N``, ``answer N``, ``answer N:
        replay``, a key); ``unreadable``: a file it names could not be read."""
        found = PART_RE.match(where)
        part = (found[1], int(found[2])) if found else None
        within = where[found.end() :] if found else ""  # what of the table: "replay"
        cls = SweepUnreadable if unreadable else SweepError
        return cls(f"{self.source}: {where}: {why}", part=part,
                   why=f"{within}: {why}" if within else why)  # fmt: skip

    def keys(self, table: dict, where: str, allowed: set[str]) -> None:
        extra = sorted(set(table) - allowed)
        if extra:
            raise self.fail(
                where, f"unknown key {said(extra[0])} (known: {', '.join(sorted(allowed))})"
            )

    def tables(self, key: str) -> list[dict]:
        found = self.doc.get(key, [])
        if not isinstance(found, list) or not all(isinstance(t, dict) for t in found):
            raise self.fail(key, f"write each as a [[{key}]] table")
        return found

    def table(self, key: str) -> dict:
        found = self.doc.get(key, {})
        if not isinstance(found, dict):
            raise self.fail(key, f"write it as a [{key}] table")
        return found

    def path(self, text: str, where: str) -> Path:
        if not self.files:
            raise self.fail(where, "names a file; a sweep sent here names none (give it inline)")
        return self.base / text

    def read_file(self, text: str, where: str) -> bytes:
        path = self.path(text, where)
        try:
            with open_input(path) as f:
                data = f.read(MAX_DATA_FILE_BYTES + 1)
        except OSError as e:
            raise self.fail(where, f"{said(text)}: cannot read: {e.strerror or e}",
                            unreadable=True) from None  # fmt: skip
        if len(data) > MAX_DATA_FILE_BYTES:
            raise self.fail(where, f"{said(text)}: longer than {MAX_DATA_FILE_BYTES:,} bytes")
        return data

    # ------------------------------------------------------------------ axes

    def axis(self, n: int, t: dict, machine: Any) -> Axis:
        where = f"axis {n}"
        kinds = [k for k in ("set", "scale", "generate") if k in t]
        if len(kinds) != 1:
            raise self.fail(where, "give one of set = \"REF\", scale = \"GROUP\" or "
                            "generate = TOPOLOGY_ID")  # fmt: skip
        kind = kinds[0]
        allowed = {kind, "name", "values", "range", "linear", "log"}
        if kind == "scale":
            allowed.add("processor")
        if kind == "generate":
            allowed |= {"latency", "speed"}
        self.keys(t, where, allowed)
        what = t[kind]
        if kind == "set":
            if not isinstance(what, str):
                raise self.fail(where, 'set = "REF": a reference such as pt(1).iga')
            m = LINKS_RE.fullmatch(what)
            if m:
                try:  # as every whole number is read (5,000 digits: Python's own limit)
                    topo = machine.topology(read_int(m.group(1), "a topology's id"))
                except ValueError as e:
                    raise self.fail(where, f"{shown(what)}: {e}") from None
                if topo is None:
                    raise self.fail(where, f"{what}: there is no hardware topology with id "
                                    f"{m.group(1)}")  # fmt: skip
                kind, target, name = "links", (topo.id, m.group(2)), what.strip()
            else:
                from parasol_core.expr.refs import EditError, slot

                try:
                    slot(machine, what.strip(), create=True, created=[])
                except (EditError, ValueError) as e:
                    raise self.fail(where, str(e)) from None
                target, name = (what.strip(),), what.strip()
            values = self.values(where, t, numbers=False)
        elif kind == "scale":
            if what not in params.GROUPS:
                raise self.fail(where, f"scale {said(what)}: a group: {', '.join(params.GROUPS)}")
            proc = t.get("processor")
            if proc is not None and (not isinstance(proc, int) or machine.processor(proc) is None):
                raise self.fail(where, f"processor {said(proc)}: there is no such processor type")
            target = (what, proc)
            name = f"scale {what}" + ("" if proc is None else f" pr({proc})")
            values = self.values(where, t, numbers=True)
            if any(v <= 0 for v in values):
                raise self.fail(where, "a scale factor is over 0")
        else:
            if not isinstance(what, int) or machine.topology(what) is None:
                raise self.fail(where, f"generate = {said(what)}: the id of a hardware topology of "
                                "the model")  # fmt: skip
            old = machine.topology(what)
            first = old.links[0] if len(old.links) else None
            latency = t.get("latency", first.latency if first is not None else None)
            speed = t.get("speed", first.speed if first is not None else None)
            if latency is None or speed is None:
                raise self.fail(where, "give latency and speed: the topology has no link to "
                                "take them from")  # fmt: skip
            target, name = (what, latency, speed), f"topology {what}"
            values = self.values(where, t, numbers=False)
            from parasol_core.topology.generators import GENERATORS

            for v in values:
                m = GENERATOR_RE.fullmatch(str(v))
                if m is None or m.group(1) not in GENERATORS:
                    raise self.fail(where, f"{said(v)}: a generator and its sizes, such as "
                                    f"\"torus 8 8 8\" (generators: {', '.join(GENERATORS)})")  # fmt: skip
        name = t.get("name", name)
        if not isinstance(name, str) or not name.strip():
            raise self.fail(where, "name: a non-empty text")
        return Axis(name, kind, target, tuple(values))

    def values(self, where: str, t: dict, numbers: bool) -> list:
        given = [k for k in ("values", "range", "linear", "log") if k in t]
        if len(given) != 1:
            raise self.fail(where, "give one of values = [...], range = [start, stop, step], "
                            "linear = [start, stop, count] or log = [start, stop, count]")  # fmt: skip
        key = given[0]
        v = t[key]
        if key == "values":
            if not isinstance(v, list) or not v:
                raise self.fail(where, "values: a list of one or more")
            for x in v:
                ok = isinstance(x, (int, float)) or (not numbers and isinstance(x, str))
                if not ok or isinstance(x, bool) or (isinstance(x, float) and not math.isfinite(x)):
                    raise self.fail(where, f"values: {said(x)} is not a finite number"
                                    + ("" if numbers else " or a text"))  # fmt: skip
            if len(v) > MAX_AXIS_VALUES:
                raise self.fail(
                    where, f"{counted(len(v), 'value')}, over the limit of {MAX_AXIS_VALUES:,}"
                )
            return list(v)
        if (not isinstance(v, list) or len(v) != 3
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                           and math.isfinite(x) for x in v)):  # fmt: skip
            third = "step" if key == "range" else "count"
            raise self.fail(where, f"{key} = [start, stop, {third}]: three numbers")
        start, stop, third = v
        if key == "range":
            if third == 0 or (stop - start) / third < 0:
                raise self.fail(where, f"range: a step of {said(third)} never goes from {said(start)} "
                                f"to {said(stop)}")  # fmt: skip
            n = math.floor((stop - start) / third * (1 + 1e-12) + 1e-9) + 1
            if n > MAX_AXIS_VALUES:
                raise self.fail(
                    where, f"range: {counted(n, 'value')}, over the limit of {MAX_AXIS_VALUES:,}"
                )
            if all(isinstance(x, int) for x in v):
                return [start + i * third for i in range(n)]
            return [_tidy(start + i * third) for i in range(n)]
        if not isinstance(third, int) or third < 1:
            raise self.fail(where, f"{key}: the count is a whole number, 1 or more")
        if third > MAX_AXIS_VALUES:
            raise self.fail(
                where, f"{key}: {counted(third, 'value')}, over the limit of {MAX_AXIS_VALUES:,}"
            )
        if third == 1:
            return [float(start)]
        if key == "linear":
            return [_tidy(start + (stop - start) * i / (third - 1)) for i in range(third)]
        if start <= 0 or stop <= 0:
            raise self.fail(where, "log: start and stop are over 0")
        a, b = math.log10(start), math.log10(stop)
        out = [_tidy(10 ** (a + (b - a) * i / (third - 1))) for i in range(third)]
        out[0], out[-1] = float(start), float(stop)
        return out

    # ------------------------------------------------------------------ answers

    def hostfile(self, hostfile: Any, where: str, machine: Any) -> None:
        """A replay's ``hostfile``, a file (its path resolved) or a list (``[5, "p5",
        "Tremblay", "Tremblay:4"]``), read here by the replay's own reader
        (:func:`parasol_core.replay.run.check_hostfile`, expanding nothing) and checked
        against the base model's hardware topology, so that a wrong entry or line is said
        once, not on every row; with a generate axis (a topology that may have
        processors the base lacks), for its form only. Each variant reads it again."""
        from parasol_core.replay.run import ReplayError, ReplayUnreadable, check_hostfile

        if not isinstance(hostfile, (str, list)) or not hostfile:
            raise self.fail(where, "replay: hostfile is a file or a list of processors "
                            '(numbers, or "N", "pN", a name, each optionally ":RANKS")')  # fmt: skip
        hw = machine.hardware() if machine is not None and not self.generates else None
        try:
            check_hostfile(hostfile, hw)
        except ReplayUnreadable as e:
            raise self.fail(where, f"replay: {e}", unreadable=True) from None
        except ReplayError as e:
            raise self.fail(where, f"replay: {e}") from None

    def virtual(self, virtual: Any, where: str, machine: Any) -> None:
        """A replay's virtual topology: a whole number, and one the base model has unless
        an axis generates a topology (which can take one away)."""
        if isinstance(virtual, bool) or not isinstance(virtual, int) or virtual < 1:
            raise self.fail(where, "replay: virtual = ID, the id of a virtual topology of "
                            f"the model (a whole number from 1), not {said(virtual)}")  # fmt: skip
        if machine is not None and not self.generates and machine.virtual(virtual) is None:
            known = ", ".join(str(v.id) for v in machine.virtuals if v.id is not None)
            raise self.fail(where, f"replay: the model has no virtual topology {virtual} (its "
                            f"virtual topologies: {known or 'none'})")  # fmt: skip

    def answer(self, n: int, t: dict, machine: Any = None) -> list[Answer]:
        where = f"answer {n}"
        kinds = [k for k in KINDS if k in t]
        if len(kinds) != 1:
            raise self.fail(where, f"give one of {', '.join(KINDS)}")
        kind = kinds[0]
        what = t[kind]
        if kind == "eval":
            self.keys(t, where, {"eval", "name", "args"})
            texts = what if isinstance(what, list) else [what]
            if not texts or not all(isinstance(x, str) for x in texts):
                raise self.fail(where, 'eval = "EXPR" or a list of them')
            if "name" in t and len(texts) != 1:
                raise self.fail(where, "name goes with one expression")
            args = t.get("args", {})
            if not isinstance(args, dict) or set(args) - {"bytes", "procs"}:
                raise self.fail(where, "args = {bytes = N, procs = P}")
            for x in texts:
                try:
                    parse_expression(x)
                except ModelSyntaxError as e:
                    raise self.fail(where, f"eval {said(x)}: syntax error: {e.message}") from None
            return [Answer(t.get("name", x.strip()) if len(texts) == 1 else x.strip(), "eval",
                           {"text": x, "args": dict(args)}) for x in texts]  # fmt: skip
        self.keys(t, where, {kind, "name"})
        if not isinstance(what, dict):
            raise self.fail(where, f"{kind} = {{...}}: its options as an inline table")
        opts = dict(what)
        if kind == "block":
            self.keys(opts, f"{where}: block",
                      {"processor", "counts", "cached", "chains", "working_set"})  # fmt: skip
            if not isinstance(opts.get("processor"), int):
                raise self.fail(where, "block: processor = ID")
            counts = opts.get("counts")
            if isinstance(counts, str):
                try:
                    counts = json.loads(self.read_file(counts, where))
                except SweepError:  # the file's own (cannot be read, named here): as said
                    raise
                except (ValueError, UnicodeDecodeError) as e:
                    raise self.fail(where, f"block counts: not JSON: {e}") from None
            if not isinstance(counts, dict) or not counts:
                raise self.fail(where, "block: counts = {mnemonic = count, ...} or a JSON file")
            opts["counts"] = counts
            chains = opts.get("chains", [])  # as `block --chain`: each an OP = N table
            if not isinstance(chains, list) or not all(
                    isinstance(c, dict) and c for c in chains):  # fmt: skip
                raise self.fail(where, "block: chains = [{mnemonic = count, ...}, ...], one "
                                "table a loop-carried dependence chain")  # fmt: skip
            opts["chains"] = chains
            ws = opts.get("working_set")
            if ws is not None and (isinstance(ws, bool) or not isinstance(ws, (int, float))
                                   or not math.isfinite(ws) or ws < 0):  # fmt: skip
                raise self.fail(where, f"block: working_set = BYTES (a number of 0 or more), "
                                f"not {said(ws)}")  # fmt: skip
            name = f"block pr({opts['processor']})"
        elif kind == "simulate":
            self.keys(opts, f"{where}: simulate",
                      {"pattern", "bytes", "dim", "root", "virtual", "sharing", "messages"})  # fmt: skip
            if ("pattern" in opts) == ("messages" in opts):
                raise self.fail(where, "simulate: give pattern = \"NAME\" (with bytes) or "
                                "messages = \"FILE.json\"")  # fmt: skip
            if "pattern" in opts and "bytes" not in opts:
                raise self.fail(where, "simulate: pattern needs bytes = B")
            if "messages" in opts:
                from parasol_core.base.limits import json_float
                from parasol_core.simulate.messages import PhaseError, parse_messages

                text = opts["messages"]
                try:
                    data = json.loads(self.read_file(text, where), parse_float=json_float)
                    parse_messages(data)
                except SweepError:  # the file's own (cannot be read, named here): as said
                    raise
                except (ValueError, UnicodeDecodeError, RecursionError, PhaseError) as e:
                    raise self.fail(where, f"simulate messages {said(text)}: {e}") from None
                opts["messages"] = data
                name = f"simulate {t.get('name') or 'messages'}"
            else:
                name = f"simulate {opts['pattern']}"
        else:
            self.keys(opts, f"{where}: replay", REPLAY_OPTIONS)
            if not isinstance(opts.get("trace"), str):
                raise self.fail(where, 'replay: trace = "FILE" (a SimGrid time-independent '
                                "trace, or its index file)")  # fmt: skip
            if not self.files and self.traces is not None:  # a trace pushed before, by id
                found = self.traces(opts["trace"])
                if found is None:
                    raise self.fail(where, f"replay: there is no trace {said(opts['trace'][:100])} "
                                    "here (push it first: trace.push)")  # fmt: skip
                path = found
            else:
                path = self.path(opts["trace"], where)
            try:  # a name too long for the file system is a reason, not a crash
                if not path.is_file():
                    raise self.fail(where, f"replay: trace {said(opts['trace'])}: no such file")
                opts["trace"] = str(path.resolve())
            except OSError as e:
                raise self.fail(where, f"replay: trace {said(opts['trace'])}: {e.strerror or e}",
                                unreadable=True) from None  # fmt: skip
            hostfile = opts.get("hostfile")
            if isinstance(hostfile, str):
                try:
                    opts["hostfile"] = str(self.path(hostfile, where).resolve())
                except OSError as e:
                    raise self.fail(where, f"replay: hostfile {said(hostfile)}: "
                                    f"{e.strerror or e}", unreadable=True) from None  # fmt: skip
            if hostfile is not None:
                self.hostfile(opts["hostfile"], where, machine)
            if opts.get("virtual") is not None:
                self.virtual(opts["virtual"], where, machine)
            if not isinstance(opts.get("algorithms", {}), dict):
                raise self.fail(where, 'replay: algorithms = {collective = "algorithm", ...}')
            # what no variant can replay with fails here, once, not on every row
            from parasol_core.replay import ReplayError, ReplayOptions

            try:
                ReplayOptions(**{k: v for k, v in opts.items() if k != "trace"}).check()
            except ReplayError as e:
                raise self.fail(where, f"replay: {e}") from None
            name = f"replay {Path(opts['trace']).name}"
        return [Answer(t.get("name", name), kind, opts)]
