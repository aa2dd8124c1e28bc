"""The dependency engine: every expression of a model, evaluated, and kept up to date.

An :class:`Engine` is built once for a model. It resolves every reference of every
expression once, compiles each expression to a closure
(:func:`parasol_core.expr.evaluate.compile_expression`), files the stored values the
expressions read under their keys, orders the expressions so that each comes after the
ones it uses, and evaluates them all. After that:

* ``update(["pt(1).iga"])`` re-reads the changed stored values and re-evaluates only the
  expressions whose inputs changed, in dependency order, stopping where a value comes
  out the same; it returns the expressions whose values changed, so a window redraws
  just those;
* ``dependencies(key)`` and ``dependents(key)`` answer "what does this use" and "what
  uses this", directly or transitively, for stored values and expressions alike;
* ``cycles()`` lists the expressions that reference each other in a circle (each of
  them, and everything that uses one, evaluates to an error naming the cycle).

Keys. An expression is keyed as it is referenced: ``po(1).ia_spd``, ``mc.maxtotalspd``,
``pv.send``, ``ex.sync``, ``mp.receive``. A stored value is keyed by
:func:`parasol_core.expr.refs.canonical_key`: the reference's text with timing aliases
made canonical (``pt(1).sqrti`` is ``pt(1).sqrtr``), and every ``connect(K)`` of a link
filed under the link's whole list ``tl(T)(L).connect``. The run-time arguments are
``ar.bytes`` and ``ar.procs``.

Edits that change what a reference points at (a processor's, topology's, link's or
virtual topology's ``id``, or any edit of an expression) rebuild the graph; ``update``
does that by itself when it is given such a key. Adding or removing sections needs an
explicit ``rebuild()``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from parasol_core.base.diagnostics import ERROR, Diagnostic, ModelSyntaxError
from parasol_core.base.source import LineIndex
from parasol_core.expr.evaluate import (
    INT_MAX,
    INT_MIN,
    Compiled,
    EvalError,
    Value,
    compile_expression,
    same_value,
)
from parasol_core.expr.refs import (
    ARGUMENTS,
    Slot,
    Target,
    UnresolvedReference,
    canonical_key,
    expression_key,
    reference_key,
    resolve,
)
from parasol_core.model import EXPRESSION_SECTIONS, RUNTIME_SECTIONS, Block, Machine
from parasol_core.model.tree import Expression, Reference
from parasol_core.syntax.expression import parse_expression

__all__ = [
    "DEFAULT_BYTES",
    "Engine",
    "ExpressionEntry",
    "expression_entries",
    "key_for_slot",
    "reference_cycles",
]

DEFAULT_BYTES = 1024
ARG_KEYS = tuple(f"ar.{name}" for name in ARGUMENTS)
_EXPRESSION_PREFIXES = ("po(", "mc.", "pv.", "ex.", "mp.")
_ID_OWNERS = ("pr(", "to(", "tl(", "vt(")
# Reference text -> canonical key: parsing the text is what costs most in an update.
_KEY_CACHE: dict[str, str] = {}


@dataclass(frozen=True)
class ExpressionEntry:
    """An expression in a model and where it sits.

    ``location_key`` is the key :meth:`Block.location` takes (``combinations.ia_spd``,
    ``entries.send``); ``runtime`` is true in the PVM, Express and MPI sections, where
    ``ar.bytes`` and ``ar.procs`` may be used; ``target`` is a diagnostic's target.
    """

    key: str
    expr: Expression
    owner: Block
    location_key: str
    runtime: bool
    target: tuple


def expression_entries(machine: Machine) -> list[ExpressionEntry]:
    """Every expression of the model, in file order, keyed as references name them.

    A processor without an id, or with the id of an earlier one, cannot be referenced;
    its expressions are left out (the validator reports the ids).
    """
    out: list[ExpressionEntry] = []
    seen: set[str] = set()

    def add(
        key: str, expr: Expression, owner: Block, loc: str, runtime: bool, target: tuple
    ) -> None:
        if key not in seen:
            seen.add(key)
            out.append(ExpressionEntry(key, expr, owner, loc, runtime, target))

    for proc in machine.processors:
        if proc.id is None:
            continue
        for name, expr in proc.combinations.items():
            key = expression_key(f"po({proc.id})", name)
            add(key, expr, proc, f"combinations.{name}", False, ("processor", proc.id))
    for cls in EXPRESSION_SECTIONS:
        section = getattr(machine, cls.ATTR)
        if section is None:
            continue
        runtime = cls in RUNTIME_SECTIONS
        for name, expr in section.entries.items():
            key = expression_key(cls.PREFIX, name)
            add(key, expr, section, f"entries.{name}", runtime, (section.KEYWORD,))
    return out


def key_for_slot(slot: Slot) -> str:
    """The engine key of the value an edit changed (``slot.label`` is the reference as
    typed, e.g. ``pt(1).sqrti``; the key is canonical, ``pt(1).sqrtr``)."""
    if not slot.label:
        raise ValueError("the slot has no reference label to key it by")
    try:
        return canonical_key(slot.label)
    except UnresolvedReference as e:
        raise ValueError(str(e)) from None


def _cycle_text(members: list[str]) -> str:
    return " -> ".join([*members, members[0]])


@dataclass
class _Unresolved:
    entry: ExpressionEntry
    ref: Reference
    message: str


class Engine:
    """Every expression of ``machine``, evaluated and kept current (see the module doc).

    ``args`` sets the run-time arguments the PVM, Express and MPI expressions are
    evaluated with (``{"bytes": 1024, "procs": 64}``); a missing one takes its default:
    1024 bytes, and the processor count of the hardware topology.
    """

    def __init__(self, machine: Machine, args: Mapping[str, int | float] | None = None) -> None:
        self.machine = machine
        self._args = _check_args(args)
        self.evaluations = 0
        """How many expression evaluations the engine has done (for tests and benchmarks)."""
        self.rebuild()

    # ------------------------------------------------------------------ building

    def rebuild(self) -> None:
        """Resolve, compile and evaluate everything again (after a structural edit)."""
        self._entries: dict[str, ExpressionEntry] = {
            e.key: e for e in expression_entries(self.machine)
        }
        self._env: dict[str, Value] = {}
        # stored key -> {env key: function re-reading that value from the model}
        self._readers: dict[str, dict[str, Callable[[], Value]]] = {}
        self._users: dict[str, set[str]] = {}  # env key -> expressions reading it directly
        self._deps: dict[str, set[str]] = {}  # key -> keys it uses directly
        self._rdeps: dict[str, set[str]] = {}  # key -> keys using it directly
        self._unresolved: list[_Unresolved] = []
        self._fns: dict[str, Compiled] = {}
        self._affected_cache: dict[str, tuple[int, ...]] = {}
        self._bind_args()
        for key, entry in self._entries.items():
            self._deps.setdefault(key, set())
            self._fns[key] = compile_expression(
                entry.expr.tree, lambda ref, entry=entry: self._bind(entry, ref)
            )
        self._order, self._cycles = self._sort()
        self._index = {key: i for i, key in enumerate(self._order)}
        for members in self._cycles:
            message = f"a cycle of references: {_cycle_text(members)}"
            for key in members:
                self._env[key] = EvalError(message, source=key)
        for key in self._order:
            self._env[key] = self._evaluate(key, self._env)

    def _bind_args(self) -> None:
        hw = self.machine.hardware()
        for key, name in zip(ARG_KEYS, ARGUMENTS, strict=True):
            self._deps[key] = set()
            if name in self._args:
                self._env[key] = self._args[name]
            elif name == "bytes":
                self._env[key] = DEFAULT_BYTES
            else:  # the hardware topology's processor count, kept current
                self._env[key] = self._default_procs()
                if hw is not None and hw.id is not None:
                    stored = f"to({hw.id}).processors"
                    self._readers.setdefault(stored, {})[key] = self._default_procs
                    self._link(key, stored)

    def _default_procs(self) -> Value:
        hw = self.machine.hardware()
        if hw is None or hw.processor_count is None:
            return EvalError("ar.procs has no default: the model gives no hardware topology "
                             "processor count")  # fmt: skip
        return hw.processor_count

    def _link(self, user: str, used: str) -> None:
        self._deps.setdefault(user, set()).add(used)
        self._rdeps.setdefault(used, set()).add(user)

    def _bind(self, entry: ExpressionEntry, ref: Reference) -> str:
        """The resolver for compiling ``entry``: record the dependency, return the env key."""
        try:
            target = resolve(self.machine, ref, entry.runtime)
        except UnresolvedReference as e:
            self._unresolved.append(_Unresolved(entry, ref, str(e)))
            if ref.prefix in ("po", "mc", "pv", "ex", "mp", "ar"):
                raise  # an expression or argument that is not there: rebuild when it is
            # A stored value that is not there evaluates to an error until an edit
            # supplies it, so file it like any other.
            env_key = reference_key(ref)
            self._env.setdefault(env_key, EvalError(str(e)))
            self._file_stored(entry, ref, env_key)
            return env_key
        if target.kind == "value":
            self._env.setdefault(target.key, _stored_value(target))
            self._file_stored(entry, ref, target.key)
        else:  # an expression or an argument
            self._link(entry.key, target.key)
            self._users.setdefault(target.key, set()).add(entry.key)
        return target.key

    def _file_stored(self, entry: ExpressionEntry, ref: Reference, env_key: str) -> None:
        stored = canonical_key(ref)
        readers = self._readers.setdefault(stored, {})
        if env_key not in readers:
            readers[env_key] = lambda: self._fetch(ref)
        self._users.setdefault(env_key, set()).add(entry.key)
        self._link(entry.key, stored)
        self._deps.setdefault(stored, set())

    def _fetch(self, ref: Reference) -> Value:
        try:
            return _stored_value(resolve(self.machine, ref, True))
        except UnresolvedReference as e:
            return EvalError(str(e))

    def _sort(self) -> tuple[list[str], list[list[str]]]:
        """Expressions in evaluation order (each after what it uses), and the cycles.

        Tarjan's algorithm, iteratively: it emits each strongly connected component
        after every component it depends on.
        """
        graph = {k: sorted(d for d in self._deps[k] if d in self._entries) for k in self._entries}
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        order: list[str] = []
        cycles: list[list[str]] = []
        counter = 0
        for root in graph:
            if root in index:
                continue
            work = [(root, 0)]
            while work:
                node, i = work.pop()
                if i == 0:
                    index[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack.add(node)
                recurse = False
                succ = graph[node]
                while i < len(succ):
                    nxt = succ[i]
                    i += 1
                    if nxt not in index:
                        work.append((node, i))
                        work.append((nxt, 0))
                        recurse = True
                        break
                    if nxt in on_stack:
                        low[node] = min(low[node], index[nxt])
                if recurse:
                    continue
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        cycles.append(_cycle_order(component, graph))
                    else:
                        order.append(node)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
        return order, cycles

    def _evaluate(self, key: str, env: Mapping[str, Value]) -> Value:
        self.evaluations += 1
        value = self._fns[key](env)
        if type(value) is EvalError and value.source is None:
            value = replace(value, source=key)
        return value

    # ------------------------------------------------------------------ values

    @property
    def args(self) -> dict[str, int | float]:
        """The run-time arguments in use, defaults included."""
        return {name: self._env[key] for key, name in zip(ARG_KEYS, ARGUMENTS, strict=True)}

    def keys(self) -> list[str]:
        """Every expression key, in file order."""
        return list(self._entries)

    def entry(self, key: str) -> ExpressionEntry | None:
        return self._entries.get(key)

    def values(self) -> dict[str, Value]:
        """Every expression's value, in file order."""
        env = self._env
        return {key: env[key] for key in self._entries}

    def value(self, key: str) -> Value:
        """The value of an expression or of any reference (``pt(1).iga``, ``ar.bytes``)."""
        value = self._env.get(key)
        if value is not None:
            return value
        return self.evaluate_text(key, runtime=True)

    def stored_keys(self) -> Iterable[str]:
        """The keys of the stored values that expressions read (``tl(1)(5).speed``)."""
        return self._readers.keys()

    def update(self, changed: Iterable[str | Slot] | str | Slot) -> dict[str, Value]:
        """Take note of edited stored values; returns the expressions whose value changed.

        ``changed`` holds keys (any spelling a reference may have) or the
        :class:`~parasol_core.expr.refs.Slot` objects the edits went through. A key that
        changes what references point at, or names an expression, rebuilds the graph.
        """
        if isinstance(changed, (str, Slot)):
            changed = [changed]
        keys = []
        for item in changed:
            if isinstance(item, Slot):
                item = item.label
            key = _KEY_CACHE.get(item)
            if key is None:
                try:
                    key = canonical_key(item)
                except UnresolvedReference as e:
                    raise ValueError(str(e)) from None
                if len(_KEY_CACHE) < 100_000:
                    _KEY_CACHE[item] = key
            keys.append(key)
        if any(_is_structural(k) for k in keys):
            return self._rebuild_and_compare()
        env = self._env
        changed_env: list[str] = []
        for key in keys:
            for env_key, read in self._readers.get(key, {}).items():
                new = read()
                if not same_value(env.get(env_key), new):
                    env[env_key] = new
                    changed_env.append(env_key)
        return self._propagate(changed_env)

    def set_args(self, args: Mapping[str, int | float] | None) -> dict[str, Value]:
        """Change the run-time arguments; returns the expressions whose value changed."""
        self._args = _check_args(args)
        before = {key: self._env[key] for key in ARG_KEYS}
        for readers in self._readers.values():
            readers.pop("ar.procs", None)
        for key in ARG_KEYS:
            for used in self._deps.get(key, ()):
                self._rdeps.get(used, set()).discard(key)
        self._bind_args()
        return self._propagate(
            [key for key in ARG_KEYS if not same_value(before[key], self._env[key])]
        )

    def reevaluate_all(self, reread: bool = True) -> dict[str, Value]:
        """Re-read every stored value (unless not ``reread``) and re-evaluate every
        expression, without using the graph: the baseline ``update`` is measured against.
        Returns the expressions whose value changed."""
        env = self._env
        if reread:
            for readers in self._readers.values():
                for env_key, read in readers.items():
                    env[env_key] = read()
        out = {}
        for key in self._order:
            new = self._evaluate(key, env)
            if not same_value(env[key], new):
                out[key] = new
            env[key] = new
        return out

    def _affected(self, env_key: str) -> tuple[int, ...]:
        """Positions in evaluation order of every expression that uses ``env_key``,
        directly or through other expressions (worked out once, then cached)."""
        cached = self._affected_cache.get(env_key)
        if cached is None:
            users = self._users
            seen: set[str] = set()
            todo = list(users.get(env_key, ()))
            while todo:
                key = todo.pop()
                if key not in seen:
                    seen.add(key)
                    todo.extend(users.get(key, ()))
            # cycle members are left out: their value is the cycle error, whatever changes
            cached = tuple(sorted(self._index[k] for k in seen if k in self._index))
            self._affected_cache[env_key] = cached
        return cached

    def _propagate(self, changed: list[str]) -> dict[str, Value]:
        """Re-evaluate, in order, what uses the environment keys in ``changed``."""
        if not changed:
            return {}
        if len(changed) == 1:
            positions: Iterable[int] = self._affected(changed[0])
        else:
            positions = sorted(set().union(*(self._affected(k) for k in changed)))
        order, fns, env = self._order, self._fns, self._env
        out: dict[str, Value] = {}
        count = 0
        for i in positions:
            key = order[i]
            count += 1
            new = fns[key](env)
            if type(new) is EvalError and new.source is None:
                new = replace(new, source=key)
            old = env[key]
            if type(old) is not type(new) or old != new:
                env[key] = new
                out[key] = new
        self.evaluations += count
        return out

    def rebuild_and_compare(self) -> dict[str, Value]:
        """Rebuild the graph (after a structural edit); returns the expressions whose
        value changed, appeared or moved."""
        return self._rebuild_and_compare()

    def _rebuild_and_compare(self) -> dict[str, Value]:
        before = self.values()
        self.rebuild()
        return {
            key: value
            for key, value in self.values().items()
            if key not in before or not same_value(before[key], value)
        }

    # ------------------------------------------------------------------ ad hoc

    def evaluate_text(
        self,
        text: str,
        runtime: bool = False,
        args: Mapping[str, int | float] | None = None,
    ) -> Value:
        """Evaluate an expression typed by a user, against the model's current values.

        ``runtime`` allows ``ar.bytes`` and ``ar.procs`` in it; ``args`` overrides the
        engine's run-time arguments for this evaluation (run-time expressions it uses
        are evaluated with them too). Syntax errors come back as an EvalError, with
        positions in ``text``.
        """
        try:
            expr = parse_expression(text)
        except ModelSyntaxError as e:
            return EvalError(f"syntax error: {e.message}", e.column - 1, e.column)
        env: dict[str, Value] = self._env_with(args)
        extra: dict[str, Value] = {}

        def resolver(ref: Reference) -> str:
            target = resolve(self.machine, ref, runtime)
            if target.kind == "value" and target.key not in env:
                extra[target.key] = _stored_value(target)
            return target.key

        fn = compile_expression(expr, resolver)
        if extra:
            env = {**env, **extra}
        return fn(env)  # an error's positions are in ``text`` as typed

    def _env_with(self, args: Mapping[str, int | float] | None) -> dict[str, Value]:
        """The environment, or a copy re-evaluated under other run-time arguments."""
        if not args:
            return self._env
        args = _check_args(args)
        changed = [f"ar.{n}" for n, v in args.items() if not same_value(self._env[f"ar.{n}"], v)]
        if not changed:
            return self._env
        env = dict(self._env)
        for name, value in args.items():
            env[f"ar.{name}"] = value
        affected = set()
        for key in changed:
            affected.update(self._closure(key, self._rdeps))
        for key in self._order:
            if key in affected:
                env[key] = self._evaluate(key, env)
        return env

    def sweep(self, key: str, points: Iterable[Mapping[str, int | float]]) -> list[Value]:
        """The value of expression ``key`` under each set of run-time arguments (a plot
        of a cost against message size or process count). Nothing is parsed or
        compiled again: per point, only the expressions between the arguments and
        ``key`` are re-evaluated, on a private copy of the environment."""
        key = self._canonical(key)
        if key not in self._index:  # a cycle member or no expression: the same everywhere
            value = self.value(key)
            return [value for _ in points]
        affected: set[str] = set()
        for arg in ARG_KEYS:
            affected.update(self._closure(arg, self._rdeps))
        needed = ({key} | self._closure(key, self._deps)) & affected
        chain = [(k, self._fns[k]) for k in sorted(needed, key=self._index.__getitem__)]
        env = dict(self._env)
        base = {k: env[k] for k in ARG_KEYS}
        out: list[Value] = []
        for point in points:
            env.update(base)
            for name, value in _check_args(point).items():
                env[f"ar.{name}"] = value
            for k, fn in chain:
                env[k] = fn(env)
            self.evaluations += len(chain)
            out.append(env[key])
        return out

    # ------------------------------------------------------------------ the graph

    def dependencies(self, key: str, transitive: bool = True) -> list[str]:
        """What ``key`` uses: expressions, stored values and run-time arguments, sorted."""
        return sorted(self._walk(key, self._deps, transitive))

    def dependents(self, key: str, transitive: bool = True) -> list[str]:
        """What uses ``key`` (a stored value, an argument or an expression), sorted."""
        return sorted(self._walk(key, self._rdeps, transitive))

    def knows(self, key: str) -> bool:
        """Whether ``key`` is an expression or a value some expression uses."""
        return self._canonical(key) in self._deps

    def _walk(self, key: str, graph: dict[str, set[str]], transitive: bool) -> set[str]:
        key = self._canonical(key)
        if not transitive:
            return set(graph.get(key, ()))
        return self._closure(key, graph)

    @staticmethod
    def _closure(key: str, graph: dict[str, set[str]]) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(key, ()))
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(graph.get(k, ()))
        seen.discard(key)
        return seen

    def _canonical(self, key: str) -> str:
        if key in self._deps:
            return key
        try:
            return canonical_key(key)
        except UnresolvedReference:
            return key

    def order(self) -> list[str]:
        """The expressions in evaluation order (cycle members left out)."""
        return list(self._order)

    def cycles(self) -> list[list[str]]:
        """Each cycle of references, its members in the order they reference each other
        where that is one circle (otherwise sorted)."""
        return [list(c) for c in self._cycles]

    def cycle_entries(self) -> list[list[ExpressionEntry]]:
        """Each cycle of references, as the entries of its members."""
        return [[self._entries[key] for key in members] for members in self._cycles]

    def diagnostics(self) -> list[Diagnostic]:
        """Unresolved references (at their line and column) and cycles (one error at each
        member, naming every member)."""
        m = self.machine
        file = m.src.path if m.src is not None else None
        lines = LineIndex(m.src.text) if m.src is not None and m.src.text else None
        out = []
        for u in self._unresolved:
            line, col = _position(u.entry, u.ref.start, lines)
            out.append(Diagnostic(ERROR, u.message, line, col, file, u.entry.target))
        found = []
        for members in self._cycles:
            text = _cycle_text(members)
            for key in members:
                entry = self._entries[key]
                line, col = _position(entry, None, lines)
                message = f"{key} is part of a cycle of references: {text}"
                found.append(Diagnostic(ERROR, message, line, col, file, entry.target))
        return out + sorted(found, key=lambda d: (d.line or 0, d.column or 0))


