"""Multi-model meta-router (seed 003, App. A.2) on the SYNTHETIC N-model generator with known per-model quality,
closed forms for the BTL scale fix and the score projection, and the N = 2 reduction to the two-model router."""

import numpy as np
import pandas as pd
import pytest

from compass.router.btl import btl_eta_hat, fit_btl, preference_expectation
from compass.router.decision import route_to_primary
from compass.router.learners import LearnerSpec
from compass.router.multi import PairLabels, fit_multi_router, score_projection
from compass.router.multi_study import evaluate_multi_real, multi_comparisons, policy_choices
from compass.router.normalize import scale_constant
from compass.router.routers import fit_router
from compass.router.synthetic import make_data, make_multi_data, preference_labels

FAST = LearnerSpec(n_estimators=60, min_samples_leaf=5, seed=0)


def _quality(data, choice):
    return data.quality_test[np.arange(len(choice)), choice].mean()


def test_btl_scale_fix_matches_the_label_expectation_in_closed_form():
    """ERRATA of spec §2.10: with θ_k − θ_ℓ = ln 3 the BTL probability is η = 3/4, and labels on {−1, 0, 1} have
    E[y] = 2η − 1 = 1/2 (ties included), not η. Fitting BTL on y mapped to {0, ½, 1} recovers the scores."""
    assert preference_expectation(np.log(3.0), 0.0) == pytest.approx(0.5)
    assert preference_expectation(0.0, np.log(3.0)) == pytest.approx(-0.5)
    rng = np.random.default_rng(0)
    m = np.full(200_000, 0.5)
    y = preference_labels(rng.random(m.size), m, 0.2 * (1 - np.abs(m)))
    assert set(np.unique(y)) == {-1.0, 0.0, 1.0}
    assert y.mean() == pytest.approx(0.5, abs=4 * y.std() / np.sqrt(y.size))
    # three models, scores (0, ln 3, −ln 2), every pair compared, no covariates: the MLE is the truth
    theta = np.array([0.0, np.log(3.0), -np.log(2.0)])
    k = rng.integers(0, 3, 30_000)
    l = (k + rng.integers(1, 3, k.size)) % 3
    mean = preference_expectation(theta[k], theta[l])
    y = preference_labels(rng.random(k.size), mean, 0.2 * (1 - np.abs(mean)))
    fitted = fit_btl(np.empty((k.size, 0)), k, l, y, 3).theta(np.empty((1, 0)))[0]
    assert fitted == pytest.approx(theta, abs=0.06)


def test_btl_identifies_a_pair_never_compared():
    """App. A.2: under BTL, η_{k,ℓ}(s) of a pair never compared is identified through the others. Preferences
    only on (1, 0) and (2, 0) with scores linear in s; the fitted 2η̂ − 1 of (2, 1) matches the true one, and the
    cross-fitted DR nuisance (`btl_eta_hat`) returns it for gold rows of that pair."""
    rng = np.random.default_rng(5)
    coef = np.array([[0.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-0.3, 0.0, -1.5]])  # θ_k(s) = coef_k · (1, s1, s2)
    X = rng.standard_normal((40_000, 2))
    k, l = rng.integers(1, 3, len(X)), np.zeros(len(X), int)
    th = np.hstack([np.ones((len(X), 1)), X]) @ coef.T
    mean = preference_expectation(th[np.arange(len(X)), k], th[:, 0])
    y = preference_labels(rng.random(len(X)), mean, 0.2 * (1 - np.abs(mean)))
    grid = np.array([[-1.0, 1.0], [0.0, 0.0], [1.0, -0.5], [0.5, 1.5]])
    truth = preference_expectation(grid @ coef[2, 1:] + coef[2, 0], grid @ coef[1, 1:] + coef[1, 0])
    twos, ones = np.full(len(grid), 2), np.ones(len(grid), int)
    assert fit_btl(X, k, l, y, 3).expectation(grid, twos, ones) == pytest.approx(truth, abs=0.03)
    on_gold, on_pref = btl_eta_hat(grid, twos, ones, X[:2000], k[:2000], l[:2000], y[:2000], 3)
    assert on_gold == pytest.approx(truth, abs=0.12)  # 2,000 rows, ridge-shrunk
    assert np.mean(np.abs(on_pref - mean[:2000])) < 0.05 and np.corrcoef(on_pref, mean[:2000])[0, 1] > 0.98


