"""The error every topology operation raises when it cannot do what was asked."""

from __future__ import annotations


class RoutingError(ValueError):
    """A route that cannot be plotted, or a topology that cannot be routed at all.

    The message names what is wrong in the user's terms: the two processors no link
    connects, the processor number out of range, the shape a technique needs, the
    unknown technique name.
    """
