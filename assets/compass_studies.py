"""ML Compass robustness studies, one partition per case (seed 000, EC §8.4 Tables 9-10).

They read the same raw inputs as the frontier and refit it many times; nothing
downstream reads them, so they never delay a leaderboard. Light grids by
default, the paper's full grids with COMPASS_HEAVY=1 or the run config.
"""

import dataclasses

import dagster as dg

from assets.partitions import case_partitions
from compass.mlcompass import sensitivity as sens
from compass.mlcompass.case_inputs import build_x_raw, model_costs
from compass.mlcompass.plots import sensitivity_plot
from resources import settings
from resources.configs import cases
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "compass-studies-1"
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


@dg.asset(key=["compass", "frontier_sensitivity"],
          deps=[["raw", "benchmark_scores"], ["raw", "model_costs"], ["raw", "models"]], **_common)
def frontier_sensitivity(context: dg.AssetExecutionContext, config: StudyConfig,
                         warehouse: WarehouseResource) -> dg.MaterializeResult:
    """EC Tables 9-10 and Figures 9-10: the frontier refit over factors I, tiers T, tolerance ε and the
    within-tier cost aggregation; every cell in compass.frontier_sensitivity, mean ± sd per value of each
    variable in compass.frontier_sensitivity_summary."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    x_raw = build_x_raw(wh.read("raw.benchmark_scores"), case.benchmarks)
    raw_cost = model_costs(wh.read("raw.model_costs"), wh.read("raw.models"), case.cost, x_raw.index)
    grid = dataclasses.replace(sens.FULL_GRID if config.full() else sens.LIGHT_GRID, cost_scaling=case.cost.scaling,
                               loading_threshold=case.loading_threshold,
                               max_factors_per_variable=case.max_factors_per_variable)
    cells = sens.frontier_sensitivity(x_raw, raw_cost, grid)
    summary = sens.sensitivity_summary(cells)
    failed = cells.loc[cells["error"] != "", "error"]
    figure = save_figure(sensitivity_plot(summary, case.case_id), case.case_id, "frontier_sensitivity")
    return publish_many(
        context, wh, {"compass.frontier_sensitivity": cells, "compass.frontier_sensitivity_summary": summary},
        {"case_id": case.case_id},
        metadata={"grid": "full" if config.full() else "light", "cells": len(cells), "failed_cells": len(failed),
                  "failures": "; ".join(sorted(set(failed)))[:500] or "none", "sensitivity": figure},
    )


compass_study_assets = [frontier_sensitivity]
