"""How windows name things and show values: shared by every window, so that none
imports another."""

from __future__ import annotations

from parasol_core.model import Processor


def processor_title(proc: Processor | None) -> str:
    if proc is None:
        return "No processor type selected"
    return f"Processor {proc.id}: {proc.name or '(no name)'}"


def value_text(value: object) -> str:
    """A derived value for display: a number, or the error message in its place."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    message = getattr(value, "message", None)
    return f"error: {message}" if message else "—"
