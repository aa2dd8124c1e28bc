"""Annotations: ``# piui: forward = X`` and ``# piui: duplex = X`` comment lines of a
hardware topology (docs/decisions.md, "Per-hop forwarding and duplex links"), and
``# piui: role = switch`` of a processor type (docs/decisions.md, "Switches").

To the grammar (and to any 1994 reader) they are comments: the reader and the bulk
scanners skip them. After a file is parsed, :func:`read_annotations` looks
for them directly inside each topology section and sets ``topology.forward`` and
``topology.duplex``, with a source record (``src.values``) like any other value's, so
the lossless writer changes the number in place after an edit, removes the line when
the value is set to None, inserts it when one is set, and leaves an unedited file byte
for byte as it was.

The role is read the same way into ``processor.role``.

Bad annotations (not a number, negative, not finite, an unknown role, or in a nested or
another section) are ignored with a warning that gives the line and says why; the model
then behaves as if the line were an ordinary comment. So is every other ``# piui:`` line
that nothing reads: at machine level (after ``end topology``), in a section where its
key means nothing, after a value on the same line, or with a key nobody knows. An
annotation never stops a file from loading: whatever its text, the worst it gives is a
warning. Its numbers are ASCII, as the grammar's (:mod:`parasol_core.base.numeric`):
``fattree ² 2``, ``forward = ٣e-7`` or ``1_000e-9`` are not numbers.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from parasol_core.base.diagnostics import WARNING, Diagnostic
from parasol_core.base.numeric import (
    NotANumberError,
    ValueRangeError,
    is_whole,
    read_float,
    why_not_number,
)
from parasol_core.base.source import BOM, LineIndex, ValueSource
from parasol_core.base.words import counted
from parasol_core.model import NETWORK_KINDS, ROLES, VARIABLE_NETWORKS, Block, Machine

#: the keys a topology section reads, and what each number means
KEYS = {
    "network": "what network the topology was generated as",
    "forward": "seconds per byte a processor spends forwarding a message that passes through it",
    "duplex": "the fraction by which traffic the other way slows a full-duplex link",
    "shared": "two-processor links that stay one resource both ways on a duplex topology",
    "fatpipe": "links that bound each message separately, however many cross them",
    "names": "processors' names (a SimGrid platform's hosts and routers): N=NAME ...",
    "zones": "regions routed by their own technique: RANGES ROUTING NETWORK [via G]; ...",
}
# The keys whose value is a list of link ids ("3 5-9 12"), and the most ids one holds.
LINK_LISTS = ("shared", "fatpipe")
MAX_LINK_ID = 2**62
# The largest duplex overhead taken: acknowledgements cost at most as much as the data.
MAX_DUPLEX = 1.0

# `#`, then `piui:`, a key, `=` and the rest of the physical line (the value, maybe
# followed by an ordinary `#` comment)
_NOTE = re.compile(
    r"^[ \t]*#[ \t]*piui:[ \t]*(forward|duplex|network|shared|fatpipe|names|zones)\b[ \t]*(=?)"
    r"([^\n\r\x0b]*)",
    re.M,
)
_ROLE = re.compile(r"^[ \t]*#[ \t]*piui:[ \t]*(role)\b[ \t]*(=?)([^\n\r\x0b]*)", re.M)
# any annotation line: its key (the shape comment's is read by the reader)
_ANY = re.compile(r"[ \t]*#[ \t]*piui:[ \t]*([A-Za-z_]*)")
#: where each key is read
PLACES = {
    "forward": "directly in a hardware topology section",
    "duplex": "directly in a hardware topology section",
    "network": "directly in a hardware topology section",
    "shared": "directly in a hardware topology section",
    "fatpipe": "directly in a hardware topology section",
    "names": "directly in a hardware topology section",
    "zones": "directly in a hardware topology section",
    "role": "directly in a processor section",
    "shape": "directly in a topology or virtual topology section",
}


class _Marks:
    """Where ``piui:`` stands in the text, found in one pass (a str.find loop, no copy of
    the text): every annotation line holds one, and a generated section of millions of
    characters holds one or two, so each section looks up its own by bisection instead
    of searching (or slicing) its span again."""

    def __init__(self, text: str) -> None:
        found: list[int] = []
        at = text.find("piui:")
        while at >= 0:
            found.append(at)
            at = text.find("piui:", at + 5)
        self.at = found

    def within(self, start: int, end: int) -> list[int]:
        return self.at[bisect.bisect_left(self.at, start) : bisect.bisect_left(self.at, end)]


def _find(pattern: re.Pattern, text: str, start: int, end: int,
          marks: _Marks) -> Iterator[re.Match]:  # fmt: skip
    """``pattern.finditer(text, start, end)`` for these line-anchored patterns, tried
    only at the lines that hold a ``piui:`` mark."""
    last = -1
    for at in marks.within(start, end):
        line = max(text.rfind("\n", start, at), text.rfind("\r", start, at),
                   text.rfind("\x0b", start, at)) + 1  # fmt: skip
        line = max(line, start)
        if line != last:
            last = line
            m = pattern.match(text, line, end)
            if m is not None:
                yield m


class _Lines:
    """:class:`LineIndex`'s positions, counted when asked (for the few annotation
    lines of a file, without indexing every line of it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = LineIndex(text) if "\r" in text or "\x0b" in text else None

    def position(self, offset: int) -> tuple[int, int]:
        if self.index is not None:
            return self.index.position(offset)
        text = self.text
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        if line == 1 and text.startswith(BOM) and offset > 0:
            column -= 1
        return line, column


