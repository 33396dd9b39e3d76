"""Blocking checks on the published ML Compass tables: a failed check stops its children."""

import dagster as dg
import numpy as np

from resources.warehouse import WarehouseResource

TOL = 1e-9


def _result(problems: dict[str, int]) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=not any(problems.values()), metadata=problems)


@dg.asset_check(asset=dg.AssetKey(["compass", "measures"]), blocking=True, name="measures_in_unit_interval")
def measures_in_unit_interval(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Internal measures are min-max scaled (§4.3): every value in [0, 1], none missing."""
    m = warehouse.get().read("compass.measures")
    return _result({"outside_0_1": int((~m["value"].between(-TOL, 1 + TOL)).sum()), "missing": int(m["value"].isna().sum())})


@dg.asset_check(asset=dg.AssetKey(["compass", "utilities"]), blocking=True, name="weights_sum_to_one")
def weights_sum_to_one(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Normalized utility weights β̂ (§4.5) are non-negative and sum to 1 per case and context."""
    w = warehouse.get().read("compass.utility_weights")
    sums = w.groupby(["case_id", "context_group"])["weight"].sum()
    return _result({"groups_not_summing_to_1": int((~np.isclose(sums, 1.0)).sum()), "negative": int((w["weight"] < -TOL).sum())})


@dg.asset_check(asset=dg.AssetKey(["compass", "leaderboards"]), blocking=True, name="ranked_by_score")
def ranked_by_score(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Every leaderboard is ranked 1..n by non-increasing score (ties broken by lower cost)."""
    board = warehouse.get().read("compass.leaderboards")
    bad = 0
    for _, part in board.groupby(["case_id", "scenario"]):
        part = part.sort_values("rank")
        bad += int(list(part["rank"]) != list(range(1, len(part) + 1)) or bool((np.diff(part["score"]) > TOL).any()))
    return _result({"misordered_leaderboards": bad})


compass_checks = [measures_in_unit_interval, weights_sum_to_one, ranked_by_score]
