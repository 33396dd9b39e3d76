"""Reference Pareto peeling: the O(n^2 I) implementation kept as the oracle for property tests.

Verbatim copy of `dominated_mask`, `peel_layers`, `merge_layers` and the within-tier
efficiency loop of `pareto_tiers` as of git 449abf5, from `compass/mlcompass/pareto.py`
before it switched to Efficient Non-dominated Sort (ML Compass §4.4 Step 1; EC §8.4
"Tolerance"). Every peeling pass builds an n x n x I array, so use it on small catalogs
only (tests, and the reference column of `benchmarks/bench_catalog_scale.py`). Do not
optimize this file: its value is that it is the old, obviously correct code.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def dominated_mask(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Boolean (n,) array: True where the row of `x` (n, I) is eps-dominated by another row."""
    diff = x[:, None, :] - x[None, :, :]  # diff[j, m] = x(j) - x(m)
    dominates = (diff >= 0).all(axis=2) & (diff.max(axis=2) > eps)
    return dominates.any(axis=0)


def peel_layers(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Layer index (1 = outermost front) of each row of `x` under repeated eps-peeling."""
    layer = np.zeros(x.shape[0], dtype=int)
    remaining = np.arange(x.shape[0])
    current = 1
    while remaining.size:
        front = ~dominated_mask(x[remaining], eps)
        layer[remaining[front]] = current
        remaining = remaining[~front]
        current += 1
    return layer


def merge_layers(n_layers: int, n_tiers: int | None) -> np.ndarray:
    """Tier (1 = weakest) for each layer 1..n_layers (layer 1 = strongest)."""
    if n_tiers is None or n_tiers >= n_layers:
        return np.arange(n_layers, 0, -1)
    groups = np.array_split(np.arange(1, n_layers + 1), n_tiers)  # first groups are largest
    tier_of_layer = np.empty(n_layers, dtype=int)
    for g, layers in enumerate(groups):
        tier_of_layer[layers - 1] = n_tiers - g
    return tier_of_layer


def pareto_tiers(measures: pd.DataFrame, eps: float = 0.0, n_tiers: int | None = 3) -> pd.DataFrame:
    """Reference `pareto_tiers` (input validation left out: the oracle sees valid catalogs only)."""
    x = measures.to_numpy(dtype=float)
    layer = peel_layers(x, eps)
    tier = merge_layers(int(layer.max()), n_tiers)[layer - 1]
    efficient = np.zeros(x.shape[0], dtype=bool)
    for t in np.unique(tier):
        idx = np.flatnonzero(tier == t)
        efficient[idx] = ~dominated_mask(x[idx], eps)
    return pd.DataFrame(
        {
            "model_id": measures.index.to_numpy(),
            "tier": tier,
            "pareto_efficient": efficient,
            "peel_layer": layer,
        }
    )
