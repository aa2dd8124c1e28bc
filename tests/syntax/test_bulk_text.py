"""The bulk writer (parasol_core/syntax/bulk_text.py) writes the canonical text of the
link-by-link writer exactly: generated topologies, and stores with varied timings,
standard deviations, negative zeros and links of several processors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core.model import Link, Timing, Topology
from parasol_core.model.linkstore import LinkStore, links_from_arrays
from parasol_core.syntax import bulk_text, jsonio
from parasol_core.syntax.loader import loads
from parasol_core.syntax.writer import canonical_lines, dumps_canonical, entry
from parasol_core.topology.generators import generate


def one_by_one(topology: Topology, indent: str = "") -> str:
    inner = indent + "    "
    out = []
    for link in topology.links:
        out.extend(canonical_lines(link, inner + "    "))
    procid = [inner + "    " + entry(Topology.TABLES[0], k, v) for k, v in topology.types.items()]
    return "\n".join(out), "\n".join(procid)


@pytest.mark.parametrize("kind,dims", [("torus", [5, 4, 3]), ("grid", [9, 9]), ("hypercube", [7]),
                                       ("clique", [14]), ("ring", [100])])  # fmt: skip
def test_generated_topologies(kind: str, dims: list[int]) -> None:
    topo = generate(kind, dims, 2.85e-5, 9.1e-7)
    text = "\n".join(canonical_lines(topo))
    links, procid = one_by_one(topo)
    assert links in text and procid in text
    assert bulk_text.can_write_in_bulk(topo.links)
    again = loads("begin machine\n" + text + "\nend machine\n").topologies[0]
    assert again == topo


_means = st.sampled_from([0.0, -0.0, 1e-6, 2.5e-5, 1e300, 5e-324, 0.1 + 0.2])
_sds = st.sampled_from([None, None, 0.0, -0.0, 1e-7])


@given(st.lists(st.tuples(_means, _sds, _means, _sds, st.lists(st.integers(1, 50), min_size=1,
                                                                 max_size=4)),
                min_size=bulk_text.BULK_LINKS, max_size=bulk_text.BULK_LINKS + 20))  # fmt: skip
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_varied_stores(rows: list) -> None:
    links = [Link(id=i, latency=Timing(lm, ls), speed=Timing(sm, ss), connect=c)
             for i, (lm, ls, sm, ss, c) in enumerate(rows, start=1)]  # fmt: skip
    store = LinkStore(links)
    assert bulk_text.can_write_in_bulk(store)
    by_link = "\n".join(line for link in store for line in canonical_lines(link, "      "))
    assert bulk_text.link_sections(store, "      ") == by_link
    topo = Topology(id=1, links=store)  # the JSON dump written from the columns too
    assert jsonio.dumps(topo) == json.dumps(jsonio.to_data(topo), indent=1)


def test_a_machine_with_crlf_line_ends() -> None:
    store = links_from_arrays(np.arange(1, 101), np.arange(1, 101), np.arange(2, 102), 1e-6, 1e-9)
    topo = Topology(id=1, routing="XY", processor_count=101, link_count=100, links=store,
                    types=dict.fromkeys(range(1, 102), 1))  # fmt: skip
    from parasol_core.model import Machine

    machine = Machine(id=1, name="m", processor_count=0, topology_count=1, topologies=[topo])
    text = dumps_canonical(machine, "\r\n")
    assert "\n" not in text.replace("\r\n", "")
    assert loads(text).topologies[0] == topo


@pytest.mark.skipif(bulk_text._text_kernel() is None, reason="the C kernel is not built")
@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(2, 40),
    layout=st.lists(
        st.one_of(st.text(max_size=6), st.integers(-(2**63), 2**63 - 1)), min_size=1, max_size=6
    ),  # fmt: skip
    data=st.data(),
)
def test_the_interleave_kernel_writes_what_the_slices_write(rows, layout, data) -> None:
    """parasol_interleave (native/text.c) gives the text of bulk_text's pure path for
    constant texts (any Unicode) and whole numbers of 64 bits, negative ones included."""
    columns = []
    for item in layout:
        if isinstance(item, str):
            columns.append([item])
        else:
            values = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=rows,
                                        max_size=rows))  # fmt: skip
            columns.append(np.asarray(values, dtype=np.int64))
    if not any(isinstance(c, np.ndarray) for c in columns):
        columns.append(np.arange(rows, dtype=np.int64))
    native = bulk_text._interleave_native(tuple(columns), rows)
    pure = "".join(
        "".join(c[0] if isinstance(c, list) else str(int(c[i])) for c in columns)
        for i in range(rows)
    )  # fmt: skip
    assert native == pure
