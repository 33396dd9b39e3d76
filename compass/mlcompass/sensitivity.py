"""Sensitivity of the fitted frontier to its design choices (ML Compass EC §8.4, Tables 9-10).

The paper refits the frontier over a grid of
  * number of factors I extracted from the capability matrix (PRISM {2, 3}, HealthBench {2, 3, 4}),
  * number of tiers T (2..5, "higher" for HealthBench),
  * Pareto tolerance eps in {0, 0.01, 0.025, 0.05, 0.075, 0.10},
  * within-tier cost aggregation (arithmetic mean, geometric mean, median),
and reports b, d, the normalized fitting error and the Pearson/Spearman correlation of
tier-implied with model costs, as mean +- sd over all cells sharing one value of a
variable (`sensitivity_summary`). The "input set" axis of Table 10 (which benchmarks and
which cost column) is a choice of `x_raw`/`costs`, so callers run this function once
per input set.

Every cell reuses the estimation core unchanged: `compass.mlcompass.measures.extract_measures`
(§4.3, EC §8.3), `compass.mlcompass.pareto.pareto_tiers` (§4.4 Step 1),
`compass.mlcompass.ces_fit.fit_ces` (problem (3)) and `compass.mlcompass.cost_fit.fit_cost_side`
(§4.4 Step 3). The grid loop is ours: x_raw is imputed once, measures are extracted once per I,
and the capability side (tiers, CES fit) once per (I, T, eps) because it takes no cost input; only
the cost side varies with the aggregation. The two halves are separate functions (`capability_cells`,
`cost_cells`) so that a price change refits only the cost side (the pipeline keeps the capability side in
the warehouse).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import pandas as pd

from compass.mlcompass.ces_fit import fit_ces
from compass.mlcompass.cost_fit import Aggregation, fit_cost_side
from compass.mlcompass.imputation import EXACT_MAX_MODELS, validate_matrix
from compass.mlcompass.measures import MeasureResult, extract_measures, standardized_input
from compass.mlcompass.pareto import pareto_tiers

#: Columns of the `frontier_sensitivity` table, in order.
SENSITIVITY_COLUMNS = [
    "n_factors", "n_tiers", "eps", "aggregation", "a", "b", "c0", "d",
    "fit_error", "pearson", "spearman", "n_efficient", "tiers_used", "error",
]
#: Columns of `CapabilityCells.cells`: one row per (I, T, eps).
CAPABILITY_COLUMNS = ["n_factors", "n_tiers", "eps", "a", "b", "fit_error", "n_efficient", "tiers_used",
                      "tier_levels", "error"]
#: Columns of `CapabilityCells.tiers` and their types: every model's tier in every fitted (I, T, eps) cell.
CELL_TIER_DTYPES = {"n_factors": "int64", "n_tiers": "int64", "eps": "float64", "model_id": object, "tier": "int64"}
CELL_TIER_COLUMNS = list(CELL_TIER_DTYPES)
#: Outcome columns summarized by `sensitivity_summary` (the columns of Tables 9-10, plus c0).
OUTCOMES = ["b", "d", "c0", "fit_error", "pearson", "spearman"]
CAPABILITY_AXES = ["n_factors", "n_tiers", "eps"]  # one capability cell per combination
_AXES = [*CAPABILITY_AXES, "aggregation"]
_AGGREGATIONS = get_args(Aggregation)


@dataclass(frozen=True)
class SensitivityGrid:
    """Axes of the sensitivity grid (EC §8.4); every combination is one refit.

    Held fixed across the grid (set them to the case study's values with
    `dataclasses.replace`): `cost_scaling` (see `compass.cost_fit`), the sparsification
    settings `loading_threshold` and `max_factors_per_variable` (see `compass.measures`),
    and `pa_iterations`, the parallel-analysis draws of `extract_measures`, which are
    diagnostics only here because I is fixed by the grid.
    """

    n_factors: tuple[int, ...]
    n_tiers: tuple[int, ...]
    eps: tuple[float, ...]
    aggregation: tuple[Aggregation, ...]
    cost_scaling: Literal["minmax", "max", "none"] = "minmax"
    loading_threshold: float = 0.30
    max_factors_per_variable: int = 2
    pa_iterations: int = 20

    def __post_init__(self) -> None:
        for axis in _AXES:
            values = getattr(self, axis)
            if not isinstance(values, tuple) or not values:
                raise ValueError(f"grid axis {axis!r} must be a non-empty tuple, got {values!r}")
            if len(set(values)) != len(values):
                raise ValueError(f"grid axis {axis!r} has repeated values: {values}")
        if any(int(k) != k or k < 1 for k in self.n_factors):
            raise ValueError(f"n_factors must be integers >= 1, got {self.n_factors}")
        if any(int(t) != t or t < 2 for t in self.n_tiers):
            raise ValueError(f"n_tiers must be integers >= 2 (d needs two tier points), got {self.n_tiers}")
        if any(not 0.0 <= e < 1.0 for e in self.eps):
            raise ValueError(f"Pareto tolerances eps must be in [0, 1), got {self.eps}")
        unknown = sorted(set(self.aggregation) - set(_AGGREGATIONS))
        if unknown:
            raise ValueError(f"unknown cost aggregation(s) {unknown}; choose from {sorted(_AGGREGATIONS)}")
        if self.cost_scaling not in ("minmax", "max", "none"):
            raise ValueError(f"cost_scaling must be 'minmax', 'max' or 'none', got {self.cost_scaling!r}")
        if not 0.0 <= self.loading_threshold < 1.0:
            raise ValueError(f"loading_threshold must be in [0, 1), got {self.loading_threshold}")
        if self.max_factors_per_variable < 1:
            raise ValueError(f"max_factors_per_variable must be >= 1, got {self.max_factors_per_variable}")
        if self.pa_iterations < 1:
            raise ValueError(f"pa_iterations must be >= 1, got {self.pa_iterations}")

    @property
    def size(self) -> int:
        """Number of cells (= rows of the sensitivity table)."""
        return int(np.prod([len(getattr(self, axis)) for axis in _AXES]))


#: Default for the pipeline: 2 x 2 x 2 x 2 = 16 cells, 8 CES fits.
LIGHT_GRID = SensitivityGrid(
    n_factors=(2, 3),
    n_tiers=(3, 4),
    eps=(0.0, 0.05),
    aggregation=("median", "geometric_mean"),
)

#: The paper's grid (EC §8.4): I in {2, 3, 4}, T in 2..5, six tolerances, three
#: aggregations = 216 cells, 72 CES fits. Run behind a flag only.
FULL_GRID = SensitivityGrid(
    n_factors=(2, 3, 4),
    n_tiers=(2, 3, 4, 5),
    eps=(0.0, 0.01, 0.025, 0.05, 0.075, 0.10),
    aggregation=("mean", "geometric_mean", "median"),
)

#: The grids by the name a run config or COMPASS_HEAVY selects.
GRIDS = {"light": LIGHT_GRID, "full": FULL_GRID}


def _validate_capability_inputs(x_raw: pd.DataFrame, grid: SensitivityGrid) -> None:
    validate_matrix(x_raw)
    if not isinstance(grid, SensitivityGrid):
        raise ValueError(f"grid must be a SensitivityGrid, got {type(grid).__name__}")
    too_many = [k for k in grid.n_factors if k >= x_raw.shape[1]]
    if too_many:
        raise ValueError(f"n_factors {too_many} must be below the number of benchmarks ({x_raw.shape[1]})")


def _validate_costs(costs: pd.Series, model_ids: pd.Index) -> pd.Series:
    """The finite, positive costs of those of `model_ids` that are priced (NaN or absent = unpriced)."""
    if not isinstance(costs, pd.Series):
        raise ValueError("costs must be a pandas Series indexed by model_id")
    if costs.index.has_duplicates:
        raise ValueError(f"duplicate model_id in costs: {costs.index[costs.index.duplicated()].unique().tolist()}")
    priced = costs.reindex(model_ids).dropna()
    if priced.size < 2:
        raise ValueError(f"costs cover {priced.size} of the {len(model_ids)} models in the capability matrix; need >= 2")
    bad = priced.index[~(np.isfinite(priced.to_numpy(dtype=float)) & (priced.to_numpy(dtype=float) > 0))].tolist()
    if bad:
        raise ValueError(f"costs must be finite and > 0 (NaN = unpriced); bad for models {bad}")
    return priced


def _format_a(a: np.ndarray, factors: list[str]) -> str:
    """Simplex weights as a JSON object {factor: weight}, rounded to 4 decimals."""
    return json.dumps({name: round(float(v), 4) for name, v in zip(factors, a)})


def _failed(cell: dict, message: str) -> dict:
    return {**cell, "a": "", "b": np.nan, "c0": np.nan, "d": np.nan, "fit_error": np.nan, "pearson": np.nan,
            "spearman": np.nan, "n_efficient": 0, "tiers_used": 0, "tier_levels": "", "error": message}


@dataclass(frozen=True)
class CapabilityCells:
    """The capability side of every (I, T, eps) cell of a grid; no cost enters it.

    `cells` (CAPABILITY_COLUMNS): a (JSON {factor: weight}), b, the CES fitting error, the number of efficient
    models, the realized number of tiers, the tier levels lambda_1..lambda_T (a JSON list, exact floats) and
    `error`: "" for a fitted cell, else why it has no fit. `tiers` (CELL_TIER_COLUMNS): every model's tier in
    every fitted cell, by model_id within a cell. `model_ids`: the models of x_raw.
    """

    cells: pd.DataFrame
    tiers: pd.DataFrame
    model_ids: pd.Index


def capability_cells(x_raw: pd.DataFrame, grid: SensitivityGrid = LIGHT_GRID, seed: int = 0) -> CapabilityCells:
    """The capability side of every (I, T, eps) cell of `grid` (EC §8.4): measures per I (§4.3, EC §8.3), then
    tiers (§4.4 Step 1) and the CES fit (problem (3)) per (T, eps), on every model of `x_raw` (model x benchmark,
    index model_id, NaN = missing). The aggregation and cost settings of `grid` are not used here."""
    _validate_capability_inputs(x_raw, grid)
    rows: list[dict] = []
    tier_rows: list[pd.DataFrame] = []
    standardized = None  # the imputed, standardized x_raw (§4.3), the same for every I: computed once
    for k in grid.n_factors:
        try:
            if standardized is None:
                standardized = standardized_input(x_raw, seed=seed, fast=x_raw.shape[0] > EXACT_MAX_MODELS)
            measures: MeasureResult | None = extract_measures(
                x_raw, n_factors=k, loading_threshold=grid.loading_threshold,
                max_factors_per_variable=grid.max_factors_per_variable, pa_iterations=grid.pa_iterations, seed=seed,
                standardized=standardized,
            )
            extract_error = ""
        except ValueError as exc:  # data-dependent, e.g. an empty factor after sparsification;
            # numpy.linalg.LinAlgError (a singular factor model) is a ValueError subclass
            measures, extract_error = None, f"measures with {k} factors: {type(exc).__name__}: {exc}"
        for n_tiers, eps in itertools.product(grid.n_tiers, grid.eps):
            cell = {"n_factors": k, "n_tiers": n_tiers, "eps": eps}
            if measures is None:
                rows.append(_failed(cell, extract_error))
                continue
            tiers = pareto_tiers(measures.measures, eps=eps, n_tiers=n_tiers)
            try:
                ces = fit_ces(measures.measures, tiers)
            except ValueError as exc:
                rows.append(_failed(cell, f"capability side: {exc}"))
                continue
            rows.append({**cell, "a": _format_a(ces.a, ces.factors), "b": ces.b, "fit_error": ces.fit_error,
                         "n_efficient": ces.n_efficient, "tiers_used": int(tiers["tier"].max()),
                         "tier_levels": json.dumps([float(v) for v in ces.tier_levels]), "error": ""})
            tier_rows.append(tiers[["model_id", "tier"]].sort_values("model_id").assign(**cell))
    # Typed even when no cell fitted: an untyped empty frame would create the warehouse table with DOUBLE columns.
    empty = pd.DataFrame({column: pd.Series(dtype=dtype) for column, dtype in CELL_TIER_DTYPES.items()})
    tiers_table = pd.concat(tier_rows, ignore_index=True) if tier_rows else empty
    return CapabilityCells(pd.DataFrame(rows, columns=CAPABILITY_COLUMNS),
                           tiers_table.reindex(columns=CELL_TIER_COLUMNS), x_raw.index)


def cost_cells(
    capability: CapabilityCells,
    costs: pd.Series,
    aggregation: tuple[Aggregation, ...] = LIGHT_GRID.aggregation,
    cost_scaling: Literal["minmax", "max", "none"] = "minmax",
) -> pd.DataFrame:
    """The cost side (§4.4 Step 3, `fit_cost_side`) of every capability cell under every within-tier aggregation:
    the rows of the sensitivity table (`frontier_sensitivity`). `costs`: raw cost per model_id (absent or NaN =
    unpriced); only priced models enter the cost side."""
    unknown = sorted(set(aggregation) - set(_AGGREGATIONS))
    if unknown:
        raise ValueError(f"unknown cost aggregation(s) {unknown}; choose from {sorted(_AGGREGATIONS)}")
    cost = _validate_costs(costs, capability.model_ids)
    tiers_of = {key: frame for key, frame in capability.tiers.groupby(CAPABILITY_AXES, sort=False)}
    rows: list[dict] = []
    for fitted in capability.cells.to_dict("records"):
        key = tuple(fitted[axis] for axis in CAPABILITY_AXES)
        for agg in aggregation:
            cell = {**{axis: fitted[axis] for axis in CAPABILITY_AXES}, "aggregation": agg}
            if fitted["error"]:
                rows.append(_failed(cell, fitted["error"]))
                continue
            tiers = tiers_of[key]
            try:
                fit = fit_cost_side(tiers[tiers["model_id"].isin(cost.index)], np.array(json.loads(fitted["tier_levels"])),
                                    cost, aggregation=agg, cost_scaling=cost_scaling)
            except ValueError as exc:
                rows.append(_failed(cell, f"cost side: {exc}"))
                continue
            rows.append({
                **cell, "a": fitted["a"], "b": fitted["b"], "c0": fit.c0, "d": fit.d, "fit_error": fitted["fit_error"],
                "pearson": fit.pearson, "spearman": fit.spearman, "n_efficient": fitted["n_efficient"],
                "tiers_used": fitted["tiers_used"], "error": "",
            })
    return pd.DataFrame(rows, columns=SENSITIVITY_COLUMNS)


def frontier_sensitivity(
    x_raw: pd.DataFrame,
    costs: pd.Series,
    grid: SensitivityGrid = LIGHT_GRID,
    seed: int = 0,
) -> pd.DataFrame:
    """Refit the frontier on every cell of `grid` (EC §8.4, Tables 9-10): `cost_cells` of `capability_cells`.

    `x_raw`: model x benchmark matrix (index model_id, NaN = missing); `costs`: raw cost
    per model_id. As in the pipeline's cost_side asset, the capability side (measures,
    tiers, CES) uses every model of `x_raw` and the cost side only the priced ones
    (a model absent from `costs` or with a NaN cost is unpriced). Returns one row per cell with columns
    `SENSITIVITY_COLUMNS`: the grid settings [n_factors, n_tiers, eps, aggregation], the
    fitted a (JSON {factor: weight}), b, c0, d, the normalized fitting error of EC §8.4,
    Pearson/Spearman of model vs tier-implied cost, the number of efficient models, the
    realized number of tiers (`tiers_used` = min(T, Pareto layers)) and `error`: "" for a
    successful fit, else the reason the cell could not be fitted (numbers are then NaN).
    """
    _validate_capability_inputs(x_raw, grid)
    _validate_costs(costs, x_raw.index)
    return cost_cells(capability_cells(x_raw, grid, seed), costs, grid.aggregation, grid.cost_scaling)


def empty_grid_reason(table: pd.DataFrame) -> str:
    """"" when some cell of a sensitivity table fitted; else why none did (its distinct `error`s): the stated
    reason that the table, its summary and figure are empty, instead of a failed study (issue 42)."""
    if table.empty:
        return "the grid has no cells"
    if (table["error"] == "").any():
        return ""
    return f"no cell of the {len(table)}-cell grid could be fitted: " + "; ".join(sorted(set(table["error"])))


def sensitivity_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Tables 9-10 layout: for each grid variable and value, mean and sd of each outcome
    over all successful cells with that value.

    Returns DataFrame [variable, value, n_cells, b_mean, b_sd, d_mean, d_sd, c0_mean, c0_sd,
    fit_error_mean, fit_error_sd, pearson_mean, pearson_sd, spearman_mean, spearman_sd];
    `value` is a string; sd is the sample sd (ddof=1), NaN for a single cell.
    """
    missing = sorted(set(_AXES + OUTCOMES + ["error"]) - set(table.columns))
    if missing:
        raise ValueError(f"sensitivity table is missing columns {missing}")
    ok = table[table["error"] == ""]
    parts = []
    for variable in _AXES:
        grouped = ok.groupby(variable, sort=True)[OUTCOMES].agg(["mean", "std"])
        grouped.columns = [f"{col}_{'sd' if stat == 'std' else stat}" for col, stat in grouped.columns]
        counts = ok.groupby(variable, sort=True).size().rename("n_cells")
        part = pd.concat([counts, grouped], axis=1).reset_index(names="value")
        part.insert(0, "variable", variable)
        part["value"] = part["value"].astype(str)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
