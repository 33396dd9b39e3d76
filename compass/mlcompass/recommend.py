"""Discrete model recommendation over the available models (ML Compass §4.6, Problem (7)).

* Feasible set M_feas (§4.6): budget B_j(c(m)) <= 0 and compliance floors
  R_k(x(m)) <= 0 on internal measures; the empirical frontier is *not* enforced
  (footnote 7). Footnote 6 (ii): floors on observable raw benchmarks pre-filter the
  candidate set directly; a model with a missing raw score cannot be shown to
  comply and is screened out (reason "raw_missing:<benchmark>").
* Problem (7): m* in argmax_{m in M_feas} Û(x(m); z) - lam c(m); ties go to the
  lower-cost model (Figure 4 note, §5.6: "the lowest-cost feasible model"), then to the model id for
  determinism. When the objective prices models at another cost than their actual one (Table 5's
  protocol selects on tier-aggregated costs, equal within a tier), a tie is still broken on the actual
  cost (`tie_costs`), not on the selection cost.
  With the case's observed benchmark scores (`observed`), the pick applies the leaderboard's dominance repair
  (compass.mlcompass.dominance): a model that strictly dominates the argmax on every benchmark it was observed on,
  at no higher actual price (`tie_costs`, not the selection cost), is picked instead, so `compass recommend`, Table 6's MLC policies and the board agree.
* Projection variant (footnote 8): m_proj in argmin_{m in M_feas} ||(x(m), c(m)) - (x*, c*)||_2.
* Aggregation over contexts: "mean" (weighted average, Problem (5) / Score_s of
  the leaderboard) or "robust" (worst case over contexts, Problem (6)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.mlcompass.dominance import TIE_DECIMALS, repair
from compass.mlcompass.utilities import UtilityFn, linear_utility

AGGREGATIONS = ("mean", "robust")


@dataclass(frozen=True)
class Recommendation:
    """Outcome of Problem (7) (or of the projection variant when `distance` is set)."""

    model_id: str | None
    feasible: bool
    reason: str
    score: float
    utility: float
    cost: float
    distance: float = float("nan")


def expand_floors(floors: Mapping[str, float] | None, measure_names: Sequence[str]) -> dict[str, float]:
    """Expand a floor spec ({"C2": 0.5} or {"all": 0.33}) into one floor per named measure."""
    out = {m: 0.0 for m in measure_names}
    for key, value in (floors or {}).items():
        if key == "all":
            out = {m: max(out[m], float(value)) for m in measure_names}
        elif key in out:
            out[key] = max(out[key], float(value))
        else:
            raise ValueError(f"floor on unknown internal measure {key!r}; measures are {list(measure_names)}")
    return out


def _check_inputs(measures: pd.DataFrame, costs: pd.Series) -> None:
    if measures.index.has_duplicates:
        raise ValueError("measures: duplicate model ids in the index")
    missing = measures.index.difference(costs.index)
    if len(missing):
        raise ValueError(f"costs missing for models {list(missing)[:5]}")
    if measures.isna().any().any():
        bad = measures.index[measures.isna().any(axis=1)]
        raise ValueError(f"measures contain missing values for models {list(bad)[:5]}")
    if costs.reindex(measures.index).isna().any():
        raise ValueError("costs contain missing values")


def screen_models(
    measures: pd.DataFrame,
    costs: pd.Series,
    budget: float = 1.0,
    floors: Mapping[str, float] | None = None,
    raw_scores: pd.DataFrame | None = None,
    raw_floors: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Feasibility of each model (M_feas of §4.6 plus raw-benchmark screens of footnote 6 (ii)).

    Returns DataFrame[model_id, feasible, reason], reason = ";"-joined violated
    constraints among "budget", "floor:<measure>", "raw_floor:<bench>", "raw_missing:<bench>".
    """
    _check_inputs(measures, costs)
    floor_map = expand_floors(floors, list(measures.columns))
    raw_floors = dict(raw_floors or {})
    if raw_floors and raw_scores is None:
        raise ValueError(f"raw-benchmark floors {list(raw_floors)} given but no raw_scores table")
    for bench in raw_floors:
        if bench not in raw_scores.columns:
            raise ValueError(f"raw floor on {bench!r} but raw_scores has no such column")
    rows = []
    for model_id in measures.index:
        reasons = []
        if costs[model_id] > budget:
            reasons.append("budget")
        reasons += [f"floor:{m}" for m, r in floor_map.items() if measures.at[model_id, m] < r]
        for bench, r in raw_floors.items():
            value = raw_scores[bench].get(model_id, np.nan)
            if pd.isna(value):
                reasons.append(f"raw_missing:{bench}")
            elif value < r:
                reasons.append(f"raw_floor:{bench}")
        rows.append({"model_id": model_id, "feasible": not reasons, "reason": ";".join(reasons)})
    return pd.DataFrame(rows, columns=["model_id", "feasible", "reason"])


def as_utility_fn(u: UtilityFn | pd.Series, measure_names: Sequence[str]) -> UtilityFn:
    """A callable Û(x) from a callable or a Series of linear weights β (Û = βᵀx)."""
    if isinstance(u, pd.Series):
        missing = [m for m in measure_names if m not in u.index]
        if missing:
            raise ValueError(f"utility weights lack measures {missing}")
        return linear_utility(u[list(measure_names)].to_numpy(dtype=float))
    return u


