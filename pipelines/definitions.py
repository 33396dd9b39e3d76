"""Dagster Definitions for llm-compass: assets, checks, jobs, schedules, sensors, resources.

The attributes every asset shares are applied here, once: the refresh
condition (assets.automation) on every derived asset (the follow condition on
the decisions' cheap children), the kinds, and one
partition per run for backfills. The writer pool is the one shared attribute
set in each decorator (`pool=settings.writer_pool()`): Dagster 1.13 keeps a pool
on the op definition only, and neither `with_attributes` nor `AssetSpec` can
change it afterwards.
"""

from __future__ import annotations

import dagster as dg

from assets import (
    cascade,
    clusters,
    compass_changes,
    compass_checks,
    compass_decisions,
    compass_frontier,
    compass_inputs,
    compass_next_evaluations,
    compass_studies,
    datasets,
    live_sources,
    matching,
    oracle,
    router,
    sources,
)
from assets.automation import FOLLOW_CONDITION, REFRESH_CONDITION, REPORT_CONDITION
from assets.partitions import (
    archetype_partitions,
    case_partitions,
    dataset_partitions,
    decision_partitions,
    route_dataset_partitions,
    user_partitions,
)
from pipelines.executor import chosen_executor
from pipelines.report.asset import report_site
from pipelines.sensors import JOBS as OPS_JOBS
from pipelines.sensors import SCHEDULES, SENSORS
from resources.sources import SourcesResource
from resources.warehouse import WarehouseResource

_DERIVED = [
    compass_frontier.case_catalog,
    compass_frontier.measures,
    compass_frontier.tiers,
    compass_frontier.ces_shape,
    compass_frontier.cost_side,
    *compass_inputs.compass_input_assets,
    *compass_decisions.compass_decision_assets,
    *compass_studies.compass_study_assets,
    compass_changes.leaderboard_changes,
    *compass_next_evaluations.next_evaluation_assets,
    *datasets.dataset_assets,
    *oracle.oracle_assets,
    *cascade.cascade_assets,
    *clusters.clusters_assets,
    *router.router_assets,
    *matching.matching_assets,
]
KINDS = {"duckdb", "python"}
# Backfills run one partition per run (README, "Backfills from the UI"): each partition writes only its
# own rows in one transaction, so a failed partition rolls back alone and the rest still land, and the
# run queue can spread independent datasets / cases over workers.
PER_PARTITION = dg.BackfillPolicy.multi_run(max_partitions_per_run=1)


def _shared(asset: dg.AssetsDefinition, condition: dg.AutomationCondition | None) -> dg.AssetsDefinition:
    """The attributes every asset shares: kinds; the automation condition (none on the raw sources);
    per-partition backfills."""
    asset = asset.map_asset_specs(lambda spec: spec.replace_attributes(kinds=KINDS, automation_condition=condition))
    return asset.with_attributes(backfill_policy=PER_PARTITION) if asset.partitions_def else asset


# Cheap children that join their parent's run (assets.automation.FOLLOW_CONDITION) instead of waiting a tick for
# runs of their own: the decisions' children, which nearly always change when the decisions run; and the cost side,
# which follows the case's catalog extract (a price change reaches the decisions one tick sooner, and the case's
# robustness study, requested a tick later, then runs beside the decisions rather than before them; a catalog run
# that changed nothing costs one cost-side fit, ~0.5 s, whose unchanged data version triggers nothing).
FOLLOWERS = [compass_decisions.rank_uncertainty, compass_changes.leaderboard_changes, compass_frontier.cost_side,
             *compass_next_evaluations.next_evaluation_assets]


def _condition(asset: dg.AssetsDefinition) -> dg.AutomationCondition:
    return FOLLOW_CONDITION if asset in FOLLOWERS else REFRESH_CONDITION


ASSETS = ([_shared(a, None) for a in [live_sources.raw_fetches, *sources.raw_assets]] + [_shared(a, _condition(a)) for a in _DERIVED]
          + [_shared(report_site, REPORT_CONDITION)])
CHECKS = [*sources.raw_checks, sources.price_move_check, live_sources.sources_fresh, *compass_checks.compass_checks,
          *compass_next_evaluations.next_evaluation_checks]

# One job per partitions definition (a run holds one partition key).
PARTITION_GROUPS: dict[str, dg.PartitionsDefinition | None] = {
    "unpartitioned": None,
    "dataset": dataset_partitions,
    "case": case_partitions,
    "decision": decision_partitions,
    "archetype": archetype_partitions,
    "route_dataset": route_dataset_partitions,
    "user": user_partitions,
}


def _keys_with(partitions_def: dg.PartitionsDefinition | None) -> list[dg.AssetKey]:
    return [key for a in ASSETS if a.partitions_def == partitions_def for key in a.keys]


def refresh_job_name(group: str) -> str:
    return f"refresh_{group}"


JOBS = [
    dg.define_asset_job(refresh_job_name(group), selection=dg.AssetSelection.assets(*keys))
    for group, pdef in PARTITION_GROUPS.items()
    if (keys := _keys_with(pdef))
]


# Both resources read COMPASS_DB / COMPASS_CONFIG (resources.settings) when a run starts, not at import.
RESOURCES = {"warehouse": WarehouseResource(), "sources": SourcesResource()}

# COMPASS_EXECUTOR=celery: every job and the automation run on Celery workers (pipelines.executor); unset: None,
# Dagster's default executor, as before.
defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS + OPS_JOBS, schedules=SCHEDULES, sensors=SENSORS,
                      resources=RESOURCES, executor=chosen_executor())


def get_job(name: str) -> dg.JobDefinition:
    """Module-level job lookup, so multiprocess runs can reconstruct a job by name."""
    return defs.resolve_job_def(name)


def reconstructable_job(name: str):
    return dg.build_reconstructable_job("pipelines.definitions", "get_job", reconstructable_args=(name,))


def job_for_keys(keys: list[dg.AssetKey]) -> str:
    """The refresh job whose partitions definition the given assets share."""
    by_key = {key: a.partitions_def for a in ASSETS for key in a.keys}
    groups = {g for g, pdef in PARTITION_GROUPS.items() for k in keys if by_key[k] == pdef}
    if len(groups) != 1:
        raise ValueError(f"assets span several partitions definitions: {sorted(groups)}")
    return refresh_job_name(groups.pop())


def with_inseparable(keys: list[dg.AssetKey]) -> list[dg.AssetKey]:
    """`keys` plus every sibling of a multi-asset that cannot run in part (can_subset=False)."""
    out = list(keys)
    for a in ASSETS:
        if not a.can_subset and any(k in a.keys for k in keys):
            out += [k for k in a.keys if k not in out]
    return out
