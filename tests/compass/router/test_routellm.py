"""RouteLLM's two routers for one model pair (the practitioners' baselines of the comparison tables)."""

import numpy as np
import pytest

from compass.router.routellm import MatrixFactorizationRouter, SimilarityWeightedRouter
from compass.router.learners import LearnerSpec
from compass.router.routers import fit_router


def clusters(seed: int = 0):
    """Two query topics in opposite directions; the strong model wins on topic A (label +1), loses on B (−1)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 0.3, (200, 4)) + [3, 0, 0, 0]
    b = rng.normal(0, 0.3, (200, 4)) + [-3, 0, 0, 0]
    return np.vstack([a, b]), np.r_[np.ones(200), -np.ones(200)]


def test_similarity_weighting_follows_the_neighbourhood_not_the_global_mean():
    X, labels = clusters()
    router = SimilarityWeightedRouter().fit(X, labels)
    psi = router.predict(np.array([[3.0, 0, 0, 0], [-3.0, 0, 0, 0]]))
    assert psi[0] > 0.9 and psi[1] < -0.9  # γ = 1 (no weighting) would give the global mean 0 for both


def test_matrix_factorization_ranks_the_winning_topic_first():
    X, labels = clusters()
    psi = MatrixFactorizationRouter().fit(X, labels).predict(np.array([[2.5, 0.1, 0, 0], [-2.5, 0, 0.1, 0]]))
    assert psi[0] > 0.4 and psi[1] < -0.4


def test_both_are_routers_fitted_on_the_pooled_labels():
    X, labels = clusters()
    gold, pref = slice(0, 400, 4), np.setdiff1d(np.arange(400), np.arange(0, 400, 4))
    for name in ("routellm_mf", "routellm_sw"):
        fitted = fit_router(name, LearnerSpec(n_estimators=5), X[gold], labels[gold], X[pref], labels[pref])
        assert fitted.preference_used == len(pref)
        assert np.corrcoef(fitted.psi(X), labels)[0, 1] > 0.9


def test_similarity_is_relative_to_the_closest_training_query_as_in_routellm():
    """RouteLLM weighs by γ^(1 + S_i/S_max): a query far from every training query (S = 0.2 and 0.1) still leans on
    its closest one, 10² against 10^1.5, ψ̂ = (100 − 31.6)/131.6 ≈ 0.52; γ^(1 + S_i − S_max) would give ≈ 0.12."""
    X = np.array([[0.2, np.sqrt(1 - 0.04), 0.0], [0.1, 0.0, np.sqrt(1 - 0.01)]])
    psi = SimilarityWeightedRouter().fit(X, np.array([1.0, -1.0])).predict(np.array([[1.0, 0.0, 0.0]]))
    assert psi[0] == pytest.approx((100 - 10**1.5) / (100 + 10**1.5), abs=1e-9)
