"""The wording of syntax errors: what was found where, in the words of the file format,
and the line shown under a message with a caret at the place."""

from __future__ import annotations

from parasol_core.base.source import counting_text
from parasol_core.base.words import quoted


def show(text: str) -> str:
    """A token's text as a message shows it."""
    if text in ("\n", "\r\n", "\r"):
        return "end of line"
    if text == "\x0b":
        return "a vertical tab"
    if text == ";":
        return "';' (a line end)"
    if text.isprintable():
        return repr(text)
    return "character " + repr(text)


def describe_found(text: str, pos: int) -> tuple[str, str]:
    """(the text found at ``pos``, as a message shows it): a whole word, an end of line
    or one character."""
    found = text[pos]
    if found.isalpha() or found == "_":
        end = pos
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        found = text[pos:end]
    elif found == "\r" and text.startswith("\r\n", pos):
        found = "\r\n"
    return found, show(found[:40])


def context(text: str, pos: int) -> str:
    """The line holding ``pos`` and a caret under it."""
    text = counting_text(text)  # a lone \r or vertical tab ends the line shown too
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    if end < 0:
        end = len(text)
    line = text[start:end][:200]
    return line + "\n" + " " * min(pos - start, 200) + "^"


def unknown_name(found: str) -> str:
    return (
        f"unknown name {quoted(found)} in an expression: expected a number, a reference "
        "such as pt(1).iga, a function such as sqrt(...), or '('"
    )


def or_list(items: tuple[str, ...]) -> str:
    """``a, b or c`` (eight at most)."""
    items = tuple(items)
    if len(items) > 8:
        items = items[:8] + ("...",)
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]
