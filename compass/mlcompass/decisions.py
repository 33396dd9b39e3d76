"""ML Compass decisions of one case under one scenario (§4.5-4.6, §5.6): what `compass/utilities` and
`compass/{targets,recommendations,leaderboards,policy_values}` publish.

Utilities never read prices. Targets, recommendations, leaderboards and policy
values read the fitted frontier, the normalized costs and the utilities
(`DecisionInputs`, built from the warehouse by `resources.readers`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy.spatial import Delaunay, QhullError

from compass.mlcompass.case_inputs import outcome_rows
from compass.mlcompass.dominance import strict_dominators
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.case_utilities import beyond_outcome_range, fit_case_utilities, structural_weights
from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.policy_values import policy_selections, policy_values
from compass.mlcompass.decision_rule import decision_frame, resolve_tolerance
from compass.mlcompass.rank_coverage import interval_label
from compass.mlcompass.rank_uncertainty import RANK_COLUMNS, Replicates, rank_intervals, replicate_scores
from compass.mlcompass.recommend import TIE_DECIMALS, model_scores, project_to_target
from compass.mlcompass.scenarios import (
    Scenario,
    filter_attribute,
    filter_models,
    lambda_path,
    leaderboard,
    scenario_targets,
)
from compass.mlcompass.task_axes import axes_text
from compass.mlcompass.utilities import UtilityFit, UtilityFn, utility_table
from compass.mlcompass.utility_models import fitted_model_rows, linear_score_rows, structural_model_rows
from compass.mlcompass.workload import dollars, workload_costs

# Above the [0, 1] range of every measure: no model and no target can satisfy it.
UNATTAINABLE_FLOOR = 1.01

__all__ = [
    "DecisionInputs", "UNATTAINABLE_FLOOR", "case_utility_tables", "numeric_lambda", "scenario_floors",
    "target_search", "targets_frame", "selections_frame", "recommendations_frame", "policy_values_frame",
    "leaderboard_frame", "NotApplicable", "with_person_weights", "with_filters", "with_measured", "utility_source",
    "with_workload", "with_monthly_budget", "MONTHLY_BUDGET",
    "lambda_path_frame", "rank_uncertainty_frame", "decision_rows",
]
# Groups listed by name in a refusal; the rest are counted.
MAX_GROUPS_NAMED = 8


@dataclasses.dataclass
class DecisionInputs:
    """Everything a decision of one case under one scenario (lam numeric) reads."""

    case: CaseStudy
    scenario: Scenario
    measures: pd.DataFrame
    costs: pd.Series
    frontier: CESFrontier
    utilities: dict[str, UtilityFn | pd.Series]
    raw_scores: pd.DataFrame
    outcomes: pd.DataFrame  # observed mean outcome per (context_group, model_id): the "actual" policies
    filter_note: str = ""  # what the scenario's governance filters and the measurement screen excluded
    # How many models the filters dropped with a filtered attribute unknown (they may comply), said next to the
    # result (`unknown_dropped`); "" without filters or unknowns.
    filter_unknown: str = ""
    # Normalized tier-aggregated cost c_t of each model's tier (§4.4 Step 3): what the paper's protocol selects
    # the MLC policies of Tables 5-6 on (§5.6-5.7), evaluating them at `costs`. None: select at actual cost.
    tier_costs: pd.Series | None = None
    # Per model (index model_id): tier (compass.tiers), imputed_share (share of its x_raw cells imputed, §4.3),
    # imputed_no_better_share (of them, on benchmarks whose imputation is no better than the column mean),
    # raw_cost (the case's cost column in its own units, e.g. USD per million tokens) and, when the case has
    # a workload, usd_per_interaction (§4.2).
    model_info: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    # The case's x_raw (index model_id, its chosen benchmarks, NaN = not observed): what the leaderboard's
    # dominance repair compares on. None: the columns of raw_scores the case's include / exclude rule selects.
    observed: pd.DataFrame | None = None
    # The ranking scores of the models the scenario's monthly dollar budget left out (`with_monthly_budget`): a
    # board row scoring below one of them has the budget among its binding constraints. None: no monthly budget.
    over_budget_scores: pd.Series | None = None


def numeric_lambda(scenario: Scenario, case: CaseStudy) -> Scenario:
    """Resolve a lam rule (zero | low | high) with the case's own λ values (§5.6, footnote 15)."""
    return dataclasses.replace(scenario, lam=scenario.resolve_lambda(case.case_id, {case.case_id: case.lambdas}))