def test_score_projection_in_closed_form():
    """Least-squares scores from pairwise gains: exact on a star graph (our real data: one M_p against two M_a),
    the mean of ψ_{k,ℓ} over ℓ on the complete graph, and an error when a model is never compared."""
    q = np.array([[0.2, 1.0, -0.4], [0.0, -0.3, 0.9]])  # true qualities of 3 models on 2 queries
    star = [(1, 0), (2, 0)]
    theta = np.column_stack([q[:, k] - q[:, l] for k, l in star]) @ score_projection(star, 3)
    assert theta == pytest.approx(q - q.mean(axis=1, keepdims=True))
    full = [(2, 1), (2, 0), (1, 0)]
    noisy = np.array([[0.5, 0.1, -0.2]])  # inconsistent gains ψ_21, ψ_20, ψ_10; θ_k = (1/3) Σ_ℓ ψ_kℓ
    theta = noisy @ score_projection(full, 3)
    assert theta[0] == pytest.approx([(-0.1 + 0.2) / 3, (-0.2 - 0.5) / 3, (0.5 + 0.1) / 3])
    with pytest.raises(ValueError, match="do not connect all 4 models"):
        score_projection([(1, 0), (3, 2)], 4)


def test_two_models_reduce_to_the_two_model_meta_router():
    """N = 2: one compared pair, the pair columns are constant and dropped, so ψ̂_{1,0} is the two-model DR
    meta-router's ψ̂ on the same data and seeds (exactly), also when half the rows come as (0, 1) with the
    outcome's sign flipped; routing by scores is eq. 4 with the cost gap C_1 − C_0."""
    d = make_data(n_gs=300, N=1500, D=8, seed=4)
    c = scale_constant(d.r, d.y)
    cate = LearnerSpec(n_estimators=60, min_samples_leaf=50, seed=0)
    two = fit_router("meta_dr", FAST, d.X_g, c * d.r, d.X_p, d.y, cate=cate).psi(d.X_test)
    flip = np.arange(len(d.y)) % 2 == 1
    gold = PairLabels(d.X_g, np.ones(len(d.r), int), np.zeros(len(d.r), int), c * d.r)
    pref = PairLabels(d.X_p, np.where(flip, 0, 1), np.where(flip, 1, 0), np.where(flip, -d.y, d.y))
    multi = fit_multi_router("meta_dr", FAST, gold, pref, 2, cate=cate)
    assert multi.psi(d.X_test, 1, 0) == pytest.approx(two, abs=1e-12)
    assert multi.psi(d.X_test, 0, 1) == pytest.approx(-two, abs=1e-12)
    costs = np.array([0.0, 1.0])
    for w in (0.0, 0.2):
        assert (multi.route(d.X_test, w, costs) == 1).tolist() == route_to_primary(two, w, 1.0).tolist()


def test_unbiased_preferences_and_many_labels_find_the_best_model():
    """An unbiased judge (same ordering as the gold quality), 1,500 gold and 3,000 preference pairs over 3 models:
    the DR meta-router sends most test queries to their truly best model and loses little quality to the
    per-query ceiling. Measured on this seed: 83.5 % and 0.026; the bounds leave three binomial standard errors
    (1,000 test queries) on the share."""
    data = make_multi_data(3, 1500, n_pref=3000, judge_bias=0.0, seed=1)
    choice = policy_choices(data, ("meta_dr",), FAST)["meta_dr"]
    best = data.quality_test.argmax(axis=1)
    assert (choice == best).mean() > 0.78
    assert _quality(data, best) - _quality(data, choice) < 0.05


def test_debiased_multi_router_beats_pooled_under_a_biased_judge():
    """The judge favours the costlier models (heterogeneously): over 3 Monte Carlo rounds the DR meta-router's
    true expected quality exceeds the pooled router's by more than two standard errors of the paired difference."""
    diff = []
    for seed in range(3):
        data = make_multi_data(3, 300, n_pref=2000, judge_bias=1.0, seed=seed)
        picks = policy_choices(data, ("pooled", "meta_dr"), LearnerSpec(n_estimators=60, seed=seed))
        diff.append(_quality(data, picks["meta_dr"]) - _quality(data, picks["pooled"]))
    diff = np.asarray(diff)
    assert diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(len(diff)), diff


def test_bad_pairs_and_btl_outside_the_dr_learner_are_clear_errors():
    X = np.zeros((3, 2))
    gold = PairLabels(X, np.array([1, 2, 2]), np.array([0, 2, 1]), np.zeros(3))
    with pytest.raises(ValueError, match=r"row 1: pair \(2, 2\)"):
        fit_multi_router("meta_dr", FAST, gold, gold, 3)
    ok = PairLabels(X, np.array([1, 2, 2]), np.array([0, 0, 1]), np.array([1.0, -1.0, 0.0]))
    with pytest.raises(ValueError, match="eta='btl' is the DR-learner's"):
        fit_multi_router("pooled", FAST, ok, ok, 3, eta="btl")


