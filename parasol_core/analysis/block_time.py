"""The time of a basic block of Fortran code on one processor type (SAD level 1).

A basic block is summarised by how often it executes each timed instruction. Its
time is the sum of count x timing over the instructions (report 3.1.9, and the
validation in 4.5.1), divided by the processor's small loop speedup when the block
fits in the instruction cache. Its standard deviation follows Saavedra-Barrera (1988,
section 6.1): the measurements are independent, so the variance is
``sum(count**2 * sd**2)``; a timing without a standard deviation adds nothing. The
speedup divides the standard deviation as it divides the mean.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from parasol_core.base import params
from parasol_core.base.numeric import ValueRangeError, read_float, read_int
from parasol_core.base.words import counted
from parasol_core.model import Machine

__all__ = [
    "BlockAnswer",
    "BlockEstimate",
    "BlockNotes",
    "CHAIN_STARTS",
    "MAX_WORKING_SET",
    "answer_block",
    "chain_overlap",
    "chain_runs",
    "checked_chains",
    "parse_counts",
    "MemoryLevel",
    "read_latencies",
    "estimate_block",
    "level_for",
    "interval",
    "read_chain_windows",
    "read_memory_levels",
    "read_validation_ratios",
]


MAX_WORKING_SET = 2**62
"""The largest working set a block's estimate takes (bytes): past any memory."""

CHAIN_STARTS = "starts"
"""The key of a chain's counts that says how many times the chain begins afresh (a dot
product's ``s = 0`` before each of its runs): ``{"dla": 262144, "starts": 4096}`` is a
chain of 4,096 runs of 64 dependent additions. Without it a chain is one run."""


@dataclass(frozen=True)
class BlockEstimate:
    """Seconds: the expected time of the block and its standard deviation."""

    mean: float
    sd: float
    level: str | None = None  # the memory level charged for array references
    array_extra: float = 0.0  # seconds added per array reference at that level
    # With chains: the two bounds (seconds, after the small loop speedup), which one is
    # the estimate ("throughput" or "chain"), and where the chain's latencies came from
    # ("latency": the model's measured latencies; "timing": its timings, which a model
    # without measured latencies holds as its only figure).
    throughput_bound: float | None = None
    chain_bound: float | None = None
    bound: str = "throughput"
    chain_source: str | None = None
    # the runs of the longest chain the core runs at once (chain_overlap; 1: none)
    chain_at_once: float = 1.0


@dataclass(frozen=True)
class MemoryLevel:
    """A cache level or memory as a measured model's annotation gives it: its size in
    bytes (None: memory, beyond the caches) and seconds per array reference with the
    working set in it (None: not measured)."""

    name: str
    size: int | None
    seconds: float | None


_LEVEL = re.compile(
    r"^#\s*memory level (?P<name>\S+): (?:(?P<size>[0-9]{1,18}) bytes|beyond the caches), "
    r"(?P<t>[0-9][0-9.eE+-]*|not measured)(?: s)? per array reference",
    re.M,
)
ARRAY_OPS = tuple(f"arr{k}" for k in range(1, 8))
_VALIDATION = re.compile(
    r"^#\s*validation: predicted / measured on (?P<n>[0-9]{1,9}) programs? the measurement never "
    r"saw: every ratio (?P<lo>[0-9][0-9.eE+-]*) \.\. (?P<hi>[0-9][0-9.eE+-]*)",
    re.M,
)


def read_validation_ratios(text: str) -> tuple[float, float] | None:
    """The least and greatest ratio predicted / measured that ``measure --validate``
    found on programs the measurement never saw, as a measured model's comment gives
    them (``# validation: predicted / measured on 5 programs the measurement never saw:
    every ratio 0.652 .. 1.74, ...``); None where the file has no such line."""
    found = list(_VALIDATION.finditer(text))
    if not found:
        return None
    m = found[-1]  # the last one: a model validated again says so below the first
    try:
        lo, hi = float(m["lo"]), float(m["hi"])
    except ValueError:
        return None
    return (lo, hi) if 0 < lo <= hi and math.isfinite(hi) else None


