"""The routers of seed 003 §4.1 (spec §2.8), each an estimate ψ̂ of the gold-standard quality gain
ψ(q) = E[q(M_p) − q(M_a) | q], all with the same learner class H.

Inputs are the gold set (X_g, r) and the preference set (X_p, y): features of the queries (an embedding
after PCA, spec §2.1), gold labels r already scale-normalized (`normalize`), preference labels y ∈ [−1, 1].

* pooled            one regression on D_G ∪ D_P treating r and y alike (RouteLLM-style)
* preference_only   y on the preference set;  gold_only: r on the gold set
* mean_shift        pooled after shifting y by the mean gap r̄ − ȳ (ablation ii: a constant Δ̂)
* meta_r, meta_dr   §3.3: Δ̂ by the R-learner (S3) or DR-learner (S4) on the pooled data with
                    t = 1 for gold rows, then eq. 6: one regression on D_G ∪ {(q′, y + Δ̂(q′))}
* oracle            gold labels for every training query (needs r on the preference queries too)
* routellm_mf, routellm_sw   what practitioners deploy instead (compass.router.routellm): RouteLLM's matrix-
                    factorization and similarity-weighted ranking routers on the pooled labels
* meta_dr_overlap   §2.11 (spec §2.11), proposed but not evaluated in the paper: when gold and preference
                    queries come from different distributions, keep every gold row and only the preference
                    rows inside the overlap region (the propensity p̂(s) = Pr(gold | s) inside `overlap`, i.e.
                    a bounded density ratio), re-normalize within the overlap and fit the DR meta-router there
* meta_cv           ours (issue 46): the simplest member of CV_CANDIDATES (preference-only, gold-only, mean-shift,
                    DR, R) whose out-of-fold ψ̂ routes the held-out gold rows within one corrected paired SE of
                    the best, among those no simpler member beats (CV_CRITERION, `cv_scores`, `one_se_choice`),
                    chosen at fit time, refitted on all rows and calibrated to gold units (`calibrate`); a CATE
                    stage that adds more noise than the bias it removes loses to a simpler member
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from compass.resampling import corrected_se
from compass.router.evaluation import efficiency_gain, interior_mean
from compass.router.learners import LearnerSpec, out_of_sample, predict
from compass.router.normalize import scale_constant
from compass.router.routellm import MatrixFactorizationRouter, SimilarityWeightedRouter

ROUTERS = ("oracle", "pooled", "preference_only", "gold_only", "mean_shift", "meta_r", "meta_dr", "meta_dr_overlap",
           "routellm_mf", "routellm_sw", "meta_cv")
# meta_cv's candidates, simplest first: one regression on one label source (preference-only, then gold-only), one
# on both with a constant shift (mean-shift), then eq. 6 with a CATE stage (DR, then R, whose weights t̃² are
# the further nuisance); the one-standard-error rule takes the first within one SE of the best. Its gold folds.
CV_CANDIDATES = ("preference_only", "gold_only", "mean_shift", "meta_dr", "meta_r")
CV_FOLDS = 5
# What meta_cv ranks its candidates by (exported with the router): the realized gold gain of routing each fold's
# held-out gold rows by each candidate's out-of-fold ψ̂, averaged over folds (`cv_scores`), and the simplest member
# within one standard error of the best that no simpler member beats on mean, the SE of its paired per-fold
# differences with the best, Nadeau-Bengio corrected (`one_se_choice`, `difference_se`). The squared error it
# replaced is still reported.
CV_CRITERION = "oof_routing_gain_one_corrected_paired_se_pareto"
# §2.11 overlap region: the density ratio f_gold(s) / f_pref(s) within [1/19, 19]. It is p̂/(1 − p̂) · (1 − κ)/κ with
# κ = n/(n + m), so the region does not move with the gold share (at κ = 1/2 it is p̂ ∈ [0.05, 0.95]).
OVERLAP_RATIO = 19.0


@dataclass
class FittedRouter:
    name: str
    model: object  # the final regression ψ̂
    delta: object | None = None  # the CATE model Δ̂ of a meta-router (inspectable)
    propensity_clipped: int = 0  # rows whose p̂ hit the clip bounds
    preference_used: int | None = None  # preference rows the router learned from (meta_dr_overlap: inside the overlap)
    chosen: str | None = None  # meta_cv: the candidate it chose at fit time
    cv_errors: dict[str, float] | None = None  # meta_cv: each candidate's held-out squared gold error (not the rule)
    cv_scores: dict[str, float] | None = None  # meta_cv: each candidate's CV_CRITERION, the larger the better
    cv_criterion: str | None = None  # meta_cv: CV_CRITERION
    cv_score_se: dict[str, float] | None = None  # meta_cv: each candidate's standard error of its fold scores
    cv_difference_se: dict[str, float] | None = None  # meta_cv: SE of each candidate's fold differences with the best
    calibration: tuple[float, float] = (0.0, 1.0)  # meta_cv: (a, b) of ψ̂ = a + b·model(x) in gold units (`calibrate`)

    def psi(self, X: np.ndarray) -> np.ndarray:
        a, b = self.calibration
        return a + b * self.model.predict(X)


def _propensity(spec: LearnerSpec, S: np.ndarray, T: np.ndarray, mode: str,
                clip: tuple[float, float]) -> tuple[np.ndarray, int]:
    """p̂(s) = Pr(gold | s): learned by H (out of sample) or the constant n/(n+m) (spec §2.4), clipped (§5.1)."""
    p = np.full(len(T), T.mean()) if mode == "constant" else out_of_sample(spec, S, T, classify=True)[1]
    clipped = int(np.sum((p < clip[0]) | (p > clip[1])))
    return np.clip(p, *clip), clipped


def fit_delta(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray, learner: str,
              propensity: str = "learned", clip: tuple[float, float] = (0.01, 0.99),
              cate: LearnerSpec | None = None,
              eta_hat: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[object, int]:
    """Δ̂ = CATE of the gold 'treatment' (Lemma 1) by the R-learner (S3, weighted regression of õ/t̃ with
    weights t̃², Nie & Wager) or the DR-learner (S4, Kennedy's pseudo-outcome). Nuisances are out of sample.
    `cate` sets a smoother learner for Δ̂ (spec §4: larger leaves at n ≈ 100); default: the same class H.
    `eta_hat` (DR only) replaces the preference outcome model by a structured one, (η̂ on the gold rows,
    out-of-sample η̂ on the preference rows) on the label scale (App. A.2's BTL: `btl.btl_eta_hat`)."""
    S = np.vstack([X_g, X_p])
    T = np.concatenate([np.ones(len(r)), np.zeros(len(y))])
    O = np.concatenate([r, y])
    p, clipped = _propensity(spec, S, T, propensity, clip)
    final = (cate or spec).regressor()
    if learner == "r":
        if eta_hat is not None:
            raise ValueError("eta_hat is the DR-learner's preference outcome model; the R-learner has none")
        gamma = out_of_sample(spec, S, O)[1]
        o_res, t_res = O - gamma, T - p
        final.fit(S, o_res / t_res, sample_weight=t_res**2)
    elif learner == "dr":
        mu1, oob1 = out_of_sample(spec, X_g, r)
        m1 = np.concatenate([oob1, predict(mu1, X_p)])
        if eta_hat is None:
            mu0, oob0 = out_of_sample(spec, X_p, y)
            eta_hat = (predict(mu0, X_g), oob0)
        m0 = np.concatenate(eta_hat)
        phi = m1 - m0 + (T - p) / (p * (1 - p)) * (O - np.where(T == 1, m1, m0))
        final.fit(S, phi)
    else:
        raise ValueError(f"unknown CATE learner {learner!r}; use 'r' or 'dr'")
    return final, clipped


def overlap_region(X_g: np.ndarray, X_p: np.ndarray, ratio: float = OVERLAP_RATIO,
                   seed: int = 0, penalty_c: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """§2.11 with a probabilistic classifier as the density-ratio estimate (Sugiyama et al. 2012): cross-fitted
    p̂(s) = Pr(gold | s) over the stacked rows [X_g; X_p] (standardized features, L2 penalty C = `penalty_c`), and the mask of
    rows whose density ratio f_gold/f_pref = p̂/(1 − p̂) · (1 − κ)/κ lies in [1/ratio, ratio], κ = n/(n + m): the
    class prior is divided out, so identical distributions overlap at any gold share (tested).

    A logistic regression, not the learner class H: a forest's vote shares are not calibrated probabilities, and a
    leaf that never split on the direction separating the two pools reaches far into the other pool, so a forest
    reports overlap where the supports are disjoint (tested)."""
    S = np.vstack([X_g, X_p])
    T = np.concatenate([np.ones(len(X_g)), np.zeros(len(X_p))]).astype(int)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    classifier = make_pipeline(StandardScaler(), LogisticRegression(C=penalty_c, max_iter=5000))
    p = cross_val_predict(classifier, S, T, cv=folds, method="predict_proba")[:, 1]
    kappa = T.mean()
    with np.errstate(divide="ignore"):
        density_ratio = p / (1 - p) * (1 - kappa) / kappa
    return p, (density_ratio >= 1 / ratio) & (density_ratio <= ratio)


def _fit_overlap_router(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray,
                        overlap: float = OVERLAP_RATIO, **meta) -> FittedRouter:
    """§2.11: Δ̂ from the DR-learner on the overlapping rows of D, gold re-scaled to the preference variance within
    the overlap, eq. 6 on all gold rows plus the overlapping preference rows. With fewer than 10 overlapping
    rows of either kind there is nothing to debias: the router is the gold-only one (preference_used = 0)."""
    _, inside = overlap_region(X_g, X_p, overlap, spec.seed)
    in_g, in_p = inside[:len(r)], inside[len(r):]
    if in_g.sum() < 10 or in_p.sum() < 10 or np.std(r[in_g]) == 0:
        return FittedRouter("meta_dr_overlap", spec.regressor().fit(X_g, r), preference_used=0)
    r = r * (np.std(y[in_p], ddof=1) / np.std(r[in_g], ddof=1))
    delta, clipped = fit_delta(spec, X_g[in_g], r[in_g], X_p[in_p], y[in_p], "dr", **meta)
    model = spec.regressor().fit(np.vstack([X_g, X_p[in_p]]), np.concatenate([r, y[in_p] + delta.predict(X_p[in_p])]))
    return FittedRouter("meta_dr_overlap", model, delta, clipped, preference_used=int(in_p.sum()))


def cv_predictions(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray,
                   candidates: tuple[str, ...] = CV_CANDIDATES, folds: int = CV_FOLDS, normalization: str = "none",
                   **meta) -> dict[str, np.ndarray]:
    """Each candidate's out-of-fold ψ̂ of every gold row: K folds of D_G, each candidate refitted on the other gold
    rows and every preference row. Remark 1's scale constant is refitted per fold on its training rows only
    (`normalization`): r may arrive as c·r with c from every gold row, and scale_constant(c·r[train], y) = c_k/c for
    every mode (each is scale-equivariant), so a fold learns on c_k·r[train] without its held-out rows' labels."""
    predictions = {name: np.empty(len(r)) for name in candidates}
    for train, held in cv_folds(len(r), folds, spec.seed):
        r_train = scale_constant(r[train], y, normalization) * r[train]
        for name in candidates:
            router = fit_router(name, spec, X_g[train], r_train, X_p, y, **(meta if name.startswith("meta") else {}))
            predictions[name][held] = router.psi(X_g[held])
    return predictions


def cv_folds(n: int, folds: int = CV_FOLDS, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training, held-out) indices of the K gold folds; the same split for the fits and the per-fold scores."""
    return list(KFold(folds, shuffle=True, random_state=seed).split(np.zeros((n, 1))))


def cv_errors(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray,
              candidates: tuple[str, ...] = CV_CANDIDATES, folds: int = CV_FOLDS, **meta) -> dict[str, float]:
    """Each candidate's mean squared error (ψ̂(q) − r(q))² on held-out gold rows (`cv_predictions`). Reported, not
    the rule: it charges preference-only for the judge's constant offset, which routing never sees (`cv_scores`)."""
    return squared_errors(cv_predictions(spec, X_g, r, X_p, y, candidates, folds, **meta), r)


def squared_errors(predictions: dict[str, np.ndarray], r: np.ndarray) -> dict[str, float]:
    return {name: float(np.mean((psi - r) ** 2)) for name, psi in predictions.items()}


def fold_scores(predictions: dict[str, np.ndarray], r: np.ndarray, folds: int = CV_FOLDS,
                seed: int = 0) -> dict[str, np.ndarray]:
    """Each candidate's score on each fold's held-out gold rows (`cv_scores`' quantity, one number per fold)."""
    split = cv_folds(len(r), folds, seed)
    return {name: np.array([interior_mean(efficiency_gain(psi[held], r[held], seed=seed)) for _, held in split])
            for name, psi in predictions.items()}


def difference_se(scores: dict[str, np.ndarray]) -> dict[str, float]:
    """Each candidate's standard error of its paired per-fold differences with the best candidate (the largest mean
    fold score), widened for K-fold's overlapping training sets by Nadeau & Bengio's (2003) correction with
    n_test/n_train = 1/(K − 1) (`resampling.corrected_se`: s·√(1/K + 1/(K − 1)), ×1.50 at K = 5): 0 for the best
    itself and with one fold. All candidates are scored on the same held-out rows of each fold, so the rows'
    difficulty, shared by every candidate, cancels in the difference; the marginal SE of the best's fold scores
    keeps it (ESL §7.10 leaves the SE open)."""
    means = {name: float(np.mean(v)) for name, v in scores.items()}
    best = scores[max(means, key=means.__getitem__)]
    return {name: corrected_se(best - v, 1 / (len(v) - 1)) if len(v) > 1 else 0.0 for name, v in scores.items()}


def one_se_choice(scores: dict[str, np.ndarray]) -> str:
    """The one-standard-error rule (Hastie, Tibshirani & Friedman, ESL §7.10) on paired folds: walking the candidates
    in the order given (simplest first, CV_CANDIDATES), the first whose mean fold score is within one standard error
    of the best mean, the SE of its own per-fold differences with the best (`difference_se`), among those that no
    simpler candidate beats on mean (the Pareto front of simplicity and mean). Differences within noise go to the
    simpler member; a member behind the best by a steady margin does not hide in the spread that the folds' rows
    give every member alike; and a noisier member does not win by its wider band over a simpler, better one (issue 46
    fourth review). A NaN fold score raises ValueError naming the candidate: no rule ranks an unscored member."""
    for name, v in scores.items():
        if not np.all(np.isfinite(v)):
            raise ValueError(f"one_se_choice: candidate {name!r} has a non-finite fold score ({list(map(float, v))})")
    means = {name: float(np.mean(v)) for name, v in scores.items()}
    best, se = max(means, key=means.__getitem__), difference_se(scores)
    simpler_best = -np.inf
    for name in scores:
        if means[name] >= simpler_best and means[best] - means[name] <= se[name]:
            return name
        simpler_best = max(simpler_best, means[name])
    return best


def cv_scores(predictions: dict[str, np.ndarray], r: np.ndarray, seed: int = 0,
              folds: int = CV_FOLDS) -> dict[str, float]:
    """CV_CRITERION: each candidate's realized gold gain over random routing when each fold's held-out gold rows are
    routed by its out-of-fold ψ̂, averaged over the primary-usage grid (`evaluation.interior_mean` of
    `efficiency_gain`, the quantity Fig. 1 plots and the study compares) and over the folds (`fold_scores`).

    Why not the squared error against r: routing uses ψ̂ only through the rule ψ̂(q) > w (eq. 4 with the binary
    costs of eq. 3), and App. A.1 chooses w as the held-out gold queries' quantile at the deployment's budget, so
    any increasing transform of ψ̂ routes the same queries. Preference-only's ψ̂ estimates η of eq. 2, not the gold
    target ψ = E[r | q] of eq. 1: an offset Δ̄ and a scale away, which (ψ̂ − r)² charges it for and routing does
    not. The gain is rank-based, hence invariant to both, and is what a deployment realizes at every share budget.
    With per-query dollar costs (Remark 2) the rule ψ̂(q) > w·(C_p(q) − C_a(q)) is invariant to ψ̂'s scale, not its
    offset; the criterion ranks candidates for the paper's binary costs.
    Only held-out rows enter (each ψ̂ from a fit that did not see its row's label); ties in ψ̂ are broken by a key
    seeded with `seed`, as in the evaluation; `seed` also draws the folds (`cv_folds`, as in `cv_predictions`)."""
    return {name: float(np.mean(v)) for name, v in fold_scores(predictions, r, folds, seed).items()}


def calibrate(psi_oof: np.ndarray, r: np.ndarray) -> tuple[float, float]:
    """(a, b) of the least-squares line r ≈ a + b·ψ̂ over the gold rows' out-of-fold ψ̂ (b > 0): the chosen member's ψ̂
    mapped to the gold scale of eq. 1. The rank-based choice (`cv_scores`) may pick preference-only, whose ψ̂ is η of
    eq. 2 (an offset Δ̄ and a scale away from ψ), but a deployment reads ψ̂ as a gold gain: the dollar-cost rule
    ψ̂ > w·(C_p − C_a) (Remark 2) is not offset-invariant, w ≥ 0, and `compass route` prints ψ̂ as the expected gain.
    A non-positive or undefined slope keeps the ranking and corrects the offset only: (mean r − mean ψ̂, 1)."""
    psi, r = np.asarray(psi_oof, dtype=float), np.asarray(r, dtype=float)
    spread = np.var(psi)
    slope = float(np.cov(psi, r, bias=True)[0, 1] / spread) if spread > 0 else 0.0
    slope = slope if slope > 0 else 1.0
    return float(r.mean() - slope * psi.mean()), slope


def fit_cv_router(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray,
                  folds: int = CV_FOLDS, normalization: str = "none", **meta) -> tuple[FittedRouter, np.ndarray]:
    """meta_cv: the simplest candidate within one standard error of the largest CV_CRITERION (`cv_scores`,
    `one_se_choice`), refitted on all rows and
    calibrated to gold units on its out-of-fold ψ̂ (`calibrate`, gold rows only); and that candidate's calibrated
    out-of-fold ψ̂ of the gold rows (held-out predictions of the chosen member, which a deployment chooses App. A.1's
    w on without refitting anything). `normalization`: Remark 1's scale constant, refitted within each fold
    (`cv_predictions`); r arrives normalized on every gold row, the units of the refit and of the calibration."""
    predictions = cv_predictions(spec, X_g, r, X_p, y, folds=folds, normalization=normalization, **meta)
    per_fold = fold_scores(predictions, r, folds, spec.seed)
    scores = {name: float(np.mean(v)) for name, v in per_fold.items()}
    chosen = one_se_choice(per_fold)  # dicts keep CV_CANDIDATES' order, simplest first
    se = {name: float(np.std(v, ddof=1) / np.sqrt(len(v))) for name, v in per_fold.items()}
    fitted = fit_router(chosen, spec, X_g, r, X_p, y, **(meta if chosen.startswith("meta") else {}))
    a, b = calibrate(predictions[chosen], r)
    return replace(fitted, name="meta_cv", chosen=chosen, cv_errors=squared_errors(predictions, r), cv_scores=scores,
                   cv_criterion=CV_CRITERION, cv_score_se=se, cv_difference_se=difference_se(per_fold),
                   calibration=(a, b)), a + b * predictions[chosen]


def fit_router(name: str, spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray,
               r_p: np.ndarray | None = None, **meta) -> FittedRouter:
    """Fit one router of `ROUTERS`; `r_p` (gold labels of the preference queries) only for the oracle;
    `meta` goes to `fit_delta` (propensity, clip, cate)."""
    model = spec.regressor()
    if name == "pooled":
        model.fit(np.vstack([X_g, X_p]), np.concatenate([r, y]))
    elif name == "preference_only":
        model.fit(X_p, y)
    elif name == "gold_only":
        model.fit(X_g, r)
    elif name == "mean_shift":
        model.fit(np.vstack([X_g, X_p]), np.concatenate([r, y + (r.mean() - y.mean())]))
    elif name == "oracle":
        if r_p is None:
            raise ValueError("the oracle router needs gold labels for the preference queries (r_p)")
        model.fit(np.vstack([X_g, X_p]), np.concatenate([r, r_p]))
    elif name in ("meta_r", "meta_dr"):
        delta, clipped = fit_delta(spec, X_g, r, X_p, y, name.removeprefix("meta_"), **meta)
        model.fit(np.vstack([X_g, X_p]), np.concatenate([r, y + delta.predict(X_p)]))  # eq. 6, pseudo-gold y + Δ̂
        return FittedRouter(name, model, delta, clipped, preference_used=len(y))
    elif name == "meta_dr_overlap":
        return _fit_overlap_router(spec, X_g, r, X_p, y, **meta)
    elif name == "meta_cv":
        return fit_cv_router(spec, X_g, r, X_p, y, **meta)[0]
    elif name in ("routellm_mf", "routellm_sw"):
        pooled = MatrixFactorizationRouter() if name == "routellm_mf" else SimilarityWeightedRouter()
        return FittedRouter(name, pooled.fit(np.vstack([X_g, X_p]), np.concatenate([r, y])), preference_used=len(y))
    else:
        raise ValueError(f"unknown router {name!r}; use one of {ROUTERS}")
    return FittedRouter(name, model, preference_used=0 if name in ("gold_only", "oracle") else len(y))
