"""Context-specific utility estimation Û_g(x) (ML Compass §4.5, §5.5, Table 4).

One estimator per context group g, mapping the internal measures x(m_i) of the
model used in interaction i (plus optional context columns) to the outcome:

* "linear"   : OLS, Û_g(x) = α + βᵀx (continuous outcomes);
* "logistic" : logistic regression, Û_g(x) = σ(α + βᵀx) (binary outcomes);
* "lightgbm" : LightGBM classifier used as a black-box Û_g (binary outcomes).

Interpretable weights β̂_g (§4.5): |coefficients| (linear/logistic) or LightGBM
split-gain importances over the internal measures, normalized to sum to one.
Predictive quality is reported as train/test AUC over repeated random splits
(Table 4: mean and sd across splits).

Shape constraints (our addition; the paper's utilities are unconstrained): a model that dominates
another on every measure (§4.4) should never get a lower utility. LightGBM utilities are monotone
increasing in every measure by default (LightGBM's `monotone_constraints`; context columns are left
free); linear and logistic fits can be sign-constrained, β >= 0 (`nonnegative`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from lightgbm import LGBMClassifier
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import validate_data

ESTIMATORS = ("linear", "logistic", "lightgbm")

UtilityFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class UtilityFit:
    """A fitted Û_g with its normalized weights and repeated-split AUCs (Table 4 row)."""

    weights: pd.Series
    train_auc_mean: float
    train_auc_sd: float
    test_auc_mean: float
    test_auc_sd: float
    n_train: int
    n_test: int
    model: Any
    estimator: str
    feature_cols: tuple[str, ...]
    measure_cols: tuple[str, ...]

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Û_g at the rows of X: success probability (logistic/lightgbm) or fitted value (linear)."""
        missing = [c for c in self.feature_cols if c not in X.columns]
        if missing:
            raise ValueError(f"UtilityFit.predict: feature columns {missing} missing from X")
        return utility_scores(self.model, self.estimator, X[list(self.feature_cols)])

    def utility_fn(self, context: Mapping[str, float] | None = None) -> UtilityFn:
        """Û_g as a function of an (n, I) array of internal measures (order = measure_cols).

        Context feature columns (if the model used any) are held at `context`.
        """
        context = dict(context or {})
        extra = [c for c in self.feature_cols if c not in self.measure_cols]
        missing = [c for c in extra if c not in context]
        if missing:
            raise ValueError(f"utility_fn: context values needed for feature columns {missing}")

        def fn(x: np.ndarray) -> np.ndarray:
            x = np.atleast_2d(np.asarray(x, dtype=float))
            frame = pd.DataFrame(x, columns=list(self.measure_cols))
            for col in extra:
                frame[col] = context[col]
            return self.predict(frame)

        return fn


def linear_utility(beta: Sequence[float]) -> UtilityFn:
    """Û(x) = βᵀx, the linear surrogate of §4.5 / Assumption 3.1."""
    beta = np.asarray(beta, dtype=float)
    return lambda x: np.atleast_2d(np.asarray(x, dtype=float)) @ beta


class NonnegativeLogisticRegression(LogisticRegression):
    """Unpenalized logistic regression with coefficients β >= 0 (intercept free), for a sign-constrained Û_g.

    scikit-learn has `positive=True` for LinearRegression but no sign constraint for LogisticRegression,
    so the mean log-loss is minimized here with scipy's L-BFGS-B under bounds. The fitted attributes are a
    binary LogisticRegression's, so `predict_proba`, the persisted rows (`utility_models`) and the signed
    coefficients work unchanged.
    """

    def __init__(self, max_iter: int = 2000, tol: float = 1e-10):
        super().__init__(penalty=None, max_iter=max_iter, tol=tol)

    def fit(self, X, y, sample_weight=None) -> NonnegativeLogisticRegression:
        X, y = validate_data(self, X, y, dtype=float)
        if not set(np.unique(y)) <= {0.0, 1.0}:
            raise ValueError("NonnegativeLogisticRegression: y must be binary 0/1")
        weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        weight = weight / weight.sum()
        design = np.column_stack([np.ones(len(X)), X])

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:  # weighted mean log-loss and its gradient
            eta = design @ theta
            return float(weight @ (np.logaddexp(0.0, eta) - y * eta)), design.T @ (weight * (expit(eta) - y))

        bounds = [(None, None)] + [(0.0, None)] * X.shape[1]
        result = minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": self.max_iter, "ftol": self.tol, "gtol": self.tol})
        self.classes_ = np.array([0.0, 1.0])
        self.intercept_ = result.x[:1]
        self.coef_ = result.x[None, 1:]
        self.n_iter_ = np.array([result.nit])
        return self


