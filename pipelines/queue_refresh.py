"""A refresh through the run queue of a deployed instance (deploy profile): the same work as `compass run`, launched
as queued runs that the daemon dequeues and whose steps Celery workers execute.

It follows pipelines.refresh (sources whose inputs changed, then automation ticks to a fixed point, one run per
partition key) but, instead of executing each run in this process, it submits the run to the instance
(`DagsterInstance.submit_run`: QueuedRunCoordinator, the daemon launches it through the code server), and it ticks
again within POLL_S of any run in flight finishing instead of waiting for all of a tick's runs: a partition's next
runs start while other runs still execute, and the tick (Dagster evaluating every asset's condition, through
pipelines.automation_ticks: the sensor's evaluation without its per-tick serialization) overlaps their steps. While
a step waits on the broker for a worker (every worker has work), it ticks at most every TICK_GAP_S. The daemon's `compass_automation` sensor does not tick on a run's end: at most every
`minimum_interval_seconds` (30 s, pipelines.sensors), so the step shares measured with this driver
(docs/results/operations.md) are not the daemon's. The refresh condition waits while any ancestor is requested or in
progress (assets.automation: a queued run's assets count as in progress from its creation), and the driver defers a
request for what a run in flight plans, or for its descendants, until that run finished (`_split_in_flight`), so no
asset runs before all its parents finished. Each run it submits grows by the descendants of its partition key that
the automation would request for certain once it finished (pipelines.run_growth: missing or a new code version,
every other parent settled), so a partition's chain runs as one run, not a run per layer. The queue's limits
(deploy/dagster.yaml `concurrency.runs`) and the workers decide what runs at once.

    python -m pipelines.queue_refresh -w deploy/workspace.yaml     # DAGSTER_HOME holds deploy/dagster.yaml
"""

from __future__ import annotations

import argparse
import collections
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable

import dagster as dg
import kombu
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster._time import get_current_datetime
from kombu.exceptions import ChannelError
from sqlalchemy.exc import DBAPIError

from pipelines.automation_ticks import AutomationTicks
from pipelines.definitions import defs, job_for_keys, with_inseparable
from pipelines.executor import REMOTE_QUEUE, WRITER_QUEUE, remote_steps
from pipelines.partitions import sync_dynamic_partitions
from pipelines.pg_connections import keep_connections
from pipelines.refresh import MAX_TICKS, RefreshReport, Run, _load_cursor, _save_cursor, sources_to_read
from pipelines.run_growth import GROWN_TAG, RETRY_TAG, grow, skipped_to_retry
from resources.settings import SettingsError
from resources.sources import SourcesResource
from resources.warehouse import Warehouse

LOCATION = "llm_compass"  # deploy/workspace.yaml
POLL_S = 0.25  # how often the driver asks Postgres whether a run in flight finished (one query for all)
PING_AFTER_IDLE_S = 0.1  # a kept Postgres connection unused this long is pinged before its next query (each poll's)
TICK_RETRY_WAITS_S = (1.0, 2.0, 4.0)  # before ticking again after a query found its connection dropped (a restart)
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
# While a step waits on an asset-step queue of the broker for a worker (every worker of that queue is busy), a finished
# run is ticked on at most this long after the last tick began: a tick then requests nothing a worker could start
# sooner, and its evaluation (about a CPU second) would be taken from the steps. Otherwise the driver ticks as soon as
# a run finished. On the default graph with 2 workers, 5 of the last 6 ticks requested nothing (2026-11-29); with a
# 10 s gap its refreshes still ticked 28 and 25 times and the driver took 0.11 of the two cores. 30 s: the daemon's
# automation sensor's own minimum interval (pipelines.sensors); the gap ends as soon as no step waits.
TICK_GAP_S = 30.0
STEP_QUEUES = (WRITER_QUEUE, REMOTE_QUEUE)  # the queues whose workers execute asset steps (pipelines.executor)