def read_annotations(machine: Machine, text: str, file: str | None) -> list[Diagnostic]:
    """Set ``forward`` and ``duplex`` of every hardware topology from its annotation
    lines; the warnings about those that could not be read."""
    found: list[Diagnostic] = []
    lines: _Lines | None = None
    marks = _Marks(text)
    if not marks.at:
        return found
    handled: set[int] = set()  # where the annotation lines read (or warned about) start
    for topo in machine.topologies:
        src = topo.__dict__.get("src")
        if src is None or not marks.within(src.body_start, src.insert_at):
            continue
        nested = _nested_spans(topo)
        for m in _find(_NOTE, text, src.body_start, src.insert_at, marks):
            handled.add(m.start())
            if lines is None:
                lines = _Lines(text)
            key = m.group(1)
            line, column = lines.position(m.start() + len(m.group(0)) - len(m.group(0).lstrip()))
            if any(a <= m.start() < b for a, b in nested):
                found.append(_warn(f"'# piui: {key}' belongs directly in the topology "
                                   "section, not in a link or procid section; ignored",
                                   line, column, file))  # fmt: skip
                continue
            value, why = _read(key, m.group(2), m.group(3))
            vstart = m.start(3) + len(m.group(3)) - len(m.group(3).lstrip())
            vend = vstart + len(_value_text(m.group(3)))
            vs = ValueSource(value, vstart, vend, m.start(), _line_end(text, m.end()), line, column)
            if why is not None:
                found.append(_warn(f"'# piui: {key}' ignored: {why}", line, column, file))
                if key in src.values:
                    continue  # an earlier good one stands
            elif key in src.values:
                first = src.values[key]
                src.shadowed.setdefault(key, []).append((first.line_start, first.line_end))
                found.append(_warn(f"'# piui: {key}' is given again (first on line "
                                   f"{first.line}); the last one is used", line, column, file))  # fmt: skip
            src.values[key] = vs
            setattr(topo, key, value)
    for virt in machine.virtuals:
        src = virt.__dict__.get("src")
        if src is None or not marks.within(src.body_start, src.insert_at):
            continue
        for m in _find(_NOTE, text, src.body_start, src.insert_at, marks):
            handled.add(m.start())
            if lines is None:
                lines = _Lines(text)
            line, column = lines.position(m.start() + len(m.group(0)) - len(m.group(0).lstrip()))
            found.append(_warn(f"'# piui: {m.group(1)}' belongs in the hardware topology "
                               "section, not a virtual one; ignored", line, column, file))  # fmt: skip
    for proc in machine.processors:
        src = proc.__dict__.get("src")
        if src is None or not marks.within(src.body_start, src.insert_at):
            continue
        if lines is None:
            lines = _Lines(text)
        found.extend(_read_role(proc, text, lines, file, marks, handled))
    for block in [*machine.topologies, *machine.virtuals]:
        src = block.__dict__.get("src")
        if src is None or not marks.within(src.body_start, src.insert_at):
            continue
        for m in _find(_ROLE, text, src.body_start, src.insert_at, marks):
            handled.add(m.start())
            if lines is None:
                lines = _Lines(text)
            line, column = lines.position(m.start() + len(m.group(0)) - len(m.group(0).lstrip()))
            found.append(_warn("'# piui: role' belongs in a processor section (it marks the "
                               f"processor type); ignored in a {block.KEYWORD} section",
                               line, column, file, block.KEYWORD))  # fmt: skip
        if block.KEYWORD in ("topology", "virtual"):  # its shape comment: the reader's
            nested = _nested_spans(block)
            for m in _find(_ANY, text, src.body_start, src.insert_at, marks):
                if m.group(1) == "shape" and not any(a <= m.start() < b for a, b in nested):
                    handled.add(m.start())
    stray = _stray(machine, text, marks, handled)
    if stray:
        if lines is None:
            lines = _Lines(text)
        for at, message in stray:
            line, column = lines.position(at)
            found.append(_warn(message, line, column, file, "machine"))
    return found


