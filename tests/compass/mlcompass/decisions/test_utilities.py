"""Utility estimation (§4.5) and outcome labels (§5.5) on known-truth synthetic data."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from compass.mlcompass.outcome_labels import full_marks_label, threshold_label, within_group_mean_label
from compass.mlcompass.utilities import fit_utilities_by_group, fit_utility, linear_utility, utility_table


def _interactions(rng, n=3000, n_models=25, n_measures=2):
    """Synthetic interactions: each row uses one of `n_models` models with fixed measures."""
    models = rng.uniform(0, 1, size=(n_models, n_measures))
    used = rng.integers(0, n_models, size=n)
    cols = [f"C{i + 1}" for i in range(n_measures)]
    return pd.DataFrame(models[used], columns=cols)


def test_logistic_recovers_generating_weights_and_bayes_auc():
    rng = np.random.default_rng(0)
    X = _interactions(rng, n=4000)
    true_beta = np.array([3.0, 1.0])
    p = 1 / (1 + np.exp(-(-2.0 + X.to_numpy() @ true_beta)))
    y = pd.Series((rng.random(len(X)) < p).astype(int))
    fit = fit_utility(X, y, "logistic", n_repeats=4, seed=1)
    assert fit.weights.sum() == pytest.approx(1.0)
    assert fit.weights["C1"] > fit.weights["C2"]
    np.testing.assert_allclose(fit.weights.to_numpy(), true_beta / true_beta.sum(), atol=0.08)
    bayes_auc = roc_auc_score(y, p)
    assert abs(fit.test_auc_mean - bayes_auc) < 0.03
    assert fit.train_auc_sd >= 0 and fit.test_auc_sd > 0
    assert fit.n_train + fit.n_test == len(X) and fit.n_test == 800


def test_linear_continuous_outcome_weights_and_binarized_auc():
    rng = np.random.default_rng(2)
    X = _interactions(rng, n=2000)
    y = pd.Series(2.0 * X["C1"] + 1.0 * X["C2"] + rng.normal(0, 0.3, len(X)))
    fit = fit_utility(X, y, "linear", n_repeats=3, seed=0)
    np.testing.assert_allclose(fit.weights.to_numpy(), [2 / 3, 1 / 3], atol=0.04)
    label = (y > y.mean()).astype(int)
    bayes_auc = roc_auc_score(label, 2.0 * X["C1"] + X["C2"])
    assert abs(fit.test_auc_mean - bayes_auc) < 0.03


def test_lightgbm_gain_on_irrelevant_measure_is_near_zero():
    rng = np.random.default_rng(3)
    X = _interactions(rng, n=3000, n_measures=3)
    p = 1 / (1 + np.exp(-(6.0 * (X["C1"] - 0.5) + 2.0 * (X["C2"] > 0.5))))
    y = pd.Series((rng.random(len(X)) < p).astype(int))
    fit = fit_utility(X, y, "lightgbm", n_repeats=2, seed=0)
    assert fit.weights.sum() == pytest.approx(1.0)
    assert fit.weights["C3"] < 0.05
    assert fit.weights["C1"] > fit.weights["C2"] > fit.weights["C3"]
    u = fit.utility_fn()(np.array([[0.9, 0.9, 0.5], [0.1, 0.1, 0.5]]))
    assert u[0] > u[1]


def test_context_columns_are_features_but_not_weights():
    rng = np.random.default_rng(4)
    X = _interactions(rng, n=1500)
    X["ctx"] = rng.integers(0, 2, len(X))
    p = 1 / (1 + np.exp(-(3 * X["C1"] + 1.5 * X["ctx"] - 2)))
    y = pd.Series((rng.random(len(X)) < p).astype(int))
    fit = fit_utility(X, y, "logistic", n_repeats=2, measure_cols=["C1", "C2"])
    assert list(fit.weights.index) == ["C1", "C2"] and fit.weights.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="context values"):
        fit.utility_fn()
    assert fit.utility_fn({"ctx": 1})(np.array([[0.5, 0.5]]))[0] > fit.utility_fn({"ctx": 0})(np.array([[0.5, 0.5]]))[0]


def test_fit_by_group_and_table_layout():
    rng = np.random.default_rng(5)
    X = _interactions(rng, n=2400)
    X["group"] = np.where(rng.random(len(X)) < 0.5, "ethics", "safety")
    logit = np.where(X["group"] == "ethics", 4 * X["C1"], 4 * X["C2"]) - 2
    X["y"] = (rng.random(len(X)) < 1 / (1 + np.exp(-logit))).astype(int)
    fits = fit_utilities_by_group(X, "group", ["C1", "C2"], "y", "logistic", n_repeats=2)
    table = utility_table(fits)
    assert list(table.columns) == ["group", "n_train", "n_test", "train_auc_mean", "train_auc_sd",
                                   "test_auc_mean", "test_auc_sd", "beta_C1", "beta_C2"]
    ethics, safety = table.set_index("group").loc["ethics"], table.set_index("group").loc["safety"]
    assert ethics["beta_C1"] > 0.8 and safety["beta_C2"] > 0.8


def test_bad_inputs_raise():
    X = pd.DataFrame({"C1": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(ValueError, match="estimator"):
        fit_utility(X, pd.Series([0, 1, 0, 1]), "svm")
    with pytest.raises(ValueError, match="binary"):
        fit_utility(X, pd.Series([0.1, 0.5, 0.2, 0.9]), "logistic")
    with pytest.raises(ValueError, match="single class"):
        fit_utility(X, pd.Series([1, 1, 1, 1]), "logistic")
    with pytest.raises(ValueError, match="rows"):
        fit_utility(X, pd.Series([0, 1]), "logistic")


def test_linear_utility_is_dot_product():
    np.testing.assert_allclose(linear_utility([0.25, 0.75])(np.array([[1.0, 0.0], [0.4, 0.8]])), [0.25, 0.7])


def test_within_user_mean_label_is_strict():
    df = pd.DataFrame({"user": ["u", "u", "u", "v", "v"], "score": [1, 2, 3, 5, 5]})
    assert within_group_mean_label(df, "user", "score").tolist() == [0, 0, 1, 0, 0]
    with pytest.raises(ValueError, match="column"):
        within_group_mean_label(df, "prompt", "score")


def test_full_marks_and_threshold_labels():
    s = pd.Series([1.0, 0.999, 0.5, 1.0 - 1e-12], name="score")
    assert full_marks_label(s).tolist() == [1, 0, 0, 1]
    assert threshold_label(s, 0.5).tolist() == [1, 1, 1, 1]
    assert threshold_label(s, 0.9995).tolist() == [1, 0, 0, 1]
    with pytest.raises(ValueError, match="exceed"):
        full_marks_label(pd.Series([1.5]))
