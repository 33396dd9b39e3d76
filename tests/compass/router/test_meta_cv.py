"""meta_cv (issue 46 item 2): the member of CV_CANDIDATES whose out-of-fold ψ̂ routes the held-out gold rows best
(CV_CRITERION), refitted on all rows, so a CATE stage that adds more noise than the bias it removes loses to a simpler
member; and a constant offset of ψ̂, which routing never sees, does not count against a member (review fix)."""

import json
from dataclasses import replace

import numpy as np
import pytest

from compass.router import routers
from compass.router.learners import LearnerSpec
from compass.router.routers import CV_CANDIDATES, CV_CRITERION, cv_errors, fit_router

SPEC = LearnerSpec(n_estimators=25, seed=0)
SINGLE = ("preference_only", "gold_only")


def world(n_gold: int, useless_preferences: bool, seed: int = 0):
    """ψ(s) = s₀ with gold noise 0.3; preference labels either follow ψ (shifted by a constant bias) or are noise."""
    rng = np.random.default_rng(seed)
    X_g, X_p = rng.standard_normal((n_gold, 5)), rng.standard_normal((600, 5))
    r = X_g[:, 0] + 0.3 * rng.standard_normal(n_gold)
    y = rng.uniform(-1, 1, 600) if useless_preferences else np.clip(0.5 * X_p[:, 0] - 0.3, -1, 1)
    return X_g, r, X_p, y


def _one_se(scores, difference_se, tolerance=0.0):
    """The first candidate (simplest first) whose mean fold score is within one SE of its paired fold differences
    with the best and that no simpler candidate beats on mean."""
    best = max(scores, key=scores.get)
    return next(c for i, c in enumerate(CV_CANDIDATES) if scores[best] - scores[c] <= difference_se[c] + tolerance
                and all(scores[c] >= scores[s] - tolerance for s in CV_CANDIDATES[:i]))


def test_useless_preferences_are_not_chosen_and_the_choice_is_refitted_on_all_rows():
    X_g, r, X_p, y = world(120, useless_preferences=True)
    fitted = fit_router("meta_cv", SPEC, X_g, r, X_p, y)
    assert fitted.name == "meta_cv" and fitted.chosen == _one_se(fitted.cv_scores, fitted.cv_difference_se)
    assert fitted.chosen != "preference_only" and set(fitted.cv_scores) == set(fitted.cv_errors) == set(CV_CANDIDATES)
    assert fitted.cv_criterion == CV_CRITERION
    alone = fit_router(fitted.chosen, SPEC, X_g, r, X_p, y)
    a, b = fitted.calibration
    assert np.allclose(fitted.psi(X_g), a + b * alone.psi(X_g))  # the chosen candidate, fitted on every row


def test_the_errors_are_measured_on_gold_rows_the_candidates_did_not_see():
    X_g, r, X_p, y = world(100, useless_preferences=True)
    held_out = cv_errors(SPEC, X_g, r, X_p, y, candidates=("gold_only",))["gold_only"]
    in_sample = np.mean((fit_router("gold_only", SPEC, X_g, r, X_p, y).psi(X_g) - r) ** 2)
    assert held_out > 1.5 * in_sample  # a forest nearly interpolates its own rows: red if the folds leak


def test_a_tie_goes_to_the_simplest_candidate(monkeypatch):
    X_g, r, X_p, y = world(60, useless_preferences=False)
    monkeypatch.setattr(routers, "cv_predictions", lambda *a, **k: {c: r + 1.0 for c in CV_CANDIDATES})
    assert fit_router("meta_cv", SPEC, X_g, r, X_p, y).chosen == "preference_only"