def _read(key: str, eq: str, rest: str) -> tuple[Any, str | None]:
    """The value of a topology annotation, or None and why not. Whatever the text, an
    annotation is at worst ignored with a warning: it never stops the file loading."""
    try:
        if key == "network":
            return _network(eq, rest)
        if key in LINK_LISTS:
            return _link_list(key, eq, rest)
        if key == "names":
            return _names(eq, rest)
        if key == "zones":
            return _zones(eq, rest)
        return _number(key, eq, rest)
    except (ValueError, ArithmeticError) as e:  # pragma: no cover - every case is worded
        return None, f"cannot be read ({e})"


def _stray(machine: Machine, text: str, marks: _Marks,
           handled: set[int]) -> list[tuple[int, str]]:  # fmt: skip
    """(offset, warning) of every ``# piui:`` comment nothing reads: an annotation line
    outside the sections its key belongs in, one after a value on the same line, one
    with an unknown key."""
    out: list[tuple[int, str]] = []
    sections: list[tuple[int, int, Block]] | None = None
    for at in marks.at:
        line = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at), text.rfind("\x0b", 0, at)) + 1
        if line in handled:
            continue
        hash_at = text.rfind("#", line, at)
        if hash_at < 0 or text[hash_at + 1 : at].strip(" \t") or text.count('"', line, hash_at) % 2:
            continue  # 'piui:' in an ordinary comment or in a name: not an annotation
        own_line = not text[line:hash_at].strip(" \t\f")
        key_m = re.match(r"[ \t]*([A-Za-z_]*)", text[at + 5 : at + 45])
        key = key_m.group(1) if key_m else ""
        note = f"'# piui: {key}'" if key else "'# piui:'"
        if key not in PLACES:
            shown_key = repr(key) if key else "no key"
            out.append((hash_at, f"{note}: unknown annotation ({shown_key}; PIUI reads "
                        f"{', '.join(PLACES)}); ignored"))  # fmt: skip
            continue
        if not own_line:
            out.append((hash_at, f"{note} follows something else on its line, where it is "
                        "an ordinary comment; ignored (an annotation stands on a line of "
                        f"its own, {PLACES[key]})"))  # fmt: skip
            continue
        if sections is None:
            sections = [(b.src.start, b.src.end, b) for b in _top_sections(machine)]
        out.append((hash_at, f"{note} is {_place(machine, sections, at)}, where it is "
                    f"ignored: it belongs {PLACES[key]}"))  # fmt: skip
    return out


def _place(machine: Machine, sections: list[tuple[int, int, Block]], at: int) -> str:
    """Where offset ``at`` is, in words: at machine level (after which section), in a
    section, or in a section nested in one."""
    src = machine.__dict__.get("src")
    if src is None or not src.start <= at < src.end:
        return "outside the machine section"
    for a, b, block in sections:
        if a <= at < b:
            if any(x <= at < y for x, y in _nested_spans(block)):
                return f"in a section nested in a {block.KEYWORD} section"
            return f"in a {block.KEYWORD} section"
    before = [(b, block) for a, b, block in sections if b <= at]
    if before:
        _, block = max(before, key=lambda x: x[0])
        return f"at machine level (after 'end {block.KEYWORD}')"
    return "at machine level"


def _top_sections(machine: Machine) -> list[Block]:
    """The machine's own sections that hold a source record (not the machine)."""
    out = []
    for child in machine.CHILDREN:
        value = getattr(machine, child.attr)
        for block in value if child.many else [value]:
            if block is not None and block.__dict__.get("src") is not None:
                out.append(block)
    return out


def _read_role(
    proc: Block, text: str, lines: _Lines, file: str | None, marks: _Marks, handled: set[int]
) -> list[Diagnostic]:
    """Set ``proc.role`` from its `# piui: role = WORD` line; warnings about bad ones."""
    src: Any = proc.__dict__["src"]
    found: list[Diagnostic] = []
    nested = _nested_spans(proc)
    for m in _find(_ROLE, text, src.body_start, src.insert_at, marks):
        handled.add(m.start())
        line, column = lines.position(m.start() + len(m.group(0)) - len(m.group(0).lstrip()))
        if any(a <= m.start() < b for a, b in nested):
            found.append(_warn("'# piui: role' belongs directly in the processor section, not "
                               "in a nested section; ignored", line, column, file, "processor"))  # fmt: skip
            continue
        word = _value_text(m.group(3))
        why = None
        if not m.group(2):
            why = f"expected '# piui: role = {' | '.join(ROLES)}'"
        elif word not in ROLES:
            shown = word if len(word) <= 40 else word[:40] + "..."
            why = f"unknown role {shown!r}; the roles are: {', '.join(ROLES)}"
        vstart = m.start(3) + len(m.group(3)) - len(m.group(3).lstrip())
        vend = vstart + len(word)
        value = None if why is not None else word
        vs = ValueSource(value, vstart, vend, m.start(), _line_end(text, m.end()), line, column)
        if why is not None:
            found.append(_warn(f"'# piui: role' ignored: {why}", line, column, file, "processor"))
            continue
        if "role" in src.values:
            first = src.values["role"]
            src.shadowed.setdefault("role", []).append((first.line_start, first.line_end))
            found.append(_warn(f"'# piui: role' is given again (first on line {first.line}); "
                               "the last one is used", line, column, file, "processor"))  # fmt: skip
        src.values["role"] = vs
        proc.role = value  # type: ignore[attr-defined]
    return found


