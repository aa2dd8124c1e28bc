"""The `procid` and `mapping` tables as columns (parasol_core/model/inttable.py): a table read
in bulk behaves as the dict it replaces, edits write through to the file losslessly,
and undo gives back the original bytes."""

from __future__ import annotations

import copy
import pickle
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parasol_core.analysis.validate import validate
from parasol_core.model.inttable import IntTable, TableSources
from parasol_core.session.session import Session
from parasol_core.syntax import fastscan
from parasol_core.syntax.loader import loads
from parasol_core.syntax.writer import dumps, save

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

TORUS = torus_text(4)  # 64 processors: its procid table is read in bulk
GRID = (ROOT / "sample_models" / "grid4x4.machine").read_text()


@pytest.fixture(autouse=True)
def _fast_path_on_small_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)


def test_a_bulk_table_is_columns_and_equals_the_dict_it_replaces() -> None:
    m = loads(TORUS)
    types = m.topologies[0].types
    assert isinstance(types, IntTable)
    assert isinstance(m.topologies[0].src.tables["types"].entries, TableSources)
    plain = dict(types)
    assert types == plain and plain == types
    assert list(types) == list(range(1, 65)) and len(types) == 64
    assert types.get(65) is None and 65 not in types and types[1] == plain[1]
    assert types.copy() == types and copy.deepcopy(types) == types
    assert pickle.loads(pickle.dumps(types)) == plain
    other = types.copy()
    other[1] = 99
    assert other != types and types[1] == plain[1]  # a copy owns its columns


def test_a_virtual_mapping_is_read_in_bulk_too() -> None:
    m = loads(GRID)
    assert m.virtuals and all(isinstance(v.mapping, IntTable) for v in m.virtuals)
    assert dumps(m) == GRID


def test_records_of_a_bulk_table_are_made_on_demand_with_positions() -> None:
    m = loads(TORUS)
    topo = m.topologies[0]
    vs = topo.src.tables["types"].entries[7]
    line = TORUS.splitlines(keepends=True)[vs.line - 1]
    assert TORUS[vs.line_start : vs.line_end] == line
    assert TORUS[vs.start : vs.end] == str(topo.types[7])
    assert line.index("p[7]") + 1 == vs.column
    assert topo.src.location("types.7") == (vs.line, vs.column)


def test_diagnostics_of_bulk_tables_have_positions() -> None:
    text = TORUS.replace("p[9] = 1", "p[9] = 8", 1).replace("p[12] = 1", "p[120] = 1", 1)
    m = loads(text)
    found = [d for d in validate(m) if "p[9]" in d.message or "p[120]" in d.message]
    lines = text.splitlines()
    assert len(found) == 2
    for d in found:
        key = "p[9]" if "p[9]" in d.message else "p[120]"
        assert key in lines[d.line - 1]


def test_edits_write_through_and_save_losslessly(tmp_path: Path) -> None:
    path = tmp_path / "torus.machine"
    path.write_text(TORUS)
    session = Session.open(path)
    session.set("tp(1)(5)", "2")
    assert session.machine.topologies[0].types[5] == 2
    session.save()
    saved = path.read_text()
    assert saved == TORUS.replace("p[5] = 1", "p[5] = 2", 1)
    session.set("tp(1)(6)", "3")  # a second edit after the save moved nothing
    session.save()
    assert path.read_text() == saved.replace("p[6] = 1", "p[6] = 3", 1)
    session.undo()
    session.undo()
    session.save()
    assert path.read_text() == TORUS
    assert dict(loads(TORUS).topologies[0].types) == dict(session.machine.topologies[0].types)


