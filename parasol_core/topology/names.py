"""Processors' names (issue 36): a topology's ``# piui: names = 1=Tremblay 4=R`` line,
kept by the SimGrid import for a platform's hosts and routers.

Shown beside the number wherever a processor is named (``route``, ``simulate --json``,
the windows), and taken wherever a processor number is (:func:`processor_number`): a
command given ``Tremblay`` routes from processor 1.
"""

from __future__ import annotations

from parasol_core.base.numeric import is_whole
from parasol_core.model import Topology
from parasol_core.topology.errors import RoutingError


def names_of(topology: Topology | None) -> dict[int, str]:
    """Processor number -> name; empty when the topology names none (or its names
    cannot be read: the loader has warned)."""
    from parasol_core.syntax.annotations import check_names, names_of_text

    if topology is None or not topology.names:
        return {}
    try:
        return names_of_text(check_names(topology.names))
    except ValueError:
        return {}


def labelled(topology: Topology | None, numbers: list[int] | tuple[int, ...]) -> list[str]:
    """Each number as shown where a processor is named: ``1 (Tremblay)``, or ``1``."""
    names = names_of(topology)
    return [f"{p} ({names[p]})" if p in names else str(p) for p in numbers]


def processor_number(topology: Topology | None, text: str | int, what: str = "processor") -> int:
    """The processor a command names: a number as given, or a name of the topology's
    names annotation; RoutingError saying which names there are otherwise."""
    if isinstance(text, int):
        return text
    word = str(text).strip()
    if is_whole(word):
        return int(word)
    names = names_of(topology)
    for number, name in names.items():
        if name == word:
            return number
    if not names:
        raise RoutingError(f"{what} {word!r} is not a processor number (the topology names "
                           "no processors)")  # fmt: skip
    some = ", ".join(sorted(names.values())[:5])
    raise RoutingError(f"{what} {word!r} is no processor number and no name of the topology's "
                       f"processors ({len(names):,} named: {some}{', ...' if len(names) > 5 else ''})")  # fmt: skip
