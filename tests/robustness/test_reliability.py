"""Reliability of the core (issue 9): each class of failure attacked as a whole.

1. no edit destroys a file: every editable reference x hostile values of every kind;
2. no traceback: overflowing blocks, counts that are not text (the corpus of corrupt
   models through every subcommand is in ``test_reliability_corpus.py``);
3. no unbounded work: counts written in a file, /dev/zero;
4. no wrong route: corrupt link lists through every topology function, ids of any size;
5. positions: every line-end style and a byte-order mark give the same line and column;
6. files that are links, read-only files and their owners.
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timing import peak_bytes

from parasol_core import ModelSyntaxError, loads
from parasol_core.analysis.block_time import estimate_block
from parasol_core.analysis.validate import validate
from parasol_core.base.limits import MAX_INT, read_model_bytes
from parasol_core.cli import main
from parasol_core.model import Link, Timing, Topology
from parasol_core.session.edit import EditError, set_value, slot
from parasol_core.syntax.jsonio import to_data
from parasol_core.syntax.writer import dumps, save
from parasol_core.topology.errors import RoutingError
from parasol_core.topology.index import index_of, route, routes
from parasol_core.topology.mapping import MAPPING_SCHEMES, make_mapping, mapping_quality
from parasol_core.topology.shape import infer_shape
from parasol_core.topology.transfer import RouteTable

ROOT = Path(__file__).resolve().parents[2]
GRID = (ROOT / "sample_models" / "grid4x4.machine").read_text(encoding="utf-8")

FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --------------------------------------------------------------------------- class 1

# Every kind of stored value the grid sample has, by reference.
EDITABLE = [
    "ma.id", "ma.name", "ma.processors", "ma.topologies",
    "mc.maxtotalspd", "mp.send", "pv.send", "ex.send",
    "pr(1).id", "pr(1).name", "pt(1).iga", "pt(1).dgx",
    "pc(1).size", "pc(1).speed", "pc(1).smallloopspeedup", "po(1).ia_spd",
    "to(1).id", "to(1).name", "to(1).setup", "to(1).routing", "to(1).processors",
    "to(1).links", "tp(1)(1)", "tp(1)(16)",
    "tl(1)(1).id", "tl(1)(1).latency", "tl(1)(1).speed", "tl(1)(1).connect",
    "vt(2).id", "vt(2).name", "vt(2).setup", "vt(2).routing", "vt(2).processors",
    "vm(2)(1)",
]  # fmt: skip

_ints = st.integers(-(2**70), 2**70)
HOSTILE = st.one_of(
    _ints.map(str),
    _ints.filter(lambda n: n >= 0).map(hex),
    st.sampled_from(["-1", "-0", "0", str(MAX_INT), str(MAX_INT + 1), "9" * 400, "0x" + "f" * 17]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e400", "-1e400", "nan", "inf", "1e-400", "1e308 1e308", "1 2 3"]),
    st.tuples(_ints, _ints).map(lambda p: f"{p[0]} {p[1]}"),
    st.lists(_ints, max_size=4).map(lambda xs: " ".join(map(str, [len(xs), *xs]))),
    st.text(max_size=12),
    st.sampled_from(['a"b', "a\nb", "a\rb", "a\x0bb", "\udcff", "x" * 1_000_001, "1 # c"]),
    st.sampled_from(["pt(1).iga * 2", "(" * 250 + "1" + ")" * 250, " + ".join(["1"] * 500)]),
)


@FAST
@given(ref=st.sampled_from(EDITABLE), value=HOSTILE)
def test_every_reference_and_value_either_refused_or_saved_so_it_reloads(
    tmp_path: Path, ref: str, value: str
) -> None:
    path = tmp_path / "m.machine"
    path.write_text(GRID, encoding="utf-8")
    machine = loads(GRID, str(path))
    try:
        s = set_value(machine, ref, value)
    except EditError:
        return  # refused before anything was written
    # what set accepted, the file format holds: the save succeeds and reads back
    save(machine, path)
    again = loads(path.read_bytes(), str(path))
    assert to_data(again) == to_data(machine)
    assert s.get() is not None


@pytest.mark.parametrize("value", ["1 # c", "0#"])
@pytest.mark.parametrize("ref", EDITABLE)
def test_a_value_typed_with_a_comment_is_refused_or_reloads_the_same(
    tmp_path: Path, ref: str, value: str
) -> None:
    """Found by the property above (mc.maxtotalspd = "0#"): an expression kept its
    "#..." in its text, which the saved file reads as a comment."""
    test_every_reference_and_value_either_refused_or_saved_so_it_reloads.hypothesis.inner_test(
        tmp_path, ref, value
    )


@pytest.mark.parametrize(
    "ref, value",
    [("ma.id", "-1"), ("pc(1).size", str(2**64)), ("tl(1)(1).connect", "2 1 -3"),
     ("vm(2)(1)", "-7"), ("tp(1)(1)", "99999999999999999999"), ("pr(1).name", "\udcff")],
)  # fmt: skip
@pytest.mark.parametrize("out", ["-i", "-o", "stdout"])
def test_cli_set_of_an_unholdable_value_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, ref: str, value: str, out: str
) -> None:
    path = tmp_path / "a.machine"
    path.write_text(GRID, encoding="utf-8")
    target = tmp_path / "b.machine"
    extra = {"-i": ["-i"], "-o": ["-o", str(target)], "stdout": []}[out]
    status = main(["set", str(path), f"{ref}={value}", *extra])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == "" and "Traceback" not in captured.err and captured.err
    assert path.read_text(encoding="utf-8") == GRID
    assert not target.exists()


def test_a_save_that_would_not_reload_leaves_the_file(tmp_path: Path) -> None:
    """Values put on the objects directly (not through set_value) meet the save's own
    check: verify before the rename."""
    path = tmp_path / "a.machine"
    path.write_text(GRID, encoding="utf-8")
    for attr, bad in [("id", -1), ("id", 2**64), ("name", 'say "hi"')]:
        machine = loads(GRID, str(path))
        setattr(machine, attr, bad)
        with pytest.raises((ModelSyntaxError, ValueError)):
            save(machine, path)
        assert path.read_text(encoding="utf-8") == GRID
        assert [p.name for p in tmp_path.iterdir()] == ["a.machine"]  # no temporary left


@pytest.mark.parametrize(
    "args",
    [["--id", "-1"], ["--id", str(2**63)], ["--processor-type", "-2"],
     ["--name", 'a"b'], ["--setup", "inf"], ["--speed", "nan"], ["--latency", "1e999"]],
)  # fmt: skip
def test_generate_holds_to_the_file_format(capsys: pytest.CaptureFixture, args: list) -> None:
    base = ["generate", "grid", "2", "2", "--latency", "1e-6", "--speed", "1e-8"]
    assert _status([*base, *args]) == 2  # a number out of range: refused as it is read
    captured = capsys.readouterr()
    assert captured.out == "" and "error: " in captured.err


def _status(argv: list) -> int:
    """main's exit status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code)


