"""The syntax-error messages: what lark's failures are turned into (where, what was found,
what was expected, in the words of the file format rather than the grammar's)."""

from __future__ import annotations

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from parasol_core.syntax.diagnostics import ModelSyntaxError
from parasol_core.syntax.source import counting_text, position

_TERMINAL_NAMES = {
    "NAME": "a name",
    "INT": "an integer",
    "FLOAT": "a number",
    "TNUM": "a number",
    "STRING": 'a string in double quotes ("...")',
    "NL": "the end of the line",
    "FUNC": "a function",
    "REFPREFIX": "a reference",
    "SHAPE": "a shape comment",
    "$END": "the end of the file",
}


_SECTION_WORDS: dict[str, set[str]] = {
    "machine": {"begin", "id", "name", "processors", "topologies"},
    "processor": {"begin", "id", "name"},
    "cache": {"size", "speed", "smallloopspeedup"},
    "topology": {"begin", "id", "name", "setup", "routing", "processors", "links"},
    "virtual": {"begin", "id", "name", "setup", "routing", "processors"},
    "link": {"id", "latency", "speed", "connect"},
    "linklist": {"begin"},
    "procid": {"p"},
    "mapping": {"map"},
}
_KEYWORDS = {f"'{w}'" for words in _SECTION_WORDS.values() for w in words}


def _for_section(expected: tuple[str, ...], section: str | None) -> tuple[str, ...]:
    """LALR merges the states after a definition, so its expected set mixes the words of
    several sections; keep the keywords of the section the error is in."""
    if section not in _SECTION_WORDS:
        return expected
    allowed = {f"'{w}'" for w in _SECTION_WORDS[section]}
    return tuple(e for e in expected if e not in _KEYWORDS or e in allowed)


def _describe_terminal(name: str, parser: Lark) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    if name == "SMALLLOOPSPEEDUP":
        return "'smallloopspeedup'"
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        return f"'{pattern.value}'"
    return name.lower()


def _expected(names: set[str] | frozenset[str] | None, parser: Lark) -> tuple[str, ...]:
    if not names:
        return ()
    described = {_describe_terminal(n, parser) for n in names}
    return tuple(sorted(described))


def _show(text: str) -> str:
    if text in ("\n", "\r\n", "\r"):
        return "end of line"
    if text == "\x0b":
        return "a vertical tab"
    if text == ";":
        return "';' (a line end)"
    if text.isprintable():
        return repr(text)
    return "character " + repr(text)


def _context(text: str, pos: int) -> str:
    text = counting_text(text)  # a lone \r or vertical tab ends the line shown too
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    if end < 0:
        end = len(text)
    line = text[start:end][:200]
    return line + "\n" + " " * min(pos - start, 200) + "^"


def _error_at(message: str, tok: Token, text: str, file: str | None) -> ModelSyntaxError:
    return ModelSyntaxError(
        message, tok.line, tok.column, text=str(tok)[:80], file=file,
        context=_context(text, tok.start_pos),
    )  # fmt: skip


def _open_sections(e: UnexpectedInput) -> list[tuple[str, int]]:
    """The `begin X` sections still open where the error happened, innermost last."""
    state = getattr(e, "state", None)
    if state is None:
        ip = getattr(e, "interactive_parser", None)
        state = getattr(ip, "parser_state", None)
    stack = getattr(state, "value_stack", None) or []
    opened: list[tuple[str, int]] = []
    for i, v in enumerate(stack):
        if not isinstance(v, Token):
            continue
        # a section parsed to its end but not reduced yet is on the stack as well
        if v.type == "BEGIN" and i + 1 < len(stack) and isinstance(stack[i + 1], Token):
            opened.append((str(stack[i + 1]), v.line))
        elif v.type == "END" and opened:
            opened.pop()
    return opened


def _syntax_error(
    e: UnexpectedInput, text: str, parser: Lark, file: str | None, what: str = "file"
) -> ModelSyntaxError:
    pos = getattr(e, "pos_in_stream", None) or 0
    line, column = getattr(e, "line", 1) or 1, getattr(e, "column", 1) or 1
    opened = _open_sections(e)
    section = opened[-1][0] if opened else None
    if isinstance(e, UnexpectedCharacters):
        found = text[pos]
        if found.isalpha() or found == "_":
            end = pos
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            found = text[pos:end]
        expected = _for_section(_expected(e.allowed, parser), section)
        if {"a function", "a reference"} <= set(expected) and found[:1].isalpha():
            message = _unknown_name(found)
        else:
            message = f"unexpected {_show(found[:40])}"
            if expected:
                message += "; expected " + _or(expected)
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        expected = _for_section(_expected(e.expected, parser), section)
        if tok.type == "$END":
            body = text.rstrip()
            line, column = position(body, len(body))
            pos = max(len(body) - 1, 0)
            if opened:
                kw, at = opened[-1]
                message = f"the file ends inside 'begin {kw}' (line {at}): 'end {kw}' is missing"
            else:
                message = f"the {what} ends too early; expected " + _or(expected)
            found = ""
        else:
            found = str(tok)
            pos = tok.start_pos if tok.start_pos is not None else pos
            shown = _show(found) if tok.type != "NL" else "end of line"
            message = f"unexpected {shown}"
            if tok.type == "NAME" and {"a function", "a reference"} <= set(expected):
                message = _unknown_name(found)
                expected = ()
            if tok.type == "END" and opened:
                kw, at = opened[-1]
                message = f"unexpected 'end' inside 'begin {kw}' (line {at})"
            if expected:
                message += "; expected " + _or(expected)
    else:  # pragma: no cover - lark raises only the two above from parse()
        found, expected, message = "", (), str(e)
    return ModelSyntaxError(
        message, line, column, text=found[:80], expected=expected, file=file,
        context=_context(text, min(pos, len(text) - 1)) if text else "",
    )  # fmt: skip


def _unknown_name(found: str) -> str:
    return (
        f"unknown name {found!r} in an expression: expected a number, a reference "
        "such as pt(1).iga, a function such as sqrt(...), or '('"
    )


def _or(items: tuple[str, ...]) -> str:
    items = tuple(items)
    if len(items) > 8:
        items = items[:8] + ("...",)
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]
