"""Conformance: every grammar rule and every decision of docs/decisions.md, "Lexical rules"."""

from __future__ import annotations

import lark_reference
import pytest
from modeltext import MINIMAL, insert_after, with_lines

from parasol_core import ModelSyntaxError, loads, parse_expression
from parasol_core.analysis.validate import validate
from parasol_core.model import Timing
from parasol_core.model.tree import FUNCTIONS, Binary, Call, Number, Reference, Unary


@pytest.fixture(autouse=True)
def _held_to_the_grammar(monkeypatch):
    """Every text these tests load, and every expression they parse, lark (the
    grammar, tests/lark_reference.py) reads too, and the reader must agree with it."""
    monkeypatch.setitem(globals(), "loads", lark_reference.checked_loads)
    monkeypatch.setitem(globals(), "parse_expression", lark_reference.checked_parse_expression)


def errors(machine):
    return [d for d in validate(machine) if d.is_error]


def warnings(machine):
    return [d for d in validate(machine) if not d.is_error]


def test_minimal_model_loads_clean():
    m = loads(MINIMAL)
    assert validate(m) == []
    assert (m.id, m.name, m.processor_count, m.topology_count) == (7, "Two transputers", 1, 1)
    proc = m.processors[0]
    assert proc.timings == {"iga": Timing(7.37e-07), "ila": Timing(5e-07, 1e-08)}
    assert proc.cache.size == 1 and proc.cache.smallloopspeedup == Timing(1.0)
    assert proc.combinations["ia_spd"].text == "pt(1).iga / tl(1)(1).speed"
    topo = m.topologies[0]
    assert (topo.id, topo.routing, topo.processor_count, topo.link_count) == (1, "XY", 2, 1)
    assert topo.types == {1: 1, 2: 1}
    link = topo.links[0]
    assert (link.id, link.latency, link.speed, link.connect) == (
        1,
        Timing(2.85e-05),
        Timing(9.1e-07),
        [1, 2],
    )


# ---------------------------------------------------------------- lexical decisions


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\x0b", ";"])
def test_every_newline_form_gives_the_same_model(newline):
    text = MINIMAL.replace("\n", newline)
    # a comment runs to the physical end of line, so keep comments off this variant
    text = text.replace("# mean and standard deviation", "").replace(
        "# a minimal but complete model", ""
    )
    assert loads(text) == loads(MINIMAL)


def test_definitions_separated_by_semicolons_on_one_line():
    old = '        id = 1\n        name = "pair"\n        setup = 0.0\n'
    assert old in MINIMAL
    m = loads(MINIMAL.replace(old, '        id = 1; name = "pair"; setup = 0.0\n'))
    assert m == loads(MINIMAL)


def test_tabs_and_spaces_separate_tokens():
    text = with_lines(
        {"connect = 2 1 2": "connect\t=\t2 \t 1\t2", "iga = 7.37e-07": "iga=7.37e-07"}
    )
    assert loads(text) == loads(MINIMAL)


def test_comments_on_empty_lines_and_after_definitions():
    text = MINIMAL.replace("begin machine\n", "begin machine   # the machine\n\n# alone\n\n")
    text = text.replace("id = 7\n", "id = 7 # seven; a semicolon inside a comment\n")
    assert loads(text) == loads(MINIMAL)


def test_keywords_are_lower_case():
    with pytest.raises(ModelSyntaxError) as e:
        loads(MINIMAL.replace("begin machine", "BEGIN MACHINE"))
    assert e.value.line == 2


def test_string_is_anything_but_a_newline_between_quotes():
    m = loads(with_lines({'name = "T805"': 'name = "T805 # not a comment; nor a newline"'}))
    assert m.processors[0].name == "T805 # not a comment; nor a newline"
    with pytest.raises(ModelSyntaxError):
        loads(with_lines({'name = "T805"': 'name = "T8\n05"'}))


@pytest.mark.parametrize("text,value", [("0x1F", 31), ("0x1f", 31), ("0X1", None), ("42", 42)])
def test_integers_decimal_and_hex(text, value):
    source = with_lines({"id = 7": f"id = {text}"})
    if value is None:
        with pytest.raises(ModelSyntaxError):
            loads(source)
    else:
        assert loads(source).id == value


@pytest.mark.parametrize(
    "text,mean",
    [
        ("7.37e-07", 7.37e-07),
        ("7.", 7.0),
        ("-1.5e+3", -1500.0),
        ("1e-6", 1e-6),
        ("1E-6", 1e-6),
        ("2.5E3", 2500.0),
        ("3", 3.0),
    ],
)
def test_timing_numbers(text, mean):
    m = loads(with_lines({"iga = 7.37e-07": f"iga = {text}"}))
    assert m.processors[0].timings["iga"] == Timing(mean)


