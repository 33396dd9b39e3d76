"""Deployment values of alternative deployment policies (ML Compass §5.6, Tables 5-6).

Policies compared within one scenario (§5.6 "MLC variants", "Comparison benchmarks"):

* actual_per_type: observed winner per context type — PRISM: the most commonly
  selected feasible model within the type; HealthBench: the feasible model with
  the highest average rubric score within the type;
* actual_mean: one model chosen by the same observed-winner criterion pooled
  over all types (Table 5 note (iii));
* mlc_per_type: Problem (7) solved per type; mlc_mean / mlc_robust: one model
  maximizing the mean (Problem 5) / worst-case (Problem 6) objective;
* baseline:<col>: best feasible model by one raw capability column, and
  baseline:cost the cheapest feasible model (cost proxy); reported as mean ± sd
  across these rules.

Evaluation metric (§5.6): plug the selected model into Û(·; z) for each type z,
average across types (uniformly unless context weights are given), and subtract
lam times the model's *actual* cost. Per-type policies report the mean and the
sd across types of the per-type values.

The paper's protocol (§5.6-5.7) selects the MLC policies on tier-aggregated costs
c_t (`selection_costs`) and evaluates them at actual cost, so MLC is not scored on
the objective it maximized. With `selection_costs`, the MLC policies follow that
protocol and `mlc_per_type_actual_cost`, `mlc_mean_actual_cost` and
`mlc_robust_actual_cost` select at actual cost instead: the evaluated objective
itself, so among single-model policies `mlc_mean_actual_cost` wins by construction.
Feasibility (budget, floors) is always judged at actual cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from compass.mlcompass.recommend import as_utility_fn, recommend, screen_models, sort_by_score
from compass.mlcompass.scenarios import Scenario
from compass.mlcompass.utilities import UtilityFn

CRITERIA = ("most_selected", "highest_mean")
MLC_POLICIES = ("mlc_per_type", "mlc_mean", "mlc_robust")
ACTUAL_COST_SUFFIX = "_actual_cost"
POLICY_COLUMNS = ["policy", "value", "sd"]


def observed_winners(
    interactions: pd.DataFrame,
    criterion: str,
    feasible: Sequence[str],
    group_col: str | None = "group",
    model_col: str = "model_id",
    outcome_col: str | None = None,
) -> dict[str, str | None]:
    """Observed winner per group ("all" if group_col is None) among `feasible` models.

    criterion "most_selected": most frequent model (PRISM); "highest_mean": highest
    mean `outcome_col` (HealthBench rubric score). Ties go to the model id order.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if criterion == "highest_mean" and outcome_col is None:
        raise ValueError("criterion 'highest_mean' needs outcome_col")
    needed = [c for c in (group_col, model_col, outcome_col) if c is not None]
    missing = [c for c in needed if c not in interactions.columns]
    if missing:
        raise ValueError(f"observed_winners: interactions lack columns {missing}")
    data = interactions[interactions[model_col].isin(set(feasible))]
    groups = data.groupby(group_col) if group_col is not None else [("all", data)]
    winners: dict[str, str | None] = {}
    for g, part in groups:
        if criterion == "most_selected":
            stat = part[model_col].value_counts()
        else:
            stat = part.groupby(model_col)[outcome_col].mean()
        stat = stat.sort_index(kind="mergesort")
        winners[str(g)] = str(stat.idxmax()) if len(stat) else None
    if group_col is not None:
        for g in interactions[group_col].unique():
            winners.setdefault(str(g), None)
    return winners


def _values(model_id: str | None, measures: pd.DataFrame, fns: Mapping[str, UtilityFn], cost: pd.Series, lam: float) -> pd.Series:
    """Û(x(m); z) - lam c(m) for every type z."""
    if model_id is None:
        return pd.Series(np.nan, index=list(fns))
    x = measures.loc[[model_id]].to_numpy(dtype=float)
    return pd.Series({g: float(f(x)[0]) - lam * float(cost[model_id]) for g, f in fns.items()})