def interval(estimate: BlockEstimate, ratios: tuple[float, float] | None,
             sds: float = 2.0) -> tuple[float, float]:  # fmt: skip
    """Where the block's time lies: the estimate +- ``sds`` standard deviations of the
    measured timings, divided by the greatest and the least ratio predicted / measured
    of the validation (a prediction that was up to ``hi`` times the measured time means
    the time may be the prediction / ``hi``)."""
    lo = max(estimate.mean - sds * estimate.sd, 0.0)
    hi = estimate.mean + sds * estimate.sd
    if ratios is not None:
        lo, hi = lo / ratios[1], hi / ratios[0]
    return lo, hi


def read_memory_levels(text: str) -> list[MemoryLevel]:
    """The memory levels a measured model's file names in its comments (lines
    ``# memory level L2: 2097152 bytes, 6.3e-09 s per array reference ...`` and
    ``# memory level memory: beyond the caches, not measured per array reference``, written by
    ``parasol-model measure``; docs/measure.md), in file order; [] for none."""
    out = []
    for m in _LEVEL.finditer(text):
        size = None if m["size"] is None else int(m["size"])
        try:
            t = None if m["t"] == "not measured" else float(m["t"])
        except ValueError:
            t = None
        out.append(MemoryLevel(m["name"], size, t))
    return out


_LATENCY_LINE = re.compile(
    r"^#\s*latency of a dependent operation, processor (?P<p>[0-9]+):(?P<rest>[^\n\r]*)", re.M
)
_LATENCY_ITEM = re.compile(
    r"(?P<op>[a-z][a-z0-9]*) = (?P<t>[0-9][0-9.eE+-]*)(?: \+- (?P<sd>[0-9][0-9.eE+-]*))?"
)


def read_latencies(text: str, processor_id: int) -> dict[str, tuple[float, float]]:
    """The measured latencies (seconds, and their standard deviation) of processor
    ``processor_id`` that a measured model's header gives, in lines
    ``# latency of a dependent operation, processor 1: dla = 5.9e-10 +- 1e-12, ...``
    (written by ``parasol-model measure``; docs/measure.md, "Chains"); {} for none.
    Numbers are read as ASCII decimals; an item that is not one is skipped."""
    return _all_latencies(text).get(str(processor_id), {})


def _all_latencies(text: str) -> dict[str, dict[str, tuple[float, float]]]:
    """:func:`read_latencies` of every processor the text names (by its id as written),
    in one pass over the text."""
    every: dict[str, dict[str, tuple[float, float]]] = {}
    for line in _LATENCY_LINE.finditer(text):
        out = every.setdefault(line["p"], {})
        for m in _LATENCY_ITEM.finditer(line["rest"]):
            try:
                t = read_float(m["t"])
                sd = read_float(m["sd"]) if m["sd"] else 0.0
            except ValueRangeError:
                continue
            if math.isfinite(t) and t >= 0 and math.isfinite(sd) and sd >= 0:
                out[m["op"]] = (t, sd)
    return every


_WINDOW_LINE = re.compile(
    r"^#\s*chain window, processor (?P<p>[0-9]+): (?P<a>[0-9][0-9.eE+-]*) iterations ahead", re.M
)


def read_chain_windows(text: str) -> dict[str, float]:
    """The window each processor's core runs ahead of a restarted chain's end (loop
    iterations), by processor id as written, as a measured model's header gives it
    (``# chain window, processor 1: 35.2 iterations ahead ...``, written by ``parasol-model
    measure``; docs/measure.md, "Restarted chains"); {} for none."""
    out: dict[str, float] = {}
    for m in _WINDOW_LINE.finditer(text):
        try:
            a = read_float(m["a"])
        except ValueRangeError:
            continue
        if math.isfinite(a) and a >= 0:
            out[m["p"]] = a
    return out


def chain_runs(chain: Mapping[str, float]) -> tuple[float, float]:
    """A chain's iterations (its most frequent operation's count) and its
    :data:`CHAIN_STARTS` (0: not given), as :func:`chain_overlap` takes them."""
    ops = [n for op, n in chain.items() if op != CHAIN_STARTS]
    return max(ops, default=0.0), chain.get(CHAIN_STARTS, 0)


