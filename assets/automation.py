"""The refresh condition every derived asset carries (declarative automation).

An asset runs when it is missing, when its code version changed, or when a
parent got a *new data version*; a parent re-materialized with an identical
data version does not trigger it (data_version_changed, not newly_updated).
It waits while any automated ancestor is requested this tick or in progress,
so a change that reaches an asset along several paths (new scores via the
measures chain and directly; a new price via the cost side) runs it once,
after all of them. Blocking checks on parents gate it.
"""

from __future__ import annotations

import dagster as dg

# Longest chain of automated assets (measures -> tiers -> ces_shape -> cost_side -> decisions ->
# leaderboard_changes); tests/ops/test_units.py checks the graph never gets deeper than this.
ANCESTOR_DEPTH = 6


class RequestedThisTick(dg.AutomationCondition):
    """True for the partitions of an asset requested on this tick, whichever run they will go to.

    Written here because Dagster's `will_be_requested()` is true only for a parent
    that can run in the same run as the evaluated asset, so through the
    case -> case x scenario mapping (different partitions definitions) a decision
    partition never sees its cost side being requested and would run on stale
    inputs in parallel (Dagster 1.13; reproduced in tests/ops/test_units.py).
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
    """An automated ancestor within `depth` levels is requested this tick or in progress (raw sources excluded:
    they are materialized before automation ticks)."""
    ac = dg.AutomationCondition
    pending = RequestedThisTick() | ac.in_progress()
    sources = dg.AssetSelection.groups("sources")
    condition = ac.any_deps_match(pending).ignore(sources)
    for _ in range(depth - 1):
        condition = ac.any_deps_match(pending | condition).ignore(sources)
    return condition.with_label("ancestor_pending")


def refresh_condition() -> dg.AutomationCondition:
    ac = dg.AutomationCondition
    trigger = (
        (ac.missing() & ~ac.any_deps_missing())
        | ac.code_version_changed()
        | ac.any_deps_match(ac.data_version_changed()).since_last_handled()
    )
    return (trigger & ~ac.in_progress() & ~ancestor_pending() & ac.all_deps_blocking_checks_passed()).with_label(
        "refresh"
    )


REFRESH_CONDITION = refresh_condition()
