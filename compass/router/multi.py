"""Multi-model meta-router (seed 003, App. A.2; spec §2.10): route each query over N models from pairwise gold
labels and pairwise preference labels, the preference bias removed per pair.

Records are quintets (s, k, ℓ, t, o): the query, the pair compared (k > ℓ, o favours k when positive), gold or
preference, the outcome. As the paper says, the pair joins the query as a covariate, (s, k, ℓ), and every step
of the two-model meta-router runs unchanged on those covariates: propensity Pr(t = 1 | s, k, ℓ), the DR-learner's
outcome models, Δ̂_{k,ℓ}(s), and objective (S2), one regression h_{k,ℓ}(s) on gold labels and pseudo-gold
labels y + Δ̂_{k,ℓ}(s). The pair is encoded as a signed one-hot e_k − e_ℓ (N columns: +1 at k, −1 at ℓ), which
trees split on as "model j on the better-side / worse-side / not compared"; columns constant over the training
rows carry nothing and are dropped, so with one compared pair (N = 2) the router *is* the two-model one.

Routing: gold gains are differences of per-model gold qualities, ψ_{k,ℓ}(s) = Q_k(s) − Q_ℓ(s), so the pairwise
estimates are projected onto additive scores, θ̂(s) = argmin_θ Σ_{(k,ℓ) compared} (θ_k − θ_ℓ − ψ̂_{k,ℓ}(s))²
with Σ_k θ_k = 0 (least squares on the comparison graph; with every pair compared θ̂_k = mean_ℓ ψ̂_{k,ℓ}), and
the query goes to argmax_k θ̂_k(s) − w·C_k(s) (eq. 4 over N models; N = 2 is ψ̂ > w·(C_p − C_a)). Only pairs
seen in training enter the projection, so pairs never compared (the paper's non-identification) are implied
by the graph, not extrapolated by the forest; the graph must be connected.

The BTL structure the paper suggests is for η (the preference side): `eta="btl"` replaces the DR-learner's
preference outcome model with a BTL fit, on the label scale 2η − 1 (the spec's ERRATA; `btl`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compass.router.btl import btl_eta_hat
from compass.router.learners import LearnerSpec
from compass.router.routers import FittedRouter, fit_router


@dataclass(frozen=True)
class PairLabels:
    """Pairwise records of one label kind: query features X, the pair (k, ℓ), outcome o (positive favours k)."""

    X: np.ndarray
    k: np.ndarray
    l: np.ndarray
    o: np.ndarray

    def canonical(self, n_models: int) -> PairLabels:
        """The paper's orientation k > ℓ: swapped pairs get the outcome's sign flipped (y and r are antisymmetric)."""
        k, l = np.asarray(self.k, dtype=int), np.asarray(self.l, dtype=int)
        bad = np.flatnonzero((k == l) | (np.minimum(k, l) < 0) | (np.maximum(k, l) >= n_models))
        if bad.size:
            i = bad[0]
            raise ValueError(f"row {i}: pair ({k[i]}, {l[i]}) is not two distinct models of 0..{n_models - 1}")
        swap = k < l
        return PairLabels(self.X, np.where(swap, l, k), np.where(swap, k, l),
                          np.where(swap, -1.0, 1.0) * np.asarray(self.o, dtype=float))


def pair_encoding(k: np.ndarray, l: np.ndarray, n_models: int) -> np.ndarray:
    """Signed one-hot e_k − e_ℓ of each row's pair, (n, n_models)."""
    rows = np.arange(len(k))
    out = np.zeros((len(k), n_models))
    out[rows, k] = 1.0
    out[rows, l] = -1.0
    return out


def pair_covariates(X: np.ndarray, k: np.ndarray, l: np.ndarray, n_models: int, columns: np.ndarray) -> np.ndarray:
    """Covariates (s, k, ℓ): the query features and the kept columns of the pair's signed one-hot."""
    return np.hstack([X, pair_encoding(k, l, n_models)[:, columns]])


