"""What to measure next to settle each decision (issue 49), partitioned like the decisions (case x scenario).

compass.next_evaluations: every unmeasured (model, benchmark) cell of a board's models with its expected drop in
the decision's regret, its USD price, both ranks and the greedy batches (`compass.mlcompass.next_evaluations`), and
(kind 'outcome') a new outcome evaluation of each model (`compass.mlcompass.next_evaluations_outcome`).
compass.next_evaluations_answered: the loop closing. Cells the previous version suggested that the catalog now
measures (a scores file in the inbox or the sources), with the decision's uncertainty before (stored with the
suggestion) and after (compass.rank_uncertainty now): P(rank 1) of the pick and its 90 % rank interval. A refresh
that answers nothing keeps the last answered rows.
"""

import dagster as dg
import numpy as np
import pandas as pd

from assets.compass_decisions import DECISION_KEYS
from assets.compass_frontier import CASE_CATALOG, cost_side
from assets.compass_inputs import CASE_BENCHMARKS, IMPUTATION_VALIDATION
from assets.partitions import decision_partitions
from compass.mlcompass.next_evaluations_decision import TABLE_COLUMNS, answered, empty_table, next_evaluations_table
from resources import settings
from resources.configs import cases
from resources.next_evaluation_inputs import NextEvaluationInputs, read_inputs
from resources.publish import publish_many
from resources.warehouse import WarehouseResource

# 2: per-model slopes shrunk toward the pooled slope; 3: per-task LiveBench prices from the case's own price table,
# correlated cells, P(wrong)'s standard error (review of issue 49); 4: vote / agentic columns not for sale, P(wrong)'s
# SE without the finite-population correction, r clipped where read (second review of issue 49)
# 5: outcome-evaluation candidates (kind 'outcome') beside the cells
# 6: outcome values conditioned jointly on every model (review of the third pass), outcome_value_se; rank /
# rank_per_usd among the rows of one kind again, rank_all / rank_all_per_usd among all
CODE_VERSION = "compass-next-evaluations-6"
KEY = dg.AssetKey(["compass", "next_evaluations"])
TABLES = ("compass.next_evaluations", "compass.next_evaluations_answered")
ANSWERED_COLUMNS = ["model_id", "benchmark", "predicted", "measured", "pick_before", "p_rank1_before",
                    "rank_lo_before", "rank_hi_before", "pick_after", "p_rank1_after", "rank_lo_after", "rank_hi_after"]


def _live(wh, table: str, where: dict) -> pd.DataFrame:
    return wh.read(table, where) if wh.table_exists(table) else pd.DataFrame()


def _answered_rows(previous: pd.DataFrame, inputs: NextEvaluationInputs) -> pd.DataFrame:
    """Cells of `previous` measured now, with the pick's uncertainty before (stored in `previous`) and after."""
    cells = answered(previous, inputs.observed)
    if cells.empty:
        return empty_table(ANSWERED_COLUMNS)
    before = previous.iloc[0]
    after = inputs.pick
    return cells.assign(pick_before=before["pick"], p_rank1_before=before["pick_p_rank1"],
                        rank_lo_before=before["pick_rank_lo"], rank_hi_before=before["pick_rank_hi"],
                        pick_after=after["model_id"], p_rank1_after=after["p_rank1"],
                        rank_lo_after=after["rank_lo"], rank_hi_after=after["rank_hi"])[ANSWERED_COLUMNS]


@dg.asset(key=KEY, deps=[DECISION_KEYS["leaderboards"], ["compass", "rank_uncertainty"], ["compass", "rank_bootstrap"],
                         ["raw", "benchmark_scores"], CASE_CATALOG, cost_side, CASE_BENCHMARKS,
                         IMPUTATION_VALIDATION],
          partitions_def=decision_partitions, code_version=CODE_VERSION, group_name="compass",
          pool=settings.writer_pool())
def next_evaluations(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The unmeasured cells that would most reduce this decision's expected regret, priced in USD and ranked by
    value and by value per USD (preposterior analysis over the rank bootstrap); and what the last measurements did
    to the pick's P(rank 1) and rank interval."""
    wh = warehouse.get()
    keys = context.partition_key.keys_by_dimension
    case = cases()[keys["case"]]
    where = {"case_id": case.case_id, "scenario": keys["scenario"]}
    inputs = read_inputs(wh, case, keys["scenario"])
    if inputs is None:
        wh.delete_rows(list(TABLES), where)
        return dg.MaterializeResult(metadata={"skipped": "no leaderboard rows"}, data_version=dg.DataVersion("empty"))
    previous = _live(wh, TABLES[0], where)
    new = _answered_rows(previous, inputs)
    kept = _live(wh, TABLES[1], where)
    answered_rows = new if len(new) or kept.empty else kept[ANSWERED_COLUMNS]
    table = (empty_table(TABLE_COLUMNS) if inputs.draws is None else
             next_evaluations_table(inputs.draws, inputs.completed, inputs.cell_sd, inputs.gradient, inputs.cell_usd,
                                    correlation=inputs.correlation, outcomes=inputs.outcomes))
    table = table.assign(pick=inputs.pick["model_id"], pick_p_rank1=inputs.pick["p_rank1"],
                         pick_rank_lo=inputs.pick["rank_lo"], pick_rank_hi=inputs.pick["rank_hi"])
    head = table.head(3)
    return publish_many(context, wh, {TABLES[0]: table, TABLES[1]: answered_rows}, where, metadata={
        "candidates": len(table), "answered": len(new),
        "p_wrong_now": float(table["p_wrong_now"].iloc[0]) if len(table) else float("nan"),
        "top": ", ".join(f"{r.model_id} / {r.benchmark}" for r in head.itertuples()) or "nothing unmeasured"})


@dg.asset_check(asset=KEY, blocking=False, name="reductions_are_sound", partitions_def=decision_partitions)
def reductions_are_sound(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Every expected reduction is finite and >= 0 (eq. (3) is an expectation of a max), every cost > 0, and no
    suggested cell is already measured: ranks 1..n by non-increasing reduction."""
    keys = context.partition_key.keys_by_dimension
    table = _live(warehouse.get(), TABLES[0], {"case_id": keys["case"], "scenario": keys["scenario"]})
    if table.empty:
        return dg.AssetCheckResult(passed=True, metadata={"candidates": 0})
    rank = "rank_all" if "rank_all" in table else "rank"  # rank is per kind since the outcome rows (code version 6)
    ordered = table.sort_values(rank)
    reduction = ordered["expected_reduction"].to_numpy(float)
    problems = {"negative_or_missing_reduction": int((~np.isfinite(reduction) | (reduction < -1e-12)).sum()),
                "non_positive_cost": int((ordered["cost_usd"].to_numpy(float) <= 0).sum()),
                "misordered": int(list(ordered[rank]) != list(range(1, len(ordered) + 1))
                                  or bool((np.diff(reduction) > 1e-12).any())),
                "zero_spread_cells": int((ordered["cell_sd"].to_numpy(float) <= 0).sum())}
    return dg.AssetCheckResult(passed=not any(problems.values()), metadata=problems)


next_evaluation_assets = [next_evaluations]
next_evaluation_checks = [reductions_are_sound]
