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
simplest, ``c + d * bytes``, comes first).

Inputs: a CSV ``procs,bytes,seconds[,error]`` (:func:`read_csv`) or the text output of an
OSU micro-benchmark (``# Size  Latency (us)`` tables, :func:`read_osu`), in bytes and
microseconds, with the process count given separately. Everything here is plain numpy.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

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
    "read_measurements",
    "gamma_q",
]

Array = np.ndarray


class FitError(ValueError):
    """Measurements that cannot be read or fitted (with a message for the user)."""


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
    """One equation form: ``c + s * start + d * data`` (``start`` None: no start term)."""

    start: str | None
    data: str

    def __str__(self) -> str:
        s = f" + s*{self.start}" if self.start else ""
        return f"c{s} + d*{self.data}"

    @property
    def names(self) -> tuple[str, ...]:
        return ("c", "s", "d") if self.start else ("c", "d")

    def columns(self, procs: Array, nbytes: Array) -> list[Array]:
        cols = [np.ones_like(procs)]
        if self.start:
            cols.append(START_FUNCTIONS[self.start][0](procs))
        cols.append(DATA_FUNCTIONS[self.data][0](procs, nbytes))
        return cols

    def terms(self) -> list[str]:
        """The expression text each coefficient multiplies ("" for the constant)."""
        out = [""]
        if self.start:
            out.append(START_FUNCTIONS[self.start][1])
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


def forms(single_procs: bool = False) -> list[Form]:
    """Every form the thesis lists (without the start term for a single process count)."""
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
    single = len(np.unique(m.procs)) == 1
    out: list[Candidate] = []
    for form in forms(single):
        cand = _fit_form(form, m, sigma, weighted)
        if cand is not None:
            out.append(cand)
    if not out:
        raise FitError(f"{len(m)} measurements are too few to fit (or all at one point)")
    order = {f: i for i, f in enumerate(forms(single))}
    out.sort(key=lambda c: (_rank_chi2(c.chi2), order[c.form]))
    return out


def _rank_chi2(chi2: float) -> float:
    # equal forms (a single process count) differ only by rounding: keep the simplest
    return float(f"{chi2:.9g}")


def _fit_form(form: Form, m: Measurements, sigma: Array, weighted: bool) -> Candidate | None:
    cols = form.columns(m.procs, m.bytes)
    a = np.column_stack(cols) / sigma[:, None]
    b = m.seconds / sigma
    n, k = a.shape
    if n < k:
        return None
    scale = np.linalg.norm(a, axis=0)
    if np.any(scale == 0):
        return None
    u, w, vt = np.linalg.svd(a / scale, full_matrices=False)
    if w[-1] <= w[0] * 1e-10:  # a column is a combination of the others
        return None
    coef = (vt.T @ ((u.T @ b) / w)) / scale
    cov = (vt.T / w**2) @ vt / np.outer(scale, scale)
    resid = b - a @ coef
    chi2 = float(resid @ resid)
    dof = n - k
    errs = np.sqrt(np.diag(cov))
    q: float | None = None
    if weighted:
        q = gamma_q(dof / 2, chi2 / 2) if dof > 0 else 1.0
    elif dof > 0:
        errs = errs * math.sqrt(chi2 / dof)
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
            raise FitError(f"line {i}: expected {len(header)} values, found {len(row)}")
        try:
            values.append([float(v) for v in row])
        except ValueError:
            raise FitError(f"line {i}: not a number in {','.join(row)}") from None
    if not values:
        raise FitError("the CSV file has a header and no measurements")
    arr = np.array(values)
    return Measurements(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3] if has_error else None)


_OSU_HEADER = re.compile(r"^#\s*Size\b(.*)$", re.IGNORECASE)
_OSU_COLUMN = re.compile(r"(Avg|Min|Max)?\s*Latency\s*\(\s*us\s*\)|Iterations|\S+",
                         re.IGNORECASE)  # fmt: skip


def _osu_columns(rest: str) -> list[str]:
    names = []
    for match in _OSU_COLUMN.finditer(rest):
        token = match.group(0)
        if "latency" in token.lower():
            names.append((match.group(1) or "avg").lower())
        else:
            names.append(token.lower())
    return names


def read_osu(text: str, procs: int) -> Measurements:
    """The output of an OSU latency-type benchmark (``osu_latency``, ``osu_bcast``, ...)
    run on ``procs`` processes: ``# Size  Latency (us)`` (or ``Avg Latency(us)``, with
    ``Min``/``Max`` columns under ``-f``, whose half-range then serves as the error)."""
    if procs < 1:
        raise FitError("the process count must be at least 1")
    columns: list[str] | None = None
    sizes: list[float] = []
    times: list[float] = []
    spread: list[float] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        header = _OSU_HEADER.match(stripped)
        if header:
            columns = _osu_columns(header.group(1))
            if "avg" not in columns:
                raise FitError(f"line {lineno}: not a latency table ({stripped[1:].strip()})")
            continue
        if stripped.startswith("#"):
            continue
        if columns is None:
            raise FitError(f"line {lineno}: a number before the '# Size  Latency (us)' header")
        cells = stripped.split()
        try:
            size = float(cells[0])
            row = {name: float(v) for name, v in zip(columns, cells[1:], strict=False)}
        except ValueError:
            raise FitError(f"line {lineno}: not a number in {stripped!r}") from None
        if "avg" not in row:
            raise FitError(f"line {lineno}: no latency in {stripped!r}")
        sizes.append(size)
        times.append(row["avg"] * 1e-6)
        if "min" in row and "max" in row:
            spread.append((row["max"] - row["min"]) / 2 * 1e-6)
    if not times:
        raise FitError("no '# Size  Latency (us)' table with measurements found")
    error = None
    if len(spread) == len(times) and all(s > 0 for s in spread):
        error = np.array(spread)
    return Measurements(np.full(len(times), float(procs)), np.array(sizes), np.array(times),
                        error)  # fmt: skip


def read_measurements(text: str, procs: int | None = None) -> Measurements:
    """A CSV (first line ``procs,...``) or OSU output (``procs`` required)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if not ln.startswith("#")), "")
    if first.lower().startswith("procs"):
        return read_csv(text)
    if any(_OSU_HEADER.match(ln) for ln in lines):
        if procs is None:
            raise FitError("OSU benchmark output: give the number of processes it ran on")
        return read_osu(text, procs)
    raise FitError("not a procs,bytes,seconds[,error] CSV nor OSU benchmark output "
                   "(no '# Size  Latency (us)' header)")  # fmt: skip
