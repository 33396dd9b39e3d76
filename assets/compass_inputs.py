"""ML Compass inputs, one partition per case study: which benchmarks form x_raw, and how well its imputation
does on the board's rows (seed 000, §4.3).

Both re-read raw.benchmark_scores on every refresh: a new source or benchmark can change the choice
(compass.case_benchmarks) and the calibration of the imputation noise the rank bootstrap draws
(compass.imputation_validation.noise_scale).
"""

import dagster as dg

from assets.partitions import case_partitions
from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.imputation_validation import validation_table
from resources import readers, settings
from resources.configs import cases
from resources.publish import publish_many
from resources.warehouse import WarehouseResource

CODE_VERSION = "compass-inputs-2"  # 2: current models by release date, noise_correlation
_common = dict(partitions_def=case_partitions, group_name="compass", pool=settings.writer_pool(),
               code_version=CODE_VERSION)
IMPUTATION_VALIDATION = dg.AssetKey(["compass", "imputation_validation"])
# Its data version changes only when the choice does: the case assets that read release dates (through
# readers.case_scores) depend on it, not on raw.models, so a change of an attribute other than the release date
# (a parameter count, a licence) refits nothing on the capability side.
CASE_BENCHMARKS = dg.AssetKey(["compass", "case_benchmarks"])


@dg.asset(key=CASE_BENCHMARKS, deps=[["raw", "benchmark_scores"], ["raw", "models"]], **_common)
def case_benchmarks(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The case's benchmark choice (`benchmark_choice`: a fixed list, or by coverage of the current models with
    bridges to the rest): every candidate with its counts, whether it is chosen and why."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    choice = benchmark_choice(readers.case_scores(wh), case.benchmarks)
    chosen = choice.table[choice.table["chosen"]]
    return publish_many(
        context, wh, {"compass.case_benchmarks": choice.table.assign(n_current_models=len(choice.current))},
        {"case_id": case.case_id}, history=False,
        metadata={"chosen": ", ".join(choice.benchmarks), "n_models": len(choice.models),
                  "n_current_models": len(choice.current),
                  "min_bridging": float(chosen["n_bridging"].min()) if chosen["n_bridging"].notna().any() else "n/a"},
    )


@dg.asset(key=IMPUTATION_VALIDATION, deps=[["raw", "benchmark_scores"], CASE_BENCHMARKS], **_common)
def imputation_validation(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Leave-pattern-out validation of the case's imputation on its current models' missingness patterns, per
    benchmark against the column mean and a one-factor imputation, with the noise calibration the rank
    bootstrap uses (`compass.mlcompass.imputation_validation`)."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    choice = benchmark_choice(readers.case_scores(wh), case.benchmarks)
    table = validation_table(choice.wide.loc[choice.models, choice.benchmarks], choice.current)
    held = table[table["n_cells"] > 0]
    worse = held.loc[held["no_better_than_mean"], "benchmark"].tolist()
    return publish_many(
        context, wh, {"compass.imputation_validation": table}, {"case_id": case.case_id},
        metadata={"held_out_cells": int(held["n_cells"].sum()), "no_better_than_mean": ", ".join(worse) or "none",
                  "noise_scale": dg.MetadataValue.md(held[["benchmark", "noise_scale", "coverage90",
                                                           "coverage90_calibrated_cv"]].to_markdown(index=False))},
    )


compass_input_assets = [case_benchmarks, imputation_validation]
