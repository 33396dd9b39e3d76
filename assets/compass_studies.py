"""ML Compass robustness studies, one partition per case (seed 000, EC §8.3-8.5: Tables 8, 9-10, 11-16).

They read the same raw inputs as the frontier and refit it many times; nothing
downstream reads them, so they never delay a leaderboard. Light grids by
default, the paper's full grids with COMPASS_HEAVY=1 or the run config.
"""

import dataclasses

import dagster as dg

from assets.compass_frontier import CASE_CATALOG
from assets.compass_inputs import CASE_BENCHMARKS, IMPUTATION_VALIDATION
from assets.partitions import case_partitions
from compass.mlcompass import rank_uncertainty as ru
from compass.mlcompass import sensitivity as sens
from compass.mlcompass.case_inputs import build_x_raw, outcome_rows
from compass.mlcompass.plots import sensitivity_plot
from compass.mlcompass.utility_robustness import leave_models_out, mean_rows, robustness_table
from compass.mlcompass.variance_table import identified_factors, variance_explained_table
from resources import readers, settings
from resources.configs import cases
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "compass-studies-3"  # 2: rank bootstrap resamples outcome models, model effects; LOMO Spearman;
# 3: imputation noise calibrated leave-pattern-out and correlated within a model, effects widened beyond the outcome range
SENSITIVITY_CAPABILITY = dg.AssetKey(["compass", "frontier_sensitivity_capability"])
_common = dict(partitions_def=case_partitions, group_name="compass_studies", pool=settings.writer_pool(),
               code_version=CODE_VERSION)


class StudyConfig(dg.Config):
    """Size of a robustness study: light (the pipeline's default) or full (the paper's grid)."""

    grid: str | None = None  # light | full; None: full when COMPASS_HEAVY=1 (resources.settings), else light

    def full(self) -> bool:
        name = self.grid or ("full" if settings.heavy() else "light")
        if name not in ("light", "full"):
            raise ValueError(f"grid must be light or full, got {name!r}")
        return name == "full"