def chain_overlap(iterations: float, starts: float, window: float | None) -> float:
    """How many runs of a restarted chain the core runs at once: ``1 + window / L``, L
    the run's length (``iterations / starts``; docs/measure.md, "Restarted chains").
    While one run's chain completes, the core fetches ``window`` iterations ahead, into
    the next runs, whose chains are independent of it. 1 for a chain run once, without
    a window, or of no iterations."""
    if not window or not starts or not iterations:
        return 1.0
    return 1.0 + window / (iterations / starts)


def level_for(levels: Sequence[MemoryLevel], working_set: float) -> MemoryLevel:
    """The first measured level a working set of ``working_set`` bytes fits in; past
    the caches, memory if measured, else the last measured level. ValueError without a
    measured level or for a negative size."""
    if not (working_set >= 0 and math.isfinite(working_set)):
        raise ValueError(f"the working set must be a finite number of bytes >= 0, "
                         f"not {_shown(working_set)}")  # fmt: skip
    measured = [lv for lv in levels if lv.seconds is not None]
    if not measured:
        raise ValueError("the model names no measured memory level (a model written by "
                         "`parasol-model measure` does)")  # fmt: skip
    for lv in measured:
        if lv.size is not None and working_set <= lv.size:
            return lv
    return measured[-1]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({counted(len(text), 'character')})"


def _merged(counts: Mapping[str, float], what: str = "") -> dict[str, float]:
    """``counts`` by canonical mnemonic (aliases merged); ValueError for an unknown
    mnemonic or a count that is not a finite non-negative number. ``what`` says where
    (``" in chain 2"``)."""
    merged: dict[str, float] = {}
    unknown = []
    for name, count in counts.items():
        canonical, _ = params.resolve_name(name)
        if canonical is None:
            unknown.append(name)
            continue
        if isinstance(count, bool) or not isinstance(count, (int, float)):
            raise ValueError(f"the count for '{name}'{what} must be a number, not {count!r}")
        try:
            count = float(count)  # a 400-digit integer does not fit a float
        except OverflowError:
            count = math.inf
        if not math.isfinite(count) or count < 0:
            raise ValueError(f"the count for '{name}'{what} must be finite and non-negative, "
                             f"not {_shown(counts[name])}")  # fmt: skip
        merged[canonical] = merged.get(canonical, 0) + count
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise ValueError(f"unknown timing parameter{'s' if len(unknown) > 1 else ''}{what}: "
                         f"{names}")  # fmt: skip
    return merged


def parse_counts(text: str) -> dict[str, int | float]:
    """Counts written ``OP=N,...`` (``dla=1000,ila=20``: ``block``'s COUNTS and each
    ``--chain``, PIUI's Estimate window): mnemonic -> count, ASCII numbers (a mnemonic
    given twice is summed). ValueError naming the part and why."""
    out: dict[str, int | float] = {}
    for part in text.split(","):
        name, eq, number = part.partition("=")
        name, number = name.strip(), number.strip(" \t")
        if not eq or not name:
            raise ValueError(f"expected OP=N,... (e.g. dla=1000), not {part.strip()!r}")
        try:
            value: int | float = read_int(number)
        except ValueRangeError:
            try:
                value = read_float(number)
            except ValueRangeError as e:
                raise ValueError(f"{name}: {e}") from None
        out[name] = out.get(name, 0) + value
    return out


def checked_chains(chains: object) -> list[dict[str, float]]:
    """Loop-carried chains as a caller gives them (a list of objects of mnemonic: count,
    each with an optional :data:`CHAIN_STARTS`), checked as :func:`estimate_block` checks
    them: ValueError saying which chain and why."""
    if not isinstance(chains, (list, tuple)) or not all(isinstance(c, Mapping) for c in chains):
        raise ValueError('the chains must be a list of objects of mnemonic: count, like '
                         '[{"dla": 4096, "starts": 64}]')  # fmt: skip
    out = []
    for k, chain in enumerate(chains, 1):
        ops, starts = _checked_chain(chain, k, len(chains))
        out.append({**ops, CHAIN_STARTS: starts} if CHAIN_STARTS in chain else ops)
    return out