def _warn(
    message: str, line: int, column: int, file: str | None, section: str = "topology"
) -> Diagnostic:
    return Diagnostic(WARNING, message, line, column, file, (section,))


def _value_text(rest: str) -> str:
    """The value in the rest of the line: up to an ordinary comment, blanks trimmed."""
    return rest.split("#", 1)[0].strip()


def _network(eq: str, rest: str) -> tuple[str | None, str | None]:
    """The network description (kind and whole numbers, blanks made single), or None
    and why not."""
    forms = "; ".join(f"{k} {' '.join(v)}" for k, v in NETWORK_KINDS.items())
    words = _value_text(rest).split()
    if not eq or not words:
        return None, f"expected '# piui: network = KIND N ...' ({forms})"
    kind, numbers = words[0], words[1:]
    if kind not in NETWORK_KINDS:
        shown = kind if len(kind) <= 40 else kind[:40] + "..."
        return None, f"unknown network {shown!r} (known: {forms}){why_not_number(kind)}"
    names = NETWORK_KINDS[kind]
    if kind in VARIABLE_NETWORKS:  # xgft H m1..mH w1..wH p1..pH
        fixed, per, most = VARIABLE_NETWORKS[kind]
        first = numbers[0] if numbers else ""
        groups = int(first) if len(first) <= 2 and is_whole(first) else 0
        if not 1 <= groups <= most or len(numbers) != fixed + per * groups:
            return None, (f"a {kind} takes H (1 to {most}) and then {per} lists of H whole "
                          f"numbers: {kind} {' '.join(names)}")  # fmt: skip
        names = tuple(f"n{i}" for i in range(len(numbers)))
    # ASCII digits only, and at most 7 of them (10**6): '²'.isdigit() is true, int('²')
    # fails, and int('٢') is 2
    if len(numbers) != len(names) or not all(
        len(n) <= 7 and is_whole(n) and 0 < int(n) <= 10**6 for n in numbers
    ):
        bad = next((why_not_number(n) for n in numbers if why_not_number(n)), "")
        return (
            None,
            f"a {kind} takes {counted(len(names), 'whole number')} from 1 to 10^6: {kind} "
            f"{' '.join(names)}{bad}",
        )
    return " ".join([kind, *(str(int(n)) for n in numbers)]), None


def _link_list(key: str, eq: str, rest: str) -> tuple[str | None, str | None]:
    """The link ids of a policy annotation in their written form (ascending, each once,
    runs of three or more as ``a-b``), or None and why not."""
    words = _value_text(rest).replace(",", " ").split()
    if not eq or not words:
        return None, f"expected '# piui: {key} = ID ...' (link ids or ranges a-b: {KEYS[key]})"
    runs: list[tuple[int, int]] = []
    for word in words:
        a, dash, b = word.partition("-")
        if not (is_whole(a) and (not dash or is_whole(b))):
            shown = word if len(word) <= 40 else word[:40] + "..."
            return None, f"expected link ids or ranges a-b, found {shown!r}"
        lo, hi = int(a), int(b) if dash else int(a)
        if not 0 < lo <= hi <= MAX_LINK_ID:
            return None, f"{word} is not a link id or an ascending range of them"
        runs.append((lo, hi))
    return _runs_text(runs), None


def link_list_text(ids: Any) -> str:
    """Link ids written as a policy annotation holds them: ascending, each once, runs of
    three or more as ``a-b`` (``[1, 2, 3, 7]`` -> ``"1-3 7"``)."""
    return _runs_text([(int(i), int(i)) for i in ids])


