"""SimGrid time-independent traces written by the tests (``smpirun -trace-ti``'s format,
one file of every rank's actions): a ring stencil of computations and neighbour
exchanges with an allreduce now and then, of any size."""

from __future__ import annotations

from pathlib import Path


def stencil_text(ranks: int = 16, iterations: int = 20, flops: int = 2_000_000,
                 nbytes: int = 80_000, reduce_every: int = 10) -> str:  # fmt: skip
    """Each iteration: compute, receive from the left and send to the right
    (non-blocking), wait for both; every ``reduce_every`` iterations an allreduce."""
    lines = [f"{r} init" for r in range(ranks)]
    for it in range(iterations):
        for r in range(ranks):
            right, left = (r + 1) % ranks, (r - 1) % ranks
            lines += [f"{r} compute {flops}", f"{r} irecv {left} {it} {nbytes // 8}",
                      f"{r} isend {right} {it} {nbytes // 8}", f"{r} waitall"]  # fmt: skip
            if it % reduce_every == reduce_every - 1:
                lines.append(f"{r} allreduce 1 1")
    lines += [f"{r} finalize" for r in range(ranks)]
    return "\n".join(lines) + "\n"


def write_stencil(folder: Path, name: str = "stencil.txt", **kwargs: int) -> Path:
    path = Path(folder) / name
    path.write_text(stencil_text(**kwargs))
    return path