class Queue:
    """Submits runs of our refresh jobs to a deployed instance and waits for them."""

    def __init__(self, instance: dg.DagsterInstance, workspace: WorkspaceProcessContext,
                 broker_url: str | None = None):
        self.instance, self.workspace = instance, workspace
        self.broker = kombu.Connection(broker_url) if broker_url else None  # the step workers' (Celery) broker
        self._channel = None

    def code_location(self, context=None):
        """The code server's location (its repository snapshot is fetched on the first call in a process)."""
        return (context or self.workspace.create_request_context()).get_code_location(LOCATION)

    def submit(self, keys: list[dg.AssetKey], partition: str | None, tags: dict[str, str] | None = None,
               run_config: dict | None = None) -> str:
        """Queue one run of `keys` (with their checks) for one partition key; its run id."""
        keys = with_inseparable(keys)
        context = self.workspace.create_request_context()
        location = self.code_location(context)
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

    def finished(self, run_ids: Iterable[str]) -> dict[str, dg.DagsterRunStatus]:
        """The runs among `run_ids` that finished (success, failure, canceled): one query for their ids (no run
        deserialized while none finished: this is the driver's poll), one more for the finished ones' statuses."""
        done = self.instance.get_run_ids(dg.RunsFilter(run_ids=list(run_ids), statuses=list(FINISHED)))
        return {run.run_id: run.status for run in self.instance.get_runs(dg.RunsFilter(run_ids=done))} if done else {}

    def steps_waiting(self) -> bool:
        """A step's task waits on one of STEP_QUEUES for a worker (kombu's passive queue declare: its message count;
        Redis drops an empty queue's list, which kombu reports as a channel error). False without a broker or when
        the broker cannot say: the driver then ticks at once, as without the gap. A run queued by the instance (its
        tag limits, e.g. one run per partition key) is no sign of busy workers, so runs are not counted."""
        if self.broker is None:
            return False
        try:
            if self._channel is None:
                self._channel = self.broker.channel()
            return any(self._waiting(name) for name in STEP_QUEUES)
        except (*self.broker.connection_errors, *self.broker.channel_errors):
            self._channel = None
            return False

    def _waiting(self, queue: str) -> bool:
        try:
            return self._channel.queue_declare(queue=queue, passive=True).message_count > 0
        except ChannelError:  # not declared, or empty on Redis; on AMQP the channel is closed after it
            if not getattr(self._channel, "is_open", True):
                self._channel = self.broker.channel()
            return False

    def wait(self, run_ids: Iterable[str], timeout_s: float, any_of: bool = False) -> dict[str, dg.DagsterRunStatus]:
        """Block until every run (`any_of`: at least one) finished: the finished ones' statuses; TimeoutError naming
        the others."""
        pending, done = set(run_ids), {}
        deadline = time.monotonic() + timeout_s
        while pending and not (any_of and done):
            done.update(self.finished(pending))
            pending -= set(done)
            if pending and not (any_of and done):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"runs not finished after {timeout_s:.0f} s: {', '.join(sorted(pending))}")
                time.sleep(POLL_S)
        return done


def _requested_runs(requests: list[dg.RunRequest]) -> list[Run]:
    """A tick's run requests as (partition key, asset keys), unpartitioned first."""
    return sorted(((r.partition_key, list(r.asset_selection or [])) for r in requests if r.asset_selection),
                  key=lambda run: (run[0] is not None, run[0] or ""))


def _only_sinks(runs: list[Run]) -> bool:
    """Only sinks (the report) ran: nothing they wrote can trigger another asset."""
    graph = defs.resolve_asset_graph()
    return all(not graph.get(key).child_keys for _, keys in runs for key in keys)


def _blocked(partition: str | None, key: dg.AssetKey, in_flight: dict[str, Run]) -> bool:
    """A run in flight plans this asset partition or one of its ancestors' (an ancestor partitioned otherwise, or not
    at all, counts whatever partition the run plans: its partition mapping is not worth reading for a deferral)."""
    graph = defs.resolve_asset_graph()
    ancestors = graph.get_ancestor_asset_keys(key)
    for planned_partition, keys in in_flight.values():
        for planned in with_inseparable(keys):
            if planned == key and planned_partition == partition:
                return True
            if planned in ancestors and (planned_partition == partition or
                                         graph.get(planned).partitions_def != graph.get(key).partitions_def):
                return True
    return False