def _runs_text(runs: list[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for lo, hi in sorted(runs):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out = []
    for lo, hi in merged:
        if hi - lo >= 2:
            out.append(f"{lo}-{hi}")
        else:
            out.extend(str(i) for i in range(lo, hi + 1))
    return " ".join(out)


def link_list_ids(text: str | None) -> list[tuple[int, int]]:
    """The ranges ``(first, last)`` of link ids in a policy annotation's text."""
    if not text:
        return []
    out = []
    for word in text.split():
        a, _, b = word.partition("-")
        out.append((int(a), int(b or a)))
    return out


# --------------------------------------------------------------------------- names

#: the most characters of one processor's name (a SimGrid id), before escaping
MAX_NAME = 1000
#: the most characters of a names line (a model file's lines hold 1,000,000)
MAX_NAMES_TEXT = 900_000
#: what a name holds escaped as %XX (its UTF-8 bytes): blanks, '%', '=', '#' (which
#: would start a comment), '"', '*' (which stands for a run's number), and control
#: characters
_ESCAPED = re.compile(r'[\x00-\x20\x7f-\x9f%=#"*\u2028\u2029\ufeff]')
# a name's last whole number (no leading zero) and what surrounds it: runs of them
_NUMBERED = re.compile(r"(.*?)(0|[1-9][0-9]{0,17})([^0-9]*)", re.S)
_HEX = frozenset("0123456789abcdefABCDEF")


def quote_name(name: str) -> str:
    """A processor's name as the names annotation writes it."""
    return _ESCAPED.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), name)


def unquote_name(text: str) -> str:
    """:func:`quote_name` undone (ValueError on a % not followed by two hex digits or
    bytes that are no UTF-8)."""
    if "%" not in text:
        return text
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) != 2 or not all(ch in _HEX for ch in pair):
                raise ValueError(f"'%' must be followed by two hex digits in {text[:40]!r}")
            out.append(int(pair, 16))
            i += 3
        else:
            out.extend(c.encode("utf-8"))
            i += 1
    return out.decode("utf-8")


class NameTable:
    """Processors' names, as a names line holds them: single names (``N=NAME``) and
    runs (``A-B:S=PRE*SUF``: processor ``A + i`` is named ``PRE`` + ``S + i`` +
    ``SUF``, a SimGrid cluster's hosts in one word). Looked up both ways without
    spelling out every name of a run."""

    def __init__(self, singles: dict[int, str], runs: list[tuple[int, int, int, str, str]]) -> None:
        self.singles = singles
        self.runs = sorted(runs)
        self._firsts = [r[0] for r in self.runs]
        self._by_name = {name: n for n, name in singles.items()}

    def __len__(self) -> int:
        return len(self.singles) + sum(b - a + 1 for a, b, *_ in self.runs)

    def name(self, p: int) -> str | None:
        if p in self.singles:
            return self.singles[p]
        at = bisect.bisect_right(self._firsts, p) - 1
        if at >= 0:
            a, b, start, pre, suf = self.runs[at]
            if p <= b:
                return f"{pre}{start + p - a}{suf}"
        return None

    def number(self, name: str) -> int | None:
        if name in self._by_name:
            return self._by_name[name]
        m = _NUMBERED.fullmatch(name)
        if m is None:
            return None
        pre, digits, suf = m.groups()
        k = int(digits)
        for a, b, start, rpre, rsuf in self.runs:
            if rpre == pre and rsuf == suf and start <= k <= start + b - a:
                return a + k - start
        return None

    def items(self) -> list[tuple[int, str]]:
        """Every (number, name), by number (spelt out: for a small table or a test)."""
        out = list(self.singles.items())
        for a, b, start, pre, suf in self.runs:
            out.extend((a + i, f"{pre}{start + i}{suf}") for i in range(b - a + 1))
        return sorted(out)

    def text(self) -> str:
        words = [(n, f"{n}={quote_name(name)}") for n, name in self.singles.items()]
        words += [(a, f"{a}-{b}:{start}={quote_name(pre)}*{quote_name(suf)}")
                  for a, b, start, pre, suf in self.runs]  # fmt: skip
        return " ".join(w for _, w in sorted(words))

    @classmethod
    def of(cls, names: dict[int, str]) -> NameTable:
        """The table of ``names``, runs of three or more consecutive processors whose
        names count up by one in their last number made runs."""
        singles: dict[int, str] = {}
        runs: list[tuple[int, int, int, str, str]] = []
        order = sorted(names)
        i = 0
        while i < len(order):
            n = order[i]
            m = _NUMBERED.fullmatch(names[n])
            j = i + 1
            if m is not None:
                pre, digits, suf = m.groups()
                k = int(digits)
                while (j < len(order) and order[j] == n + (j - i)
                       and names[order[j]] == f"{pre}{k + (j - i)}{suf}"):  # fmt: skip
                    j += 1
            if j - i >= 3:
                runs.append((n, order[j - 1], int(m.group(2)), m.group(1), m.group(3)))
            else:
                j = i + 1
                singles[n] = names[n]
            i = j
        return cls(singles, runs)


def names_text(names: dict[int, str]) -> str:
    """The names annotation's value for ``names`` (number -> name)."""
    return NameTable.of(names).text()


def names_of_text(text: str | None) -> dict[int, str]:
    """Processor number -> name, every one, from a names annotation's text (checked)."""
    return dict(name_table(text).items()) if text else {}


