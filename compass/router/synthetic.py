"""SYNTHETIC data for tests and simulation studies only: the LLM-free generator of the implementation guide
(spec-003 §4, designed there, not in the paper), following the paper's pooled/causal data-generating process:
gold labels r = ψ(s) + noise, preference labels y ∈ {−1, 0, 1} with E[y | s] = η(s) exactly, and a
heterogeneous bias Δ(s) = ψ(s) − η(s). `make_multi_data` extends it to N models compared in pairs (App. A.2)
with a BTL preference judge, designed here."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from compass.router.btl import preference_expectation

# A and B: spec-003 §4. C (ours, issue 46): η at full strength and an almost constant judge bias
# Δ = −0.47 + 0.15·tanh(s₆), a world built to favour the simplest debiasing (mean-shift).
PRESETS = {"A": {"eta_scale": 1.0, "delta_het": 0.5}, "B": {"eta_scale": 0.5, "delta_het": 0.8},
           "C": {"eta_scale": 1.0, "delta_het": 0.15}}


@dataclass(frozen=True)
class RouterData:
    X_g: np.ndarray
    r: np.ndarray
    X_p: np.ndarray
    y: np.ndarray
    r_p: np.ndarray  # gold labels of the preference queries (the oracle router only)
    X_test: np.ndarray
    r_test: np.ndarray
    delta_p: np.ndarray  # true Δ on the preference queries
    eta_p: np.ndarray  # true η on the preference queries
    psi_test: np.ndarray  # true ψ on the test queries
    eta_g: np.ndarray  # true η on the gold queries (decomposition studies only)


def preference_labels(u: np.ndarray, mean: np.ndarray, tie: np.ndarray | float) -> np.ndarray:
    """y ∈ {−1, 0, 1} from uniforms u: P(0) = tie, P(±1) = (1 − tie ± mean)/2, so E[y] = mean exactly
    (valid while |mean| <= 1 − tie)."""
    up = (1 - tie + mean) / 2
    return np.where(u < up, 1.0, np.where(u < up + tie, 0.0, -1.0))


def make_data(n_gs: int, N: int = 5000, D: int = 50, n_test: int = 500, seed: int = 0, preset: str = "A",
              delta0: float = -0.47, sigma_r: float = 1.0, tie_prob: float = 0.2) -> RouterData:
    """Spec-003 §4 `make_metarouter_data` with shift="none": a uniformly random gold / preference / test split."""
    p = PRESETS[preset]
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((N, D))
    g = (np.sin(np.pi * s[:, 0] / 2) + s[:, 1] * s[:, 2] / 2 + np.tanh(2 * s[:, 3]) + (np.abs(s[:, 4]) - 0.8)
         + 0.5 * np.cos(np.pi * s[:, 5] / 2))
    eta = p["eta_scale"] * 0.8 * np.tanh(g / 1.5)
    delta = delta0 + p["delta_het"] * np.tanh(s[:, 6])
    psi = eta + delta
    r = psi + sigma_r * rng.standard_normal(N)
    y = preference_labels(rng.random(N), eta, tie_prob)
    idx = rng.permutation(N)
    test, gold, pref = idx[:n_test], idx[n_test:n_test + n_gs], idx[n_test + n_gs:]
    return RouterData(s[gold], r[gold], s[pref], y[pref], r[pref], s[test], r[test], delta[pref], eta[pref],
                      psi[test], eta[gold])


def make_query_dependent_bias(seed: int = 0, n_gold: int = 400, n_pref: int = 1600, n_test: int = 1000,
                              D: int = 6) -> RouterData:
    """The one-SE rule's positive control (ours, issue 46 third review), a world where a CATE stage must pay: a judge
    that scores η without noise (y = η ∈ [−0.8, 0.8], a function of four coordinates that the preference rows give
    exactly and gold rows with noise sd 1 only in part) and a judge bias Δ of −1.5 or +0.5 by the sign of s₄, which
    gold rows give a CATE stage at once and preference labels never show. Preference-only misses Δ, gold-only much
    of η; eq. 6 with Δ̂ sees both. A uniformly random split, as in `make_data`."""
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((n_gold + n_pref + n_test, D))
    eta = 0.8 * np.tanh(np.sin(np.pi * s[:, 0] / 2) + s[:, 1] * s[:, 2] / 2 + np.tanh(2 * s[:, 3]))
    delta = np.where(s[:, 4] > 0, 0.5, -1.5)
    psi = eta + delta
    r = psi + rng.standard_normal(len(s))
    test, gold, pref = np.split(rng.permutation(len(s)), [n_test, n_test + n_gold])
    return RouterData(s[gold], r[gold], s[pref], eta[pref], r[pref], s[test], r[test], delta[pref], eta[pref],
                      psi[test], eta[gold])


# Ablation (iii)'s world: gold labels in rubric points. The paper's gold label is the difference of two rubric
# `total_score`s, sums of criterion points (App. A.7; HealthBench criteria carry −10 to +10 points each), against
# preference labels in {−1, 0, 1}: the scales differ by an order of magnitude. The paper does not report sd(r) or c;
# 10 points per unit of ψ (c ≈ 0.08 instead of the main world's ≈ 0.8) is our assumption.
RUBRIC_POINTS = 10.0
# Ablation (iv)'s embedding: the generator's D unit-variance coordinates, then extra coordinates with this standard
# deviation (below 1, so they are the embedding's later principal directions), drawn from their own stream.
EXTRA_SD = 0.5
_EMBEDDING_STREAM = 46  # child stream of the round's seed for the extra coordinates: make_data's draws are untouched


@dataclass(frozen=True)
class World:
    """What one configuration of the ablation study sees of a `make_data` draw (seed 003 §4.1, "changing one key
    element ... while keeping other settings unchanged"): gold labels in `gold_points` units per unit of ψ
    (ablation (iii), Fig. S4: rubric points against {−1, 0, 1} preferences) and features reduced to the leading `d`
    coordinates of a raw query embedding with `embedding_dim` coordinates (ablation (iv), Fig. S3: PCA to d = 100
    instead of 50 of the same 768-d embedding). The default is the draw as it is (the main configuration)."""

    gold_points: float = 1.0
    embedding_dim: int | None = None  # None: the generator's D coordinates are the embedding
    d: int | None = None  # None: every coordinate of the embedding

    def apply(self, data: RouterData, seed: int) -> RouterData:
        data = in_gold_points(data, self.gold_points)
        if self.embedding_dim is not None:
            data = query_embedding(data, self.embedding_dim, seed)
        return data if self.d is None else reduce_to(data, self.d)


def in_gold_points(data: RouterData, points: float) -> RouterData:
    """The same draw with every gold label (r, r_p, r_test) in `points` units per unit of ψ: what variance
    normalization (Remark 1(2)) undoes exactly, c·r being unchanged. ψ, η, Δ stay in the main world's units, so
    efficiency gains of both worlds are comparable."""
    if points == 1.0:
        return data
    return replace(data, r=points * data.r, r_p=points * data.r_p, r_test=points * data.r_test)


def query_embedding(data: RouterData, dim: int, seed: int) -> RouterData:
    """The raw query embedding of ablation (iv): each query's D generator coordinates followed by dim − D extra
    coordinates N(0, EXTRA_SD²) that ψ, η and Δ do not depend on, drawn from a stream of their own (gold, preference,
    test rows in that order), so labels, splits and the first D coordinates are the main run's."""
    extra = dim - data.X_g.shape[1]
    if extra < 0:
        raise ValueError(f"an embedding of {dim} coordinates cannot hold the generator's {data.X_g.shape[1]}")
    rng = np.random.default_rng([seed, _EMBEDDING_STREAM])
    X_g, X_p, X_test = (np.hstack([X, EXTRA_SD * rng.standard_normal((len(X), extra))])
                        for X in (data.X_g, data.X_p, data.X_test))
    return replace(data, X_g=X_g, X_p=X_p, X_test=X_test)


def reduce_to(data: RouterData, d: int) -> RouterData:
    """PCA to d (spec §2.1) of `query_embedding`'s output: its covariance is diagonal with variances 1 (the D
    generator coordinates) then EXTRA_SD² < 1, so its principal axes are the coordinate axes in that order and the
    leading d principal components are the leading d coordinates. (A sample PCA would also rotate the isotropic
    block of generator coordinates at random, mixing the axis-aligned signal the forests split on; the population
    axes keep the main configuration's features exactly.)"""
    if d > data.X_g.shape[1]:
        raise ValueError(f"cannot reduce {data.X_g.shape[1]} coordinates to {d}")
    return replace(data, X_g=data.X_g[:, :d], X_p=data.X_p[:, :d], X_test=data.X_test[:, :d])


@dataclass(frozen=True)
class MultiModelData:
    """SYNTHETIC pairwise labels over N models (App. A.2): gold rows (X_g, k_g, l_g, r), preference rows
    (X_p, k_p, l_p, y), k > ℓ, and test queries with every model's true gold quality."""

    X_g: np.ndarray
    k_g: np.ndarray
    l_g: np.ndarray
    r: np.ndarray
    X_p: np.ndarray
    k_p: np.ndarray
    l_p: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    quality_test: np.ndarray  # (n_test, N): true q_k(s), so any policy's expected quality is known
    costs: np.ndarray  # (N,): C_k = k / (N − 1)


def model_quality(s: np.ndarray, n_models: int) -> np.ndarray:
    """True gold quality q_k(s) = 0.1·k + 0.8·tanh(1.5·s_{k+1}): model k is strong on its own direction of the
    query space, later (costlier) models slightly better on average, so the best model varies by query."""
    return 0.1 * np.arange(n_models) + 0.8 * np.tanh(1.5 * s[:, :n_models])


def judge_scores(s: np.ndarray, quality: np.ndarray, judge_bias: float, judge_scale: float = 1.5) -> np.ndarray:
    """BTL scores of the preference judge: θ_k(s) = judge_scale·(q_k(s) + b_k(s)), the bias
    b_k(s) = judge_bias · k/(N − 1) · (1 + tanh(2·s_D)) favouring costlier models where s_D > 0 (heterogeneous)."""
    n_models = quality.shape[1]
    bias = judge_bias * (np.arange(n_models) / (n_models - 1)) * (1 + np.tanh(2 * s[:, [-1]]))
    return judge_scale * (quality + bias)


def _random_pairs(rng: np.random.Generator, n: int, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """One uniformly random pair k > ℓ per row."""
    first = rng.integers(0, n_models, n)
    second = (first + rng.integers(1, n_models, n)) % n_models
    return np.maximum(first, second), np.minimum(first, second)


def make_multi_data(n_models: int, n_gold: int, n_pref: int = 3000, n_test: int = 1000, D: int = 10,
                    seed: int = 0, judge_bias: float = 1.0, sigma_r: float = 0.7,
                    tie_prob: float = 0.2) -> MultiModelData:
    """SYNTHETIC N-model extension of the spec §4 generator (designed here, not in the paper). Each record
    compares one random pair (k, ℓ). Gold: r = q_k(s) − q_ℓ(s) + N(0, sigma_r²). Preference: BTL judge,
    η_{k,ℓ}(s) = σ(θ_k(s) − θ_ℓ(s)), labels on the {−1, 0, 1} scale with E[y | s, k, ℓ] = 2η − 1 exactly
    (the ERRATA scale): P(0) = tie_prob·(1 − |2η − 1|), P(±1) = (1 − P(0) ± (2η − 1))/2.
    judge_bias = 0 is an unbiased judge (same ordering as the gold quality; Δ is then the link's curvature)."""
    if D < n_models + 1:
        raise ValueError(f"D = {D} query dimensions cannot carry {n_models} model directions and the bias one")
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((n_gold + n_pref + n_test, D))
    quality = model_quality(s, n_models)
    gold, pref, test = np.split(np.arange(len(s)), [n_gold, n_gold + n_pref])
    k_g, l_g = _random_pairs(rng, n_gold, n_models)
    r = quality[gold, k_g] - quality[gold, l_g] + sigma_r * rng.standard_normal(n_gold)
    k_p, l_p = _random_pairs(rng, n_pref, n_models)
    theta = judge_scores(s[pref], quality[pref], judge_bias)
    rows = np.arange(n_pref)
    m = preference_expectation(theta[rows, k_p], theta[rows, l_p])  # 2η − 1
    y = preference_labels(rng.random(n_pref), m, tie_prob * (1 - np.abs(m)))
    return MultiModelData(s[gold], k_g, l_g, r, s[pref], k_p, l_p, y, s[test], quality[test],
                          np.arange(n_models) / (n_models - 1))
