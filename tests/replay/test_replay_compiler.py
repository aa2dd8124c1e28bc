"""The replay's C compiler (parasol_core/native/replay.c) held equal to its executable
specification, the Python builder of parasol_core/replay/program.py: the same program
(nodes, their order, sizes, flops, dependencies) and the same operations, on random
programs with every point-to-point action, sendRecv and every collective, eager and
rendezvous; bad traces fall back to the builder, which words the error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parasol_core.replay import ReplayOptions, Semantics, TraceError, load_trace
from parasol_core.replay import program as prog

needs_kernel = pytest.mark.skipif(prog._kernel() is None,
                                  reason="the replay's C compiler was not built")  # fmt: skip
COLLECTIVES = ["bcast 100 {root} 0", "reduce 9000 5 {root} 0", "allreduce 10000 7 0",
               "allreduce 3 0 0", "alltoall 5000 5000 0 0", "allgather 20 20 0 0", "barrier",
               "gather 9000 9000 {root} 0 0", "scatter 10 10 {root} 0 0"]  # fmt: skip


@st.composite
def trace_text(draw):
    ranks = draw(st.integers(1, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lines: dict[int, list[str]] = {r: [f"{r} init"] for r in range(ranks)}
    for k in range(draw(st.integers(1, 8))):
        if rng.random() < 0.35:
            pattern = rng.choice(COLLECTIVES + ["allgatherv", "alltoallv", "reducescatter"])
            root = int(rng.integers(0, ranks))
            for r in range(ranks):
                if pattern == "allgatherv":
                    text = (
                        "allgatherv 40 "
                        + " ".join(str(10 * (q + 1)) for q in range(ranks))
                        + " 0 0"
                    )
                elif pattern == "alltoallv":
                    c = " ".join(str(900 * (q + 1)) for q in range(ranks))
                    text = f"alltoallv 1 {c} 1 {c} 0 0"
                elif pattern == "reducescatter":
                    text = (
                        "reducescatter "
                        + " ".join(str(5000 * (q + 1)) for q in range(ranks))
                        + " 3 0"
                    )
                else:
                    text = pattern.format(root=root)
                lines[r].append(f"{r} {text}")
            continue
        order = rng.permutation(ranks)
        for a, b in zip(order[0::2].tolist(), order[1::2].tolist()):
            size = int(rng.choice([8, 65535, 65536, 300000]))
            if rng.random() < 0.4:
                lines[a].append(f"{a} compute {int(rng.integers(0, 9000))}")
            how = int(rng.integers(0, 4))
            if how == 0:
                lines[a].append(f"{a} send {b} {k} {size} 6")
                lines[b].append(f"{b} recv {a} {k} {size} 6")
            elif how == 3:
                lines[a].append(f"{a} sendRecv {size} {b} {size} {b} 6 6")
                lines[b].append(f"{b} sendRecv {size} {a} {size} {a} 6 6")
            else:
                lines[a].append(f"{a} isend {b} {k} {size} 6")
                lines[b].append(f"{b} irecv {a} {k} {size} 6")
                if how == 1:
                    lines[a].append(f"{a} waitall 1")
                    lines[b].append(f"{b} waitall 1")
                else:
                    lines[b].append(f"{b} wait {a} {b} {k}")
                    lines[a].append(f"{a} wait {a} {b} {k}")
    return "".join(line + "\n" for r in range(ranks) for line in lines[r] + [f"{r} finalize"])


def assert_same(a, b) -> None:
    for name in ("src", "dst", "nbytes", "flops", "cost", "after_ptr", "after_idx", "op_start",
                 "op_end", "op_msg", "op_flops", "transfer"):  # fmt: skip
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@needs_kernel
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=trace_text(), eager=st.sampled_from([65536.0, 0.0, 1e12]))
def test_the_kernel_compiles_what_the_python_builder_does(tmp_path, text, eager):
    path = tmp_path / "t.txt"
    path.write_text(text)
    trace = load_trace(path)
    sem = Semantics.make(eager=eager)
    assert prog.native_usable(trace, sem)
    fast = prog.compile_native(prog._kernel(), trace, sem)
    assert fast is not None
    assert_same(fast, prog.compile_python(trace, sem))


@needs_kernel
def test_bad_traces_and_wildcards_are_left_to_the_python_builder(tmp_path):
    unmatched = tmp_path / "u.txt"
    unmatched.write_text("0 send 1 3 10\n1 recv 0 4 10\n")
    trace = load_trace(unmatched)
    assert prog.compile_native(prog._kernel(), trace, Semantics()) is None
    with pytest.raises(TraceError, match=":1: rank 0's send to 1 .tag 3. is matched by no"):
        prog.compile_program(trace, Semantics())
    wild = tmp_path / "w.txt"
    wild.write_text("0 recv -555 0 8\n1 send 0 0 8\n")
    assert not prog.native_usable(load_trace(wild), Semantics())
    assert not prog.native_usable(load_trace(wild), ReplayOptions(collectives="model").semantics())
