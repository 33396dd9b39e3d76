"""Why a scenario's recommendation wins (ML Compass §4.6, Theorem 3.1): what `compass leaderboard` and
`compass recommend` print under the table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.decisions import (
    DecisionInputs,
    lambda_path_frame,
    leaderboard_frame,
    scenario_floors,
    target_search,
    utility_source,
)
from compass.mlcompass.recommend import expand_floors, recommend
from compass.mlcompass.scenarios import Scenario, scenario_targets

REGIME_TOL = 1e-6


def regimes(x_star: pd.Series, floors: dict[str, float]) -> pd.Series:
    """Theorem 3.1's taxonomy read off a target: floor (x* = R_i), ceiling (x* = 1) or interior."""
    floor = pd.Series(expand_floors(floors, list(x_star.index)))
    return pd.Series(
        np.where(np.isclose(x_star, floor, atol=REGIME_TOL), "floor",
                 np.where(np.isclose(x_star, 1.0, atol=REGIME_TOL), "ceiling", "interior")),
        index=x_star.index,
    )


def explain(inputs: DecisionInputs) -> str:
    """The mean-aggregate recommendation (problem 7), its binding constraints and each measure's regime."""
    s, floors = inputs.scenario, scenario_floors(inputs)
    rec = recommend(inputs.measures, inputs.costs, inputs.utilities, float(s.lam), s.budget, floors,
                    aggregation=s.aggregation, weights=s.context_weights,
                    raw_scores=inputs.raw_scores, raw_floors=s.raw_floors)
    lines = [f"case {inputs.case.case_id}, scenario {s.name}: lam={float(s.lam):g}, budget={s.budget:g}, "
             f"floors={s.floors or '-'}, raw floors={s.raw_floors or '-'}, aggregation={s.aggregation}",
             f"utility: {utility_source(inputs)}"] + ([inputs.filter_note] if inputs.filter_note else [])
    if not rec.feasible:
        return "\n".join(lines + [f"no recommendation: {rec.reason}"])
    board = leaderboard_frame(inputs)
    binding = board.iloc[0]["binding"] if len(board) else "none"
    lines.append(f"recommended: {rec.model_id} (utility {rec.utility:.3f}, normalized cost {rec.cost:.3f}, "
                 f"score {rec.score:.3f}); binding constraints: {binding}")
    targets = scenario_targets(inputs.utilities, inputs.frontier, Scenario(**{**s.__dict__, "floors": floors}),
                               list(inputs.measures.columns), **target_search(inputs.case))
    agg = targets[targets["group"] == s.aggregation]
    if len(agg) and bool(agg["feasible"].iloc[0]):
        x_star = agg[[f"x_{m}" for m in inputs.measures.columns]].iloc[0]
        x_star.index = list(inputs.measures.columns)
        reg = regimes(x_star, floors)
        lines.append("target x* (regime): " + ", ".join(f"{m}={x_star[m]:.3f} ({reg[m]})" for m in x_star.index)
                     + f"; c*={float(agg['c_star'].iloc[0]):.3f}")
        chosen = inputs.measures.loc[rec.model_id]
        lines.append("chosen model's measures: " + ", ".join(f"{m}={v:.3f}" for m, v in chosen.items()))
    path = lambda_path_frame(board)
    if len(path) > 1:
        steps = [f"{r.model_id} up to λ={r.lambda_to:.4g}" for r in path.iloc[:-1].itertuples()]
        lines.append("λ path (leader as cost sensitivity grows): " + ", then ".join(steps)
                     + f", then {path['model_id'].iloc[-1]}")
    return "\n".join(lines)
