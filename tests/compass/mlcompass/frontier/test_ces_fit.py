"""CES capability frontier, problem (3): recovery of known (a, b, lambda) from noisy tiers."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from compass.mlcompass.ces_fit import fit_ces, soft_l1
from compass.mlcompass.frontier import ces_score

from .conftest import tiered_ces_points

# Tolerances: with 10 efficient models per tier and noise sd 0.01 (1% of the [0,1]
# range), repeated runs stay within |a_hat - a|_inf < 0.05, |b_hat - b| < 0.3 and
# |lambda_hat - lambda|_inf < 0.03.
CASES = [
    ((0.6, 0.4), 2.0, (0.3, 0.5, 0.7)),
    ((0.2, 0.5, 0.3), 1.5, (0.25, 0.45, 0.65)),
    ((0.7, 0.3), 0.7, (0.2, 0.4, 0.6)),
]


@pytest.mark.parametrize("a, b, levels", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_recovers_known_parameters(a, b, levels, seed):
    measures, tiers = tiered_ces_points(a, b, levels, per_tier=10, noise=0.01, seed=seed)
    fit = fit_ces(measures, tiers)
    assert fit.converged
    assert np.max(np.abs(fit.a - np.array(a))) < 0.05
    assert abs(fit.b - b) < 0.3
    assert np.max(np.abs(fit.tier_levels - np.array(levels))) < 0.03
    assert fit.a.sum() == pytest.approx(1.0) and (fit.a > 0).all()
    assert fit.fit_error < 3 * 0.01 ** 2  # mean squared residual ~ noise variance
    assert fit.factors == list(measures.columns) and fit.n_efficient == 30


def test_soft_l1_loss_resists_outliers():
    a, b, levels = (0.6, 0.4), 2.0, (0.3, 0.5, 0.7)
    measures, tiers = tiered_ces_points(a, b, levels, per_tier=10, noise=0.01, seed=3)
    measures.iloc[2] = [0.6, 0.6]  # tier-1 model pushed far outside its level set
    measures.iloc[25] = [0.05, 0.05]  # tier-3 model collapsed inwards
    fit = fit_ces(measures, tiers)
    assert np.max(np.abs(fit.a - np.array(a))) < 0.05
    assert abs(fit.b - b) < 0.3
    assert np.max(np.abs(fit.tier_levels - np.array(levels))) < 0.03


def test_soft_l1_closed_form():
    f = 0.05
    np.testing.assert_allclose(soft_l1(np.array([1e-4]), f), [1e-8], rtol=1e-5)  # ~ r^2 near 0
    np.testing.assert_allclose(soft_l1(np.array([10.0]), f), [2 * f * 10.0 - 2 * f ** 2], rtol=1e-4)  # ~ 2 f |r|
    assert soft_l1(np.array([0.3]), f)[0] == pytest.approx(f ** 2 * 2 * (np.sqrt(1 + 36) - 1))


def test_tier_levels_are_monotone_even_when_tiers_are_mislabelled():
    measures, tiers = tiered_ces_points((0.5, 0.5), 1.0, (0.3, 0.6, 0.45), per_tier=8, noise=0.005, seed=0)
    fit = fit_ces(measures, tiers)
    assert np.all(np.diff(fit.tier_levels) >= -1e-12)
    # the reversed tiers 2 and 3 are pooled to one level, between the two true levels
    assert fit.tier_levels[1] == pytest.approx(fit.tier_levels[2], abs=1e-9)
    assert 0.45 - 0.05 < fit.tier_levels[2] < 0.6
    assert fit.tier_levels[0] == pytest.approx(0.3, abs=0.03)


def test_only_efficient_models_enter_the_fit():
    a, b, levels = (0.6, 0.4), 2.0, (0.3, 0.5, 0.7)
    measures, tiers = tiered_ces_points(a, b, levels, per_tier=10, noise=0.01, seed=0)
    reference = fit_ces(measures, tiers)
    # add dominated junk marked inefficient: the fit must not move
    junk = measures.iloc[:5] * 0.3
    junk.index = [f"junk{i}" for i in range(5)]
    tiers_junk = tiers._append(
        [{"model_id": j, "tier": 2, "pareto_efficient": False, "peel_layer": 9} for j in junk.index],
        ignore_index=True,
    )
    fit = fit_ces(measures._append(junk), tiers_junk)
    np.testing.assert_allclose(fit.a, reference.a)
    assert fit.b == reference.b


def test_capability_side_takes_no_cost_input():
    params = set(inspect.signature(fit_ces).parameters)
    assert not any(k in p for p in params for k in ("cost", "price"))


def test_fitted_scores_match_levels_on_exact_data():
    measures, tiers = tiered_ces_points((0.3, 0.7), 3.0, (0.2, 0.5, 0.8), per_tier=6, noise=0.0, seed=1)
    fit = fit_ces(measures, tiers)
    s = ces_score(measures.to_numpy(), fit.a, fit.b)
    np.testing.assert_allclose(s, fit.tier_levels[tiers["tier"].to_numpy() - 1], atol=2e-3)


def test_bad_input_raises():
    measures, tiers = tiered_ces_points((0.5, 0.5), 1.0, (0.3, 0.6), per_tier=5, noise=0.0, seed=0)
    with pytest.raises(ValueError, match="every tier"):
        fit_ces(measures, tiers.assign(pareto_efficient=tiers["tier"] == 1).assign(tier=tiers["tier"]))
    with pytest.raises(ValueError, match="without measures"):
        fit_ces(measures.iloc[1:], tiers)
    with pytest.raises(ValueError, match="missing columns"):
        fit_ces(measures, tiers.drop(columns="pareto_efficient"))