def test_the_routing_gain_is_measured_on_gold_rows_the_candidates_did_not_see():
    """Gold labels of pure noise (ψ = 0): a forest routes its own rows well by memorizing them, held-out rows not at
    all (red if `cv_predictions` fits a fold on the rows it then scores)."""
    rng, small = np.random.default_rng(3), LearnerSpec(n_estimators=5, seed=0)
    X_g, X_p = rng.standard_normal((100, 5)), rng.standard_normal((100, 5))
    r, y = rng.standard_normal(100), rng.uniform(-1, 1, 100)
    fitted = fit_router("meta_cv", small, X_g, r, X_p, y)
    own_rows = routers.cv_scores({"gold_only": fit_router("gold_only", small, X_g, r, X_p, y).psi(X_g)}, r)["gold_only"]
    assert own_rows > 0.1 and max(fitted.cv_scores.values()) < 0.5 * own_rows


@pytest.mark.parametrize("candidate", CV_CANDIDATES)
def test_each_candidate_is_chosen_when_it_routes_best(monkeypatch, candidate):
    X_g, r, X_p, y = world(60, useless_preferences=False)
    noise = np.random.default_rng(1).standard_normal(len(r))
    monkeypatch.setattr(routers, "cv_predictions",
                        lambda *a, **k: {c: r + (0.0 if c == candidate else 2.0) * noise for c in CV_CANDIDATES})
    assert fit_router("meta_cv", SPEC, X_g, r, X_p, y).chosen == candidate


def test_a_constant_offset_of_psi_hat_does_not_count_against_a_member(monkeypatch):
    """The review's finding: preference-only's ψ̂ is η, the judge's offset away from the gold scale. Ranking the
    held-out gold rows perfectly but 0.47 too low, it routes best; by squared error (0.22 against 0.09 for a noisy
    ranking on the gold scale) it lost to mean-shift and was never chosen (red with the squared-error rule)."""
    X_g, r, X_p, y = world(60, useless_preferences=False)
    noise = 0.3 * np.random.default_rng(2).standard_normal(len(r))
    offsets = {"preference_only": r - 0.47, "mean_shift": r + noise}
    monkeypatch.setattr(routers, "cv_predictions",
                        lambda *a, **k: {c: offsets.get(c, r + 3 * noise) for c in CV_CANDIDATES})
    fitted = fit_router("meta_cv", SPEC, X_g, r, X_p, y)
    assert fitted.chosen == "preference_only"
    assert fitted.cv_errors["preference_only"] > fitted.cv_errors["mean_shift"]  # what the old rule went by


def test_the_held_out_predictions_are_the_chosen_members_out_of_fold_ones():
    """What App. A.1's w is chosen on (`fit_deployment`): the chosen member's ψ̂ of each gold row from the fold that
    did not see it, not the refitted router's in-sample ψ̂ (red with the in-sample predictions returned). Useless
    preferences, so the member learns from the gold rows (preference-only's ψ̂ is the same in and out of fold)."""
    X_g, r, X_p, y = world(60, useless_preferences=True)
    fitted, held_out = routers.fit_cv_router(SPEC, X_g, r, X_p, y, folds=3)
    assert fitted.chosen != "preference_only"
    oof = routers.cv_predictions(SPEC, X_g, r, X_p, y, candidates=(fitted.chosen,), folds=3)[fitted.chosen]
    a, b = fitted.calibration
    np.testing.assert_allclose(held_out, a + b * oof)
    assert not np.allclose(held_out, fitted.psi(X_g))


def test_the_synthetic_rounds_record_the_member_meta_cv_served():
    """Each round of `evaluate_synthetic` says which member meta_cv chose (the best CV score) and its test gain is that
    member's (red if the record and the refitted router disagree)."""
    from compass.router.study import evaluate_synthetic

    rounds = evaluate_synthetic(("A",), (40,), 1, LearnerSpec(n_estimators=5), N=640, D=8,
                                routers=(*CV_CANDIDATES, "meta_cv")).rounds
    served = rounds[rounds["router"] == "meta_cv"]
    assert rounds.loc[rounds["router"] != "meta_cv", "chosen"].isna().all() and served["chosen"].notna().all()
    for row in served.itertuples():
        assert row.chosen == _one_se(json.loads(row.cv_scores), json.loads(row.cv_difference_se), tolerance=1e-5)
        member = rounds[(rounds["router"] == row.chosen) & (rounds["round"] == row.round)]
        assert member["mean_gain"].item() == pytest.approx(row.mean_gain)


