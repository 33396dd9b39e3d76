"""A refresh through the run queue of a deployed instance (deploy profile): the same work as `compass run`, launched
as queued runs that the daemon dequeues and whose steps Celery workers execute.

It follows pipelines.refresh step for step (sources whose inputs changed, then automation ticks to a fixed point,
one run per partition key) but, instead of executing each run in this process, it submits the run to the instance
(`DagsterInstance.submit_run`: QueuedRunCoordinator, the daemon launches it through the code server) and waits for
a tick's runs to finish before the next tick. A tick's runs are submitted together, so the queue's limits
(deploy/dagster.yaml `concurrency.runs`) and the writer pool decide what runs at once.

    python -m pipelines.queue_refresh -w deploy/workspace.yaml     # DAGSTER_HOME holds deploy/dagster.yaml
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget

from pipelines.definitions import defs, job_for_keys, with_inseparable
from pipelines.partitions import sync_dynamic_partitions
from pipelines.pg_connections import keep_connections
from pipelines.refresh import RefreshReport, Run, sources_to_read, tick_until_quiet
from resources.sources import SourcesResource
from resources.warehouse import Warehouse

LOCATION = "llm_compass"  # deploy/workspace.yaml
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


class Queue:
    """Submits runs of our refresh jobs to a deployed instance and waits for them."""

    def __init__(self, instance: dg.DagsterInstance, workspace: WorkspaceProcessContext):
        self.instance, self.workspace = instance, workspace

    def submit(self, keys: list[dg.AssetKey], partition: str | None, tags: dict[str, str] | None = None,
               run_config: dict | None = None) -> str:
        """Queue one run of `keys` (with their checks) for one partition key; its run id."""
        keys = with_inseparable(keys)
        context = self.workspace.create_request_context()
        location = context.get_code_location(LOCATION)
        repo = next(iter(location.get_repositories().values()))
        selector = JobSubsetSelector(location_name=LOCATION, repository_name=repo.name, job_name=job_for_keys(keys),
                                     op_selection=None, asset_selection=keys, asset_check_selection=None)
        job = location.get_job(selector)
        plan = location.get_execution_plan(job, run_config or {}, step_keys_to_execute=None, known_state=None,
                                           instance=self.instance)
        run_tags = {**(job.run_tags or {}), **(tags or {})}
        if partition is not None:  # with the per-dimension tags a multi-partitioned (case x scenario) key needs
            run_tags.update(defs.resolve_asset_graph().get(keys[0]).partitions_def.get_tags_for_partition_key(partition))
        run = self.instance.create_run(
            job_name=job.name, run_id=None, run_config=run_config or {},
            resolved_op_selection=job.resolved_op_selection, step_keys_to_execute=None,
            status=dg.DagsterRunStatus.NOT_STARTED, op_selection=None, root_run_id=None, parent_run_id=None,
            tags=run_tags, job_snapshot=job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot, parent_job_snapshot=job.parent_job_snapshot,
            remote_job_origin=job.get_remote_origin(), job_code_origin=job.get_python_origin(),
            asset_selection=frozenset(keys), asset_check_selection=None, asset_graph=repo.asset_graph)
        self.instance.submit_run(run.run_id, context)
        return run.run_id

    def wait(self, run_ids: Iterable[str], timeout_s: float) -> dict[str, dg.DagsterRunStatus]:
        """Block until every run finished (success, failure, canceled); TimeoutError naming the others."""
        pending, done = set(run_ids), {}
        deadline = time.monotonic() + timeout_s
        while pending:
            for run in self.instance.get_runs(dg.RunsFilter(run_ids=list(pending))):  # one query for all
                run_id, status = run.run_id, run.status
                if status in FINISHED:
                    done[run_id] = status
                    pending.discard(run_id)
            if pending and time.monotonic() > deadline:
                raise TimeoutError(f"runs not finished after {timeout_s:.0f} s: {', '.join(sorted(pending))}")
            time.sleep(0.5)
        return done


def refresh_through_queue(queue: Queue, source_keys: list[dg.AssetKey], timeout_s: float = 1800,
                          progress: Callable[[str], None] = lambda line: None) -> RefreshReport:
    """pipelines.refresh.refresh with every run submitted to the queue (see the module docstring)."""
    instance, report = queue.instance, RefreshReport()

    def run_all(runs: list[Run]) -> None:
        ids = [queue.submit(keys, partition) for partition, keys in runs]
        queue.wait(ids, timeout_s)
        for run_id, (partition, keys) in zip(ids, runs, strict=True):
            report.add(defs, instance, run_id, with_inseparable(keys), partition)
        # Under the daemon, the daily schedule may write raw tables while this refresh runs (the inbox waits): their new
        # datasets get partitions before the next tick (`compass run` syncs once: nothing else writes during it).
        sync_dynamic_partitions(instance)

    with Warehouse().refreshing():
        changed = sources_to_read(defs, instance, source_keys)
        if changed:
            SourcesResource().validate([key.path[-1] for key in changed])  # reject bad input before any write
            run_all([(None, changed)])
        progress(f"sources: {len(changed)} of {len(source_keys)} raw tables changed, read and validated")
        sync_dynamic_partitions(instance)
        tick_until_quiet(defs, instance, None, report, run_all, lambda runs: f"{len(runs)} queued run(s)", progress)
        Warehouse().publish_replica()
    return report


def unavailable_postgres(error: BaseException) -> str | None:
    """One line naming Postgres when `error` (or its cause) is a failed connection to it; else None."""
    while error is not None:
        if type(error).__name__ == "OperationalError":
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            reason = re.sub(r"^\([\w.]+\) ", "", reason)  # "(psycopg2.OperationalError) connection to ..."
            where = f"{os.environ.get('DAGSTER_PG_HOST', '?')} (DAGSTER_PG_HOST), database {os.environ.get('DAGSTER_PG_DB')}"
            return f"the Dagster instance's Postgres at {where} is unavailable: {reason}"
        error = error.__cause__ or error.__context__
    return None


MAX_TIMEOUT_S = 86_400.0  # a day: a tick's runs that take longer are lost, not slow


def _timeout(text: str) -> float:
    """--timeout: seconds, a finite number in (0, MAX_TIMEOUT_S]."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_TIMEOUT_S:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], got {text!r}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.queue_refresh", description=__doc__.split("\n")[0])
    parser.add_argument("-w", "--workspace", default="deploy/workspace.yaml")
    parser.add_argument("--timeout", type=_timeout, default=1800, help="seconds to wait for a tick's runs")
    args = parser.parse_args(argv)
    try:
        logging.disable(logging.WARNING)  # dagster-postgres logs each connection retry; the outcome is one line below
        try:
            instance = keep_connections(dg.DagsterInstance.get())  # hundreds of queries per tick
        finally:
            logging.disable(logging.NOTSET)
        with instance, WorkspaceProcessContext(instance, WorkspaceFileTarget(paths=[args.workspace])) as workspace:
            keys = [k for k in defs.resolve_asset_graph().materializable_asset_keys if k.path[0] == "raw"]
            started = time.monotonic()
            report = refresh_through_queue(Queue(instance, workspace), keys, args.timeout,
                                           progress=lambda line: print(line, flush=True))
    except Exception as error:  # noqa: BLE001 - a missing service is one line, anything else re-raised
        message = unavailable_postgres(error)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    print(f"runs: {' '.join(report.runs)}")
    print(f"refresh through the queue: {len(report.runs)} runs, {len(report.materialized)} materialized, "
          f"{len(report.failed)} failed, {report.ticks} ticks in {time.monotonic() - started:.1f} s")
    for label in report.failed:
        print(f"failed: {label}: {report.errors.get(label, '')}", file=sys.stderr)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