# --------------------------------------------------------------------------- class 2


@FAST
@given(
    counts=st.dictionaries(
        st.sampled_from(["iga", "igm", "dga", "dgx", "sind"]),
        st.one_of(
            st.floats(min_value=0, allow_infinity=True) | st.just(math.nan),
            st.integers(0, 10**400),
        ),
        min_size=1,
    ),
    cached=st.booleans(),
)
def test_block_gives_a_finite_estimate_or_a_value_error(counts: dict, cached: bool) -> None:
    machine = loads(GRID)
    try:
        estimate = estimate_block(machine, 1, counts, cached)
    except ValueError as e:
        assert str(e)
        return
    assert math.isfinite(estimate.mean) and math.isfinite(estimate.sd)
    assert estimate.mean >= 0 and estimate.sd >= 0


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe{}", b'{"iga": 1e308, "igm": 1e308, "dga": 1e308}', b'{"iga": ' + b"9" * 400 + b"}",
     b'{"iga": ' + b"9" * 5000 + b"}", b"[" * 100_000 + b"]" * 100_000, b'{"iga": -1}'],
)  # fmt: skip
def test_block_command_on_bad_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: bytes
) -> None:
    model = tmp_path / "a.machine"
    model.write_text(GRID.replace("igm = 1.6e-06", "igm = 1e100"), encoding="utf-8")
    counts = tmp_path / "c.json"
    counts.write_bytes(content)
    status = main(["block", str(model), "--processor", "1", str(counts)])
    err = capsys.readouterr().err
    assert status in (1, 2) and err and "please report" not in err


