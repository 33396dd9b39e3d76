"""Shape-constrained utilities: monotone LightGBM (brute force over a grid) and sign-constrained linear /
logistic fits (against closed forms and unconstrained fits)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from compass.mlcompass.case_study import UtilitySpec
from compass.mlcompass.case_utilities import fit_case_utilities
from compass.mlcompass.utilities import NonnegativeLogisticRegression, fit_model, fit_utility, monotone_constraints
from compass.mlcompass.utility_models import fitted_model_rows, utility_from_row

GRID = np.linspace(0.0, 1.0, 21)


def few_models(n_models=12, rows_per_model=200, seed=0, noise=1.0):
    """Interactions of a few models, each a point x(m) in [0, 1]^2 whose success rate is increasing in x plus a
    model effect: a memorizing estimator learns a utility that falls between models."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n_models, 2))
    rate = 1 / (1 + np.exp(-(3 * (x.sum(axis=1) - 1) + rng.normal(0, noise, n_models))))
    used = np.repeat(np.arange(n_models), rows_per_model)
    X = pd.DataFrame(x[used], columns=["C1", "C2"])
    y = pd.Series((rng.random(len(used)) < rate[used]).astype(float))
    return X, y, used


def falling_steps(fn) -> np.ndarray:
    """Share of steps along each measure, over a 21 x 21 grid of [0, 1]^2, where the utility falls."""
    u = fn(np.array(np.meshgrid(GRID, GRID, indexing="ij")).reshape(2, -1).T).reshape(len(GRID), len(GRID))
    return np.array([(np.diff(u, axis=i) < 0).mean() for i in range(2)])


def test_lightgbm_utility_never_falls_where_the_unconstrained_one_does():
    X, y, _ = few_models()
    free = fit_utility(X, y, "lightgbm", n_repeats=1, monotone=False)
    shaped = fit_utility(X, y, "lightgbm", n_repeats=1)
    assert falling_steps(free.utility_fn())[0] > 0.05  # the unconstrained utility falls as C1 rises
    np.testing.assert_array_equal(falling_steps(shaped.utility_fn()), [0.0, 0.0])
    assert shaped.model.get_params()["monotone_constraints"] == [1, 1]


def test_context_columns_are_left_free():
    X, y, used = few_models(seed=1)
    ctx = (used % 2).astype(float)
    y = pd.Series(np.where(ctx == 1, 0.0, y))  # context 1 always fails: a falling effect the model must keep
    fit = fit_utility(X.assign(ctx=ctx), y, "lightgbm", n_repeats=1, measure_cols=["C1", "C2"])
    assert monotone_constraints(["C1", "C2", "ctx"], ["C1", "C2"]) == [1, 1, 0]
    assert fit.model.get_params()["monotone_constraints"] == [1, 1, 0]
    for ctx_value in (0.0, 1.0):
        np.testing.assert_array_equal(falling_steps(fit.utility_fn({"ctx": ctx_value})), [0.0, 0.0])
    x = np.array([[0.5, 0.5]])
    assert fit.utility_fn({"ctx": 1.0})(x)[0] < fit.utility_fn({"ctx": 0.0})(x)[0] - 0.2


def test_monotone_booster_survives_the_text_round_trip():
    X, y, _ = few_models(seed=2)
    fit = fit_utility(X, y, "lightgbm", n_repeats=1)
    row = fitted_model_rows({"g": fit}).iloc[0]
    assert "[monotone_constraints: 1,1]" in row["model_text"]
    rebuilt = utility_from_row(row)
    grid = np.array(np.meshgrid(GRID, GRID, indexing="ij")).reshape(2, -1).T
    np.testing.assert_array_equal(rebuilt(grid), fit.utility_fn()(grid))
    np.testing.assert_array_equal(falling_steps(rebuilt), [0.0, 0.0])


