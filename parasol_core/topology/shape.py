"""Where processors sit: the grid shape of a topology and the coordinates it implies.

Processors of a grid, torus or cube are numbered from 1 in row-major order,
``p = 1 + x + W*y + W*H*z + ...`` (docs/decisions.md, "Topologies"). The shape ``W [H [D ...]]``
(1 to 6 sizes) comes from the ``# piui: shape`` comment when it agrees with the
processor count, else it is inferred from the links: the smallest shape in which every
two-processor link joins neighbours (one coordinate differs by one, or wraps around).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import product

import numpy as np

from parasol_core.base.arrays import unique
from parasol_core.base.numeric import read_int
from parasol_core.base.words import counted
from parasol_core.model import Topology


@dataclass(frozen=True)
class Shape:
    """The sizes ``(W,)``, ``(W, H)`` or ``(W, H, D)`` of a grid of processors."""

    dims: tuple[int, ...]

    def __post_init__(self) -> None:
        if not self.dims or any(int(n) < 1 for n in self.dims):
            raise ValueError(f"a shape needs positive sizes, got {self.dims!r}")
        object.__setattr__(self, "dims", tuple(int(n) for n in self.dims))

    @property
    def ndim(self) -> int:
        return len(self.dims)

    # cached_property writes the instance dict directly, which a frozen dataclass allows
    @cached_property
    def size(self) -> int:
        return math.prod(self.dims)

    @cached_property
    def strides(self) -> tuple[int, ...]:
        out, step = [], 1
        for n in self.dims:
            out.append(step)
            step *= n
        return tuple(out)

    def padded(self, ndim: int) -> Shape:
        """The same grid with sizes of 1 added up to ``ndim`` dimensions."""
        return Shape(self.dims + (1,) * max(0, ndim - self.ndim))

    def fits(self, ndim: int) -> bool:
        """Whether all sizes above 1 are among the first ``ndim`` (a 4 x 4 x 1 grid is
        two-dimensional)."""
        return all(n == 1 for n in self.dims[ndim:])

    def coordinates(self, p: int) -> tuple[int, ...]:
        """0-based coordinates of processor ``p`` (1-based)."""
        if not 1 <= p <= self.size:
            raise ValueError(f"processor {p} is outside the {self} grid")
        rest, out = p - 1, []
        for n in self.dims:
            rest, c = divmod(rest, n)
            out.append(c)
        return tuple(out)

    def processor(self, coords: Sequence[int]) -> int:
        """The processor number at 0-based ``coords`` (missing trailing ones are 0)."""
        if len(coords) > self.ndim and any(coords[self.ndim :]):
            raise ValueError(f"coordinates {tuple(coords)} are outside the {self} grid")
        p = 1
        for c, n, s in zip(coords, self.dims, self.strides):
            if not 0 <= c < n:
                raise ValueError(f"coordinates {tuple(coords)} are outside the {self} grid")
            p += c * s
        return p

    def coordinates_array(self, p: np.ndarray) -> np.ndarray:
        """Coordinates of many processors at once: shape ``(len(p), ndim)``."""
        rest = np.asarray(p, dtype=np.int64) - 1
        out = np.empty((rest.shape[0], self.ndim), dtype=np.int64)
        for axis, n in enumerate(self.dims):
            out[:, axis] = rest % n
            rest = rest // n
        return out

    def processors_array(self, coords: np.ndarray) -> np.ndarray:
        """Processor numbers of many coordinate rows at once."""
        coords = np.asarray(coords, dtype=np.int64)
        return 1 + coords @ np.asarray(self.strides[: coords.shape[1]], dtype=np.int64)

    def __str__(self) -> str:
        return " x ".join(map(str, self.dims))


@dataclass(frozen=True)
class Layout:
    """Processors 1..count, optionally arranged on a grid: what a routing technique sees.

    ``label`` names the topology in messages (``"topology 1"``, ``"virtual topology 3"``).
    """

    count: int
    shape: Shape | None = None
    label: str = "the topology"
    #: what link-following techniques (``shortest``) search: a hardware topology's
    #: :class:`~parasol_core.topology.shortest.LinkGraph`, None for a virtual one
    graph: object = field(default=None, compare=False, repr=False, hash=False)
    #: what network the topology says it is (``# piui: network``): ``(kind, numbers)``,
    #: for the fat-tree and dragonfly techniques; None when it says nothing
    network: tuple | None = None
    #: regions routed by their own technique (``# piui: zones``, the ``zones`` technique,
    #: topology/zoned.py): its :class:`~parasol_core.syntax.annotations.Zone` list, or None
    zones: tuple | None = field(default=None, compare=False)
    _grids: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def contains(self, p: int) -> bool:
        return 1 <= p <= self.count

    def grid(self, technique: str, ndim: int) -> Shape:
        """The shape padded to ``ndim`` dimensions, or a RoutingError saying why a
        technique that needs one cannot have it."""
        grid = self._grids.get(ndim)
        if grid is not None:
            return grid
        from parasol_core.topology.errors import RoutingError

        if self.shape is None:
            raise RoutingError(
                f"{technique} routing needs a grid shape, and {self.label} has none "
                "(give it one: a virtual topology's Shape in the mapping editor, a "
                "'# piui: shape = W H [D]' comment, or links in grid order)"
            )
        if not self.shape.fits(ndim):
            raise RoutingError(
                f"{technique} routing works on grids of up to "
                f"{counted(ndim, 'dimension', grouped=False)}; "
                f"{self.label} is {self.shape}"
            )
        grid = self._grids[ndim] = self.shape.padded(ndim)
        return grid


# --------------------------------------------------------------------------- topologies


def processor_count(topology: Topology) -> int:
    """The number of processors: the ``processors`` field, else the highest number seen."""
    if topology.processor_count is not None:
        return topology.processor_count
    highest = max(topology.types, default=0)
    _, _, off, procs = topology.links.resolved()
    if off[-1] > off[0]:
        highest = max(highest, int(procs[off[0] : off[-1]].max()))
    return highest


def declared_shape(topology: Topology) -> Shape | None:
    """The shape of the ``# piui: shape`` comment, if it agrees with the processor count."""
    dims = topology.shape
    if not dims:
        return None
    try:
        shape = Shape(tuple(dims))
    except ValueError:
        return None
    return shape if shape.size == processor_count(topology) else None


