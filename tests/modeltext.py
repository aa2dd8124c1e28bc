"""Small model texts the conformance tests build on."""

from __future__ import annotations

import textwrap

MINIMAL = textwrap.dedent(
    """\
    # a minimal but complete model
    begin machine
        id = 7
        name = "Two transputers"
        processors = 1
        topologies = 1

        begin processor
            id = 1
            name = "T805"
            begin timings
                iga = 7.37e-07
                ila = 5e-07 1e-08   # mean and standard deviation
            end timings
            begin cache
                size = 1
                speed = 1e-07
                smallloopspeedup = 1.0
            end cache
            begin combinations
                ia_spd = pt(1).iga / tl(1)(1).speed
            end combinations
        end processor

        begin topology
            id = 1
            name = "pair"
            setup = 0.0
            routing = "XY"
            processors = 2
            links = 1
            begin procid
                p[1] = 1
                p[2] = 1
            end procid
            begin linklist
                begin link
                    id = 1
                    latency = 2.85e-05
                    speed = 9.1e-07
                    connect = 2 1 2
                end link
            end linklist
        end topology
    end machine
    """
)


def with_lines(replacements: dict[str, str], text: str = MINIMAL) -> str:
    """MINIMAL with some lines replaced (matched after stripping indentation)."""
    out = []
    for line in text.splitlines(keepends=True):
        key = line.strip()
        if key in replacements:
            indent = line[: len(line) - len(line.lstrip())]
            new = replacements[key]
            out.append("" if new is None else indent + new + "\n")
        else:
            out.append(line)
    return "".join(out)


def insert_after(anchor: str, new_lines: str, text: str = MINIMAL) -> str:
    """MINIMAL with lines inserted after the first line whose stripped text is ``anchor``."""
    out = []
    done = False
    for line in text.splitlines(keepends=True):
        out.append(line)
        if not done and line.strip() == anchor:
            out.append(new_lines if new_lines.endswith("\n") else new_lines + "\n")
            done = True
    assert done, anchor
    return "".join(out)


def gcel_with_torus(dims: tuple[int, ...]) -> str:
    """The GCel sample with its hardware topology replaced by a generated torus."""
    from pathlib import Path

    from parasol_core.syntax.writer import canonical_lines
    from parasol_core.topology.generators import torus

    gcel = Path(__file__).resolve().parents[1] / "sample_models" / "parsytec-gcel.machine"
    topo = "".join(f"    {line}\n" for line in canonical_lines(torus(dims, 1e-6, 1e-8)))
    src = gcel.read_text()
    a = src.index("    begin topology")
    b = src.index("    end topology") + len("    end topology\n")
    return src[:a] + topo + src[b:]


def varied_torus_text(side: int, seed: int) -> str:
    """benchmarks/bench_load.py's ``torus_text`` with the blanks around each timing's
    ``=`` varied link by link and a standard deviation on some latencies: still the fast
    path's form."""
    import random
    import sys
    from pathlib import Path

    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    from bench_load import torus_text

    rng = random.Random(seed)
    lines = torus_text(side).split("\n")
    for i, line in enumerate(lines):
        for key in ("latency", "speed"):
            if line.strip().startswith(f"{key} = "):
                indent, value = line[: line.index(key)], line.split("=", 1)[1].strip()
                if key == "latency" and rng.random() < 0.3:
                    value += " 1e-07"
                lines[i] = (indent + key + rng.choice(["", " ", "\t"]) + "="
                            + rng.choice(["", " ", "  "]) + value + rng.choice(["", " "]))  # fmt: skip
    return "\n".join(lines)