def test_missing_end_machine_warns_and_accepts():
    m = loads(MINIMAL.replace("end machine\n", ""))
    assert errors(m) == []
    [w] = warnings(m)
    assert "'end machine' is missing" in w.message


def test_file_without_final_newline_loads():
    assert loads(MINIMAL.rstrip("\n")) == loads(MINIMAL)


# ---------------------------------------------------------------- timing names


def test_all_150_canonical_names_are_accepted():
    from parasol_core.base.params import PARAMS

    lines = "\n".join(f"{p.name} = 1e-7" for p in PARAMS)
    m = loads(MINIMAL.replace("iga = 7.37e-07\n", lines + "\n"))
    assert len(m.processors[0].timings) == 150
    assert errors(m) == []


@pytest.mark.parametrize("alias,canonical", [("sqrti", "sqrtr"), ("dlm", "dln")])
def test_aliases_are_read_as_canonical_with_a_warning(alias, canonical):
    m = loads(insert_after("iga = 7.37e-07", f"{alias} = 2e-06"))
    assert m.processors[0].timings[canonical] == Timing(2e-06)
    [w] = warnings(m)
    assert alias in w.message and canonical in w.message and w.line == 13


def test_anintd_is_distinct_from_aintd():
    m = loads(insert_after("iga = 7.37e-07", "aintd = 1e-06\nanintd = 2e-06"))
    assert m.processors[0].timings["aintd"] != m.processors[0].timings["anintd"]
    assert errors(m) == []


def test_unknown_timing_name_is_a_diagnostic_not_a_syntax_error():
    m = loads(insert_after("iga = 7.37e-07", "igq = 1e-06"))
    [e] = errors(m)
    assert "unknown timing parameter 'igq'" in e.message and e.line == 13


def test_smallloopsspeedup_spelling_of_section_3_1_3_is_accepted():
    m = loads(with_lines({"smallloopspeedup = 1.0": "smallloopsspeedup = 1.5"}))
    assert m.processors[0].cache.smallloopspeedup == Timing(1.5)
    assert any("smallloopsspeedup" in w.message for w in warnings(m))


# ---------------------------------------------------------------- repeated definitions


def test_repeated_field_last_wins_and_warning_names_both_lines():
    m = loads(insert_after('name = "Two transputers"', 'name = "Renamed"'))
    assert m.name == "Renamed"
    [w] = warnings(m)
    assert (w.line, "line 4") == (5, "line 4") and "line 4" in w.message


def test_repeated_timing_last_wins():
    m = loads(insert_after("ila = 5e-07 1e-08   # mean and standard deviation", "iga = 9e-07"))
    assert m.processors[0].timings["iga"] == Timing(9e-07)
    [w] = warnings(m)
    assert "'iga'" in w.message and "line 12" in w.message and w.line == 14


def test_repeated_once_only_section_last_wins():
    second = "begin cache\nsize = 64\nend cache"
    m = loads(insert_after("end cache", second))
    assert m.processors[0].cache.size == 64
    assert any("'cache' is defined again" in w.message for w in warnings(m))


@pytest.mark.parametrize("field", ["id", "name", "processors", "topologies"])
def test_missing_machine_field_is_an_error(field):
    line = {
        "id": "id = 7",
        "name": 'name = "Two transputers"',
        "processors": "processors = 1",
        "topologies": "topologies = 1",
    }[field]
    m = loads(with_lines({line: None}))
    assert any(f"no '{field}' field" in e.message for e in errors(m))


# ---------------------------------------------------------------- counts and ranges


def test_processors_count_disagreeing_with_sections():
    m = loads(with_lines({"processors = 1": "processors = 2"}))
    [e] = errors(m)
    assert "'processors = 2' but 1 processor" in e.message and e.line == 5


def test_topologies_count_counts_topology_and_virtual_sections():
    virtual = """begin virtual
id = 2
routing = "1Dtorus"
processors = 2
begin mapping
map[1] = 2
map[2] = 1
end mapping
end virtual"""
    m = loads(insert_after("end topology", virtual))
    [e] = errors(m)
    assert "'topologies = 1' but 2 topology and virtual" in e.message
    assert errors(loads(with_lines({"topologies = 1": "topologies = 2"}, m.src.text))) == []


