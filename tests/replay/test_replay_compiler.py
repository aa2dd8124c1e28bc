"""The replay's C compiler (parasol_core/native/replay.c) held equal to its executable
specification, the Python builder of parasol_core/replay/program.py: the same program
(nodes, their order, sizes, flops, dependencies) and the same operations, on random
programs with every point-to-point action, sendRecv and every collective, eager and
rendezvous; bad traces fall back to the builder, which words the error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from parasol_core.replay import ReplayOptions, Semantics, TraceError, load_trace
from parasol_core.replay import program as prog

needs_kernel = pytest.mark.skipif(prog._kernel() is None,
                                  reason="the replay's C compiler was not built")  # fmt: skip
COLLECTIVES = ["bcast 100 {root} 1", "reduce 9000 5 {root} 5", "allreduce 10000 7 4",
               "allreduce 3 0", "alltoall 5000 5000 0 6", "allgather 20 20 1 0", "barrier",
               "gather 9000 9000 {root} 5 2", "scatter 10 10 {root} 2 5", "bcast 7 {root}"]  # fmt: skip


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
                lines[b].append(f"{b} sendRecv {size} {a} {size // 4} {a} 6 1")
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
    # a one-shot replay's compile (release: the trace let go as the kernel takes it):
    # the same nodes, and the per-action columns narrow (no op_start: each action
    # starts where its rank's last one ended)
    first = trace.first.copy()
    lean = prog.compile_native(prog._kernel(), trace, sem, release=True)
    assert lean is not None and lean.op_start is None
    assert lean.op_end.dtype == np.int32 and lean.op_msg.dtype == np.int32
    assert lean.op_flops.dtype == bool
    for name in ("src", "dst", "nbytes", "flops", "after_ptr", "after_idx"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(fast, name), name)
    np.testing.assert_array_equal(lean.op_end, fast.op_end)
    np.testing.assert_array_equal(lean.op_msg, fast.op_msg)
    np.testing.assert_array_equal(lean.op_flops, fast.op_flops > 0)
    starts = np.concatenate([[-1], fast.op_end[:-1]])
    starts[first[:-1][first[:-1] < starts.shape[0]]] = -1
    np.testing.assert_array_equal(starts, fast.op_start)


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


# --------------------------------------------------------------------------- the C reader

MUTATIONS = ["1e400", "inf", "nan", "0x10", "-5", "+3", "007", "1.5", "-0", "9007199254740993",
             "", "x", "2\t3", "-333", "-555", "99",
             # the C reader's own sums (up to 15 digits a float, 18 an int) and past them
             "999999999999999", "9999999999999999", "+999999999999999", "000000000000001",
             "123456789012345678", "-123456789012345678", "1234567890123456789",
             "9223372036854775807", "9223372036854775808", "-9223372036854775809"]  # fmt: skip


@st.composite
def mutated_text(draw):
    """A random trace, with some words replaced by odd numbers or words, lines doubled,
    comments, blank lines, tabs, other line ends, actions in capitals."""
    text = draw(trace_text())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lines = text.splitlines()
    for _ in range(draw(st.integers(0, 3))):
        k = int(rng.integers(0, len(lines)))
        words = lines[k].split()
        how = int(rng.integers(0, 6))
        if how == 0 and len(words) > 2:
            words[int(rng.integers(2, len(words)))] = str(rng.choice(MUTATIONS))
        elif how == 1:
            words.append("7")
        elif how == 2:
            words[1] = words[1].upper()
        elif how == 3:
            lines.insert(k, "# a comment")
        elif how == 4:
            lines.insert(k, "   \t ")
        lines[k] = "\t".join(words) if how == 5 else " ".join(words) if words else ""
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return ending.join(lines) + ending


def read_both(path, monkeypatch):
    from parasol_core.replay import tifile

    outcomes = []
    for scanner in (tifile._scanner, lambda: None):
        with monkeypatch.context() as m:
            m.setattr(tifile, "_scanner", scanner)
            try:
                outcomes.append(load_trace(path))
            except TraceError as e:
                outcomes.append(str(e))
    return outcomes


@pytest.mark.skipif(prog._kernel() is None, reason="the replay's C kernels were not built")
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=mutated_text())
# a whole number past 2^53 (a sendRecv's source): the C reader read it and the ranks'
# check refused it as out of range, where Python refuses it as overflowing
@example(text="0 init\n0 sendRecv 8 1 8 9007199254740993\n0 finalize\n"
              "1 init\n1 sendRecv 8 0 8 0\n1 finalize\n")  # fmt: skip
@example(text="0 init\n0 send 1 -9007199254740993 8\n0 finalize\n1 init\n1 finalize\n")
def test_the_c_reader_reads_what_python_reads(tmp_path, monkeypatch, text):
    path = tmp_path / "t.txt"
    path.write_text(text, newline="")
    fast, spec = read_both(path, monkeypatch)
    if isinstance(spec, str):
        assert fast == spec  # the same error, worded by Python
        return
    for name in ("rank", "kind", "peer", "tag", "size", "size2", "flops", "file", "line",
                 "counts_ptr", "counts", "first"):  # fmt: skip
        a, b = getattr(fast, name), getattr(spec, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.skipif(prog._kernel() is None, reason="the replay's C kernels were not built")
def test_the_c_reader_reads_the_sample_traces_whole(monkeypatch):
    from pathlib import Path

    from parasol_core.replay import tifile

    traces = Path(__file__).resolve().parents[2] / "sample_models" / "traces"
    for index in (traces / "stencil.txt", traces / "pipeline.txt"):
        for r, name in enumerate(index.read_text().split()):
            assert (
                tifile.scan_native(tifile._scanner(), (traces / name).read_bytes(), r) is not None
            )
        fast, spec = read_both(index, monkeypatch)
        for field in ("rank", "kind", "peer", "tag", "size", "size2", "flops", "line"):
            np.testing.assert_array_equal(getattr(fast, field), getattr(spec, field))


@pytest.mark.skipif(prog._kernel() is None, reason="the replay's C kernels were not built")
@pytest.mark.parametrize("number", ["0", "7", "+7", "-0", "007", "999999999999999",
                                    "9999999999999999", "000000000000001", "123456789012345678",
                                    "-123456789012345678", "1234567890123456789",
                                    "9223372036854775807", "9223372036854775808",
                                    "-9223372036854775809", "1e5", "2.5"])  # fmt: skip
def test_the_c_reader_reads_each_number_as_python_does(tmp_path, monkeypatch, number):
    # every numeric field of the common lines, the number at the edges of the C reader's
    # own sums (15 digits a float, 18 an int) and past them
    lines = [f"0 compute {number}", f"0 send 1 {number} 5", f"0 isend 1 3 {number}",
             f"0 wait 1 {number} 2", f"0 recv {number} 3 5", f"0 waitall {number}",
             f"0 bcast {number} 1", f"0 allreduce 4 {number}"]  # fmt: skip
    for k, line in enumerate(lines):
        path = tmp_path / f"t{k}.txt"
        path.write_text("0 init\n" + line + "\n0 finalize\n")
        fast, spec = read_both(path, monkeypatch)
        if isinstance(spec, str):
            assert fast == spec, line
            continue
        for name in ("rank", "kind", "peer", "tag", "size", "size2", "flops", "line"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(spec, name), err_msg=line)
