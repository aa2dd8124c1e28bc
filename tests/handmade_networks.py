"""Fat trees and dragonflies written by hand, link by link, for the tests of the grid
view before the generators (branch ``networks``) exist: the same numbering and the same
annotations a generated one has (docs/decisions.md, "Switches"): compute processors
first (type 1), then the switches (type 2, ``# piui: role = switch``) level by level
from the leaves (fat tree) or router by router, group by group (dragonfly), and the
topology's ``# piui: network = ...`` line (left out with ``say_network=False``, so
that a drawing must find the structure from the links)."""

from __future__ import annotations

HEAD = """\
begin machine
    id = 21
    name = "{name}"
    processors = 2
    topologies = 1

    begin processor
        id = 1
        name = "compute node"
        begin timings
            iga = 7.37e-07
        end timings
    end processor

    begin processor
        # piui: role = switch
        id = 2
        name = "switch"
    end processor

    begin topology
        id = 1
        name = "{name}"
{network}        setup = 0.0
        routing = "shortest"
        processors = {count}
        links = {links}
        begin procid
"""


def machine_text(name: str, compute: int, switches: int, pairs: list[tuple[int, int]],
                 network: str | None) -> str:  # fmt: skip
    count = compute + switches
    out = [HEAD.format(name=name, count=count, links=len(pairs),
                       network=f"        # piui: network = {network}\n" if network else "")]  # fmt: skip
    out += [f"            p[{p}] = {1 if p <= compute else 2}\n" for p in range(1, count + 1)]
    out.append("        end procid\n        begin linklist\n")
    for i, (a, b) in enumerate(pairs, start=1):
        out.append(f"            begin link\n                id = {i}\n"
                   f"                latency = 1e-06\n                speed = 1e-09\n"
                   f"                connect = 2 {a} {b}\n            end link\n")  # fmt: skip
    out.append("        end linklist\n    end topology\nend machine\n")
    return "".join(out)


def fattree_pairs(k: int, n: int) -> tuple[int, int, list[tuple[int, int]]]:
    """A k-ary n-tree: ``k**n`` compute processors, ``n`` levels of ``k**(n-1)``
    switches. Compute processor c (0-based) hangs off level-1 switch ``c // k``; switch
    w of level l joins switch w' of level l + 1 when their base-k digits agree except
    digit l - 1 (the usual butterfly wiring). Returns (compute, switches, 1-based pairs)."""
    compute, per = k**n, k ** (n - 1)

    def switch(level: int, w: int) -> int:
        return compute + (level - 1) * per + w + 1

    pairs = [(c + 1, switch(1, c // k)) for c in range(compute)]
    for level in range(1, n):
        place = k ** (level - 1)
        for w in range(per):
            digit = (w // place) % k
            for d in range(k):
                pairs.append((switch(level, w), switch(level + 1, w + (d - digit) * place)))
    return compute, n * per, pairs


def dragonfly_pairs(g: int, a: int, p: int, h: int) -> tuple[int, int, list[tuple[int, int]]]:
    """A dragonfly of ``g`` groups of ``a`` routers, ``p`` terminals and ``h`` global
    links per router (``g <= a*h + 1``): terminal t (0-based) on router ``t // p``,
    router r in group ``r // a``, every two routers of a group linked, and group i's
    global port q (router ``q // h`` of the group) joined to group ``(i + q + 1) % g``
    (each pair of groups once). Returns (terminals, routers, 1-based pairs)."""
    assert g <= a * h + 1
    terminals = g * a * p

    def router(group: int, j: int) -> int:
        return terminals + group * a + j + 1

    pairs = [(t + 1, terminals + t // p + 1) for t in range(terminals)]
    for i in range(g):
        pairs += [(router(i, j), router(i, m)) for j in range(a) for m in range(j + 1, a)]
    for i in range(g):
        for q in range(g - 1):
            t = (i + q + 1) % g
            if i < t:
                back = (i - t - 1) % g
                pairs.append((router(i, q // h), router(t, back // h)))
    return terminals, g * a, pairs


def fattree_text(k: int = 2, n: int = 3, say_network: bool = True) -> str:
    compute, switches, pairs = fattree_pairs(k, n)
    return machine_text(f"{k}-ary {n}-tree", compute, switches, pairs,
                        f"fattree {k} {n}" if say_network else None)  # fmt: skip


def dragonfly_text(g: int = 5, a: int = 4, p: int = 2, h: int = 1,
                   say_network: bool = True) -> str:  # fmt: skip
    terminals, routers, pairs = dragonfly_pairs(g, a, p, h)
    return machine_text(f"dragonfly {g} {a} {p} {h}", terminals, routers, pairs,
                        f"dragonfly {g} {a} {p} {h}" if say_network else None)  # fmt: skip
