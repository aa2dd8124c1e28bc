"""What a plot can draw: the one rule for every plot PIUI draws with pyqtgraph (the
run-time systems and the fit dialog's costs, the combinations chart, the measure and
sweep dialogs).

pyqtgraph's view box keeps a range within +-1e307, and the padding it adds to the range
it fits to its items overflows to infinity near 1e308 ("Cannot set range [-inf, inf]":
the plot stops redrawing and every later redraw fails the same way). A model may hold
such a value (an expression of 1e308 s is finite and legal), so a value past
:data:`DRAWABLE` is left out of a plot as NaN is, and the window says how many were.

No Qt here: the combinations chart imports this before pyqtgraph is loaded.
"""

from __future__ import annotations

import math

DRAWABLE = 1e300


def drawable(v: object, log_scale: bool = False) -> bool:
    """Whether a value is a number a plot draws: finite, within +-:data:`DRAWABLE`, and
    positive on a log scale."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return False
    if abs(v) > DRAWABLE:
        return False
    return v > 0 if log_scale else True


def too_large(v: object) -> bool:
    """A finite number a plot cannot draw: past +-:data:`DRAWABLE`."""
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and abs(v) > DRAWABLE)  # fmt: skip


def too_large_note(count: int) -> str:
    """What a window says of the values it left out for their size."""
    return f"{count} value{'s' if count != 1 else ''} past ±1e300 not drawn" if count else ""
