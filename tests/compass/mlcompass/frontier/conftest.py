"""Synthetic generators for the frontier-estimation tests (synthetic data: tests only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.frontier import ces_score


def low_rank_catalog(n_models: int, n_bench: int, rank: int, noise: float, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Model x benchmark scores = simple-structure factor model + noise, in benchmark-like units.

    Each benchmark loads mainly (0.7-0.95) on one factor and weakly (0-0.2) on the next.
    Returns the matrix and the true (n_bench, rank) loadings; the true factor scores
    (n_models, rank) are kept in `frame.attrs["factors"]`.
    """
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((n_models, rank))
    loadings = np.zeros((n_bench, rank))
    for j in range(n_bench):
        loadings[j, j % rank] = rng.uniform(0.7, 0.95)
        if rank > 1:
            loadings[j, (j + 1) % rank] = rng.uniform(0.0, 0.2)
    x = f @ loadings.T + noise * rng.standard_normal((n_models, n_bench))
    scale = rng.uniform(5, 20, n_bench)
    offset = rng.uniform(30, 70, n_bench)
    frame = pd.DataFrame(
        x * scale + offset,
        index=[f"model-{i:03d}" for i in range(n_models)],
        columns=[f"bench_{j:02d}" for j in range(n_bench)],
    )
    frame.attrs["factors"] = f
    return frame, loadings


def tiered_ces_points(a, b, levels, per_tier: int, noise: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Points on the CES level sets s(x; a, b) = lambda_t, plus Gaussian noise, tier t = 1..T."""
    rng = np.random.default_rng(seed)
    a = np.asarray(a, dtype=float)
    xs, tiers = [], []
    for t, lam in enumerate(levels, start=1):
        u = rng.dirichlet(np.full(a.size, 2.0), size=per_tier)
        x = lam * u / ces_score(u, a, b)[:, None]
        xs.append(np.clip(x + noise * rng.standard_normal(x.shape), 0.0, None))
        tiers += [t] * per_tier
    x = np.vstack(xs)
    ids = [f"m{i:03d}" for i in range(x.shape[0])]
    measures = pd.DataFrame(x, index=pd.Index(ids, name="model_id"), columns=[f"C{i + 1}" for i in range(a.size)])
    tier_frame = pd.DataFrame({"model_id": ids, "tier": tiers, "pareto_efficient": True, "peel_layer": 0})
    return measures, tier_frame


@pytest.fixture
def catalog3():
    return low_rank_catalog(n_models=60, n_bench=12, rank=3, noise=0.3, seed=1)