def test_topology_processor_count_vs_p_lines():
    m = loads(with_lines({"p[2] = 1": None}))
    assert any("'processors = 2' but 1 p[i] lines" in e.message for e in errors(m))


def test_link_count_vs_links():
    m = loads(with_lines({"links = 1": "links = 3"}))
    assert any("'links = 3' but 1 link sections" in e.message for e in errors(m))


def test_connect_count_vs_numbers():
    m = loads(with_lines({"connect = 2 1 2": "connect = 3 1 2"}))
    [e] = errors(m)
    assert "'connect = 3 ...' but 2 processor numbers follow" in e.message and e.line == 41


def test_processor_type_out_of_range():
    m = loads(with_lines({"p[2] = 1": "p[2] = 5"}))
    [e] = errors(m)
    assert "type 5" in e.message and e.line == 34


def test_processor_number_out_of_range():
    m = loads(with_lines({"p[2] = 1": "p[3] = 1"}))
    assert any("p[3]" in e.message and "out of range" in e.message for e in errors(m))


def test_link_id_out_of_range_and_connect_out_of_range():
    m = loads(with_lines({"id = 1": "id = 1", "connect = 2 1 2": "connect = 2 1 9"}))
    assert any("connects processor 9, out of range 1..2" in e.message for e in errors(m))
    m = loads(MINIMAL.replace("                id = 1\n", "                id = 4\n"))
    assert any("link id 4" in e.message and "out of range 1..1" in e.message for e in errors(m))


def test_mapping_out_of_range():
    virtual = """begin virtual
id = 2
routing = "1Dtorus"
processors = 2
begin mapping
map[1] = 2
map[2] = 3
end mapping
end virtual"""
    m = loads(insert_after("end topology", virtual).replace("topologies = 1", "topologies = 2"))
    [e] = errors(m)
    assert "map[2] = 3" in e.message and "1..2" in e.message


def test_duplicate_processor_ids():
    second = 'begin processor\nid = 1\nname = "again"\nend processor'
    m = loads(insert_after("end processor", second).replace("processors = 1", "processors = 2"))
    assert any("processor id 1 is used twice" in e.message for e in errors(m))


def test_unknown_routing_name():
    m = loads(with_lines({'routing = "XY"': 'routing = "zigzag"'}))
    [e] = errors(m)
    assert "unknown routing technique 'zigzag'" in e.message and e.line == 29


def test_several_hardware_topologies_warn():
    second = """begin topology
id = 5
routing = "broadcast"
processors = 2
begin procid
p[1] = 1
p[2] = 1
end procid
end topology"""
    m = loads(insert_after("end topology", second).replace("topologies = 1", "topologies = 2"))
    assert errors(m) == []
    assert any("lowest id (1)" in w.message for w in warnings(m))


def test_semantic_errors_do_not_stop_the_load():
    m = loads(with_lines({"processors = 1": "processors = 9", "p[2] = 1": "p[2] = 4"}))
    assert len(errors(m)) == 2 and m.processors[0].name == "T805"


# ---------------------------------------------------------------- syntax errors


def test_syntax_error_says_where_and_what_was_expected():
    with pytest.raises(ModelSyntaxError) as e:
        loads(with_lines({"size = 1": "size = 1.5"}))
    err = e.value
    assert (err.line, err.column) == (16, 21)
    assert "an integer" in err.message or "end of the line" in err.message
    assert "size = 1.5" in err.context


def test_unknown_section_is_a_syntax_error_listing_the_known_ones():
    with pytest.raises(ModelSyntaxError) as e:
        loads(insert_after("topologies = 1", "begin network\nend network"))
    assert e.value.line == 7 and "'processor'" in e.value.message


def test_truncated_file_names_the_open_section():
    text = MINIMAL[: MINIMAL.index("end link")]
    with pytest.raises(ModelSyntaxError) as e:
        loads(text)
    assert "'begin link'" in e.value.message and "'end link' is missing" in e.value.message


def test_error_carries_the_file_name(tmp_path):
    from parasol_core import load

    path = tmp_path / "bad.machine"
    path.write_text("begin machine\n  id = = 1\n")
    with pytest.raises(ModelSyntaxError) as e:
        load(path)
    assert e.value.file == str(path) and str(e.value).startswith(f"{path}:2:")


# ---------------------------------------------------------------- sections and fields


