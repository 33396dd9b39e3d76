"""meta_cv (issue 46 item 2): the member of CV_CANDIDATES with the least K-fold error on held-out gold rows,
refitted on all rows, so a CATE stage that adds more noise than the bias it removes loses to a simpler member."""

import numpy as np
import pytest

from compass.router import routers
from compass.router.learners import LearnerSpec
from compass.router.routers import CV_CANDIDATES, cv_errors, fit_router

SPEC = LearnerSpec(n_estimators=25, seed=0)


def world(n_gold: int, useless_preferences: bool, seed: int = 0):
    """ψ(s) = s₀ with gold noise 0.3; preference labels either follow ψ (shifted by a constant bias) or are noise."""
    rng = np.random.default_rng(seed)
    X_g, X_p = rng.standard_normal((n_gold, 5)), rng.standard_normal((600, 5))
    r = X_g[:, 0] + 0.3 * rng.standard_normal(n_gold)
    y = rng.uniform(-1, 1, 600) if useless_preferences else np.clip(0.5 * X_p[:, 0] - 0.3, -1, 1)
    return X_g, r, X_p, y


def test_useless_preferences_are_not_chosen_and_the_choice_is_refitted_on_all_rows():
    X_g, r, X_p, y = world(120, useless_preferences=True)
    fitted = fit_router("meta_cv", SPEC, X_g, r, X_p, y)
    assert fitted.name == "meta_cv" and fitted.chosen == min(fitted.cv_errors, key=fitted.cv_errors.get)
    assert fitted.chosen != "preference_only" and set(fitted.cv_errors) == set(CV_CANDIDATES)
    alone = fit_router(fitted.chosen, SPEC, X_g, r, X_p, y)
    assert np.allclose(fitted.psi(X_g), alone.psi(X_g))  # the chosen candidate, fitted on every row


def test_the_errors_are_measured_on_gold_rows_the_candidates_did_not_see():
    X_g, r, X_p, y = world(100, useless_preferences=True)
    held_out = cv_errors(SPEC, X_g, r, X_p, y, candidates=("gold_only",))["gold_only"]
    in_sample = np.mean((fit_router("gold_only", SPEC, X_g, r, X_p, y).psi(X_g) - r) ** 2)
    assert held_out > 1.5 * in_sample  # a forest nearly interpolates its own rows: red if the folds leak


def test_a_tie_goes_to_the_simplest_candidate(monkeypatch):
    X_g, r, X_p, y = world(60, useless_preferences=False)
    monkeypatch.setattr(routers, "cv_predictions", lambda *a, **k: {c: r + 1.0 for c in CV_CANDIDATES})
    assert fit_router("meta_cv", SPEC, X_g, r, X_p, y).chosen == "preference_only"


@pytest.mark.parametrize("candidate", CV_CANDIDATES)
def test_each_candidate_is_chosen_when_it_errs_least(monkeypatch, candidate):
    X_g, r, X_p, y = world(60, useless_preferences=False)
    monkeypatch.setattr(routers, "cv_predictions",
                        lambda *a, **k: {c: r + (0.5 if c == candidate else 1.0) for c in CV_CANDIDATES})
    assert fit_router("meta_cv", SPEC, X_g, r, X_p, y).chosen == candidate


def test_the_held_out_predictions_are_the_chosen_members_out_of_fold_ones():
    """What App. A.1's w is chosen on (`fit_deployment`): the chosen member's ψ̂ of each gold row from the fold that
    did not see it, not the refitted router's in-sample ψ̂ (red with the in-sample predictions returned)."""
    X_g, r, X_p, y = world(60, useless_preferences=False)
    fitted, held_out = routers.fit_cv_router(SPEC, X_g, r, X_p, y, folds=3)
    oof = routers.cv_predictions(SPEC, X_g, r, X_p, y, candidates=(fitted.chosen,), folds=3)[fitted.chosen]
    np.testing.assert_allclose(held_out, oof)
    assert not np.allclose(held_out, fitted.psi(X_g))
