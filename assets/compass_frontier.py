"""ML Compass capability side and cost side, one partition per case study (seed 000, §4.3-4.4).

Lineage: measures -> tiers -> ces_shape never read prices; only cost_side reads
costs, through the case's own catalog extract (case_catalog: prices and
attributes of the case's models), so a price change refits c0 and d and what
follows, never the factors, tiers or CES shape, and a price change of a model
outside the case stops at its catalog (same data version).
"""

import dagster as dg
import numpy as np

from assets.compass_inputs import CASE_BENCHMARKS
from assets.partitions import case_partitions
from compass.mlcompass.case_inputs import build_x_raw, case_catalog_rows, case_price_rows
from compass.mlcompass.case_study import PER_INTERACTION, BenchmarkSpec
from compass.mlcompass.ces_fit import ces_parameter_rows, fit_ces
from compass.mlcompass.cost_fit import cost_parameter_rows, fit_cost_side
from compass.mlcompass.measure_names import identify_measures
from compass.mlcompass.measures import extract_measures, parallel_analysis_warning, wide_loadings
from compass.mlcompass.pareto import pareto_tiers
from compass.mlcompass.task_axes import axis_table
from compass.mlcompass.plots import loadings_heatmap, tiered_frontier_plot
from resources import readers, settings
from resources.configs import cases
from resources.publish import FITTED_ON, inputs_fingerprint, publish_many, save_figure, version_fitted_on
from resources.warehouse import WarehouseResource

CODE_VERSION = "compass-frontier-5"  # 2: rotation toward the previous loadings, anchor signs, compass.measure_names; cost_side falls back to a stated d where it is not identified (column fallback); 3: congruence out of sample (held_out_rotation), congruence_in_sample; 4: measure label and summary, compass.task_axes; 5: measure_names.fitted_on (no refit on the inputs of the last publication)
# case_catalog also writes compass.case_prices, every provider's prices of the case's models (issue 48)
# 2: the provider a price is from, throughput, tool use (issue 48 item 3)
CATALOG_CODE_VERSION = CODE_VERSION + "-case-prices-catalog-2"
_common = dict(partitions_def=case_partitions, group_name="compass", pool=settings.writer_pool())
CASE_CATALOG = dg.AssetKey(["compass", "case_catalog"])


@dg.asset(key=["compass", "measures"], deps=[["raw", "benchmark_scores"], CASE_BENCHMARKS], code_version=CODE_VERSION, **_common)
def measures(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Internal measures (§4.3, §8.3): factor model of x_raw rotated toward the last run's loadings (promax on a first
    fit), signed by the case's anchors, sparsified, min-max scaled; each measure named, with its identity kept while
    it matches its previous loadings (compass.measure_names); and which benchmarks make each task axis in this case,
    how many of its models were observed on them (compass.task_axes, compass.mlcompass.task_axes)."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    scores = readers.case_scores(wh)
    x_raw = build_x_raw(scores, case.benchmarks)
    if x_raw.shape[0] < 5 or x_raw.shape[1] < 2:
        raise ValueError(f"case {case.case_id}: x_raw is {x_raw.shape}; need >= 5 models and >= 2 benchmarks")
    where = {"case_id": case.case_id}
    everything = BenchmarkSpec(min_models_per_benchmark=1, min_benchmarks_per_model=1, models=tuple(x_raw.index))
    every_benchmark = build_x_raw(scores, everything).reindex(x_raw.index)  # the task axes read beyond the case's
    fitted_on = inputs_fingerprint(x_raw, every_benchmark, case.n_factors, case.loading_threshold,
                                   case.max_factors_per_variable, case.anchors, CODE_VERSION)
    registry = wh.read("compass.measure_names", where)
    same_inputs = version_fitted_on(registry, fitted_on)
    if same_inputs is not None:
        return dg.MaterializeResult(data_version=dg.DataVersion(same_inputs), metadata={
            "unchanged": True, "refit": "none: the published measures were fitted on these inputs"})
    previous = wh.read("compass.loadings", where)
    previous = None if previous.empty else previous[["benchmark", "factor", "loading"]]
    result = extract_measures(
        x_raw, n_factors=case.n_factors, loading_threshold=case.loading_threshold,
        max_factors_per_variable=case.max_factors_per_variable, previous_loadings=previous, anchors=case.anchors,
    )
    rename, names = identify_measures(result.loading_matrix(), result.congruence, registry,
                                      None if previous is None else wide_loadings(previous),
                                      result.congruence_in_sample)
    loadings = result.loadings.assign(factor=result.loadings["factor"].map(rename))
    long = (result.measures.rename(columns=rename).rename_axis("model_id").reset_index()
            .melt("model_id", var_name="factor", value_name="value"))
    warning = parallel_analysis_warning(result.parallel_analysis, case.n_factors)
    if warning:
        context.log.warning(f"case {case.case_id}: {warning}")
    for line in names.loc[names["status"] == "renewed", "changed"]:
        context.log.warning(f"case {case.case_id}: {line}")
    figure = save_figure(loadings_heatmap(loadings, case.case_id), case.case_id, "loadings")
    shown = names.loc[names["status"] != "retired", ["factor", "name", "status", "congruence", "congruence_in_sample",
                                                     "description"]]
    axes = axis_table(every_benchmark, result.measures)
    return publish_many(
        context, wh, {"compass.loadings": loadings, "compass.measures": long,
                      "compass.measure_names": names.assign(**{FITTED_ON: fitted_on}), "compass.task_axes": axes}, where,
        metadata={
            "n_models": x_raw.shape[0], "n_benchmarks": x_raw.shape[1], "n_factors": result.n_factors,
            "measure_names": dg.MetadataValue.md(shown.to_markdown(index=False, floatfmt=".3f")),
            "task_axes": dg.MetadataValue.md(axes[axes["used"]].groupby("axis")["benchmark"].agg(", ".join)
                                             .to_frame().to_markdown()),
            "imputed_fraction": round(result.imputed_fraction, 4), "parallel_analysis": warning or "supports I",
            "explained_variance": dg.MetadataValue.md(result.explained_variance.to_markdown(index=False)),
            "loadings_heatmap": figure,
        },
    )


