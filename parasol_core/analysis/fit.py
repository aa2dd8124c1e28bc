"""Data-sheet fitting of a run-time system cost ``t(p, d)`` from measured times.

The method of the MPI data-sheet thesis (``seeds/data-sheets-parallel-building-blocks-
thesis.txt``, sections 3.2.2 and 3.5): fit

    t = c + s * startfn(p) + d * datafn(p, bytes)

by weighted linear least squares for every combination of ``startfn`` in (p, log p, p^2)
and ``datafn`` in (bytes, bytes p, bytes log p, bytes p^2), rank the twelve fits by
chi-squared, and report each one's goodness of fit Q and the standard errors of its
coefficients. The standard errors give the thesis's minimum and maximum equations (each
coefficient moved by one standard error down, or up).

Weights. A measurement with an error estimate ``sigma`` counts with weight 1/sigma^2 and
chi-squared and Q mean what they do in the thesis. Without error estimates (the OSU
micro-benchmarks print none) every time is taken to have the same *relative* error, so a
64 MiB transfer does not drown the 1-byte latency: sigma_i = t_i, the standard errors are
scaled by sqrt(chi2 / (N - 3)) (the error level the scatter implies), and Q is None,
because with errors estimated from the fit itself it tells nothing.

With a single process count in the data the start term cannot be told from the constant:
the candidates are then the four ``c + d * datafn`` forms (equal in chi-squared; the
simplest, ``c + d * bytes``, comes first). Without message sizes (every size 0: a barrier,
osu_barrier's size-less table) there is no data term: the candidates are the three
``c + s * startfn`` forms, or the constant ``c`` alone with a single process count.

Inputs: a CSV ``procs,bytes,seconds[,error]`` (:func:`read_csv`) or the text output of
OSU micro-benchmarks (:func:`read_osu_log`): a job's log may hold several benchmarks one
after another, each its own table under its ``# OSU MPI ... Test`` title and ``# Size``
header, between lines of prose (skipped and counted). One table is fitted at a time,
chosen by name (:meth:`OsuLog.choose`); tables are never merged. A latency table
(``Latency (us)``, ``Avg Latency(us)``) gives times in microseconds; a bandwidth table
(``Bandwidth (MB/s)``, OSU's MB being 10^6 bytes) gives the time of ``bytes`` at that rate,
bytes / (MB/s * 1e6): the per-message cost of a stream of messages, not one message's
latency. The process count is given separately. Everything here is plain numpy.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.limits import MAX_DATA_FILE_BYTES
from parasol_core.base.numeric import (
    SMALLEST_NORMAL,
    NotANumberError,
    ValueRangeError,
    is_number,
    is_whole,
    read_float,
)
from parasol_core.base.words import counted

__all__ = [
    "START_FUNCTIONS",
    "DATA_FUNCTIONS",
    "Measurements",
    "Form",
    "Candidate",
    "FitError",
    "fit",
    "read_csv",
    "read_osu",
    "read_osu_log",
    "read_measurements",
    "read_measurement_file",
    "read_source",
    "mixed_benchmarks",
    "fit_comment",
    "is_csv",
    "OsuLog",
    "OsuTable",
    "TableChoiceError",
    "MAX_MEASUREMENT_BYTES",
    "MeasurementFileTooLarge",
    "gamma_q",
]

Array = np.ndarray


class FitError(ValueError):
    """Measurements that cannot be read or fitted (with a message for the user)."""


class MeasurementFileTooLarge(FitError):
    """A measurement file past :data:`MAX_MEASUREMENT_BYTES` (read no further)."""


# name -> (function of p, the same in model expression syntax)
START_FUNCTIONS: dict[str, tuple[Callable[[Array], Array], str]] = {
    "p": (lambda p: p, "ar.procs"),
    "log(p)": (lambda p: np.log(p), "log(ar.procs)"),
    "p^2": (lambda p: p * p, "ar.procs ** 2"),
}
# name -> (function of p and bytes, expression)
DATA_FUNCTIONS: dict[str, tuple[Callable[[Array, Array], Array], str]] = {
    "bytes": (lambda p, d: d, "ar.bytes"),
    "bytes*p": (lambda p, d: d * p, "ar.bytes * ar.procs"),
    "bytes*log(p)": (lambda p, d: d * np.log(p), "ar.bytes * log(ar.procs)"),
    "bytes*p^2": (lambda p, d: d * p * p, "ar.bytes * ar.procs ** 2"),
}


@dataclass
class Measurements:
    """Measured times: one row per (process count, message size)."""

    procs: Array
    bytes: Array
    seconds: Array
    error: Array | None = None  # seconds; None when the source gives no error estimates

    def __post_init__(self) -> None:
        self.procs = np.asarray(self.procs, dtype=float)
        self.bytes = np.asarray(self.bytes, dtype=float)
        self.seconds = np.asarray(self.seconds, dtype=float)
        if self.error is not None:
            self.error = np.asarray(self.error, dtype=float)
        n = len(self.seconds)
        if (
            len(self.procs) != n
            or len(self.bytes) != n
            or (self.error is not None and len(self.error) != n)
        ):
            raise FitError("procs, bytes, seconds and error must have one value per row")

    def __len__(self) -> int:
        return len(self.seconds)

    @classmethod
    def concat(cls, parts: Sequence[Measurements]) -> Measurements:
        """Several sets as one (errors kept only if every part has them)."""
        if not parts:
            raise FitError("no measurements")
        errors = None
        if all(p.error is not None for p in parts):
            errors = np.concatenate([p.error for p in parts])
        return cls(np.concatenate([p.procs for p in parts]),
                   np.concatenate([p.bytes for p in parts]),
                   np.concatenate([p.seconds for p in parts]), errors)  # fmt: skip


@dataclass(frozen=True)
class Form:
    """One equation form: ``c + s * start + d * data`` (``start`` None: no start term;
    ``data`` None: no data term, for times without message sizes such as a barrier's)."""

    start: str | None
    data: str | None

    def __str__(self) -> str:
        s = f" + s*{self.start}" if self.start else ""
        d = f" + d*{self.data}" if self.data else ""
        return f"c{s}{d}"

    @property
    def names(self) -> tuple[str, ...]:
        return ("c",) + (("s",) if self.start else ()) + (("d",) if self.data else ())

    def columns(self, procs: Array, nbytes: Array) -> list[Array]:
        cols = [np.ones_like(procs)]
        if self.start:
            cols.append(START_FUNCTIONS[self.start][0](procs))
        if self.data:
            cols.append(DATA_FUNCTIONS[self.data][0](procs, nbytes))
        return cols

    def terms(self) -> list[str]:
        """The expression text each coefficient multiplies ("" for the constant)."""
        out = [""]
        if self.start:
            out.append(START_FUNCTIONS[self.start][1])
        if self.data:
            out.append(DATA_FUNCTIONS[self.data][1])
        return out


@dataclass
class Candidate:
    """One fitted form, with its coefficients (seconds), standard errors, chi2 and Q."""

    form: Form
    coefficients: dict[str, float]
    errors: dict[str, float]
    chi2: float
    q: float | None  # None when the errors were estimated from the fit
    dof: int
    weighted: bool = field(default=True)

    def predict(self, procs: Array | float, nbytes: Array | float, shift: float = 0.0) -> Array:
        """Times at (procs, bytes); ``shift`` moves every coefficient by that many
        standard errors (-1 and +1 give the thesis's minimum and maximum equations)."""
        p = np.asarray(procs, dtype=float)
        d = np.asarray(nbytes, dtype=float)
        p, d = np.broadcast_arrays(p, d)
        total = np.zeros(p.shape)
        for name, col in zip(self.form.names, self.form.columns(p, d), strict=True):
            total = total + (self.coefficients[name] + shift * self.errors[name]) * col
        return total

    def band(self, procs: Array | float, nbytes: Array | float) -> tuple[Array, Array]:
        """The minimum and maximum expected times (every start and data function is
        non-negative for p >= 1, so moving each coefficient down or up bounds the time)."""
        return self.predict(procs, nbytes, -1.0), self.predict(procs, nbytes, 1.0)

    def expression(self) -> str:
        """The fit as a model expression in ``ar.procs`` and ``ar.bytes``, in seconds.
        Each coefficient keeps the digits its standard error justifies (at least 3)."""
        parts: list[str] = []
        for name, term in zip(self.form.names, self.form.terms(), strict=True):
            text = _number(self.coefficients[name], self.errors[name])
            negative = text.startswith("-")
            body = text.lstrip("-") + (f" * {term}" if term else "")
            if not parts:
                parts.append(("-" if negative else "") + body)
            else:
                parts.append(("- " if negative else "+ ") + body)
        return " ".join(parts)

    def to_data(self) -> dict:
        return {
            "form": str(self.form),
            "coefficients": dict(self.coefficients),
            "errors": dict(self.errors),
            "chi2": self.chi2,
            "q": self.q,
        }


def fit_comment(candidate: Candidate, m: Measurements, sources: Sequence[str]) -> str:
    """What a fitted expression's line says after it in the model (its comment, which
    replaces the one about the value before): the times it was fitted to, from where,
    the form and its Q. ``sources`` say where the times came from ("job.log,
    osu_latency"); their control characters are escaped, their lengths bounded."""
    from parasol_core.base.limits import printable

    counts = sorted({int(p) for p in m.procs.tolist()})
    at = (f"{counts[0]} processes" if len(counts) == 1
          else f"{counted(len(counts), 'process count')}, {counts[0]} to {counts[-1]}")  # fmt: skip
    where = "; ".join(printable(s if len(s) <= 80 else s[:77] + "...") for s in sources)
    if candidate.q is None:
        q = "no Q (no errors given: equal relative errors assumed)"
    elif candidate.dof == 0:
        q = "exactly determined (no Q)"
    else:
        q = f"Q {candidate.q:.3g}"
    times = f"{len(m)} time" + ("" if len(m) == 1 else "s")
    return f"fitted to {times} at {at} ({where}): {candidate.form}, {q}"


def _number(value: float, error: float) -> str:
    if value == 0 or not math.isfinite(value):
        return repr(float(value))
    digits = 3
    if error > 0 and math.isfinite(error):
        digits = max(3, math.ceil(math.log10(abs(value) / error)) + 2)
    text = f"{value:.{min(digits, 12)}g}"
    if "e" not in text and "." not in text:
        text += ".0"  # a float in the expression, as the value is
    return text


def forms(single_procs: bool = False, sizeless: bool = False) -> list[Form]:
    """Every form the thesis lists (without the start term for a single process count;
    without the data term when no time has a message size)."""
    if sizeless:
        if single_procs:
            return [Form(None, None)]
        return [Form(start, None) for start in START_FUNCTIONS]
    if single_procs:
        return [Form(None, data) for data in DATA_FUNCTIONS]
    return [Form(start, data) for start in START_FUNCTIONS for data in DATA_FUNCTIONS]


def fit(m: Measurements) -> list[Candidate]:
    """Fit every form to ``m``; the candidates, best (smallest chi-squared) first."""
    if len(m) == 0:
        raise FitError("no measurements")
    if np.any(m.procs < 1) or np.any(m.bytes < 0):
        raise FitError("process counts must be at least 1 and message sizes not negative")
    if not np.all(np.isfinite(m.seconds)):
        raise FitError("a measured time is not a number")
    weighted = m.error is not None
    if weighted:
        sigma = np.asarray(m.error, dtype=float)
        if np.any(sigma <= 0) or not np.all(np.isfinite(sigma)):
            raise FitError("every error estimate must be a positive number")
    else:
        positive = m.seconds[m.seconds > 0]
        if len(positive) == 0:
            raise FitError("every measured time is zero")
        sigma = np.where(m.seconds > 0, m.seconds, positive.min())
    single = len(unique(m.procs)) == 1
    sizeless = not np.any(m.bytes > 0)
    out: list[Candidate] = []
    for form in forms(single, sizeless):
        cand = _fit_form(form, m, sigma, weighted)
        if cand is not None:
            out.append(cand)
    if not out:
        raise FitError(f"{counted(len(m), 'measurement')}: too few to fit (or all at one point)")
    order = {f: i for i, f in enumerate(forms(single, sizeless))}
    out.sort(key=lambda c: (_rank_chi2(c.chi2), order[c.form]))
    return out


def _rank_chi2(chi2: float) -> float:
    # equal forms (a single process count) differ only by rounding: keep the simplest
    return float(f"{chi2:.9g}")


def _fit_form(form: Form, m: Measurements, sigma: Array, weighted: bool) -> Candidate | None:
    """The least-squares fit of ``form``, or None when the columns do not determine it.
    Computed on columns scaled to at most 1 and times scaled to their largest, and the
    coefficients scaled back: measured times of 1e305 s (whose squares are no double)
    or sizes of 1e300 bytes fit as 1e-6 s and 1000 bytes do. A coefficient past a double
    is no fit (None), never an infinite one."""
    with np.errstate(all="ignore"):
        full = np.column_stack(form.columns(m.procs, m.bytes))
        if not np.isfinite(full).all():  # bytes x p^2 past a double: this form cannot
            return None
        top = np.abs(full).max(axis=0)
        if np.any(top == 0):
            return None
        k_time = float(np.abs(sigma).max())
        a = (full / top) / (sigma / k_time)[:, None]
        b = m.seconds / sigma
    n, k = a.shape
    if n < k:
        return None
    scale = np.linalg.norm(a, axis=0)
    if np.any(scale == 0) or not np.isfinite(a).all():
        return None
    u, w, vt = np.linalg.svd(a / scale, full_matrices=False)
    if w[-1] <= w[0] * 1e-10:  # a column is a combination of the others
        return None
    with np.errstate(all="ignore"):
        y = (vt.T @ ((u.T @ b) / w)) / scale
        cov_y = (vt.T / w**2) @ vt / np.outer(scale, scale)
        resid = b - a @ y
        coef = y * (k_time / top)
        errs = np.sqrt(np.diag(cov_y)) * (k_time / top)  # not the covariance: seconds^2
        chi2 = float(resid @ resid)
        dof = n - k
        if not weighted and dof > 0:
            errs = errs * math.sqrt(chi2 / dof)
    if not (np.isfinite(coef).all() and np.isfinite(errs).all() and math.isfinite(chi2)):
        return None
    q: float | None = None
    if weighted:
        q = gamma_q(dof / 2, chi2 / 2) if dof > 0 else 1.0
    names = form.names
    return Candidate(form, {nm: float(v) for nm, v in zip(names, coef, strict=True)},
                     {nm: float(e) for nm, e in zip(names, errs, strict=True)},
                     chi2, q, dof, weighted)  # fmt: skip


# ---------------------------------------------------------------- goodness of fit


def gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x): the probability that a
    chi-squared with 2a degrees of freedom exceeds 2x (series for x < a + 1, else a
    continued fraction, as Numerical Recipes' ``gammq``)."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - gln))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


# ---------------------------------------------------------------- reading measurements


def read_csv(text: str) -> Measurements:
    """``procs,bytes,seconds[,error]`` with that header; blank lines and ``#`` lines
    are skipped."""
    numbered = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1)
                if ln.strip() and not ln.lstrip().startswith("#")]  # fmt: skip
    if not numbered:
        raise FitError("the CSV file is empty")
    rows = [(i, next(csv.reader([ln]))) for i, ln in numbered]
    first, head = rows[0]
    header = [h.strip().lower() for h in head]
    if header[:3] != ["procs", "bytes", "seconds"] or header[3:] not in ([], ["error"]):
        raise FitError(f"line {first}: expected the header procs,bytes,seconds[,error], "
                       f"found {','.join(head)}")  # fmt: skip
    has_error = len(header) == 4
    values: list[list[float]] = []
    for i, row in rows[1:]:
        if len(row) != len(header):
            raise FitError(f"line {i}: expected {counted(len(header), 'value')}, found {len(row)}")
        try:  # ASCII numbers a double holds (base.numeric): not '٣', '1_000' or 1e999
            values.append([read_float(v) for v in row])
        except NotANumberError as e:
            raise FitError(f"line {i}: not a number in {','.join(row)}{e.reason}") from None
        except ValueRangeError as e:
            raise FitError(f"line {i}: {e}") from None
    if not values:
        raise FitError("the CSV file has a header and no measurements")
    arr = np.array(values)
    return Measurements(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3] if has_error else None)