def reference_cycles(machine: Machine) -> list[list[ExpressionEntry]]:
    """The cycles of references among the model's expressions, each as its members."""
    return Engine(machine).cycle_entries()


# ---------------------------------------------------------------------- helpers


def _check_args(args: Mapping[str, int | float] | None) -> dict[str, int | float]:
    out: dict[str, int | float] = {}
    for name, value in (args or {}).items():
        if name not in ARGUMENTS:
            raise ValueError(f"unknown run-time argument '{name}' (known: {', '.join(ARGUMENTS)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"run-time argument {name} must be a number, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"run-time argument {name} must be finite, not {value!r}")
        if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
            raise ValueError(f"run-time argument {name} is outside the 64-bit range")
        out[name] = value
    return out


def _stored_value(target: Target) -> Value:
    value: Any = target.value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            return EvalError(f"integer overflow: '{target.key}' is outside the 64-bit range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return EvalError(f"'{target.key}' is not a finite number")
        return value
    return EvalError(f"'{target.key}' is not a number")


def _is_structural(key: str) -> bool:
    return key.startswith(_EXPRESSION_PREFIXES) or (
        key.endswith(".id") and key.startswith(_ID_OWNERS)
    )


def _position(
    entry: ExpressionEntry, offset: int | None, lines: LineIndex | None
) -> tuple[int | None, int | None]:
    if offset is not None and lines is not None and entry.expr.offset and entry.owner.src:
        return lines.position(offset)
    loc = entry.owner.location(entry.location_key)
    return loc if loc else (None, None)


def _cycle_order(component: list[str], graph: dict[str, list[str]]) -> list[str]:
    """The members of a strongly connected component as one circle when they form one
    (a -> b -> c -> a, starting from the smallest key), else sorted."""
    members = set(component)
    start = min(component)
    path = [start]
    seen = {start}
    node = start
    while True:
        nxt = [n for n in graph[node] if n in members]
        if len(nxt) != 1:
            break
        node = nxt[0]
        if node == start:
            if len(path) == len(members):
                return path
            break
        if node in seen:
            break
        seen.add(node)
        path.append(node)
    return sorted(component)
