"""The causal part of the meta-routers (seed 003 §3.3, Lemma 1): each test names the way the estimator could be
wrong and a world in which that way shows.

World (synthetic, stated here): gold and preference queries from the same distribution, so the true propensity
Pr(gold | s) is the constant κ = n / (n + m) = 0.25; gold quality μ1(x) = 1 + x1, preference label mean
μ0(x) = 0.5 + x1, so the preference bias Δ(x) = μ1 − μ0 = 0.5 everywhere (the CATE the meta-routers estimate).
"""

import numpy as np
import pytest

from compass.router.learners import LearnerSpec
from compass.router.routers import fit_delta, overlap_region

SPEC = LearnerSpec(n_estimators=60, min_samples_leaf=20, seed=0)
DELTA = 0.5


def world(n_gold: int = 600, n_pref: int = 1800, seed: int = 0):
    rng = np.random.default_rng(seed)
    X_g, X_p = rng.normal(size=(n_gold, 2)), rng.normal(size=(n_pref, 2))
    r = 1 + X_g[:, 0] + rng.normal(0, 0.3, n_gold)
    y = 0.5 + X_p[:, 0] + rng.normal(0, 0.3, n_pref)
    return X_g, r, X_p, y


def mean_delta(model, X_g, X_p) -> float:
    return float(model.predict(np.vstack([X_g, X_p])).mean())


def test_the_dr_learner_corrects_a_wrong_preference_outcome_model():
    """Double robustness (Kennedy's pseudo-outcome): with the right propensity, a preference outcome model that is
    plainly wrong (η̂ = 0) still gives Δ̂ ≈ Δ. A T-learner (φ = m1 − m0, no correction term) gives E[μ1] ≈ 1, and a
    propensity forced to 0.5 instead of κ gives ≈ 0.25."""
    X_g, r, X_p, y = world()
    wrong_eta = (np.zeros(len(r)), np.zeros(len(y)))
    model, _ = fit_delta(SPEC, X_g, r, X_p, y, "dr", propensity="constant", eta_hat=wrong_eta)
    assert mean_delta(model, X_g, X_p) == pytest.approx(DELTA, abs=0.08)


def test_the_r_learner_residualizes_the_treatment_on_the_propensity():
    """Nie & Wager: t̃ = T − p̂. With t̃ = T − 0.5 the estimate shrinks by p(1−p)/0.25 = 0.75 (≈ 0.375 here), and with
    p̂ forced to 0.5 likewise."""
    X_g, r, X_p, y = world()
    model, _ = fit_delta(SPEC, X_g, r, X_p, y, "r", propensity="constant")
    assert mean_delta(model, X_g, X_p) == pytest.approx(DELTA, abs=0.06)


@pytest.mark.parametrize("n_gold,n_pref", [(100, 4400), (50, 805), (300, 300)])
def test_with_identical_distributions_nearly_every_row_overlaps_whatever_the_gold_share(n_gold, n_pref):
    """§2.11's overlap is a statement about the density ratio f_gold / f_pref, not about κ: the rule thresholds
    p̂/(1 − p̂) · (1 − κ)/κ, so identical query distributions overlap at any gold share."""
    rng = np.random.default_rng(1)
    _, inside = overlap_region(rng.normal(size=(n_gold, 5)), rng.normal(size=(n_pref, 5)))
    assert inside.mean() >= 0.9


@pytest.mark.parametrize("n_gold,n_pref", [(100, 4400), (300, 300)])
def test_with_disjoint_supports_no_row_overlaps(n_gold, n_pref):
    rng = np.random.default_rng(2)
    X_g = rng.normal(size=(n_gold, 5)) + np.r_[8.0, np.zeros(4)]
    _, inside = overlap_region(X_g, rng.normal(size=(n_pref, 5)))
    assert inside.mean() <= 0.06  # the logistic fit is smooth: ~5 % of rows at the supports' edges (C = 1)


def test_the_learned_propensity_is_what_the_dr_learner_weights_by():
    """The routers use the learned p̂ (a forest classifier, out of sample), not the constant of the tests above.
    With η̂ = 0 the DR estimate rests on the (T − p̂)/(p̂(1 − p̂)) term, so it recovers Δ only if the learned p̂ is
    near κ = 0.25; a p̂ stuck at 0.5 gives 2·E[r]·κ − 2·E[y]·(1 − κ) = −0.25."""
    X_g, r, X_p, y = world()
    wrong_eta = (np.zeros(len(r)), np.zeros(len(y)))
    model, _ = fit_delta(SPEC, X_g, r, X_p, y, "dr", propensity="learned", eta_hat=wrong_eta)
    assert mean_delta(model, X_g, X_p) == pytest.approx(DELTA, abs=0.15)
