"""Frontier sensitivity grid (EC §8.4, Tables 9-10) on a catalog generated from a known frontier."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.ces_fit import fit_ces
from compass.mlcompass.cost_fit import fit_cost_side
from compass.mlcompass.measures import extract_measures
from compass.mlcompass.pareto import pareto_tiers
from compass.mlcompass.sensitivity import (
    FULL_GRID,
    LIGHT_GRID,
    SENSITIVITY_COLUMNS,
    SensitivityGrid,
    frontier_sensitivity,
    sensitivity_summary,
)


# The generator has 3 tiers and 2 measures; "max" cost scaling leaves d unchanged
# (c / max c rescales every c_t by one constant), so d, b and a are directly comparable.
GRID = SensitivityGrid(
    n_factors=(2,), n_tiers=(2, 3, 4), eps=(0.0, 0.05), aggregation=("median", "mean", "geometric_mean"),
    cost_scaling="max", pa_iterations=5,
)
FINITE = ["b", "c0", "d", "fit_error", "pearson", "spearman"]


@pytest.fixture(scope="module")
def grid_table(known_catalog):
    x_raw, costs, _ = known_catalog
    return frontier_sensitivity(x_raw, costs, GRID)


def _cell(table, **settings):
    mask = np.ones(len(table), dtype=bool)
    for key, value in settings.items():
        mask &= (table[key] == value).to_numpy()
    assert mask.sum() == 1
    return table[mask].iloc[0]


def test_row_count_is_product_of_axes_and_columns_are_fixed(grid_table):
    assert len(grid_table) == GRID.size == 1 * 3 * 2 * 3
    assert list(grid_table.columns) == SENSITIVITY_COLUMNS
    assert not grid_table.duplicated(["n_factors", "n_tiers", "eps", "aggregation"]).any()
    assert FULL_GRID.size == 3 * 4 * 6 * 3 == 216
    assert LIGHT_GRID.size == 16


def test_every_cell_is_finite(grid_table):
    assert (grid_table["error"] == "").all()
    assert np.isfinite(grid_table[FINITE].to_numpy(dtype=float)).all()
    weights = grid_table["a"].map(lambda s: sum(json.loads(s).values()))
    np.testing.assert_allclose(weights, 1.0, atol=2e-4)  # a on the simplex (rounded to 4 dp)


def test_matching_cell_recovers_the_generator(grid_table, known_catalog):
    x_raw, costs, truth = known_catalog
    row = _cell(grid_table, n_tiers=3, eps=0.0, aggregation="median")
    # 0.01 benchmark noise: repeated seeds of this generator stay within these bounds
    assert row["d"] == pytest.approx(truth.d, abs=0.03)
    assert row["b"] == pytest.approx(truth.b, abs=0.1)
    np.testing.assert_allclose(sorted(json.loads(row["a"]).values()), truth.a, atol=0.02)
    # envelope constant: c0 = lambda_T / (C_T / max raw cost)^d
    c0_true = truth.levels[-1] / (truth.tier_costs[-1] / costs.max()) ** truth.d
    assert row["c0"] == pytest.approx(c0_true, rel=0.03)
    assert row["fit_error"] < 1e-4  # points sit on the level sets up to measurement noise
    assert row["tiers_used"] == 3 and row["n_efficient"] == len(x_raw)
    assert row["pearson"] > 0.9 and row["spearman"] > 0.9


def test_wrong_tier_count_is_visibly_worse(grid_table, known_catalog):
    _, _, truth = known_catalog
    right = _cell(grid_table, n_tiers=3, eps=0.0, aggregation="median")
    merged = _cell(grid_table, n_tiers=2, eps=0.0, aggregation="median")
    # merging two generator tiers biases d and destroys the cost alignment
    assert abs(merged["d"] - truth.d) > 0.05 > abs(right["d"] - truth.d)
    assert merged["pearson"] < right["pearson"] - 0.2
    # asking for more tiers than there are Pareto layers falls back to the layers
    assert _cell(grid_table, n_tiers=4, eps=0.0, aggregation="median")["tiers_used"] == 3


def test_cell_equals_the_direct_pipeline(grid_table, known_catalog):
    """The grid reuses the core functions: a cell equals calling them by hand."""
    x_raw, costs, _ = known_catalog
    measures = extract_measures(x_raw, n_factors=2, pa_iterations=5).measures
    tiers = pareto_tiers(measures, eps=0.05, n_tiers=2)
    ces = fit_ces(measures, tiers)
    cost = fit_cost_side(tiers, ces.tier_levels, costs, aggregation="geometric_mean", cost_scaling="max")
    row = _cell(grid_table, n_tiers=2, eps=0.05, aggregation="geometric_mean")
    assert (row["b"], row["c0"], row["d"], row["fit_error"]) == (ces.b, cost.c0, cost.d, ces.fit_error)
    assert (row["pearson"], row["spearman"], row["n_efficient"]) == (cost.pearson, cost.spearman, ces.n_efficient)


def test_unpriced_models_shape_the_capability_side_only(known_catalog):
    """As in the cost_side asset: all models enter measures/tiers/CES, priced ones the cost fit."""
    x_raw, costs, _ = known_catalog
    partial = costs.drop(["m004", "m010"]).mask(lambda c: c.index == "m012")  # two absent, one NaN
    grid = SensitivityGrid(n_factors=(2,), n_tiers=(3,), eps=(0.0,), aggregation=("mean",),
                           cost_scaling="max", pa_iterations=5)
    row = frontier_sensitivity(x_raw, partial, grid).iloc[0]
    measures = extract_measures(x_raw, n_factors=2, pa_iterations=5).measures
    tiers = pareto_tiers(measures, eps=0.0, n_tiers=3)
    ces = fit_ces(measures, tiers)
    priced = tiers[~tiers["model_id"].isin(["m004", "m010", "m012"])]
    cost = fit_cost_side(priced, ces.tier_levels, partial.dropna(), aggregation="mean", cost_scaling="max")
    assert row["n_efficient"] == len(x_raw) == ces.n_efficient
    assert (row["d"], row["c0"], row["pearson"]) == (cost.d, cost.c0, cost.pearson)


def test_failed_cells_are_reported_not_raised(known_catalog):
    x_raw, costs, _ = known_catalog
    grid = SensitivityGrid(n_factors=(2, 3), n_tiers=(3,), eps=(0.0,), aggregation=("median",),
                           cost_scaling="max", pa_iterations=5)
    table = frontier_sensitivity(x_raw, costs, grid)
    assert len(table) == 2
    ok, bad = table.iloc[0], table.iloc[1]
    assert ok["error"] == "" and np.isfinite(ok["d"])
    # rank-2 data: a third factor is not identified (singular or empty after sparsification)
    assert bad["error"].startswith("measures with 3 factors:")
    assert np.isnan(bad[FINITE].to_numpy(dtype=float)).all()


def test_x_raw_is_imputed_once_for_every_number_of_factors(known_catalog, monkeypatch):
    """Issue 17: the imputation (§4.3) does not depend on I, so the grid does it once; each I's cells still equal
    the direct pipeline (above) bit for bit."""
    from compass.mlcompass import measures

    x_raw, costs, _ = known_catalog
    calls = []
    real = measures.impute_low_rank
    monkeypatch.setattr(measures, "impute_low_rank", lambda *a, **k: calls.append(1) or real(*a, **k))
    grid = SensitivityGrid(n_factors=(1, 2), n_tiers=(3,), eps=(0.0,), aggregation=("median",),
                           cost_scaling="max", pa_iterations=5)
    table = frontier_sensitivity(x_raw, costs, grid)
    assert len(calls) == 1
    for k in (1, 2):
        direct = extract_measures(x_raw, n_factors=k, pa_iterations=5).measures
        ces = fit_ces(direct, pareto_tiers(direct, eps=0.0, n_tiers=3))
        assert _cell(table, n_factors=k)["b"] == ces.b


def test_summary_is_mean_and_sd_per_variable_value():
    table = pd.DataFrame({
        "n_factors": [2, 2, 3, 3], "n_tiers": [3, 4, 3, 4], "eps": [0.0] * 4, "aggregation": ["median"] * 4,
        "b": [1.0, 2.0, 3.0, 5.0], "d": [0.5, 0.7, 0.9, np.nan], "c0": [1.0] * 4, "fit_error": [0.1, 0.2, 0.3, 0.4],
        "pearson": [0.1] * 4, "spearman": [0.2] * 4, "error": ["", "", "", "cost side: failed"],
    })
    summary = sensitivity_summary(table).set_index(["variable", "value"])
    assert summary.loc[("n_factors", "2"), "b_mean"] == pytest.approx(1.5)
    assert summary.loc[("n_factors", "2"), "b_sd"] == pytest.approx(np.std([1.0, 2.0], ddof=1))
    assert summary.loc[("n_factors", "3"), "n_cells"] == 1  # the failed cell is left out
    assert summary.loc[("n_tiers", "3"), "d_mean"] == pytest.approx(0.7)
    assert summary.loc[("eps", "0.0"), "fit_error_mean"] == pytest.approx(0.2)
    assert np.isnan(summary.loc[("n_factors", "3"), "b_sd"])
    assert len(summary) == 2 + 2 + 1 + 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_tiers": (1, 3)}, "n_tiers"),
        ({"eps": (0.0, 1.5)}, "eps"),
        ({"aggregation": ("median", "mode")}, "mode"),
        ({"n_factors": ()}, "n_factors"),
        ({"eps": (0.0, 0.0)}, "repeated"),
        ({"cost_scaling": "log"}, "cost_scaling"),
        ({"loading_threshold": 1.2}, "loading_threshold"),
    ],
)
def test_bad_grid_is_rejected(change, message):
    settings = {"n_factors": (2,), "n_tiers": (3,), "eps": (0.0,), "aggregation": ("median",), **change}
    with pytest.raises(ValueError, match=message):
        SensitivityGrid(**settings)


def test_bad_inputs_name_the_problem(known_catalog):
    x_raw, costs, _ = known_catalog
    grid = SensitivityGrid(n_factors=(2,), n_tiers=(3,), eps=(0.0,), aggregation=("median",))
    with pytest.raises(ValueError, match="costs cover 1 of the 17 models"):
        frontier_sensitivity(x_raw, costs.iloc[:1], grid)
    with pytest.raises(ValueError, match="finite and > 0.*m003"):
        frontier_sensitivity(x_raw, costs.mask(costs.index == "m003", -1.0), grid)
    with pytest.raises(ValueError, match="below the number of benchmarks"):
        frontier_sensitivity(x_raw, costs, SensitivityGrid(n_factors=(8,), n_tiers=(3,), eps=(0.0,),
                                                           aggregation=("median",)))
    with pytest.raises(ValueError, match="Series"):
        frontier_sensitivity(x_raw, costs.to_frame(), grid)
    with pytest.raises(ValueError, match="summary|missing columns"):
        sensitivity_summary(pd.DataFrame({"b": [1.0]}))


def test_a_grid_where_no_cell_fits_gives_an_empty_summary_with_its_reason_and_a_figure(known_catalog):
    """Issue 42: prices that fall as capability rises make every cell's tier costs constant (d not identified); the
    study then failed in its figure ("Number of columns must be a positive integer, not 0"). Now the summary is
    empty, `empty_grid_reason` says why, and the figure states it. Mutations, each red: the plot without its
    empty branch (matplotlib's error); `empty_grid_reason` returning "" whatever the cells."""
    from compass.mlcompass.plots import sensitivity_plot
    from compass.mlcompass.sensitivity import empty_grid_reason

    x_raw, costs, _ = known_catalog
    table = frontier_sensitivity(x_raw, costs.max() + costs.min() - costs, GRID)  # the dearest models are the worst
    assert (table["error"] != "").all() and sensitivity_summary(table).empty
    reason = empty_grid_reason(table)
    assert reason.startswith(f"no cell of the {GRID.size}-cell grid could be fitted") and "d is not identified" in reason
    figure = sensitivity_plot(sensitivity_summary(table), "constructed", reason)
    assert reason[:40] in " ".join(t.get_text() for ax in figure.axes for t in ax.texts).replace("\n", " ")
    assert empty_grid_reason(frontier_sensitivity(x_raw, costs, GRID)) == ""  # a grid that fits: no reason
