"""Reading an untrusted SimGrid platform file: XML with guards.

The file is parsed by expat (the standard library's parser) with handlers that refuse
what a platform file never needs and an attacker would use: an entity declaration
(``<!ENTITY``, the "billion laughs" and external entities: refused at the declaration,
before any expansion), a reference to an external entity, and a processing of the
external DTD (``<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">`` is read as
a name, never fetched). The file's size and its number of elements have budgets, checked
before and while reading, and every error names its line.

Under that external DTD expat does not know which entities it would declare, so it
silently drops a reference to one it has not seen: ``latency="1&ext;0us"`` would read as
``10us``. As the file may declare no entity, every named reference but the five XML
predefines (``&lt;`` ...) refers to nothing, and is refused with its line: in text (expat
reports the skipped entity), in an attribute value (expat reports nothing there: the
start tag's own text is searched, only when the file holds such a reference at all), and
attribute defaults (``<!ATTLIST``), which SimGrid would not apply, are refused too.

These guards are written here rather than taken from ``defusedxml``: its expat guards are
the same three handlers (entity and unparsed entity declarations, external references),
its only stronger option (``forbid_dtd``) refuses the DOCTYPE every SimGrid platform file
carries, it leaves the dropped references above as they are, its parsers build
ElementTree or DOM nodes without the line each error here names, and its last release is
of 2021.
"""

from __future__ import annotations

import bisect
import codecs
import re
from pathlib import Path
from xml.parsers import expat

from parasol_core.base.limits import read_capped
from parasol_core.base.words import counted

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


PREDEFINED = frozenset({"lt", "gt", "amp", "apos", "quot"})
"""The entities XML declares itself: the only ones a platform file may refer to."""

# a named entity reference (not a character reference such as &#10;); a start tag, from
# its "<" (expat has checked that it is well-formed; ">" may stand in a quoted value)
_NAMED_REF = re.compile(rb"&([^#;&\s<>\"']+);")
_START_TAG = re.compile(rb"""<(?:[^>"']|"[^"]*"|'[^']*')*>""")
_UTF16 = ((codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
          (b"<\x00?\x00", "utf-16-le"), (b"\x00<\x00?", "utf-16-be"))  # fmt: skip


def _ascii_compatible(data: bytes) -> tuple[bytes, str | None]:
    """``data`` where "&", quotes and ">" are single bytes, as the search for references
    in start tags needs: UTF-16 (expat reads it, SimGrid does not) made UTF-8, the same
    lines, with the encoding expat is then told (the declaration still says UTF-16)."""
    for start, codec in _UTF16:
        if data.startswith(start):
            try:
                return data.decode(codec).encode("utf-8"), "UTF-8"
            except UnicodeDecodeError:
                return data, None  # expat says where it is not well-formed
    return data, None


def _undeclared(data: bytes) -> list[int]:
    """Where ``data`` holds a named reference to an entity XML does not predefine."""
    return [m.start() for m in _NAMED_REF.finditer(data)
            if m.group(1).decode("utf-8", "replace") not in PREDEFINED]  # fmt: skip


class _Refused(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def parse_bytes(data: bytes, source: str = "", max_elements: int = MAX_ELEMENTS) -> Element:
    """The root element of a platform file's bytes; PlatformError for anything else."""
    if len(data) > MAX_PLATFORM_BYTES:
        raise PlatformError(f"larger than {MAX_PLATFORM_BYTES:,} bytes, the limit for a "
                            "SimGrid platform file; not read", None, source)  # fmt: skip
    data, encoding = _ascii_compatible(data)
    refs = _undeclared(data)  # none, almost always: then no start tag is searched
    parser = expat.ParserCreate(encoding)
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    root: list[Element] = []
    count = 0

    def refuse(message: str, line: int | None = None) -> None:
        raise _Refused(message, parser.CurrentLineNumber if line is None else line)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal count
        count += 1
        if count > max_elements:
            refuse(f"more than {counted(max_elements, 'element')}, the limit for a platform file")
        if len(stack) >= MAX_DEPTH:
            refuse(f"elements nested more than {MAX_DEPTH} deep")
        if refs:
            unknown_in_tag(tag)
        el = Element(tag, attrs, parser.CurrentLineNumber)  # attrs: a new dict each call
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def unknown_in_tag(tag: str) -> None:
        at = parser.CurrentByteIndex
        i = bisect.bisect_left(refs, at)
        after = data.find(b"<", at + 1)  # a quoted value holds no "<": the tag ends before
        if i == len(refs) or 0 <= after < refs[i]:
            return
        found = _START_TAG.match(data, at)
        end = found.end() if found else len(data)
        for m in _NAMED_REF.finditer(data, at, end):
            name = m.group(1).decode("utf-8", "replace")
            if name not in PREDEFINED:
                refuse(f"an attribute of <{tag}> refers to the entity '&{name};', which the "
                       "file does not declare (a platform file declares none); refused, "
                       "not read as nothing", parser.CurrentLineNumber
                       + data.count(b"\n", at, m.start()))  # fmt: skip

    def end(_tag: str) -> None:
        stack.pop()

    def entity_decl(name, *_args) -> None:  # noqa: ANN001, ANN002
        refuse(f"the file declares an entity ({name!r}); platform files need none, and "
               "entities are refused (they can expand without bound or read other files)")  # fmt: skip

    def external_ref(_context, _base, system_id, _public_id) -> int:  # noqa: ANN001
        refuse(f"the file refers to an external entity ({system_id!r}); refused")
        return 0

    def skipped(name: str, is_parameter: int) -> None:
        ref = f"%{name};" if is_parameter else f"&{name};"
        refuse(f"the file refers to the entity '{ref}', which it does not declare (a "
               "platform file declares none); refused, not read as nothing")  # fmt: skip

    def attlist(element: str, attribute: str, *_args) -> None:  # noqa: ANN002
        refuse(f"the file declares a default for the attribute {attribute!r} of <{element}>"
               " (<!ATTLIST>); platform files need none, and SimGrid would not apply it")  # fmt: skip

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.EntityDeclHandler = entity_decl
    parser.UnparsedEntityDeclHandler = entity_decl
    parser.ExternalEntityRefHandler = external_ref
    parser.SkippedEntityHandler = skipped
    parser.AttlistDeclHandler = attlist
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
