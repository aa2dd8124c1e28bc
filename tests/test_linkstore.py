"""Links as columns (parasol_core/linkstore.py): ``Topology.links`` is a store of numpy
columns whose ``Link`` objects are views. A view reads and writes its row, keeps its
identity while held and follows its link through inserts and deletes; the store behaves
as the list of links it replaced (checked against a plain list by random edit
sequences); edits through views, the session and undo save losslessly."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core.linkstore import ColumnValues, LinkStore, links_from_arrays
from parasol_core.model import Link, Timing, Topology
from parasol_core.session import Session
from parasol_core.syntax.parser import load, loads
from parasol_core.syntax.writer import dumps, save

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402


def link(i: int, a: int = 1, b: int = 2, speed: float = 1e-6) -> Link:
    return Link(id=i, latency=Timing(1e-5), speed=Timing(speed), connect=[a, b])


def test_a_list_assigned_becomes_a_store_of_views() -> None:
    topo = Topology(id=1, links=[link(1), link(2, 2, 3)])
    assert isinstance(topo.links, LinkStore)
    first = topo.links[0]
    assert first is topo.links[0]  # the same view while held
    first.speed = Timing(3e-6, 1e-7)
    assert topo.links.means("speed")[0] == 3e-6  # written through to the column
    assert topo.links.sds("speed")[0] == 1e-7
    assert topo.links[0].speed == Timing(3e-6, 1e-7)
    first.connect = [4, 5, 6]
    off, procs = topo.links.connect_csr()
    assert procs[off[0] : off[1]].tolist() == [4, 5, 6]
    assert topo.links[1].connect == [2, 3]  # the next row's processors did not move


def test_values_the_columns_cannot_hold_read_back_as_set() -> None:
    topo = Topology(id=1, links=[link(1)])
    view = topo.links[0]
    for attr, value in (("latency", 2.5), ("latency", None), ("id", None), ("connect", (1, 2)),
                        ("connect", []), ("id", 2**70)):  # fmt: skip
        setattr(view, attr, value)
        assert getattr(view, attr) == value and type(getattr(view, attr)) is type(value)
    view.latency = Timing(1e-5)
    assert not np.isnan(topo.links.means("latency")[0])


def test_a_view_follows_its_link_through_inserts_and_deletes() -> None:
    topo = Topology(id=1, links=[link(i) for i in range(1, 6)])
    third = topo.links[2]
    topo.links.insert(0, link(10))
    del topo.links[1]
    assert third.id == 3 and topo.links[2] is third
    third.speed = Timing(9e-6)
    assert topo.links.link_by_id(3).speed == Timing(9e-6)


def test_a_removed_link_keeps_its_values_and_comes_back_as_the_same_view() -> None:
    topo = Topology(id=1, links=[link(i) for i in range(1, 4)])
    second = topo.links[1]
    topo.links.remove(second)
    assert [lk.id for lk in topo.links] == [1, 3]
    assert second.id == 2 and second.connect == [1, 2]  # a plain link now
    second.speed = Timing(7e-6)  # edited while out
    assert topo.links.link_by_id(2) is None
    topo.links.insert(1, second)
    assert topo.links[1] is second and second.speed == Timing(7e-6)
    assert topo.links.means("speed")[1] == 7e-6


def test_link_by_id_finds_the_first_and_follows_edits() -> None:
    topo = Topology(id=1, links=[link(5), link(3), link(5, 2, 3)])
    assert topo.link_by_id(5) is topo.links[0]
    assert topo.link_by_id(4) is None
    topo.links[0].id = 4
    assert topo.link_by_id(4) is topo.links[0]
    assert topo.link_by_id(5) is topo.links[2]
    store = links_from_arrays(
        np.arange(1, 1001), np.arange(1, 1001), np.arange(2, 1002), 1e-6, 1e-9
    )
    assert store.link_by_id(700).connect == [700, 701]


def test_equality_by_content() -> None:
    a = Topology(id=1, links=[link(1), link(2, 2, 3)])
    b = Topology(id=1, links=[link(1), link(2, 2, 3)])
    assert a == b and a.links == [link(1), link(2, 2, 3)]
    b.links[1].speed = Timing(2e-6)
    assert a != b
    b.links[1].speed = Timing(1e-6)
    assert a == b
    built = links_from_arrays([1, 2], [1, 2], [2, 3], 1e-5, 1e-6)
    assert built == a.links


def test_an_unedited_save_and_a_link_edit_save_losslessly(tmp_path: Path) -> None:
    text = torus_text(4)
    path = tmp_path / "t.machine"
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    assert dumps(machine) == text
    links = machine.topologies[0].links
    links[7].speed = Timing(4e-6)
    save(machine, path)
    after = path.read_text(encoding="utf-8")
    changed = [(x, y) for x, y in zip(text.splitlines(), after.splitlines()) if x != y]
    assert len(changed) == 1 and changed[0][1].strip() == "speed = 4e-06"
    assert load(path) == machine
    added = Link(id=len(links) + 1, latency=Timing(1e-5), speed=Timing(1e-6), connect=[1, 5])
    links.append(added)
    machine.topologies[0].link_count = len(links)
    del links[3]
    machine.topologies[0].link_count = len(links)
    save(machine, path)
    fresh = load(path)
    assert fresh == machine
    assert fresh.topologies[0].links[-1].connect == [1, 5]
    assert dumps(machine) == path.read_text(encoding="utf-8")


def test_session_edits_undo_and_save(tmp_path: Path) -> None:
    text = torus_text(8)  # 1,536 links: a bulk edit of them all is one column write
    path = tmp_path / "t.machine"
    path.write_text(text, encoding="utf-8")
    session = Session.open(path)
    topo = session.machine.topologies[0]
    before = topo.links[5].speed
    session.set_value("tl(1)(6).speed", Timing(5e-6))  # the 6th link has id 6
    assert topo.links[5].speed == Timing(5e-6)
    session.undo()
    assert topo.links[5].speed == before
    session.redo()
    ids = tuple(lk.id for lk in topo.links)
    session.set_links(topo.id, ids, speed=Timing(2e-6))  # one bulk step over every link
    assert (topo.links.means("speed") == 2e-6).all()
    assert isinstance(session.history.steps[-1].mutations[-1].olds, ColumnValues)
    session.set_links(topo.id, ids, speed=Timing(2e-6, 1e-8), merge="drag")
    session.set_links(topo.id, ids, speed=Timing(3e-6), merge="drag")  # merged: one step
    assert topo.links[9].speed == Timing(3e-6)
    session.undo()
    assert topo.links[9].speed == Timing(2e-6) and topo.links.sds("speed")[9] != 1e-8
    session.undo()
    assert topo.links[5].speed == Timing(5e-6) and topo.links[6].speed == before
    new = session.new_link(topo.id, 1, 3)
    session.remove_link(topo.id, 2)
    session.undo()  # the removed link is back, where it was, as the same object
    assert topo.links[1].id == 2
    session.save(path)
    assert loads(path.read_text(encoding="utf-8")) == session.machine
    assert topo.link_by_id(new.id).connect == [1, 3]
    session.undo()
    session.undo()
    session.undo()
    session.save(path)
    assert path.read_text(encoding="utf-8") == text  # every edit undone: the file as it was


# --------------------------------------------------------------------------- a property test

_timings = st.builds(Timing, st.sampled_from([0.0, 1e-6, 2.5e-5, 3.0]),
                     st.sampled_from([None, None, 1e-7]))  # fmt: skip
_links = st.builds(Link, id=st.integers(0, 40), latency=_timings, speed=_timings,
                   connect=st.lists(st.integers(1, 9), min_size=1, max_size=4))  # fmt: skip
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), _links),
        st.tuples(st.just("insert"), st.integers(-3, 12), _links),
        st.tuples(st.just("delete"), st.integers(0, 30)),
        st.tuples(st.just("set"), st.integers(0, 30),
                  st.sampled_from(["id", "latency", "speed", "connect"]),
                  st.one_of(st.integers(0, 40), _timings, st.none(),
                            st.lists(st.integers(1, 9), max_size=3))),
        st.tuples(st.just("find"), st.integers(0, 40)),
    ),
    max_size=25,
)  # fmt: skip


def _plain(lk: Link) -> Link:
    return Link(id=lk.id, latency=lk.latency, speed=lk.speed, connect=lk.connect)


@given(start=st.lists(_links, max_size=8), ops=_ops)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_random_edits_match_a_plain_list(start: list[Link], ops: list[tuple]) -> None:
    store = LinkStore([_plain(lk) for lk in start])
    model = [_plain(lk) for lk in start]
    for op in ops:
        if op[0] == "append":
            store.append(_plain(op[1]))
            model.append(_plain(op[1]))
        elif op[0] == "insert":
            store.insert(op[1], _plain(op[2]))
            model.insert(op[1], _plain(op[2]))
        elif op[0] == "delete" and model:
            i = op[1] % len(model)
            del store[i]
            del model[i]
        elif op[0] == "set" and model:
            i = op[1] % len(model)
            setattr(store[i], op[2], op[3])
            setattr(model[i], op[2], op[3])
        elif op[0] == "find":
            want = next((lk for lk in model if lk.id == op[1]), None)
            got = store.link_by_id(op[1])
            assert (got is None) == (want is None) and (got is None or got == want)
        assert len(store) == len(model)
        assert list(store) == model
    copy = LinkStore(list(store))
    assert copy == store


@pytest.mark.parametrize("ids", [[1, 2, 3, 4, 5], [7, 3, 9, 3, 11], []])
def test_rows_of_ids_is_row_of_id_in_bulk(ids):
    from parasol_core.linkstore import LinkStore
    from parasol_core.model import Link, Timing

    store = LinkStore()
    for i in ids:
        store.append(Link(id=i, latency=Timing(1e-6), speed=Timing(1e-9), connect=[1, 2]))
    asked = [0, 1, 3, 5, 7, 9, 11, 12, -4]
    assert store.rows_of_ids(asked).tolist() == [
        -1 if (r := store.row_of_id(i)) is None else r for i in asked
    ]
