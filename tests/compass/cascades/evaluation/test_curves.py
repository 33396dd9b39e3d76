"""Pareto filter, AUC closed forms, Wilcoxon p-values, subcascade enumeration (thesis §2.4)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon

from compass.cascades.curves import (
    auc_comparisons,
    compare_methods,
    curve_auc,
    paired_wilcoxon_p,
    pareto_mask,
    shared_cost_interval,
    size_ordered_subcascades,
)


def dominated_brute(cost, err):
    out = np.zeros(cost.size, dtype=bool)
    for i in range(cost.size):
        better = (cost <= cost[i]) & (err <= err[i]) & ((cost < cost[i]) | (err < err[i]))
        out[i] = better.any()
    return out


def test_pareto_mask_matches_brute_force():
    rng = np.random.default_rng(0)
    cost = np.round(rng.random(400), 2)  # ties on both axes
    err = np.round(rng.random(400), 2)
    mask = pareto_mask(cost, err)
    dom = dominated_brute(cost, err)
    # Kept points are never dominated; every non-dominated value pair is represented exactly once.
    assert not dom[mask].any()
    kept_pairs = {(c, e) for c, e in zip(cost[mask], err[mask])}
    assert kept_pairs == {(c, e) for c, e in zip(cost[~dom], err[~dom])}
    assert len(kept_pairs) == mask.sum()


def test_pareto_mask_prefilter_keeps_every_pareto_point_of_a_dense_cloud():
    """The O(m) bin pre-filter must never drop a Pareto point: a 3,000-point cloud whose front crosses
    many bins, against the quadratic brute force."""
    rng = np.random.default_rng(1)
    cost = rng.random(3000)
    err = 1.0 - np.sqrt(cost) + 0.02 * rng.random(3000)
    mask = pareto_mask(cost, err)
    assert mask.sum() > 20
    np.testing.assert_array_equal(mask, ~dominated_brute(cost, err))


def test_auc_closed_form_piecewise_linear():
    # error = 0.5 - 0.4 c on [0, 0.5], then flat 0.3 on [0.5, 1].
    cost = np.array([0.0, 0.5, 1.0])
    err = np.array([0.5, 0.3, 0.3])
    # integral over [0.25, 1]: [0.25,0.5] trapezoid (0.4+0.3)/2*0.25 = 0.0875; [0.5,1] 0.15
    assert curve_auc(cost, err, 0.25, 1.0) == pytest.approx((0.0875 + 0.15) / 0.75, abs=1e-14)
    # whole range: 0.5*(0.5+0.3)/2 + 0.15 = 0.35
    assert curve_auc(cost[::-1], err[::-1], 0.0, 1.0) == pytest.approx(0.35, abs=1e-14)


def test_auc_extrapolates_linearly_and_is_scale_free():
    cost = np.array([1.0, 2.0])
    err = np.array([0.4, 0.2])
    # line e = 0.6 - 0.2 c ; mean over [0, 3] is e(1.5) = 0.3
    assert curve_auc(cost, err, 0.0, 3.0) == pytest.approx(0.3)
    assert curve_auc(cost * 1e-6, err, 0.0, 3e-6) == pytest.approx(0.3)


def test_shared_interval():
    assert shared_cost_interval([np.array([1.0, 5.0]), np.array([2.0, 4.0, 9.0])]) == (2.0, 5.0)


def test_wilcoxon_matches_scipy_and_exact_value():
    base = np.array([0.31, 0.42, 0.29, 0.50, 0.38, 0.44])
    rt = np.array([0.30, 0.40, 0.30, 0.47, 0.36, 0.41])
    assert paired_wilcoxon_p(base, rt) == pytest.approx(wilcoxon(base, rt, alternative="greater").pvalue)
    # All 5 differences positive -> exact one-sided p = 1 / 2^5.
    assert paired_wilcoxon_p(np.arange(1, 6) + 0.5, np.arange(1, 6)) == pytest.approx(1 / 32)
    assert np.isnan(paired_wilcoxon_p(rt, rt))


def test_auc_comparisons_and_compare_methods():
    rows = []
    # RT: error 0.5 - 0.2c on [0,1]; GS: 0.5 - 0.1c on [0, 0.8]; shared [0, 0.8]
    for casc, shift in (("a->b", 0.0), ("a->c", 0.05), ("a->b->c", 0.1)):
        c = np.linspace(0, 1, 11)
        rows += [{"cascade": casc, "method": "RT", "cost": x, "error": 0.5 + shift - 0.2 * x} for x in c]
        c2 = np.linspace(0, 0.8, 9)
        rows += [{"cascade": casc, "method": "GS", "cost": x, "error": 0.5 + shift - 0.1 * x} for x in c2]
    table = auc_comparisons(pd.DataFrame(rows), reference="RT")
    assert list(table["k"]) == [2, 3, 2]
    for _, r in table.iterrows():
        shift = {"a->b": 0.0, "a->c": 0.05, "a->b->c": 0.1}[r["cascade"]]
        assert (r["lo"], r["hi"]) == (0.0, pytest.approx(0.8))
        assert r["auc_reference"] == pytest.approx(0.5 + shift - 0.2 * 0.4)
        assert r["auc"] == pytest.approx(0.5 + shift - 0.1 * 0.4)
        assert r["pct_delta"] == pytest.approx(100 * (-0.04) / (0.46 + shift))
    summary = compare_methods(table, by="k")
    k2 = summary[summary["k"] == 2].iloc[0]
    assert k2["n_cascades"] == 2
    assert k2["mean_pct_delta"] == pytest.approx(np.mean([-4 / 0.46, -4 / 0.51]))
    assert k2["p_value"] == pytest.approx(0.25)  # two positive differences: exact p = 1/4


def test_subcascades_count_and_order():
    chain = ["1b", "3b", "8b", "70b", "405b"]
    subs = size_ordered_subcascades(chain)
    assert len(subs) == 26
    assert all(list(s) == sorted(s, key=chain.index) for s in subs)
    assert ("1b", "405b") in subs and tuple(chain) in subs
    with pytest.raises(ValueError, match="duplicate"):
        size_ordered_subcascades(["a", "a"])


def test_bad_curve_input():
    with pytest.raises(ValueError, match="lo < hi"):
        curve_auc(np.array([0.0, 1.0]), np.array([0.1, 0.2]), 1.0, 1.0)
    with pytest.raises(ValueError, match="missing"):
        auc_comparisons(pd.DataFrame({"cascade": ["a"], "cost": [1.0]}))
