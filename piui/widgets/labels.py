"""How windows name things and show values: shared by every window, so that none
imports another."""

from __future__ import annotations

from typing import Any

from parasol_core.model import Processor


def processor_title(proc: Processor | None) -> str:
    """The heading of the windows that edit one processor type; a switch's says that
    no estimate reads its timings or cache (docs/decisions.md, "Switches")."""
    if proc is None:
        return "No processor type selected"
    title = f"Processor {proc.id}: {proc.name or '(no name)'}"
    return title + " (a switch: runs no program, timings unused)" if proc.is_switch else title


TITLE_FIELDS = ("id", "name", "role")
"""The fields of a processor type its title shows (:func:`processor_title`)."""


def title_changed(change: Any, proc: Processor) -> bool:
    """Whether ``change`` moved what :func:`processor_title` shows of ``proc``."""
    return any(change.touches(proc, f) for f in TITLE_FIELDS)


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


def wrapped_tip(text: str) -> str:
    """``text`` as a tooltip that wraps: Qt shows a plain-text tooltip on one line,
    however long (the Basic block's interval explained itself off the screen's edge),
    and wraps rich text to a readable width."""
    import html

    return f"<p>{html.escape(text, quote=False)}</p>" if text else ""