def test_every_section_kind_loads():
    text = insert_after(
        "end topology",
        """begin virtual
# piui: shape = 2 1
id = 2
name = "ring"
setup = 1e-3
routing = "1Dtorus"
processors = 2
begin mapping
map[1] = 2
map[2] = 1
end mapping
end virtual
begin machinecombinations
maxtotalspd = (tl(1)(1).connect(0) * to(1).links) / tl(1)(1).speed
end machinecombinations
begin pvm
send = 1e-4 + ar.bytes * tl(1)(1).speed
receive = pv.send
end pvm
begin express
exchange = 2 * ex.send
send = 1e-4
end express
begin mpi
send = 5e-5 + ar.bytes * 1e-6 * ar.procs
receive = mp.send
end mpi""",
    ).replace("topologies = 1", "topologies = 2")
    m = loads(text)
    assert errors(m) == []
    v = m.virtuals[0]
    assert (v.shape, v.name, v.setup, v.mapping) == ((2, 1), "ring", Timing(1e-3), {1: 2, 2: 1})
    assert set(m.pvm.entries) == {"send", "receive"}
    assert set(m.express.entries) == {"exchange", "send"}
    assert set(m.mpi.entries) == {"send", "receive"}
    assert "maxtotalspd" in m.combinations.entries


@pytest.mark.parametrize("shape", ["4 4", "16 32", "8 8 8", "5"])
def test_shape_comment_in_topology(shape):
    m = loads(insert_after('name = "pair"', f"# piui: shape = {shape}"))
    assert m.topologies[0].shape == tuple(int(x) for x in shape.split())


def test_shape_comment_outside_a_topology_is_only_a_comment():
    m = loads(insert_after('name = "T805"', "# piui: shape = 4 4"))
    assert m == loads(MINIMAL) and errors(m) == []


def test_malformed_shape_comment_warns():
    m = loads(insert_after('name = "pair"', "# piui: shape = four by four"))
    assert m.topologies[0].shape is None
    assert any("shape comment ignored" in w.message for w in warnings(m))


def test_unknown_combination_and_runtime_names_are_errors():
    m = loads(insert_after("ia_spd = pt(1).iga / tl(1)(1).speed", "xx_spd = 1"))
    assert any("unknown combination 'xx_spd'" in e.message for e in errors(m))
    m = loads(insert_after("end topology", "begin mpi\nscan = 1\nend mpi"))
    assert any("unknown name 'scan' in the mpi section" in e.message for e in errors(m))


# ---------------------------------------------------------------- expressions


def tree(text):
    return parse_expression(text).tree


def n(v):
    return Number(v)


LEVELS = [
    ["||"],
    ["&&"],
    ["|"],
    ["^"],
    ["&"],
    ["==", "!="],
    ["<", "<=", ">", ">="],
    ["<<", ">>"],
    ["+", "-"],
    ["*", "/", "%"],
]


@pytest.mark.parametrize("loose", range(len(LEVELS)))
@pytest.mark.parametrize("tight", range(len(LEVELS)))
def test_binary_precedence_for_every_pair_of_levels(loose, tight):
    if tight <= loose:
        return
    for a in LEVELS[loose]:
        for b in LEVELS[tight]:
            assert tree(f"1 {a} 2 {b} 3") == Binary(a, n(1), Binary(b, n(2), n(3)))
            assert tree(f"1 {b} 2 {a} 3") == Binary(a, Binary(b, n(1), n(2)), n(3))


@pytest.mark.parametrize("level", LEVELS)
def test_binary_operators_group_left(level):
    for a in level:
        for b in level:
            assert tree(f"1 {a} 2 {b} 3") == Binary(b, Binary(a, n(1), n(2)), n(3))


def test_power_binds_tighter_than_unary_and_groups_right():
    assert tree("-2**2") == Unary("-", Binary("**", n(2), n(2)))
    assert tree("2**3**2") == Binary("**", n(2), Binary("**", n(3), n(2)))
    assert tree("2**-1") == Binary("**", n(2), Unary("-", n(1)))
    assert tree("2*3**2") == Binary("*", n(2), Binary("**", n(3), n(2)))


def test_unary_operators_bind_tighter_than_multiplication():
    for op in "-!~":
        assert tree(f"{op}1 * 2") == Binary("*", Unary(op, n(1)), n(2))
    assert tree("- - 1") == Unary("-", Unary("-", n(1)))
    assert tree("!~-1") == Unary("!", Unary("~", Unary("-", n(1))))


def test_parentheses_override_precedence():
    assert tree("(1 + 2) * 3") == Binary("*", Binary("+", n(1), n(2)), n(3))


@pytest.mark.parametrize("func", FUNCTIONS)
def test_every_function_parses(func):
    assert tree(f"{func}(1.5)") == Call(func, Number(1.5))