@dg.asset(key=["compass", "tiers"], deps=[measures], code_version=CODE_VERSION, **_common)
def tiers(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Pareto tiers (§4.4 Step 1): ε-tolerant peeling merged into T tiers."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    table = pareto_tiers(readers.measures(wh, case.case_id), eps=case.eps, n_tiers=case.n_tiers)
    counts = table.groupby("tier")["pareto_efficient"].agg(["size", "sum"]).to_dict()
    return publish_many(context, wh, {"compass.tiers": table}, {"case_id": case.case_id},
                        metadata={"tiers": str(counts), "n_efficient": int(table["pareto_efficient"].sum())})


@dg.asset(key=["compass", "ces_shape"], deps=[tiers], code_version=CODE_VERSION, **_common)
def ces_shape(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """CES capability frontier (§4.4 Step 2, problem (3)): a, b and tier levels λ_t; no prices involved."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    fit = fit_ces(readers.measures(wh, case.case_id), readers.tiers(wh, case.case_id))
    frame = ces_parameter_rows(fit)
    return publish_many(context, wh, {"compass.frontier": frame}, {"case_id": case.case_id, "stage": "capability"},
                        metadata={"a": str(np.round(fit.a, 3).tolist()), "b": round(fit.b, 4), "fit_error": fit.fit_error})


@dg.asset(key=CASE_CATALOG, deps=[["raw", "benchmark_scores"], ["raw", "model_costs"], ["raw", "models"]],
          code_version=CATALOG_CODE_VERSION, **_common)
def case_catalog(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The catalog as this case reads it (§4.2): prices, latency and attributes of the models of its x_raw, and
    every provider's token prices of those models (compass.case_prices, what a scenario's workload is priced from).
    The case's cost side, studies and decisions read costs and attributes only here."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    costs = wh.read("raw.model_costs")
    table = case_catalog_rows(costs, readers.model_attributes(wh), case.cost, x_raw.index)
    tables = {"compass.case_catalog": table, "compass.case_prices": case_price_rows(costs, x_raw.index)}
    return publish_many(context, wh, tables, {"case_id": case.case_id}, history=False,
                        metadata={"n_models": len(table), "n_priced": int(table["raw_cost"].notna().sum())})


@dg.asset(key=["compass", "cost_side"], deps=[ces_shape, tiers, case_catalog], code_version=CODE_VERSION, **_common)
def cost_side(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Cost side (§4.4 Step 3): tier costs, isotonic, OLS of log λ_t on log c_t for d, c0 as upper envelope."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    tier_table, m = readers.tiers(wh, case.case_id), readers.measures(wh, case.case_id)
    ces = readers.ces_shape(wh, case.case_id, list(m.columns))
    catalog = readers.case_catalog(wh, case.case_id)
    raw_cost = readers.raw_costs(catalog, m.index)
    priced = tier_table[tier_table["model_id"].isin(raw_cost.index)]
    fit = fit_cost_side(priced, ces.tier_levels, raw_cost, aggregation=case.cost.tier_aggregation,
                        cost_scaling=case.cost.scaling, fallback_d=readers.previous_d(wh, case.case_id))
    if fit.fallback:
        context.log.warning(f"cost_side[{case.case_id}]: {fit.fallback}")
    params = cost_parameter_rows(fit, len(priced))
    costs = fit.model_costs.assign(cost_column=case.cost.column)
    if case.cost.workload:  # dollars per interaction next to the normalized cost (§4.2)
        costs = costs.assign(usd_per_interaction=costs["model_id"].map(catalog[PER_INTERACTION]))
    figure = save_figure(tiered_frontier_plot(m, tier_table, costs, ces, fit, case.case_id), case.case_id, "tiered_frontier")
    return publish_many(
        context, wh, {"compass.frontier": params, "compass.costs": costs},
        {"case_id": case.case_id, "stage": "cost"},
        metadata={"c0": fit.c0, "d": fit.d, "fallback": fit.fallback or "none", "fit_error": fit.fit_error,
                  "pearson": fit.pearson,
                  "spearman": fit.spearman, "n_priced_models": len(priced), "tiered_frontier": figure},
    )
