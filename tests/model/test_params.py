"""The 150 timing parameters: names, meanings and groups (report appendices A and B)."""

import dataclasses

import pytest

from parasol_core.base.params import (
    ALIASES,
    BY_NAME,
    GROUPS,
    PARAMS,
    Group,
    Kind,
    Locality,
    NumericType,
    Operation,
    TimingParam,
    resolve_name,
)

# Appendix A's timeparams, verbatim (misprints included).
APPENDIX_A_TEXT = (
    "absc absd absi absr aimage aintd aintr aintd anintr argld arr1 arr2 arr3 arr4 "
    "arr5 arr6 arr7 asind asinr atand atanr cga cgd cge cgm cgs cgt cgx chari cla cld "
    "cle clm cls clt clx cmplx2d cmplx2i cmplx2r cmplxc cmplxd cmplxi cmplxr conjgc "
    "dblec dbled dblei dbler dga dgd dge dgm dgs dgt dgx dimd dimi dimr dla dld dle "
    "dln dls dlt dlx dprodr expc expd expr gcom goto iga igd ige igm igs igt igx ila "
    "ild ile ilm ils ilt ilx intc intd inti intr lga lgcc lgdc lgic lgrc lla llcc "
    "lldc llic llrc log10d log10r logc logd logr loopi1 loopin loopoh1 loopohn maxd "
    "maxi maxr modd modi modr nintd nintr pcall realc reald reali realr rga rgd rge "
    "rgm rgs rgt rgx rla rld rle rlm rls rlt rlx signd signi signr sinc sind sinhd "
    "sinhr sinr sqrtc sqrtd sqrti tand tanhd tanhr tanr"
)
APPENDIX_A = APPENDIX_A_TEXT.split()


def appendix_a_fixed() -> list[str]:
    names = list(APPENDIX_A)
    second_aintd = names.index("aintd", names.index("aintd") + 1)
    names[second_aintd] = "anintd"
    names[names.index("sqrti")] = "sqrtr"
    return names


NAMES = [p.name for p in PARAMS]
ARITHMETIC = [p for p in PARAMS if p.kind is Kind.ARITHMETIC]

TYPE_LETTER = {
    "i": NumericType.INTEGER,
    "r": NumericType.REAL,
    "d": NumericType.DOUBLE,
    "c": NumericType.COMPLEX,
}
LOCALITY_LETTER = {"g": Locality.GLOBAL, "l": Locality.LOCAL}
OPERATION_LETTER = {
    "a": Operation.ADDITION,
    "m": Operation.MULTIPLICATION,
    "n": Operation.MULTIPLICATION,  # only in "dln", the report's spelling of dlm
    "d": Operation.DIVISION,
    "e": Operation.SIMPLE_POWER,
    "x": Operation.COMPLEX_POWER,
    "s": Operation.STORE,
    "t": Operation.MEMORY_TRANSFER,
}


# --- names and counts ---------------------------------------------------------


def test_there_are_150_unique_names():
    assert len(PARAMS) == 150
    assert len(set(NAMES)) == 150
    assert list(BY_NAME) == NAMES
    assert all(BY_NAME[p.name] is p for p in PARAMS)


def test_names_and_order_are_appendix_a_with_the_documented_fixes():
    assert len(APPENDIX_A) == 150
    assert NAMES == appendix_a_fixed()


def test_fixed_names():
    for name in ("anintd", "anintr", "sqrtr", "dln", "aimage"):
        assert name in BY_NAME
    for name in ("sqrti", "dlm", "aintnd", "sqrttr", "aimag"):
        assert name not in BY_NAME


@pytest.mark.parametrize(
    ("kind", "count"),
    [
        (Kind.ARITHMETIC, 56),
        (Kind.LOGIC_COMPARE, 10),
        (Kind.FLOW_CONTROL, 8),
        (Kind.ARRAY_INDEX, 7),
        (Kind.INTRINSIC, 69),
    ],
)
def test_counts_per_kind(kind, count):
    assert sum(p.kind is kind for p in PARAMS) == count


def test_logic_flow_and_array_names():
    def names(kind: Kind) -> set[str]:
        return {p.name for p in PARAMS if p.kind is kind}

    assert names(Kind.LOGIC_COMPARE) == {
        "lga",
        "lgcc",
        "lgdc",
        "lgic",
        "lgrc",
        "lla",
        "llcc",
        "lldc",
        "llic",
        "llrc",
    }
    assert names(Kind.FLOW_CONTROL) == {
        "goto",
        "gcom",
        "pcall",
        "argld",
        "loopi1",
        "loopin",
        "loopoh1",
        "loopohn",
    }
    assert names(Kind.ARRAY_INDEX) == {f"arr{i}" for i in range(1, 8)}


