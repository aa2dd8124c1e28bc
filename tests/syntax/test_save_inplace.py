"""A save that only changes values updates the source records in place instead of reading
the written text back (parasol_core.syntax.inplace). After random edits and saves, the
model's records must equal those of a fresh load of the saved file (positions, values
read back, diagnostics, and the records the fast path builds lazily for links), its text
must be the file's, and the next edit must be written exactly as it is for a freshly
loaded copy given the same edit."""

from __future__ import annotations

import copy
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core import Machine, Timing, load, loads
from parasol_core.base.source import is_lazy
from parasol_core.model import CONNECT, INT, STR, TIMING, Block, Link, walk
from parasol_core.model.tree import Expression
from parasol_core.syntax import fastscan, inplace, writer
from parasol_core.syntax.writer import dumps, save

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

SAMPLES = sorted((ROOT / "sample_models").glob("*.machine"))
EDITABLE = (TIMING, INT, STR, CONNECT)


@pytest.fixture(autouse=True)
def _fast_path_on_small_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastscan, "MIN_ITEMS", 1)


@pytest.fixture
def read_backs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the saves that read the whole text back."""
    calls: list[int] = []
    original = writer._save_read_back

    def counted(*args: object) -> None:
        calls.append(1)
        original(*args)

    monkeypatch.setattr(writer, "_save_read_back", counted)
    return calls


# --------------------------------------------------------------------------- edits


def _value(rnd: random.Random, kind: str, old: object) -> object:
    if kind == TIMING:
        mean = rnd.choice(
            [0.0, 1.0, 2.5e-06, 1e-300, 123456.789, rnd.random() * 10 ** rnd.randint(-9, 3)]
        )
        if rnd.random() < 0.3:
            return Timing(mean, rnd.random())
        return Timing(mean) if rnd.random() < 0.8 else mean  # a float too
    if kind == INT:
        return rnd.choice([0, 1, 7, 42, 10**12, rnd.randint(0, 10**6)])
    if kind == STR:
        return "".join(rnd.choice("ab Z9_-.#;(") for _ in range(rnd.randint(0, 12)))
    numbers = [rnd.randint(0, 99) for _ in range(rnd.randint(1, 4))]
    return numbers


def _slots(machine: Machine) -> list[tuple[Block, str, str | None, object, str]]:
    """Every editable value: (block, attribute, table key or None, key, kind)."""
    slots = []
    for block in walk(machine):
        for f in block.FIELDS:
            if f.kind in EDITABLE and getattr(block, f.attr) is not None:
                slots.append((block, f.attr, None, None, f.kind))
        for t in block.TABLES:
            if t.kind in EDITABLE:
                for key in getattr(block, t.attr):
                    slots.append((block, t.attr, "table", key, t.kind))
    return slots


def _address(machine: Machine, block: Block) -> int:
    return next(i for i, b in enumerate(walk(machine)) if b is block)


def edit_plan(machine: Machine, rnd: random.Random, count: int) -> list[tuple]:
    """Random value edits, as (block index, attribute, key, value): the same plan can be
    applied to two loads of one text."""
    slots = _slots(machine)
    plan = []
    for block, attr, table, key, kind in rnd.sample(slots, min(count, len(slots))):
        plan.append((_address(machine, block), attr, table, key, _value(rnd, kind, None)))
    return plan


def apply_plan(machine: Machine, plan: list[tuple]) -> None:
    blocks = list(walk(machine))
    for index, attr, table, key, value in plan:
        block = blocks[index]
        value = copy.copy(value)
        if table is None:
            setattr(block, attr, value)
        else:
            getattr(block, attr)[key] = value


# --------------------------------------------------------------------------- checks


def _expression_offsets(src: object) -> list[int]:
    values = list(src.values.values())
    for ts in src.tables.values():
        values.extend(ts.entries.values())
    return [vs.value.offset for vs in values if isinstance(vs.value, Expression)]


def assert_records_match(machine: Machine, path: Path) -> None:
    """``machine``'s records equal a fresh load of ``path``; lazy link records are built
    without keeping them, so the links stay lazy for the next round."""
    text = path.read_bytes().decode("utf-8")
    fresh = load(path)
    assert machine.src.text == text
    assert dumps(machine) == text
    assert machine.src.diagnostics == fresh.src.diagnostics
    assert machine.src.path == fresh.src.path
    index_a = {id(x): i for i, x in enumerate(walk(machine))}
    index_b = {id(x): i for i, x in enumerate(walk(fresh))}
    for a, b in zip(walk(machine), walk(fresh), strict=True):
        assert type(a) is type(b)
        if is_lazy(a):
            store, uid = a.__dict__["_store"], a.__dict__["_uid"]
            src = store.peek_record(uid)
            assert store.is_unedited(uid), f"{a.label()}: counted as edited"
        else:
            src = a.src
        # the children are the model's objects (which may hold a float where the fresh
        # load has a Timing): compared as which sections they are
        assert replace(src, children={}) == replace(b.src, children={}), (
            f"{a.label()}: the records differ"
        )
        assert {k: [index_a[id(c)] for c in v] for k, v in src.children.items()} == {
            k: [index_b[id(c)] for c in v] for k, v in b.src.children.items()
        }
        assert src.text == text
        assert _expression_offsets(src) == _expression_offsets(b.src)


def edit_save_rounds(text: str, tmp_path: Path, seed: int, rounds: int = 4) -> None:
    rnd = random.Random(seed)
    path = tmp_path / "model.machine"
    path.write_bytes(text.encode("utf-8"))
    machine = load(path)
    save(machine, path)
    assert path.read_bytes() == text.encode("utf-8"), "the unedited save changed the file"
    for _ in range(rounds):
        fresh = load(path)
        plan = edit_plan(machine, rnd, rnd.choice([1, 1, 2, 5]))
        apply_plan(machine, plan)
        apply_plan(fresh, plan)
        other = tmp_path / "fresh.machine"
        try:
            save(fresh, other)
        except (ValueError, TypeError):
            with pytest.raises((ValueError, TypeError)):
                save(machine, path)
            machine = load(path)  # a value the format cannot hold: start again
            continue
        save(machine, path)
        assert path.read_bytes() == other.read_bytes()
        assert_records_match(machine, path)
        if rnd.random() < 0.3:  # build some links' records, as an editor reading them does
            blocks = list(walk(machine))
            for block in rnd.sample(blocks, min(3, len(blocks))):
                block.src  # noqa: B018


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", range(6))
def test_samples(path: Path, seed: int, tmp_path: Path) -> None:
    edit_save_rounds(path.read_bytes().decode("utf-8"), tmp_path, seed)


@pytest.mark.parametrize("seed", range(4))
def test_torus_links_stay_lazy(seed: int, tmp_path: Path, read_backs: list[int]) -> None:
    edit_save_rounds(torus_text(3), tmp_path, seed, rounds=6)


@given(model=S.model_texts(), seed=st.integers(0, 2**32))
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_models_in_varied_layouts(
    model: S.ModelText, seed: int, tmp_path_factory
) -> None:
    edit_save_rounds(model.text, tmp_path_factory.mktemp("m"), seed)


def test_a_timing_edit_is_saved_without_reading_back(tmp_path: Path, read_backs: list[int]) -> None:
    path = tmp_path / "t.machine"
    text = torus_text(4)
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    link = machine.topologies[0].links[10]
    link.latency = Timing(1.5e-05)
    save(machine, path)
    link.speed = Timing(2.0, 0.5)
    machine.topologies[0].links[3].connect = [5, 6]
    save(machine, path)
    assert read_backs == []
    assert_records_match(machine, path)
    saved = path.read_text(encoding="utf-8")
    assert "latency = 1.5e-05" in saved and "speed = 2.0 0.5" in saved
    assert loads(saved) == machine


def test_a_structural_edit_reads_back(tmp_path: Path, read_backs: list[int]) -> None:
    """Links put in another order are rewritten in it, and the text is read back."""
    path = tmp_path / "t.machine"
    path.write_text(torus_text(3), encoding="utf-8")
    machine = load(path)
    links = machine.topologies[0].links
    moved = links[4]
    del links[4]
    links.insert(9, moved)
    save(machine, path)
    assert read_backs == [1]
    assert_records_match(machine, path)


@pytest.mark.parametrize("seed", range(8))
def test_links_removed_and_inserted_save_without_a_read_back(seed: int, tmp_path: Path,
                                                             read_backs: list[int]) -> None:  # fmt: skip
    """Links taken out anywhere in their list, and links inserted after any loaded one
    (the editor's Remove link, and its undo, which puts a link back where it was), are
    saved in place: what follows moves by the characters and lines taken out or put
    in, and the records equal a fresh load's, round after round."""
    rnd = random.Random(seed)
    path = tmp_path / "t.machine"
    path.write_text(torus_text(3) + "# after the model\n", encoding="utf-8")
    machine = load(path)
    topo = machine.topologies[0]
    for _ in range(3):
        for _ in range(rnd.randint(1, 4)):
            if rnd.random() < 0.5 and len(topo.links) > 4:
                del topo.links[rnd.randrange(len(topo.links))]
            else:
                new_id = max(lk.id for lk in topo.links) + 1
                link = Link(id=new_id, latency=Timing(rnd.choice([1e-5, 2.5e-6])),
                            speed=Timing(1e-6, rnd.choice([None, 1e-8])),
                            connect=[rnd.randint(1, 27), rnd.randint(1, 27)])  # fmt: skip
                topo.links.insert(rnd.randint(1, len(topo.links)), link)
        if rnd.random() < 0.5:
            topo.links[rnd.randrange(len(topo.links))].speed = Timing(7e-6)
        topo.link_count = len(topo.links)
        save(machine, path)
        assert read_backs == []
        assert_records_match(machine, path)
        assert load(path) == machine


def test_a_value_followed_on_its_line_reads_back(tmp_path: Path, read_backs: list[int]) -> None:
    """`a = 1; b = 2`: b's column moves when a's text changes length."""
    text = SAMPLES[0].read_text(encoding="utf-8")
    machine = loads(text)
    name_line = f'name = "{machine.name}"'
    assert name_line in text
    text = text.replace(name_line, f"{name_line}; id = {machine.id}", 1)
    path = tmp_path / "m.machine"
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    machine.name = "a longer name than before"
    save(machine, path)
    assert read_backs == [1]
    assert_records_match(machine, path)


def test_a_value_that_cannot_be_written_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.machine"
    text = torus_text(3)
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    machine.topologies[0].name = 'a "quoted" name'
    with pytest.raises(ValueError):
        save(machine, path)
    assert path.read_text(encoding="utf-8") == text


def test_read_back_reads_a_value_as_the_file_does() -> None:
    """A value text reads back as the reader reads it after `=` in a file; anything
    but one value of the kind (or a count that disagrees) is left to a whole parse."""
    assert inplace.read_back(TIMING, "2.5e-06 1.0") == Timing(2.5e-06, 1.0)
    assert inplace.read_back(TIMING, "1e+300") == Timing(1e300)
    assert inplace.read_back(CONNECT, "2 4 5") == (4, 5)
    assert inplace.read_back(INT, "0x10") == 16
    assert inplace.read_back(STR, '"a;b"') == "a;b"
    for kind, text in [(TIMING, "1e999"), (TIMING, "1 2 3"), (INT, "1;2"), (INT, "x"),
                       (CONNECT, "3 4 5"), (STR, '"a" b'), (STR, '"a\nb"'),
                       (INT, "9" * 30)]:  # fmt: skip
        assert inplace.read_back(kind, text) is inplace._NO, (kind, text)


def test_a_copy_keeps_its_own_text(tmp_path: Path, read_backs: list[int]) -> None:
    """A deep copy (as an undo history may keep) is not moved by the original's save."""
    path = tmp_path / "t.machine"
    text = torus_text(3)
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    kept = copy.deepcopy(machine)
    machine.name = "a new and longer name"
    machine.topologies[0].links[-1].latency = Timing(1.25e-05)
    save(machine, path)
    assert read_backs == []
    assert dumps(kept) == text
    kept.topologies[0].links[-2].speed = Timing(4e-07)
    other = tmp_path / "kept.machine"
    save(kept, other)
    assert_records_match(kept, other)
    assert_records_match(machine, path)


@pytest.mark.parametrize("seed", range(3))
def test_appended_links_save_without_a_read_back(seed: int, tmp_path: Path,
                                                 read_backs: list[int]) -> None:  # fmt: skip
    """Links appended after the last of a list (the editor's Add link) are read back on
    their own: the records, lines after them included, equal a fresh load's, and the
    next edits save in place too."""
    rnd = random.Random(seed)
    path = tmp_path / "t.machine"
    text = torus_text(3) + "# after the model\n"
    path.write_text(text, encoding="utf-8")
    machine = load(path)
    topo = machine.topologies[0]
    for _ in range(rnd.randint(1, 3)):
        new_id = max(lk.id for lk in topo.links) + 1
        topo.links.append(Link(id=new_id, latency=Timing(rnd.choice([1e-5, 2.5e-6])),
                               speed=Timing(1e-6, rnd.choice([None, 1e-8])),
                               connect=[rnd.randint(1, 27), rnd.randint(1, 27)]))  # fmt: skip
    topo.link_count = len(topo.links)
    save(machine, path)
    assert read_backs == []
    assert_records_match(machine, path)
    assert load(path) == machine
    topo.links[-1].speed = Timing(7e-6)  # the new link, now a loaded one, edited
    machine.processors[0].timings["iga"] = Timing(1.25e-7)
    save(machine, path)
    assert read_backs == []
    assert_records_match(machine, path)
