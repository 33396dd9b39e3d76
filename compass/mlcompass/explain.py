"""Why a scenario's recommendation wins (ML Compass §4.6, Theorem 3.1): what `compass leaderboard` and
`compass recommend` print under the table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.decision_rule import decision_text, plain
from compass.mlcompass.decisions import (
    DecisionInputs,
    board_observed,
    lambda_path_frame,
    leaderboard_frame,
    nearest_outcome_models,
    outcome_range,
    scenario_floors,
    target_search,
    trained_models,
    utility_source,
)
from compass.mlcompass.recommend import aggregate_utility, expand_floors, recommend
from compass.mlcompass.scenarios import Scenario, scenario_targets
from compass.mlcompass.workload import dollars

REGIME_TOL = 1e-6
# Step of the one-sided difference that reads the sign of the aggregated Û along a measure at the target: wide
# enough to see past a LightGBM utility's flat pieces.
SLOPE_STEP = 0.05
# Near-tie members named in the explanation; the rest are counted.
MAX_NAMED = 6
# How decisions.with_filters counts the models a governance filter dropped because their attribute is unknown.


def regimes(x_star: pd.Series, floors: dict[str, float]) -> pd.Series:
    """Theorem 3.1's taxonomy read off a target: floor (x* = R_i), ceiling (x* = 1) or interior."""
    floor = pd.Series(expand_floors(floors, list(x_star.index)))
    return pd.Series(
        np.where(np.isclose(x_star, floor, atol=REGIME_TOL), "floor",
                 np.where(np.isclose(x_star, 1.0, atol=REGIME_TOL), "ceiling", "interior")),
        index=x_star.index,
    )


def utility_slopes(inputs: DecisionInputs, x_star: pd.Series) -> pd.Series:
    """Per measure, the change of the scenario's aggregated Û per unit of the measure at x*, by a one-sided
    difference of `SLOPE_STEP` into [0, 1]: its sign says whether the utility rises or falls with the measure."""
    names = list(x_star.index)
    x0 = x_star.to_numpy(float)
    out = {}
    for i, m in enumerate(names):
        step = SLOPE_STEP if x0[i] + SLOPE_STEP <= 1 else -SLOPE_STEP
        x1 = x0.copy()
        x1[i] += step
        u = aggregate_utility(np.vstack([x0, x1]), inputs.utilities, names, inputs.scenario.aggregation,
                              inputs.scenario.context_weights)
        out[m] = float((u[1] - u[0]) / step)
    return pd.Series(out)


def regime_text(x_star: pd.Series, floors: dict[str, float], slopes: pd.Series) -> str:
    """'C1=0.912 (interior), C2=0.000 (...)': Theorem 3.1's regime of each measure, with the sign of the utility
    along it where that is what sets it. A measure at its lower bound while Û falls as it rises (a negative
    coefficient) is there because the utility prefers less of it, not because a compliance floor binds."""
    reg = regimes(x_star, floors)
    floor = expand_floors(floors, list(x_star.index))
    parts = []
    for m in x_star.index:
        text = reg[m]
        if reg[m] == "floor" and slopes[m] < 0:
            bound = f"compliance floor {floor[m]:g}" if floor[m] > 0 else "its lower bound 0, no compliance floor"
            text = (f"at {bound}: Û falls as {m} rises (slope {slopes[m]:+.3f}, a negative coefficient), so the "
                    f"target lowers {m} as far as it may")
        elif reg[m] == "floor":
            text = f"floor {floor[m]:g} binds"
        parts.append(f"{m}={x_star[m]:.3f} ({text})")
    return ", ".join(parts)


def near_tie_text(board: pd.DataFrame, ranks: pd.DataFrame | None, decision: pd.DataFrame | None = None) -> list[str]:
    """What the bootstrap can tell apart at the top (`rank_uncertainty.rank_intervals` of this leaderboard): the
    models within its noise of the leader and, from `decision` (`decisions.decision_rows`), the cheapest model
    within the decision rule's tolerance of the leader's score (not the cheapest of the whole noise group, which
    may score far less); or why there is no interval."""
    if ranks is None or ranks.empty or "near_leader" not in ranks:
        return []
    ranks = ranks.set_index("model_id")
    if "interval_supported" in ranks and not bool(ranks["interval_supported"].iloc[0]):
        return [f"rank uncertainty: not supported: the utility is learned from {int(ranks['n_outcome_models'].iloc[0])} "
                "outcome models, too few for a rank interval; the order above is the point estimate only"]
    group = board[board["model_id"].map(ranks["near_leader"]).fillna(False).astype(bool)]
    if len(group) <= 1:
        return [f"rank uncertainty: {board['model_id'].iloc[0]} leads beyond the bootstrap's noise "
                f"(n_boot={int(ranks['n_boot'].iloc[0])})"]
    names = ", ".join(group["model_id"].head(MAX_NAMED)) + (f" and {len(group) - MAX_NAMED} more"
                                                             if len(group) > MAX_NAMED else "")
    leader = board.iloc[0]
    text = (f"near-tie: {len(group)} models are within the bootstrap's noise of the leader {leader['model_id']} "
            f"(each scores at least as high in >= 5 % of {int(ranks['n_boot'].iloc[0])} replicates): {names}.")
    pick = decision[decision["rule"] == "tolerance_pick"] if decision is not None else pd.DataFrame()
    if len(pick):
        p = pick.iloc[0]
        text += (f" The cheapest model within the tolerance {plain(p['tolerance'])} of the leader's score is "
                 f"{p['model_id']} (normalized cost {p['cost']:.3f} vs {leader['cost']:.3f}, score "
                 f"{p['score']:.4f} vs {leader['score']:.4f})")
    return [text]


