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

# Dagster's own rule for "this parent can run in this asset's run" (same partitions definition, identity mapping);
# a private module, safe while dagster is pinned (==1.13.27 in pyproject.toml): tests/assets/test_automation.py.
from dagster._core.definitions.assets.graph.asset_graph import executable_in_same_run


class AncestorPending(dg.AutomationCondition):
    """True for the partitions of an asset that a pending ancestor partition maps to: requested on this tick
    (whichever run it goes to) or in a run or backfill in progress. A parent requested into the
    asset's own run (same partitions definition: Dagster runs it first in that run) does not count; what is
    pending above it still does.

    Written here because Dagster's `will_be_requested()` is true only for a parent that can run in the same run
    as the evaluated asset, so through the case -> case x scenario mapping (different partitions definitions) a
    decision partition would never see its cost side being requested and would run on stale inputs in parallel
    (Dagster 1.13; reproduced in tests/assets/test_automation.py). One pass over the ancestors in topological
    order, mapping pending subsets down edge by edge (the same condition as a nested `any_deps_match` per level
    was ~14,000 condition nodes, 2.5 s of every tick).
    """

    @property
    def name(self) -> str:
        return "ancestor_pending"

    async def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        view, graph = context.asset_graph_view, context.asset_graph
        ancestors = graph.get_ancestor_asset_keys(context.key)
        requested, above = {}, {}  # per ancestor: requested this tick; in progress, or pending further up
        for key in (k for k in graph.toposorted_asset_keys if k in ancestors):
            full = view.get_full_subset(key=key)
            requested[key] = context.request_subsets_by_key.get(key) or view.get_empty_subset(key=key)
            pending = (await view.compute_run_in_progress_subset(key=key, from_subset=full)).compute_union(
                await view.compute_backfill_in_progress_subset(key=key, from_subset=full))
            for parent in graph.get(key).parent_keys & ancestors:
                pending = pending.compute_union(
                    view.compute_child_subset(key, above[parent].compute_union(requested[parent])))
            above[key] = pending
        found = context.get_empty_subset()
        for parent in graph.get(context.key).parent_keys:
            pending = above[parent]
            if not executable_in_same_run(graph, context.key, parent):
                pending = pending.compute_union(requested[parent])
            found = found.compute_union(view.compute_child_subset(context.key, pending))
        return dg.AutomationResult(context=context, true_subset=context.candidate_subset.compute_intersection(found))


# A new code version, or a parent's new data version, seen since the asset was last requested or updated. Both
# stay true until handled: `code_version_changed()` alone is true on one tick only, and a code change that
# arrives while an ancestor is pending (the wait below) was forgotten on the next tick.
CHANGED_SINCE_HANDLED = (dg.AutomationCondition.code_version_changed()
                         | dg.AutomationCondition.any_deps_match(dg.AutomationCondition.data_version_changed())
                         ).since_last_handled()


def refresh_condition(follows_parent_run: bool = False) -> dg.AutomationCondition:
    """The refresh condition (module docstring). `follows_parent_run`: the asset also runs whenever a parent of its
    own partitions definition runs, in that same run, instead of one tick later (for cheap children whose parent
    nearly always changes when it runs: one run and one tick fewer per refresh, issue 17)."""
    ac = dg.AutomationCondition
    trigger = (ac.missing() & ~ac.any_deps_missing() & ~ac.execution_failed()) | CHANGED_SINCE_HANDLED
    if follows_parent_run:
        trigger = trigger | ac.any_deps_match(ac.will_be_requested()).with_label("parent_in_this_run")
    wait = ac.in_progress() | AncestorPending() | ac.any_deps_match(ac.execution_failed()).with_label("parent_failed")
    return (trigger & ~wait & ac.all_deps_blocking_checks_passed()).with_label("refresh")


def report_condition() -> dg.AutomationCondition:
    """The report at the end of the graph: like the refresh condition, but it also runs while a parent partition
    is missing or failed (a report of what exists, naming what failed, beats no report)."""
    ac = dg.AutomationCondition
    trigger = ac.missing() | CHANGED_SINCE_HANDLED
    return (trigger & ~(ac.in_progress() | AncestorPending())).with_label("report")


REFRESH_CONDITION = refresh_condition()
FOLLOW_CONDITION = refresh_condition(follows_parent_run=True)
REPORT_CONDITION = report_condition()
