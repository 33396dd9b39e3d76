import numpy as np
import pandas as pd
import pytest

from compass.cascades.calibration import (
    calibrate, expected_calibration_error, fill_infinities, logistic_fit, task_kind_for, transform_logprob,
)


def test_transforms_closed_form_and_monotone():
    logp = np.log(np.array([0.25, 0.5, 0.75, 0.9]))
    assert np.allclose(transform_logprob(logp, "mc"), -np.log(1 - np.exp(logp)))
    # generation: -log(2(1-p)) for p >= 1/2, log(2p) below
    assert np.allclose(transform_logprob(logp, "nlg"), [np.log(0.5), 0.0, np.log(2.0), -np.log(0.2)])
    grid = np.log(np.linspace(1e-6, 1 - 1e-9, 2001))
    for kind in ("mc", "nlg"):
        assert np.all(np.diff(transform_logprob(grid, kind)) > 0)
    assert transform_logprob(np.array([-1e-8]), "mc")[0] == pytest.approx(-np.log(1e-8), rel=1e-6)
    assert np.isposinf(transform_logprob(np.array([0.0]), "mc")[0])
    assert np.isneginf(transform_logprob(np.array([-np.inf]), "nlg")[0])
    assert transform_logprob(np.array([-np.inf]), "mc")[0] == 0.0
    assert np.array_equal(fill_infinities(np.array([-np.inf, 1.0, np.inf]), -2.0, 5.0), [-2.0, 1.0, 5.0])
    assert task_kind_for("MMLU") == "multiple_choice" and task_kind_for("triviaqa") == "generation"
    with pytest.raises(ValueError, match="task_kind"):
        transform_logprob(logp, "essay")


def test_ece_closed_form():
    p = np.array([0.2] * 5 + [0.8] * 5)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1], float)
    # two bins: |0.2 - 0.2| and |1.0 - 0.8| each weight 1/2
    assert expected_calibration_error(p, y, n_bins=2) == pytest.approx(0.1)


def test_logistic_fit_recovers_coefficients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20000)
    y = (rng.random(20000) < 1 / (1 + np.exp(-(-0.5 + 1.5 * x)))).astype(float)
    coef, p = logistic_fit(x, y)
    assert coef == pytest.approx([-0.5, 1.5], abs=0.06)
    assert p[1] < 1e-50


def _miscalibrated(n_train=2000, n_test=3000, seed=0, models=("small", "large")):
    """Synthetic fixture: raw probabilities are badly overconfident versions of the truth."""
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    frames = []
    for j, m in enumerate(models):
        xi = rng.gamma(2.0, 1.0 + j, n)  # transformed feature log(1/(1-p_raw))
        truth = 1 / (1 + np.exp(-(-1.0 + 0.6 * xi)))
        frames.append(pd.DataFrame({
            "split": ["train"] * n_train + ["test"] * n_test, "query_id": np.arange(n).astype(str), "model_id": m,
            "correct": (rng.random(n) < truth).astype(float), "confidence": np.log1p(-np.exp(-xi)),
            "cost_usd": 1e-4 * (j + 1), "latency_ms": 1.0, "tokens_in": 10.0, "tokens_out": 1.0,
        }))
    return pd.concat(frames, ignore_index=True)


def test_calibration_reduces_ece_and_recovers_truth():
    df = _miscalibrated()
    cal, params = calibrate(df, "mc")
    assert list(params.columns) == ["model_id", "a", "b", "xi_fill_min", "xi_fill_max", "n_train", "n_fit",
                                    "ece", "ece_no_transform", "ece_split"]
    test = cal[cal.split == "test"]
    for m, grp in test.groupby("model_id"):
        raw_ece = expected_calibration_error(np.exp(grp.confidence), grp.correct)
        row = params.set_index("model_id").loc[m]
        assert row.ece < 0.04 < raw_ece
        assert row.ece < row.ece_no_transform  # the transform helps (Table 2.2)
        assert (row.a, row.b) == pytest.approx((-1.0, 0.6), abs=0.25)
    assert cal["p_correct"].between(0, 1).all() and len(cal) == len(df)


def test_infinities_filled_from_train():
    df = _miscalibrated(n_train=200, n_test=200)
    df.loc[(df.model_id == "small") & (df.index % 50 == 0), "confidence"] = 0.0  # certainty -> +inf
    cal, params = calibrate(df, "mc")
    row = params.set_index("model_id").loc["small"]
    xi_train = cal[(cal.model_id == "small") & (cal.split == "train")].xi
    assert np.isfinite(cal.xi).all()
    assert xi_train.max() == pytest.approx(row.xi_fill_max)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d[d.model_id == "small"], "at least 2 models"),
    (lambda d: d[~((d.model_id == "large") & (d.split == "train"))], "no train rows"),
    (lambda d: d.assign(confidence=np.where(d.model_id == "small", -0.5, d.confidence)), "identical"),
    (lambda d: d.assign(confidence=np.where(d.index == 3, np.nan, d.confidence)), "NaN confidence"),
    (lambda d: d.drop(columns="correct"), "missing required"),
    (lambda d: d.assign(confidence=d.confidence + 1.0), "log-probability"),
])
def test_bad_input_raises(mutate, message):
    with pytest.raises(ValueError, match=message):
        calibrate(mutate(_miscalibrated(n_train=50, n_test=50)), "mc")