# --- meanings -----------------------------------------------------------------


def test_every_arithmetic_mnemonic_decodes():
    seen = set()
    for p in ARITHMETIC:
        assert len(p.name) == 3
        t, loc, op = p.name
        assert p.numeric_type is TYPE_LETTER[t]
        assert p.locality is LOCALITY_LETTER[loc]
        assert p.operation is OPERATION_LETTER[op]
        assert p.description == (f"{p.numeric_type.value} {p.locality.value} {p.operation.value}")
        seen.add((p.numeric_type, p.locality, p.operation))
    # every combination of 4 types x 2 localities x 7 operations, once each
    assert len(seen) == 56 == len(NumericType) * len(Locality) * len(Operation)


def test_arithmetic_descriptions_match_appendix_b():
    assert BY_NAME["iga"].description == "integer global addition"
    assert BY_NAME["dln"].description == "double local multiplication"
    assert BY_NAME["cgx"].description == "complex global complex power"
    assert BY_NAME["rle"].description == "real local simple power"
    assert BY_NAME["dlt"].description == "double local memory transfer"
    assert BY_NAME["ils"].description == "integer local store"


def test_only_dln_breaks_the_naming_scheme():
    irregular = [p.name for p in ARITHMETIC if p.name[2] not in "amdexst"]
    assert irregular == ["dln"]


def test_logic_and_compare_attributes():
    for p in PARAMS:
        if p.kind is not Kind.LOGIC_COMPARE:
            continue
        assert p.operation is None
        assert p.locality is {"g": Locality.GLOBAL, "l": Locality.LOCAL}[p.name[1]]
        if p.name in ("lga", "lla"):
            assert p.numeric_type is None
            assert "logic and/or" in p.description
        else:
            assert p.name.endswith("c")
            assert p.numeric_type is TYPE_LETTER[p.name[2]]
            assert p.description.endswith("compare")


def test_flow_and_array_have_no_type_locality_or_operation():
    for p in PARAMS:
        if p.kind in (Kind.FLOW_CONTROL, Kind.ARRAY_INDEX):
            assert (p.numeric_type, p.locality, p.operation) == (None, None, None)


def test_intrinsic_type_is_the_argument_type_given_by_the_last_letter():
    for p in PARAMS:
        if p.kind is not Kind.INTRINSIC:
            continue
        assert p.locality is None
        assert p.operation is None
        letter = "c" if p.name == "aimage" else p.name[-1]
        assert p.numeric_type is TYPE_LETTER[letter], p.name


@pytest.mark.parametrize(
    ("name", "numeric_type"),
    [
        ("dbler", NumericType.REAL),
        ("intd", NumericType.DOUBLE),
        ("chari", NumericType.INTEGER),
        ("aimage", NumericType.COMPLEX),
        ("conjgc", NumericType.COMPLEX),
        ("cmplx2d", NumericType.DOUBLE),
        ("dprodr", NumericType.REAL),
        ("log10r", NumericType.REAL),
        ("dblec", NumericType.COMPLEX),
    ],
)
def test_intrinsic_examples(name, numeric_type):
    assert BY_NAME[name].kind is Kind.INTRINSIC
    assert BY_NAME[name].numeric_type is numeric_type


@pytest.mark.parametrize(
    ("name", "description"),
    [
        # appendix B misprints, fixed
        ("anintd", "double nearest whole number"),
        ("anintr", "real nearest whole number"),
        ("sqrtr", "real sqrt"),
        # and some ordinary entries
        ("aintd", "double truncate"),
        ("aintr", "real truncate"),
        ("aimage", "imaginary part of complex number"),
        ("argld", "procedure call argument load (per byte)"),
        ("arr3", "three dim array index"),
        ("lga", "global logic and/or"),
        ("llrc", "local real compare"),
        ("loopohn", "n times loop overhead"),
        ("dprodr", "double multiplication of two reals"),
        ("tanr", "real tangent"),
    ],
)
def test_descriptions_from_appendix_b(name, description):
    assert BY_NAME[name].description == description


def test_every_parameter_has_a_description():
    assert all(p.description and p.description == p.description.strip() for p in PARAMS)


def test_params_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        BY_NAME["iga"].name = "x"  # type: ignore[misc]
    assert isinstance(PARAMS[0], TimingParam)
    assert isinstance(PARAMS[0].groups, frozenset)


