"""Synthetic cascade records for tests only (not data): a latent Gaussian AR(1) chain drives
each model's correctness probability; capping creates point masses at the extremes."""

from __future__ import annotations

import numpy as np
import pandas as pd


def synthetic_calibrated(n_train: int = 400, n_test: int = 0, k: int = 4, rho: float = 0.7,
                         seed: int = 0) -> pd.DataFrame:
    """Long records with columns split, query_id, model_id, correct, confidence, p_correct, cost_usd.

    ``p_correct`` plays the calibrated confidence: model i has phi = sigmoid(0.6 i + 1.2 z_i), where
    z is an AR(1) chain with correlation ``rho``; phi is floored/capped at its 3% / 90% quantile
    so that the marginals carry point masses at both ends.
    """
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    z = np.empty((n, k))
    z[:, 0] = rng.standard_normal(n)
    for i in range(1, k):
        z[:, i] = rho * z[:, i - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    rows = []
    for i in range(k):
        phi = 1 / (1 + np.exp(-(0.6 * i + 1.2 * z[:, i])))
        lo, hi = np.quantile(phi[:n_train], [0.03, 0.90])
        phi = np.clip(phi, lo, hi)
        correct = (rng.random(n) < phi).astype(float)
        rows.append(pd.DataFrame({
            "split": ["train"] * n_train + ["test"] * n_test,
            "query_id": [f"q{j}" for j in range(n)],
            "model_id": f"m{i}",
            "correct": correct,
            "confidence": np.log(phi),
            "p_correct": phi,
            "cost_usd": 1e-4 * 3.0**i * (1 + 0.1 * rng.random(n)),
        }))
    return pd.concat(rows, ignore_index=True)
