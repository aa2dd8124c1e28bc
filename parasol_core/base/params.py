"""The 150 processor timing parameters of a PARASOL I machine model, as data.

Every processor description in a model file times the same 150 Fortran-level
instructions (appendix A's ``timeparams``, explained in appendix B of the 1994
report). This module says what each one means and which groups it belongs to, so
that the parser, the validator and the editor's group scalers all work from one list.

Where the report contradicts itself the decisions in docs/decisions.md ("Timing
parameter names") apply:

* appendix A lists ``aintd`` twice; the second one is ``anintd``;
* appendix A's ``sqrti`` is the real square root: ``sqrtr`` is canonical and
  ``sqrti`` an alias, read with a warning;
* ``dln`` (double local multiplication) is canonical as in appendix A, although the
  naming scheme would give ``dlm``; ``dlm`` is an alias, read with a warning;
* appendix B's misprints ``aintnd``, the second ``aintr`` and ``sqrttr`` stand for
  ``anintd``, ``anintr`` and ``sqrtr``.
"""

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "ALIASES",
    "BY_NAME",
    "GROUPS",
    "PARAMS",
    "Group",
    "Kind",
    "Locality",
    "NumericType",
    "Operation",
    "TimingParam",
    "resolve_name",
]


class Kind(enum.Enum):
    """The five families of timing parameters."""

    ARITHMETIC = "arithmetic"
    LOGIC_COMPARE = "logic and compare"
    FLOW_CONTROL = "flow control"
    ARRAY_INDEX = "array indexing"
    INTRINSIC = "intrinsic functions"


class NumericType(enum.Enum):
    """Fortran numeric types. For an intrinsic function this is the argument type."""

    INTEGER = "integer"
    REAL = "real"
    DOUBLE = "double"
    COMPLEX = "complex"


class Locality(enum.Enum):
    """Whether the operands are globally or locally defined variables."""

    GLOBAL = "global"
    LOCAL = "local"


class Operation(enum.Enum):
    """The seven infix operations of the arithmetic parameters (report table 2.1)."""

    ADDITION = "addition"  # subtraction is assumed to cost the same
    MULTIPLICATION = "multiplication"
    DIVISION = "division"
    SIMPLE_POWER = "simple power"  # ** with a trivial (small integer) exponent
    COMPLEX_POWER = "complex power"  # ** with a non-trivial exponent
    STORE = "store"  # assignment
    MEMORY_TRANSFER = "memory transfer"


@dataclass(frozen=True)
class TimingParam:
    """One timing parameter of a processor description."""

    name: str
    description: str
    kind: Kind
    numeric_type: NumericType | None
    locality: Locality | None
    operation: Operation | None
    groups: frozenset[str]


@dataclass(frozen=True)
class Group:
    """A set of timing parameters that a group scaler acts on."""

    id: str
    label: str
    members: tuple[str, ...]


# --- The data -----------------------------------------------------------------

# Appendix A's timeparams list with the fixes above; this is the order of PARAMS.
# Kept as text so that it can be compared with the report line by line.
_APPENDIX_A_TEXT = """
absc absd absi absr aimage aintd aintr anintd anintr argld arr1 arr2 arr3 arr4 arr5
arr6 arr7 asind asinr atand atanr cga cgd cge cgm cgs cgt cgx chari cla cld cle clm
cls clt clx cmplx2d cmplx2i cmplx2r cmplxc cmplxd cmplxi cmplxr conjgc dblec dbled
dblei dbler dga dgd dge dgm dgs dgt dgx dimd dimi dimr dla dld dle dln dls dlt dlx
dprodr expc expd expr gcom goto iga igd ige igm igs igt igx ila ild ile ilm ils ilt
ilx intc intd inti intr lga lgcc lgdc lgic lgrc lla llcc lldc llic llrc log10d log10r
logc logd logr loopi1 loopin loopoh1 loopohn maxd maxi maxr modd modi modr nintd nintr
pcall realc reald reali realr rga rgd rge rgm rgs rgt rgx rla rld rle rlm rls rlt rlx
signd signi signr sinc sind sinhd sinhr sinr sqrtc sqrtd sqrtr tand tanhd tanhr tanr
"""
_ORDER: list[str] = _APPENDIX_A_TEXT.split()

