"""One benchmark kernel per timing parameter: what the test loop does that the control
loop does not (report 4.2.2-4.2.5, Saavedra-Barrera 1988 ch. 4).

Every kernel is a pair of C loop steps, written as templates the generator
(:mod:`parasol_core.measure.generator`) pastes into one skeleton. The steps of a
*chained* kernel carry a dependency: each step's operand is drawn from an array of
random values filled before timing *and* made to depend on the previous step's result
through an opaque zero (``A + x * zd``, ``A + (x & zi)``: the compiler cannot know that
``zd``/``zi``, read from a volatile, are zero). The control step passes the operand
straight on (``x = v``); the test step applies the operation (``x = v * B``). The
difference is the *latency* of the operation: the time from its operands being ready to
its result being usable, which is what an out-of-order core cannot hide when the next
statement needs the result. Flow-control kernels have no data to chain: their
difference is the *cost per execution* (front end and branch unit) of a loop, call or
jump with nothing else in the way.

Template tokens: ``$A``, ``$B``, ``$K`` are this step's element of the kernel's
operand arrays; ``$G`` prefixes the kernel's file-scope (global) variables; ``$L``
prefixes its address-exposed automatic variables; ``$j`` is the step's index in the
unrolled body. ``BARRIER()`` is a compiler memory barrier (global and exposed variables
are really written and read back), ``NOINLINE`` keeps called functions out of line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from parasol_core.base import params

__all__ = ["KERNELS", "LEFT_OUT", "Kernel", "by_name"]

# C types of the chain variable: Fortran INTEGER, REAL, DOUBLE PRECISION, COMPLEX.
CTYPE = {"i": "int", "r": "float", "d": "double", "c": "cplx"}
# The opaque zero and how a value of that type is made to depend on the chain.
CARRIER = {
    "int": "v = $A + (x & zi);",
    "float": "v = $A + x * zf;",
    "double": "v = $A + x * zd;",
    "cplx": "v = $A + CMPLXF((crealf(x) + cimagf(x)) * zf, (crealf(x) - cimagf(x)) * zf);",
}


@dataclass(frozen=True)
class Kernel:
    """A benchmark for one timing parameter."""

    name: str
    group: str  # compile group: one C program per group
    meaning: str  # what the test loop times, for the model file's comment
    ctl: str  # control step
    test: str  # test step: the control plus the operation
    ctype: str | None = None  # chain type; None: no chain (flow control)
    arrays: tuple[tuple[str, str, str], ...] = ()  # (token, C element type, fill expr)
    globals_: str = ""  # file-scope declarations ($G prefix)
    locals_: str = ""  # declarations at the top of both loop functions ($L prefix)
    ops: int = 1  # operations the test step adds over the control step
    divide: float = 1.0  # the difference per operation is divided by this
    unroll: int = 8
    expect: str | None = None  # x86-64 mnemonic (regex) the test loop must hold `unroll` more of
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def _arr(token: str, ctype: str, fill: str) -> tuple[str, str, str]:
    return (token, ctype, fill)


# Fill expressions: rnd() is uniform in [0, 1), irnd(lo, hi) an integer in [lo, hi].
_DOMAIN = {
    # operand A (chained), operand B, per type, per operation
    ("int", "a"): ("irnd(-1048576, 1048576)", "irnd(-1048576, 1048576)"),
    ("int", "m"): ("irnd(-30000, 30000)", "irnd(-30000, 30000)"),
    ("int", "d"): ("irnd(-1000000000, 1000000000)", "nz(irnd(-40000, 40000))"),
    ("int", "e"): ("irnd(-40000, 40000)", "0"),
    ("int", "x"): ("irnd(-9, 9)", "irnd(4, 9)"),
    ("float", "a"): ("rnd() * 2 - 1", "rnd() * 2 - 1"),
    ("float", "m"): ("0.5f + rnd()", "0.5f + rnd()"),
    ("float", "d"): ("rnd() * 2 - 1", "0.5f + rnd()"),
    ("float", "e"): ("rnd() * 20 - 10", "0"),
    ("float", "x"): ("0.25f + 3 * rnd()", "rnd() * 6 - 3"),
    ("double", "a"): ("rnd() * 2 - 1", "rnd() * 2 - 1"),
    ("double", "m"): ("0.5 + rnd()", "0.5 + rnd()"),
    ("double", "d"): ("rnd() * 2 - 1", "0.5 + rnd()"),
    ("double", "e"): ("rnd() * 20 - 10", "0"),
    ("double", "x"): ("0.25 + 3 * rnd()", "rnd() * 6 - 3"),
    ("cplx", "a"): ("crnd()", "crnd()"),
    ("cplx", "m"): ("crnd()", "crnd()"),
    ("cplx", "d"): ("crnd()", "cnz(crnd())"),
    ("cplx", "e"): ("crnd()", "0"),
    ("cplx", "x"): ("cnz(crnd())", "crnd()"),
}

# The C expression of each binary operation; simple power is X**2, which Fortran
# compilers expand to a multiplication (so does the C a programmer writes).
_EXPR = {
    ("int", "a"): "{a} + {b}",
    ("int", "m"): "{a} * {b}",
    ("int", "d"): "{a} / {b}",
    ("int", "e"): "{a} * {a}",
    ("int", "x"): "ipow({a}, {b})",
    ("float", "a"): "{a} + {b}",
    ("float", "m"): "{a} * {b}",
    ("float", "d"): "{a} / {b}",
    ("float", "e"): "{a} * {a}",
    ("float", "x"): "powf({a}, {b})",
    ("double", "a"): "{a} + {b}",
    ("double", "m"): "{a} * {b}",
    ("double", "d"): "{a} / {b}",
    ("double", "e"): "{a} * {a}",
    ("double", "x"): "pow({a}, {b})",
    ("cplx", "a"): "{a} + {b}",
    ("cplx", "m"): "{a} * {b}",
    ("cplx", "d"): "{a} / {b}",
    ("cplx", "e"): "{a} * {a}",
    ("cplx", "x"): "cpowf({a}, {b})",
}
_X86 = {
    ("int", "a"): r"add|lea",
    ("int", "m"): r"imul",
    ("int", "d"): r"idiv",
    ("int", "e"): r"imul",
    ("float", "a"): r"addss",
    ("float", "m"): r"mulss",
    ("float", "d"): r"divss",
    ("float", "e"): r"mulss",
    ("float", "x"): r"call\s+powf",
    ("double", "a"): r"addsd",
    ("double", "m"): r"mulsd",
    ("double", "d"): r"divsd",
    ("double", "e"): r"mulsd",
    ("double", "x"): r"call\s+pow\b",
    ("cplx", "d"): r"call\s+__divsc3",
    ("cplx", "x"): r"call\s+cpowf",
}
_OP_WORD = {
    "a": "addition",
    "m": "multiplication",
    "d": "division",
    "e": "X**2",
    "x": "X**Y",
}


def _arithmetic(p: params.TimingParam) -> Kernel:
    letter = {v: k for k, v in {"i": params.NumericType.INTEGER, "r": params.NumericType.REAL,
              "d": params.NumericType.DOUBLE, "c": params.NumericType.COMPLEX}.items()}  # fmt: skip
    ct = CTYPE[letter[p.numeric_type]]
    op = {
        params.Operation.ADDITION: "a",
        params.Operation.MULTIPLICATION: "m",
        params.Operation.DIVISION: "d",
        params.Operation.SIMPLE_POWER: "e",
        params.Operation.COMPLEX_POWER: "x",
        params.Operation.STORE: "s",
        params.Operation.MEMORY_TRANSFER: "t",
    }[p.operation]
    is_global = p.locality is params.Locality.GLOBAL
    carrier = CARRIER[ct]
    where = "file-scope" if is_global else "automatic"
    if op in ("s", "t"):
        decl = f"{ct} $G1, $G2;" if is_global else ""
        loc = "" if is_global else (f"{ct} $L1, $L2; EXPOSE($L1); EXPOSE($L2);")
        m1, m2 = ("$G1", "$G2") if is_global else ("$L1", "$L2")
        if op == "s":
            ctl = f"{carrier} x = v;"
            test = f"{carrier} {m1} = v; BARRIER(); x = {m1};"
            meaning = f"store of a {ct} to a {where} variable and its reload (latency)"
        else:
            ctl = f"{carrier} {m1} = v; BARRIER(); x = {m1};"
            test = f"{carrier} {m1} = v; BARRIER(); {m2} = {m1}; BARRIER(); x = {m2};"
            meaning = f"copy of a {where} {ct} variable to another (load + store latency)"
        return Kernel(
            p.name, "arith", meaning, ctl, test, ct,
            (_arr("A", ct, _DOMAIN[(ct, "a")][0]),), decl, loc,
            expect=r"mov" if ct == "int" else None,
        )  # fmt: skip
    fa, fb = _DOMAIN[(ct, op)]
    arrays = [_arr("A", ct, fa)]
    b_type = "int" if (ct == "int" and op == "x") else ct
    if op != "e":
        arrays.append(_arr("B", b_type, fb))
    expr = _EXPR[(ct, op)]
    if is_global and ct in ("int", "float", "double"):
        # The reloaded operands go through OPQ into registers, in the control step as in
        # the test: otherwise gcc fuses the test's reload of $Ga into the operation
        # (`addl g_a(%rip), %esi`) where the control has a plain reload, and the two
        # chains differ by two store-forwarding paths, not by the operation (iga came
        # out at a twentieth of a cycle, 60-170 % apart between invocations; issue 34).
        decl = f"{ct} $Ga; {b_type} $Gb;"
        pre = f"{carrier} $Ga = v; " + ("$Gb = $B; " if op != "e" else "") + "BARRIER(); "
        opq = {"int": "OPQ_I"}.get(ct, "OPQ_F")
        if op == "e":
            load, use = f"{{ {ct} a = $Ga; {opq}(a); ", ""
        else:
            opq_b, use_b = ("OPQ_I", "USE_I") if b_type == "int" else ("OPQ_F", "USE_F")
            load = f"{{ {ct} a = $Ga; {b_type} b = $Gb; {opq}(a); {opq_b}(b); "
            use = f"{use_b}(b); "
        ctl = pre + load + use + "x = a; }"
        test = pre + load + "x = " + expr.format(a="a", b="b") + "; }"
    elif is_global:
        decl = f"{ct} $Ga; {b_type} $Gb;"
        pre = f"{carrier} $Ga = v; " + ("$Gb = $B; " if op != "e" else "") + "BARRIER(); "
        ctl = pre + "x = $Ga;"
        test = pre + "x = " + expr.format(a="$Ga", b="$Gb") + ";"
    else:
        decl = ""
        ctl = f"{carrier} x = v;"
        test = f"{carrier} x = " + expr.format(a="v", b="$B") + ";"
    meaning = f"{ct} {_OP_WORD[op]} of {where} operands (latency of a dependent operation)"
    return Kernel(
        p.name, "arith", meaning, ctl, test, ct, tuple(arrays), decl,
        expect=_X86.get((ct, op)),
    )  # fmt: skip


def _logic(p: params.TimingParam) -> Kernel:
    is_global = p.locality is params.Locality.GLOBAL
    if p.numeric_type is None:  # logical and/or on 0/1 integers
        ct, fill = "int", "irnd(0, 1)"
        exprs = ["({a} && {b})", "({a} || {b})"]
        what = "logical and/or"
    else:
        ct = {
            params.NumericType.INTEGER: "int",
            params.NumericType.REAL: "float",
            params.NumericType.DOUBLE: "double",
            params.NumericType.COMPLEX: "cplx",
        }[p.numeric_type]
        fill = _DOMAIN[(ct, "a")][0]
        if ct == "cplx":  # Fortran orders no complex numbers: .EQ. and .NE. only
            exprs = ["({a} == {b})", "({a} != {b})"]
        else:
            exprs = ["({a} < {b})", "({a} >= {b})", "({a} > {b})", "({a} <= {b})"]
        what = f"{ct} compare"
    carrier = CARRIER[ct]
    if is_global:
        decl = f"{ct} $Ga, $Gb;"
        pre = f"{carrier} $Ga = v; $Gb = $B; BARRIER(); "
        a, b = "$Ga", "$Gb"
        ctl = pre + "x = $Ga;"
    else:
        decl = ""
        pre = f"{carrier} "
        a, b = "v", "$B"
        ctl = pre + "x = v;"
    tests = [
        pre + "{ int f = " + e.format(a=a, b=b) + f"; OPQ_I(f); x = ({ct})f; }}" for e in exprs
    ]
    where = "file-scope" if is_global else "automatic"
    return Kernel(
        p.name, "logic", f"{what} of {where} operands, result used as a value (latency)",
        ctl, "\n".join(tests), ct,
        (_arr("A", ct, fill), _arr("B", ct, fill)), decl,
        extra={"alternate": True},
    )  # fmt: skip


def _flow() -> list[Kernel]:
    blocks = 16
    order = [0, 9, 4, 13, 2, 11, 6, 15, 1, 8, 5, 12, 3, 10, 7, 14]  # far jumps, all taken
    pos = {b: i for i, b in enumerate(order)}
    scrambled = []
    for b in order:
        nxt = f"G_{b + 1}_$j" if b + 1 < blocks else "G_end_$j"
        scrambled.append(f'G_{b}_$j: __asm__ volatile("# b{b}"); goto {nxt};')
    test = "goto G_0_$j; " + " ".join(scrambled) + " G_end_$j: ;"
    del pos
    ctl = " ".join(f'__asm__ volatile("# b{b}");' for b in range(blocks))
    cases = " ".join(f'case {c}: __asm__ volatile("# c{c}"); break;' for c in range(8))
    return [
        Kernel(
            "goto",
            "flow",
            "taken unconditional jump to a far label (cost per jump)",
            ctl,
            test,
            ops=blocks,
            unroll=1,
            expect=r"jmp",
        ),
        Kernel(
            "gcom",
            "flow",
            "computed go to (switch) over 8 labels with a random index (cost per jump)",
            '__asm__ volatile("# c" :: "r"($K));',
            f"switch ($K) {{ {cases} }}",
            arrays=(_arr("K", "int", "irnd(0, 7)"),),
            expect=r"jmp\s+\*",
        ),
        Kernel(
            "pcall",
            "flow",
            "call of and return from a one-argument function (cost per call)",
            "v = $A + (x & zi); x = v;",
            "v = $A + (x & zi); x = callee(v);",
            "int",
            (_arr("A", "int", "irnd(0, 1000)"),),
            expect=r"call",
        ),
        Kernel(
            "argld",
            "flow",
            "passing 256 bytes of arguments (a struct by value) to a call, per byte",
            "v = $A + (x & zi); x = callee(v);",
            "v = $A + (x & zi); x = callee_args(v, $Lblock);",
            "int",
            (_arr("A", "int", "irnd(0, 1000)"),),
            locals_="struct block256 $Lblock; fill_block(&$Lblock);",
            divide=256.0,
        ),
        Kernel(
            "loopi1",
            "flow",
            "entering and leaving a loop of step 1 that runs one iteration (cost per loop)",
            "LOOPBODY(0);",
            "for (int jj = 0; jj < one; jj++) LOOPBODY(1);",
            unroll=4,
        ),
        Kernel(
            "loopin",
            "flow",
            "entering and leaving a loop of step n that runs one iteration (cost per loop)",
            "LOOPBODY(0);",
            "for (int jj = 0; jj < one; jj += step) LOOPBODY(1);",
            unroll=4,
        ),
        Kernel(
            "loopoh1",
            "flow",
            "one more iteration of a loop of step 1 (cost per iteration)",
            "for (int jj = 0; jj < m32; jj++) LOOPBODY(0);",
            "for (int jj = 0; jj < m64; jj++) LOOPBODY(0);",
            ops=32,
            unroll=1,
        ),
        Kernel(
            "loopohn",
            "flow",
            "one more iteration of a loop of step n (cost per iteration)",
            "for (int jj = 0; jj < m32 * step; jj += step) LOOPBODY(0);",
            "for (int jj = 0; jj < m64 * step; jj += step) LOOPBODY(0);",
            ops=32,
            unroll=1,
        ),
    ]


_ARRAY_DIMS = (7, 6, 5, 4, 3, 3, 3)


def _array(n: int) -> Kernel:
    dims = _ARRAY_DIMS[:n]
    decl = "static int $Garr" + "".join(f"[{d}]" for d in dims) + ";"
    idx = "[v]" + "".join(f"[$I{k}]" for k in range(1, n))
    arrays = [_arr("A", "int", f"irnd(0, {dims[0] - 1})")]
    arrays += [_arr(f"I{k}", "int", f"irnd(0, {dims[k] - 1})") for k in range(1, n)]
    return Kernel(
        f"arr{n}", "array",
        f"load through a {n}-dimensional index, from index to value (latency)",
        "v = $A + (x & zi); x = v;", f"v = $A + (x & zi); x = $Garr{idx};", "int",
        tuple(arrays), decl,
        extra={"fill_global": ("$Garr", "int", f"irnd(0, {dims[0] - 1})", _prod(dims))},
    )  # fmt: skip


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


# name -> (argument type, fill of A, fill of B or None, C expression in v and w,
#          result type, expression turning the result r back into the argument type,
#          divide). `divide` 2 marks a plain conversion timed there and back.
_I = "irnd(-100000, 100000)"
_R = "rnd() * 20 - 10"
_C = "crnd()"
_INTRINSICS: dict[str, tuple] = {
    "absc": ("cplx", _C, None, "cabsf(v)", "float", "CMPLXF(r, 0.0f)", 1, r"call\s+cabsf"),
    "absd": ("double", _R, None, "fabs(v)", "double", None, 1, r"and"),
    "absi": ("int", _I, None, "abs(v)", "int", None, 1, None),
    "absr": ("float", _R, None, "fabsf(v)", "float", None, 1, r"and"),
    "aimage": ("cplx", _C, None, "cimagf(v)", "float", "CMPLXF(r, 0.0f)", 1, None),
    "aintd": ("double", _R, None, "trunc(v)", "double", None, 1, None),
    "aintr": ("float", _R, None, "truncf(v)", "float", None, 1, None),
    "anintd": ("double", _R, None, "round(v)", "double", None, 1, None),
    "anintr": ("float", _R, None, "roundf(v)", "float", None, 1, None),
    "asind": ("double", "rnd() * 2 - 1", None, "asin(v)", "double", None, 1, r"call\s+asin\b"),
    "asinr": ("float", "rnd() * 2 - 1", None, "asinf(v)", "float", None, 1, None),
    "atand": ("double", _R, None, "atan(v)", "double", None, 1, r"call\s+atan\b"),
    "atanr": ("float", _R, None, "atanf(v)", "float", None, 1, None),
    "chari": ("int", "irnd(32, 126)", None, "(char)v", "char", "(int)r", 2, None),
    "cmplx2d": (
        "double",
        _R,
        _R,
        "CMPLXF((float)v, (float)w)",
        "cplx",
        "(double)opq_f(crealf(r))",
        1,
        None,
    ),
    "cmplx2i": (
        "int",
        _I,
        _I,
        "CMPLXF((float)v, (float)w)",
        "cplx",
        "(int)opq_f(crealf(r))",
        1,
        None,
    ),
    "cmplx2r": ("float", _R, _R, "CMPLXF(v, w)", "cplx", "opq_f(crealf(r))", 1, None),
    "cmplxd": (
        "double",
        _R,
        None,
        "CMPLXF((float)v, 0.0f)",
        "cplx",
        "(double)opq_f(crealf(r))",
        2,
        None,
    ),
    "cmplxi": ("int", _I, None, "CMPLXF((float)v, 0.0f)", "cplx", "(int)opq_f(crealf(r))", 2, None),
    "cmplxr": ("float", _R, None, "CMPLXF(v, 0.0f)", "cplx", "opq_f(crealf(r))", 1, None),
    "conjgc": ("cplx", _C, None, "conjf(v)", "cplx", None, 1, None),
    "dblec": ("cplx", _C, None, "(double)crealf(v)", "double", "CMPLXF((float)r, 0.0f)", 2, None),
    "dblei": ("int", _I, None, "(double)v", "double", "(int)r", 2, None),
    "dbler": ("float", _R, None, "(double)v", "double", "(float)r", 2, None),
    "dimd": ("double", _R, _R, "fdim(v, w)", "double", None, 1, None),
    "dimi": ("int", _I, _I, "(v > w ? v - w : 0)", "int", None, 1, None),
    "dimr": ("float", _R, _R, "fdimf(v, w)", "float", None, 1, None),
    "dprodr": ("float", _R, _R, "(double)v * (double)w", "double", "(float)r", 1, r"mulsd"),
    "expc": (
        "cplx",
        "CMPLXF(rnd() * 4 - 2, rnd() * 6 - 3)",
        None,
        "cexpf(v)",
        "cplx",
        None,
        1,
        r"call\s+cexpf",
    ),
    "expd": ("double", _R, None, "exp(v)", "double", None, 1, r"call\s+exp\b"),
    "expr": ("float", _R, None, "expf(v)", "float", None, 1, r"call\s+expf"),
    "intc": (
        "cplx",
        "CMPLXF(rnd() * 2e4f - 1e4f, rnd())",
        None,
        "(int)crealf(v)",
        "int",
        "CMPLXF((float)r, 0.0f)",
        2,
        None,
    ),
    "intd": ("double", "rnd() * 2e6 - 1e6", None, "(int)v", "int", "(double)r", 2, r"cvtt"),
    "intr": ("float", "rnd() * 2e4f - 1e4f", None, "(int)v", "int", "(float)r", 2, r"cvtt"),
    "log10d": (
        "double",
        "0.001 + rnd() * 1000",
        None,
        "log10(v)",
        "double",
        None,
        1,
        r"call\s+log10\b",
    ),
    "log10r": ("float", "0.001f + rnd() * 1000", None, "log10f(v)", "float", None, 1, None),
    "logc": ("cplx", "cnz(crnd())", None, "clogf(v)", "cplx", None, 1, None),
    "logd": ("double", "0.001 + rnd() * 1000", None, "log(v)", "double", None, 1, r"call\s+log\b"),
    "logr": ("float", "0.001f + rnd() * 1000", None, "logf(v)", "float", None, 1, None),
    "maxd": ("double", _R, _R, "(v > w ? v : w)", "double", None, 1, r"max"),
    "maxi": ("int", _I, _I, "(v > w ? v : w)", "int", None, 1, None),
    "maxr": ("float", _R, _R, "(v > w ? v : w)", "float", None, 1, r"max"),
    "modd": (
        "double",
        "rnd() * 200 - 100",
        "0.5 + rnd() * 10",
        "fmod(v, w)",
        "double",
        None,
        1,
        None,
    ),
    "modi": (
        "int",
        "irnd(-1000000000, 1000000000)",
        "nz(irnd(-40000, 40000))",
        "v % w",
        "int",
        None,
        1,
        r"idiv",
    ),
    "modr": (
        "float",
        "rnd() * 200 - 100",
        "0.5f + rnd() * 10",
        "fmodf(v, w)",
        "float",
        None,
        1,
        None,
    ),
    "nintd": ("double", "rnd() * 2e6 - 1e6", None, "(int)lround(v)", "int", "(double)r", 1, None),
    "nintr": ("float", "rnd() * 2e4f - 1e4f", None, "(int)lroundf(v)", "int", "(float)r", 1, None),
    "realc": ("cplx", _C, None, "crealf(v)", "float", "CMPLXF(r, 0.0f)", 1, None),
    "reald": ("double", _R, None, "(float)v", "float", "(double)r", 2, r"cvtsd2ss"),
    "reali": ("int", _I, None, "(float)v", "float", "(int)r", 2, r"cvtsi2ss"),
    "signd": ("double", _R, _R, "copysign(v, w)", "double", None, 1, None),
    "signi": ("int", _I, _I, "(w >= 0 ? abs(v) : -abs(v))", "int", None, 1, None),
    "signr": ("float", _R, _R, "copysignf(v, w)", "float", None, 1, None),
    "sinc": ("cplx", _C, None, "csinf(v)", "cplx", None, 1, r"call\s+csinf"),
    "sind": ("double", _R, None, "sin(v)", "double", None, 1, r"call\s+sin\b"),
    "sinhd": ("double", _R, None, "sinh(v)", "double", None, 1, r"call\s+sinh\b"),
    "sinhr": ("float", _R, None, "sinhf(v)", "float", None, 1, None),
    "sinr": ("float", _R, None, "sinf(v)", "float", None, 1, r"call\s+sinf"),
    "sqrtc": ("cplx", _C, None, "csqrtf(v)", "cplx", None, 1, r"call\s+csqrtf"),
    "sqrtd": ("double", "rnd() * 1000", None, "sqrt(v)", "double", None, 1, r"sqrtsd"),
    "sqrtr": ("float", "rnd() * 1000", None, "sqrtf(v)", "float", None, 1, r"sqrtss"),
    "tand": ("double", _R, None, "tan(v)", "double", None, 1, r"call\s+tan\b"),
    "tanhd": ("double", _R, None, "tanh(v)", "double", None, 1, None),
    "tanhr": ("float", _R, None, "tanhf(v)", "float", None, 1, None),
    "tanr": ("float", _R, None, "tanf(v)", "float", None, 1, None),
}

LEFT_OUT: dict[str, str] = {
    name: (
        f"{what} of a value to its own type is no instruction in C (the compiler emits "
        "nothing for it), so there is no cost above the timer's resolution to measure"
    )
    for name, what in (
        ("cmplxc", "CMPLX: conversion"),
        ("dbled", "DBLE: conversion"),
        ("inti", "INT: conversion"),
        ("realr", "REAL: conversion"),
    )
}
"""Parameters no C program can exercise on any host, with the reason."""


def _intrinsic(name: str) -> Kernel:
    at, fa, fb, expr, rt, back, divide, expect = _INTRINSICS[name]
    arrays = [_arr("A", at, fa)]
    if fb is not None:
        arrays.append(_arr("B", at, fb))
    w = "w = $B; " if fb is not None else ""
    decl_w = f"{at} w; (void)w;" if fb is not None else ""
    opq = {"cplx": "", "float": "OPQ_F(r); ", "double": "OPQ_F(r); "}.get(rt, "OPQ_I(r); ")
    if back is None:
        test = f"{CARRIER[at]} {w}x = {expr};"
    else:
        test = f"{CARRIER[at]} {w}{{ {rt} r = {expr}; {opq}x = {back}; }}"
    ctl = f"{CARRIER[at]} {w}x = v;"
    what = params.BY_NAME[name].description
    meaning = f"{what}: the function's latency on its argument"
    if back is not None:
        meaning += " (with the conversion of its result back" + (
            ", halved: timed there and back)" if divide == 2 else ")"
        )
    return Kernel(
        name, "intrinsic", meaning, ctl, test, at, tuple(arrays), locals_=decl_w,
        divide=float(divide), expect=expect,
    )  # fmt: skip


def _build() -> tuple[Kernel, ...]:
    out: dict[str, Kernel] = {}
    for p in params.PARAMS:
        if p.name in LEFT_OUT:
            continue
        if p.kind is params.Kind.ARITHMETIC:
            out[p.name] = _arithmetic(p)
        elif p.kind is params.Kind.LOGIC_COMPARE:
            out[p.name] = _logic(p)
        elif p.kind is params.Kind.ARRAY_INDEX:
            out[p.name] = _array(int(p.name[3:]))
        elif p.kind is params.Kind.INTRINSIC:
            out[p.name] = _intrinsic(p.name)
    for k in _flow():
        out[k.name] = k
    missing = {p.name for p in params.PARAMS} - set(out) - set(LEFT_OUT)
    if missing:
        raise AssertionError(f"no kernel for {sorted(missing)}")
    return tuple(out[p.name] for p in params.PARAMS if p.name in out)


KERNELS: tuple[Kernel, ...] = _build()
"""A kernel for every parameter not in :data:`LEFT_OUT`, in params.PARAMS order."""

_BY_NAME = {k.name: k for k in KERNELS}


def by_name(name: str) -> Kernel:
    return _BY_NAME[name]
