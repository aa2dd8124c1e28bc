"""Running a sweep's variants: in this process, on a process pool of this machine's
cores, or on the ranks of an MPI job (``mpi4py.futures.MPIPoolExecutor``).

Every worker process makes one :class:`~parasol_core.sweep.worker.Worker` (the base
model loaded, a phase's messages read, once) and is sent batches of variants; the rows
come back to the calling process, which hands each to ``on_row`` as its batch finishes
(the command line writes it at once). The rows are the same whichever runs them: a
variant is made from the base model alone, and the variants are the same in every
process (:mod:`.variants`).

Batches are small enough that rows arrive steadily (about 8 per worker over the sweep,
at most 32 variants each) and large enough that sending them costs little against the
variants themselves. Their size follows the variants' own seconds: the first ones go one
at a time, and a batch holds as many more as take about ``BATCH_SECONDS`` at the rate
measured so far. A variant slower than that is sent alone, so its row comes back as soon
as it is made, not when the batch it shared ends (a window's rows appear as they finish).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait

from parasol_core.base.memory import keep_freed_heap
from parasol_core.sweep.spec import SweepSpec
from parasol_core.sweep.variants import Variant, variants
from parasol_core.sweep.worker import Row, Worker

EXECUTORS = ("local", "serial", "mpi")
MAX_BATCH = 32
BATCH_SECONDS = 0.1  # a batch's target seconds, at the variants' measured rate
# The longest sleep between two polls of an MPI pool's ranks (mpi4py.futures' backoff,
# 1 ms by its default): rank 0 and each idle worker rank wake this often while a
# batch runs, taking a core from the busy ranks. 3 ms polls a third as often, and
# adds less to a batch's round trip (about 0.1 s of work) than the polls cost
# (docs/speed.md: 1,024 replays under mpiexec -n 4 on two cores, the median of each
# round's pair 1.21x and 1.27x the local pool against 1.25x and 1.32x at 1 ms; best of
# 5 mixed, within the machine's noise; 8 ms: 1.34x). The environment's
# MPI4PY_FUTURES_BACKOFF, when set, is the user's and wins.
MPI_BACKOFF = 0.003

_worker: Worker | None = None  # this process's, in a pool's worker processes


def _start(spec: SweepSpec) -> None:
    global _worker
    import signal

    # Ctrl-C reaches the whole process group: the calling process stops the pool (the
    # batches under way finish, what they made is written); a worker does not die of it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _orphan_watch(os.getppid())
    # every variant makes and drops the same arrays: keep their pages (base.memory)
    keep_freed_heap()
    _worker = Worker(spec)


def _orphan_watch(parent: int) -> None:
    """End this worker when the process that started it is gone (killed with SIGKILL,
    it could not stop its pool): a pool's worker must not outlive its sweep."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="sweep-orphan-watch", daemon=True).start()


def _run_batch(batch: list[Variant]) -> list[Row]:
    assert _worker is not None, "the pool's initializer makes the worker"
    return _worker.run_many(batch)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def in_mpi_job() -> bool:
    """Whether this process is rank 0 of ``mpiexec -n N python -m mpi4py.futures`` with
    N > 1 (the other ranks wait for work there)."""
    import sys

    if "mpi4py.futures" not in sys.modules:
        return False
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_size() > 1


def batch_cap(count: int, workers: int, largest: int = MAX_BATCH) -> int:
    """The most variants of a sweep of ``count`` sent at once: about 8 batches a worker,
    at most ``largest``."""
    return max(1, min(largest, math.ceil(count / max(1, workers * 8))))


def batch_size(rows: int, seconds: float, cap: int) -> int:
    """How many variants the next batch holds, ``rows`` having taken ``seconds`` (their
    own: the rows' ``seconds``) so far: one until a row is back, then as many as take
    about ``BATCH_SECONDS``, from 1 to ``cap``."""
    if rows <= 0:
        return 1
    each = seconds / rows
    if each <= 0:
        return cap
    return max(1, min(cap, int(BATCH_SECONDS / each)))


