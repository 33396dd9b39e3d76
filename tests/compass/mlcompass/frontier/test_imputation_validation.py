"""Leave-pattern-out validation of the imputation and the calibration of the bootstrap's imputation noise
(compass.mlcompass.imputation_validation; synthetic two-block catalogs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.imputation_validation import Z90, board_patterns, pattern_holdout, validation_table
from compass.mlcompass.rank_uncertainty import imputation_noise

CORE = [f"core{j}" for j in range(6)]
REST = [f"rest{j}" for j in range(6)]


def _two_blocks(seed: int, n_current: int = 40, n_bridge: int = 20, n_old: int = 200,
                world: int = 0) -> tuple[pd.DataFrame, pd.Index]:
    """A catalog like frontier_api's: current models scored on the core only, old ones on the rest only, a few
    bridging models on both. Two factors: the core measures the general one g, the rest g and a second one h
    (loadings 0.5-0.7) the core never sees; noise sd 0.2. The loadings are the `world`'s, the models the
    `seed`'s. Returns (x_raw, the current models)."""
    loads = np.random.default_rng(world)
    a_core, a_rest, b_rest = (loads.uniform(0.8, 1.0, len(CORE)), loads.uniform(0.5, 0.7, len(REST)),
                              loads.uniform(0.5, 0.7, len(REST)))
    rng = np.random.default_rng(seed)
    n = n_current + n_bridge + n_old
    g, h = rng.standard_normal(n), rng.standard_normal(n)
    x = np.hstack([np.outer(g, a_core), np.outer(g, a_rest) + np.outer(h, b_rest)])
    x = x + 0.2 * rng.standard_normal(x.shape)
    ids = [f"cur{i}" for i in range(n_current)] + [f"bri{i}" for i in range(n_bridge)] + [f"old{i}" for i in range(n_old)]
    frame = pd.DataFrame(x * 10 + 50, index=pd.Index(ids, name="model_id"), columns=CORE + REST)
    frame.iloc[:n_current, len(CORE):] = np.nan
    frame.iloc[n_current + n_bridge:, :len(CORE)] = np.nan
    return frame, pd.Index(ids[:n_current + n_bridge])


WORLDS = (0, 1, 2)


@pytest.fixture(scope="module")
def validated() -> dict[int, tuple[pd.DataFrame, pd.Index, pd.DataFrame]]:
    """Per world: its catalog, board and compass.imputation_validation table."""
    out = {}
    for world in WORLDS:
        x, board = _two_blocks(world, world=world)
        out[world] = (x, board, validation_table(x, board).set_index("benchmark"))
    return out


def test_the_held_out_cells_follow_the_boards_pattern(validated):
    x, board, _ = validated[0]
    assert board_patterns(x, board) == [(tuple(CORE), 40)]  # the bridges are complete: no pattern of theirs
    cells = pattern_holdout(x, board).cells
    # the donors are the bridging models, each cut down to the core; what is held out is their rest block
    assert set(cells["donor"]) == {f"bri{i}" for i in range(20)}
    assert set(cells["benchmark"]) == set(REST) and len(cells) == 20 * len(REST)


@pytest.mark.parametrize("world", WORLDS)
def test_leave_pattern_out_sees_the_error_random_cells_hide(validated, world):
    """Imputing a current model's rest block from its core recovers g, not h: the error is most of an SD, where a
    random held-out cell of an old model keeps its row's other rest cells (h) and is nearly exact. Replacing
    the pattern holdout by random cells makes rmse_imputed look like rmse_random: this goes red."""
    table = validated[world][2].loc[REST]
    # worlds 0-2: rmse_imputed 0.70-1.03 (column mean 0.81-1.17), rmse_random 0.2-0.35: ratio >= 2.0
    assert (table["rmse_imputed"] > 0.6).all(), table["rmse_imputed"]
    assert (table["rmse_imputed"] > 1.8 * table["rmse_random"]).all(), table[["rmse_imputed", "rmse_random"]]
    # the model's own predictive sd believes the cells are nearly exact: its 90 % interval covers few of them
    assert (table["coverage90"] < 0.75).all() and table["coverage90"].mean() < 0.6, table["coverage90"]
    assert (table["noise_scale"] > 2).all()


def test_a_benchmark_the_core_does_not_predict_is_flagged_no_better_than_the_mean():
    x, board = _two_blocks(0)
    noise = np.random.default_rng(9).normal(50, 10, len(x))
    x["rest3"] = np.where(x["rest0"].notna(), noise, np.nan)  # pure noise wherever observed
    table = validation_table(x, board).set_index("benchmark")
    assert table.at["rest3", "no_better_than_mean"]
    assert table.at["rest3", "rmse_imputed"] >= table.at["rest3", "rmse_mean"]


