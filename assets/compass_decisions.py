"""ML Compass utilities (per case) and decisions (per case x scenario): §4.5-4.6, §5.6.

Utilities never read prices. Targets, recommendations, leaderboards and policy
values read the fitted frontier, the normalized costs and the utilities, and are
partitioned by case x scenario so a new scenario YAML computes only its partitions.
"""

import base64
import dataclasses
import pickle

import dagster as dg
import numpy as np
import pandas as pd

from assets.automation import REFRESH_CONDITION
from assets.common import WRITER_POOL, publish_many, save_figure
from assets.compass_frontier import ces_from_parameters, cost_side, measures, read_measures, read_parameters
from assets.figures import targets_plot
from compass.case_inputs import build_x_raw, outcome_rows
from compass.case_study import BenchmarkSpec, CaseStudy
from compass.case_utilities import fit_case_utilities, structural_weights
from compass.frontier import CESFrontier
from compass.policy_values import policy_selections, policy_values
from compass.recommend import project_to_target
from compass.scenarios import Scenario, leaderboard, scenario_targets
from compass.utilities import utility_table
from pipelines.partitions import case_partitions, cases, decision_partitions, scenario_files
from resources.warehouse import Warehouse, WarehouseResource

CODE_VERSION = "compass-decisions-1"
# Above the [0, 1] range of every measure: no model and no target can satisfy it.
UNATTAINABLE_FLOOR = 1.01
_common = dict(group_name="compass", pool=WRITER_POOL, automation_condition=REFRESH_CONDITION, kinds={"duckdb", "python"})