# Arithmetic mnemonics are TYPE LOCALITY OPERATION, one letter each; the description
# is the three words spelled out ("iga" = "integer global addition").
_TYPE_LETTERS: dict[str, NumericType] = {
    "i": NumericType.INTEGER,
    "r": NumericType.REAL,
    "d": NumericType.DOUBLE,
    "c": NumericType.COMPLEX,
}
_LOCALITY_LETTERS: dict[str, Locality] = {"g": Locality.GLOBAL, "l": Locality.LOCAL}
_OPERATION_LETTERS: dict[str, Operation] = {
    "a": Operation.ADDITION,
    "m": Operation.MULTIPLICATION,
    "d": Operation.DIVISION,
    "e": Operation.SIMPLE_POWER,
    "x": Operation.COMPLEX_POWER,
    "s": Operation.STORE,
    "t": Operation.MEMORY_TRANSFER,
}
# The one arithmetic name that breaks the scheme: the report spells "dlm" as "dln".
_IRREGULAR_ARITHMETIC = {"dlm": "dln"}

_I = NumericType.INTEGER
_R = NumericType.REAL
_D = NumericType.DOUBLE
_C = NumericType.COMPLEX
_GLOBAL = Locality.GLOBAL
_LOCAL = Locality.LOCAL

# name, locality, compared type (None for logical and/or), description
_LOGIC_COMPARE: tuple[tuple[str, Locality, NumericType | None, str], ...] = (
    ("lga", _GLOBAL, None, "global logic and/or"),
    ("lgcc", _GLOBAL, _C, "global complex compare"),
    ("lgdc", _GLOBAL, _D, "global double compare"),
    ("lgic", _GLOBAL, _I, "global integer compare"),
    ("lgrc", _GLOBAL, _R, "global real compare"),
    ("lla", _LOCAL, None, "local logic and/or"),
    ("llcc", _LOCAL, _C, "local complex compare"),
    ("lldc", _LOCAL, _D, "local double compare"),
    ("llic", _LOCAL, _I, "local integer compare"),
    ("llrc", _LOCAL, _R, "local real compare"),
)

# name, description
_FLOW_CONTROL: tuple[tuple[str, str], ...] = (
    ("goto", "unconditional go to"),
    ("gcom", "computed go to"),
    ("pcall", "proc call overhead"),
    ("argld", "procedure call argument load (per byte)"),
    ("loopi1", "one time loop initialization"),
    ("loopin", "n times loop increment"),
    ("loopoh1", "one time loop overhead"),
    ("loopohn", "n times loop overhead"),
)

# name, description
_ARRAY_INDEX: tuple[tuple[str, str], ...] = (
    ("arr1", "one dim array index"),
    ("arr2", "two dim array index"),
    ("arr3", "three dim array index"),
    ("arr4", "four dim array index"),
    ("arr5", "five dim array index"),
    ("arr6", "six dim array index"),
    ("arr7", "seven dim array index"),
)

