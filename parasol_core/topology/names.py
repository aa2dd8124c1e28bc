"""Processors' names (issue 36): a topology's ``# piui: names = 1=Tremblay 4=R`` line,
kept by the SimGrid import for a platform's hosts and routers.

Shown beside the number wherever a processor is named (``route``, ``simulate --json``,
the windows), and taken wherever a processor number is (:func:`processor_number`): a
command given ``Tremblay`` routes from processor 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache

from parasol_core.base.numeric import is_whole, read_int, why_not_digits
from parasol_core.model import Topology
from parasol_core.syntax.annotations import NameTable, name_table
from parasol_core.topology.errors import RoutingError


def table_of(topology: Topology | None) -> NameTable:
    """The topology's names, looked up both ways; empty when it names none (or its
    names cannot be read: the loader has warned). Cached on its text."""
    text = topology.names if topology is not None else None
    return _table(text) if text else _EMPTY


@lru_cache(maxsize=4)
def _table(text: str) -> NameTable:
    try:
        return name_table(text)
    except ValueError:
        return _EMPTY


_EMPTY = NameTable({}, [])


def names_of(topology: Topology | None) -> dict[int, str]:
    """Processor number -> name, every one spelt out (a small topology, a test)."""
    return dict(table_of(topology).items())


def labelled(topology: Topology | None, numbers: list[int] | tuple[int, ...]) -> list[str]:
    """Each number as shown where a processor is named: ``1 (Tremblay)``, or ``1``."""
    table = table_of(topology)
    out = []
    for p in numbers:
        name = table.name(p)
        out.append(f"{p} ({name})" if name is not None else str(p))
    return out


def names_map(topology: Topology | None, numbers: Iterable[int]) -> dict[str, str]:
    """``{"1": "Tremblay", ...}``: the names of those of ``numbers`` the topology names
    (keys as text: what every JSON answer that names processors carries beside its
    numbers, as ``"names"``; empty when the topology names none)."""
    table = table_of(topology)
    if not len(table):
        return {}
    out = {}
    for p in sorted(set(int(n) for n in numbers)):
        name = table.name(p)
        if name is not None:
            out[str(p)] = name
    return out


def processor_number(topology: Topology | None, text: str | int, what: str = "processor",
                     prefixed: bool = False) -> int:  # fmt: skip
    """The processor a command names: a number as given, or a name of the topology's
    names annotation; RoutingError saying which names there are otherwise. The one rule
    for "a number or a name" (the command line, the estimator, replay's hostfiles, the
    messages files). With ``prefixed`` (a hostfile's ``p5``), ``pN`` that is no name of
    the topology is processor N."""
    if isinstance(text, bool):
        raise RoutingError(f"{what} must be a processor number or name, not {text!r}")
    if isinstance(text, int):
        return text
    if not isinstance(text, str):
        raise RoutingError(f"{what} must be a processor number or name, not {str(text)[:40]!r}")
    word = text.strip()
    if is_whole(word):
        return _whole(word, what)
    table = table_of(topology)
    number = table.number(word)
    if number is not None:
        return number
    if prefixed and word[:1] in ("p", "P") and is_whole(word[1:]):
        return _whole(word[1:], what)
    if not word:
        raise RoutingError(f"{what}: expected a processor number or name, found nothing")
    # a number in digits other than 0-9 ('١٢'): say so, as every number read does
    raise RoutingError(refusal(table, word, what) + why_not_digits(word))


def _whole(digits: str, what: str) -> int:
    """``digits`` (ASCII, matched) as a number, read as every whole number is (a word of
    5,000 digits said Python's own limit and ``sys.set_int_max_str_digits``)."""
    try:
        return read_int(digits, "a processor number")
    except ValueError as e:
        raise RoutingError(f"{what}: {e}") from None


def refusal(table: NameTable, word: str, what: str = "processor") -> str:
    """Why ``word`` names no processor of ``table``: the words of every refusal of a
    processor by name (:func:`processor_number`, a messages file's ends)."""
    if not len(table):
        return f"{what} {word!r} is not a processor number (the topology names no processors)"
    some = ", ".join(table.name(p) or "" for p in _first(table, 5))
    return (f"{what} {word!r} is no processor number and no name of the topology's processors "
            f"({len(table):,} named: {some}{', ...' if len(table) > 5 else ''})")  # fmt: skip


def _first(table: NameTable, k: int) -> list[int]:
    """The lowest ``k`` numbers the table names."""
    numbers = sorted(table.singles)[:k]
    for a, b, *_ in table.runs:
        numbers.extend(range(a, min(b, a + k - 1) + 1))
    return sorted(numbers)[:k]


class ByName(Mapping):
    """Name -> processor number, over a topology's names (what a messages file's ends
    are looked up in: :func:`parasol_core.simulate.messages.parse_messages`)."""

    def __init__(self, topology: Topology | None) -> None:
        self.table = table_of(topology)

    def __getitem__(self, name: object) -> int:
        number = self.table.number(name) if isinstance(name, str) else None
        if number is None:
            raise KeyError(name)
        return number

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.table.number(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (name for _, name in self.table.items())

    def __len__(self) -> int:
        return len(self.table)