def _star_labels() -> pd.DataFrame:
    """Canonical raw.route_labels rows of two datasets sharing M_p = "P": on every query graded against both,
    P beats A1 by 1 and loses to A2 by 2; five extra gold rows against A1 only (never test rows) give the gold
    labels a spread; preferences agree with the grades."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(40):
        for alt, r in (("A1", 1.0), ("A2", -2.0)):
            rows.append({"query_id": f"g{i}", "model_a": alt, "label_kind": "gold", "outcome": r})
    rows += [{"query_id": f"x{i}", "model_a": "A1", "label_kind": "gold", "outcome": r}
             for i, r in enumerate((3.0, -1.0, 2.0, 0.0, 4.0))]
    for i in range(60):
        for alt, y in (("A1", 1.0), ("A2", -1.0)):
            rows.append({"query_id": f"p{i}", "model_a": alt, "label_kind": "preference", "outcome": y})
    frame = pd.DataFrame(rows).assign(model_p="P", query_text=None)
    vectors = {q: rng.standard_normal(4) for q in frame["query_id"].unique()}
    return frame.assign(embedding=frame["query_id"].map(vectors))


def test_real_data_demonstration_scores_policies_in_closed_form():
    """The star-graph demonstration on labels whose answer is known: hindsight and constant policies in closed
    form (12 test queries: A2 is 2 better than P, A1 1 worse), and a fitted router that sends everything to A2,
    which it can only do if the pair orientation and the score projection are right."""
    table, _ = evaluate_multi_real(_star_labels(), 2, LearnerSpec(n_estimators=10), d=3, routers=("gold_only",))
    got = table.set_index(["budget", "policy"])
    expect = {("w = 0", "hindsight"): 2.0, ("w = 0", "always A1"): -1.0, ("w = 0", "always A2"): 2.0,
              ("w = 0", "always P"): 0.0, ("w = 0", "gold_only"): 2.0, ("50% to M_p", "hindsight"): 1.0,
              ("50% to M_p", "always A1"): -0.5, ("50% to M_p", "gold_only"): 1.0}
    for key, value in expect.items():
        assert got.loc[key, "quality"] == pytest.approx(value), key
    assert ("50% to M_p", "always P") not in got.index
    assert got.loc[("50% to M_p", "gold_only"), ["share P", "share A1", "share A2"]].tolist() == [0.5, 0.0, 0.5]


def test_multi_comparisons_pick_the_best_non_debiasing_router_and_correct_re_splits():
    """Per cell, meta (DR) against gold-only and against the better of pooled / preference-only (here pooled in the
    first cell, preference-only in the second); on re-splits of one data set (n_test of n_total held out) the
    interval is Nadeau & Bengio's, sqrt(1 + k·n_test/(n_total − n_test)) times the plain one (k = 4 rounds).
    Mutations: the worse non-debiasing router as baseline, or the correction dropped: red."""
    rng = np.random.default_rng(0)
    rows = []
    for cell, (pooled, pref) in enumerate(((0.5, 0.4), (0.4, 0.5))):
        for rnd in range(4):
            base = rng.normal(0, 0.05)
            for policy, q in (("gold_only", 0.3), ("pooled", pooled), ("preference_only", pref), ("meta_dr", 0.6),
                              ("true_best", 0.9)):
                rows.append({"cell": cell, "round": rnd, "policy": policy, "quality": q + base + rng.normal(0, 0.01)})
    runs = pd.DataFrame(rows)
    fresh = multi_comparisons(runs, ["cell"]).set_index(["cell", "router", "baseline"])
    assert set(fresh.loc[0].loc["meta_dr"].index) == {"gold_only", "pooled"}
    assert set(fresh.loc[1].loc["meta_dr"].index) == {"gold_only", "preference_only"}
    assert fresh.loc[(1, "meta_dr", "preference_only"), "mean_difference"] == pytest.approx(0.1, abs=0.02)
    assert "true_best" not in fresh.index.get_level_values("router")
    split = multi_comparisons(runs, ["cell"], n_test=30, n_total=100).set_index(["cell", "router", "baseline"])
    width = (split["hi"] - split["lo"]) / (fresh["hi"] - fresh["lo"])
    assert width.to_numpy() == pytest.approx(np.sqrt(1 + 4 * 30 / 70))