# ---------------------------------------------------------------- OSU benchmark logs

MAX_MEASUREMENT_BYTES = MAX_DATA_FILE_BYTES
"""The largest measurement file read (an OSU log of every benchmark is a few hundred KB)."""

LATENCY, BANDWIDTH, OTHER = "latency", "bandwidth", "other"

# "# OSU MPI Latency Test v7.3" -> "MPI Latency Test"
_OSU_TITLE = re.compile(r"^#\s*OSU\s+(?P<title>.*?)(?:\s+v[0-9][\w.\-]*)?\s*$", re.IGNORECASE)
# "# Size  Latency (us)", "# Size  Bandwidth (MB/s)", or osu_barrier's "# Avg Latency(us)"
_OSU_HEADER = re.compile(
    r"^#\s*(?:Size\b(?P<rest>.*)|(?P<sizeless>Avg\s+Lat(?:ency)?\s*\(\s*us\s*\).*))$",
    re.IGNORECASE,
)
_OSU_COLUMN = re.compile(
    r"(?P<lat>(?:(?P<stat>Avg|Min|Max|P[0-9]+(?:\.[0-9]+)?\s+Tail)\s+)?Lat(?:ency)?\s*\(\s*us\s*\))"
    r"|(?P<bw>(?:Bi-?)?Bandwidth\s*\(\s*MB/s\s*\)|MB/s)"
    r"|(?P<other>[^\s(]+(?:\s*\([^)]*\))?)",
    re.IGNORECASE,
)
_DECIMAL = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
# "# Datatype: MPI_CHAR."
_OSU_DATATYPE = re.compile(r"^#\s*Datatype\s*:\s*(?P<type>[^\s.]+)\.?\s*$", re.IGNORECASE)
# The title's first word: "MPI", "MPI-CUDA", "MPI-CUDA MANAGED" (the accelerator the
# buffers were on), or a one-sided benchmark's call, "MPI_Put", "MPI_Get_accumulate-ROCM"
_OSU_API = re.compile(
    r"^MPI(?:_(?P<call>[A-Za-z][A-Za-z_]*))?(?P<accel>-[A-Za-z]+(?:\s+MANAGED)?)?(?:\s+|$)",
    re.IGNORECASE,
)
# one-sided calls -> the prefix of their programs (osu_put_latency, osu_fop_latency, ...)
_CALLS = {
    "put": "put",
    "get": "get",
    "accumulate": "acc",
    "get_accumulate": "get_acc",
    "fetch_and_op": "fop",
    "compare_and_swap": "cas",
}
# the test name without "Test" -> the program's name, where they differ (tried first with
# "Latency", then without: osu_multi_lat is "Multi Latency", osu_bcast "Broadcast Latency")
_PROGRAMS = {
    "latency": "latency",
    "multi latency": "multi_lat",
    "multi-threaded latency": "latency_mt",
    "multi-process latency": "latency_mp",
    "bandwidth": "bw",
    "bi-directional bandwidth": "bibw",
    "broadcast": "bcast",
    "multiple bandwidth / message rate": "mbw_mr",
    "all-to-all": "alltoall",
    "all-to-allv": "alltoallv",
    "all-to-allw": "alltoallw",
    "all-to-all personalized exchange": "alltoall",
    "all-to-allv personalized exchange": "alltoallv",
    "all-to-allw personalized exchange": "alltoallw",
}


