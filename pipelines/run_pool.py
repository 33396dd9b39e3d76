"""The runs of one automation tick side by side in worker processes: `compass run --jobs N` (issue 33).

One tick requests only runs that do not wait for each other: an asset waits while any of its ancestors is
requested or running (assets/automation.py), and a parent requested with its child runs in the child's run. So a
tick's runs may execute in any order, or at once. Each worker executes whole runs in process, exactly as the
serial refresh does, on its own connection to the Dagster instance (SQLite: concurrent commits queue under its
busy timeout). Every warehouse write still takes the warehouse's exclusive file lock and is one transaction per
step (resources/warehouse.py), so a step computes in parallel and only queues for the database.

Workers are forked from the refresh: the loaded definitions, the environment, the working directory and the log
file (descriptor 2) are inherited, nothing is imported again. They die with the refresh (PR_SET_PDEATHSIG on
Linux), so a killed refresh leaves no worker writing; their runs carry the refresh's process id
(refresh.REFRESH_PID_TAG), so the next refresh finds them unfinished and re-runs them (refresh.fail_orphaned_runs).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import dagster as dg

from pipelines.refresh import Run

_PR_SET_PDEATHSIG = 1


class WorkerDied(RuntimeError):
    """A worker process ended in the middle of a run (killed, out of memory)."""


def default_jobs() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class RunPool:
    """Executes a tick's runs: in this process when `jobs` is 1 (or the tick has one run), else in `jobs` forked
    worker processes, started at the first tick that needs them and kept for the rest of the refresh."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, jobs: int, multiprocess: bool,
                 tags: dict[str, str]):
        self.defs, self.instance, self.multiprocess, self.tags = defs, instance, multiprocess, tags
        # An in-memory instance cannot be shared with other processes.
        self.jobs = 1 if instance.is_ephemeral else jobs
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def run_all(self, runs: Sequence[Run]) -> list[str]:
        """Execute every run (failures are recorded in the runs, not raised); their run ids, in the order given."""
        from pipelines.refresh import run_selection

        if self.jobs == 1 or len(runs) == 1:
            return [run_selection(self.defs, self.instance, keys, partition, self.multiprocess, self.tags,
                                  raise_on_error=False).run_id for partition, keys in runs]
        executor = self._pool()
        futures = [executor.submit(_execute, keys, partition, self.multiprocess, self.tags) for partition, keys in runs]
        try:
            return [future.result() for future in futures]
        except BrokenProcessPool as exc:
            raise WorkerDied("a worker process of the refresh ended in the middle of a run (killed or out of "
                             "memory); run it again: the next refresh re-runs what was left unfinished") from exc

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                self.jobs, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker,
                initargs=(self.defs, self.instance.get_ref(), os.getpid()))
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def kill(self) -> None:
        """Stop the workers now (an interrupted refresh): SIGKILL, since a worker in the middle of a run would finish
        it first and an idle one waits for work that will not come (a plain shutdown then waits forever). Their
        runs stay unfinished: the refresh marks them failed (refresh.mark_interrupted), or the next one does if this
        one was killed, and the next refresh re-runs them (refresh.fail_orphaned_runs)."""
        if self._executor is not None:
            workers = [process.pid for process in self._executor._processes.values()]  # no public API names them
            # Their children too (Dagster's `tail -F` mirroring a run's log, and its watcher): named before the
            # workers die, they would outlive them by up to a second, or for good if a worker died between the two.
            for pid in [*workers, *_descendants(workers)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def _descendants(pids: list[int]) -> list[int]:
    """The processes descending from `pids`, from /proc (none where there is no /proc)."""
    parents = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, IndexError, ValueError):  # ended meanwhile
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], list(pids)
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


@contextlib.contextmanager
def run_pool(defs: dg.Definitions, instance: dg.DagsterInstance, jobs: int, multiprocess: bool,
             tags: dict[str, str]) -> Iterator[RunPool]:
    pool = RunPool(defs, instance, jobs, multiprocess, tags)
    try:
        yield pool
    except BaseException:  # Ctrl-C, SIGTERM (pipelines.cli), a failure: no worker outlives the refresh
        pool.kill()
        raise
    finally:
        pool.close()


# The worker's own state: the definitions (inherited through the fork) and its connection to the instance.
_worker: dict[str, object] = {}


def _worker_signals() -> None:
    """Ctrl-C reaches the whole process group: the refresh stops its workers (`RunPool.kill`), they do not each
    unwind a run; SIGTERM ends a worker (the refresh's handler is inherited through the fork). Set again after each
    run: Dagster's in-process execution restores SIGINT's handler on its way out and gives SIGTERM the same one
    (dagster._utils.interrupts), so an idle worker ignored SIGTERM (issue 43)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start_worker(defs: dg.Definitions, instance_ref, parent: int) -> None:
    _worker_signals()
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the refresh died before the line above
            os._exit(1)
    _worker.update(defs=defs, instance=dg.DagsterInstance.from_ref(instance_ref))


def _execute(keys: list[dg.AssetKey], partition: str | None, multiprocess: bool, tags: dict[str, str]) -> str:
    from pipelines.refresh import run_selection

    try:
        return run_selection(_worker["defs"], _worker["instance"], keys, partition, multiprocess, tags,
                             raise_on_error=False).run_id
    finally:
        _worker_signals()