@dg.asset(
    key=["compass", "utilities"],
    deps=[measures, ["raw", "query_records"], ["raw", "interactions"]],
    partitions_def=case_partitions,
    code_version=CODE_VERSION,
    **_common,
)
def utilities(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One utility Û_g per context group (§4.5): estimator, repeated-split AUCs, normalized weights β̂."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    m = read_measures(wh, case.case_id)
    spec = case.utility
    if spec.source == "weights":
        beta = structural_weights(spec, list(m.columns))
        table = pd.DataFrame([{"context_group": "all", "estimator": "structural", "n_train": 0, "n_test": 0}])
        weights = beta.rename_axis("factor").reset_index(name="weight").assign(context_group="all")
        models = pd.DataFrame({"context_group": ["all"], "model": [_freeze(beta)]})
        observed = pd.DataFrame(columns=["context_group", "model_id", "n", "outcome"])
    else:
        rows = outcome_rows(_records(wh, spec.datasets), wh.read("raw.interactions"), spec)
        fits = fit_case_utilities(rows, m, spec)
        if not fits:
            raise ValueError(f"case {case.case_id}: no context group has enough outcome rows to fit a utility")
        table = utility_table(fits).rename(columns={"group": "context_group", "train_auc_mean": "train_auc",
                                                    "test_auc_mean": "test_auc"})
        table = table[[c for c in table.columns if not c.startswith("beta_")]].assign(estimator=spec.estimator)
        weights = pd.concat([f.weights.rename_axis("factor").reset_index(name="weight").assign(context_group=g)
                             for g, f in fits.items()], ignore_index=True)
        models = pd.DataFrame({"context_group": list(fits), "model": [_freeze(f) for f in fits.values()]})
        observed = (rows[rows["context_group"].isin(list(fits))].groupby(["context_group", "model_id"])["outcome"]
                    .agg(n="size", outcome="mean").reset_index())
    return publish_many(
        context, wh,
        {"compass.utilities": table, "compass.utility_weights": weights, "compass.utility_models": models,
         "compass.observed_outcomes": observed},
        {"case_id": case.case_id},
        metadata={"groups": len(table), "mean_test_auc": float(table.get("test_auc", pd.Series([np.nan])).mean())},
    )


def _freeze(obj: object) -> str:
    """A fitted utility as text for DuckDB (pickle, base64); only ever read back by `_thaw` below."""
    return base64.b64encode(pickle.dumps(obj)).decode()


def _thaw(text: str) -> object:
    return pickle.loads(base64.b64decode(text))  # our own warehouse rows, written by `_freeze`


def _records(wh: Warehouse, datasets: tuple[str, ...]) -> pd.DataFrame:
    if not datasets:
        return pd.DataFrame(columns=["dataset", "query_id", "model_id", "correct", "category"])
    marks = ", ".join("?" for _ in datasets)
    return wh.query(
        f"select dataset, split, query_id, model_id, correct, category from raw.query_records where dataset in ({marks})",
        list(datasets),
    )


@dataclasses.dataclass
class DecisionInputs:
    case: CaseStudy
    scenario: Scenario
    measures: pd.DataFrame
    costs: pd.Series
    frontier: CESFrontier
    utilities: dict
    raw_scores: pd.DataFrame
    outcomes: pd.DataFrame  # observed mean outcome per (context_group, model_id): the "actual" policies


def _scenario(name: str, case: CaseStudy) -> Scenario:
    return numeric_lambda(Scenario.from_yaml(scenario_files()[name]), case)


def load_case_scenario(wh: Warehouse, case: CaseStudy, scenario_name: str) -> DecisionInputs:
    """Decision inputs for a shipped scenario, by name."""
    return inputs_for(wh, case, _scenario(scenario_name, case))


def numeric_lambda(scenario: Scenario, case: CaseStudy) -> Scenario:
    """Resolve a lam rule (zero | low | high) with the case's own λ values (§5.6, footnote 15)."""
    return dataclasses.replace(scenario, lam=scenario.resolve_lambda(case.case_id, {case.case_id: case.lambdas}))


def load_inputs(wh: Warehouse, partition: dg.MultiPartitionKey) -> DecisionInputs:
    """Everything a decision needs, for one case x scenario partition."""
    keys = partition.keys_by_dimension
    case = cases()[keys["case"]]
    return inputs_for(wh, case, _scenario(keys["scenario"], case))


def inputs_for(wh: Warehouse, case: CaseStudy, scenario: Scenario) -> DecisionInputs:
    """Decision inputs of a case under any scenario (lam already numeric), from the warehouse."""
    costs = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")["cost"]
    m = read_measures(wh, case.case_id).loc[lambda f: f.index.isin(costs.index)]
    params = read_parameters(wh, case.case_id)
    ces = ces_from_parameters(params, list(m.columns))
    frontier = CESFrontier(ces.a, ces.b, float(params["c0"]), float(params["d"]), ces.tier_levels)
    stored = wh.read("compass.utility_models", {"case_id": case.case_id})
    utils = {}
    for row in stored.itertuples():
        obj = _thaw(row.model)
        utils[row.context_group] = obj if isinstance(obj, pd.Series) else obj.utility_fn()
    everything = BenchmarkSpec(min_models_per_benchmark=1, min_benchmarks_per_model=1, models=tuple(m.index))
    raw_scores = build_x_raw(wh.read("raw.benchmark_scores"), everything).reindex(m.index)
    outcomes = wh.read("compass.observed_outcomes", {"case_id": case.case_id})
    return DecisionInputs(case, scenario, m, costs.reindex(m.index), frontier, utils, raw_scores, outcomes)


def _where(inputs: DecisionInputs) -> dict[str, str]:
    return {"case_id": inputs.case.case_id, "scenario": inputs.scenario.name}


_decision_deps = [cost_side, utilities, measures, ["compass", "ces_shape"], ["raw", "benchmark_scores"]]


def targets_frame(inputs: DecisionInputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Continuous targets (x*, c*) of problems (4) per type, (5) mean and (6) robust; infeasibility flagged.

    Returns (long table for compass.targets, wide table per group for the figure).
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


def target_search(case: CaseStudy) -> dict[str, int]:
    """Search settings of the continuous target (§4.6). LightGBM utilities are piecewise constant, so
    gradient polishing (SLSQP) cannot move; their target is the best point of a denser Sobol screen.
    Smooth utilities polish the 2 best screened points (6 starts gave the same objectives to 1e-15 on
    frontier_api in three scenarios, at 2-4x the time)."""
    return {"n_screen": 4096, "n_starts": 0} if case.utility.estimator == "lightgbm" else {"n_starts": 2}


def _floors(inputs: DecisionInputs) -> dict[str, float]:
    """The scenario's floors; a floor on a measure this case lacks cannot be met (every model infeasible)."""
    names = set(inputs.measures.columns)
    if any(k != "all" and k not in names for k in inputs.scenario.floors):
        return {"all": UNATTAINABLE_FLOOR}
    return dict(inputs.scenario.floors)


def _value(inputs: DecisionInputs, model_id: str | None) -> tuple[float, float, float]:
    """(mean utility over contexts, normalized cost, deployment value Û - lam c) of a model."""
    if model_id is None:
        return (np.nan, np.nan, np.nan)
    x = inputs.measures.loc[[model_id]].to_numpy(float)
    u = float(np.mean([f(x)[0] if callable(f) else float(x[0] @ f[inputs.measures.columns].to_numpy()) for f in inputs.utilities.values()]))
    c = float(inputs.costs[model_id])
    return (u, c, u - float(inputs.scenario.lam) * c)


def recommendations_frame(inputs: DecisionInputs, target_rows: pd.DataFrame) -> pd.DataFrame:
    """Problem (7) per type, mean and robust (ties -> lower cost), the projection variant, and Table 6's policies."""
    s, floors = inputs.scenario, _floors(inputs)
    sel = policy_selections(inputs.measures, inputs.costs, inputs.utilities, dataclasses.replace(s, floors=floors),
                            _outcomes_for_policies(inputs), "highest_mean", group_col="context_group",
                            outcome_col="outcome", raw_scores=_baseline_scores(inputs))
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
    values = pd.DataFrame([_value(inputs, m) for m in table["model_id"]], columns=["utility", "cost", "deployment_value"])
    return pd.concat([table, values], axis=1)


def _outcomes_for_policies(inputs: DecisionInputs) -> pd.DataFrame:
    out = inputs.outcomes[inputs.outcomes["model_id"].isin(inputs.measures.index)]
    return out[out["context_group"].isin(list(inputs.utilities))]


def _baseline_scores(inputs: DecisionInputs) -> pd.DataFrame:
    """Single-metric baselines (Table 5): the raw benchmarks of the case's x_raw."""
    spec = inputs.case.benchmarks
    return inputs.raw_scores[[c for c in inputs.raw_scores.columns if spec.selects(c)]]


def policy_values_frame(inputs: DecisionInputs) -> pd.DataFrame:
    """Table 5: actual, MLC (per type, mean, robust) and single-metric baselines (mean ± sd) for one scenario."""
    scenario = dataclasses.replace(inputs.scenario, floors=_floors(inputs))
    outcomes = _outcomes_for_policies(inputs)
    if outcomes.empty:  # structural case: no observed behaviour to call "actual"
        outcomes = pd.DataFrame({"model_id": [], "context_group": [], "outcome": []})
    return policy_values(inputs.measures, inputs.costs, inputs.utilities, scenario, outcomes, "highest_mean",
                         group_col="context_group", outcome_col="outcome", raw_scores=_baseline_scores(inputs))


DECISION_KEYS = {name: dg.AssetKey(["compass", name]) for name in ("targets", "recommendations", "leaderboards", "policy_values")}
_DESCRIPTIONS = {
    "targets": "Continuous targets (x*, c*): problems (4) per type, (5) mean, (6) robust; infeasibility flagged.",
    "recommendations": "Problem (7) per type / mean / robust, the projection variant, and Table 6's policies.",
    "leaderboards": "Deployment-aware leaderboard: Score_s(m) over feasible models; `binding` names what bites.",
    "policy_values": "Table 5: actual, MLC (per type, mean, robust) and single-metric baselines (mean ± sd).",
}


@dg.multi_asset(
    specs=[dg.AssetSpec(key, deps=_decision_deps, description=_DESCRIPTIONS[name], group_name="compass",
                        code_version=CODE_VERSION, automation_condition=REFRESH_CONDITION, kinds={"duckdb", "python"})
           for name, key in DECISION_KEYS.items()],
    partitions_def=decision_partitions,
    pool=WRITER_POOL,
    can_subset=False,
)
def decisions(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    """All decisions of one case x scenario from one read of the inputs (§4.6, §5.6): they share every input,
    so computing them together costs one step instead of four."""
    wh = warehouse.get()
    inputs = load_inputs(wh, context.partition_key)
    target_rows, wide = targets_frame(inputs)
    recs = recommendations_frame(inputs, target_rows)
    board = leaderboard(inputs.measures, inputs.costs, inputs.utilities,
                        dataclasses.replace(inputs.scenario, floors=_floors(inputs)), inputs.raw_scores)
    values = policy_values_frame(inputs)
    mean_pick = recs.loc[recs["policy"] == "mlc_mean", "model_id"]
    figure = save_figure(targets_plot(inputs.measures, inputs.costs, wide, list(mean_pick.dropna()),
                                      f"{inputs.case.case_id} / {inputs.scenario.name}"),
                         inputs.case.case_id, f"targets_{inputs.scenario.name}")
    where = _where(inputs)
    yield publish_many(context, wh, {"compass.targets": target_rows}, where, asset_key=DECISION_KEYS["targets"],
                       metadata={"feasible": bool(wide["feasible"].any()), "targets_vs_selected": figure})
    yield publish_many(context, wh, {"compass.recommendations": recs}, where, asset_key=DECISION_KEYS["recommendations"],
                       metadata={"mlc_mean": str(mean_pick.iloc[0]) if len(mean_pick) else "-"})
    yield publish_many(context, wh, {"compass.leaderboards": board}, where, asset_key=DECISION_KEYS["leaderboards"],
                       metadata={"feasible_models": len(board), "top": ", ".join(board["model_id"].head(5))})
    yield publish_many(context, wh, {"compass.policy_values": values}, where, asset_key=DECISION_KEYS["policy_values"],
                       metadata={"mlc_mean": float(values.set_index("policy").loc["mlc_mean", "value"])})


compass_decision_assets = [utilities, decisions]