def _checked_chain(chain: Mapping[str, object], k: int, of: int) -> tuple[dict[str, float], float]:
    """Chain ``k`` of ``of``: its operations' counts by canonical mnemonic and its
    :data:`CHAIN_STARTS` (0: not given), checked; ValueError saying which chain."""
    where = f" in chain {k}" if of > 1 else " in the chain"
    ops = _merged({n: c for n, c in chain.items() if n != CHAIN_STARTS}, where)
    return ops, _starts(chain, ops, where)


def checked_counts(counts: object) -> dict[str, float]:
    """Instruction counts as a caller gives them (a front end's form, a request),
    checked as :func:`estimate_block` checks them, before any is asked about: a mapping
    of known mnemonics to finite non-negative numbers, merged by canonical mnemonic.
    ValueError says which count is wrong and why."""
    if not isinstance(counts, Mapping):
        raise ValueError("the counts must be an object of mnemonic: count, like "
                         '{"ila": 4, "goto": 1}')  # fmt: skip
    return _merged(counts)


def _starts(chain: Mapping[str, object], ops: Mapping[str, float], where: str) -> float:
    """A chain's :data:`CHAIN_STARTS` (0: not given), checked: a finite number from 0
    to the chain's iterations (a chain cannot begin more often than it iterates)."""
    starts = chain.get(CHAIN_STARTS, 0)
    if isinstance(starts, bool) or not isinstance(starts, (int, float)):
        raise ValueError(f"'{CHAIN_STARTS}'{where} must be a number, not {starts!r}")
    try:
        value = float(starts)
    except OverflowError:
        value = math.inf
    iterations = max(ops.values(), default=0.0)
    if not (math.isfinite(value) and 0 <= value <= max(iterations, 0.0)):
        raise ValueError(f"'{CHAIN_STARTS}'{where} must be from 0 to the chain's iterations "
                         f"({iterations:.6g}, its most frequent operation's count), "
                         f"not {_shown(starts)}")  # fmt: skip
    return value


def _fsum(terms: Sequence[float]) -> float:
    try:
        return math.fsum(terms)
    except OverflowError:  # fsum raises where a plain sum would give inf
        return math.inf


