"""Small synthetic fixtures for the oracle-core tests (all data here is synthetic)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def records_from_outcomes(outcomes: np.ndarray, cost: np.ndarray | None = None) -> pd.DataFrame:
    """Long canonical records from an (N, L, G) 0/1 tensor; cost per generation optional."""
    n, l, g = outcomes.shape
    q, m, gen = np.meshgrid(np.arange(n), np.arange(l), np.arange(g), indexing="ij")
    df = pd.DataFrame({
        "query_id": [f"q{i:04d}" for i in q.ravel()],
        "model_id": [f"m{j}" for j in m.ravel()],
        "generation": gen.ravel(),
        "correct": outcomes.ravel().astype(float),
        "category": [f"t{i % 3}" for i in q.ravel()],
    })
    df["cost_usd"] = np.nan if cost is None else np.broadcast_to(cost, outcomes.shape).ravel()
    return df


def beta_outcomes(n: int, l: int, g: int, a: float = 2.0, b: float = 3.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Independent p_nl ~ Beta(a, b) and Bernoulli outcomes; returns (outcomes, p)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, size=(n, l))
    return (rng.random((n, l, g)) < p[..., None]).astype(float), p


@pytest.fixture
def small_outcomes() -> np.ndarray:
    return beta_outcomes(40, 3, 6, seed=1)[0]
