"""Routers compared paired across Monte Carlo rounds (seed 003 §4.1 with the issue's paired intervals), and ψ̂'s
calibration against the realized gold gain."""

import numpy as np
import pandas as pd
import pytest

from compass.router.evaluation import calibration, paired_comparisons


def rounds_frame(gains: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"router": r, "n_gold": 100, "round": i, "mean_gain": g}
                         for r, values in gains.items() for i, g in enumerate(values)])


def test_a_difference_constant_across_rounds_is_distinguishable_although_each_router_is_noisy():
    """Paired: the round effect (a hard or easy test split) moves both routers alike and cancels; unpaired
    intervals of the two means would overlap."""
    rng = np.random.default_rng(0)
    split_effect = rng.normal(0, 0.05, 10)
    frame = rounds_frame({"gold_only": list(split_effect), "meta_dr": list(split_effect + 0.01)})
    row = paired_comparisons(frame).set_index(["router", "baseline"]).loc[("meta_dr", "gold_only")]
    assert row["mean_difference"] == pytest.approx(0.01) and row["distinguishable"]
    assert row["lo"] > 0


def test_against_random_the_difference_is_the_gain_itself_with_a_t_interval():
    values = [0.02, 0.04, 0.03, 0.05, 0.01]
    row = paired_comparisons(rounds_frame({"meta_dr": values})).set_index("baseline").loc["random"]
    half = 2.776 * np.std(values, ddof=1) / np.sqrt(5)  # t(0.975, 4) = 2.776
    assert row["mean_difference"] == pytest.approx(0.03)
    assert (row["lo"], row["hi"]) == pytest.approx((0.03 - half, 0.03 + half), abs=1e-4)
    assert row["distinguishable"]


def test_a_noisy_gain_straddling_zero_is_not_distinguishable():
    row = paired_comparisons(rounds_frame({"pooled": [0.05, -0.06, 0.04, -0.05]})).iloc[0]
    assert not row["distinguishable"] and row["lo"] < 0 < row["hi"]


def test_calibration_bins_follow_a_calibrated_psi_and_flatten_for_noise():
    rng = np.random.default_rng(1)
    psi = rng.normal(size=2000)
    good = calibration(psi, psi + rng.normal(0, 0.5, 2000))
    assert good["gain_mean"].is_monotonic_increasing and good["spearman"].iloc[0] > 0.8
    assert (good["gain_lo"] < good["gain_mean"]).all() and good["n"].sum() == 2000
    noise = calibration(psi, rng.normal(size=2000))
    assert abs(noise["spearman"].iloc[0]) < 0.1


def test_re_splits_of_one_data_set_need_the_resampling_correction_to_cover():
    """SYNTHETIC, the real evaluation's nuisance: every round re-splits the same N gold rows into n_test test and
    N − n_test training rows, so rounds overlap. Per-query gain differences have population mean 0; a round's
    difference is their mean over its test rows. The plain paired t-interval (s²/k) covers 0 far less often than
    95 % (it shrinks around this data set's own mean); Nadeau & Bengio's s²·(1/k + n_test/(N − n_test)) does cover."""
    rng = np.random.default_rng(3)
    n_test, n_gold, k = 90, 210, 10
    covered = {"plain": 0, "corrected": 0}
    worlds = 200
    for _ in range(worlds):
        per_query = rng.normal(size=n_test + n_gold)
        diffs = [per_query[rng.permutation(n_test + n_gold)[:n_test]].mean() for _ in range(k)]
        frame = rounds_frame({"meta_dr": diffs, "gold_only": [0.0] * k}).assign(n_gold=n_gold)
        plain = paired_comparisons(frame).set_index(["router", "baseline"]).loc[("meta_dr", "gold_only")]
        corrected = paired_comparisons(frame.assign(n_test=n_test, n_gold_total=n_test + n_gold)).set_index(["router", "baseline"]).loc[
            ("meta_dr", "gold_only")]
        covered["plain"] += plain["lo"] <= 0 <= plain["hi"]
        covered["corrected"] += corrected["lo"] <= 0 <= corrected["hi"]
    assert covered["plain"] / worlds < 0.8
    assert covered["corrected"] / worlds >= 0.9