def _split_in_flight(runs: list[Run], in_flight: dict[str, Run]) -> tuple[list[Run], list[Run]]:
    """`runs` as (to submit, to defer): an asset partition a run in flight plans, or whose ancestor's it plans, waits
    for that run. A tick that overlaps a running run sees its steps materialize part-way (an asset may count as
    updated, not in progress, in one condition and not in another) and could request them again, which ran them
    twice (e.g. a dataset's oracle curve after its prices, in the run that had just computed it from those prices),
    or request their children before their blocking checks ran. Deferred, not dropped: the automation does not
    request them again (its trigger is spent), so `_still_stale` decides once the runs finished."""
    now: list[Run] = []
    deferred: list[Run] = []
    for partition, keys in runs:
        held = [key for key in keys if _blocked(partition, key, in_flight)]
        if held:
            deferred.append((partition, held))
        if len(held) < len(keys):
            now.append((partition, [key for key in keys if key not in held]))
    return now, deferred


def _still_stale(instance: dg.DagsterInstance, runs: list[Run]) -> list[Run]:
    """The asset partitions of `runs` whose parents' data versions changed since they last materialized (Dagster's
    stale status): a deferred request that the run it waited for computed from its parents' latest data is done."""
    if not runs:
        return []
    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    stale = [(partition, [key for key in keys if resolver.get_status(key, partition) == StaleStatus.STALE])
             for partition, keys in runs]
    return [(partition, keys) for partition, keys in stale if keys]


def _merged(runs: list[Run]) -> list[Run]:
    """`runs` with one request per partition key (a tick's requests and deferred ones), unpartitioned first."""
    by_partition: dict[str | None, list[dg.AssetKey]] = {}
    for partition, keys in runs:
        by_partition.setdefault(partition, []).extend(k for k in keys if k not in by_partition.get(partition, []))
    return sorted(by_partition.items(), key=lambda run: (run[0] is not None, run[0] or ""))


def _dropped_connection(error: BaseException | None) -> bool:
    """Whether `error` (or its cause) is a query's failure on a connection that turned out dead (SQLAlchemy
    invalidated it: the pool reconnects on the next checkout)."""
    while error is not None:
        if isinstance(error, DBAPIError) and error.connection_invalidated:
            return True
        error = error.__cause__ or error.__context__
    return False


def tick_riding_out_restarts(ticks: AutomationTicks, wait: Callable[[float], None] = time.sleep) -> list[dg.RunRequest]:
    """`ticks.tick()`, ticked again after TICK_RETRY_WAITS_S when a query found its kept connection dropped. The
    driver pings a kept connection only after PING_AFTER_IDLE_S idle (pipelines.pg_connections.ping_when_idle), so a
    Postgres restart within a tick fails a query on a dead pooled connection, outside dagster-postgres' retry (which
    covers only opening a connection). A failed tick changes nothing: its cursor advances only when the evaluation
    succeeded, and the read-once answers end with it. Any other error, or a connection still dropped after the last
    wait, is raised."""
    for delay in TICK_RETRY_WAITS_S:
        try:
            return ticks.tick()
        except Exception as error:  # noqa: BLE001 - re-raised unless a dropped connection
            if not _dropped_connection(error):
                raise
        wait(delay)
    return ticks.tick()


