"""ML Compass capability side and cost side, one partition per case study (seed 000, §4.3-4.4).

Lineage: measures -> tiers -> ces_shape never read prices; only cost_side reads
raw.model_costs / raw.models cost columns, so a price change refits c0 and d
and what follows, never the factors, tiers or CES shape.
"""

import dagster as dg
import numpy as np
import pandas as pd

from assets.automation import REFRESH_CONDITION
from assets.common import WRITER_POOL, publish_many, save_figure
from assets.figures import loadings_heatmap, tiered_frontier_plot
from compass.case_inputs import build_x_raw, model_costs
from compass.ces_fit import CESFit, fit_ces
from compass.cost_fit import fit_cost_side
from compass.measures import extract_measures
from compass.pareto import pareto_tiers
from pipelines.partitions import case_partitions, cases
from resources.warehouse import Warehouse, WarehouseResource

CODE_VERSION = "compass-frontier-1"
_common = dict(
    partitions_def=case_partitions,
    group_name="compass",
    pool=WRITER_POOL,
    automation_condition=REFRESH_CONDITION,
    kinds={"duckdb", "python"},
)


def read_measures(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """compass.measures of a case as a wide frame: index model_id, columns C1..Ck."""
    long = wh.read("compass.measures", {"case_id": case_id})
    if long.empty:
        raise ValueError(f"case {case_id}: no measures materialized yet")
    return long.pivot(index="model_id", columns="factor", values="value").sort_index()


def read_tiers(wh: Warehouse, case_id: str) -> pd.DataFrame:
    return wh.read("compass.tiers", {"case_id": case_id}).drop(columns=["case_id"])


def read_parameters(wh: Warehouse, case_id: str) -> pd.Series:
    frame = wh.read("compass.frontier", {"case_id": case_id})
    return frame.set_index("parameter")["value"]


def ces_from_parameters(params: pd.Series, factors: list[str]) -> CESFit:
    """Rebuild the CES shape (a, b, λ_t) from its published rows."""
    levels = params[[p for p in params.index if p.startswith("lambda_")]]
    levels = levels.sort_index(key=lambda idx: idx.str.removeprefix("lambda_").astype(int))
    return CESFit(
        a=params[[f"a_{f}" for f in factors]].to_numpy(float), b=float(params["b"]),
        tier_levels=levels.to_numpy(float), loss=float("nan"), n_iter=0, converged=True, factors=factors,
        fit_error=float(params["ces_fit_error"]), n_efficient=int(params["n_efficient"]),
    )


@dg.asset(key=["compass", "measures"], deps=[["raw", "benchmark_scores"]], code_version=CODE_VERSION, **_common)
def measures(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Internal measures (§4.3, §8.3): promax factor model of x_raw, sparsified, min-max scaled, aligned to the last run."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    x_raw = build_x_raw(wh.read("raw.benchmark_scores"), case.benchmarks)
    if x_raw.shape[0] < 5 or x_raw.shape[1] < 2:
        raise ValueError(f"case {case.case_id}: x_raw is {x_raw.shape}; need >= 5 models and >= 2 benchmarks")
    previous = wh.read("compass.loadings", {"case_id": case.case_id})
    result = extract_measures(
        x_raw, n_factors=case.n_factors, loading_threshold=case.loading_threshold,
        max_factors_per_variable=case.max_factors_per_variable,
        previous_loadings=None if previous.empty else previous.drop(columns=["case_id"]),
    )
    long = result.measures.rename_axis("model_id").reset_index().melt("model_id", var_name="factor", value_name="value")
    figure = save_figure(loadings_heatmap(result.loadings, case.case_id), case.case_id, "loadings")
    return publish_many(
        context, wh, {"compass.loadings": result.loadings, "compass.measures": long}, {"case_id": case.case_id},
        metadata={
            "n_models": x_raw.shape[0], "n_benchmarks": x_raw.shape[1], "n_factors": result.n_factors,
            "imputed_fraction": round(result.imputed_fraction, 4),
            "explained_variance": dg.MetadataValue.md(result.explained_variance.to_markdown(index=False)),
            "loadings_heatmap": figure,
        },
    )


@dg.asset(key=["compass", "tiers"], deps=[measures], code_version=CODE_VERSION, **_common)
def tiers(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Pareto tiers (§4.4 Step 1): ε-tolerant peeling merged into T tiers."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    table = pareto_tiers(read_measures(wh, case.case_id), eps=case.eps, n_tiers=case.n_tiers)
    counts = table.groupby("tier")["pareto_efficient"].agg(["size", "sum"]).to_dict()
    return publish_many(context, wh, {"compass.tiers": table}, {"case_id": case.case_id},
                        metadata={"tiers": str(counts), "n_efficient": int(table["pareto_efficient"].sum())})


@dg.asset(key=["compass", "ces_shape"], deps=[tiers], code_version=CODE_VERSION, **_common)
def ces_shape(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """CES capability frontier (§4.4 Step 2, problem (3)): a, b and tier levels λ_t; no prices involved."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    fit = fit_ces(read_measures(wh, case.case_id), read_tiers(wh, case.case_id))
    rows = [(f"a_{f}", float(a)) for f, a in zip(fit.factors, fit.a)] + [("b", fit.b)]
    rows += [(f"lambda_{t + 1}", float(v)) for t, v in enumerate(fit.tier_levels)]
    rows += [("ces_fit_error", fit.fit_error), ("n_efficient", float(fit.n_efficient)), ("converged", float(fit.converged))]
    frame = pd.DataFrame(rows, columns=["parameter", "value"]).assign(stage="capability")
    return publish_many(context, wh, {"compass.frontier": frame}, {"case_id": case.case_id, "stage": "capability"},
                        metadata={"a": str(np.round(fit.a, 3).tolist()), "b": round(fit.b, 4), "fit_error": fit.fit_error})


@dg.asset(
    key=["compass", "cost_side"],
    deps=[ces_shape, tiers, ["raw", "model_costs"], ["raw", "models"]],
    code_version=CODE_VERSION,
    **_common,
)
def cost_side(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Cost side (§4.4 Step 3): tier costs, isotonic, OLS of log λ_t on log c_t for d, c0 as upper envelope."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    tier_table, m = read_tiers(wh, case.case_id), read_measures(wh, case.case_id)
    ces = ces_from_parameters(read_parameters(wh, case.case_id), list(m.columns))
    raw_cost = model_costs(wh.read("raw.model_costs"), wh.read("raw.models"), case.cost, m.index)
    priced = tier_table[tier_table["model_id"].isin(raw_cost.index)]
    fit = fit_cost_side(priced, ces.tier_levels, raw_cost, aggregation=case.cost.tier_aggregation,
                        cost_scaling=case.cost.scaling)
    params = pd.DataFrame(
        [("c0", fit.c0), ("d", fit.d), ("fit_error", fit.fit_error), ("pearson", fit.pearson), ("spearman", fit.spearman),
         ("n_priced_models", float(len(priced)))], columns=["parameter", "value"]).assign(stage="cost")
    costs = fit.model_costs.assign(cost_column=case.cost.column)
    figure = save_figure(tiered_frontier_plot(m, tier_table, costs, ces, fit, case.case_id), case.case_id, "tiered_frontier")
    return publish_many(
        context, wh, {"compass.frontier": params, "compass.costs": costs},
        {"case_id": case.case_id, "stage": "cost"},
        metadata={"c0": fit.c0, "d": fit.d, "fit_error": fit.fit_error, "pearson": fit.pearson,
                  "spearman": fit.spearman, "n_priced_models": len(priced), "tiered_frontier": figure},
    )
