"""Minimal-recomputation refresh: the same declarative automation the daemon runs, ticked to a fixed point.

1. Materialize the raw source assets (cheap: read, validate, hash). An unchanged
   input gets the same data version as before.
   Then any case or scenario whose YAML changed re-runs its root assets
   (pipelines.config_changes).
2. Tick: evaluate every asset's automation condition (assets.common.REFRESH_CONDITION)
   against the instance and the persisted cursor. Only assets that are missing,
   whose code version changed, or one of whose parents got a *new data version*
   since they last ran are requested.
3. Materialize the requested asset partitions (one run per partition key),
   then tick again, until a tick requests nothing.

A parent that re-materializes with an identical data version therefore leaves its
children alone. The cursor is stored in DAGSTER_HOME so consecutive refreshes
(CLI, sensor, schedule) continue the same history.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

MAX_TICKS = 30


@dataclass
class RefreshReport:
    runs: list[str] = field(default_factory=list)
    materialized: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    ticks: int = 0

    def add(self, result, keys: list[str]) -> None:
        self.runs.append(result.run_id)
        (self.materialized if result.success else self.failed).extend(keys)


def _cursor_path(instance: dg.DagsterInstance) -> Path:
    return Path(instance.root_directory) / "compass_automation_cursor.json"


def _load_cursor(instance: dg.DagsterInstance):
    path = _cursor_path(instance)
    return dg.deserialize_value(path.read_text()) if path.exists() else None


def _save_cursor(instance: dg.DagsterInstance, cursor) -> None:
    _cursor_path(instance).write_text(dg.serialize_value(cursor))


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
    run_tags = dict(tags or {})
    if partition is not None:
        run_tags["dagster/partition"] = partition
    if multiprocess:
        config = {"execution": {"config": {"multiprocess": {"max_concurrent": 4}}}}
        with dg.execute_job(
            reconstructable_job(job_name),
            instance=instance,
            run_config=config,
            asset_selection=keys,
            tags=run_tags,
            raise_on_error=raise_on_error,
        ) as result:
            return result
    job = defs.resolve_job_def(job_name)
    config = {"execution": {"config": {"in_process": {}}}}
    return job.execute_in_process(
        run_config=config, instance=instance, asset_selection=keys, tags=run_tags, partition_key=partition,
        raise_on_error=raise_on_error,
    )


def _parent_partition(graph, parent: dg.AssetKey, partition: str | None) -> str | None:
    """The parent's partition that `partition` reads: same key, a dimension of a multi-partition key, or none."""
    parent_def = graph.get(parent).partitions_def
    if parent_def is None or partition is None:
        return None
    if "|" in partition and isinstance(parent_def, dg.DynamicPartitionsDefinition):
        from pipelines.partitions import decision_partitions

        key = decision_partitions.get_partition_key_from_str(partition)
        return key.keys_by_dimension.get(parent_def.name, partition)
    return partition


def _parents_ready(instance, graph, key: dg.AssetKey, partition: str | None, requested: set) -> bool:
    """Every parent partition is materialized and not itself being refreshed in this tick.

    Belt and braces for REFRESH_CONDITION, whose dependency checks do not see
    through the case -> case x scenario partition mapping in Dagster 1.13.
    """
    for parent in graph.get(key).parent_keys:
        if not graph.get(parent).is_materializable:
            continue
        p = _parent_partition(graph, parent, partition)
        if (parent, p) in requested:
            return False
        if instance.get_latest_materialization_event(parent) is None:
            return False
        if p is not None and not instance.get_materialized_partitions(parent).__contains__(p):
            return False
    return True


def refresh(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    source_keys: list[dg.AssetKey],
    multiprocess: bool = False,
    tags: dict[str, str] | None = None,
) -> RefreshReport:
    """Bring every asset up to date with the least work; see the module docstring."""
    from pipelines.config_changes import config_digests, config_requests, save_digests
    from pipelines.partitions import sync_dynamic_partitions

    report = RefreshReport()
    if source_keys:
        # Rejected input stops the refresh here, before anything downstream runs.
        result = run_selection(defs, instance, source_keys, None, multiprocess, tags)
        report.add(result, [k.to_user_string() for k in source_keys])
    sync_dynamic_partitions(instance)
    for partition, keys in config_requests(instance):
        result = run_selection(defs, instance, keys, partition, multiprocess, tags, raise_on_error=False)
        report.add(result, [_label(k, partition) for k in keys])
    save_digests(instance, config_digests())
    cursor = _load_cursor(instance)
    for _ in range(MAX_TICKS):
        evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
        cursor = evaluation.cursor
        report.ticks += 1
        if evaluation.total_requested == 0:
            break
        graph = defs.resolve_asset_graph()
        requested = {(key, p) for key in graph.materializable_asset_keys for p in evaluation.get_requested_partitions(key)}
        by_partition: dict[str | None, list[dg.AssetKey]] = defaultdict(list)
        for key, partition in requested:
            # Failed once in this refresh: not again. Parents not there yet: wait for a later tick.
            if _label(key, partition) not in report.failed and _parents_ready(instance, graph, key, partition, requested):
                by_partition[partition].append(key)
        if not by_partition:
            break
        for partition, keys in sorted(by_partition.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
            # A failing partition is reported, not fatal: the others still refresh.
            result = run_selection(defs, instance, keys, partition, multiprocess, tags, raise_on_error=False)
            report.add(result, [_label(k, partition) for k in keys])
        sync_dynamic_partitions(instance)
    _save_cursor(instance, cursor)
    return report
