"""The writer: byte-for-byte round trips, edits that touch only themselves, canonical
layout, atomic saves."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from modeltext import MINIMAL

from parasol_core import (
    Link,
    Machine,
    Processor,
    Pvm,
    Timing,
    Topology,
    load,
    loads,
)
from parasol_core.syntax.expression import parse_expression
from parasol_core.syntax.writer import dumps, dumps_canonical, save

SAMPLES = sorted(Path(__file__).resolve().parents[2].glob("sample_models/*.machine"))


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_writes_back_byte_for_byte(path):
    data = path.read_bytes()
    assert dumps(load(path)).encode() == data


ODD = (
    '\r\n# CRLF, odd spacing\r\nbegin machine\r\n\tid=1 ; name =  "x"\r\n'
    "processors = 1 # c\r\ntopologies=0\r\n\r\n  begin processor\r\n id = 1\r\n"
    "begin timings\r\n  iga =   1.50e-7   2e-9\r\nend timings\r\n end processor"
)


def test_odd_layout_without_end_machine_or_final_newline_round_trips():
    assert dumps(loads(ODD)) == ODD


def test_a_changed_timing_changes_only_its_value():
    m = loads(MINIMAL)
    m.processors[0].timings["iga"] = Timing(8e-07)
    out = dumps(m)
    assert changed_lines(MINIMAL, out) == [
        "-            iga = 7.37e-07",
        "+            iga = 8e-07",
    ]


def test_a_value_with_a_trailing_comment_keeps_the_comment():
    m = loads(MINIMAL)
    m.processors[0].timings["ila"] = Timing(6e-07)
    assert changed_lines(MINIMAL, dumps(m)) == [
        "-            ila = 5e-07 1e-08   # mean and standard deviation",
        "+            ila = 6e-07   # mean and standard deviation",
    ]


def test_setting_an_equal_value_changes_nothing():
    m = loads(MINIMAL.replace("7.37e-07", "7.370e-7"))
    m.processors[0].timings["iga"] = Timing(7.37e-07)
    assert dumps(m) == MINIMAL.replace("7.37e-07", "7.370e-7")


def test_crlf_file_keeps_crlf_on_edits_and_insertions():
    text = MINIMAL.replace("\n", "\r\n")
    m = loads(text)
    m.processors[0].timings["cga"] = Timing(1e-6)
    m.name = "renamed"
    out = dumps(m)
    assert "\n" not in out.replace("\r\n", "")
    assert 'name = "renamed"\r\n' in out and "cga = 1e-06\r\n" in out


def test_adding_and_removing_definitions():
    m = loads(MINIMAL)
    proc = m.processors[0]
    proc.timings["cga"] = Timing(3e-06)
    del proc.timings["ila"]
    m.topologies[0].setup = None
    out = dumps(m)
    assert changed_lines(MINIMAL, out) == [
        "-            ila = 5e-07 1e-08   # mean and standard deviation",
        "+            cga = 3e-06",
        "-        setup = 0.0",
    ]
    assert loads(out) == m


def test_adding_a_link_a_processor_and_a_section():
    m = loads(MINIMAL)
    topo = m.topologies[0]
    topo.links.append(Link(2, Timing(1e-05), Timing(1e-06), [2, 1]))
    topo.link_count = 2
    m.processors.append(Processor(2, "SPARC", {"iga": Timing(2e-7)}))
    m.processor_count = 2
    m.pvm = Pvm({"send": parse_expression("1e-4 + ar.bytes * tl(1)(1).speed")})
    out = dumps(m)
    assert loads(out) == m
    assert out.startswith(MINIMAL[: MINIMAL.index("    processors = 1")])
    removed = [line for line in changed_lines(MINIMAL, out) if line.startswith("-")]
    assert sorted(removed) == ["-        links = 1", "-    processors = 1"]
    assert (
        "            end link\n            begin link\n                id = 2\n"
        "                latency = 1e-05\n                speed = 1e-06\n"
        "                connect = 2 2 1\n            end link\n        end linklist\n"
    ) in out
    assert '    end processor\n    begin processor\n        id = 2\n        name = "SPARC"\n' in out
    assert (
        "    begin pvm\n        send = 1e-4 + ar.bytes * tl(1)(1).speed\n    end pvm\nend machine\n"
        in out
    )
    # the new processor follows the old one, the new link the old link
    assert out.index('name = "SPARC"') < out.index("begin topology")
    assert out.index("connect = 2 2 1") > out.index("connect = 2 1 2")


def test_removing_a_section_removes_its_lines_only():
    m = loads(MINIMAL)
    m.processors[0].cache = None
    out = dumps(m)
    assert changed_lines(MINIMAL, out) == [
        "-        begin cache",
        "-            size = 1",
        "-            speed = 1e-07",
        "-            smallloopspeedup = 1.0",
        "-        end cache",
    ]


def test_editing_an_expression_keeps_the_rest_of_its_line():
    m = loads(MINIMAL)
    m.processors[0].combinations["ia_spd"] = parse_expression("pt(1).iga/tl(1)(1).latency")
    assert changed_lines(MINIMAL, dumps(m)) == [
        "-            ia_spd = pt(1).iga / tl(1)(1).speed",
        "+            ia_spd = pt(1).iga/tl(1)(1).latency",
    ]


def test_reordered_children_are_written_in_their_new_order():
    text = MINIMAL.replace("processors = 1", "processors = 2").replace(
        "    end processor\n",
        '    end processor\n    begin processor\n        id = 2\n        name = "B"\n    end processor\n',
    )
    m = loads(text)
    m.processors.reverse()
    out = dumps(m)
    assert loads(out) == m
    assert out.index('name = "B"') < out.index('name = "T805"')


def test_canonical_text_carries_comments_where_they_are_placed():
    from parasol_core.model import Cache, Mpi
    from parasol_core.syntax.writer import Comments

    m = Machine(1, "commented", 1, 1)
    proc = Processor(1, "p", {"iga": Timing(1e-9, 1e-11), "ila": Timing(2e-9)})
    proc.cache = Cache(size=100, smallloopspeedup=Timing(1.0))
    m.processors.append(proc)
    topo = Topology(id=1, name="bus", routing="broadcast", processor_count=70, link_count=1)
    topo.types = dict.fromkeys(range(1, 71), 1)  # enough entries for the table's bulk path
    link = Link(1, Timing(1e-6), Timing(1e-9), list(range(1, 71)))
    topo.links.append(link)
    m.topologies.append(topo)
    m.mpi = Mpi({"bcast": parse_expression("1e-6 + 1e-9 * ar.bytes")})
    c = Comments()
    c.above("how it was measured", "", "  indented")
    c.top(proc, "first in the timings", table="timings")
    c.before(proc, "timings.ila", "before ila")
    c.after(proc, "timings.iga", "iga's; with a semicolon")
    c.bottom(proc, "last in the timings", table="timings")
    c.after(proc.cache, "size", "the knee")
    c.top(topo, "the rule")
    c.after(topo, "types.70", "the last processor")
    c.after(link, "latency", "half a round trip")
    c.after(m.mpi, "entries.bcast", "Q 0.9")
    c.bottom(m.mpi, "allreduce: not fitted")
    text = dumps_canonical(m, comments=c)
    assert text.startswith("# how it was measured\n#\n#   indented\nbegin machine\n")
    for line in ("        begin timings\n            # first in the timings\n            iga = ",
                 "            iga = 1e-09 1e-11  # iga's; with a semicolon\n"
                 "            # before ila\n            ila = 2e-09\n"
                 "            # last in the timings\n        end timings\n",
                 "            size = 100  # the knee\n",
                 "    begin topology\n        # the rule\n        id = 1\n",
                 "            p[70] = 1  # the last processor\n",
                 "                latency = 1e-06  # half a round trip\n",
                 "        bcast = 1e-6 + 1e-9 * ar.bytes  # Q 0.9\n"
                 "        # allreduce: not fitted\n    end mpi\n"):  # fmt: skip
        assert line in text, line
    assert loads(text) == m  # comments change no value
    assert (
        dumps_canonical(m)
        == "\n".join(
            line.split("  #")[0] for line in text.splitlines() if not line.lstrip().startswith("#")
        )
        + "\n"
    )  # and nothing else
    with pytest.raises(ValueError, match="cannot contain"):
        c.after(proc, "id", "two\nlines")
    with pytest.raises(ValueError, match="piui:"):
        c.top(proc, " piui: role = switch")  # would read as an annotation


def test_canonical_layout_of_a_model_built_from_scratch():
    m = Machine(1, "scratch", 1, 1)
    m.processors.append(Processor(1, "p", {"iga": Timing(0.1 + 0.2), "ila": Timing(1e-7, 2e-9)}))
    topo = Topology(shape=(2, 1), id=1, name="pair", routing="XY", processor_count=2, link_count=1)
    topo.types = {1: 1, 2: 1}
    topo.links.append(Link(1, Timing(2.85e-05), Timing(9.1e-07), [1, 2]))
    m.topologies.append(topo)
    text = dumps(m)
    assert text == dumps_canonical(m)
    assert "            iga = 0.30000000000000004\n" in text  # shortest round-trip form
    assert "            ila = 1e-07 2e-09\n" in text
    assert "        # piui: shape = 2 1\n" in text
    assert "                connect = 2 1 2\n" in text
    assert text.startswith("begin machine\n    id = 1\n") and text.endswith("end machine\n")
    assert loads(text) == m


def test_format_of_a_sample_reads_back_as_the_same_model():
    for path in SAMPLES:
        m = load(path)
        assert loads(dumps_canonical(m)) == m


def test_names_that_cannot_be_written_are_refused():
    m = loads(MINIMAL)
    m.name = 'has "quotes"'
    with pytest.raises(ValueError):
        dumps(m)


def test_save_is_atomic_and_keeps_later_saves_lossless(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(MINIMAL)
    m = load(path)
    m.processors[0].timings["iga"] = Timing(8e-07)
    save(m, path)
    first = path.read_text()
    assert changed_lines(MINIMAL, first) == [
        "-            iga = 7.37e-07",
        "+            iga = 8e-07",
    ]
    m.processors[0].timings["cga"] = Timing(1e-06)
    save(m, path)
    assert changed_lines(first, path.read_text()) == ["+            cga = 1e-06"]
    assert [p.name for p in tmp_path.iterdir()] == ["m.machine"]  # no temporary left


def test_a_failed_save_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "m.machine"
    path.write_text(MINIMAL)
    m = load(path)
    m.name = "changed"

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        save(m, path)
    assert path.read_text() == MINIMAL
    assert [p.name for p in tmp_path.iterdir()] == ["m.machine"]
    monkeypatch.undo()
    save(m, path)  # the model still holds the edit and saves once the disk allows
    assert 'name = "changed"' in path.read_text()


def test_save_keeps_the_file_mode(tmp_path):
    path = tmp_path / "m.machine"
    path.write_text(MINIMAL)
    path.chmod(0o640)
    m = load(path)
    m.name = "x"
    save(m, path)
    assert path.stat().st_mode & 0o777 == 0o640