def run_sweep(spec: SweepSpec, on_row: Callable[[Row], None], *,
              skip: Iterable[int] = (), executor: str = "local", workers: int | None = None,
              cancel: threading.Event | None = None,
              todo: Sequence[Variant] | None = None, start: str | None = None,
              abandon: bool = False, largest: int = MAX_BATCH) -> int:  # fmt: skip
    """Run the variants of ``spec`` not in ``skip`` (indices), calling ``on_row`` with
    each row as it is made, in the calling thread. ``executor``: ``local`` (a process
    pool of ``workers`` processes, by default one a core; one worker runs here),
    ``serial`` (this process) or ``mpi`` (the ranks of the MPI job). ``cancel``: once
    set, no new variant starts; those under way finish and are reported, or with
    ``abandon`` (a window's Cancel) the pool's worker processes are ended at once and
    the variants under way are not reported. ``start``: how a local pool's processes are
    started (``fork`` by default where there is one; ``spawn`` from a process with
    threads of its own, such as PIUI, which cannot be forked safely). ``largest``: the
    most variants sent to a worker at once (fewer: rows come back sooner). Returns how
    many rows were reported."""
    skipped = set(skip)
    if todo is None:
        todo = variants(spec)
    todo = [v for v in todo if v.index not in skipped]
    if not todo:
        return 0
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r}: one of {', '.join(EXECUTORS)}")
    if executor == "local":
        workers = min(workers or cores(), len(todo))
        if workers <= 1:
            executor = "serial"
    if executor == "serial":
        worker = Worker(spec)
        done = 0
        for v in todo:
            if cancel is not None and cancel.is_set():
                break
            on_row(worker.run(v))
            done += 1
        return done
    pool = _pool(executor, spec, workers, start)
    with pool:
        cap = batch_cap(len(todo), _size(pool, workers), largest)
        return _drain(pool, todo, cap, on_row, cancel, abandon and executor == "local")


def _pool(executor: str, spec: SweepSpec, workers: int | None, start: str | None) -> Executor:
    if executor == "mpi":
        from mpi4py.futures import MPIPoolExecutor

        tuning = {} if os.environ.get("MPI4PY_FUTURES_BACKOFF") else {"backoff": MPI_BACKOFF}
        return MPIPoolExecutor(initializer=_start, initargs=(spec,), **tuning)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork where it exists: a worker starts with the modules already imported
    method = start or ("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                               initializer=_start, initargs=(spec,))  # fmt: skip


def _size(pool: Executor, workers: int | None) -> int:
    n = getattr(pool, "_max_workers", None) or workers
    if n is None:  # an MPI pool: the other ranks
        from mpi4py import MPI

        n = max(1, MPI.COMM_WORLD.Get_size() - 1)
    return int(n)


def _drain(pool: Executor, todo: Sequence[Variant], cap: int, on_row: Callable[[Row], None],
           cancel: threading.Event | None, abandon: bool = False) -> int:  # fmt: skip
    """Keep about two batches a worker in flight, so that a cancel stops soon and the
    rows come in the order they finish; each batch sized by :func:`batch_size` (at most
    ``cap`` variants). ``abandon``: on a cancel, the rows already made are reported and
    the pool's processes ended without waiting for the rest."""
    done = 0
    seconds = 0.0  # the reported rows' own
    pending: set[Future] = set()
    queue = list(reversed(todo))
    ahead = 2 * _size(pool, None)
    while queue or pending:
        while queue and len(pending) < ahead and not (cancel is not None and cancel.is_set()):
            size = batch_size(done, seconds, cap)
            batch = [queue.pop() for _ in range(min(size, len(queue)))]
            pending.add(pool.submit(_run_batch, batch))
        if not pending:
            break
        finished, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
        for f in finished:
            for row in f.result():
                on_row(row)
                done += 1
                seconds += row.seconds
        if cancel is not None and cancel.is_set():
            queue.clear()
            if abandon and pending:
                _end_workers(pool, pending)
                break
    return done


def _end_workers(pool: Executor, pending: set[Future]) -> None:
    """End a local pool's worker processes now (their batches are dropped), and wait
    until they are gone: a cancelled sweep leaves no process behind."""
    for f in pending:
        f.cancel()
    # ProcessPoolExecutor's processes by pid (Python 3.11 has no terminate_workers())
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        if p.is_alive():
            p.terminate()
    for p in processes:
        p.join(2.0)
        if p.is_alive():  # pragma: no cover - a worker that ignored SIGTERM
            p.kill()
            p.join()
    pool.shutdown(wait=True, cancel_futures=True)