def _osu_columns(rest: str) -> list[str]:
    """The header's columns after Size: "avg", "min", "max" (latency in us), "mb/s"
    (bandwidth), anything else lower-cased."""
    names = []
    for match in _OSU_COLUMN.finditer(rest):
        if match.group("lat"):
            names.append(" ".join((match.group("stat") or "avg").lower().split()))
        elif match.group("bw"):
            names.append("mb/s")
        else:
            names.append(match.group(0).lower())
    return names


def title_parts(title: str) -> tuple[str, str, str]:
    """A title (``MPI_Put-CUDA Latency Test``, without "OSU" and the version) as (the
    one-sided call or "", the accelerator or "", the test name): ("Put", "CUDA",
    "Latency Test"); a title that does not start with MPI is all test name."""
    match = _OSU_API.match(title.strip())
    if match is None:
        return "", "", title.strip()
    accel = " ".join((match.group("accel") or "").lstrip("-").upper().split())
    return match.group("call") or "", accel, title.strip()[match.end() :].strip()


def _name(test: str) -> str:
    """The program's name of a test name: "Allreduce Latency Test" -> "allreduce",
    "Non-blocking Neighborhood Alltoall Latency Test" -> "ineighbor_alltoall"."""
    name = " ".join(test.lower().split())
    name = re.sub(r"\s+test$", "", name)
    suffix = ""
    if re.search(r"(^|\s)persistent(\s|$)", name):  # osu_allgather_persistent, ...
        name = " ".join(w for w in name.split() if w != "persistent")
        suffix = "_persistent"
    prefix = ""
    for word, short in (("non-blocking ", "i"), ("neighborhood ", "neighbor_")):
        if name.startswith(word):
            prefix, name = prefix + short, name[len(word) :]
    if name in _PROGRAMS:
        name = _PROGRAMS[name]
    else:
        name = re.sub(r"\s+latency$", "", name)
        name = _PROGRAMS.get(name) or re.sub(r"[^a-z0-9]+", "_", name).strip("_")
    return f"{prefix}{name}{suffix}" if name else ""