def tick_as_runs_finish(queue: Queue, report: RefreshReport, timeout_s: float,
                        progress: Callable[[str], None]) -> None:
    """Automation ticks, each tick's runs submitted, the next tick as soon as a run in flight finished, until none is
    in flight, nothing is deferred and a tick requests nothing, or only sinks (the report) finished since the last
    tick (at most every TICK_GAP_S while a step waits for a worker). Requests that wait for a run in flight
    (`_split_in_flight`) are submitted after it finished if it succeeded
    and they are still stale (a request the automation would not have made: a failed parent, or its failed blocking
    check, holds them, as the refresh condition's wait for a failed parent does). A failed run that assets joined is
    tagged (pipelines.run_growth.RETRY_TAG): what it skipped counts as failed, which nothing requests again, so a
    later refresh's first tick also submits it once its parents are settled (`skipped_to_retry`).
    A query on a connection that Postgres dropped (a restart) is ridden out (`tick_riding_out_restarts`).
    TimeoutError when no run finishes for `timeout_s`; RuntimeError when a partition key got more than MAX_TICKS runs
    (the layered refresh's bound: a tick per layer, a run per partition key and tick), i.e. the refresh does not
    settle."""
    instance = queue.instance
    # from the last refresh's cursor, as `compass run`: changes since then trigger tick 1 (pipelines.automation_ticks:
    # the sensor's evaluation, its cursor kept as an object between ticks)
    ticks = AutomationTicks(defs, instance, _load_cursor(instance))
    retries, retried = skipped_to_retry(instance, _blocked)  # joined assets an earlier failed run skipped
    in_flight: dict[str, Run] = {}
    joined_by: dict[str, list[dg.AssetKey]] = {}  # run in flight -> the asset keys that joined it
    deferred: list[Run] = []
    failed: dict[str, Run] = {}  # finished runs that did not succeed: what they plan, and its descendants, stays held
    runs_per_partition: collections.Counter[str | None] = collections.Counter()
    bookkeeping = 0.0  # seconds from noticing a finished run to the tick (partition sync, the run's report)

    def collect() -> list[Run]:
        """Book the runs in flight that finished (none: nothing done): out of flight (the tick must not count them),
        failures held, reported; the partitions synced for the tick."""
        nonlocal bookkeeping
        done = queue.finished(in_flight)
        if not done:
            return []
        noticed = time.monotonic()
        # Under the daemon, the daily schedule may write raw tables while this refresh runs (the inbox waits):
        # their new datasets get partitions before the next tick (`compass run` syncs once).
        sync_dynamic_partitions(instance)
        booked = []
        for run_id, status in done.items():
            partition, keys = in_flight.pop(run_id)
            joiners = joined_by.pop(run_id)
            if status != dg.DagsterRunStatus.SUCCESS:
                failed[run_id] = (partition, keys)
                if joiners:  # what it skipped counts as failed from now on: a later refresh requests it
                    instance.add_run_tags(run_id, {RETRY_TAG: "pending"})
            report.add(defs, instance, run_id, with_inseparable(keys), partition)
            booked.append((partition, keys))
        bookkeeping = time.monotonic() - noticed
        return booked

    while True:  # a tick per finished run (or several finished at once), not per layer of the graph
        began = time.monotonic()
        requests = tick_riding_out_restarts(ticks)
        report.ticks += 1
        evaluated = time.monotonic()
        ready, waiting = _split_in_flight(deferred, in_flight)  # ready: their runs finished
        ready = _split_in_flight(ready, failed)[0]  # as the automation, which waits while a parent's run failed
        runs, deferred = _split_in_flight(_merged(_requested_runs(requests) + waiting + _still_stale(instance, ready)
                                                  + retries), in_flight)
        requested = sum(len(keys) for _, keys in runs)
        before = runs
        runs = grow(instance, runs, [*in_flight.values(), *deferred, *failed.values()], _blocked)
        grown = time.monotonic()
        runs_per_partition.update(partition for partition, _ in runs)
        unsettled = [str(partition) for partition, n in runs_per_partition.items() if n > MAX_TICKS]
        if unsettled:
            raise RuntimeError(f"the refresh did not settle: more than {MAX_TICKS} runs of partition key(s) "
                               f"{', '.join(unsettled)} (None: unpartitioned)")
        for (partition, keys), (_, asked) in zip(runs, before):
            joiners = keys[len(asked):]
            run_id = queue.submit(keys, partition, tags={GROWN_TAG: ",".join(k.to_user_string() for k in joiners)}
                                  if joiners else None)
            in_flight[run_id], joined_by[run_id] = (partition, keys), joiners
        for run_id in retried:  # submitted with this tick's runs
            instance.add_run_tags(run_id, {RETRY_TAG: "done"})
        retries, retried = [], []
        if runs or deferred:
            joined = sum(len(keys) for _, keys in runs) - requested
            progress(f"tick {report.ticks}: {len(runs)} queued run(s), {joined} asset(s) joined them, {len(deferred)} "
                     f"deferred; {len(in_flight)} in flight, {len(report.materialized)} done, {len(report.failed)} "
                     f"failed so far (partition sync and run reports {bookkeeping:.1f} s, evaluation "
                     f"{evaluated - began:.1f} s, deferrals and growth "
                     f"{grown - evaluated:.1f} s, submission {time.monotonic() - grown:.1f} s)")
        if not in_flight:  # nothing deferred either: only a run in flight defers
            _save_cursor(instance, ticks.serialized_cursor())
            return
        finished: list[Run] = []
        while in_flight and (not finished or _only_sinks(finished)):
            queue.wait(in_flight, timeout_s, any_of=True)
            finished += collect()
        waited = False
        while in_flight and time.monotonic() - began < TICK_GAP_S and queue.steps_waiting():
            time.sleep(POLL_S)  # every worker has work: the tick waits (TICK_GAP_S)
            waited = True
        if waited:
            finished += collect()  # the runs that finished meanwhile
        if not in_flight and not deferred and _only_sinks(finished):
            _save_cursor(instance, ticks.serialized_cursor())
            return


