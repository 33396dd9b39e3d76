"""Synthetic catalog generated from a known frontier (synthetic data: tests only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.frontier import ces_score


@dataclass(frozen=True)
class KnownFrontier:
    """Generator truth: CES (a, b), tier levels lambda_t, tier costs C_t = C_T (lambda_t/lambda_T)^(1/d)."""

    a: np.ndarray
    b: float
    levels: np.ndarray
    d: float
    tier_costs: np.ndarray
    x: np.ndarray
    tier: np.ndarray


def known_frontier_catalog(
    b: float = 2.0,
    d: float = 0.5,
    lower_levels: tuple[float, ...] = (0.12, 0.35),
    per_tier: int = 7,
    bench_per_factor: int = 4,
    noise: float = 0.01,
    margin: float = 0.3,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.Series, KnownFrontier]:
    """Benchmarks and prices of models that sit exactly on the level sets of a known frontier.

    Two internal measures, a = (1/2, 1/2). Tier t holds `per_tier` models on the level
    set s(x; a, b) = lambda_t along the same directions (angles in [asin(margin),
    pi/2 - asin(margin)]), so every model is dominated by its scaled-up twin one tier
    higher and Pareto peeling returns the generator's tiers. The top level is set so the
    largest coordinate is exactly 1, and tier 1 also holds the two axis points (lambda_1
    a_i^(-1/b) e_i), so each measure spans exactly [0, 1] and min-max scaling in
    `extract_measures` is the identity on the true measures. Each benchmark is
    offset + scale * (x_i + noise). Prices are C_t exp(z) with z symmetric in [-0.3, 0.3],
    so the within-tier median and geometric mean equal C_t exactly.
    """
    rng = np.random.default_rng(seed)
    a = np.array([0.5, 0.5])
    theta0 = np.arcsin(margin)
    theta = np.linspace(theta0, np.pi / 2 - theta0, per_tier)
    u = np.c_[np.cos(theta), np.sin(theta)]
    axis_dirs = np.array([[1.0, 0.0], [np.sqrt(0.5), np.sqrt(0.5)], [0.0, 1.0]])
    top = float(ces_score(u[0], a, b) / u[0, 0])  # largest coordinate of the top tier = 1
    levels = np.array([*lower_levels, top])
    xs, tiers = [], []
    for t, lam in enumerate(levels, start=1):
        dirs = axis_dirs if t == 1 else u
        xs.append(lam * dirs / ces_score(dirs, a, b)[:, None])
        tiers += [t] * len(dirs)
    x, tier = np.vstack(xs), np.array(tiers)
    tier_costs = 4.0 * (levels / levels[-1]) ** (1.0 / d)
    raw_cost = np.empty(len(x))
    for t, cost in enumerate(tier_costs, start=1):
        idx = np.flatnonzero(tier == t)
        raw_cost[idx] = cost * np.exp(rng.permutation(np.linspace(-0.3, 0.3, idx.size)))
    ids = [f"m{i:03d}" for i in range(len(x))]
    cols = {
        f"bench_{i}_{j}": 40 + 15 * rng.uniform(0.8, 1.2) * (x[:, i] + noise * rng.standard_normal(len(x)))
        for i in range(a.size)
        for j in range(bench_per_factor)
    }
    truth = KnownFrontier(a=a, b=b, levels=levels, d=d, tier_costs=tier_costs, x=x, tier=tier)
    return pd.DataFrame(cols, index=ids), pd.Series(raw_cost, index=ids), truth


@pytest.fixture(scope="module")
def known_catalog():
    return known_frontier_catalog()
