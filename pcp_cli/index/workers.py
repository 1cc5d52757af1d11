"""Worker processes of a large rebuild, fed over multiprocessing queues. Both engines use them:
the whoosh engine's segment writers (`_whoosh_build.parallel`) and the tantivy engine's text
analysis (`_tantivy._analysed_in`).

A worker runs `target(*args, jobs, results)`: it takes items off `jobs` until it takes None,
and puts `("ok", value)` or `("error", message)` on `results`. A worker that raises reports
its error; one that dies (killed, out of memory) is noticed within a second. Either way the
rebuild fails with IndexUnavailable (exit status 7): every worker is killed and the queues are
dropped so that the process can still exit, and the caller, which builds a new generation
beside the old one, keeps the old index.

Workers are forked (what whoosh's own MpWriter does): a worker starts at once and reuses what
the parent already holds (an open whoosh index, the analysis caches) without pickling it.
Where fork does not exist a rebuild runs in one process.
"""

from __future__ import annotations

import os
import queue
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

from pcp_cli.errors import IndexUnavailable

HINT = "Check free memory and disk space, then run `pcp index --rebuild`."
POLL = 1.0  # seconds between checks that the workers are still alive


@cache
def fork_context() -> Any:
    """multiprocessing's fork context, or None where fork does not exist. Imported on first
    use: every search imports the engine modules, and only a rebuild starts workers
    (multiprocessing's import is ~5 ms of a whole-process `pcp search`)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


def available(n: int) -> bool:
    """Whether `n` worker processes make sense here (fork exists, more than one core)."""
    return n >= 2 and (os.cpu_count() or 1) >= 2 and fork_context() is not None


def serve(fn: Callable[[Any], Any], jobs: Any, results: Any) -> None:
    """A worker's loop for `Workers.map`: each job is (number, item); puts
    ("ok", (number, fn(item))) for each, or ("error", message) and stops."""
    try:
        while (job := jobs.get()) is not None:
            number, item = job
            results.put(("ok", (number, fn(item))))
    except BaseException as exc:  # the parent turns it into an error and cleans up
        results.put(("error", f"{type(exc).__name__}: {exc}"))


class Workers:
    """`n` forked processes running `target(*args, jobs, results)`, as a context manager: on
    leaving it with an exception (the caller's, or a worker's error), every worker is
    killed and the queues dropped."""

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...] = (), *, n: int = 2,
                 backlog: int = 8) -> None:
        fork = fork_context()
        assert fork is not None
        self.jobs = fork.Queue(maxsize=backlog)
        self.results = fork.Queue()
        self.procs = [fork.Process(target=target, args=(*args, self.jobs, self.results),
                                   daemon=True) for _ in range(n)]
        self._stopped = False

    def __enter__(self) -> Workers:
        try:
            for p in self.procs:
                p.start()
        except BaseException:
            self.abort()
            raise
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.stop()
            for p in self.procs:
                p.join()

    def _died(self) -> bool:
        return any(p.exitcode not in (None, 0) for p in self.procs)

    def put(self, item: Any) -> None:
        """Queue a job; IndexUnavailable if a worker died meanwhile."""
        while True:
            try:
                self.jobs.put(item, timeout=POLL)
                return
            except queue.Full:
                if self._died():
                    raise IndexUnavailable(
                        "A search index worker process died during the rebuild.", hint=HINT
                    ) from None

    def get(self) -> Any:
        """The next value a worker put; IndexUnavailable for a worker's error, or when a worker
        died or all exited with nothing left to read."""
        while True:
            try:
                status, value = self.results.get(timeout=POLL)
            except queue.Empty:
                if self._died():
                    raise IndexUnavailable(
                        "A search index worker process died during the rebuild.", hint=HINT
                    ) from None
                if all(p.exitcode is not None for p in self.procs) and self.results.empty():
                    raise IndexUnavailable(
                        "The search index could not be rebuilt: a worker process exited "
                        "without a result.", hint=HINT) from None
                continue
            if status != "ok":
                raise IndexUnavailable(f"The search index could not be rebuilt: {value}",
                                       hint=HINT)
            return value

    def stop(self) -> None:
        """Tell every worker there is nothing more (each then puts its last result, if any)."""
        if not self._stopped:
            self._stopped = True
            for _ in self.procs:
                self.put(None)

    def map(self, items: Iterable[Any], *, ahead: int = 4) -> Iterator[Any]:
        """The workers' results for `items`, in their order (the workers run `serve`), with at
        most `ahead` items per worker queued or in work: enough to keep them busy, bounded in
        memory. `items` is read lazily, as results are taken."""
        limit = ahead * len(self.procs)
        done: dict[int, Any] = {}
        sent = taken = 0
        it = iter(items)
        while True:
            while sent - taken < limit:
                try:
                    item = next(it)
                except StopIteration:
                    break
                self.put((sent, item))
                sent += 1
            if taken == sent:
                return
            while taken not in done:
                number, value = self.get()
                done[number] = value
            yield done.pop(taken)
            taken += 1

    def abort(self) -> None:
        """Kill every worker and drop what is queued, so that this process can exit (a
        queue's feeder thread would otherwise wait on a pipe nobody reads)."""
        for p in self.procs:
            if p.is_alive():
                p.kill()
            if p.pid is not None:
                p.join()
        for q in (self.jobs, self.results):
            q.cancel_join_thread()
            q.close()
