"""What `compass.next_evaluations` reads for one case x scenario (issue 49): the board, its bootstrap score draws,
the case's benchmark matrix with the imputation's calibrated predictive sd, the score's gradient in every cell and
each cell's USD price (`compass.mlcompass.evaluation_costs`, eq. (1)); for a learned utility, every model's
outcome-evaluation candidate (`compass.mlcompass.next_evaluations_outcome`: its value from the same draws, priced
at the case's workload tokens).

Prices (`evaluation_costs`, eq. (1)): questions and tokens per question of each benchmark from LiveBench's per-task
cost columns on raw.benchmark_scores, a model's token prices from the case's own price table (compass.case_prices,
written by compass/case_catalog per case): a price of a model outside the case changes nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.case_inputs import build_x_raw
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.evaluation_costs import benchmark_profiles, cell_costs, token_prices
from compass.mlcompass.next_evaluations import clip_correlation
from compass.mlcompass.next_evaluations_decision import measure_slopes, score_gradient
from compass.mlcompass.next_evaluations_outcome import OUTCOME_QUERIES, outcome_costs, outcome_noise_sd, outcome_values
from compass.mlcompass.rank_uncertainty import imputation_noise, replicate_scores
from resources import readers
from resources.configs import scenario_for
from resources.warehouse import Warehouse


@dataclass(frozen=True)
class NextEvaluationInputs:
    """One decision's posterior and cells, rows = the board's models in rank order."""

    board: pd.DataFrame
    draws: np.ndarray | None  # (B, n) replicate scores; None (and the cell frames) when every cell is measured
    observed: pd.DataFrame  # the case's x_raw, every model (NaN = unmeasured)
    completed: pd.DataFrame | None
    cell_sd: pd.DataFrame | None
    gradient: pd.DataFrame | None
    cell_usd: pd.DataFrame | None
    correlation: float  # r of (2r) of `next_evaluations`: the case's within-model error correlation, clipped once here
    pick: dict  # the decision now: model_id, p_rank1, rank_lo, rank_hi of the board's rank 1
    outcomes: pd.DataFrame | None = None  # outcome-evaluation candidates (`next_evaluations_outcome`); None: no outcome


def read_inputs(wh: Warehouse, case: CaseStudy, scenario_name: str) -> NextEvaluationInputs | None:
    """The inputs of one case x scenario, None when its leaderboard is empty (skipped or infeasible)."""
    where = {"case_id": case.case_id, "scenario": scenario_name}
    board = wh.read("compass.leaderboards", where)
    if board.empty:
        return None
    board = board.sort_values("rank").reset_index(drop=True)
    scores = readers.case_scores(wh)
    observed = build_x_raw(scores, case.benchmarks)
    models = list(board["model_id"])
    x = observed.loc[models]
    if x.notna().all().all():  # nothing to measure: no posterior to read
        return NextEvaluationInputs(board, None, observed, None, None, None, None, 0.0, _pick(wh, where, models[0]))
    scenario = readers.named_measures(wh, case, dec.numeric_lambda(scenario_for(scenario_name, case), case))
    cost_table = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")
    replicates = readers.rank_replicates(wh, case.case_id)
    draws, _ = replicate_scores(replicates, cost_table["cost"], scenario, models, dec.board_dominators(board, observed))
    full, full_sd = imputation_noise(observed, 0, readers.noise_scales(wh, case.case_id))
    completed, sd = full.loc[models], full_sd.loc[models]
    slopes = measure_slopes(draws, replicates.measures[:, replicates.model_ids.get_indexer(models), :])
    gradient = score_gradient(completed, readers.measures(wh, case.case_id).loc[models], slopes)
    prices = token_prices(wh.read("compass.case_prices", {"case_id": case.case_id}), models)
    usd = cell_costs(benchmark_profiles(x.columns, scores), prices)
    r = clip_correlation(readers.noise_correlation(wh, case.case_id))
    outcomes = None
    if case.utility.source != "weights" and not scenario.utility_weights:  # a learned utility: an outcome to observe
        noise = outcome_noise_sd(OUTCOME_QUERIES, scenario.aggregation, len(replicates.groups))
        outcomes = outcome_values(draws, pd.Index(models), outcome_costs(prices, case.cost.workload), noise)
    return NextEvaluationInputs(board, draws, observed, completed, sd, gradient, usd, r, _pick(wh, where, models[0]),
                                outcomes)


def _pick(wh: Warehouse, where: dict, leader: str) -> dict:
    """The decision now: the board's rank 1 with its P(rank 1) and 90 % rank interval (compass.rank_uncertainty)."""
    ranks = wh.read("compass.rank_uncertainty", where) if wh.table_exists("compass.rank_uncertainty") else None
    lead = ranks.set_index("model_id").reindex([leader]).iloc[0] if ranks is not None and len(ranks) else None
    return {"model_id": leader, **{k: float(lead[k]) if lead is not None else float("nan")
                                   for k in ("p_rank1", "rank_lo", "rank_hi")}}