@pytest.mark.parametrize(
    "argv, status",
    [(["transfer", "{f}", "1:2", "--bytes", "1e400"], 2),
     (["transfer", "{f}", "1:2", "--bytes", "nan"], 2),
     (["transfer", "{f}", "1:2", "--bytes", "-1"], 2),
     (["eval", "{f}", "ar.bytes", "--arg", "bytes=-4"], 2),
     (["eval", "{f}", "ar.bytes", "--arg", "bytes=inf"], 2),
     (["eval", "{f}", "ar.procs", "--arg", "procs=0"], 2),
     (["scale", "{f}", "all", "1e300", "-i"], 1)],
)  # fmt: skip
def test_sizes_and_times_stay_finite(
    tmp_path: Path, capsys: pytest.CaptureFixture, argv: list, status: int
) -> None:
    model = tmp_path / "a.machine"
    # a large timing, so that scaling overflows a double
    model.write_text(GRID.replace("igm = 1.6e-06", "igm = 1e100"), encoding="utf-8")
    before = model.read_bytes()
    assert _status([a.format(f=model) for a in argv]) == status
    out, err = capsys.readouterr()
    assert "inf" not in out and "-" not in out
    assert err and "please report" not in err
    assert model.read_bytes() == before


# --------------------------------------------------------------------------- class 3