def name_table(text: str | None) -> NameTable:
    """The table of a names annotation's text (checked: ValueError saying why not)."""
    if not text:
        return NameTable({}, [])
    table, why = _name_table(text)
    if why is not None:
        raise ValueError(why)
    return table


def _name_table(text: str) -> tuple[NameTable, str | None]:
    singles: dict[int, str] = {}
    runs: list[tuple[int, int, int, str, str]] = []
    empty = NameTable({}, [])
    for word in text.split():
        left, sep, name = word.partition("=")
        shown = word if len(word) <= 40 else word[:40] + "..."
        span, colon, first = left.partition(":")
        a_text, dash, b_text = span.partition("-")
        wholes = [a_text] + ([b_text] if dash else []) + ([first] if colon else [])
        if (
            not sep
            or bool(dash) != bool(colon)
            or not all(is_whole(x) and len(x) <= 18 for x in wholes)
        ):
            return empty, f"expected N=NAME or A-B:S=PRE*SUF (processor numbers), found {shown!r}"
        a = int(a_text)
        b = int(b_text) if dash else a
        if not 0 < a <= b:
            return empty, f"{shown!r}: processor numbers count from 1, upwards"
        parts = name.split("*")
        if len(parts) != (2 if dash else 1):
            return empty, (f"{shown!r}: a run's name has one '*' (its number), a single "
                           "name none ('*' written %2A)")  # fmt: skip
        try:
            plain = [unquote_name(x) for x in parts]
        except (ValueError, UnicodeDecodeError) as e:
            return empty, f"{shown!r}: {e}"
        size = sum(map(len, plain)) + (len(str(int(first) + b - a)) if dash else 0)
        if size < 1 or size > MAX_NAME:
            return empty, f"{shown!r}: a name has 1 to {MAX_NAME:,} characters"
        if dash:
            runs.append((a, b, int(first), plain[0], plain[1]))
        else:
            if a in singles:
                return empty, f"processor {a} is named twice"
            singles[a] = plain[0]
    table = NameTable(singles, runs)
    spans = sorted([(a, b) for a, b, *_ in runs] + [(n, n) for n in singles])
    for (_, b0), (a1, _) in zip(spans, spans[1:]):
        if a1 <= b0:
            return empty, f"processor {a1} is named twice"
    if len(table._by_name) != len(singles):
        dup = next(n for n in singles if table._by_name[singles[n]] != n)
        return (
            empty,
            f"processors {table._by_name[singles[dup]]} and {dup} are both named {singles[dup][:40]!r}",
        )
    for n, name in singles.items():  # a single name that a run gives too
        m = _NUMBERED.fullmatch(name)
        if m is not None and runs:
            other = NameTable({}, runs).number(name)
            if other is not None:
                return empty, f"processors {other} and {n} are both named {name[:40]!r}"
    for i, (a, b, s0, pre, suf) in enumerate(table.runs):  # two runs of one pattern
        for a2, b2, s2, pre2, suf2 in table.runs[i + 1 :]:
            if pre == pre2 and suf == suf2 and s2 <= s0 + b - a and s0 <= s2 + b2 - a2:
                return empty, f"processors {a} to {b} and {a2} to {b2} share names"
    return table, None


def _names(eq: str, rest: str) -> tuple[str | None, str | None]:
    """The names annotation in its written form, or None and why not: ``N=NAME`` and
    ``A-B:S=PRE*SUF`` words, each processor named once, each name 1 to
    :data:`MAX_NAME` characters with its blanks, '%', '=', '#', '"' and '*' written
    %XX, and no two processors of one name."""
    text = _value_text(rest)
    if not eq or not text:
        return None, ("expected '# piui: names = N=NAME ...' (processor number = its name; "
                      "A-B:S=PRE*SUF for a run)")  # fmt: skip
    table, why = _name_table(text)
    if why is not None:
        return None, why
    return table.text(), None


def check_names(value: object) -> str | None:
    """A value for ``topology.names`` as set by a program: None, a text as the file
    holds it, or a mapping number -> name; its written form, or ValueError (one of more
    than :data:`MAX_NAMES_TEXT` characters too: a model file's line could not hold it)."""
    if value is None:
        return None
    if isinstance(value, dict):
        if not value:
            return None
        value = names_text({int(k): str(v) for k, v in value.items()})
    if not isinstance(value, str):
        raise ValueError(f"names must be a text 'N=NAME ...' or a mapping, not {value!r}")
    text, why = _names("=", value)
    if why is not None:
        raise ValueError(f"names: {why}")
    if text is not None and len(text) > MAX_NAMES_TEXT:
        raise ValueError(f"names: {counted(len(text), 'character')}, more than a names line holds "
                         f"({MAX_NAMES_TEXT:,})")  # fmt: skip
    return text