def estimate_block(
    machine: Machine,
    processor_id: int,
    counts: Mapping[str, float],
    cached: bool = False,
    levels: Sequence[MemoryLevel] = (),
    working_set: float | None = None,
    chains: Sequence[Mapping[str, float]] = (),
    latencies: Mapping[str, tuple[float, float]] | None = None,
    window: float | None = None,
) -> BlockEstimate:
    """Estimate a block on processor type ``processor_id`` (its ``id``, as references
    use) from ``counts``: timing mnemonic (aliases such as ``sqrti`` accepted) -> how
    many times it executes. ``cached`` divides by the small loop speedup.

    With ``working_set`` (bytes) and the model's memory ``levels``
    (:func:`read_memory_levels`), each array reference (``arr1``..``arr7``) is charged
    the extra time of the level the working set fits in over the first level
    (:func:`level_for`): the model's array timings are measured with their data in the
    first-level cache.

    ``chains``: the block's loop-carried dependence chains, each as the counts of the
    operations on it (docs/measure.md, "Chains"). Each operation there waits for the
    one before, so a chain takes the sum of its count x *latency*: ``latencies``
    (:func:`read_latencies`, the model's measured ones) or, for an operation it lacks,
    the model's timing (a model that was not measured by ``measure`` holds latencies as
    its timings, the report's convention). The estimate is the larger of the sum of
    count x timing (the throughput bound) and the longest chain (the chain bound), and
    its standard deviation that of the larger.

    A chain that begins afresh ``starts`` times (:data:`CHAIN_STARTS` among its counts)
    runs in pieces of L = iterations / starts (its iterations: its most frequent
    operation's count), and the core runs several pieces at once: with the core's
    ``window`` (iterations it runs ahead of a chain's end, :func:`read_chain_windows`)
    the chain's time is divided by :func:`chain_overlap`, ``1 + window / L``.

    Raises ValueError for an unknown processor or mnemonic, a count that is not a
    finite non-negative number, a timing the processor does not define (for a non-zero
    count), or, with ``cached``, a missing or non-positive small loop speedup.
    """
    proc = machine.processor(processor_id)
    if proc is None:
        known = ", ".join(str(p.id) for p in machine.processors) or "none"
        raise ValueError(f"there is no processor with id {processor_id} (ids: {known})")
    label = f"processor {processor_id}" + (f" ({proc.name})" if proc.name else "")
    merged = _merged(counts)
    checked = [_checked_chain(chain, k, len(chains)) for k, chain in enumerate(chains, 1)]
    chain_counts = [ops for ops, _ in checked]
    chain_starts = [starts for _, starts in checked]
    latencies = latencies or {}
    missing = [n for n, c in merged.items() if c and n not in proc.timings]
    for chain in chain_counts:
        missing += [n for n, c in chain.items()
                    if c and n not in latencies and n not in proc.timings and n not in missing]  # fmt: skip
    if missing:
        raise ValueError(f"{label} has no timing for {', '.join(missing)}")
    terms = []
    spreads = []
    for name, count in merged.items():
        if not count:
            continue
        timing = proc.timings[name]
        terms.append(count * timing.mean)
        if timing.sd:
            spreads.append(count * timing.sd)
    level = None
    extra = 0.0
    if working_set is not None:
        level = level_for(levels, working_set)
        first = next(lv for lv in levels if lv.seconds is not None)
        extra = max(0.0, level.seconds - first.seconds)
        refs = sum(merged.get(n, 0.0) for n in ARRAY_OPS)
        if refs and extra:
            terms.append(refs * extra)
    mean = _fsum(terms)
    sd = math.hypot(*spreads)  # sqrt(sum of squares) without overflowing the squares
    through = mean
    chain_mean = chain_sd = None
    chain_at_once = 1.0
    source = None
    for chain, starts in zip(chain_counts, chain_starts):
        c_terms, c_spreads = [], []
        for name, count in chain.items():
            if not count:
                continue
            if name in latencies:
                t, s = latencies[name]
                source = source or "latency"
            else:
                t, s = proc.timings[name].mean, proc.timings[name].sd or 0.0
                source = "timing"
            c_terms.append(count * t)
            if s:
                c_spreads.append(count * s)
        at_once = chain_overlap(max(chain.values(), default=0.0), starts, window)
        c_mean = _fsum(c_terms) / at_once
        if chain_mean is None or c_mean > chain_mean:
            chain_mean, chain_sd = c_mean, math.hypot(*c_spreads) / at_once
            chain_at_once = at_once
    bound = "throughput"
    if chain_mean is not None and chain_mean > mean:
        mean, sd, bound = chain_mean, chain_sd, "chain"
    divisor = 1.0
    if cached:
        speedup = proc.cache.smallloopspeedup if proc.cache is not None else None
        if speedup is None:
            raise ValueError(f"{label} has no small loop speedup for a cached block")
        if not speedup.mean > 0:
            raise ValueError(f"the small loop speedup of {label} must be positive, "
                             f"not {speedup.mean!r}")  # fmt: skip
        divisor = speedup.mean
    mean /= divisor
    sd /= divisor
    if not (math.isfinite(mean) and math.isfinite(sd)):
        raise ValueError(f"the estimate for {label} is too large for a floating-point "
                         "number (the counts or timings overflow)")  # fmt: skip
    return BlockEstimate(
        mean, sd, level.name if level is not None else None, extra,
        throughput_bound=through / divisor if chain_counts else None,
        chain_bound=chain_mean / divisor if chain_mean is not None else None,
        bound=bound, chain_source=source, chain_at_once=chain_at_once,
    )  # fmt: skip