# name, argument type, description. The last letter of the name gives the argument
# type (c, d, r, i), except for "aimage", which takes a complex.
_INTRINSICS: tuple[tuple[str, NumericType, str], ...] = (
    ("absc", _C, "complex abs"),
    ("absd", _D, "double abs"),
    ("absi", _I, "integer abs"),
    ("absr", _R, "real abs"),
    ("aimage", _C, "imaginary part of complex number"),
    ("aintd", _D, "double truncate"),
    ("aintr", _R, "real truncate"),
    ("anintd", _D, "double nearest whole number"),
    ("anintr", _R, "real nearest whole number"),
    ("asind", _D, "double arcsine"),
    ("asinr", _R, "real arcsine"),
    ("atand", _D, "double arctangent"),
    ("atanr", _R, "real arctangent"),
    ("chari", _I, "integer to character"),
    ("cmplx2d", _D, "two doubles to one complex"),
    ("cmplx2i", _I, "two integers to one complex"),
    ("cmplx2r", _R, "two reals to one complex"),
    ("cmplxc", _C, "complex to complex"),
    ("cmplxd", _D, "double to real part of complex"),
    ("cmplxi", _I, "integer to real part of complex"),
    ("cmplxr", _R, "real to real part of complex"),
    ("conjgc", _C, "complex conjugate"),
    ("dblec", _C, "real part of complex to double"),
    ("dbled", _D, "double to double"),
    ("dblei", _I, "integer to double"),
    ("dbler", _R, "real to double"),
    ("dimd", _D, "double positive difference"),
    ("dimi", _I, "integer positive difference"),
    ("dimr", _R, "real positive difference"),
    ("dprodr", _R, "double multiplication of two reals"),
    ("expc", _C, "complex exponent"),
    ("expd", _D, "double exponent"),
    ("expr", _R, "real exponent"),
    ("intc", _C, "real part of complex to integer"),
    ("intd", _D, "double to integer"),
    ("inti", _I, "integer to integer"),
    ("intr", _R, "real to integer"),
    ("log10d", _D, "double log10"),
    ("log10r", _R, "real log10"),
    ("logc", _C, "complex log"),
    ("logd", _D, "double log"),
    ("logr", _R, "real log"),
    ("maxd", _D, "double max/min"),
    ("maxi", _I, "integer max/min"),
    ("maxr", _R, "real max/min"),
    ("modd", _D, "double mod"),
    ("modi", _I, "integer mod"),
    ("modr", _R, "real mod"),
    ("nintd", _D, "double to nearest integer"),
    ("nintr", _R, "real to nearest integer"),
    ("realc", _C, "real part of complex to real"),
    ("reald", _D, "double to real"),
    ("reali", _I, "integer to real"),
    ("realr", _R, "real to real"),
    ("signd", _D, "double sign"),
    ("signi", _I, "integer sign"),
    ("signr", _R, "real sign"),
    ("sinc", _C, "complex sine"),
    ("sind", _D, "double sine"),
    ("sinhd", _D, "double hyperbolic sine"),
    ("sinhr", _R, "real hyperbolic sine"),
    ("sinr", _R, "real sine"),
    ("sqrtc", _C, "complex sqrt"),
    ("sqrtd", _D, "double sqrt"),
    ("sqrtr", _R, "real sqrt"),
    ("tand", _D, "double tangent"),
    ("tanhd", _D, "double hyperbolic tangent"),
    ("tanhr", _R, "real hyperbolic tangent"),
    ("tanr", _R, "real tangent"),
)

# alias -> (canonical name, what the alias is taken to mean)
_ALIAS_TABLE: dict[str, tuple[str, str]] = {
    "sqrti": ("sqrtr", "real square root"),
    "dlm": ("dln", "double local multiplication"),
}

# Group id and GUI label, in display order. Operation and numeric type groups are
# keyed by the enum member so that membership can be looked up directly.
_KIND_GROUPS: dict[Kind, tuple[str, str]] = {
    Kind.LOGIC_COMPARE: ("logic", "Logic and compare"),
    Kind.FLOW_CONTROL: ("flow", "Flow control"),
    Kind.ARRAY_INDEX: ("array", "Array indexing"),
    Kind.INTRINSIC: ("intrinsic", "Intrinsic functions"),
}
_LOCALITY_GROUPS: dict[Locality, tuple[str, str]] = {
    Locality.GLOBAL: ("global", "Global variables"),
    Locality.LOCAL: ("local", "Local variables"),
}
_OPERATION_GROUPS: dict[Operation, tuple[str, str]] = {
    Operation.ADDITION: ("addition", "Addition"),
    Operation.MULTIPLICATION: ("multiplication", "Multiplication"),
    Operation.DIVISION: ("division", "Division"),
    Operation.SIMPLE_POWER: ("simple_power", "Simple power"),
    Operation.COMPLEX_POWER: ("complex_power", "Complex power"),
    Operation.STORE: ("store", "Store"),
    Operation.MEMORY_TRANSFER: ("memory_transfer", "Memory transfer"),
}
_TYPE_GROUPS: dict[NumericType, tuple[str, str]] = {
    NumericType.INTEGER: ("integer", "Integer"),
    NumericType.REAL: ("real", "Real"),
    NumericType.DOUBLE: ("double", "Double precision"),
    NumericType.COMPLEX: ("complex", "Complex"),
}
_GROUP_ORDER: tuple[tuple[str, str], ...] = (
    ("all", "All timings"),
    *_LOCALITY_GROUPS.values(),
    ("arithmetic", "Arithmetic"),
    *_OPERATION_GROUPS.values(),
    *_TYPE_GROUPS.values(),
    *_KIND_GROUPS.values(),
)


