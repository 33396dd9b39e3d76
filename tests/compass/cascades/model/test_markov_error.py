"""The Markov-copula model's own error (issue 12, item 8), against synthetic truths with known structure: an
AR(1) latent chain (Markov) and one where model 3's confidence follows model 1's directly while model 2 is
independent of both (not Markov: the chain's pairs (1,2), (2,3) see no dependence, so the model cannot tell
that the queries reaching model 3 are the ones it fails). Synthetic data, tests only."""

import numpy as np
import pandas as pd
import pytest

from compass.cascades import study as cs
from compass.cascades.markov_model import fit_cascade_model
from tests.compass.cascades.model.synthetic import synthetic_calibrated


def non_markov_calibrated(n: int, seed: int = 0) -> pd.DataFrame:
    """As `synthetic_calibrated` with k = 3, but z_2 independent and z_3 = 0.97 z_1 + noise."""
    rng = np.random.default_rng(seed)
    z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
    z = np.column_stack([z1, z2, 0.97 * z1 + np.sqrt(1 - 0.97**2) * rng.standard_normal(n)])
    rows = []
    for i in range(3):
        phi = 1 / (1 + np.exp(-(0.6 * i + 1.2 * z[:, i])))
        lo, hi = np.quantile(phi, [0.03, 0.90])
        phi = np.clip(phi, lo, hi)
        rows.append(pd.DataFrame({"split": "train", "query_id": [f"q{j}" for j in range(n)], "model_id": f"m{i}",
                                  "correct": (rng.random(n) < phi).astype(float), "confidence": np.log(phi),
                                  "p_correct": phi, "cost_usd": 1e-4 * 3.0**i}))
    return pd.concat(rows, ignore_index=True)


def k3_gap(cal: pd.DataFrame) -> float:
    """Model minus plug-in accuracy (points) of m0 -> m1 -> m2 with both thresholds at the 70 % quantile."""
    cascade = ("m0", "m1", "m2")
    model = fit_cascade_model(cal, list(cascade))
    data = cs.CascadeData.of(cal, cascade, "train")
    thresholds = np.quantile(data.p[:, :2], 0.7, axis=0)[None, :]
    return float(cs.markov_error(model, cascade, data, thresholds)["accuracy_gap_points"].iloc[0])


def test_markov_error_grows_when_the_truth_is_not_markov():
    """Both truths have a Gaussian dependence the thesis' Gumbel only approximates (a gap of ~2 points
    on Markov data); breaking the Markov property adds ~2 more. Means over 3 seeds of 4,000 queries."""
    markov = np.mean([k3_gap(synthetic_calibrated(n_train=4000, k=3, rho=0.7, seed=s)) for s in (1, 2, 3)])
    broken = np.mean([k3_gap(non_markov_calibrated(4000, seed=s)) for s in (1, 2, 3)])
    assert broken - markov > 1.0 and broken > 3.0


def test_markov_error_table_reports_the_test_split_out_of_sample():
    """A synthetic world whose test answers are right 15 points less often than their calibrated confidence says
    (the calibration shift MedMCQA's splits show): the table's test rows see it, in accuracy_gap_points and
    calibration_gap_points, its train rows do not, and the test plug-in accuracy is that of the test labels."""
    cal = synthetic_calibrated(n_train=3000, n_test=3000, k=3, rho=0.7, seed=4)
    test = cal["split"] == "test"
    rng = np.random.default_rng(5)
    cal.loc[test, "correct"] = (rng.random(test.sum()) < cal.loc[test, "p_correct"] - 0.15).astype(float)
    table = cs.markov_error_table(cal, ("m0", "m1", "m2"))
    assert set(table["split"]) == {"train", "test"}
    gap = table.groupby("split")[["accuracy_gap_points", "calibration_gap_points"]].mean()
    assert abs(gap.loc["train", "accuracy_gap_points"]) < 3 and abs(gap.loc["train", "calibration_gap_points"]) < 2
    assert 12 < gap.loc["test", "calibration_gap_points"] < 18 and gap.loc["test", "accuracy_gap_points"] > 10
    # the test plug-in is the test labels' own accuracy: routing m0 -> m1 by hand at the median threshold
    phi, y = (cs.pivot(cal, col, split="test") for col in ("p_correct", "correct"))
    t = float(np.quantile(phi["m0"], 0.5))
    out = cs.markov_error(fit_cascade_model(cal[~test], ["m0", "m1"]), ("m0", "m1"),
                          cs.CascadeData.of(cal, ("m0", "m1"), "test"), np.array([[t]]))
    assert out["plugin_accuracy"].iloc[0] == pytest.approx(np.where(phi["m0"] > t, y["m0"], y["m1"]).mean())


def test_markov_error_table_fits_the_model_on_train_only():
    """Out of sample means the model never saw the test rows: a world whose test confidences are lower than train's
    (and calibrated on test, so only the shift separates the splits). A model fitted on train over-predicts the test
    accuracy; one fitted on the test rows would not (red when `markov_error_table` fits on the test split)."""
    cal = synthetic_calibrated(n_train=3000, n_test=3000, k=3, rho=0.7, seed=6)
    test = cal["split"] == "test"
    rng = np.random.default_rng(7)
    cal.loc[test, "p_correct"] = np.clip(cal.loc[test, "p_correct"] ** 2, 1e-4, 1 - 1e-4)
    cal.loc[test, "correct"] = (rng.random(test.sum()) < cal.loc[test, "p_correct"]).astype(float)
    gap = cs.markov_error_table(cal, ("m0", "m1", "m2")).groupby("split")[
        ["accuracy_gap_points", "calibration_gap_points"]].mean()
    assert abs(gap.loc["test", "calibration_gap_points"]) < 2  # the test split is calibrated on itself
    assert gap.loc["test", "accuracy_gap_points"] > 5 and abs(gap.loc["train", "accuracy_gap_points"]) < 3