def policy_selections(
    measures: pd.DataFrame,
    costs: pd.Series,
    utilities: Mapping[str, pd.Series | UtilityFn],
    scenario: Scenario,
    interactions: pd.DataFrame,
    actual_criterion: str,
    group_col: str = "group",
    model_col: str = "model_id",
    outcome_col: str | None = None,
    raw_scores: pd.DataFrame | None = None,
    baseline_cols: Sequence[str] | None = None,
    selection_costs: pd.Series | None = None,
    dataset: str | None = None,
    observed: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Selected model per policy and type (Table 6). Returns DataFrame[policy, group, model_id].

    model_id is None when no feasible model exists for that policy. With `observed` (the case's x_raw) the MLC
    policies apply the leaderboard's dominance repair (`recommend`).
    """
    lam = scenario.resolve_lambda(dataset)
    screen = screen_models(measures, costs, scenario.budget, scenario.floors, raw_scores, scenario.raw_floors)
    feasible = list(screen.loc[screen["feasible"], "model_id"])
    rows = []
    per_type_actual = observed_winners(interactions, actual_criterion, feasible, group_col, model_col, outcome_col)
    rows += [("actual_per_type", g, per_type_actual.get(g)) for g in utilities]
    pooled = observed_winners(interactions, actual_criterion, feasible, None, model_col, outcome_col)["all"]
    rows.append(("actual_mean", "all", pooled))
    protocols = {"": costs} if selection_costs is None else {"": selection_costs, ACTUAL_COST_SUFFIX: costs}
    for suffix, sel_costs in protocols.items():
        rows += [(name + suffix, g, m) for name, g, m in _mlc_selections(measures.loc[feasible], sel_costs, costs,
                                                                         utilities, lam, scenario.context_weights,
                                                                         observed)]
    cols = list(baseline_cols) if baseline_cols is not None else (list(raw_scores.columns) if raw_scores is not None else [])
    for col in cols:
        if raw_scores is None or col not in raw_scores.columns:
            raise ValueError(f"baseline column {col!r} not in raw_scores")
        ranked = raw_scores.loc[raw_scores.index.isin(feasible), col].dropna()
        table = pd.DataFrame({"model_id": ranked.index, "score": ranked.to_numpy(dtype=float),
                              "cost": costs.reindex(ranked.index).to_numpy(dtype=float)})
        rows.append((f"baseline:{col}", "all", str(sort_by_score(table).iloc[0]["model_id"]) if len(table) else None))
    cheapest = pd.DataFrame({"model_id": feasible, "score": -costs.reindex(feasible).to_numpy(dtype=float),
                             "cost": costs.reindex(feasible).to_numpy(dtype=float)})
    rows.append(("baseline:cost", "all", str(sort_by_score(cheapest).iloc[0]["model_id"]) if feasible else None))
    return pd.DataFrame(rows, columns=["policy", "group", "model_id"])


def _mlc_selections(feasible: pd.DataFrame, sel_costs: pd.Series, costs: pd.Series,
                    utilities: Mapping[str, pd.Series | UtilityFn], lam: float,
                    weights: Mapping[str, float] | None,
                    observed: pd.DataFrame | None) -> list[tuple[str, str, str | None]]:
    """Problem (7) over the feasible models with cost `sel_costs`: per type, mean (5) and robust (6); ties go to the
    lower actual cost `costs` (§5.6: "the lowest-cost feasible model"), not to the tier's shared cost and then
    the model id; with `observed`, the dominance repair."""
    rows = [("mlc_per_type", g, recommend(feasible, sel_costs, {g: utilities[g]}, lam, np.inf, tie_costs=costs,
                                          observed=observed).model_id)
            for g in utilities]
    return rows + [(f"mlc_{agg}", "all", recommend(feasible, sel_costs, utilities, lam, np.inf, aggregation=agg,
                                                   weights=weights, tie_costs=costs, observed=observed).model_id)
                   for agg in ("mean", "robust")]


def policy_values(
    measures: pd.DataFrame,
    costs: pd.Series,
    utilities: Mapping[str, pd.Series | UtilityFn],
    scenario: Scenario,
    interactions: pd.DataFrame,
    actual_criterion: str,
    dataset: str | None = None,
    selections: pd.DataFrame | None = None,
    **kwargs,
) -> pd.DataFrame:
    """Table 5 row block for one scenario: DataFrame[policy, value, sd].

    Rows: actual_per_type, mlc_per_type (mean and sd across types), actual_mean,
    mlc_mean, mlc_robust (single-model values, sd NaN), with `selection_costs` the
    same MLC rows selected at actual cost (suffix _actual_cost), baselines (mean and
    sd across single-metric rules), then one row per baseline rule "baseline:<col>".
    kwargs go to `policy_selections`; `selections`: its result for these same arguments, when already computed.
    """
    lam = scenario.resolve_lambda(dataset)
    names = list(measures.columns)
    fns = {g: as_utility_fn(u, names) for g, u in utilities.items()}
    sel = selections if selections is not None else policy_selections(
        measures, costs, utilities, scenario, interactions, actual_criterion, dataset=dataset, **kwargs)
    w = pd.Series(scenario.context_weights or {g: 1.0 for g in fns}, dtype=float)[list(fns)]
    w = w / w.sum()
    variants = [""] + ([ACTUAL_COST_SUFFIX] if kwargs.get("selection_costs") is not None else [])
    rows = []
    for policy in ["actual_per_type"] + [f"mlc_per_type{v}" for v in variants]:
        part = sel[sel["policy"] == policy]
        per_type = pd.Series({r.group: _values(r.model_id, measures, fns, costs, lam)[r.group] for r in part.itertuples()})
        rows.append((policy, float((per_type * w[per_type.index]).sum()) if per_type.notna().all() else np.nan,
                     float(per_type.std(ddof=1))))
    single = sel[sel["group"] == "all"]
    single_values = {r.policy: float((_values(r.model_id, measures, fns, costs, lam) * w).sum()) if r.model_id else np.nan
                     for r in single.itertuples()}
    for policy in ["actual_mean"] + [f"mlc_{agg}{v}" for v in variants for agg in ("mean", "robust")]:
        rows.append((policy, single_values[policy], np.nan))
    base = pd.Series({p: v for p, v in single_values.items() if p.startswith("baseline:")})
    rows.append(("baselines", float(base.mean()), float(base.std(ddof=1)) if len(base) > 1 else np.nan))
    rows += [(p, v, np.nan) for p, v in base.items()]
    return pd.DataFrame(rows, columns=POLICY_COLUMNS)
