"""Pareto peeling and capability tiers (ML Compass §4.4 Step 1; EC §8.4 "Tolerance").

Dominance (§4.4): m' dominates m if x(m') >= x(m) componentwise and x(m') != x(m).
The paper varies a Pareto tolerance eps in {0, .01, .025, .05, .075, .10} (EC §8.4) and
says only that a larger tolerance makes acceptance onto the frontier more relaxed; it
gives no formula. We use the reading that reduces exactly to the paper's definition at
eps = 0 and enlarges the efficient set as eps grows:

    m' eps-dominates m  iff  x(m') >= x(m) componentwise  and  max_i (x_i(m') - x_i(m)) > eps,

i.e. improvements of at most eps are treated as ties. The relation is irreflexive and
transitive, so every non-empty set has a non-dominated layer and peeling terminates.

Peeling: layer 1 is the non-dominated set of all models, layer 2 that of the rest, ...
Tiers are ordered weakest (t=1) to strongest (t=T) as in the paper; adjacent layers are
merged into T tiers by splitting the layer sequence into T contiguous groups of as equal
a number of layers as possible, extra layers going to the strongest tiers (the paper
merges adjacent layers but does not state the rule; this one is ours). Within each tier
the efficient set M_eff is the tier's own non-dominated set under the same relation.
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
    """Tier assignment and within-tier efficiency (§4.4 Step 1).

    `measures`: index model_id, columns internal measures. Returns DataFrame
    [model_id, tier, pareto_efficient, peel_layer]; tier 1 = weakest, T = strongest
    (T = min(n_tiers, number of layers); `n_tiers=None` keeps one tier per layer).
    """
    if not isinstance(measures, pd.DataFrame) or measures.empty:
        raise ValueError("measures must be a non-empty DataFrame (index model_id, columns factors)")
    x = measures.to_numpy(dtype=float)
    if not np.isfinite(x).all():
        bad = measures.index[~np.isfinite(x).all(axis=1)].tolist()
        raise ValueError(f"measures contain NaN/inf for models {bad}")
    if measures.index.has_duplicates:
        raise ValueError(f"duplicate model_id in measures: {measures.index[measures.index.duplicated()].tolist()}")
    if not 0.0 <= eps < 1.0:
        raise ValueError(f"Pareto tolerance eps must be in [0, 1), got {eps}")
    if n_tiers is not None and n_tiers < 1:
        raise ValueError(f"n_tiers must be >= 1 or None, got {n_tiers}")
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