# --- Building the public tables -------------------------------------------------


def _group_ids(
    kind: Kind,
    numeric_type: NumericType | None,
    locality: Locality | None,
    operation: Operation | None,
) -> frozenset[str]:
    ids = {"all"}
    if kind is Kind.ARITHMETIC:
        ids.add("arithmetic")
    else:
        ids.add(_KIND_GROUPS[kind][0])
    if numeric_type is not None:
        ids.add(_TYPE_GROUPS[numeric_type][0])
    if locality is not None:
        ids.add(_LOCALITY_GROUPS[locality][0])
    if operation is not None:
        ids.add(_OPERATION_GROUPS[operation][0])
    return frozenset(ids)


def _param(
    name: str,
    description: str,
    kind: Kind,
    numeric_type: NumericType | None = None,
    locality: Locality | None = None,
    operation: Operation | None = None,
) -> TimingParam:
    return TimingParam(
        name=name,
        description=description,
        kind=kind,
        numeric_type=numeric_type,
        locality=locality,
        operation=operation,
        groups=_group_ids(kind, numeric_type, locality, operation),
    )


def _build_params() -> tuple[TimingParam, ...]:
    found: dict[str, TimingParam] = {}

    def add(param: TimingParam) -> None:
        if param.name in found:
            raise AssertionError(f"timing parameter {param.name!r} defined twice")
        found[param.name] = param

    for t, numeric_type in _TYPE_LETTERS.items():
        for loc, locality in _LOCALITY_LETTERS.items():
            for op, operation in _OPERATION_LETTERS.items():
                name = _IRREGULAR_ARITHMETIC.get(t + loc + op, t + loc + op)
                description = f"{numeric_type.value} {locality.value} {operation.value}"
                add(
                    _param(
                        name,
                        description,
                        Kind.ARITHMETIC,
                        numeric_type,
                        locality,
                        operation,
                    )
                )
    for name, locality, numeric_type, description in _LOGIC_COMPARE:
        add(_param(name, description, Kind.LOGIC_COMPARE, numeric_type, locality))
    for name, description in _FLOW_CONTROL:
        add(_param(name, description, Kind.FLOW_CONTROL))
    for name, description in _ARRAY_INDEX:
        add(_param(name, description, Kind.ARRAY_INDEX))
    for name, numeric_type, description in _INTRINSICS:
        add(_param(name, description, Kind.INTRINSIC, numeric_type))

    if sorted(found) != sorted(_ORDER):
        raise AssertionError("timing parameter tables disagree with appendix A's list")
    return tuple(found[name] for name in _ORDER)


PARAMS: tuple[TimingParam, ...] = _build_params()
"""All 150 timing parameters, in the order of appendix A's ``timeparams``."""

BY_NAME: Mapping[str, TimingParam] = MappingProxyType({p.name: p for p in PARAMS})
"""Canonical name -> parameter. Aliases are not keys; use :func:`resolve_name`."""

ALIASES: Mapping[str, str] = MappingProxyType(
    {alias: canonical for alias, (canonical, _) in _ALIAS_TABLE.items()}
)
"""Accepted non-canonical spelling -> canonical name."""

GROUPS: Mapping[str, Group] = MappingProxyType(
    {
        group_id: Group(
            group_id,
            label,
            tuple(p.name for p in PARAMS if group_id in p.groups),
        )
        for group_id, label in _GROUP_ORDER
    }
)
"""Group id -> group, in display order (all, global, local, arithmetic, the seven
operations, the four numeric types, logic, flow, array, intrinsic)."""


def resolve_name(name: str) -> tuple[str | None, str | None]:
    """Map a timing name as written in a model file to its canonical name.

    Returns ``(canonical, warning)``: ``warning`` is None for a canonical name and
    says how an alias is read otherwise; an unknown name gives ``(None, None)``.
    Names are case-sensitive, as the file format's keywords are lower case.
    """
    if name in BY_NAME:
        return name, None
    if name in _ALIAS_TABLE:
        canonical, meaning = _ALIAS_TABLE[name]
        return canonical, f"{name!r} is read as {canonical!r} ({meaning})"
    return None, None