def refresh_through_queue(queue: Queue, source_keys: list[dg.AssetKey], timeout_s: float = 1800,
                          progress: Callable[[str], None] = lambda line: None) -> RefreshReport:
    """pipelines.refresh.refresh with every run submitted to the queue (see the module docstring)."""
    instance, report = queue.instance, RefreshReport()
    with Warehouse().refreshing():
        changed = sources_to_read(defs, instance, source_keys)
        if changed:
            SourcesResource().validate([key.path[-1] for key in changed])  # reject bad input before any write
            run_id = queue.submit(changed, None)
            queue.wait([run_id], timeout_s)
            report.add(defs, instance, run_id, with_inseparable(changed), None)
        progress(f"sources: {len(changed)} of {len(source_keys)} raw tables changed, read and validated")
        sync_dynamic_partitions(instance)
        tick_as_runs_finish(queue, report, timeout_s, progress)
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
    parser.add_argument("--timeout", type=_timeout, default=1800,
                        help="seconds to wait for one of the runs in flight to finish")
    parser.add_argument("--start-on-input", action="store_true",
                        help="load the definitions, the instance and the code location, print 'ready', and start the "
                             "refresh when a line arrives on standard input (a warm driver: `make deploy-check` "
                             "times the refresh from there and reports the start-up apart)")
    args = parser.parse_args(argv)
    try:
        remote_steps()  # a bad COMPASS_REMOTE_STEPS stops the refresh before its first run, not in each run worker
        logging.disable(logging.WARNING)  # dagster-postgres logs each connection retry; the outcome is one line below
        try:
            # hundreds of queries per tick, back to back: a ping only after a pause (pipelines.pg_connections)
            instance = keep_connections(dg.DagsterInstance.get(), ping_after_idle_s=PING_AFTER_IDLE_S)
        finally:
            logging.disable(logging.NOTSET)
        with instance, WorkspaceProcessContext(instance, WorkspaceFileTarget(paths=[args.workspace])) as workspace:
            keys = [k for k in defs.resolve_asset_graph().materializable_asset_keys if k.path[0] == "raw"]
            queue = Queue(instance, workspace, os.environ.get("DAGSTER_CELERY_BROKER_URL"))
            if args.start_on_input:
                queue.code_location()  # loaded from the code server once, here rather than at the first run
                print("ready", flush=True)
                sys.stdin.readline()
            started = time.monotonic()
            report = refresh_through_queue(queue, keys, args.timeout,
                                           progress=lambda line: print(line, flush=True))
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
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
