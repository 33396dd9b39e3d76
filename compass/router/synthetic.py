"""SYNTHETIC data for tests and simulation studies only: the LLM-free generator of the implementation guide
(spec-003 §4, designed there, not in the paper), following the paper's pooled/causal data-generating process:
gold labels r = ψ(s) + noise, preference labels y ∈ {−1, 0, 1} with E[y | s] = η(s) exactly, and a
heterogeneous bias Δ(s) = ψ(s) − η(s)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PRESETS = {"A": {"eta_scale": 1.0, "delta_het": 0.5}, "B": {"eta_scale": 0.5, "delta_het": 0.8}}


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
    u = rng.random(N)
    up = (1 - tie_prob + eta) / 2
    y = np.where(u < up, 1.0, np.where(u < up + tie_prob, 0.0, -1.0))
    idx = rng.permutation(N)
    test, gold, pref = idx[:n_test], idx[n_test:n_test + n_gs], idx[n_test + n_gs:]
    return RouterData(s[gold], r[gold], s[pref], y[pref], r[pref], s[test], r[test], delta[pref], eta[pref],
                      psi[test])
