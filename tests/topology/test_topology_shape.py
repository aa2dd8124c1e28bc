"""Shapes and coordinates: from the shape comment, else inferred from the links."""

from pathlib import Path

import numpy as np
import pytest

from parasol_core import load
from parasol_core.model import Link, Topology
from parasol_core.topology.generators import bus, clique, grid, hypercube, ring, torus
from parasol_core.topology.shape import Shape, candidate_shapes, infer_shape, shape_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@pytest.mark.parametrize("dims", [(4, 4), (16, 32), (3, 4, 5), (7,), (2, 1, 3)])
def test_coordinates_follow_row_major_numbering(dims):
    shape = Shape(dims)
    padded = dims + (1,) * (3 - len(dims))
    w, h, _ = padded
    for p in range(1, shape.size + 1):
        coords = shape.coordinates(p)
        x, y, z = coords + (0,) * (3 - len(coords))
        assert p == 1 + x + w * y + w * h * z
        assert shape.processor(coords) == p
    every = np.arange(1, shape.size + 1)
    table = shape.coordinates_array(every)
    assert table.tolist() == [list(shape.coordinates(p)) for p in every.tolist()]
    assert shape.processors_array(table).tolist() == every.tolist()


def test_coordinates_out_of_range_are_errors():
    shape = Shape((4, 4))
    with pytest.raises(ValueError, match="processor 17"):
        shape.coordinates(17)
    with pytest.raises(ValueError):
        shape.processor((4, 0))
    with pytest.raises(ValueError):
        Shape((0, 3))


def test_shape_comment_of_the_samples():
    gcel = load(SAMPLES / "parsytec-gcel.machine")
    assert shape_of(gcel.hardware()) == Shape((16, 32))
    grid4 = load(SAMPLES / "grid4x4.machine")
    assert shape_of(grid4.hardware()) == Shape((4, 4))


def test_shape_inferred_from_the_gcel_links_without_a_comment():
    hw = load(SAMPLES / "parsytec-gcel.machine").hardware()
    hw.shape = None
    assert infer_shape(hw) == Shape((16, 32))
    assert shape_of(hw) == Shape((16, 32))


def test_a_comment_that_disagrees_with_the_processor_count_is_not_used():
    hw = load(SAMPLES / "grid4x4.machine").hardware()
    hw.shape = (2, 8)  # 16 processors, but the links are not those of a 2 x 8 grid...
    assert shape_of(hw) == Shape((2, 8))  # ...the comment is what the user said
    hw.shape = (5, 5)  # 25 is not 16: ignored, and the links decide
    assert shape_of(hw) == Shape((4, 4))


@pytest.mark.parametrize(
    "make, dims",
    [
        (lambda: grid([4, 4], 1, 1), (4, 4)),
        (lambda: grid([3, 4, 5], 1, 1), (3, 4, 5)),
        (lambda: grid([7], 1, 1), (7,)),
        (lambda: grid([2, 6], 1, 1), (2, 6)),
        (lambda: ring(9, 1, 1), (9,)),
        (lambda: torus([4, 4], 1, 1), (4, 4)),
        (lambda: torus([3, 3], 1, 1), (3, 3)),
        (lambda: torus([3, 4, 5], 1, 1), (3, 4, 5)),
        (lambda: hypercube(3, 1, 1), (2, 2, 2)),
        # 4 to 6 dimensions, from the distances the links span
        (lambda: torus([3, 4, 2, 3], 1, 1), (3, 4, 2, 3)),
        (lambda: grid([3, 4, 2, 3], 1, 1), (3, 4, 2, 3)),
        (lambda: torus([4, 3, 2, 2, 3, 2], 1, 1), (4, 3, 2, 2, 3, 2)),
        (lambda: grid([2, 3, 2, 3, 2], 1, 1), (2, 3, 2, 3, 2)),
        (lambda: torus([5, 5, 5, 5], 1, 1), (5, 5, 5, 5)),
    ],
)
def test_inference_recovers_generated_shapes(make, dims):
    topology = make()
    topology.shape = None
    assert infer_shape(topology) == Shape(dims)


