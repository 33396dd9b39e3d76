"""Fewer, bigger runs for the queued refresh (issue 44, item 3): a run grows by the descendants of its partition key
that the automation would request for certain as soon as the run finished, so they execute in that run instead of
waiting for its end, a tick, a queue slot, a run launch and a run worker (5-8 s per hop on the loaded 2-core machine,
docs/results/operations.md, "Fewer, bigger runs").

A descendant D (same partitions definition and partition key as the run; a multi-asset that cannot run in part
counts as one D with all its members) joins when

1. it carries the refresh condition (assets.automation: REFRESH_CONDITION or FOLLOW_CONDITION; not the report's);
2. the automation would request it for certain: it is missing or its code version changed, and its own latest
   execution did not fail (a parent's *new data version* is not known before the run: a parent re-run with the same
   data leaves its children alone, so a child that is there already joins only with a new code version);
3. every parent is in the run (executable in the same run: Dagster runs it first, and a failed blocking check
   there stops D as the automation's `all_deps_blocking_checks_passed` would), or else is no descendant of the
   run's assets (one the run leaves out changes after it if its parents' data do, and D would wait for it) and is
   settled for the partitions D reads of it: a parent the automation vetted for the run's own requests (not
   pending, not failed, its blocking checks passed) for no more partitions than those requests read, or else one
   that Dagster reports fresh, that no run in progress plans (any run: the daemon's schedule may rewrite raw
   tables meanwhile), nor an ancestor of it, whose latest execution did not fail and whose blocking checks last
   passed;
4. no other run planned now (in flight, submitted this tick, deferred, or failed this refresh) plans D or one of
   its ancestors, nor a settled parent's (`pipelines.queue_refresh._blocked`, the driver's own rule for deferring
   a request).

So a joined asset runs after all its parents finished, as it would one tick later, and is then not requested again
(its `missing` trigger is gone and its parents' new data versions are older than it). The local refresh (`compass
run`) is unchanged: it ticks per layer (pipelines.refresh).

A joined asset that a failed run skipped (a step before it failed) counts for Dagster as a failed execution, so the
automation would never request it again, where without growth it would have stayed missing and been requested once
its parents are there. The driver tags such runs (GROWN_TAG, RETRY_TAG) and a later refresh requests what they
skipped once its parents are settled (`skipped_to_retry`).
"""

from __future__ import annotations

import asyncio

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.assets.graph.asset_graph import executable_in_same_run
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleCauseCategory, StaleStatus
from dagster._core.definitions.events import AssetKeyPartitionKey
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionResolvedStatus
from dagster._time import get_current_datetime

from assets.automation import FOLLOW_CONDITION, REFRESH_CONDITION
from pipelines.definitions import defs, with_inseparable
from pipelines.refresh import Run

GROWN_TAG = "compass/grown"  # on a queued run: the asset keys that joined it, comma-separated
RETRY_TAG = "compass/grown_retry"  # on a failed grown run: "pending" until a refresh requested what it skipped


class _Statuses:
    """Dagster's view of the instance now: stale status, failed executions, partition mappings (cached per call of
    `grow`: one consistent reading for all of a tick's runs)."""

    def __init__(self, instance: dg.DagsterInstance):
        self.graph = defs.resolve_asset_graph()
        self.view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(),
                                                                    last_event_id=None),
                                   instance=instance, asset_graph=self.graph)
        self.resolver = CachingStaleStatusResolver(instance=instance, asset_graph=self.graph, loading_context=self.view)
        self.loop = asyncio.new_event_loop()  # one for all: the view's data loaders are bound to the first they see
        self.pending_subsets: dict[dg.AssetKey, object] = {}

    def subset(self, key: dg.AssetKey, partition: str | None):
        return self.view.get_asset_subset_from_asset_partitions(key, {AssetKeyPartitionKey(key, partition)})

    def certain(self, key: dg.AssetKey, partition: str | None) -> bool:
        """The automation requests this asset partition once its parents are done, whatever their data: missing or
        a new code version, and its latest execution did not fail (a missing asset whose run failed waits for new
        inputs, and a new code version is handled once requested: `execution_failed`, `since_last_handled`)."""
        status = self.resolver.get_status(key, partition)
        if not (status == StaleStatus.MISSING or status == StaleStatus.STALE and any(
                cause.category == StaleCauseCategory.CODE and cause.key.asset_key == key
                for cause in self.resolver.get_stale_causes(key, partition))):
            return False
        subset = self.subset(key, partition)
        failed = self.loop.run_until_complete(self.view.compute_execution_failed_subset(key=key, from_subset=subset))
        return failed.compute_intersection(subset).is_empty

    def pending(self, key: dg.AssetKey):
        """The partitions of `key` that a run or backfill in progress (any, not only the driver's: the daemon's, one
        started by hand) plans, or that one in progress for an ancestor maps down to (assets.automation's
        AncestorPending, without this tick's requests)."""
        if key not in self.pending_subsets:
            full = self.view.get_full_subset(key=key)
            subset = self.loop.run_until_complete(self.view.compute_run_in_progress_subset(
                key=key, from_subset=full)).compute_union(self.loop.run_until_complete(
                    self.view.compute_backfill_in_progress_subset(key=key, from_subset=full)))
            for parent in self.graph.get(key).parent_keys:
                subset = subset.compute_union(self.view.compute_child_subset(key, self.pending(parent)))
            self.pending_subsets[key] = subset
        return self.pending_subsets[key]

    def settled(self, key: dg.AssetKey, read, planned: dict, blocked) -> bool:
        """The partitions `read` of the asset `key` are done for this refresh: fresh, not planned by any run (nor
        their ancestors), neither in progress nor below an ancestor in progress, their latest execution not failed,
        their blocking checks passed."""
        partitions = sorted(read.expensively_compute_partition_keys()) if read.is_partitioned else [None]
        if any(self.resolver.get_status(key, partition) != StaleStatus.FRESH or blocked(partition, key, planned)
               for partition in partitions):
            return False
        if not self.pending(key).compute_intersection(read).is_empty:
            return False
        failed = self.loop.run_until_complete(self.view.compute_execution_failed_subset(key=key, from_subset=read))
        if not failed.compute_intersection(read).is_empty:
            return False
        for check in self.graph.get(key).check_keys:
            if not self.graph.get(check).blocking:
                continue
            passed = self.loop.run_until_complete(self.view.compute_subset_with_status(
                check, AssetCheckExecutionResolvedStatus.SUCCEEDED, from_subset=self.view.get_full_subset(key=check)))
            if passed.is_empty or (passed.is_partitioned and not set(partitions) <= passed.expensively_compute_partition_keys()):
                return False
        return True