def monotone_constraints(feature_cols: Sequence[str], measure_cols: Sequence[str]) -> list[int]:
    """LightGBM `monotone_constraints`: +1 (non-decreasing) for every measure column, 0 (free) for context columns."""
    return [1 if c in set(measure_cols) else 0 for c in feature_cols]


def _make_model(estimator: str, seed: int, monotone_constraints: Sequence[int] | None = None, nonnegative: bool = False):
    """The unfitted estimator; `monotone_constraints` applies to lightgbm, `nonnegative` (β >= 0) to linear/logistic."""
    if estimator == "linear":
        return LinearRegression(positive=nonnegative)
    if estimator == "logistic":
        return NonnegativeLogisticRegression() if nonnegative else LogisticRegression(penalty=None, max_iter=2000)
    shape = {} if monotone_constraints is None else {"monotone_constraints": list(monotone_constraints)}
    return LGBMClassifier(n_estimators=100, learning_rate=0.1, importance_type="gain", random_state=seed, n_jobs=1,
                          verbose=-1, **shape)


def fit_model(
    X: pd.DataFrame,
    target: np.ndarray | pd.Series,
    estimator: str,
    seed: int = 0,
    measure_cols: Sequence[str] | None = None,
    monotone: bool = True,
    nonnegative: bool = False,
):
    """One fitted estimator of Û_g (§4.5) on all rows of X: the outcome for linear, the 0/1 label otherwise.

    `monotone` makes a LightGBM fit non-decreasing in every `measure_cols` column (default: all columns);
    `nonnegative` constrains linear / logistic coefficients to β >= 0.
    """
    measure_cols = list(X.columns) if measure_cols is None else measure_cols
    constraints = monotone_constraints(list(X.columns), measure_cols) if monotone and estimator == "lightgbm" else None
    model = _make_model(estimator, seed, monotone_constraints=constraints, nonnegative=nonnegative)
    model.fit(X, np.asarray(target, dtype=float))
    return model


def utility_scores(model, estimator: str, X: pd.DataFrame) -> np.ndarray:
    """Û at the rows of X: the fitted value (linear) or the predicted success probability."""
    if estimator == "linear":
        return model.predict(X)
    return model.predict_proba(X)[:, 1]


