"""The calibrator's sample (issue 45): fitted on CALIBRATION_SAMPLE train rows of a model with 3x as many, the
calibrated probabilities and the ECE stay within CALIBRATION_SAMPLE_ERROR of the fit on every train row; below the
size the fit uses every row (the embedded datasets' tables do not move)."""

import numpy as np
import pandas as pd

from compass.cascades.calibration import (
    CALIBRATION_SAMPLE, CALIBRATION_SAMPLE_ERROR, calibrate, expected_calibration_error, fill_infinities, fit_rows,
    logistic_fit, transform_logprob,
)


def _world(n_train: int, n_test: int, seed: int) -> pd.DataFrame:
    """Two models whose correctness follows a logistic law in the transformed confidence xi (eq. 2.16), with a
    drift along the query order (later queries harder): a sample that is not spread over the rows is biased."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    frames = []
    for j, model in enumerate(("small", "large")):
        xi = rng.gamma(2.0, 1.0 + j, n)
        drift = np.linspace(0.5, -0.5, n_train).tolist() + [0.0] * n_test
        truth = 1 / (1 + np.exp(-(-1.0 + 0.6 * xi + np.asarray(drift))))
        frames.append(pd.DataFrame({"split": ["train"] * n_train + ["test"] * n_test,
                                    "query_id": np.arange(n), "model_id": model,
                                    "correct": (rng.random(n) < truth).astype(float),
                                    "confidence": np.log1p(-np.exp(-xi))}))
    return pd.concat(frames, ignore_index=True)


def test_the_sampled_calibrator_is_within_the_stated_error_of_the_full_fit():
    world = _world(3 * CALIBRATION_SAMPLE, 5_000, seed=3)
    sampled, params = calibrate(world, "mc")
    assert (params["n_fit"] == CALIBRATION_SAMPLE).all() and (params["n_train"] == 3 * CALIBRATION_SAMPLE).all()
    for row in params.itertuples():  # the fit on every train row, as calibrate makes it (eqs. 2.16-2.17)
        rows = sampled[sampled["model_id"] == row.model_id]
        train, test = (rows["split"] == "train").to_numpy(), (rows["split"] == "test").to_numpy()
        xi = transform_logprob(rows["confidence"].to_numpy(), "mc")
        xi = fill_infinities(xi, float(xi[train & np.isfinite(xi)].min()), float(xi[train & np.isfinite(xi)].max()))
        y = rows["correct"].to_numpy()
        coef, _ = logistic_fit(xi[train], y[train])
        full = 1 / (1 + np.exp(-(coef[0] + coef[1] * xi)))
        gap = np.abs(rows["p_correct"].to_numpy() - full).max()
        assert 0 < gap <= CALIBRATION_SAMPLE_ERROR
        assert abs(row.ece - expected_calibration_error(full[test], y[test])) <= CALIBRATION_SAMPLE_ERROR


def test_below_the_sample_size_every_train_row_is_used():
    assert np.array_equal(fit_rows(500, 1000), np.arange(500))
    rows = fit_rows(5000, 1000)
    assert rows.size == 1000 == np.unique(rows).size and rows.max() >= 4000 and np.all(np.diff(rows) > 0)
