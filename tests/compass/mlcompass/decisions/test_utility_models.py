"""Fitted utilities persist as inspectable rows and come back computing exactly what was fitted (no pickle)."""

import json

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.utilities import fit_utility
from compass.mlcompass.utility_models import (
    fitted_model_rows,
    structural_model_rows,
    utilities_from_rows,
    utility_from_row,
)


def _data(n=400, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(size=(n, 3)), columns=["C1", "C2", "C3"])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(3 * X["C1"] - 2 * X["C2"])))).astype(float)
    return X, y


@pytest.mark.parametrize("estimator", ["linear", "logistic", "lightgbm"])
def test_round_trip_is_exact(estimator):
    X, y = _data()
    fit = fit_utility(X, y, estimator, n_repeats=2)
    row = fitted_model_rows({"g": fit}).iloc[0]
    assert json.loads(row["features"]) == ["C1", "C2", "C3"]
    grid = np.random.default_rng(0).uniform(size=(50, 3))
    np.testing.assert_array_equal(utility_from_row(row)(grid), fit.utility_fn()(grid))


def test_logistic_row_holds_the_coefficients():
    X, y = _data()
    fit = fit_utility(X, y, "logistic", n_repeats=2)
    row = fitted_model_rows({"g": fit}).iloc[0]
    assert json.loads(row["coefficients"]) == pytest.approx(np.ravel(fit.model.coef_).tolist(), rel=0, abs=0)
    assert row["intercept"] == float(fit.model.intercept_[0])
    coef = np.array(json.loads(row["coefficients"]))
    x = np.array([[0.2, 0.7, 0.1]])  # σ(α + βᵀx), computed from the row by hand
    assert utility_from_row(row)(x)[0] == pytest.approx(1 / (1 + np.exp(-(row["intercept"] + x[0] @ coef))), rel=1e-12)
    assert pd.isna(row["model_text"])


def test_structural_row_gives_the_weights():
    beta = pd.Series({"C1": 0.25, "C2": 0.75})
    got = utilities_from_rows(structural_model_rows(beta))
    pd.testing.assert_series_equal(got["all"], beta, check_names=False)


def test_context_features_are_refused():
    X, y = _data()
    fit = fit_utility(X.assign(ctx=1.0), y, "logistic", n_repeats=2, measure_cols=["C1", "C2", "C3"])
    with pytest.raises(ValueError, match="context features"):
        fitted_model_rows({"g": fit})


def test_unknown_estimator_names_the_group():
    row = {"context_group": "g7", "estimator": "svm", "features": "[]", "coefficients": None}
    with pytest.raises(ValueError, match="unknown estimator 'svm' for group 'g7'"):
        utility_from_row(row)