def _grid_with(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("count", [2**62, 10**18, 2**31, 200_000])
def test_a_processor_count_no_input_backs_is_refused_quickly(count: int) -> None:
    text = _grid_with(GRID, "processors = 16", f"processors = {count}")
    text = text.replace("# piui: shape = 4 4", "")
    machine = loads(text)

    def refused() -> None:
        with pytest.raises(RoutingError, match=str(count)):
            route(machine.hardware(), 1, 2)
        for scheme in MAPPING_SCHEMES:
            with pytest.raises(RoutingError):
                make_mapping(machine, 2, scheme, seed=1)
        with pytest.raises(RoutingError):
            mapping_quality(machine, 2)
        with pytest.raises(RoutingError):
            RouteTable.for_machine(machine).add(1, 2)
        assert infer_shape(machine.hardware()) is None
        validate(machine)

    error, peak = peak_bytes(refused)
    assert error is None, error
    # nothing was built for the count: less memory than 200,000 processors' coordinates
    assert peak < 200_000 * 8, peak


def test_a_virtual_count_or_mapping_number_no_input_backs_is_bounded() -> None:
    text = GRID.replace("map[1] =", f"map[{2**62}] =", 1)
    machine = loads(text)

    def refused() -> None:
        with pytest.raises(RoutingError):
            mapping_quality(machine, 2)
        virt = machine.virtual(2)
        virt.processor_count = 2**62
        with pytest.raises(RoutingError, match=str(2**62)):
            mapping_quality(machine, 2)

    error, peak = peak_bytes(refused)
    assert error is None, error
    assert peak < 10_000_000, peak  # nothing the size of the numbers was built


def test_reading_a_huge_file_of_zeros_stops_early(tmp_path: Path) -> None:
    zeros = tmp_path / "zeros.machine"
    with open(zeros, "wb") as f:
        f.truncate(1 << 28)  # sparse: 256 MB of NUL bytes, one line
    data, peak = peak_bytes(read_model_bytes, str(zeros))
    assert len(data) <= 8 * 1024 * 1024  # it stopped early: not 256 MB
    assert peak < 4 * 8 * 1024 * 1024, peak
    with pytest.raises(ModelSyntaxError, match="too long"):
        loads(data, str(zeros))


def test_check_dev_zero_is_refused_unread(capsys: pytest.CaptureFixture) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    status, peak = peak_bytes(main, ["check", "/dev/zero"])
    assert status == 2
    assert "is a character device, not a regular file" in capsys.readouterr().err
    assert peak < 1024 * 1024, peak  # unread: not a megabyte of its endless zeros


# --------------------------------------------------------------------------- class 4


def _topology(count: int, links: list[tuple[int, list[int]]], routing: str = "XY") -> Topology:
    side = int(math.isqrt(count))
    return Topology(
        shape=(side, side) if side * side == count else None,
        id=1,
        name="t",
        routing=routing,
        processor_count=count,
        link_count=len(links),
        types=dict.fromkeys(range(1, count + 1), 1),
        links=[
            Link(id=i, latency=Timing(1e-6), speed=Timing(1e-8), connect=list(c)) for i, c in links
        ],
    )


def _grid_links(side: int) -> list[list[int]]:
    out = []
    for y in range(side):
        for x in range(side):
            p = 1 + x + side * y
            if x + 1 < side:
                out.append([p, p + 1])
            if y + 1 < side:
                out.append([p, p + side])
    return out


@FAST
@given(
    side=st.integers(2, 5),
    extra=st.lists(
        st.lists(st.integers(-3, 60) | st.integers(2**31 - 2, 2**63 - 1), min_size=2, max_size=40),
        max_size=3,
    ),
    drop=st.sets(st.integers(0, 40), max_size=6),
    ids=st.sampled_from(["small", "int32", "huge"]),
    routing=st.sampled_from(["XY", "YX", "2Dtorus", "broadcast"]),
    seed=st.integers(0, 2**32),
)
def test_a_route_only_ever_crosses_links_that_join_its_processors(
    side: int, extra: list, drop: set, ids: str, routing: str, seed: int
) -> None:
    """Corrupt link lists (processors out of range, huge ids, buses, missing links)
    through route, routes, the route table and mapping quality."""
    count = side * side
    connects = [c for i, c in enumerate(_grid_links(side)) if i not in drop] + extra
    base = {"small": 1, "int32": 2**31 - 10, "huge": 2**62}[ids]
    import random

    order = list(range(len(connects)))
    random.Random(seed).shuffle(order)
    topo = _topology(count, [(base + order[i], c) for i, c in enumerate(connects)], routing)
    joins = {link.id: set(link.connect) for link in topo.links}
    bad = [link.id for link in topo.links if any(not 1 <= p <= count for p in link.connect)]
    pairs = [(a, b) for a in range(1, count + 1) for b in range(1, count + 1)]
    for a, b in pairs:
        try:
            r = route(topo, a, b)
        except RoutingError as e:
            if bad:
                assert f"link {bad[0]}" in str(e) or "link" in str(e)
            continue
        assert not bad, "a topology with a corrupt link must not route"
        for (p, q), lid in zip(zip(r.processors, r.processors[1:]), r.links):
            assert {p, q} <= joins[lid], f"route {a}->{b} crosses link {lid} {joins[lid]}"
            # the lowest-id link holding both
            assert lid == min(k for k, v in joins.items() if {p, q} <= v)
    src = [a for a, _ in pairs]
    dst = [b for _, b in pairs]
    try:
        batch = routes(topo, src, dst)
    except RoutingError:
        return
    assert [tuple(x.links) for x in batch] == [route(topo, a, b).links for a, b in pairs]


def test_the_reported_wrong_route_is_an_error_naming_the_link() -> None:
    text = GRID.replace("connect = 2 2 3", "connect = 2 1 20", 1)
    machine = loads(text)
    with pytest.raises(RoutingError, match=r"link 2 .*processor 20"):
        route(machine.hardware(), 2, 3)
    with pytest.raises(RoutingError, match=r"link 2 "):
        mapping_quality(machine, 2)


@pytest.mark.parametrize("offset", [2**31 - 30, 2**32, 2**62])
def test_mapping_quality_does_not_depend_on_how_big_link_ids_are(offset: int) -> None:
    machine = loads(GRID)
    expected = {v.id: mapping_quality(machine, v) for v in machine.virtuals}
    for link in machine.hardware().links:
        link.id += offset
    for virt in machine.virtuals:
        q = mapping_quality(machine, virt)
        e = expected[virt.id]
        assert (q.congestion, q.dilation_max, q.dilation_mean) == (
            e.congestion,
            e.dilation_max,
            e.dilation_mean,
        )
        assert q.congested_links == tuple(lid + offset for lid in e.congested_links)
    table = RouteTable.for_machine(machine)
    r = table.add(1, 16)
    assert table.transfer_time(r, [], 100.0) > 0
    assert all(lid > offset for lid in route(machine.hardware(), 1, 16).links)


def test_index_memory_does_not_follow_link_ids() -> None:
    topo = _topology(16, [(2**31 - 1 + i, c) for i, c in enumerate(_grid_links(4))])
    index = index_of(topo)
    assert index._dense.nbytes <= 4 * 17 * 17
    assert route(topo, 1, 16).links[0] >= 2**31 - 1


# --------------------------------------------------------------------------- class 5

LINE_ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r", "vt": "\x0b"}
SYNTAX_ERRORS = [
    ("processors = 16", "processors = 16 17"),
    ("id = 3", "id = -3"),
    ("begin timings", "begin timing"),
    ('routing = "XY"', "routing = XY"),
    ("iga = 7.37e-07", "iga = 7.37e-07 1 2"),
    ("maxtotalspd = (", "maxtotalspd = (("),
]


def _where(text: str, bom: bool, end: str) -> tuple[int, int, list]:
    body = text.replace("\n", end)
    try:
        m = loads(("\ufeff" if bom else "") + body)
    except ModelSyntaxError as e:
        return e.line, e.column, []
    return 0, 0, [(d.line, d.column, d.message) for d in validate(m)]


@pytest.mark.parametrize("old, new", SYNTAX_ERRORS + [("links = 24", "links = 99")])
@pytest.mark.parametrize("end", list(LINE_ENDS))
@pytest.mark.parametrize("bom", [False, True])
def test_positions_do_not_depend_on_line_ends_or_a_byte_order_mark(
    old: str, new: str, end: str, bom: bool
) -> None:
    text = _grid_with(GRID, old, new).replace("po(1).ia_spd", "po(9).ia_spd")
    assert _where(text, bom, LINE_ENDS[end]) == _where(text, False, "\n")


def test_a_one_line_file_with_a_byte_order_mark() -> None:
    text = 'begin machine; id = 1; name = "x"; processors = 0; topologies = 0; id = -1\n'
    with pytest.raises(ModelSyntaxError) as plain:
        loads(text)
    with pytest.raises(ModelSyntaxError) as marked:
        loads("\ufeff" + text)
    assert (marked.value.line, marked.value.column) == (plain.value.line, plain.value.column)
    assert plain.value.column == text.index("-1") + 1


@pytest.mark.parametrize("end", list(LINE_ENDS))
@pytest.mark.parametrize("before", ["", "é", "日本語", "😀😀"])
def test_a_bad_byte_is_placed_in_characters(end: str, before: str) -> None:
    text = GRID.replace('name = "T805 Transputer"', f'name = "{before}@@"').replace("\n", end)
    data = text.encode("utf-8").replace(b"@@", b"\xff")
    with pytest.raises(ModelSyntaxError) as info:
        loads(data)
    lines = re.split(r"\r\n?|[\n\x0b]", text)
    line = next(i for i, s in enumerate(lines, 1) if "@@" in s)
    assert (info.value.line, info.value.column) == (line, lines[line - 1].index("@@") + 1)


def test_a_flat_sum_is_not_nesting() -> None:
    expr = " + ".join(["pt(1).iga"] * 250)
    machine = loads(GRID.replace("pt(1).iga / tl(1)(1).speed", expr, 1))
    assert validate(machine) is not None
    from parasol_core.expr.engine import Engine

    assert Engine(machine).value("po(1).ia_spd") == pytest.approx(250 * 7.37e-07)
    with pytest.raises(ModelSyntaxError, match="nested too deeply"):
        loads(GRID.replace("pt(1).iga / tl(1)(1).speed", "(" * 201 + "1" + ")" * 201, 1))


@pytest.mark.parametrize(
    "old, new", [("processors = 16", "processors = 16 17\x00"), ("id = 3", "id = 3 3")]
)
def test_messages_read_as_english(old: str, new: str) -> None:
    for text in (GRID.replace(old, new, 1), "begin machine\n id\n"):
        with pytest.raises(ModelSyntaxError) as info:
            loads(text)
        assert "unexpected the " not in info.value.message
    with pytest.raises(ModelSyntaxError) as info:
        loads("begin machine\n id\n")
    assert "unexpected end of line" in info.value.message


# --------------------------------------------------------------------------- class 6


def test_set_in_place_on_a_symlink_edits_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "models" / "real.machine"
    real.parent.mkdir()
    real.write_text(GRID, encoding="utf-8")
    link = tmp_path / "link.machine"
    link.symlink_to(Path("models") / "real.machine")
    assert main(["set", str(link), "ma.name=edited", "-i"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(Path("models") / "real.machine")
    assert loads(real.read_bytes()).name == "edited"
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.machine"]


def test_a_read_only_file_keeps_its_mode_and_owner(tmp_path: Path) -> None:
    path = tmp_path / "a.machine"
    path.write_text(GRID, encoding="utf-8")
    path.chmod(0o444)
    if os.geteuid() == 0:
        os.chown(path, 1234, 4321)
    before = path.stat()
    machine = loads(path.read_bytes(), str(path))
    set_value(machine, "ma.name", "edited")
    save(machine, path)
    after = path.stat()
    assert stat.S_IMODE(after.st_mode) == 0o444
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert loads(path.read_bytes()).name == "edited"


def test_an_owner_that_cannot_be_kept_leaves_the_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "a.machine"
    path.write_text(GRID, encoding="utf-8")

    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    real_stat = os.stat

    class Other:  # the file seen as another user's
        def __init__(self, st: os.stat_result) -> None:
            self._st = st

        def __getattr__(self, name: str) -> object:
            return {"st_uid": 4242, "st_gid": 4242}.get(name, getattr(self._st, name))

    monkeypatch.setattr(os, "chown", refuse)
    monkeypatch.setattr(Path, "stat", lambda self, **kw: Other(real_stat(self)))
    machine = loads(GRID, str(path))
    set_value(machine, "ma.name", "edited")
    with pytest.raises(PermissionError, match="not replaced"):
        save(machine, path)
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == GRID
    assert [p.name for p in tmp_path.iterdir()] == ["a.machine"]


def test_unedited_save_is_still_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "a.machine"
    for text in (GRID, GRID.replace("\n", "\r"), "\ufeff" + GRID.replace("\n", "\x0b")):
        path.write_bytes(text.encode("utf-8"))
        machine = loads(path.read_bytes(), str(path))
        assert dumps(machine) == text
        save(machine, path)
        assert path.read_bytes() == text.encode("utf-8")
    _ = slot  # the editing API used above


@pytest.mark.parametrize("ref", ["ma.processors", "tl(1)(1).connect"])
def test_large_but_holdable_values_are_accepted(tmp_path: Path, ref: str) -> None:
    machine = loads(GRID)
    value = str(MAX_INT) if ref == "ma.processors" else f"2 1 {MAX_INT}"
    set_value(machine, ref, value)
    path = tmp_path / "a.machine"
    save(machine, path)
    assert loads(path.read_bytes()).processor_count in (MAX_INT, 1)