def check_link_list(key: str, value: object) -> str | None:
    """A value for ``topology.shared`` / ``topology.fatpipe`` as set by a program: None,
    a text of link ids, or an iterable of them; its written form, or ValueError saying
    why not."""
    if value is None:
        return None
    if isinstance(value, str):
        text, why = _link_list(key, "=", value)
    else:
        try:
            ids = [int(i) for i in value]  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be link ids, not {value!r}") from None
        text, why = _link_list(key, "=", " ".join(str(i) for i in ids)) if ids else (None, None)
        if not ids:
            return None
    if why is not None:
        raise ValueError(f"{key}: {why}")
    return text


def _number(key: str, eq: str, rest: str) -> tuple[float | None, str | None]:
    """The annotation's number, or None and why not."""
    text = _value_text(rest)
    if not eq:
        return None, f"expected '# piui: {key} = NUMBER' ({KEYS[key]})"
    try:
        value = read_float(text)  # ASCII, and a double: no overflow, no underflow
    except NotANumberError as e:
        shown = text if len(text) <= 40 else text[:40] + "..."
        return None, f"expected one number ({KEYS[key]}), found {shown!r}{e.reason}"
    except ValueRangeError as e:
        return None, str(e)
    if value < 0:
        return None, f"{text} is negative; it must be 0 or more ({KEYS[key]})"
    if key == "duplex" and value > MAX_DUPLEX:
        return None, (f"{text} is more than {MAX_DUPLEX:g}: acknowledgements would cost "
                      "more than the data they acknowledge")  # fmt: skip
    return value, None


def _line_end(text: str, pos: int) -> int:
    """Just past the line end at ``pos`` (a `\\r\\n` counts as one)."""
    if text.startswith("\r\n", pos):
        return pos + 2
    return pos + 1 if pos < len(text) else pos


def _nested_spans(block: Block) -> list[tuple[int, int]]:
    """Character ranges of the sub-sections of a block (procid, linklist, links; timings,
    cache, combinations)."""
    src: Any = block.__dict__["src"]
    spans = []
    for ts in list(src.tables.values()) + list(src.containers.values()):
        if ts.start is not None and ts.end is not None:
            spans.append((ts.start, ts.end))
    for kids in src.children.values():
        # a list of sections (links) in file order, all inside their container: one
        # range from the first to the last, not one per link (a generated topology
        # has tens of thousands)
        ends = [kids[0], kids[-1]] if isinstance(kids, list) and kids else [kids]
        found = [d["src"] for kid in ends
                 if "src" in (d := getattr(kid, "__dict__", {})) and d["src"] is not None]  # fmt: skip
        if found:
            spans.append((min(f.start for f in found), max(f.end for f in found)))
    return spans


def check_network(value: object) -> str | None:
    """A value for ``topology.network`` as set by a program: None, or the description
    in its written form (``"dragonfly 9 4 2 2"``); ValueError saying why not."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"network must be a text such as 'dragonfly 9 4 2 2', not {value!r}")
    text, why = _network("=", value)
    if why is not None:
        raise ValueError(f"network: {why}")
    return text


def check_annotation(key: str, value: object) -> float | None:
    """A value for ``topology.forward`` / ``topology.duplex`` as set by a program: None,
    or a number the annotation can hold; ValueError saying why not."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} must be a number, not {value!r}")
    number, why = _number(key, "=", repr(float(value)))
    if why is not None:
        raise ValueError(f"{key}: {why}")
    return number


# --------------------------------------------------------------------------- zones

#: the routing techniques a zone may name: those whose structure is the zone's network
ZONE_ROUTINGS = ("updown", "simgrid-dragonfly", "dragonfly-minimal", "simgrid-torus")
#: the most sizes of a zone's grid (``simgrid-torus``: ``shape D1 .. Dn``)
MAX_ZONE_DIMS = 6
#: the most zones one line holds
MAX_ZONES = 10_000


@dataclass(frozen=True)
class Zone:
    """A region of a hardware topology routed by its own technique (issue 36: a SimGrid
    FAT_TREE or DRAGONFLY cluster inside a larger platform). ``runs``: its processors,
    in the order that numbers them 1.. within the zone (compute processors first, as the
    network says); ``network``: its ``# piui: network`` text (``shape D1 .. Dn`` for a
    ``simgrid-torus`` zone: its grid); ``gateway``: the processor
    through which routes enter and leave it (SimGrid's ``gw_src``/``gw_dst``), or None."""

    runs: tuple[tuple[int, int], ...]
    routing: str
    network: str
    gateway: int | None

    def processors(self) -> list[int]:
        return [p for a, b in self.runs for p in range(a, b + 1)]

    def text(self) -> str:
        runs = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self.runs)
        via = "" if self.gateway is None else f" via {self.gateway}"
        return f"{runs} {self.routing} {self.network}{via}"