def case_utility_tables(case: CaseStudy, measures: pd.DataFrame, records: pd.DataFrame,
                        interactions: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One utility Û_g per context group (§4.5): compass.utilities (estimator, repeated-split AUCs),
    compass.utility_weights (normalized β̂), compass.utility_models (the fitted Û as rows) and
    compass.observed_outcomes (mean outcome per group and model: the "actual" policies of Table 5)."""
    spec, names = case.utility, list(measures.columns)
    if spec.source == "weights":
        if sum(float(spec.weights.get(m, 0.0)) for m in names) <= 0:
            raise _refusal(case, names, "It gives no utility weights over its measures (no `utility` section, or "
                                        "weights that are zero or name no measure of the case), and learns none "
                                        "from outcomes.")
        beta = structural_weights(spec, names)
        table = pd.DataFrame([{"context_group": "all", "estimator": "structural", "n_train": 0, "n_test": 0}])
        weights = beta.rename_axis("factor").reset_index(name="weight").assign(context_group="all",
                                                                               coefficient=beta.to_numpy(float))
        models = structural_model_rows(beta)
        observed = pd.DataFrame(columns=["context_group", "model_id", "n", "outcome"])
    else:
        rows = outcome_rows(records, interactions, spec)
        fits = fit_case_utilities(rows, measures, spec)
        if not fits:
            raise _refusal(case, names, _outcome_shortfall(rows, measures, spec))
        table = utility_table(fits).rename(columns={"group": "context_group", "train_auc_mean": "train_auc",
                                                    "test_auc_mean": "test_auc"})
        table = table[[c for c in table.columns if not c.startswith("beta_")]].assign(estimator=spec.estimator)
        weights = pd.concat([f.weights.rename_axis("factor").reset_index(name="weight")
                             .assign(context_group=g, coefficient=signed_coefficients(f).to_numpy(float))
                             for g, f in fits.items()], ignore_index=True)
        models = linear_score_rows(fits) if spec.form == "linear_score" else fitted_model_rows(fits)
        observed = (rows[rows["context_group"].isin(list(fits))].groupby(["context_group", "model_id"])["outcome"]
                    .agg(n="size", outcome="mean").reset_index())
    return {"compass.utilities": table, "compass.utility_weights": weights, "compass.utility_models": models,
            "compass.observed_outcomes": observed}


def signed_coefficients(fit: UtilityFit) -> pd.Series:
    """The fitted coefficient of each measure, with its sign (linear / logistic); NaN for LightGBM, whose
    published weights are split-gain importances (§4.5)."""
    if fit.estimator == "lightgbm":
        return pd.Series(np.nan, index=fit.weights.index)
    coef = pd.Series(np.ravel(fit.model.coef_), index=list(fit.feature_cols))
    return coef.reindex(fit.weights.index)


def negative_coefficients(weights: pd.DataFrame) -> str:
    """A warning when a capability measure lowers the learned utility somewhere: the published weights
    are normalized magnitudes, so a negative coefficient would otherwise read as "this measure helps"
    while the decisions push that measure to its floor. Empty when every coefficient is >= 0."""
    negative = weights[weights["coefficient"] < 0]
    if negative.empty:
        return ""
    by_factor = negative.groupby("factor")["context_group"].apply(sorted)
    parts = [f"{f} in {len(groups)} of {weights['context_group'].nunique()} contexts ({', '.join(groups)})"
             for f, groups in by_factor.items()]
    return ("negative utility coefficients: " + "; ".join(parts) + ". The weights column shows magnitudes; "
            "the decisions lower these measures where they can (see the coefficient column).")


def _refusal(case: CaseStudy, names: list[str], found: str) -> ValueError:
    """A case that cannot rank models: what was found, and both ways to fix it, in one paragraph."""
    example = ", ".join(f"{m}: {1 / len(names):.2g}" for m in names)
    return ValueError(
        f"case {case.case_id}: cannot rank models without a utility (ML Compass §4.5). {found} Fix it either way: "
        f"(1) learn the utility from outcomes: `utility: {{source: query_records | interactions, datasets: [...], "
        f"context: ...}}` with at least {case.utility.min_rows_per_group} outcome rows, both outcomes present, per "
        f"context group (`utility.min_rows_per_group`); or (2) give the weights yourself: "
        f"`utility: {{source: weights, weights: {{{example}}}}}` (this case's measures: {', '.join(names)}).")


def _outcome_shortfall(rows: pd.DataFrame, measures: pd.DataFrame, spec) -> str:
    """How many outcome rows each context group has, against the rows needed."""
    usable = rows[rows["model_id"].isin(measures.index)]
    counts = usable.groupby("context_group")["outcome"].agg(["size", "nunique"]).sort_values("size", ascending=False)
    named = ", ".join(f"{g}: {int(r['size'])}" + ("" if r["nunique"] > 1 else " (one outcome only)")
                      for g, r in counts.head(MAX_GROUPS_NAMED).iterrows())
    more = f" and {len(counts) - MAX_GROUPS_NAMED} more groups" if len(counts) > MAX_GROUPS_NAMED else ""
    where = f"{spec.source} of dataset(s) {list(spec.datasets)}"
    if counts.empty:
        return (f"Its outcome source ({where}) has no rows for models with measures ({len(rows)} rows in all), so no "
                f"context group reaches the {spec.min_rows_per_group} rows needed.")
    return (f"Its outcome source ({where}) has {len(usable)} rows for models with measures, by context group "
            f"{named}{more}; no group reaches the {spec.min_rows_per_group} rows with both outcomes needed.")


class NotApplicable(ValueError):
    """A scenario that does not apply to a case (its person weights name measures the case lacks): the
    case's decisions for it are skipped with this reason, not failed."""


def with_person_weights(inputs: DecisionInputs) -> DecisionInputs:
    """The scenario's person weights, when it has them, replace the case's utilities (Û = βᵀx, β summing to 1;
    measures the weights do not name get 0). NotApplicable when they name a measure the case lacks."""
    weights = inputs.scenario.utility_weights
    if not weights:
        return inputs
    names = list(inputs.measures.columns)
    missing = sorted(set(weights) - set(names))
    if missing:
        raise NotApplicable(f"scenario {inputs.scenario.name}: its utility weights name {missing}, which case "
                            f"{inputs.case.case_id} lacks (its measures: {', '.join(names)}); skipped for this case")
    beta = pd.Series({m: float(weights.get(m, 0.0)) for m in inputs.measures.columns})
    return dataclasses.replace(inputs, utilities={"all": beta / beta.sum()})


def with_filters(inputs: DecisionInputs, models: pd.DataFrame) -> DecisionInputs:
    """Only the models that pass the scenario's governance filters (model attributes from raw.models rows
    `models`) take part in its decisions; `filter_note` counts what each filter excluded."""
    filters = inputs.scenario.filters
    if not filters:
        return inputs
    ours = models[models["model_id"].isin(inputs.measures.index)]
    kept, counts = filter_models(ours, filters)
    note = "; ".join(f"{key}: {failed} excluded, {unknown} more with the attribute unknown"
                     + _unknown_names(ours, key, unknown) for key, (failed, unknown) in counts.items())
    kept_inputs = _keep_only(inputs, kept, f"filters keep {len(kept)} of {len(inputs.measures)} models ({note})"
                             + _priced_elsewhere(ours, filters, kept))
    return dataclasses.replace(kept_inputs, filter_unknown=unknown_dropped(ours, filters, kept))


def _priced_elsewhere(models: pd.DataFrame, filters: dict, kept: pd.Index) -> str:
    """'; prices stay the case's: 2 kept models are priced by a provider outside `providers` (a: openai, ...)':
    the `providers` filter chooses models, not prices (compass.case_catalog.provider: the provider the price is
    from); "" when every kept model's price is from a listed provider, or without the filter."""
    if "providers" not in filters or "provider" not in models:
        return ""
    rows = models[models["model_id"].isin(kept) & models["provider"].notna()
                  & ~models["provider"].isin(filters["providers"])].sort_values("model_id")
    if rows.empty:
        return ""
    named = ", ".join(f"{m}: {p}" for m, p in zip(rows["model_id"][:MAX_GROUPS_NAMED], rows["provider"]))
    more = f" and {len(rows) - MAX_GROUPS_NAMED} more" if len(rows) > MAX_GROUPS_NAMED else ""
    return (f"; prices stay the case's: {len(rows)} kept models are priced by a provider outside `providers` "
            f"({named}{more})")


def unknown_dropped(models: pd.DataFrame, filters: dict, kept: pd.Index) -> str:
    """'19 more models left out because an attribute a filter reads is unknown (open_weights 19)': the models
    (raw.models rows `models`) not `kept` with an unknown attribute on some filter; a filter whose attribute no
    model of `models` has says so. "" when no model was left out for an unknown attribute."""
    unknown = {key: filter_attribute(models, key).isna().to_numpy() for key in filters}
    left_out = ~models["model_id"].isin(kept).to_numpy() & np.any(list(unknown.values()), axis=0)
    if not left_out.any():
        return ""
    parts = [f"{key} {int(mask.sum())}" + (" (every model: no source gives it)" if mask.all() else "")
             for key, mask in unknown.items() if mask.any()]
    return (f"{int(left_out.sum())} more models left out because an attribute a filter reads is unknown "
            f"({', '.join(parts)}); they may comply")


def with_workload(inputs: DecisionInputs, prices: pd.DataFrame) -> DecisionInputs:
    """The scenario's workload priced per provider (`compass.mlcompass.workload.workload_costs` over `prices`, the
    case's compass.case_prices rows, aggregated over providers like the case's cost): usd_per_request and
    usd_per_month join each model's `model_info`, next to its normalized cost."""
    workload = inputs.scenario.workload
    if workload is None:
        return inputs
    dollars = workload_costs(prices, workload, inputs.case.cost.provider_aggregate)
    info = inputs.model_info.drop(columns=list(dollars.columns), errors="ignore").join(dollars)
    return dataclasses.replace(inputs, model_info=info)


MONTHLY_BUDGET = "budget_usd_per_month"


def with_monthly_budget(inputs: DecisionInputs) -> DecisionInputs:
    """Only the models whose monthly cost under the scenario's workload (`with_workload`) is within its
    `budget_usd_per_month` take part in its decisions; a model without a token price for the workload is left out
    too (a budget cannot be assumed met). The note counts and names them; `over_budget_scores` keeps their ranking
    scores, so the leaderboard names the budget as a binding constraint where it removed a better model."""
    s = inputs.scenario
    if s.budget_usd_per_month is None:
        return inputs
    monthly = inputs.model_info.reindex(inputs.measures.index).get("usd_per_month")
    monthly = monthly if monthly is not None else pd.Series(np.nan, index=inputs.measures.index)
    within = monthly.index[(monthly <= s.budget_usd_per_month).to_numpy()]
    over = monthly.index[(monthly > s.budget_usd_per_month).to_numpy()]
    unpriced = monthly.index[monthly.isna().to_numpy()]
    scores = model_scores(inputs.measures, inputs.costs, inputs.utilities, float(s.lam), s.aggregation,
                          s.context_weights).set_index("model_id")["score"]
    named = ", ".join(sorted(over)[:MAX_GROUPS_NAMED]) + (f" and {len(over) - MAX_GROUPS_NAMED} more"
                                                           if len(over) > MAX_GROUPS_NAMED else "")
    note = (f"{MONTHLY_BUDGET} {dollars(s.budget_usd_per_month)} at {s.workload.describe()}: {len(over)} of "
            f"{len(monthly)} models over it" + (f" ({named})" if len(over) else "")
            + (f", {len(unpriced)} more without a token price" if len(unpriced) else ""))
    kept = _keep_only(inputs, within, note)
    return dataclasses.replace(kept, over_budget_scores=scores.reindex(over.union(unpriced)))


def _monthly_binding(board: pd.DataFrame, inputs: DecisionInputs) -> pd.Series:
    """The board's `binding` with the monthly budget added on rows that a model it left out would outscore."""
    left_out = inputs.over_budget_scores
    if left_out is None or left_out.empty or board.empty:
        return board["binding"]
    bites = board["score"].round(TIE_DECIMALS) < round(float(left_out.max()), TIE_DECIMALS)
    added = board["binding"].map(lambda b: ";".join(sorted({*b.split(";"), MONTHLY_BUDGET} - {"none"})))
    return added.where(bites, board["binding"])


def with_measured(inputs: DecisionInputs) -> DecisionInputs:
    """Only the models observed on at least the case's `min_benchmarks_to_rank` chosen benchmarks (`observed`, its
    x_raw) take part in its decisions: a row imputed on most of its cells ranks on the imputation, not on what the
    model was measured on. The note names the models left out; they keep their measures, tiers and utilities."""
    short = sorted(unmeasured(inputs).index)
    if not short:
        return inputs
    need = inputs.case.benchmarks.min_benchmarks_to_rank
    more = f" and {len(short) - MAX_GROUPS_NAMED} more" if len(short) > MAX_GROUPS_NAMED else ""
    return _keep_only(inputs, inputs.measures.index.difference(short),
                      f"not ranked: {len(short)} model(s) observed on fewer than {need} of the case's "
                      f"{inputs.observed.shape[1]} benchmarks ({', '.join(short[:MAX_GROUPS_NAMED])}{more})")


def unmeasured(inputs: DecisionInputs) -> pd.Series:
    """Per model of the case's x_raw (`observed`) observed on fewer than its `min_benchmarks_to_rank` chosen
    benchmarks, how many it was observed on (empty without the key)."""
    need = inputs.case.benchmarks.min_benchmarks_to_rank
    if not need or inputs.observed is None:
        return pd.Series(dtype=int)
    n_observed = inputs.observed.notna().sum(axis=1)
    return n_observed[n_observed < need]


def _keep_only(inputs: DecisionInputs, kept, note: str) -> DecisionInputs:
    """`inputs` restricted to the models `kept`, with `note` added to what the board says was left out."""
    keep = inputs.measures.index.isin(kept)
    outcomes = inputs.outcomes[inputs.outcomes["model_id"].isin(kept)] if len(inputs.outcomes) else inputs.outcomes
    tier_costs = None if inputs.tier_costs is None else inputs.tier_costs[inputs.tier_costs.index.isin(kept)]
    return dataclasses.replace(inputs, measures=inputs.measures[keep], costs=inputs.costs[keep], tier_costs=tier_costs,
                               raw_scores=inputs.raw_scores[keep], outcomes=outcomes,
                               filter_note="; ".join(n for n in (inputs.filter_note, note) if n))


def _unknown_names(models: pd.DataFrame, key: str, n: int) -> str:
    """' (a, b, c and 4 more)': the models a filter `key` dropped because their attribute is unknown."""
    if not n:
        return ""
    names = sorted(models.loc[filter_attribute(models, key).isna().to_numpy(), "model_id"])
    more = f" and {len(names) - MAX_GROUPS_NAMED} more" if len(names) > MAX_GROUPS_NAMED else ""
    return f" ({', '.join(names[:MAX_GROUPS_NAMED])}{more})"


def utility_source(inputs: DecisionInputs) -> str:
    """What the utility of this decision is: the scenario's person weights, or the case's own utilities."""
    weights = inputs.scenario.utility_weights
    if inputs.scenario.axes:
        return axes_text(inputs.raw_scores, inputs.scenario.axes)
    if weights:
        return "scenario weights " + ", ".join(f"{m}={w:g}" for m, w in weights.items())
    return f"case utility ({inputs.case.utility.source}, {len(inputs.utilities)} context group(s))"


def target_search(case: CaseStudy) -> dict[str, int]:
    """Search settings of the continuous target (§4.6). LightGBM utilities are piecewise constant, so
    gradient polishing (SLSQP) cannot move; their target is the best point of a denser Sobol screen.
    Smooth utilities polish the 2 best screened points (6 starts gave the same objectives to 1e-15 on
    frontier_api in three scenarios, at 2-4x the time)."""
    return {"n_screen": 4096, "n_starts": 0} if case.utility.estimator == "lightgbm" else {"n_starts": 2}


def scenario_floors(inputs: DecisionInputs) -> dict[str, float]:
    """The scenario's floors; a floor on a measure this case lacks cannot be met (every model infeasible)."""
    names = set(inputs.measures.columns)
    if any(k != "all" and k not in names for k in inputs.scenario.floors):
        return {"all": UNATTAINABLE_FLOOR}
    return dict(inputs.scenario.floors)


def _floored(inputs: DecisionInputs) -> Scenario:
    return dataclasses.replace(inputs.scenario, floors=scenario_floors(inputs))


def targets_frame(inputs: DecisionInputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Continuous targets (x*, c*) of problems (4) per type, (5) mean and (6) robust; infeasibility flagged.

    Returns (long table for the compass.targets table, wide table per group for the figure).
    """
    names = list(inputs.measures.columns)
    try:
        wide = scenario_targets(inputs.utilities, inputs.frontier, inputs.scenario, names, **target_search(inputs.case))
    except ValueError as exc:  # e.g. a floor on a measure this case does not have
        wide = pd.DataFrame([{"group": "mean", "feasible": False, "reason": str(exc)}])
    x_cols = [f"x_{f}" for f in names]
    wide = wide.reindex(columns=["group", "feasible", "reason", *x_cols, "c_star", "utility", "objective"])
    wide = wide.assign(policy=np.where(wide["group"].isin(["mean", "robust"]), wide["group"], "per_type"),
                       context_group=np.where(wide["group"].isin(["mean", "robust"]), "all", wide["group"]),
                       feasible=wide["feasible"].astype(bool))
    long = wide.melt(id_vars=[c for c in wide.columns if c not in x_cols], value_vars=x_cols,
                     var_name="factor", value_name="x_star")
    long["factor"] = long["factor"].str.removeprefix("x_")
    cols = ["policy", "context_group", "factor", "x_star", "c_star", "utility", "objective", "feasible", "reason"]
    return long[cols], wide


def _value(inputs: DecisionInputs, model_id: str | None, group: str) -> tuple[float, float, float]:
    """(utility, normalized cost, deployment value Û - lam c) of a model on a row of context `group`: that
    context's Û_g for a per-type row, the mean over contexts for an aggregate ("all") row."""
    if model_id is None:
        return (np.nan, np.nan, np.nan)
    x = inputs.measures.loc[[model_id]].to_numpy(float)
    fns = [inputs.utilities[group]] if group in inputs.utilities else list(inputs.utilities.values())
    u = float(np.mean([f(x)[0] if callable(f) else float(x[0] @ f[inputs.measures.columns].to_numpy())
                       for f in fns]))
    c = float(inputs.costs[model_id])
    return (u, c, u - float(inputs.scenario.lam) * c)


def _outcomes_for_policies(inputs: DecisionInputs) -> pd.DataFrame:
    out = inputs.outcomes[inputs.outcomes["model_id"].isin(inputs.measures.index)]
    return out[out["context_group"].isin(list(inputs.utilities))]


def _baseline_scores(inputs: DecisionInputs) -> pd.DataFrame:
    """Single-metric baselines (Table 5): the raw benchmarks of the case's x_raw."""
    spec = inputs.case.benchmarks
    return inputs.raw_scores[[c for c in inputs.raw_scores.columns if spec.selects(c)]]


def board_observed(inputs: DecisionInputs) -> pd.DataFrame:
    """What every pick's dominance repair compares on (compass.mlcompass.dominance): the case's x_raw, or, for
    inputs built without it, the raw benchmarks its include rule selects."""
    return inputs.observed if inputs.observed is not None else _baseline_scores(inputs)


def _policy_arguments(inputs: DecisionInputs) -> tuple[tuple, dict]:
    """The arguments of `policy_selections` and `policy_values` for one scenario (Tables 5-6)."""
    outcomes = _outcomes_for_policies(inputs)
    if outcomes.empty:  # structural case: no observed behaviour to call "actual"
        outcomes = pd.DataFrame({"model_id": [], "context_group": [], "outcome": []})
    return ((inputs.measures, inputs.costs, inputs.utilities, _floored(inputs), outcomes, "highest_mean"),
            {"group_col": "context_group", "outcome_col": "outcome", "raw_scores": _baseline_scores(inputs),
             "selection_costs": inputs.tier_costs, "observed": board_observed(inputs)})


def selections_frame(inputs: DecisionInputs) -> pd.DataFrame:
    """Table 6's selected model per policy and type (`policy_selections`), shared by `recommendations_frame` and
    `policy_values_frame`, which would otherwise each compute it."""
    args, kwargs = _policy_arguments(inputs)
    return policy_selections(*args, **kwargs)


def recommendations_frame(inputs: DecisionInputs, target_rows: pd.DataFrame,
                          selections: pd.DataFrame | None = None) -> pd.DataFrame:
    """Problem (7) per type, mean and robust (ties -> lower cost), the projection variant, and Table 6's policies
    (the MLC ones selected on tier costs as in the paper, and at actual cost: `policy_values`). `selections`:
    `selections_frame(inputs)` when already computed."""
    s, floors = inputs.scenario, scenario_floors(inputs)
    sel = selections_frame(inputs) if selections is None else selections
    rows = [(r.policy, r.group, r.model_id) for r in sel.itertuples()]
    for policy, part in target_rows[target_rows["policy"] != "per_type"].groupby("policy"):
        if not part["feasible"].all():
            rows.append((f"projection_{policy}", "all", None))
            continue
        x_star = part.set_index("factor")["x_star"].reindex(inputs.measures.columns)
        proj = project_to_target(inputs.measures, inputs.costs, x_star, float(part["c_star"].iloc[0]), s.budget, floors,
                                 inputs.raw_scores, s.raw_floors)
        rows.append((f"projection_{policy}", "all", proj.model_id))
    table = pd.DataFrame(rows, columns=["policy", "context_group", "model_id"])
    values = pd.DataFrame([_value(inputs, m, g) for m, g in zip(table["model_id"], table["context_group"])],
                          columns=["utility", "cost", "deployment_value"])
    # The selected model's tier and measures next to each recommendation (EC Tables 17-26).
    chosen = table["model_id"].map(_measures_text(inputs))
    tier = table["model_id"].map(inputs.model_info["tier"] if "tier" in inputs.model_info else {})
    ranges = outcome_range(inputs.measures, trained_models(inputs))
    return pd.concat([table, values], axis=1).assign(
        tier=tier.astype("Int64"), measures=chosen.astype("string"),
        outcome_range=table["model_id"].map(ranges["outcome_range"]).astype("string"),
        measures_outside=table["model_id"].map(ranges["measures_outside"]).astype("Int64"))


def _measures_text(inputs: DecisionInputs) -> pd.Series:
    """'C1=0.912, C2=0.667' per model."""
    m = inputs.measures
    return pd.Series([", ".join(f"{c}={v:.3f}" for c, v in row.items()) for _, row in m.iterrows()], index=m.index)


def policy_values_frame(inputs: DecisionInputs, selections: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 5: actual, MLC (per type, mean, robust; selected on tier costs as in §5.6-5.7, and at actual cost)
    and single-metric baselines (mean ± sd) for one scenario, all evaluated at actual cost. `selections`:
    `selections_frame(inputs)` when already computed."""
    args, kwargs = _policy_arguments(inputs)
    return policy_values(*args, selections=selections, **kwargs)


def lambda_path_frame(board: pd.DataFrame) -> pd.DataFrame:
    """Who leads this scenario's leaderboard (`leaderboard_frame`) for every cost sensitivity λ >= 0, with the
    critical λ where the leader switches (`compass.mlcompass.scenarios.lambda_path`). The leaderboard already
    holds exactly the models the scenario admits, with their aggregated utility and normalized cost."""
    by_model = board.set_index("model_id")
    return lambda_path(by_model["utility"], by_model["cost"])


def board_dominators(board: pd.DataFrame, observed: pd.DataFrame | None) -> dict[str, list[str]]:
    """Per model of `board` (model_id, cost), the board's models that strictly dominate it on `observed` (the
    case's x_raw): what the leaderboard's repair used (`dominance.strict_dominators`); empty without `observed`."""
    if observed is None or board.empty:
        return {}
    return strict_dominators(observed.reindex(board["model_id"]), board.set_index("model_id")["cost"])


def rank_uncertainty_frame(replicates: Replicates, costs: pd.Series, scenario: Scenario,
                           board: pd.DataFrame, observed: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rank intervals (`rank_uncertainty.rank_intervals`) of the models on a scenario's published leaderboard
    `board`, which already applied its budget, floors and filters; in leaderboard order, with the point rank.
    `observed` (the case's x_raw): every replicate applies the board's dominance repair."""
    if board.empty:
        return pd.DataFrame(columns=["rank", *RANK_COLUMNS])
    ordered = board.sort_values("rank")
    table = rank_intervals(replicates, costs, scenario, models=list(ordered["model_id"]),
                           dominators=board_dominators(board, observed))
    return board[["rank", "model_id"]].merge(table, on="model_id").sort_values("rank").reset_index(drop=True)


def decision_rows(board: pd.DataFrame, ranks: pd.DataFrame | None, scenario: Scenario,
                  replicates: Replicates | None = None, costs: pd.Series | None = None,
                  observed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The decision of a scenario's leaderboard `board` (`decision_rule.decision_frame`): point leader, P(rank 1)
    leader (from `ranks`, its compass.rank_uncertainty rows) and the cheapest model within the tolerance, which is
    the scenario's `tolerance` or the median rank-1/rank-2 gap of the `replicates` scored at `costs`."""
    score = None
    if replicates is not None and costs is not None and len(board):
        score = replicate_scores(replicates, costs, scenario, list(board.sort_values("rank")["model_id"]),
                                 board_dominators(board, observed))[0]
    tolerance, source = resolve_tolerance(scenario.tolerance, score)
    if "p_rank1" not in board and ranks is not None and "p_rank1" in ranks:
        board = board.merge(ranks[["model_id", "p_rank1"]], on="model_id", how="left")
    return decision_frame(board, tolerance, source)


def extrapolated(measures: pd.DataFrame, trained_on: pd.Index) -> pd.Series:
    """True where a model's measures lie outside the convex hull of the models the utility was learned
    from: Û is applied there by extrapolation. NA for every model when no model had outcome data (a given,
    structural utility). With fewer training models than a hull needs, their bounding box is used."""
    train = measures.loc[measures.index.intersection(trained_on)].to_numpy(float)
    if len(train) == 0:
        return pd.Series(pd.NA, index=measures.index, dtype="boolean")
    x = measures.to_numpy(float)
    inside = np.all((x >= train.min(axis=0) - 1e-12) & (x <= train.max(axis=0) + 1e-12), axis=1)
    if train.shape[1] > 1 and len(train) > train.shape[1]:
        try:
            inside = Delaunay(train).find_simplex(x) >= 0
        except QhullError:  # degenerate (collinear) training models: keep the bounding box
            pass
    return pd.Series(~inside, index=measures.index, dtype="boolean")


def outcome_range(measures: pd.DataFrame, trained_on: pd.Index) -> pd.DataFrame:
    """Per model and measure, whether it lies inside the range [min, max] of the models the utility was learned
    from: `outcome_range` reads "C1 above, C2 inside" (below | inside | above per measure) and
    `measures_outside` counts the measures outside. NA for every model when no model had outcome data."""
    train = measures.loc[measures.index.intersection(trained_on)]
    if train.empty:
        return pd.DataFrame({"outcome_range": pd.Series(pd.NA, index=measures.index, dtype="string"),
                             "measures_outside": pd.Series(pd.NA, index=measures.index, dtype="Int64")})
    lo, hi = train.min() - 1e-12, train.max() + 1e-12
    where = pd.DataFrame(np.where(measures < lo, "below", np.where(measures > hi, "above", "inside")),
                         index=measures.index, columns=measures.columns)
    text = where.apply(lambda row: ", ".join(f"{m} {w}" for m, w in row.items()), axis=1)
    return pd.DataFrame({"outcome_range": text.astype("string"),
                         "measures_outside": (where != "inside").sum(axis=1).astype("Int64")})


def nearest_outcome_models(measures: pd.DataFrame, trained_on: pd.Index, model_id: str, k: int = 3) -> pd.Series:
    """The k models with outcome data nearest to `model_id` in measure space (Euclidean): the data its Û rests
    on. Series model_id -> distance, nearest first; empty when no model had outcome data."""
    train = measures.loc[measures.index.intersection(trained_on)]
    distance = np.sqrt(((train - measures.loc[model_id]) ** 2).sum(axis=1))
    return distance.sort_values(kind="mergesort").head(k)


def trained_models(inputs: DecisionInputs) -> pd.Index:
    """The models whose outcomes the utility was learned from (none for a structural utility)."""
    return pd.Index(inputs.outcomes["model_id"].unique()) if len(inputs.outcomes) else pd.Index([])


def model_diagnostics(inputs: DecisionInputs) -> pd.DataFrame:
    """Per model: tier, imputed_share, imputed_no_better_share (share of its cells imputed on benchmarks whose
    leave-pattern-out imputation is no better than the column mean), has_outcomes (the utility saw its outcomes),
    extrapolated (outside the outcome models' hull), how far beyond their range (`beyond_outcome_range`), per measure
    inside or outside that range (`outcome_range`), and what the coverage study says of its rank interval
    (`interval_label`)."""
    trained_on = trained_models(inputs)
    out = inputs.model_info.reindex(inputs.measures.index).reindex(columns=["tier", "imputed_share",
                                                                            "imputed_no_better_share"])
    beyond = beyond_outcome_range(inputs.measures, trained_on)
    return out.assign(has_outcomes=inputs.measures.index.isin(trained_on),
                      extrapolated=extrapolated(inputs.measures, trained_on), beyond_outcome_range=beyond).join(
        outcome_range(inputs.measures, trained_on)).join(interval_label(beyond))


def leaderboard_frame(inputs: DecisionInputs) -> pd.DataFrame:
    """The deployment-aware leaderboard Score_s(m) over feasible models, under the scenario's floors, with
    each model's diagnostics (`model_diagnostics`) and the utility used."""
    board = leaderboard(inputs.measures, inputs.costs, inputs.utilities, _floored(inputs), inputs.raw_scores,
                        observed=board_observed(inputs))  # no model below one it dominates (compass.mlcompass.dominance)
    dollars = inputs.model_info.reindex(columns=[c for c in ("raw_cost", "usd_per_interaction", "usd_per_request",
                                                             "usd_per_month") if c in inputs.model_info])
    board = board.join(model_diagnostics(inputs), on="model_id").join(dollars, on="model_id")
    return board.assign(binding=_monthly_binding(board, inputs), utility_source=utility_source(inputs),
                        filter_note=inputs.filter_note, filter_unknown=inputs.filter_unknown)