def extrapolation_text(inputs: DecisionInputs, model_id: str) -> list[str]:
    """Whether the recommended model lies inside the outcome models' range per measure, and the outcome models
    nearest to it (what its Û rests on); nothing where no outcome model was used: a structural utility, or the
    scenario's own weights (they replace the learned utility, decisions.with_person_weights)."""
    trained_on = trained_models(inputs)
    if trained_on.empty or inputs.scenario.utility_weights:
        return []
    train = inputs.measures.loc[inputs.measures.index.intersection(trained_on)]
    span = ", ".join(f"{m} {train[m].min():.2f}-{train[m].max():.2f}" for m in train.columns)
    where = outcome_range(inputs.measures, trained_on).loc[model_id]
    near = nearest_outcome_models(inputs.measures, trained_on, model_id)
    verdict = ("inside the outcome models' range" if where["measures_outside"] == 0 else
               "EXTRAPOLATED: outside the outcome models' range")
    return [f"{model_id} is {verdict} ({where['outcome_range']}; the {len(train)} outcome models span {span})",
            "its utility rests on the nearest outcome models: "
            + ", ".join(f"{m} (distance {d:.3f})" for m, d in near.items())]


def workload_lines(s: Scenario) -> list[str]:
    """The scenario's workload and monthly budget in words (none without a workload)."""
    if s.workload is None:
        return []
    budget = f"; monthly budget {dollars(s.budget_usd_per_month)}" if s.budget_usd_per_month is not None else ""
    return [f"workload: {s.workload.describe()}{budget}"]


def dollars_text(inputs: DecisionInputs, model_id: str) -> str:
    """'$0.000412/request, $824.00/month, ' under the scenario's workload; '' without one."""
    info = inputs.model_info
    if "usd_per_request" not in info or model_id not in info.index:
        return ""
    month = info.at[model_id, "usd_per_month"]
    per_month = f"{dollars(month)}/month, " if month == month else ""
    return f"${info.at[model_id, 'usd_per_request']:.3g}/request, {per_month}"


def explain(inputs: DecisionInputs, ranks: pd.DataFrame | None = None, decision: pd.DataFrame | None = None,
            prices: pd.Series | None = None) -> str:
    """The mean-aggregate recommendation (problem 7), its binding constraints, whether it is extrapolated, each
    measure's regime and, with `ranks` (this leaderboard's compass.rank_uncertainty rows), the near-tie group;
    with `decision` (`decisions.decision_rows`), the decision rule and its three picks (`prices`: model_id -> a
    price text shown next to each)."""
    s, floors = inputs.scenario, scenario_floors(inputs)
    rec = recommend(inputs.measures, inputs.costs, inputs.utilities, float(s.lam), s.budget, floors,
                    aggregation=s.aggregation, weights=s.context_weights,
                    raw_scores=inputs.raw_scores, raw_floors=s.raw_floors, observed=board_observed(inputs))
    lines = [f"case {inputs.case.case_id}, scenario {s.name}: lam={float(s.lam):g}, normalized budget={s.budget:g} "
             f"(share of the most expensive model's price), floors={s.floors or '-'}, "
             f"raw floors={s.raw_floors or '-'}, aggregation={s.aggregation}", *workload_lines(s),
             f"utility: {utility_source(inputs)}"] + ([inputs.filter_note] if inputs.filter_note else [])
    unknown = [f"  ({inputs.filter_unknown})"] if inputs.filter_unknown else []  # next to the result
    if not rec.feasible:
        return "\n".join(lines + [f"no recommendation: {rec.reason}"] + unknown)
    board = leaderboard_frame(inputs)
    binding = board.iloc[0]["binding"] if len(board) else "none"
    lines.append(f"recommended: {rec.model_id} (utility {rec.utility:.3f}, {dollars_text(inputs, rec.model_id)}"
                 f"normalized cost {rec.cost:.3f}, score {rec.score:.3f}); binding constraints: {binding}")
    lines += unknown
    lines += (decision_text(decision, prices) if decision is not None else []) + near_tie_text(board, ranks, decision)
    lines += extrapolation_text(inputs, rec.model_id)
    targets = scenario_targets(inputs.utilities, inputs.frontier, Scenario(**{**s.__dict__, "floors": floors}),
                               list(inputs.measures.columns), **target_search(inputs.case))
    agg = targets[targets["group"] == s.aggregation]
    if len(agg) and bool(agg["feasible"].iloc[0]):
        x_star = agg[[f"x_{m}" for m in inputs.measures.columns]].iloc[0]
        x_star.index = list(inputs.measures.columns)
        lines.append("target x* (regime): " + regime_text(x_star, floors, utility_slopes(inputs, x_star))
                     + f"; c*={float(agg['c_star'].iloc[0]):.3f}")
        chosen = inputs.measures.loc[rec.model_id]
        lines.append("chosen model's measures: " + ", ".join(f"{m}={v:.3f}" for m, v in chosen.items()))
    path = lambda_path_frame(board)
    if len(path) > 1:
        steps = [f"{r.model_id} up to λ={r.lambda_to:.4g}" for r in path.iloc[:-1].itertuples()]
        lines.append("λ path (leader as cost sensitivity grows): " + ", then ".join(steps)
                     + f", then {path['model_id'].iloc[-1]}")
    return "\n".join(lines)