# --- groups ---------------------------------------------------------------------


def test_group_ids_and_display_order():
    assert list(GROUPS) == [
        "all",
        "global",
        "local",
        "arithmetic",
        "addition",
        "multiplication",
        "division",
        "simple_power",
        "complex_power",
        "store",
        "memory_transfer",
        "integer",
        "real",
        "double",
        "complex",
        "logic",
        "flow",
        "array",
        "intrinsic",
    ]
    for group_id, group in GROUPS.items():
        assert isinstance(group, Group)
        assert group.id == group_id
        assert group.label
    assert GROUPS["double"].label == "Double precision"
    assert GROUPS["flow"].label == "Flow control"


@pytest.mark.parametrize(
    ("group_id", "size"),
    [
        ("all", 150),
        ("global", 33),
        ("local", 33),
        ("arithmetic", 56),
        ("addition", 8),
        ("multiplication", 8),
        ("division", 8),
        ("simple_power", 8),
        ("complex_power", 8),
        ("store", 8),
        ("memory_transfer", 8),
        ("logic", 10),
        ("flow", 8),
        ("array", 7),
        ("intrinsic", 69),
    ],
)
def test_group_sizes(group_id, size):
    assert len(GROUPS[group_id].members) == size


def test_global_is_28_arithmetic_and_5_logic_compare():
    members = [BY_NAME[n] for n in GROUPS["global"].members]
    assert sum(p.kind is Kind.ARITHMETIC for p in members) == 28
    assert sum(p.kind is Kind.LOGIC_COMPARE for p in members) == 5
    assert "lga" in GROUPS["global"].members
    assert "lla" in GROUPS["local"].members


def test_addition_group():
    assert set(GROUPS["addition"].members) == {
        "cga",
        "cla",
        "dga",
        "dla",
        "rga",
        "rla",
        "iga",
        "ila",
    }


def test_numeric_type_groups_hold_every_parameter_of_that_type():
    for numeric_type in NumericType:
        expected = [p.name for p in PARAMS if p.numeric_type is numeric_type]
        assert list(GROUPS[numeric_type.value].members) == expected
    integer = GROUPS["integer"].members
    assert {"iga", "lgic", "llic", "chari", "absi"} <= set(integer)
    assert "lga" not in integer
    # 14 arithmetic + 2 compare + 11 intrinsic
    assert len(integer) == 27
    typed = sum(len(GROUPS[t.value].members) for t in NumericType)
    assert typed == 150 - 8 - 7 - 2  # all but flow, array, and lga/lla


def test_members_are_in_params_order_and_match_param_groups():
    for group in GROUPS.values():
        assert list(group.members) == [p.name for p in PARAMS if group.id in p.groups]
    for p in PARAMS:
        assert p.groups <= set(GROUPS)
        assert "all" in p.groups


def test_operation_group_of_each_arithmetic_parameter():
    for p in ARITHMETIC:
        op_group = p.operation.name.lower()
        assert p.name in GROUPS[op_group].members
        assert p.groups == {
            "all",
            "arithmetic",
            op_group,
            p.numeric_type.value,
            p.locality.value,
        }


def test_kind_groups_partition_all():
    kind_groups = ["arithmetic", "logic", "flow", "array", "intrinsic"]
    names = [n for g in kind_groups for n in GROUPS[g].members]
    assert sorted(names) == sorted(NAMES)


# --- aliases ------------------------------------------------------------------


def test_aliases():
    assert dict(ALIASES) == {"sqrti": "sqrtr", "dlm": "dln"}


def test_canonical_names_resolve_without_warning():
    for name in NAMES:
        assert resolve_name(name) == (name, None)


@pytest.mark.parametrize(("alias", "canonical"), [("sqrti", "sqrtr"), ("dlm", "dln")])
def test_aliases_resolve_with_a_warning(alias, canonical):
    resolved, warning = resolve_name(alias)
    assert resolved == canonical
    assert warning is not None
    assert repr(alias) in warning and repr(canonical) in warning


def test_sqrti_warning_text():
    assert resolve_name("sqrti") == (
        "sqrtr",
        "'sqrti' is read as 'sqrtr' (real square root)",
    )


@pytest.mark.parametrize(
    "name", ["", "nonsense", "aintnd", "sqrttr", "aimag", "IGA", " iga", "ia_spd"]
)
def test_unknown_names(name):
    assert resolve_name(name) == (None, None)
