"""The eight categories in which the individual-instructions windows show the 150
timing parameters (report section 3.2.1): four numeric types of arithmetic, logic and
compare, flow control, array indexing and intrinsic functions. Each parameter is in
exactly one category; within a category, sections by locality where that applies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parasol_core.base.params import PARAMS, Kind, Locality, NumericType, Operation, TimingParam


@dataclass(frozen=True)
class Category:
    """A category of the chooser: its parameters, in sections with an optional heading."""

    slug: str
    title: str
    sections: tuple[tuple[str | None, tuple[str, ...]], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for _, names in self.sections for n in names)


_TYPE_ORDER = [None, NumericType.INTEGER, NumericType.REAL, NumericType.DOUBLE,
               NumericType.COMPLEX]  # fmt: skip
_OPERATION_ORDER = list(Operation)
_FLOW_ORDER = ("goto", "gcom", "pcall", "argld", "loopi1", "loopin", "loopoh1", "loopohn")


def _by_locality(
    kind: Kind, numeric_type: NumericType | None, key: Callable[[TimingParam], int]
) -> tuple:
    sections = []
    for locality in Locality:
        names = sorted((p for p in PARAMS if p.kind is kind and p.locality is locality
                        and (numeric_type is None or p.numeric_type is numeric_type)),
                       key=key)  # fmt: skip
        sections.append((f"{locality.value.capitalize()} variables",
                         tuple(p.name for p in names)))  # fmt: skip
    return tuple(sections)


def _categories() -> tuple[Category, ...]:
    out = []
    for numeric_type in (NumericType.INTEGER, NumericType.REAL, NumericType.DOUBLE,
                         NumericType.COMPLEX):  # fmt: skip
        out.append(Category(
            f"{numeric_type.value}-arithmetic", f"{numeric_type.value.capitalize()} arithmetic",
            _by_locality(Kind.ARITHMETIC, numeric_type,
                         lambda p: _OPERATION_ORDER.index(p.operation)),
        ))  # fmt: skip
    out.append(Category("logic-compare", "Logic and compare",
                        _by_locality(Kind.LOGIC_COMPARE, None,
                                     lambda p: _TYPE_ORDER.index(p.numeric_type))))  # fmt: skip
    out.append(Category("flow-control", "Flow control", ((None, _FLOW_ORDER),)))
    out.append(Category("array-indexing", "Array indexing",
                        ((None, tuple(p.name for p in PARAMS
                                      if p.kind is Kind.ARRAY_INDEX)),)))  # fmt: skip
    out.append(Category("intrinsic-functions", "Intrinsic functions",
                        ((None, tuple(p.name for p in PARAMS
                                      if p.kind is Kind.INTRINSIC)),)))  # fmt: skip
    return tuple(out)


CATEGORIES: tuple[Category, ...] = _categories()
"""The chooser's categories; together they hold each of the 150 parameters once."""