def test_unknown_function_is_a_syntax_error_naming_it():
    with pytest.raises(ModelSyntaxError) as e:
        parse_expression("1 + foo(2)")
    assert "unknown name 'foo'" in e.value.message and e.value.column == 5


def test_numbers_in_expressions():
    assert tree("0x10") == n(16)
    assert tree("1.5e3") == n(1500.0)
    assert tree("1e-6") == n(1e-6)
    assert isinstance(tree("3").value, int) and isinstance(tree("3.").value, float)


@pytest.mark.parametrize(
    "text,ref",
    [
        ("ma.id", Reference("ma", (), "id")),
        ("pr(1).id", Reference("pr", (1,), "id")),
        ("pt(2).iga", Reference("pt", (2,), "iga")),
        ("pc(1).smallloopspeedup", Reference("pc", (1,), "smallloopspeedup")),
        ("po(1).ia_spd", Reference("po", (1,), "ia_spd")),
        ("mc.maxtotalspd", Reference("mc", (), "maxtotalspd")),
        ("to(1).links", Reference("to", (1,), "links")),
        ("tp(1)(3)", Reference("tp", (1, 3))),
        ("tl(1)(2).connect(0)", Reference("tl", (1, 2), "connect", 0)),
        ("tl(1)(2).latency", Reference("tl", (1, 2), "latency")),
        ("vt(2).processors", Reference("vt", (2,), "processors")),
        ("vm(2)(5)", Reference("vm", (2, 5))),
        ("pv.send", Reference("pv", (), "send")),
        ("ex.combine", Reference("ex", (), "combine")),
        ("mp.receive", Reference("mp", (), "receive")),
        ("ar.bytes", Reference("ar", (), "bytes")),
        ("ar.procs", Reference("ar", (), "procs")),
    ],
)
def test_every_reference_prefix_parses(text, ref):
    assert tree(text) == ref
    assert str(ref) == text


def test_report_examples_parse():
    e = parse_expression("(4*pt(1).ila + 2*pt(1).ils + pt(1).goto) / pc(1).smallloopspeedup")
    assert [str(r) for r in e.references()] == [
        "pt(1).ila",
        "pt(1).ils",
        "pt(1).goto",
        "pc(1).smallloopspeedup",
    ]


def test_unknown_reference_is_a_diagnostic_at_its_line_and_column():
    m = loads(
        with_lines({"ia_spd = pt(1).iga / tl(1)(1).speed": "ia_spd = pt(1).iga / tl(1)(9).speed"})
    )
    [e] = errors(m)
    assert "topology 1 has no link with id 9" in e.message
    assert (e.line, e.column) == (21, 34)


@pytest.mark.parametrize(
    "expr,message",
    [
        ("pt(3).iga", "no processor with id 3"),
        ("pt(1).igq", "'igq' is not a timing parameter"),
        ("pt(1).cga", "processor 1 has no timing 'cga'"),
        ("pc(1).colour", "pc(N).size"),
        ("po(1).dd_spd", "defines no combination 'dd_spd'"),
        ("to(2).links", "no hardware topology with id 2"),
        ("tl(1)(1).connect(3)", "connects 2 processors"),
        ("vt(1).id", "no virtual topology with id 1"),
        ("mc.maxtotalspd", "define no 'maxtotalspd'"),
        ("pv.send", "PVM section defines no 'send'"),
        ("ar.bytes", "only defined inside the pvm, express and mpi sections"),
        ("pt.iga", "pt takes 1 number"),
        ("tp(1)(2).x", "takes no field"),
    ],
)
def test_unresolvable_references(expr, message):
    m = loads(with_lines({"ia_spd = pt(1).iga / tl(1)(1).speed": f"ia_spd = {expr}"}))
    [e] = errors(m)
    assert message in e.message, e.message
    assert e.line == 21


def test_sqrti_alias_works_in_a_reference():
    m = loads(
        insert_after("iga = 7.37e-07", "sqrtr = 1e-6").replace(
            "ia_spd = pt(1).iga / tl(1)(1).speed", "ia_spd = pt(1).sqrti"
        )
    )
    assert errors(m) == []


def test_expression_must_fit_on_one_line():
    with pytest.raises(ModelSyntaxError):
        parse_expression("1 +\n 2")


def test_a_byte_order_mark_is_accepted_and_kept():
    from parasol_core.syntax.writer import dumps

    data = ("\ufeff" + MINIMAL).encode("utf-8")
    m = loads(data)
    assert m == loads(MINIMAL) and errors(m) == []
    assert dumps(m).encode("utf-8") == data
