"""SYNTHETIC data for tests and simulation studies only: the LLM-free generator of the implementation guide
(spec-003 §4, designed there, not in the paper), following the paper's pooled/causal data-generating process:
gold labels r = ψ(s) + noise, preference labels y ∈ {−1, 0, 1} with E[y | s] = η(s) exactly, and a
heterogeneous bias Δ(s) = ψ(s) − η(s). `make_multi_data` extends it to N models compared in pairs (App. A.2)
with a BTL preference judge, designed here."""

from __future__ import annotations

from dataclasses import dataclass

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
