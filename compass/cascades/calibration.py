"""Confidence calibration for LLM cascades (thesis seed 001, Ch. 2, Sec. 2.4 "Confidence Calibration").

Pipeline per model and dataset (thesis eqs. 2.16-2.17 and the paragraph after them):

1. hyperparameter-free transform xi of the raw probability p_raw = exp(logprob);
2. infinite xi replaced by the largest / smallest finite *train* value (stored, reused on test);
3. logistic calibration  phi = sigmoid(a + b * xi), fitted on train, applied to every split.

Multiple-choice (eq. 2.16): xi = log(1 / (1 - p)).
Generation (eq. 2.17): the thesis prints log(1/p) for p < 1/2, which *decreases* in p and
would make the feature non-monotone. We follow the authors' code: the signed
monotone version xi = -log(2(1 - p)) for p >= 1/2 and xi = log(2p) for p < 1/2.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.linear_model import LogisticRegression

from compass.cascades.data import validate_records
from compass.cascades.wide import WideRecords

MULTIPLE_CHOICE = "multiple_choice"
GENERATION = "generation"
_KIND_ALIASES = {"mc": MULTIPLE_CHOICE, MULTIPLE_CHOICE: MULTIPLE_CHOICE,
                 "nlg": GENERATION, GENERATION: GENERATION}
_MC_DATASETS = frozenset({"mmlu", "medmcqa"})

# Tiny ridge (sklearn C = 1/ridge): keeps the fit finite under perfect separation at
# n = 20-30 (the low-sample study, thesis Sec. 2.4 "Performance in the Low-Sample Limit");
# negligible at n ~ 300.
LOGIT_C = 1e4
# The logistic calibrators are fitted on at most this many train rows per model, drawn without replacement with a
# fixed seed (issue 45: a platform's logs hold millions of train rows; two parameters need far fewer). Every row is
# still transformed, calibrated and scored (ECE). Stated error, tested on a synthetic world with 3x as many train
# rows (tests/compass/cascades/model/test_calibration_sample.py, measured 0.003): the calibrated probability moves
# by at most CALIBRATION_SAMPLE_ERROR against the fit on every train row, the ECE by at most the same. Below the
# size (every dataset embedded today: <= 2,700 train rows per model) the fit uses every row, as before.
CALIBRATION_SAMPLE = 100_000
CALIBRATION_SAMPLE_ERROR = 0.01
CALIBRATION_SAMPLE_SEED = 0


def task_kind_for(dataset: str) -> str:
    """Task kind of a thesis benchmark: multiple choice for MMLU/MedMCQA, generation otherwise."""
    return MULTIPLE_CHOICE if dataset.lower() in _MC_DATASETS else GENERATION


def _kind(task_kind: str) -> str:
    try:
        return _KIND_ALIASES[task_kind]
    except KeyError:
        raise ValueError(f"task_kind must be one of {sorted(_KIND_ALIASES)}, got {task_kind!r}") from None


def _neg_log1mexp(logp: np.ndarray) -> np.ndarray:
    """-log(1 - exp(l)) for l <= 0, numerically stable (Maechler's log1mexp); +inf at l = 0."""
    out = np.empty_like(logp)
    near = logp > -np.log(2.0)
    with np.errstate(divide="ignore"):
        out[near] = -np.log(-np.expm1(logp[near]))
    out[~near] = -np.log1p(-np.exp(logp[~near]))
    return out


def transform_logprob(logprob: np.ndarray, task_kind: str) -> np.ndarray:
    """Hyperparameter-free feature xi from log p_raw (thesis eqs. 2.16-2.17, monotone NLG form).

    May return +inf (p_raw = 1) or, for generation tasks, -inf (p_raw = 0).
    """
    logp = np.minimum(np.asarray(logprob, dtype=float), 0.0)
    if np.isnan(logp).any():
        raise ValueError("NaN log-probabilities cannot be transformed")
    xi = _neg_log1mexp(logp)
    if _kind(task_kind) == GENERATION:
        half = logp >= -np.log(2.0)
        xi = np.where(half, xi - np.log(2.0), np.log(2.0) + logp)
    return xi


def fill_infinities(xi: np.ndarray, fill_min: float, fill_max: float) -> np.ndarray:
    """Replace +inf by ``fill_max`` and -inf by ``fill_min`` (thesis, text after eq. 2.17)."""
    return np.where(np.isposinf(xi), fill_max, np.where(np.isneginf(xi), fill_min, xi))


def expected_calibration_error(p: np.ndarray, y: np.ndarray, n_bins: int = 10) -> float:
    """ECE with equal-count (quantile) bins: sum_b (n_b/n) |acc_b - conf_b| (thesis Sec. 2.4)."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if p.shape != y.shape or p.size == 0:
        raise ValueError(f"ECE needs equal-length non-empty arrays, got {p.shape} and {y.shape}")
    order = np.argsort(p, kind="stable")
    return float(sum(len(b) / p.size * abs(y[b].mean() - p[b].mean())
                     for b in np.array_split(order, min(n_bins, p.size)) if len(b)))


def logistic_fit(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Logistic regression with intercept; returns (coef incl. intercept first, Wald p-values).

    Fitted with sklearn (near-unpenalised, C = ``LOGIT_C``); the p-values come from the
    observed Fisher information at the optimum, as ``statsmodels.Logit`` reports them.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float).T).T
    y = np.asarray(y, dtype=float)
    if np.unique(y).size < 2:
        raise ValueError("logistic regression needs both correct and incorrect examples")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = LogisticRegression(C=LOGIT_C, max_iter=1000).fit(X, y.astype(int))
    coef = np.concatenate([fit.intercept_, fit.coef_.ravel()])
    design = np.column_stack([np.ones(len(y)), X])
    mu = 1.0 / (1.0 + np.exp(-design @ coef))
    info = design.T @ (design * (mu * (1 - mu))[:, None])
    cov = np.linalg.pinv(info)
    z = coef / np.sqrt(np.maximum(np.diag(cov), 1e-300))
    return coef, 2 * stats.norm.sf(np.abs(z))


def fit_rows(n: int, size: int = CALIBRATION_SAMPLE) -> np.ndarray:
    """Positions of the rows a calibrator is fitted on: all `n` when n <= `size`, else `size` of them drawn without
    replacement (seed `CALIBRATION_SAMPLE_SEED`), in their original order."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(CALIBRATION_SAMPLE_SEED).choice(n, size, replace=False))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def calibrate(df: pd.DataFrame | WideRecords, task_kind: str, *, n_bins: int = 10,
              sample: int = CALIBRATION_SAMPLE) -> tuple[pd.DataFrame | WideRecords, pd.DataFrame]:
    """Fit per-model logistic calibrators on train (at most `sample` rows of it, `fit_rows`) and apply them to every
    split.

    Returns
    -------
    calibrated : the input rows plus columns ``xi`` (filled transform) and ``p_correct``; for `WideRecords`
        (validated when they were prepared) the same records with a ``p_correct`` matrix (no ``xi``: no reader).
    params : one row per model, columns ``model_id, a, b, xi_fill_min, xi_fill_max, n_train, n_fit,
        ece, ece_no_transform, ece_split`` -- ECE (fraction, not %) of the transform-based
        calibrator and of a logistic calibrator on p_raw itself (Table 2.2 "ECE_TF"), measured
        on the test split when there is one, otherwise on train.
    """
    kind = _kind(task_kind)
    if isinstance(df, WideRecords):
        has_test = df.has_split("test")
        train, test = df.split_rows("train"), df.split_rows("test")
        p_all = np.full(df.present.shape, np.nan)
        rows = []
        for j, model in enumerate(df.models):
            at = df.present[:, j]
            _, p_all[at, j], row = _calibrate_model(model, train[at], (test if has_test else train)[at],
                                                    df.values["confidence"][at, j], df.values["correct"][at, j],
                                                    kind, has_test, n_bins, sample)
            rows.append(row)
        return df.with_values(p_correct=p_all), pd.DataFrame(rows)
    validate_records(df)
    split = df["split"].to_numpy()
    confidence, correct = df["confidence"].to_numpy(dtype=float), df["correct"].to_numpy(dtype=float)
    xi_all, p_all = np.full(len(df), np.nan), np.full(len(df), np.nan)
    rows = []
    has_test = bool((split == "test").any())
    groups = df.groupby("model_id", sort=True).indices  # positions per model, in row order
    for model in sorted(groups):
        at = groups[model]
        is_train = split[at] == "train"
        xi_all[at], p_all[at], row = _calibrate_model(model, is_train, split[at] == "test" if has_test else is_train,
                                                      confidence[at], correct[at], kind, has_test, n_bins, sample)
        rows.append(row)
    out = df.copy(deep=False)  # the input's columns shared, two new ones (10 M rows: a deep copy is ~0.9 GB)
    out["xi"], out["p_correct"] = xi_all, p_all
    return out, pd.DataFrame(rows)