def score_projection(pairs: list[tuple[int, int]], n_models: int) -> np.ndarray:
    """(n_pairs, n_models) map from pairwise gains ψ_{k,ℓ} (columns in `pairs` order) to least-squares scores θ
    with Σθ = 0: pinv of the comparison graph's incidence matrix, transposed. ValueError if disconnected."""
    B = pair_encoding(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), n_models)
    if np.linalg.matrix_rank(B) < n_models - 1:
        raise ValueError(f"the compared pairs {pairs} do not connect all {n_models} models: scores are not identified")
    return np.linalg.pinv(B).T


@dataclass
class MultiRouter:
    n_models: int
    columns: np.ndarray  # pair-encoding columns kept (those varying over the training rows)
    pairs: list[tuple[int, int]]  # pairs (k > ℓ) compared in training: the comparison graph
    projection: np.ndarray  # score_projection(pairs, n_models): pairwise gains -> scores
    router: FittedRouter  # the two-model router class fitted on covariates (s, k, ℓ)

    def psi(self, X: np.ndarray, k: int, l: int) -> np.ndarray:
        """ψ̂_{k,ℓ}(s) for every query, any orientation (ψ̂_{ℓ,k} = −ψ̂_{k,ℓ})."""
        if k < l:
            return -self.psi(X, l, k)
        return self.router.psi(pair_covariates(X, np.full(len(X), k), np.full(len(X), l), self.n_models,
                                               self.columns))

    def scores(self, X: np.ndarray) -> np.ndarray:
        """(n, n_models) additive quality scores θ̂(s), Σ_k θ̂_k = 0, from the compared pairs' ψ̂."""
        gains = np.column_stack([self.psi(X, k, l) for k, l in self.pairs])
        return gains @ self.projection

    def route(self, X: np.ndarray, w: float = 0.0, costs: np.ndarray | float = 0.0) -> np.ndarray:
        """Model index per query: argmax_k θ̂_k(s) − w·C_k(s); `costs` is (n_models,) or (n, n_models)."""
        if w < 0:
            raise ValueError(f"w must be >= 0, got {w}")
        return np.argmax(self.scores(X) - w * np.asarray(costs, dtype=float), axis=1)


def fit_multi_router(name: str, spec: LearnerSpec, gold: PairLabels, preference: PairLabels, n_models: int,
                     eta: str = "forest", **meta) -> MultiRouter:
    """Fit router `name` of `routers.ROUTERS` (but the oracle) on covariates (s, k, ℓ): for the meta-routers,
    Δ̂_{k,ℓ}(s) by the CATE learner, then (S2). Gold outcomes must already be scale-normalized (Remark 1, one
    constant for all pairs). `eta="btl"` (meta_dr only) gives the DR-learner a BTL preference model."""
    gold, preference = gold.canonical(n_models), preference.canonical(n_models)
    k_all, l_all = np.concatenate([gold.k, preference.k]), np.concatenate([gold.l, preference.l])
    codes = pair_encoding(k_all, l_all, n_models)
    columns = np.flatnonzero(codes.min(axis=0) < codes.max(axis=0))
    pairs = sorted({(int(k), int(l)) for k, l in zip(k_all, l_all)}, reverse=True)
    projection = score_projection(pairs, n_models)  # a disconnected comparison graph fails before any fitting
    Z_g, Z_p = (pair_covariates(rows.X, rows.k, rows.l, n_models, columns) for rows in (gold, preference))
    if eta == "btl":
        if name != "meta_dr":
            raise ValueError(f"eta='btl' is the DR-learner's preference model; router {name!r} has none")
        meta["eta_hat"] = btl_eta_hat(gold.X, gold.k, gold.l, preference.X, preference.k, preference.l,
                                      preference.o, n_models, seed=spec.seed)
    elif eta != "forest":
        raise ValueError(f"unknown preference model {eta!r}; use 'forest' or 'btl'")
    router = fit_router(name, spec, Z_g, gold.o, Z_p, preference.o, **meta)
    return MultiRouter(n_models, columns, pairs, projection, router)