def test_the_served_psi_hat_is_in_gold_units_when_preference_only_is_chosen():
    """Issue 46 second review (blocker): preference-only's ψ̂ is η, a constant 0.47 below ψ. The rank-based choice
    serves it, and a deployment reads ψ̂ as a gold gain (dollar-cost rule, w ≥ 0, the CLI's gold units): after the
    calibration on the chosen member's out-of-fold ψ̂ the served ψ̂ averages the gold labels, in the exported nodes
    too (red without the calibration: mean ≈ mean(r) − 0.47). Preference-only never sees the gold rows, so its ψ̂ of
    the gold queries is a fair serving of them."""
    from compass.router.export import forest_nodes, forest_predict

    rng = np.random.default_rng(5)
    X_g, X_p, X_t = rng.standard_normal((60, 3)), rng.standard_normal((800, 3)), rng.standard_normal((400, 3))
    r = 0.5 + X_g[:, 0] + 2.0 * rng.standard_normal(60)
    y = 0.5 + X_p[:, 0] - 0.47
    fitted, held_out = routers.fit_cv_router(SPEC, X_g, r, X_p, y, folds=3)
    assert fitted.chosen == "preference_only"
    assert np.mean(fitted.psi(X_g)) == pytest.approx(r.mean(), abs=0.05)  # served on the gold queries
    assert np.mean(held_out) == pytest.approx(r.mean(), abs=1e-9)
    served = forest_predict(forest_nodes(fitted.model, *fitted.calibration), X_t)
    np.testing.assert_allclose(served, fitted.psi(X_t), atol=1e-9)


def test_each_fold_normalizes_the_gold_labels_on_its_training_rows_only():
    """Remark 1's c is refitted per fold (review item 6): one gold label of 40 inflates sd(r); each fold's gold-only
    ψ̂ is the forest fitted on c_k·r[train] with c_k from that fold's training rows, so the fold that holds the
    outlier out learns on a far larger scale (red with c from every gold row, as before)."""
    from sklearn.model_selection import KFold

    from compass.router.normalize import scale_constant

    X_g, r, X_p, y = world(40, useless_preferences=False)
    r[0] = 40.0
    oof = routers.cv_predictions(SPEC, X_g, r, X_p, y, candidates=("gold_only",), folds=4,
                                 normalization="variance")["gold_only"]
    for train, held in KFold(4, shuffle=True, random_state=SPEC.seed).split(X_g):
        labels = scale_constant(r[train], y) * r[train]
        expected = fit_router("gold_only", SPEC, X_g[train], labels, X_p, y).psi(X_g[held])
        np.testing.assert_allclose(oof[held], expected, rtol=1e-12)


FOLD_DIFFICULTY = np.array([0.10, 0.30, 0.50, 0.20, 0.40])  # what every member scores alike on a fold's rows


def test_the_one_standard_error_rule_prefers_the_simpler_member_within_noise():
    """Review item 7: a CATE member whose lead over a simpler member is within one SE of their paired fold
    differences loses to the simplest such member; ahead by more, it wins (red with the plain maximum, which serves
    the noisier member)."""
    best = FOLD_DIFFICULTY
    close = {"preference_only": best - 0.2, "gold_only": best - np.array([0.05, -0.03, 0.04, -0.02, 0.01]),
             "mean_shift": best - np.array([0.03, 0.0, 0.02, 0.0, 0.01]), "meta_dr": best, "meta_r": best - 0.05}
    assert routers.one_se_choice(close) == "gold_only"  # lead 0.010, paired SE 0.016
    far = {**close, "gold_only": best - 0.1, "mean_shift": best - 0.08}
    assert routers.one_se_choice(far) == "meta_dr"