def shape_of(topology: Topology) -> Shape | None:
    """The topology's shape: its shape comment when it fits, else inferred from the links."""
    return declared_shape(topology) or infer_shape(topology)


def infer_shape(topology: Topology) -> Shape | None:
    """The grid shape the links imply, or None when they are not those of a grid or torus.

    Every candidate ``W``, ``W x H``, ``W x H x D`` (sizes above 1) with the right
    processor count is tried, and shapes of 4 to 6 dimensions whose strides are among
    the distances the links span (:func:`stride_shapes`); a shape fits when each link
    joins two processors that are neighbours in it. Of those that fit, the one needing
    the fewest wrap-around links wins, then the one with the fewest dimensions. Links
    joining more than two processors (a bus) mean there is no grid.
    """
    n = processor_count(topology)
    _, _, off, procs = topology.links.resolved()
    sizes = np.diff(off)
    if (sizes > 2).any() or (sizes == 1).any():
        return None
    two = np.flatnonzero(sizes == 2)
    # A grid of n processors has at least n - 1 links; fewer, and n is only a number
    # written in the file: no search in proportion to it.
    if n < 2 or not two.shape[0] or n > 2 * two.shape[0] + 2:
        return None
    a = procs[off[two]].astype(np.int64)
    b = procs[off[two] + 1].astype(np.int64)
    if a.min() < 1 or b.min() < 1 or max(a.max(), b.max()) > n:
        return None
    # In row-major numbering a link of a grid spans a dimension's stride, or its
    # wrap-around (size - 1 strides): at most two distances a dimension. Links spanning
    # more distinct distances are no grid's, and a candidate is tried link by link only
    # when every distance is one of its own (a dragonfly of 11,088 processors has 692
    # candidates: 2 s of trying before, none now).
    distances = unique(np.abs(a - b))
    if distances.size > MAX_STRIDE_DISTANCES:
        return None
    spans = set(distances.tolist())
    best: tuple[int, int, Shape] | None = None
    for dims in itertools.chain(candidate_shapes(n), stride_shapes(n, a, b, distances)):
        if not spans <= _grid_distances(dims):
            continue
        shape = Shape(dims)
        wraps = _wraps_if_fits(shape, a, b)
        if wraps is None:
            continue
        key = (wraps, shape.ndim)
        if best is None or key < best[:2]:
            best = (wraps, shape.ndim, shape)
    return best[2] if best else None