@pytest.mark.parametrize("make", [lambda: bus(6, 1, 1), lambda: clique(4, 1, 1)])
def test_buses_and_cliques_have_no_grid_shape(make):
    topology = make()
    assert infer_shape(topology) is None
    assert shape_of(topology) is None


def test_a_hypercube_of_4_or_more_dimensions_is_no_grid():
    """Its links make a 2 x 2 x 2 x 2 mesh, but a hypercube is mapped and drawn by its
    numbering (Gray code), as before 4-6-D shapes were inferred."""
    topology = hypercube(4, 1, 1)
    assert infer_shape(topology) is None


def test_a_4d_torus_with_one_link_more_has_no_shape():
    topology = torus([3, 4, 2, 3], 1, 1)
    topology.shape = None
    topology.links.append(Link(id=999, connect=[1, 3 * 4 + 2]))  # two dimensions at once
    assert infer_shape(topology) is None


def test_a_link_between_non_neighbours_means_no_shape():
    topology = grid([4, 4], 1, 1)
    topology.shape = None
    topology.links.append(Link(id=25, connect=[1, 6]))  # a diagonal
    assert infer_shape(topology) is None


def test_no_links_no_shape():
    assert infer_shape(Topology(processor_count=4, types={1: 1, 2: 1, 3: 1, 4: 1})) is None


def test_candidate_shapes_cover_the_factorisations():
    assert set(candidate_shapes(12)) == {
        (12,), (2, 6), (3, 4), (4, 3), (6, 2), (2, 2, 3), (2, 3, 2), (3, 2, 2),
    }  # fmt: skip


def _with_shape_comment(sizes: str) -> str:
    text = (SAMPLES / "grid4x4.machine").read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "# piui: shape" in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at] = f"{indent}# piui: shape = {sizes}\n"
    return "".join(lines)


@pytest.mark.parametrize("sizes", ["2 2 2 2", "2 1 2 2 2", "1 2 2 1 2 2", "4 4"])
def test_shape_comments_of_up_to_six_sizes_read_and_write_back(sizes):
    from parasol_core import loads
    from parasol_core.syntax.writer import dumps

    text = _with_shape_comment(sizes)
    machine = loads(text)
    dims = tuple(int(w) for w in sizes.split())
    assert machine.hardware().shape == dims
    assert shape_of(machine.hardware()) == Shape(dims)
    assert dumps(machine) == text  # unedited: byte for byte
    machine.hardware().shape = (2, 2, 1, 2, 2, 1)
    again = loads(dumps(machine))
    assert again.hardware().shape == (2, 2, 1, 2, 2, 1)
    assert "# piui: shape = 2 2 1 2 2 1\n" in dumps(machine)


def test_a_shape_comment_of_seven_sizes_is_ignored_with_a_warning():
    from parasol_core import loads
    from parasol_core.analysis.validate import validate

    machine = loads(_with_shape_comment("2 2 1 1 2 2 1"))
    assert machine.hardware().shape is None
    assert any(
        "expected 1 to 6 positive sizes" in d.message for d in validate(machine) if not d.is_error
    )
    assert shape_of(machine.hardware()) == Shape((4, 4))  # the links decide


def test_links_of_no_grid_are_not_tried_against_every_candidate_shape(monkeypatch):
    """A dragonfly's links span many distances, so no grid shape can hold them: the
    inference says so without trying its hundreds of candidate shapes link by link (it
    took 2 s of the index of an 11,088-processor dragonfly), and a torus's links are
    still found."""
    from parasol_core.topology import shape as shape_mod
    from parasol_core.topology.generators import generate

    tried = []
    real = shape_mod._wraps_if_fits
    monkeypatch.setattr(
        shape_mod, "_wraps_if_fits", lambda s, a, b: tried.append(s) or real(s, a, b)
    )
    assert shape_mod.infer_shape(generate("dragonfly", (9, 4, 2, 2), 1e-6, 1e-9)) is None
    assert tried == []
    torus = generate("torus", (6, 4, 5), 1e-6, 1e-9)
    torus.shape = None
    assert shape_mod.infer_shape(torus).dims == (6, 4, 5)
    assert 1 <= len(tried) <= 3  # only the shapes whose distances the links span