def zones_text(zones: list[Zone]) -> str:
    return "; ".join(z.text() for z in zones)


def _zone_runs(word: str) -> list[tuple[int, int]] | None:
    runs = []
    for part in word.split(","):
        a, dash, b = part.partition("-")
        b = b if dash else a
        if not (is_whole(a) and is_whole(b) and len(a) <= 18 and len(b) <= 18):
            return None
        lo, hi = int(a), int(b)
        if not 1 <= lo <= hi:
            return None
        runs.append((lo, hi))
    return runs


def _zone_shape(words: list[str]) -> tuple[str | None, str | None]:
    """A ``simgrid-torus`` zone's grid, ``shape D1 .. Dn``, or None and why not."""
    sizes = words[1:]
    if (not words or words[0] != "shape" or not 1 <= len(sizes) <= MAX_ZONE_DIMS
            or not all(len(x) <= 7 and is_whole(x) and 0 < int(x) <= 10**6 for x in sizes)):  # fmt: skip
        return None, (f"a simgrid-torus zone takes its grid: 'shape D1 .. Dn', 1 to "
                      f"{MAX_ZONE_DIMS} sizes from 1 to 10^6")  # fmt: skip
    return " ".join(["shape", *(str(int(x)) for x in sizes)]), None


def parse_zones(text: str | None) -> tuple[list[Zone], str | None]:
    """The zones of a ``# piui: zones`` value, or [] and why not: each zone (``;``
    between them) is ``RANGES ROUTING KIND N ... [via G]``, RANGES its processors as
    ``A-B`` runs joined by commas, ROUTING one of :data:`ZONE_ROUTINGS`, then its network
    as ``# piui: network`` says one, and the gateway processor, one of its own; no
    processor in two zones."""
    form = ("expected '# piui: zones = RANGES ROUTING NETWORK [via G]; ...' (e.g. "
            "'1-4,9-14 updown xgft 2 2 2 1 2 1 1 via 1')")  # fmt: skip
    if not text or not text.strip():
        return [], form
    parts = text.split(";")
    if len(parts) > MAX_ZONES:
        return [], f"{counted(len(parts), 'zone')}, more than a zones line holds ({MAX_ZONES:,})"
    zones: list[Zone] = []
    seen: list[tuple[int, int]] = []
    for part in parts:
        words = part.split()
        if len(words) < 3:
            return [], form
        runs = _zone_runs(words[0])
        if runs is None:
            shown = words[0] if len(words[0]) <= 40 else words[0][:40] + "..."
            return [], f"{shown!r} is not processor runs such as '1-4,9-14'"
        if words[1] not in ZONE_ROUTINGS:
            return [], (f"a zone's routing must be one of {', '.join(ZONE_ROUTINGS)}, not "
                        f"{words[1][:40]!r}")  # fmt: skip
        gateway = None
        rest = words[2:]
        if len(rest) >= 2 and rest[-2] == "via":
            if not (is_whole(rest[-1]) and len(rest[-1]) <= 18):
                return [], f"a zone's gateway must be a processor number, not {rest[-1][:40]!r}"
            gateway = int(rest[-1])
            rest = rest[:-2]
        if words[1] == "simgrid-torus":  # a grid, not a network: 'shape D1 .. Dn'
            network, why = _zone_shape(rest)
        else:
            network, why = _network("=", " ".join(rest))
        if why is not None:
            return [], f"zone {words[0][:40]!r}: {why}"
        if gateway is not None and not any(a <= gateway <= b for a, b in runs):
            return [], f"zone {words[0][:40]!r}: its gateway {gateway} is none of its processors"
        seen.extend(runs)
        zones.append(Zone(tuple(runs), words[1], network, gateway))
    seen.sort()
    for (_a0, b0), (a1, _b1) in zip(seen, seen[1:]):
        if a1 <= b0:
            return [], f"processor {a1} is in two zones (or twice in one)"
    return zones, None


def _zones(eq: str, rest: str) -> tuple[str | None, str | None]:
    if not eq:
        return None, parse_zones(None)[1]
    zones, why = parse_zones(_value_text(rest))
    if why is not None:
        return None, why
    return zones_text(zones), None


def check_zones(value: object) -> str | None:
    """A value for ``topology.zones`` as set by a program: None, a text as the file
    holds it, or a list of :class:`Zone`; its written form, or ValueError saying why not."""
    if value is None:
        return None
    if isinstance(value, list):
        if not value:
            return None
        value = zones_text(value)
    if not isinstance(value, str):
        raise ValueError(f"zones must be a text 'RANGES ROUTING NETWORK via G; ...', not {value!r}")
    text, why = _zones("=", value)
    if why is not None:
        raise ValueError(f"zones: {why}")
    return text
