"""Group scalers: one factor per group of timings, composing by multiplication.

docs/decisions.md ("Group scalers"): a scaler multiplies every timing of its group, mean and
standard deviation alike, by its factor relative to the values when the scaler was last
at 1.0; scalers compose by multiplication, so global x2 then addition x0.5 leaves the
global additions as they were and halves the local ones.

A :class:`ScalerState` holds the factors of one processor type and the *reference*
timings they are relative to (the values with every factor at 1.0). :func:`move_factor`
computes the timings for a new factor from the reference, never from the previous step,
so a slider can be dragged back and forth any number of times without the values
drifting: returning a group to the factor it started from gives back the exact starting
values, and returning every factor to 1.0 gives back the exact reference.

A timing edited by other means while a factor is not 1.0 (say, typed in the individual
instructions window) no longer matches its reference; the next move re-bases it, taking
the edited value as already scaled by the current factors.

Qt-free: the editor keeps one state per processor type and stores it with its undo
commands.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from parasol_core.base.params import BY_NAME, GROUPS
from parasol_core.model import Timing

__all__ = [
    "FACTOR_MAX",
    "FACTOR_MIN",
    "ScalerState",
    "move_factor",
    "reset_factors",
]

FACTOR_MIN = 0.1
FACTOR_MAX = 10.0

# Each timing's groups in the fixed order of GROUPS, so that the product of its factors
# is always computed in the same order and comes out bit for bit the same.
_GROUP_ORDER = {group: i for i, group in enumerate(GROUPS)}
_GROUPS_OF: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        name: tuple(sorted(param.groups, key=_GROUP_ORDER.__getitem__))
        for name, param in BY_NAME.items()
    }
)


def _check_factor(factor: float) -> None:
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise ValueError(f"a scale factor must be a number, not {factor!r}")
    if not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"a scale factor must be a positive number, not {factor!r}")


@dataclass(frozen=True)
class ScalerState:
    """The group factors of one processor type and the timings they are relative to.

    ``factors`` holds only the groups whose factor is not 1.0; ``reference`` the timing
    values with every factor at 1.0, for the timings a scaler has touched.
    Immutable, so an undo command can keep a state as it was.
    """

    factors: Mapping[str, float] = field(default_factory=dict)
    reference: Mapping[str, Timing] = field(default_factory=dict)

    def factor(self, group: str) -> float:
        return self.factors.get(group, 1.0)

    def product(self, name: str) -> float:
        """The combined factor on timing ``name``: the product of its groups' factors."""
        return _product(self.factors, name)

    @property
    def is_neutral(self) -> bool:
        """True when every factor is 1.0."""
        return not self.factors


def _product(factors: Mapping[str, float], name: str) -> float:
    p = 1.0
    for group in _GROUPS_OF.get(name, ()):
        f = factors.get(group)
        if f is not None:
            p *= f
    return p


def _at_one(timing: Timing, product: float) -> Timing:
    """The value ``timing`` had with every factor at 1.0, if ``product`` made it."""
    return timing if product == 1.0 else timing.scaled(1.0 / product)


def _scaled(reference: Timing, product: float) -> Timing:
    return reference if product == 1.0 else reference.scaled(product)


def move_factor(
    timings: Mapping[str, Timing], state: ScalerState, group: str, factor: float
) -> tuple[dict[str, Timing], ScalerState]:
    """Move ``group``'s factor to ``factor``.

    ``timings`` and ``state`` are those before the move; during a slider drag, pass the
    ones from the start of the drag every time. Returns the new values of the group's
    timings that ``timings`` defines (timings it does not define are left alone) and
    the new state. Moving a group to the factor it has returns the timings unchanged.
    """
    if group not in GROUPS:
        raise ValueError(f"unknown group '{group}' (known: {', '.join(GROUPS)})")
    _check_factor(factor)
    factor = float(factor)
    old = state.factor(group)
    factors = dict(state.factors)
    if factor == 1.0:
        factors.pop(group, None)
    else:
        factors[group] = factor
    reference = dict(state.reference)
    new: dict[str, Timing] = {}
    for name in GROUPS[group].members:
        timing = timings.get(name)
        if timing is None:
            continue
        before = _product(state.factors, name)
        ref = reference.get(name)
        if ref is None or _scaled(ref, before) != timing:
            # never scaled, or edited by other means since: re-base on its present value
            ref = _at_one(timing, before)
            reference[name] = ref
        new[name] = timing if factor == old else _scaled(ref, _product(factors, name))
    return new, ScalerState(factors, reference)


def reset_factors(
    timings: Mapping[str, Timing], state: ScalerState
) -> tuple[dict[str, Timing], ScalerState]:
    """Every factor back to 1.0 (the editor's Cancel): the new values of the timings
    that change, and the neutral state. Timings scaled only by the scalers get their
    reference values back exactly; one edited by other means meanwhile is divided by
    the factors that were in force when it was edited."""
    new: dict[str, Timing] = {}
    for name, timing in timings.items():
        before = state.product(name)
        if before == 1.0:
            continue
        ref = state.reference.get(name)
        if ref is not None and _scaled(ref, before) == timing:
            new[name] = ref
        else:
            new[name] = _at_one(timing, before)
    return new, ScalerState()