def _rows(X: pd.DataFrame, y: pd.Series, used: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    measures = (X.assign(model_id=[f"m{u:02d}" for u in used]).drop_duplicates("model_id").set_index("model_id"))
    rows = pd.DataFrame({"model_id": [f"m{u:02d}" for u in used], "group": np.arange(len(used)) // 12,
                         "context_group": "all", "outcome": y.to_numpy()})
    return rows, measures


def test_case_spec_switches_the_constraint():
    X, y, used = few_models(seed=3)
    rows, measures = _rows(X, y, used)
    base = {"source": "query_records", "label": "threshold", "threshold": 0.5, "estimator": "lightgbm", "n_repeats": 1}
    free = fit_case_utilities(rows, measures, UtilitySpec(**base, monotone=False))["all"]
    shaped = fit_case_utilities(rows, measures, UtilitySpec(**base))["all"]
    assert falling_steps(free.utility_fn()).max() > 0.05
    np.testing.assert_array_equal(falling_steps(shaped.utility_fn()), [0.0, 0.0])


def _logistic_data(beta, n=6000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(size=(n, len(beta))), columns=[f"C{i + 1}" for i in range(len(beta))])
    p = 1 / (1 + np.exp(-(-1.0 + X.to_numpy() @ np.asarray(beta))))
    return X, (rng.random(n) < p).astype(float)


def test_nonnegative_logistic_equals_the_unconstrained_fit_when_the_truth_is_positive():
    X, y = _logistic_data([2.0, 1.0, 0.5])
    free = LogisticRegression(penalty=None, max_iter=2000, tol=1e-10).fit(X, y)
    assert (free.coef_ > 0).all()
    shaped = NonnegativeLogisticRegression().fit(X, y)
    np.testing.assert_allclose(shaped.coef_, free.coef_, atol=1e-5)
    np.testing.assert_allclose(shaped.intercept_, free.intercept_, atol=1e-5)
    np.testing.assert_allclose(shaped.predict_proba(X), free.predict_proba(X), atol=1e-5)
    assert log_loss(y, shaped.predict_proba(X)) <= log_loss(y, free.predict_proba(X)) + 1e-12


def test_nonnegative_logistic_zeroes_a_negative_effect_and_refits_the_rest():
    X, y = _logistic_data([2.0, -1.5, 1.0], seed=1)
    assert LogisticRegression(penalty=None, max_iter=2000).fit(X, y).coef_[0, 1] < -1.0
    shaped = NonnegativeLogisticRegression().fit(X, y)
    assert shaped.coef_[0, 1] == 0.0 and (shaped.coef_ >= 0).all()
    # KKT: with C2 at its bound the others are the unconstrained fit without C2 ...
    rest = LogisticRegression(penalty=None, max_iter=2000, tol=1e-10).fit(X[["C1", "C3"]], y)
    np.testing.assert_allclose(shaped.coef_[0, [0, 2]], rest.coef_[0], atol=1e-5)
    # ... and raising C2 from 0 would increase the log-loss (gradient >= 0)
    p = rest.predict_proba(X[["C1", "C3"]])[:, 1]
    assert X["C2"].to_numpy() @ (p - y) > 0


def test_nonnegative_logistic_weights_are_replicated_rows():
    X, y = _logistic_data([1.0, 0.5], n=400, seed=2)
    counts = np.random.default_rng(3).integers(1, 4, len(X))
    weighted = NonnegativeLogisticRegression().fit(X, y, sample_weight=counts)
    replicated = NonnegativeLogisticRegression().fit(X.loc[X.index.repeat(counts)], np.repeat(y, counts))
    np.testing.assert_allclose(weighted.coef_, replicated.coef_, atol=1e-6)


@pytest.mark.parametrize("estimator", ["linear", "logistic"])
def test_nonnegative_fits_through_the_case_and_the_stored_row(estimator):
    X, y = _logistic_data([2.0, -1.5, 1.0], seed=4)
    model = fit_model(X, y, estimator, nonnegative=True)
    assert np.ravel(model.coef_)[1] == 0.0 and (np.ravel(model.coef_) >= 0).all()
    fit = fit_utility(X, pd.Series(y), estimator, n_repeats=1, nonnegative=True)
    row = fitted_model_rows({"g": fit}).iloc[0]
    assert min(json.loads(row["coefficients"])) == 0.0
    grid = np.random.default_rng(0).uniform(size=(50, 3))
    np.testing.assert_array_equal(utility_from_row(row)(grid), fit.utility_fn()(grid))


def test_spec_flags_are_validated():
    with pytest.raises(ValueError, match="utility.nonnegative constrains coefficients"):
        UtilitySpec(estimator="lightgbm", nonnegative=True)
    with pytest.raises(TypeError, match="utility.monotone must be true or false"):
        UtilitySpec(monotone="yes")
    assert UtilitySpec().monotone and not UtilitySpec().nonnegative
