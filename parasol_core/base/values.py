"""Values a model holds that are more than a number: a measured time.

On the lowest floor (tests/test_layering.py): the model, the link store and the text
readers all build them. ``parasol_core.model`` re-exports :class:`Timing`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """A measured time in seconds: the mean and, optionally, the standard deviation.

    Immutable: an edit replaces the timing, which is how the writer sees what changed.
    """

    mean: float
    sd: float | None = None

    def scaled(self, factor: float) -> Timing:
        return Timing(self.mean * factor, None if self.sd is None else self.sd * factor)
