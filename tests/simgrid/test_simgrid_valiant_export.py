"""``dragonfly-valiant`` exports as one Full zone of explicit routes, and says why
(issue 36): Valiant routing sends each pair of processors through its own intermediate
group, which SimGrid 3.32 can only be told pair by pair. Past the route budget the
refusal names the routes, the limit, the reason and the way out."""

from __future__ import annotations

from pathlib import Path

import pytest

from parasol_core import load
from parasol_core.base import budget
from parasol_core.simgrid import export_platform, import_text
from parasol_core.simgrid.exporter import MAX_ROUTES
from parasol_core.topology.generators import generate_over
from parasol_core.topology.index import index_of
from parasol_core.topology.switches import compute_processors

SAMPLE = Path(__file__).resolve().parents[2] / "sample_models" / "slingshot-dragonfly.machine"


def dragonfly(dims, routing: str):
    machine = load(SAMPLE)
    hw = machine.hardware()
    new = generate_over(hw, "dragonfly", list(dims), 3.5e-7, 4e-11)
    new.routing = routing
    machine.topologies[machine.topologies.index(hw)] = new
    return machine


def test_a_valiant_dragonfly_exports_its_routes_and_says_they_grow_as_squares():
    machine = dragonfly((5, 2, 2, 2), "dragonfly-valiant")
    hw = machine.hardware()
    made = export_platform(machine)
    assert '<zone id="' in made.text and 'routing="Full"' in made.text
    assert made.text.count("<route ") > 0
    said = [n for n in made.notes if n.startswith("dragonfly-valiant routing")]
    assert said and "380 explicit routes" in said[0] and "dragonfly-minimal" in said[0]
    again = import_text(made.text).machine.hardware()
    assert again == hw
    hosts = compute_processors(machine, hw).tolist()
    src = [a for a in hosts for b in hosts if a != b]
    dst = [b for a in hosts for b in hosts if a != b]
    # the import compares every explicit route with PARASOL's Valiant route: none differ
    assert not [n for n in import_text(made.text).notes if "differ" in n]
    assert [r.links for r in index_of(again).routes(src, dst)] == [
        r.links for r in index_of(hw).routes(src, dst)
    ]


def test_a_large_valiant_dragonfly_is_refused_saying_why_and_what_to_do():
    machine = dragonfly((17, 8, 8, 4), "dragonfly-valiant")  # 1,088 compute processors
    with pytest.raises(budget.BudgetError) as caught:
        export_platform(machine)
    message = str(caught.value)
    assert "1,182,656 routes" in message and f"{MAX_ROUTES:,} routes" in message
    assert "intermediate group" in message and "'dragonfly-minimal'" in message