def test_the_one_standard_error_rule_compares_members_on_paired_folds():
    """Issue 46 third review: the folds' rows differ in how well any ψ̂ can route them (here 0.1 to 0.5), so the
    best member's own fold scores spread (SE 0.07) although a simpler member trails it by 0.03 on every fold. The
    SE of the per-fold differences (0.001) shows the lead is real: the CATE member is served. Red with the
    marginal SE of the best member's fold scores (the rule before), which serves preference-only."""
    steady = np.array([0.030, 0.028, 0.033, 0.029, 0.031])
    scores = {"preference_only": FOLD_DIFFICULTY - steady, "gold_only": FOLD_DIFFICULTY - 0.2,
              "mean_shift": FOLD_DIFFICULTY - steady - 0.01, "meta_dr": FOLD_DIFFICULTY, "meta_r": FOLD_DIFFICULTY - 0.1}
    assert routers.one_se_choice(scores) == "meta_dr"
    se = routers.difference_se(scores)
    nadeau_bengio = np.sqrt(1 / 5 + 1 / 4)  # K = 5 folds: n_test/n_train = 1/(K − 1)
    assert se["meta_dr"] == 0.0 and se["preference_only"] == pytest.approx(np.std(steady, ddof=1) * nadeau_bengio)


def test_a_noisier_member_does_not_win_by_its_wider_band_over_a_simpler_better_one():
    """Issue 46 fourth review, finding 1: preference-only trails the best by 0.010 on every fold (paired SE 0.0005),
    meta_dr trails by 0.040 on average but erratically (paired SE 0.07), so meta_dr's own band covers its gap while
    preference-only's does not. Preference-only is simpler and better: meta_dr is not served, the best (R) is. Red on
    the rule before (per-member bands without the simpler-is-not-better condition), which served meta_dr."""
    b = FOLD_DIFFICULTY
    scores = {"preference_only": b - np.array([0.010, 0.011, 0.009, 0.010, 0.010]), "gold_only": b - 0.2,
              "mean_shift": b - 0.2, "meta_dr": b - 0.04 + np.array([0.12, -0.10, 0.08, -0.12, 0.02]), "meta_r": b}
    se = routers.difference_se(scores)
    assert 0.04 <= se["meta_dr"] and se["preference_only"] < 0.01  # the premise: meta_dr alone is within its band
    assert routers.one_se_choice(scores) == "meta_r"


def test_a_non_finite_fold_score_is_an_error_naming_the_member():
    scores = {"preference_only": FOLD_DIFFICULTY, "gold_only": FOLD_DIFFICULTY.copy()}
    scores["gold_only"][2] = np.nan
    with pytest.raises(ValueError, match="gold_only"):
        routers.one_se_choice(scores)


def test_the_served_router_picks_a_cate_member_where_one_routes_best():
    """Positive control (issue 46 third review; `synthetic.make_query_dependent_bias`): where a CATE member beats both
    single sources, meta_cv serves it and routes test queries better than either single source (red if the rule
    always serves the simplest member). Seed 1: `router_headline.py positive-control` serves R in 4 of seeds 0-4
    (gold-only at seed 0, where R's lead is within one paired SE), so this is one world, not a rate."""
    from compass.router.evaluation import efficiency_gain, interior_mean
    from compass.router.synthetic import make_query_dependent_bias

    d, spec = make_query_dependent_bias(seed=1), LearnerSpec(n_estimators=6, seed=1)
    fitted = fit_router("meta_cv", spec, d.X_g, d.r, d.X_p, d.y, cate=replace(spec, min_samples_leaf=20))
    gain = {name: float(interior_mean(efficiency_gain(router.psi(d.X_test), d.psi_test, seed=0))) for name, router
            in {"served": fitted, **{m: fit_router(m, spec, d.X_g, d.r, d.X_p, d.y) for m in SINGLE}}.items()}
    assert fitted.chosen in ("meta_dr", "meta_r"), (fitted.cv_scores, gain)
    assert gain["served"] > max(gain[m] for m in SINGLE), gain