def auc(label: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC of `score` for the 0/1 `label`; NaN when the label has a single class."""
    return float(roc_auc_score(label, score)) if len(np.unique(label)) == 2 else float("nan")


def _normalized_weights(model, estimator: str, feature_cols: list[str], measure_cols: list[str]) -> pd.Series:
    if estimator == "lightgbm":
        raw = pd.Series(model.booster_.feature_importance(importance_type="gain"), index=feature_cols, dtype=float)
    else:
        raw = pd.Series(np.abs(np.ravel(model.coef_)), index=feature_cols, dtype=float)
    raw = raw[measure_cols]
    total = raw.sum()
    return (raw / total if total > 0 else raw * 0.0 + 1.0 / len(raw)).rename("beta")


def fit_utility(
    X: pd.DataFrame,
    y: pd.Series,
    estimator: str,
    n_repeats: int = 5,
    test_size: float = 0.2,
    seed: int = 0,
    measure_cols: Sequence[str] | None = None,
    auc_label: pd.Series | None = None,
    monotone: bool = True,
    nonnegative: bool = False,
) -> UtilityFit:
    """Fit Û_g for one context group (§4.5) and report repeated-split AUCs (Table 4).

    X: one row per interaction; columns = internal measures of the model used
    (`measure_cols`, default all columns) plus optional context columns. y: the
    outcome (binary for logistic/lightgbm). For `linear` with continuous y, AUC is
    computed against `auc_label` (default: y > mean(y)). The returned `model` is
    refit on all rows; `weights` are normalized |coef| or gain over `measure_cols`.
    `monotone` / `nonnegative`: the shape constraints of `fit_model`.
    """
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if len(X) != len(y):
        raise ValueError(f"fit_utility: X has {len(X)} rows but y has {len(y)}")
    feature_cols = list(X.columns)
    measure_cols = list(measure_cols) if measure_cols is not None else feature_cols
    missing = [c for c in measure_cols if c not in feature_cols]
    if missing:
        raise ValueError(f"fit_utility: measure columns {missing} not in X")
    if X.isna().any().any() or pd.isna(y).any():
        raise ValueError("fit_utility: X or y contains missing values")
    y_arr = np.asarray(y, dtype=float)
    if auc_label is None:
        binary = set(np.unique(y_arr)) <= {0.0, 1.0}
        if estimator != "linear" and not binary:
            raise ValueError(f"fit_utility: estimator {estimator!r} needs a binary 0/1 outcome")
        label = y_arr if binary else (y_arr > y_arr.mean()).astype(float)
    else:
        label = np.asarray(auc_label, dtype=float)
    if len(np.unique(label)) < 2:
        raise ValueError("fit_utility: the outcome label has a single class; AUC undefined")

    rng = np.random.default_rng(seed)
    train_aucs, test_aucs = [], []
    n_train = n_test = 0
    target = y_arr if estimator == "linear" else label
    shape = {"seed": seed, "measure_cols": measure_cols, "monotone": monotone, "nonnegative": nonnegative}
    for _ in range(n_repeats):
        idx_tr, idx_te = train_test_split(
            np.arange(len(X)), test_size=test_size, random_state=int(rng.integers(2**31 - 1)), stratify=label
        )
        model = fit_model(X.iloc[idx_tr], target[idx_tr], estimator, **shape)
        train_aucs.append(auc(label[idx_tr], utility_scores(model, estimator, X.iloc[idx_tr])))
        test_aucs.append(auc(label[idx_te], utility_scores(model, estimator, X.iloc[idx_te])))
        n_train, n_test = len(idx_tr), len(idx_te)
    model = fit_model(X, target, estimator, **shape)
    return UtilityFit(
        weights=_normalized_weights(model, estimator, feature_cols, measure_cols),
        train_auc_mean=float(np.mean(train_aucs)),
        train_auc_sd=float(np.std(train_aucs, ddof=1)) if n_repeats > 1 else 0.0,
        test_auc_mean=float(np.mean(test_aucs)),
        test_auc_sd=float(np.std(test_aucs, ddof=1)) if n_repeats > 1 else 0.0,
        n_train=n_train,
        n_test=n_test,
        model=model,
        estimator=estimator,
        feature_cols=tuple(feature_cols),
        measure_cols=tuple(measure_cols),
    )


def fit_utilities_by_group(
    data: pd.DataFrame,
    group_col: str,
    feature_cols: Sequence[str],
    label_col: str,
    estimator: str,
    measure_cols: Sequence[str] | None = None,
    **kwargs,
) -> dict[str, UtilityFit]:
    """One `fit_utility` per context group g(z) (§4.5, "personalized utility")."""
    for col in [group_col, label_col, *feature_cols]:
        if col not in data.columns:
            raise ValueError(f"fit_utilities_by_group: column {col!r} not in data")
    return {
        str(g): fit_utility(part[list(feature_cols)], part[label_col], estimator, measure_cols=measure_cols, **kwargs)
        for g, part in data.groupby(group_col, sort=True)
    }


def utility_table(fits: Mapping[str, UtilityFit]) -> pd.DataFrame:
    """Table 4 layout: group, n_train, n_test, train/test AUC mean and sd, beta_<measure> columns."""
    rows = []
    for group, fit in fits.items():
        row = {
            "group": group,
            "n_train": fit.n_train,
            "n_test": fit.n_test,
            "train_auc_mean": fit.train_auc_mean,
            "train_auc_sd": fit.train_auc_sd,
            "test_auc_mean": fit.test_auc_mean,
            "test_auc_sd": fit.test_auc_sd,
        }
        row.update({f"beta_{m}": w for m, w in fit.weights.items()})
        rows.append(row)
    return pd.DataFrame(rows)