def aggregate_utility(
    x: np.ndarray,
    utilities: Mapping[str, UtilityFn | pd.Series],
    measure_names: Sequence[str],
    aggregation: str = "mean",
    weights: Mapping[str, float] | None = None,
) -> np.ndarray:
    """Aggregate Û(x; z) over contexts z: weighted mean (Problem 5) or min (Problem 6); x is (n, I)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    if not utilities:
        raise ValueError("no context utilities given")
    groups = list(utilities)
    per_group = np.column_stack([as_utility_fn(utilities[g], measure_names)(x) for g in groups])
    if aggregation == "robust":
        return per_group.min(axis=1)
    if weights and set(weights) != set(groups):
        raise ValueError(f"context weights {sorted(weights)} do not match the utility groups {sorted(groups)}")
    w = np.array([float(weights[g]) for g in groups]) if weights else np.ones(len(groups))
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"context weights must be >= 0 with a positive sum, got {dict(zip(groups, w))}")
    return per_group @ (w / w.sum())


def model_scores(
    measures: pd.DataFrame,
    costs: pd.Series,
    utilities: Mapping[str, UtilityFn | pd.Series],
    lam: float,
    aggregation: str = "mean",
    weights: Mapping[str, float] | None = None,
    tie_costs: pd.Series | None = None,
) -> pd.DataFrame:
    """Score_s(m) = Agg_z Û(x(m); z) - lam c(m) for every model (§4.6 leaderboard score).

    Returns DataFrame[model_id, utility, cost, score] sorted best first; ties go to the lower `tie_costs`
    (the actual cost, when `costs` are selection costs such as tier costs), default `costs`.
    """
    _check_inputs(measures, costs)
    utility = aggregate_utility(measures.to_numpy(dtype=float), utilities, list(measures.columns), aggregation, weights)
    cost = costs.reindex(measures.index).to_numpy(dtype=float)
    table = pd.DataFrame({"model_id": measures.index, "utility": utility, "cost": cost, "score": utility - lam * cost})
    if tie_costs is None:
        return sort_by_score(table)
    tie = tie_costs.reindex(measures.index).to_numpy(dtype=float)
    if np.isnan(tie).any():
        raise ValueError(f"tie_costs missing for models {list(measures.index[np.isnan(tie)])[:5]}")
    return sort_by_score(table.assign(tie_cost=tie), tie_col="tie_cost").drop(columns="tie_cost")


def sort_by_score(table: pd.DataFrame, tie_col: str = "cost") -> pd.DataFrame:
    """Order rows by score (desc, equal to TIE_DECIMALS), breaking ties by the lower `tie_col`, then model id."""
    key = table.assign(_s=-table["score"].astype(float).round(TIE_DECIMALS))
    return key.sort_values(["_s", tie_col, "model_id"], kind="mergesort").drop(columns="_s").reset_index(drop=True)


def recommend(
    measures: pd.DataFrame,
    costs: pd.Series,
    utilities: Mapping[str, UtilityFn | pd.Series],
    lam: float,
    budget: float = 1.0,
    floors: Mapping[str, float] | None = None,
    aggregation: str = "mean",
    weights: Mapping[str, float] | None = None,
    raw_scores: pd.DataFrame | None = None,
    raw_floors: Mapping[str, float] | None = None,
    tie_costs: pd.Series | None = None,
    observed: pd.DataFrame | None = None,
) -> Recommendation:
    """Problem (7): best feasible model by the (aggregated) objective; infeasibility is flagged. Ties go to
    the lower `tie_costs` (default `costs`: pass the actual costs when `costs` are selection costs). With
    `observed` (the case's x_raw, NaN = not observed) no feasible model that strictly dominates the pick is passed
    over (`dominance.repair`, at the actual price `tie_costs`; `score` is then the lifted ranking score)."""
    screen = screen_models(measures, costs, budget, floors, raw_scores, raw_floors)
    feasible_ids = screen.loc[screen["feasible"], "model_id"]
    if feasible_ids.empty:
        return Recommendation(None, False, "no available model satisfies the cost and compliance constraints",
                              float("nan"), float("nan"), float("nan"))
    ranked = model_scores(measures.loc[feasible_ids], costs, utilities, lam, aggregation, weights, tie_costs)
    if observed is not None:
        ties = (costs if tie_costs is None else tie_costs).astype(float)
        ranked = repair(ranked.assign(price=ranked["model_id"].map(ties)), observed, price_col="price")
    best = ranked.iloc[0]
    return Recommendation(str(best["model_id"]), True, "", float(best["score"]), float(best["utility"]), float(best["cost"]))


def project_to_target(
    measures: pd.DataFrame,
    costs: pd.Series,
    x_star: pd.Series,
    c_star: float,
    budget: float = 1.0,
    floors: Mapping[str, float] | None = None,
    raw_scores: pd.DataFrame | None = None,
    raw_floors: Mapping[str, float] | None = None,
) -> Recommendation:
    """Footnote 8: feasible model nearest to the target (x*, c*) in Euclidean norm (ties -> lower cost).

    `score`/`utility` are not defined by the projection and are returned as NaN.
    """
    screen = screen_models(measures, costs, budget, floors, raw_scores, raw_floors)
    feasible_ids = screen.loc[screen["feasible"], "model_id"]
    if feasible_ids.empty:
        return Recommendation(None, False, "no available model satisfies the cost and compliance constraints",
                              float("nan"), float("nan"), float("nan"))
    x = measures.loc[feasible_ids, list(x_star.index)].to_numpy(dtype=float)
    c = costs.reindex(feasible_ids).to_numpy(dtype=float)
    dist = np.sqrt(np.sum((x - x_star.to_numpy(dtype=float)) ** 2, axis=1) + (c - c_star) ** 2)
    table = pd.DataFrame({"model_id": feasible_ids.to_numpy(), "cost": c, "score": -dist})
    best = sort_by_score(table).iloc[0]
    return Recommendation(str(best["model_id"]), True, "", float("nan"), float("nan"), float(best["cost"]), float(-best["score"]))