def candidate_shapes(n: int) -> Iterable[tuple[int, ...]]:
    """Every ``(W,)``, ``(W, H)``, ``(W, H, D)`` with product ``n`` and sizes above 1."""
    yield (n,)
    small = [d for d in range(2, math.isqrt(n) + 1) if n % d == 0]
    divisors = sorted(set(small) | {n // d for d in small})
    for w in divisors:
        yield (w, n // w)
    for w, h in product(divisors, divisors):
        if n % (w * h) == 0 and n // (w * h) >= 2:
            yield (w, h, n // (w * h))


#: Distinct distances between linked processors up to which :func:`stride_shapes` looks
#: for strides (an N-D torus has at most two per dimension: 1 step and the wrap-around).
MAX_STRIDE_DISTANCES = 12


def _grid_distances(dims: tuple[int, ...]) -> set[int]:
    """The distances ``|a - b|`` a neighbour link of a grid or torus of ``dims`` may span
    in row-major numbering: each stride, and each wrap-around (size - 1 strides)."""
    out: set[int] = set()
    stride = 1
    for d in dims:
        if d >= 2:
            out.add(stride)
        if d >= 3:
            out.add((d - 1) * stride)
        stride *= d
    return out


def stride_shapes(n: int, a: np.ndarray, b: np.ndarray,
                  distances: np.ndarray | None = None) -> Iterable[tuple[int, ...]]:  # fmt: skip
    """Shapes of 4 to 6 dimensions (sizes above 1, product ``n``) that links a-b could
    make: in row-major numbering a step along dimension k spans its stride, the product
    of the sizes before it, so the strides are among the distances ``|a - b|``; every
    chain ``1 = s0 < s1 < ...`` of such distances, each dividing the next, gives a
    shape. Nothing when the links span more than :data:`MAX_STRIDE_DISTANCES`
    distances (not a grid), and no shape of size 2 in every dimension: those links are a
    hypercube's, which its own routing and the gray mapping treat as a numbering, not a
    grid (as before shapes of 4 to 6 dimensions were inferred)."""
    if distances is None:
        distances = unique(np.abs(a - b))
    if distances.size > MAX_STRIDE_DISTANCES or not distances.size or distances[0] != 1:
        return
    steps = [int(d) for d in distances.tolist() if n % d == 0 and d < n]

    def chains(chain: list[int]) -> Iterable[list[int]]:
        if 4 <= len(chain) <= 6 and n // chain[-1] >= 2:
            yield chain
        if len(chain) < 6:
            for s in steps:
                if s > chain[-1] and s % chain[-1] == 0 and s // chain[-1] >= 2:
                    yield from chains(chain + [s])

    for chain in chains([1]):
        dims = tuple(q // p for p, q in zip(chain, chain[1:] + [n]))
        if max(dims) > 2:
            yield dims


def _wraps_if_fits(shape: Shape, a: np.ndarray, b: np.ndarray) -> int | None:
    """How many of the links a-b wrap around in ``shape``, or None if one is not a
    neighbour link there."""
    ca, cb = shape.coordinates_array(a), shape.coordinates_array(b)
    diff = np.abs(ca - cb)
    sizes = np.asarray(shape.dims, dtype=np.int64)
    moved = diff != 0
    if not np.all(moved.sum(axis=1) == 1):
        return None
    step = diff.sum(axis=1)
    size = (moved * sizes).sum(axis=1)
    plain = step == 1
    wrap = (step == size - 1) & (size >= 3)
    if not np.all(plain | wrap):
        return None
    return int(np.count_nonzero(~plain))


# --------------------------------------------------------------------------- shapes a user gives

MAX_DIMS = 6
"""A shape has 1 to 6 sizes (Fugaku's Tofu network is a 6-D torus)."""


def square_shape(count: int, ndim: int = 2) -> tuple[int, ...]:
    """The most square factorisation of ``count`` into at most ``ndim`` sizes: the
    largest size as small as it can be, then the next, and so on (so 72 in two is
    9 x 8, in three 6 x 4 x 3; a prime is one size). Sizes from the largest down, with
    no trailing sizes of 1 (but at least one size)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"a processor count is a whole number of 1 or more, not {count!r}")
    if not 1 <= ndim <= MAX_DIMS:
        raise ValueError(f"a shape has 1 to {MAX_DIMS} sizes, not {ndim}")
    dims = _squarest(count, ndim, count)
    assert dims is not None  # (count, 1, 1, ...) always fits
    kept = tuple(d for d in dims if d > 1)
    return kept or (1,)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small) | {n // d for d in small})


def _squarest(n: int, k: int, cap: int) -> tuple[int, ...] | None:
    """The lexicographically smallest descending ``k`` sizes with product ``n``, none
    above ``cap`` (None when there are none): the smallest possible largest size, then
    the same for what remains."""
    if k == 1:
        return (n,) if n <= cap else None
    for m in _divisors(n):
        if m**k < n:  # the largest of k sizes is at least the k-th root
            continue
        if m > cap:
            return None
        rest = _squarest(n // m, k - 1, m)
        if rest is not None:
            return (m, *rest)
    return None


def parse_shape(text: str) -> tuple[int, ...]:
    """A shape as typed: sizes separated by spaces, commas or 'x' ("9 8", "4x3x6").
    ValueError saying what is wrong with it."""
    words = text.replace(",", " ").replace("x", " ").replace("X", " ").replace("×", " ").split()
    if not words:
        raise ValueError(f"a shape is 1 to {MAX_DIMS} sizes, such as '9 8'")
    sizes = []
    for word in words:
        try:  # ASCII digits, as every number read ('٤' and '1_000' were taken)
            sizes.append(read_int(word, "a size", sign=True))
        except ValueError as e:
            raise ValueError(f"{e}: a shape is whole numbers, such as '9 8'") from None
    return tuple(sizes)


def shape_problem(shape: Sequence[int] | None, count: int) -> str | None:
    """What is wrong with ``shape`` as the grid of ``count`` processors: 1 to 6 sizes,
    each a whole number of 1 or more, whose product is the count. None when nothing."""
    if shape is None:
        return None
    dims = tuple(shape)
    if not 1 <= len(dims) <= MAX_DIMS:
        return f"a shape has 1 to {MAX_DIMS} sizes, not {len(dims)}"
    bad = next((d for d in dims if isinstance(d, bool) or not isinstance(d, int) or d < 1), None)
    if bad is not None:
        return f"the sizes of a shape are whole numbers of 1 or more, not {bad!r}"
    size = math.prod(dims)
    if size != count:
        return (f"a {' x '.join(map(str, dims))} grid has "
                f"{counted(size, 'processor', grouped=False)}, not {count}: the "
                "product of the sizes is the processor count")  # fmt: skip
    return None
