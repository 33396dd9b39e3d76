"""Grid-search and Bayesian-optimization baselines (thesis §2.4). Synthetic data only."""

import numpy as np
import pytest

from compass.cascades.baselines import (
    bayes_opt_curve,
    default_lambdas,
    grid_search_curve,
    infill_thresholds,
    quantile_grid,
)
from compass.cascades.evaluate import evaluate_thresholds


def synthetic_cascade(n=200, k=3, seed=0):
    """Calibrated-looking confidences with correlated difficulty; larger models are better and pricier."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    skill = np.linspace(-0.5, 1.5, k)
    logits = skill[None, :] - 0.8 * z[:, None] + 0.6 * rng.standard_normal((n, k))
    p = 1 / (1 + np.exp(-logits))
    y = (rng.random((n, k)) < p).astype(float)
    c = np.array([1.0, 4.0, 20.0, 60.0][:k])[None, :] * rng.uniform(0.8, 1.2, (n, k))
    return p, y, c


def test_quantile_grid_levels_and_endpoints():
    p, _, _ = synthetic_cascade(n=500, k=3)
    grids = quantile_grid(p, 0.025)
    assert len(grids) == 2
    for i, g in enumerate(grids):
        assert g.size == 41
        assert g[0] == p[:, i].min() and g[-1] == p[:, i].max()
        np.testing.assert_allclose(g[20], np.median(p[:, i]))


def test_grid_curve_is_pareto_and_complete():
    p, y, c = synthetic_cascade(n=150, k=3)
    curve = grid_search_curve(p, y, c, resolution=0.05)
    e, cost = curve["train_error"].to_numpy(), curve["train_cost"].to_numpy()
    assert list(curve.columns) == ["phi_1", "phi_2", "train_error", "train_cost"]
    # No returned point is dominated by another.
    for i in range(len(curve)):
        dom = (cost <= cost[i]) & (e <= e[i]) & ((cost < cost[i]) | (e < e[i]))
        assert not dom.any()
    # Every grid candidate is weakly dominated by a returned point.
    g1, g2 = quantile_grid(p, 0.05)
    cand = np.array([[a, b] for a in g1 for b in g2])
    ce, cc = evaluate_thresholds(p, p, c, cand)
    assert all(((cost <= cc[j] + 1e-12) & (e <= ce[j] + 1e-12)).any() for j in range(len(cand)))
    # Plug-in scoring: the recorded error equals the re-evaluated plug-in error.
    re_e, re_c = evaluate_thresholds(p, p, c, curve[["phi_1", "phi_2"]].to_numpy())
    np.testing.assert_allclose(re_e, e)
    np.testing.assert_allclose(re_c, cost)


def test_grid_curve_label_objective_reaches_corner_points():
    p, y, c = synthetic_cascade(n=150, k=2)
    curve = grid_search_curve(p, y, c, resolution=0.1, objective="labels")
    # The most expensive Pareto point runs both models (threshold phi_max), costing sum of means.
    assert curve["train_cost"].max() == pytest.approx(c.sum(axis=1).mean())
    assert curve["train_error"].min() <= 1 - y[:, 1].mean() + 1e-12


def test_infill_closes_every_gap():
    p, _, _ = synthetic_cascade(n=400, k=3)
    t = np.array([[p[:, 0].min(), p[:, 1].min()], [p[:, 0].max(), p[:, 1].max()]])
    filled = infill_thresholds(t, p, q=0.1)
    assert np.array_equal(filled[0], t[0]) and np.array_equal(filled[-1], t[-1])
    for a, b in zip(filled[:-1], filled[1:]):
        for j in range(2):
            lo, hi = sorted((a[j], b[j]))
            assert np.mean((p[:, j] > lo) & (p[:, j] < hi)) <= 0.1
    # Total mass ~1 split into gaps of mass <= 0.1 needs >= 10 intervals; bisection stays shallow.
    assert 11 <= len(filled) <= 64


def test_bayes_opt_reaches_near_optimal_loss():
    p, y, c = synthetic_cascade(n=120, k=2, seed=5)
    lam = np.array([0.0, 0.3 / c.sum(axis=1).mean()])
    curve = bayes_opt_curve(p, y, c, lambdas=lam, tol=1e-5, min_iter=2, max_iter=6, infill_q=None, random_state=1)
    assert list(curve.columns) == ["lambda", "phi_1", "train_error", "train_cost", "n_iter"]
    # Brute-force optimum of the plug-in Lagrangian over every distinct threshold.
    cand = np.concatenate([[p[:, 0].min() - 1], np.unique(p[:, 0])])[:, None]
    ce, cc = evaluate_thresholds(p, p, c, cand)
    for _, row in curve.iterrows():
        best = np.min(ce + row["lambda"] * cc)
        got = row["train_error"] + row["lambda"] * row["train_cost"]
        assert best - 1e-12 <= got <= best + 0.01
        assert 2 <= row["n_iter"] <= 6
    forced = bayes_opt_curve(p, y, c, lambdas=[0.0], min_iter=4, max_iter=4, infill_q=None)
    assert forced["n_iter"].tolist() == [4]


def test_default_lambdas_scale_with_cost_units():
    _, _, c = synthetic_cascade(n=50, k=3)
    np.testing.assert_allclose(default_lambdas(c) * 1e6, default_lambdas(c / 1e6) * 1.0, rtol=1e-12)
    assert default_lambdas(c)[0] == 0.0


def test_bad_objective_and_resolution():
    p, y, c = synthetic_cascade(n=20, k=2)
    with pytest.raises(ValueError, match="objective"):
        grid_search_curve(p, y, c, objective="oracle")
    with pytest.raises(ValueError, match="resolution"):
        quantile_grid(p, 0.0)
    with pytest.raises(ValueError, match="lambdas"):
        bayes_opt_curve(p, y, c, lambdas=[-1.0])
    with pytest.raises(ValueError, match="min_iter"):
        bayes_opt_curve(p, y, c, lambdas=[0.0], min_iter=5, max_iter=3)
