"""Minimal-recomputation refresh: the same declarative automation the daemon runs, ticked to a fixed point.

1. Materialize the raw source assets whose inputs changed (`sources_to_read`:
   files, their modification times, code version; read, validate, hash). An
   unchanged input is not re-read, and a re-read one that gives the same content
   gets the same data version as before.
   Then any case or scenario whose YAML changed re-runs its root assets
   (pipelines.config_changes).
2. Tick: evaluate the `compass_automation` sensor (every asset's
   assets.automation.REFRESH_CONDITION) against the instance and the persisted
   cursor, as the daemon does. Only assets that are missing, whose code version
   changed, or one of whose parents got a *new data version* since they last ran
   are requested.
3. Execute its run requests (one run per partition key; `jobs` of them at once,
   pipelines.run_pool), then tick again, until a tick requests nothing or
   requested only sinks (the report), whose runs cannot trigger anything.

A parent that re-materializes with an identical data version therefore leaves its
children alone. The cursor is stored in DAGSTER_HOME so consecutive refreshes
(CLI, sensor, schedule) continue the same history.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from pipelines import interrupts

if TYPE_CHECKING:
    from pipelines.run_pool import RunPool

MAX_TICKS = 30
Run = tuple[str | None, list[dg.AssetKey]]  # (partition key, asset keys) of one run request
# Tags Dagster puts on every materialization (not exported by dagster's public API).
DATA_VERSION_TAG, CODE_VERSION_TAG = "dagster/data_version", "dagster/code_version"
REFRESH_PID_TAG = "compass/refresh_pid"  # the process of the refresh that launched a run (crash recovery)
# "pending" on a run an interrupted or killed refresh did not finish: the next refresh re-runs it, then sets "done".
RERUN_TAG = "compass/rerun"
_UNFINISHED = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
               dg.DagsterRunStatus.CANCELING]


@dataclass
class RefreshReport:
    """What a refresh did, per asset partition ("key[partition]" labels)."""

    runs: list[str] = field(default_factory=list)
    materialized: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    # Requested in a run that failed, but not run because an asset they depend on failed in it.
    not_run: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # failed label -> the error's own message
    ticks: int = 0
    # Runs unfinished when the refresh started (see `unfinished_runs`): their assets' descendants waited.
    blocked_by: list[str] = field(default_factory=list)
    # One line per live source that failed this time (connector, URL, error, age of the data kept).
    source_failures: list[str] = field(default_factory=list)
    # Materialized labels whose step published the data version it already had (metadata `unchanged`).
    unchanged: list[str] = field(default_factory=list)

    def add(self, defs: dg.Definitions, instance: dg.DagsterInstance, run_id: str, keys: list[dg.AssetKey],
            partition: str | None) -> None:
        """Sort a run's assets into materialized (in the order they ran), failed (with the error) and not run,
        from its event log."""
        self.runs.append(run_id)
        graph = defs.resolve_asset_graph()
        done, failed = [], {}
        records = instance.all_logs(run_id, of_type={dg.DagsterEventType.ASSET_MATERIALIZATION,
                                                     dg.DagsterEventType.STEP_FAILURE})
        for record in records:
            event = record.dagster_event
            if event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION:
                done.append(event.asset_key)
                flag = event.event_specific_data.materialization.metadata.get("unchanged")
                if flag is not None and flag.value is True and event.asset_key in keys:
                    self.unchanged.append(_label(event.asset_key, partition))
                continue
            for key in keys:
                if graph.get(key).assets_def.node_def.name == event.step_key:
                    failed[key] = _innermost_message(event.step_failure_data.error)
        self.materialized += [_label(key, partition) for key in done if key in keys and key not in failed]
        for key in keys:
            label = _label(key, partition)
            if key in failed:
                self.failed.append(label)
                self.errors[label] = failed[key]
            elif key not in done:
                self.not_run.append(label)

    def waiting_on_failures(self, defs: dg.Definitions) -> list[str]:
        """Assets downstream of a failed one that therefore did not run this refresh (automation holds a child
        back while a parent's latest run failed), by partition where the partitions match."""
        graph = defs.resolve_asset_graph()
        out = list(self.not_run)
        for label in self.failed:
            key, _, partition = label.partition("[")
            partition = partition.rstrip("]") or None
            asset = dg.AssetKey.from_user_string(key)
            for child in sorted(_descendants(graph, asset)):
                same = graph.get(child).partitions_def == graph.get(asset).partitions_def
                child_label = _label(child, partition if same else (f"{partition}|*" if partition else "*"))
                if child_label not in out and not any(m.startswith(child_label.split("*")[0]) for m in self.materialized):
                    out.append(child_label)
        return out


def _descendants(graph, key: dg.AssetKey) -> set[dg.AssetKey]:
    found, frontier = set(), [key]
    while frontier:
        for child in graph.get(frontier.pop()).child_keys:
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _innermost_message(error) -> str:
    """The user's own error message under Dagster's wrappers (first line of the deepest cause)."""
    while error.cause is not None:
        error = error.cause
    return error.message.strip().split(": ", 1)[-1] if error.message else error.cls_name


def _cursor_path(instance: dg.DagsterInstance) -> Path:
    return Path(instance.root_directory) / "compass_automation_sensor_cursor"


def _load_cursor(instance: dg.DagsterInstance) -> str | None:
    """The sensor cursor of the last refresh (None before the first)."""
    path = _cursor_path(instance)
    return path.read_text() if path.exists() else None


def _save_cursor(instance: dg.DagsterInstance, cursor: str | None) -> None:
    """Write atomically: a truncated cursor would break every later refresh."""
    if cursor is not None:
        path = _cursor_path(instance)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(cursor)
        os.replace(tmp, path)


def unfinished_runs(instance: dg.DagsterInstance) -> list[str]:
    """Runs still queued, starting, started or canceling.

    Automation treats their assets as in progress, so nothing downstream of them
    is requested; a run left behind by a killed process blocks it for good.
    """
    return [r.run_id for r in instance.get_runs(dg.RunsFilter(statuses=_UNFINISHED))]


def fail_orphaned_runs(instance: dg.DagsterInstance) -> list[tuple[str, str | None, list[dg.AssetKey]]]:
    """The runs to re-run before anything else, as (run id, partition, asset keys), oldest first: those a killed
    refresh left unfinished, marked failed here, and those an interrupted one marked (`mark_interrupted`).

    Call with the refresh lock held (`Warehouse.refreshing`): the lock dies with
    its process, so an unfinished run launched by another refresh (tag
    REFRESH_PID_TAG) has lost its process (SIGKILL, machine restart). Runs the
    UI or daemon launched are left to Dagster's run monitoring (deploy profile).
    Automation would hold their assets back as failed, so the caller re-runs them
    and then tags them done (RERUN_TAG).
    """
    for run in instance.get_runs(dg.RunsFilter(statuses=_UNFINISHED)):
        pid = run.tags.get(REFRESH_PID_TAG)
        if pid is not None and pid != str(os.getpid()):
            instance.report_run_failed(run, f"its refresh process {pid} is gone (killed or machine restarted)")
            instance.add_run_tags(run.run_id, {RERUN_TAG: "pending"})
    return [(run.run_id, run.tags.get("dagster/partition"), sorted(run.asset_selection or []))
            for run in reversed(instance.get_runs(dg.RunsFilter(tags={RERUN_TAG: "pending"})))]


def mark_interrupted(instance: dg.DagsterInstance, since: datetime) -> None:
    """After Ctrl-C or SIGTERM (its workers already stopped): this refresh's runs (created since `since`) that did not
    succeed are marked failed if unfinished, and all of them are left for the next refresh to re-run (RERUN_TAG)."""
    mine = dg.RunsFilter(tags={REFRESH_PID_TAG: str(os.getpid())}, created_after=since)
    for run in instance.get_runs(mine):
        if run.status == dg.DagsterRunStatus.SUCCESS:
            continue
        if run.status in _UNFINISHED:
            instance.report_run_failed(run, "the refresh was interrupted (Ctrl-C or SIGTERM); the next one re-runs it")
        instance.add_run_tags(run.run_id, {RERUN_TAG: "pending"})


def code_upgrades(defs: dg.Definitions, instance: dg.DagsterInstance) -> list[Run]:
    """Runs for the derived assets whose latest materialization another code version made (a package upgrade): every
    partition of theirs materialized so far, one run per partition and partitions definition, in topological order.

    The refresh condition's `code_version_changed()` compares with the automation cursor's previous evaluation, which
    an upgrade that also changes the condition (or a home whose cursor is gone) does not have: without this the
    upgraded assets kept their old-code tables (issue 43). What they publish then reaches their children as usual."""
    graph = defs.resolve_asset_graph()
    order = {key: i for i, key in enumerate(graph.toposorted_asset_keys)}
    derived = [key for key in graph.materializable_asset_keys if key.path[0] not in ("raw", "live")]
    runs: dict[tuple[str, str | None], list[dg.AssetKey]] = {}
    for record in instance.get_asset_records(derived):
        key, last = record.asset_entry.asset_key, record.asset_entry.last_materialization
        node = graph.get(key)
        if last is None or last.asset_materialization.tags.get(CODE_VERSION_TAG) == node.code_version:
            continue
        partitions = [None]
        if node.partitions_def is not None:  # those that still exist (a removed scenario's stay as they are)
            partitions = sorted(instance.get_materialized_partitions(key)
                                & set(node.partitions_def.get_partition_keys(dynamic_partitions_store=instance)))
        for partition in partitions:
            runs.setdefault((str(node.partitions_def), partition), []).append(key)
    return sorted(((partition, sorted(keys, key=order.__getitem__)) for (_, partition), keys in runs.items()),
                  key=lambda run: min(order[key] for key in run[1]))


def sources_to_read(defs: dg.Definitions, instance: dg.DagsterInstance, keys: list[dg.AssetKey]) -> list[dg.AssetKey]:
    """The raw sources among `keys` a refresh must read: all but those whose last run materialized them from the
    inputs they have now (same input digest, assets.sources.INPUT_DIGEST, and code version) into rows the warehouse
    still holds (same data version). A run that failed or was killed after planning a source makes it read again."""
    from assets.sources import INPUT_DIGEST
    from resources.sources import SourcesResource
    from resources.warehouse import Warehouse

    graph, sources, wh = defs.resolve_asset_graph(), SourcesResource(), Warehouse()
    entries = {r.asset_entry.asset_key: r.asset_entry for r in instance.get_asset_records(keys)}

    def current(key: dg.AssetKey) -> bool:
        entry = entries.get(key)
        last = entry.last_materialization if entry else None
        if last is None or (entry.last_planned_materialization_storage_id or 0) > entry.last_materialization_storage_id:
            return False
        done, table = last.asset_materialization, f"raw.{key.path[-1]}"
        digest, rows = done.metadata.get(INPUT_DIGEST), done.metadata.get("dagster/row_count")
        if digest is None or digest.value != sources.input_digest(key.path[-1]) \
                or done.tags.get(CODE_VERSION_TAG) != graph.get(key).code_version:
            return False
        if rows is not None and rows.value == 0:  # no rows carry the version: the table must still be empty
            return wh.table_exists(table) and wh.query(f"select count(*) from {table}").iloc[0, 0] == 0
        return wh.holds_version(table, None, done.tags.get(DATA_VERSION_TAG, ""))

    with wh.reading():
        return [key for key in keys if not current(key)]


def _fetch_live_sources(defs: dg.Definitions, instance: dg.DagsterInstance, source_keys: list[dg.AssetKey],
                        multiprocess: bool, tags: dict[str, str] | None, progress: Callable[[str], None],
                        report: RefreshReport) -> list[dg.AssetKey]:
    """Run live/fetches first when the refresh reads sources and the config names live sources (a config without
    any, such as the embedded default, stays offline); print one line per failed source. Returns the other keys."""
    from assets.live_sources import FAILED, FETCH_KEY
    from resources.sources import SourcesResource

    rest = [k for k in source_keys if k != FETCH_KEY]
    entries = SourcesResource().config().connectors
    if not rest or not entries:
        return rest
    result = run_selection(defs, instance, [FETCH_KEY], None, multiprocess, tags, raise_on_error=False)
    report.add(defs, instance, result.run_id, [FETCH_KEY], None)
    event = instance.get_latest_materialization_event(FETCH_KEY)
    meta = event.asset_materialization.metadata if event is not None and event.run_id == result.run_id else {}
    report.source_failures = json.loads(meta[FAILED].value) if FAILED in meta else []
    for line in report.source_failures:
        progress(line)
    progress(f"live sources: {len(entries) - len(report.source_failures)} of {len(entries)} fetched")
    return rest


def tick(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None) -> tuple[list[dg.RunRequest], str | None]:
    """One evaluation of the `compass_automation` sensor, exactly as the daemon runs it: (run requests, new cursor).

    Its run requests are per partition key, like the runs the daemon would launch.
    (Dagster's `evaluate_automation_conditions` test helper gives the same answer
    but re-reads the dynamic partitions from SQLite for every condition node:
    ~13 s per tick on our graph against ~1.4 s here.)
    """
    from pipelines.sensors import compass_automation

    context = dg.build_sensor_context(instance=instance, cursor=cursor, repository_def=defs.get_repository_def())
    result = compass_automation(context)
    return list(result.run_requests or []), result.cursor


def _stages(runs: list[tuple[str | None, list[dg.AssetKey]]]) -> str:
    """The asset groups (first key part) a tick's runs touch, with their counts: 'compass x4, oracle x7'."""
    counts: dict[str, int] = {}
    for _, keys in runs:
        for key in keys:
            counts[key.path[0]] = counts.get(key.path[0], 0) + 1
    return ", ".join(f"{stage} x{n}" for stage, n in counts.items())


def _label(key: dg.AssetKey, partition: str | None) -> str:
    return key.to_user_string() + (f"[{partition}]" if partition else "")


def run_selection(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    keys: list[dg.AssetKey],
    partition: str | None,
    multiprocess: bool,
    tags: dict[str, str] | None = None,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult | dg.ExecutionResult:
    """Materialize `keys` (with their checks) for one partition key."""
    from pipelines.definitions import job_for_keys, reconstructable_job, with_inseparable

    keys = with_inseparable(keys)
    job_name = job_for_keys(keys)
    run_tags = {REFRESH_PID_TAG: str(os.getpid()), **(tags or {})}
    if partition is not None:
        run_tags["dagster/partition"] = partition
    if multiprocess:
        # forkserver with the definitions preloaded: each step forks a warm process instead of importing
        # dagster and every asset module again (seconds per step on 2 cores).
        config = {"execution": {"config": {"multiprocess": {
            "max_concurrent": 4, "start_method": {"forkserver": {"preload_modules": ["pipelines.definitions"]}}}}}}
        with dg.execute_job(
            reconstructable_job(job_name),
            instance=instance,
            run_config=config,
            asset_selection=keys,
            tags=run_tags,
            raise_on_error=raise_on_error,
        ) as result:
            pass  # complete once execute_job returns; callers read it after the block, as they always did
    else:
        job = defs.resolve_job_def(job_name)
        config = {"execution": {"config": {"in_process": {}}}}
        result = job.execute_in_process(
            run_config=config, instance=instance, asset_selection=keys, tags=run_tags, partition_key=partition,
            raise_on_error=raise_on_error,
        )
    interrupts.check()  # a Ctrl-C or SIGTERM that became a failed run (or nothing) in Dagster ends the refresh here
    return result


def refresh(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    source_keys: list[dg.AssetKey],
    multiprocess: bool = False,
    tags: dict[str, str] | None = None,
    progress: Callable[[str], None] = lambda line: None,
    jobs: int | None = None,
) -> RefreshReport:
    """Bring every asset up to date with the least work; see the module docstring. `progress` gets one line
    per step (the sources, then each automation tick's runs). A tick's runs execute `jobs` at a time (default:
    one per core, or 1 with the multiprocess executor, whose steps already fill the cores; pipelines.run_pool).
    One refresh per warehouse at a time (RefreshInProgress otherwise); a completed one publishes the read
    replica."""
    from pipelines.run_pool import default_jobs, run_pool
    from resources.warehouse import Warehouse

    with Warehouse().refreshing():
        Warehouse().ensure_replica()  # outside readers open it from a home's first refresh on
        # Runs executed by workers carry this process's id too (REFRESH_PID_TAG: crash recovery).
        run_tags = {REFRESH_PID_TAG: str(os.getpid()), **(tags or {})}
        jobs = jobs or (1 if multiprocess else default_jobs())
        started = datetime.now(timezone.utc)
        try:
            with run_pool(defs, instance, jobs, multiprocess, run_tags) as pool:
                report = _refresh(defs, instance, source_keys, multiprocess, tags, progress, pool)
        except BaseException as exc:
            if interrupts.caused(exc):  # the pool's workers are stopped already (run_pool)
                mark_interrupted(instance, started)
            raise
        Warehouse().publish_replica()
    progress("read replica updated for outside readers")
    return report


def _check_case_rules() -> None:
    """A case whose benchmark rule leaves no benchmark on the current raw.benchmark_scores is rejected input
    (IngestError naming its file and key) before any case asset runs."""
    from resources import readers
    from resources.configs import check_benchmark_rules
    from resources.warehouse import Warehouse

    wh = Warehouse()
    if wh.table_exists("raw.benchmark_scores"):
        check_benchmark_rules(readers.case_scores(wh))


def _refresh(defs: dg.Definitions, instance: dg.DagsterInstance, source_keys: list[dg.AssetKey], multiprocess: bool,
             tags: dict[str, str] | None, progress: Callable[[str], None], pool: RunPool) -> RefreshReport:
    from pipelines.config_changes import case_assets, config_digests, config_requests, save_digests
    from pipelines.partitions import sync_dynamic_partitions
    from resources.sources import SourcesResource

    orphans = fail_orphaned_runs(instance)
    if orphans:
        progress(f"recovered: {len(orphans)} run(s) left unfinished by an interrupted or killed refresh; re-running them")
    report = RefreshReport(blocked_by=unfinished_runs(instance))
    source_keys = _fetch_live_sources(defs, instance, source_keys, multiprocess, tags, progress, report)
    # The sources of a run an interrupted or killed refresh left are all read again: one it materialized may lack
    # its blocking checks' results, which would hold back everything below it for good.
    left, stale = {key for _, _, keys in orphans for key in keys}, set(sources_to_read(defs, instance, source_keys))
    changed = [key for key in source_keys if key in stale or key in left]
    if changed:
        # Every file to be read is validated before any raw table is written: rejected input (IngestError)
        # stops the refresh with the warehouse unchanged, not half-applied.
        SourcesResource().validate([key.path[-1] for key in changed])
        result = run_selection(defs, instance, changed, None, multiprocess, tags)
        report.add(defs, instance, result.run_id, changed, None)
    if source_keys:
        progress(f"sources: {len(changed)} of {len(source_keys)} raw tables changed, read and validated")
    _check_case_rules()
    sync_dynamic_partitions(instance)
    graph = defs.resolve_asset_graph()

    def run_in_process(partition: str | None, keys: list[dg.AssetKey]) -> None:
        if keys and not all(k.path[0] in ("raw", "live") for k in keys):  # the sources ran above
            result = run_selection(defs, instance, keys, partition, multiprocess, tags, raise_on_error=False)
            report.add(defs, instance, result.run_id, keys, partition)

    for run_id, partition, keys in orphans:
        run_in_process(partition, keys)
        instance.add_run_tags(run_id, {RERUN_TAG: "done"})
    upgraded = code_upgrades(defs, instance)
    if upgraded:
        progress(f"code upgrade: {len(upgraded)} run(s) of assets whose code version changed")
    for partition, keys in upgraded:
        run_in_process(partition, keys)
    for partition, keys in config_requests(instance, case_assets(graph)):
        run_in_process(partition, keys)
    save_digests(instance, config_digests())
    def execute(runs: list[Run]) -> None:
        # A failing partition is reported, not fatal: the others still refresh.
        for (partition, keys), run_id in zip(runs, pool.run_all(runs)):
            report.add(defs, instance, run_id, keys, partition)

    cursor = tick_until_quiet(defs, instance, _load_cursor(instance), report, execute,
                              lambda runs: f"{len(runs)} run(s), {_stages(runs)}", progress)
    _save_cursor(instance, cursor)
    return report


def tick_until_quiet(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None, report: RefreshReport,
                     execute: Callable[[list[Run]], None], describe: Callable[[list[Run]], str],
                     progress: Callable[[str], None]) -> str | None:
    """Automation ticks, each tick's runs executed by `execute` (in process, in workers or through the run queue),
    until a tick requests nothing; one progress line per tick. Returns the sensor cursor. The caller syncs the
    dynamic partitions first: they follow the raw tables and the configuration files, which no tick's run writes."""
    graph = defs.resolve_asset_graph()
    for _ in range(MAX_TICKS):
        requests, cursor = tick(defs, instance, cursor)
        report.ticks += 1
        # A failed asset is not requested again (REFRESH_CONDITION: ~execution_failed on a missing one,
        # since_last_handled on the others), so the loop ends on its own.
        runs = sorted(((r.partition_key, list(r.asset_selection or [])) for r in requests if r.asset_selection),
                      key=lambda run: (run[0] is not None, run[0] or ""))
        if not runs:
            break
        execute(runs)
        progress(f"step {report.ticks}: {describe(runs)}; {len(report.materialized)} done, "
                 f"{len(report.failed)} failed so far")
        if all(not graph.get(key).child_keys for _, keys in runs for key in keys):
            break  # only sinks ran (the report): nothing they wrote can trigger another asset, so no tick to confirm
    return cursor
