"""Blocking checks on the published ML Compass tables: a failed check stops its children.

Each check is partitioned like its asset and looks at that partition's rows only, so a case (or case x
scenario) that failed, or whose check failed, holds back its own children and no other case's (Dagster
keeps the status of an unpartitioned check per asset: one failed partition blocked every case).
"""

import dagster as dg
import numpy as np
import pandas as pd

from assets.partitions import case_partitions, decision_partitions
from compass.mlcompass.measure_names import ACTIVE, registry_problems
from resources.warehouse import WarehouseResource

TOL = 1e-9


def _result(problems: dict[str, int], details: dict[str, float] | None = None) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=not any(problems.values()), metadata={**problems, **(details or {})})


def _case_where(context: dg.AssetCheckExecutionContext) -> dict[str, str]:
    return {"case_id": context.partition_key}


@dg.asset_check(asset=dg.AssetKey(["compass", "measures"]), blocking=True, name="measures_in_unit_interval",
                partitions_def=case_partitions)
def measures_in_unit_interval(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Internal measures are min-max scaled (§4.3): every value in [0, 1], none missing."""
    m = warehouse.get().read("compass.measures", _case_where(context))
    return _result({"outside_0_1": int((~m["value"].between(-TOL, 1 + TOL)).sum()), "missing": int(m["value"].isna().sum())})


@dg.asset_check(asset=dg.AssetKey(["compass", "measures"]), blocking=True, name="measures_keep_their_meaning",
                partitions_def=case_partitions)
def measures_keep_their_meaning(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """A measure that kept its name and id across the refresh matches its previous loadings: Tucker's phi >=
    MIN_CONGRUENCE (0.95, "equal factors") out of sample (`congruence`: each benchmark's loadings from a rotation
    fitted without it; the in-sample phi, `congruence_in_sample`, is shown next to it and decides nothing); one
    that stopped matching carries a new identity and says what changed (compass.mlcompass.measure_names). Every
    published measure has exactly one current, unique name."""
    wh, where = warehouse.get(), _case_where(context)
    names = wh.read("compass.measure_names", where)
    active = names[names["status"].isin(ACTIVE)]
    phi = {f"phi {label}{r.factor}": round(float(value), 4) for r in active.itertuples()
           for label, value in (("", r.congruence), ("in sample ", getattr(r, "congruence_in_sample", None)))
           if pd.notna(value)}
    return _result(registry_problems(names, set(wh.read("compass.measures", where)["factor"])), phi)


@dg.asset_check(asset=dg.AssetKey(["compass", "utilities"]), blocking=True, name="weights_sum_to_one",
                partitions_def=case_partitions)
def weights_sum_to_one(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Normalized utility weights β̂ (§4.5) are non-negative and sum to 1 per context."""
    w = warehouse.get().read("compass.utility_weights", _case_where(context))
    sums = w.groupby("context_group")["weight"].sum()
    return _result({"groups_not_summing_to_1": int((~np.isclose(sums, 1.0)).sum()), "negative": int((w["weight"] < -TOL).sum())})


@dg.asset_check(asset=dg.AssetKey(["compass", "leaderboards"]), blocking=True, name="ranked_by_score",
                partitions_def=decision_partitions)
def ranked_by_score(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """The leaderboard is ranked 1..n by non-increasing score (ties broken by lower cost)."""
    keys = context.partition_key.keys_by_dimension
    board = warehouse.get().read("compass.leaderboards", {"case_id": keys["case"], "scenario": keys["scenario"]})
    board = board.sort_values("rank") if len(board) else board
    bad = len(board) > 0 and (list(board["rank"]) != list(range(1, len(board) + 1))
                              or bool((np.diff(board["score"].to_numpy(float)) > TOL).any()))
    return _result({"misordered_leaderboards": int(bad)})


compass_checks = [measures_in_unit_interval, measures_keep_their_meaning, weights_sum_to_one, ranked_by_score]
