"""The refresh condition every derived asset carries (declarative automation).

An asset runs when it is missing, when its code version changed, or when a
parent got a *new data version*; a parent re-materialized with an identical
data version does not trigger it (data_version_changed, not newly_updated).
It waits while any ancestor is requested this tick or in progress (raw
sources too: under the daemon the schedule and the inbox sensor run them
asynchronously), so a change that reaches an asset along several paths (new
scores via the measures chain and directly; a new price via the cost side)
runs it once, after all of them. It also waits while a parent's latest run
failed (no mixing of new inputs with a stale parent), and a missing asset
whose own run failed is not re-requested every tick (it runs again when its
inputs or code change, or by hand). Blocking checks on parents gate it.
"""

from __future__ import annotations

import dagster as dg

# Longest chain of the graph (raw/models -> raw/model_aliases -> raw/benchmark_scores -> measures -> tiers ->
# ces_shape -> cost_side -> decisions -> leaderboard_changes -> report/site); tests/ops/test_automation.py checks it.
ANCESTOR_DEPTH = 9


class RequestedThisTick(dg.AutomationCondition):
    """True for the partitions of an asset requested on this tick, whichever run they will go to.

    Written here because Dagster's `will_be_requested()` is true only for a parent
    that can run in the same run as the evaluated asset, so through the
    case -> case x scenario mapping (different partitions definitions) a decision
    partition never sees its cost side being requested and would run on stale
    inputs in parallel (Dagster 1.13; reproduced in tests/ops/test_automation.py).
    """

    @property
    def name(self) -> str:
        return "requested_this_tick"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        requested = context.request_subsets_by_key.get(context.key)
        true_subset = (context.candidate_subset.compute_intersection(requested) if requested is not None
                       else context.get_empty_subset())
        return dg.AutomationResult(context=context, true_subset=true_subset)


def ancestor_pending(depth: int = ANCESTOR_DEPTH) -> dg.AutomationCondition:
    """An ancestor within `depth` levels is requested this tick or in progress, except a parent requested into
    the asset's own run (same partition: Dagster runs the parent first in that run)."""
    ac = dg.AutomationCondition
    pending = RequestedThisTick() | ac.in_progress()
    condition = ac.any_deps_match(pending)
    for _ in range(depth - 2):
        condition = ac.any_deps_match(pending | condition)
    # A parent requested this tick was requested only with none of its own ancestors pending (this condition).
    elsewhere = (RequestedThisTick() & ~ac.will_be_requested()) | ac.in_progress()
    return ac.any_deps_match(elsewhere | condition).with_label("ancestor_pending")


def refresh_condition(follows_parent_run: bool = False) -> dg.AutomationCondition:
    """The refresh condition (module docstring). `follows_parent_run`: the asset also runs whenever a parent of its
    own partitions definition runs, in that same run, instead of one tick later (for cheap children whose parent
    nearly always changes when it runs: one run and one tick fewer per refresh, issue 17)."""
    ac = dg.AutomationCondition
    trigger = (
        (ac.missing() & ~ac.any_deps_missing() & ~ac.execution_failed())
        | ac.code_version_changed()
        | ac.any_deps_match(ac.data_version_changed()).since_last_handled()
    )
    if follows_parent_run:
        trigger = trigger | ac.any_deps_match(ac.will_be_requested()).with_label("parent_in_this_run")
    wait = ac.in_progress() | ancestor_pending() | ac.any_deps_match(ac.execution_failed()).with_label("parent_failed")
    return (trigger & ~wait & ac.all_deps_blocking_checks_passed()).with_label("refresh")


def report_condition() -> dg.AutomationCondition:
    """The report at the end of the graph: like the refresh condition, but it also runs while a parent partition
    is missing or failed (a report of what exists, naming what failed, beats no report)."""
    ac = dg.AutomationCondition
    trigger = ac.missing() | ac.code_version_changed() | ac.any_deps_match(ac.data_version_changed()).since_last_handled()
    return (trigger & ~(ac.in_progress() | ancestor_pending())).with_label("report")


REFRESH_CONDITION = refresh_condition()
FOLLOW_CONDITION = refresh_condition(follows_parent_run=True)
REPORT_CONDITION = report_condition()
