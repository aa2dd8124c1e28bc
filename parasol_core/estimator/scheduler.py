"""Who runs next: the estimator's fair queue of model work, with its budgets.

The methods run on worker threads, and a thread cannot be stopped from outside. So
the budgets are kept on the way in and by the work itself:

* **A fair queue.** A call waits here, not in the thread pool, until a worker is free
  and its client has fewer than ``per_client`` calls running; among the waiting, the
  next to run is that of the client with the fewest running, then that of the client
  served least recently, then that of the HTTP request served least recently.
  So a client that has not been served lately (an honest one, between floods of
  others) runs as soon as a worker is free, ahead of every client served since. One client's flood of expensive calls can
  hold at most ``per_client`` workers; another client's call runs as soon as one of
  the others ends. A client is its remote address, or on loopback its
  connection (:func:`parasol_core.estimator.server.client_of`).
* **Work in flight.** Each call carries its estimated work (messages, pairs, route
  requests: :mod:`parasol_core.base.budget`); at most ``max_work`` of it runs at once
  (a call bigger than that runs alone), which bounds the memory of what is running.
* **Time.** Every call has a deadline (its HTTP request's arrival plus the request
  budget). A call still waiting then is dropped; a running one gets its answer
  refused at the deadline (:class:`OverBudget`) and its Python loops stop at their
  next :func:`parasol_core.base.budget.check_deadline`. Work in C or numpy runs to its end
  (its size was bounded before it began); until then its worker and its client's
  slot stay counted, so a client cannot pile up abandoned work.

Two of these run in the server: one for the expensive methods and one, with its own
threads, for the quick ones (``route.plot`` and the like), so that expensive calls
never delay them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from parasol_core.base import budget

__all__ = ["OverBudget", "Scheduler"]


class OverBudget(Exception):
    """A call not answered within its time budget (waiting, or running)."""


@dataclass(eq=False)
class _Call:
    client: str
    request_id: object
    work: int
    admitted: asyncio.Future = field(repr=False)
    taken: int = 0  # work units held while it runs


class Scheduler:
    def __init__(
        self, workers: int, per_client: int, max_work: int | None = None, name: str = "estimator"
    ) -> None:
        self.workers = workers
        self.per_client = max(1, per_client)
        self.max_work = max_work
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix=name)
        self._queues: dict[object, deque[_Call]] = {}  # by HTTP request, in arrival order
        self._running: dict[str, int] = {}  # by client
        self._waiting: dict[str, int] = {}  # by client
        self._served: dict[object, int] = {}  # HTTP request -> when it was last admitted
        self._client_served: dict[str, int] = {}  # client -> when it was last admitted
        self._tick = itertools.count()
        self._in_use = 0
        self.running = 0
        self.waiting = 0

    # ------------------------------------------------------------------ running

    async def run(
        self,
        job: Callable[[], Any],
        *,
        client: str,
        request_id: object,
        work: int = 0,
        deadline: float | None = None,
    ) -> Any:
        """``job()`` on a worker when the queue says so; OverBudget past ``deadline``
        (the event loop's clock)."""
        loop = asyncio.get_running_loop()
        call = _Call(client, request_id, max(int(work), 0), loop.create_future())
        self._queues.setdefault(request_id, deque()).append(call)
        self._waiting[client] = self._waiting.get(client, 0) + 1
        self.waiting += 1
        self._pump()
        try:
            async with asyncio.timeout_at(deadline):
                await asyncio.shield(call.admitted)
        except TimeoutError:
            if not call.admitted.done():
                self._drop(call)
                raise OverBudget("waited past its time budget for a worker") from None
        except asyncio.CancelledError:
            if not call.admitted.done():
                self._drop(call)
                raise
        if not call.admitted.done():  # admitted in the same tick as the timeout
            await call.admitted
        seconds = None if deadline is None else max(deadline - loop.time(), 0.001)
        future: Future = self.pool.submit(_within, seconds, job)
        future.add_done_callback(
            lambda _f: loop.call_soon_threadsafe(self._finished, call)
        )  # fmt: skip
        try:
            async with asyncio.timeout_at(deadline):
                return await asyncio.wrap_future(future)
        except TimeoutError:
            future.cancel()
            raise OverBudget("ran past its time budget") from None
        except budget.TimeBudgetError:
            raise OverBudget("ran past its time budget") from None

    def _drop(self, call: _Call) -> None:
        queue = self._queues.get(call.request_id)
        if queue is not None:
            with contextlib.suppress(ValueError):
                queue.remove(call)
            if not queue:
                del self._queues[call.request_id]
        self._uncount_waiting(call.client)

    def _uncount_waiting(self, client: str) -> None:
        self.waiting -= 1
        left = self._waiting.get(client, 0) - 1
        if left > 0:
            self._waiting[client] = left
        else:
            self._waiting.pop(client, None)

    def _finished(self, call: _Call) -> None:
        self.running -= 1
        self._in_use -= call.taken
        left = self._running.get(call.client, 0) - 1
        if left > 0:
            self._running[call.client] = left
        else:
            self._running.pop(call.client, None)
        self._pump()

    def _pump(self) -> None:
        """Admit calls while there are free workers, fairly (see the module)."""
        while self.running < self.workers:
            best = None
            for request_id, queue in self._queues.items():
                client = queue[0].client
                running = self._running.get(client, 0)
                if running >= self.per_client:
                    continue
                key = (
                    running,
                    self._client_served.get(client, -1),
                    self._served.get(request_id, -1),
                )
                if best is None or key < best[0]:
                    best = (key, request_id, queue)
            if best is None:
                return
            _, request_id, queue = best
            call = queue[0]
            taken = call.work if self.max_work is None else min(call.work, self.max_work)
            if self.max_work is not None and self.running and self._in_use + taken > self.max_work:
                return  # it waits for work in flight to end; nobody overtakes it
            queue.popleft()
            if not queue:
                del self._queues[request_id]
            self._served[request_id] = self._client_served[call.client] = next(self._tick)
            if len(self._served) > 4096:  # forget requests long gone
                for old in list(self._served)[:2048]:
                    if old not in self._queues:
                        del self._served[old]
            if len(self._client_served) > 4096:  # and clients: by the oldest service
                waiting = {q[0].client for q in self._queues.values()}
                for old in sorted(self._client_served, key=self._client_served.get)[:2048]:
                    if old not in waiting:
                        del self._client_served[old]
            self._uncount_waiting(call.client)
            self._running[call.client] = self._running.get(call.client, 0) + 1
            self.running += 1
            call.taken = taken
            self._in_use += taken
            call.admitted.set_result(None)

    # ------------------------------------------------------------------ reporting

    def status(self) -> dict[str, Any]:
        """What ``server.info`` shows of this queue."""
        clients = sorted(set(self._running) | set(self._waiting))
        out: dict[str, Any] = {
            "workers": self.workers,
            "per_client": self.per_client,
            "running": self.running,
            "waiting": self.waiting,
        }
        if self.max_work is not None:
            out["work_in_flight"] = self._in_use
            out["max_work"] = self.max_work
        out["clients"] = [
            {"client": c, "running": self._running.get(c, 0), "waiting": self._waiting.get(c, 0)}
            for c in clients
        ]
        return out

    def shutdown(self, wait: bool = True) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=not wait)


def _within(seconds: float | None, job: Callable[[], Any]) -> Any:
    # the estimator's fixed count limits (a shared server), never a memory budget
    with budget.deadline(seconds), budget.fixed():
        return job()