def grow(instance: dg.DagsterInstance, runs: list[Run], others: list[Run],
         blocked) -> list[Run]:
    """`runs` (one tick's, to submit), each with the descendants that join it (module docstring), in submission
    order; `others`: every other run planned now (in flight, deferred, failed); `blocked(partition, key, planned)`:
    the driver's rule, true when a run in `planned` (a dict of runs) plans `key` or one of its ancestors."""
    if not runs:
        return runs
    statuses = _Statuses(instance)
    grown: list[Run] = []
    try:
        for i, (partition, keys) in enumerate(runs):
            planned = dict(enumerate([*others, *grown, *runs[i + 1:]]))
            grown.append((partition, keys + _joining(statuses, partition, keys, planned, blocked)))
    finally:
        statuses.loop.close()
    return grown


def _joining(statuses: _Statuses, partition: str | None, requested: list[dg.AssetKey], planned: dict,
             blocked) -> list[dg.AssetKey]:
    graph, view = statuses.graph, statuses.view
    in_run = set(with_inseparable(requested))
    pdef = graph.get(requested[0]).partitions_def
    vetted: dict[dg.AssetKey, object] = {}  # parent outside the run -> the partitions the requests read of it
    for key in in_run:
        for parent in graph.get(key).parent_keys:
            if not (parent in in_run and executable_in_same_run(graph, key, parent)):
                read = view.compute_parent_subset(parent, statuses.subset(key, partition))
                vetted[parent] = vetted[parent].compute_union(read) if parent in vetted else read
    joined: list[dg.AssetKey] = []
    for key in graph.toposorted_asset_keys:  # parents before children: a joined parent lets its children join
        if key in in_run or graph.get(key).partitions_def != pdef:
            continue
        group = with_inseparable([key])
        nodes = [graph.get(member) for member in group]
        if not any(parent in in_run for node in nodes for parent in node.parent_keys):
            continue  # not a child of the run
        if any(node.automation_condition not in (REFRESH_CONDITION, FOLLOW_CONDITION) for node in nodes):
            continue
        if not any(statuses.certain(member, partition) for member in group):
            continue
        if any(blocked(partition, member, planned) for member in group):
            continue

        def ready(member: dg.AssetKey, parent: dg.AssetKey) -> bool:
            if parent in in_run and executable_in_same_run(graph, member, parent):
                return True
            if parent in in_run:  # planned here, but read across partitions: it cannot run first in this run
                return False
            if graph.get_ancestor_asset_keys(parent) & in_run:  # a descendant of this run: it may change after it
                return False
            read = view.compute_parent_subset(parent, statuses.subset(member, partition))
            if parent in vetted and read.compute_difference(vetted[parent]).is_empty:
                return True
            return statuses.settled(parent, read, planned, blocked)

        if all(ready(member, parent) for member, node in zip(group, nodes) for parent in node.parent_keys):
            in_run.update(group)
            joined += [member for member in group if member not in joined]
    return joined


def skipped_to_retry(instance: dg.DagsterInstance, blocked) -> tuple[list[Run], list[str]]:
    """The joined asset partitions that failed runs tagged RETRY_TAG "pending" left missing, per run whose missing
    ones are all ready now (every parent settled or among them, as for joining), as runs to submit, and the ids of
    the runs handled (nothing left missing, or all ready): to tag "done" once submitted."""
    runs = instance.get_runs(dg.RunsFilter(tags={RETRY_TAG: "pending"}, statuses=[dg.DagsterRunStatus.FAILURE]))
    if not runs:
        return [], []
    statuses, retries, handled = _Statuses(instance), [], []
    try:
        for run in runs:
            partition = run.tags.get("dagster/partition")
            missing = [key for key in map(dg.AssetKey.from_user_string, run.tags.get(GROWN_TAG, "").split(",") if
                                          run.tags.get(GROWN_TAG) else [])
                       if statuses.resolver.get_status(key, partition) == StaleStatus.MISSING]

            def ready(key: dg.AssetKey, parent: dg.AssetKey) -> bool:
                if parent in missing:
                    return executable_in_same_run(statuses.graph, key, parent)
                read = statuses.view.compute_parent_subset(parent, statuses.subset(key, partition))
                return statuses.settled(parent, read, {}, blocked)

            if all(ready(key, parent) for key in missing for parent in statuses.graph.get(key).parent_keys):
                handled.append(run.run_id)
                if missing:
                    retries.append((partition, missing))
    finally:
        statuses.loop.close()
    return retries, handled
