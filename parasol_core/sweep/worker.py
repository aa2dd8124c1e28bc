"""One worker of a sweep: the base model loaded once, each variant made by editing it.

A variant is one step of a :class:`~parasol_core.session.Session` on the base model:
the axes' values set through the session's operations (``set``, the group link edit,
``scale_group``, a generated topology by ``plan_generation`` and ``apply_replacement``,
as ``parasol-model set``, ``scale`` and the topology editor do), the engine updated by
them as after any edit, the answers computed, and the step undone. Nothing is copied
and nothing is written: a variant costs its edits, the expressions they reach and its
answers (``benchmarks/bench_sweep.py``).

Each variant runs under the sweep's budget (``[budget]``: the memory of a phase, a
time); what is refused, fails or raises is the row's ``error``, and the worker goes on
with the next variant on the base model as it was.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

from parasol_core.base import budget
from parasol_core.expr.evaluate import EvalError, format_value
from parasol_core.model import Timing
from parasol_core.session import Session
from parasol_core.sweep.spec import Answer, Axis, SweepSpec, value_text
from parasol_core.sweep.variants import Variant
from parasol_core.syntax.loader import loads


@dataclass(frozen=True)
class Row:
    """One variant's result: its index, its axes' values as written, its answers
    (numbers, None where there is none), the seconds it took and its error ("")."""

    index: int
    values: tuple[str, ...]
    answers: tuple[float | int | None, ...]
    seconds: float
    error: str = ""

    def cells(self) -> list[str]:
        """The row as the CSV writes it (``spec.columns()``)."""
        return [str(self.index), *self.values,
                *("" if a is None else format_value(a) for a in self.answers),
                f"{self.seconds:.6g}", self.error]  # fmt: skip


def _error_text(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return " ".join(text.split())  # one line in the CSV


class Worker:
    """The base model of ``spec`` in a session, ready to make and answer variants."""

    def __init__(self, spec: SweepSpec) -> None:
        self.spec = spec
        self.session = Session(loads(spec.model_text, spec.model_name))
        self._answers = [self._prepare(a) for a in spec.answers]
        self._links: dict[int, tuple] = {}  # id(topology) -> (topology, its link ids)
        # generated topologies first: a link edit of the new topology must follow it
        self._order = sorted(range(len(spec.axes)), key=lambda i: spec.axes[i].kind != "generate")

    # ------------------------------------------------------------------ answers

    def _prepare(self, answer: Answer) -> Any:
        """What an answer needs that does not change between variants, made once: a
        phase's messages read, a program's trace parsed."""
        if answer.kind == "simulate" and "messages" in answer.options:
            from parasol_core.simulate.messages import MessageArrays, parse_messages

            return MessageArrays.from_messages(parse_messages(answer.options["messages"]))
        if answer.kind == "block":
            # the measured latencies and memory levels the base model's text records, read
            # once (as `parasol-model block` reads them from the file; edits change
            # timings only)
            from parasol_core.analysis.block_time import BlockNotes

            return BlockNotes.read(self.spec.model_text)
        if answer.kind == "replay":  # parsed once a worker; its program compiled once
            from dataclasses import replace

            from parasol_core.replay import ReplayOptions, TraceError, flop_for, load_trace

            o = answer.options
            options = ReplayOptions(**{k: o[k] for k in o if k != "trace"})
            if options.flop is None:  # the base model's, the same for every variant
                options = replace(options, flop=flop_for(self.session.machine))
            try:
                return load_trace(o["trace"]), options
            except (TraceError, OSError, ValueError) as e:  # each row says it
                return e, options
        return None

    def _answer(self, answer: Answer, prepared: Any) -> float | int:
        machine = self.session.machine
        o = answer.options
        if answer.kind == "eval":
            value = self.session.engine.evaluate_text(o["text"], runtime=True,
                                                      args=o["args"] or None)  # fmt: skip
            if isinstance(value, EvalError):
                raise ValueError(value.message)
            return value
        if answer.kind == "block":
            from parasol_core.analysis.block_time import answer_block

            return answer_block(machine, o["processor"], o["counts"],
                                bool(o.get("cached", False)), working_set=o.get("working_set"),
                                chains=o.get("chains", []), notes=prepared).estimate.mean  # fmt: skip
        if answer.kind == "simulate":
            from parasol_core.simulate.phases import simulate

            kwargs = {k: o[k] for k in ("pattern", "bytes", "dim", "root", "virtual", "sharing")
                      if k in o}  # fmt: skip
            if prepared is not None:
                kwargs["messages"] = prepared
            return simulate(machine, **kwargs).makespan
        if answer.kind == "replay":
            from parasol_core.replay import replay

            trace, options = prepared
            if isinstance(trace, BaseException):
                raise trace
            return replay(machine, trace, options, engine=self.session.engine).makespan
        raise ValueError(f"no answer of kind {answer.kind!r}")

    # ------------------------------------------------------------------ axes

    def _apply(self, axis: Axis, value: Any) -> None:
        s = self.session
        if axis.kind == "set":
            s.set(axis.target[0], value_text(value))
        elif axis.kind == "links":
            topo_id, attr = axis.target
            topo = s.machine.topology(topo_id)
            s.set_links(topo_id, self._link_ids(topo), **{attr: Timing(float(value), None)})
        elif axis.kind == "scale":
            group, proc = axis.target
            s.scale_group(group, float(value), proc)
        else:
            topo_id, latency, speed = axis.target
            kind, *sizes = str(value).split()
            plan = s.plan_generation(topo_id, kind, [int(x) for x in sizes], latency, speed)
            s.apply_replacement(plan)

    def _link_ids(self, topo: Any) -> tuple:
        """Every link id of ``topo``, as one tuple kept for it: the session picks the
        links of the same tuple once, not at every variant."""
        kept = self._links.get(id(topo))
        if kept is None or kept[0] is not topo:
            ids = topo.links.ids
            if (ids < 0).any():  # an id that is not a plain integer: read from its view
                kept = (topo, tuple(link.id for link in topo.links))
            else:
                kept = (topo, tuple(ids.tolist()))
            self._links[id(topo)] = kept
        return kept[1]

    # ------------------------------------------------------------------ one variant

    def run(self, variant: Variant) -> Row:
        spec = self.spec
        start = time.perf_counter()
        values = tuple(a.text(p) for a, p in zip(spec.axes, variant.positions, strict=True))
        answers: list[float | int | None] = [None] * len(spec.answers)
        errors: list[str] = []
        s = self.session
        with contextlib.ExitStack() as stack:
            if spec.memory is not None:
                stack.enter_context(budget.limits(memory=spec.memory, source="[budget] memory"))
            seconds, outer = spec.seconds, budget.remaining()
            if seconds is not None:  # an outer deadline (the estimator's request) first
                stack.enter_context(budget.deadline(seconds if outer is None
                                                    else min(seconds, outer)))  # fmt: skip
            edited = False
            try:
                if spec.axes:
                    with s.group("variant"):
                        for i in self._order:
                            axis = spec.axes[i]
                            try:
                                self._apply(axis, axis.values[variant.positions[i]])
                            except Exception as e:
                                raise _AxisFailed(f"{axis.name} = {values[i]}: "
                                                  f"{_error_text(e)}") from None  # fmt: skip
                    edited = s.can_undo and s.history.undo_label == "variant"
                for k, (answer, prepared) in enumerate(zip(spec.answers, self._answers,
                                                           strict=True)):  # fmt: skip
                    try:
                        answers[k] = self._answer(answer, prepared)
                    except Exception as e:  # a row with its error, never a lost sweep
                        errors.append(f"{answer.name}: {_error_text(e)}")
            except _AxisFailed as e:
                errors.append(str(e))
            finally:
                if edited:
                    s.undo()
        return Row(variant.index, values, tuple(answers), time.perf_counter() - start,
                   "; ".join(errors))  # fmt: skip

    def variant_text(self, variant: Variant) -> str:
        """The model text of ``variant`` (the base model's text where it is not edited,
        as a save writes it), the base model left as it was. SweepError-free: an edit
        that fails raises it (EditError, SessionError, ValueError)."""
        s = self.session
        with s.group("variant"):
            for i in self._order:
                axis = self.spec.axes[i]
                self._apply(axis, axis.values[variant.positions[i]])
        try:
            return s.text()
        finally:
            if s.can_undo and s.history.undo_label == "variant":
                s.undo()

    def run_many(self, batch: list[Variant]) -> list[Row]:
        return [self.run(v) for v in batch]


class _AxisFailed(Exception):
    pass