@dataclass(frozen=True)
class BlockAnswer:
    """A block's estimate as every surface gives it (``parasol-model block``, the
    estimator's ``estimate.block``, PIUI's Estimate window): the estimate, the interval
    its time lies in (:func:`interval`), the validation's ratios that widened it (None:
    the model records none), and with a working set the memory level charged."""

    estimate: BlockEstimate
    low: float
    high: float
    ratios: tuple[float, float] | None
    level: MemoryLevel | None = None
    working_set: int | None = None

    def interval_basis(self) -> str:
        """What the interval is made of, in words."""
        why = "2 sd of the measured timings"
        if self.ratios is not None:
            return (f"{why}, and the validation's ratios predicted / measured "
                    f"{self.ratios[0]:.3g} .. {self.ratios[1]:.3g} on programs the "
                    "measurement never saw")  # fmt: skip
        return f"{why}; the model records no validation, so how far the sum is from real code is unknown"

    def bound_words(self) -> str | None:
        """Which bound holds and the two, in words (``parasol-model block``'s ``bound:``
        line); None without chains."""
        e = self.estimate
        if e.chain_bound is None:
            return None
        at = ("the model's measured latencies" if e.chain_source == "latency" else
              "the model's timings (it records no measured latencies)")  # fmt: skip
        if e.chain_at_once != 1.0:
            at += f", {e.chain_at_once:.3g} of its runs at once (the model's chain window)"
        other = "chain" if e.bound == "throughput" else "throughput"
        return (f"{e.bound} (throughput sum {e.throughput_bound:.4g} s, longest chain "
                f"{e.chain_bound:.4g} s at {at}; the {other} bound is the smaller)")  # fmt: skip

    def level_words(self) -> str | None:
        """The memory level charged, in words; None without a working set."""
        lv, ws = self.level, self.working_set
        if lv is None or ws is None:
            return None
        fits = (f"fits {counted(lv.size, 'byte', grouped=False)}"
                if lv.size is not None and ws <= lv.size else "is past the measured caches")  # fmt: skip
        return (f"{lv.name} (the working set of {counted(ws, 'byte', grouped=False)} {fits}; "
                f"+{self.estimate.array_extra:.4g} s per array reference)")  # fmt: skip


@dataclass(frozen=True)
class BlockNotes:
    """What a measured model's text records for its blocks' estimates (its memory
    levels, each processor's measured latencies and chain window, the validation's
    ratios), read once:
    each is a scan of the whole text (half a second at 64 MB), which a service
    answering many blocks of one model keeps (the estimator's loaded model)."""

    levels: tuple[MemoryLevel, ...]
    latencies: Mapping[str, Mapping[str, tuple[float, float]]]  # processor id as written
    ratios: tuple[float, float] | None
    windows: Mapping[str, float] = field(default_factory=dict)  # processor id as written

    @classmethod
    def of(cls, machine: Machine) -> BlockNotes:
        """The notes of ``machine``'s own text (none for a model made in memory)."""
        return cls.read(machine.src.text if machine.src is not None else "")

    @classmethod
    def read(cls, text: str) -> BlockNotes:
        return cls(tuple(read_memory_levels(text)), _all_latencies(text),
                   read_validation_ratios(text), read_chain_windows(text))  # fmt: skip


def answer_block(machine: Machine, processor_id: int, counts: Mapping[str, float],
                 cached: bool = False, *, working_set: int | None = None,
                 chains: Sequence[Mapping[str, float]] = (),
                 notes: BlockNotes | None = None) -> BlockAnswer:  # fmt: skip
    """:func:`estimate_block` with what the model's text records of its measurement
    (``notes``, read here when not given: memory levels for ``working_set``, measured
    latencies and chain window for ``chains``, the validation's ratios for the
    interval). ValueError as
    :func:`estimate_block`."""
    if notes is None:
        notes = BlockNotes.of(machine)
    levels = notes.levels if working_set is not None else ()
    latencies = notes.latencies.get(str(processor_id), {}) if chains else {}
    estimate = estimate_block(machine, processor_id, counts, cached, levels=levels,
                              working_set=working_set, chains=chains, latencies=latencies,
                              window=notes.windows.get(str(processor_id)))  # fmt: skip
    ratios = notes.ratios
    low, high = interval(estimate, ratios)
    level = next((lv for lv in levels if lv.name == estimate.level), None)
    return BlockAnswer(estimate, low, high, ratios, level, working_set)
