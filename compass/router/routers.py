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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compass.router.learners import LearnerSpec, out_of_sample, predict

ROUTERS = ("oracle", "pooled", "preference_only", "gold_only", "mean_shift", "meta_r", "meta_dr")


@dataclass
class FittedRouter:
    name: str
    model: object  # the final regression ψ̂
    delta: object | None = None  # the CATE model Δ̂ of a meta-router (inspectable)
    propensity_clipped: int = 0  # rows whose p̂ hit the clip bounds

    def psi(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(X)


def _propensity(spec: LearnerSpec, S: np.ndarray, T: np.ndarray, mode: str,
                clip: tuple[float, float]) -> tuple[np.ndarray, int]:
    """p̂(s) = Pr(gold | s): learned by H (out of sample) or the constant n/(n+m) (spec §2.4), clipped (§5.1)."""
    p = np.full(len(T), T.mean()) if mode == "constant" else out_of_sample(spec, S, T, classify=True)[1]
    clipped = int(np.sum((p < clip[0]) | (p > clip[1])))
    return np.clip(p, *clip), clipped


def fit_delta(spec: LearnerSpec, X_g: np.ndarray, r: np.ndarray, X_p: np.ndarray, y: np.ndarray, learner: str,
              propensity: str = "learned", clip: tuple[float, float] = (0.01, 0.99),
              cate: LearnerSpec | None = None) -> tuple[object, int]:
    """Δ̂ = CATE of the gold 'treatment' (Lemma 1) by the R-learner (S3, weighted regression of õ/t̃ with
    weights t̃², Nie & Wager) or the DR-learner (S4, Kennedy's pseudo-outcome). Nuisances are out of sample.
    `cate` sets a smoother learner for Δ̂ (spec §4: larger leaves at n ≈ 100); default: the same class H."""
    S = np.vstack([X_g, X_p])
    T = np.concatenate([np.ones(len(r)), np.zeros(len(y))])
    O = np.concatenate([r, y])
    p, clipped = _propensity(spec, S, T, propensity, clip)
    final = (cate or spec).regressor()
    if learner == "r":
        gamma = out_of_sample(spec, S, O)[1]
        o_res, t_res = O - gamma, T - p
        final.fit(S, o_res / t_res, sample_weight=t_res**2)
    elif learner == "dr":
        mu1, oob1 = out_of_sample(spec, X_g, r)
        mu0, oob0 = out_of_sample(spec, X_p, y)
        m1 = np.concatenate([oob1, predict(mu1, X_p)])
        m0 = np.concatenate([predict(mu0, X_g), oob0])
        phi = m1 - m0 + (T - p) / (p * (1 - p)) * (O - np.where(T == 1, m1, m0))
        final.fit(S, phi)
    else:
        raise ValueError(f"unknown CATE learner {learner!r}; use 'r' or 'dr'")
    return final, clipped


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
        return FittedRouter(name, model, delta, clipped)
    else:
        raise ValueError(f"unknown router {name!r}; use one of {ROUTERS}")
    return FittedRouter(name, model)