def test_a_mapping_edit_and_its_undo(tmp_path: Path) -> None:
    path = tmp_path / "grid.machine"
    path.write_text(GRID)
    session = Session.open(path)
    virt = session.machine.virtuals[0]
    old = virt.mapping[2]
    session.set(f"vm({virt.id})(2)", "5")
    assert virt.mapping[2] == 5
    session.save()
    assert loads(path.read_text()).virtuals[0].mapping[2] == 5
    session.undo()
    assert virt.mapping[2] == old
    session.save()
    assert path.read_text() == GRID


# ---------------------------------------------------------------- against a plain dict

KEYS = st.integers(min_value=0, max_value=80)  # the file has no negative numbers
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, st.integers(min_value=0, max_value=9)),
        st.tuples(st.just("del"), KEYS, st.just(0)),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_random_edits_match_a_dict_and_save_losslessly(ops: list) -> None:
    m = loads(TORUS)
    table = m.topologies[0].types
    plain = dict(table)
    for op, key, value in ops:
        if op == "set":
            table[key] = value
            plain[key] = value
        elif key in plain:
            del table[key]
            del plain[key]
        else:
            with pytest.raises(KeyError):
                del table[key]
        assert len(table) == len(plain) and (key in table) == (key in plain)
    assert list(table.items()) == list(plain.items())  # the order a dict keeps
    assert table == plain and dict(table) == plain and table.copy() == plain
    again = loads(dumps(m))
    assert dict(again.topologies[0].types) == plain


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_random_edits_saved_in_place_read_back(tmp_path_factory: pytest.TempPathFactory,
                                                ops: list) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("t") / "torus.machine"
    path.write_text(TORUS)
    m = loads(TORUS)
    table = m.topologies[0].types
    plain = dict(table)
    half = len(ops) // 2
    for i, (op, key, value) in enumerate(ops):
        if op == "set":
            table[key] = plain[key] = value
        elif key in plain:
            del table[key], plain[key]
        if i == half:  # a save in the middle: the records move with the text
            save(m, path)
    save(m, path)
    assert dict(loads(path.read_text()).topologies[0].types) == plain
    assert dumps(m) == path.read_text()  # nothing left to write


@given(st.lists(st.tuples(st.integers(-(2**70), 2**70), st.integers(-(2**70), 2**70))))
def test_an_int_table_is_a_dict(pairs: list) -> None:
    table, plain = IntTable(), {}
    for k, v in pairs:
        table[k] = plain[k] = v
    assert list(table.items()) == list(plain.items()) and table == plain
    assert IntTable(plain) == plain and pickle.loads(pickle.dumps(table)) == plain


def test_the_json_dump_of_a_bulk_table_is_the_dicts(monkeypatch: pytest.MonkeyPatch) -> None:
    from parasol_core.syntax.jsonio import dumps as json_dumps

    for text in (TORUS, GRID):
        bulk = json_dumps(loads(text))
        monkeypatch.setattr(fastscan, "MIN_ITEMS", 10**9)  # every line by the reader
        assert not isinstance(loads(text).topologies[0].types, IntTable)
        assert json_dumps(loads(text)) == bulk
        monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)


def test_keys_equal_to_a_number_find_it_as_in_a_dict() -> None:
    table = loads(TORUS).topologies[0].types
    plain = dict(table)
    table[2**70] = plain[2**70] = 1
    del table[5], plain[5]  # no longer dense
    for key in (True, 2.0, 3.5, "4", None, 2**70, -(2**80), 1e300, 5):
        assert (key in table) == (key in plain)
        assert table.get(key) == plain.get(key)


def test_a_table_of_numbers_out_of_order_is_searched() -> None:
    import numpy as np

    table = IntTable.from_columns(np.array([5, 3, 9]), np.array([1, 2, 3]))
    plain = {5: 1, 3: 2, 9: 3}
    assert table == plain and list(table) == [5, 3, 9] and table.distinct()
    for key in (3, 4, 9.0, 2**70, -1, 10):
        assert table.get(key) == plain.get(key)
    assert not IntTable.from_columns(np.array([2, 1, 2]), np.array([1, 1, 1])).distinct()
