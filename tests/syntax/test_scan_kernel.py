"""The C kernels for link lists and for `procid`/`mapping` tables
(parasol_core/native/scan.c) read exactly what the regular expressions of the
pure-Python path read: on every body they take, the same links with the same source
positions, or the same table lines; on the rest they step aside (return None), and the
regular expression decides. Bodies: the samples, a generated torus and thousands of
mutations of a link list and of a table, with line ends, blanks, comments, number forms
and characters the kernels must not misread."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest
from test_fast_parser_differential import mutate

from parasol_core import loads, native
from parasol_core.syntax import fastscan
from parasol_core.syntax.writer import dumps

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_load import torus_text  # noqa: E402

SAMPLES = sorted((ROOT / "sample_models").glob("*.machine"))
BODY = re.compile(r"begin[ \t]+linklist[^\n]*\n(.*?)(?=[ \t]*end[ \t]+linklist)", re.S)

needs_kernel = pytest.mark.skipif(native.load("_scan") is None, reason="the C kernel is not built")


def _links(found: fastscan.LinkColumns | None) -> list | None:
    """Every column of the links read, with where each link's text is, as lists."""
    if found is None:
        return None
    return [
        None if column is None else (
            column if isinstance(column, str) else [x if x == x else "nan" for x in column.tolist()]
        )
        for column in (found.ids, found.lat, found.lat_sd, found.spd, found.spd_sd,
                       found.offsets, found.procs, found.starts, found.lines, found.text)
    ]  # fmt: skip


def check(text: str, start: int, end: int) -> bool:
    """Both paths agree on text[start:end]; True when the kernel took it."""
    by_re = fastscan._scan_links_re(text, start, end, 7)
    found = fastscan._scan_links_native(text, start, end) if text.isascii() else None
    if found is None:
        return False
    by_kernel = fastscan._make_links(text, 7, *found)
    assert _links(by_kernel) == _links(by_re), repr(text[start:end][:400])
    return True


def bodies(text: str) -> list[tuple[int, int]]:
    return [(m.start(1), m.end(1)) for m in BODY.finditer(text)]


LINKS = "".join(
    f"        begin link\n            id = {i}\n            latency = 2.85e-05\n"
    f"            speed = 9.1e-07{' 1e-9' if i % 3 == 0 else ''}\n"
    f"            connect = 2 {i} {i + 1}\n        end link\n"
    for i in range(1, 6)
)


@needs_kernel
def test_samples_and_torus() -> None:
    taken = 0
    for text in [p.read_text(encoding="utf-8") for p in SAMPLES] + [torus_text(5)]:
        for start, end in bodies(text):
            taken += check(text, start, end)
    assert taken >= 3


@needs_kernel
def test_mutated_link_lists() -> None:
    rnd = random.Random(1994)
    taken = agreed_none = 0
    for _ in range(3000):
        body = mutate(LINKS, rnd)
        if not body.endswith("\n"):
            body += "\n"
        text = "begin linklist\n" + body + "end linklist\n"
        start = len("begin linklist\n")
        end = start + len(body)
        if check(text, start, end):
            taken += 1
        elif fastscan._scan_links_re(text, start, end, 1) is None:
            agreed_none += 1
    assert taken > 300 and agreed_none > 300, (taken, agreed_none)


TABLE = "".join(f"        p[{i}] = {i % 3 + 1}\n" for i in range(1, 7)) + "\tp [ 7 ]=007 \n"


def check_table(kind: str, text: str, start: int, end: int) -> bool:
    """Both paths agree on the table body text[start:end]; True when the kernel took it."""
    by_re = fastscan._table_records_re(kind, text, start, end)
    found = fastscan._table_records_native(kind, text, start, end) if text.isascii() else None
    if found is None:
        return False
    assert found == by_re, repr(text[start:end][:400])
    return True


@needs_kernel
@pytest.mark.parametrize("kind", ["procid", "mapping"])
def test_mutated_tables(kind: str) -> None:
    rnd = random.Random(1995)
    table = TABLE if kind == "procid" else TABLE.replace("p[", "map[").replace("p [", "map [")
    taken = agreed_none = 0
    for _ in range(3000):
        body = mutate(table, rnd)
        if not body.endswith("\n"):
            body += "\n"
        text = f"begin {kind}\n" + body + f"end {kind}\n"
        start = len(f"begin {kind}\n")
        end = start + len(body)
        if check_table(kind, text, start, end):
            taken += 1
        elif fastscan._table_records_re(kind, text, start, end) is None:
            agreed_none += 1
    assert taken > 300 and agreed_none > 300, (taken, agreed_none)