def _program(title: str) -> str:
    """The program a title names, as OSU names it: "MPI Allreduce Latency Test" ->
    "osu_allreduce", "MPI_Put Latency Test" -> "osu_put_latency", "MPI_Fetch_and_op
    latency Test" -> "osu_fop_latency" ("" for none)."""
    call, _, test = title_parts(title)
    name = _name(test)
    if not name:
        return ""
    if call:
        short = _CALLS.get(call.lower(), call.lower())
        return f"osu_{short}_{name}"
    return f"osu_{name}"


class _NoTableError(FitError):
    def __init__(self, skipped: int) -> None:
        self.skipped = (
            f"; {counted(skipped, 'line', grouped=False)} of other text" if skipped else ""
        )
        super().__init__("no OSU benchmark table (a '# Size  Latency (us)' or "
                         f"'# Size  Bandwidth (MB/s)' header) found{self.skipped}")  # fmt: skip


class TableChoiceError(FitError):
    """A log whose table is not chosen (several, and none or an unknown one named);
    ``candidates``: the tables an ambiguous name names (else empty)."""

    def __init__(self, message: str, log: OsuLog, candidates: Sequence[OsuTable] = ()) -> None:
        super().__init__(message)
        self.log = log
        self.candidates = list(candidates)


@dataclass
class OsuTable:
    """One benchmark's table in an OSU log: its title (``# OSU MPI Latency Test v7.3``,
    if there is one), its ``# Size ...`` header and the rows under it."""

    number: int  # 1, 2, ... in the order of the file
    title: str  # "MPI Latency Test" ("" without a title line)
    line: int  # the line of the header
    columns: list[str]  # after Size
    header: str = ""  # the header line as written
    has_size: bool = True  # False for osu_barrier (a latency, no message size)
    datatype: str = ""  # "MPI_CHAR", from a "# Datatype: MPI_CHAR." line ("" without one)
    sizes: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)  # latency in us, or MB/s
    spread: list[float] = field(default_factory=list)  # half the min-max range, us
    rows: int = 0

    @property
    def kind(self) -> str:
        if "avg" in self.columns:
            return LATENCY
        return BANDWIDTH if "mb/s" in self.columns else OTHER

    @property
    def test(self) -> str:
        """The test's name: the title without a plain "MPI" word ("Latency Test"); a
        one-sided benchmark's call and an accelerator stay ("MPI_Put Latency Test",
        "MPI-CUDA Latency Test"): they tell benchmarks apart."""
        return re.sub(r"^MPI\s+", "", self.title, flags=re.IGNORECASE)

    @property
    def program(self) -> str:
        """The OSU program that prints this title: osu_latency, osu_put_latency, ..."""
        return _program(self.title)

    @property
    def accelerator(self) -> str:
        """Where the benchmark's buffers were: "" (host), "CUDA", "ROCM", ..."""
        return title_parts(self.title)[1]

    @property
    def name(self) -> str:
        """How the table is named to the user: the program, else its number."""
        return self.program or f"table {self.number}"

    @property
    def benchmark(self) -> str:
        """What the rows measure: tables with the same benchmark may be fitted together
        (see :func:`mixed_benchmarks`, which also tells stated datatypes apart)."""
        name = self.program or f"untitled {self.kind} table"
        return f"{name} ({self.accelerator})" if self.accelerator else name

    def describe(self) -> str:
        test = f" ({self.test})" if self.test else ""
        datatype = f", {self.datatype}" if self.datatype else ""
        return f"{self.name}{test}: {_rows(self.rows)}, {self.kind}{datatype}, line {self.line}"

    def note(self) -> str:
        """What the fitted times mean, where that is not the plain latency."""
        if self.kind != BANDWIDTH:
            return ""
        counted = {"osu_bibw": " (whose bandwidth counts both directions together)",
                   "osu_mbw_mr": " (whose bandwidth counts every pair together)"}  # fmt: skip
        return (f"{self.name} is a bandwidth table{counted.get(self.program, '')}: each "
                "time is bytes / bandwidth, the cost of one message in a stream of them "
                "(throughput), not the latency of one message")  # fmt: skip

    def add_row(self, lineno: int, cells: list[str], text: str) -> None:
        self.rows += 1
        if self.kind == OTHER:
            return  # counted; refused only if chosen
        values = cells[1:] if self.has_size else cells
        row = dict(zip(self.columns, values, strict=False))
        key = "avg" if self.kind == LATENCY else "mb/s"
        if key not in row:
            what = "latency" if key == "avg" else "bandwidth"
            raise FitError(f"line {lineno}: no {what} in {text!r} (under the header "
                           f"of line {self.line})")  # fmt: skip
        size = _decimal(cells[0], lineno, text) if self.has_size else 0.0
        value = _decimal(row[key], lineno, text)
        if size < 0:
            raise FitError(f"line {lineno}: a negative message size in {text!r}")
        if self.kind == BANDWIDTH and value <= 0:
            raise FitError(f"line {lineno}: a bandwidth of {row[key]} MB/s gives no time "
                           f"per byte ({text!r})")  # fmt: skip
        # the time it makes must be a double too: 1e-310 us, or 1e300 MB/s for a byte,
        # would be 0 or a subnormal (a time nobody measured)
        seconds = value * 1e-6 if self.kind == LATENCY else size / (value * 1e6)
        if (
            not math.isfinite(seconds)
            or (0 < abs(seconds) < SMALLEST_NORMAL)
            or (seconds == 0 and value != 0 and (self.kind == LATENCY or size != 0))
        ):
            unit = "us" if self.kind == LATENCY else "MB/s"
            raise FitError(f"line {lineno}: {row[key]} {unit} gives a time of {seconds!r} s, "
                           f"which a double does not hold to full precision ({text!r})")  # fmt: skip
        self.sizes.append(size)
        self.values.append(value)
        if "min" in row and "max" in row:
            low, high = _decimal(row["min"], lineno, text), _decimal(row["max"], lineno, text)
            self.spread.append((high - low) / 2)

    def measurements(self, procs: int) -> Measurements:
        """The rows as times in seconds at ``procs`` processes. A latency is converted
        from microseconds; a bandwidth (OSU's MB: 10^6 bytes) becomes the time of
        ``bytes`` at that rate, bytes / (MB/s * 1e6). Half the min-max range of a
        latency table run with ``-f`` is the error estimate."""
        if procs < 1:
            raise FitError("the process count must be at least 1")
        if self.kind == OTHER:
            raise FitError(f"{self.name} (line {self.line}) has no latency (us) or bandwidth "
                           f"(MB/s) column to fit: {self.header!r}")  # fmt: skip
        if not self.values:
            raise FitError(f"{self.name} (line {self.line}) has a header and no rows")
        sizes = np.array(self.sizes)
        values = np.array(self.values)
        error = None
        if self.kind == LATENCY:
            seconds = values * 1e-6
            if len(self.spread) == len(values) and all(s > 0 for s in self.spread):
                error = np.array(self.spread) * 1e-6
        else:
            seconds = sizes / (values * 1e6)
        return Measurements(np.full(len(values), float(procs)), sizes, seconds, error)