def test_calibrated_noise_covers_new_board_rows_out_of_sample(validated):
    """The scales fitted on one catalog make imputation_noise's nominal-90 % intervals cover >= 0.85 of the
    errors of imputing the board's rows in new catalogs of the same world (two per world, each bridge cut to
    the board's pattern in turn). Without the calibration they cover ~0.4: dropping it goes red."""
    covered = {"calibrated": [], "model": []}
    for world, (_, _, table) in validated.items():
        for fresh_seed in (world + 100, world + 200):
            fresh, board = _two_blocks(fresh_seed, world=world)
            for donor in [m for m in board if m.startswith("bri")]:
                masked = fresh.copy()
                masked.loc[donor, REST] = np.nan
                # one fit: the calibrated sd divided by the scales is the model's own (the completion is the same)
                completed, sd = imputation_noise(masked, scale=table["noise_scale"], rank=int(table["rank"].iloc[0]))
                error = (completed.loc[donor, REST] - fresh.loc[donor, REST]).abs()
                calibrated = sd.loc[donor, REST]
                for name, bound in (("calibrated", calibrated), ("model", calibrated / table["noise_scale"][REST])):
                    covered[name] += (error <= Z90 * bound).tolist()
    # per (world, catalog) 0.77-0.98 calibrated, 0.18-0.48 with the model's sd; pooled 0.88 and 0.39
    assert np.mean(covered["calibrated"]) >= 0.85, np.mean(covered["calibrated"])
    assert np.mean(covered["model"]) < 0.6


def test_the_rank_bootstrap_draws_imputed_cells_with_the_calibrated_noise():
    """bootstrap_replicates passes the published noise scales to its multiple imputation: with a 5x scale the
    measures of models with imputed cells spread more over replicates than with the model's own sd (median
    ratio 1.6-2.8 on seeds 0-2). Not passing `noise_scale` on (the calibration dropped in the bootstrap) makes
    the two runs identical: this goes red."""
    from compass.mlcompass.rank_coverage import simulated_catalog, synthetic_case
    from compass.mlcompass.rank_uncertainty import bootstrap_replicates

    x_raw = simulated_catalog(0, missing=0.3).x_raw
    case = synthetic_case("weights", "logistic", weights={"C1": 0.5, "C2": 0.5})
    spread = {}
    for name, scale in (("model", None), ("calibrated", pd.Series(5.0, index=x_raw.columns))):
        reps = bootstrap_replicates(x_raw, None, case, 30, seed=1, noise_scale=scale)
        spread[name] = reps.measures.std(axis=0).mean(axis=1)  # per model, over replicates and measures
    imputed = x_raw.isna().any(axis=1).to_numpy()
    assert np.median(spread["calibrated"][imputed]) > 1.5 * np.median(spread["model"][imputed])


def test_error_correlation_is_one_for_shared_errors_and_near_zero_for_independent_ones():
    from compass.mlcompass.imputation_validation import error_correlation

    rng = np.random.default_rng(0)
    donors = np.repeat(np.arange(300), 4)
    shared = np.repeat(rng.standard_normal(300), 4)
    base = pd.DataFrame({"donor": donors, "pattern": 0, "benchmark": np.tile(list("abcd"), 300), "sd": 1.0})
    scale = pd.Series(1.0, index=list("abcd"))
    assert error_correlation(base.assign(error=shared), scale) == pytest.approx(1.0)
    assert error_correlation(base.assign(error=rng.standard_normal(1200)), scale) < 0.1


def test_the_bootstrap_draws_the_shared_part_of_a_rows_imputation_error_once():
    from compass.mlcompass.rank_uncertainty import imputation_draw

    sd = pd.DataFrame(np.full((4000, 3), 2.0), columns=list("abc"))
    draw = imputation_draw(sd, 0.8, np.random.default_rng(1)).to_numpy()
    assert np.corrcoef(draw, rowvar=False)[0, 1] == pytest.approx(0.8, abs=0.03)
    assert draw.std(axis=0) == pytest.approx([2.0] * 3, rel=0.05)  # each cell keeps its calibrated sd
    independent = imputation_draw(sd, 0.0, np.random.default_rng(1)).to_numpy()
    assert independent == pytest.approx(2.0 * np.random.default_rng(1).standard_normal((4000, 3)))


@pytest.mark.parametrize("world", WORLDS)
def test_a_rows_mean_imputation_error_is_covered_once_the_correlation_is_drawn(validated, world):
    """A measure is a weighted sum of a row's cells: its imputation error is covered only when the draw carries the
    within-row correlation of the leave-pattern-out errors (red with noise_correlation 0: ~half covered)."""
    x, board, table = validated[world]
    cells = pattern_holdout(x, board).cells
    rho = float(table["noise_correlation"].iloc[0])
    assert rho > 0.5  # the missing block's own factor makes a donor's errors move together
    z = cells["error"] / (cells["sd"] * cells["benchmark"].map(table["noise_scale"]))
    per_row = z.groupby(cells["donor"]).agg(["mean", "size"])
    sd_of_mean = np.sqrt(rho + (1.0 - rho) / per_row["size"])
    assert (per_row["mean"].abs() <= Z90 * sd_of_mean).mean() >= 0.8