def _calibrate_model(model: str, is_train: np.ndarray, evalmask: np.ndarray, logp: np.ndarray, y: np.ndarray,
                     kind: str, has_test: bool, n_bins: int, sample: int
                     ) -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
    """One model's (xi, p_correct, params row) from its rows' train and evaluation (ECE) masks, log-probabilities
    and labels, in row order."""
    logp, y = np.asarray(logp, dtype=float), np.asarray(y, dtype=float)
    xi = transform_logprob(logp, kind)
    finite = xi[is_train & np.isfinite(xi)]
    if finite.size < 2 or np.unique(finite).size < 2:
        raise ValueError(f"model {model!r}: fewer than 2 distinct finite transformed train confidences")
    xi = fill_infinities(xi, float(finite.min()), float(finite.max()))
    fit = np.flatnonzero(is_train)[fit_rows(int(is_train.sum()), sample)]
    coef, _ = logistic_fit(xi[fit], y[fit])
    p = _sigmoid(coef[0] + coef[1] * xi)
    praw = np.exp(logp)
    coef_raw, _ = logistic_fit(praw[fit], y[fit])
    p_raw_cal = _sigmoid(coef_raw[0] + coef_raw[1] * praw)
    return xi, p, {
        "model_id": model, "a": coef[0], "b": coef[1],
        "xi_fill_min": float(finite.min()), "xi_fill_max": float(finite.max()),
        "n_train": int(is_train.sum()), "n_fit": int(fit.size),
        "ece": expected_calibration_error(p[evalmask], y[evalmask], n_bins),
        "ece_no_transform": expected_calibration_error(p_raw_cal[evalmask], y[evalmask], n_bins),
        "ece_split": "test" if has_test else "train",
    }
