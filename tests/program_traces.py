"""SimGrid time-independent traces written by the tests (``smpirun -trace-ti``'s format,
one file of every rank's actions): a ring stencil of computations and neighbour
exchanges with an allreduce now and then, of any size; and OTF2 archives (Score-P's
format) written with the otf2 package (:func:`write_archive`)."""

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
            # doubles (datatype 0), named on each line as smpirun -trace-ti names them
            lines += [f"{r} compute {flops}", f"{r} irecv {left} {it} {nbytes // 8} 0",
                      f"{r} isend {right} {it} {nbytes // 8} 0", f"{r} waitall"]  # fmt: skip
            if it % reduce_every == reduce_every - 1:
                lines.append(f"{r} allreduce 1 1 0")
    lines += [f"{r} finalize" for r in range(ranks)]
    return "\n".join(lines) + "\n"


def write_stencil(folder: Path, name: str = "stencil.txt", **kwargs: int) -> Path:
    path = Path(folder) / name
    path.write_text(stencil_text(**kwargs))
    return path


NS = 1_000_000_000  # the archive's clock: nanoseconds


def write_archive(directory: Path, program: list) -> Path:
    """``program``: per rank a list of (MPI call, start ns, end ns, events), events as
    (name, args...) of otf2.events made with the world communicator."""
    import otf2
    import otf2.events as ev
    from otf2.enums import CollectiveOp, GroupFlag, GroupType, LocationGroupType, Paradigm

    with otf2.writer.open(str(directory), timer_resolution=NS) as archive:
        d = archive.definitions
        node = d.system_tree_node("machine")
        groups = [d.location_group(f"rank {r}", system_tree_parent=node,
                                   location_group_type=LocationGroupType.PROCESS)
                  for r in range(len(program))]  # fmt: skip
        locs = [d.location(f"rank {r}", group=g) for r, g in enumerate(groups)]
        d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                group_flags=GroupFlag.NONE, members=locs)  # fmt: skip
        world = d.comm("MPI_COMM_WORLD", group=d.group(
            "world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
            group_flags=GroupFlag.NONE, members=list(range(len(program)))))  # fmt: skip
        regions = {}
        for r, calls in enumerate(program):
            w = archive.event_writer_from_location(locs[r])
            for call, t0, t1, events in calls:
                region = regions.setdefault(call, d.region(call))
                w(ev.Enter(t0, region))
                for name, *args in events:
                    if name == "MpiCollectiveEnd":
                        op, root, sent, got = args
                        w(ev.MpiCollectiveBegin(t0))
                        w(ev.MpiCollectiveEnd(t1, getattr(CollectiveOp, op), world, root,
                                              sent, got))  # fmt: skip
                    elif name in ("MpiIsendComplete", "MpiIrecvRequest"):
                        w(getattr(ev, name)(t0, *args))
                    else:
                        w(getattr(ev, name)(t0, args[0], world, *args[1:]))
                w(ev.Leave(t1, region))
    return directory / "traces.otf2"