def _rows(count: int) -> str:
    return f"{count} row" + ("" if count == 1 else "s")


def _decimal(cell: str, lineno: int, text: str) -> float:
    """A cell's number: ASCII, as every number read (base.numeric), and one a double
    holds; FitError naming the line otherwise."""
    try:
        return read_float(cell)
    except ValueRangeError as e:
        why = getattr(e, "reason", "")
        raise FitError(f"line {lineno}: {cell!r} is not a number{why} (in {text!r})") from None


def _query(name: str) -> str:
    """A table's name as the user may write it: "osu_latency", "Latency Test",
    "# OSU MPI Allreduce Latency Test v7.3", "allreduce" -> lower case, one space, without
    "OSU" and a plain "MPI" (a one-sided call stays: "mpi_put latency test")."""
    text = " ".join(name.lower().split())
    text = re.sub(r"^#\s*", "", text)
    text = re.sub(r"^osu\s+", "", text)
    text = re.sub(r"^mpi\s+", "", text)
    text = re.sub(r"\s+v[0-9][\w.\-]*$", "", text)
    return text


@dataclass
class OsuLog:
    """The tables of an OSU log, and how many other lines (prose, launcher and
    warning lines of a job's output) were skipped."""

    tables: list[OsuTable]
    skipped: int = 0
    first_skipped: int | None = None  # the line number of the first skipped line

    def listing(self, tables: Sequence[OsuTable] | None = None) -> str:
        """One line a table (``tables``, by default every one): number, name, test, rows,
        kind, datatype (where a table states one), line."""
        tables = self.tables if tables is None else tables
        width = max(len(t.name) for t in tables)
        test_width = max(len(t.test) for t in tables)
        type_width = max(len(t.datatype) for t in tables)
        return "\n".join(f"  {t.number:>2}  {t.name:<{width}}  {t.test:<{test_width}}  "
                         f"{_rows(t.rows):>9}  {t.kind:<9}  "
                         + (f"{t.datatype:<{type_width}}  " if type_width else "")
                         + f"line {t.line}" for t in tables)  # fmt: skip

    def skipped_note(self) -> str:
        """A sentence saying how many lines were skipped, and the first ("" for none)."""
        if not self.skipped:
            return ""
        lines = "line was" if self.skipped == 1 else "lines were"
        return (f"{self.skipped} {lines} not part of a table and skipped (prose, launcher "
                f"or warning lines; the first is line {self.first_skipped})")  # fmt: skip

    def find(self, name: str) -> OsuTable:
        """The table named ``name``: its number, its program (``osu_latency``, or
        ``latency``), its test name ("Latency Test", the whole title line) or a word of
        it ("allreduce"), case-insensitive. An unknown or ambiguous name raises
        TableChoiceError."""
        query = _query(name)
        if is_whole(query) and len(query) <= 9:
            number = int(query)
            if 1 <= number <= len(self.tables):
                return self.tables[number - 1]
            raise TableChoiceError(f"no table {number}: the file holds "
                                   f"{len(self.tables)}", self)  # fmt: skip
        exact = [t for t in self.tables
                 if query and query in (t.program, t.program.removeprefix("osu_"),
                                        _query(t.test), _query(t.title))]  # fmt: skip
        found = exact or [t for t in self.tables
                          if query and re.search(rf"(?<![\w-]){re.escape(query)}(?![\w-])",
                                                 _query(t.test))]  # fmt: skip
        if len(found) == 1:
            return found[0]
        if not found:
            raise TableChoiceError(f"no table named {name!r} in this file", self)
        numbers = ", ".join(str(t.number) for t in found)
        raise TableChoiceError(f"{name!r} names {counted(len(found), 'table')} ({numbers}): give its "
                               "number or a longer name", self, found)  # fmt: skip

    def choose(self, name: str | None = None) -> OsuTable:
        """The table named ``name``; without a name, the only table, or TableChoiceError
        when there are several (mixed tables are never read as one)."""
        if name is not None:
            return self.find(name)
        if len(self.tables) == 1:
            return self.tables[0]
        raise TableChoiceError(f"{counted(len(self.tables), 'benchmark table')} in this file: "
                               "choose one", self)  # fmt: skip


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def read_osu_log(text: str) -> OsuLog:
    """Every table of an OSU micro-benchmark log: each ``# Size ...`` header starts a
    table, named by the ``# OSU MPI ... Test`` title before it (every header up to the
    next title: OSU 7 prints a header for each datatype it runs, after a ``# Datatype:
    MPI_INT.`` line, under one title), which runs to the next title or header. Its rows
    are the lines that start with a number; the datatype line gives the tables after it
    their datatype, other ``#`` lines are OSU's comments; every other line (a job's
    prose, ``srun``/``mpirun`` lines, warnings) is skipped and counted. Raises FitError
    for a row that is not numbers (with its line) or when there is no table."""
    tables: list[OsuTable] = []
    table: OsuTable | None = None
    title = datatype = ""
    skipped, first_skipped = 0, None
    for lineno, line in enumerate(_lines(text), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            named = _OSU_TITLE.match(stripped)
            header = None if named else _OSU_HEADER.match(stripped)
            typed = None if named or header else _OSU_DATATYPE.match(stripped)
            if named:
                table, title, datatype = None, named.group("title"), ""
            elif header:
                sizeless = header.group("sizeless")
                table = OsuTable(len(tables) + 1, title, lineno,
                                 _osu_columns(sizeless or header.group("rest")),
                                 stripped, has_size=sizeless is None,
                                 datatype=datatype)  # fmt: skip
                tables.append(table)
            elif typed:
                datatype = typed.group("type")
            continue
        cells = stripped.split()
        # a row starts with a number; one that starts with a digit of any script or with a
        # digit separator ('٣', '1_000') is a row too, and refused as not a number
        if table is not None and (is_number(cells[0]) or cells[0][:1].isnumeric()):
            table.add_row(lineno, cells, stripped)
            continue
        skipped += 1
        if first_skipped is None:
            first_skipped = lineno
    if not tables:
        raise _NoTableError(skipped)
    return OsuLog(tables, skipped, first_skipped)


def read_osu(text: str, procs: int, table: str | None = None) -> Measurements:
    """The chosen table (see :meth:`OsuLog.choose`) of an OSU log as measurements at
    ``procs`` processes."""
    return read_osu_log(text).choose(table).measurements(procs)


def is_csv(text: str) -> bool:
    """Whether the first line that is not blank or ``#`` starts a ``procs,...`` CSV."""
    lines = (ln.strip() for ln in _lines(text))
    first = next((ln for ln in lines if ln and not ln.startswith("#")), "")
    return first.lower().startswith("procs")


def read_measurement_file(path: str | Path) -> str:
    """The text of a measurement file: UTF-8 (a BOM is dropped), at most
    :data:`MAX_MEASUREMENT_BYTES`. FitError if it is larger or not text; OSError as
    ``open`` raises it."""
    from parasol_core.base.limits import ValueRangeError, read_capped

    try:
        data = read_capped(path, MAX_MEASUREMENT_BYTES, "a measurement file (as for a counts file)")
    except ValueRangeError as e:
        raise MeasurementFileTooLarge(str(e).removeprefix(f"{path}: ")) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise FitError(f"line {line}: not UTF-8 text (byte {data[e.start]:#04x}); a measurement "
                       "file is a CSV or an OSU benchmark's text output") from None  # fmt: skip


def mixed_benchmarks(tables: Sequence[tuple[str, OsuTable]]) -> str | None:
    """Why tables must not be fitted together, or None: ``tables`` are (where from,
    table) pairs; tables of different benchmarks (osu_latency and osu_bw, osu_bcast and
    osu_allreduce, osu_latency and osu_put_latency, or one on the host and one on CUDA
    buffers) measure different things, and are never merged; nor are tables of one
    benchmark that state different datatypes (a table that states none, from an OSU
    before 7, goes with any)."""
    stated = {t.datatype for _, t in tables if t.datatype}
    if len({t.benchmark for _, t in tables}) <= 1 and len(stated) <= 1:
        return None
    by_type = len({t.benchmark for _, t in tables}) == 1
    shown = ", ".join(f"{_told_apart(t, by_type)} ({where})" for where, t in tables)
    return (f"Not fitted: the tables are of different {'datatypes' if by_type else 'benchmarks'} "
            f"({shown}). Fit one benchmark at a time: choose the same one in each file, or "
            "remove a file.")  # fmt: skip


def _told_apart(table: OsuTable, datatype: bool) -> str:
    """A table's name with what tells it from others of that name: its accelerator,
    and (``datatype``) its datatype."""
    parts = [p for p in (table.accelerator, table.datatype if datatype else "") if p]
    return table.name + (f" ({', '.join(parts)})" if parts else "")


def read_source(text: str) -> Measurements | OsuLog:
    """A measurement file's text: a CSV's measurements (first line ``procs,...``), or the
    tables of OSU output (one to be chosen, and a process count given)."""
    if is_csv(text):
        return read_csv(text)
    try:
        return read_osu_log(text)
    except _NoTableError as e:
        raise FitError("not a procs,bytes,seconds[,error] CSV nor OSU benchmark output "
                       f"(no '# Size  Latency (us)' or '# Size  Bandwidth (MB/s)' header{e.skipped})"
                       ) from None  # fmt: skip


def read_measurements(text: str, procs: int | None = None, table: str | None = None
                      ) -> Measurements:  # fmt: skip
    """A CSV or OSU output (``procs`` required; ``table`` chooses one of several
    tables, see :meth:`OsuLog.choose`)."""
    source = read_source(text)
    if isinstance(source, Measurements):
        if table is not None:
            raise FitError("a procs,bytes,seconds CSV has no tables to choose from")
        return source
    chosen = source.choose(table)
    if procs is None:
        raise FitError("OSU benchmark output: give the number of processes it ran on")
    return chosen.measurements(procs)
