"""Reading an untrusted SimGrid platform file: XML with guards.

The file is parsed by expat (the standard library's parser) with handlers that refuse
what a platform file never needs and an attacker would use: an entity declaration
(``<!ENTITY``, the "billion laughs" and external entities: refused at the declaration,
before any expansion), a reference to an external entity, and a processing of the
external DTD (``<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">`` is read as
a name, never fetched). The file's size and its number of elements have budgets, checked
before and while reading, and every error names its line.
"""

from __future__ import annotations

from pathlib import Path
from xml.parsers import expat

from parasol_core.base.limits import read_capped

MAX_PLATFORM_BYTES = 64 * 1024 * 1024
"""The largest platform file read (64 MB: about 500,000 explicit routes)."""
MAX_ELEMENTS = 2_000_000
"""The most XML elements a platform file may hold."""
MAX_DEPTH = 100
"""The deepest nesting of elements (zones in zones)."""


class PlatformError(ValueError):
    """A platform file that cannot be read: the message names the file and line."""

    def __init__(self, message: str, line: int | None = None, source: str = "") -> None:
        self.line, self.source, self.bare = line, source, message
        where = f"{source}:" if source else ""
        where += f"{line}: " if line is not None else (" " if source else "")
        super().__init__(f"{where}{message}")


class Element:
    """An XML element: its tag, attributes, line and children (slots: a platform of
    explicit routes has hundreds of thousands of them)."""

    __slots__ = ("attrs", "children", "line", "tag")

    def __init__(self, tag: str, attrs: dict[str, str], line: int,
                 children: list[Element] | None = None) -> None:  # fmt: skip
        self.tag, self.attrs, self.line = tag, attrs, line
        self.children = [] if children is None else children

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrs.get(name, default)


class _Refused(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def parse_bytes(data: bytes, source: str = "", max_elements: int = MAX_ELEMENTS) -> Element:
    """The root element of a platform file's bytes; PlatformError for anything else."""
    if len(data) > MAX_PLATFORM_BYTES:
        raise PlatformError(f"larger than {MAX_PLATFORM_BYTES:,} bytes, the limit for a "
                            "SimGrid platform file; not read", None, source)  # fmt: skip
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    root: list[Element] = []
    count = 0

    def refuse(message: str) -> None:
        raise _Refused(message, parser.CurrentLineNumber)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > max_elements:
            refuse(f"more than {max_elements:,} elements, the limit for a platform file")
        if len(stack) >= MAX_DEPTH:
            refuse(f"elements nested more than {MAX_DEPTH} deep")
        el = Element(tag, attrs, parser.CurrentLineNumber)  # attrs: a new dict each call
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def end(_tag: str) -> None:
        stack.pop()

    def entity_decl(name, *_args) -> None:  # noqa: ANN001, ANN002
        refuse(f"the file declares an entity ({name!r}); platform files need none, and "
               "entities are refused (they can expand without bound or read other files)")  # fmt: skip

    def external_ref(_context, _base, system_id, _public_id) -> int:  # noqa: ANN001
        refuse(f"the file refers to an external entity ({system_id!r}); refused")
        return 0

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.EntityDeclHandler = entity_decl
    parser.UnparsedEntityDeclHandler = entity_decl
    parser.ExternalEntityRefHandler = external_ref
    try:
        parser.Parse(data, True)
    except _Refused as e:
        raise PlatformError(str(e), e.line, source) from None
    except expat.ExpatError as e:
        raise PlatformError(f"not well-formed XML: {expat.ErrorString(e.code)} (column "
                            f"{e.offset + 1})", e.lineno, source) from None  # fmt: skip
    if not root:
        raise PlatformError("the file holds no XML element", None, source)
    return root[0]


def parse_file(path: str | Path) -> Element:
    """The root element of a platform file (a regular file of at most
    :data:`MAX_PLATFORM_BYTES`); PlatformError, or OSError when it cannot be read."""
    from parasol_core.base.limits import ValueRangeError

    try:
        data = read_capped(path, MAX_PLATFORM_BYTES, "a SimGrid platform file")
    except ValueRangeError as e:
        raise PlatformError(str(e)) from None
    return parse_bytes(data, str(path))
