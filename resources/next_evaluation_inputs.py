"""What `compass.next_evaluations` reads for one case x scenario (issue 49): the board, its bootstrap score draws,
the case's benchmark matrix with the imputation's calibrated predictive sd, the score's gradient in every cell and
each cell's USD price (`compass.mlcompass.evaluation_costs`, eq. (1)).

Prices: a model's USD per question is its own LiveBench cost per question (raw.model_costs.cost_per_question_usd)
where the catalog has one, else its blended price (compass.costs.raw_cost, USD per million tokens) times LiveBench's
median tokens per question; question counts are the published sizes (`KNOWN_QUESTIONS`), else 50 (the stated
fallback of `question_counts` without LiveBench's per-task counts, which the warehouse does not hold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.case_inputs import build_x_raw
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.evaluation_costs import cell_costs, question_counts, usd_per_question
from compass.mlcompass.next_evaluations_decision import measure_slopes, score_gradient
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
    pick: dict  # the decision now: model_id, p_rank1, rank_lo, rank_hi of the board's rank 1


def livebench_costs(model_costs: pd.DataFrame) -> pd.DataFrame | None:
    """raw.model_costs rows with a LiveBench cost per question, as `evaluation_costs`' cost file (one per model);
    None when the catalog has none (a catalog without LiveBench has no such column)."""
    if "cost_per_question_usd" not in model_costs or model_costs["cost_per_question_usd"].isna().all():
        return None
    rows = model_costs.dropna(subset=["cost_per_question_usd"])
    return rows.groupby("model_id", as_index=False).agg(
        cost_per_question=("cost_per_question_usd", "median"),
        input_price_per_million=("input_usd_per_mtok", "median"),
        output_price_per_million=("output_usd_per_mtok", "median")).rename(columns={"model_id": "model"})


def read_inputs(wh: Warehouse, case: CaseStudy, scenario_name: str) -> NextEvaluationInputs | None:
    """The inputs of one case x scenario, None when its leaderboard is empty (skipped or infeasible)."""
    where = {"case_id": case.case_id, "scenario": scenario_name}
    board = wh.read("compass.leaderboards", where)
    if board.empty:
        return None
    board = board.sort_values("rank").reset_index(drop=True)
    observed = build_x_raw(readers.case_scores(wh), case.benchmarks)
    models = list(board["model_id"])
    x = observed.loc[models]
    if x.notna().all().all():  # nothing to measure: no posterior to read
        return NextEvaluationInputs(board, None, observed, None, None, None, None, _pick(wh, where, models[0]))
    scenario = readers.named_measures(wh, case, dec.numeric_lambda(scenario_for(scenario_name, case), case))
    cost_table = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")
    replicates = readers.rank_replicates(wh, case.case_id)
    draws, _ = replicate_scores(replicates, cost_table["cost"], scenario, models, dec.board_dominators(board, observed))
    full, full_sd = imputation_noise(observed, 0, readers.noise_scales(wh, case.case_id))
    completed, sd = full.loc[models], full_sd.loc[models]
    slopes = measure_slopes(draws, replicates.measures[:, replicates.model_ids.get_indexer(models), :])
    gradient = score_gradient(completed, readers.measures(wh, case.case_id).loc[models], slopes)
    per_question = usd_per_question(models, cost_table["raw_cost"], livebench_costs(wh.read("raw.model_costs")))
    usd = cell_costs(x, question_counts(x.columns), per_question)
    return NextEvaluationInputs(board, draws, observed, completed, sd, gradient, usd, _pick(wh, where, models[0]))


def _pick(wh: Warehouse, where: dict, leader: str) -> dict:
    """The decision now: the board's rank 1 with its P(rank 1) and 90 % rank interval (compass.rank_uncertainty)."""
    ranks = wh.read("compass.rank_uncertainty", where) if wh.table_exists("compass.rank_uncertainty") else None
    lead = ranks.set_index("model_id").reindex([leader]).iloc[0] if ranks is not None and len(ranks) else None
    return {"model_id": leader, **{k: float(lead[k]) if lead is not None else float("nan")
                                   for k in ("p_rank1", "rank_lo", "rank_hi")}}