@needs_kernel
def test_tables_of_the_samples_and_torus() -> None:
    taken = 0
    for text in [p.read_text(encoding="utf-8") for p in SAMPLES] + [torus_text(5)]:
        for m in re.finditer(r"begin (procid|mapping)\n(.*?)(?=[ \t]*end \1)", text, re.S):
            taken += check_table(m.group(1), text, m.start(2), m.end(2))
    assert taken >= 3


@needs_kernel
def test_kernel_and_pure_python_load_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    text = torus_text(4)
    with_kernel = loads(text)
    monkeypatch.setenv(native.PURE_ENV, "1")
    pure = loads(text)
    assert pure == with_kernel
    for a, b in zip(pure.topologies[0].links, with_kernel.topologies[0].links, strict=True):
        assert a.src == b.src
    assert dumps(pure) == dumps(with_kernel) == text


@pytest.mark.parametrize("bad", ["    @\n", "    id = = 3\n", "    begin link\n", "    end foo\n"])
def test_errors_after_scanned_bodies_say_the_real_line(bad: str) -> None:
    """An error after bodies the bulk scanners took names its own line and column,
    as the reader alone and the grammar run by lark find them."""
    import lark_reference

    import parasol_core.syntax.loader as parser_module
    from parasol_core import ModelSyntaxError

    text = torus_text(3)
    at = text.index("    begin virtual") if "begin virtual" in text else text.rindex("end machine")
    text = text[:at] + bad + text[at:]
    found = []
    for bulk in (True, False):
        parser_module._bulk = bulk
        try:
            with pytest.raises(ModelSyntaxError) as e:
                loads(text)
        finally:
            parser_module._bulk = True
        found.append((e.value.line, e.value.column, e.value.message))
    with pytest.raises(ModelSyntaxError) as e:
        lark_reference.loads(text)
    assert found[0] == found[1]
    assert found[0][:2] == (e.value.line, e.value.column)
    assert found[0][0] == text[:at].count("\n") + 1


def test_a_loaded_model_goes_straight_to_the_oldest_gc_generation():
    """Loading runs without the cyclic collector; what it made goes to the oldest
    generation, so the first collections afterwards do not each scan the whole model."""
    import gc

    from parasol_core.syntax.loader import loads

    text = (
        Path(__file__).resolve().parents[2] / "sample_models" / "parsytec-gcel.machine"
    ).read_text()
    assert gc.isenabled()
    machine = loads(text)
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(machine) in oldest
    # links are columns (their Link objects are views made on demand): their store
    assert id(machine.topologies[0].links) in oldest
    assert gc.isenabled()


@pytest.mark.skipif(native.load("_scan") is None, reason="the C kernel is not built")
@pytest.mark.parametrize("seed", range(6))
def test_the_timing_spans_kernel_finds_what_the_regular_expression_finds(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """parasol_link_timing_spans (a save's bulk rewrite of group edits) gives the spans
    LINK_POS_RE gives, on links of varied blanks and standard deviations, and -1s where
    no link section starts (a text that is not ASCII takes the regular expression)."""
    import numpy as np
    from modeltext import varied_torus_text

    from parasol_core.model.linktext import timing_spans

    text = varied_torus_text(3, seed)
    starts = [m.start() for m in re.finditer(r"(?m)^[ \t]*begin link[ \t]*$", text)]
    rng = random.Random(seed)
    starts += [rng.randrange(len(text)) for _ in range(20)] + [0, len(text) - 1]
    kernel = timing_spans(text, starts)
    monkeypatch.setenv(native.PURE_ENV, "1")
    pure = timing_spans(text, starts)
    assert np.array_equal(kernel, pure)
    assert (kernel[: len(starts) - 22] >= 0).all()
    monkeypatch.delenv(native.PURE_ENV)
    wide = text.replace("3D torus", "3D tørus")  # not ASCII: the same spans, by the regex
    moved = len(wide) - len(text)
    assert moved == 0 and np.array_equal(timing_spans(wide, starts), pure)