@dg.asset(key=SENSITIVITY_CAPABILITY, deps=[["raw", "benchmark_scores"], CASE_BENCHMARKS], **_common)
def frontier_sensitivity_capability(context: dg.AssetExecutionContext, config: StudyConfig,
                                    warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The capability side of the EC §8.4 grid (light, or the paper's with `grid: full`): measures per number of
    factors I, tiers and the CES fit per (I, T, ε), in compass.frontier_sensitivity_capability and
    compass.frontier_sensitivity_tiers. No price enters it, so a price change refits only the cost side
    (compass/frontier_sensitivity)."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    grid_name = "full" if config.full() else "light"
    base = sens.GRIDS[grid_name]
    # Only factor counts the benchmarks identify ((p - k)^2 >= p + k); the case's own I is always kept.
    n_factors = tuple(sorted({k for k in base.n_factors if k <= identified_factors(x_raw.shape[1])}
                             | {case.n_factors or 1}))
    grid = dataclasses.replace(base, n_factors=n_factors, loading_threshold=case.loading_threshold,
                               max_factors_per_variable=case.max_factors_per_variable)
    capability = sens.capability_cells(x_raw, grid)
    failed = capability.cells["error"] != ""
    return publish_many(
        context, wh, {"compass.frontier_sensitivity_capability": capability.cells.assign(grid=grid_name),
                      "compass.frontier_sensitivity_tiers": capability.tiers},
        {"case_id": case.case_id}, history=False,
        metadata={"grid": grid_name, "cells": len(capability.cells), "failed_cells": int(failed.sum())},
    )


@dg.asset(key=["compass", "frontier_sensitivity"], deps=[frontier_sensitivity_capability, CASE_CATALOG], **_common)
def frontier_sensitivity(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """EC Tables 9-10 and Figures 9-10: the frontier refit over factors I, tiers T, tolerance ε and the
    within-tier cost aggregation, on the grid of compass/frontier_sensitivity_capability (its capability side,
    fitted without prices) with the case's current prices; every cell in compass.frontier_sensitivity, mean ± sd
    per value of each variable in compass.frontier_sensitivity_summary."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    catalog = readers.case_catalog(wh, case.case_id)  # the models of the case's x_raw, priced or not
    capability, grid_name = readers.sensitivity_capability(wh, case.case_id, catalog.index)
    aggregation = sens.GRIDS[grid_name].aggregation
    cells = sens.cost_cells(capability, readers.raw_costs(catalog, catalog.index), aggregation, case.cost.scaling)
    summary = sens.sensitivity_summary(cells)
    failed = cells.loc[cells["error"] != "", "error"]
    empty = sens.empty_grid_reason(cells)  # every cell failed: an empty summary with its reason, not a failed study
    if empty:
        context.log.warning(f"frontier_sensitivity[{case.case_id}]: {empty}")
    figure = save_figure(sensitivity_plot(summary, case.case_id, empty), case.case_id, "frontier_sensitivity")
    return publish_many(
        context, wh, {"compass.frontier_sensitivity": cells, "compass.frontier_sensitivity_summary": summary},
        {"case_id": case.case_id},
        metadata={"grid": grid_name, "cells": len(cells), "failed_cells": len(failed), "fallback": empty or "none",
                  "failures": "; ".join(sorted(set(failed)))[:500] or "none", "sensitivity": figure},
    )


@dg.asset(key=["compass", "variance_explained"], deps=[["raw", "benchmark_scores"], CASE_BENCHMARKS], **_common)
def variance_explained(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """EC Table 8: cumulative variance explained by 1-3 factors, classical / rotated / sparsified / rotated +
    sparsified (the paper's sum of squared loadings), with the rotation-invariant communality next to it."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    table = variance_explained_table(x_raw, n_factors=tuple(range(1, min(3, identified_factors(x_raw.shape[1])) + 1)),
                                     loading_threshold=case.loading_threshold,
                                     max_factors_per_variable=case.max_factors_per_variable)
    at_case = table[table["n_factors"] == case.n_factors].set_index("variant")["cumulative_variance"]
    return publish_many(context, wh, {"compass.variance_explained": table}, {"case_id": case.case_id},
                        metadata={"at_case_I": str(at_case.round(3).to_dict())})


# The utility studies follow compass/utilities: a case that cannot learn its utility fails there, once, and
# they do not run.
@dg.asset(key=["compass", "utility_robustness"],
          deps=[["compass", "measures"], ["compass", "utilities"], ["raw", "query_records"], ["raw", "interactions"]],
          **_common)
def utility_robustness(context: dg.AssetExecutionContext, config: StudyConfig,
                       warehouse: WarehouseResource) -> dg.MaterializeResult:
    """EC Tables 11-16 (pooled, pooled + context features, grouped; logistic and LightGBM, train/test AUC) and
    the leave-models-out AUC of the case's own utility: the utilities are learned from a few models and
    applied to the whole catalog. Light: one split per fit and 5 folds of models; full: the case's repeated
    splits and leave-one-model-out."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    spec = case.utility
    if spec.source == "weights":
        wh.delete_rows(["compass.utility_robustness", "compass.utility_held_out"], {"case_id": case.case_id})
        return dg.MaterializeResult(metadata={"skipped": "given utility weights: nothing is learned"},
                                    data_version=dg.DataVersion("skipped:weights"))
    measures = readers.measures(wh, case.case_id)
    rows = outcome_rows(readers.outcome_records(wh, spec.datasets), wh.read("raw.interactions"), spec)
    full = config.full()
    table = robustness_table(rows, measures, spec, n_repeats=None if full else 1)
    held_out = leave_models_out(rows, measures, spec, n_folds=None if full else 5)
    means = mean_rows(table)
    return publish_many(
        context, wh, {"compass.utility_robustness": table, "compass.utility_held_out": held_out.summary},
        {"case_id": case.case_id},
        metadata={"grid": "full" if full else "light",
                  "mean_test_auc": dg.MetadataValue.md(means.to_markdown(index=False, floatfmt=".3f")),
                  "held_out_auc": float(held_out.summary["held_out_auc"].mean())},
    )


# Bootstrap replicates of the rank uncertainty: light inside `make run`, heavy behind COMPASS_HEAVY=1 or config.
LIGHT_BOOT, HEAVY_BOOT = 60, 1000


class RankBootstrapConfig(dg.Config):
    """Number of bootstrap replicates B; None: HEAVY_BOOT when COMPASS_HEAVY=1, else LIGHT_BOOT."""

    n_boot: int | None = None

    def replicates(self) -> int:
        return self.n_boot or (HEAVY_BOOT if settings.heavy() else LIGHT_BOOT)


@dg.asset(key=["compass", "rank_bootstrap"],
          deps=[["compass", "measures"], ["compass", "utilities"], ["raw", "benchmark_scores"], CASE_BENCHMARKS, ["raw", "query_records"],
                ["raw", "interactions"], IMPUTATION_VALIDATION],
          **_common)
def rank_bootstrap(context: dg.AssetExecutionContext, config: RankBootstrapConfig,
                   warehouse: WarehouseResource) -> dg.MaterializeResult:
    """B joint bootstrap replicates of every model's measures and utilities (`compass.mlcompass.rank_uncertainty`):
    missing benchmark cells redrawn (multiple imputation, its noise calibrated leave-pattern-out), the factor model refitted on resampled models, the
    utilities on resampled prompts. compass/rank_uncertainty turns them into rank intervals per scenario."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    spec = case.utility
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    rows = None if spec.source == "weights" else outcome_rows(
        readers.outcome_records(wh, spec.datasets), wh.read("raw.interactions"), spec)
    reference = wh.read("compass.loadings", {"case_id": case.case_id}).drop(columns=["case_id"])
    reps = ru.bootstrap_replicates(x_raw, rows, case, config.replicates(), reference_loadings=reference,
                                   noise_scale=readers.noise_scales(wh, case.case_id),
                                   noise_correlation=readers.noise_correlation(wh, case.case_id))
    return publish_many(
        context, wh, {"compass.bootstrap_measures": reps.measure_rows(), "compass.bootstrap_utilities": reps.utility_rows()},
        {"case_id": case.case_id}, metadata={"n_boot": reps.n_boot, "models": len(reps.model_ids)}, history=False,
    )


compass_study_assets = [frontier_sensitivity_capability, frontier_sensitivity, variance_explained, utility_robustness,
                        rank_bootstrap]
